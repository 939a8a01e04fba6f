"""The 'On a real encoder' comparison: verdicts per encoder side by side, on synthetic inputs."""

from __future__ import annotations

import re
from urllib.parse import unquote

import io

import nbformat
import numpy as np
import pandas as pd
import pytest

from embdiag.encoders.vectors import CaptionVectors, LabelledVectors
from embdiag.paper import conclusions, real_encoder
from embdiag.paper import pipeline
from embdiag import study
from embdiag.paper.chapters import compression
from embdiag.study import compression as compression_home

FINDINGS = [(s, f) for s in real_encoder.SECTIONS for f in study.home(s).CRITERIA]


def _stacked(verdict: dict) -> pd.DataFrame:
    """Stacked verdicts of every design-B finding: ``verdict[finding]`` (default holds); the
    first finding is this project's addition, so no tally counts it."""
    rows = [
        {
            "section": s,
            "chapter": "x",
            "finding": f,
            "kind": "addition" if (s, f) == FINDINGS[0] else "study",
            "criterion": f"criterion of {f}",
            "margin": "1 pp",
            "why this margin": "w",
            "study": "s",
            "this run": f"numbers of {f}",
            "verdict": verdict.get(f, "holds"),
            "reason": f"interval of {f}",
            "low": 0.0,
            "high": 1.0,
        }
        for s, f in FINDINGS
    ]
    return pd.DataFrame(rows, columns=conclusions.COLUMNS)


def test_comparison_has_every_finding_and_each_encoders_verdict():
    first, second, last = FINDINGS[0][1], FINDINGS[1][1], FINDINGS[-1][1]
    table = real_encoder.comparison(
        {"a": _stacked({}), "b": _stacked({second: "contradicted"}), "c": _stacked({last: "not measured"})}
    )
    assert list(table.index) == FINDINGS
    assert table[("b", "verdict")].loc[FINDINGS[1]] == "contradicted"
    assert table[("c", "verdict")].loc[FINDINGS[-1]] == "not measured"
    assert table[("a", "numbers")].loc[FINDINGS[1]] == f"numbers of {second}; interval of {second}"
    t = real_encoder.tallies(table)
    n = len(FINDINGS) - 1  # the study's findings: the addition is not counted
    assert t.loc["a"].tolist() == [n, 0, 0, 0, 0]
    assert t.loc["b"].tolist() == [n - 1, 1, 0, 0, 0] and t.loc["c"].tolist() == [n - 1, 0, 0, 0, 1]
    assert list(real_encoder.differing(table).index) == [FINDINGS[1], FINDINGS[-1]]
    text = real_encoder.comparison_summary(table)
    assert text.startswith(f"Of the {n} design-B findings of the study, each decided by an interval against its")
    assert f"{n} on a, {n - 1} on b (1 contradicted) and {n - 1} on c (1 not measured) hold." in text
    assert f"On c the verdict differs from a and b's on 1: *{last}* (not measured here, holds there)." in text
    assert text.endswith(f"On 1 more the verdicts are split: *{second}* (holds on a, contradicted on b, holds on c).")
    assert first


def test_the_display_tables_hold_every_verdict_and_number():
    second = FINDINGS[1][1]
    table = real_encoder.comparison({"a": _stacked({}), "b": _stacked({second: "inconclusive"})})
    verdicts = real_encoder.verdict_table(table)
    assert list(verdicts.columns) == ["kind", "a", "b"] and list(verdicts.index) == FINDINGS
    assert verdicts.loc[FINDINGS[1]].tolist() == ["study", "holds", "inconclusive"]
    assert verdicts.loc[FINDINGS[0], "kind"] == "addition"
    numbers = real_encoder.numbers_table(table)
    assert list(numbers.index) == [(*f, label) for f in FINDINGS for label in ("a", "b")]
    assert numbers.loc[(*FINDINGS[1], "b")].tolist() == ["inconclusive", f"numbers of {second}; interval of {second}"]


def test_comparison_with_equal_verdicts_says_so_and_refuses_mismatched_tables():
    table = real_encoder.comparison({"a": _stacked({}), "b": _stacked({})})
    assert real_encoder.comparison_summary(table).endswith("Every finding has the same verdict on every encoder.")
    with pytest.raises(ValueError, match="other findings"):
        real_encoder.comparison({"a": _stacked({}), "b": _stacked({}).iloc[1:]})
    with pytest.raises(ValueError, match="no encoders"):
        real_encoder.comparison({})


def test_variant_note_only_on_wordnet():
    for section in real_encoder.SECTIONS:
        assert real_encoder.variant_note("procedural", section) == ""
        note = real_encoder.variant_note("wordnet", section)
        assert "not images" in note and "WordNet 3.0" in note and note.endswith("\n\n")
        plainly, detail = note.split('<details class="embdiag-more">')
        assert "not images" in plainly and "what the mapping cannot say" in detail  # said first, detail on demand
        assert "`" not in detail and "</details>" in detail  # HTML inside the collapsed block
    with pytest.raises(ValueError, match="section"):
        real_encoder.variant_note("wordnet", "training")


