"""The study's training findings, checked against this project's records by declared criteria.

Each finding of the published study's training section is restated as a criterion fixed
before looking at this project's numbers (:data:`CRITERIA`), then evaluated on the five-seed
means of the records (:func:`findings`) and, for the five declared paired comparisons,
set side by side with the published intervals (:func:`comparisons_side_by_side`). The
published values are read from ``data/study/`` (transcribed, never computed).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import artifacts
from .._project import published_dir
from .figures import ATTRIBUTE_NAMES, means
from .sweep import UNTRAINED, paired_differences

EMA, CONTROL = "EMA reference", "Contracted control"
#: Declared criteria: a finding reproduces when its test holds on this project's five-seed means.
CRITERIA = {
    "spread collapses": "control variance below 1% of the EMA reference's",
    "labels survive": "control probe accuracy within 3 points of the EMA reference's",
    "labels beyond untrained": "control probe accuracy above the untrained (step 0) encoder's",
    "neighbours degrade": "control P@10 at least 5 points below the EMA reference's",
    "geometry is not utility": "the condition with the highest variance differs from the one with the "
                               "highest probe accuracy and from the one with the highest P@10",
}


def study_dir() -> Path:
    """Folder of the published study's transcribed values (``data/study``)."""
    return published_dir()


def read_means() -> pd.DataFrame:
    """The study's published five-seed time-of-day means (``data/study/training_means.csv``),
    recorded in the chapter's read log."""
    path = study_dir() / "training_means.csv"
    artifacts.record_read(path)
    return pd.read_csv(path, index_col="condition")


def _argmax(table: pd.DataFrame, column: str) -> str:
    return str(table.drop(index=UNTRAINED, errors="ignore")[column].idxmax())


