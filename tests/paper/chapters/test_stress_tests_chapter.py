"""The stress chapter's grid, figures, tables and findings on small synthetic vectors."""

import json
import math
from decimal import Decimal

import altair as alt
import numpy as np
import pandas as pd
import pytest

from embdiag.metrics.inference import VERDICTS, at_least
from embdiag.metrics.stats import Interval
from embdiag.metrics.suite import frozen_classes

from embdiag.paper.chapters import stress_tests as sf
from embdiag.interventions.stress import INTERVENTIONS, n_kept
from embdiag.metrics import random_floor, rankme
from embdiag.synthetic import labelled_clusters
from embdiag.paper import findings

SEVERITIES = [0.5, 0.99]


@pytest.fixture(scope="module")
def vectors():
    train, y_train = labelled_clusters(240, d=32, seed=1)
    val, y_val = labelled_clusters(160, d=32, seed=2)
    return train, y_train, val, y_val


@pytest.fixture(scope="module")
def results(vectors):
    return sf.measure(*vectors, severities=SEVERITIES, k=5, attribute="weather", seed=3)


@pytest.fixture(scope="module")
def no_probes(vectors):
    return sf.measure(*vectors, severities=[0.25, 0.9], k=5, probes=False)


def test_grid_rows_and_identity_at_zero(results, vectors):
    g = results.grid
    assert list(g["intervention"].unique()) == list(INTERVENTIONS)
    assert sorted(g["severity"].unique()) == [0.0, 0.5, 0.99]  # severity 0 is always measured
    assert len(g) == 4 * 3 and results.top == 0.99 and results.d == 32 and results.k == 5
    zero = g[g["severity"] == 0].drop(columns="intervention")
    assert (zero.nunique() == 1).all()  # measured once, repeated per intervention
    assert (zero["overlap@5"] == 1).all()
    _, _, val, y_val = vectors
    assert results.unchanged["rankme"] == pytest.approx(rankme(val), rel=1e-12)
    assert results.floors == {a: random_floor(y) for a, y in y_val.items()}
    assert {f"{a} {m}" for a in y_val for m in ("accuracy", "BA", "P@5")} <= set(g.columns)


def test_grid_follows_the_mapping(results, vectors):
    _, _, val, _ = vectors
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
    train = vectors[0]
    size = results.sizes.set_index(["intervention", "severity"])["value"]
    rms = math.sqrt(np.mean(np.sum(train * train, axis=1)))
    assert size["contraction", 0.99] == pytest.approx(0.01)
    assert size["common_offset", 0.99] == pytest.approx(99 * rms, rel=1e-12)
    assert size["rank_restriction", 0.5] == n_kept(32, 0.5) == 16
    assert size["noise", 0.5] == pytest.approx(rms**2, rel=1e-12)
    table = sf.severity_table(results)
    assert list(table.index) == ["s = 0", "s = .5", "s = .99"]
    assert list(table.columns) == [
        ("contraction", "scale factor"),
        ("common offset", "offset norm"),
        ("rank restriction", "directions kept"),
        ("noise", "noise total variance"),
    ]
    assert table.loc["s = .99", ("rank restriction", "directions kept")] == 1
    assert table.loc["s = 0", ("contraction", "scale factor")] == 1 and table.loc["s = 0"].iloc[1] == 0


def test_measure_is_the_library_grid_searching_each_representation_once(results, vectors, monkeypatch):
    """measure's grid is stress.stress_grid's, number for number; one top-k search per representation."""
    import embdiag.interventions.stress as stress
    import embdiag.metrics.suite as suite

    pd.testing.assert_frame_equal(
        results.grid, stress.stress_grid(*vectors, severities=[0.0] + SEVERITIES, k=5, seed=3), check_exact=True
    )
    searched = []
    topk = stress.topk
    monkeypatch.setattr(stress, "topk", lambda *a, **kw: searched.append(a[0]) or topk(*a, **kw))
    monkeypatch.setattr(suite, "topk", lambda *a, **kw: pytest.fail("a representation was searched twice"))
    again = sf.measure(*vectors, severities=SEVERITIES, k=5, attribute="weather", seed=3)
    assert len(searched) == 1 + len(INTERVENTIONS) * len(SEVERITIES)  # the unchanged vectors, then each change
    pd.testing.assert_frame_equal(again.grid, results.grid, check_exact=True)


def test_measure_without_probes_and_defaults(no_probes):
    assert not any(c.endswith((" BA", " accuracy")) for c in no_probes.grid)
    assert sorted(no_probes.grid["severity"].unique()) == [0.0, 0.25, 0.9]
    sf.curves_chart(no_probes).to_dict()  # no BA row
    assert "not measured" in sf.findings(no_probes).set_index("finding").iloc[3]["this run"]


