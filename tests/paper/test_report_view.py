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
