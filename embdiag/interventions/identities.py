"""Why the stress tests' responses are exact: each identity predicted by formula, then measured.

The four stress interventions (:mod:`embdiag.interventions.stress`) are simple maps, so
several of their effects follow from algebra alone, whatever the vectors:

- contraction by ``c = 1 - s``: total variance times ``c**2``; mean cosine, RankMe (its
  spectrum is normalised), PR and the cosine top-k unchanged;
- common offset: the centred covariance, hence total variance and PR, unchanged;
- rank restriction to the top ``m`` training directions: on the training rows, total
  variance is the sum of the ``m`` kept eigenvalues and PR is the PR of those eigenvalues;
- noise: total variance grows by the noise variance *in expectation* (not exactly).

:func:`exact_responses` states each identity's predicted value beside the value measured
on given vectors, so a reader sees the identity hold to rounding on their own data.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validate import as_matrix
from ..metrics.geometry import mean_cosine, participation_ratio, rankme, total_variance
from ..metrics.retrieval import overlap_at_k, topk
from .stress import CommonOffset, Contraction, Noise, RankRestriction, check_severity

__all__ = ["exact_responses", "HEADLINE_SEVERITIES"]

HEADLINE_SEVERITIES: tuple[float, ...] = (0.5, 0.9, 0.99)


def _pr_of(eigenvalues: np.ndarray) -> float:
    return float(eigenvalues.sum() ** 2 / np.sum(eigenvalues**2))


def exact_responses(train, val, severities=HEADLINE_SEVERITIES, *, k: int = 10, seed: int = 0) -> pd.DataFrame:
    """One row per (intervention, severity, identity): ``predicted``, ``measured``, ``relative error``, ``kind``.

    ``kind`` is ``exact`` (algebra: equal up to floating-point rounding) or ``in
    expectation`` (noise: equal on average over draws). Interventions are fitted on
    ``train``; identities are measured on ``val`` except the rank restriction's, which
    hold on the training rows the directions were fitted on.

    Examples
    --------
    >>> X = np.random.default_rng(0).normal(size=(40, 5))
    >>> table = exact_responses(X[:20], X[20:], severities=[0.5], k=3)
    >>> table.columns.tolist()
    ['intervention', 'severity', 'identity', 'predicted', 'measured', 'relative error', 'kind']
    >>> table.intervention.unique().tolist()
    ['contraction', 'common offset', 'rank restriction', 'noise']
    >>> table.identity[0], round(float(table.measured[0] / total_variance(X[20:])), 12)  # (1 - 0.5)² = 0.25
    ('total variance = (1 - s)² × native', 0.25)
    >>> bool((table[table.kind == "exact"]["relative error"] < 1e-12).all())  # exact: equal to rounding
    True
    >>> table.kind.tolist()[-1]  # noise: equal only on average over draws
    'in expectation'
    """
    train = as_matrix(train, "train", dtype=np.float64)
    val = as_matrix(val, "val", dtype=np.float64)
    if train.shape[1] != val.shape[1]:
        raise ValueError(f"val: has {val.shape[1]} columns, train has {train.shape[1]}")
    severities = [check_severity(s) for s in severities]
    var0, pr0, rm0, cos0 = total_variance(val), participation_ratio(val), rankme(val), mean_cosine(val)
    _, native = topk(val, val, k, exclude_self=True, dtype=np.float64)
    rows = []

    def add(name, s, identity, predicted, measured, kind="exact"):
        rel = abs(measured - predicted) / abs(predicted) if predicted else abs(measured)
        rows.append(
            {
                "intervention": name,
                "severity": s,
                "identity": identity,
                "predicted": float(predicted),
                "measured": float(measured),
                "relative error": float(rel),
                "kind": kind,
            }
        )

    for s in severities:
        c = Contraction(s).fit(train).transform(val)
        add("contraction", s, "total variance = (1 - s)² × native", (1 - s) ** 2 * var0, total_variance(c))
        add("contraction", s, "mean cosine unchanged", cos0, mean_cosine(c))
        add("contraction", s, "RankMe unchanged", rm0, rankme(c))
        add("contraction", s, "PR unchanged", pr0, participation_ratio(c))
        _, nb = topk(c, c, k, exclude_self=True, dtype=np.float64)
        add("contraction", s, f"top-{k} neighbours unchanged (overlap@{k})", 1.0, overlap_at_k(native, nb))
        o = CommonOffset(s, seed=seed).fit(train).transform(val)
        add("common offset", s, "total variance unchanged", var0, total_variance(o))
        add("common offset", s, "PR unchanged", pr0, participation_ratio(o))
        r = RankRestriction(s).fit(train)
        kept = r.explained_variance_
        tr = r.transform(train)
        add(
            "rank restriction",
            s,
            f"training variance = sum of the {r.n_components_} kept eigenvalues",
            kept.sum(),
            total_variance(tr),
        )
        add(
            "rank restriction",
            s,
            f"training PR = PR of the {r.n_components_} kept eigenvalues",
            _pr_of(kept),
            participation_ratio(tr),
        )
        n = Noise(s, seed=seed).fit(train)
        add(
            "noise",
            s,
            "total variance = native + noise variance",
            var0 + n.noise_variance_,
            total_variance(n.transform(val)),
            kind="in expectation",
        )
    return pd.DataFrame(rows)
