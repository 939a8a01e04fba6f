"""The caption chapter's figures, tables and declared findings, on results whose answers are known."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from embdiag.encoders.vectors import CaptionVectors
from embdiag.paper.chapters import caption_retrieval as figures
from embdiag.interventions import caption_retrieval as cr
from embdiag.paper import findings


@pytest.fixture(scope="module")
def study():
    return figures.read_study()


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(0)
    images = rng.standard_normal((30, 12))
    group = np.repeat(np.arange(30), 5)
    captions = images[group] + rng.standard_normal((150, 12))
    categories = rng.random((30, 3)) < 0.5
    return cr.evaluate(images, captions, captions, group, categories, dims=(6, 3), k=4, min_support=3)


def test_published_values_are_the_studys_as_printed(study):
    v = lambda m, d, r, c="value": figures._study_value(study, m, d, r, c)  # noqa: E731
    assert v("Hit@1", cr.T2I, "native 768") == 73.86
    assert v("caption recall@10", cr.I2T, "MRL 128") == 68.90
    assert v("category P@10", "image→image", "MRL 256") == 48.12
    assert v("overlap@10", cr.T2I, "MRL 128") == 64.78
    assert v("Hit@10 change", cr.T2I, "MRL 128", "low") == -4.06
    assert v("Hit@10 change", cr.T2I, "MRL 128", "high") == -2.62
    assert v("shuffled Hit@10", cr.I2T, "native 768") == 0.20
    assert len(study) == 30 and set(study["unit"]) == {"%", "pp"}


def test_the_studys_changes_follow_from_its_table(study):
    """Differences of the printed table reproduce every printed change."""
    derived = figures._study_changes(study).set_index(["representation", "direction", "metric"])
    for _, s in study[study["metric"].str.endswith(" change")].iterrows():
        key = (s["representation"], s["direction"], s["metric"].removesuffix(" change"))
        assert derived.loc[key, "change"] == pytest.approx(s["value"], abs=1e-9)
    assert derived.loc[("MRL 128", cr.T2I, "Hit@1"), "change"] == pytest.approx(-11.36)
    assert np.isnan(derived.loc[("MRL 128", cr.T2I, "Hit@1"), "low"])


def _from_study(study) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The study's numbers in the shape of bootstrap_changes, shuffled_control and
    bootstrap_contrasts (fractions), with narrow intervals where the study printed none: a run
    whose every finding holds."""
    d = figures._study_changes(study)
    changes = pd.DataFrame(
        {
            "representation": d["representation"],
            "direction": d["direction"],
            "metric": d["metric"],
            "change": d["change"] / 100,
            "low": d["low"].fillna(d["change"] - 0.5) / 100,
            "high": d["high"].fillna(d["change"] + 0.5) / 100,
        }
    )
    changes["compressed"] = [
        figures._study_value(study, m, dr, r) / 100
        for m, dr, r in zip(changes["metric"], changes["direction"], changes["representation"])
    ]
    changes["compressed low"], changes["compressed high"] = changes["compressed"] - 0.01, changes["compressed"] + 0.01
    control = pd.DataFrame(
        {
            "direction": [cr.T2I, cr.I2T],
            "metric": ["Hit@10", "Hit@10"],
            "shuffled": [0.0122, 0.0020],
            "chance": [0.01, 0.002],
            "permutation low": [0.008, 0.001],
            "permutation high": [0.013, 0.004],
        }
    )
    h10 = changes[changes["metric"] == "Hit@10"].set_index(["representation", "direction"])["change"]
    rest = changes[changes["metric"] != "Hit@10"]
    contrast = rest["change"].to_numpy() - 2 * h10.loc[list(zip(rest["representation"], rest["direction"]))].to_numpy()
    contrasts = rest[["representation", "direction", "metric"]].assign(
        reference="Hit@10", factor=2.0, contrast=contrast, low=contrast - 0.005, high=contrast + 0.005
    )
    return changes, control, contrasts