def _synthetic(encoder, dataset):
    """Small labelled and caption vectors: two attributes, 24 gloss-like groups of two captions."""
    rng = np.random.default_rng(0)
    d = 32
    centres = rng.normal(size=(3, d))

    def part(n):
        y = rng.integers(0, 3, n)
        x = centres[y] + 0.8 * rng.normal(size=(n, d))
        return x, {"colour": y, "size": rng.integers(0, 2, n)}

    (tr, trl), (va, val) = part(120), part(80)
    images = rng.normal(size=(24, d))
    group = np.repeat(np.arange(24), 2)
    captions = images[group] + 0.5 * rng.normal(size=(48, d))
    cats = np.zeros((24, 2), dtype=bool)
    cats[np.arange(24), np.arange(24) % 2] = True
    return (
        LabelledVectors(tr, va, trl, val, "synthetic"),
        CaptionVectors(
            images,
            captions,
            captions,
            group,
            np.array([f"c{i}" for i in range(48)]),
            cats,
            ("even", "odd"),
            "synthetic",
        ),
    )


def test_encoder_findings_computes_every_design_b_verdict_per_encoder():
    encoders = {"plain": ("plain", "synthetic"), "set": ("set", "synthetic")}
    pages = {
        "plain": {"compression": {"dims": [24]}, "caption retrieval": {"dims": [24]}},
        "set": {s: {"attribute": "size", "dims": [16, 8]} for s in real_encoder.SECTIONS},
    }
    verdicts = real_encoder.encoder_findings(
        encoders, load=_synthetic, pages=lambda encoder, dataset: pages[encoder], n_draws=50
    )
    assert list(verdicts) == ["plain", "set"]
    table = real_encoder.comparison(verdicts)
    assert list(table.index) == FINDINGS
    assert set(table[("set", "verdict")]) <= {"holds", "contradicted", "inconclusive", "not testable", "not measured"}
    # the settings reach the chapters' code: the headline attribute and the compression dims
    numbers = table["set", "numbers"]
    assert "size" in numbers.loc[("stress tests", "rank restriction costs labels")]
    assert "16" in numbers.loc[("compression", "no method leads everywhere")]
    assert "not measured" in numbers.loc[("caption retrieval", "256-d costs little")]
    assert table[("set", "verdict")].loc[("caption retrieval", "256-d costs little")] == "not measured"


def _page_table(name: str) -> pd.DataFrame:
    nb = nbformat.read(pipeline.DEFAULT.chapters / f"{name}.ipynb", as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            page = out.get("data", {}).get("text/html", "")
            found = re.search(r'download="findings-by-encoder.csv" href="data:text/csv;charset=utf-8,([^"]*)"', page)
            if found:
                return pd.read_csv(io.StringIO(unquote(found.group(1))))
    raise AssertionError(f"{name}: no findings-by-encoder table")


def test_the_page_lists_every_design_b_finding_with_three_verdicts():
    table = _page_table("10_across_encoders")
    assert list(zip(table["section"], table["finding"])) == FINDINGS
    labels = list(real_encoder.ENCODERS)
    assert list(table.columns) == ["section", "finding", "kind", *labels] and len(labels) == 3
    assert table[labels].isin(["holds", "contradicted", "inconclusive", "not testable", "not measured"]).all().all()


def test_compression_knows_wordllamas_trained_prefixes():
    from embdiag.encoders import DIMS, wordllama

    assert compression.trained_prefixes("reference-cnn") == DIMS
    assert compression.trained_prefixes(wordllama.NAME) == wordllama.DIMS == (256, 128, 64)
    assert compression.trained_prefixes(wordllama.NAME, vectors_path="v.npy") is None
    assert compression.trained_prefixes("hf:some/model@main") is None
    assert "was trained to be an embedding of its own" in compression.prefix_note(wordllama.DIMS, [128, 64])


def test_no_method_leads_is_checked_on_the_datas_own_attributes():
    cols = ["representation", "method", "dim", "pos BA", "lexname BA", "pos P@10", "lexname P@10"]
    rows = [
        ["native 256", "native", 256, 0.5, 0.4, 0.6, 0.3],
        ["MRL 128", "MRL", 128, 0.45, 0.32, 0.58, 0.29],
        ["PCA 128", "PCA", 128, 0.48, 0.33, 0.55, 0.28],
    ]
    table = pd.DataFrame(rows, columns=cols)
    assert compression_home._table_attributes(table) == ["pos", "lexname"]
    found = compression_home.evaluate_criteria(table, attribute="lexname")
    assert found["no method leads everywhere"] == ("128: MRL ahead on 2, PCA on 2", True)
    # "all six columns" reads the data's four; lexname takes weather's place; no 512 or 256 here
    assert found["PCA 128 close to native"] == ("PCA 128: largest |change| 7.00 pp (lexname BA)", False)
    assert found["MRL 128 loses most on weather BA"] == ("lexname BA -8.00 pp; largest loss lexname BA -8.00 pp", True)
    assert found["MRL 512 and 256 near native"] == ("not measured", None)
    weather = compression_home.evaluate_criteria(table)["MRL 128 loses most on weather BA"]
    assert weather == ("not measured", None), "no weather, and no attribute named in its place"


def test_each_encoder_is_measured_at_the_parameters_of_its_pages():
    wordnet = real_encoder.section_parameters(*real_encoder.ENCODERS[real_encoder.WORDNET])
    assert wordnet["compression"]["dims"] == [128, 64] and wordnet["stress tests"]["attribute"] == "lexname"
    assert wordnet["caption retrieval"]["dims"] == [128, 64] and wordnet["neighbour stability"]["k"] == 10
    vit = real_encoder.section_parameters(*real_encoder.ENCODERS["reference-vit"])
    assert {p["encoder"] for p in vit.values()} == {"reference-vit"}
    assert vit["caption retrieval"]["dims"] is None  # no caption page on the ViT: the chapter's defaults
    given = {**wordnet["compression"], "n_draws": 50}
    assert conclusions.settings("compression", given) == compression_home.Settings(dims=[128, 64], attribute="lexname")
