"""The drawn figures: the step diagram's truth table against one real training step; both charts
valid, deterministic, offline and compilable by vl-convert."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from embdiag.paper import diagrams as d
from embdiag.training import evaluate, loop, losses
from embdiag.training.conditions import CONDITIONS
from embdiag.training.config import profile
from embdiag.training.inputs import TrainingData

ROOT = Path(__file__).resolve().parents[2]
#: Two steps: the EMA momentum schedule ends at exactly 1.0, so the last step's EMA update is a no-op.
CFG = profile("tiny", steps=2, warmup=1, eval_every=2)


def _fake_data() -> TrainingData:
    """Random images in the tiny profile's shapes (the step's computations, not its data, are tested)."""
    g = torch.Generator().manual_seed(0)
    size = CFG.model.image_size
    val = torch.randn(8, 3, size, size, generator=g)
    labels = {"timeofday": np.array(["day", "night"] * 4)}
    return TrainingData(
        pool=torch.randint(0, 256, (CFG.batch_size, 3, size, size), generator=g, dtype=torch.uint8),
        mean=torch.full((3,), 0.5),
        std=torch.full((3,), 0.25),
        image_size=size,
        train=val,
        val=val,
        train_labels=labels,
        val_labels=labels,
        source="random",
    )


def _observe(condition, monkeypatch) -> tuple[set[str], dict]:
    """Run the real loop (``loop.train``, two steps, the final evaluation stubbed) and name the
    components that ran, from forward hooks and wrappers around the loop's own functions."""
    seen, info = set(), {"phase": "step", "eval_modules": [], "ema_moved": []}
    real_build, real_step = loop.build_models, loop.step_losses
    real_latents, real_prediction, real_sigreg, real_ema = (
        losses.target_latents,
        losses.prediction_loss,
        losses.sigreg,
        loop.ema_update,
    )

    def hook(name):
        def record(module, args, kwargs, output):
            if info["phase"] == "eval":
                info["eval_modules"].append(name)
                return
            keep = kwargs.get("keep", args[1] if len(args) > 1 else None)
            if name == "encoder" and keep is not None:
                assert keep.shape[1] < CFG.model.n_patches  # a masked view: the context patches only
                seen.update({d.MASKING, d.CONTEXT_ENCODER})
                info["context_tokens"] = output
            elif name == "encoder":
                seen.add(d.SELF_TARGET)
            elif name == "target":
                assert keep is None
                seen.add(d.EMA_TARGET)
            else:
                seen.add({"predictor": d.PREDICTOR, "projector": d.PROJECTOR}[name])
                info[name] = output

        return record

    def build(cfg, c, seed):
        models = real_build(cfg, c, seed)
        for name, module in models.items():
            module.register_forward_hook(hook(name), with_kwargs=True)
        info["models"] = models
        return models

    def step(models, c, images, *args):
        out = real_step(models, c, images, *args)
        seen.add(d.IMAGES)
        if torch.equal(out.embedding, info["context_tokens"].mean(dim=1)):
            seen.add(d.POOLED)
        info["out"] = out
        return out

    def latents(tokens):
        seen.add(d.TARGET_LATENTS)
        if not tokens.requires_grad:
            seen.add(d.STOP_GRADIENT)
        return real_latents(tokens)

    def prediction(predicted, target):
        seen.add(d.PREDICTION_LOSS)
        return real_prediction(predicted, target)

    def sigreg(z, directions):
        seen.add(d.SIGREG)
        info["sigreg_input"] = z
        return real_sigreg(z, directions)

    def ema(target, online, momentum):
        models = info["models"]
        assert target is models["target"] and online is models["encoder"]
        before = [p.clone() for p in target.parameters()]
        real_ema(target, online, momentum)
        seen.add(d.EMA_UPDATE)
        info["ema_moved"].append(any(not torch.equal(a, b) for a, b in zip(before, target.parameters())))

    def evaluate_encoder(encoder, data, final=True):
        info["phase"], info["evaluated"] = "eval", encoder
        val = evaluate.embed(encoder, data.val)
        return {}, val, val

    monkeypatch.setattr(loop, "build_models", build)
    monkeypatch.setattr(loop, "step_losses", step)
    monkeypatch.setattr(loop, "ema_update", ema)
    monkeypatch.setattr(loop, "evaluate_encoder", evaluate_encoder)
    monkeypatch.setattr(losses, "target_latents", latents)
    monkeypatch.setattr(losses, "prediction_loss", prediction)
    monkeypatch.setattr(losses, "sigreg", sigreg)
    record = loop.train(CFG, condition, 0, data=_fake_data())
    assert record["status"] == "ok" and record["steps_done"] == CFG.steps
    return seen, info


