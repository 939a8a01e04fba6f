"""Fixtures shared by the report's tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def _write_user_files(folder, n: int, d: int):
    """A user's files in ``folder``: n x d clustered vectors (three clusters), a second
    representation of them (noisy), labels with a split column, and one pair per query."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, n)
    X = (2 * rng.standard_normal((3, d))[y] + rng.standard_normal((n, d))).astype(np.float32)
    np.save(folder / "vectors.npy", X)
    np.save(folder / "other.npy", (X + 0.3 * rng.standard_normal((n, d))).astype(np.float32))
    pd.DataFrame({"cls": [f"c{v}" for v in y], "split": np.where(rng.random(n) < 0.7, "train", "val")}).to_csv(
        folder / "labels.csv", index=False
    )
    pd.DataFrame({"query": np.arange(n), "target": (np.arange(n) + 1) % n}).to_csv(folder / "pairs.csv", index=False)
    return folder


@pytest.fixture(scope="session")
def write_user_files():
    """:func:`_write_user_files`, for module fixtures that make a user's files."""
    return _write_user_files
