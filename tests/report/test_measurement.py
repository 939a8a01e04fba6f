"""``measure``: every number cross-checked against a direct call of the library (or brute force),
determinism, sampling, error messages, and the atomic ``Report.save``."""

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from embdiag.interventions.codes import calibration_ranges, sign_topk
from embdiag.interventions.compression import MatryoshkaPrefix, PCACompression
from embdiag.interventions.truncation import compare_truncation
from embdiag.interventions.precision import store
from embdiag.metrics import geometry
from embdiag.metrics.labels import balanced_accuracy, eligible_classes
from embdiag.metrics.probe import fit_probes
from embdiag.metrics.retrieval import hit_at_k, overlap_at_k, precision_at_k, random_floor, topk
from embdiag.report.conditions import parse_index
from embdiag.data.files import InputError
from embdiag.report.measurement import METRIC_COLUMNS, Report, measure
from embdiag.report.sections.summary import verdict

from embdiag.report import measurement as measure_mod
from embdiag.report import streams
from embdiag.report.sections import identity

K = 5
N, D = 500, 16


def make_data(seed=0, n=N):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, n)
    X = (2.0 * rng.standard_normal((4, D))[y] + rng.standard_normal((n, D))).astype(np.float32)
    labels = pd.DataFrame({"cluster": [f"c{v}" for v in y], "noise": rng.integers(0, 2, n).astype(str)})
    return X, labels


X, LABELS = make_data()
PAIRS = [np.array([(i + 1) % N]) for i in range(N)]


@pytest.fixture(scope="module")
def faiss_one_thread():
    faiss = pytest.importorskip("faiss")
    faiss.omp_set_num_threads(1)
    return faiss


@pytest.fixture(scope="module")
def report(faiss_one_thread):
    return measure(X, labels=LABELS, pairs=PAIRS, compress="fp16,int8,pca8", index="hnsw", k=K, progress=False)


def value(rep, section, metric, condition, attribute=""):
    m = rep.metrics
    row = m[(m.section == section) & (m.metric == metric) & (m.condition == condition) & (m.attribute == attribute)]
    assert len(row) == 1, (section, metric, condition, attribute)
    return row.iloc[0]


def exact(Z):
    return topk(Z, Z, K, exclude_self=True)[1]


def test_sections_tables_and_columns(report):
    assert list(report.metrics.columns) == METRIC_COLUMNS
    assert set(report.scope) == {
        "hygiene",
        "summary",
        "geometry",
        "labels",
        "identity",
        "hubness",
        "indexes",
        "relevance",
        "frontier",
    }
    assert all(s.endswith(".") for s in report.scope.values())
    assert set(report.tables) == {
        "conditions",
        "geometry",
        "identity",
        "support",
        "labels",
        "relevance",
        "summary",
        "frontier",
        "indexes",
        "index_curves",
        "index_setting",
        "index_sweep",
        "hygiene",
        "hubness",
        "hubness_tail",
    }
    assert report.inputs["n_queries"] == N and report.inputs["n_gallery"] == N and not report.inputs["quick"]
    assert [c["name"] for c in report.inputs["conditions"]] == ["fp16", "int8", "pca8", "hnsw"]


def unit(A):
    return (A / np.linalg.norm(A.astype(np.float64), axis=1, keepdims=True)).astype(np.float32)


def test_geometry_is_the_library_summary_of_raw_and_of_unit_rows_kept_apart(report):
    """Issue #25, point 3: every representation with vectors in both spaces, labelled, never mixed."""
    for key, v in geometry.summary(X).items():
        assert value(report, "geometry", key, "reference", "raw").value == v
    for key, v in geometry.summary(unit(X)).items():
        assert value(report, "geometry", key, "reference", "unit").value == v
    recon = store(X, "int8").reconstruct().astype(np.float32)
    assert value(report, "geometry", "rankme", "int8", "raw").value == geometry.summary(recon)["rankme"]
    assert value(report, "geometry", "rankme", "int8", "unit").value == geometry.summary(unit(recon))["rankme"]
    # a compression's raw rows are its projection (not renormalized): its total variance is the PCA's share
    pca = PCACompression(8).fit(X)
    projected = ((X - pca.mean_) @ pca.components_.T).astype(np.float32)
    raw_tv = value(report, "geometry", "total_variance", "pca8", "raw").value
    assert raw_tv == geometry.summary(projected)["total_variance"] and raw_tv < geometry.summary(X)["total_variance"]
    assert value(report, "geometry", "total_variance", "pca8", "unit").value < N / (N - 1)  # unit rows: at most n/(n-1)
    table = report.tables["geometry"]
    assert list(table.columns[:2]) == ["space", "representation"] and set(table.space) == {"raw", "unit"}
    assert (table.groupby("space").representation.apply(list) == [["reference", "fp16", "int8", "pca8"]] * 2).all()
    assert not (report.metrics.condition[report.metrics.section == "geometry"] == "hnsw").any()


def test_identity_overlap_equals_overlap_at_k_against_exact_topk(report):
    ref = exact(X)
    fp16 = exact(store(X, "float16").reconstruct().astype(np.float32))
    ov = overlap_at_k(ref, fp16, per_query=True)
    assert value(report, "identity", f"overlap@{K}", "fp16").value == pytest.approx(ov.mean(), abs=1e-12)
    assert value(report, "identity", "changed_queries", "fp16").value == pytest.approx(np.mean(ov < 1), abs=1e-12)
    (h,) = parse_index("hnsw", N, D)
    _, I = h.search(X, X, K + 1)
    index_nb = np.array([[j for j in row if j != i][:K] for i, row in enumerate(I)])
    assert value(report, "identity", f"overlap@{K}", "hnsw").value == pytest.approx(
        overlap_at_k(ref, index_nb), abs=1e-12
    )


