"""Hygiene: what is wrong with the reference vectors before anything is measured on them.

Measured (:func:`measure`) right after the exact search, from :mod:`embdiag.metrics.hygiene`:
over every row of VECTORS, exact duplicates, zero rows, abnormal norms (with the norms'
coefficient of variation) and dominant dimensions; from the searched queries' reference scores,
near duplicates (the seeded query sample's nearest other row; with ``--queries``, a seeded
sample of :data:`GALLERY_ROWS` gallery rows searched against the gallery) and distance
concentration (every query of the sample, in closed form), the islands of the k-NN graph of
:data:`ISLAND_ROWS` sampled gallery rows; on at most :data:`IP_QUERIES` of
the sampled queries, whether the inner-product top-k differs from the cosine top-k; with
``--queries``, the shares of queries found in the gallery and out of its distribution. Every
threshold is a module constant, stated on the page. The findings table holds numbers only (what
``embdiag verify`` compares within a tolerance); its words are :data:`WORDS`. Shown first: one
table of findings."""

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
    "The reference vectors themselves, before anything is compared: duplicates, odd norms, dominant "
    "dimensions, distances too alike to rank. Each finding says what it does to the numbers below."
)
#: Why the section can be missing (it is always measured).
MISSING = ""
#: What the section establishes and what not (the report's ``scope``).
SCOPE = "Every reference row, or a seeded sample where a finding says so; nothing about any condition."

#: Cosine to the nearest other row at or above which two rows are near duplicates: an angle of about
#: 8 degrees; the two unit rows differ by sqrt(2 (1 - 0.99)) = 0.14, so their cosines with a query
#: differ by at most that and typically by 0.14 / sqrt(d) (0.009 at d = 256), the order of a lossy
#: storage format's score error: such a pair is one row twice for the report's rankings.
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

