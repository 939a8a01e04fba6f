"""The book's two drawn figures: the cover's four-property schematic and the JEPA step diagram.

Both are drawings, not measurements. :func:`four_properties` draws one small made-up 2-D
point set four times, once per property of the study (distribution, labels, identity,
relevance). :func:`jepa_step` draws one training step of the JEPA with a condition selector;
which computations run in a condition's step is decided by one pure function,
:func:`step_components`, from the condition's four switches, following
:func:`embdiag.training.loop.step_losses` and the EMA update in
:func:`embdiag.training.loop.train` (``tests/paper/test_diagrams.py`` checks it against a
real step). Layout coordinates are constants of this module.
"""

from __future__ import annotations

import math

import altair as alt
import numpy as np
import pandas as pd

from .._validate import check_int
from ..training.conditions import CONDITIONS, Condition, condition as condition_named

__all__ = ["COMPONENTS", "step_components", "step_table", "four_properties", "jepa_step"]

# -- the components of one training step ---------------------------------------------------------
IMAGES = "images"
MASKING = "masking"
CONTEXT_ENCODER = "context encoder"
PREDICTOR = "predictor"
PREDICTION_LOSS = "prediction loss"
SELF_TARGET = "context encoder on the full image"
EMA_TARGET = "EMA copy on the full image"
TARGET_LATENTS = "target latents"
STOP_GRADIENT = "stop-gradient"
EMA_UPDATE = "EMA update"
POOLED = "pooled context embedding"
PROJECTOR = "projector"
SIGREG = "SIGReg"
EVALUATION = "evaluation"  # not part of the step: the marker of what evaluation reads
COMPONENTS: tuple[str, ...] = (
    IMAGES,
    MASKING,
    CONTEXT_ENCODER,
    PREDICTOR,
    PREDICTION_LOSS,
    SELF_TARGET,
    EMA_TARGET,
    TARGET_LATENTS,
    STOP_GRADIENT,
    EMA_UPDATE,
    POOLED,
    PROJECTOR,
    SIGREG,
)
ALWAYS = frozenset({IMAGES, MASKING, CONTEXT_ENCODER, PREDICTOR, PREDICTION_LOSS, TARGET_LATENTS, POOLED})

RUNS, OFF, EVAL = "runs in this step", "does not run", "evaluation, after training"
STATE_COLORS = {RUNS: "#1f3b5a", OFF: "#b5b5b5", EVAL: "#e45756"}