def _set(changes, representation, direction, metric, **values):
    out = changes.copy()
    sel = (out["representation"] == representation) & (out["direction"] == direction) & (out["metric"] == metric)
    for column, value in values.items():
        out.loc[sel, column] = value
    return out


def test_the_study_under_its_own_rule(study):
    """The study's printed numbers: its 256-d image→text interval reaches -1.10 pp, so equivalence
    within ±1 pp is inconclusive; its levels and shuffle hold by Wilson intervals over its queries;
    its Hit@1 and recall falls carry no interval."""
    changes, control, contrasts = _from_study(study)
    v = figures.findings(changes, control, study, contrasts)
    assert list(v["finding"]) == list(figures.CRITERIA)
    assert list(v["holds in the study"]) == ["inconclusive", "holds", "not testable", "holds"]
    assert list(v["verdict"]) == ["inconclusive", "holds", "holds", "holds"]
    assert list(v["old verdict"]) == ["yes"] * 4
    assert v.loc[0, "study"] == "T→I -0.20 [-0.54, +0.14]; I→T -0.30 [-1.10, +0.50]"
    assert "I→T interval [-1.1, +0.5] crosses ±1" in v.loc[0, "reason"]
    assert v.loc[3, "study"] == "T→I 1.22% [0.95, 1.56] (chance 1.00%); I→T 0.20% [0.05, 0.73] (chance 0.20–1.00%)"
    assert "T→I Hit@10 93.82% [93.12, 94.45]" in v.loc[1, "study"]


def test_costs_little_needs_equivalence_not_an_interval_that_spans_zero(study):
    changes, control, contrasts = _from_study(study)
    tight = _set(changes, "MRL 256", cr.I2T, "Hit@10", low=-0.004, high=0.003)
    few = _set(changes, "MRL 256", cr.I2T, "Hit@10", change=0.0, low=-0.02, high=0.02)  # a null on few queries
    costs = _set(changes, "MRL 256", cr.I2T, "Hit@10", change=-0.03, low=-0.04, high=-0.02)
    verdict = lambda c: figures.findings(c, control, study, contrasts).iloc[0]  # noqa: E731
    assert verdict(tight)["verdict"] == "holds"
    assert verdict(few)[["verdict", "old verdict"]].tolist() == ["inconclusive", "yes"]
    assert verdict(costs)[["verdict", "old verdict"]].tolist() == ["contradicted", "no"]


def test_keeps_hit10_high_checks_the_level_not_only_the_drop(study):
    changes, control, contrasts = _from_study(study)
    low = _set(
        changes, "MRL 128", cr.T2I, "Hit@10", compressed=0.5588, **{"compressed low": 0.53, "compressed high": 0.58}
    )
    low = _set(low, "MRL 128", cr.T2I, "Hit@10", change=-0.001, low=-0.004, high=0.001)
    row = figures.findings(low, control, study, contrasts).iloc[1]
    assert row[["verdict", "old verdict"]].tolist() == ["contradicted", "yes"]
    assert row["reason"] == "T→I Hit@10: interval [+53, +58] lies wholly below 90"
    near = _set(changes, "MRL 128", cr.I2T, "Hit@10", **{"compressed low": 0.88, "compressed high": 0.93})
    assert figures.findings(near, control, study, contrasts).loc[1, "verdict"] == "inconclusive"
    wide = _set(changes, "MRL 128", cr.I2T, "Hit@10", low=-0.06, high=-0.01)  # the fall may pass 5 pp
    assert figures.findings(wide, control, study, contrasts).loc[1, "verdict"] == "inconclusive"