def test_storage_certificate_has_no_violations(report):
    row = report.tables["identity"].set_index("condition").loc["fp16"]
    assert row.cert_violations == 0 and 0 < row.cert_coverage <= 1
    assert row.cert_queries == min(N, identity.CERT_QUERIES) and row.cert_gallery == N
    assert value(report, "identity", "cert_violations", "int8").value == 0
    assert np.isnan(report.tables["identity"].set_index("condition").loc["hnsw"].cert_coverage)


def test_delta_p_is_the_difference_of_precision_at_k(report):
    y = LABELS["noise"].to_numpy()
    ref = precision_at_k(exact(X), y, per_query=True)
    pca = precision_at_k(exact(report_pca_vectors()), y, per_query=True)
    row = value(report, "relevance", f"delta_p@{K}", "pca8", "noise")
    assert row.value == pytest.approx(100 * (pca.mean() - ref.mean()), abs=1e-9)
    assert row.low <= row.value <= row.high
    assert value(report, "labels", f"p@{K}", "reference", "noise").value == pytest.approx(ref.mean(), abs=1e-12)
    lab = report.tables["labels"].set_index(["representation", "attribute"])
    assert lab.loc[("reference", "noise"), "p_floor"] == random_floor(y)
    assert lab.loc[("reference", "cluster"), "ba_floor"] == 0.25


def report_pca_vectors():
    return PCACompression(8).fit(X).transform(X).astype(np.float32)


def test_probe_and_pairs(report):
    assert value(report, "labels", "probe_ba", "reference", "cluster").value > 0.9
    assert 0.2 < value(report, "labels", "probe_ba", "reference", "noise").value < 0.8
    assert not ((report.metrics.metric == "probe_ba") & (report.metrics.condition == "hnsw")).any()
    hit = hit_at_k(exact(X), PAIRS)
    assert value(report, "relevance", f"hit@{K}", "reference").value == pytest.approx(hit, abs=1e-12)
    d = value(report, "relevance", f"delta_hit@{K}", "fp16")
    fp16 = hit_at_k(exact(store(X, "float16").reconstruct().astype(np.float32)), PAIRS)
    assert d.value == pytest.approx(100 * (fp16 - hit), abs=1e-9)


def test_support_reports_rare_classes():
    labels = LABELS.copy()
    labels.loc[:2, "noise"] = "rare"
    rep = measure(X, labels=labels, k=K, progress=False)
    sup = rep.tables["support"].set_index(["attribute", "class"])
    assert sup.loc[("noise", "rare"), "count"] == 3 and not sup.loc[("noise", "rare"), "eligible"]
    assert value(rep, "labels", "rare_classes", "reference", "noise").value == 1


def test_same_seed_same_json_and_save_round_trip(report, faiss_one_thread, tmp_path):
    again = measure(X, labels=LABELS, pairs=PAIRS, compress="fp16,int8,pca8", index="hnsw", k=K, progress=False)
    untimed = lambda r: {key: v for key, v in r.to_json().items() if key != "timings"}  # noqa: E731
    assert json.dumps(untimed(report), sort_keys=True) == json.dumps(untimed(again), sort_keys=True)
    assert report.timings["index_builds"][0]["condition"] == "hnsw"  # timings: kept, not reproduced
    other = measure(X, labels=LABELS, compress="pca8", k=K, seed=1, progress=False)
    assert other.inputs["seed"] == 1
    paths = report.save(tmp_path / "out")
    names = sorted(p.name for p in paths)
    assert names == sorted(["report.json"] + [f"{t}.csv" for t in report.tables])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == names  # no temporary folder left
    loaded = json.loads((tmp_path / "out" / "report.json").read_text())
    assert loaded == json.loads(json.dumps(report.to_json()))
    pd.testing.assert_frame_equal(
        pd.read_csv(tmp_path / "out" / "geometry.csv"), report.tables["geometry"], check_exact=False, rtol=1e-12
    )


def test_save_leaves_nothing_on_failure(tmp_path, monkeypatch):
    rep = Report({"n": 1}, {"geometry": "x."}, {"a": pd.DataFrame({"x": [1]}), "b": pd.DataFrame({"x": [2]})})
    calls = []

    def fail_second(self, path, **kw):
        calls.append(path)
        if len(calls) == 2:
            raise OSError("disk full")
        return original(self, path, **kw)

    original = pd.DataFrame.to_csv
    monkeypatch.setattr(pd.DataFrame, "to_csv", fail_second)
    out = tmp_path / "out"
    with pytest.raises(OSError, match=r"^disk full$"):
        rep.save(out)
    assert list(out.iterdir()) == []
    with pytest.raises(
        ValueError, match=r"^tables: names must be plain file names other than 'report', got \['../x'\]$"
    ):
        Report({}, {}, {"../x": pd.DataFrame()}).save(out)


