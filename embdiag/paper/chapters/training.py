"""The training chapters (03, with the training-length ladder, and the appendix of all seven
variants, 15): their figures, tables and wording, drawn from the section's measurement
(:mod:`embdiag.study.training`: the sweep's records, the ladder's runs and the findings decided
on them).

Every function takes the records table (one row per run), the paired-difference table, the
ladder's records or the section's measurement and returns an Altair chart, a DataFrame, a pandas
Styler or text; none computes a metric or decides a finding. Percentages are shown in percentage
points; variance on a log axis.
"""

from __future__ import annotations

import html

import altair as alt
import numpy as np
import pandas as pd

from ...study.training import LABELS_PP, METRICS, ORDER, Training, findings_by_length, means, words
from ...training.conditions import COMPARISONS, CONDITIONS
from ...training.inputs import ATTRIBUTES
from ...training.ladder import CONDITIONS as LADDER_CONDITIONS, CONTRASTS as LADDER_CONTRASTS
from ...training.ladder import measured as ladder_measured, trend as ladder_trend
from ...training.sweep import UNTRAINED, Task
from ...view import theme
from ...view.result import Result, box
from ..findings import result as protocol_result

ATTRIBUTE_NAMES = {"timeofday": "time of day", "weather": "weather", "scene": "scene"}
HEADLINE = ("EMA reference", "Contracted control", UNTRAINED)
FLOORS = {"accuracy": "majority", "BA": None, "P@10": "random P@10"}
#: The fixed axis of every percent metric (probe accuracy, balanced accuracy, P@10), as the study drew them.
PERCENT = alt.Scale(domain=[0, 100], nice=False)


def _column(stem: str, attribute: str | None) -> str:
    return f"{attribute} {stem}" if attribute else stem


def long_records(records: pd.DataFrame, attributes=ATTRIBUTES) -> pd.DataFrame:
    """One row per run and metric, and per attribute for the per-attribute metrics:
    ``condition``, ``seed``, ``status``, ``attribute`` (``""`` for the label-free geometry,
    which a chart's attribute selector always keeps), ``metric``, ``value``, ``floor``
    (majority or random floor, where defined); percentages in points."""
    rows = []
    for _, r in records.iterrows():
        for stem, label, per_attr, pct, _ in METRICS:
            for a in attributes if per_attr else [None]:
                value = r.get(_column(stem, a), np.nan)
                floor = r.get(f"{a} {FLOORS[stem]}", np.nan) if per_attr and FLOORS[stem] else np.nan
                scale = 100.0 if pct else 1.0
                rows.append(
                    {
                        "condition": r["condition"],
                        "seed": int(r["seed"]),
                        "status": r["status"],
                        "attribute": ATTRIBUTE_NAMES.get(a, a) if a else "",
                        "metric": label,
                        "value": scale * value,
                        "floor": scale * floor,
                    }
                )
    return pd.DataFrame(rows)


def condition_matrix(conditions=CONDITIONS) -> pd.DataFrame:
    """The condition matrix: one row per condition, ``yes``/``no`` for each of its four
    switches (stop-gradient, EMA target, SIGReg, projector), in the conditions' order."""
    switches = {"stop-gradient": "stop_gradient", "EMA target": "ema", "SIGReg": "sigreg", "projector": "projector"}
    return pd.DataFrame(
        [
            {"condition": c.name, **{k: "yes" if getattr(c, a) else "no" for k, a in switches.items()}}
            for c in conditions
        ]
    ).set_index("condition")


def means_table(records: pd.DataFrame, attribute: str = "timeofday"):
    """:func:`means` as a Styler: every metric to four significant digits (the run count as is)."""
    table = means(records, attribute)
    return table.style.format({c: "{:.4g}" for c in table.columns if c != "runs"})


def _seed_and_mean(data: pd.DataFrame, y: alt.Y, conditions, width: int = 150, height: int = 190):
    """Seed marks (circles) and the five-seed mean (a wide tick) per condition."""
    x = alt.X("condition:N", sort=list(conditions), title=None, axis=alt.Axis(labelAngle=-40, labelLimit=160))
    color = alt.Color("condition:N", sort=list(conditions), scale=theme.scale(conditions), legend=None)
    base = alt.Chart(data).properties(width=width, height=height)
    points = base.mark_circle(size=38, opacity=0.7).encode(
        x=x, y=y, color=color, tooltip=["condition", "seed", "attribute", alt.Tooltip("value:Q", format=".4g")]
    )
    ticks = base.mark_tick(thickness=2.5, size=24, color="black").encode(x=x, y=alt.Y("mean(value):Q"))
    return points + ticks


