"""The vectors a fixed-encoder chapter measures: an encoder's cached embeddings, or a user's own.

:func:`driving_vectors` gives training and evaluation vectors with their attribute labels
(weather, scene, time of day) from an encoder on the procedural driving scenes or on a
BDD100K folder, or read from a user's ``vectors_path`` (n x d: ``.npy``, ``.npz``,
``.parquet`` or ``.safetensors``) and ``labels_path`` (CSV or parquet: a ``split`` column,
``train`` or ``val``, and one column per attribute). :func:`caption_vectors` gives the caption
study's image vectors and its captions embedded in both roles, from the procedural caption
groups or a COCO folder.
``caption_vectors`` also reads a user's ``.npz`` (``vectors_path``) with arrays ``images``
(n x d), ``queries`` (m x d), optional ``documents`` (m x d; default: the queries), ``group``
(m integers: the image of each caption) and optional ``categories`` (n x c, bool).
Each result carries ``source``: one sentence naming the data and the encoder, which the
chapters print. Embeddings go through :func:`~embdiag.encoders.cache.embed`.

Folder layouts (``data_dir``): BDD100K as distributed, ``labels/bdd100k_labels_images_
{train,val}.json`` and ``images/100k/{train,val}/``; COCO 2017 as distributed,
``annotations/captions_val2017.json``, ``annotations/instances_val2017.json`` and
``val2017/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validate import as_matrix, squarable
from ..data import load_dataset
from ..data.files import SPLIT_COLUMN, InputError, read_labels, read_vectors, split_labels
from ..data.captions import caption_statistics
from ..data.vocab import ATTRIBUTES
from .cache import Regenerated, embed, regenerate
from .registry import REFERENCE_NAMES, load_encoder

DRIVING_SOURCES = ("procedural", "bdd100k", "wordnet")
CAPTION_SOURCES = ("procedural", "coco", "wordnet")


@dataclass(frozen=True)
class LabelledVectors:
    """Training and evaluation rows of one representation with their attribute labels."""

    train: np.ndarray
    val: np.ndarray
    train_labels: dict
    val_labels: dict
    source: str

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(self.val_labels)

    @property
    def dim(self) -> int:
        return int(self.val.shape[1])


@dataclass(frozen=True)
class CaptionVectors:
    """One image group per row of ``images``; five captions per image, in both roles.

    ``queries`` and ``documents`` hold the captions (row-major: image i owns rows
    5i..5i+4, ``group[j]`` is the image of caption j) embedded in the query and the
    document role; ``categories`` (n_images x n_categories, bool) are the images' object
    categories, named by ``category_names``. ``item`` and ``caption`` are what the data calls
    an image and a caption; ``item_ids`` and ``item_texts`` (text items) name and state each.
    """

    images: np.ndarray
    queries: np.ndarray
    documents: np.ndarray
    group: np.ndarray
    captions: np.ndarray
    categories: np.ndarray
    category_names: tuple[str, ...]
    source: str
    image_pixels: np.ndarray | None = None
    item: str = "image"
    caption: str = "caption"
    item_ids: np.ndarray | None = None
    item_texts: np.ndarray | None = None

    def caption_statistics(self) -> dict | None:
        """:func:`~embdiag.data.captions.caption_statistics` of the caption texts (None when the
        captions are not known as text or images own unequal numbers of them)."""
        counts = np.bincount(self.group, minlength=len(self.images))
        if not all(str(c) for c in self.captions) or (counts != counts[0]).any():
            return None
        return caption_statistics(np.asarray(self.captions).reshape(len(self.images), -1))


def _describe_encoder(encoder) -> str:
    return f"encoder {encoder.name} (revision {encoder.revision[:12]}, {encoder.dim}-d)"


def _folder(data_dir, source: str) -> Path:
    if data_dir is None:
        raise ValueError(f"data_dir: dataset {source!r} needs the folder holding its files")
    path = Path(data_dir).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"data_dir: no such folder {path}")
    return path


def _driving_dataset(dataset: str, data_dir, seed: int, root):
    if dataset == "procedural":
        return load_dataset("procedural", splits=("train", "val"), seed=seed, root=root)
    if dataset == "bdd100k":
        d = _folder(data_dir, dataset)
        return load_dataset(
            "bdd100k",
            train_labels=d / "labels" / "bdd100k_labels_images_train.json",
            val_labels=d / "labels" / "bdd100k_labels_images_val.json",
            images_dir=d / "images" / "100k",
            seed=seed,
            root=root,
        )
    raise ValueError(f"dataset: expected one of {DRIVING_SOURCES} for driving data, got {dataset!r}")


def read_labelled_vectors(vectors_path, labels_path) -> LabelledVectors:
    """A user's vectors and labels, split into training and evaluation rows.

    ``vectors_path``: n x d rows in any format :func:`~embdiag.data.files.read_vectors` reads
    (``.npy``, ``.npz``, ``.parquet``, ``.safetensors``); ``labels_path``: CSV or parquet read by
    :func:`~embdiag.data.files.read_labels`, whose ``split`` column names each row ``train`` or
    one of :data:`~embdiag.data.files.EVAL_NAMES` (:func:`~embdiag.data.files.split_labels`);
    every other column is an attribute, whose missing values (None) leave that row out for
    that attribute only. Raises :class:`~embdiag.data.files.InputError` (a ``ValueError``)
    naming the file and the problem: what those readers refuse (a row-count mismatch, a column
    with no label at all, NaN/inf or zero vectors, ...), a missing ``split`` column, unknown
    split names, a split of fewer than 2 rows, no attribute column, or magnitudes whose squares
    leave float64 (:func:`~embdiag._validate.squarable`).
    """
    Z = np.asarray(read_vectors(vectors_path, "vectors_path"), dtype=np.float64)
    try:  # the chapters' variances, probes and PCA square the entries
        squarable(Z, f"{vectors_path} (vectors_path)", " (a common factor changes no cosine and no ranking)")
    except ValueError as e:
        raise InputError(str(e)) from None
    labels = read_labels(labels_path, len(Z), "labels_path", allow_missing=True).reset_index(drop=True)
    where = f"{labels_path} (labels_path)"
    labels, train = split_labels(labels, where)
    if train is None:
        raise InputError(f"{where}: no {SPLIT_COLUMN!r} column (columns: {list(labels.columns)})")
    val = ~train
    missing = {c: int(labels[c].isna().sum()) for c in labels.columns if labels[c].isna().any()}
    vectors_name, labels_name = Path(vectors_path).name, Path(labels_path).name
    source = (
        f"the user's vectors {vectors_name} ({Z.shape[1]}-d; {int(train.sum())} training and "
        f"{int(val.sum())} evaluation rows) with labels {', '.join(labels.columns)} from {labels_name}"
        + ("".join(f"; {c} missing on {m} rows, left out for {c}" for c, m in missing.items()))
    )
    return LabelledVectors(
        Z[train],
        Z[val],
        {c: labels[c].to_numpy()[train] for c in labels.columns},
        {c: labels[c].to_numpy()[val] for c in labels.columns},
        source,
    )


def driving_vectors(
    encoder: str = "reference-cnn",
    dataset: str = "procedural",
    *,
    data_dir=None,
    seed: int = 0,
    dim: int | None = None,
    vectors_path=None,
    labels_path=None,
    root=None,
    progress: bool = False,
) -> LabelledVectors:
    """Training and evaluation vectors of the driving data, with weather, scene and time labels.

    From the user's files when ``vectors_path`` and ``labels_path`` are given (then
    ``encoder`` and ``dataset`` are not used), else ``encoder``'s cached embeddings of
    ``dataset`` (``procedural``, or ``bdd100k`` read from ``data_dir``), cut to the
    Matryoshka prefix ``dim`` when given. ``wordnet``: the committed WordNet glosses with
    ``pos`` and ``lexname`` labels (:func:`~embdiag.encoders.wordnet.wordnet_vectors`).
    """
    if (vectors_path is None) != (labels_path is None):
        raise ValueError("vectors_path and labels_path: give both (a user's vectors and their labels) or neither")
    if vectors_path is not None:
        return read_labelled_vectors(vectors_path, labels_path)
    if dataset == "wordnet":
        from .wordnet import wordnet_vectors

        return wordnet_vectors(encoder, dim=dim, root=root)
    ds = _driving_dataset(dataset, data_dir, seed, root)
    enc = load_encoder(encoder, root=root)
    train, val = (embed(enc, ds, s, dim=dim, root=root, progress=progress).astype(np.float64) for s in ("train", "val"))
    tr, va = ds.subset("train"), ds.subset("val")
    source = f"{_describe_encoder(enc)} on {ds.source}: {len(tr):,} training and {len(va):,} evaluation images"
    return LabelledVectors(
        train, val, {a: tr.labels(a) for a in ATTRIBUTES}, {a: va.labels(a) for a in ATTRIBUTES}, source
    )


def read_caption_vectors(vectors_path) -> CaptionVectors:
    """A user's image and caption vectors from an ``.npz`` (see the module docstring).

    Raises ``ValueError`` naming a missing array, a width or length mismatch, a group index
    outside the images, an image without captions, or non-finite vectors.
    """
    path = Path(vectors_path)
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except (OSError, ValueError) as e:
        raise ValueError(f"vectors_path: cannot read {path} as an .npz archive ({e})") from None
    missing = [k for k in ("images", "queries", "group") if k not in arrays]
    if missing:
        raise ValueError(
            f"vectors_path: {path.name} has no array {', '.join(map(repr, missing))} (has {sorted(arrays)})"
        )
    images = as_matrix(arrays["images"], "images", dtype=np.float64)
    queries = as_matrix(arrays["queries"], "queries", dtype=np.float64)
    documents = as_matrix(arrays.get("documents", arrays["queries"]), "documents", dtype=np.float64)
    for name, Z in (("queries", queries), ("documents", documents)):
        if Z.shape[1] != images.shape[1]:
            raise ValueError(f"{name}: {Z.shape[1]} columns, images have {images.shape[1]}")
    if documents.shape[0] != queries.shape[0]:
        raise ValueError(f"documents: {documents.shape[0]} rows, queries have {queries.shape[0]}")
    group = np.asarray(arrays["group"])
    if group.shape != (queries.shape[0],) or not np.issubdtype(group.dtype, np.integer):
        raise ValueError(
            f"group: expected {queries.shape[0]} integers (one per caption), got {group.dtype} {group.shape}"
        )
    if group.min() < 0 or group.max() >= len(images):
        raise ValueError(f"group: image indices must lie in 0..{len(images) - 1}")
    lonely = np.setdiff1d(np.arange(len(images)), group)
    if lonely.size:
        raise ValueError(f"group: {lonely.size} images have no caption (first: {lonely[0]})")
    categories = np.asarray(arrays.get("categories", np.zeros((len(images), 0), bool)), bool)
    if categories.shape[0] != len(images):
        raise ValueError(f"categories: {categories.shape[0]} rows, images have {len(images)}")
    source = (
        f"the user's vectors {path.name}: {len(images):,} images and {len(queries):,} captions, {images.shape[1]}-d"
    )
    return CaptionVectors(
        images,
        queries,
        documents,
        group.astype(np.int64),
        np.array([""] * len(queries)),
        categories,
        tuple(f"category {j}" for j in range(categories.shape[1])),
        source,
    )


def caption_vectors(
    encoder: str = "reference-cnn",
    dataset: str = "procedural",
    *,
    data_dir=None,
    n: int = 1000,
    seed: int = 0,
    vectors_path=None,
    root=None,
    progress: bool = False,
) -> CaptionVectors:
    """The caption groups' image vectors and captions in the query and document roles.

    From the user's ``.npz`` when ``vectors_path`` is given (``encoder`` and ``dataset`` are
    then not used), else ``encoder``'s cached embeddings of ``dataset`` (``wordnet``: the
    committed glosses and their examples, :func:`~embdiag.encoders.wordnet.wordnet_caption_vectors`).
    """
    if vectors_path is not None:
        return read_caption_vectors(vectors_path)
    if dataset == "wordnet":
        from .wordnet import wordnet_caption_vectors

        return wordnet_caption_vectors(encoder, root=root)
    if dataset == "procedural":
        ds = load_dataset("procedural", splits=("caption",), n_caption=n, seed=seed, root=root)
    elif dataset == "coco":
        d = _folder(data_dir, dataset)
        ds = load_dataset(
            "coco",
            captions_json=d / "annotations" / "captions_val2017.json",
            instances_json=d / "annotations" / "instances_val2017.json",
            images_dir=d / "val2017",
            n=n,
            seed=seed,
        )
    else:
        raise ValueError(f"dataset: expected one of {CAPTION_SOURCES} for captions, got {dataset!r}")
    enc = load_encoder(encoder, root=root)
    split = ds.splits[0]
    kw = dict(root=root, progress=progress)
    images = embed(enc, ds, split, **kw).astype(np.float64)
    queries = embed(enc, ds, split, kind="texts", role="query", **kw).astype(np.float64)
    documents = embed(enc, ds, split, kind="texts", role="document", **kw).astype(np.float64)
    captions = np.asarray(ds.captions)
    per = captions.shape[1]
    source = f"{_describe_encoder(enc)} on {ds.source}: {len(ds):,} images with {per} captions each"
    return CaptionVectors(
        images,
        queries,
        documents,
        np.repeat(np.arange(len(ds)), per),
        captions.ravel(),
        np.asarray(ds.categories, bool),
        tuple(ds.category_names),
        source,
        image_pixels=np.asarray(ds.images) if dataset == "procedural" else None,
    )


def book_embeddings(root=None):
    """Every (encoder, dataset, split, kind, role) whose native vectors the book's chapters
    read, in a fixed order: both reference encoders on the procedural driving scenes
    (training and evaluation images) and on the procedural caption groups (images, and
    captions in the query and the document role). These are committed (see
    :mod:`embdiag.encoders.cache`)."""
    driving = _driving_dataset("procedural", None, 0, root)
    captions = load_dataset("procedural", splits=("caption",), n_caption=1000, seed=0, root=root)
    for name in REFERENCE_NAMES:
        enc = load_encoder(name, root=root)
        yield from ((enc, driving, split, "images", None) for split in ("train", "val"))
        yield enc, captions, "caption", "images", None
        yield from ((enc, captions, "caption", "texts", role) for role in ("query", "document"))


def regenerate_book_embeddings(*, write: bool = False, root=None, progress: bool = False) -> list[Regenerated]:
    """The WordNet sample's WordLlama vectors (:func:`~embdiag.encoders.wordnet.regenerate_wordnet`,
    first: it needs Debian's wordnet-base and the wordllama wheel, and fails fast without them), then
    :func:`~embdiag.encoders.cache.regenerate` every entry of :func:`book_embeddings`: how far this
    machine's vectors are from the committed ones (written where none are committed, or all with ``write``)."""
    from .wordnet import regenerate_wordnet

    return [
        *regenerate_wordnet(write=write, root=root, progress=progress),
        *(
            regenerate(enc, ds, split, kind=kind, role=role or "query", write=write, root=root, progress=progress)
            for enc, ds, split, kind, role in book_embeddings(root)
        ),
    ]
