"""The stress interventions' exact responses: identities that hold to rounding on any vectors."""

import numpy as np
import pytest

from embdiag.interventions import identities
from embdiag.interventions.identities import exact_responses


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    scales = 1.0 / np.arange(1, 41)
    train = rng.standard_normal((300, 40)) * scales + 0.3
    val = rng.standard_normal((120, 40)) * scales + 0.3
    return exact_responses(train, val, (0.5, 0.99), k=5)


def test_every_exact_identity_holds_to_rounding(table):
    exact = table[table["kind"] == "exact"]
    assert len(exact) == 2 * 9
    assert exact["relative error"].max() < 1e-9


def test_noise_holds_in_expectation_only(table):
    noisy = table[table["kind"] == "in expectation"]
    assert len(noisy) == 2
    assert (noisy["relative error"] < 0.05).all() and (noisy["relative error"] > 0).all()


def test_predictions_are_computed_not_copied(table):
    row = table[(table["intervention"] == "contraction") & (table["severity"] == 0.99)].iloc[0]
    native = table[(table["intervention"] == "common offset") & (table["severity"] == 0.99)].iloc[0]["predicted"]
    assert row["predicted"] == pytest.approx(1e-4 * native)
    kept = table[table["identity"].str.startswith("training PR")]
    assert kept["identity"].tolist() == ["training PR = PR of the 20 kept eigenvalues",
                                         "training PR = PR of the 1 kept eigenvalues"]


def test_a_broken_identity_shows(monkeypatch):
    """The table has teeth: a contraction that also shifts the vectors breaks the PR-free rows."""
    real = identities.Contraction

    class Shifted(real):
        def transform(self, X):
            return super().transform(X) + np.linspace(0, 1, X.shape[1])

    monkeypatch.setattr(identities, "Contraction", Shifted)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 8))
    t = exact_responses(X, X[:30], (0.5,), k=3)
    bad = t[(t["intervention"] == "contraction") & (t["identity"] == "mean cosine unchanged")]
    assert bad["relative error"].iloc[0] > 1e-3


def test_mismatched_widths_are_named():
    with pytest.raises(ValueError, match="val: has 3 columns, train has 4"):
        exact_responses(np.ones((5, 4)), np.ones((5, 3)))