# -- layout of the step diagram (data units; x 0..10, y 0..6.1) -----------------------------------
WIDTH, HEIGHT = 680, 366
X_DOMAIN, Y_DOMAIN = (0.0, 10.0), (0.0, 6.1)
BOX_W, BOX_H = 1.6, 0.62
#: component -> (centre x, centre y, label lines, box width)
NODES = {
    IMAGES: (0.8, 2.4, "images\n(one batch)", 1.3),
    MASKING: (2.6, 3.2, "masking: keep the\ncontext patches", BOX_W),
    CONTEXT_ENCODER: (4.6, 3.2, "context encoder\n(ViT)", BOX_W),
    PREDICTOR: (6.9, 3.2, "predictor\n(target positions)", BOX_W),
    PREDICTION_LOSS: (9.0, 2.3, "prediction\nloss", 1.5),
    EMA_TARGET: (4.6, 1.75, "EMA copy of the\ncontext encoder", BOX_W),
    SELF_TARGET: (4.6, 0.55, "context encoder\nitself (same weights)", BOX_W + 0.1),
    TARGET_LATENTS: (6.9, 1.15, "target latents\n(layer-normed)", BOX_W),
    STOP_GRADIENT: (9.0, 1.15, "stop-gradient\n(detach)", 1.5),
    POOLED: (4.6, 4.5, "pooled context\nembedding (mean)", BOX_W),
    PROJECTOR: (6.9, 4.5, "projector", BOX_W),
    SIGREG: (9.0, 4.5, "SIGReg", 1.5),
    EVALUATION: (2.6, 4.5, "evaluation reads this\n(never the projector)", BOX_W + 0.1),
}
#: (source, target, waypoints, needs, unless): solid when every component of ``needs`` runs and
#: ``unless`` does not; the arrow to the evaluation marker is drawn in the evaluation colour.
EDGES = (
    (IMAGES, MASKING, ((0.8, 3.2),), {MASKING}, None),
    (MASKING, CONTEXT_ENCODER, (), {CONTEXT_ENCODER}, None),
    (CONTEXT_ENCODER, PREDICTOR, (), {PREDICTOR}, None),
    (PREDICTOR, PREDICTION_LOSS, ((9.0, 3.2),), {PREDICTION_LOSS}, None),
    (IMAGES, EMA_TARGET, ((0.8, 1.75),), {EMA_TARGET}, None),
    (IMAGES, SELF_TARGET, ((0.8, 0.55),), {SELF_TARGET}, None),
    (EMA_TARGET, TARGET_LATENTS, ((5.75, 1.75), (5.75, 1.15)), {EMA_TARGET}, None),
    (SELF_TARGET, TARGET_LATENTS, ((5.75, 0.55), (5.75, 1.15)), {SELF_TARGET}, None),
    (TARGET_LATENTS, STOP_GRADIENT, (), {TARGET_LATENTS}, None),
    (STOP_GRADIENT, PREDICTION_LOSS, (), {TARGET_LATENTS}, None),
    (CONTEXT_ENCODER, EMA_TARGET, (), {EMA_UPDATE}, None),
    (CONTEXT_ENCODER, POOLED, (), {POOLED}, None),
    (POOLED, PROJECTOR, (), {PROJECTOR}, None),
    (PROJECTOR, SIGREG, (), {PROJECTOR, SIGREG}, None),
    (POOLED, SIGREG, ((4.6, 5.25), (9.0, 5.25)), {SIGREG}, PROJECTOR),
    (POOLED, EVALUATION, (), {EVALUATION}, None),
)
EDGE_LABELS = ((1.0, 1.15, "full image"), (4.7, 2.47, "EMA update"), (6.0, 5.37, "without a projector"))

# -- the four-properties schematic ---------------------------------------------------------------------------
PANEL_W, PANEL_H = 280, 210
N_PER_CLASS = 20
K = 3
CLASS_COLORS = ("#4c78a8", "#f58518")
ROLE_COLORS = ("black", "#4c78a8", "#e45756", "#54a24b")  # query, kept, dropped / other label, new / same label
GREY, INK = "#bbbbbb", "#1f3b5a"
IDENTITY_ROLES = ("query", "kept", "dropped", "new")
#: (property, its question in the wording of the cover's property table (notebooks/00_cover.py), what the panel draws)
PROPERTIES = (
    ("Distribution", "How do the vectors spread?", "principal axes and the two-sd ellipse"),
    ("Labels", "What can a fitted classifier recover?", "two classes and a linear decision boundary"),
    ("Identity", "Which exact neighbours stay nearby?", f"top {K} before (hollow, ring) and after a change"),
    ("Relevance", "How much of the target set is found?", f"a query's top {K}: {K - 1} of {K} share its label"),
)


def _as_condition(condition) -> Condition:
    if isinstance(condition, Condition):
        return condition
    if isinstance(condition, str):
        return condition_named(condition)
    raise ValueError(f"condition: expected a Condition or a condition name, got {condition!r}")