#: The metrics recorded with a 95% interval (``low``, ``high``): the shares (Wilson) and the median
#: relative contrast (binomial order statistics); the others are counts or values over every row.
WITH_INTERVAL = frozenset(
    {
        "near_duplicate_share",
        "ip_cosine_changed",
        "concentrated_query_share",
        "island_share",
        "query_in_gallery_share",
        "ood_query_share",
        "relative_contrast",
    }
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


#: Each finding's name on the page, what it does to the rest of the report, and its likely cause.
WORDS = {
    "exact_duplicates": (
        "exact duplicates",
        "a duplicate pair's members are each other's nearest neighbour and their order among ties is "
        "arbitrary: overlap@k and identity count swaps of identical rows, and a query's copy is a trivial "
        "hit for relevance",
        "the same text embedded twice: repeated records, boilerplate, a join that duplicates rows",
    ),
    "near_duplicate_share": (
        "near duplicates",
        "near-tied neighbours: a storage error larger than their difference swaps them, so identity changes "
        "include swaps between near copies; they are each other's hubs",
        "near-identical texts (templates, versions, exact duplicates) or duplicated records",
    ),
    "zero_rows": (
        "zero rows",
        "a zero row has no direction: cosine, unit-row geometry and exact search are undefined on it",
        "failed or empty inputs written as zeros (an empty string, padding, a failed request)",
    ),
    "abnormal_norms": (
        "abnormal norms",
        "raw-row geometry and storage calibration ranges (int8, fp8 scales) are set by these rows; an "
        "inner-product index ranks them first or last whatever their direction",
        "very short or very long inputs, rows from another model or pipeline, unnormalized rows mixed with "
        "normalized ones",
    ),
    "rogue_dimensions": (
        "dominant dimensions",
        "a few coordinates decide every distance: formats with one scale for all dimensions (binary signs, a "
        "global int8 range) spend their resolution on them, and geometry's effective rank is low",
        "outlier dimensions of the model (Timkey & van Schijndel 2021); standardizing dimensions or removing "
        "the top principal directions counters them",
    ),
    "ip_cosine_changed": (
        "inner product differs from cosine",
        "norms carry ranking information that cosine discards: these cosine neighbours are not what an "
        "inner-product index (FAISS IndexFlatIP, MIPS) returns on the raw rows",
        "norms left unnormalized that vary with the input (length, frequency, confidence)",
    ),
    "concentrated_query_share": (
        "distance concentration",
        "the nearest row is barely closer than an average row: small score errors reorder neighbours (low "
        "overlap@k under lossy conditions, indexes need more probes) and hubness grows",
        "high intrinsic dimension for the gallery's size, or rows sharing one direction",
    ),
    "island_share": (
        "kNN-graph islands",
        "separate groups that no neighbour list crosses: graph indexes (HNSW) entered elsewhere may not reach "
        "them, so index recall loss and anti-hubs gather there; shares over all queries mix the groups",
        "several domains, languages or sources in one set; a cluster of templated or duplicated rows",
    ),
    "query_in_gallery_share": (
        "queries found in the gallery",
        "such a query finds its own copy first: overlap@k and relevance count an easy hit, and a pair or "
        "judgment of the query with its copy is trivially found",
        "the query set overlaps the gallery (the same texts on both sides, a split that leaks)",
    ),
    "ood_query_share": (
        "queries out of distribution",
        "these queries' neighbours are all far: their top-k is decided by small differences and shares over "
        "all queries mix two populations",
        "queries from another domain, language, model or query pipeline (instruction prefix, truncation) than "
        "the gallery",
    ),
}

#: The findings table's columns: the finding's metric, its value (a count, or a share with its Wilson
#: interval low-high), count of n units, the cutoff it is found at, whether it is found, and up to
#: three numbers of detail (``aux``, ``aux_low``, ``aux_high``; ``aux2``), each finding's own.
COLUMNS = (
    "metric",
    "value",
    "low",
    "high",
    "count",
    "n",
    "unit",
    "cutoff",
    "found",
    "aux",
    "aux_low",
    "aux_high",
    "aux2",
)


def _finding(
    metric, value, low, high, count, n, unit, cutoff, found, aux=np.nan, aux_low=np.nan, aux_high=np.nan, aux2=np.nan
):
    return dict(
        zip(
            COLUMNS,
            (
                metric,
                float(value),
                float(low),
                float(high),
                int(count),
                int(n),
                unit,
                float(cutoff),
                bool(found),
                float(aux),
                float(aux_low),
                float(aux_high),
                float(aux2),
            ),
        )
    )


def _share(metric, mask, unit, cutoff, *, flag=0.0, **aux):
    mask = np.asarray(mask, dtype=bool)
    i = proportion_interval(int(mask.sum()), len(mask))
    found = i.low > flag if flag > 0 else bool(mask.any())
    return _finding(metric, i.mean, i.low, i.high, mask.sum(), len(mask), unit, cutoff, found, **aux)


def _count(metric, count, n, unit, cutoff, **aux):
    return _finding(metric, count, np.nan, np.nan, count, n, unit, cutoff, count > 0, **aux)


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
    the records (section ``hygiene``, condition ``reference``) and the findings table (:data:`COLUMNS`)."""
    start = time.perf_counter()
    V, n, d = plan.V, plan.V.shape[0], plan.V.shape[1]
    norms = hy.row_norms(V)
    first = hy.duplicate_rows(V)
    copied = first != np.arange(n)
    usable = norms[np.isfinite(norms) & (norms > 0)]
    cv = float(usable.std() / usable.mean()) if len(usable) else float("nan")
    moments = hy.unit_moments(V, norms)
    shares = hy.distance_shares(moments)
    bound = hy.rogue_bound(d)
    top = int(np.nanargmax(shares)) if np.isfinite(shares).any() else -1
    full = len(plan.g_idx) == n
    g_moments = moments if full else hy.unit_moments(plan.G)
    g_norms = norms if full else norms[plan.g_idx]
    s = plan.sample
    near_q = np.asarray(nearest[s, 0], dtype=np.float64)
    rows_near = near_q if plan.self_search else _nearest_in_gallery(plan, search)
    rc, spread = hy.contrast(np.asarray(plan.Q[s]), near_q, g_moments, own_rows=plan.self_search)
    med, rc_low, rc_high = hy.median_interval(rc)
    ip, searched = _ip_changed(plan, nearest, g_norms, search)
    island = _islands(plan, search)
    queries = "sampled queries"
    findings = [
        _count("exact_duplicates", copied.sum(), n, "rows", np.nan, aux=len(np.unique(first[copied]))),
        _share(
            "near_duplicate_share",
            rows_near >= NEAR_DUPLICATE,
            "sampled rows" if plan.self_search else "sampled gallery rows",
            NEAR_DUPLICATE,
        ),
        _count("zero_rows", (norms == 0).sum(), n, "rows", np.nan),
        _count("abnormal_norms", hy.abnormal_norms(norms).sum(), n, "rows", hy.NORM_BOUND, aux=cv),
        _count(
            "rogue_dimensions",
            (shares > bound).sum(),
            d,
            "dimensions",
            bound,
            aux=shares[top] if top >= 0 else np.nan,
            aux2=top,
        ),
        _share("ip_cosine_changed", ip, queries, TIE, aux=searched),
        _share(
            "concentrated_query_share",
            rc < CONCENTRATED,
            queries,
            CONCENTRATED,
            aux=med,
            aux_low=rc_low,
            aux_high=rc_high,
            aux2=float(np.median(spread)),
        ),
        _share("island_share", island > 0, "sampled gallery rows", np.nan, aux=int(island.max()) + 1),
    ]
    if not plan.self_search:
        threshold, ood = hy.below_quantile(near_q, rows_near, OOD_QUANTILE)
        findings.append(_share("query_in_gallery_share", near_q >= NEAR_DUPLICATE, queries, NEAR_DUPLICATE))
        findings.append(_share("ood_query_share", ood, queries, threshold, flag=OOD_FLAG, aux=len(rows_near)))
    table = pd.DataFrame(findings, columns=list(COLUMNS))
    rows = [record(NAME, f["metric"], "reference", f["value"], "", f["low"], f["high"]) for f in findings]
    rows.append(record(NAME, "norm_cv", "reference", cv))
    rows.append(record(NAME, "top_dimension_share", "reference", shares[top] if top >= 0 else np.nan))
    rows.append(record(NAME, "relative_contrast", "reference", med, "", rc_low, rc_high))
    order = {m: i for i, m in enumerate(available(plan.self_search))}
    rows.sort(key=lambda r: order[r["metric"]])
    return Section(True, rows, {NAME: table}, timings={"hygiene_s": round(time.perf_counter() - start, 3)})


def _g(x: float) -> str:
    return f"{x:.3g}"


def _threshold(f: pd.Series, k: int) -> str:
    """The cutoff of finding ``f`` in words."""
    m, c = f["metric"], f["cutoff"]
    if m == "exact_duplicates":
        return "a row identical to an earlier row (every row compared)"
    if m in ("near_duplicate_share", "query_in_gallery_share"):
        return f"cosine to the nearest {'other' if m.startswith('near') else 'gallery'} row >= {_g(c)}"
    if m == "zero_rows":
        return "every coordinate 0 (every row checked)"
    if m == "abnormal_norms":
        return f"log norm more than {_g(c)} robust SD from the median (SD: 1.4826 MAD, at least {hy.NORM_SCALE_FLOOR})"
    if m == "rogue_dimensions":
        return f"share of the mean cosine distance > {_g(c)} ({hy.ROGUE_MULTIPLE:g}/d, at most 1/2)"
    if m == "ip_cosine_changed":
        return f"a top-{k} member by inner product more than {c:g} below the k-th cosine"
    if m == "concentrated_query_share":
        return f"relative contrast (mean cosine distance / nearest) < {_g(c)}"
    if m == "island_share":
        return (
            f"outside the largest weakly connected component of the k = {k} nearest-neighbour graph of "
            f"{f['n']:,} sampled gallery rows"
        )
    return (
        f"nearest gallery cosine < {_g(c)}, the {100 * OOD_QUANTILE:g}% quantile of {int(f['aux']):,} gallery "
        f"rows' nearest-other-row cosine; found when the interval lies above {100 * OOD_FLAG:g}%"
    )


def _detail(f: pd.Series, d: int) -> str:
    """The numbers beside finding ``f``'s count."""
    m = f["metric"]
    if m == "exact_duplicates":
        return f"distinct rows with a copy: {int(f['aux']):,}"
    if m == "abnormal_norms":
        return f"norms' coefficient of variation {_g(f['aux'])}"
    if m == "rogue_dimensions" and np.isfinite(f["aux"]):
        return f"largest share {_g(f['aux'])} (dimension {int(f['aux2'])}); even share {_g(1 / d)}"
    if m == "ip_cosine_changed":
        if f["aux"]:
            return "inner-product top-k searched (rows augmented to a cosine search)"
        return "every norm equal: inner product and cosine rank alike for every query"
    if m == "concentrated_query_share":
        return (
            f"median relative contrast {_g(f['aux'])} [{_g(f['aux_low'])}, {_g(f['aux_high'])}]; median spread / "
            f"mean of the cosine distances {_g(f['aux2'])}"
        )
    if m == "island_share":
        return f"components: {int(f['aux']):,}"
    return ""


def _measured(f: pd.Series) -> str:
    if f["unit"] in ("rows", "dimensions"):
        share = f" ({100 * f['count'] / f['n']:.2g}%)" if f["count"] else ""
        return f"{f['count']:,} of {f['n']:,} {f['unit']}{share}"
    return (
        f"{f['count']:,} of {f['n']:,} {f['unit']}: {100 * f['value']:.2f}% "
        f"[{100 * f['low']:.2f}, {100 * f['high']:.2f}]"
    )


def findings(report: Report) -> pd.DataFrame:
    """The findings as the page shows them: finding, measured (count or share with interval, and
    its detail), threshold, what it does to the report and the likely cause (found ones only)."""
    table = report.tables[NAME]
    k, d = report.inputs["k"], report.inputs["d"]
    out = []
    for _, f in table.iterrows():
        label, effect, cause = WORDS[f["metric"]]
        detail = _detail(f, d)
        out.append(
            {
                "finding": label,
                "measured": _measured(f) + (f"; {detail}" if detail else ""),
                "threshold": _threshold(f, k),
                "what it does to the report": effect if f["found"] else "nothing found",
                "likely cause": cause if f["found"] else "",
            }
        )
    return pd.DataFrame(out).set_index("finding")


def _draw(report: Report, table: pd.DataFrame, mark: dict) -> list:
    found = [WORDS[m][0] for m in table.loc[table["found"], "metric"]]
    if found:
        line = f"**Found:** {', '.join(found)}. Each changes what the sections below measure (see the table)."
    else:
        line = "Nothing found at these thresholds."
    return [
        Markdown(line),
        exhibit.table(
            findings(report),
            name="report-hygiene",
            **mark,
            collapsed="Every hygiene check: measured, threshold, effect, likely cause",
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
