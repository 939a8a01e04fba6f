"""The seven conditions, seeds and declared comparisons match STUDY.md (design A)."""

import pytest

from embdiag.training.conditions import COMPARISONS, CONDITIONS, SEEDS, Condition, condition

# STUDY.md, condition table: stop-gradient, EMA target, SIGReg, projector.
STUDY_TABLE = {
    "EMA reference": (True, True, False, False),
    "Stop-gradient only": (True, False, False, False),
    "SIGReg + stop-gradient": (True, False, True, False),
    "SIGReg": (False, False, True, False),
    "Projector + SIGReg + stop-gradient": (True, False, True, True),
    "Projector + SIGReg": (False, False, True, True),
    "Contracted control": (False, False, False, False),
}


def test_seven_conditions_in_study_order_with_study_switches():
    assert [c.name for c in CONDITIONS] == list(STUDY_TABLE)
    for c in CONDITIONS:
        assert (c.stop_gradient, c.ema, c.sigreg, c.projector) == STUDY_TABLE[c.name]
    assert len({c.slug for c in CONDITIONS}) == 7


def test_seeds_and_comparisons():
    assert SEEDS == (0, 1, 2, 3, 4)
    assert [(c.a, c.b) for c in COMPARISONS] == [
        ("Stop-gradient only", "Contracted control"),
        ("SIGReg + stop-gradient", "SIGReg"),
        ("Projector + SIGReg + stop-gradient", "Projector + SIGReg"),
        ("Projector + SIGReg + stop-gradient", "SIGReg + stop-gradient"),
        ("Projector + SIGReg", "SIGReg"),
    ]
    names = {c.name for c in CONDITIONS}
    assert all(c.a in names and c.b in names for c in COMPARISONS)
    assert "EMA reference" not in {x for c in COMPARISONS for x in (c.a, c.b)}


def test_lookup_by_name_and_slug():
    assert condition("Projector + SIGReg") is CONDITIONS[5]
    assert condition("projector-sigreg-stop-gradient") is CONDITIONS[4]
    with pytest.raises(ValueError, match="condition: unknown name 'EMA'.*Contracted control"):
        condition("EMA")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(name="x", stop_gradient=False, ema=True, sigreg=False, projector=False), "ema=True needs stop_gradient"),
        (dict(name="x", stop_gradient=True, ema=False, sigreg=False, projector=True), "projector=True needs sigreg"),
        (dict(name="", stop_gradient=True, ema=False, sigreg=False, projector=False), "name"),
        (dict(name="x", stop_gradient=1, ema=False, sigreg=False, projector=False), "stop_gradient"),
    ],
)
def test_invalid_conditions_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Condition(**kwargs)