def step_components(condition) -> frozenset[str]:
    """The components that run in one training step of ``condition`` (a :class:`Condition` or its name).

    Always: images, masking, context encoder, predictor, target latents, prediction loss and
    the pooled context embedding (the mean context token). The target branch is the EMA copy
    on the full image with ``ema``, else the context encoder itself on the full image; the
    target latents are detached with ``stop_gradient``; the EMA copy is updated after the
    optimizer step with ``ema``; SIGReg runs with ``sigreg``, on projector outputs with
    ``projector``.
    """
    c = _as_condition(condition)
    parts = set(ALWAYS) | {EMA_TARGET if c.ema else SELF_TARGET}
    parts |= {
        name
        for name, on in (
            (EMA_UPDATE, c.ema),
            (STOP_GRADIENT, c.stop_gradient),
            (PROJECTOR, c.projector),
            (SIGREG, c.sigreg),
        )
        if on
    }
    return frozenset(parts)


def step_table(conditions=CONDITIONS) -> pd.DataFrame:
    """One row per condition and component: ``condition``, ``component``, ``runs`` (bool),
    from :func:`step_components` (conditions in the given order, components in ``COMPONENTS`` order)."""
    rows = []
    for c in conditions:
        c = _as_condition(c)
        parts = step_components(c)
        rows += [{"condition": c.name, "component": name, "runs": name in parts} for name in COMPONENTS]
    return pd.DataFrame(rows)


# -- drawing helpers --------------------------------------------------------------------------------
def _border(center, half_w, half_h, toward):
    """Where the segment from ``center`` to ``toward`` leaves the box of half sizes (half_w, half_h)."""
    dx, dy = toward[0] - center[0], toward[1] - center[1]
    t = min(half_w / abs(dx) if dx else math.inf, half_h / abs(dy) if dy else math.inf)
    return center[0] + t * dx, center[1] + t * dy


def _edge_geometry(source, target, waypoints):
    """Segments (from source centre through the waypoints to the target's border) and the arrow
    tip with its screen angle (degrees clockwise from the x axis)."""
    sx, sy, _, _ = NODES[source]
    tx, ty, _, tw = NODES[target]
    points = [(sx, sy), *waypoints]
    tip = _border((tx, ty), tw / 2, BOX_H / 2, points[-1])
    points.append(tip)
    px = WIDTH / (X_DOMAIN[1] - X_DOMAIN[0])
    py = HEIGHT / (Y_DOMAIN[1] - Y_DOMAIN[0])
    (ax, ay), (bx, by) = points[-2], points[-1]
    angle = math.degrees(math.atan2(-(by - ay) * py, (bx - ax) * px))
    return list(zip(points[:-1], points[1:])), tip, angle


def _state(parts: set, needs, unless=None) -> str:
    if EVALUATION in needs:
        return EVAL
    return RUNS if needs <= parts and unless not in parts else OFF


def _switches(c: Condition) -> str:
    yes = {True: "yes", False: "no"}
    return (
        f"{c.name}:  stop-gradient {yes[c.stop_gradient]} · EMA target {yes[c.ema]} · "
        f"SIGReg {yes[c.sigreg]} · projector {yes[c.projector]}"
    )


