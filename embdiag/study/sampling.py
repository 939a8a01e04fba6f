"""The rows a section measures: every row of each split, or a declared random sample of them.

A section whose protocol fits on training rows and measures evaluation rows (the stress tests,
compression) allows a smaller sample of either split: the protocol is the same, its
estimates rest on fewer rows (the findings' intervals say how much). ``max_rows`` caps each
split: a split of more rows is measured on ``max_rows`` of them, drawn uniformly without
replacement with ``numpy.random.default_rng(seed)`` (the training rows first, then the evaluation
rows) and kept in their order; None keeps every row. The page states the sample
(:meth:`RowSample.note`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .._validate import check_int

__all__ = ["RowSample", "check_max_rows", "sample_rows"]


@dataclass(frozen=True)
class RowSample:
    """Which rows were measured: ``train`` and ``val`` as ``(measured, of)`` counts, the
    ``max_rows`` cap (None: every row) and the ``seed`` of the draw."""

    train: tuple[int, int]
    val: tuple[int, int]
    max_rows: int | None = None
    seed: int = 0

    @property
    def sampled(self) -> bool:
        """Whether either split was measured on a sample of its rows."""
        return self.train[0] < self.train[1] or self.val[0] < self.val[1]

    def describe(self) -> str:
        """The rows measured, sampled or not (for a progress line).

        >>> RowSample((2000, 2000), (983, 983)).describe()
        'every row: 2,000 training and 983 evaluation rows'
        """
        return self.note() or f"every row: {self.train[0]:,} training and {self.val[0]:,} evaluation rows"

    def note(self) -> str:
        """The sample in one sentence for the page ("" when every row is measured).

        >>> print(RowSample((5000, 14905), (5000, 5095), 5000, 0).note())  # doctest: +NORMALIZE_WHITESPACE
        Measured on 5,000 of 14,905 training rows and 5,000 of 5,095 evaluation rows, drawn uniformly
        without replacement with seed 0 (max_rows = 5000; None measures every row).
        """
        if not self.sampled:
            return ""
        return (
            f"Measured on {self.train[0]:,} of {self.train[1]:,} training rows and {self.val[0]:,} of "
            f"{self.val[1]:,} evaluation rows, drawn uniformly without replacement with seed {self.seed} "
            f"(max_rows = {self.max_rows}; None measures every row)."
        )


def check_max_rows(max_rows) -> int | None:
    """``max_rows`` as an integer of at least 2 (a split needs two rows), or None."""
    return None if max_rows is None else check_int(max_rows, "max_rows", minimum=2)


def _draw(rng, n: int, max_rows: int | None) -> np.ndarray | None:
    """Sorted positions of ``max_rows`` of ``n`` rows (None: all of them, nothing drawn)."""
    if max_rows is None or n <= max_rows:
        return None
    return np.sort(rng.choice(n, size=max_rows, replace=False))


def sample_rows(vectors, max_rows, seed: int):
    """``(vectors, RowSample)``: ``vectors`` (a :class:`~embdiag.encoders.vectors.LabelledVectors`)
    with each split cut to at most ``max_rows`` rows (module docstring), and which rows those are.
    ``vectors`` itself is returned when no split is larger than ``max_rows``. Raises ``ValueError``
    naming ``max_rows`` or ``seed`` when either is not a valid integer.

    >>> from embdiag.encoders.vectors import LabelledVectors
    >>> v = LabelledVectors(np.zeros((10, 2)), np.ones((4, 2)), {"a": np.arange(10)}, {"a": np.arange(4)}, "toy")
    >>> cut, rows = sample_rows(v, 5, 0)
    >>> cut.train.shape, cut.val is v.val, rows.train, rows.val, rows.sampled
    ((5, 2), True, (5, 10), (4, 4), True)
    >>> sample_rows(v, None, 0)[0] is v, sample_rows(v, 10, 0)[1].note()
    (True, '')
    """
    max_rows, seed = check_max_rows(max_rows), check_int(seed, "seed", minimum=0)
    rng, sizes = np.random.default_rng(seed), {"train": len(vectors.train), "val": len(vectors.val)}
    picks = {split: _draw(rng, n, max_rows) for split, n in sizes.items()}  # the training rows first
    counts = {split: (n if picks[split] is None else max_rows, n) for split, n in sizes.items()}
    rows = RowSample(counts["train"], counts["val"], max_rows, seed)
    if not rows.sampled:
        return vectors, rows
    changes = {}
    for split, pick in picks.items():
        if pick is not None:
            changes[split] = getattr(vectors, split)[pick]
            changes[f"{split}_labels"] = {
                a: np.asarray(y)[pick] for a, y in getattr(vectors, f"{split}_labels").items()
            }
    return dataclasses.replace(vectors, **changes), rows
