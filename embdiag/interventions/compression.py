"""Post-hoc compression of cached vectors: Matryoshka prefix and PCA.

Both are scikit-learn style transformers (``fit`` on training vectors, then
``transform`` any vectors) and return float64 unit rows of ``k`` coordinates, so
cosine scores are plain dot products:

- :class:`MatryoshkaPrefix` keeps the leading ``k`` coordinates and renormalizes
  (the Matryoshka representation-learning prefix). At ``k = d`` it returns the
  normalized native vectors.
- :class:`PCACompression` subtracts the training mean, projects onto the top ``k``
  training principal directions and normalizes. At ``k = d`` (training vectors of full
  rank) it is a rotation of the normalized *centered* vectors, so it preserves their
  cosines (not the raw ones): centring alone changes neighbours. With ``center=False`` nothing is subtracted and the
  directions are those of the uncentred second-moment matrix (a truncated SVD of the raw
  training vectors, as scikit-learn's ``TruncatedSVD``); at ``k = d`` that is a rotation
  of the raw vectors and keeps every cosine.

Principal directions come from the float64 scatter matrix of the training vectors about
their mean (or about the origin), by ``eigh``, ordered by decreasing eigenvalue, each
signed so that its largest-magnitude entry is positive. When the training set has fewer
than ``d`` independent directions, the trailing ones are an arbitrary orthonormal
completion, which :class:`PCACompression` does not use (it zeroes those coordinates).

:func:`compression_grid` measures every method at every dimension with
:func:`~embdiag.metrics.suite.evaluate`, plus the overlap of each representation's
top-k with the native top-k (:func:`overlap_curve`: that overlap alone, over many
dimensions); :func:`centring_effect` isolates what centring alone does at the full
dimension; :func:`variance_spectrum` and :func:`unstandardized_ba` show what a
standardized probe does with principal directions that carry no variance.
:func:`compression_items` gives, per evaluation row, the scores behind the grid's BA and P@k
columns, for intervals that resample the evaluation rows.
"""

from __future__ import annotations

import hashlib
from typing import Mapping

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.exceptions import NotFittedError

from .._blas import single_thread
from .._scaling import unit_rows
from .._validate import as_matrix, check_int, nonzero_rows, squarable
from ..metrics.labels import balanced_accuracy, class_codes, labelled_values
from ..metrics.probe import LinearProbe, fit_probes
from ..metrics.retrieval import overlap_at_k, precision_at_k, topk
from ..metrics.suite import check_inputs, evaluate, frozen_classes

__all__ = [
    "DIMS",
    "METHODS",
    "MatryoshkaPrefix",
    "PCACompression",
    "centring_effect",
    "compression_grid",
    "compression_items",
    "compression_tables",
    "dims_ladder",
    "make_compression",
    "numerical_rank",
    "overlap_curve",
    "principal_axes",
    "study_dims",
    "unstandardized_ba",
    "variance_spectrum",
]

DIMS: tuple[int, ...] = (512, 256, 128)
"""The study's compression targets, declared before any measurement."""

METHODS: tuple[str, ...] = ("MRL", "PCA", "PCA uncentred")
"""Compression methods by name: Matryoshka prefix, PCA (centred, the study's), PCA without centring."""

RANK_TOL = 1e-12
"""Relative variance below which a principal direction counts as empty (float64 rounding of unit rows)."""


_AXES_CACHE: dict = {}


