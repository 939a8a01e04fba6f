"""Image–caption retrieval in both directions, per query, under Matryoshka compression.

Images and captions share one embedding space; image ``i`` owns the captions ``j`` with
``group[j] == i`` (five each in the study).

- **Text→image**: each caption, embedded in the *query* role, ranks the images by cosine;
  its one positive is its parent image.
- **Image→text**: each image ranks the captions embedded in the *document* role; its
  positives are its own captions.

Per query (:class:`Ranking`): Hit@1 (the first result is a positive), Hit@k (a positive
among the first ``k``), recall@k (the share of the query's positives in its first ``k``;
for image→text this is *caption recall@k*, for text→image it equals Hit@k) and the rank of
its best positive. **Overlap@k** is the share of the native top-``k`` identities a
compressed search keeps (identity, not relevance). **Category P@k** is an image-only
comparator: each image queries the other images (see :func:`category_precision`).

A representation is the native vectors or a Matryoshka prefix (:func:`mrl_prefix`: the
leading coordinates, renormalized), applied alike to images, queries and documents.
:func:`bootstrap_changes` gives paired bootstrap intervals of compressed minus native over
image groups (a caption travels with its parent image), :func:`bootstrap_contrasts` the same
for one metric's change against a multiple of Hit@k's, and :func:`shuffled_control`
reassigns the image–caption correspondence by a seeded permutation of the groups while
vectors and rankings stay fixed, beside its exact chance level (:func:`chance_levels`).
All searches are exact (:func:`embdiag.metrics.topk`, float64 scores).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._scaling import unit_rows
from .._validate import as_matrix, check_int, check_k, nonzero_rows, same_length
from ..metrics import hit_at_k, overlap_at_k, paired_bootstrap, precision_at_k, recall_at_k, topk
from .compression import MatryoshkaPrefix

__all__ = [
    "T2I",
    "I2T",
    "METRICS",
    "Ranking",
    "Representation",
    "CaptionRetrieval",
    "check_group",
    "image_positives",
    "positive_ranks",
    "text_to_image",
    "image_to_text",
    "eligible_categories",
    "category_precision",
    "category_floor",
    "mrl_prefix",
    "representation_name",
    "evaluate",
    "summary_table",
    "overlap_table",
    "typical_image",
    "bootstrap_changes",
    "bootstrap_contrasts",
    "shuffle_groups",
    "chance_levels",
    "random_hit_chance",
    "shuffled_control",
]

T2I, I2T = "text→image", "image→text"
#: Per-query results compared across representations: (direction, metric, Ranking attribute).
METRICS = (
    (T2I, "Hit@1", "hit_1"),
    (T2I, "Hit@k", "hit_k"),
    (I2T, "Hit@1", "hit_1"),
    (I2T, "Hit@k", "hit_k"),
    (I2T, "caption recall@k", "recall_k"),
)


def check_group(group, n_captions: int, n_images: int) -> np.ndarray:
    """``group`` as an int64 array: one image index in ``[0, n_images)`` per caption, every
    image owning at least one caption. Raises ``ValueError`` naming the problem.

    Examples
    --------
    >>> check_group([0, 0, 1, 1, 2, 2], n_captions=6, n_images=3)
    array([0, 0, 1, 1, 2, 2])
    >>> check_group([0, 0, 2], n_captions=3, n_images=3)
    Traceback (most recent call last):
    ...
    ValueError: group: 1 image(s) own no caption (first: image 1)
    """
    g = np.asarray(group)
    if g.ndim != 1:
        raise ValueError(f"group: expected a 1-D array of image indices, got shape {g.shape}")
    if not np.issubdtype(g.dtype, np.integer):
        raise ValueError(f"group: expected integer image indices, got dtype {g.dtype}")
    if len(g) != n_captions:
        raise ValueError(f"length mismatch: captions have {n_captions} rows, group has {len(g)}")
    if g.min() < 0 or g.max() >= n_images:
        raise ValueError(f"group: image indices must lie in [0, {n_images}), got range [{g.min()}, {g.max()}]")
    counts = np.bincount(g, minlength=n_images)
    if (counts == 0).any():
        raise ValueError(
            f"group: {int((counts == 0).sum())} image(s) own no caption "
            f"(first: image {int(np.flatnonzero(counts == 0)[0])})"
        )
    return g.astype(np.int64)


def image_positives(group, n_images: int):
    """Each image's caption indices: an ``(n_images, m)`` array when every image owns ``m``
    captions, else a list of arrays (either form is accepted by :func:`~embdiag.metrics.hit_at_k`).

    Examples
    --------
    >>> image_positives([0, 1, 0, 1], n_images=2)  # two captions each: one row per image
    array([[0, 2],
           [1, 3]])
    >>> image_positives([0, 0, 1], n_images=2)  # unequal groups: one array per image
    [array([0, 1]), array([2])]
    """
    g = check_group(group, len(np.asarray(group)), n_images)
    order = np.argsort(g, kind="stable")  # numpy reads the kind case-insensitively
    counts = np.bincount(g, minlength=n_images)  # check_group: already n_images long without minlength
    if (counts == counts[0]).all():
        return order.reshape(n_images, counts[0])
    return np.split(order, np.cumsum(counts)[:-1])


#: Rows of every score product: query blocks are padded to a multiple of this, so that each row
#: lies in a whole tile of the GEMM (a lone row, or one in an edge tile, rounds differently).
_TILE = 64


def positive_ranks(queries, gallery, positives, block: int = 1024, neighbors=None) -> np.ndarray:  # block: memory only
    """Rank (1 = first) of each query's best-ranked positive among all gallery rows.

    Brute force over the full float64 cosine matrix, with :func:`~embdiag.metrics.topk`'s
    order: descending score, equal scores by the lower gallery index. ``positives`` is a
    boolean mask ``(n_queries, n_gallery)`` or one positive index per query. The scores are
    computed ``block`` queries at a time, each block padded to whole GEMM tiles, so a query's
    rank does not depend on which queries share its block. ``neighbors``: the queries' top-k
    gallery indices from the search whose hits are counted (:func:`~embdiag.metrics.topk`); a
    positive found there takes its place in that list and one not found ranks after k, so
    ``hit_at_k(neighbors) == (rank <= k)`` holds even at ties the two computations round apart.

    Examples
    --------
    >>> images = np.eye(3)
    >>> captions = np.array([[1.0, 0.1, 0.0], [0.0, 1.0, 0.1], [1.0, 0.0, 0.5]])  # caption 2 is closest to image 0
    >>> positive_ranks(captions, images, positives=[0, 1, 2])  # caption 2's own image comes second
    array([1, 1, 2])
    """
    Q = as_matrix(queries, "queries", dtype=np.float64)
    G = as_matrix(gallery, "gallery", dtype=np.float64)
    if G.shape[1] != Q.shape[1]:
        raise ValueError(f"gallery: has {G.shape[1]} columns but queries have {Q.shape[1]}")
    P = np.asarray(positives)
    if P.dtype != bool:
        if P.shape != (len(Q),) or not np.issubdtype(P.dtype, np.integer):
            raise ValueError(f"positives: expected one integer index per query or a boolean mask, got shape {P.shape}")
        mask = np.zeros((len(Q), len(G)), bool)
        mask[np.arange(len(Q)), P] = True
        P = mask
    if P.shape != (len(Q), len(G)) or not P.any(axis=1).all():
        raise ValueError(f"positives: the mask must be ({len(Q)}, {len(G)}) with a positive in every row")
    nb = None if neighbors is None else np.asarray(neighbors)
    if nb is not None and (
        nb.ndim != 2
        or len(nb) != len(Q)
        or not np.issubdtype(nb.dtype, np.integer)
        or nb.size
        and (nb.min() < 0 or nb.max() >= len(G))
    ):
        raise ValueError(
            f"neighbors: expected ({len(Q)}, k) gallery indices in [0, {len(G)}), got shape {np.shape(neighbors)}"
        )
    nonzero_rows(Q, "queries")
    nonzero_rows(G, "gallery")
    Qn, Gn = unit_rows(Q), unit_rows(G)
    ranks = np.empty(len(Q), np.int64)
    cols = np.arange(len(G))
    padded = np.zeros((-(-block // _TILE) * _TILE, Q.shape[1]))
    for q0 in range(0, len(Q), block):  # a smaller step would rewrite the same ranks (time only)
        m = min(block, len(Q) - q0)
        padded[:m] = Qn[q0 : q0 + m]
        padded[m:] = 0.0
        S, M = (padded @ Gn.T)[:m], P[q0 : q0 + m]
        best = np.where(M, S, -np.inf).max(axis=1)  # score of the best positive
        first = np.where(M & (S == best[:, None]), cols, len(G)).min(axis=1)  # its lowest index
        ranks[q0 : q0 + m] = (
            1 + (S > best[:, None]).sum(axis=1) + ((S == best[:, None]) & (cols < first[:, None])).sum(axis=1)
        )
    if nb is not None and nb.shape[1]:
        found = np.take_along_axis(P, nb, axis=1)  # which of each query's top k are positives
        listed = np.where(found.any(axis=1), found.argmax(axis=1) + 1, 0)
        ranks = np.where(listed > 0, listed, np.maximum(ranks, nb.shape[1] + 1))
    return ranks


@dataclass(frozen=True)
class Ranking:
    """One direction's exact search in one representation, with per-query results.

    ``neighbors``/``scores``: ``(n_queries, k)``, best first. ``hit_1``, ``hit_k``,
    ``recall_k`` (0..1 per query) and ``rank`` (the best positive's rank, 1-based) are per
    query; ``unit`` is the image group each query belongs to (a caption's parent, or the
    query image itself), the unit the bootstrap resamples.

    Examples
    --------
    >>> captions = np.array([[1.0, 0.1, 0.0], [0.0, 1.0, 0.1], [1.0, 0.0, 0.5]])
    >>> ranking = text_to_image(captions, np.eye(3), group=[0, 1, 2], k=2)
    >>> ranking.k, ranking.unit, ranking.mean("hit_1"), ranking.mean("hit_k")
    (2, array([0, 1, 2]), 0.6666666666666666, 1.0)
    """

    direction: str
    neighbors: np.ndarray
    scores: np.ndarray
    hit_1: np.ndarray
    hit_k: np.ndarray
    recall_k: np.ndarray
    rank: np.ndarray
    unit: np.ndarray

    @property
    def k(self) -> int:
        return int(self.neighbors.shape[1])

    def mean(self, attribute: str) -> float:
        return float(getattr(self, attribute).mean())


def _ranking(direction, queries, gallery, positives, mask, k, unit) -> Ranking:
    scores, nb = topk(queries, gallery, k, dtype=np.float64)
    return Ranking(
        direction,
        nb,
        scores,
        hit_at_k(nb, positives, k=1, per_query=True),
        hit_at_k(nb, positives, per_query=True),
        recall_at_k(nb, positives, per_query=True),
        positive_ranks(queries, gallery, mask, neighbors=nb),
        unit,
    )


def text_to_image(queries, images, group, k: int = 10) -> Ranking:
    """Each caption (query role) searches the images; its one positive is ``group[j]``.

    Examples
    --------
    A three-image toy: captions 0 and 1 find their image first, caption 2 finds image 0
    first and its own image second, so Hit@1 is 2/3 and Hit@2 is 1.

    >>> images = np.eye(3)
    >>> captions = np.array([[1.0, 0.1, 0.0], [0.0, 1.0, 0.1], [1.0, 0.0, 0.5]])
    >>> ranking = text_to_image(captions, images, group=[0, 1, 2], k=2)
    >>> ranking.direction, ranking.neighbors
    ('text→image', array([[0, 1],
                          [1, 2],
                          [0, 2]]))
    >>> ranking.hit_1, ranking.hit_k, ranking.rank
    (array([1., 1., 0.]), array([1., 1., 1.]), array([1, 1, 2]))
    """
    Q, X = as_matrix(queries, "queries"), as_matrix(images, "images")
    g = check_group(group, len(Q), len(X))
    k = check_k(k, len(X))
    return _ranking(T2I, Q, X, g, g, k, g)


def image_to_text(images, documents, group, k: int = 10) -> Ranking:
    """Each image searches the captions (document role); its positives are its own captions.

    Examples
    --------
    Two images with two captions each; image 0's second caption points away from it, so
    image 0 finds one of its two captions among its first two results (caption recall@2 1/2).

    >>> images = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> documents = np.array([[1.0, 0.0], [-1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    >>> ranking = image_to_text(images, documents, group=[0, 0, 1, 1], k=2)
    >>> ranking.direction, ranking.neighbors
    ('image→text', array([[0, 2],
                          [3, 2]]))
    >>> ranking.hit_1, ranking.recall_k, ranking.unit
    (array([1., 1.]), array([0.5, 1. ]), array([0, 1]))
    """
    X, D = as_matrix(images, "images"), as_matrix(documents, "documents")
    g = check_group(group, len(D), len(X))
    k = check_k(k, len(D))
    mask = g[None, :] == np.arange(len(X))[:, None]
    return _ranking(I2T, X, D, image_positives(g, len(X)), mask, k, np.arange(len(X)))


def eligible_categories(categories, min_support: int = 10) -> np.ndarray:
    """Indices of the object categories that at least ``min_support`` images contain and at
    least ``min_support`` images lack (the support floor of balanced accuracy, applied to
    both sides, so that each eligible category tells images apart).

    Examples
    --------
    >>> categories = np.array([[True, False, True, True], [True, False, False, True],
    ...                        [False, True, True, True], [False, True, False, True]])
    >>> eligible_categories(categories, min_support=2)  # every image has category 3: none lacks it
    array([0, 1, 2])
    """
    C = np.asarray(categories)
    if C.ndim != 2 or C.dtype != bool:
        raise ValueError(f"categories: expected a boolean (n_images, n_categories) array, got {C.dtype} {C.shape}")
    min_support = check_int(min_support, "min_support", minimum=1)
    n_with = C.sum(axis=0)
    return np.flatnonzero((n_with >= min_support) & (len(C) - n_with >= min_support))


def category_precision(images, categories, k: int = 10, min_support: int = 10, per_category: bool = False):
    """Category P@k: an image-only comparator.

    Each image queries the *other* images by cosine (top ``k``, itself excluded). For an
    eligible category ``c`` (:func:`eligible_categories`), P@k(c) is the mean, over the
    images containing ``c``, of the share of their ``k`` neighbours that also contain ``c``;
    category P@k is the mean of P@k(c) over the eligible categories (each counts equally).
    Returns that float, or the per-category values (eligible categories only) with
    ``per_category=True``. Its random floor is :func:`category_floor`.

    Examples
    --------
    Images 0 and 1 point one way, 2 and 3 another; categories 0 and 1 follow that split,
    category 2 (images 0 and 2) cuts across it, and category 3 (every image) is not eligible.

    >>> images = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]])
    >>> categories = np.array([[True, False, True, True], [True, False, False, True],
    ...                        [False, True, True, True], [False, True, False, True]])
    >>> category_precision(images, categories, k=1, min_support=2, per_category=True)
    array([1., 1., 0.])
    >>> category_precision(images, categories, k=1, min_support=2)
    0.6666666666666666
    """
    X = as_matrix(images, "images")
    C = np.asarray(categories)
    same_length(images=X, categories=C)
    cats = eligible_categories(C, min_support)
    if not cats.size:
        raise ValueError(f"categories: no category has {min_support} images with it and {min_support} without")
    _, nb = topk(X, X, k, exclude_self=True, dtype=np.float64)
    # the query labels are True; float ones would compare the same (True == 1.0)
    values = np.array([precision_at_k(nb[C[:, c]], C[:, c], np.ones(int(C[:, c].sum()), bool)) for c in cats])
    return values if per_category else float(values.mean())


def category_floor(categories, min_support: int = 10) -> float:
    """Expected category P@k of random neighbours: mean over eligible categories of
    ``(n_c - 1) / (n - 1)``, the chance that another image also contains ``c``.

    Examples
    --------
    >>> categories = np.array([[True, False, True, True], [True, False, False, True],
    ...                        [False, True, True, True], [False, True, False, True]])
    >>> category_floor(categories, min_support=2)  # categories 0-2: (2 - 1) / (4 - 1) each
    0.3333333333333333
    """
    C = np.asarray(categories)
    cats = eligible_categories(C, min_support)
    return float(np.mean((C[:, cats].sum(axis=0) - 1) / (len(C) - 1)))


def mrl_prefix(vectors, dim: int) -> np.ndarray:
    """The Matryoshka prefix: the leading ``dim`` coordinates, each row renormalized to unit
    length (:class:`~embdiag.interventions.MatryoshkaPrefix`); ``dim = d`` gives unit native rows.

    Examples
    --------
    >>> mrl_prefix([[3.0, 4.0, 12.0]], 2)
    array([[0.6, 0.8]])
    >>> mrl_prefix([[3.0, 4.0, 12.0]], 3) * 13
    array([[ 3.,  4., 12.]])
    """
    X = as_matrix(vectors, "vectors")
    return MatryoshkaPrefix(dim).fit(X).transform(X)


def representation_name(dim: int, d: int) -> str:
    """``native 768`` for the full dimension, else ``MRL <dim>`` (the study's labels).

    Examples
    --------
    >>> representation_name(768, 768), representation_name(256, 768)
    ('native 768', 'MRL 256')
    """
    return f"native {d}" if dim == d else f"MRL {dim}"


@dataclass(frozen=True)
class Representation:
    """Both directions and the category comparator for one representation.

    Examples
    --------
    >>> images = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> group = np.array([0, 0, 1, 1, 2, 2])  # two captions per image, each a copy of its image
    >>> result = evaluate(images, images[group], images[group], group, dims=(2,), k=2)
    >>> rep = result["MRL 2"]
    >>> rep.name, rep.dim, rep.ranking("text→image") is rep.t2i, rep.category_p  # no categories: NaN
    ('MRL 2', 2, True, nan)
    """

    name: str
    dim: int
    t2i: Ranking
    i2t: Ranking
    category_p: float

    def ranking(self, direction: str) -> Ranking:
        return {T2I: self.t2i, I2T: self.i2t}[direction]


@dataclass(frozen=True)
class CaptionRetrieval:
    """The study's measurements: ``representations`` (native first), the caption groups and ``k``.

    Examples
    --------
    >>> images = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> group = np.array([0, 0, 1, 1, 2, 2])  # two captions per image, each a copy of its image
    >>> result = evaluate(images, images[group], images[group], group, dims=(2,), k=2)
    >>> result.names, result.native.name, result.n_images, result.k, result.categories
    (['native 4', 'MRL 2'], 'native 4', 3, 2, ())
    >>> result["MRL 3"]
    Traceback (most recent call last):
    ...
    KeyError: "representation 'MRL 3' not measured; have ['native 4', 'MRL 2']"
    """

    representations: tuple[Representation, ...]
    group: np.ndarray
    k: int
    categories: tuple[int, ...]

    @property
    def native(self) -> Representation:
        return self.representations[0]

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.representations]

    @property
    def n_images(self) -> int:
        return int(self.group.max()) + 1

    def __getitem__(self, name: str) -> Representation:
        for r in self.representations:
            if r.name == name:
                return r
        raise KeyError(f"representation {name!r} not measured; have {self.names}")


def evaluate(
    images, queries, documents, group, categories=None, *, dims=(256, 128), k: int = 10, min_support: int = 10
) -> CaptionRetrieval:
    """Both directions and category P@k for the native vectors and each Matryoshka prefix in ``dims``.

    ``images`` (n_images x d), ``queries``/``documents`` (n_captions x d: the captions in
    the query and the document role, row ``j`` owned by image ``group[j]``),
    ``categories`` (bool n_images x n_categories, optional: without it, or without an
    eligible category, category P@k is NaN).

    Examples
    --------
    Images 0 and 1 differ only in the sign of their third coordinate: the 2-dimensional
    prefix drops it and makes them identical, so image 1's captions find image 0 first
    (equal scores go to the lower index) and text→image Hit@1 falls from 1 to 2/3.

    >>> images = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> group = np.array([0, 0, 1, 1, 2, 2])  # two captions per image, each a copy of its image
    >>> result = evaluate(images, images[group], images[group], group, dims=(2,), k=2)
    >>> result.names
    ['native 4', 'MRL 2']
    >>> result.native.t2i.hit_1, result["MRL 2"].t2i.hit_1
    (array([1., 1., 1., 1., 1., 1.]), array([1., 1., 0., 0., 1., 1.]))
    >>> result["MRL 2"].i2t.rank  # image 1 ties with image 0 on captions 0-3: its own come third
    array([1, 3, 1])
    """
    X = as_matrix(images, "images")
    Q, D = as_matrix(queries, "queries"), as_matrix(documents, "documents")
    if Q.shape != D.shape:
        raise ValueError(
            f"queries and documents: shapes differ ({Q.shape} vs {D.shape}); they are the same captions in two roles"
        )
    if Q.shape[1] != X.shape[1]:
        raise ValueError(f"queries: have {Q.shape[1]} columns but images have {X.shape[1]}")
    g = check_group(group, len(Q), len(X))
    d = X.shape[1]
    dims = [check_int(m, "dims", minimum=1) for m in dims]
    if any(m > d for m in dims):
        raise ValueError(f"dims: each must be at most the dimension d = {d}, got {dims}")
    cats = ()
    if categories is not None:
        same_length(images=X, categories=np.asarray(categories))
        cats = tuple(int(c) for c in eligible_categories(categories, min_support))
    reps = []
    for m in dict.fromkeys([d, *dims]):  # native first, each dimension once
        Xm, Qm, Dm = (mrl_prefix(V, m) for V in (X, Q, D))
        cp = category_precision(Xm, categories, k, min_support) if cats else float("nan")  # "NAN": same NaN
        reps.append(
            Representation(representation_name(m, d), m, text_to_image(Qm, Xm, g, k), image_to_text(Xm, Dm, g, k), cp)
        )
    return CaptionRetrieval(tuple(reps), g, int(k), cats)


def _label(metric: str, k: int) -> str:
    return metric.replace("@k", f"@{k}")


def summary_table(result: CaptionRetrieval) -> pd.DataFrame:
    """One row per representation: T→I Hit@1 and Hit@k, I→T Hit@1, Hit@k and caption
    recall@k, category P@k (fractions); the columns of the study's table.

    Examples
    --------
    >>> images = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> group = np.array([0, 0, 1, 1, 2, 2])  # two captions per image, each a copy of its image
    >>> result = evaluate(images, images[group], images[group], group, dims=(2,), k=2)
    >>> table = summary_table(result)
    >>> table.index.tolist()
    ['native 4', 'MRL 2']
    >>> table.loc["MRL 2"].round(4).to_dict()
    {'T→I Hit@1': 0.6667, 'T→I Hit@2': 1.0, 'I→T Hit@1': 0.6667, 'I→T Hit@2': 0.6667,
     'I→T caption recall@2': 0.6667, 'category P@2': nan}
    """
    rows = {}
    for r in result.representations:
        row = {
            f"{'T→I' if dr == T2I else 'I→T'} {_label(m, result.k)}": r.ranking(dr).mean(attr)
            for dr, m, attr in METRICS
        }
        row[f"category P@{result.k}"] = r.category_p
        rows[r.name] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("representation")  # orient: any case


def overlap_table(result: CaptionRetrieval) -> pd.DataFrame:
    """Overlap@k of each compressed top-k with the native top-k, per direction (fractions).

    Examples
    --------
    >>> images = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> group = np.array([0, 0, 1, 1, 2, 2])  # two captions per image, each a copy of its image
    >>> result = evaluate(images, images[group], images[group], group, dims=(2,), k=2)
    >>> overlap_table(result).round(4).values.tolist()  # image→text: image 1 keeps none of its native top 2
    [['MRL 2', 'text→image', 1.0], ['MRL 2', 'image→text', 0.6667]]
    """
    rows = []
    for r in result.representations[1:]:
        for direction in (T2I, I2T):
            rows.append(
                {
                    "representation": r.name,
                    "direction": direction,
                    "overlap": overlap_at_k(r.ranking(direction).neighbors, result.native.ranking(direction).neighbors),
                }
            )
    return pd.DataFrame(rows, columns=["representation", "direction", "overlap"])


def typical_image(result: CaptionRetrieval) -> int:
    """A typical image for a worked example, chosen by a rule fixed in advance: the
    lowest-index image whose share of captions with a native text→image hit@k is the overall
    native Hit@k rounded to the nearest possible share (e.g. 3 of 5 captions for 56%); the
    closest share if no image has it exactly.

    Examples
    --------
    >>> images = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> group = np.array([0, 0, 1, 1, 2, 2])  # two captions per image, each a copy of its image
    >>> result = evaluate(images, images[group], images[group], group, dims=(2,), k=2)
    >>> typical_image(result)  # native Hit@2 is 1: every image has all its captions hit; the lowest index
    0
    """
    hits = result.native.t2i.hit_k
    n = result.n_images
    # n = group.max() + 1: minlength changes nothing here
    per_image = np.bincount(result.group, weights=hits, minlength=n) / np.bincount(result.group, minlength=n)
    size = int(np.bincount(result.group).max())
    target = np.round(hits.mean() * size) / size
    return int(np.argmin(np.abs(per_image - target) + 1e-9 * np.arange(n) / n))


def bootstrap_changes(
    result: CaptionRetrieval, n_draws: int = 5000, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """Compressed minus native, with paired bootstrap intervals over image groups.

    For each compressed representation and each metric of :data:`METRICS`, the per-query
    values of both representations are paired query by query and resampled by whole image
    groups (:func:`~embdiag.metrics.paired_bootstrap`: ``n_draws`` draws of the
    ``n_images`` groups with replacement; a text→image query travels with its parent
    image, so a drawn image brings all its captions). Every metric uses the same ``seed``,
    so each draw picks the same images in both directions. The intervals are conditional
    on these images and captions (the encoder is fixed). Columns: ``representation``,
    ``direction``, ``metric``, ``native``, ``compressed``, ``change``, ``low``, ``high``,
    ``n_queries``, ``n_groups``, and ``compressed low``, ``compressed high`` (the compressed
    value's interval from the same draws) (fractions).

    Examples
    --------
    >>> images = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> group = np.array([0, 0, 1, 1, 2, 2])  # two captions per image, each a copy of its image
    >>> result = evaluate(images, images[group], images[group], group, dims=(2,), k=2)
    >>> changes = bootstrap_changes(result, n_draws=200)
    >>> changes.columns.tolist()
    ['representation', 'direction', 'metric', 'native', 'compressed', 'change', 'low', 'high', 'n_queries',
     'n_groups', 'compressed low', 'compressed high']
    >>> changes[["direction", "metric", "change", "n_queries", "n_groups"]].round(4).values.tolist()
    [['text→image', 'Hit@1', -0.3333, 6, 3], ['text→image', 'Hit@2', 0.0, 6, 3],
     ['image→text', 'Hit@1', -0.3333, 3, 3], ['image→text', 'Hit@2', -0.3333, 3, 3],
     ['image→text', 'caption recall@2', -0.3333, 3, 3]]
    """
    rows = []
    for r in result.representations[1:]:
        for direction, metric, attr in METRICS:
            a, b = r.ranking(direction), result.native.ranking(direction)
            iv = paired_bootstrap(
                getattr(a, attr), getattr(b, attr), groups=a.unit, n_draws=n_draws, level=level, seed=seed
            )
            value = getattr(a, attr)
            at = paired_bootstrap(value, np.zeros_like(value), groups=a.unit, n_draws=n_draws, level=level, seed=seed)
            rows.append(
                {
                    "representation": r.name,
                    "direction": direction,
                    "metric": _label(metric, result.k),
                    "native": b.mean(attr),
                    "compressed": a.mean(attr),
                    "change": iv.mean,
                    "low": iv.low,
                    "high": iv.high,
                    "n_queries": iv.n,
                    "n_groups": iv.n_groups,
                    "compressed low": at.low,
                    "compressed high": at.high,
                }
            )
    return pd.DataFrame(rows)


def bootstrap_contrasts(
    result: CaptionRetrieval, factor: float, n_draws: int = 5000, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """Each metric's change against ``factor`` times the Hit@k change of its direction, paired.

    For each compressed representation and each metric of :data:`METRICS` other than Hit@k,
    the contrast is (compressed minus native of the metric) minus ``factor`` times (compressed
    minus native of Hit@k), per query, averaged: below 0 when the metric falls by more than
    ``factor`` times Hit@k's fall. Its interval is :func:`bootstrap_changes`' paired bootstrap
    over image groups (the same draws for the same ``seed``), conditional on these images and
    captions. Columns: ``representation``, ``direction``, ``metric``, ``reference`` (Hit@k),
    ``factor``, ``contrast``, ``low``, ``high`` (fractions).

    Examples
    --------
    >>> images = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> group = np.array([0, 0, 1, 1, 2, 2])  # two captions per image, each a copy of its image
    >>> result = evaluate(images, images[group], images[group], group, dims=(2,), k=2)
    >>> contrasts = bootstrap_contrasts(result, factor=2, n_draws=200)
    >>> contrasts[["direction", "metric", "reference", "contrast"]].round(4).values.tolist()
    [['text→image', 'Hit@1', 'Hit@2', -0.3333], ['image→text', 'Hit@1', 'Hit@2', 0.3333],
     ['image→text', 'caption recall@2', 'Hit@2', 0.3333]]
    """
    rows = []
    for r in result.representations[1:]:
        for direction, metric, attr in METRICS:
            if attr == "hit_k":
                continue
            a, b = r.ranking(direction), result.native.ranking(direction)
            iv = paired_bootstrap(
                getattr(a, attr) - factor * a.hit_k,
                getattr(b, attr) - factor * b.hit_k,
                groups=a.unit,
                n_draws=n_draws,
                level=level,
                seed=seed,
            )
            rows.append(
                {
                    "representation": r.name,
                    "direction": direction,
                    "metric": _label(metric, result.k),
                    "reference": _label("Hit@k", result.k),
                    "factor": float(factor),
                    "contrast": iv.mean,
                    "low": iv.low,
                    "high": iv.high,
                }
            )
    return pd.DataFrame(
        rows, columns=["representation", "direction", "metric", "reference", "factor", "contrast", "low", "high"]
    )


def shuffle_groups(group, seed: int = 0) -> np.ndarray:
    """The correspondence after a seeded permutation ``p`` of the images: caption ``j`` now
    belongs to image ``p[group[j]]`` (whole groups move; group sizes are kept).

    Examples
    --------
    >>> shuffle_groups([0, 0, 1, 1, 2, 2], seed=0)  # here p = [2, 0, 1]
    array([2, 2, 0, 0, 1, 1])
    """
    g = np.asarray(group)
    seed = check_int(seed, "seed", minimum=0)
    return np.random.default_rng(seed).permutation(int(g.max()) + 1)[g]


def chance_levels(result: CaptionRetrieval, representation: str | None = None) -> dict:
    """Exact expected values of each metric of :data:`METRICS` under a uniformly random
    permutation of the image groups, with the rankings fixed.

    Text→image: the new parent of a caption is uniform over the ``n`` images, so Hit@k is
    ``k / n`` and Hit@1 ``1 / n``. Image→text: image ``i`` receives the captions of one
    uniformly random group, so Hit@k is ``m_i / n`` with ``m_i`` the number of distinct
    groups among its top ``k`` captions (between ``ceil(k / group size)`` and ``k``), and
    caption recall@k is ``sum_g (c_ig / |g|) / n`` (``c_ig``: top-k captions from group
    ``g``), i.e. ``k / (5 n)`` for groups of five; both averaged over images. Returns
    ``{(direction, metric): value}`` for the given representation (default: native).

    Examples
    --------
    >>> images = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> group = np.array([0, 0, 1, 1, 2, 2])  # two captions per image, each a copy of its image
    >>> result = evaluate(images, images[group], images[group], group, dims=(2,), k=2)
    >>> {key: round(value, 4) for key, value in chance_levels(result).items()}  # n = 3 images, k = 2
    {('text→image', 'Hit@1'): 0.3333, ('text→image', 'Hit@2'): 0.6667, ('image→text', 'Hit@1'): 0.3333,
     ('image→text', 'Hit@2'): 0.3333, ('image→text', 'caption recall@2'): 0.3333}
    """
    rep = result.native if representation is None else result[representation]
    n, k, g = result.n_images, result.k, result.group
    sizes = np.bincount(g, minlength=n)  # n = g.max() + 1: minlength changes nothing
    owners = g[rep.i2t.neighbors]  # (n_images, k) group of each top caption
    distinct = np.array([len(np.unique(row)) for row in owners])
    # "Hit@1" has no "@k": its _label is "Hit@1" whatever k
    return {
        (T2I, _label("Hit@1", k)): 1 / n,
        (T2I, _label("Hit@k", k)): k / n,
        (I2T, _label("Hit@1", k)): 1 / n,
        (I2T, _label("Hit@k", k)): float(distinct.mean()) / n,
        (I2T, _label("caption recall@k", k)): float((1.0 / sizes[owners]).sum(axis=1).mean()) / n,
    }


def random_hit_chance(n_gallery: int, n_positives: int, k: int) -> float:
    """Chance that ``k`` distinct gallery items drawn at random include at least one of
    ``n_positives``: ``1 - C(n_gallery - n_positives, k) / C(n_gallery, k)``. This is *not*
    the shuffled control's chance for image→text (:func:`chance_levels`), where whole groups
    move and the ranking is fixed; it is the figure one gets by treating results as random draws.

    Examples
    --------
    >>> round(random_hit_chance(10, 1, 2), 4)  # 1 - C(9, 2) / C(10, 2) = 1 - 36/45
    0.2
    >>> round(random_hit_chance(4, 2, 2), 4)  # 1 - C(2, 2) / C(4, 2) = 1 - 1/6
    0.8333
    """
    n_gallery = check_int(n_gallery, "n_gallery", minimum=1)
    n_positives = check_int(n_positives, "n_positives", minimum=0)
    k = check_int(k, "k", minimum=0)
    if n_positives > n_gallery or k > n_gallery:
        raise ValueError(f"n_positives and k: must not exceed n_gallery = {n_gallery}, got {n_positives} and {k}")
    return 1 - math.comb(n_gallery - n_positives, k) / math.comb(n_gallery, k)


def _shuffled_values(rep: Representation, group: np.ndarray, perms: np.ndarray) -> dict:
    """Per permutation (rows of ``perms``), each metric's mean with rankings fixed."""
    n = perms.shape[1]
    sizes = np.bincount(group, minlength=n)  # n = group.max() + 1: minlength changes nothing
    t_nb, i_nb = rep.t2i.neighbors, rep.i2t.neighbors
    out = {
        key: np.empty(len(perms))
        for key in ((T2I, "Hit@1"), (T2I, "Hit@k"), (I2T, "Hit@1"), (I2T, "Hit@k"), (I2T, "caption recall@k"))
    }
    images = np.arange(n)
    for i, p in enumerate(perms):
        parent = p[group]  # new owner of every caption
        t_hits = t_nb == parent[:, None]
        out[T2I, "Hit@1"][i] = t_hits[:, 0].mean()
        out[T2I, "Hit@k"][i] = t_hits.any(axis=1).mean()
        i_hits = parent[i_nb] == images[:, None]  # top captions now owned by the query image
        inverse = np.empty(n, np.int64)
        inverse[p] = images  # the group each image now owns
        out[I2T, "Hit@1"][i] = i_hits[:, 0].mean()
        out[I2T, "Hit@k"][i] = i_hits.any(axis=1).mean()
        out[I2T, "caption recall@k"][i] = (i_hits.sum(axis=1) / sizes[inverse]).mean()
    return out


def shuffled_control(
    result: CaptionRetrieval, seed: int = 0, n_permutations: int = 1000, representation: str | None = None
) -> pd.DataFrame:
    """The shuffled-correspondence control: vectors and rankings stay fixed, the image–caption
    correspondence is reassigned by a seeded permutation of the groups (:func:`shuffle_groups`).

    Per direction and metric: the real value, the value under the seeded permutation
    ``seed``, its exact chance level (:func:`chance_levels`) and the central 95% range over
    ``n_permutations`` further seeded permutations (how far one shuffle strays from
    chance). Fractions; for the given representation (default: native).

    Examples
    --------
    >>> images = np.array([[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    >>> group = np.array([0, 0, 1, 1, 2, 2])  # two captions per image, each a copy of its image
    >>> result = evaluate(images, images[group], images[group], group, dims=(2,), k=2)
    >>> control = shuffled_control(result, n_permutations=50)
    >>> control.columns.tolist()
    ['direction', 'metric', 'real', 'shuffled', 'chance', 'permutation low', 'permutation high']
    >>> control[["metric", "real", "shuffled", "chance"]].round(4).values.tolist()[:2]  # text→image
    [['Hit@1', 1.0, 0.0, 0.3333], ['Hit@2', 1.0, 0.3333, 0.6667]]
    """
    rep = result.native if representation is None else result[representation]
    n_permutations = check_int(n_permutations, "n_permutations", minimum=1)
    seed = check_int(seed, "seed", minimum=0)
    n, k = result.n_images, result.k
    one = _shuffled_values(rep, result.group, np.random.default_rng(seed).permutation(n)[None, :])
    rng = np.random.default_rng([seed, 1])
    many = _shuffled_values(rep, result.group, np.array([rng.permutation(n) for _ in range(n_permutations)]))
    chance = chance_levels(result, rep.name)
    rows = []
    for direction, metric, attr in METRICS:
        label = _label(metric, k)
        lo, hi = np.quantile(many[direction, metric], [0.025, 0.975])
        rows.append(
            {
                "direction": direction,
                "metric": label,
                "real": rep.ranking(direction).mean(attr),
                "shuffled": float(one[direction, metric][0]),
                "chance": chance[direction, label],
                "permutation low": float(lo),
                "permutation high": float(hi),
            }
        )
    return pd.DataFrame(rows)
