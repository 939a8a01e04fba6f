"""Scene facts: the attributes, camera, lighting, weather, layout and objects of each image.

Everything an image shows is decided here, as arrays over images, before any pixel is
drawn; :mod:`embdiag.data.scenes` only renders these facts and :mod:`embdiag.data.captions`
only describes them. Each split draws from its own random stream (seed, split), so the
images of one split do not depend on the sizes of the others.

Class counts are exact quotas of the requested shares (largest remainder), assigned to
images by a seeded permutation, so every split holds the intended imbalance. Each image
has a cue strength per attribute, between ``1 - difficulty`` and 1: time-of-day and scene
renderings are blended toward a randomly drawn decoy class with weight ``1 - cue``, weather
effects are scaled by it. Up to difficulty 0.5 the true class always keeps at least half
the weight (ambiguous, never flipped); above it some images look more like the decoy (label
noise). Nuisance factors (camera pitch and offset, exposure, colour jitter, clutter, sensor
noise) grow with ``difficulty`` too.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .vocab import ATTRIBUTES, COLOUR_NAMES, OBJECT_CATEGORIES, VOCAB

SPLIT_CODES = {"train": 1, "val": 2, "pool": 3, "caption": 4}
MAX_OBJECTS = 12          # object slots per image
N_CLUTTER = 4             # unlabelled clutter items per image
N_LINES = 5               # lane-marking slots per image

_W, _S, _T = (VOCAB[a] for a in ATTRIBUTES)
_C = {name: i for i, name in enumerate(OBJECT_CATEGORIES)}
_COL = {name: i for i, name in enumerate(COLOUR_NAMES)}


def stream(seed: int, split: str, purpose: int) -> np.random.Generator:
    """The random stream of one (seed, split, purpose); independent across all three."""
    return np.random.default_rng([int(seed), SPLIT_CODES[split], purpose, 20240601])


def quota_counts(shares: Mapping[str, float], classes: tuple[str, ...], n: int) -> np.ndarray:
    """Exact per-class counts for ``n`` items (largest remainder); zero-share classes get none."""
    p = np.array([max(float(shares.get(c, 0.0)), 0.0) for c in classes])
    if p.sum() <= 0:
        raise ValueError(f"shares for {classes} sum to zero")
    p = p / p.sum() * n
    counts = np.floor(p).astype(int)
    rest = n - counts.sum()
    order = np.argsort(-(p - counts), kind="stable")
    counts[order[:rest]] += 1
    return counts


def draw_attributes(rng: np.random.Generator, n: int, shares: Mapping[str, Mapping[str, float]],
                    absent: tuple[str, ...] = ()) -> np.ndarray:
    """Attribute codes (n x 3, int8, order of ``ATTRIBUTES``) with exact shares, ``absent`` classes removed."""
    codes = np.empty((n, len(ATTRIBUTES)), dtype=np.int8)
    for j, attr in enumerate(ATTRIBUTES):
        s = {c: (0.0 if c in absent else v) for c, v in shares[attr].items()}
        counts = quota_counts(s, VOCAB[attr], n)
        codes[:, j] = rng.permutation(np.repeat(np.arange(len(VOCAB[attr])), counts))
    return codes


CUE_SPREAD = 1.0                 # cue = 1 - CUE_SPREAD * difficulty * u ** CUE_POWER, u uniform on [0, 1)
CUE_POWER = 0.5                  # < 1 favours weak cues: at difficulty 0.5, 36% of cues are below 0.6


def _decoy(rng, codes, shares: Mapping[str, float], vocab) -> np.ndarray:
    """Per image, a class other than its own, drawn by ``shares`` (the class a weak cue drifts to)."""
    p = np.array([shares.get(c, 0.0) for c in vocab], float)
    out = np.empty(len(codes), int)
    for k in range(len(vocab)):
        m = codes == k
        q = p.copy()
        q[k] = 0
        if q.sum() == 0:
            q = np.ones(len(vocab))
            q[k] = 0
        out[m] = rng.choice(len(vocab), size=int(m.sum()), p=q / q.sum())
    return out


def _lerp(a, b, t):
    return a + (b - a) * t


def _pick(rng, n, names_probs: Mapping[str, float], table: Mapping[str, int]) -> np.ndarray:
    names = list(names_probs)
    p = np.array([names_probs[k] for k in names], float)
    return np.array([table[k] for k in names])[rng.choice(len(names), size=n, p=p / p.sum())]


# Poisson mean counts of each object category per scene (order of OBJECT_CATEGORIES).
_RATES = {
    "city street":  (3.0, 0.5, 0.5, 1.8, 0.5, 1.0, 0.8),
    "highway":      (3.0, 1.2, 0.2, 0.03, 0.02, 0.05, 0.9),
    "residential":  (1.5, 0.3, 0.1, 0.8, 0.5, 0.2, 0.6),
    "parking lot":  (7.0, 0.6, 0.1, 1.0, 0.1, 0.05, 0.4),
    "gas stations": (2.0, 0.5, 0.05, 0.6, 0.05, 0.05, 1.0),
    "tunnel":       (2.5, 0.8, 0.2, 0.0, 0.0, 0.3, 0.3),
    "undefined":    (1.5, 0.4, 0.2, 0.5, 0.2, 0.3, 0.4),
}
_VEHICLE_COLOURS = {"white": .25, "black": .2, "silver": .18, "grey": .12, "red": .1, "blue": .1,
                    "yellow": .03, "green": .02}
_LARGE_COLOURS = {"white": .3, "red": .15, "blue": .15, "yellow": .15, "green": .1, "orange": .1, "grey": .05}
_CLOTHES = {"black": .3, "blue": .2, "red": .15, "white": .15, "grey": .1, "green": .05, "yellow": .05}
_LIGHT_STATES = {"red": .45, "green": .45, "yellow": .1}
_SIGN_COLOURS = {"red": .3, "blue": .25, "green": .2, "yellow": .15, "white": .1}
# Object sizes at depth 1 (nearest), as fractions of the image: height, width.
OBJECT_HEIGHT = np.array([0.10, 0.20, 0.22, 0.11, 0.12, 0.32, 0.24])
OBJECT_WIDTH = np.array([0.17, 0.19, 0.22, 0.035, 0.05, 0.035, 0.07])


def _objects(rng, scene_codes, time_codes, weather_codes, n):
    """Object slots (n x MAX_OBJECTS): category (-1 empty), colour, depth and lateral position."""
    rates = np.array([_RATES[_S[s]] for s in scene_codes])
    night = time_codes == _T.index("night")
    rates[night, _C["pedestrian"]] *= 0.5
    wet = np.isin(weather_codes, [_W.index("rainy"), _W.index("snowy")])
    rates[wet, _C["pedestrian"]] *= 0.6
    rates[wet, _C["cyclist"]] *= 0.3
    counts = rng.poisson(rates)
    # Randomise category order per image, so a cap on slots does not always cut the same categories.
    order = np.argsort(rng.random(counts.shape), axis=1)
    counts_ord = np.take_along_axis(counts, order, axis=1)
    ends = np.cumsum(counts_ord, axis=1)
    k = np.arange(MAX_OBJECTS)
    pos = (ends[:, None, :] <= k[None, :, None]).sum(-1)             # position in category order
    active = k[None, :] < ends[:, -1:]
    cat = np.where(active, np.take_along_axis(order, np.minimum(pos, counts.shape[1] - 1), axis=1), -1)

    shape = (n, MAX_OBJECTS)
    colour = np.select(
        [cat == _C["car"], np.isin(cat, [_C["truck"], _C["bus"]]),
         np.isin(cat, [_C["pedestrian"], _C["cyclist"]]), cat == _C["traffic light"]],
        [_pick(rng, shape, _VEHICLE_COLOURS, _COL), _pick(rng, shape, _LARGE_COLOURS, _COL),
         _pick(rng, shape, _CLOTHES, _COL), _pick(rng, shape, _LIGHT_STATES, _COL)],
        _pick(rng, shape, _SIGN_COLOURS, _COL))
    depth = 0.25 + 0.75 * rng.random(shape) ** 1.3
    side = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
    lane = rng.random(shape)
    u_vehicle = (lane * 2 - 1) * 0.75 + rng.normal(0, 0.05, shape)
    u = np.select([np.isin(cat, [_C["car"], _C["truck"], _C["bus"]]), cat == _C["cyclist"],
                   cat == _C["pedestrian"]],
                  [u_vehicle, side * rng.uniform(0.75, 0.92, shape), side * rng.uniform(1.08, 1.5, shape)],
                  side * rng.uniform(1.1, 1.5, shape))
    # Parking lots: cars stand in rows across the lot.
    lot = scene_codes == _S.index("parking lot")
    if lot.any():
        rows = np.array([0.32, 0.48, 0.68, 0.9])
        r = rng.integers(0, len(rows), shape)
        parked = lot[:, None] & (cat == _C["car"])
        depth = np.where(parked, rows[r] + rng.normal(0, 0.01, shape), depth)
        u = np.where(parked, rng.uniform(-0.85, 0.85, shape), u)
    return cat.astype(np.int8), np.where(cat >= 0, colour, -1).astype(np.int8), depth, u


def draw_facts(seed: int, split: str, n: int, *, difficulty: float = 0.5,
               shares: Mapping[str, Mapping[str, float]], absent: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """All facts of ``n`` images of ``split``: attribute codes, render parameters and objects."""
    if not 0.0 <= difficulty <= 1.0:
        raise ValueError(f"difficulty: must lie in [0, 1], got {difficulty}")
    codes = draw_attributes(stream(seed, split, 0), n, shares, absent)
    rng = stream(seed, split, 1)
    d = float(difficulty)
    w, s, t = codes[:, 0], codes[:, 1], codes[:, 2]
    U = lambda lo, hi: rng.uniform(lo, hi, n)  # noqa: E731
    f: dict[str, np.ndarray] = {"codes": codes}

    # Cue strength per attribute: 1 = textbook rendering; lower values pull the rendering toward
    # a decoy class (time, scene) or toward no effect (weather), so some images are ambiguous.
    cue = np.clip(1.0 - CUE_SPREAD * d * rng.random((n, 3)) ** CUE_POWER, 0.05, 1.0)
    cw, cs, ct = cue[:, 0], cue[:, 1], cue[:, 2]
    nuis = 0.5 + d                                                   # nuisance amplitude

    # Camera: horizon height (pitch), vanishing point and road centre (lateral offset), exposure.
    f["horizon"] = 0.45 + rng.normal(0, 0.035 * nuis, n)
    f["vanish_x"] = 0.5 + rng.normal(0, 0.05 * nuis, n)
    f["road_x"] = f["vanish_x"] + rng.normal(0, 0.08 * nuis, n)

    # Time of day: brightness, warm tint, night lights; mixed toward a decoy hour.
    tmpl = {"daytime": (U(0.92, 1.05), U(0.0, 0.08), U(0.0, 0.05)),
            "night": (0.16 * U(0.85, 1.15), U(0.0, 0.05), U(0.85, 1.0)),
            "dawn/dusk": (0.62 * U(0.9, 1.1), U(0.85, 1.0), U(0.1, 0.45)),
            "undefined": (U(0.3, 0.9), U(0.0, 0.5), U(0.0, 0.6))}
    target = np.stack([np.stack(tmpl[c]) for c in _T])[t, :, np.arange(n)]              # n x 3
    decoy = np.stack([np.stack(tmpl[c]) for c in _T])[_decoy(rng, t, shares["timeofday"], _T), :, np.arange(n)]
    bright, warm, lights = (decoy + (target - decoy) * ct[:, None]).T
    # Auto-exposure lifts dark frames part of the way (more with difficulty), with jitter.
    f["exposure"] = bright ** -(d * 0.6 * rng.random(n)) * np.exp(rng.normal(0, 0.08 * nuis, n))
    f["brightness"], f["warmth"], f["lights"] = bright, warm, lights
    f["sun_x"] = U(0.1, 0.9)

    # Weather: intensities of clouds, grey sky, rain, snow and fog.
    is_ = lambda codes_, vocab, name: codes_ == vocab.index(name)  # noqa: E731
    eff = rng.uniform(0.0, 0.08 * nuis, (n, 5)) * np.array([1, 1, 0, 0, 1])  # faint clouds, grey, haze
    strength = cw * U(0.65, 1.0)
    for name, idx, extra in (("overcast", [1], {}), ("partly cloudy", [0], {}),
                             ("rainy", [2], {1: 0.6}), ("snowy", [3], {1: 0.45}), ("foggy", [4], {})):
        m = is_(w, _W, name)
        for i in idx:
            eff[m, i] = strength[m]
        for i, v in extra.items():
            eff[m, i] = np.maximum(eff[m, i], v * strength[m])
    und = is_(w, _W, "undefined")
    if und.any():                                                   # two effects, half strength: ambiguous
        pair = np.argsort(rng.random((und.sum(), 5)), axis=1)[:, :2]
        vals = rng.uniform(0.15, 0.5, (und.sum(), 2))
        sub = eff[und]
        np.put_along_axis(sub, pair, vals, axis=1)
        eff[und] = sub
    f["clouds"], f["overcast"], f["rain"], f["snow"], f["fog"] = (eff[:, i] for i in range(5))
    f["rain_slant"] = U(-0.35, 0.35)

    # Scene layout: continuous features mixed toward a decoy scene; special structures scaled by cue.
    z = np.zeros(n)
    names = ("road_w", "sidewalk", "buildings", "houses", "trees", "hills")
    stmpl = {"city street": (U(0.33, 0.4), 0.28 + z, U(0.8, 1.2), z, U(0, 0.2), z),
             "highway": (U(0.7, 0.85), z, z, z, U(0, 0.25), U(0.5, 1.0)),
             "residential": (U(0.22, 0.28), z, z, U(0.8, 1.0), U(0.6, 1.0), z),
             "parking lot": (1.4 + z, z, z, z, z, z),
             "gas stations": (0.5 + z, z, z, z, U(0, 0.3), z),
             "tunnel": (0.32 + z, z, z, z, z, z),
             "undefined": (U(0.2, 0.8), z, U(0.0, 0.35) * (U(0, 1) < 0.5), U(0.0, 0.5) * (U(0, 1) < 0.5),
                           U(0.0, 0.6), z)}
    table = np.stack([np.stack(stmpl[c]) for c in _S])                                      # classes x 6 x n
    decoy_s = _decoy(rng, s, {c: shares["scene"][c] for c in ("city street", "highway", "residential")}, _S)
    own, other = table[s, :, np.arange(n)], table[decoy_s, :, np.arange(n)]                  # n x 6
    mixed = other + (own - other) * cs[:, None]
    lay = {k: mixed[:, i] for i, k in enumerate(names)}
    lay["buildings"] = np.where(lay["buildings"] > 0.02, lay["buildings"], 0.0)
    lay["lot"] = np.where(is_(s, _S, "parking lot"), cs, 0.0)
    lay["canopy"] = np.where(is_(s, _S, "gas stations"), _lerp(0.5, 1.0, cs), 0.0)
    lay["tunnel"] = is_(s, _S, "tunnel").astype(float)
    lane_pos = np.zeros((n, N_LINES))
    lane_on = np.zeros((n, N_LINES), bool)
    lane_dash = np.zeros((n, N_LINES), bool)
    lane_col = np.zeros((n, N_LINES), np.int8)                     # 0 white, 1 yellow, 2 grey rail

    def lines(m, pos, dash, col):
        k = len(pos)
        lane_pos[m, :k], lane_on[m, :k] = pos, True
        lane_dash[m, :k], lane_col[m, :k] = dash, col

    # Lane markings are those of the scene or, with probability 1 - cue, of the decoy.
    look = np.where(U(0, 1) < cs, s, decoy_s)
    lines(look == _S.index("city street"), [0.0, -0.95, 0.95], [False, False, False], [1, 0, 0])
    lines(look == _S.index("highway"), [-1/3, 1/3, -0.97, 0.97, -1.05], [True, True, False, False, False],
          [0, 0, 0, 0, 2])
    lines(look == _S.index("tunnel"), [0.0, -0.95, 0.95], [True, False, False], [0, 0, 0])
    lines((look == _S.index("undefined")) & (U(0, 1) < 0.5), [0.0], [True], [0])
    f.update(lay)
    f["lane_pos"], f["lane_on"], f["lane_dash"], f["lane_col"] = lane_pos, lane_on, lane_dash, lane_col
    f["dash_phase"] = U(0, 1)
    f["palette"] = np.clip(rng.uniform(0.3, 0.75, (n, 10, 1)) + rng.uniform(-0.1, 0.1, (n, 10, 3))
                           + np.array([0.04, 0.0, -0.04]), 0, 1)                     # facades: muted
    f["brand"] = rng.integers(0, 3, n)

    # Objects, then unlabelled clutter (bins, bushes, poles) along the roadside.
    f["obj_cat"], f["obj_colour"], f["obj_depth"], f["obj_u"] = _objects(rng, s, t, w, n)
    f["clutter_depth"] = rng.uniform(0.2, 1.0, (n, N_CLUTTER))
    f["clutter_u"] = np.where(rng.random((n, N_CLUTTER)) < 0.5, -1, 1) * rng.uniform(1.1, 2.2, (n, N_CLUTTER))
    f["clutter_size"] = rng.uniform(0.02, 0.07, (n, N_CLUTTER)) * nuis
    f["clutter_rgb"] = rng.uniform(0.1, 0.8, (n, N_CLUTTER, 3))
    f["clutter_on"] = rng.random((n, N_CLUTTER)) < 0.3 + 0.4 * d

    # Photometric nuisance.
    f["gain"] = 1.0 + rng.normal(0, 0.05 * nuis, (n, 3))
    f["contrast"] = 1.0 + rng.normal(0, 0.08 * nuis, n)
    f["noise_sigma"] = (0.01 + 0.03 * d) * U(0.5, 1.5) * (1.0 + 0.8 * np.clip(1.0 - bright, 0, 1))
    return {k: (v.astype(np.float32) if v.dtype == np.float64 else v) for k, v in f.items()}


def object_geometry(f: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Image-plane position of each object slot: bottom-centre x, y and height/width (fractions)."""
    h = f["horizon"][:, None]
    t = f["obj_depth"]
    cat = np.maximum(f["obj_cat"], 0)
    xc = f["vanish_x"][:, None] + (f["road_x"][:, None] - f["vanish_x"][:, None]) * t
    x = xc + f["obj_u"] * f["road_w"][:, None] * t
    y = h + t * (1 - h)
    return {"x": x, "y": y, "height": OBJECT_HEIGHT[cat] * t, "width": OBJECT_WIDTH[cat] * t}