def paired_percent(paired: pd.DataFrame) -> pd.DataFrame:
    """:func:`~embdiag.training.sweep.paired_table` with the chapters' metric labels and shares
    in percentage points (``a``, ``b``, ``difference``, ``mean``, ``low``, ``high``)."""
    out = paired.copy()
    for stem, label, _, pct, _ in METRICS:
        rows = out["metric"] == stem
        if pct:
            out.loc[rows, ["a", "b", "difference", "mean", "low", "high"]] *= 100.0
        out.loc[rows, "metric"] = label
    return out


HEADLINE_METRICS = ("total variance", "probe accuracy (%)", "P@10 (%)")


def headline_frame(records: pd.DataFrame, attributes=ATTRIBUTES) -> pd.DataFrame:
    """The data of :func:`headline_chart`: :func:`long_records` of the finished runs of
    :data:`HEADLINE` for total variance, probe accuracy and P@10 (without ``status``)."""
    data = long_records(records[records["condition"].isin(HEADLINE) & (records["status"] == "ok")], attributes)
    return data[data["metric"].isin(HEADLINE_METRICS)].drop(columns="status").reset_index(drop=True)


def headline_chart(records: pd.DataFrame, attributes=ATTRIBUTES) -> alt.Chart:
    """EMA reference vs contracted control vs the untrained encoder: total variance (log) beside
    a grid of probe accuracy and P@10 (rows, on one fixed 0–100% axis) per attribute (columns),
    floors as dashed rules; drawn from :func:`headline_frame`."""
    data = headline_frame(records, attributes)
    variance = _seed_and_mean(
        data[data["metric"] == "total variance"],
        alt.Y("value:Q", title="total variance (log)", scale=alt.Scale(type="log")),
        HEADLINE,
        width=120,
        height=300,
    ).properties(title="Spread")
    part = data[data["metric"].isin(["probe accuracy (%)", "P@10 (%)"])]
    layers = _seed_and_mean(part, alt.Y("value:Q", title=None, scale=PERCENT), HEADLINE, width=95, height=120)
    floor = (
        alt.Chart()
        .mark_rule(strokeDash=theme.DASHES["reference"], color="gray")
        .encode(y="mean(floor):Q", tooltip=[alt.Tooltip("mean(floor):Q", title="floor", format=".2f")])
    )
    grid = (
        alt.layer(layers, floor, data=part)
        .facet(
            row=alt.Row(
                "metric:N",
                title=None,
                sort=["probe accuracy (%)", "P@10 (%)"],
                header=alt.Header(labelAngle=-90, labelOrient="left"),
            ),
            column=alt.Column("attribute:N", title=None, sort=[ATTRIBUTE_NAMES[a] for a in attributes]),
        )
        .properties(title="Labels and neighbours (dashed: floor)")
    )
    return alt.hconcat(variance, grid)


def variants_frame(records: pd.DataFrame, attributes=ATTRIBUTES) -> pd.DataFrame:
    """The data of :func:`variants_chart`: :func:`long_records` of the finished runs (without ``status``)."""
    return long_records(records[records["status"] == "ok"], attributes).drop(columns="status")


def variants_chart(records: pd.DataFrame, attributes=ATTRIBUTES) -> alt.Chart:
    """Every condition and the untrained reference: each seed a mark, the mean a tick, one panel
    per metric (variance on a log axis, percentages on a fixed 0–100% axis), an attribute
    selector for the per-attribute metrics; drawn from :func:`variants_frame`."""
    data = variants_frame(records, attributes)
    names = [ATTRIBUTE_NAMES[a] for a in attributes]
    pick = alt.param(name="attribute", value=names[0], bind=alt.binding_select(options=names, name="attribute "))
    panels = []
    for stem, label, per_attr, pct, log in METRICS:
        scale = alt.Scale(type="log") if log else PERCENT if pct else alt.Scale(zero=False)
        y = alt.Y("value:Q", title=label, scale=scale)
        panel = _seed_and_mean(data[data["metric"] == label], y, ORDER, width=250, height=170)
        panels.append(
            panel.transform_filter((alt.datum.attribute == pick) | (alt.datum.attribute == "")).properties(
                title=label + (" (selected attribute)" if per_attr else "")
            )
        )
    rows = [alt.hconcat(*panels[i : i + 2]) for i in range(0, len(panels), 2)]
    return alt.vconcat(*rows).add_params(pick)


