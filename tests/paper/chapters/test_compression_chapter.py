"""Figures, tables and findings of the Compression chapter, on small tables."""

import json

import numpy as np
import pandas as pd
import pytest

from embdiag.metrics.stats import ItemIntervals
from embdiag.paper import theme
from embdiag.paper.chapters import compression as F
from embdiag.interventions.compression import centring_effect, compression_grid, compression_items
from embdiag.paper import findings

ATTRS = ("weather", "scene", "timeofday")


def _table(values: dict, k: int = 10, overlap=None) -> pd.DataFrame:
    """A grid-shaped table from {representation: six shares (3 BA, 3 P@k)}."""
    rows = []
    for rep, six in values.items():
        method, dim = (rep.rsplit(" ", 1)[0], int(rep.rsplit(" ", 1)[1]))
        row = {"representation": rep, "method": method, "dim": dim}
        row.update({f"{a} BA": v for a, v in zip(ATTRS, six[:3])})
        row.update({f"{a} P@{k}": v for a, v in zip(ATTRS, six[3:])})
        row[f"overlap@{k}"] = 1.0 if overlap is None else overlap.get(rep, 1.0)
        rows.append(row)
    return pd.DataFrame(rows)


NATIVE = [0.60, 0.70, 0.80, 0.50, 0.60, 0.70]


def _grid(mrl128_weather_ba=0.52, k=10):
    return _table(
        {
            "native 768": NATIVE,
            "MRL 512": [0.60, 0.70, 0.80, 0.50, 0.60, 0.71],
            "PCA 512": [0.59, 0.69, 0.79, 0.49, 0.59, 0.72],
            "MRL 256": [0.59, 0.70, 0.80, 0.50, 0.60, 0.70],
            "PCA 256": [0.58, 0.71, 0.79, 0.49, 0.59, 0.69],
            "MRL 128": [mrl128_weather_ba, 0.69, 0.79, 0.49, 0.59, 0.72],
            "PCA 128": [0.60, 0.70, 0.80, 0.50, 0.60, 0.71],
        },
        k=k,
    )


def _centring(centred=0.9, uncentred=1.0, k=10):
    return pd.DataFrame(
        {
            "representation": ["native", "PCA uncentred 768", "PCA 768", "native minus training mean"],
            f"overlap@{k}": [1.0, uncentred, centred, centred],
            f"changed@{k}": [0, 0, 0.4, 0.4],
            f"overlap@{k} with centred cosine": [centred, centred, 1.0, 1.0],
            "max |Δ cosine|": [0.0, 1e-15, 0.5, 0.5],
            **{f"{a} P@{k}": [0.5] * 4 for a in ATTRS},
        }
    )


def test_study_csv_is_the_printed_table():
    s = F.read_study().set_index("representation")
    assert list(s.index) == ["native 768", "MRL 512", "PCA 512", "MRL 256", "PCA 256", "MRL 128", "PCA 128"]
    assert s.loc["native 768", "weather BA"] == pytest.approx(0.6302)
    assert s.loc["PCA 128", "timeofday P@10"] == pytest.approx(0.8400)
    assert s.loc["MRL 128", "scene P@10"] == pytest.approx(0.6078)


def test_point_readings_of_the_study_table_hold():
    # the point-estimate readings (the old criteria) restate what the study's own table shows
    verdicts = F.evaluate_criteria(F.read_study())
    for name, (words, holds) in verdicts.items():
        if name != "centring alone moves neighbours":
            assert holds is True, (name, words)
    assert verdicts["MRL 128 loses most on weather BA"][0].startswith("weather BA -8.11 pp")
    assert verdicts["PCA ahead at 128"][0] == "128: PCA ahead on 5 of 6, MRL on 1"


def test_near_margin_lies_in_the_gap_the_study_table_shows():
    study = F.read_study()
    largest = {r: F._diffs(study, r, 10).abs().max() for r in study["representation"] if not r.startswith("native")}
    near = [largest[r] for r in ("MRL 512", "MRL 256", "PCA 128")]
    other = [v for r, v in largest.items() if r not in ("MRL 512", "MRL 256", "PCA 128")]
    assert max(near) == pytest.approx(1.95) and min(other) == pytest.approx(4.17)
    assert max(near) < F.NEAR_PP < min(other) and F.NEAR_PP == pytest.approx((max(near) + min(other)) / 2, abs=0.1)
    assert F.LOSS_PP == F.NEAR_PP and F.ORDER_PP == 0