@pytest.mark.parametrize("condition", CONDITIONS, ids=[c.slug for c in CONDITIONS])
def test_step_components_match_one_real_training_step(condition, monkeypatch):
    torch.set_num_threads(1)
    seen, info = _observe(condition, monkeypatch)
    assert seen == d.step_components(condition)
    assert info["ema_moved"][:1] == ([True] if condition.ema else [])  # the first update moves the copy
    # SIGReg reads the projector output when there is one, else the pooled context embedding.
    if condition.sigreg:
        expected = info["projector"] if condition.projector else info["out"].embedding
        assert info["sigreg_input"] is expected
        assert info["out"].sigreg.item() > 0
    else:
        assert info["out"].sigreg.item() == 0.0
    # Evaluation reads the context encoder's pooled output, never the projector.
    assert info["evaluated"] is info["models"]["encoder"]
    assert info["eval_modules"] and set(info["eval_modules"]) == {"encoder"}


def test_every_condition_runs_a_different_set_of_components():
    sets = [d.step_components(c) for c in CONDITIONS]
    assert len(set(sets)) == len(CONDITIONS)
    assert all(s <= set(d.COMPONENTS) and d.ALWAYS <= s for s in sets)
    assert d.step_components("EMA reference") == d.step_components(CONDITIONS[0])
    with pytest.raises(ValueError, match="condition"):
        d.step_components(3)
    with pytest.raises(ValueError, match="condition"):
        d.step_components("no such condition")


def test_step_table_is_step_components_for_every_condition():
    table = d.step_table()
    assert list(table["condition"].unique()) == [c.name for c in CONDITIONS]
    for c in CONDITIONS:
        rows = table[table["condition"] == c.name]
        assert list(rows["component"]) == list(d.COMPONENTS)
        assert set(rows.loc[rows["runs"], "component"]) == d.step_components(c)


def _datasets_with(spec: dict, key: str) -> list[dict]:
    return [row for rows in spec["datasets"].values() for row in rows if key in row]


def test_jepa_step_spec_is_valid_interactive_and_built_from_the_table():
    spec = d.jepa_step().to_dict()  # validates against the installed Altair's Vega-Lite schema
    (param,) = spec["params"]
    assert param["value"] == "EMA reference"
    assert param["bind"]["input"] == "select" and param["bind"]["options"] == [c.name for c in CONDITIONS]
    # Every component is drawn: a box, or (the EMA update) an arrow from the encoder to the copy.
    assert set(d.COMPONENTS) == (set(d.NODES) - {d.EVALUATION}) | {d.EMA_UPDATE}
    ema_edge = [e[:2] for e in d.EDGES].index((d.CONTEXT_ENCODER, d.EMA_TARGET))
    boxes = [r for r in _datasets_with(spec, "component") if r["component"] in d.COMPONENTS]
    arrows = [r for r in _datasets_with(spec, "angle") if r["edge"] == ema_edge]
    assert len(boxes) == len(CONDITIONS) * (len(d.COMPONENTS) - 1) and len(arrows) == len(CONDITIONS)
    for c in CONDITIONS:
        runs = d.step_components(c)
        for row in (r for r in boxes if r["condition"] == c.name):
            assert (row["state"] == d.RUNS) == (row["component"] in runs), (c.name, row["component"])
        (arrow,) = [r for r in arrows if r["condition"] == c.name]
        assert (arrow["state"] == d.RUNS) == (d.EMA_UPDATE in runs) == c.ema
    text = json.dumps(spec)
    assert "not a measurement" in json.dumps(spec["title"])
    assert not re.search(r'"(url|view_\d+)"', text)  # inline data only (offline), no counter-named views
    assert json.dumps(d.jepa_step().to_dict(), sort_keys=True) == json.dumps(spec, sort_keys=True)


