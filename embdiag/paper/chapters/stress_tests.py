"""The stress-test chapter's exhibits, drawn from one measurement of the section.

Every function reads a :class:`~embdiag.study.stress_tests.StressResults` (measured by
:func:`embdiag.study.stress_tests.run`, which also decides the findings) or a table of
:func:`~embdiag.interventions.identities.exact_responses`, and computes no metric:
the study's headline figure (:func:`headline_chart`, in words :func:`headline_text`), what each
severity means (:func:`severity_table`), curves over the grid (:func:`curves_chart`), the note on the exact
responses (:func:`exact_note`, :func:`identities_table`, in a :func:`note`) and the severe rows
beside the study's (:func:`severe_table`, the study's values as printed in
``data/study/stress_severe.csv``).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

from ...interventions.stress import INTERVENTIONS, n_kept
from ...study import check_attribute
from ...study.stress_tests import STUDY_NAMES, StressResults, read_study, severity_label
from ...view import theme

__all__ = [
    "LABELS",
    "GEOMETRY",
    "severity_table",
    "headline_frame",
    "headline_chart",
    "headline_text",
    "long_grid",
    "curves_chart",
    "exact_note",
    "identities_table",
    "note",
    "severe_frame",
    "severe_table",
    "severe_compared",
]


#: Display names of the interventions (the study's words: :data:`~embdiag.study.stress_tests.STUDY_NAMES`).
LABELS = {
    "contraction": "contraction",
    "common_offset": "common offset",
    "rank_restriction": "rank restriction",
    "noise": "noise",
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


def severity_table(results: StressResults) -> pd.DataFrame:
    """What each severity means for these vectors: one row per severity (``s = ...``), one column
    per intervention and the quantity that sizes it (so each column has one unit)."""
    table = results.sizes.assign(intervention=results.sizes["intervention"].map(LABELS))
    table = table.pivot_table(index="severity", columns=["intervention", "quantity"], values="value", sort=False)
    table.index = pd.Index([f"s = {severity_label(s)}" for s in table.index], name="severity")
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
    ).properties(title=f"Each intervention at severity {severity_label(results.top)}")


#: Changes within these are rounding: a share's absolute change, a label-free number's relative one.
TOL_SHARE, TOL_RELATIVE = 1e-12, 1e-9
#: The two findings that set a label-free number against retrieval (:data:`~embdiag.study.stress_tests.CRITERIA`).
CONTRAST = ("noise: RankMe up, retrieval to chance", "common offset: centred spread kept, raw RankMe collapses")


def _moved(before: float, after: float, share: bool) -> str:
    """How ``after`` reads against ``before``: stays (within rounding), rises or falls, to its value."""
    shown = f"{100 * after:.2f}%" if share else f"{after:.2f}"
    if abs(after - before) <= (TOL_SHARE if share else TOL_RELATIVE * max(abs(before), abs(after))):
        return f"stays at {shown}"
    return f"{'rises' if after > before else 'falls'} to {shown}"


def headline_text(results: StressResults, attribute: str | None = None, verdicts: pd.DataFrame | None = None) -> str:
    """The headline figure in words (Markdown), every number and direction read from ``results``;
    with ``verdicts`` (:func:`embdiag.study.stress_tests.findings`), a last sentence saying whether
    the study's contrast (noise and the offset, :data:`CONTRAST`) holds here."""
    attribute = check_attribute(attribute or results.attribute, results.attributes)
    p, k, s = f"{attribute} P@{results.k}", results.k, results.top
    u, floor = results.unchanged, 100 * results.floors[attribute]

    def both(name: str) -> str:
        r = results.row(name, s)
        return f"RankMe {_moved(u['rankme'], r['rankme'], False)} and P@{k} {_moved(u[p], r[p], True)}"

    gap = 100 * results.row("noise", s)[p] - floor
    text = (
        f"Unchanged, RankMe is {u['rankme']:.2f} and {attribute} P@{k} {100 * u[p]:.2f}% (random floor "
        f"{floor:.2f}%). At s = {severity_label(s)}, under **noise** {both('noise')} ({gap:+.2f} pp from the "
        f"floor); under the **common offset** {both('common_offset')}; under **rank restriction** to "
        f"{n_kept(results.d, s)} of {results.d} directions {both('rank_restriction')}; under **contraction** "
        f"{both('contraction')}."
    )
    if verdicts is None:
        return text
    verdict = verdicts.set_index("finding")["verdict"]
    failing = [f for f in CONTRAST if verdict[f] != "holds"]
    if not failing:
        offset = results.row("common_offset", s)[p]
        moved = _moved(u[p], offset, True)
        moved += "" if moved.startswith("stays") else f" ({100 * (offset - u[p]):+.2f} pp)"
        return text + (
            f" As in the study, the offset collapses RankMe while P@{k} {moved}, and noise raises RankMe while "
            f"P@{k} falls to chance: a label-free number measures the distribution, not the task."
        )
    return text + (
        " The study's contrast between RankMe and retrieval is not fully reproduced here: "
        + "; ".join(f"*{f}* is {verdict[f]}" for f in failing)
        + " (see the findings)."
    )


