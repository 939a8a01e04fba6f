"""The compression frontier: each condition's quality against the bytes one vector takes.

Quality is read, never judged twice: identity (overlap@k with exact search on the reference) and
relevance (the condition's lowest interval bound over every relevance change it has: ΔP@k per
label column, ΔHit@k, Δrecall@k, in percentage points). A condition is on the **Pareto set**
when no other condition takes at most as many bytes per vector with at least as high an
overlap@k and at least as high a lowest bound (relevance compared only when both have it), one
of them strictly. With ``--fail-if`` rules, the **smallest passing** condition is the one of
fewest bytes whose every gate row passed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["COLUMNS", "frontier_table", "smallest_passing"]

COLUMNS = [
    "condition",
    "kind",
    "bytes_per_vector",
    "times_smaller",
    "overlap@k",
    "lowest_metric",
    "lowest_attribute",
    "lowest_low",
    "lowest_value",
    "lowest_high",
    "pareto",
    "gates",
]


def _lowest(relevance: list[dict]) -> dict:
    """The relevance change whose interval reaches lowest (its name, bound, value and upper end)."""
    rows = [r for r in relevance if r.get("low") is not None and not pd.isna(r["low"])]
    if not rows:
        return {"lowest_metric": "", "lowest_attribute": "", "lowest_low": np.nan, "lowest_value": np.nan,
                "lowest_high": np.nan}  # fmt: skip
    r = min(rows, key=lambda r: (r["low"], r["metric"], r["attribute"]))
    return {
        "lowest_metric": r["metric"],
        "lowest_attribute": r["attribute"],
        "lowest_low": r["low"],
        "lowest_value": r["value"],
        "lowest_high": r["high"],
    }


def _dominated(i: int, table: pd.DataFrame) -> bool:
    me = table.iloc[i]
    for j in range(len(table)):
        other = table.iloc[j]
        if j == i:
            continue
        both = not (np.isnan(me.lowest_low) or np.isnan(other.lowest_low))
        at_least = (
            other.bytes_per_vector <= me.bytes_per_vector
            and other["overlap@k"] >= me["overlap@k"]
            and (not both or other.lowest_low >= me.lowest_low)
        )
        strictly = (
            other.bytes_per_vector < me.bytes_per_vector
            or other["overlap@k"] > me["overlap@k"]
            or (both and other.lowest_low > me.lowest_low)
        )
        if at_least and strictly:
            return True
    return False


def frontier_table(summary: list[dict], identity: pd.DataFrame, gates: list[dict], reference_bytes: float, k: int):
    """One row per measured condition (:data:`COLUMNS`, ``overlap@k`` named for ``k``), fewest bytes
    first: its bytes per vector (and how many times fewer than the reference's ``reference_bytes``),
    overlap@k, its lowest relevance change with interval, whether it is on the Pareto set, and its
    gates (``"passed"``, ``"failed"``, or ``""`` when no rule reads it).

    Example:
        >>> summary = [{"condition": c, "kind": "storage", f"overlap@10": o, "relevance": [{"metric": "delta_p@10",
        ...             "attribute": "", "value": v, "low": v - 1, "high": v + 1}]}
        ...            for c, o, v in (("int8", 0.99, 0.0), ("int4", 0.9, -0.5), ("fp16", 0.99, 0.0))]
        >>> identity = pd.DataFrame({"condition": ["int8", "int4", "fp16"], "bytes_per_vector": [772, 384, 1536]})
        >>> table = frontier_table(summary, identity, [], 3072, 10)
        >>> table[["condition", "pareto"]].to_dict("list")  # fp16: as good as int8, and larger
        {'condition': ['int4', 'int8', 'fp16'], 'pareto': [True, True, False]}
    """
    size = identity.set_index("condition")["bytes_per_vector"]
    failed = {g["condition"] for g in gates if not g["passed"]}
    read = {g["condition"] for g in gates}
    rows = []
    for entry in summary:
        name = entry["condition"]
        if name not in size.index or pd.isna(size[name]):  # cannot represent the rows: nothing measured
            continue
        rows.append(
            {
                "condition": name,
                "kind": entry["kind"],
                "bytes_per_vector": float(size[name]),
                "times_smaller": reference_bytes / float(size[name]),
                "overlap@k": float(entry[f"overlap@{k}"]),
                **_lowest(entry["relevance"]),
                "gates": "failed" if name in failed else "passed" if name in read else "",
            }
        )
    table = pd.DataFrame(rows, columns=[c for c in COLUMNS if c != "pareto"])
    table["lowest_low"] = table["lowest_low"].astype(float)
    table = table.sort_values(["bytes_per_vector", "condition"], kind="stable").reset_index(drop=True)
    table.insert(COLUMNS.index("pareto"), "pareto", [not _dominated(i, table) for i in range(len(table))])
    return table.rename(columns={"overlap@k": f"overlap@{k}"})


def smallest_passing(table: pd.DataFrame) -> dict | None:
    """The row of fewest bytes per vector whose gates all passed (None when no rule read a
    condition, or none passed)."""
    passed = table[table["gates"] == "passed"]
    return None if passed.empty else passed.iloc[0].to_dict()