def test_far_more_needs_each_fall_and_its_paired_contrast(study):
    changes, control, contrasts = _from_study(study)
    assert figures.findings(changes, control, study).loc[2, "verdict"] == "not testable"  # no paired contrast
    sel = contrasts["metric"] == "caption recall@10"
    straddles = contrasts.copy()
    straddles.loc[sel, ["low", "high"]] = [-0.01, 0.01]
    row = figures.findings(changes, control, study, straddles).iloc[2]
    assert row["verdict"] == "inconclusive" and row["reason"].startswith("I→T caption recall@10 minus 2× Hit@10")
    flat = changes.copy()
    flat.loc[flat["metric"] != "Hit@10", ["change", "low", "high"]] = [0.0, -0.002, 0.002]  # Hit@1 keeps everything
    row = figures.findings(flat, control, study, contrasts).iloc[2]
    assert row[["verdict", "old verdict"]].tolist() == ["contradicted", "no"]


def test_the_control_needs_its_interval_near_chance(study):
    changes, control, contrasts = _from_study(study)
    spread = control.assign(**{"permutation high": [0.013, 0.015]})  # shuffles reach 1.3 pp above chance
    far = control.assign(
        shuffled=[0.05, 0.002], **{"permutation low": [0.04, 0.001], "permutation high": [0.06, 0.004]}
    )
    assert figures.findings(changes, spread, study, contrasts).loc[3, "verdict"] == "inconclusive"
    assert figures.findings(changes, far, study, contrasts).loc[3, ["verdict", "old verdict"]].tolist() == [
        "contradicted",
        "no",
    ]
    text = findings.summary(figures.findings(changes, far, study, contrasts), "{held} of {measured} findings")
    assert text.startswith("2 of 4 findings") and "is **contradicted**" in text  # 256-d: inconclusive


def test_findings_without_the_studys_dimensions_say_not_measured(result, study):
    changes = cr.bootstrap_changes(result, n_draws=50)  # MRL 6 and MRL 3, k = 4
    control = cr.shuffled_control(result, n_permutations=20)
    contrasts = cr.bootstrap_contrasts(result, figures.FAR_MORE, n_draws=50)
    verdicts = figures.findings(changes, control, study, contrasts)
    assert (verdicts["verdict"] == "not measured").all() and (verdicts["old verdict"] == "not measured").all()
    assert verdicts["this run"].str.startswith("not measured").all()
    assert list(verdicts["holds in the study"]) == ["inconclusive", "holds", "not testable", "holds"]


def test_this_runs_intervals_come_from_the_same_draws(result):
    changes = cr.bootstrap_changes(result, n_draws=200, seed=4).set_index(["representation", "direction", "metric"])
    contrasts = cr.bootstrap_contrasts(result, 2.0, n_draws=200, seed=4)
    for _, c in contrasts.iterrows():
        m = changes.loc[(c["representation"], c["direction"], c["metric"]), "change"]
        h = changes.loc[(c["representation"], c["direction"], "Hit@4"), "change"]
        assert c["contrast"] == pytest.approx(m - 2 * h) and c["low"] <= c["contrast"] <= c["high"]
    assert (changes["compressed low"] <= changes["compressed"]).all()
    assert (changes["compressed"] <= changes["compressed high"]).all()


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
        figures.intervals_chart(cr.bootstrap_changes(result, n_draws=50), figures.read_study()),
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
    side = figures.side_by_side(result, figures.read_study()).data
    assert np.isnan(side.loc[("MRL 6", "T→I Hit@1"), figures.STUDY])  # the study has no 6-d prefix
    over = figures.overlaps_side_by_side(result, figures.read_study()).data
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
    changes, _, _ = _from_study(study)
    changes["native"] = [
        figures._study_value(study, m, d, "native 768") / 100 for m, d in zip(changes["metric"], changes["direction"])
    ]
    text = figures.level_statement(changes)
    assert text.startswith("Native T→I Hit@10 is 97.16% and I→T Hit@10 is 98.40% here, against 90%: high before")
    assert "T→I interval [-4.06, -2.62] lies wholly above -5" in text
    low = changes.assign(native=changes["native"] - 0.5)
    assert "T→I and I→T Hit@10 are not high even before compression" in figures.level_statement(low)
