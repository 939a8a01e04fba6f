"""The caption chapter's figures, tables and wording, on results whose answers are known."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from embdiag.encoders.vectors import CaptionVectors
from embdiag.paper.chapters import caption_retrieval as figures
from embdiag.interventions import caption_retrieval as cr
from embdiag.study import caption_retrieval as home


@pytest.fixture(scope="module")
def study():
    return home.read_study()


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(0)
    images = rng.standard_normal((30, 12))
    group = np.repeat(np.arange(30), 5)
    captions = images[group] + rng.standard_normal((150, 12))
    categories = rng.random((30, 3)) < 0.5
    return cr.evaluate(images, captions, captions, group, categories, dims=(6, 3), k=4, min_support=3)


def _spec(chart) -> str:
    return json.dumps(chart.to_dict())


def _caption_vectors(result, **kw):
    n = result.n_images
    empty = np.zeros((n, 1))
    captions = np.array([f"caption {j} of {g}" for j, g in enumerate(result.group)])
    return CaptionVectors(empty, empty, empty, result.group, captions, empty > 0, ("c",), "test data", **kw)


def test_charts_build_and_show_what_they_say(result):
    pixels = np.random.default_rng(1).integers(0, 255, (30, 8, 8, 3), dtype=np.uint8)
    pictures, numbers = _caption_vectors(result, image_pixels=pixels), _caption_vectors(result)
    image = cr.typical_image(result)
    spec = _spec(figures.ranking_chart(result, pictures, image))
    assert "data:image/png;base64" in spec and figures.PARENT in spec
    assert "parent at rank" in spec
    assert '"type": "text"' in _spec(figures.ranking_chart(result, numbers, 3, slot=0))  # no pixels: image numbers
    with pytest.raises(ValueError, match="slot: image 3 has 5 captions, got 5"):
        figures.ranking_chart(result, pictures, 3, slot=5)
    frame = figures.ranking_frame(result, image)  # the chart's data, as offered for download
    drawn = figures.ranking_chart(result, pictures, image).to_dict()["datasets"]
    assert frame.to_dict("records") in list(drawn.values())
    assert frame["parent"].sum() <= len(result.names) and len(frame) == len(result.names) * result.k
    assert "data:image/png" in _spec(figures.example_chart(pictures, image))
    assert "image 2" in _spec(figures.example_chart(numbers, 2))


def test_text_items_are_shown_by_their_text_and_named_in_the_datas_nouns(result):
    n = result.n_images
    texts = np.array([f"definition number {i} " + "word " * 30 for i in range(n)])
    ids = np.array([f"{i:08d}-n" for i in range(n)])
    glosses = _caption_vectors(result, item="gloss", caption="example", item_ids=ids, item_texts=texts)
    assert figures.item_label(glosses, 4) == "gloss 4 (00000004-n)"
    assert [figures.plural(w) for w in ("gloss", "example", "image")] == ["glosses", "examples", "images"]
    lines = figures.example_chart(glosses, 4).to_dict()["datasets"]
    shown = [row["line"] for rows in lines.values() for row in rows]
    assert " ".join(shown) == " ".join(texts[4].split()) and max(map(len, shown)) <= 60 and len(shown) > 1
    ranked = json.dumps(figures.ranking_chart(result, glosses, 4, slot=0).to_dict())
    assert "definition number" in ranked, "a text item's ranking shows its text on hover"
    table = figures.caption_ranking_table(result, glosses, 4).data
    assert list(table.columns) == ["score", "example", "owner gloss", "own example"]
    assert list(figures.example_captions(result, glosses, 4).data.index.names) == ["example #"]

    for chart in (
        figures.metrics_chart(result),
        figures.control_chart(cr.shuffled_control(result, n_permutations=20)),
        figures.intervals_chart(cr.bootstrap_changes(result, n_draws=50), home.read_study()),
    ):
        assert _spec(chart)


def test_tables_carry_the_measured_values(result):
    captions = _caption_vectors(result)
    ex = figures.example_captions(result, captions, 2).data
    assert list(ex["caption"]) == [f"caption {j} of 2" for j in range(10, 15)]
    assert list(ex["parent's rank, MRL 3"]) == list(result["MRL 3"].t2i.rank[10:15])
    ranking = figures.caption_ranking_table(result, captions, 2).data
    assert list(ranking["owner image"]) == [str(g) for g in result.group[result.native.i2t.neighbors[2]]]
    assert not pd.api.types.is_numeric_dtype(ranking["owner image"])  # ids are labels: nothing to mark
    assert (ranking["own caption"] == "yes").sum() == result.native.i2t.recall_k[2] * 5
    pct = figures.percent_table(result).data
    assert pct.loc["MRL 6", "T→I Hit@4"] == pytest.approx(100 * result["MRL 6"].t2i.hit_k.mean())
    side = figures.side_by_side(result, home.read_study()).data
    assert np.isnan(side.loc[("MRL 6", "T→I Hit@1"), figures.STUDY])  # the study has no 6-d prefix
    over = figures.overlaps_side_by_side(result, home.read_study()).data
    assert over.loc[("MRL 3", cr.I2T), figures.THIS_RUN] == pytest.approx(
        100 * cr.overlap_table(result).set_index(["representation", "direction"]).loc[("MRL 3", cr.I2T), "overlap"]
    )
    assert np.isnan(over.loc[("MRL 3", cr.I2T), figures.STUDY])
    changes = cr.bootstrap_changes(result, n_draws=50)
    table = figures.changes_table(changes).data
    assert list(table.columns[-2:]) == ["95% interval: low (pp)", "95% interval: high (pp)"]
    assert table["95% interval: low (pp)"].tolist() == (100 * changes["low"]).tolist()
    assert table["95% interval: high (pp)"].tolist() == (100 * changes["high"]).tolist()
    control = cr.shuffled_control(result, n_permutations=20)
    frame = figures.control_frame(control)
    assert frame["shuffles, 2.5th percentile %"].tolist() == (100 * control["permutation low"]).tolist()
    assert frame["exact chance %"].tolist() == (100 * control["chance"]).tolist()
    assert list(figures.control_table(control).data.columns) == list(frame.columns[2:])


def test_changes_statement_computes_its_numbers(result, study):
    changes = cr.bootstrap_changes(result, n_draws=50)
    text = figures.changes_statement(changes, result, study)
    top = changes.loc[changes["change"].abs().idxmax()]
    assert f"{100 * top['change']:+.2f}" in text and "the native top 4" in text
    assert f"{100 * cr.overlap_table(result)['overlap'].min():.2f}%" in text and "64.78% to 83.75%" in text


def test_control_statement_computes_its_numbers(result, study):
    control = cr.shuffled_control(result, n_permutations=20)
    text = figures.control_statement(control, result, study)
    chance = control.set_index(["direction", "metric"]).loc[(cr.I2T, "Hit@4"), "chance"]
    assert f"{chance:.2%}" in text and f"{chance * 30:.2f} images" in text
    assert f"{cr.random_hit_chance(150, 5, 4):.2%}" in text and "0.20% image→text" in text


def test_control_statement_averages_the_random_draws_over_unequal_groups(study):
    rng = np.random.default_rng(2)
    images = rng.standard_normal((20, 8))
    group = np.repeat(np.arange(20), np.arange(20) % 3 + 1)  # 1 to 3 captions per image
    queries = images[group] + rng.standard_normal((len(group), 8))
    result = cr.evaluate(images, queries, queries, group, np.zeros((20, 0), bool), dims=(4,), k=3)
    text = figures.control_statement(cr.shuffled_control(result, n_permutations=10), result, study)
    draws = np.mean([cr.random_hit_chance(len(group), m, 3) for m in np.bincount(group)])
    assert f"{draws:.2%} (an image's own 1 to 3 captions among {len(group)}, averaged over images)" in text


def test_the_parent_outline_is_named_by_the_colour_drawn(result):
    assert figures.colour_name(figures.PARENT) == "orange"  # vermillion, #D55E00, hue 26°
    assert [figures.colour_name(c) for c in ("#FF0000", "#0072B2", "#009E73", "#767676", "#000000")] == [
        "red",
        "blue",
        "green",
        "grey",
        "black",
    ]
    spec = figures.ranking_chart(result, _caption_vectors(result), 3).to_dict()
    assert [layer["mark"]["stroke"] for layer in spec["layer"] if "stroke" in layer["mark"]] == [figures.PARENT]
    with pytest.raises(ValueError, match="colour: expected #RRGGBB"):
        figures.colour_name("orange")


def test_data_statement_says_whether_queries_and_documents_differ(result):
    same = _caption_vectors(result)
    assert "embedded once, the same vectors serving as query and as document" in figures.data_statement(same, result)
    other = _caption_vectors(result)
    other = CaptionVectors(
        *(getattr(other, f) for f in ("images", "queries")),
        np.ones((result.n_images, 1)),
        *(getattr(other, f) for f in ("group", "captions", "categories", "category_names", "source")),
    )
    text = figures.data_statement(other, result)
    assert text.startswith(
        "**Data and encoder:** test data. 150 captions, each embedded in the query and in the document"
    )


def test_statements_without_categories_or_caption_text():
    from types import SimpleNamespace

    from embdiag.interventions import caption_retrieval as cr

    rng = np.random.default_rng(0)
    images, queries = rng.standard_normal((12, 8)), rng.standard_normal((24, 8))
    group = np.repeat(np.arange(12), 2)
    result = cr.evaluate(images, queries, queries, group, np.zeros((12, 0), bool), dims=(4,), k=3)
    assert np.isnan(result.native.category_p)
    vectors = SimpleNamespace(
        source="the user's vectors v.npz", group=group, category_names=(), caption_statistics=lambda: None
    )
    assert "not computed" in figures.categories_statement(vectors, result)
    text = figures.data_statement(vectors, result)
    assert text.startswith("**Data and encoder:** the user's vectors v.npz.") and "distinct" not in text


def test_level_statement_names_both_parts_of_keeps_high(study):
    d = home.study_changes(study)
    changes = d.assign(change=d["change"] / 100, low=d["low"] / 100, high=d["high"] / 100)
    changes["native"] = [
        home.study_value(study, m, d, "native 768") / 100 for m, d in zip(changes["metric"], changes["direction"])
    ]
    text = figures.level_statement(changes)
    assert text.startswith("Native T→I Hit@10 is 97.16% and I→T Hit@10 is 98.40% here, against 90%: high before")
    assert "T→I interval [-4.06, -2.62] lies wholly above -5" in text
    low = changes.assign(native=changes["native"] - 0.5)
    assert "T→I and I→T Hit@10 are not high even before compression" in figures.level_statement(low)
