"""The indexes section's setting for a target recall: one row per index and k, the cheapest
reaching setting of the sweep (brute force over the report's own sweep table), records that
``--fail-if`` can read, what a target no setting reaches says, and pages the same every run."""

from __future__ import annotations

import numpy as np
import pytest

from embdiag.report import measure, sections

pytest.importorskip("faiss")

K = 5


@pytest.fixture(scope="module")
def vectors():
    return np.random.default_rng(3).standard_normal((400, 12)).astype(np.float32)


@pytest.fixture(scope="module")
def reports(vectors):
    """A timed report and an untimed one of the same vectors (hnsw and a factory IVF), and an untimed
    one whose target no setting reaches (an interval never lies wholly at 1)."""
    spec = "hnsw;faiss:IVF8,Flat"
    timed = measure(vectors, index=spec, k=K, progress=False)
    untimed = measure(vectors, index=spec, k=K, progress=False, timed=False)
    never = measure(vectors, index="faiss:IVF8,Flat", k=K, progress=False, timed=False, target_recall=1.0)
    return timed, untimed, never


def _cost(r):
    return (r["ops_per_query"], r["bytes_per_vector"], r["value"])


def test_one_setting_per_index_and_k(reports):
    table = reports[0].tables["index_setting"]
    assert list(zip(table["condition"], table["k"])) == [(c, k) for c in ("hnsw", "ivf8-flat") for k in (1, K, 10, 100)]
    assert table["reached"].all() and (table["low"] >= 0.95).all()
    assert set(reports[0].tables["index_sweep"].query("condition == 'hnsw'")["build"]) == {
        f"M={m}, efConstruction={ef}" for m in (8, 16, 32) for ef in (40, 200)
    }


def test_the_setting_is_the_cheapest_reaching_row_of_the_sweep(reports):
    sweep = reports[0].tables["index_sweep"]
    table = reports[0].tables["index_setting"]
    order = {b: i for i, b in enumerate(dict.fromkeys(sweep["build"]))}
    for _, row in table.iterrows():
        rows = sweep[(sweep["condition"] == row["condition"]) & (sweep["k"] == row["k"])]
        passing = rows[rows["low"] >= row["target"]]
        best = min(passing.to_dict("records"), key=lambda r: (*_cost(r)[:2], order[r["build"]], r["value"]))
        assert (best["build"], best["value"], best["recall"]) == (row["build"], row["value"], row["recall"])
        assert rows["chosen"].sum() == 1 and rows.loc[rows["chosen"], "value"].item() == row["value"]


def test_records_give_the_setting_recall_interval_and_bytes(reports):
    metrics, table = reports[0].metrics, reports[0].tables["index_setting"]
    for _, row in table.iterrows():
        got = metrics[(metrics["condition"] == row["condition"]) & metrics["metric"].str.endswith(f"@{row['k']}")]
        recall = got[got["metric"] == f"tuned_recall@{row['k']}"].iloc[0]
        assert (recall["value"], recall["low"], recall["high"]) == (row["recall"], row["low"], row["high"])
        assert got[got["metric"] == f"tuned_bytes_per_vector@{row['k']}"]["value"].item() == row["bytes_per_vector"]
        assert got[got["metric"] == f"reaches_target@{row['k']}"]["value"].item() == 1.0


def test_a_target_no_setting_reaches_is_said_and_recorded_as_such(reports):
    never = reports[2]
    table = never.tables["index_setting"]
    assert not table["reached"].any() and (table["value"] == 8).all()  # the best: every list visited
    m = never.metrics
    assert (m[m["metric"].str.startswith("reaches_target")]["value"] == 0).all()
    assert m[m["metric"].str.startswith("tuned_")]["value"].isna().all()
    text = sections.indexes.answer(never)._repr_markdown_()
    assert "none of the 4 swept settings reaches 1" in text and "every list visited" in text


def test_an_untimed_report_has_no_speed_and_the_same_choice(reports):
    timed, untimed = reports[0], reports[1]
    for name in ("index_setting", "index_sweep"):
        assert timed.tables[name].equals(untimed.tables[name])
    assert all(np.isnan(s["queries_per_s"]) for s in untimed.timings["index_tuning_searches"])
    assert all(s["queries_per_s"] > 0 for s in timed.timings["index_tuning_searches"])


def test_the_answer_comes_first_and_speeds_only_with_timings(reports):
    timed = reports[0]
    plain = sections.indexes.exhibits(timed)
    text = plain[1]._repr_markdown_()
    assert text.startswith(f"- For recall@{K} ≥ 0.95, **hnsw**: M=") and "queries/s" not in text
    assert "recall@1 " not in text  # the other k are in the folded table
    page = "\n".join(x._repr_html_() if hasattr(x, "_repr_html_") else x._repr_markdown_() for x in plain)
    assert "report-index-setting" in page and "report-index-sweep" in page and "report-index-curves" in page
    again = sections.indexes.exhibits(reports[1])
    assert [x._repr_html_() if hasattr(x, "_repr_html_") else x._repr_markdown_() for x in again] == [
        x._repr_html_() if hasattr(x, "_repr_html_") else x._repr_markdown_() for x in plain
    ]
    fast = sections.indexes.answer(timed, timings=True)._repr_markdown_()
    assert "queries/s (this run)" in fast


def test_report_json_with_the_setting_follows_the_schema(reports, tmp_path):
    import json

    from embdiag.report import verify

    reports[2].save(tmp_path)
    document = verify.load(tmp_path)  # checked against the schema
    assert {"index_setting", "index_sweep"} <= set(document["tables"])
    assert json.loads((tmp_path / "report.json").read_text())["tables"]["index_setting"][0]["reached"] is False