def test_every_declared_claim_has_a_justified_margin_and_a_kind():
    assert list(F.CRITERIA) == [
        "no method leads everywhere",
        "MRL 512 and 256 near native",
        "MRL 128 loses most on weather BA",
        "PCA 128 close to native",
        "PCA ahead at 128",
        "centring alone moves neighbours",
    ]
    kinds = {name: c.kind for name, c in F.CRITERIA.items()}
    assert kinds.pop("centring alone moves neighbours") == "addition" and set(kinds.values()) == {"study"}
    assert "no sampling" in F.CRITERIA["centring alone moves neighbours"].criterion
    assert all(
        c.was is None for n, c in F.CRITERIA.items() if n in ("PCA ahead at 128", "centring alone moves neighbours")
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
    return F.decide(_grid_of(items), centring, items, n_draws=kw.pop("n_draws", 400), **kw)


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
    assert F._most_of([up, up, up, up, unsure, down], names, "x", "y").verdict == "holds"
    assert F._most_of([up, up, up, unsure, unsure, down], names, "x", "y").verdict == "inconclusive"
    split = F._most_of([up, up, up, down, down, down], names, "x", "y")
    assert split.verdict == "contradicted" and split.reason.startswith(
        "x on 3 of 6 columns (a, b, c), y on 3 (d, e, f)"
    )
    assert (split.low, split.high) == (-2, -1) and "the 4th largest interval" in split.reason  # it decides
    assert [F._ordinal(m) for m in (1, 2, 3, 4, 11, 12, 13, 21, 22)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd",
    ]  # fmt: skip


def test_without_per_image_scores_interval_findings_are_not_testable():
    v = F.findings(_grid(), _centring(), F.read_study()).set_index("finding")
    assert v.loc["centring alone moves neighbours", "verdict"] == "holds"
    others = v.drop(index="centring alone moves neighbours")
    assert set(others["verdict"]) == {"not testable"} and "compression_items" in others["reason"].iloc[0]
    assert set(others["holds in the study"]) == {"not testable"}


def test_findings_show_the_old_point_verdicts_beside_the_new():
    items = _items(n=300)
    v = F.findings(_grid_of(items), _centring(), items=items, n_draws=300).set_index("finding")
    assert list(v.index) == list(F.CRITERIA)
    assert v.loc["MRL 512 and 256 near native", "old verdict"] == "yes"
    assert v.loc["PCA ahead at 128", "old verdict"] == ""
    assert v.loc["MRL 512 and 256 near native", "holds in the study"] == "not testable"
    assert v.loc["centring alone moves neighbours", "holds in the study"] == "not measured"
    assert v.loc["centring alone moves neighbours", "kind"] == "addition"


def test_centring_is_decided_exactly():
    holds = F.findings(_grid(), _centring(centred=0.9)).set_index("finding").loc["centring alone moves neighbours"]
    assert holds["verdict"] == "holds" and holds["low"] == holds["high"] == 0.9
    assert "no sampling" in holds["reason"]
    for c in (_centring(centred=0.995), _centring(uncentred=0.999)):
        assert F.findings(_grid(), c).set_index("finding").loc["centring alone moves neighbours", "verdict"] == (
            "contradicted"
        )


def test_findings_with_other_dims_say_not_measured():
    g = _table({"native 768": NATIVE, "MRL 64": NATIVE, "PCA 64": NATIVE})
    v = F.findings(g, None)
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


def test_results_frame_in_the_study_layout():
    g = _grid()
    g = pd.concat([g, _table({"PCA uncentred 128": NATIVE})], ignore_index=True)
    f = F.results_frame(g, F.read_study())
    assert list(f.columns) == [
        "weather BA",
        "scene BA",
        "time BA",
        "weather P@10",
        "scene P@10",
        "time P@10",
        "overlap@10",
    ]
    assert f.index[:4].tolist() == [
        ("native 768", "this run"),
        ("native 768", "study"),
        ("MRL 512", "this run"),
        ("MRL 512", "study"),
    ]
    assert f.index[-1] == ("PCA uncentred 128", "this run")  # after PCA 128; the study has no such row
    assert f.loc[("MRL 128", "study"), "weather BA"] == pytest.approx(54.91)
    assert f.loc[("MRL 128", "this run"), "weather BA"] == pytest.approx(52.0)
    assert np.isnan(f.loc[("PCA 128", "study"), "overlap@10"])
    html = F.results_table(g, F.read_study()).to_html()
    assert "54.91" in html and "—" in html


def test_change_chart_has_six_panels_on_one_fixed_axis():
    spec = F.change_chart(_grid(mrl128_weather_ba=0.40), study=F.read_study()).to_dict()
    assert spec["facet"]["row"]["field"] == "endpoint" and spec["facet"]["column"]["field"] == "attribute"
    text = json.dumps(spec)
    assert '"domain": [-10.0, 5.0]' in text
    data = pd.DataFrame(next(iter(spec["datasets"].values())))
    assert set(data["attribute"]) == {"weather", "scene", "time"} and set(data["endpoint"]) == {"BA", "P@10"}
    assert data["shown"].min() == -10.0  # -20 pp drawn at the axis edge
    assert set(data["source"]) == {"this run", "study (published)"}
    caption = F.change_caption(_grid(mrl128_weather_ba=0.40))
    assert "1 value(s) lie beyond it" in caption and "MRL 128 weather BA -20.00 pp" in caption
    assert "every value lies within the axis" in F.change_caption(_grid())
    assert not caption.startswith("*") and not caption.endswith("*")  # plain text: an exhibit's caption


def test_methods_are_told_apart_by_their_theme_colours_not_dashes():
    spec = json.dumps(F.change_chart(pd.concat([_grid(), _table({"PCA uncentred 128": NATIVE})])).to_dict())
    assert all(theme.colour(m) in spec for m in ("MRL", "PCA", "PCA uncentred"))
    assert spec.count('"strokeDash"') == 1, "only the zero line is dashed (a reference level)"


def test_charts_on_a_real_small_grid():
    rng = np.random.default_rng(0)
    X, E = rng.standard_normal((80, 12)) + 1, rng.standard_normal((40, 12)) + 1
    y = {a: rng.choice(["p", "q"], 80) for a in ATTRS}
    ye = {a: rng.choice(["p", "q"], 40) for a in ATTRS}
    g = compression_grid(X, y, E, ye, dims=[6, 3], k=5)
    F.change_chart(g, k=5, study=F.read_study()).to_dict()
    curve = compression_grid(X, y, E, ye, dims=[12, 6, 3], k=5, probes=False)
    spec = F.overlap_chart(curve, k=5).to_dict()
    assert spec["encoding"]["x"]["scale"]["type"] == "log"
    ce = centring_effect(X, E, ye, k=5)
    text = F.centring_text(ce, k=5)
    assert "full dimension (12" in text and "0.89" in text
    assert "overlap@5" in F.centring_table(ce, k=5).to_html()


def test_schematic_is_deterministic():
    a, b = F.schematic_chart().to_dict(), F.schematic_chart().to_dict()
    assert a == b and len(a["hconcat"]) == 2


def test_prefix_note():
    assert "only meaningful for Matryoshka encoders" in F.prefix_note(None, [512, 256])
    assert "was trained to be an embedding" in F.prefix_note((768, 512, 256, 128), [512, 256, 128])
    assert "64 was not a trained prefix" in F.prefix_note((768, 512, 256, 128), [512, 64])


def test_texts_read_their_numbers_from_the_tables():
    g = _grid()
    assert F.largest_loss(g, "MRL 128") == "weather"
    with pytest.raises(ValueError, match="representation"):
        F.largest_loss(g, "MRL 64")
    with pytest.raises(ValueError, match="probes=False"):
        F.largest_loss(g.drop(columns=[c for c in g.columns if c.endswith(" BA")]), "MRL 128")
    spectrum = pd.DataFrame({"dim": [512, 256, 128], "share": [1.0, 1.0, 0.9997], "weakest": [1e-16, 1e-9, 3e-5]})
    spectrum.attrs.update({"rank": 257, "weakest spanned": 6e-7})
    text = F.standardization_text(g, spectrum, 0.61, "PCA 512", "weather")
    assert "span 257 directions" in text and "**61.00%** weather" in text
    assert "59.00% standardized and 60.00% on the native" in text
    assert "other 255 coordinates to zero" in text and "direction 257, has 6.0e-07" in text
    assert "not from what PCA keeps" in text
    spectrum.attrs["rank"] = 512
    assert "direction 512 has 1.0e-16" in F.standardization_text(g, spectrum, 0.61, "PCA 512", "weather")
    assert "does not explain" in F.standardization_text(g, spectrum, 0.595, "PCA 512", "weather")
    html = F.spectrum_table(spectrum).to_html()
    assert "share of training variance left out" in html and "3.0e-04" in html
    words = F.retrieval_text(g, _centring())
    assert "MRL 2.00 pp" in words and "PCA 2.00 pp" in words


def test_overlap_text_names_trained_and_untrained_prefixes():
    curve = pd.DataFrame(
        {
            "representation": ["MRL 768", "MRL 512", "MRL 384", "MRL 256", "PCA 768", "PCA 256"],
            "method": ["MRL"] * 4 + ["PCA"] * 2,
            "dim": [768, 512, 384, 256, 768, 256],
            "overlap@10": [1.0, 0.99, 0.95, 0.98, 0.91, 0.91],
        }
    )
    text = F.overlap_text(curve, 10, (768, 512, 256, 128))
    assert "MRL: 1.000 at 768, 0.950 at its lowest (384)" in text
    assert "(512: 0.990, 256: 0.980) than in between (384: 0.950)" in text
    assert "trained" not in F.overlap_text(curve, 10, None)


def test_a_users_attributes_get_no_study_rows_or_points():
    g = _grid().rename(
        columns=lambda c: c.replace("weather", "digit").replace("scene", "parity").replace("timeofday", "shape")
    )
    frame = F.results_frame(g, F.read_study())
    assert set(frame.index.get_level_values("source")) == {"this run"}
    assert list(frame.columns[:2]) == ["digit BA", "parity BA"]
    spec = F.change_chart(g, study=F.read_study()).to_dict()
    data = next(iter(spec["datasets"].values()))
    assert {r["source"] for r in data} == {"this run"} and {r["attribute"] for r in data} == {
        "digit",
        "parity",
        "shape",
    }
