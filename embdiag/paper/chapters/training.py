"""The training chapters (03, with the training-length ladder, and the appendix of all seven
variants, 10): their figures, tables, wording and the study's training findings checked by
declared criteria, from the sweep's records (:func:`embdiag.training.sweep.load_records`).

Every function takes the records table (one row per run), the paired-difference table or the
ladder's records and returns an Altair chart, a DataFrame, a pandas Styler or Markdown text;
none computes a metric. Percentages are shown in percentage points; variance on a log axis.
Each finding of the published study's training section is restated as a criterion fixed
before looking at this project's numbers (:data:`CRITERIA`), then evaluated on the five-seed
means of the records (:func:`findings`), at every length of the ladder
(:func:`findings_by_length`) and, for the five declared paired comparisons, set side by side
with the published intervals (:func:`comparisons_side_by_side`). The published values are
read from ``data/study/`` (transcribed, never computed).
"""

from __future__ import annotations

import html

import altair as alt
import numpy as np
import pandas as pd

from ...training.conditions import COMPARISONS, CONDITIONS
from ...training.inputs import ATTRIBUTES
from ...training.ladder import CONDITIONS as LADDER_CONDITIONS, CONTRASTS as LADDER_CONTRASTS, CONTROL, EMA, at_length
from ...training.ladder import gaps as ladder_gaps, trend as ladder_trend
from ...metrics.inference import Decision, all_of, any_of, at_least, at_most, not_testable, within
from ...training.sweep import UNTRAINED, paired_differences, paired_seeds
from .. import theme
from ..findings import ADDITION, Claim, Result, box, read_published, verdicts

#: Metric columns in the order the chapters show them: (column stem, label, per attribute, percent, log axis).
METRICS = (
    ("total_variance", "total variance", False, False, True),
    ("rankme", "RankMe", False, False, False),
    ("participation_ratio", "participation ratio", False, False, False),
    ("mean_cosine", "mean cosine", False, False, False),
    ("accuracy", "probe accuracy (%)", True, True, False),
    ("BA", "balanced accuracy (%)", True, True, False),
    ("P@10", "P@10 (%)", True, True, False),
)
ATTRIBUTE_NAMES = {"timeofday": "time of day", "weather": "weather", "scene": "scene"}
ORDER = [UNTRAINED] + [c.name for c in CONDITIONS]
HEADLINE = ("EMA reference", "Contracted control", UNTRAINED)
FLOORS = {"accuracy": "majority", "BA": None, "P@10": "random P@10"}


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


