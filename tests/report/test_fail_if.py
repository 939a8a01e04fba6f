"""--fail-if: grammar, qualifiers, every operator, unknown names and NaN values."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest

from embdiag.report import fail_if
from embdiag.report.fail_if import Rule, parse, violations
from embdiag.data.files import InputError


def metrics_table() -> pd.DataFrame:
    rows = [
        ("identity", "overlap@10", "int8", None, 0.97),
        ("identity", "overlap@10", "pca256", None, 0.80),
        ("relevance", "delta_p@10", "int8", "weather", -0.4),
        ("relevance", "delta_p@10", "int8", "scene", -2.5),
        ("relevance", "delta_p@10", "pca256", "weather", -1.0),
        ("labels", "probe_ba", "reference", "weather", 0.62),
        ("labels", "probe_ba", "reference", "scene", 0.41),
        ("geometry", "rankme", "reference", None, 512.0),
    ]
    frame = pd.DataFrame(rows, columns=["section", "metric", "condition", "attribute", "value"])
    frame["low"], frame["high"] = frame["value"] - 0.1, frame["value"] + 0.1
    return frame


# --- grammar -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expr, metric, qualifiers, op, threshold",
    [
        ("overlap@10<0.95", "overlap@10", (), "<", 0.95),
        ("delta_p@10<-1", "delta_p@10", (), "<", -1.0),
        ("overlap@10[int8]<0.99", "overlap@10", ("int8",), "<", 0.99),
        ("probe_ba[weather]<0.5", "probe_ba", ("weather",), "<", 0.5),
        ("  overlap@10 [ int8 , weather ] <= +1e-3 ", "overlap@10", ("int8", "weather"), "<=", 1e-3),
        ("rankme>=.5", "rankme", (), ">=", 0.5),
        ("rankme>10", "rankme", (), ">", 10.0),
        ("rankme==3.", "rankme", (), "==", 3.0),
        ("rankme!=-2E2", "rankme", (), "!=", -200.0),
        ("p@10<=0", "p@10", (), "<=", 0.0),
    ],
)
def test_parse_accepts_the_grammar(expr, metric, qualifiers, op, threshold):
    rule = parse(expr)
    assert (rule.metric, rule.qualifiers, rule.op, rule.threshold) == (metric, qualifiers, op, threshold)


def test_parse_normalises_the_text_shown_in_messages():
    assert parse(" overlap@10 [ int8 , weather ] < 0.95 ").text == "overlap@10[int8,weather]<0.95"
    assert str(parse("delta_p@10 < -1")) == "delta_p@10<-1"


@pytest.mark.parametrize(
    "expr",
    [
        "",
        "overlap@10",
        "overlap@10 0.95",
        "<0.95",
        "overlap@10<",
        "overlap@10<<0.95",
        "overlap@10=<0.95",
        "overlap@10=0.95",
        "overlap@10<0.95x",
        "overlap@10<nan",
        "overlap@10<inf",
        "overlap@10<1,5",
        "overlap@10[int8<0.9",
        "overlap@10[int8]]<0.9",
        "overlap@10[[int8]]<0.9",
        "overlap@10<0.9 and rankme>1",
        "10overlap<0.9",
        "overlap@10 < 0.9 < 1",
    ],
)
def test_parse_rejects_anything_else_naming_the_option_and_the_grammar(expr):
    with pytest.raises(InputError) as e:
        parse(expr)
    assert str(e.value).startswith(f"--fail-if {expr!r}: expected NAME[QUALIFIER] OP NUMBER")


@pytest.mark.parametrize("expr", ["overlap@10[]<0.9", "overlap@10[int8,]<0.9", "overlap@10[ , ]<0.9"])
def test_parse_rejects_empty_qualifiers(expr):
    with pytest.raises(InputError, match=r"--fail-if .*empty qualifier"):
        parse(expr)


def test_parse_rejects_a_threshold_that_overflows():
    with pytest.raises(InputError, match="not a finite number"):
        parse("rankme<1e999")


def test_parse_rejects_a_non_string():
    with pytest.raises(InputError, match="--fail-if 0.5"):
        parse(0.5)


def test_docstring_example_runs():
    assert doctest.testmod(fail_if, raise_on_error=False).failed == 0


# --- operators -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op, below, equal, above",
    [
        ("<", True, False, False),
        ("<=", True, True, False),
        (">", False, False, True),
        (">=", False, True, True),
        ("==", False, True, False),
        ("!=", True, False, True),
    ],
)
def test_every_operator_fails_exactly_on_its_side(op, below, equal, above):
    rule = parse(f"m{op}0.5")
    assert (rule.fails(0.25), rule.fails(0.5), rule.fails(0.75)) == (below, equal, above)
    frame = pd.DataFrame({"metric": ["m"] * 3, "value": [0.25, 0.5, 0.75]})
    assert len(violations([rule], frame)) == sum((below, equal, above))


@pytest.mark.parametrize("op", list(fail_if.OPERATORS))
@pytest.mark.parametrize("value", [np.nan, None, pd.NA, float("nan")])
def test_nan_and_missing_values_always_violate(op, value):
    """Decision: an undefined value cannot be shown to meet a threshold, so it fails the rule
    whatever the operator (a plain comparison with NaN is False and would pass silently)."""
    assert parse(f"m{op}0.5").fails(value)
    frame = pd.DataFrame(
        {"metric": ["m", "m"], "condition": ["int8", "fp16"], "value": pd.Series([value, 0.9], dtype=object)}
    )
    lines = violations([f"m{op}0.5"], frame)
    assert lines[0] == (
        f"m (condition int8) = NaN (undefined: cannot be checked, counts as a violation): violates m{op}0.5"
    )


def test_nan_in_a_float_column_violates():
    frame = pd.DataFrame({"metric": ["m"], "value": np.array([np.nan])})
    assert violations(["m>0"], frame) == ["m = NaN (undefined: cannot be checked, counts as a violation): violates m>0"]


def test_infinite_values_compare_like_numbers():
    assert parse("m<0").fails(-np.inf) and not parse("m<0").fails(np.inf)


# --- selection and messages ----------------------------------------------------------------------


def test_violations_list_every_violating_row_with_condition_attribute_and_rule():
    lines = violations([parse("overlap@10<0.95"), "delta_p@10<-1"], metrics_table())
    assert lines == [
        "overlap@10 (condition pca256) = 0.8: violates overlap@10<0.95",
        "delta_p@10 (condition int8, attribute scene) = -2.5: violates delta_p@10<-1",
    ]


def test_no_violation_gives_an_empty_list():
    assert violations(["overlap@10<0.5", "rankme<=1", "probe_ba>0.9"], metrics_table()) == []
    assert violations([], metrics_table()) == []


def test_a_qualifier_matches_the_condition():
    assert violations(["overlap@10[int8]<0.99"], metrics_table()) == [
        "overlap@10 (condition int8) = 0.97: violates overlap@10[int8]<0.99"
    ]


def test_a_qualifier_matches_the_attribute():
    assert violations(["probe_ba[weather]<0.7"], metrics_table()) == [
        "probe_ba (condition reference, attribute weather) = 0.62: violates probe_ba[weather]<0.7"
    ]
    assert violations(["delta_p@10[weather]<=-1"], metrics_table()) == [
        "delta_p@10 (condition pca256, attribute weather) = -1: violates delta_p@10[weather]<=-1"
    ]


def test_several_qualifiers_must_all_match():
    assert violations(["delta_p@10[int8,weather]<0"], metrics_table()) == [
        "delta_p@10 (condition int8, attribute weather) = -0.4: violates delta_p@10[int8,weather]<0"
    ]
    assert violations(["delta_p@10[weather,int8]<0"], metrics_table()) == [
        "delta_p@10 (condition int8, attribute weather) = -0.4: violates delta_p@10[weather,int8]<0"
    ]


def test_a_rule_is_tested_against_the_value_not_the_interval():
    frame = metrics_table()
    frame.loc[frame["metric"] == "rankme", ["low", "high"]] = [-1e9, 1e9]
    assert violations(["rankme<500"], frame) == []


def test_unknown_metric_is_an_error_listing_the_available_names():
    with pytest.raises(InputError) as e:
        violations(["overlap@5<0.9"], metrics_table())
    assert str(e.value) == (
        "--fail-if 'overlap@5<0.9': the report has no metric 'overlap@5'; its metrics are: "
        "delta_p@10, overlap@10, probe_ba, rankme"
    )


def test_an_unknown_metric_is_an_error_even_after_other_rules_passed():
    with pytest.raises(InputError, match="no metric 'Overlap@10'"):
        violations(["overlap@10<0.5", "Overlap@10<0.5"], metrics_table())


def test_unknown_qualifier_is_an_error_listing_the_metrics_conditions_and_attributes():
    with pytest.raises(InputError) as e:
        violations(["delta_p@10[int4]<0"], metrics_table())
    assert str(e.value) == (
        "--fail-if 'delta_p@10[int4]<0': no row of 'delta_p@10' has condition or attribute "
        "'int4'; its conditions and attributes are: int8, pca256, scene, weather"
    )


def test_qualifiers_that_match_separately_but_never_together_are_an_error():
    with pytest.raises(InputError, match="'pca256' and 'scene'"):
        violations(["delta_p@10[pca256,scene]<0"], metrics_table())


def test_a_qualifier_of_another_metric_does_not_count():
    with pytest.raises(InputError, match="no row of 'overlap@10'"):
        violations(["overlap@10[weather]<1"], metrics_table())


def test_an_empty_table_lists_no_metrics():
    with pytest.raises(InputError, match="its metrics are: none"):
        violations(["m<1"], pd.DataFrame({"metric": [], "value": []}))


def test_missing_condition_and_attribute_columns_are_read_as_empty():
    frame = pd.DataFrame({"metric": ["m", "m"], "value": [1.0, 3.0]})
    assert violations(["m>2"], frame) == ["m = 3: violates m>2"]
    with pytest.raises(InputError, match="its conditions and attributes are: none"):
        violations(["m[x]>2"], frame)


def test_a_table_without_metric_or_value_columns_is_a_programming_error():
    with pytest.raises(ValueError, match="missing column.*value"):
        violations(["m>2"], pd.DataFrame({"metric": ["m"]}))


def test_records_read_back_from_json_work():
    """report.json stores missing conditions/attributes as null; read back they are None."""
    records = metrics_table().astype(object).where(metrics_table().notna(), None).to_dict("records")
    frame = pd.DataFrame.from_records(records)
    assert violations(["rankme>100"], frame) == ["rankme (condition reference) = 512: violates rankme>100"]


def test_rule_is_a_frozen_value():
    rule = parse("m<1")
    assert rule == Rule("m", (), "<", 1.0, "m<1")
    with pytest.raises(AttributeError):
        rule.op = ">"


# --- interval bounds (issue #26) -------------------------------------------------------------------


def test_a_rule_on_a_bound_reads_the_interval_not_the_value():
    rule = parse("delta_p@10.low[int8] < -1")
    assert (rule.metric, rule.bound, rule.reads, rule.text) == (
        "delta_p@10",
        "low",
        "delta_p@10.low",
        "delta_p@10.low[int8]<-1",
    )
    m = metrics_table()  # int8: weather -0.4 [-0.5, -0.3], scene -2.5 [-2.6, -2.4]
    assert violations(["delta_p@10.low[int8]<-0.45"], m) == [
        "delta_p@10.low (condition int8, attribute weather) = -0.5: violates delta_p@10.low[int8]<-0.45",
        "delta_p@10.low (condition int8, attribute scene) = -2.6: violates delta_p@10.low[int8]<-0.45",
    ]
    assert violations(["delta_p@10[int8,weather]<-0.45"], m) == []  # the value itself passes
    assert violations(["delta_p@10.high[pca256]>-0.95"], m) == [
        "delta_p@10.high (condition pca256, attribute weather) = -0.9: violates delta_p@10.high[pca256]>-0.95"
    ]


def test_a_row_without_an_interval_fails_a_rule_on_its_bound():
    m = metrics_table()
    m.loc[2, "low"] = np.nan
    assert violations(["delta_p@10.low[int8,weather]<-5"], m) == [
        "delta_p@10.low (condition int8, attribute weather) = NaN (undefined: cannot be checked, counts as a "
        "violation): violates delta_p@10.low[int8,weather]<-5"
    ]


def test_a_bound_of_a_metric_without_intervals_is_refused_before_measuring():
    with pytest.raises(InputError, match="'overlap@10' has no interval; .low and .high read the 95% intervals"):
        fail_if.check(["overlap@10.low<0.9"], {"overlap@10": {"int8"}})
    assert [r.bound for r in fail_if.check(["delta_p@10.high>1"], {"delta_p@10": {"int8"}})] == ["high"]
    with pytest.raises(InputError, match="'antihub_share' has no interval"):
        fail_if.check(["antihub_share.high>0.1"], {"antihub_share": {"reference"}})


def test_the_anti_hub_tail_hygiene_shares_and_tuned_recall_may_be_gated_on_their_intervals():
    available = {"antihub_overlap@10": {"int8"}, "near_duplicate_share": {"reference"}, "tuned_recall@10": {"hnsw"}}
    rules = ["antihub_overlap@10.low<0.9", "near_duplicate_share.low>0.01", "tuned_recall@10.low<0.95"]
    assert [r.bound for r in fail_if.check(rules, available)] == ["low", "low", "low"]
