"""The study's design B on WordNet: a seeded, declared sample of glosses and their examples.

Items are synsets (the study's images): their text is the definition, their labels ``pos``
(``noun``, ``verb``, ``adj``, ``adv``; satellites count as ``adj``) and ``lexname``, their
group the quoted examples (the study's captions). :data:`SAMPLE` declares the draw: 1,000
``retrieval`` synsets with at least three examples (query an example, the positive is its
gloss; query a gloss, its examples are the positives), then 2,000 ``train`` and 1,000 ``val``
synsets from the others (stress tests, compression, neighbour stability), each split in file
order. The sample's ``params`` record the draw and the SHA-256 of the database files; its
``key`` fingerprints the params and the ids. :data:`COMMITTED` holds the sample the book reads.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import artifacts
from .._validate import check_int
from .errors import DataError
from .wordnet import Synset, file_digests, read_wordnet

#: The declared draw of the book's sample.
SAMPLE: dict = {"seed": 0, "n_train": 2000, "n_val": 1000, "n_retrieval": 1000, "min_examples": 3}
SPLITS = ("train", "val", "retrieval")
POS_NAMES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
ATTRIBUTES = ("pos", "lexname")
#: The committed artifact (under the data root) of the book's sample.
COMMITTED = "wordnet/sample"
_STREAM = 291  # the sample's named random stream


@dataclass(frozen=True)
class WordNetSample:
    """``items``: one row per synset (``id``, ``split``, ``pos``, ``lexname``, ``definition``);
    ``examples``: one row per example (``id`` of its synset, ``text``), items' order;
    ``params``: the draw and the database digests."""

    items: pd.DataFrame
    examples: pd.DataFrame
    params: dict

    @property
    def key(self) -> str:
        h = hashlib.sha256(json.dumps(self.params, sort_keys=True).encode())
        h.update("\n".join(self.items["id"] + " " + self.items["split"]).encode())
        return h.hexdigest()[:16]

    @property
    def source(self) -> str:
        sizes = ", ".join(f"{int((self.items['split'] == s).sum()):,} {s}" for s in SPLITS)
        return (
            f"WordNet 3.0 glosses (seed {self.params['seed']}: {sizes} synsets; "
            f"{len(self.examples):,} examples of the retrieval synsets)"
        )

    def part(self, split: str) -> pd.DataFrame:
        """The items of one split."""
        if split not in SPLITS:
            raise ValueError(f"split: expected one of {SPLITS}, got {split!r}")
        return self.items[self.items["split"] == split].reset_index(drop=True)

    def to_json(self) -> bytes:
        return json.dumps(
            {"items": self.items.to_dict("list"), "examples": self.examples.to_dict("list")},
            ensure_ascii=False,
            indent=0,
        ).encode()

    @classmethod
    def from_json(cls, data: bytes, params: dict) -> "WordNetSample":
        doc = json.loads(data)
        return cls(pd.DataFrame(doc["items"]), pd.DataFrame(doc["examples"]), params)


def sample_wordnet(
    synsets: list[Synset],
    digests: dict,
    *,
    seed: int = 0,
    n_train: int = 2000,
    n_val: int = 1000,
    n_retrieval: int = 1000,
    min_examples: int = 3,
) -> WordNetSample:
    """The seeded sample of ``synsets`` (see the module docstring); ``digests`` are recorded."""
    sizes = {
        k: check_int(v, k, minimum=0)
        for k, v in dict(
            seed=seed, n_train=n_train, n_val=n_val, n_retrieval=n_retrieval, min_examples=min_examples
        ).items()
    }
    order = np.random.default_rng([sizes["seed"], _STREAM]).permutation(len(synsets))
    rich = [i for i in order if len(synsets[i].examples) >= min_examples][:n_retrieval]
    rest = order[~np.isin(order, rich)]
    if len(rich) < n_retrieval or len(rest) < n_train + n_val:
        raise DataError(
            f"WordNet: {len(synsets)} synsets cannot give {n_retrieval} with {min_examples}+ examples "
            f"and {n_train} + {n_val} others"
        )
    chosen = {"train": rest[:n_train], "val": rest[n_train : n_train + n_val], "retrieval": np.asarray(rich)}
    rows, examples = [], []
    for split in SPLITS:
        for i in np.sort(chosen[split]):
            s = synsets[i]
            rows.append(
                {"id": s.id, "split": split, "pos": POS_NAMES[s.pos], "lexname": s.lexname, "definition": s.definition}
            )
            if split == "retrieval":
                examples.extend({"id": s.id, "text": e} for e in s.examples)
    params = {**sizes, "database": "WordNet 3.0", "sha256": dict(sorted(digests.items()))}
    return WordNetSample(pd.DataFrame(rows), pd.DataFrame(examples, columns=["id", "text"]), params)


def load_wordnet(data_dir=None, **draw) -> WordNetSample:
    """The sample (:data:`SAMPLE`, overridden by ``draw``) of the database under ``data_dir``
    (default: Debian's ``/usr/share/wordnet``)."""
    return sample_wordnet(read_wordnet(data_dir), file_digests(data_dir), **{**SAMPLE, **draw})


def save_sample(sample: WordNetSample, *, root=None) -> None:
    """Write ``sample`` as the committed artifact :data:`COMMITTED`."""
    artifacts.save(
        COMMITTED, {"sample.json": sample.to_json()}, sample.params, root=root, command="embdiag embeddings --write"
    )


def committed_sample(*, root=None) -> WordNetSample:
    """The book's sample from :data:`COMMITTED` (checksums verified; its draw must be :data:`SAMPLE`)."""
    params = artifacts.manifest(COMMITTED, root=root)["params"]
    if {k: params.get(k) for k in SAMPLE} != SAMPLE:
        raise artifacts.StaleArtifactError(
            f"artifact {COMMITTED!r}: drawn with {params}, not {SAMPLE}; regenerate it with: embdiag embeddings --write"
        )
    return WordNetSample.from_json(artifacts.load(COMMITTED, params, root=root)["sample.json"], params)
