"""Word tokenizer: fitted vocabulary, role prompts, unknown words, padding, round trip."""

import numpy as np
import pytest

from embdiag.encoders.tokenizer import PAD, PROMPTS, UNK, WordTokenizer, words


def test_fit_orders_by_frequency_and_encodes_with_the_role_prompt():
    tok = WordTokenizer(max_len=6).fit(["A red car.", "a car", "Two cars."])
    assert tok.vocabulary_[:4] == [PAD, UNK, "query:", "document:"]
    assert tok.vocabulary_[4:7] == [".", "a", "car"]  # count 2 each, ties alphabetical
    ids, mask = tok.encode(["a red bus"], role="document")
    assert ids[0].tolist() == [tok.index_["document:"], tok.index_["a"], tok.index_["red"], 1, 0, 0]
    assert mask[0].tolist() == [True] * 4 + [False] * 2
    q, _ = tok.encode(["a red bus"], role="query")
    assert q[0, 0] == tok.index_[PROMPTS["query"]] and (q[0, 1:] == ids[0, 1:]).all()


def test_truncation_min_count_and_round_trip():
    tok = WordTokenizer(max_len=3, min_count=2).fit(["x y z", "x y", "x"])
    assert tok.vocabulary_[4:] == ["x", "y"]
    ids, _ = tok.encode(["x y z w"])
    assert ids.shape == (1, 3) and ids[0, 2] == tok.index_["y"]
    again = WordTokenizer.from_vocabulary(tok.vocabulary_, 3)
    assert np.array_equal(again.encode(["x y z"])[0], tok.encode(["x y z"])[0])
    assert words("A car, parked.") == ["a", "car", ",", "parked", "."]


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="role"):
        WordTokenizer().fit(["a"]).encode(["a"], role="passage")
    with pytest.raises(ValueError, match="fit"):
        WordTokenizer().encode(["a"])
    with pytest.raises(ValueError, match="max_len"):
        WordTokenizer(max_len=1).fit(["a"])
    with pytest.raises(ValueError, match="texts"):
        WordTokenizer().fit("a car")
    with pytest.raises(ValueError, match="vocabulary"):
        WordTokenizer.from_vocabulary(["a", "b"], 4)