def _diagram_frames(conditions) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Boxes, edge segments and arrow tips of every condition, from :func:`step_table`."""
    table = step_table(conditions)
    boxes, segments, tips = [], [], []
    for name, group in table.groupby("condition", sort=False):
        parts = set(group.loc[group["runs"], "component"])
        for comp, (x, y, label, w) in NODES.items():
            boxes.append(
                {
                    "condition": name,
                    "component": comp,
                    "label": label,
                    "x": x - w / 2,
                    "x2": x + w / 2,
                    "y": y - BOX_H / 2,
                    "y2": y + BOX_H / 2,
                    "cx": x,
                    "cy": y,
                    "state": _state(parts, {comp}),
                }
            )
        for i, (src, dst, waypoints, needs, unless) in enumerate(EDGES):
            state = _state(parts, needs, unless)
            pieces, tip, angle = _edge_geometry(src, dst, waypoints)
            segments += [
                {"condition": name, "edge": i, "x": x, "y": y, "x2": x2, "y2": y2, "state": state}
                for (x, y), (x2, y2) in pieces
            ]
            tips.append({"condition": name, "edge": i, "x": tip[0], "y": tip[1], "angle": angle, "state": state})
    order = {OFF: 0, RUNS: 1, EVAL: 2}  # faded first, so solid lines are drawn on top
    frames = [pd.DataFrame(rows) for rows in (boxes, segments, tips)]
    return tuple(
        f.sort_values("state", key=lambda s: s.map(order), kind="stable").reset_index(drop=True) for f in frames
    )


def jepa_step(conditions=CONDITIONS) -> alt.LayerChart:
    """Interactive diagram of one JEPA training step: pick a condition (dropdown, default the
    first, "EMA reference") and the components that run in its step (:func:`step_components`)
    are drawn solid, the others faded. A drawing of computation, not a measurement."""
    conditions = [_as_condition(c) for c in conditions]
    if not conditions:
        raise ValueError("conditions: expected at least one condition")
    names = [c.name for c in conditions]
    boxes, segments, tips = _diagram_frames(conditions)
    pick = alt.param(name="jepa_condition", value=names[0], bind=alt.binding_select(options=names, name="condition "))
    chosen = alt.datum.condition == pick
    x_scale, y_scale = alt.Scale(domain=list(X_DOMAIN)), alt.Scale(domain=list(Y_DOMAIN))
    x, y = alt.X("x:Q", scale=x_scale, axis=None), alt.Y("y:Q", scale=y_scale, axis=None)
    domain = [RUNS, OFF, EVAL]
    states = alt.Scale(domain=domain, range=[STATE_COLORS[s] for s in domain])
    color = alt.Color("state:N", scale=states, legend=alt.Legend(title=None, orient="bottom", symbolType="square"))
    lines = (
        alt.Chart(segments)
        .mark_rule(strokeWidth=1.6)
        .encode(x=x, y=y, x2="x2:Q", y2="y2:Q", color=color)
        .transform_filter(chosen)
    )
    arrows = (
        alt.Chart(tips)
        .mark_point(shape="triangle-right", filled=True, size=60, opacity=1)
        .encode(x=x, y=y, angle=alt.Angle("angle:Q", scale=None), color=color)
        .transform_filter(chosen)
    )
    rects = (
        alt.Chart(boxes)
        .mark_rect(fill="white", strokeWidth=1.6, cornerRadius=4)
        .encode(
            x=x,
            x2="x2:Q",
            y=y,
            y2="y2:Q",
            stroke=alt.Stroke("state:N", scale=states, legend=None),
            tooltip=[alt.Tooltip("component:N"), alt.Tooltip("state:N", title="in this condition")],
        )
        .transform_filter(chosen)
    )
    texts = (
        alt.Chart(boxes)
        .mark_text(fontSize=12, lineBreak="\n", baseline="middle")
        .encode(
            x=alt.X("cx:Q", scale=x_scale, axis=None),
            y=alt.Y("cy:Q", scale=y_scale, axis=None),
            text="label:N",
            color=alt.Color("state:N", scale=states, legend=None),
        )
        .transform_filter(chosen)
    )
    notes = pd.DataFrame([{"x": lx, "y": ly, "text": t} for lx, ly, t in EDGE_LABELS])
    edge_text = (
        alt.Chart(notes)
        .mark_text(fontSize=12, fontStyle="italic", color="#555", align="left")
        .encode(x=x, y=y, text="text:N")
    )
    header = pd.DataFrame([{"condition": c.name, "x": 0.05, "y": 5.85, "text": _switches(c)} for c in conditions])
    switches = (
        alt.Chart(header)
        .mark_text(fontSize=12, fontWeight="bold", align="left")
        .encode(x=x, y=y, text="text:N")
        .transform_filter(chosen)
    )
    title = alt.TitleParams(
        "One JEPA training step: which computations run",
        subtitle=[
            "A diagram of the computation in one training step (not a measurement). Pick a condition",
            "below the figure: solid parts run in its step; faded parts do not.",
        ],
        anchor="start",
    )
    return (
        alt.layer(lines, arrows, rects, texts, edge_text, switches)
        .add_params(pick)
        .properties(width=WIDTH, height=HEIGHT, title=title)
        .configure_view(stroke=None)
    )


# -- the four-properties schematic -------------------------------------------------------------------------
def _points(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two classes of ``N_PER_CLASS`` points each (rows, labels 0/1), side by side across the
    minor axis of one elongated cloud (standard deviations 1 and 0.3 along the direction 25 degrees)."""
    g = np.random.default_rng(seed)
    major = np.array([math.cos(math.radians(25)), math.sin(math.radians(25))])
    minor = np.array([-major[1], major[0]])
    z = np.concatenate(
        [
            g.normal(size=(N_PER_CLASS, 1)) * major + (0.3 * g.normal(size=(N_PER_CLASS, 1)) + 0.42 * side) * minor
            for side in (-1, 1)
        ]
    )
    return z - z.mean(axis=0), np.repeat([0, 1], N_PER_CLASS)


