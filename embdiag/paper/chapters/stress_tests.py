"""The stress-test chapter: the grid measured once, then its figures, tables and findings.

:func:`measure` applies every intervention of :mod:`embdiag.interventions.stress` at every
severity of a grid to one set of training and evaluation vectors (each fitted on the
training vectors only; the grid is :func:`~embdiag.interventions.stress.measure_grid`'s) and
measures the whole suite (:func:`embdiag.metrics.evaluate`:
total variance, mean cosine, RankMe, PR, standardized-probe accuracy and balanced accuracy,
P@k per attribute) plus overlap@k with the unchanged top-k (neighbour identity). Every
other function reads its :class:`StressResults` and computes no metric: the study's
headline figure (:func:`headline_chart`), curves over the grid (:func:`curves_chart`), the
contraction before/after table (:func:`contraction_table`), the severe rows beside the
study's (:func:`severe_table`) and the findings checked by declared criteria
(:func:`findings`). The study's values are read from ``data/study/stress_severe.csv``
(transcribed as printed, never computed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import altair as alt
import numpy as np
import pandas as pd

from ..._memo import memo
from ..._validate import check_int
from ...metrics import paired_bootstrap, precision_at_k, random_floor
from ...interventions.stress import INTERVENTIONS, SEVERITIES, check_severity, measure_grid, n_kept
from ..findings import read_published, verdicts
from .. import theme

__all__ = [
    "CRITERIA",
    "LABELS",
    "GEOMETRY",
    "StressResults",
    "check_attribute",
    "measure",
    "severity_table",
    "headline_frame",
    "headline_chart",
    "headline_text",
    "long_grid",
    "curves_chart",
    "contraction_table",
    "read_study",
    "severe_frame",
    "severe_table",
    "severe_compared",
    "findings",
]

#: Display names of the interventions (the study's words in brackets in :data:`STUDY_NAMES`).
LABELS = {
    "contraction": "contraction",
    "common_offset": "common offset",
    "rank_restriction": "rank restriction",
    "noise": "noise",
}
#: The study's row names of its severe table, per intervention.
STUDY_NAMES = {
    "unchanged": "unchanged",
    "contraction": "shrink (.99)",
    "rank_restriction": "eight directions (.99)",
    "common_offset": "common offset (.99)",
    "noise": "severe noise (.99)",
}
UNCHANGED = "unchanged"
#: Label-free columns of the grid: (column, label, log axis).
GEOMETRY = (
    ("total_variance", "total variance", True),
    ("mean_cosine", "mean cosine", False),
    ("rankme", "RankMe", True),
    ("participation_ratio", "participation ratio (PR)", True),
)
#: The headline chart's groups: the unchanged vectors, noise (the finding) and the other changes.
GROUPS = {UNCHANGED: theme.colour(UNCHANGED), "noise": theme.colour("noise"), "other": "#b0b0b0"}

#: Declared criteria: each finding of the study's stress section reproduces when its test holds on
#: this run's grid (``s*`` is the grid's top severity, .99 by default; "unchanged" is severity 0).
CRITERIA = {
    "noise: RankMe up, retrieval to chance": (
        "at s*, noise raises RankMe above the unchanged value while P@k of the attribute lies within "
        "2 points of the random floor: the whole 95% bootstrap interval of P@k minus the floor (over "
        "queries) inside ±2 points"
    ),
    "contraction: only variance moves": (
        "at every severity s, contraction's total variance is (1 - s)² times the unchanged (relative 1e-9); "
        "mean cosine, RankMe and PR are unchanged (relative 1e-9), top-k identities are unchanged "
        "(overlap@k = 1) and so are P@k and balanced accuracy of every attribute (1e-12)"
    ),
    "common offset: centred spread kept, raw RankMe collapses": (
        "at s*, the common offset leaves total variance and PR unchanged (relative 1e-6) while raw RankMe falls below 3"
    ),
    "rank restriction costs labels": (
        "at s*, rank restriction lowers balanced accuracy of the attribute by at least 5 points"
    ),
}
#: Bootstrap draws of the interval that decides the noise finding.
N_DRAWS = 5000
_TOL_EXACT, _TOL_CENTRED, _TOL_VALUES, _FLOOR_PP, _COLLAPSED, _BA_COST = 1e-9, 1e-6, 1e-12, 2.0, 3.0, 5.0


@dataclass(frozen=True)
class StressResults:
    """The measured grid and what the figures need to read it.

    ``grid``: one row per intervention and severity (severity 0, the unchanged vectors, is
    measured once and repeated for each intervention), the columns of
    :func:`~embdiag.metrics.evaluate` (shares in [0, 1]) plus ``"overlap@{k}"``;
    ``sizes``: what each severity means for these vectors (``intervention``, ``severity``,
    ``quantity``, ``value``); ``floors``: random-neighbour floor of P@k per attribute;
    ``attribute``: the headline attribute; ``d``: the vectors' dimension; ``noise_gaps``: per
    attribute, the 95% bootstrap interval (over queries, :data:`N_DRAWS` draws) of P@k minus
    the random floor at the grid's top noise severity (shares), which decides the noise finding.
    """

    grid: pd.DataFrame
    sizes: pd.DataFrame
    floors: dict
    k: int
    attribute: str
    seed: int
    d: int
    noise_gaps: dict

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(self.floors)

    @property
    def top(self) -> float:
        """The grid's most severe setting (the study's headline: .99)."""
        return float(self.grid["severity"].max())

    def row(self, intervention: str, severity: float) -> pd.Series:
        """The grid row of ``intervention`` at ``severity``."""
        g = self.grid
        hit = g[(g["intervention"] == intervention) & np.isclose(g["severity"], severity)]
        if hit.empty:
            raise ValueError(f"severity: {severity!r} of {intervention!r} is not in the measured grid")
        return hit.iloc[0]

    @property
    def unchanged(self) -> pd.Series:
        return self.row(next(iter(INTERVENTIONS)), 0.0)


def check_attribute(attribute, attributes) -> str:
    """``attribute`` if it is one of ``attributes`` (None: weather where the labels have it, else
    the first attribute), else ``ValueError`` listing them."""
    attributes = list(attributes)
    if attribute is None and attributes:
        return "weather" if "weather" in attributes else attributes[0]
    if attribute not in attributes:
        raise ValueError(f"attribute: {attribute!r} is not among the labels' attributes {attributes}")
    return attribute


def _check_severities(severities) -> list[float]:
    if isinstance(severities, (str, bytes)) or not hasattr(severities, "__iter__"):
        raise ValueError(f"severities: expected a list of numbers in [0, 1), got {severities!r}")
    values = sorted({check_severity(s, "severities") for s in severities} | {0.0})
    if len(values) < 2:
        raise ValueError("severities: needs at least one severity above 0")
    return values


def _size(change) -> tuple[str, float]:
    """The one number that says how large a fitted change is."""
    if hasattr(change, "scale_"):
        return "scale factor", float(change.scale_)
    if hasattr(change, "offset_"):
        return "offset norm", float(np.linalg.norm(change.offset_))
    if hasattr(change, "n_components_"):
        return "directions kept", float(change.n_components_)
    return "noise total variance", float(change.noise_variance_)


def measure(
    train,
    train_labels: Mapping[str, np.ndarray],
    val,
    val_labels: Mapping[str, np.ndarray],
    *,
    severities=SEVERITIES,
    k: int = 10,
    attribute: str | None = None,
    seed: int = 0,
    probes: bool = True,
) -> StressResults:
    """Every intervention x severity of the grid on ``val``, each fitted on ``train`` only.

    Severity 0 (the identity for every intervention) is always included and measured once.
    Balanced accuracy uses the eligible classes of ``val_labels``, frozen once. Raises
    ``ValueError`` for an ``attribute`` not in ``val_labels`` (before any measurement; None:
    see :func:`check_attribute`), a severity outside [0, 1) or a bad ``k`` or ``seed``. The
    result is kept on disk (:mod:`embdiag._memo`) under the checked arguments (the attribute
    resolved, the severities sorted), so the conclusions and real-encoder chapters read the
    stress chapter's grid instead of measuring it again.
    """
    attribute = check_attribute(attribute, val_labels)
    values = tuple(_check_severities(severities))
    k, seed = check_int(k, "k", minimum=1), check_int(seed, "seed", minimum=0)
    return _measured(train, train_labels, val, val_labels, values, k, attribute, seed, bool(probes))


@memo
def _measured(train, train_labels, val, val_labels, values, k, attribute, seed, probes) -> StressResults:
    """:func:`measure` of checked arguments (``values``: the sorted severities, 0 included)."""
    rows, sizes, gaps = [], [], {}
    floors = {a: random_floor(y) for a, y in val_labels.items()}
    for name, s, change, row, neighbors in measure_grid(
        train,
        train_labels,
        val,
        val_labels,
        names=tuple(INTERVENTIONS),
        severities=values,
        k=k,
        seed=seed,
        probes=probes,
    ):
        sizes.append((name, s, *_size(change)))
        rows.append({"intervention": name, "severity": s, **row})
        if name == "noise" and s == values[-1]:
            for a, y in val_labels.items():
                per_query = precision_at_k(neighbors, y, per_query=True)
                per_query = per_query[~np.isnan(per_query)]  # queries without a label for a
                gaps[a] = paired_bootstrap(per_query, np.full(len(per_query), floors[a]), n_draws=N_DRAWS, seed=seed)
    return StressResults(
        pd.DataFrame(rows),
        pd.DataFrame(sizes, columns=["intervention", "severity", "quantity", "value"]),
        floors,
        k,
        attribute,
        seed,
        int(np.shape(val)[1]),
        gaps,
    )


def _sev(s: float) -> str:
    return f"{s:g}".lstrip("0") if s else "0"


def severity_table(results: StressResults) -> pd.DataFrame:
    """What each severity means for these vectors: one row per severity (``s = ...``), one column
    per intervention and the quantity that sizes it (so each column has one unit)."""
    table = results.sizes.assign(intervention=results.sizes["intervention"].map(LABELS))
    table = table.pivot_table(index="severity", columns=["intervention", "quantity"], values="value", sort=False)
    table.index = pd.Index([f"s = {_sev(s)}" for s in table.index], name="severity")
    return table


def _percent(results: StressResults, metric: str) -> bool:
    return metric.endswith((" accuracy", " BA", f" P@{results.k}")) or metric.startswith("overlap@")


def _condition(results: StressResults, name: str) -> str:
    if name == "rank_restriction":
        kept = n_kept(results.d, results.top)
        return f"rank restriction ({kept} direction{'s' if kept > 1 else ''})"
    return LABELS[name]


def headline_frame(results: StressResults, attribute: str | None = None) -> pd.DataFrame:
    """The data of :func:`headline_chart`: one row per condition (the unchanged vectors, then each
    intervention at the grid's top severity) with ``RankMe``, ``P@k`` of ``attribute`` (%), the
    colour ``group`` and ``random floor`` (the random-neighbour floor of that P@k, %)."""
    attribute = check_attribute(attribute or results.attribute, results.attributes)
    p = f"{attribute} P@{results.k}"
    rows = [
        {
            "condition": UNCHANGED,
            "RankMe": results.unchanged["rankme"],
            "P@k": 100 * results.unchanged[p],
            "group": UNCHANGED,
        }
    ]
    for name in INTERVENTIONS:
        r = results.row(name, results.top)
        rows.append(
            {
                "condition": _condition(results, name),
                "RankMe": r["rankme"],
                "P@k": 100 * r[p],
                "group": "noise" if name == "noise" else "other",
            }
        )
    return pd.DataFrame(rows).assign(**{"random floor": 100 * results.floors[attribute]})


def headline_chart(results: StressResults, attribute: str | None = None) -> alt.Chart:
    """The study's figure: RankMe (log axis) beside P@k of ``attribute`` per intervention at the
    grid's top severity, the unchanged vectors on top, noise highlighted, the random floor of
    P@k a dashed rule."""
    attribute = check_attribute(attribute or results.attribute, results.attributes)
    data = headline_frame(results, attribute)
    order = list(data["condition"])
    y = alt.Y("condition:N", sort=order, title=None, axis=alt.Axis(labelLimit=240))
    color = alt.Color("group:N", scale=alt.Scale(domain=list(GROUPS), range=list(GROUPS.values())), legend=None)
    base = alt.Chart(data).properties(width=theme.panel_width(2, gap=150, room=theme.RESULT_PX), height=170)
    tip = [
        "condition",
        alt.Tooltip("RankMe:Q", format=".2f"),
        alt.Tooltip("P@k:Q", title=f"P@{results.k} (%)", format=".2f"),
    ]
    rank = base.mark_bar().encode(  # bars start at RankMe's minimum, 1 (a log axis has no zero)
        x=alt.X("RankMe:Q", title="RankMe (log axis)", scale=alt.Scale(type="log", domainMin=1)),
        x2=alt.datum(1),
        y=y,
        color=color,
        tooltip=tip,
    )
    rank_text = base.mark_text(align="left", dx=3).encode(x="RankMe:Q", y=y, text=alt.Text("RankMe:Q", format=".1f"))
    floor = float(data["random floor"].iloc[0])
    hi = max(100.0, float(data["P@k"].max()))
    p10 = base.mark_bar().encode(
        x=alt.X("P@k:Q", title=f"{attribute} P@{results.k} (%)", scale=alt.Scale(domain=[0, hi])),
        y=alt.Y("condition:N", sort=order, axis=None),
        color=color,
        tooltip=tip,
    )
    p10_text = base.mark_text(align="left", dx=3).encode(
        x="P@k:Q", y=alt.Y("condition:N", sort=order, axis=None), text=alt.Text("P@k:Q", format=".1f")
    )
    rule = alt.Chart(pd.DataFrame({"floor": [floor], "label": [f"random floor {floor:.1f}%"]}))
    floor_rule = rule.mark_rule(strokeDash=theme.DASHES["reference"], color="black").encode(
        x="floor:Q", tooltip=[alt.Tooltip("floor:Q", title="random floor (%)", format=".2f")]
    )
    floor_text = rule.mark_text(align="left", baseline="bottom", dx=3, dy=-2).encode(
        x="floor:Q", y=alt.value(0), text="label:N"
    )
    return alt.hconcat(
        (rank + rank_text).properties(title="Distribution: RankMe"),
        (p10 + p10_text + floor_rule + floor_text).properties(title=f"Relevance: {attribute} P@{results.k}"),
        spacing=12,
    ).properties(title=f"Each intervention at severity {_sev(results.top)}")


def headline_text(results: StressResults, attribute: str | None = None) -> str:
    """The headline figure in one Markdown sentence per intervention, every number read from ``results``."""
    attribute = check_attribute(attribute or results.attribute, results.attributes)
    p, k, s = f"{attribute} P@{results.k}", results.k, results.top
    u, floor = results.unchanged, 100 * results.floors[attribute]
    r = {n: results.row(n, s) for n in INTERVENTIONS}

    def pk(row):
        return f"{100 * row[p]:.2f}%"

    return (
        f"Unchanged, RankMe is {u['rankme']:.2f} and {attribute} P@{k} {pk(u)} (random floor {floor:.2f}%). "
        f"At severity {_sev(s)}: **noise** raises RankMe to {r['noise']['rankme']:.2f} while P@{k} falls to "
        f"{pk(r['noise'])}, {100 * r['noise'][p] - floor:+.2f} points from the floor; **contraction** leaves "
        f"RankMe at {r['contraction']['rankme']:.2f} and P@{k} at {pk(r['contraction'])}; the **common offset** "
        f"collapses RankMe to {r['common_offset']['rankme']:.2f} while P@{k} stays at {pk(r['common_offset'])}; "
        f"**rank restriction** to {n_kept(results.d, s)} of {results.d} directions gives RankMe "
        f"{r['rank_restriction']['rankme']:.2f} and P@{k} {pk(r['rank_restriction'])}."
    )


def long_grid(results: StressResults) -> pd.DataFrame:
    """The grid in long form: ``intervention``, ``severity``, ``metric`` (display label), ``panel``
    (the column of the grid), ``value`` (percent for shares), ``floor`` (P@k only)."""
    rows = []
    labels = {c: lab for c, lab, _ in GEOMETRY}
    for _, r in results.grid.iterrows():
        for col in results.grid.columns[2:]:
            pct = _percent(results, col)
            attr = col.rsplit(" ", 1)[0] if col.endswith(f" P@{results.k}") else None
            rows.append(
                {
                    "intervention": LABELS[r["intervention"]],
                    "severity": r["severity"],
                    "panel": col,
                    "metric": labels.get(col, col + (" (%)" if pct else "")),
                    "value": (100.0 if pct else 1.0) * r[col],
                    "floor": 100 * results.floors[attr] if attr else np.nan,
                }
            )
    return pd.DataFrame(rows)


def _decades(values: pd.Series, most: int = 6) -> list[float]:
    """Powers of ten spanning ``values`` (positive), every second or third one when there are many."""
    lo, hi = np.floor(np.log10(values.min())), np.ceil(np.log10(values.max()))
    exps = np.arange(lo, hi + 1)
    step = int(np.ceil(len(exps) / most))
    return [float(10.0**e) for e in exps[::step]]


def curves_chart(results: StressResults) -> alt.Chart:
    """Every metric over the whole grid, one line per intervention: the four label-free numbers
    (variance, RankMe and PR on log axes), overlap@k with the unchanged top-k, then balanced
    accuracy and P@k per attribute (dashed: random floor). Click the legend to isolate one."""
    data = long_grid(results)
    data["severity label"] = data["severity"].map(_sev)
    ticks = [_sev(s) for s in sorted(results.grid["severity"].unique())]
    pick = alt.selection_point(fields=["intervention"], bind="legend")
    names = [LABELS[n] for n in INTERVENTIONS]
    color = alt.Color("intervention:N", sort=names, title="intervention", scale=theme.scale(names))
    shape = alt.Shape("intervention:N", sort=names, title="intervention", scale=alt.Scale(domain=names))

    def panel(col: str, log: bool = False, floor: bool = False):
        part = data[data["panel"] == col]
        title = part["metric"].iloc[0] + (" (log)" if log else "")
        scale = alt.Scale(type="log") if log else alt.Scale(zero=False)
        axis = alt.Axis(values=_decades(part["value"]), format="~g") if log else alt.Axis()
        line = alt.Chart(part).encode(
            x=alt.X("severity label:O", sort=ticks, title="severity s"),
            y=alt.Y("value:Q", title=None, scale=scale, axis=axis),
            color=color,
            opacity=alt.condition(pick, alt.value(0.9), alt.value(0.1)),
            tooltip=["intervention", "severity", alt.Tooltip("value:Q", title=title, format=".4g")],
        )
        # lines that coincide (contraction leaves most metrics exactly unchanged) stay told apart by shape
        layers = [line.mark_line(strokeWidth=1.6), line.mark_point(size=40, filled=True).encode(shape=shape)]
        if floor:
            layers.append(
                alt.Chart(part.head(1))
                .mark_rule(strokeDash=theme.DASHES["reference"], color="black")
                .encode(y="floor:Q", tooltip=[alt.Tooltip("floor:Q", title="random floor (%)", format=".2f")])
            )
        return alt.layer(*layers).properties(width=theme.panel_width(3), height=130, title=title)

    geometry = [panel(c, log) for c, _, log in GEOMETRY] + [panel(f"overlap@{results.k}")]
    geometry[0] = geometry[0].add_params(pick)
    ba = [panel(f"{a} BA") for a in results.attributes if f"{a} BA" in results.grid]
    p = [panel(f"{a} P@{results.k}", floor=True) for a in results.attributes]
    rows = [alt.hconcat(*geometry[:3]), alt.hconcat(*geometry[3:])] + ([alt.hconcat(*ba)] if ba else [])
    return alt.vconcat(*rows, alt.hconcat(*p)).configure_legend(orient="bottom")


def contraction_table(results: StressResults) -> pd.DataFrame:
    """Contraction's before (severity 0) and after (the top severity) for every metric, their ratio
    and the ratio the mapping predicts: ``(1 - s)**2`` for total variance, 1 for all else."""
    s = results.top
    before, after = results.unchanged, results.row("contraction", s)
    metrics = [c for c in results.grid.columns[2:] if not c.endswith(" accuracy")]
    labels = {c: lab for c, lab, _ in GEOMETRY}
    table = pd.DataFrame(
        {
            "before (s = 0)": [before[c] for c in metrics],
            f"after (s = {_sev(s)})": [after[c] for c in metrics],
        },
        index=pd.Index([labels.get(c, c) for c in metrics], name="metric"),
    )
    table["after / before"] = table.iloc[:, 1] / table.iloc[:, 0]
    table["predicted ratio"] = [(1 - s) ** 2 if c == "total_variance" else 1.0 for c in metrics]
    return table


def read_study(path=None) -> pd.DataFrame:
    """The study's severe table (``data/study/stress_severe.csv``), values exactly as printed
    (strings), indexed by ``condition``; the random-neighbour floor of weather P@10 is the row
    ``random-neighbour floor``."""
    return read_published("stress_severe.csv", path, dtype=str, keep_default_na=False).set_index("condition")


def _number(text: str) -> float:
    return float(text) if text != "" else np.nan


#: The study's columns (CSV name, display label, our grid column with ``{a}``/``{k}`` placeholders, format).
STUDY_COLUMNS = (
    ("total_variance", "variance", "total_variance", "{:.5g}"),
    ("mean_cosine", "mean cosine", "mean_cosine", "{:.6f}"),
    ("rankme", "RankMe", "rankme", "{:.2f}"),
    ("participation_ratio", "PR", "participation_ratio", "{:.2f}"),
    ("weather_ba_pct", "{a} BA %", "{a} BA", "{:.2f}"),
    ("weather_p_at_10_pct", "{a} P@{k} %", "{a} P@{k}", "{:.2f}"),
)


def severe_frame(results: StressResults, attribute: str | None = None, study: pd.DataFrame | None = None):
    """The study's severe rows in its layout, as numbers: each quantity as two columns, the
    study's value and this run's (at the grid's top severity; percent for BA and P@k). The
    study's attribute columns are weather's; a last row gives the random floor of P@k (NaN
    elsewhere, as where a value was not measured)."""
    attribute = check_attribute(attribute or results.attribute, results.attributes)
    study = read_study() if study is None else study
    k, s = results.k, results.top
    src = {UNCHANGED: results.unchanged, **{n: results.row(n, s) for n in INTERVENTIONS}}
    order = [UNCHANGED, "contraction", "rank_restriction", "common_offset", "noise"]
    columns, rows = [], []
    for _, label, _, _ in STUDY_COLUMNS:
        label = label.format(a=attribute, k=k)
        columns += [(label, _study_label(attribute)), (label, "this run")]
    for name in order:
        cells = []
        for csv, _, col, _ in STUDY_COLUMNS:
            col = col.format(a=attribute, k=k)
            ours = src[name].get(col, np.nan)
            cells += [_number(study.loc[STUDY_NAMES[name], csv]), 100 * ours if _percent(results, col) else ours]
        rows.append(cells)
    rows.append(
        [np.nan, np.nan] * (len(STUDY_COLUMNS) - 1)
        + [_number(study.loc["random-neighbour floor", "weather_p_at_10_pct"]), 100 * results.floors[attribute]]
    )
    this_run = (
        [UNCHANGED] + [f"{_condition(results, n)}, s = {_sev(s)}" for n in order[1:]] + ["random-neighbour floor"]
    )
    index = pd.MultiIndex.from_arrays(
        [[STUDY_NAMES[n] for n in order] + ["random-neighbour floor"], this_run],
        names=["study's condition", "this run"],
    )
    return pd.DataFrame(rows, index=index, columns=pd.MultiIndex.from_tuples(columns), dtype=float)


def _study_label(attribute: str) -> str:
    return "study" if attribute == "weather" else "study (weather)"


def severe_table(results: StressResults, attribute: str | None = None, study: pd.DataFrame | None = None):
    """:func:`severe_frame` as a Styler: the study's values exactly as printed, this run's in the
    study's precision, blank where there is no value."""
    attribute = check_attribute(attribute or results.attribute, results.attributes)
    study = read_study() if study is None else study
    frame = severe_frame(results, attribute, study)
    fmt = {}
    for csv, label, _, ours in STUDY_COLUMNS:
        label = label.format(a=attribute, k=results.k)
        printed = {_number(v): v for v in study[csv] if v != ""}
        fmt[(label, _study_label(attribute))] = lambda v, printed=printed: printed.get(v, f"{v:g}")
        fmt[(label, "this run")] = ours
    return frame.style.format(fmt, na_rep="")


def severe_compared(frame: pd.DataFrame) -> np.ndarray:
    """Rows of :func:`severe_frame` whose highest and lowest values are worth marking: the
    conditions, not the random-floor row."""
    return np.asarray(frame.index.get_level_values(0) != "random-neighbour floor")


def _rel_equal(a: float, b: float, tol: float) -> bool:
    return abs(a - b) <= tol * max(abs(a), abs(b), np.finfo(float).tiny)


#: A relative change below this is float rounding: stated as a bound, not as its last bits.
ROUNDING = 1e-12


def _rounding(change: float) -> str:
    """A relative change in words: below :data:`ROUNDING` it is rounding, whose size depends on
    the float path, so the bound is printed instead of the value."""
    return f"below {ROUNDING:.0e} (rounding)" if change < ROUNDING else f"{change:.1e}"


def findings(results: StressResults, attribute: str | None = None, study: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per finding of the study's stress section: ``finding``, ``criterion``
    (:data:`CRITERIA`), ``study`` and ``this run`` (the numbers in words) and ``reproduces``
    (bool), for ``attribute`` (default: the headline one). The study's numbers are weather's."""
    attribute = check_attribute(attribute or results.attribute, results.attributes)
    study = read_study() if study is None else study
    values = [csv for csv, *_ in STUDY_COLUMNS]
    num = {c: {v: _number(r[v]) for v in values} for c, r in study.iterrows()}
    su, sfloor = num["unchanged"], num["random-neighbour floor"]["weather_p_at_10_pct"]
    k, s, g = results.k, results.top, results.grid
    u, floor = results.unchanged, 100 * results.floors[attribute]
    p, ba = f"{attribute} P@{k}", f"{attribute} BA"
    has_ba = ba in g
    rows = []

    sn, n, gap = num[STUDY_NAMES["noise"]], results.row("noise", s), results.noise_gaps[attribute]
    rows.append(
        (
            f"RankMe {su['rankme']:.2f} → {sn['rankme']:.2f}; weather P@10 {sn['weather_p_at_10_pct']:.2f}% "
            f"vs floor {sfloor:.2f}% ({sn['weather_p_at_10_pct'] - sfloor:+.2f} pp)",
            f"RankMe {u['rankme']:.2f} → {n['rankme']:.2f}; {p} {100 * n[p]:.2f}% vs floor {floor:.2f}% "
            f"({100 * gap.mean:+.2f} pp, 95% interval [{100 * gap.low:+.2f}, {100 * gap.high:+.2f}])",
            n["rankme"] > u["rankme"] and -_FLOOR_PP <= 100 * gap.low and 100 * gap.high <= _FLOOR_PP,
        )
    )

    sc = num[STUDY_NAMES["contraction"]]
    same = ("mean_cosine", "rankme", "participation_ratio", "weather_ba_pct", "weather_p_at_10_pct")
    contraction = g[(g["intervention"] == "contraction") & (g["severity"] > 0)]
    others = [c for c in g.columns[2:] if c.endswith((" BA", f" P@{k}", " accuracy"))]
    ok = all(
        _rel_equal(r["total_variance"], (1 - r["severity"]) ** 2 * u["total_variance"], _TOL_EXACT)
        and all(_rel_equal(r[c], u[c], _TOL_EXACT) for c in ("mean_cosine", "rankme", "participation_ratio"))
        and r[f"overlap@{k}"] == 1.0
        and all(abs(r[c] - u[c]) <= _TOL_VALUES for c in others)
        for _, r in contraction.iterrows()
    )
    worst = max(
        abs(r[c] / u[c] - 1)
        for _, r in contraction.iterrows()
        for c in ("mean_cosine", "rankme", "participation_ratio")
    )
    c = results.row("contraction", s)
    rows.append(
        (
            f"variance {su['total_variance']:.5g} → {sc['total_variance']:.5g} (ratio "
            f"{sc['total_variance'] / su['total_variance']:.2g}); mean cosine, RankMe, PR, BA and P@10 "
            f"{'as printed unchanged' if all(sc[c] == su[c] for c in same) else 'changed'}",
            f"variance {u['total_variance']:.5g} → {c['total_variance']:.5g} at s = {_sev(s)} (ratio "
            f"{c['total_variance'] / u['total_variance']:.6g}); largest relative change of mean cosine, RankMe, PR "
            f"over {len(contraction)} severities {_rounding(worst)}; min overlap@{k} "
            f"{contraction[f'overlap@{k}'].min():.4g}",
            ok,
        )
    )

    so, o = num[STUDY_NAMES["common_offset"]], results.row("common_offset", s)
    rows.append(
        (
            f"variance {su['total_variance']:.5g} → {so['total_variance']:.5g}, PR {su['participation_ratio']:.2f} → "
            f"{so['participation_ratio']:.2f}, RankMe {su['rankme']:.2f} → {so['rankme']:.2f}",
            f"variance {u['total_variance']:.6g} → {o['total_variance']:.6g}, PR {u['participation_ratio']:.4f} → "
            f"{o['participation_ratio']:.4f}, RankMe {u['rankme']:.2f} → {o['rankme']:.2f}",
            _rel_equal(o["total_variance"], u["total_variance"], _TOL_CENTRED)
            and _rel_equal(o["participation_ratio"], u["participation_ratio"], _TOL_CENTRED)
            and o["rankme"] < _COLLAPSED,
        )
    )

    sr, r = num[STUDY_NAMES["rank_restriction"]], results.row("rank_restriction", s)
    kept = n_kept(results.d, s)
    rows.append(
        (
            f"weather BA {su['weather_ba_pct']:.2f}% → {sr['weather_ba_pct']:.2f}% "
            f"({sr['weather_ba_pct'] - su['weather_ba_pct']:+.2f} pp), 8 of 768 directions",
            (
                f"{ba} {100 * u[ba]:.2f}% → {100 * r[ba]:.2f}% ({100 * (r[ba] - u[ba]):+.2f} pp), "
                f"{kept} of {results.d} directions"
            )
            if has_ba
            else "not measured (probes off)",
            has_ba and 100 * (u[ba] - r[ba]) >= _BA_COST,
        )
    )
    return verdicts(CRITERIA, [(f, *row) for f, row in zip(CRITERIA, rows)])
