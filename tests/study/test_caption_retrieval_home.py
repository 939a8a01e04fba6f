"""The caption-retrieval section's home: its settings, its measurement (``run``, a pure function of
the caption vectors and the settings), its declared findings and their verdicts, on small inputs
and on the study's published numbers."""

from __future__ import annotations

import dataclasses

import joblib
import numpy as np
import pandas as pd
import pytest

from embdiag.encoders.vectors import CaptionVectors
from embdiag.interventions import caption_retrieval as cr
from embdiag.paper import findings
from embdiag.study import caption_retrieval as home


@pytest.fixture(scope="module")
def study():
    return home.read_study()


def _captions(n_images: int = 30, d: int = 12, noise: float = 1.0, seed: int = 0) -> CaptionVectors:
    """Five noisy copies of each image as its captions, with three random object categories."""
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((n_images, d))
    group = np.repeat(np.arange(n_images), 5)
    queries = images[group] + noise * rng.standard_normal((len(group), d))
    categories = rng.random((n_images, 3)) < 0.5
    texts = np.array([f"caption {j} of {g}" for j, g in enumerate(group)])
    return CaptionVectors(images, queries, queries, group, texts, categories, ("a", "b", "c"), "test data")


SMALL = home.Settings(k=4, dims=(6, 3), n_draws=50, seed=0, n_permutations=20)


@pytest.fixture(scope="module")
def captions():
    return _captions()


@pytest.fixture(scope="module")
def measured(captions):
    return home.run(captions, SMALL)


def _same(a, b) -> bool:
    return joblib.hash(a) == joblib.hash(b)


# ----------------------------------------------------------------------------- settings and run


def test_settings_default_to_the_chapters_parameters():
    assert home.Settings() == home.Settings(k=10, dims=None, n_draws=5000, seed=0, n_permutations=1000)


def test_run_measures_what_the_library_measures(captions, measured):
    c = captions
    result = cr.evaluate(c.images, c.queries, c.documents, c.group, c.categories, dims=[6, 3], k=4)
    assert _same(measured.result, result)
    pd.testing.assert_frame_equal(measured.changes, cr.bootstrap_changes(result, n_draws=50, seed=0))
    pd.testing.assert_frame_equal(measured.control, cr.shuffled_control(result, seed=0, n_permutations=20))
    pd.testing.assert_frame_equal(measured.contrasts, cr.bootstrap_contrasts(result, home.FAR_MORE, n_draws=50))
    assert measured.settings == SMALL