def _top_k(z: np.ndarray, q: int) -> tuple[np.ndarray, float]:
    """Indices of the ``K`` nearest rows to row ``q`` (itself excluded) and the ring radius halfway
    between the K-th and (K+1)-th distances."""
    d = np.linalg.norm(z - z[q], axis=1)
    d[q] = np.inf
    order = np.argsort(d, kind="stable")
    return order[:K], 0.5 * (d[order[K - 1]] + d[order[K]])


def _roomiest(z: np.ndarray, candidates, limit: float) -> int:
    """The candidate query with the widest top-K ring that stays within ``limit`` of the centre."""
    inside = [q for q in candidates if np.linalg.norm(z[q]) + _top_k(z, q)[1] < limit] or list(candidates)
    return max(inside, key=lambda q: (_top_k(z, q)[1], -q))


def _identity_case(z: np.ndarray, seed: int, limit: float) -> tuple[int, np.ndarray]:
    """A query whose top-K loses exactly one neighbour after a small change of every vector, and
    the changed vectors (the smallest noise scale of a fixed list that gives such a query)."""
    noise = np.random.default_rng([seed, 1]).normal(size=z.shape)
    for scale in (0.06, 0.09, 0.12, 0.18, 0.27, 0.4):
        after = z + scale * noise
        found = [q for q in range(len(z)) if len(set(_top_k(z, q)[0]) & set(_top_k(after, q)[0])) == K - 1]
        if found:
            return _roomiest(z, found, limit), after
    raise ValueError(f"seed: no query loses exactly one of its top-{K} neighbours for seed {seed!r}")


def _relevance_query(z: np.ndarray, labels: np.ndarray, limit: float) -> int:
    """A query with exactly K - 1 of its top-K sharing its label."""
    found = [q for q in range(len(z)) if (labels[_top_k(z, q)[0]] == labels[q]).sum() == K - 1]
    if not found:
        raise ValueError(f"seed: no query has exactly {K - 1} of its top-{K} neighbours with its label")
    return _roomiest(z, found, limit)


def _ring(center, radius: float, n: int = 64) -> pd.DataFrame:
    t = np.linspace(0, 2 * np.pi, n + 1)
    return pd.DataFrame(
        {"x": center[0] + radius * np.cos(t), "y": center[1] + radius * np.sin(t), "i": np.arange(n + 1), "part": 0}
    )


