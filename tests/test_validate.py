"""The shared input checks of :mod:`embdiag._validate`: each error names the argument and the
problem (and, for bad rows, how many and where the first is)."""

import numpy as np
import pytest

from embdiag._validate import as_float, as_matrix, check_int, nonzero_rows, same_length


@pytest.mark.parametrize(
    "bad, count, first",
    [
        (np.array([1.0, np.nan, np.inf]), 2, 1),
        (np.array([[1.0, 2.0], [3.0, 4.0], [np.inf, 0.0], [0.0, np.nan]]), 2, 2),
        (np.array([[[0.0, np.nan]], [[1.0, 1.0]]]), 1, 0),
    ],
)
def test_nonfinite_rows_are_counted_and_the_first_is_named(bad, count, first):
    with pytest.raises(
        ValueError,
        match=rf"^X: contains NaN or infinite values \({count} bad row\(s\), "
        rf"first at index {first}\)$",
    ):
        as_float(bad, "X")
    assert np.isnan(as_float(bad, "X", finite=False)).any() or np.isinf(as_float(bad, "X", finite=False)).any()


@pytest.mark.parametrize(
    "x, message",
    [
        (np.array(["a", "b"]), r"^v: expected a numeric array, got dtype <U1$"),
        (np.array([1 + 1j]), r"^v: complex values are not supported$"),
        (np.zeros(3), r"^v: expected a 2-D array, got shape \(3,\)$"),
        (np.zeros((0, 3)), r"^v: needs at least 1 row\(s\), got 0$"),
        (np.zeros((2, 0)), r"^v: empty array \(shape \(2, 0\)\)$"),
    ],
)
def test_as_matrix_names_the_problem(x, message):
    with pytest.raises(ValueError, match=message):
        as_matrix(x, "v")


def test_as_float_upcasts_to_float32_and_keeps_float64():
    assert as_float(np.arange(3), "x").dtype == np.float32
    assert as_float(np.ones(2, np.float16), "x").dtype == np.float32
    x = np.ones((2, 2))
    assert as_matrix(x, "x") is x


def test_other_checks():
    with pytest.raises(ValueError, match=r"^Z: 2 zero-norm row\(s\) \(first at index 1\)"):
        nonzero_rows(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]), "Z")
    assert nonzero_rows(np.array([[1e-300, 0.0]]), "Z") is None  # tiny but not zero
    with pytest.raises(ValueError, match=r"^length mismatch: a has 2, b has 3$"):
        same_length(a=np.zeros(2), b=np.zeros(3))
    with pytest.raises(ValueError, match=r"^k: expected an integer, got True$"):
        check_int(True, "k")
    with pytest.raises(ValueError, match=r"^k: must be at least 1, got 0$"):
        check_int(0, "k", minimum=1)
    assert check_int(np.int64(4), "k") == 4