def principal_axes(X, center: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, principal directions and variances of the rows of ``X``.

    Returns ``(mean, components, variances)``: ``mean`` (d,), ``components`` (d, d)
    with orthonormal rows in decreasing order of variance, and the covariance
    eigenvalues ``variances`` (d,, ddof=1, clipped at 0). Needs at least 2 rows.
    With ``center=False`` the mean is taken as zero: the directions and eigenvalues
    are those of ``X.T @ X / (n - 1)`` (second moments about the origin, the right
    singular vectors of ``X``). The last two results are memoized by content (BLAKE2b of
    the bytes, shape, dtype, ``center``: a cryptographic digest, so another array never
    gets this one's result, as it could with a checksum), so fitting a severity grid or
    several ``k`` on one training set decomposes it once; the returned arrays are read-only.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    >>> mean, components, variances = principal_axes(X)
    >>> np.round(variances, 4), np.abs(components).argmax(axis=1)  # the second axis varies most
    (array([2.6667, 0.6667]), array([1, 0]))
    """
    if not isinstance(center, (bool, np.bool_)):
        raise ValueError(f"center: expected True or False, got {center!r}")
    X = as_matrix(X, "X", min_rows=2)
    squarable(X, "X", " (principal directions do not depend on a common factor)")
    key = (X.shape, X.dtype.str, hashlib.blake2b(np.ascontiguousarray(X).view(np.uint8)).digest(), bool(center))
    if key not in _AXES_CACHE:
        out = _principal_axes(X, bool(center))
        for a in out:
            a.flags.writeable = False  # (a mutant setting None is equivalent: numpy reads it as False)
        if len(_AXES_CACHE) >= 2:
            _AXES_CACHE.pop(next(iter(_AXES_CACHE)))
        _AXES_CACHE[key] = out
    return _AXES_CACHE[key]


def numerical_rank(variances) -> int:
    """How many of the decreasing ``variances`` exceed :data:`RANK_TOL` times the largest (0
    when the largest is 0): the directions the vectors span, the rest being rounding.

    Examples
    --------
    >>> numerical_rank([4.0, 1.0, 1e-20]), numerical_rank([0.0, 0.0])
    (2, 0)
    """
    lam = np.asarray(variances, dtype=np.float64)
    return int(np.sum(lam > RANK_TOL * lam[0])) if lam.size and lam[0] > 0 else 0


def _principal_axes(X: np.ndarray, center: bool = True):
    # always called with an explicit ``center``: a mutant of its default is equivalent
    n, d = X.shape
    mean = X.mean(axis=0, dtype=np.float64) if center else np.zeros(d)
    Xc = X.astype(np.float64) - mean  # astype(None) is astype(float64): that mutant is equivalent
    scatter = Xc.T @ Xc
    with single_thread():  # a d x d eigh is faster and steadier on one BLAS thread
        lam, V = np.linalg.eigh(scatter)
    lam, V = lam[::-1], V[:, ::-1].T
    # deterministic sign: largest-magnitude entry of each direction is positive
    pivot = np.abs(V).argmax(axis=1)
    V *= np.sign(V[np.arange(d), pivot])[:, None]  # signs are +-1 (never 0): a mutant's `/=` is equivalent
    return mean, np.ascontiguousarray(V), np.clip(lam, 0.0, None) / (n - 1)


def _unit_rows(Z: np.ndarray, name: str) -> np.ndarray:
    nonzero_rows(Z, name)
    return unit_rows(Z)


class _Fitted(TransformerMixin, BaseEstimator):
    """Shared fit-state and input checks for the transformers of this package."""

    def _check_fitted(self):
        if not hasattr(self, "n_features_in_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit first")

    def _check_input(self, X, name: str = "X") -> np.ndarray:
        self._check_fitted()
        X = as_matrix(X, name)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"{name}: expected {self.n_features_in_} columns (as in fit), got {X.shape[1]}")
        return X


class MatryoshkaPrefix(_Fitted):
    """Keep the leading ``k`` coordinates and renormalize each row to unit length.

    ``fit`` only records the dimension ``d`` (``k > d`` raises ``ValueError``);
    ``transform`` returns float64 unit rows of length ``k``. A row whose prefix is
    all zero raises ``ValueError`` (its direction is undefined).

    Examples
    --------
    >>> prefix = MatryoshkaPrefix(2).fit(np.ones((1, 3)))
    >>> np.round(prefix.transform([[3.0, 4.0, 12.0]]), 4)
    array([[0.6, 0.8]])
    """

    def __init__(self, k: int):
        self.k = k

    def fit(self, X, y=None):
        k = check_int(self.k, "k", minimum=1)
        X = as_matrix(X, "X")
        if k > X.shape[1]:
            raise ValueError(f"k: must be at most the dimension d = {X.shape[1]}, got {k}")
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X) -> np.ndarray:
        X = self._check_input(X)
        # astype(None) is astype(float64): that mutant is equivalent
        return _unit_rows(X[:, : self.k].astype(np.float64), f"X[:, :{self.k}]")


class PCACompression(_Fitted):
    """Project onto the top ``k`` principal directions of the training vectors, normalize.

    ``transform(X) = normalize((X - mean_) @ components_.T)`` with ``mean_`` and the
    ``k`` directions ``components_`` (k x d) fitted on the training vectors only.
    ``center=False`` fixes ``mean_`` at zero and takes the directions of the uncentred
    second-moment matrix (see :func:`principal_axes`): at ``k = d`` it is then a
    rotation of the normalized raw vectors, which keeps every cosine, whereas the
    centred projection keeps the cosines of the *centred* vectors. Directions beyond the
    training vectors' numerical rank (:func:`numerical_rank`) carry rounding alone, which
    differs between machines' float paths; their rows of ``components_`` are zero, so those
    coordinates are exactly 0 and no probe scales noise up. Fitted attributes: ``mean_``,
    ``components_``, ``explained_variance_`` (k,: eigenvalues of the scatter about ``mean_``
    over ``n - 1``, 0 beyond the rank), ``rank_``, ``n_features_in_``. ``k > d`` raises
    ``ValueError``; so does a row that projects to zero.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(20, 5))
    >>> pca = PCACompression(2).fit(X)
    >>> pca.components_.shape, pca.rank_, pca.transform(X).shape
    ((2, 5), 5, (20, 2))
    >>> np.allclose(np.linalg.norm(pca.transform(X), axis=1), 1.0)  # unit rows
    True
    """

    def __init__(self, k: int, center: bool = True):
        self.k = k
        self.center = center

    def fit(self, X, y=None):
        k = check_int(self.k, "k", minimum=1)
        if not isinstance(self.center, (bool, np.bool_)):
            raise ValueError(f"center: expected True or False, got {self.center!r}")
        # principal_axes checks min_rows=2 again under the same name: dropping it here is equivalent
        X = as_matrix(X, "X", min_rows=2)
        if k > X.shape[1]:
            raise ValueError(f"k: must be at most the dimension d = {X.shape[1]}, got {k}")
        mean, V, lam = principal_axes(X, center=bool(self.center))
        self.rank_ = numerical_rank(lam)
        self.mean_, self.components_, self.explained_variance_ = mean.copy(), V[:k].copy(), lam[:k].copy()
        self.components_[self.rank_ :] = 0.0  # rounding-noise directions: their coordinates are zero
        self.explained_variance_[self.rank_ :] = 0.0
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X) -> np.ndarray:
        X = self._check_input(X)  # astype(None) below is astype(float64): that mutant is equivalent
        return _unit_rows((X.astype(np.float64) - self.mean_) @ self.components_.T, "X (projected)")


def make_compression(method: str, k: int) -> _Fitted:
    """The unfitted transformer of one of :data:`METHODS` at dimension ``k``.

    Examples
    --------
    >>> make_compression("MRL", 128), make_compression("PCA", 128), make_compression("PCA uncentred", 128)
    (MatryoshkaPrefix(k=128), PCACompression(k=128), PCACompression(center=False, k=128))
    """
    if method == "MRL":
        return MatryoshkaPrefix(k)
    if method in ("PCA", "PCA uncentred"):
        return PCACompression(k, center=method == "PCA")
    raise ValueError(f"method: expected one of {METHODS}, got {method!r}")


def study_dims(d: int, shares=(2 / 3, 1 / 3, 1 / 6)) -> list[int]:
    """The study's compressed dimensions in proportion to ``d``: ``round(share * d)`` of each
    share, at least 1 and below ``d``, distinct, descending (the study's 512, 256, 128 of 768).

    >>> study_dims(768), study_dims(384), study_dims(768, shares=(1 / 3, 1 / 6))
    ([512, 256, 128], [256, 128, 64], [256, 128])
    >>> study_dims(4)
    [3, 1]
    """
    d = check_int(d, "d", minimum=2)
    return sorted({min(max(1, round(s * d)), d - 1) for s in shares}, reverse=True)


def dims_ladder(d: int, dims=DIMS, smallest: int = 8) -> list[int]:
    """``d`` and its halvings down to ``smallest``, with ``dims`` (those at most ``d``), descending.

    The dimensions of the overlap curve: dense enough to show where a method starts to
    lose neighbours, and always including the full dimension, where nothing is lost.

    Examples
    --------
    >>> dims_ladder(768)
    [768, 512, 384, 256, 192, 128, 96, 48, 24, 12]
    >>> dims_ladder(64, dims=(32, 20))
    [64, 32, 20, 16, 8]
    """
    d = check_int(d, "d", minimum=1)
    smallest = check_int(smallest, "smallest", minimum=1)
    ladder = {d >> j for j in range(d.bit_length()) if d >> j >= smallest} | {d}
    dims = [check_int(k, "dims", minimum=1) for k in dims]  # every entry checked, then those above d dropped
    return sorted(ladder | {k for k in dims if k <= d}, reverse=True)  # (k < d: d is on the ladder; equivalent)


def _neighbors(Z: np.ndarray, k: int) -> np.ndarray:
    # exact float64 search (a float32 one reorders near-ties)
    return topk(Z, Z, k, exclude_self=True, dtype=np.float64)[1]


def compression_grid(
    train,
    train_labels: Mapping[str, np.ndarray],
    val,
    val_labels: Mapping[str, np.ndarray],
    *,
    dims=DIMS,
    methods=METHODS,
    k: int = 10,
    probes: bool = True,
) -> pd.DataFrame:
    """:func:`~embdiag.metrics.suite.evaluate` for the native vectors and every method x dimension.

    Each compression is fitted on ``train`` only and applied to ``train`` (for the probes)
    and ``val`` (measured). Returns one row per representation, native first, then by
    dimension (as given) and method: ``representation`` (e.g. ``"PCA 128"``), ``method``
    (``"native"`` or one of ``methods``), ``dim``, the metric columns of ``evaluate`` and
    ``overlap@{k}`` (mean share of each query's native top-k kept) and ``changed@{k}``
    (share of queries whose top-k set changed). Eligible classes are frozen once, from
    ``val_labels``. The native row is the vectors as given (not renormalized).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([0, 1], 30)
    >>> X = rng.normal(size=(60, 6)) + 4 * y[:, None]  # class 1 shifted by 4 in every feature
    >>> table = compression_grid(X[:30], {"a": y[:30]}, X[30:], {"a": y[30:]}, dims=[3], k=3, probes=False)
    >>> table.representation.tolist(), float(table["overlap@3"][0]), float(table["changed@3"][0])
    (['native 6', 'MRL 3', 'PCA 3', 'PCA uncentred 3'], 1.0, 0.0)
    """
    return _tables(train, train_labels, val, val_labels, dims, k, probes, grid_methods=methods)[0]


def compression_items(
    train,
    train_labels: Mapping[str, np.ndarray],
    val,
    val_labels: Mapping[str, np.ndarray],
    *,
    dims=DIMS,
    methods=("MRL", "PCA"),
    k: int = 10,
) -> pd.DataFrame:
    """Per evaluation row, the scores behind :func:`compression_grid`'s BA and P@k columns,
    for intervals that resample the evaluation rows (probes and PCA bases stay as fitted).

    One row per evaluation vector; columns ``(representation, column)``: ``("class", a)``,
    the row's position among attribute ``a``'s eligible classes (frozen once from
    ``val_labels``, as in the grid; NaN where the row is not counted), then for the native
    vectors and every method x dimension ``(representation, "{a} BA")``, 1.0 where the probe
    predicts the row's class and 0.0 where not (NaN where not counted), and
    ``(representation, "{a} P@{k}")``, the row's P@k as a query (NaN where undefined). The grid's
    BA is the mean over classes of each class's mean of the first, its P@k the mean of the second.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([0, 1], 30)
    >>> X = rng.normal(size=(60, 6)) + 4 * y[:, None]
    >>> items = compression_items(X[:30], {"a": y[:30]}, X[30:], {"a": y[30:]}, dims=[3], k=3)
    >>> items.shape, list(items.columns.get_level_values(0).unique())
    ((30, 7), ['class', 'native 6', 'MRL 3', 'PCA 3'])
    """
    return _tables(train, train_labels, val, val_labels, dims, k, True, item_methods=methods)[1]


def compression_tables(
    train,
    train_labels: Mapping[str, np.ndarray],
    val,
    val_labels: Mapping[str, np.ndarray],
    *,
    dims=DIMS,
    methods=METHODS,
    item_methods=("MRL", "PCA"),
    k: int = 10,
    progress=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(compression_grid(..., methods=methods), compression_items(..., methods=item_methods))``
    of the same arguments, measured in one pass: each representation's probes are fitted once
    and its evaluation rows searched once for both tables. ``progress``, given, is called with
    each representation's name once it is measured.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([0, 1], 30)
    >>> X = rng.normal(size=(60, 6)) + 4 * y[:, None]
    >>> args = X[:30], {"a": y[:30]}, X[30:], {"a": y[30:]}
    >>> grid, items = compression_tables(*args, dims=[3], k=3)
    >>> grid.equals(compression_grid(*args, dims=[3], k=3)), items.equals(compression_items(*args, dims=[3], k=3))
    (True, True)
    """
    return _tables(
        train,
        train_labels,
        val,
        val_labels,
        dims,
        k,
        True,
        grid_methods=methods,
        item_methods=item_methods,
        progress=progress,
    )


def _tables(
    train, train_labels, val, val_labels, dims, k, probes, *, grid_methods=None, item_methods=None, progress=None
):
    """The grid's rows of ``grid_methods`` and the items' columns of ``item_methods`` (an empty
    table for None) from one pass over the representations of both (native first)."""
    train, val = _pair(train, val)
    dims = _check_dims(dims, train.shape[1])
    methods = tuple(dict.fromkeys((*(grid_methods or ()), *(item_methods or ()))))
    for m in methods:
        make_compression(m, 1)  # raises on an unknown name (k is not read until fit: mutants of 1 are equivalent)
    check_inputs(train, train_labels, val, val_labels, probes=probes or item_methods is not None)
    classes = frozen_classes(val_labels)
    codes = {a: class_codes(y, classes[a]) for a, y in val_labels.items()} if item_methods is not None else {}
    labels = {a: train_labels[a] for a in val_labels}
    rows, columns, native = [], {("class", a): c for a, c in codes.items()}, None
    for method, dim, Ztr, Zva in _representations(train, val, dims, methods):
        in_grid = grid_methods is not None and (method == "native" or method in grid_methods)
        in_items = item_methods is not None and (method == "native" or method in item_methods)
        fitted = fit_probes(Ztr, labels) if (probes and in_grid) or in_items else None
        nb = _neighbors(Zva, k)  # one exact search per representation, for P@k and overlap@k
        native = nb if native is None else native
        if in_grid:
            row = evaluate(
                Ztr, train_labels, Zva, val_labels, k=k, classes=classes, probes=probes, neighbors=nb, fitted=fitted
            )
            overlap = overlap_at_k(native, nb, per_query=True)
            rows.append(
                {
                    "representation": f"{method} {dim}",
                    "method": method,
                    "dim": dim,
                    **row,
                    f"overlap@{k}": float(overlap.mean()),
                    f"changed@{k}": float(np.mean(overlap < 1)),
                }
            )
        if in_items:
            columns.update(_item_columns(f"{method} {dim}", Zva, val_labels, codes, fitted, nb, k))
        if progress is not None:
            progress(f"{method} {dim}")
    return pd.DataFrame(rows), pd.DataFrame(columns if item_methods is not None else {})


def _item_columns(rep: str, Zva, val_labels, codes, fitted, nb, k: int) -> dict:
    """:func:`compression_items`' columns of one representation."""
    columns = {}
    for a, y in val_labels.items():
        values, keep = labelled_values(y)
        hit = np.full(len(Zva), np.nan)
        hit[keep] = fitted[a].predict(Zva)[keep] == values
        hit[np.isnan(codes[a])] = np.nan
        columns[(rep, f"{a} BA")] = hit
    for a, y in val_labels.items():
        columns[(rep, f"{a} P@{k}")] = precision_at_k(nb, y, per_query=True)
    return columns


def overlap_curve(train, val, *, dims, methods=METHODS, k: int = 10) -> pd.DataFrame:
    """Overlap@k of each method's top-k with the native top-k at every dimension in ``dims``
    (no probes, no other metric): columns ``representation``, ``method``, ``dim``, ``overlap@{k}``.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(60, 6))
    >>> curve = overlap_curve(X[:30], X[30:], dims=[6, 3], methods=["MRL"], k=3)
    >>> curve.representation.tolist(), float(curve["overlap@3"][0])  # the full prefix keeps every neighbour
    (['MRL 6', 'MRL 3'], 1.0)
    """
    train, val = _pair(train, val)
    dims = _check_dims(dims, train.shape[1])
    native = _neighbors(val, k)
    rows = [
        {
            "representation": f"{m} {d}",
            "method": m,
            "dim": d,
            f"overlap@{k}": float(overlap_at_k(native, _neighbors(Zva, k))),
        }
        for m, d, _, Zva in list(_representations(train, val, dims, methods))[1:]
    ]
    return pd.DataFrame(rows)


def variance_spectrum(train, dims, *, center: bool = True) -> pd.DataFrame:
    """How much of the training variance the top principal directions carry, per ``dim``:
    ``share`` (sum of the top ``dim`` eigenvalues over their total) and ``weakest`` (the
    ``dim``-th eigenvalue over the first: what a standardized probe scales up to unit variance).
    ``attrs["rank"]``: the number of directions whose variance exceeds :data:`RANK_TOL` times the
    largest (the numerical rank of the training vectors); ``attrs["weakest spanned"]``: the
    variance of the last of them over the first.

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    >>> spectrum = variance_spectrum(X, dims=[1, 2])
    >>> spectrum.round(4).to_dict("list"), spectrum.attrs["rank"]
    ({'dim': [1, 2], 'share': [0.8, 1.0], 'weakest': [1.0, 0.25]}, 2)
    """
    # principal_axes computes in float64 from either float dtype: mutants dropping dtype are equivalent
    train = as_matrix(train, "train", min_rows=2, dtype=np.float64)
    dims = _check_dims(dims, train.shape[1])
    lam = principal_axes(train, center=center)[2]
    total = lam.sum()
    if not total > 0:
        raise ValueError(
            "train: has no variance (every row the same"
            + (" after centring" if center else "")
            + "); variance shares are undefined"
        )
    out = pd.DataFrame(
        {
            "dim": dims,
            "share": [float(lam[:d].sum() / total) for d in dims],
            "weakest": [float(lam[d - 1] / lam[0]) for d in dims],
        }
    )
    out.attrs["rank"] = rank = numerical_rank(lam)
    out.attrs["weakest spanned"] = float(lam[rank - 1] / lam[0])
    return out


def unstandardized_ba(
    train,
    train_labels: Mapping[str, np.ndarray],
    val,
    val_labels: Mapping[str, np.ndarray],
    *,
    method: str,
    dim: int,
    attribute: str,
) -> float:
    """Balanced accuracy of a probe *without* feature standardization on one compression (one fit),
    eligible classes frozen from ``val_labels`` as in :func:`compression_grid`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([0, 1], 30)
    >>> X = rng.normal(size=(60, 6)) + 4 * y[:, None]  # class 1 shifted by 4 in every feature
    >>> ba = unstandardized_ba(X[:30], {"a": y[:30]}, X[30:], {"a": y[30:]}, method="PCA", dim=2, attribute="a")
    >>> round(ba, 4)
    1.0
    """
    train, val = _pair(train, val)
    change = make_compression(method, _check_dims([dim], train.shape[1])[0]).fit(train)
    if attribute not in val_labels:
        raise ValueError(f"attribute: expected one of {list(val_labels)}, got {attribute!r}")
    probe = LinearProbe(standardize=False).fit(change.transform(train), train_labels[attribute])
    classes = frozen_classes(val_labels)[attribute]
    return balanced_accuracy(val_labels[attribute], probe.predict(change.transform(val)), classes)


def _pair(train, val):
    train, val = as_matrix(train, "train", dtype=np.float64), as_matrix(val, "val", dtype=np.float64)
    if train.shape[1] != val.shape[1]:
        raise ValueError(f"val: has {val.shape[1]} columns, train has {train.shape[1]}")
    return train, val


def _check_dims(dims, d: int) -> list[int]:
    dims = [check_int(x, "dims", minimum=1) for x in dims]
    too_big = [x for x in dims if x > d]
    if too_big:
        raise ValueError(f"dims: must be at most the dimension d = {d}, got {too_big}")
    return dims


def _representations(train, val, dims, methods):
    yield "native", train.shape[1], train, val
    for dim in dims:
        for method in methods:
            change = make_compression(method, dim).fit(train)
            yield method, dim, change.transform(train), change.transform(val)


def centring_effect(train, val, val_labels: Mapping[str, np.ndarray], *, k: int = 10) -> pd.DataFrame:
    """What centring alone does to neighbours, at the full dimension (nothing projected away).

    Rows: the native vectors; PCA uncentred at ``k = d`` (a rotation); PCA at ``k = d``
    (centred); and the native vectors minus the training mean, scored by cosine (no
    projection). Columns: ``representation``, ``overlap@{k}`` and ``changed@{k}`` against
    the native top-k, ``overlap@{k} with centred cosine`` (against the last row's top-k),
    ``max |Δ cosine|`` (largest change of any pairwise cosine of ``val`` from the native
    one) and ``{a} P@{k}`` per attribute.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = np.tile([0, 1], 30)
    >>> X = rng.normal(size=(60, 6)) + 4 * y[:, None]  # class 1 shifted by 4 in every feature
    >>> effect = centring_effect(X[:30], X[30:], {"a": y[30:]}, k=3)
    >>> effect.representation.tolist()
    ['native', 'PCA uncentred 6', 'PCA 6', 'native minus training mean']
    >>> effect["overlap@3 with centred cosine"].tolist()[2:]  # centred PCA at k = d ranks as centred cosine
    [1.0, 1.0]
    """
    train, val = _pair(train, val)
    d = train.shape[1]
    unit = _unit_rows(val, "val")
    reps = {
        "native": unit,
        f"PCA uncentred {d}": PCACompression(d, center=False).fit(train).transform(val),
        f"PCA {d}": PCACompression(d).fit(train).transform(val),
        # unreachable message: a row equal to the training mean already made "PCA d" raise (mutants of
        # the name are equivalent)
        "native minus training mean": _unit_rows(val - train.mean(axis=0), "val - mean"),
    }
    neighbors = {name: _neighbors(Z, k) for name, Z in reps.items()}
    base, centred = neighbors["native"], neighbors["native minus training mean"]
    cos = unit @ unit.T
    rows = []
    for name, Z in reps.items():
        overlap = overlap_at_k(base, neighbors[name], per_query=True)
        row = {
            "representation": name,
            f"overlap@{k}": float(overlap.mean()),
            f"changed@{k}": float(np.mean(overlap < 1)),
            f"overlap@{k} with centred cosine": float(overlap_at_k(centred, neighbors[name])),
            "max |Δ cosine|": float(np.abs(Z @ Z.T - cos).max()),
        }
        row.update({f"{a} P@{k}": precision_at_k(neighbors[name], y) for a, y in val_labels.items()})
        rows.append(row)
    return pd.DataFrame(rows)