class _Canvas:
    """Shared x / y encodings (equal units, no axes) and the two marks of the schematic panels."""

    def __init__(self, half_x: float, half_y: float):
        self.x = alt.X("x:Q", scale=alt.Scale(domain=[-half_x, half_x], nice=False), axis=None)
        self.y = alt.Y("y:Q", scale=alt.Scale(domain=[-half_y, half_y], nice=False), axis=None)

    def dots(self, frame, field=None, roles=None, size=34, color=GREY):
        """Points in ``color``, or coloured by ``field`` with ``roles`` {value: colour} and a legend."""
        mark = alt.Chart(frame).mark_circle(size=size, opacity=0.9, color=color)
        if field is None:
            return mark.encode(x=self.x, y=self.y)
        scale = alt.Scale(domain=list(roles), range=list(roles.values()))
        legend = alt.Legend(title=None, orient="bottom", direction="horizontal", symbolSize=60)
        return mark.encode(x=self.x, y=self.y, color=alt.Color(f"{field}:N", scale=scale, legend=legend))

    def line(self, frame, dash=(), width=1.3, color=INK):
        """Polylines through ``x``, ``y`` in the order ``i``, one per ``part``, clipped to the panel."""
        return (
            alt.Chart(frame)
            .mark_line(color=color, strokeDash=list(dash), strokeWidth=width, clip=True)
            .encode(x=self.x, y=self.y, order="i:Q", detail="part:N")
        )


def _spread(c: _Canvas, z: np.ndarray) -> list:
    """Distribution: the points, their principal axes and two-standard-deviation ellipse."""
    evals, evecs = np.linalg.eigh(np.cov(z.T))
    radii = 2 * np.sqrt(evals)
    t = np.linspace(0, 2 * np.pi, 65)
    ellipse = (evecs @ (radii[:, None] * np.vstack([np.cos(t), np.sin(t)]))).T
    axes = pd.DataFrame(
        [
            {"x": s * r * e[0], "y": s * r * e[1], "i": s, "part": j}
            for j, (r, e) in enumerate(zip(radii, evecs.T))
            for s in (-1, 1)
        ]
    )
    return [
        c.line(pd.DataFrame({"x": ellipse[:, 0], "y": ellipse[:, 1], "i": np.arange(65), "part": 0}), color="#999999"),
        c.line(axes, width=2),
        c.dots(pd.DataFrame({"x": z[:, 0], "y": z[:, 1]}), color="#777777"),
    ]


def _classes(c: _Canvas, z: np.ndarray, labels: np.ndarray, reach: float) -> list:
    """Labels: the two classes and their linear discriminant boundary."""
    m0, m1 = z[labels == 0].mean(axis=0), z[labels == 1].mean(axis=0)
    w = np.linalg.solve(0.5 * (np.cov(z[labels == 0].T) + np.cov(z[labels == 1].T)), m1 - m0)
    mid, along = 0.5 * (m0 + m1), np.array([-w[1], w[0]]) / np.linalg.norm(w)
    ends = np.array([mid - reach * along, mid + reach * along])
    boundary = pd.DataFrame({"x": ends[:, 0], "y": ends[:, 1], "i": [0, 1], "part": 0})
    points = pd.DataFrame({"x": z[:, 0], "y": z[:, 1], "class": np.where(labels == 0, "class A", "class B")})
    return [
        c.line(boundary, (6, 3), 1.5, "#333333"),
        c.dots(points, "class", dict(zip(("class A", "class B"), CLASS_COLORS))),
    ]


def _identity(c: _Canvas, z: np.ndarray, after: np.ndarray, q: int) -> list:
    """Identity: every vector moved a little (grey strokes); the query's top-K before (hollow, ring)
    and after (filled, grey ring), marked kept, dropped or new."""
    (before_k, r_before), (after_k, r_after) = _top_k(z, q), _top_k(after, q)
    role = np.full(len(z), "other", dtype=object)
    role[sorted(set(before_k) & set(after_k))] = "kept"
    role[sorted(set(before_k) - set(after_k))] = "dropped"
    role[sorted(set(after_k) - set(before_k))] = "new"
    role[q] = "query"
    moved = pd.DataFrame({"x": z[:, 0], "y": z[:, 1], "x2": after[:, 0], "y2": after[:, 1], "role": role})
    shown = moved[moved["role"] != "other"]
    now = {"x": lambda f: f["x2"], "y": lambda f: f["y2"]}
    roles = dict(zip(IDENTITY_ROLES, ROLE_COLORS))
    return [
        alt.Chart(moved).mark_rule(color="#cccccc", strokeWidth=0.8).encode(x=c.x, y=c.y, x2="x2:Q", y2="y2:Q"),
        c.line(_ring(z[q], r_before)),
        c.line(_ring(after[q], r_after), color="#999999"),
        c.dots(moved[moved["role"] == "other"].assign(**now)),
        alt.Chart(shown)
        .mark_point(size=50, filled=False, strokeWidth=1.4)
        .encode(  # before: hollow
            x=c.x,
            y=c.y,
            stroke=alt.Stroke("role:N", scale=alt.Scale(domain=list(roles), range=list(roles.values())), legend=None),
        ),
        c.dots(shown.assign(**now), "role", roles, size=60),
    ]