def differences_chart(
    diffs: pd.DataFrame, metrics=("probe accuracy (%)", "P@10 (%)", "RankMe"), attributes=ATTRIBUTES
) -> alt.Chart:
    """The declared paired comparisons: each seed's difference A minus B a dot, the mean a diamond,
    the paired Student-t 95% interval a line; one fixed axis per metric; attribute selector."""
    data = diffs[diffs["metric"].isin(metrics)].copy()
    data["attribute"] = data["attribute"].map(lambda a: ATTRIBUTE_NAMES.get(a, a))
    names = [ATTRIBUTE_NAMES[a] for a in attributes]
    pick = alt.param(name="attribute_pd", value=names[0], bind=alt.binding_select(options=names, name="attribute "))
    order = [f"{c.label}|{c.a} − {c.b}" for c in COMPARISONS]  # two label lines: the effect, then A − B
    data["A − B"] = data["A"] + " − " + data["B"]
    data["contrast"] = data["comparison"] + "|" + data["A − B"]
    panels = []
    for metric in metrics:
        part = data[data["metric"] == metric]
        lo, hi = np.nanmin(part[["difference", "low"]].to_numpy()), np.nanmax(part[["difference", "high"]].to_numpy())
        pad = 0.05 * (hi - lo or 1.0)
        x_scale = alt.Scale(domain=[min(lo - pad, 0), max(hi + pad, 0)])  # one fixed axis per metric
        y = alt.Y(
            "contrast:N",
            sort=order,
            title=None,
            axis=alt.Axis(labelLimit=320, labelExpr="split(datum.label, '|')", labelPadding=4),
        )
        base = alt.Chart(part).transform_filter((alt.datum.attribute == pick) | (alt.datum.attribute == ""))
        dots = base.mark_circle(size=30, opacity=0.6, color=theme.PALETTE["blue"]).encode(
            x=alt.X("difference:Q", title=f"{metric}: A − B", scale=x_scale),
            y=y,
            tooltip=["comparison", "A − B", "seed", alt.Tooltip("difference:Q", format=".3g")],
        )
        summary = base.transform_aggregate(
            mean="mean(mean)", low="mean(low)", high="mean(high)", groupby=["contrast", "comparison", "A − B"]
        )
        line = summary.mark_rule(strokeWidth=2, color="black").encode(x="low:Q", x2="high:Q", y=y)
        diamond = summary.mark_point(shape="diamond", size=90, filled=True, color="black").encode(
            x="mean:Q",
            y=y,
            tooltip=[
                "comparison",
                "A − B",
                alt.Tooltip("mean:Q", format=".3g"),
                alt.Tooltip("low:Q", format=".3g"),
                alt.Tooltip("high:Q", format=".3g"),
            ],
        )
        zero = (
            alt.Chart(pd.DataFrame({"x": [0.0]}))
            .mark_rule(color="gray", strokeDash=theme.DASHES["reference"])
            .encode(x="x:Q")
        )
        panels.append(alt.layer(zero, line, dots, diamond).properties(width=300, height=200, title=metric))
    return alt.vconcat(*panels).add_params(pick)


TRAJECTORY_COLUMNS = ("prediction_loss", "total_variance", "rankme")


