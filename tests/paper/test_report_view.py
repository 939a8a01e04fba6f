"""The report's tables as a page shows them: readable headers, shares in percent."""

from __future__ import annotations

import pandas as pd
import pytest

from embdiag.paper import report_view


def test_shares_become_percent_and_headers_become_words():
    frame = pd.DataFrame(
        {
            "representation": ["reference"],
            "eligible_classes": [7],
            "probe_ba": [0.7287],
            "ba_floor": [0.25],
            "p@10": [0.8307],
            "p_floor": [0.332],
            "rankme": [37.24],
            "weather BA": [0.5],
            "overlap@10": [0.9],
        }
    )
    shown = report_view._for_reading(frame)
    assert list(shown.columns) == [
        "representation",
        "eligible classes",
        "probe BA (%)",
        "BA floor (%)",
        "P@10 (%)",
        "P@k floor (%)",
        "RankMe",
        "weather BA (%)",
        "overlap@10 (%)",
    ]
    assert shown["probe BA (%)"].iloc[0] == pytest.approx(72.87)
    assert shown["overlap@10 (%)"].iloc[0] == pytest.approx(90.0)
    assert shown["RankMe"].iloc[0] == 37.24 and shown["eligible classes"].iloc[0] == 7  # not shares
    assert frame["probe_ba"].iloc[0] == 0.7287  # the report's own table is left as it is


@pytest.fixture(scope="module")
def indexed():
    """Two reports of the same vectors with two indexes (one a factory string): their timings differ."""
    pytest.importorskip("faiss")
    import numpy as np

    from embdiag.report import measure

    X = np.random.default_rng(0).standard_normal((1500, 16)).astype(np.float32)
    return [measure(X, index="hnsw;faiss:IVF16,Flat", k=5, progress=False) for _ in range(2)]


def test_index_section_without_timings_is_the_same_every_run(indexed):
    """What a byte-for-byte page shows: recall against the knob's value, no speed anywhere."""
    a, b = ([x.html if hasattr(x, "html") else x.data for x in report_view.section(r, "indexes")] for r in indexed)
    assert a == b
    page = "\n".join(a)
    assert "knob value (log" in page and "queries per second (log)" not in page and "build (s)" not in page
    curves = indexed[0].tables["index_curves"]
    assert set(curves["condition"]) == {"hnsw", "ivf16-flat"}
    assert curves.loc[(curves["condition"] == "ivf16-flat") & (curves["value"] == 16), "recall@5"].item() == 1.0


def test_index_section_with_timings_plots_recall_against_queries_per_second(indexed):
    parts = report_view.section(indexed[0], "indexes", timings=True)
    page = "\n".join(x.html if hasattr(x, "html") else x.data for x in parts)
    assert "queries per second (log)" in page and "build (s)" in page
    curves = report_view.index_curves(indexed[0], timings=True)
    assert (curves["queries_per_s"] > 0).all() and len(curves) == len(indexed[0].tables["index_curves"])