def _relevance(c: _Canvas, z: np.ndarray, labels: np.ndarray, q: int) -> list:
    """Relevance: the query's top-K ring, each neighbour marked by whether it shares the query's label."""
    top, radius = _top_k(z, q)
    kind = np.full(len(z), "other", dtype=object)
    kind[top] = np.where(labels[top] == labels[q], "same label", "other label")
    kind[q] = "query"
    found = pd.DataFrame({"x": z[:, 0], "y": z[:, 1], "kind": kind})
    roles = {"query": ROLE_COLORS[0], "same label": ROLE_COLORS[3], "other label": ROLE_COLORS[2]}
    return [
        c.line(_ring(z[q], radius)),
        c.dots(found[found["kind"] == "other"]),
        c.dots(found[found["kind"] != "other"], "kind", roles, size=60),
    ]


def schematic_points(seed: int = 0) -> pd.DataFrame:
    """The made-up points the schematic :func:`four_properties` draws (``x``, ``y``, ``class``):
    its one download, so that a reader can see it is a drawing of 40 invented points."""
    z, labels = _points(check_int(seed, "seed", minimum=0))
    return pd.DataFrame({"x": z[:, 0], "y": z[:, 1], "class": labels})


def four_properties(seed: int = 0) -> alt.ConcatChart:
    """The cover's schematic: one made-up 2-D point set (two classes, generated from ``seed``)
    drawn four times, 2 x 2: its spread and principal axes (distribution), its classes and a
    linear boundary (labels), a query's exact top-3 before and after a small change of every
    vector (identity), and which of a query's top-3 share its label (relevance). Panels are
    titled with the property and its question. An illustration, not data."""
    z, labels = _points(check_int(seed, "seed", minimum=0))
    half_x = 1.12 * max(np.abs(z[:, 0]).max(), np.abs(z[:, 1]).max() * PANEL_W / PANEL_H)
    half_y = half_x * PANEL_H / PANEL_W  # equal units on both axes, so rings are round
    canvas = _Canvas(half_x, half_y)
    q, after = _identity_case(z, int(seed), limit=0.8 * half_y)
    layers = (
        _spread(canvas, z),
        _classes(canvas, z, labels, reach=3 * half_x),
        _identity(canvas, z, after, q),
        _relevance(canvas, z, labels, _relevance_query(z, labels, limit=0.8 * half_y)),
    )
    panels = [
        alt.layer(*panel).properties(
            width=PANEL_W, height=PANEL_H, title=alt.TitleParams(name, subtitle=[question, drawn], anchor="start")
        )
        for (name, question, drawn), panel in zip(PROPERTIES, layers)
    ]
    title = alt.TitleParams(
        "Four properties of one set of vectors",
        anchor="start",
        subtitle=(
            f"Schematic (illustration, not data): {2 * N_PER_CLASS} made-up 2-D points in two classes; "
            f"neighbours by distance, top {K}."
        ),
    )
    return (
        alt.concat(*panels, columns=2)
        .resolve_scale(color="independent")
        .properties(title=title)
        .configure_view(stroke="#dddddd")
    )