def trajectories_frame(trajectories: pd.DataFrame, attribute: str = "timeofday") -> pd.DataFrame:
    """The data of :func:`trajectories_chart`: one row per run and evaluation, each run starting
    from its seed's untrained encoder at step 0: ``run``, ``condition``, ``seed``, ``step``,
    prediction loss, total variance, RankMe and P@10 of ``attribute`` (in points)."""
    start = trajectories[trajectories["condition"] == UNTRAINED]
    runs = trajectories[trajectories["condition"] != UNTRAINED]
    starts = [
        start[start["seed"] == s].assign(condition=c)
        for c, s in runs[["condition", "seed"]].drop_duplicates().itertuples(index=False)
    ]
    data = pd.concat([*starts, runs], ignore_index=True)
    data["run"] = data["condition"] + " s" + data["seed"].astype(str)
    p10 = f"{attribute} P@10"
    data = data[["run", "condition", "seed", "step", *TRAJECTORY_COLUMNS, p10]]
    return data.assign(**{p10: 100.0 * data[p10]}).rename(columns={p10: f"{p10} (%)"})


def trajectories_chart(trajectories: pd.DataFrame, attribute: str = "timeofday") -> alt.Chart:
    """Every run's evaluations over training steps, from its seed's untrained encoder at step 0:
    prediction loss, total variance (log), RankMe and P@10 of ``attribute`` (0–100%); one line per run,
    colour by condition; click the legend to isolate a condition. (Probes are fitted only at
    the final step, so they have no trajectory.) Drawn from :func:`trajectories_frame`."""
    data = trajectories_frame(trajectories, attribute)
    pick = alt.selection_point(fields=["condition"], bind="legend")
    conditions = [c.name for c in CONDITIONS]
    panels = []
    for col, label, scale in (
        ("prediction_loss", "prediction loss", alt.Scale(zero=False)),
        ("total_variance", "total variance (log)", alt.Scale(type="log")),
        ("rankme", "RankMe", alt.Scale(zero=False)),
        (f"{attribute} P@10 (%)", f"P@10, {ATTRIBUTE_NAMES.get(attribute, attribute)} (%)", PERCENT),
    ):
        part = data[["condition", "seed", "run", "step", col]].rename(columns={col: "value"}).dropna()
        panels.append(
            alt.Chart(part)
            .mark_line(strokeWidth=1.2, point=alt.OverlayMarkDef(size=12))
            .encode(
                x=alt.X("step:Q"),
                y=alt.Y("value:Q", title=label, scale=scale),
                color=alt.Color("condition:N", sort=conditions, scale=theme.scale(conditions)),
                detail="run:N",
                opacity=alt.condition(pick, alt.value(0.85), alt.value(0.08)),
                tooltip=["run", "step", alt.Tooltip("value:Q", format=".4g")],
            )
            .properties(width=260, height=170, title=label)
        )
    panels[0] = panels[0].add_params(pick)  # defined once, read by every panel
    return alt.vconcat(alt.hconcat(*panels[:2]), alt.hconcat(*panels[2:])).configure_legend(
        orient="bottom", columns=2, labelLimit=260
    )


def caption(what: str, n_seeds: int, uncertainty: str, steps: str | None = None) -> str:
    """An exhibit caption (plain text): ``what`` is shown, ``steps`` (the schedule, when it is not
    the profile's), the seeds per condition and ``uncertainty`` (how the seeds or intervals are
    shown). The data and model are named once, at the top of the page (:func:`profile_statement`)."""
    schedule = f" Runs of {steps}." if steps else ""
    return f"{what}{schedule} {n_seeds} seed{'' if n_seeds == 1 else 's'} per condition. {uncertainty}"


def profile_statement(cfg, steps: str | None = None) -> str:
    """One sentence naming the data, model and schedule of a profile's runs (for captions);
    ``steps`` replaces the profile's step count in words (e.g. for runs of several lengths)."""
    m, d = cfg.model, cfg.data
    return (
        f"profile `{cfg.profile}`: ViT width {m.width}, depth {m.depth}, {m.image_size} × {m.image_size} "
        f"images in {m.patch_size} × {m.patch_size} patches ({(m.image_size // m.patch_size) ** 2} tokens), "
        f"batch {cfg.batch_size}, {steps or f'{cfg.steps:,} steps'}, trained on {d.n_pool:,} unlabelled "
        f"procedural scenes and measured on {d.n_train:,} + {d.n_val:,} labelled ones (synthetic driving scenes "
        f"generated by `embdiag.data`, seed {d.seed}; not BDD100K)"
    )