def test_jepa_step_compiles_and_the_dropdown_switches_the_drawing():
    vlc = pytest.importorskip("vl_convert")
    spec = d.jepa_step().to_dict()
    boxes, segments, _ = d._diagram_frames(CONDITIONS)
    for c in (CONDITIONS[0], CONDITIONS[5], CONDITIONS[6]):
        spec["params"][0]["value"] = c.name
        svg = vlc.vegalite_to_svg(spec)
        assert svg.startswith("<svg") and c.name in svg and "EMA copy of the" in svg
        off = (boxes[(boxes["condition"] == c.name)]["state"] == d.OFF).sum() + (
            segments[(segments["condition"] == c.name)]["state"] == d.OFF
        ).sum()
        marks = re.findall(r'<g class="mark-(?:rule|rect) role-mark.*?</g>', svg)
        faded = f'stroke="{d.STATE_COLORS[d.OFF]}"'
        assert sum(m.count(faded) for m in marks) == off  # the parts that do not run are the faded ones
        assert "stroke-dasharray" not in "".join(marks), "dashes mark reference levels, not parts of a step"


def test_four_properties_is_a_labelled_schematic_with_the_cover_questions():
    vlc = pytest.importorskip("vl_convert")
    chart = d.four_properties()
    spec = chart.to_dict()
    assert "Schematic (illustration, not data)" in json.dumps(spec["title"])
    cover = (ROOT / "notebooks" / "00_cover.py").read_text()  # the property table of the landing page
    rows = dict(re.findall(r"^# \| (Distribution|Labels|Identity|Relevance) \| ([^|]+?) \|", cover, re.M))
    assert len(rows) == 4
    panels = spec["concat"]
    assert [p["title"]["text"] for p in panels] == ["Distribution", "Labels", "Identity", "Relevance"]
    for p in panels:
        assert p["title"]["subtitle"][0].lower() == rows[p["title"]["text"]].lower()
        for layer in p["layer"]:
            for channel in ("x", "y"):
                assert layer["encoding"][channel]["axis"] is None  # a drawing: no axes
    assert sum(p.get("width", 0) for p in panels[:2]) <= 700
    assert json.dumps(d.four_properties().to_dict(), sort_keys=True) == json.dumps(spec, sort_keys=True)
    assert d.four_properties(seed=1).to_dict() != spec
    assert vlc.vegalite_to_svg(spec).startswith("<svg")
    with pytest.raises(ValueError, match="seed"):
        d.four_properties(seed=-1)


@pytest.mark.parametrize("seed", range(5))
def test_identity_and_relevance_queries_show_what_the_panels_say(seed):
    z, labels = d._points(seed)
    q, after = d._identity_case(z, seed, limit=10.0)

    def top(v, i):  # brute force, ties by index
        dist = np.linalg.norm(v - v[i], axis=1)
        dist[i] = np.inf
        return set(np.lexsort((np.arange(len(v)), dist))[: d.K].tolist())

    assert len(top(z, q) & top(after, q)) == d.K - 1
    q2 = d._relevance_query(z, labels, limit=10.0)
    assert sum(labels[j] == labels[q2] for j in top(z, q2)) == d.K - 1
