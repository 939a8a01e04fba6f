"""Input checks shared by every public function.

Each check raises ``ValueError`` whose message names the argument and the problem, and
returns the value in the form the caller uses (arrays as a floating dtype of at least
float32, integers as ``int``).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np


def as_float(
    x, name: str, *, ndim: int | None = None, min_rows: int = 1, finite: bool = True, dtype=None
) -> np.ndarray:
    """Return ``x`` as a floating array (float16/int upcast to float32).

    Raises ``ValueError`` naming ``name`` for wrong dimensionality, too few rows,
    non-numeric data or non-finite values. Memory-mapped float32/float64 inputs are
    returned without a copy.
    """
    a = np.asarray(x)
    if a.dtype == object or not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
        raise ValueError(f"{name}: expected a numeric array, got dtype {a.dtype}")
    if np.iscomplexobj(a):
        raise ValueError(f"{name}: complex values are not supported")
    if dtype is not None:
        a = a.astype(dtype, copy=False)
    elif a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float32)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array, got shape {a.shape}")
    if a.ndim >= 1 and a.shape[0] < min_rows:
        raise ValueError(f"{name}: needs at least {min_rows} row(s), got {a.shape[0]}")
    if a.size == 0:
        raise ValueError(f"{name}: empty array (shape {a.shape})")
    if finite and not np.isfinite(a).all():
        bad = np.flatnonzero(~np.isfinite(a).reshape(a.shape[0], -1).all(axis=1) if a.ndim else ~np.isfinite(a))
        raise ValueError(f"{name}: contains NaN or infinite values ({bad.size} bad row(s), first at index {bad[0]})")
    return a


def as_matrix(x, name: str, *, min_rows: int = 1, finite: bool = True, dtype=None) -> np.ndarray:
    """:func:`as_float` for an n x d matrix of row vectors."""
    return as_float(x, name, ndim=2, min_rows=min_rows, finite=finite, dtype=dtype)


#: Magnitudes whose squares, summed over up to 2^23 rows, neither overflow nor underflow in float64.
SQUARABLE = (2.0**-500, 2.0**500)


def squarable(X: np.ndarray, name: str, why: str = "") -> None:
    """Raise unless the largest magnitude of the float array ``X`` is 0 or inside
    :data:`SQUARABLE`, where variances (sums of squares) are representable in float64;
    ``why`` is appended to the advice to rescale."""
    amax = float(np.abs(X).max(initial=0.0))
    if not (amax == 0 or SQUARABLE[0] <= amax <= SQUARABLE[1]):
        raise ValueError(
            f"{name}: largest magnitude {amax:.3g} is outside [2^-500, 2^500], where variances "
            f"(sums of squares) are representable in float64; rescale the vectors{why}"
        )


def same_length(**arrays) -> int:
    """Check that all named arrays have the same first dimension; return it."""
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"length mismatch: {desc}")
    return next(iter(lengths.values()))


def nonzero_rows(Z: np.ndarray, name: str) -> None:
    """Raise if any row of ``Z`` is all zeros (cosine undefined). Tested on the entries, not on
    a squared norm, so a tiny row whose squares underflow is not mistaken for a zero row."""
    zero = np.flatnonzero(~np.any(Z != 0, axis=1))
    if zero.size:
        raise ValueError(f"{name}: {zero.size} zero-norm row(s) (first at index {zero[0]}); cosine is undefined")


def check_int(value, name: str, *, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` after checking that it is an integer (a bool is not)
    and at least ``minimum`` (when given)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}: expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}: must be at least {minimum}, got {value}")
    return int(value)


def check_bool(value, name: str) -> bool:
    """Return ``value`` as a ``bool`` after checking that it is one (not a truthy string)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return bool(value)


def check_mapping(value, name: str):
    """Return ``value`` after checking that it is a mapping (``{attribute: labels}``)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{name}: expected a mapping of attribute names to labels, got {type(value).__name__}")
    return value


def check_number(value, name: str) -> float:
    """Return ``value`` as a ``float`` after checking that it is a real number (a bool is not)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    return float(value)


def check_k(k, n_candidates: int, name: str = "k", candidates: str = "") -> int:
    """Validate a neighbour count: an integer with 1 <= k < n_candidates (``candidates`` says
    what they are, e.g. ``" gallery rows"``)."""
    k = check_int(k, name, minimum=1)
    if k >= n_candidates:
        raise ValueError(f"{name}: must be smaller than the number of candidates ({n_candidates}{candidates}), got {k}")
    return int(k)


def as_labels(y, name: str = "y") -> np.ndarray:
    """A non-empty 1-D array of labels (any dtype; float labels must be finite)."""
    a = np.asarray(y)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array of labels, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name}: empty array")
    if a.dtype.kind == "f" and not np.isfinite(a).all():
        raise ValueError(f"{name}: contains NaN or infinite labels")
    return a