def steps_of(measured: Training) -> int:
    """The training length of ``measured``'s profile (its records folder), in steps."""
    return Task(measured.settings.profile, UNTRAINED, 0).config().steps


def ladder_sentence(measured: Training) -> str:
    """How the control's probe-accuracy gap to the EMA reference moves across the ladder's
    lengths (:func:`embdiag.training.ladder.trend`), with its mean at the shortest and the longest
    length measured on two seeds or more; plain text."""
    table, contrast = measured.gaps, LADDER_CONTRASTS[0][0]
    lengths = ladder_measured(table, contrast)
    name = ATTRIBUTE_NAMES.get(measured.settings.attribute, measured.settings.attribute)
    if len(lengths) < 2:
        return f"The control's {name} label gap to the EMA reference is not yet measured at two training lengths."
    gap = table[table["contrast"] == contrast].set_index("steps")["mean"]
    return (
        f"Across {len(lengths)} training lengths the control's {name} probe-accuracy gap to the EMA reference "
        f"{ladder_trend(table, contrast)}: {gap[lengths[0]]:+.1f} pp at {lengths[0]:,} steps, "
        f"{gap[lengths[-1]]:+.1f} pp at {lengths[-1]:,}."
    )


def result(measured: Training, verdicts: pd.DataFrame) -> Result:
    """The training page's result box: ``verdicts`` (:func:`embdiag.study.training.findings` of
    ``measured``) at the profile's length, named as the longest trained where it is, then
    :func:`ladder_sentence`."""
    steps, longest = steps_of(measured), int(measured.ladder["steps"].max()) if len(measured.ladder) else 0
    at = f"{steps:,} steps" + (
        ", the longest training here," if steps >= longest else f" (the longest is {longest:,}),"
    )
    name = ATTRIBUTE_NAMES.get(measured.settings.attribute, measured.settings.attribute)
    boxed = protocol_result(verdicts, f"At {at} {{held}} of {{measured}} training findings hold on {name}")
    body, end = boxed.html.rsplit("</p>", 1)
    return Result(f"{body} {html.escape(ladder_sentence(measured), quote=False)}</p>{end}")


def variants_result(records: pd.DataFrame, paired: pd.DataFrame, steps: int, attribute: str = "timeofday") -> Result:
    """The variants page's result box: of the runs in ``records`` (one length, ``steps``), how
    many finished, which condition has the highest mean total variance, probe accuracy and P@10
    on ``attribute``, and how many of the declared comparisons' intervals exclude zero
    (``paired``: :func:`paired_percent`)."""
    name = ATTRIBUTE_NAMES.get(attribute, attribute)
    runs = records[records["condition"] != UNTRAINED]
    m = means(records, attribute).drop(index=UNTRAINED, errors="ignore")
    top = {label: str(m[label].idxmax()) for label in ("total variance", "probe accuracy (%)", "P@10 (%)")}
    leaders = (
        f"Highest mean total variance: <strong>{html.escape(top['total variance'])}</strong>; on {name}, highest "
        f"probe accuracy: <strong>{html.escape(top['probe accuracy (%)'])}</strong>, highest P@10: "
        f"<strong>{html.escape(top['P@10 (%)'])}</strong>"
    )
    contrasts = paired[paired["attribute"] == attribute].drop_duplicates(["metric", "comparison"])
    excluded = []
    for label in ("probe accuracy (%)", "P@10 (%)"):
        c = contrasts[contrasts["metric"] == label]
        excluded.append(f"{int(((c['low'] > 0) | (c['high'] < 0)).sum())} of {len(c)} in {label.split(' (')[0]}")
    n = int(contrasts["n"].min()) if len(contrasts) else 0
    return box(
        f"At {steps:,} steps, {int((runs['status'] == 'ok').sum())} of {len(runs)} runs of "
        f"{runs['condition'].nunique()} conditions finished. {leaders}. Declared comparisons whose interval "
        f"excludes zero on {name}: {' and '.join(excluded)} (paired Student-t 95% intervals over {n} seeds)."
    )


def headline_result(measured: Training) -> Result:
    """:func:`headline_text` as a result box, for the cover's first screen."""
    return box(headline_text(measured))