def findings(records: pd.DataFrame, attribute: str = "timeofday", study: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per finding: ``finding``, ``criterion``, ``study`` and ``this run`` (the numbers in
    words) and ``reproduces`` (bool). ``study`` defaults to ``data/study/training_means.csv``
    (the study's time-of-day means)."""
    if study is None:
        study = read_means()
    m = means(records, attribute)
    missing = {EMA, CONTROL, UNTRAINED} - set(m.index)
    if missing:
        raise ValueError(f"records: no successful runs of {sorted(missing)}")
    var, acc, p10 = "total variance", "probe accuracy (%)", "P@10 (%)"
    e, c, u = m.loc[EMA], m.loc[CONTROL], m.loc[UNTRAINED]
    se, sc = study.loc[EMA], study.loc[CONTROL]
    s_var, s_acc, s_p10 = "total_variance", "probe_accuracy_pct", "p_at_10_pct"
    study_top = {k: str(study[k].idxmax()) for k in (s_var, s_acc, s_p10)}
    top = {k: _argmax(m, k) for k in (var, acc, p10)}
    rows = [
        ("spread collapses", f"{sc[s_var]:.3g} vs {se[s_var]:.3g} (ratio {sc[s_var] / se[s_var]:.2g})",
         f"{c[var]:.3g} vs {e[var]:.3g} (ratio {c[var] / e[var]:.2g})", c[var] < 0.01 * e[var]),
        ("labels survive", f"{sc[s_acc]:.2f}% vs {se[s_acc]:.2f}% ({sc[s_acc] - se[s_acc]:+.2f} pp)",
         f"{c[acc]:.2f}% vs {e[acc]:.2f}% ({c[acc] - e[acc]:+.2f} pp)", abs(c[acc] - e[acc]) <= 3),
        ("labels beyond untrained", "not measured",
         f"{c[acc]:.2f}% vs untrained {u[acc]:.2f}% ({c[acc] - u[acc]:+.2f} pp)", c[acc] > u[acc]),
        ("neighbours degrade", f"{sc[s_p10]:.2f}% vs {se[s_p10]:.2f}% ({sc[s_p10] - se[s_p10]:+.2f} pp)",
         f"{c[p10]:.2f}% vs {e[p10]:.2f}% ({c[p10] - e[p10]:+.2f} pp)", c[p10] <= e[p10] - 5),
        ("geometry is not utility",
         f"variance: {study_top[s_var]}; accuracy: {study_top[s_acc]}; P@10: {study_top[s_p10]}",
         f"variance: {top[var]}; accuracy: {top[acc]}; P@10: {top[p10]}",
         top[var] != top[acc] and top[var] != top[p10]),
    ]
    return pd.DataFrame([{"finding": f, "criterion": CRITERIA[f], "study": s, "this run": t, "reproduces": bool(r)}
                         for f, s, t, r in rows])


def in_words(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with every boolean cell written as ``yes`` or ``no`` (for the book's tables)."""
    return table.apply(lambda column: column.map({True: "yes", False: "no"})
                       if pd.api.types.is_bool_dtype(column) else column)


def summary(verdicts: pd.DataFrame, attribute_name: str) -> str:
    """The verdicts of :func:`findings` as a Markdown paragraph and list."""
    lines = [f"- *{r['finding']}* {'holds' if r['reproduces'] else 'does **not** hold'} here "
             f"({r['criterion']}): {r['this run']}." for _, r in verdicts.iterrows()]
    return (f"On {attribute_name}, {int(verdicts['reproduces'].sum())} of {len(verdicts)} findings hold on this "
            f"data and profile:\n\n" + "\n".join(lines))


def headline(records: pd.DataFrame, attribute: str = "timeofday", study: pd.DataFrame | None = None) -> str:
    """The study's headline (contracted control against the EMA reference: total variance,
    probe accuracy and P@10 on ``attribute``) as a Markdown paragraph: this run's five-seed
    means, the study's published time-of-day means, and which of :func:`findings` hold here."""
    if study is None:
        study = read_means()
    verdicts = findings(records, attribute, study)  # raises when a condition has no successful run
    m = means(records, attribute)
    e, c = m.loc[EMA], m.loc[CONTROL]
    se, sc = study.loc[EMA], study.loc[CONTROL]
    seeds = records.loc[records["condition"] == CONTROL, "seed"].nunique()
    name = ATTRIBUTE_NAMES.get(attribute, attribute)
    failed = verdicts.loc[~verdicts["reproduces"], "finding"].tolist()
    held = (f"{int(verdicts['reproduces'].sum())} of the {len(verdicts)} training findings hold here"
            + (f"; *{'*, *'.join(failed)}* does not" if len(failed) == 1 else
               f"; *{'*, *'.join(failed)}* do not" if failed else ""))
    return (f"In this project's own runs ({seeds}-seed means on procedural driving scenes, not BDD100K), the "
            f"**contracted control** has total variance {c['total variance']:.3g} against "
            f"{e['total variance']:.3g} for the **EMA reference**, yet a linear probe reads {name} from it at "
            f"{c['probe accuracy (%)']:.2f}% (EMA {e['probe accuracy (%)']:.2f}%), while the share of its ten "
            f"nearest neighbours that share the query's {name} is {c['P@10 (%)']:.2f}% (EMA "
            f"{e['P@10 (%)']:.2f}%). The published study reported, for time of day on BDD100K: variance "
            f"{sc['total_variance']:.3g} against {se['total_variance']:.3g}, accuracy "
            f"{sc['probe_accuracy_pct']:.2f}% against {se['probe_accuracy_pct']:.2f}%, P@10 "
            f"{sc['p_at_10_pct']:.2f}% against {se['p_at_10_pct']:.2f}%. {held}.")


def comparisons_side_by_side(records: pd.DataFrame, attribute: str = "timeofday",
                             study: pd.DataFrame | None = None) -> pd.DataFrame:
    """The five declared comparisons for probe accuracy and P@10 (percentage points): the study's
    mean and interval beside this run's, whether the signs agree and whether each interval
    excludes zero. ``study`` defaults to ``data/study/training_comparisons.csv``."""
    if study is None:
        study = pd.read_csv(study_dir() / "training_comparisons.csv")
        artifacts.record_read(study_dir() / "training_comparisons.csv")
    rows = []
    for metric, stem in (("probe accuracy", "accuracy"), ("P@10", "P@10")):
        ours = paired_differences(records, stem, attribute).drop_duplicates("comparison").set_index("comparison")
        for _, s in study[study["metric"] == metric].iterrows():
            o = ours.loc[s["comparison"]] if s["comparison"] in ours.index else None
            mean, low, high = ((100 * o["mean"], 100 * o["low"], 100 * o["high"]) if o is not None
                               else (float("nan"),) * 3)
            rows.append({"comparison": s["comparison"], "metric": metric,
                         "study": f"{s['mean_pp']:+.2f} [{s['low_pp']:+.2f}, {s['high_pp']:+.2f}]",
                         "this run": f"{mean:+.2f} [{low:+.2f}, {high:+.2f}]",
                         "same sign": bool((mean > 0) == (s["mean_pp"] > 0)),
                         "study excludes 0": bool(s["low_pp"] > 0 or s["high_pp"] < 0),
                         "this run excludes 0": bool(low > 0 or high < 0)})
    return pd.DataFrame(rows)
