"""The WordNet sample's committed WordLlama vectors, as the design-B chapters read them.

:func:`wordnet_vectors` gives the ``train`` and ``val`` glosses with their ``pos`` and
``lexname`` labels (:class:`~embdiag.encoders.vectors.LabelledVectors`);
:func:`wordnet_caption_vectors` the ``retrieval`` glosses as the "images" and their examples
as the "captions" (:class:`~embdiag.encoders.vectors.CaptionVectors`; both roles are the same
vectors, the model has no prompts; the categories are the glosses' lexnames). Both read only
committed artifacts, the sample :data:`~embdiag.data.wordnet_sample.COMMITTED` and one
vectors artifact per part (:func:`part_name`), whose parameters pin the encoder revision and
the sample's key: neither the database nor the wheel is needed. :func:`regenerate_wordnet`
recomputes all of it from both and reports the distance to the committed vectors;
:func:`export_wordnet_vectors` writes the labelled glosses as files (``embdiag vectors``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .. import artifacts
from ..data.files import write_vector_files
from ..data.wordnet_sample import COMMITTED as SAMPLE_ARTIFACT
from ..data.wordnet_sample import ATTRIBUTES, WordNetSample, committed_sample, load_wordnet, save_sample
from . import wordllama
from .cache import COMMITTED, Regenerated, prefix, regenerate_vectors
from .vectors import CaptionVectors, LabelledVectors

#: (split, kind) of every committed vectors artifact: glosses of each split, examples of the retrieval synsets.
PARTS: tuple[tuple[str, str], ...] = (
    ("train", "glosses"),
    ("val", "glosses"),
    ("retrieval", "glosses"),
    ("retrieval", "examples"),
)
ENCODERS = (wordllama.NAME,)


def part_name(key: str, split: str, kind: str) -> str:
    """The committed artifact of one part of the sample with key ``key``."""
    return f"{COMMITTED}/{wordllama.NAME.replace(':', '-')}/wordnet-{key}-{split}-{kind}"


def part_params(key: str, split: str, kind: str, rows: int) -> dict:
    """What made one part's vectors: the encoder, its pinned package and files, the sample, the part."""
    return {
        "encoder": wordllama.NAME,
        "revision": wordllama.revision(),
        "package": wordllama.PACKAGE,
        "files": wordllama.FILES,
        "dataset": key,
        "split": split,
        "kind": kind,
        "dim": None,
        "rows": rows,
    }


def part_texts(sample: WordNetSample, split: str, kind: str) -> list[str]:
    """The texts of one part: definitions of the split's items, or the retrieval synsets' examples."""
    frame = sample.part(split)["definition"] if kind == "glosses" else sample.examples["text"]
    return frame.tolist()


def _check_encoder(encoder: str) -> None:
    if encoder not in ENCODERS:
        raise ValueError(f"encoder: the WordNet sample is embedded by {ENCODERS} only, got {encoder!r}")


def _part(sample: WordNetSample, split: str, kind: str, dim, root) -> np.ndarray:
    rows = len(part_texts(sample, split, kind))
    name = part_name(sample.key, split, kind)
    Z = artifacts.load(name, part_params(sample.key, split, kind, rows), root=root)["vectors"]
    return prefix(np.asarray(Z), dim).astype(np.float64)


def _describe(dim) -> str:
    d = wordllama.DIMS[0] if dim is None else dim
    return f"encoder {wordllama.NAME} ({wordllama.PACKAGE}, revision {wordllama.revision()[:12]}, {d}-d)"


def wordnet_vectors(encoder: str = wordllama.NAME, *, dim: int | None = None, root=None) -> LabelledVectors:
    """Training and evaluation gloss vectors with ``pos`` and ``lexname`` labels, cut to the prefix ``dim``."""
    _check_encoder(encoder)
    sample = committed_sample(root=root)
    tr, va = sample.part("train"), sample.part("val")
    source = f"{_describe(dim)} on {sample.source}: {len(tr):,} training and {len(va):,} evaluation glosses"
    return LabelledVectors(
        _part(sample, "train", "glosses", dim, root),
        _part(sample, "val", "glosses", dim, root),
        {a: tr[a].to_numpy() for a in ATTRIBUTES},
        {a: va[a].to_numpy() for a in ATTRIBUTES},
        source,
    )


def wordnet_caption_vectors(encoder: str = wordllama.NAME, *, dim: int | None = None, root=None) -> CaptionVectors:
    """The retrieval glosses (the "images") and their examples (the "captions", one role for both)."""
    _check_encoder(encoder)
    sample = committed_sample(root=root)
    items = sample.part("retrieval")
    glosses = _part(sample, "retrieval", "glosses", dim, root)
    examples = _part(sample, "retrieval", "examples", dim, root)
    row = {synset: i for i, synset in enumerate(items["id"])}
    group = np.array([row[s] for s in sample.examples["id"]], dtype=np.int64)
    names = tuple(sorted(set(items["lexname"])))
    categories = items["lexname"].to_numpy()[:, None] == np.array(names)[None, :]
    source = (
        f"{_describe(dim)} on {sample.source}: {len(items):,} glosses with {len(examples):,} examples "
        f"({len(examples) / len(items):.2f} per gloss)"
    )
    return CaptionVectors(
        glosses,
        examples,
        examples,
        group,
        sample.examples["text"].to_numpy(),
        categories,
        names,
        source,
        item="gloss",
        caption="example",
        item_ids=items["id"].to_numpy(),
        item_texts=items["definition"].to_numpy(),
    )


def regenerate_wordnet(*, write: bool = False, data_dir=None, root=None, progress: bool = False) -> list[Regenerated]:
    """Draw the sample from the database under ``data_dir`` and embed every part with the pinned
    WordLlama; compare each with the committed vectors (written where none, or all with ``write``).
    A sample that differs from the committed one is written only with ``write`` (or when none is)."""
    sample = load_wordnet(data_dir)
    try:
        same = committed_sample(root=root).key == sample.key
    except artifacts.ArtifactError:
        same = None
    if same is None or (write and not same):
        save_sample(sample, root=root)
    elif not same:
        raise artifacts.StaleArtifactError(
            f"artifact {SAMPLE_ARTIFACT!r}: this database draws another sample "
            f"(key {sample.key}); embdiag embeddings --write replaces it"
        )
    encoder = wordllama.load_wordllama()
    out = []
    for split, kind in PARTS:
        texts = part_texts(sample, split, kind)
        vectors = encoder.encode_texts(texts, progress=progress)
        out.append(
            regenerate_vectors(
                part_name(sample.key, split, kind),
                part_params(sample.key, split, kind, len(texts)),
                vectors,
                write=write,
                root=root,
            )
        )
    return out


def export_wordnet_vectors(out_dir, encoder: str = wordllama.NAME) -> dict[str, Path]:
    """Write the labelled sample (training then evaluation glosses) as ``out_dir/vectors.npy``
    (float32, n x 256) and ``out_dir/labels.csv`` (``id``, ``split``, ``pos``, ``lexname``), the
    files ``embdiag report`` and the chapters' ``vectors_path``/``labels_path`` read."""
    v = wordnet_vectors(encoder)
    sample = committed_sample()
    labels = pd.concat([sample.part("train"), sample.part("val")], ignore_index=True)[["id", "split", *ATTRIBUTES]]
    return write_vector_files(out_dir, np.vstack([v.train, v.val]), labels)
