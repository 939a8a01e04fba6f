"""The compression section: its settings, its measurement, its declared findings and their verdicts.

:func:`run` measures one set of training and evaluation vectors once (kept on disk by
:mod:`embdiag._memo`): the native vectors, every Matryoshka prefix and PCA (centred and not) at
the chapter's dimensions (:func:`~embdiag.interventions.compression.compression_grid`), the
per-image scores behind its BA and P@k (:func:`~embdiag.interventions.compression.compression_items`),
overlap@k over a ladder of dimensions (:func:`~embdiag.interventions.compression.overlap_curve`),
what centring alone does at the full dimension (:func:`~embdiag.interventions.compression.centring_effect`),
the training variance spectrum and one probe fitted without standardization. Probes and PCA bases
are fitted on the training vectors only.

The findings of the study's compression section are restated as criteria in :data:`CRITERIA`
(with the tolerances :data:`NEAR_PP` and :data:`LOSS_PP`), declared before this project's numbers
were looked at, and decided by :func:`findings`: each by paired bootstrap intervals over the
evaluation images (:func:`decide`), beside the old point-estimate readings
(:func:`evaluate_criteria`) of the study's published table (:func:`read_study`) and of this run's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._memo import memo
from .._progress import Steps
from .._validate import check_int
from ..interventions import compression
from ..metrics.inference import Decision, all_of, any_of, at_least, at_least_of, at_most, not_testable, within
from ..metrics.stats import ItemIntervals
from .findings import ADDITION, Claim, read_published, verdicts
from .sampling import RowSample, sample_rows
from . import check_attribute

__all__ = [
    "ATTRIBUTE_NAMES",
    "CRITERIA",
    "LOSS_PP",
    "MOVED",
    "NEAR_PP",
    "N_DRAWS",
    "ORDER_PP",
    "POINT_PP",
    "ROUNDING",
    "SEED",
    "USER_OVERLAP",
    "CompressionResults",
    "Settings",
    "attributes_of",
    "decide",
    "display_name",
    "endpoint_columns",
    "evaluate_criteria",
    "findings",
    "largest_loss",
    "native_row",
    "read_study",
    "representation_row",
    "run",
]

#: Display names of the driving attributes, in the study's column order.
ATTRIBUTE_NAMES = {"weather": "weather", "scene": "scene", "timeofday": "time"}
#: Equivalence margin of "near native" (pp, each column): midway between the largest change of the
#: study's near-native rows (1.95 pp) and the smallest largest change of its other compressed rows (4.17 pp).
NEAR_PP = 3.0
#: "Loses": a fall beyond the equivalence margin (pp).
LOSS_PP = NEAR_PP
#: Orderings ("ahead", "most") are signs: a paired difference wholly on one side of this (pp).
ORDER_PP = 0.0
#: The point-estimate tolerance of the criteria the interval ones replace (pp; :func:`evaluate_criteria`).
POINT_PP = 2.0
#: Centring moves neighbours: centred PCA at the full dimension keeps overlap@k below this ...
MOVED = 0.99
#: ... while uncentred PCA (a rotation) keeps it within this of 1 (rounding).
ROUNDING = 1e-9
#: Bootstrap draws and seed of every interval (the study's 5,000 draws).
N_DRAWS, SEED = 5000, 0
_PAIRED = "paired 95% percentile bootstrap interval over the evaluation images (probes and PCA bases as fitted)"
#: The study's findings and this project's addition, declared before looking at this project's numbers.
CRITERIA = {
    "no method leads everywhere": Claim(
        "at each compressed dimension, MRL ahead of (centred) PCA on at least one of the six columns (BA and P@10 "
        "of three attributes) and PCA ahead of MRL on at least one; ahead: the " + _PAIRED + " of MRL − PCA lies "
        "wholly on that side of 0",
        f"{ORDER_PP:g} pp (an ordering)",
        "the study states no size for leading: an ordering is the sign of the paired difference",
        was="at each compressed dimension, MRL's point estimate above PCA's on at least one of the six columns "
        "and below it on at least one",
    ),
    "MRL 512 and 256 near native": Claim(
        f"MRL 512 − native and MRL 256 − native within ±{NEAR_PP:g} pp on every one of the six columns ({_PAIRED})",
        f"±{NEAR_PP:g} pp per column",
        "midway between the largest change of the study's near-native rows (1.95 pp, MRL 256 weather BA) and the "
        "smallest largest change of its other compressed rows (4.17 pp, PCA 256 weather BA)",
        was=f"MRL 512 and MRL 256 within {POINT_PP:g} pp of native on all six columns (point estimates)",
    ),
    "MRL 128 loses most on weather BA": Claim(
        f"MRL 128's weather BA falls by more than {LOSS_PP:g} pp, and by more than each of its other five columns "
        f"({_PAIRED}, of native − MRL 128 and of the difference of two columns' falls)",
        f"{LOSS_PP:g} pp (the fall); {ORDER_PP:g} pp (most: an ordering)",
        "a loss is a change beyond the near-native margin; most is an ordering, the sign of the difference",
        was=f"of MRL 128's six columns, weather BA falls most, at least {POINT_PP:g} pp below native (point estimates)",
    ),
    "PCA 128 close to native": Claim(
        f"PCA 128 − native within ±{NEAR_PP:g} pp on every one of the six columns ({_PAIRED})",
        f"±{NEAR_PP:g} pp per column",
        "the near-native margin (midway between the study's near rows, at most 1.95 pp, and its other rows, "
        "4.17 pp or more)",
        was=f"PCA 128 within {POINT_PP:g} pp of native on all six columns (point estimates)",
    ),
    "PCA ahead at 128": Claim(
        "at 128 dimensions PCA ahead of MRL on more than half of the six columns: the " + _PAIRED + " of PCA − "
        "MRL lies wholly above 0 (contradicted where it lies wholly below 0 on at least half)",
        f"{ORDER_PP:g} pp (an ordering)",
        "the study's table has PCA ahead at 128 on 5 of 6 columns; ahead is the sign of the paired difference",
    ),
    "centring alone moves neighbours": Claim(
        f"at the full dimension (nothing projected away) centred PCA keeps overlap@10 with the native top-10 "
        f"below {MOVED:g}, while uncentred PCA keeps it within {ROUNDING:g} of 1; computed exactly on the fixed "
        f"gallery (no sampling)",
        f"overlap {MOVED:g} (centred); {ROUNDING:g} (uncentred)",
        "one neighbour in a hundred replaced is far beyond rounding, which uncentred PCA (a rotation) shows moves none",
        kind=ADDITION,
    ),
}
USER_OVERLAP = 0.89  # the user's reported overlap@10 of centred PCA (reported, not computed here)


# -- measurement -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Settings:
    """The chapter's measurement parameters: ``k`` neighbours per query (P@k, overlap@k);
    ``dims`` the dimensions to keep (None: the study's 512, 256, 128 of 768, in proportion to the
    vectors' dimension, :func:`~embdiag.interventions.compression.study_dims`); ``attribute`` the
    attribute in the weather finding's place (None: weather, else the first,
    :func:`~embdiag.study.check_attribute`); ``max_rows`` the most rows measured of each split (a
    larger split is measured on a sample of this many drawn with ``seed``,
    :mod:`embdiag.study.sampling`; None: every row)."""

    k: int = 10
    dims: list | None = None
    attribute: str | None = None
    seed: int = 0
    max_rows: int | None = 5000


@dataclass(frozen=True, eq=False)
class CompressionResults:
    """One measurement of the section (compare fields, not results: tables have no single truth value).

    ``grid``: :func:`~embdiag.interventions.compression.compression_grid` at ``dims``;
    ``items``: :func:`~embdiag.interventions.compression.compression_items` (per evaluation image,
    MRL and PCA), which the findings' intervals resample; ``curve``:
    :func:`~embdiag.interventions.compression.overlap_curve` over
    :func:`~embdiag.interventions.compression.dims_ladder`; ``centring``:
    :func:`~embdiag.interventions.compression.centring_effect`; ``spectrum``:
    :func:`~embdiag.interventions.compression.variance_spectrum` at ``dims``, largest first;
    ``raw_ba``: the balanced accuracy on ``checked_attribute`` of a probe without
    standardization on ``checked`` (the largest PCA), where ``checked_attribute`` is the
    attribute whose standardized BA ``checked`` loses most (:func:`largest_loss`). ``dims``, ``k``,
    ``attribute`` (resolved), ``n_draws`` and ``seed`` (of the bootstrap intervals): what
    :func:`findings` reads; ``rows``: which rows were measured
    (:class:`~embdiag.study.sampling.RowSample`)."""

    grid: pd.DataFrame
    items: pd.DataFrame
    curve: pd.DataFrame
    centring: pd.DataFrame
    spectrum: pd.DataFrame
    raw_ba: float
    checked: str
    checked_attribute: str
    dims: tuple[int, ...]
    k: int
    attribute: str
    n_draws: int = N_DRAWS
    seed: int = SEED
    rows: RowSample | None = None


def run(vectors, settings: Settings = Settings(), *, progress: bool = False) -> CompressionResults:
    """The section measured on ``vectors`` (a :class:`~embdiag.encoders.vectors.LabelledVectors`)
    with ``settings``: each setting checked and resolved (``ValueError`` naming a bad one), each
    split cut to ``settings.max_rows`` rows (:func:`~embdiag.study.sampling.sample_rows`), then
    measured once and kept on disk under the rows' content and the resolved settings.
    ``progress``: one line per measured representation on stderr (:class:`~embdiag._progress.Steps`)."""
    attribute = check_attribute(settings.attribute, vectors.attributes)
    k = check_int(settings.k, "k", minimum=1)
    dims = _check_dims(settings.dims, vectors.dim)
    vectors, sample = sample_rows(vectors, settings.max_rows, settings.seed)
    ladder = compression.dims_ladder(vectors.dim, dims)
    total = 1 + len(dims) * len(compression.METHODS) + 1 + 3  # the tables, the curve, centring, spectrum, raw BA
    steps = Steps("compression", total, enabled=progress)
    steps.say(
        f"{1 + len(dims) * len(compression.METHODS)} representations, overlap over {len(ladder)} dimensions; "
        f"{sample.describe()}"
    )
    args = vectors.train, vectors.train_labels, vectors.val, vectors.val_labels
    return _measured(*args, dims, k, attribute, sample, progress=steps)


def _check_dims(dims, d: int) -> tuple[int, ...]:
    """``dims`` as a tuple of integers from 1 to ``d`` (None: the study's, in proportion to ``d``)."""
    if dims is None:
        return tuple(compression.study_dims(d))
    if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
        raise ValueError(f"dims: expected a list of dimensions to keep, got {dims!r}")
    dims = tuple(check_int(x, "dims", minimum=1) for x in dims)
    if not dims:
        raise ValueError("dims: needs at least one dimension to keep")
    too_big = [x for x in dims if x > d]
    if too_big:
        raise ValueError(f"dims: must be at most the vectors' dimension {d}, got {too_big}")
    return dims


@memo
def _measured(train, train_labels, val, val_labels, dims, k, attribute, sample, progress=None) -> CompressionResults:
    """:func:`run` on checked settings (``sample``: the rows measured; ``progress``: a
    :class:`~embdiag._progress.Steps`, or None)."""
    steps = progress or Steps("compression", 0, enabled=False)
    args = (train, train_labels, val, val_labels)
    d = int(np.shape(val)[1])
    grid, items = compression.compression_tables(*args, dims=list(dims), k=k, progress=steps.done)
    curve = compression.overlap_curve(train, val, dims=compression.dims_ladder(d, dims), k=k)
    steps.done("overlap over dimensions")
    centring = compression.centring_effect(train, val, val_labels, k=k)
    steps.done("centring at the full dimension")
    spectrum = compression.variance_spectrum(train, sorted(dims, reverse=True))
    steps.done("variance spectrum")
    checked = f"PCA {max(dims)}"
    checked_attribute = largest_loss(grid, checked)
    raw_ba = compression.unstandardized_ba(*args, method="PCA", dim=max(dims), attribute=checked_attribute)
    steps.done("probe without standardization")
    return CompressionResults(
        grid,
        items,
        curve,
        centring,
        spectrum,
        float(raw_ba),
        checked,
        checked_attribute,
        dims,
        k,
        attribute,
        rows=sample,
    )


# -- the study's table and the grid's rows -----------------------------------------------------
def read_study(path=None) -> pd.DataFrame:
    """The study's compression table (``data/study/compression.csv``) in the layout of
    :func:`~embdiag.interventions.compression.compression_grid`: ``representation``, ``method``,
    ``dim``, ``{a} BA`` and ``{a} P@10`` as shares (the CSV holds percentages)."""
    raw = read_published("compression.csv", path)
    out = raw[["representation", "method", "dim"]].copy()
    for a in ATTRIBUTE_NAMES:
        out[f"{a} BA"] = raw[f"{a}_ba_pct"] / 100.0
        out[f"{a} P@10"] = raw[f"{a}_p_at_10_pct"] / 100.0
    return out


def attributes_of(table: pd.DataFrame) -> list[str]:
    """The attributes a table has columns for (``{a} BA`` or ``{a} P@k``), the study's three first."""
    found = {c.rsplit(" ", 1)[0] for c in table.columns if c.endswith(" BA") or " P@" in c}
    return [a for a in ATTRIBUTE_NAMES if a in found] + sorted(found - set(ATTRIBUTE_NAMES))


def display_name(attribute: str) -> str:
    """The display name of ``attribute`` (:data:`ATTRIBUTE_NAMES`; others as they are)."""
    return ATTRIBUTE_NAMES.get(attribute, attribute)


def endpoint_columns(k: int, attributes) -> list[tuple[str, str, str]]:
    """(grid column, attribute, endpoint) for the BA then the P@k columns, in the study's order."""
    return [(f"{a} BA", a, "BA") for a in attributes] + [(f"{a} P@{k}", a, f"P@{k}") for a in attributes]


def native_row(table: pd.DataFrame) -> pd.Series:
    """The table's one native row (``ValueError`` unless there is exactly one)."""
    rows = table[table["method"] == "native"]
    if len(rows) != 1:
        raise ValueError(f"table: expected one native row, found {len(rows)}")
    return rows.iloc[0]


def representation_row(table: pd.DataFrame, representation: str) -> pd.Series | None:
    """The table's row of ``representation`` (e.g. ``"PCA 128"``), None when it has none."""
    rows = table[table["representation"] == representation]
    return None if rows.empty else rows.iloc[0]


def largest_loss(grid: pd.DataFrame, representation: str) -> str:
    """The attribute whose balanced accuracy ``representation`` loses most against native."""
    row, native = representation_row(grid, representation), native_row(grid)
    if row is None:
        raise ValueError(f"representation: {representation!r} is not in the grid")
    attributes = [a for a in attributes_of(grid) if f"{a} BA" in grid]
    if not attributes:
        raise ValueError("grid: has no balanced-accuracy columns (measured with probes=False)")
    return min(attributes, key=lambda a: row[f"{a} BA"] - native[f"{a} BA"])


# -- findings ----------------------------------------------------------------------------------
def _table_attributes(table: pd.DataFrame) -> list[str]:
    """The study's three driving attributes where the table has them, else the table's own
    (every ``<attribute> BA`` column), e.g. ``pos`` and ``lexname`` of WordNet glosses."""
    if all(f"{a} BA" in table.columns for a in ATTRIBUTE_NAMES):
        return list(ATTRIBUTE_NAMES)
    return [c[: -len(" BA")] for c in table.columns if str(c).endswith(" BA")]


def _diffs(table: pd.DataFrame, representation: str, k: int) -> pd.Series | None:
    """pp change from native of the BA and P@k columns of one representation, on the table's
    attributes (:func:`_table_attributes`); None when the representation is absent."""
    row, native = representation_row(table, representation), native_row(table)
    if row is None:
        return None
    cols = endpoint_columns(k, _table_attributes(table))
    if any(c not in table.columns for c, _, _ in cols):
        return None
    return pd.Series({f"{display_name(a)} {e}": 100 * (row[c] - native[c]) for c, a, e in cols})


def _leads(table: pd.DataFrame, k: int):
    dims = sorted(
        set(table.loc[table["method"] == "MRL", "dim"]) & set(table.loc[table["method"] == "PCA", "dim"]), reverse=True
    )
    if not dims:
        return "not measured", None
    words, ok = [], True
    for d in dims:
        m, p = _diffs(table, f"MRL {d}", k), _diffs(table, f"PCA {d}", k)
        if m is None or p is None:
            return "not measured", None
        a, b = int((m > p).sum()), int((p > m).sum())
        words.append(f"{d}: MRL ahead on {a}, PCA on {b}")
        ok = ok and a > 0 and b > 0
    return "; ".join(words), ok


def _near(table: pd.DataFrame, names, k: int):
    diffs = {n: _diffs(table, n, k) for n in names}
    if any(v is None for v in diffs.values()):
        return "not measured", None
    words = [f"{n}: largest |change| {v.abs().max():.2f} pp ({v.abs().idxmax()})" for n, v in diffs.items()]
    return "; ".join(words), bool(all(v.abs().max() <= POINT_PP for v in diffs.values()))


def _weather_loss(table: pd.DataFrame, k: int, attribute: str = "weather"):
    v = _diffs(table, "MRL 128", k)
    if v is None or attribute not in _table_attributes(table):
        return "not measured", None
    worst, column = v.idxmin(), f"{display_name(attribute)} BA"
    return (
        f"{column} {v[column]:+.2f} pp; largest loss {worst} {v[worst]:+.2f} pp",
        bool(worst == column and v[column] <= -POINT_PP),
    )


def _pca_ahead(table: pd.DataFrame, k: int, dim: int = 128):
    m, p = _diffs(table, f"MRL {dim}", k), _diffs(table, f"PCA {dim}", k)
    if m is None or p is None:
        return "not measured", None
    ahead = int((p > m).sum())
    return f"{dim}: PCA ahead on {ahead} of {len(p)}, MRL on {int((m > p).sum())}", bool(ahead > len(p) / 2)


def _centring(centring: pd.DataFrame | None, k: int):
    if centring is None:
        return "not measured", None
    c, u, d = _full_overlaps(centring, k)
    return f"centred {c:.3f}, uncentred {u:.4f} at the full dimension {d}", bool(c < MOVED and u > 1 - ROUNDING)


def _full_overlaps(centring: pd.DataFrame, k: int) -> tuple[float, float, int]:
    """Overlap@k of centred and of uncentred PCA at the full dimension, and that dimension."""
    t = centring.set_index("representation")
    d = next(r for r in t.index if r.startswith("PCA ") and "uncentred" not in r).split()[-1]
    return float(t.loc[f"PCA {d}", f"overlap@{k}"]), float(t.loc[f"PCA uncentred {d}", f"overlap@{k}"]), int(d)


def evaluate_criteria(
    table: pd.DataFrame, centring: pd.DataFrame | None = None, k: int = 10, attribute: str = "weather"
) -> dict:
    """Each finding of :data:`CRITERIA` read from point estimates alone (the old criteria,
    :attr:`Claim.was`, at :data:`POINT_PP`): ``{finding: (numbers in words, holds or None)}``.

    Where the table has other attributes than the study's three (WordNet's ``pos`` and
    ``lexname``), "all six columns" reads all of its columns and ``attribute`` takes weather's
    place; a finding at a dimension the table lacks is not measured."""
    return {
        "no method leads everywhere": _leads(table, k),
        "MRL 512 and 256 near native": _near(table, ["MRL 512", "MRL 256"], k),
        "MRL 128 loses most on weather BA": _weather_loss(table, k, attribute),
        "PCA 128 close to native": _near(table, ["PCA 128"], k),
        "PCA ahead at 128": _pca_ahead(table, k),
        "centring alone moves neighbours": _centring(centring, k),
    }


# -- intervals ---------------------------------------------------------------------------------
def _labelled(decision: Decision, label: str) -> Decision:
    return decision._replace(reason=f"{label}: {decision.reason}")


def _column_names(k: int, attributes) -> list[tuple[str, str]]:
    """(items column, display name) of the BA then the P@k columns."""
    return [(col, f"{display_name(a)} {e}") for col, a, e in endpoint_columns(k, attributes)]


def _native_name(grid: pd.DataFrame) -> str:
    return str(native_row(grid)["representation"])


def _has(grid: pd.DataFrame, *reps: str) -> bool:
    return all(representation_row(grid, r) is not None for r in reps)


def _near_decision(grid, intervals, reps, k: int, attributes) -> Decision | None:
    if not _has(grid, *reps):
        return None
    native = _native_name(grid)
    return all_of(
        *(
            _labelled(within(*intervals((1, r, col), (-1, native, col))[1:], NEAR_PP), f"{r} {name}")
            for r in reps
            for col, name in _column_names(k, attributes)
        )
    )


def _ahead(grid, intervals, dim: int, k: int, attributes, first: str, second: str) -> list[Decision]:
    """Per column, the claim that ``first`` is ahead of ``second`` at ``dim`` (``first − second`` above 0)."""
    return [
        _labelled(
            at_least(*intervals((1, f"{first} {dim}", col), (-1, f"{second} {dim}", col))[1:], ORDER_PP),
            f"{first} − {second} {name}",
        )
        for col, name in _column_names(k, attributes)
    ]


def _ahead_on(parts: list[Decision]) -> int:
    return sum(p.verdict == "holds" for p in parts)


def _leads_decision(grid, intervals, k: int, attributes) -> Decision | None:
    dims = sorted(set(grid.loc[grid["method"] == "MRL", "dim"]) & set(grid.loc[grid["method"] == "PCA", "dim"]))
    if not dims:
        return None
    parts = []
    for d in sorted(dims, reverse=True):
        mrl = _ahead(grid, intervals, int(d), k, attributes, "MRL", "PCA")
        pca = _ahead(grid, intervals, int(d), k, attributes, "PCA", "MRL")
        label = f"{d}: MRL ahead on {_ahead_on(mrl)} of {len(mrl)} columns, PCA on {_ahead_on(pca)}"
        both = all_of(any_of(*mrl), any_of(*pca))
        parts.append(both._replace(reason=label if both.verdict == "holds" else f"{label}; {both.reason}"))
    return all_of(*parts)


def _most_of(parts: list[Decision], names: list[str], what: str, other: str) -> Decision:
    """The claim that more than half of ``parts`` (each an ordering) hold: the m-th largest of their
    intervals (m = half, rounded down, plus one) lies above the margin. Holds when more than half
    hold; contradicted when at least half are contradicted; inconclusive otherwise. ``names``:
    each part's column; ``what`` and ``other``: the words for a part that holds and one contradicted."""
    m = len(parts) // 2 + 1
    decided = at_least_of(m, parts)
    low, high = decided.low, decided.high
    held = [n for n, p in zip(names, parts) if p.verdict == "holds"]
    against = [n for n, p in zip(names, parts) if p.verdict == "contradicted"]
    reason = (
        f"{what} on {len(held)} of {len(parts)} columns{_listed(held)}, {other} on {len(against)}"
        f"{_listed(against)}; more than half needs the {_ordinal(m)} largest interval above {decided.margin:g}: "
        f"{decided.reason}"
    )
    return Decision(decided.verdict, "most of", decided.margin, low, high, reason)


def _ordinal(m: int) -> str:
    return f"{m}{'th' if 10 <= m % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(m % 10, 'th')}"


def _listed(names: list[str]) -> str:
    return f" ({', '.join(names)})" if names else ""


def _pca_ahead_decision(grid, intervals, k: int, attributes, dim: int = 128) -> Decision | None:
    if not _has(grid, f"MRL {dim}", f"PCA {dim}"):
        return None
    names = [name for _, name in _column_names(k, attributes)]
    return _most_of(_ahead(grid, intervals, dim, k, attributes, "PCA", "MRL"), names, "PCA ahead", "MRL ahead")


def _loss_decision(grid, intervals, k: int, attributes, attribute: str) -> Decision | None:
    if not _has(grid, "MRL 128") or attribute not in attributes:
        return None
    native, w = _native_name(grid), f"{attribute} BA"
    fall = at_least(*intervals((-1, "MRL 128", w), (1, native, w))[1:], LOSS_PP)
    parts = [_labelled(fall, f"{display_name(attribute)} BA fall")]
    for col, name in _column_names(k, attributes):
        if col != w:
            terms = ((1, "MRL 128", col), (-1, native, col), (-1, "MRL 128", w), (1, native, w))
            parts.append(_labelled(at_least(*intervals(*terms)[1:], ORDER_PP), f"its fall − {name}'s"))
    return all_of(*parts)


def _centring_decision(centring: pd.DataFrame | None, k: int) -> Decision | None:
    if centring is None:
        return None
    c, u, d = _full_overlaps(centring, k)
    exact = "computed exactly on the fixed gallery (no sampling)"
    return all_of(
        _labelled(at_most(c, c, MOVED), f"centred PCA {d} overlap@{k}, {exact}"),
        _labelled(at_most(1 - u, 1 - u, ROUNDING), f"uncentred PCA {d} share of neighbours lost (1 − overlap@{k})"),
    )


def decide(
    grid: pd.DataFrame,
    centring: pd.DataFrame | None,
    items: pd.DataFrame | None,
    k: int = 10,
    attribute: str = "weather",
    n_draws: int = N_DRAWS,
    seed: int = SEED,
) -> dict:
    """Each finding of :data:`CRITERIA` decided on this run: ``{finding: Decision or None}``
    (None: the finding's dimension or attribute is not in the grid). ``items``:
    :func:`~embdiag.interventions.compression.compression_items` of the same vectors, whose
    evaluation images the intervals resample; without it every interval finding is not testable."""
    attributes = _table_attributes(grid)
    out = {"centring alone moves neighbours": _centring_decision(centring, k)}
    deciders = {
        "no method leads everywhere": lambda i: _leads_decision(grid, i, k, attributes),
        "MRL 512 and 256 near native": lambda i: _near_decision(grid, i, ["MRL 512", "MRL 256"], k, attributes),
        "MRL 128 loses most on weather BA": lambda i: _loss_decision(grid, i, k, attributes, attribute),
        "PCA 128 close to native": lambda i: _near_decision(grid, i, ["PCA 128"], k, attributes),
        "PCA ahead at 128": lambda i: _pca_ahead_decision(grid, i, k, attributes),
    }
    intervals = ItemIntervals(items, n_draws, seed) if items is not None else _Nothing()
    missing = not_testable("no per-image scores (compression_items) were given, so no interval")
    for name, decider in deciders.items():
        decided = decider(intervals)
        out[name] = missing if decided is not None and items is None else decided
    return {name: out[name] for name in CRITERIA}


class _Nothing:
    """Stands in for the intervals where there are none: every interval is (nan, nan, nan)."""

    def __call__(self, *terms):
        return (np.nan, np.nan, np.nan)


def findings(measured: CompressionResults, study: pd.DataFrame | None = None) -> pd.DataFrame:
    """The verdict table (:func:`~embdiag.study.findings.verdicts`) of :data:`CRITERIA` on one
    measurement (:func:`run`): ``study`` and ``this run`` give the point estimates in words (the
    study's from its published table, default :func:`read_study`; the centring finding is a
    user's, reported as overlap 0.89), the verdicts come from :func:`decide` on the measurement's
    per-image scores. The study published point estimates only, so its findings are not testable
    there; the old point-estimate verdicts (:func:`evaluate_criteria`) are shown beside the
    criteria they replace. The measurement's ``attribute`` takes weather's place."""
    m = measured
    study = read_study() if study is None else study
    ours, theirs = evaluate_criteria(m.grid, m.centring, m.k, m.attribute), evaluate_criteria(study, None, 10)
    theirs["centring alone moves neighbours"] = (f"not in the study; a user measured about {USER_OVERLAP}", None)
    point_only = not_testable("the study published point estimates without intervals")
    decided = decide(m.grid, m.centring, m.items, m.k, m.attribute, m.n_draws, m.seed)
    rows = [
        (
            name,
            theirs[name][0],
            ours[name][0],
            point_only if CRITERIA[name].kind == "study" else None,
            decided[name],
        )
        for name in CRITERIA
    ]
    was = {name: ours[name][1] for name, claim in CRITERIA.items() if claim.was is not None}
    return verdicts(CRITERIA, rows, was=was)
