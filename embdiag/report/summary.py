"""The report's summary: one entry per condition, its identity, relevance and probe changes side
by side, and its verdict in words (:func:`verdict`: from the share of changed queries and the
relevance intervals only; the probe change is shown, not judged). Pure functions of the measured
tables (:func:`summarize`), read by the summary table, the frontier and the pages."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["CANNOT_REPRESENT", "verdict", "summarize", "with_unrepresented", "change_name", "summary_table"]

#: The verdict of a condition that cannot represent the rows
#: (:class:`~embdiag.report.measurement.CannotRepresent`).
CANNOT_REPRESENT = "cannot represent these vectors"


def verdict(changed_queries: float, intervals) -> str:
    """One condition's verdict in words, from its identity and its relevance changes.

    ``changed_queries``: the share of searched queries whose top-k set changed; ``intervals``:
    the ``(low, high)`` 95% intervals of its relevance changes (ΔP@k per attribute, ΔHit@k,
    Δrecall@k), empty when relevance was not measured. The first rule that holds:

    - ``"costs relevance"``: some interval lies wholly below 0;
    - ``"safe: identity and relevance unchanged"``: no searched query's top-k changed (so no
      relevance change either);
    - ``"changes neighbours, gains relevance"``: some interval lies wholly above 0;
    - ``"changes neighbours, keeps relevance"``: every interval contains 0;
    - ``"changes neighbours; relevance not measured"``: there is no interval.

    The probe change is shown beside the verdict but does not enter it (one probe split, no
    interval).

    Example:
        >>> verdict(0.0, [(0.0, 0.0)]), verdict(0.4, [(-0.6, 0.3)]), verdict(0.4, [(-0.6, 0.3), (-2.0, -0.1)])
        ('safe: identity and relevance unchanged', 'changes neighbours, keeps relevance', 'costs relevance')
    """
    intervals = list(intervals)
    if any(high < 0 for _, high in intervals):
        return "costs relevance"
    if changed_queries == 0:
        return "safe: identity and relevance unchanged"
    if any(low > 0 for low, _ in intervals):
        return "changes neighbours, gains relevance"
    return "changes neighbours, keeps relevance" if intervals else "changes neighbours; relevance not measured"


def _probe_changes(labels: pd.DataFrame | None, name: str) -> list[dict]:
    """Per attribute, the probe's balanced accuracy under condition ``name`` minus the reference's, in pp."""
    if labels is None or "probe_ba" not in labels:
        return []
    ba = labels.set_index(["representation", "attribute"])["probe_ba"]
    return [
        {
            "attribute": a,
            "probe_ba": float(ba[(name, a)]),
            "reference_probe_ba": float(ba[("reference", a)]),
            "change_pp": 100.0 * float(ba[(name, a)] - ba[("reference", a)]),
        }
        for a in dict.fromkeys(labels["attribute"])
        if (name, a) in ba.index and np.isfinite(ba[(name, a)])
    ]


def summarize(
    conditions, identity: pd.DataFrame | None, relevance: pd.DataFrame | None, labels: pd.DataFrame | None, k: int
) -> list[dict]:
    """One entry per condition: ``condition``, ``kind``; identity: ``changed_queries`` (share of
    searched queries whose top-k set changed) and ``overlap@k``; ``relevance``: each change of
    the condition (``metric``, ``attribute``, ``value``, ``low``, ``high`` in pp, ``n_queries``);
    ``labels``: per attribute its probe change (:func:`_probe_changes`; none for an index); and
    ``verdict`` (:func:`verdict` of the changed share and the relevance intervals). Empty
    without conditions."""
    if identity is None or identity.empty:
        return []
    ident = identity.set_index("condition")
    out = []
    for c in conditions:
        rel = (
            []
            if relevance is None
            else [
                {key: r[key] for key in ("metric", "attribute", "value", "low", "high", "n_queries")}
                for r in relevance.to_dict("records")
                if r["condition"] == c.name
            ]
        )
        changed = float(ident.loc[c.name, "changed_queries"])
        out.append(
            {
                "condition": c.name,
                "kind": c.kind,
                "changed_queries": changed,
                f"overlap@{k}": float(ident.loc[c.name, f"overlap@{k}"]),
                "relevance": rel,
                "labels": _probe_changes(labels, c.name),
                "verdict": verdict(changed, [(r["low"], r["high"]) for r in rel]),
            }
        )
    return out


def with_unrepresented(summary: list[dict], conditions, cannot: dict[str, str], k: int) -> list[dict]:
    """:func:`summarize`'s entries with one for each condition that cannot represent the rows
    (verdict :data:`CANNOT_REPRESENT`, ``reason``: why; nothing measured), in the conditions' order."""
    by_name = {e["condition"]: e for e in summary}
    for c in conditions:
        if c.name in cannot:
            by_name[c.name] = {
                "condition": c.name,
                "kind": c.kind,
                "changed_queries": np.nan,
                f"overlap@{k}": np.nan,
                "relevance": [],
                "labels": [],
                "verdict": CANNOT_REPRESENT,
                "reason": cannot[c.name],
            }
    return [by_name[c.name] for c in conditions if c.name in by_name]


def change_name(r: dict) -> str:
    """The name of a relevance change of :func:`summarize`: ``ΔP@10 digit``, ``ΔHit@10``."""
    what = r["metric"].replace("delta_", "Δ")
    for short, name in (("ndcg@", "nDCG@"), ("mrr@", "MRR@"), ("map@", "MAP@"), ("hit@", "Hit@"), ("p@", "P@")):
        if what.lstrip("Δ").startswith(short):
            what = what.replace(short, name, 1)
            break
    return f"{what} {r['attribute']}" if r["attribute"] else what


def _change(r: dict) -> str:
    """``ΔP@10 digit -0.31 [-0.90, +0.22]`` (pp)."""
    return f"{change_name(r)} {r['value']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}]"


def summary_table(summary: list[dict], k: int) -> pd.DataFrame:
    """:func:`summarize`'s entries as one row per condition (changes and probe changes in words)."""
    return pd.DataFrame(
        [
            {
                "condition": e["condition"],
                "kind": e["kind"],
                "changed_queries": e["changed_queries"],
                f"overlap@{k}": e[f"overlap@{k}"],
                "relevance_change_pp": "; ".join(map(_change, e["relevance"])) or "not measured",
                "probe_ba_change_pp": "; ".join(f"{p['attribute']} {p['change_pp']:+.2f}" for p in e["labels"]) or "—",
                "verdict": e["verdict"],
            }
            for e in summary
        ]
    )