@pytest.mark.parametrize("severities", [[1.0], [-0.1], ["0.5"], "0.5", 0.5, [0.0], []])
def test_bad_severities(vectors, severities):
    with pytest.raises(ValueError, match="severities"):
        sf.measure(*vectors, severities=severities, probes=False)


def test_bad_attribute_k_and_seed(vectors):
    with pytest.raises(ValueError, match=r"attribute: 'fog' is not among the labels' attributes \['weather'"):
        sf.measure(*vectors, attribute="fog")
    with pytest.raises(ValueError, match="k"):
        sf.measure(*vectors, k=0, probes=False)
    with pytest.raises(ValueError, match="seed"):
        sf.measure(*vectors, seed=-1, probes=False)


def test_figures_reject_an_unknown_attribute(results):
    for f in (sf.headline_chart, sf.headline_text, sf.severe_table, sf.findings):
        with pytest.raises(ValueError, match="attribute: 'fog'"):
            f(results, "fog")


def _layers(spec):
    for key in ("hconcat", "vconcat", "layer"):
        for part in spec.get(key, []):
            yield from _layers(part)
    yield spec


def test_headline_chart(results):
    chart = sf.headline_chart(results)
    assert isinstance(chart, alt.HConcatChart)
    data = sf.headline_frame(results)
    assert list(data.columns) == ["condition", "RankMe", "P@k", "group", "random floor"]
    assert (data["random floor"] == 100 * results.floors["weather"]).all()
    assert sf.headline_frame(results, "scene")["P@k"].iloc[0] == 100 * results.unchanged["scene P@5"]
    assert list(data["condition"]) == [
        "unchanged",
        "contraction",
        "common offset",
        "rank restriction (1 direction)",
        "noise",
    ]
    assert list(data["group"]) == ["unchanged", "other", "other", "other", "noise"]  # noise highlighted
    assert data["P@k"].iloc[-1] == pytest.approx(100 * results.row("noise", 0.99)["weather P@5"])
    text = json.dumps(chart.to_dict())
    assert f"random floor {100 * results.floors['weather']:.1f}%" in text  # the floor is marked
    assert '"type": "log"' in text and sf.GROUPS["noise"] in text and "severity .99" in text


def test_headline_text_numbers(results):
    text = sf.headline_text(results)
    u, noise = results.unchanged, results.row("noise", 0.99)
    assert f"{u['rankme']:.2f}" in text and f"{noise['rankme']:.2f}" in text
    assert f"{100 * results.floors['weather']:.2f}%" in text and "1 of 32 directions" in text


def test_curves_chart(results):
    spec = sf.curves_chart(results).to_dict()
    titles = [p.get("title") for p in _layers(spec) if isinstance(p.get("title"), str)]
    for t in (
        "total variance (log)",
        "RankMe (log)",
        "participation ratio (PR) (log)",
        "mean cosine",
        "overlap@5 (%)",
        "weather BA (%)",
        "scene P@5 (%)",
    ):
        assert t in titles
    long = sf.long_grid(results)
    p = long[long["panel"] == "weather P@5"]
    assert (p["floor"] == 100 * results.floors["weather"]).all()
    assert long[long["panel"] == "rankme"]["floor"].isna().all()


def test_decades():
    assert sf._decades(pd.Series([0.3, 50.0])) == [0.1, 1.0, 10.0, 100.0]
    assert sf._decades(pd.Series([1e-5, 1e4])) == [1e-5, 1e-3, 0.1, 10.0, 1000.0]


def test_contraction_table(results):
    t = sf.contraction_table(results)
    assert list(t.columns) == ["before (s = 0)", "after (s = .99)", "after / before", "predicted ratio"]
    assert t.loc["total variance", "after / before"] == pytest.approx(1e-4, rel=1e-9)
    assert t.loc["total variance", "predicted ratio"] == pytest.approx(1e-4)
    rest = t.drop(index="total variance")
    np.testing.assert_allclose(rest["after / before"], 1.0, rtol=1e-9)
    assert (rest["predicted ratio"] == 1).all() and "weather P@5" in t.index and "weather accuracy" not in t.index


def test_study_csv_as_printed_and_consistent():
    study = sf.read_study()
    assert list(study.index) == [
        "unchanged",
        "shrink (.99)",
        "eight directions (.99)",
        "common offset (.99)",
        "severe noise (.99)",
        "random-neighbour floor",
    ]
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