def test_nan_becomes_null_in_json():
    rep = Report({"x": np.float64("nan")}, {}, {"t": pd.DataFrame({"v": [np.nan, 1.0]})})
    assert rep.to_json() == {
        "schema": "embdiag-report/2",
        "inputs": {"x": None},
        "scope": {},
        "summary": [],
        "gates": [],
        "metrics": [],
        "tables": {"t": [{"v": None}, {"v": 1.0}]},
        "timings": {},
    }
    json.dumps(rep.to_json(), allow_nan=False)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(labels=LABELS.iloc[:10]), r"^--labels: has 10 row\(s\), expected 500 \(one per vector\)$"),
        (dict(labels=LABELS["cluster"]), r"^--labels: expected a DataFrame \(one column per attribute\), got Series$"),
        (dict(compare=X[:10]), r"^--compare: has 10 row\(s\), expected 500 \(one per vector\)$"),
        (dict(queries=X[:5, :3]), r"^--queries: has 3 columns, VECTORS has 16$"),
        (dict(queries=X[:5], compare=X), r"^--compare: cannot be combined with --queries"),
        (dict(stress=True), r"^--stress: needs --labels"),
        (dict(k=498), r"^--k 498: must be at most 497: VECTORS has 500 rows; without --queries each query is searched"),
        (dict(pairs=PAIRS[:3]), r"^--pairs: positives for 3 queries, expected 500 \(one entry per query\)$"),
        (dict(pairs=[np.array([N])] * N), r"^--pairs: query 0 has a target outside 0\.\.499$"),
        (dict(compress="pca99"), r"^--compress: 'pca99' asks for 99 dimensions"),
        (dict(compress="fp16", index="hnsw,hnsw"), r"^--index: hnsw listed twice$"),
    ],
)
def test_bad_combinations_raise_input_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        measure(X, progress=False, **kwargs)


def test_bad_vectors():
    with pytest.raises(InputError, match=r"^VECTORS: expected a 2-D array, got shape \(5,\)$"):
        measure(np.ones(5), progress=False)


def test_separate_queries_pairs_with_missing_positives():
    Q = X[:40] + 0.01
    pos, which = [np.array([i]) for i in range(0, 40, 2)], np.arange(0, 40, 2)
    rep = measure(X, labels=LABELS, queries=Q, pairs=(pos, which), compress="fp16", k=K, progress=False)
    assert rep.inputs["n_queries"] == 40 and rep.inputs["n_queries_with_positives"] == 20
    assert not (rep.metrics.metric == f"p@{K}").any()
    assert any("P@k of the queries is not measured" in s for s in rep.inputs["notes"])
    _, nb = topk(Q[::2], X, K)
    assert value(rep, "relevance", f"hit@{K}", "reference").value == pytest.approx(hit_at_k(nb, pos), abs=1e-12)


def test_quick_samples_queries_and_gallery_keeping_positives(monkeypatch):
    monkeypatch.setattr(measure_mod, "QUICK_GALLERY_ROWS", 200)
    monkeypatch.setattr(measure_mod, "QUICK_QUERY_ROWS", 50)
    rep = measure(X, labels=LABELS, pairs=PAIRS, compress="fp16", k=K, quick=True, progress=False)
    assert rep.inputs["quick"] and "subsamples" in rep.inputs["quick_statement"]
    assert (rep.inputs["n_queries"], rep.inputs["n_gallery"]) == (50, 200)
    assert rep.inputs["n_queries_with_positives"] == 50  # every sampled query's target is in the gallery
    assert all(s.endswith("Quick run: from subsamples.") for s in rep.scope.values())
    assert "a seeded sample of 200 of 500 rows" in rep.inputs["sampling"]["gallery"]


def test_compare_file_condition_and_names():
    rep = measure(X, compare=X[:, :8] * 3.0, k=K, progress=False)
    assert [c["kind"] for c in rep.inputs["conditions"]] == ["file"]
    ov = overlap_at_k(exact(X), exact(X[:, :8] * 3.0))
    assert value(rep, "identity", f"overlap@{K}", "compare").value == pytest.approx(ov, abs=1e-12)
    assert value(rep, "geometry", "rankme", "compare", "raw").value == geometry.summary(X[:, :8] * 3.0)["rankme"]
    assert value(rep, "geometry", "rankme", "compare", "unit").value == geometry.summary(unit(X[:, :8] * 3.0))["rankme"]
    with pytest.raises(InputError, match=r"^conditions: names must be unique and not 'reference'"):
        measure(X, compare=X, compress="fp16", index=parse_index("hnsw", N, D) * 2, progress=False)


