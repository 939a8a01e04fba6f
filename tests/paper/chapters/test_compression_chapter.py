"""Figures, tables and words of the Compression chapter, on small tables."""

import json

import numpy as np
import pandas as pd
import pytest

from embdiag.view import theme
from embdiag.paper.chapters import compression as F
from embdiag.interventions.compression import centring_effect, compression_grid
from embdiag.study.compression import read_study

ATTRS = ("weather", "scene", "timeofday")


def test_results_frame_in_the_study_layout(compression_tables):
    g = compression_tables.grid()
    g = pd.concat([g, compression_tables.table({"PCA uncentred 128": compression_tables.native})], ignore_index=True)
    f = F.results_frame(g, read_study())
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
    html = F.results_table(g, read_study()).to_html()
    assert "54.91" in html and "—" in html


def test_change_chart_has_six_panels_on_one_fixed_axis(compression_tables):
    spec = F.change_chart(compression_tables.grid(mrl128_weather_ba=0.40), study=read_study()).to_dict()
    assert spec["facet"]["row"]["field"] == "endpoint" and spec["facet"]["column"]["field"] == "attribute"
    text = json.dumps(spec)
    assert '"domain": [-10.0, 5.0]' in text
    data = pd.DataFrame(next(iter(spec["datasets"].values())))
    assert set(data["attribute"]) == {"weather", "scene", "time"} and set(data["endpoint"]) == {"BA", "P@10"}
    assert data["shown"].min() == -10.0  # -20 pp drawn at the axis edge
    assert set(data["source"]) == {"this run", "study (published)"}
    caption = F.change_caption(compression_tables.grid(mrl128_weather_ba=0.40))
    assert "1 value(s) lie beyond it" in caption and "MRL 128 weather BA -20.00 pp" in caption
    assert "every value lies within the axis" in F.change_caption(compression_tables.grid())
    assert "open diamonds: the study's" in F.change_caption(compression_tables.grid(), study=read_study())
    assert "diamonds" not in caption, "without the study, no study points to name"


def test_the_caption_names_study_points_only_where_the_chart_draws_them(compression_tables):
    """At dimensions the study did not keep (a 50,000-row run at 171, 85 and 43 of 512), no diamonds."""
    g = compression_tables.grid()
    g = g.assign(dim=g["dim"].replace({512: 171, 256: 85, 128: 43}))
    g["representation"] = g["method"] + " " + g["dim"].astype(str)
    assert F.study_changes(g, read_study()).empty
    caption = F.change_caption(g, study=read_study())
    assert "diamonds" not in caption and "EmbeddingGemma" not in caption
    assert "EmbeddingGemma" in F.change_caption(compression_tables.grid(), study=read_study())
    assert not caption.startswith("*") and not caption.endswith("*")  # plain text: an exhibit's caption


def test_methods_are_told_apart_by_their_theme_colours_not_dashes(compression_tables):
    spec = json.dumps(
        F.change_chart(
            pd.concat(
                [compression_tables.grid(), compression_tables.table({"PCA uncentred 128": compression_tables.native})]
            )
        ).to_dict()
    )
    assert all(theme.colour(m) in spec for m in ("MRL", "PCA", "PCA uncentred"))
    assert spec.count('"strokeDash"') == 1, "only the zero line is dashed (a reference level)"


def test_charts_on_a_real_small_grid():
    rng = np.random.default_rng(0)
    X, E = rng.standard_normal((80, 12)) + 1, rng.standard_normal((40, 12)) + 1
    y = {a: rng.choice(["p", "q"], 80) for a in ATTRS}
    ye = {a: rng.choice(["p", "q"], 40) for a in ATTRS}
    g = compression_grid(X, y, E, ye, dims=[6, 3], k=5)
    F.change_chart(g, k=5, study=read_study()).to_dict()
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


def test_schematic_legend_is_short_and_tells_the_pca_lines_apart_by_shape_too():
    spec = F.schematic_chart().to_dict()
    ends = next(layer for layer in spec["hconcat"][1]["layer"] if "shape" in layer.get("encoding", {}))
    enc = ends["encoding"]
    assert enc["color"]["scale"]["domain"] == enc["shape"]["scale"]["domain"] == ["PCA", "PCA uncentred"]
    assert enc["shape"]["scale"]["range"] == ["square", "triangle"]  # as in the measured charts
    assert enc["color"]["scale"]["range"] == [theme.colour("PCA"), theme.colour("PCA uncentred")]
    assert spec["resolve"]["scale"]["shape"] == "independent", "colour and shape share one legend"


def test_prefix_note():
    assert "only meaningful for Matryoshka encoders" in F.prefix_note(None, [512, 256])
    assert "was trained to be an embedding" in F.prefix_note((768, 512, 256, 128), [512, 256, 128])
    assert "64 was not a trained prefix" in F.prefix_note((768, 512, 256, 128), [512, 64])


def test_texts_read_their_numbers_from_the_tables(compression_tables):
    g = compression_tables.grid()
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
    gained = g.assign(**{"weather BA": np.where(g["representation"] == "PCA 512", 0.7, g["weather BA"])})
    assert "PCA 512 loses no balanced accuracy" in F.standardization_text(gained, spectrum, 0.61, "PCA 512", "weather")
    html = F.spectrum_table(spectrum).to_html()
    assert "share of training variance left out" in html and "3.0e-04" in html
    words = F.retrieval_text(g, compression_tables.centring())
    assert "MRL 2.00 pp" in words and "PCA 2.00 pp" in words


def test_the_centring_text_says_what_the_table_shows(compression_tables):
    text = F.centring_text(compression_tables.centring())
    assert "**0.900**" in text and "the change is the centring, not the projection" in text and "(rounding)" in text
    other = compression_tables.centring()
    other.loc[other["representation"] == "PCA 768", "overlap@10 with centred cosine"] = 0.95
    other.loc[other["representation"] == "PCA uncentred 768", "max |Δ cosine|"] = 1e-3
    text = F.centring_text(other)
    assert "not the centring alone" in text and "is 0.9500" in text and "(rounding)" not in text


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
    assert (
        "keeps more at the lengths the encoder was trained at (512: 0.990, 256: 0.980) than in between (384: 0.950)"
        in text
    )
    curve.loc[curve["representation"] == "MRL 384", "overlap@10"] = 0.995  # the untrained length keeps more
    assert "keeps less at the lengths" in F.overlap_text(curve, 10, (768, 512, 256, 128))
    assert "trained" not in F.overlap_text(curve, 10, None)


def test_a_users_attributes_get_no_study_rows_or_points(compression_tables):
    g = compression_tables.grid().rename(
        columns=lambda c: c.replace("weather", "digit").replace("scene", "parity").replace("timeofday", "shape")
    )
    frame = F.results_frame(g, read_study())
    assert set(frame.index.get_level_values("source")) == {"this run"}
    assert list(frame.columns[:2]) == ["digit BA", "parity BA"]
    spec = F.change_chart(g, study=read_study()).to_dict()
    data = next(iter(spec["datasets"].values()))
    assert {r["source"] for r in data} == {"this run"} and {r["attribute"] for r in data} == {
        "digit",
        "parity",
        "shape",
    }