def test_severe_table_layout(results):
    t = sf.severe_frame(results)
    assert t.columns.get_level_values(1).unique().tolist() == ["study", "this run"]
    assert t.columns.get_level_values(0).unique().tolist() == [
        "variance",
        "mean cosine",
        "RankMe",
        "PR",
        "weather BA %",
        "weather P@5 %",
    ]
    assert t.index.get_level_values(0).tolist()[:5] == list(sf.read_study().index[:5])
    assert (t.dtypes == np.float64).all()
    assert t.loc[("shrink (.99)", "contraction, s = .99"), ("variance", "study")] == 2.5703e-05
    noise = t.loc[("severe noise (.99)", "noise, s = .99")]
    assert noise[("RankMe", "this run")] == results.row("noise", 0.99)["rankme"]
    assert t.loc[("unchanged", "unchanged"), ("weather BA %", "this run")] == 100 * results.unchanged["weather BA"]
    floor = t.loc[("random-neighbour floor", "random-neighbour floor")]
    assert floor[("weather P@5 %", "study")] == 39.87
    assert floor[("weather P@5 %", "this run")] == 100 * results.floors["weather"]
    assert floor.drop(index="weather P@5 %", level=0).isna().all()
    assert sf.severe_compared(t).tolist() == [True] * 5 + [False]
    other = sf.severe_frame(results, "scene")
    assert ("scene BA %", "study (weather)") in other.columns


def test_severe_table_shows_the_study_as_printed(results):
    html = sf.severe_table(results).to_html()
    for printed in ("2.5703e-05", "0.9050", "0.742967", "9799", "39.87", "57.79"):  # as in stress_severe.csv
        assert f">{printed}<" in html
    assert f">{results.row('noise', 0.99)['rankme']:.2f}<" in html  # this run in the study's precision
    assert f">{100 * results.floors['weather']:.2f}<" in html
    assert "nan" not in html.lower()


def test_findings_table(results):
    verdicts = sf.findings(results)
    table = findings.table(verdicts)
    assert list(table.index) == list(sf.CRITERIA) and set(table["kind"]) == {"study"}
    assert set(table["verdict"]) <= set(VERDICTS)
    # the study's exact identities are decided on its printed values; its P@10 and BA carry no interval
    assert table["holds in the study"].tolist() == ["not testable", "holds", "holds", "not testable"]
    rank = table.loc["rank restriction costs labels"]
    assert rank["old criterion"] == sf.CRITERIA["rank restriction costs labels"].was
    drop = results.unchanged["weather BA"] - results.row("rank_restriction", 0.99)["weather BA"]
    assert rank["old verdict"] == ("yes" if 100 * drop >= sf.BA_COST_PP else "no")
    assert table.loc["noise: RankMe up, retrieval to chance", "old verdict"] == ""
    assert "computed exactly on the fixed gallery" in table.loc["contraction: only variance moves", "reason"]


def test_every_claim_declares_its_margin_and_why():
    for claim in sf.CRITERIA.values():
        assert claim.margin and claim.why and claim.kind == "study"
    assert "±2 pp" in sf.CRITERIA["noise: RankMe up, retrieval to chance"].margin
    assert sf.CRITERIA["rank restriction costs labels"].margin == "5 pp"


def test_the_ba_drop_is_the_grids_difference(results, vectors):
    _, _, _, y_val = vectors
    assert set(results.ba_drops) == set(y_val)
    for a, drop in results.ba_drops.items():
        u, r = results.unchanged[f"{a} BA"], results.row("rank_restriction", 0.99)[f"{a} BA"]
        assert drop.mean == pytest.approx(u - r, abs=1e-12)
        assert drop.low <= drop.mean <= drop.high and drop.n_groups == len(frozen_classes(y_val)[a])


def test_probe_correctness_gives_the_grids_balanced_accuracy(results, vectors):
    for a, (y, right) in sf.probe_correctness(*vectors).items():
        classes = frozen_classes(vectors[3])[a]
        recall = np.mean([right[y == c].mean() for c in classes])
        assert recall == pytest.approx(results.unchanged[f"{a} BA"], abs=1e-12)


def _correctness(n_per_class, rate_before, rate_after, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n_per_class)
    return y, rng.random(len(y)) < rate_before, rng.random(len(y)) < rate_after


def test_balanced_accuracy_drop_decides_against_the_margin():
    m = sf.BA_COST_PP

    def verdict(*args):
        drop = sf.balanced_accuracy_drop(*args, classes=[0, 1, 2], n_draws=2000)
        return at_least(100 * drop.low, 100 * drop.high, m).verdict

    assert verdict(*_correctness(10, 0.8, 0.8)) == "inconclusive"  # no effect on a few items
    assert verdict(*_correctness(3000, 0.9, 0.6)) == "holds"  # a tight large drop
    assert verdict(*_correctness(3000, 0.8, 0.79)) == "contradicted"  # a tight small drop
    y, before, _ = _correctness(50, 0.7, 0.7)
    same = sf.balanced_accuracy_drop(y, before, before, [0, 1, 2], n_draws=100)
    assert (same.mean, same.low, same.high, same.se) == (0.0, 0.0, 0.0, 0.0)