def identities_table(table: pd.DataFrame):
    """:func:`~embdiag.interventions.identities.exact_responses` as a Styler: an exact identity's
    relative difference below :data:`TOL_RELATIVE` shows as rounding (its last bits depend on the
    float path), the noise rows' as a number."""

    def difference(value: float) -> str:
        return f"below {TOL_RELATIVE:.0e}" if value < TOL_RELATIVE else f"{value:.1e}"

    formats = {"severity": severity_label, "predicted": "{:.6g}", "measured": "{:.6g}", "relative error": difference}
    return table.style.format(formats).hide(axis="index")


def exact_note(table: pd.DataFrame) -> str:
    """Why contraction and the common offset respond exactly, as the body of a note (HTML): the
    algebra, then how closely :func:`~embdiag.interventions.identities.exact_responses`' ``table``
    of these vectors bears it out (every number read from ``table``)."""
    exact, noisy = table[table["kind"] == "exact"], table[table["kind"] != "exact"]
    largest = float(exact["relative error"].max())
    held = (
        f"hold to float64 rounding (largest relative difference {largest:.0e})"
        if largest <= TOL_RELATIVE
        else f"differ by up to {largest:.1e}, more than rounding"
    )
    severities = ", ".join(severity_label(x) for x in sorted(table["severity"].unique()))
    return (
        "<p>Some responses are algebra, not experiments. <strong>Contraction</strong> x ↦ (1 − s)x multiplies "
        "the centred covariance by (1 − s)²: total variance scales by (1 − s)², while cosines (hence every "
        "top-k list), the normalised spectra behind RankMe and PR, and standardized probes do not move. A "
        "<strong>common offset</strong> x ↦ x + v leaves every x − x̄, hence total variance and PR, unchanged, "
        "but moves the raw spectrum that RankMe reads.</p>"
        f"<p>On these vectors, at s = {severities}, the {len(exact)} exact identities {held}; the "
        f"{len(noisy)} noise rows, true only in expectation, differ by up to "
        f"{float(noisy['relative error'].max()):.1e}. So the contraction and offset findings check the "
        "instruments and the code, not the encoder.</p>"
    )


@dataclass(frozen=True)
class Note:
    """A note box: ``html`` is a ``<div class="admonition note">`` (the book's admonition style)."""

    html: str

    def _repr_html_(self) -> str:
        return self.html


def note(title: str, body: str, *parts) -> Note:
    """A :class:`Note` titled ``title`` around ``body`` (HTML) and ``parts`` (exhibits, or
    anything with ``_repr_html_``)."""
    inner = "".join(p._repr_html_() for p in parts)
    return Note(
        f'<div class="admonition note"><p class="admonition-title">{html.escape(title, quote=False)}</p>'
        f"{body}{inner}</div>"
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
    data["severity label"] = data["severity"].map(severity_label)
    ticks = [severity_label(s) for s in sorted(results.grid["severity"].unique())]
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
        [UNCHANGED]
        + [f"{_condition(results, n)}, s = {severity_label(s)}" for n in order[1:]]
        + ["random-neighbour floor"]
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
