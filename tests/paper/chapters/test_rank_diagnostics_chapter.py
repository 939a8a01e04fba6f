"""The rank-diagnostics note's tables and figures: closed forms, invariances, charts drawn from their frames."""

import numpy as np
import pandas as pd
import pytest

from embdiag import synthetic
from embdiag.paper.chapters import rank_diagnostics as rf
from embdiag.view.exhibits import chart_data


def _Z(seed=0):
    return synthetic.anisotropic_gaussian(300, 12, decay=1.0, mean_norm=3.0, seed=seed)


def test_worked_example_matches_the_hand_computed_values():
    t = rf.worked_example()
    assert t.loc["participation ratio", "closed form"] == pytest.approx(1.2195, abs=1e-4)  # 1 / 0.82
    assert t.loc["RankMe", "closed form"] == pytest.approx(1.7548, abs=1e-4)
    assert t.loc["participation ratio", "embdiag"] == pytest.approx(1 / 0.82, rel=1e-10)
    assert abs(t.loc["RankMe", "difference"]) < 1e-5  # only the 1e-7 shares differ
    assert (t["difference"] == (t["embdiag"] - t["closed form"]).round(12)).all()


def test_variants_keep_what_the_definitions_say():
    Z = _Z()
    m = rf.variants(Z, 0.01, 30.0, seed=0)
    assert list(m) == ["original", "scaled by c = 0.01", "common offset (norm 30)", "centred"]
    shift = m["common offset (norm 30)"] - Z
    assert np.allclose(shift, shift[0]) and np.linalg.norm(shift[0]) == pytest.approx(30.0)
    t = rf.summary_table(m)
    assert list(t.columns) == ["total variance", "mean cosine", "RankMe", "participation ratio"]
    o, s, off, c = (t.iloc[i] for i in range(4))
    assert s["total variance"] == pytest.approx(1e-4 * o["total variance"])  # c² times
    assert s["RankMe"] == pytest.approx(o["RankMe"]) and s["mean cosine"] == pytest.approx(o["mean cosine"])
    assert off["participation ratio"] == pytest.approx(o["participation ratio"])
    assert off["total variance"] == pytest.approx(o["total variance"])
    assert off["RankMe"] < o["RankMe"] < c["RankMe"]  # the mean is a raw direction
    with pytest.raises(ValueError, match="scale"):
        rf.variants(Z, 0.0, 1.0)


def test_spectra_frame_holds_the_shares_and_is_what_the_chart_draws():
    m = rf.variants(_Z(), 0.5, 10.0)
    frame = rf.spectra_frame(m)
    for (matrix, spectrum), part in frame.groupby(["matrix", "spectrum"]):
        assert part["share"].sum() == pytest.approx(1.0, abs=1e-5)
        assert part["share"].is_monotonic_decreasing and part["index"].tolist() == list(range(1, len(part) + 1))
    a = frame[frame["matrix"] == "original"].reset_index(drop=True)
    b = frame[frame["matrix"] == "scaled by c = 0.5"].reset_index(drop=True)
    assert np.allclose(a["share"], b["share"])  # scaling changes no share
    drawn = chart_data(rf.spectra_chart(m))
    assert len(drawn) == 1
    pd.testing.assert_frame_equal(drawn[0][frame.columns].reset_index(drop=True), frame, check_dtype=False)


def test_spectra_frame_leaves_out_zero_shares():
    W = synthetic.matrix_with_singular_values([3, 1, 0, 0], n=8, seed=0)
    frame = rf.spectra_frame({"worked": W})
    assert frame.groupby("spectrum").size().to_dict() == {
        "centred eigenvalues (PR)": 2,
        "raw singular values (RankMe)": 2,
    }


def test_offset_sweep_lowers_rankme_and_keeps_pr():
    Z = _Z()
    frame = rf.offset_sweep_frame(Z, ratios=[0.01, 1.0, 100.0])
    pr = frame[frame["metric"] == "participation ratio"]["value"].to_numpy()
    rank = frame[frame["metric"] == "RankMe"]["value"].to_numpy()
    assert np.allclose(pr, pr[0], atol=1e-6) and rank[0] > rank[1] > rank[2] and rank[2] < 1.5
    drawn = chart_data(rf.offset_sweep_chart(Z, ratios=[0.01, 1.0, 100.0]))[0]
    pd.testing.assert_frame_equal(drawn[frame.columns], frame, check_dtype=False)
    assert len(rf.offset_sweep_frame(Z)) == 2 * 17


def test_result_reads_which_measure_each_change_moves():
    t = rf.summary_table(rf.variants(_Z(), 0.5, 40.0))
    html = rf.result(t, "the test matrix").html
    assert html.count('class="embdiag-result"') == 1
    assert "On the test matrix, RankMe and the participation ratio (PR) disagree on 2 of the 3 changes" in html
    assert f"scaled by c = 0.5 unchanged at {t.iloc[0]['RankMe']:.2f}" in html
    assert f"common offset (norm 40) {t.iloc[0]['RankMe']:.2f} → {t.iloc[2]['RankMe']:.2f}" in html
    assert f"PR stays at {t.iloc[0]['participation ratio']:.2f} under all 3" in html
    moved = t.copy()
    moved.iloc[1, moved.columns.get_loc("participation ratio")] += 1.0  # PR moves under scaling too
    assert "disagree on 3 of the 3" in rf.result(moved).html and "PR: scaled by c = 0.5" in rf.result(moved).html
