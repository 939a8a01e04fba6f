"""The stress-test section's home: its grid measured once, its declared findings and their verdicts."""

from dataclasses import fields
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from embdiag.encoders.vectors import LabelledVectors, driving_vectors
from embdiag.interventions.stress import INTERVENTIONS, SEVERITIES, n_kept
from embdiag.metrics import random_floor, rankme
from embdiag.metrics.inference import VERDICTS, at_least
from embdiag.metrics.stats import Interval
from embdiag.metrics.suite import frozen_classes
from embdiag.paper import findings, pipeline
from embdiag.study import check_attribute
from embdiag.study import stress_tests as st
from embdiag.synthetic import labelled_clusters

SEVERITIES_HERE = (0.5, 0.99)
SETTINGS = st.Settings(severities=SEVERITIES_HERE, k=5, attribute="weather", seed=3)


def _vectors(train, train_labels, val, val_labels) -> LabelledVectors:
    return LabelledVectors(train, val, train_labels, val_labels, source="synthetic clusters")


@pytest.fixture(scope="module")
def vectors():
    train, y_train = labelled_clusters(240, d=32, seed=1)
    val, y_val = labelled_clusters(160, d=32, seed=2)
    return _vectors(train, y_train, val, y_val)


@pytest.fixture(scope="module")
def results(vectors):
    return st.run(vectors, SETTINGS)


@pytest.fixture(scope="module")
def no_probes(vectors):
    return st.run(vectors, st.Settings(severities=(0.25, 0.9), k=5), probes=False)


def _assert_same(a: st.StressResults, b: st.StressResults) -> None:
    pd.testing.assert_frame_equal(a.grid, b.grid, check_exact=True)
    pd.testing.assert_frame_equal(a.sizes, b.sizes, check_exact=True)
    assert (a.floors, a.k, a.attribute, a.seed, a.d) == (b.floors, b.k, b.attribute, b.seed, b.d)
    assert a.noise_gaps == b.noise_gaps and a.ba_drops == b.ba_drops


def test_settings_are_the_chapters_parameters():
    defaults = pipeline.parameters("05_stress_tests")
    for f in fields(st.Settings):
        expected = defaults[f.name]
        assert (list(f.default) if f.name == "severities" else f.default) == expected, f.name
    assert st.Settings().severities == SEVERITIES


def test_run_is_a_function_of_its_inputs(vectors, results):
    again = st.run(
        _vectors(vectors.train.copy(), vectors.train_labels, vectors.val.copy(), vectors.val_labels), SETTINGS
    )
    _assert_same(again, results)
    _assert_same(st.run(vectors, st.Settings(severities=[0.99, 0.5, 0.0], k=5, seed=3)), results)  # sorted, 0 added