def test_balanced_accuracy_drop_resamples_within_each_class():
    """The multinomial draws are the stratified item bootstrap: the same mean and spread."""
    y, before, after = _correctness(40, 0.8, 0.5, seed=1)
    y = np.r_[y, [7, 7]]  # items outside the classes are ignored
    before, after = np.r_[before, [True, True]], np.r_[after, [False, False]]
    drop = sf.balanced_accuracy_drop(y, before, after, [0, 1, 2], n_draws=20000, seed=2)
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
        sf.balanced_accuracy_drop(*args)


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
    return sf.StressResults(pd.DataFrame(rows), pd.DataFrame(), {"weather": 0.3}, k, "weather", 0, 768, gaps, drops)


def test_findings_hold_and_each_criterion_has_teeth():
    verdicts = sf.findings(_fake())
    assert list(verdicts["finding"]) == list(sf.CRITERIA) and (verdicts["verdict"] == "holds").all()
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
        v = sf.findings(_fake(change))
        assert v.loc[i, "verdict"] == verdict, change
        assert (v.drop(index=i)["verdict"] == "holds").all(), change
    wide = sf.findings(_fake(half_width=0.015))  # the point is 1 pp from the floor, the interval reaches 2.5
    assert wide.loc[0, "verdict"] == "inconclusive" and "[-0.50, +2.50]" in wide.loc[0, "this run"]
    assert sf.findings(_fake(half_width=0.0099)).loc[0, "verdict"] == "holds"
    text = findings.summary(sf.findings(_fake({("noise", "rankme"): 39.0})), "{held} of {measured} findings")
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
    v = sf.findings(_fake(drop=drop)).set_index("finding").loc["rank restriction costs labels"]
    assert (v["verdict"], v["old verdict"]) == (verdict, old)
    assert v["low"] == pytest.approx(100 * (drop[0] - drop[1])) and v["high"] == pytest.approx(100 * sum(drop))


def test_the_study_side_is_decided_on_its_printed_values():
    study = sf.read_study()
    v = sf.findings(_fake(), study=study).set_index("finding")["holds in the study"]
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
        assert sf.findings(_fake(), study=changed).iloc[i]["holds in the study"] == "contradicted", (row, col)
    changed = study.copy()
    changed.loc["shrink (.99)", "rankme"] = "270.82"  # one unit off: a rounding boundary cannot be told apart
    assert sf.findings(_fake(), study=changed).iloc[1]["holds in the study"] == "inconclusive"


def test_exact_and_printed_units():
    assert sf._unit("2.5703e-05") == Decimal("1e-9") and sf._unit("270.81") == Decimal("0.01")
    assert sf._unit("9799") == 1 and sf._printed_error("2.5703e-05", Decimal("0.25703") * Decimal("0.01") ** 2) == 0
    assert sf._printed_error("270.82", Decimal("270.81")) == 1.0  # exactly one unit, no float rounding
    d = sf.exact(0.0, 1e-9, "x")
    assert (d.verdict, d.low, d.high) == ("holds", 0.0, 0.0) and "no sampling" in d.reason
    assert sf.exact(1e-9, 1e-9, "x").verdict == "inconclusive"  # touching the margin straddles it


def test_user_vectors_without_the_attribute_fail_clearly(tmp_path, vectors):
    from embdiag.encoders.vectors import driving_vectors

    train, y_train, val, _ = vectors
    np.save(tmp_path / "v.npy", np.vstack([train[:40], val[:30]]))
    pd.DataFrame(
        {
            "split": ["train"] * 40 + ["val"] * 30,
            "colour": np.r_[y_train["weather"][:40], y_train["weather"][40:70]].astype(str),
        }
    ).to_csv(tmp_path / "l.csv", index=False)
    user = driving_vectors(vectors_path=tmp_path / "v.npy", labels_path=tmp_path / "l.csv")
    with pytest.raises(ValueError, match=r"attribute: 'weather' is not among the labels' attributes \['colour'\]"):
        sf.measure(user.train, user.train_labels, user.val, user.val_labels, attribute="weather")
    ok = sf.measure(
        user.train,
        user.train_labels,
        user.val,
        user.val_labels,
        severities=[0.9],
        k=3,
        attribute="colour",
        probes=False,
    )
    assert ok.attributes == ("colour",) and "colour P@3" in ok.grid


def test_the_headline_attribute_defaults_to_weather_else_the_first():
    assert sf.check_attribute(None, ["scene", "weather"]) == "weather"
    assert sf.check_attribute(None, ["digit", "parity"]) == "digit"
    with pytest.raises(ValueError, match=r"'weather' is not among the labels' attributes \['digit'\]"):
        sf.check_attribute("weather", ["digit"])
