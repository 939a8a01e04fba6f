"""``--fail-if`` thresholds: parse ``NAME[QUALIFIER] OP NUMBER`` and test a report's metrics.

A rule names a metric of the report's long metrics table (columns ``metric``, ``condition``,
``attribute``, ``value``; see :class:`embdiag.report.measurement.Report`), optionally narrows it
with qualifiers in brackets, and states the *failing* side of a threshold::

    overlap@10<0.95            any row of overlap@10 below 0.95 fails
    delta_p@10[int8]<-1        only rows whose condition or attribute is "int8"
    probe_ba[fp16,weather]<0.5 several qualifiers: every one must match the condition or the attribute
    delta_p@10.low<-1          the lower end of each row's 95% interval (``.high``: the upper end)

A rule on ``.low`` or ``.high`` reads the interval's bound instead of the value: "fail when the
change could be worse than -1 pp" is ``delta_p@10.low<-1``; a row without an interval has no
bound (NaN) and fails it.

Operators: ``<  <=  >  >=  ==  !=``; the number is a finite decimal (``-1``, ``0.95``, ``1e-3``).
Whitespace around the parts is ignored. Decisions that keep a typo or an undefined value
from passing silently:

- a rule whose metric is not in the report, or whose qualifier matches no row of that metric,
  raises :class:`~embdiag.data.files.InputError` naming ``--fail-if`` and listing what the
  report has: :func:`check` before anything is measured (against what the inputs will give),
  :func:`outcomes` and :func:`violations` (``strict``) on a measured table;
- a selected row whose value is NaN (or missing) is a violation: a threshold that cannot be
  checked fails, whatever the operator.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass

import pandas as pd

from ..data.files import InputError

OPERATORS = {
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    ">": operator.gt,
}
OPTION = "--fail-if"
GRAMMAR = (
    "NAME[QUALIFIER] OP NUMBER, OP one of < <= > >= == != (e.g. overlap@10<0.95, delta_p@10[int8]<-1), NAME.low or "
    "NAME.high for an interval's bound (delta_p@10.low<-1)"
)
#: What a rule reads of a row: its value, or a bound of its interval (``NAME.low``, ``NAME.high``).
BOUNDS = ("value", "low", "high")

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_RULE = re.compile(
    r"\s*(?P<metric>[A-Za-z_][\w@.%-]*?)\s*"
    r"(?:\[(?P<qualifiers>[^\[\]]*)\])?\s*"
    r"(?P<op><=|>=|==|!=|<|>)\s*"
    rf"(?P<number>{_NUMBER})\s*"
)


@dataclass(frozen=True)
class Rule:
    """One parsed ``--fail-if`` expression: a row fails when ``value OP threshold`` holds.

    Example:
        >>> rule = parse("overlap@10 < 0.95")
        >>> str(rule), rule.fails(0.9), rule.fails(0.99), rule.fails(float("nan"))
        ('overlap@10<0.95', True, False, True)
    """

    metric: str
    qualifiers: tuple[str, ...]
    op: str
    threshold: float
    text: str
    bound: str = "value"

    @property
    def reads(self) -> str:
        """What the rule reads, as its outcomes name it: the metric, or ``metric.low`` / ``metric.high``."""
        return self.metric if self.bound == "value" else f"{self.metric}.{self.bound}"

    def __str__(self) -> str:
        return self.text

    def fails(self, value) -> bool:
        """Whether ``value`` violates the rule (NaN and missing values always do)."""
        if value is None or pd.isna(value):
            return True
        return bool(OPERATORS[self.op](float(value), self.threshold))


def parse(expr: str) -> Rule:
    """Parse one ``--fail-if`` expression.

    Raises:
        InputError: the expression does not follow :data:`GRAMMAR`, a qualifier is empty, or
            the number is not finite.

    Example:
        >>> parse("overlap@10[int8] < 0.99")  # doctest: +NORMALIZE_WHITESPACE
        Rule(metric='overlap@10', qualifiers=('int8',), op='<', threshold=0.99, text='overlap@10[int8]<0.99',
             bound='value')
        >>> parse("delta_p@10.low<-1").reads, parse("delta_p@10.low<-1").metric
        ('delta_p@10.low', 'delta_p@10')
    """
    if not isinstance(expr, str):
        raise InputError(f"{OPTION} {expr!r}: expected a string of the form {GRAMMAR}")
    match = _RULE.fullmatch(expr)
    if match is None:
        raise InputError(f"{OPTION} {expr!r}: expected {GRAMMAR}")
    qualifiers = ()
    if match["qualifiers"] is not None:
        qualifiers = tuple(q.strip() for q in match["qualifiers"].split(","))
        if not all(qualifiers):
            raise InputError(
                f"{OPTION} {expr!r}: empty qualifier in [{match['qualifiers']}]; "
                "name a condition or attribute, several separated by commas"
            )
    threshold = float(match["number"])
    if not math.isfinite(threshold):
        raise InputError(f"{OPTION} {expr!r}: the threshold {match['number']} is not a finite number")
    text = match["metric"] + (f"[{','.join(qualifiers)}]" if qualifiers else "") + match["op"] + match["number"]
    metric, bound = match["metric"], "value"
    for b in BOUNDS[1:]:
        if metric.endswith(f".{b}"):
            metric, bound = metric[: -len(b) - 1], b
    return Rule(metric, qualifiers, match["op"], threshold, text, bound)


def _labels(column: pd.Series) -> pd.Series:
    """A condition or attribute column as strings, missing values as ''."""
    return column.astype(object).where(column.notna(), "").astype(str)


def _describe(row) -> str:
    parts = [f"{name} {row[name]}" for name in ("condition", "attribute") if row[name]]
    return f" ({', '.join(parts)})" if parts else ""


def _format(value) -> str:
    if value is None or pd.isna(value):
        return "NaN (undefined: cannot be checked, counts as a violation)"
    return f"{float(value):.6g}"


def _hygiene_intervals() -> frozenset[str]:
    from .sections.hygiene import WITH_INTERVAL  # the sections import this module

    return WITH_INTERVAL


def has_interval(metric: str) -> bool:
    """Whether the records of ``metric`` carry a 95% interval (``.low`` and ``.high``): the
    relevance changes (``delta_...``), the anti-hub tail (``antihub_overlap@k``,
    ``antihub_recall@k``), the recall of an index's setting for the target (``tuned_recall@k``)
    and hygiene's shares.

    Example:
        >>> has_interval("delta_p@10"), has_interval("antihub_overlap@10"), has_interval("overlap@10")
        (True, True, False)
    """
    prefixes = ("delta_", "antihub_overlap@", "antihub_recall@", "tuned_recall@")
    return metric.startswith(prefixes) or metric in _hygiene_intervals()


def check(rules, available) -> list[Rule]:
    """``rules`` (:class:`Rule` objects or expression strings) checked against what a report will
    have, before anything is measured: ``available`` maps each metric name to the conditions and
    attributes of its rows (:func:`embdiag.report.measurement.available_metrics`). Returns the
    parsed rules.

    Raises:
        InputError: a rule names a metric not in ``available`` (the available names are listed),
            or a qualifier that is neither a condition nor an attribute of that metric (those are
            listed).

    Example:
        >>> [r.text for r in check(["overlap@10[int8]<0.99"], {"overlap@10": {"int8", "fp16"}})]
        ['overlap@10[int8]<0.99']
    """
    rules = [parse(r) if isinstance(r, str) else r for r in rules]
    for rule in rules:
        if rule.bound != "value" and not has_interval(rule.metric):
            raise InputError(
                f"{OPTION} {rule.text!r}: {rule.metric!r} has no interval; .low and .high read the 95% intervals "
                "of the relevance changes (delta_...), the anti-hub tail (antihub_overlap@k, antihub_recall@k), the "
                "recall of an index's setting for the target (tuned_recall@k) and the hygiene shares "
                f"({', '.join(sorted(_hygiene_intervals()))})"
            )
        if rule.metric not in available:
            raise InputError(
                f"{OPTION} {rule.text!r}: the report has no metric {rule.metric!r}; "
                f"its metrics are: {', '.join(sorted(available)) or 'none'}"
            )
        unknown = [q for q in rule.qualifiers if q not in available[rule.metric]]
        if unknown:
            raise InputError(
                f"{OPTION} {rule.text!r}: {rule.metric!r} has no condition or attribute "
                f"{' or '.join(map(repr, unknown))}; its conditions and attributes are: "
                f"{', '.join(sorted(available[rule.metric])) or 'none'}"
            )
    return rules


def _selected(rule: Rule, names, condition, attribute, strict: bool, available: list[str]):
    """The rows of ``rule``'s metric that match its qualifiers (raising, when ``strict``, if none)."""
    rows = names == rule.metric
    if strict and not rows.any():
        raise InputError(
            f"{OPTION} {rule.text!r}: the report has no metric {rule.metric!r}; "
            f"its metrics are: {', '.join(available) or 'none'}"
        )
    selected = rows.copy()
    for q in rule.qualifiers:
        selected &= (condition == q) | (attribute == q)
    if strict and not selected.any():
        values = sorted((set(condition[rows]) | set(attribute[rows])) - {""})
        raise InputError(
            f"{OPTION} {rule.text!r}: no row of {rule.metric!r} has condition or attribute "
            f"{' and '.join(map(repr, rule.qualifiers))}; its conditions and attributes are: "
            f"{', '.join(values) or 'none'}"
        )
    return selected[selected].index


