"""Hygiene: what is wrong with the reference vectors before anything is measured on them.

Measured (:func:`measure`) right after the exact search, from :mod:`embdiag.metrics.hygiene`:
over every row of VECTORS, exact duplicates, zero rows, abnormal norms (with the norms'
coefficient of variation) and dominant dimensions; from the searched queries' reference scores,
near duplicates (the seeded query sample's nearest other row; with ``--queries``, a seeded
sample of :data:`GALLERY_ROWS` gallery rows searched against the gallery) and distance
concentration (every query of the sample, in closed form), the islands of the k-NN graph of
:data:`ISLAND_ROWS` sampled gallery rows; on at most :data:`IP_QUERIES` of
the sampled queries, whether the inner-product top-k differs from the cosine top-k; with
``--queries``, the shares of queries found in the gallery and out of its distribution. Every threshold is a
module constant, stated on the page. Shown first: one table of findings."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..._mapped import take_rows
from ...metrics import hygiene as hy
from ...metrics.stats import proportion_interval
from ...view import exhibits as exhibit
from ...view.markdown import Markdown
from ..conditions import _sample_rows
from .measured import Section, drop_self, record
from .presentation import section

if TYPE_CHECKING:
    from ..measurement import Plan, Report

NAME = "hygiene"
TITLE = "Hygiene: the vectors before they are measured"
INTRO = (
    "Before anything is compared, the reference vectors themselves: copies of one row, rows with no "
    "direction or an odd length, dimensions that decide every distance, norms that cosine throws "
    "away, distances too alike to rank, and queries from elsewhere. Each finding names what it does "
    "to the numbers further down the page."
)
#: Why the section can be missing (it is always measured).
MISSING = ""
#: What the section establishes and what not (the report's ``scope``).
SCOPE = (
    "Duplicates, zero rows, norms and dimensions over every reference row; near duplicates, distance "
    "concentration, the inner-product top-k and (with --queries) out-of-distribution queries on the "
    "seeded query sample; k-NN graph islands on a sample of gallery rows; it says nothing about any condition."
)

#: Cosine to the nearest other row at or above which two rows are near duplicates: an angle of about
#: 8 degrees, closer than most rows' nearest neighbour in a trained text embedding, and close enough
#: that a storage error of 1% of a row's length can swap the pair for any query.
NEAR_DUPLICATE = 0.99
#: A query whose relative contrast (mean cosine distance over nearest) is below this is concentrated:
#: its nearest row is less than 20% closer than the average row.
CONCENTRATED = 1.25
#: Out of distribution: a query whose nearest gallery cosine is below this quantile of the gallery
#: rows' own nearest-other-row cosine (about this share of in-distribution queries falls below it).
OOD_QUANTILE = 0.01
#: The out-of-distribution share is flagged when its interval lies above this share: twice what
#: in-distribution queries give, leaving room for the sampling error of the threshold itself.
OOD_FLAG = 0.02
#: Gallery rows searched for their nearest other row when the queries are not VECTORS rows.
GALLERY_ROWS = 1_000
#: Sampled queries searched by inner product (the rest of the query sample is not).
IP_QUERIES = 1_000
#: Norms whose largest and smallest agree to this relative tolerance rank alike by inner product and
#: cosine for every query (no search is needed); also the score tolerance of a tie.
TIE = 1e-5
#: Gallery rows whose k-nearest-neighbour graph (among themselves) is split into islands.
ISLAND_ROWS = 2_000
#: Streams of this section's samples (``np.random.default_rng([seed, stream])``).
GALLERY_STREAM, IP_STREAM, ISLAND_STREAM = 4601, 4602, 4603

_METRICS = (
    "exact_duplicates",
    "near_duplicate_share",
    "zero_rows",
    "abnormal_norms",
    "norm_cv",
    "rogue_dimensions",
    "top_dimension_share",
    "ip_cosine_changed",
    "relative_contrast",
    "concentrated_query_share",
    "island_share",
)


def available(self_search: bool) -> dict[str, set[str]]:
    """Each metric the section records -> ``{"reference"}`` (what a ``--fail-if`` rule may name):
    :data:`_METRICS`, and with ``--queries`` ``query_in_gallery_share`` and ``ood_query_share``.

    Example:
        >>> sorted(set(available(False)) - set(available(True)))
        ['ood_query_share', 'query_in_gallery_share']
    """
    names = _METRICS if self_search else _METRICS + ("query_in_gallery_share", "ood_query_share")
    return {name: {"reference"} for name in names}


def _finding(metric, label, value, low, high, count, n, unit, threshold, found, effect, cause, detail=""):
    return {
        "metric": metric,
        "finding": label,
        "value": float(value),
        "low": float(low),
        "high": float(high),
        "count": int(count),
        "n": int(n),
        "unit": unit,
        "threshold": threshold,
        "found": bool(found),
        "detail": detail,
        "effect": effect,
        "cause": cause,
    }


def _share(metric, label, mask, unit, threshold, effect, cause, detail="", *, flag=0.0):
    mask = np.asarray(mask, dtype=bool)
    i = proportion_interval(int(mask.sum()), len(mask))
    found = i.low > flag if flag > 0 else bool(mask.any())
    return _finding(
        metric, label, i.mean, i.low, i.high, mask.sum(), len(mask), unit, threshold, found, effect, cause, detail
    )


def _count(metric, label, count, n, unit, threshold, effect, cause, detail=""):
    return _finding(metric, label, count, np.nan, np.nan, count, n, unit, threshold, count > 0, effect, cause, detail)


def _nearest_in_gallery(plan: Plan, search: Callable) -> np.ndarray:
    """The cosine of each of a seeded sample of gallery rows to its nearest other gallery row."""
    rows = _sample_rows(len(plan.G), GALLERY_ROWS, plan.seed, GALLERY_STREAM)
    S, I = search(take_rows(plan.G, rows), plan.G, 2)
    return drop_self(S, I, rows, 1)[0][:, 0]


def _ip_changed(plan: Plan, nearest: np.ndarray, g_norms: np.ndarray, search: Callable) -> tuple[np.ndarray, bool]:
    """Which of at most :data:`IP_QUERIES` sampled queries have an inner-product top-k that differs
    from their cosine top-k (a member whose cosine lies more than :data:`TIE` below the k-th
    cosine), and whether a search was needed (not when every norm is the same)."""
    pick = plan.sample[_sample_rows(len(plan.sample), IP_QUERIES, plan.seed, IP_STREAM)]
    ok = g_norms[np.isfinite(g_norms) & (g_norms > 0)]
    if ok.max() <= ok.min() * (1 + TIE / 4):  # q.g = |q||g| cos: one norm, one order
        return np.zeros(len(pick), dtype=bool), False
    k = plan.k
    self_pos = None if plan.self_pos is None else plan.self_pos[pick]
    Q = np.asarray(plan.Q[pick])
    _, I = hy.inner_product_topk(Q, plan.G, k + (self_pos is not None), search, g_norms)
    I = drop_self(I, I, self_pos, k)[1]
    Qu = Q.astype(np.float64) / np.linalg.norm(Q.astype(np.float64), axis=1)[:, None]
    members = take_rows(plan.G, I.ravel()).astype(np.float64).reshape(len(Q), k, -1)
    cos = np.einsum("qd,qkd->qk", Qu, members) / np.linalg.norm(members, axis=2)
    return cos.min(axis=1) < nearest[pick, k - 1] - TIE, True


def _islands(plan: Plan, search: Callable) -> np.ndarray:
    """The island of each of a seeded sample of :data:`ISLAND_ROWS` gallery rows in their k-NN graph
    (each row's k nearest other sampled rows; 0 = the largest weakly connected component)."""
    rows = take_rows(plan.G, _sample_rows(len(plan.G), ISLAND_ROWS, plan.seed, ISLAND_STREAM))
    k = min(plan.k, len(rows) - 1)
    S, I = search(rows, rows, k + 1)
    return hy.islands(drop_self(S, I, np.arange(len(rows)), k)[1])


def measure(plan: Plan, nearest: np.ndarray, search: Callable) -> Section:
    """The hygiene findings of the reference rows (``nearest``: each searched query's top cosine
    scores against the gallery, sorted descending, its own row left out; ``search``: ``topk``-like):
    the records (section ``hygiene``, condition ``reference``) and the findings table."""
    start = time.perf_counter()
    V, n, d = plan.V, plan.V.shape[0], plan.V.shape[1]
    norms = hy.row_norms(V)
    first = hy.duplicate_rows(V)
    copies = int((first != np.arange(n)).sum())
    zero = int((norms == 0).sum())
    usable = norms[np.isfinite(norms) & (norms > 0)]
    abnormal = hy.abnormal_norms(norms)
    cv = float(usable.std() / usable.mean()) if len(usable) else float("nan")
    moments = hy.unit_moments(V, norms)
    shares = hy.distance_shares(moments)
    bound = hy.rogue_bound(d)
    rogue = np.flatnonzero(shares > bound)
    full = len(plan.g_idx) == n
    g_moments = moments if full else hy.unit_moments(plan.G)
    g_norms = norms if full else norms[plan.g_idx]
    s = plan.sample
    near_q = np.asarray(nearest[s, 0], dtype=np.float64)
    rows_near = near_q if plan.self_search else _nearest_in_gallery(plan, search)
    rc, spread = hy.contrast(np.asarray(plan.Q[s]), near_q, g_moments, own_rows=plan.self_search)
    med, rc_low, rc_high = hy.median_interval(rc)
    ip, searched = _ip_changed(plan, nearest, g_norms, search)
    queries = "sampled queries"
    gallery = "sampled rows" if plan.self_search else "sampled gallery rows"
    top = int(np.nanargmax(shares)) if np.isfinite(shares).any() else -1
    findings = [
        _count(
            "exact_duplicates",
            "exact duplicates",
            copies,
            n,
            "rows",
            "a row identical to an earlier row (every row compared)",
            "a duplicate pair's members are each other's nearest neighbour and their order among ties is "
            "arbitrary: overlap@k and identity count swaps of identical rows, and a query's copy is a "
            "trivial hit for relevance",
            "the same text embedded twice: repeated records, boilerplate, a join that duplicates rows",
            f"distinct rows with a copy: {len(np.unique(first[first != np.arange(n)])):,}",
        ),
        _share(
            "near_duplicate_share",
            "near duplicates",
            rows_near >= NEAR_DUPLICATE,
            gallery,
            f"cosine to the nearest other row >= {NEAR_DUPLICATE}",
            "near-tied neighbours: a storage error larger than their difference swaps them, so identity "
            "changes include swaps between near copies; they are each other's hubs",
            "near-identical texts (templates, versions, exact duplicates) or duplicated records",
        ),
        _count(
            "zero_rows",
            "zero rows",
            zero,
            n,
            "rows",
            "every coordinate 0 (every row checked)",
            "a zero row has no direction: cosine, unit-row geometry and exact search are undefined on it",
            "failed or empty inputs written as zeros (an empty string, padding, a failed request)",
        ),
        _count(
            "abnormal_norms",
            "abnormal norms",
            int(abnormal.sum()),
            n,
            "rows",
            f"log norm more than {hy.NORM_BOUND} robust SD from the median (SD: 1.4826 MAD, at least "
            f"{hy.NORM_SCALE_FLOOR})",
            "raw-row geometry and storage calibration ranges (int8, fp8 scales) are set by these rows; "
            "an inner-product index ranks them first or last whatever their direction",
            "very short or very long inputs, rows from another model or pipeline, unnormalized rows "
            "mixed with normalized ones",
            f"norms' coefficient of variation {cv:.3g}",
        ),
        _count(
            "rogue_dimensions",
            "dominant dimensions",
            len(rogue),
            d,
            "dimensions",
            f"share of the mean cosine distance > {bound:.3g} ({hy.ROGUE_MULTIPLE:g}/d, at most 1/2)",
            "a few coordinates decide every distance: formats with one scale for all dimensions (binary "
            "signs, a global int8 range) spend their resolution on them, and geometry's effective rank is low",
            "outlier dimensions of the model (Timkey & van Schijndel 2021); standardizing dimensions or "
            "removing the top principal directions counters them",
            f"largest share {shares[top]:.3g} (dimension {top}); even share {1 / d:.3g}" if top >= 0 else "",
        ),
        _share(
            "ip_cosine_changed",
            "inner product differs from cosine",
            ip,
            queries,
            f"a top-{plan.k} member by inner product more than {TIE:g} below the k-th cosine",
            "norms carry ranking information that cosine discards: these cosine neighbours are not what "
            "an inner-product index (FAISS IndexFlatIP, MIPS) returns on the raw rows",
            "norms left unnormalized that vary with the input (length, frequency, confidence)",
            detail=(
                f"inner-product top-{plan.k} searched (rows augmented to a cosine search)"
                if searched
                else "every norm equal: inner product and cosine rank alike for every query"
            ),
        ),
        _share(
            "concentrated_query_share",
            "distance concentration",
            rc < CONCENTRATED,
            queries,
            f"relative contrast (mean cosine distance / nearest) < {CONCENTRATED}",
            "the nearest row is barely closer than an average row: small score errors reorder neighbours "
            "(low overlap@k under lossy conditions, indexes need more probes) and hubness grows",
            "high intrinsic dimension for the gallery's size, or rows sharing one direction",
            f"median relative contrast {med:.3g} [{rc_low:.3g}, {rc_high:.3g}]; median spread / mean of "
            f"the cosine distances {float(np.median(spread)):.3g}",
        ),
    ]
    island = _islands(plan, search)
    findings.append(
        _share(
            "island_share",
            "kNN-graph islands",
            island > 0,
            "sampled gallery rows",
            f"outside the largest weakly connected component of the k = {plan.k} nearest-neighbour graph of "
            f"{len(island):,} sampled gallery rows",
            "separate groups that no neighbour list crosses: graph indexes (HNSW) entered elsewhere may not "
            "reach them, so index recall loss and anti-hubs gather there; shares over all queries mix the groups",
            "several domains, languages or sources in one set; a cluster of templated or duplicated rows",
            f"components: {int(island.max()) + 1:,}",
        )
    )
    if not plan.self_search:
        threshold, ood = hy.below_quantile(near_q, rows_near, OOD_QUANTILE)
        findings += [
            _share(
                "query_in_gallery_share",
                "queries found in the gallery",
                near_q >= NEAR_DUPLICATE,
                queries,
                f"cosine to the nearest gallery row >= {NEAR_DUPLICATE}",
                "such a query finds its own copy first: overlap@k and relevance count an easy hit, and a "
                "pair or judgment of the query with its copy is trivially found",
                "the query set overlaps the gallery (the same texts on both sides, a split that leaks)",
            ),
            _share(
                "ood_query_share",
                "queries out of distribution",
                ood,
                queries,
                f"nearest gallery cosine < {threshold:.3g}, the {100 * OOD_QUANTILE:g}% quantile of "
                f"{len(rows_near):,} gallery rows' nearest-other-row cosine; found when the interval lies "
                f"above {100 * OOD_FLAG:g}%",
                "these queries' neighbours are all far: their top-k is decided by small differences and "
                "shares over all queries mix two populations",
                "queries from another domain, language, model or query pipeline (instruction prefix, "
                "truncation) than the gallery",
                flag=OOD_FLAG,
            ),
        ]
    table = pd.DataFrame(findings)
    rows = [record(NAME, f["metric"], "reference", f["value"], "", f["low"], f["high"]) for f in findings]
    rows.append(record(NAME, "norm_cv", "reference", cv))
    rows.append(record(NAME, "top_dimension_share", "reference", shares[top] if top >= 0 else np.nan))
    rows.append(record(NAME, "relative_contrast", "reference", med, "", rc_low, rc_high))
    order = {m: i for i, m in enumerate(available(plan.self_search))}
    rows.sort(key=lambda r: order[r["metric"]])
    return Section(True, rows, {NAME: table}, timings={"hygiene_s": round(time.perf_counter() - start, 3)})


def _measured(f: pd.Series) -> str:
    if f["unit"] in ("rows", "dimensions"):
        share = f" ({100 * f['count'] / f['n']:.2g}%)" if f["count"] else ""
        return f"{f['count']:,} of {f['n']:,} {f['unit']}{share}"
    return (
        f"{f['count']:,} of {f['n']:,} {f['unit']}: {100 * f['value']:.2f}% "
        f"[{100 * f['low']:.2f}, {100 * f['high']:.2f}]"
    )


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    found = table[table["found"]]
    if found.empty:
        line = "Nothing found at these thresholds."
    else:
        line = (
            f"**Found:** {', '.join(found['finding'])}. Each changes what the sections below measure (see the table)."
        )
    shown = pd.DataFrame(
        {
            "finding": table["finding"],
            "measured": [_measured(f) + (f"; {f['detail']}" if f["detail"] else "") for _, f in table.iterrows()],
            "threshold": table["threshold"],
            "what it does to the report": [f["effect"] if f["found"] else "nothing found" for _, f in table.iterrows()],
            "likely cause": [f["cause"] if f["found"] else "" for _, f in table.iterrows()],
        }
    ).set_index("finding")
    return [
        Markdown(line),
        exhibit.table(
            shown,
            name="report-hygiene",
            **mark,
            caption=(
                "Hygiene of the reference vectors: each finding's count over every row, or its share of the "
                "seeded sample with a 95% Wilson interval; the threshold it is found at; what it does to the "
                "rest of the report and its likely cause (found findings only)."
            ),
        ),
    ]


def exhibits(report: Report, *, timings: bool = False) -> list:
    """The scope sentence, then whether anything was found and the findings table."""
    return section(report, NAME, MISSING, _draw)