def means(records: pd.DataFrame, attribute: str = "timeofday") -> pd.DataFrame:
    """Five-seed means per condition (runs with status ``ok``) of every metric for ``attribute``,
    with the number of runs that entered; percentages in points."""
    ok = records[records["status"] == "ok"]
    out = {}
    for stem, label, per_attr, pct, _ in METRICS:
        col = _column(stem, attribute if per_attr else None)
        out[label] = ok.groupby("condition", sort=False)[col].mean() * (100.0 if pct else 1.0)
    table = pd.DataFrame(out)
    table.insert(0, "runs", ok.groupby("condition", sort=False)["seed"].size())
    table = table.reindex([c for c in ORDER if c in table.index])
    table.index.name = "condition"
    return table


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
    a grid of probe accuracy and P@10 (rows) per attribute (columns), floors as dashed rules;
    drawn from :func:`headline_frame`."""
    data = headline_frame(records, attributes)
    variance = _seed_and_mean(
        data[data["metric"] == "total variance"],
        alt.Y("value:Q", title="total variance (log)", scale=alt.Scale(type="log")),
        HEADLINE,
        width=120,
        height=300,
    ).properties(title="Spread")
    part = data[data["metric"].isin(["probe accuracy (%)", "P@10 (%)"])]
    layers = _seed_and_mean(
        part, alt.Y("value:Q", title=None, scale=alt.Scale(zero=False)), HEADLINE, width=95, height=120
    )
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
        .resolve_scale(y="independent")
        .properties(title="Labels and neighbours (dashed: floor)")
    )
    return alt.hconcat(variance, grid)


def variants_frame(records: pd.DataFrame, attributes=ATTRIBUTES) -> pd.DataFrame:
    """The data of :func:`variants_chart`: :func:`long_records` of the finished runs (without ``status``)."""
    return long_records(records[records["status"] == "ok"], attributes).drop(columns="status")


def variants_chart(records: pd.DataFrame, attributes=ATTRIBUTES) -> alt.Chart:
    """Every condition and the untrained reference: each seed a mark, the mean a tick, one panel
    per metric (variance on a log axis), an attribute selector for the per-attribute metrics;
    drawn from :func:`variants_frame`."""
    data = variants_frame(records, attributes)
    names = [ATTRIBUTE_NAMES[a] for a in attributes]
    pick = alt.param(name="attribute", value=names[0], bind=alt.binding_select(options=names, name="attribute "))
    panels = []
    for stem, label, per_attr, _, log in METRICS:
        y = alt.Y("value:Q", title=label, scale=alt.Scale(type="log") if log else alt.Scale(zero=False))
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
    prediction loss, total variance (log), RankMe and P@10 of ``attribute``; one line per run,
    colour by condition; click the legend to isolate a condition. (Probes are fitted only at
    the final step, so they have no trajectory.) Drawn from :func:`trajectories_frame`."""
    data = trajectories_frame(trajectories, attribute)
    pick = alt.selection_point(fields=["condition"], bind="legend")
    conditions = [c.name for c in CONDITIONS]
    panels = []
    for col, label, log in (
        ("prediction_loss", "prediction loss", False),
        ("total_variance", "total variance (log)", True),
        ("rankme", "RankMe", False),
        (f"{attribute} P@10 (%)", f"P@10, {ATTRIBUTE_NAMES.get(attribute, attribute)} (%)", False),
    ):
        part = data[["condition", "seed", "run", "step", col]].rename(columns={col: "value"}).dropna()
        panels.append(
            alt.Chart(part)
            .mark_line(strokeWidth=1.2, point=alt.OverlayMarkDef(size=12))
            .encode(
                x=alt.X("step:Q"),
                y=alt.Y("value:Q", title=label, scale=alt.Scale(type="log") if log else alt.Scale(zero=False)),
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


#: Margins of the declared findings: the control's spread below 1% of the reference's (a log10
#: ratio below -2), labels within 3 points, neighbours at least 5 points lower, labels above
#: the untrained encoder's by any amount.
SPREAD_LOG10, LABELS_PP, NEIGHBOURS_PP, BEYOND_PP = -2.0, 3.0, 5.0, 0.0
_SEEDS = "paired Student-t 95% interval over seeds"
#: The study's training findings, each a claim decided by a paired Student-t interval over seeds
#: (the study's declared analysis) against its margin, fixed before this project's runs were made.
CRITERIA = {
    "spread collapses": Claim(
        f"log10 of the control's total variance over the EMA reference's, seed by seed, below {SPREAD_LOG10:g} "
        f"(variance under 1% of the reference's); {_SEEDS}",
        f"{SPREAD_LOG10:g} (log10 ratio)",
        "the study reports six orders of magnitude: a hundredfold is far inside its effect",
        was="control variance below 1% of the EMA reference's (five-seed means)",
    ),
    "labels survive": Claim(
        f"control minus EMA reference probe accuracy within ±{LABELS_PP:g} pp; {_SEEDS}",
        f"±{LABELS_PP:g} pp",
        "the study's gap was 1.04 pp and its seed intervals about ±1 pp: 3 pp is 'almost as well'",
        was="control probe accuracy within 3 points of the EMA reference's (five-seed means)",
    ),
    "labels beyond untrained": Claim(
        f"control minus untrained (step 0) encoder probe accuracy above {BEYOND_PP:g} pp; {_SEEDS}",
        f"{BEYOND_PP:g} pp",
        "any gain over the encoder's own initialisation shows training kept labels; none is declared by the study",
        kind=ADDITION,
        was="control probe accuracy above the untrained (step 0) encoder's (five-seed means)",
    ),
    "neighbours degrade": Claim(
        f"control minus EMA reference P@10 below -{NEIGHBOURS_PP:g} pp; {_SEEDS}",
        f"-{NEIGHBOURS_PP:g} pp",
        "the study's fall was 22 pp; 5 pp is a loss a user would notice in a top-10 list",
        was="control P@10 at least 5 points below the EMA reference's (five-seed means)",
    ),
    "geometry is not utility": Claim(
        "the condition with the highest mean variance is beaten, seed by seed, by another condition in probe "
        f"accuracy and by another in P@10 (each difference above 0 pp); {_SEEDS}",
        "0 pp",
        "an ordering: any difference whose interval excludes 0 reverses the geometric ranking",
        was="the condition with the highest variance differs from the one with the highest probe accuracy and "
        "from the one with the highest P@10 (five-seed means)",
    ),
}


def read_study(path=None) -> pd.DataFrame:
    """The study's published five-seed time-of-day means (``data/study/training_means.csv``),
    indexed by condition."""
    return read_published("training_means.csv", path, index_col="condition")


def _argmax(table: pd.DataFrame, column: str) -> str:
    return str(table.drop(index=UNTRAINED, errors="ignore")[column].idxmax())


def _paired(ok: pd.DataFrame, a: str, b: str, column: str, scale: float = 100.0) -> tuple[float, float, float, int]:
    seeds, _, _, (mean, low, high) = paired_seeds(ok, a, b, column)
    return scale * mean, scale * low, scale * high, len(seeds)


def _words(mean: float, low: float, high: float, n: int, unit: str = " pp") -> str:
    if n < 2:
        return f"{mean:+.2f}{unit} ({n} seed, no interval)"
    return f"{mean:+.2f}{unit} [{low:+.2f}, {high:+.2f}] ({n} seeds)"


def _beaten(ok: pd.DataFrame, top: str, column: str) -> tuple[Decision, str]:
    """Whether some condition beats ``top`` in ``column`` seed by seed (any interval above 0)."""
    rivals = [c for c in ok["condition"].unique() if c not in (top, UNTRAINED)]
    parts = {c: _paired(ok, c, top, column) for c in rivals}
    if not parts:
        return not_testable("no other condition was trained"), "no rival"
    decision = any_of(*(at_least(lo, hi, 0.0) for _, lo, hi, _ in parts.values()))
    best = max(parts, key=lambda c: parts[c][1] if not np.isnan(parts[c][1]) else -np.inf)
    return decision, f"{best} {_words(*parts[best])}"


def _old_verdicts(m: pd.DataFrame) -> dict:
    """The point-estimate verdicts of the criteria these claims replace (five-seed means)."""
    var, acc, p10 = "total variance", "probe accuracy (%)", "P@10 (%)"
    e, c, u = m.loc[EMA], m.loc[CONTROL], m.loc[UNTRAINED]
    top = {k: _argmax(m, k) for k in (var, acc, p10)}
    return {
        "spread collapses": bool(c[var] < 0.01 * e[var]),
        "labels survive": bool(abs(c[acc] - e[acc]) <= 3),
        "labels beyond untrained": bool(c[acc] > u[acc]),
        "neighbours degrade": bool(c[p10] <= e[p10] - 5),
        "geometry is not utility": top[var] != top[acc] and top[var] != top[p10],
    }


def findings(records: pd.DataFrame, attribute: str = "timeofday", study: pd.DataFrame | None = None) -> pd.DataFrame:
    """The verdict table of :data:`CRITERIA` (:func:`embdiag.paper.findings.verdicts`): each claim
    decided by a paired Student-t 95% interval over the seeds both conditions finished (runs with
    status ``ok``) on ``attribute``, beside the study's published time-of-day means (``study``,
    default ``data/study/training_means.csv``: point estimates, so no study verdict). With the
    old point-estimate verdicts of the criteria they replace."""
    if study is None:
        study = read_study()
    m = means(records, attribute)
    missing = {EMA, CONTROL, UNTRAINED} - set(m.index)
    if missing:
        raise ValueError(f"records: no successful runs of {sorted(missing)}")
    ok = records[records["status"] == "ok"].assign(log10_variance=lambda r: np.log10(r["total_variance"]))
    acc, p10 = f"{attribute} accuracy", f"{attribute} P@10"
    se, sc = study.loc[EMA], study.loc[CONTROL]
    s_var, s_acc, s_p10 = "total_variance", "probe_accuracy_pct", "p_at_10_pct"
    study_top = {k: str(study[k].idxmax()) for k in (s_var, s_acc, s_p10)}
    spread = _paired(ok, CONTROL, EMA, "log10_variance", 1.0)
    labels = _paired(ok, CONTROL, EMA, acc)
    beyond = _paired(ok, CONTROL, UNTRAINED, acc)
    neighbours = _paired(ok, CONTROL, EMA, p10)
    top = _argmax(m, "total variance")
    by_acc, acc_words = _beaten(ok, top, acc)
    by_p10, p10_words = _beaten(ok, top, p10)
    rows = [
        (
            "spread collapses",
            f"{sc[s_var]:.3g} vs {se[s_var]:.3g} (log10 ratio {np.log10(sc[s_var] / se[s_var]):+.2f})",
            f"log10 ratio {_words(*spread, unit='')}",
            at_most(spread[1], spread[2], SPREAD_LOG10),
        ),
        (
            "labels survive",
            f"{sc[s_acc]:.2f}% vs {se[s_acc]:.2f}% ({sc[s_acc] - se[s_acc]:+.2f} pp)",
            _words(*labels),
            within(labels[1], labels[2], LABELS_PP),
        ),
        ("labels beyond untrained", "not measured", _words(*beyond), at_least(beyond[1], beyond[2], BEYOND_PP)),
        (
            "neighbours degrade",
            f"{sc[s_p10]:.2f}% vs {se[s_p10]:.2f}% ({sc[s_p10] - se[s_p10]:+.2f} pp)",
            _words(*neighbours),
            at_most(neighbours[1], neighbours[2], -NEIGHBOURS_PP),
        ),
        (
            "geometry is not utility",
            f"highest variance: {study_top[s_var]}; accuracy: {study_top[s_acc]}; P@10: {study_top[s_p10]}",
            f"highest variance: {top}; beaten in accuracy by {acc_words}; in P@10 by {p10_words}",
            all_of(by_acc, by_p10),
        ),
    ]
    return verdicts(CRITERIA, rows, was=_old_verdicts(m))


def headline_result(ladder_runs: pd.DataFrame, attribute: str = "timeofday") -> Result:
    """:func:`headline_text` as a result box, for the cover's first screen."""
    return box(headline_text(ladder_runs, attribute))


def headline_text(ladder_runs: pd.DataFrame, attribute: str = "timeofday") -> str:
    """The training headline (HTML), for the first screen of the cover and the conclusions: the
    verdict of *labels survive* at every length of the ladder
    (:func:`embdiag.training.ladder.ladder_records`), the control's probe-accuracy gap to the EMA
    reference with its paired Student-t 95% interval at each length and how it moves, and the
    other findings' verdicts at the longest length."""
    by_length = findings_by_length(ladder_runs, attribute)
    table = ladder_gaps(ladder_runs, attribute)
    contrast = LADDER_CONTRASTS[0][0]
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
        f"{_words(r['mean'], r['low'], r['high'], int(r['n']))} at {n:,} steps" for n, r in gap.iterrows()
    )
    longest = by_length[(by_length["steps"] == lengths[-1]) & (by_length["finding"] != "labels survive")]
    others = "; ".join(
        f"<em>{html.escape(r['finding'])}</em> {r['verdict']} ({html.escape(r['this run'], quote=False)})"
        for _, r in longest.iterrows()
    )
    text = (
        f"The study's training headline, that the unprotected control collapses in spread yet keeps its labels "
        f"(<em>labels survive</em>: control minus EMA reference probe accuracy within ±{LABELS_PP:g} pp), "
        f"{said} in this project's runs, and the gap <strong>{ladder_trend(table, contrast)}</strong> with "
        f"length. Control minus EMA reference, {name} probe accuracy: {steps_words} (paired Student-t 95% "
        f"intervals over seeds). At {lengths[-1]:,} steps, among the ladder's conditions: {others}. "
        "Small ViTs trained here on procedural "
        "driving scenes, not BDD100K at the study's scale."
    )
    return text


def comparisons_side_by_side(
    records: pd.DataFrame, attribute: str = "timeofday", study: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The five declared comparisons for probe accuracy and P@10 (percentage points): the study's
    mean and interval beside this run's, whether the signs agree and whether each interval
    excludes zero. ``study`` defaults to ``data/study/training_comparisons.csv``."""
    if study is None:
        study = read_published("training_comparisons.csv")
    rows = []
    for metric, stem in (("probe accuracy", "accuracy"), ("P@10", "P@10")):
        ours = paired_differences(records, stem, attribute).drop_duplicates("comparison").set_index("comparison")
        for _, s in study[study["metric"] == metric].iterrows():
            o = ours.loc[s["comparison"]] if s["comparison"] in ours.index else None
            mean, low, high = (
                (100 * o["mean"], 100 * o["low"], 100 * o["high"]) if o is not None else (float("nan"),) * 3
            )
            rows.append(
                {
                    "comparison": s["comparison"],
                    "metric": metric,
                    "study": f"{s['mean_pp']:+.2f} [{s['low_pp']:+.2f}, {s['high_pp']:+.2f}]",
                    "this run": f"{mean:+.2f} [{low:+.2f}, {high:+.2f}]",
                    "same sign": bool((mean > 0) == (s["mean_pp"] > 0)),
                    "study excludes 0": bool(s["low_pp"] > 0 or s["high_pp"] < 0),
                    "this run excludes 0": bool(low > 0 or high < 0),
                }
            )
    return pd.DataFrame(rows)


# -- the training-length ladder ----------------------------------------------------------------
def findings_by_length(records: pd.DataFrame, attribute: str = "timeofday", study=None) -> pd.DataFrame:
    """Every finding of :func:`findings` at every length of ``records``
    (those with the EMA reference, the control and the untrained encoder), among the ladder's
    conditions only: one row per finding and length, ``finding``, ``steps``, ``seeds`` (control
    runs that entered), ``this run``, ``verdict`` and ``reason``."""
    rows = []
    for steps in sorted(records["steps"].unique()):
        at = at_length(records, steps)
        if not {EMA, CONTROL, UNTRAINED} <= set(at["condition"]):
            continue
        v = findings(at, attribute, study)
        seeds = int((at["condition"] == CONTROL).sum())
        rows += [
            {
                "finding": r["finding"],
                "steps": int(steps),
                "seeds": seeds,
                "this run": r["this run"],
                "verdict": r["verdict"],
                "reason": r["reason"],
            }
            for _, r in v.iterrows()
        ]
    return pd.DataFrame(rows, columns=["finding", "steps", "seeds", "this run", "verdict", "reason"])


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
    """Each metric of :func:`length_frame` against training steps (log axis): seeds as dots, the
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
            scale=alt.Scale(type="log" if metric == "total variance" else "linear", zero=False),
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