def outcomes(rules, metrics: pd.DataFrame, *, strict: bool = True) -> list[dict]:
    """Every rule checked on the rows it selects: one record per (rule, row), in rule then row
    order, ``{"rule", "metric", "condition", "attribute", "value", "threshold", "passed", "measured"}``.

    ``rules`` are :class:`Rule` objects or expression strings. ``metrics`` needs the columns
    ``metric`` and ``value``; ``condition`` and ``attribute`` are optional (missing = '').
    A rule that selects no row (its metric was not measured, e.g. a probe left out) raises
    when ``strict``; otherwise it gives one record with value None that does not pass (a
    threshold that cannot be checked fails).

    Raises:
        InputError: (``strict``) a rule names a metric the table does not have (the available
            names are listed), or its qualifiers match no row of that metric (the metric's
            conditions and attributes are listed).
    """
    rules = [parse(r) if isinstance(r, str) else r for r in rules]
    missing = ({"metric", "value"} | {r.bound for r in rules}) - set(metrics.columns)
    if missing:
        raise ValueError(f"metrics: missing column(s) {', '.join(sorted(missing))}")
    names = metrics["metric"].astype(str)
    condition = _labels(metrics["condition"]) if "condition" in metrics else pd.Series("", index=metrics.index)
    attribute = _labels(metrics["attribute"]) if "attribute" in metrics else pd.Series("", index=metrics.index)
    available = sorted(set(names))
    out = []
    for rule in rules:
        rows = _selected(rule, names, condition, attribute, strict, available)
        base = {"rule": rule.text, "metric": rule.reads, "threshold": rule.threshold}
        if not len(rows):
            out.append({**base, "condition": "", "attribute": "", "value": None, "passed": False, "measured": False})
        for i in rows:
            value = metrics.at[i, rule.bound]
            out.append(
                {
                    **base,
                    "condition": condition[i],
                    "attribute": attribute[i],
                    "value": None if value is None or pd.isna(value) else float(value),
                    "passed": not rule.fails(value),
                    "measured": True,
                }
            )
    return out


def violations(rules, metrics: pd.DataFrame, *, strict: bool = True) -> list[str]:
    """One readable line per (rule, metrics row) that violates the rule, in rule then row order
    (the failing :func:`outcomes`; with ``strict=False`` a rule that selects no row is one).

    Raises:
        InputError: as :func:`outcomes` (``strict``).

    Example:
        >>> metrics = pd.DataFrame({"metric": ["overlap@10", "overlap@10"], "condition": ["fp16", "int8"],
        ...                         "value": [1.0, 0.97]})
        >>> violations(["overlap@10<0.99"], metrics)
        ['overlap@10 (condition int8) = 0.97: violates overlap@10<0.99']
    """
    return [_line(o) for o in outcomes(rules, metrics, strict=strict) if not o["passed"]]


def _line(outcome: dict) -> str:
    if not outcome["measured"]:
        return (
            f"{outcome['metric']}: not measured (no row matches; cannot be checked, counts as a violation): "
            f"violates {outcome['rule']}"
        )
    return f"{outcome['metric']}{_describe(outcome)} = {_format(outcome['value'])}: violates {outcome['rule']}"
