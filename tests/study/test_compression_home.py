"""The compression section's home: its settings, its measurement (``run``, a pure function of the
vectors and the settings), its declared findings and their verdicts, on small inputs."""

import numpy as np
import pandas as pd
import pytest

from embdiag.encoders.vectors import LabelledVectors
from embdiag.interventions import compression as measures
from embdiag.interventions.compression import compression_grid, compression_items
from embdiag.metrics.stats import ItemIntervals
from embdiag.paper import findings
from embdiag.study import compression as C

ATTRS = ("weather", "scene", "timeofday")


def _measurement(grid, centring, items=None, k=10, attribute="weather", n_draws=C.N_DRAWS):
    """A measurement of given tables (what the findings read; the exhibits' tables left out)."""
    return C.CompressionResults(
        grid, items, None, centring, None, float("nan"), "", "", (), k, attribute, n_draws=n_draws
    )


def test_study_csv_is_the_printed_table():
    s = C.read_study().set_index("representation")
    assert list(s.index) == ["native 768", "MRL 512", "PCA 512", "MRL 256", "PCA 256", "MRL 128", "PCA 128"]
    assert s.loc["native 768", "weather BA"] == pytest.approx(0.6302)
    assert s.loc["PCA 128", "timeofday P@10"] == pytest.approx(0.8400)
    assert s.loc["MRL 128", "scene P@10"] == pytest.approx(0.6078)


def test_point_readings_of_the_study_table_hold():
    # the point-estimate readings (the old criteria) restate what the study's own table shows
    verdicts = C.evaluate_criteria(C.read_study())
    for name, (words, holds) in verdicts.items():
        if name != "centring alone moves neighbours":
            assert holds is True, (name, words)
    assert verdicts["MRL 128 loses most on weather BA"][0].startswith("weather BA -8.11 pp")
    assert verdicts["PCA ahead at 128"][0] == "128: PCA ahead on 5 of 6, MRL on 1"


def test_near_margin_lies_in_the_gap_the_study_table_shows():
    study = C.read_study()
    largest = {r: C._diffs(study, r, 10).abs().max() for r in study["representation"] if not r.startswith("native")}
    near = [largest[r] for r in ("MRL 512", "MRL 256", "PCA 128")]
    other = [v for r, v in largest.items() if r not in ("MRL 512", "MRL 256", "PCA 128")]
    assert max(near) == pytest.approx(1.95) and min(other) == pytest.approx(4.17)
    assert max(near) < C.NEAR_PP < min(other) and C.NEAR_PP == pytest.approx((max(near) + min(other)) / 2, abs=0.1)
    assert C.LOSS_PP == C.NEAR_PP and C.ORDER_PP == 0


def test_every_declared_claim_has_a_justified_margin_and_a_kind():
    assert list(C.CRITERIA) == [
        "no method leads everywhere",
        "MRL 512 and 256 near native",
        "MRL 128 loses most on weather BA",
        "PCA 128 close to native",
        "PCA ahead at 128",
        "centring alone moves neighbours",
    ]
    kinds = {name: c.kind for name, c in C.CRITERIA.items()}
    assert kinds.pop("centring alone moves neighbours") == "addition" and set(kinds.values()) == {"study"}
    assert "no sampling" in C.CRITERIA["centring alone moves neighbours"].criterion
    assert all(
        c.was is None for n, c in C.CRITERIA.items() if n in ("PCA ahead at 128", "centring alone moves neighbours")
    )


# -- per-image scores and intervals ------------------------------------------------------------
REPS = ("native 768", "MRL 512", "PCA 512", "MRL 256", "PCA 256", "MRL 128", "PCA 128")