def test_labels_with_too_little_support_are_refused():
    rare = pd.DataFrame({"kind": np.arange(N) % (N // 5), "other": ["x"] * (N - 9) + ["y"] * 9})
    with pytest.raises(
        InputError,
        match=r"^--labels: too little support: no column has two classes with at least "
        r"10 items each \(columns: kind, other\)$",
    ):
        measure(X, labels=rare, progress=False)


def test_empty_specs_mean_no_condition():
    # what `embdiag report` passes when --compress / --index are absent
    rep = measure(X, compare=X[:, :8], compress="", index=" ", k=K, progress=False)
    assert [c["name"] for c in rep.inputs["conditions"]] == ["compare"]


@pytest.mark.slow
def test_stress_grid_on_the_probe_split():
    Xs, labels = make_data(seed=1, n=300)
    rep = measure(Xs, labels=labels[["cluster"]], stress=True, k=K, progress=False)
    grid = rep.tables["stress"]
    assert len(grid) == 24 and set(grid.intervention) == {"contraction", "common_offset", "rank_restriction", "noise"}
    assert value(rep, "stress", f"overlap@{K}", "contraction@0.5").value == 1.0
    assert value(rep, "stress", "probe_ba", "noise@0", "cluster").value > 0.9


@pytest.mark.slow
def test_on_the_projects_cached_vectors():
    from embdiag.encoders.vectors import driving_vectors

    lv = driving_vectors("reference-cnn")
    V = lv.val.astype(np.float32)
    labels = pd.DataFrame({a: np.asarray(y).astype(str) for a, y in lv.val_labels.items()})
    rep = measure(V, labels=labels, compress="fp16,pca64", k=10, progress=False)
    assert value(rep, "identity", "cert_violations", "fp16").value == 0
    for a in labels.columns:
        row = rep.tables["labels"].set_index(["representation", "attribute"]).loc[("reference", a)]
        assert row.probe_ba > row.ba_floor


def test_a_future_of_the_sources_is_awaited_and_recorded():
    from concurrent.futures import Future

    files = Future()
    files.set_result({"VECTORS": {"file": "x.npy", "bytes": 1600, "sha256": "ab" * 32}})
    X = np.random.default_rng(0).standard_normal((50, 8)).astype(np.float32)
    assert measure(X, sources=files, progress=False).inputs["files"] == files.result()
    assert measure(X, progress=False).inputs["files"] == {}


# -- issue #25: split column, missing labels, gates, summary, vectors made once ----------------------------


def test_the_split_column_is_the_probe_split_and_never_an_attribute():
    """Point 4: train rows fit the probe, the others score it; no probe, P@k or gate on ``split``."""
    split = np.where(np.arange(N) % 3 == 0, " TEST", "Train")  # case and blanks ignored
    rep = measure(X, labels=LABELS.assign(split=split), compress="fp16", k=K, progress=False)
    assert rep.inputs["label_columns"] == ["cluster", "noise"] and rep.inputs["split_column"]
    assert "split" not in set(rep.metrics.attribute)
    train = np.arange(N) % 3 != 0
    y = LABELS["cluster"].to_numpy()
    probe = fit_probes(X[train], {"c": y[train]}, random_state=0)["c"]
    classes = np.intersect1d(eligible_classes(y, 10), y[~train])
    expected = balanced_accuracy(y[~train], probe.predict(X[~train]), classes)
    assert value(rep, "labels", "probe_ba", "reference", "cluster").value == pytest.approx(expected, abs=1e-12)
    assert rep.inputs["sampling"]["probes"].startswith(
        "the labels' split column: 333 of its 333 training rows fit them, 167 of its 167 evaluation"
    )
    with pytest.raises(InputError, match=r"^--fail-if 'probe_ba\[split\]<0.5': 'probe_ba' has no condition or "):
        measure(X, labels=LABELS.assign(split=split), k=K, progress=False, fail_if=["probe_ba[split]<0.5"])
    with pytest.raises(InputError, match=r"^--labels: unknown split names \['holdout'\]"):
        measure(X, labels=LABELS.assign(split=np.where(train, "train", "holdout")), k=K, progress=False)


def test_missing_labels_drop_the_row_for_that_attribute_only():
    """Point 8: counted per attribute; P@k skips unlabelled queries and counts labelled neighbours only."""
    labels = LABELS.copy()
    labels.loc[::7, "noise"] = None
    rep = measure(X, labels=labels, compress="fp16", k=K, progress=False)
    lost = int(labels["noise"].isna().sum())
    assert rep.inputs["missing_labels"] == {"cluster": 0, "noise": lost}
    assert value(rep, "labels", "missing_labels", "reference", "noise").value == lost
    y = labels["noise"].to_numpy(dtype=object)
    y = np.where(pd.isna(y), None, y)
    p = precision_at_k(exact(X), y)
    assert value(rep, "labels", f"p@{K}", "reference", "noise").value == pytest.approx(p, abs=1e-12)
    full = measure(X, labels=LABELS, compress="fp16", k=K, progress=False)
    assert (
        value(rep, "labels", "probe_ba", "reference", "cluster").value
        == value(full, "labels", "probe_ba", "reference", "cluster").value
    )
    assert (
        rep.tables["labels"].set_index(["representation", "attribute"]).loc[("fp16", "noise"), "missing_labels"] == lost
    )
    with pytest.raises(InputError, match=r"^--labels: column 'noise' has no value \(all 500 missing\)$"):
        measure(X, labels=LABELS.assign(noise=None), k=K, progress=False)


def test_a_misspelt_rule_is_refused_before_anything_is_measured(monkeypatch):
    """Point 5: the rules are checked against what the inputs will give, before the first measurement."""

    def never(*args, **kwargs):
        raise AssertionError("measured before the rules were checked")

    monkeypatch.setattr(measure_mod, "_sections", never)
    monkeypatch.setattr(measure_mod, "take_rows", never)
    with pytest.raises(
        InputError,
        match=r"^--fail-if 'overlap@50<0.9': the report has no metric 'overlap@50'; "
        r"its metrics are: abnormal_norms, antihub_overlap@5, antihub_share, bytes_per_vector, cert_coverage, ",
    ):
        measure(X, labels=LABELS, compress="fp16", k=K, progress=False, fail_if=["overlap@50<0.9"])
    with pytest.raises(InputError, match=r"'delta_p@5' has no condition or attribute 'clustr'"):
        measure(X, labels=LABELS, compress="fp16", k=K, progress=False, fail_if=["delta_p@5[clustr]<-1"])


def test_gate_outcomes_are_recorded_with_their_values(report):
    rules = ["overlap@5[pca8]<0.99", "delta_p@5[cluster]<-50", "mean_cosine[unit,reference]>2"]
    rep = measure(X, labels=LABELS, compress="fp16,pca8", k=K, progress=False, fail_if=rules)
    gates = pd.DataFrame(rep.gates)
    assert list(gates.columns) == [
        "rule",
        "metric",
        "threshold",
        "condition",
        "attribute",
        "value",
        "passed",
        "measured",
    ]
    first = gates[gates.rule == rules[0]].iloc[0]
    assert first.value == value(rep, "identity", "overlap@5", "pca8").value and not first.passed
    assert gates[gates.rule == rules[1]].passed.all() and len(gates[gates.rule == rules[1]]) == 2  # fp16, pca8
    assert gates[gates.rule == rules[2]].passed.all()
    assert rep.to_json()["gates"][0]["rule"] == rules[0] and "gates" in rep.tables


@pytest.mark.parametrize(
    "intervals, margin, words",
    [
        ([(0.0, 0.0)], 1.0, "within margin"),  # nothing changed: every interval is [0, 0]
        ([(-0.5, 0.4), (-0.1, 0.2)], 1.0, "within margin"),
        ([(0.1, 0.9), (0.2, 0.4)], 1.0, "gains relevance"),
        ([(-0.5, 0.4), (0.1, 0.9)], 1.0, "within margin"),  # one gain does not make the condition gain
        ([(-1.75, 0.63)], 1.0, "inconclusive"),  # no evidence of harm is not within margin
        ([(-0.5, 0.4)], 0.1, "inconclusive"),
        ([(0.1, 0.9), (-3.0, -1.2)], 1.0, "costs relevance"),
        ([(-0.4, -0.2)], 1.0, "within margin"),  # a small, certain loss inside the margin
        ([(-0.4, -0.2)], 0.1, "costs relevance"),
        ([], 1.0, "relevance not measured"),
    ],
)
def test_the_verdict_rule(intervals, margin, words):
    assert verdict([{"low": lo, "high": hi} for lo, hi in intervals], margin) == words


def test_an_uninformative_change_decides_nothing():
    costly = {"low": -9.0, "high": -2.0, "informative": False}
    assert verdict([costly], 1.0) == "relevance not informative"
    assert verdict([costly, {"low": -0.2, "high": 0.1}], 1.0) == "within margin"


def test_the_summary_puts_identity_relevance_and_probes_side_by_side(report):
    """Point 6: one entry per condition, from the section tables, with the verdict of its numbers."""
    summary = {e["condition"]: e for e in report.summary}
    assert list(summary) == ["fp16", "int8", "pca8", "hnsw"]
    ident = report.tables["identity"].set_index("condition")
    for name, e in summary.items():
        assert e["changed_queries"] == ident.loc[name, "changed_queries"]
        assert e[f"overlap@{K}"] == ident.loc[name, f"overlap@{K}"]
        rel = report.tables["relevance"]
        assert len(e["relevance"]) == (rel.condition == name).sum() == 4  # ΔP@k x 2 columns, ΔHit@k, Δrecall@k
        assert e["verdict"] == verdict(e["relevance"], report.inputs["margin_pp"])
        assert all(r["verdict"] in {"gains", "within margin", "costs", "inconclusive"} for r in e["relevance"])
        assert all(isinstance(r["informative"], bool) for r in e["relevance"])
    lab = report.tables["labels"].set_index(["representation", "attribute"])["probe_ba"]
    pca = {p["attribute"]: p["change_pp"] for p in summary["pca8"]["labels"]}
    assert pca["cluster"] == pytest.approx(100 * (lab[("pca8", "cluster")] - lab[("reference", "cluster")]))
    assert summary["hnsw"]["labels"] == []  # an index has no vectors to probe
    table = report.tables["summary"]
    assert list(table.columns) == [
        "condition",
        "kind",
        "changed_queries",
        f"overlap@{K}",
        "relevance_change_pp",
        "probe_ba_change_pp",
        "verdict",
        "queries_needed",
    ]
    assert report.inputs["margin_pp"] == 1.0
    assert table.relevance_change_pp.iloc[2].startswith(f"ΔP@{K} cluster ")
    assert report.to_json()["summary"][0]["condition"] == "fp16"


def test_a_full_run_makes_each_conditions_vectors_once(monkeypatch):
    """Point 9: geometry and search read the same vectors of every row (probes read their own few rows)."""
    from embdiag.report.conditions import Compression, Storage

    calls = []
    for cls in (Storage, Compression):
        original = cls.vectors
        monkeypatch.setattr(
            cls,
            "vectors",
            lambda self, Z, *a, _o=original, **kw: calls.append((self.name, len(Z))) or _o(self, Z, *a, **kw),
        )
    measure(X, labels=LABELS, compress="int8,pca8", k=K, progress=False)
    assert sorted(c for c in calls if c[1] == N) == [("int8", N), ("pca8", N)]


@pytest.mark.parametrize(
    "scale, reason",
    [(1e-30, "zero vectors (cosine is undefined on them)"), (1e6, "values lie beyond float16's largest, 65,504")],
)
def test_a_condition_that_cannot_represent_valid_rows_is_a_result_not_a_failure(scale, reason):
    # Issue #30: float32 rows scaled by 1e-30 (their float16 copies underflow to zero) or beyond
    # float16's range with --compress fp16 made the whole report fail (exit 3).
    X = (np.random.default_rng(5).normal(size=(60, 8)) * scale).astype(np.float32)
    rep = measure(X, compress="fp16,int8", k=3, fail_if=["overlap@3[fp16]<0.5"], progress=False)
    fp16, int8 = rep.summary
    assert fp16["condition"] == "fp16" and fp16["verdict"] == "cannot represent these vectors"
    assert reason in fp16["reason"] and np.isnan(fp16["changed_queries"])
    assert int8["verdict"] != "cannot represent these vectors" and int8["changed_queries"] >= 0  # the rest is measured
    assert any(n.startswith("fp16 cannot represent these vectors") for n in rep.inputs["notes"])
    assert not (rep.metrics["condition"] == "fp16").any() and (rep.metrics["condition"] == "int8").any()
    assert [g["measured"] for g in rep.gates] == [False]  # a gate on it fails as not measured
    saved = json.loads(json.dumps(rep.to_json()))  # report.json: the verdict and its reason, NaN as null
    first = saved["summary"][0]
    assert first["verdict"] == "cannot represent these vectors" and reason in first["reason"]


def test_float64_rows_beyond_sums_of_squares_are_refused_by_name():
    X = np.random.default_rng(6).normal(size=(40, 4)) * 1e200
    with pytest.raises(InputError, match=r"VECTORS: largest magnitude \d\.\d+e\+200 lies outside \[2\^-500, 2\^500\]"):
        measure(X, progress=False)
    measure(X * 1e-200 * 2.0**400, progress=False)  # just inside: measured


@pytest.fixture(scope="module")
def low_bit(faiss_one_thread):
    """Issue #26: the low-bit storage formats beside the study's, and an index, on one report."""
    return measure(
        X,
        labels=LABELS,
        compress="fp16,fp8,int8cal,int4,binary,binary-rescore",
        index="hnsw",
        k=K,
        progress=False,
    )


def test_low_bit_formats_are_measured_with_their_bytes_per_vector(low_bit):
    faiss = pytest.importorskip("faiss")
    bytes_ = {c: value(low_bit, "identity", "bytes_per_vector", c).value for c in ("fp16", "fp8", "int8cal", "int4")}
    assert bytes_ == {"fp16": 2 * D, "fp8": D + 4, "int8cal": D, "int4": D / 2}
    assert value(low_bit, "identity", "bytes_per_vector", "binary").value == D / 8
    assert value(low_bit, "identity", "bytes_per_vector", "binary-rescore4").value == D / 8
    (hnsw,) = parse_index("hnsw", N, D)
    assert hnsw.bytes_per_vector(D) is None  # not built yet
    hnsw.search(X[:2], X, K)
    links = faiss.downcast_index(hnsw._cache["ann"].index_).hnsw.neighbors.size()  # 2M links at level 0, M above
    assert links >= 2 * 32 * N
    assert value(low_bit, "identity", "bytes_per_vector", "hnsw").value == pytest.approx(4 * D + 4 * links / N + 12)


def test_low_bit_formats_search_their_own_codes(low_bit):
    """Reconstructed formats by exact float32 cosine search; sign bits by Hamming distance."""
    ref = exact(X)
    for name, fmt in (("fp8", "fp8"), ("int8cal", "int8cal"), ("int4", "int4")):
        # calibrated on the report's fit sample: every row of a 500-row file
        recon = store(X, fmt, calibration_ranges(X) if fmt in ("int8cal", "int4") else None).reconstruct()
        ov = overlap_at_k(ref, exact(recon.astype(np.float32)), per_query=True)
        assert value(low_bit, "identity", f"overlap@{K}", name).value == pytest.approx(ov.mean(), abs=1e-12), name
    for name, rescore in (("binary", 0), ("binary-rescore4", 4)):
        # as for an index, the report asks for k + 1 and drops the query's own row wherever it ranks
        # (16 sign bits: other rows tie with it), so it rescores 4 (k + 1) candidates
        _, I = sign_topk(X, X, K + 1, rescore=rescore)
        others = np.array([[j for j in row if j != i][:K] for i, row in enumerate(I)])
        ov = overlap_at_k(ref, others, per_query=True)
        assert value(low_bit, "identity", f"overlap@{K}", name).value == pytest.approx(ov.mean(), abs=1e-12), name
    binary, rescored = (value(low_bit, "identity", f"overlap@{K}", n).value for n in ("binary", "binary-rescore4"))
    assert rescored > binary  # rescoring the candidates with the float query recovers neighbours


def test_the_certificate_covers_reconstructed_formats_and_not_sign_bits(low_bit):
    table = low_bit.tables["identity"].set_index("condition")
    for name in ("fp16", "fp8", "int8cal", "int4"):
        assert table.loc[name].cert_violations == 0, name
    assert table.loc["fp16"].cert_coverage > table.loc["fp8"].cert_coverage >= table.loc["int4"].cert_coverage
    assert np.isnan(table.loc["binary"].cert_coverage) and np.isnan(table.loc["binary-rescore4"].cert_coverage)
    relevance = low_bit.metrics[(low_bit.metrics.metric == f"delta_p@{K}") & (low_bit.metrics.condition == "int4")]
    assert (
        len(relevance) == 2 and (relevance.low <= relevance.value).all() and (relevance.value <= relevance.high).all()
    )


def test_a_truncation_is_certified_as_compare_truncation_certifies_it(report):
    """Issue #26: PCA and prefixes get the truncation certificate, on the same queries and gallery."""
    direct = compare_truncation(X, PCACompression(8).fit(X), X, k=K + 1)  # the query stays in its own search
    assert value(report, "identity", "cert_coverage", "pca8").value == direct.coverage
    assert value(report, "identity", "cert_violations", "pca8").value == direct.violations == 0
    small = X * np.r_[np.ones(12), np.full(4, 1e-3)].astype(np.float32)  # little beyond 12 dimensions
    prefix = measure(small, compress="prefix12", k=K, progress=False)
    direct = compare_truncation(small, MatryoshkaPrefix(12).fit(small), small, k=K + 1)
    assert value(prefix, "identity", "cert_coverage", "prefix12").value == direct.coverage > 0.5


def _qrels_for(n: int, seed: int = 5) -> list[dict]:
    """Graded judgments: each query's two next rows (grades 2 and 1), a judged non-relevant row,
    and a query without any judgment every tenth row."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        if i % 10 == 9:
            out.append({})
            continue
        out.append({int(rng.integers(0, n)): 0, (i + 1) % n: 2, (i + 2) % n: 1})
    for i, judged in enumerate(out):  # a query never judges itself (it is not among its neighbours)
        judged.pop(i, None)
    return out


def test_graded_relevance_is_the_library_measure_on_the_deep_lists():
    """Issue #26: --qrels gives nDCG@k, MRR@k, MAP@100 and recall@100 of every representation,
    each condition's change with a paired interval, searched 100 deep."""
    from embdiag.metrics.graded import average_precision_at_k, graded_recall_at_k, mrr_at_k, ndcg_at_k

    qrels = _qrels_for(N)
    rep = measure(X, qrels=qrels, compress="int4,prefix8", k=K, progress=False, fail_if=["delta_ndcg@5.low<-50"])
    assert rep.inputs["qrels_depth"] == 100 and rep.inputs["n_queries_judged"] == N - N // 10
    judged = [i for i in range(N) if qrels[i]]
    deep = topk(X, X, 100, exclude_self=True)[1][judged]
    q = [qrels[i] for i in judged]
    for metric, f, cut in (
        ("ndcg@5", ndcg_at_k, K),
        ("mrr@5", mrr_at_k, K),
        ("map@100", average_precision_at_k, 100),
        ("recall@100", graded_recall_at_k, 100),
    ):
        assert value(rep, "relevance", metric, "reference").value == pytest.approx(f(deep, q, k=cut), abs=1e-12)
    prefix = topk(X[:, :8], X[:, :8], 100, exclude_self=True)[1][judged]
    want = 100 * (ndcg_at_k(prefix, q, k=K) - ndcg_at_k(deep, q, k=K))
    row = value(rep, "relevance", "delta_ndcg@5", "prefix8")
    assert row.value == pytest.approx(want, abs=1e-9) and row.low <= row.value <= row.high
    # identity and P@k still read the first k of the same searches
    assert value(rep, "identity", "overlap@5", "prefix8").value == pytest.approx(
        overlap_at_k(exact(X), topk(X[:, :8], X[:, :8], K, exclude_self=True)[1]), abs=1e-12
    )
    assert {g["condition"] for g in rep.gates} == {"int4", "prefix8"}
    assert any(e["metric"] == "delta_map@100" for e in rep.summary[0]["relevance"])


def test_qrels_are_checked_and_the_depth_fits_a_small_gallery():
    small = X[:60]
    rep = measure(small, qrels=_qrels_for(60), compress="fp16", k=K, progress=False)
    assert rep.inputs["qrels_depth"] == 58  # 60 rows, the query itself excluded: 59 candidates, the margin's 1 more
    assert "recall@58" in set(rep.metrics.metric)
    with pytest.raises(InputError, match="^--qrels: give --pairs or --qrels, not both"):
        measure(X, qrels=_qrels_for(N), pairs=PAIRS, k=K, progress=False)
    with pytest.raises(InputError, match="^--qrels: judgments for 3 queries, expected 500"):
        measure(X, qrels=[{1: 1}] * 3, k=K, progress=False)
    with pytest.raises(InputError, match="^--qrels: query 0 grades row 1 1.5; grades are non-negative integers"):
        measure(X, qrels=[{1: 1.5}] + [{}] * (N - 1), k=K, progress=False)
    with pytest.raises(InputError, match="^--qrels: no relevant judgment"):
        measure(X, qrels=[{1: 0}] * N, k=K, progress=False)
    with pytest.raises(InputError, match="'ndcg@5' has no condition or attribute 'int8'"):
        measure(X, qrels=_qrels_for(N), compress="fp16", k=K, progress=False, fail_if=["ndcg@5[int8]<0.5"])


def test_steps_two_at_a_time_measure_what_one_at_a_time_measures(monkeypatch, faiss_one_thread):
    # every condition's search, probes and certificate and every index build are tasks; run two
    # at a time (each single-threaded) or one after another, the report is the same
    kwargs = dict(labels=LABELS, pairs=PAIRS, compress="fp16,int8,binary,pca8", index="hnsw", k=K, progress=False)
    used, run, local = [], measure_mod.run_tasks, measure_mod._local
    monkeypatch.setattr(
        measure_mod, "run_tasks", lambda tasks, workers, done: used.append(workers) or run(tasks, workers, done)
    )
    monkeypatch.setattr(measure_mod, "_local", lambda shard_rows: replace(local(shard_rows), workers=2))
    two = measure(X, **kwargs)
    monkeypatch.setattr(measure_mod, "PARALLEL_BYTES", 0)  # no two copies of the gallery fit
    one = measure(X, **kwargs)
    assert used == [2, 1]
    untimed = lambda r: {key: v for key, v in r.to_json().items() if key != "timings"}  # noqa: E731
    assert json.dumps(untimed(two), sort_keys=True) == json.dumps(untimed(one), sort_keys=True)


def test_a_task_failure_is_raised_unless_its_condition_cannot_represent_the_rows():
    def fails():
        raise ValueError("boom")

    got = measure_mod.run_tasks({("probe", "a"): fails, ("probe", "b"): lambda: 1}, 2, lambda key: None)
    assert isinstance(got[("probe", "a")], ValueError) and got[("probe", "b")] == 1  # handed back, not raised
    assert measure_mod._measured(got, {"a": "why"}) is got
    with pytest.raises(ValueError, match="boom"):
        measure_mod._measured(got, {})


def test_a_condition_that_cannot_represent_the_rows_has_no_probe_with_labels():
    X = (np.random.default_rng(5).normal(size=(200, 8)) * 1e-30).astype(np.float32)
    labels = pd.DataFrame({"half": np.repeat(["a", "b"], 100)})
    rep = measure(X, labels=labels, compress="fp16,int8", k=3, progress=False)
    assert rep.summary[0]["verdict"] == "cannot represent these vectors"
    probed = set(rep.tables["labels"].dropna(subset=["probe_ba"]).representation)
    assert probed == {"reference", "int8"}


def test_every_query_with_a_positive_is_scored_whatever_the_query_sample(monkeypatch):
    """Pairs for every third query, a query sample of 50: Hit@k and recall@k read every pair query
    (searched besides the sample), identity and P@k the sample alone, as without pairs."""
    monkeypatch.setattr(measure_mod, "QUERY_ROWS", 50)
    which = np.arange(0, N, 3)
    pos = [np.array([(i + 7) % N]) for i in which]
    rep = measure(X, labels=LABELS, pairs=(pos, which), compress="int4", k=K, progress=False)
    assert value(rep, "relevance", f"hit@{K}", "reference").value == pytest.approx(
        hit_at_k(exact(X)[which], pos), abs=1e-12
    )
    assert rep.inputs["n_queries_with_positives"] == len(which)
    assert set(rep.tables["relevance"].query("metric == 'delta_hit@5'").n_queries) == {len(which)}
    sample = measure_mod._sample_rows(N, 50, 0, streams.QUERIES)
    assert rep.inputs["n_queries"] == 50 and rep.inputs["n_queries_searched"] == len(np.union1d(sample, which))
    outside = len(np.setdiff1d(which, sample))
    assert rep.inputs["sampling"]["scored"] == (
        f"Hit@5 and recall@5 over every one of the {len(which)} queries with a positive "
        f"({outside} of them outside the query sample, searched besides)"
    )
    alone = measure(X, labels=LABELS, compress="int4", k=K, progress=False)
    for table in ("identity", "labels"):
        pd.testing.assert_frame_equal(rep.tables[table], alone.tables[table])
    monkeypatch.setattr(measure_mod, "QUICK_QUERY_ROWS", 40)  # a quick run scores a seeded sample of them
    quick = measure(X, pairs=(pos, which), compress="int4", k=K, quick=True, progress=False)
    assert quick.inputs["n_queries_with_positives"] == 40
    assert quick.inputs["sampling"]["scored"].startswith(
        f"Hit@5 and recall@5 over a seeded sample of 40 of the {len(which)}"
    )


@pytest.mark.parametrize(
    "n, separate, k, limit",
    [(60, False, 57, 57), (60, True, 58, 58), (4, False, 1, 1), (3, True, 1, 1), (3, False, 1, None)],
)
def test_one_rule_for_k_measures_up_to_its_limit_and_refuses_past_it(n, separate, k, limit):
    """k + 1 ranked rows besides a query's own (the boundary margin reads rank k + 1), of at most
    n - 1 that exact search returns: k <= n - 3, or n - 2 with --queries."""
    Z = X[:n]
    queries = Z[:5] + 0.01 if separate else None
    if limit is not None:
        rep = measure(Z, queries=queries, compress="fp16,int8", k=k, progress=False)
        assert rep.tables["identity"][f"overlap@{k}"].notna().all()
    with pytest.raises(InputError, match=rf"^--k {k + 1 if limit else k}: ") as e:
        measure(Z, queries=queries, compress="fp16", k=k + 1 if limit else k, progress=False)
    assert (f"must be at most {limit}:" if limit else "no k fits:") in str(e.value)
    assert ("own" in str(e.value)) is not separate


def test_a_report_whose_every_condition_cannot_represent_the_rows_is_measured(tmp_path):
    """float32 rows beyond float16's 65,504 with fp16 alone: a result (no identity, no frontier), no failure."""
    from embdiag.report import sections

    rep = measure(X * 1e5, compress="fp16", k=K, progress=False)
    assert [(e["condition"], e["verdict"]) for e in rep.summary] == [("fp16", "cannot represent these vectors")]
    assert "identity" not in rep.tables and "frontier" not in rep.tables and "summary" in rep.tables
    rep.save(tmp_path)
    for section in sections.PAGE:
        shown = section.exhibits(rep)
        if section.NAME in ("identity", "frontier"):
            assert shown[0].data.startswith("*Not measured:* no condition given can represent these vectors")


@pytest.mark.slow
def test_the_command_writes_a_report_whose_every_condition_cannot_represent_the_rows(tmp_path):
    from embdiag.report import cli

    np.save(tmp_path / "big32.npy", X * 1e5)
    assert (
        cli.main([str(tmp_path / "big32.npy"), "--compress", "fp16", "--out", str(tmp_path / "r")], progress=False) == 0
    )
    summary = json.loads((tmp_path / "r" / "report.json").read_text())["summary"]
    assert [e["verdict"] for e in summary] == ["cannot represent these vectors"]
