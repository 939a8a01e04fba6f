"""The scale page's projections: arithmetic on measured rates, checked by hand."""

import math

import pytest

from embdiag.paper import scale
from embdiag.training.config import profile

RATES = {
    "search_pairs_per_second": 1e9,
    "geometry_rows_per_second": 1e5,
    "scan_rows_per_second": 1e6,
    "task_seconds": 0.01,
    "hash_bytes_per_second": 1e9,
    "study_seconds_per_step": 2.0,
    "study_eval_seconds": 30.0,
    "cpu_seconds_per_step": 0.1,
    "cpu_eval_seconds": 5.0,
}


def test_search_and_check_divide_over_the_workers_and_the_hash_does_not():
    one = scale.report_seconds(RATES, 10**8, machines=1, cores=16)
    many = scale.report_seconds(RATES, 10**8, machines=8, cores=16)
    assert one["search"] == pytest.approx(2 * 10_000 * 10**8 / 1e9 / 16)
    assert one["geometry"] == pytest.approx(2 * 10**8 / 1e5 / 16)
    assert one["check"] == pytest.approx(2 * 10**8 / 1e6 / 16)
    assert one["tasks"] == pytest.approx((2 * 3 + 2) * 100 * 0.01 / 16)  # search, 2 geometry passes, check
    for part in ("search", "geometry", "check", "tasks"):
        assert many[part] == pytest.approx(one[part] / 8)
    assert one["hash"] == many["hash"] == pytest.approx(2 * 10**8 * 768 * 4 / 1e9)
    assert one["total"] == pytest.approx(one["hash"])  # the hash runs beside the rest, longer here
    alone = scale.report_seconds(RATES, 10**8, machines=1, cores=1)
    assert alone["total"] == pytest.approx(sum(alone[p] for p in ("search", "geometry", "check", "tasks")))
    assert alone["total"] > alone["hash"]  # ... shorter here
    assert scale.report_seconds(RATES, 10**9, machines=1, cores=16, searches=3)["search"] == pytest.approx(
        15 * one["search"]
    )


def test_the_sweep_goes_in_waves_of_one_run_per_core():
    cfg = profile("study")
    run = cfg.steps * 2.0 + math.ceil(cfg.steps / cfg.eval_every) * 30.0
    t = scale.sweep_seconds(RATES, machines=1, cores=16)
    assert t["run"] == pytest.approx(run) and t["waves"] == 3  # 35 runs on 16 cores
    assert t["total"] == pytest.approx(3 * run + 30.0)
    wide = scale.sweep_seconds(RATES, machines=8, cores=16)
    assert wide["waves"] == 1 and wide["total"] == pytest.approx(run + 30.0)
    assert scale.sweep_seconds(RATES, machines=1, cores=2, profile="cpu")["waves"] == 18


@pytest.mark.parametrize("machines, cores", [(0, 16), (4, 0)])
def test_no_workers_is_refused(machines, cores):
    with pytest.raises(ValueError, match="machines and cores"):
        scale.report_seconds(RATES, 10, machines=machines, cores=cores)
