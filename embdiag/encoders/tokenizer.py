"""A word-level tokenizer fitted on training captions.

Text is lower-cased and split into words and punctuation marks. The vocabulary holds the
special tokens (``<pad>`` = 0, ``<unk>`` = 1), one prompt token per role (``query:``,
``document:``) and every word seen at least ``min_count`` times in the fitted texts, most
frequent first (ties alphabetical). Encoding prepends the role's prompt token, as the
study's encoder prepends role prompts, and truncates to ``max_len`` tokens.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

import numpy as np

from .protocol import ROLES, check_role, check_texts

PAD, UNK = "<pad>", "<unk>"
PROMPTS = {role: f"{role}:" for role in ROLES}
_WORD = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


def words(text: str) -> list[str]:
    """Lower-cased words and punctuation marks of ``text``."""
    return _WORD.findall(text.lower())


class WordTokenizer:
    """Word-level tokenizer; ``fit`` sets ``vocabulary_`` (list of tokens, index = id)."""

    def __init__(self, max_len: int = 80, min_count: int = 1):
        self.max_len = max_len
        self.min_count = min_count

    def fit(self, texts: Sequence[str]) -> "WordTokenizer":
        if isinstance(self.max_len, bool) or not isinstance(self.max_len, int) or self.max_len < 2:
            raise ValueError(f"max_len: expected an integer of at least 2, got {self.max_len!r}")
        if isinstance(self.min_count, bool) or not isinstance(self.min_count, int) or self.min_count < 1:
            raise ValueError(f"min_count: expected a positive integer, got {self.min_count!r}")
        counts = Counter(w for t in check_texts(texts) for w in words(t))
        kept = sorted((w for w, c in counts.items() if c >= self.min_count), key=lambda w: (-counts[w], w))
        return self._set_vocabulary([PAD, UNK, *PROMPTS.values(), *kept])

    @classmethod
    def from_vocabulary(cls, vocabulary: Sequence[str], max_len: int) -> "WordTokenizer":
        """A fitted tokenizer with a stored vocabulary (as written by ``vocabulary_``)."""
        vocabulary = list(vocabulary)
        if vocabulary[: 2 + len(PROMPTS)] != [PAD, UNK, *PROMPTS.values()]:
            raise ValueError("vocabulary: must start with <pad>, <unk> and the role prompts")
        return cls(max_len=max_len)._set_vocabulary(vocabulary)

    def _set_vocabulary(self, vocabulary: list[str]) -> "WordTokenizer":
        self.vocabulary_ = vocabulary
        self.index_ = {w: i for i, w in enumerate(vocabulary)}
        return self

    def encode(self, texts: Sequence[str], role: str = "query") -> tuple[np.ndarray, np.ndarray]:
        """Token ids (n, max_len) int64, 0-padded, and the mask of real tokens (n, max_len) bool."""
        if not hasattr(self, "vocabulary_"):
            raise ValueError("WordTokenizer: call fit() before encode()")
        texts = check_texts(texts)
        prompt = self.index_[PROMPTS[check_role(role)]]
        ids = np.zeros((len(texts), self.max_len), np.int64)
        for i, t in enumerate(texts):
            row = [prompt, *(self.index_.get(w, 1) for w in words(t))][: self.max_len]
            ids[i, : len(row)] = row
        return ids, ids > 0