def headline_text(measured: Training) -> str:
    """The training headline (HTML), for the first screen of the cover and the conclusions: the
    verdict of *labels survive* at every length of the ladder, the control's probe-accuracy gap
    to the EMA reference with its paired Student-t 95% interval at each length and how it moves,
    and the other findings' verdicts at the longest length (``measured``: the section's
    measurement, :func:`embdiag.study.training.run`)."""
    by_length = findings_by_length(measured)
    table = measured.gaps
    contrast = LADDER_CONTRASTS[0][0]
    attribute = measured.settings.attribute
    name = ATTRIBUTE_NAMES.get(attribute, attribute)
    lengths = sorted(by_length["steps"].unique())
    survive = by_length[by_length["finding"] == "labels survive"].set_index("steps")["verdict"]
    verdict = survive.iloc[0] if survive.nunique() == 1 else None
    said = (
        f"is <strong>{verdict}</strong> at every one of the {len(lengths)} training lengths"
        if verdict
        else "is " + ", ".join(f"{v} at {n:,} steps" for n, v in survive.items())
    )
    gap = table[table["contrast"] == contrast].set_index("steps")
    steps_words = "; ".join(
        f"{words(r['mean'], r['low'], r['high'], int(r['n']))} at {n:,} steps" for n, r in gap.iterrows()
    )
    longest = by_length[(by_length["steps"] == lengths[-1]) & (by_length["finding"] != "labels survive")]
    others = "; ".join(
        f"<em>{html.escape(r['finding'])}</em> {r['verdict']} ({html.escape(r['this run'], quote=False)})"
        for _, r in longest.iterrows()
    )
    return (
        f"The study's training headline, that the unprotected control collapses in spread yet keeps its labels "
        f"(<em>labels survive</em>: control minus EMA reference probe accuracy within ±{LABELS_PP:g} pp), "
        f"{said} in this project's runs, and the gap <strong>{ladder_trend(table, contrast)}</strong> with "
        f"length. Control minus EMA reference, {name} probe accuracy: {steps_words} (paired Student-t 95% "
        f"intervals over seeds). At {lengths[-1]:,} steps, among the ladder's conditions: {others}. "
        "Small ViTs trained here on procedural "
        "driving scenes, not BDD100K at the study's scale."
    )


# -- the training-length ladder ----------------------------------------------------------------
def length_frame(records: pd.DataFrame, attribute: str = "timeofday") -> pd.DataFrame:
    """What :func:`length_chart` plots: one row per run and metric (total variance, probe
    accuracy and P@10 on ``attribute``, percent), with ``steps``, ``condition`` and ``seed``."""
    metrics = (
        ("total_variance", "total variance", 1.0),
        (f"{attribute} accuracy", "probe accuracy (%)", 100.0),
        (f"{attribute} P@10", "P@10 (%)", 100.0),
    )
    rows = [
        {
            "steps": int(r["steps"]),
            "condition": r["condition"],
            "seed": int(r["seed"]),
            "metric": label,
            "value": scale * float(r[column]),
        }
        for _, r in records.iterrows()
        for column, label, scale in metrics
    ]
    return pd.DataFrame(rows)


