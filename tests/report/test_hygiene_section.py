"""The report's hygiene section: its findings on constructed rows, cross-checked against
scikit-learn and brute force; invariance to row order and to row scale for what cosine reads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from embdiag.metrics.retrieval import topk
from embdiag.report import measurement as M
from embdiag.report.sections import hygiene
from embdiag.report.sections.presentation import code_options


def _plan(V, queries=None, k=5):
    return M._plan(
        V,
        labels=None,
        compare=None,
        pairs=None,
        qrels=None,
        queries=queries,
        compress=(),
        index=(),
        k=k,
        stress=False,
        quick=False,
        seed=0,
        min_support=5,
        fail_if=(),
        margin=1.0,
        target_recall=0.95,
    )


def _measured(V, queries=None, k=5):
    plan = _plan(V, queries, k)
    S, _ = M._exact(plan.Q, plan.G, max(plan.k + 1, plan.depth), plan.self_pos, topk)
    sec = hygiene.measure(plan, S, topk)
    return plan, sec, {r["metric"]: r for r in sec.rows}


def _rows(n=400, d=16, seed=0):
    """Clustered unit rows with rows 10 and 11 copies of row 3, row 20 a near copy of row 5
    (cosine > 0.99) and row 30 fifty times longer than the others."""
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((8, d))[rng.integers(0, 8, n)] + 0.7 * rng.standard_normal((n, d))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    V[[10, 11]] = V[3]
    V[20] = V[5] + 0.01 * rng.standard_normal(d)
    V[30] *= 50
    return V.astype(np.float32)


@pytest.fixture(scope="module")
def constructed():
    return _measured(_rows())


def test_findings_on_constructed_rows(constructed):
    plan, sec, rec = constructed
    assert rec["exact_duplicates"]["value"] == 2
    assert rec["abnormal_norms"]["value"] == 1
    assert rec["zero_rows"]["value"] == 0 and rec["rogue_dimensions"]["value"] == 0
    table = sec.tables["hygiene"].set_index("metric")
    assert table.loc["exact_duplicates", "found"] and table.loc["abnormal_norms", "found"]
    assert table.loc["near_duplicate_share", "found"] and not table.loc["rogue_dimensions", "found"]
    assert table.loc["exact_duplicates", "aux"] == 1  # rows 3, 10 and 11 are one row
    assert sec.measured and set(sec.timings) == {"hygiene_s"}


def test_near_duplicate_share_matches_scikit_learn(constructed):
    from sklearn.neighbors import NearestNeighbors

    plan, sec, rec = constructed
    G = plan.G.astype(np.float64)
    dist, idx = NearestNeighbors(n_neighbors=2, metric="cosine").fit(G).kneighbors(G)
    other = np.where(idx[:, 0] == np.arange(len(G)), dist[:, 1], dist[:, 0])  # a copy may come before the row
    near = (1 - other >= hygiene.NEAR_DUPLICATE)[plan.q_sel[plan.sample]]
    assert rec["near_duplicate_share"]["value"] == pytest.approx(near.mean())
    assert near.sum() == 5  # rows 3, 10, 11 and the pair 5, 20


def test_inner_product_changes_match_brute_force():
    rng = np.random.default_rng(1)
    V = rng.standard_normal((300, 8))
    V = (V / np.linalg.norm(V, axis=1, keepdims=True) * rng.lognormal(0, 0.03, (300, 1))).astype(np.float32)
    plan, sec, rec = _measured(V, k=5)
    X = V.astype(np.float64)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    ip, cos = X @ X.T, U @ U.T
    np.fill_diagonal(ip, -np.inf)
    np.fill_diagonal(cos, -np.inf)
    kth = np.sort(cos, axis=1)[:, -5]
    by_ip = np.argsort(-ip, axis=1)[:, :5]
    changed = np.take_along_axis(cos, by_ip, axis=1).min(axis=1) < kth - hygiene.TIE
    assert 0 < changed.sum() < len(V)
    assert rec["ip_cosine_changed"]["value"] == pytest.approx(changed.mean())


def test_separate_groups_are_islands():
    rng = np.random.default_rng(6)
    V = np.concatenate([rng.standard_normal((150, 8)) + 40 * rng.standard_normal(8) for _ in range(3)])
    _, sec, rec = _measured(V.astype(np.float32))
    assert rec["island_share"]["value"] == pytest.approx(300 / 450)  # two of three groups outside the largest
    row = sec.tables["hygiene"].set_index("metric").loc["island_share"]
    assert row["found"] and row["aux"] == 3
    blob = rng.standard_normal((450, 8)).astype(np.float32)
    assert _measured(blob)[2]["island_share"]["value"] == 0


def test_every_record_is_available_to_fail_if(constructed):
    _, sec, rec = constructed
    assert set(rec) == set(hygiene.available(True))
    assert {r["section"] for r in sec.rows} == {"hygiene"} and {r["condition"] for r in sec.rows} == {"reference"}
    for r in sec.rows:
        if r["metric"] in hygiene.WITH_INTERVAL:
            assert r["low"] <= r["value"] <= r["high"]
        else:
            assert np.isnan(r["low"]) and np.isnan(r["high"])


def test_row_order_changes_nothing():
    V = _rows()
    perm = np.random.default_rng(2).permutation(len(V))
    a, b = _measured(V)[2], _measured(V[perm])[2]
    for metric in a:
        assert b[metric]["value"] == pytest.approx(a[metric]["value"], rel=1e-6), metric


def test_row_scale_changes_norm_findings_only():
    V = _rows()
    V[30] /= 50
    scale = np.random.default_rng(3).lognormal(0, 0.1, (len(V), 1)).astype(np.float32)
    scale[40] = 30
    a, b = _measured(V)[2], _measured(V * scale)[2]
    for metric in ("abnormal_norms", "norm_cv", "ip_cosine_changed"):
        assert b[metric]["value"] > a[metric]["value"], metric
    for metric in (
        "near_duplicate_share",
        "rogue_dimensions",
        "top_dimension_share",
        "relative_contrast",
        "concentrated_query_share",
    ):
        assert b[metric]["value"] == pytest.approx(a[metric]["value"], rel=1e-5), metric


def test_queries_out_of_distribution_and_in_the_gallery():
    rng = np.random.default_rng(4)
    centres = rng.standard_normal((10, 16)) * 3
    draw = lambda m: (centres[rng.integers(0, 10, m)] + rng.standard_normal((m, 16))).astype(np.float32)  # noqa: E731
    G = draw(1500)
    Q = np.concatenate([draw(300), (rng.standard_normal((200, 16)) * 3).astype(np.float32), G[:20]])
    plan, sec, rec = _measured(G, queries=Q)
    assert set(rec) == set(hygiene.available(False))
    Qu = Q / np.linalg.norm(Q, axis=1, keepdims=True)
    Gu = G / np.linalg.norm(G, axis=1, keepdims=True)
    copies = (Qu @ Gu.T).max(axis=1) >= hygiene.NEAR_DUPLICATE
    assert copies[-20:].all() and rec["query_in_gallery_share"]["value"] == pytest.approx(copies.mean())
    ood = rec["ood_query_share"]
    assert ood["low"] > hygiene.OOD_FLAG and 0.3 < ood["value"] < 0.45  # the 200 shifted queries, few others
    assert sec.tables["hygiene"].set_index("metric").loc["ood_query_share", "found"]
    _, sec, clean = _measured(G, queries=draw(500))
    assert clean["ood_query_share"]["low"] < hygiene.OOD_FLAG and clean["query_in_gallery_share"]["value"] < 0.01
    assert not sec.tables["hygiene"].set_index("metric").loc["ood_query_share", "found"]


def test_the_report_shows_it_first_and_fail_if_names_it():
    V = np.random.default_rng(5).standard_normal((300, 8))
    V = (V / np.linalg.norm(V, axis=1, keepdims=True)).astype(np.float32)
    report = M.measure(V, k=5, progress=False, fail_if=["exact_duplicates>0", "near_duplicate_share>0"])
    assert report.metrics["section"].iloc[0] == "hygiene"
    assert [g["passed"] for g in report.gates] == [True, True]
    parts = hygiene.exhibits(report)
    assert (parts[0].title, parts[0].text) == ("Scope", code_options(report.scope["hygiene"]))
    assert parts[1]._repr_markdown_() == "Nothing found at these thresholds."
    V[7] = V[2]
    report = M.measure(V, k=5, progress=False)
    assert "**Found:** exact duplicates, near duplicates." in hygiene.exhibits(report)[1]._repr_markdown_()
    shown = hygiene.findings(report)
    assert shown.loc["exact duplicates", "measured"] == "1 of 300 rows (0.33%); distinct rows with a copy: 1"
    assert shown.loc["zero rows", "what it does to the report"] == "nothing found"
    assert list(report.tables["hygiene"].columns) == list(hygiene.COLUMNS)
    html = hygiene.exhibits(report)[2]._repr_html_()
    assert "a duplicate pair&#x27;s members" in html or "a duplicate pair's members" in html
    assert isinstance(report.tables["hygiene"], pd.DataFrame)