def _items(n: int = 600, flips=None, seed: int = 0, classes: int = 3) -> pd.DataFrame:
    """Per-image scores: every representation as native, except ``flips`` {(rep, column): share
    of images turned from right to wrong (BA) or whose P@10 falls by 0.5 (P@10)}."""
    rng = np.random.default_rng(seed)
    cols = {("class", a): np.arange(n, dtype=float) % classes for a in ATTRS}
    native = {f"{a} BA": (rng.random(n) < 0.7).astype(float) for a in ATTRS}
    native |= {f"{a} P@10": rng.integers(3, 11, n) / 10 for a in ATTRS}
    for rep in REPS:
        for col, v in native.items():
            v = v.copy()
            share = (flips or {}).get((rep, col), 0.0)
            chosen = rng.random(n) < share
            if col.endswith(" BA"):
                v[chosen] = 0.0
            else:
                v[chosen] = np.maximum(v[chosen] - 0.5, 0.0)
            cols[(rep, col)] = v
    return pd.DataFrame(cols)


def _grid_of(items: pd.DataFrame) -> pd.DataFrame:
    """The grid whose BA and P@10 the per-image scores give."""
    rows = []
    for rep in REPS:
        method, dim = rep.rsplit(" ", 1)
        row = {"representation": rep, "method": method, "dim": int(dim)}
        for a in ATTRS:
            c, hit = items[("class", a)], items[(rep, f"{a} BA")]
            row[f"{a} BA"] = float(np.mean([hit[c == j].mean() for j in np.unique(c)]))
            row[f"{a} P@10"] = float(items[(rep, f"{a} P@10")].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def _decide(items, centring=None, **kw):
    return C.decide(_grid_of(items), centring, items, n_draws=kw.pop("n_draws", 400), **kw)


def test_intervals_are_paired_bootstraps_with_a_balanced_accuracy_statistic():
    from embdiag.metrics.stats import paired_bootstrap

    items = _items(n=60, flips={("MRL 128", "weather BA"): 0.3})
    intervals = ItemIntervals(items, n_draws=200, seed=3)
    c = items[("class", "weather")].to_numpy()
    a, b = items[("MRL 128", "weather BA")].to_numpy(), items[("native 768", "weather BA")].to_numpy()

    def ba(hit, idx):
        return np.mean([hit[idx][c[idx] == j].mean() for j in np.unique(c[idx])])

    def stat(rows):
        idx = rows.astype(int)
        return 100 * (ba(a, idx) - ba(b, idx))

    expected = paired_bootstrap(np.arange(60.0), np.zeros(60), n_draws=200, seed=3, statistic=stat)
    got = intervals((1, "MRL 128", "weather BA"), (-1, "native 768", "weather BA"))
    assert got == pytest.approx((expected.mean, expected.low, expected.high), abs=1e-9)
    same = intervals((1, "MRL 128", "timeofday P@10"), (-1, "native 768", "timeofday P@10"))
    assert same == (0.0, 0.0, 0.0)  # identical columns: a degenerate interval at 0


def test_a_tight_small_effect_holds_and_a_few_images_are_inconclusive():
    tight = _decide(_items(n=3000, flips={("PCA 128", "scene BA"): 0.01}))
    assert tight["PCA 128 close to native"].verdict == "holds"
    assert tight["MRL 512 and 256 near native"].verdict == "holds"
    few = _decide(_items(n=60, flips={("PCA 128", "scene BA"): 0.05}))
    assert few["PCA 128 close to native"].verdict == "inconclusive"
    assert "crosses ±3" in few["PCA 128 close to native"].reason


def test_a_clear_loss_is_no_longer_near_and_falls_most():
    items = _items(n=2000, flips={("MRL 128", "weather BA"): 0.3, ("PCA 128", "scene BA"): 0.4})
    d = _decide(items)
    assert d["PCA 128 close to native"].verdict == "contradicted"
    assert "PCA 128 scene BA" in d["PCA 128 close to native"].reason
    assert d["MRL 128 loses most on weather BA"].verdict == "holds"
    # the loss on another column than weather: the ordering is contradicted
    other = _decide(_items(n=2000, flips={("MRL 128", "scene BA"): 0.3}))
    assert other["MRL 128 loses most on weather BA"].verdict == "contradicted"


def test_orderings_are_tested_per_column_with_intervals():
    # PCA behind MRL on every column at every dimension: no leader-on-some-column for PCA
    flips = {(f"PCA {d}", f"{a} {e}"): 0.3 for d in (512, 256, 128) for a in ATTRS for e in ("BA", "P@10")}
    d = _decide(_items(n=1500, flips=flips))
    assert d["no method leads everywhere"].verdict == "contradicted"
    assert d["PCA ahead at 128"].verdict == "contradicted"
    # each method clearly ahead on some column at each dimension
    flips = {(f"PCA {d}", "weather BA"): 0.3 for d in (512, 256, 128)}
    flips |= {
        (f"MRL {d}", c): 0.3
        for d in (512, 256, 128)
        for c in ("scene BA", "timeofday BA", "weather P@10", "scene P@10")
    }
    d = _decide(_items(n=1500, flips=flips))
    assert d["no method leads everywhere"].verdict == "holds"
    assert (
        d["PCA ahead at 128"].verdict == "holds"
        and "PCA ahead on 4 of 6 columns (scene BA" in d["PCA ahead at 128"].reason
    )
    # no difference anywhere on a few images: inconclusive, not "no method leads"
    assert _decide(_items(n=30))["no method leads everywhere"].verdict == "inconclusive"


def test_most_of_needs_more_than_half():
    from embdiag.metrics.inference import at_least

    up, down, unsure = at_least(1, 2), at_least(-2, -1), at_least(-1, 1)
    names = list("abcdef")
    assert C._most_of([up, up, up, up, unsure, down], names, "x", "y").verdict == "holds"
    assert C._most_of([up, up, up, unsure, unsure, down], names, "x", "y").verdict == "inconclusive"
    split = C._most_of([up, up, up, down, down, down], names, "x", "y")
    assert split.verdict == "contradicted" and split.reason.startswith(
        "x on 3 of 6 columns (a, b, c), y on 3 (d, e, f)"
    )
    assert (split.low, split.high) == (-2, -1) and "the 4th largest interval" in split.reason  # it decides
    assert [C._ordinal(m) for m in (1, 2, 3, 4, 11, 12, 13, 21, 22)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd",
    ]  # fmt: skip


def test_without_per_image_scores_interval_findings_are_not_testable(compression_tables):
    v = C.findings(_measurement(compression_tables.grid(), compression_tables.centring()), C.read_study()).set_index(
        "finding"
    )
    assert v.loc["centring alone moves neighbours", "verdict"] == "holds"
    others = v.drop(index="centring alone moves neighbours")
    assert set(others["verdict"]) == {"not testable"} and "compression_items" in others["reason"].iloc[0]
    assert set(others["holds in the study"]) == {"not testable"}


def test_findings_show_the_old_point_verdicts_beside_the_new(compression_tables):
    items = _items(n=300)
    v = C.findings(_measurement(_grid_of(items), compression_tables.centring(), items=items, n_draws=300)).set_index(
        "finding"
    )
    assert list(v.index) == list(C.CRITERIA)
    assert v.loc["MRL 512 and 256 near native", "old verdict"] == "yes"
    assert v.loc["PCA ahead at 128", "old verdict"] == ""
    assert v.loc["MRL 512 and 256 near native", "holds in the study"] == "not testable"
    assert v.loc["centring alone moves neighbours", "holds in the study"] == "not measured"
    assert v.loc["centring alone moves neighbours", "kind"] == "addition"


def test_centring_is_decided_exactly(compression_tables):
    holds = (
        C.findings(_measurement(compression_tables.grid(), compression_tables.centring(centred=0.9)))
        .set_index("finding")
        .loc["centring alone moves neighbours"]
    )
    assert holds["verdict"] == "holds" and holds["low"] == holds["high"] == 0.9
    assert "no sampling" in holds["reason"]
    for c in (compression_tables.centring(centred=0.995), compression_tables.centring(uncentred=0.999)):
        assert C.findings(_measurement(compression_tables.grid(), c)).set_index("finding").loc[
            "centring alone moves neighbours", "verdict"
        ] == ("contradicted")


def test_findings_with_other_dims_say_not_measured(compression_tables):
    g = compression_tables.table(
        {
            "native 768": compression_tables.native,
            "MRL 64": compression_tables.native,
            "PCA 64": compression_tables.native,
        }
    )
    v = C.findings(_measurement(g, None))
    assert (v["verdict"] == "not measured").sum() == 5
    assert v.set_index("finding").loc["no method leads everywhere", "verdict"] == "not testable"
    assert findings.table(v)["verdict"].tolist().count("not measured") == 5
    assert "not measured in this run" in findings.summary(v, "{held} of {measured}")


def test_items_give_the_grids_ba_and_precision():
    rng = np.random.default_rng(0)
    X, E = rng.standard_normal((120, 12)) + 1, rng.standard_normal((80, 12)) + 1
    y = {a: rng.choice(["p", "q", "r"], 120) for a in ATTRS}
    ye = {a: rng.choice(["p", "q", "r"], 80).astype(object) for a in ATTRS}
    ye["weather"][:3] = None  # unlabelled rows are not counted
    g = compression_grid(X, y, E, ye, dims=[6, 3], methods=["MRL", "PCA"], k=5).set_index("representation")
    items = compression_items(X, y, E, ye, dims=[6, 3], k=5)
    assert np.isnan(items[("class", "weather")][:3]).all()
    intervals = ItemIntervals(items, n_draws=10, seed=0)
    for rep in g.index:
        for a in ATTRS:
            assert intervals((1, rep, f"{a} BA"))[0] == pytest.approx(100 * g.loc[rep, f"{a} BA"], abs=1e-9)
            assert intervals((1, rep, f"{a} P@5"))[0] == pytest.approx(100 * g.loc[rep, f"{a} P@5"], abs=1e-9)


def test_largest_loss_reads_the_grid(compression_tables):
    g = compression_tables.grid()
    assert C.largest_loss(g, "MRL 128") == "weather"
    with pytest.raises(ValueError, match="representation"):
        C.largest_loss(g, "MRL 64")
    with pytest.raises(ValueError, match="probes=False"):
        C.largest_loss(g.drop(columns=[c for c in g.columns if c.endswith(" BA")]), "MRL 128")


# -- the measurement ---------------------------------------------------------------------------
def _vectors(d: int = 12, n_train: int = 90, n_val: int = 60, seed: int = 0) -> LabelledVectors:
    """Labelled vectors whose classes shift the leading coordinates (so a prefix keeps them)."""
    rng = np.random.default_rng(seed)

    def part(n):
        labels = {a: rng.choice(["p", "q", "r"], n) for a in ATTRS}
        shift = sum((labels[a] == "q")[:, None] * np.eye(d)[j] * 3 for j, a in enumerate(ATTRS))
        return rng.standard_normal((n, d)) + shift + 1, labels

    (train, train_labels), (val, val_labels) = part(n_train), part(n_val)
    return LabelledVectors(train, val, train_labels, val_labels, "synthetic")


def _same(a: C.CompressionResults, b: C.CompressionResults) -> None:
    for name in ("grid", "items", "curve", "centring", "spectrum"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    assert a.spectrum.attrs == b.spectrum.attrs
    rest = ("raw_ba", "checked", "checked_attribute", "dims", "k", "attribute", "n_draws", "seed")
    assert [getattr(a, n) for n in rest] == [getattr(b, n) for n in rest]


SMALL = C.Settings(dims=[6, 3], k=5)


def test_settings_default_to_the_chapters_parameters():
    assert C.Settings() == C.Settings(k=10, dims=None, attribute=None)


def test_run_resolves_the_settings():
    v = _vectors()
    m = C.run(v, SMALL)
    assert (m.dims, m.k, m.attribute, m.n_draws, m.seed) == ((6, 3), 5, "weather", C.N_DRAWS, C.SEED)
    assert C.run(v, C.Settings(dims=None, k=5, attribute="scene")).dims == tuple(measures.study_dims(12))
    assert C.run(v, C.Settings(dims=[6], k=5, attribute="scene")).attribute == "scene"
    assert m.grid["representation"].tolist() == [
        "native 12", "MRL 6", "PCA 6", "PCA uncentred 6", "MRL 3", "PCA 3", "PCA uncentred 3",
    ]  # fmt: skip
    assert m.checked == "PCA 6" and m.checked_attribute in ATTRS


def test_run_measures_what_the_library_measures():
    v = _vectors()
    m = C.run(v, SMALL)
    args = (v.train, v.train_labels, v.val, v.val_labels)
    pd.testing.assert_frame_equal(m.grid, compression_grid(*args, dims=[6, 3], k=5))
    pd.testing.assert_frame_equal(m.items, compression_items(*args, dims=[6, 3], k=5))
    pd.testing.assert_frame_equal(
        m.curve, measures.overlap_curve(v.train, v.val, dims=measures.dims_ladder(12, [6, 3]), k=5)
    )
    pd.testing.assert_frame_equal(m.centring, measures.centring_effect(v.train, v.val, v.val_labels, k=5))
    pd.testing.assert_frame_equal(m.spectrum, measures.variance_spectrum(v.train, [6, 3]))
    raw = measures.unstandardized_ba(*args, method="PCA", dim=6, attribute=m.checked_attribute)
    assert m.raw_ba == raw and m.checked_attribute == C.largest_loss(m.grid, "PCA 6")


@pytest.mark.parametrize("memo", ["on", "off"])
def test_run_is_a_function_of_its_inputs(memo, monkeypatch, tmp_path):
    monkeypatch.setenv("EMBDIAG_DATA", str(tmp_path / "data"))
    if memo == "on":
        monkeypatch.delenv("EMBDIAG_MEMO", raising=False)
    v = _vectors()
    first = C.run(v, SMALL)
    again = C.run(_vectors(), SMALL)  # equal content, other arrays
    _same(first, again)
    kept = list((tmp_path / "data" / "cache" / "memo").rglob("*.pkl"))
    assert len(kept) == (1 if memo == "on" else 0)
    assert C.run(_vectors(seed=1), SMALL).grid is not None  # other vectors: measured, not read
    assert len(list((tmp_path / "data").rglob("*.pkl"))) == (2 if memo == "on" else 0)


@pytest.mark.parametrize(
    "settings, field",
    [
        (C.Settings(k=0), "k"),
        (C.Settings(k=2.5), "k"),
        (C.Settings(dims=[13]), "dims"),
        (C.Settings(dims=[0]), "dims"),
        (C.Settings(dims=[]), "dims"),
        (C.Settings(dims="64"), "dims"),
        (C.Settings(dims=6), "dims"),
        (C.Settings(attribute="colour"), "attribute"),
    ],
)
def test_a_bad_setting_names_its_field(settings, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        C.run(_vectors(), settings)


def test_findings_of_a_run_are_the_verdicts_the_chapter_shows():
    v = _vectors(d=24, n_train=120, n_val=80)
    m = C.run(v, C.Settings(dims=[16, 8], k=5))
    shown = C.findings(m, C.read_study())
    # the chapter's verdicts: the same claims decided on the library's tables of these vectors
    args = (v.train, v.train_labels, v.val, v.val_labels)
    tables = _measurement(
        compression_grid(*args, dims=[16, 8], k=5),
        measures.centring_effect(v.train, v.val, v.val_labels, k=5),
        items=compression_items(*args, dims=[16, 8], k=5),
        k=5,
    )
    pd.testing.assert_frame_equal(shown, C.findings(tables, C.read_study()))
    assert list(shown["finding"]) == list(C.CRITERIA)
    assert shown.set_index("finding").loc["no method leads everywhere", "verdict"] != "not measured"
    pd.testing.assert_frame_equal(findings.table(shown), findings.table(C.findings(m)))