def length_chart(
    frame: pd.DataFrame, study: pd.DataFrame | None = None, study_steps: int = 4000, attribute: str = "timeofday"
) -> alt.HConcatChart:
    """Each metric of :func:`length_frame` against training steps (log axis; percentages on a fixed
    0–100% axis): seeds as dots, the
    mean over seeds as a line per condition, the untrained encoder as a dashed rule, and the
    study's published time-of-day means (``study``, e.g. ``findings.read_study()``) as diamonds
    at its own ``study_steps`` (drawn only for ``attribute`` time of day)."""
    conditions = [c for c in LADDER_CONDITIONS if c in set(frame["condition"])]
    colour = alt.Color("condition:N", scale=theme.scale(conditions), legend=alt.Legend(orient="bottom"))
    steps = sorted(set(frame["steps"]))
    ends = [min(steps[0], study_steps) * 0.8, max(steps[-1], study_steps) * 1.25]
    x = alt.X(
        "steps:Q",
        scale=alt.Scale(type="log", domain=ends),  # ticks at the rungs; the study's own step
        axis=alt.Axis(values=steps, format=",d"),
        title="training steps (log)",
    )  # count is in the caption
    study_cols = {
        "total variance": "total_variance",
        "probe accuracy (%)": "probe_accuracy_pct",
        "P@10 (%)": "p_at_10_pct",
    }
    panels = []
    for metric in ("total variance", "probe accuracy (%)", "P@10 (%)"):
        data = frame[frame["metric"] == metric]
        trained = data[data["condition"] != UNTRAINED]
        y = alt.Y(
            "value:Q",
            title=metric if metric != "total variance" else "total variance (log)",
            scale=alt.Scale(type="log") if metric == "total variance" else PERCENT,
        )
        base = alt.Chart(trained)
        layers = [
            base.mark_circle(size=30, opacity=0.6).encode(
                x=x, y=y, color=colour, tooltip=["condition", "seed", "steps", "value"]
            ),
            base.mark_line(point=False).encode(x=x, y=alt.Y("mean(value):Q"), color=colour),
        ]
        untrained = data[data["condition"] == UNTRAINED]
        if len(untrained):
            layers.append(
                alt.Chart(pd.DataFrame({"value": [untrained["value"].mean()]}))
                .mark_rule(strokeDash=theme.DASHES["reference"], color="#555")
                .encode(y="value:Q")
            )
        if study is not None and attribute == "timeofday":  # the study published time-of-day means only
            s = pd.DataFrame(
                [
                    {"steps": study_steps, "condition": c, "value": float(study.loc[c, study_cols[metric]])}
                    for c in conditions
                    if c in study.index
                ]
            )
            layers.append(
                alt.Chart(s)
                .mark_point(shape="diamond", size=90, filled=True)
                .encode(x=x, y="value:Q", color=colour, tooltip=["condition", alt.Tooltip("value:Q", title="study")])
            )
        panels.append(alt.layer(*layers).properties(width=theme.panel_width(3, gap=80), height=200, title=metric))
    return alt.hconcat(*panels).resolve_scale(y="independent")


# -- the substrate: the length at which the seven conditions are compared -----------------------
def _metric_label(column: str) -> str:
    """``"weather BA"`` as ``"weather, balanced accuracy"``."""
    attribute, stem = column.split(" ", 1)
    names = {"accuracy": "probe accuracy", "BA": "balanced accuracy", "P@10": "P@10"}
    return f"{ATTRIBUTE_NAMES.get(attribute, attribute)}, {names.get(stem, stem)}"


def substrate_table(table: pd.DataFrame, criterion=None) -> pd.DataFrame:
    """:func:`embdiag.training.ladder.substrate` as words: one row per metric and a last row
    whether the length meets the criterion, one column per length; each cell the EMA reference
    minus the untrained encoder, mean and interval in percentage points, marked *above 0* or
    *above the margin* (on a probe metric) where its lower bound is."""
    from ...training.ladder import SUBSTRATE, substrate_length

    criterion = SUBSTRATE if criterion is None else criterion
    probes = set(criterion.probe.values())

    def cell(r) -> str:
        text = f"{r['mean']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}]"
        if r["above_margin"] and r["metric"] in probes:
            return f"{text}, above {criterion.margin:g} pp"
        return f"{text}, {'above 0' if r['above_zero'] else 'not above 0'}"

    words = table.assign(value=table.apply(cell, axis=1), metric=table["metric"].map(_metric_label))
    out = words.pivot(index="metric", columns="steps", values="value")
    out = out.reindex([_metric_label(m) for m in criterion.metrics])
    chosen = substrate_length(table, criterion)
    verdict = {}
    for steps, at in table.groupby("steps"):
        margin = int(at[at["metric"].isin(probes)]["above_margin"].sum())
        meets = "meets" if substrate_length(at, criterion) == steps else "does not meet"
        verdict[steps] = (
            f"{meets} ({int(at['above_zero'].sum())} of {len(at)} above 0; margin on {margin} of "
            f"{len(probes)} attributes)" + (" — chosen" if steps == chosen else "")
        )
    out.loc["criterion"] = pd.Series(verdict)
    return out.rename(columns=lambda n: f"{n:,} steps").rename_axis(index="EMA − untrained, pp", columns=None)