def test_run_reads_its_kept_result(vectors, results, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBDIAG_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("EMBDIAG_MEMO", raising=False)
    first = st.run(vectors, SETTINGS)
    assert len(list((tmp_path / "data" / "cache" / "memo").rglob("*.pkl"))) == 1
    second = st.run(vectors, SETTINGS)
    _assert_same(first, results)
    _assert_same(second, results)


def test_grid_rows_and_identity_at_zero(results, vectors):
    g = results.grid
    assert list(g["intervention"].unique()) == list(INTERVENTIONS)
    assert sorted(g["severity"].unique()) == [0.0, 0.5, 0.99]  # severity 0 is always measured
    assert len(g) == 4 * 3 and results.top == 0.99 and results.d == 32 and results.k == 5
    assert (results.attribute, results.seed) == ("weather", 3)
    zero = g[g["severity"] == 0].drop(columns="intervention")
    assert (zero.nunique() == 1).all()  # measured once, repeated per intervention
    assert (zero["overlap@5"] == 1).all()
    assert results.unchanged["rankme"] == pytest.approx(rankme(vectors.val), rel=1e-12)
    assert results.floors == {a: random_floor(y) for a, y in vectors.val_labels.items()}
    assert {f"{a} {m}" for a in vectors.val_labels for m in ("accuracy", "BA", "P@5")} <= set(g.columns)


def test_grid_follows_the_mapping(results):
    u = results.unchanged
    c = results.row("contraction", 0.99)
    assert c["total_variance"] == pytest.approx(1e-4 * u["total_variance"], rel=1e-9)
    for col in ("mean_cosine", "rankme", "participation_ratio", "overlap@5", "weather BA", "weather P@5"):
        assert c[col] == pytest.approx(u[col], rel=1e-9, abs=1e-12), col
    o = results.row("common_offset", 0.99)
    assert o["participation_ratio"] == pytest.approx(u["participation_ratio"], rel=1e-6)
    assert o["total_variance"] == pytest.approx(u["total_variance"], rel=1e-6)
    assert o["rankme"] < 3 and o["mean_cosine"] > 0.999
    assert o["weather BA"] == pytest.approx(u["weather BA"], abs=1e-12)  # standardized probes
    r = results.row("rank_restriction", 0.99)
    assert r["participation_ratio"] == pytest.approx(1.0, abs=1e-9)  # one direction of 32 kept
    noise = results.row("noise", 0.99)
    assert noise["total_variance"] == pytest.approx(99**2, rel=0.05) and noise["rankme"] > u["rankme"]
    with pytest.raises(ValueError, match="severity"):
        results.row("noise", 0.75)


def test_sizes_state_each_severity(results, vectors):
    size = results.sizes.set_index(["intervention", "severity"])["value"]
    rms = np.sqrt(np.mean(np.sum(vectors.train * vectors.train, axis=1)))
    assert size["contraction", 0.99] == pytest.approx(0.01)
    assert size["common_offset", 0.99] == pytest.approx(99 * rms, rel=1e-12)
    assert size["rank_restriction", 0.5] == n_kept(32, 0.5) == 16
    assert size["noise", 0.5] == pytest.approx(rms**2, rel=1e-12)


def test_run_is_the_library_grid_searching_each_representation_once(results, vectors, monkeypatch):
    """run's grid is stress.stress_grid's, number for number; one top-k search per representation."""
    import embdiag.interventions.stress as stress
    import embdiag.metrics.suite as suite

    arrays = (vectors.train, vectors.train_labels, vectors.val, vectors.val_labels)
    grid = stress.stress_grid(*arrays, severities=[0.0, *SEVERITIES_HERE], k=5, seed=3)
    pd.testing.assert_frame_equal(results.grid, grid, check_exact=True)
    searched = []
    topk = stress.topk
    monkeypatch.setattr(stress, "topk", lambda *a, **kw: searched.append(a[0]) or topk(*a, **kw))
    monkeypatch.setattr(suite, "topk", lambda *a, **kw: pytest.fail("a representation was searched twice"))
    again = st.run(vectors, SETTINGS)
    assert len(searched) == 1 + len(INTERVENTIONS) * len(SEVERITIES_HERE)  # the unchanged vectors, then each change
    pd.testing.assert_frame_equal(again.grid, results.grid, check_exact=True)


def test_run_without_probes(no_probes):
    assert not any(c.endswith((" BA", " accuracy")) for c in no_probes.grid)
    assert sorted(no_probes.grid["severity"].unique()) == [0.0, 0.25, 0.9] and no_probes.ba_drops == {}
    assert "not measured" in st.findings(no_probes).set_index("finding").iloc[3]["this run"]


@pytest.mark.parametrize(
    "settings, field",
    [
        *[(st.Settings(severities=s), "severities") for s in ([1.0], [-0.1], ["0.5"], "0.5", 0.5, [0.0], [])],
        (st.Settings(k=0), "k"),
        (st.Settings(k=2.5), "k"),
        (st.Settings(seed=-1), "seed"),
        (st.Settings(attribute="fog"), "attribute"),
    ],
)
def test_a_bad_setting_names_its_field(vectors, settings, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        st.run(vectors, settings, probes=False)


def test_a_bad_attribute_lists_the_labels(vectors):
    with pytest.raises(ValueError, match=r"attribute: 'fog' is not among the labels' attributes \['weather'"):
        st.run(vectors, st.Settings(attribute="fog"))


def test_study_csv_as_printed_and_consistent():
    study = st.read_study()
    assert list(study.index) == [
        "unchanged",
        "shrink (.99)",
        "eight directions (.99)",
        "common offset (.99)",
        "severe noise (.99)",
        "random-neighbour floor",
    ]
    assert list(study.index[:5]) == list(st.STUDY_NAMES.values())
    assert study.loc["shrink (.99)", "total_variance"] == "2.5703e-05"  # kept as printed
    assert study.loc["eight directions (.99)", "mean_cosine"] == "0.9050"
    num = study.drop(columns="intervention").replace("", np.nan).astype(float)
    u = num.loc["unchanged"]
    # the published rows obey the mappings: shrink scales variance by 1e-4, the offset keeps variance and PR,
    # noise of total variance 99**2 on unit vectors
    assert num.loc["shrink (.99)", "total_variance"] == pytest.approx(1e-4 * u["total_variance"])
    for col in ("mean_cosine", "rankme", "participation_ratio", "weather_ba_pct", "weather_p_at_10_pct"):
        assert num.loc["shrink (.99)", col] == u[col]
    assert (
        num.loc["common offset (.99)", ["total_variance", "participation_ratio"]].tolist()
        == u[["total_variance", "participation_ratio"]].tolist()
    )
    assert num.loc["severe noise (.99)", "total_variance"] == pytest.approx(99**2, rel=1e-3)
    assert set(study["intervention"]) == set(INTERVENTIONS) | {""}


def test_findings_table(results):
    verdicts = st.findings(results)
    table = findings.table(verdicts)
    assert list(table.index) == list(st.CRITERIA) and set(table["kind"]) == {"study"}
    assert set(table["verdict"]) <= set(VERDICTS)
    # the study's exact identities are decided on its printed values; its P@10 and BA carry no interval
    assert table["holds in the study"].tolist() == ["not testable", "holds", "holds", "not testable"]
    rank = table.loc["rank restriction costs labels"]
    assert rank["old criterion"] == st.CRITERIA["rank restriction costs labels"].was
    drop = results.unchanged["weather BA"] - results.row("rank_restriction", 0.99)["weather BA"]
    assert rank["old verdict"] == ("yes" if 100 * drop >= st.BA_COST_PP else "no")
    assert table.loc["noise: RankMe up, retrieval to chance", "old verdict"] == ""
    assert "computed exactly on the fixed gallery" in table.loc["contraction: only variance moves", "reason"]
    pd.testing.assert_frame_equal(st.findings(results, st.read_study()), verdicts)


def test_findings_are_of_the_measured_attribute(vectors):
    scene = st.run(vectors, st.Settings(severities=SEVERITIES_HERE, k=5, attribute="scene", seed=3))
    assert "scene P@5" in st.findings(scene).loc[0, "this run"]


def test_every_claim_declares_its_margin_and_why():
    for claim in st.CRITERIA.values():
        assert claim.margin and claim.why and claim.kind == "study"
    assert "±2 pp" in st.CRITERIA["noise: RankMe up, retrieval to chance"].margin
    assert st.CRITERIA["rank restriction costs labels"].margin == "5 pp"


def test_the_ba_drop_is_the_grids_difference(results, vectors):
    assert set(results.ba_drops) == set(vectors.val_labels)
    for a, drop in results.ba_drops.items():
        u, r = results.unchanged[f"{a} BA"], results.row("rank_restriction", 0.99)[f"{a} BA"]
        assert drop.mean == pytest.approx(u - r, abs=1e-12)
        assert drop.low <= drop.mean <= drop.high and drop.n_groups == len(frozen_classes(vectors.val_labels)[a])


def test_probe_correctness_gives_the_grids_balanced_accuracy(results, vectors):
    arrays = (vectors.train, vectors.train_labels, vectors.val, vectors.val_labels)
    for a, (y, right) in st.probe_correctness(*arrays).items():
        classes = frozen_classes(vectors.val_labels)[a]
        recall = np.mean([right[y == c].mean() for c in classes])
        assert recall == pytest.approx(results.unchanged[f"{a} BA"], abs=1e-12)


def _correctness(n_per_class, rate_before, rate_after, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n_per_class)
    return y, rng.random(len(y)) < rate_before, rng.random(len(y)) < rate_after


def test_balanced_accuracy_drop_decides_against_the_margin():
    m = st.BA_COST_PP

    def verdict(*args):
        drop = st.balanced_accuracy_drop(*args, classes=[0, 1, 2], n_draws=2000)
        return at_least(100 * drop.low, 100 * drop.high, m).verdict

    assert verdict(*_correctness(10, 0.8, 0.8)) == "inconclusive"  # no effect on a few items
    assert verdict(*_correctness(3000, 0.9, 0.6)) == "holds"  # a tight large drop
    assert verdict(*_correctness(3000, 0.8, 0.79)) == "contradicted"  # a tight small drop
    y, before, _ = _correctness(50, 0.7, 0.7)
    same = st.balanced_accuracy_drop(y, before, before, [0, 1, 2], n_draws=100)
    assert (same.mean, same.low, same.high, same.se) == (0.0, 0.0, 0.0, 0.0)


def test_balanced_accuracy_drop_resamples_within_each_class():
    """The multinomial draws are the stratified item bootstrap: the same mean and spread."""
    y, before, after = _correctness(40, 0.8, 0.5, seed=1)
    y = np.r_[y, [7, 7]]  # items outside the classes are ignored
    before, after = np.r_[before, [True, True]], np.r_[after, [False, False]]
    drop = st.balanced_accuracy_drop(y, before, after, [0, 1, 2], n_draws=20000, seed=2)
    rng = np.random.default_rng(3)
    brute = []
    for _ in range(4000):
        draw = []
        for c in (0, 1, 2):
            idx = rng.choice(np.flatnonzero(y == c), size=40)
            draw.append(before[idx].mean() - after[idx].mean())
        brute.append(np.mean(draw))
    assert drop.n == 120 and drop.n_groups == 3
    assert drop.mean == pytest.approx(np.mean([before[y == c].mean() - after[y == c].mean() for c in (0, 1, 2)]))
    assert drop.se == pytest.approx(np.std(brute, ddof=1), rel=0.1)
    assert np.mean(brute) == pytest.approx(drop.mean, abs=0.01)


@pytest.mark.parametrize(
    "args, match",
    [
        (([0, 1], [True], [True, False], [0, 1]), "one value per item"),
        (([0, 0], [True, True], [True, False], [0]), "at least 2 classes"),
        (([0, 0], [True, True], [True, False], [0, 1]), "class 1 has no items"),
    ],
)
def test_balanced_accuracy_drop_refuses_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        st.balanced_accuracy_drop(*args)


def _fake(change=None, half_width=0.005, drop=(0.3, 0.02)):
    """A grid where every finding holds; ``change`` overrides ``{(intervention, column): value}`` at .99;
    the noise's P@10 minus the floor has a 95% interval of ``half_width`` on each side; rank restriction's
    BA drop has the interval ``drop`` (mean, half-width)."""
    k, cols = (
        10,
        [
            "total_variance",
            "mean_cosine",
            "rankme",
            "participation_ratio",
            "weather accuracy",
            "weather BA",
            "weather P@10",
            "overlap@10",
        ],
    )
    base = dict(zip(cols, [0.8, 0.2, 40.0, 10.0, 0.9, 0.8, 0.6, 1.0]))
    at99 = {
        "contraction": {**base, "total_variance": 0.8e-4},
        "common_offset": {**base, "mean_cosine": 0.9999, "rankme": 2.0, "overlap@10": 0.97},
        "rank_restriction": {**base, "weather BA": 0.8 - drop[0], "rankme": 4.0, "overlap@10": 0.3},
        "noise": {**base, "rankme": 600.0, "weather P@10": 0.31, "weather BA": 0.2, "overlap@10": 0.01},
    }
    for (name, col), value in (change or {}).items():
        at99[name][col] = value
    rows = [{"intervention": n, "severity": 0.0, **base} for n in INTERVENTIONS]
    rows += [{"intervention": n, "severity": 0.99, **at99[n]} for n in INTERVENTIONS]
    gap = at99["noise"]["weather P@10"] - 0.3 + half_width * np.array([0.0, -1.0, 1.0])
    gaps = {"weather": Interval(*gap, 983, half_width / 2, 0.95, 983)}
    drops = {"weather": Interval(drop[0], drop[0] - drop[1], drop[0] + drop[1], 983, drop[1] / 2, 0.95, 3)}
    return st.StressResults(pd.DataFrame(rows), pd.DataFrame(), {"weather": 0.3}, k, "weather", 0, 768, gaps, drops)


def test_findings_hold_and_each_criterion_has_teeth():
    verdicts = st.findings(_fake())
    assert list(verdicts["finding"]) == list(st.CRITERIA) and (verdicts["verdict"] == "holds").all()
    assert "270.81 → 667.31" in verdicts.loc[0, "study"] and "40.05% vs floor 39.87%" in verdicts.loc[0, "study"]
    assert "8 of 768 directions" in verdicts.loc[3, "this run"] and "[+28.00, +32.00]" in verdicts.loc[3, "this run"]
    breaks = [
        (0, {("noise", "rankme"): 39.0}, "contradicted"),
        (0, {("noise", "rankme"): 40.005}, "contradicted"),  # a rise below the study's printed resolution
        (0, {("noise", "weather P@10"): 0.33}, "contradicted"),
        (1, {("contraction", "total_variance"): 0.8e-4 * (1 + 1e-6)}, "contradicted"),
        (1, {("contraction", "rankme"): 40.001}, "contradicted"),
        (1, {("contraction", "overlap@10"): 0.999}, "contradicted"),
        (1, {("contraction", "weather BA"): 0.81}, "contradicted"),
        (2, {("common_offset", "participation_ratio"): 10.001}, "contradicted"),
        (2, {("common_offset", "rankme"): 3.5}, "contradicted"),
        (2, {("common_offset", "total_variance"): 0.81}, "contradicted"),
    ]
    for i, change, verdict in breaks:
        v = st.findings(_fake(change))
        assert v.loc[i, "verdict"] == verdict, change
        assert (v.drop(index=i)["verdict"] == "holds").all(), change
    wide = st.findings(_fake(half_width=0.015))  # the point is 1 pp from the floor, the interval reaches 2.5
    assert wide.loc[0, "verdict"] == "inconclusive" and "[-0.50, +2.50]" in wide.loc[0, "this run"]
    assert st.findings(_fake(half_width=0.0099)).loc[0, "verdict"] == "holds"
    text = findings.summary(st.findings(_fake({("noise", "rankme"): 39.0})), "{held} of {measured} findings")
    assert text.startswith("3 of 4 findings") and "is **contradicted**" in text


@pytest.mark.parametrize(
    "drop, verdict, old",
    [
        ((0.3, 0.02), "holds", "yes"),
        ((0.0, 0.3), "inconclusive", "no"),  # no effect measured on a few items: the interval straddles 5 pp
        ((0.06, 0.02), "inconclusive", "yes"),  # the point clears 5 pp, the interval does not
        ((0.02, 0.01), "contradicted", "no"),  # a tight small drop
    ],
)
def test_rank_restriction_is_decided_by_the_drops_interval(drop, verdict, old):
    v = st.findings(_fake(drop=drop)).set_index("finding").loc["rank restriction costs labels"]
    assert (v["verdict"], v["old verdict"]) == (verdict, old)
    assert v["low"] == pytest.approx(100 * (drop[0] - drop[1])) and v["high"] == pytest.approx(100 * sum(drop))


def test_the_study_side_is_decided_on_its_printed_values():
    study = st.read_study()
    v = st.findings(_fake(), study=study).set_index("finding")["holds in the study"]
    assert v.tolist() == ["not testable", "holds", "holds", "not testable"]
    for row, col, value, i in [
        ("shrink (.99)", "total_variance", "2.5710e-05", 1),  # 7 units of its last printed digit off (1 - s)²
        ("shrink (.99)", "rankme", "270.83", 1),
        ("common offset (.99)", "participation_ratio", "38.30", 2),
        ("common offset (.99)", "rankme", "3.50", 2),
        ("severe noise (.99)", "rankme", "270.80", 0),  # RankMe falls: contradicted whatever P@10 says
    ]:
        changed = study.copy()
        changed.loc[row, col] = value
        assert st.findings(_fake(), study=changed).iloc[i]["holds in the study"] == "contradicted", (row, col)
    changed = study.copy()
    changed.loc["shrink (.99)", "rankme"] = "270.82"  # one unit off: a rounding boundary cannot be told apart
    assert st.findings(_fake(), study=changed).iloc[1]["holds in the study"] == "inconclusive"


def test_exact_and_printed_units():
    assert st._unit("2.5703e-05") == Decimal("1e-9") and st._unit("270.81") == Decimal("0.01")
    assert st._unit("9799") == 1 and st._printed_error("2.5703e-05", Decimal("0.25703") * Decimal("0.01") ** 2) == 0
    assert st._printed_error("270.82", Decimal("270.81")) == 1.0  # exactly one unit, no float rounding
    d = st.exact(0.0, 1e-9, "x")
    assert (d.verdict, d.low, d.high) == ("holds", 0.0, 0.0) and "no sampling" in d.reason
    assert st.exact(1e-9, 1e-9, "x").verdict == "inconclusive"  # touching the margin straddles it


def test_severity_label():
    assert [st.severity_label(s) for s in (0.0, 0.5, 0.99, 0.25)] == ["0", ".5", ".99", ".25"]


def test_user_vectors_without_the_attribute_fail_clearly(tmp_path, vectors):
    np.save(tmp_path / "v.npy", np.vstack([vectors.train[:40], vectors.val[:30]]))
    weather = vectors.train_labels["weather"]
    pd.DataFrame(
        {"split": ["train"] * 40 + ["val"] * 30, "colour": np.r_[weather[:40], weather[40:70]].astype(str)}
    ).to_csv(tmp_path / "l.csv", index=False)
    user = driving_vectors(vectors_path=tmp_path / "v.npy", labels_path=tmp_path / "l.csv")
    with pytest.raises(ValueError, match=r"attribute: 'weather' is not among the labels' attributes \['colour'\]"):
        st.run(user, st.Settings(attribute="weather"))
    ok = st.run(user, st.Settings(severities=[0.9], k=3, attribute="colour"), probes=False)
    assert ok.attributes == ("colour",) and "colour P@3" in ok.grid


def test_the_headline_attribute_defaults_to_weather_else_the_first():
    assert check_attribute(None, ["scene", "weather"]) == "weather"
    assert check_attribute(None, ["digit", "parity"]) == "digit"
    with pytest.raises(ValueError, match=r"'weather' is not among the labels' attributes \['digit'\]"):
        check_attribute("weather", ["digit"])