def test_run_is_a_pure_function_of_its_inputs(captions, measured, monkeypatch, tmp_path):
    monkeypatch.setenv("EMBDIAG_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("EMBDIAG_MEMO")
    first, kept = home.run(captions, SMALL), home.run(captions, SMALL)  # measured, then read from the memo
    assert list((tmp_path / "data" / "cache" / "memo").rglob("*.pkl"))
    monkeypatch.setenv("EMBDIAG_MEMO", "off")
    again = home.run(dataclasses.replace(captions, images=captions.images.copy()), SMALL)
    assert _same(first, kept) and _same(first, again) and _same(first, measured)
    assert not _same(first, home.run(captions, dataclasses.replace(SMALL, seed=1)))


def test_dims_default_to_the_studys_shares_of_the_native_dimension():
    measured = home.run(_captions(n_images=12, d=768), home.Settings(n_draws=20, n_permutations=5))
    assert measured.settings.dims == (256, 128)
    assert measured.result.names == ["native 768", "MRL 256", "MRL 128"]


@pytest.mark.parametrize(
    "settings, message",
    [
        (home.Settings(k=0), "k: must be at least 1"),
        (home.Settings(k=2.5), "k: expected an integer"),
        (home.Settings(dims=(12, 6)), "dims: expected one or more prefix dimensions below the native d = 12"),
        (home.Settings(dims=()), "dims: expected one or more prefix dimensions"),
        (home.Settings(dims=6), "dims: expected a list of prefix dimensions"),
        (home.Settings(dims=("6",)), "dims: expected an integer"),
        (home.Settings(n_draws=1), "n_draws: must be at least 2"),
        (home.Settings(seed=-1), "seed: must be at least 0"),
        (home.Settings(n_permutations=0), "n_permutations: must be at least 1"),
    ],
)
def test_a_bad_setting_is_refused_naming_it(captions, settings, message):
    with pytest.raises(ValueError, match=message):
        home.run(captions, settings)


def test_this_runs_intervals_come_from_the_same_draws(captions):
    measured = home.run(captions, dataclasses.replace(SMALL, n_draws=200, seed=4))
    changes = measured.changes.set_index(["representation", "direction", "metric"])
    for _, c in measured.contrasts.iterrows():
        m = changes.loc[(c["representation"], c["direction"], c["metric"]), "change"]
        h = changes.loc[(c["representation"], c["direction"], "Hit@4"), "change"]
        assert c["contrast"] == pytest.approx(m - home.FAR_MORE * h) and c["low"] <= c["contrast"] <= c["high"]
    assert (changes["compressed low"] <= changes["compressed"]).all()
    assert (changes["compressed"] <= changes["compressed high"]).all()


# ----------------------------------------------------------------------------- the study's values


def test_published_values_are_the_studys_as_printed(study):
    v = lambda m, d, r, c="value": home.study_value(study, m, d, r, c)  # noqa: E731
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
    derived = home.study_changes(study).set_index(["representation", "direction", "metric"])
    for _, s in study[study["metric"].str.endswith(" change")].iterrows():
        key = (s["representation"], s["direction"], s["metric"].removesuffix(" change"))
        assert derived.loc[key, "change"] == pytest.approx(s["value"], abs=1e-9)
    assert derived.loc[("MRL 128", cr.T2I, "Hit@1"), "change"] == pytest.approx(-11.36)
    assert np.isnan(derived.loc[("MRL 128", cr.T2I, "Hit@1"), "low"])


# ----------------------------------------------------------------------------- findings


def _from_study(study) -> home.Measurement:
    """The study's numbers in the shape of a measurement (fractions), with narrow intervals where
    the study printed none: a run whose every finding holds."""
    d = home.study_changes(study)
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
        home.study_value(study, m, dr, r) / 100
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
    return home.Measurement(None, changes, control, contrasts, home.Settings())


def _set(measured, representation, direction, metric, **values):
    out = measured.changes.copy()
    sel = (out["representation"] == representation) & (out["direction"] == direction) & (out["metric"] == metric)
    for column, value in values.items():
        out.loc[sel, column] = value
    return dataclasses.replace(measured, changes=out)


def test_the_study_under_its_own_rule(study):
    """The study's printed numbers: its 256-d image→text interval reaches -1.10 pp, so equivalence
    within ±1 pp is inconclusive; its levels and shuffle hold by Wilson intervals over its queries;
    its Hit@1 and recall falls carry no interval."""
    v = home.findings(_from_study(study), study)
    assert list(v["finding"]) == list(home.CRITERIA)
    assert list(v["holds in the study"]) == ["inconclusive", "holds", "not testable", "holds"]
    assert list(v["verdict"]) == ["inconclusive", "holds", "holds", "holds"]
    assert list(v["old verdict"]) == ["yes"] * 4
    assert v.loc[0, "study"] == "T→I -0.20 [-0.54, +0.14]; I→T -0.30 [-1.10, +0.50]"
    assert "I→T interval [-1.1, +0.5] crosses ±1" in v.loc[0, "reason"]
    assert v.loc[3, "study"] == "T→I 1.22% [0.95, 1.56] (chance 1.00%); I→T 0.20% [0.05, 0.73] (chance 0.20–1.00%)"
    assert "T→I Hit@10 93.82% [93.12, 94.45]" in v.loc[1, "study"]


def test_costs_little_needs_equivalence_not_an_interval_that_spans_zero(study):
    measured = _from_study(study)
    tight = _set(measured, "MRL 256", cr.I2T, "Hit@10", low=-0.004, high=0.003)
    few = _set(measured, "MRL 256", cr.I2T, "Hit@10", change=0.0, low=-0.02, high=0.02)  # a null on few queries
    costs = _set(measured, "MRL 256", cr.I2T, "Hit@10", change=-0.03, low=-0.04, high=-0.02)
    verdict = lambda m: home.findings(m, study).iloc[0]  # noqa: E731
    assert verdict(tight)["verdict"] == "holds"
    assert verdict(few)[["verdict", "old verdict"]].tolist() == ["inconclusive", "yes"]
    assert verdict(costs)[["verdict", "old verdict"]].tolist() == ["contradicted", "no"]


def test_keeps_hit10_high_checks_the_level_not_only_the_drop(study):
    measured = _from_study(study)
    low = _set(
        measured, "MRL 128", cr.T2I, "Hit@10", compressed=0.5588, **{"compressed low": 0.53, "compressed high": 0.58}
    )
    low = _set(low, "MRL 128", cr.T2I, "Hit@10", change=-0.001, low=-0.004, high=0.001)
    row = home.findings(low, study).iloc[1]
    assert row[["verdict", "old verdict"]].tolist() == ["contradicted", "yes"]
    assert row["reason"] == "T→I Hit@10: interval [+53, +58] lies wholly below 90"
    near = _set(measured, "MRL 128", cr.I2T, "Hit@10", **{"compressed low": 0.88, "compressed high": 0.93})
    assert home.findings(near, study).loc[1, "verdict"] == "inconclusive"
    wide = _set(measured, "MRL 128", cr.I2T, "Hit@10", low=-0.06, high=-0.01)  # the fall may pass 5 pp
    assert home.findings(wide, study).loc[1, "verdict"] == "inconclusive"


def test_far_more_needs_each_fall_and_its_paired_contrast(study):
    measured = _from_study(study)
    unpaired = dataclasses.replace(measured, contrasts=None)
    assert home.findings(unpaired, study).loc[2, "verdict"] == "not testable"  # no paired contrast
    straddles = measured.contrasts.copy()
    straddles.loc[straddles["metric"] == "caption recall@10", ["low", "high"]] = [-0.01, 0.01]
    row = home.findings(dataclasses.replace(measured, contrasts=straddles), study).iloc[2]
    assert row["verdict"] == "inconclusive" and row["reason"].startswith("I→T caption recall@10 minus 2× Hit@10")
    flat = measured.changes.copy()
    flat.loc[flat["metric"] != "Hit@10", ["change", "low", "high"]] = [0.0, -0.002, 0.002]  # Hit@1 keeps everything
    row = home.findings(dataclasses.replace(measured, changes=flat), study).iloc[2]
    assert row[["verdict", "old verdict"]].tolist() == ["contradicted", "no"]


def test_the_control_needs_its_interval_near_chance(study):
    measured = _from_study(study)
    control = measured.control
    spread = control.assign(**{"permutation high": [0.013, 0.015]})  # shuffles reach 1.3 pp above chance
    far = control.assign(
        shuffled=[0.05, 0.002], **{"permutation low": [0.04, 0.001], "permutation high": [0.06, 0.004]}
    )
    with_control = lambda c: home.findings(dataclasses.replace(measured, control=c), study)  # noqa: E731
    assert with_control(spread).loc[3, "verdict"] == "inconclusive"
    assert with_control(far).loc[3, ["verdict", "old verdict"]].tolist() == ["contradicted", "no"]
    text = findings.summary(with_control(far), "{held} of {measured} findings")
    assert text.startswith("2 of 4 findings") and "is **contradicted**" in text  # 256-d: inconclusive


def test_findings_without_the_studys_dimensions_say_not_measured(measured, study):
    verdicts = home.findings(measured, study)  # MRL 6 and MRL 3, k = 4
    assert (verdicts["verdict"] == "not measured").all() and (verdicts["old verdict"] == "not measured").all()
    assert verdicts["this run"].str.startswith("not measured").all()
    assert list(verdicts["holds in the study"]) == ["inconclusive", "holds", "not testable", "holds"]


def test_findings_of_a_run_are_the_chapters_verdicts(study):
    """At the study's k and dims, ``findings(run(...))`` decides on the run's own tables: the same
    verdicts as deciding on the library's measurements taken one by one, as the chapter shows them."""
    captions = _captions(n_images=40, d=768, noise=6.0)
    settings = home.Settings(n_draws=200, n_permutations=50, seed=3)
    measured = home.run(captions, settings)
    c = captions
    result = cr.evaluate(c.images, c.queries, c.documents, c.group, c.categories, dims=[256, 128], k=10)
    by_hand = home.Measurement(
        result,
        cr.bootstrap_changes(result, n_draws=200, seed=3),
        cr.shuffled_control(result, seed=3, n_permutations=50),
        cr.bootstrap_contrasts(result, home.FAR_MORE, n_draws=200, seed=3),
        measured.settings,
    )
    verdicts = home.findings(measured, study)
    pd.testing.assert_frame_equal(verdicts, home.findings(by_hand, study))
    assert not (verdicts["verdict"] == "not measured").any()
