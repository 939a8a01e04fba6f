"""Vectorised numpy renderer of procedural driving scenes.

:func:`render` turns the facts of a batch of images (:func:`embdiag.data.layout.draw_facts`)
into uint8 RGB arrays with whole-batch array operations: no per-pixel Python loops, only
short loops over a fixed number of layers (object slots, lane lines, trees, lamps).
Flat-coloured layers are painted as material ids into one byte per pixel and resolved to
colours once; the image is then albedo x illumination + emitted light, followed by
weather overlays, colour jitter and sensor noise. Random textures are drawn on fixed
grids, so one seed gives the same scene at every image size.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from .layout import MAX_OBJECTS, N_CLUTTER, N_LINES, object_geometry
from .vocab import COLOURS, OBJECT_CATEGORIES

F = np.float32
_G = 32                                  # texture grid
_RGB = np.array(list(COLOURS.values()), F)
_SKY_DAY = (np.array([0.30, 0.52, 0.88], F), np.array([0.72, 0.82, 0.95], F))
_SKY_DUSK = (np.array([0.30, 0.28, 0.52], F), np.array([1.00, 0.58, 0.30], F))
_GREY, _DARK_GREY, _LIGHT_GREY = (np.array(c, F) for c in
                                  ([0.62, 0.63, 0.66], [0.40, 0.41, 0.44], [0.84, 0.85, 0.88]))
_GRASS, _PAVEMENT, _ASPHALT = (np.array(c, F) for c in ([0.28, 0.42, 0.17], [0.55, 0.55, 0.52],
                                                        [0.33, 0.33, 0.35]))
_SNOW = np.array([0.92, 0.93, 0.96], F)
_LINE_RGB = np.array([[0.92, 0.92, 0.88], [0.92, 0.76, 0.15], [0.62, 0.62, 0.64]], F)
_LAMP = np.array([1.0, 0.82, 0.5], F)
_BRANDS = np.array([[0.8, 0.1, 0.1], [0.1, 0.55, 0.2], [0.1, 0.3, 0.8]], F)

# Object parts: box in object coordinates (x from -0.5 to 0.5, y from 0 top to 1 bottom),
# colour (None = the instance's own colour) and whether the part emits light.
_DARK, _GLASS, _SKIN, _POLE, _TAIL = ((0.08, 0.08, 0.09), (0.16, 0.2, 0.26), (0.85, 0.68, 0.55),
                                      (0.3, 0.3, 0.32), (0.9, 0.05, 0.05))
_NONE = ((0, 0, 0, 0), _DARK, 0)
_PARTS = {  # main, detail, detail, light, light
    "car": [((-.5, .5, .35, .9), None, 0), ((-.36, .36, 0, .4), _GLASS, 0), ((-.46, .46, .88, 1), _DARK, 0),
            ((-.48, -.3, .45, .6), _TAIL, 1), ((.3, .48, .45, .6), _TAIL, 1)],
    "truck": [((-.5, .5, 0, .88), None, 0), ((-.5, .5, .88, 1), _DARK, 0), ((-.5, .5, 0, .05), _POLE, 0),
              ((-.5, -.36, .7, .8), _TAIL, 1), ((.36, .5, .7, .8), _TAIL, 1)],
    "bus": [((-.5, .5, 0, .92), None, 0), ((-.44, .44, .1, .42), _GLASS, 0), ((-.5, .5, .92, 1), _DARK, 0),
            ((-.5, -.36, .72, .82), _TAIL, 1), ((.36, .5, .72, .82), _TAIL, 1)],
    "pedestrian": [((-.5, .5, .18, .62), None, 0), ((-.4, .4, .62, 1), (0.15, 0.15, 0.2), 0),
                   ((-.32, .32, 0, .18), _SKIN, 0), _NONE, _NONE],
    "cyclist": [((-.3, .3, .12, .5), None, 0), ((-.5, .5, .62, 1), _DARK, 0), ((-.22, .22, 0, .13), _SKIN, 0),
                ((-.08, .08, .5, .62), _DARK, 0), _NONE],
    "traffic light": [((-.5, .5, 0, .32), _DARK, 0), ((-.12, .12, .32, 1), _POLE, 0),
                      ((-.3, .3, .02, .1), None, 1), _NONE, _NONE],
    "traffic sign": [((-.5, .5, 0, .34), None, 0), ((-.08, .08, .34, 1), _POLE, 0),
                     ((-.5, .5, 0, .05), (0.9, 0.9, 0.9), 0), _NONE, _NONE],
}
_P_BOX = np.array([[p[0] for p in _PARTS[c]] for c in OBJECT_CATEGORIES], F)                  # C x 5 x 4
_P_OWN = np.array([[p[1] is None for p in _PARTS[c]] for c in OBJECT_CATEGORIES])
_P_RGB = np.array([[p[1] if p[1] is not None else (0, 0, 0) for p in _PARTS[c]] for c in OBJECT_CATEGORIES], F)
_P_EMIT = np.array([[p[2] for p in _PARTS[c]] for c in OBJECT_CATEGORIES], bool)
_LIGHT = OBJECT_CATEGORIES.index("traffic light")
_STATE = np.array([{"red": 0, "yellow": 1, "green": 2}.get(c, 0) for c in COLOURS])


def _frac(a):
    """Fractional part in [0, 1), also for negative values."""
    return a - np.floor(a)


def _col(a):
    """(B,) -> (B, 1, 1) for broadcasting over pixels (floats as float32)."""
    a = np.asarray(a)
    return (a.astype(F) if a.dtype.kind == "f" else a)[:, None, None]


def _box(X, Y, x0, x1, y0, y1, on=None):
    """Boolean B x S x S mask of axis-aligned boxes given per-image edges (fractions of the image)."""
    cols = (X[None, :] >= x0[:, None]) & (X[None, :] < x1[:, None])
    rows = (Y[None, :] >= y0[:, None]) & (Y[None, :] < y1[:, None])
    if on is not None:
        rows &= np.asarray(on)[:, None]
    return rows[:, :, None] & cols[:, None, :]


def _blob(X, Y, cx, cy, rx, ry):
    """Separable Gaussian blobs (B x S x S) centred at per-image (cx, cy) with radii (rx, ry)."""
    gx = np.exp(-((X[None] - cx[:, None]) / rx[:, None]) ** 2)
    gy = np.exp(-((Y[None] - cy[:, None]) / ry[:, None]) ** 2)
    return gy[:, :, None] * gx[:, None, :]


def _grid(table, n):
    """Nearest-neighbour upsampling of B x G x G tables to B x n x n."""
    idx = (np.arange(n) * table.shape[1]) // n
    return table[:, idx][:, :, idx]


class _Canvas:
    """Flat-coloured layers as one material id per pixel; id 0 is the (float) sky."""

    def __init__(self, B: int, S: int):
        self.ids = np.zeros((B, S, S), np.uint8)
        self.albedo = [np.zeros((B, 3), F)]
        self.emission = [np.zeros((B, 3), F)]

    def material(self, rgb, emit=None) -> int:
        B = self.ids.shape[0]
        self.albedo.append(np.broadcast_to(np.asarray(rgb, F), (B, 3)))
        self.emission.append(np.zeros((B, 3), F) if emit is None else np.broadcast_to(np.asarray(emit, F), (B, 3)))
        if len(self.albedo) > 255:
            raise RuntimeError("too many materials")
        return len(self.albedo) - 1

    def fill(self, mask, rgb, emit=None) -> int:
        m = self.material(rgb, emit)
        np.copyto(self.ids, np.uint8(m), where=mask)
        return m

    def fill_ids(self, mask, ids):
        np.copyto(self.ids, ids.astype(np.uint8), where=mask)

    def resolve(self):
        """Albedo (B x S x S x 3) and the sparse emission: flat pixel indices and their RGB."""
        B, M = self.ids.shape[0], len(self.albedo)
        flat = (self.ids.reshape(B, -1).astype(np.int32) + (np.arange(B, dtype=np.int32) * M)[:, None]).ravel()
        albedo = np.stack(self.albedo, 1).reshape(-1, 3)[flat].reshape(self.ids.shape + (3,))
        emission = np.stack(self.emission, 1).reshape(-1, 3)
        glowing = np.flatnonzero(emission.any(axis=1)[flat])
        return albedo, glowing, emission[flat[glowing]]


def render(f: Mapping[str, np.ndarray], size: int, rng: np.random.Generator) -> np.ndarray:
    """Render a batch of scenes described by facts ``f`` as uint8 images (B x size x size x 3)."""
    B, S = len(f["horizon"]), int(size)
    X = ((np.arange(S) + 0.5) / S).astype(F)
    Y = X.copy()
    x, y = X[None, None, :], Y[None, :, None]
    hz, v, rx_ = (np.asarray(f[k], F) for k in ("horizon", "vanish_x", "road_x"))
    h, vx, rx = _col(hz), _col(v), _col(rx_)
    road_w = np.asarray(f["road_w"], F)
    lights = np.asarray(f["lights"], F)

    # Fixed-shape random tables first (independent of size), sensor noise last.
    tex = _grid(rng.random((B, _G, _G), dtype=F), S)
    flakes = _grid(rng.random((B, 48, 48), dtype=F), S)
    lit = rng.random((B, 16, 16), dtype=F)
    rain_phase, rain_gate = rng.random((B, 64), dtype=F), rng.random((B, 64), dtype=F)
    cl = rng.random((B, 6, 5), dtype=F)
    tr = rng.random((B, 6, 4), dtype=F)
    seg_h = rng.uniform(0.4, 1.0, (B, 12)).astype(F)
    seg_off, house_off = rng.random(B, dtype=F), rng.random(B, dtype=F)
    hill_phase, stripe_phase = rng.uniform(0, 6.3, B).astype(F), rng.random(B, dtype=F)
    lamp_on = rng.random(B) < np.where(f["tunnel"] > 0, 0.0, 0.75)

    cv = _Canvas(B, S)
    below = y >= h                                                   # B x S x 1
    t = np.clip((y - h) / (1 - h), 1e-3, 1.0)                        # ground depth, 1 = nearest
    xc = vx + (rx - vx) * t
    half = _col(road_w) * t
    dxr = x - xc                                                     # B x S x S
    road = below & (np.abs(dxr) < half)
    dist = 1.0 / (t + 0.06)
    side = np.abs(x - vx)                                            # 1 x 1 x S per image: B x 1 x S

    # Sky (float): gradient warmed at dawn/dusk, greyed by cloud cover, rain and snow; sun glow; clouds.
    warm = np.asarray(f["warmth"], F)[:, None]
    top = _SKY_DAY[0] + (_SKY_DUSK[0] - _SKY_DAY[0]) * warm
    hor = _SKY_DAY[1] + (_SKY_DUSK[1] - _SKY_DAY[1]) * warm
    grey = _GREY + (_DARK_GREY - _GREY) * f["rain"][:, None] + (_LIGHT_GREY - _GREY) * f["snow"][:, None]
    oc = np.clip(f["overcast"], 0, 1)[:, None].astype(F)
    top, hor = top + (grey - top) * oc, hor + (grey - hor) * oc
    R = min(S, int(np.ceil(hz.max() * S)) + 1)                      # rows that can show sky
    Yr = Y[:R]
    g = np.clip(Yr[None, :, None] / h, 0, 1)[..., None]              # B x R x 1 x 1
    sun = _blob(X, Yr, np.asarray(f["sun_x"], F), hz - 0.03, np.full(B, 0.16, F), np.full(B, 0.1, F))
    sun_rgb = np.array([1.0, 0.55, 0.25], F) * (0.7 * f["warmth"] * (1 - 0.8 * f["overcast"]))[:, None].astype(F)
    sky = top[:, None, None, :] + (hor - top)[:, None, None, :] * g + sun[..., None] * sun_rgb[:, None, None, :]
    n_cl = np.ceil(np.clip(f["clouds"], 0, 1) * 6)
    cloud = np.zeros((B, R, S), F)
    for k in range(6):
        on = k < n_cl
        if on.any():
            b = _blob(X, Yr, cl[:, k, 0] * 1.2 - 0.1, (0.1 + 0.75 * cl[:, k, 1]) * hz,
                      0.07 + 0.1 * cl[:, k, 2], 0.025 + 0.035 * cl[:, k, 3])
            np.maximum(cloud, b * _col(on), out=cloud)
    cloud = (np.clip(cloud * 1.8, 0, 1) * _col(np.clip(0.4 + 0.8 * f["clouds"], 0, 1)))[..., None]
    sky *= 1 - cloud
    sky += cloud * np.array([0.96, 0.96, 0.98], F)

    # Structures on the horizon: hills, city blocks with windows, houses, a shop.
    hills = _col(f["hills"]) * 0.07 * (0.6 + 0.4 * np.sin(x * 9 + _col(hill_phase)))
    cv.fill(~below & (y > h - hills), np.array([0.36, 0.47, 0.42], F))
    bld = _col(f["buildings"])
    seg = np.floor(X[None] * 9 + seg_off[:, None] * 3).astype(int)                  # B x S
    bh = np.take_along_axis(seg_h, seg, 1)[:, None, :] * bld * 0.45 * (0.35 + 1.4 * side)
    beyond = below & (np.abs(dxr) > half * (1 + _col(f["sidewalk"]))) & (bld > 0.5)
    building = (~below & (y > h - bh) & (side > 0.05)) | beyond
    facade = [cv.material(f["palette"][:, i]) for i in range(10)]
    glass = [cv.material(f["palette"][:, i] * 0.45 + np.array([0.05, 0.08, 0.14], F)) for i in range(10)]
    seg10 = (seg % 10)[:, None, :]
    cv.fill_ids(building, np.asarray(facade)[seg10])
    win = (_frac(x * 26) < 0.5) & (_frac(y * 30) < 0.45) & building
    cv.fill_ids(win, np.asarray(glass)[seg10])
    cellx, celly = np.floor(X * 26).astype(int) % 16, np.floor(Y * 30).astype(int) % 16
    lit_win = ((lit[:, celly][:, :, cellx] < 0.5) & win) * _col(lights * 0.9)      # float B x S x S

    hs = _col(f["houses"])
    hseg = X[None] * 7 + house_off[:, None]
    hx = np.abs(X[None] - (np.floor(hseg) + 0.5 - house_off[:, None]) / 7)[:, None, :]
    has_house = (np.take_along_axis(seg_h, np.floor(hseg).astype(int) % 12, 1) < 0.85)[:, None, :] \
        & (hs > 0) & (side > 0.07)
    hh = 0.05 + 0.06 * side * hs
    walls = [cv.material(np.minimum(f["palette"][:, i] + 0.25, 1)) for i in range(10)]
    cv.fill_ids(has_house & (y > h - hh) & (y < h + 0.02) & (hx < 0.05), np.asarray(walls)[seg10])
    cv.fill(has_house & (y <= h - hh) & (y > h - hh - 0.05 * hs * (1 - hx / 0.065)) & (hx < 0.065),
            np.array([0.45, 0.18, 0.12], F))
    lot = _col(f["lot"])
    shop = ~below & (y > h - 0.075 * lot) & (x > 0.08) & (x < 0.92) & (lot > 0)
    cv.fill(shop, f["palette"][:, 7])
    cv.fill(shop & (y < h - 0.055 * lot), f["palette"][:, 7], emit=_LAMP[None] * (lights * (f["lot"] > 0))[:, None])

    # Ground: pavement or grass, snow cover, then the road and its markings.
    grassy = np.clip(f["houses"] + f["hills"] + 0.5 * f["trees"], 0, 1) * (1 - np.clip(f["lot"] + f["canopy"], 0, 1))
    ground = _PAVEMENT + (_GRASS - _PAVEMENT) * grassy[:, None].astype(F)
    ground = ground + (_SNOW - ground) * (0.8 * f["snow"])[:, None].astype(F)
    cv.fill(below & ~beyond, ground)
    sidewalk = _col(f["sidewalk"])
    cv.fill(below & ~road & (np.abs(dxr) < half * (1 + sidewalk)) & (sidewalk > 0), np.array([0.64, 0.63, 0.6], F))
    road_rgb = _ASPHALT * (1 - 0.4 * f["rain"])[:, None].astype(F)
    road_rgb = road_rgb + (_SNOW - road_rgb) * (0.35 * f["snow"])[:, None].astype(F)
    cv.fill(road, road_rgb)
    u = dxr / np.maximum(half, 1e-4)
    dash_on = _frac(dist * 0.7 + _col(f["dash_phase"])) < 0.45
    fade = (1 - 0.7 * f["snow"])[:, None].astype(F)
    for k in range(N_LINES):
        on = f["lane_on"][:, k]
        if not on.any():
            continue
        width = _col(np.where(f["lane_col"][:, k] == 2, 0.05, 0.03) / road_w)
        m = below & _col(on) & (np.abs(u - _col(f["lane_pos"][:, k])) < width)
        m &= ~_col(f["lane_dash"][:, k]) | dash_on
        cv.fill(m, road_rgb + (_LINE_RGB[f["lane_col"][:, k]] - road_rgb) * fade)
    if (f["lot"] > 0).any():
        rows = np.zeros_like(t, dtype=bool)
        for r in (0.32, 0.48, 0.68, 0.9):
            rows |= np.abs(t - r) < 0.07
        stripes = below & rows & (lot > 0) & (_frac(u * _col(road_w) / 0.09 + _col(stripe_phase)) < 0.1)
        cv.fill(stripes, road_rgb + (_LINE_RGB[0] - road_rgb) * 0.8 * fade)

    # Gas station: canopy on pillars over pumps, lit from below.
    cp = np.asarray(f["canopy"], F)
    if (cp > 0).any():
        on, cw = cp > 0, 0.32
        top_y, bot_y = hz - 0.17 - 0.1 * cp, hz - 0.17
        cv.fill(_box(X, Y, v - cw, v + cw, top_y, bot_y, on), np.array([0.92, 0.92, 0.9], F))
        cv.fill(_box(X, Y, v - cw, v + cw, top_y, top_y + 0.45 * (bot_y - top_y), on), _BRANDS[f["brand"]])
        for sgn in (-1, 1):
            px, qx = v + sgn * 0.8 * cw, v + sgn * 0.35 * cw
            cv.fill(_box(X, Y, px - 0.012, px + 0.012, bot_y, hz + 0.1, on), np.array([0.8, 0.8, 0.8], F))
            cv.fill(_box(X, Y, qx - 0.025, qx + 0.025, hz + 0.03, hz + 0.1, on), _BRANDS[f["brand"]] * 0.5 + 0.4)
        cv.fill(_box(X, Y, v - cw, v + cw, bot_y - 0.012, bot_y, on), np.ones(3, F),
                emit=(0.5 + 0.6 * lights)[:, None] * np.array([1, 1, 0.95], F))

    # Trees along the roadside.
    trunk, leaves = cv.material(np.array([0.35, 0.25, 0.15], F)), \
        cv.material(np.array([0.13, 0.36, 0.12], F) + 0.1 * (f["palette"][:, 9] - 0.5))
    for k in range(6):
        on = tr[:, k, 0] < f["trees"]
        if not on.any():
            continue
        depth = 0.05 + 0.5 * tr[:, k, 1]
        base_y = hz + depth * (1 - hz)
        px = v + np.where(tr[:, k, 2] < 0.5, -1, 1) * (0.1 + 0.8 * depth) * (0.8 + 0.6 * tr[:, k, 3])
        r = 0.03 + 0.12 * depth
        np.copyto(cv.ids, np.uint8(trunk), where=_box(X, Y, px - 0.15 * r, px + 0.15 * r, base_y - 1.2 * r, base_y, on))
        np.copyto(cv.ids, np.uint8(leaves), where=(_blob(X, Y, px, base_y - 1.6 * r, r, 0.9 * r) > 0.4) & _col(on))

    # Street lamps: poles by day, glowing heads at night.
    glow = np.zeros((B, S, S), F)
    pole = cv.material(np.array(_POLE, F))
    for k, ld in enumerate((0.22, 0.36, 0.55, 0.8)):
        ly = hz + ld * (1 - hz)
        lx = v + (rx_ - v) * ld + (1 if k % 2 else -1) * road_w * ld * np.minimum(1.15, 0.95 + 0.2 / road_w)
        head = ly - 0.38 * ld
        pw = 0.004 + 0.006 * ld
        np.copyto(cv.ids, np.uint8(pole), where=_box(X, Y, lx - pw, lx + pw, head, ly, lamp_on))
        rad = np.full(B, 0.012 + 0.04 * ld, F)
        glow += _blob(X, Y, lx, head, rad, rad) * _col(lights * 1.2 * lamp_on)

    # Clutter and objects, far to near.
    ct = f["clutter_depth"]
    cxs = v[:, None] + (rx_ - v)[:, None] * ct + f["clutter_u"] * road_w[:, None] * ct
    cys = hz[:, None] + ct * (1 - hz[:, None])
    for k in range(N_CLUTTER):
        sz = f["clutter_size"][:, k] * ct[:, k]
        cv.fill(_box(X, Y, cxs[:, k] - sz, cxs[:, k] + sz, cys[:, k] - 2 * sz, cys[:, k], f["clutter_on"][:, k]),
                f["clutter_rgb"][:, k])
    geo = object_geometry(f)
    order = np.argsort(np.where(f["obj_cat"] >= 0, f["obj_depth"], -1.0), axis=1, kind="stable")
    take = lambda a: np.take_along_axis(np.asarray(a), order, 1)  # noqa: E731
    cat, colour = take(f["obj_cat"]), take(f["obj_colour"])
    ox, oy, oh, ow = (take(geo[k]) for k in ("x", "y", "height", "width"))
    min_px = 1.0 / S
    for k in range(MAX_OBJECTS):
        on = cat[:, k] >= 0
        if not on.any():
            continue
        c = np.maximum(cat[:, k], 0)
        own = _RGB[np.maximum(colour[:, k], 0)]
        state = _STATE[np.maximum(colour[:, k], 0)]
        w_, h_ = np.maximum(ow[:, k], min_px), np.maximum(oh[:, k], min_px)
        for p in range(5):
            bx = _P_BOX[c, p]                                        # B x 4
            y0, y1 = bx[:, 2], bx[:, 3]
            if p == 2:                                               # traffic-light lamp: row by state
                y0 = np.where(c == _LIGHT, 0.02 + 0.1 * state, y0)
                y1 = np.where(c == _LIGHT, 0.1 + 0.1 * state, y1)
            x0, x1 = ox[:, k] + bx[:, 0] * w_, ox[:, k] + bx[:, 1] * w_
            y0, y1 = oy[:, k] - (1 - y0) * h_, oy[:, k] - (1 - y1) * h_
            if p == 0:                                               # the main part always covers a pixel
                x1, y0 = np.maximum(x1, x0 + min_px), np.minimum(y0, y1 - min_px)
            part_on = on & (bx[:, 1] > bx[:, 0])
            if not part_on.any():
                continue
            rgb = np.where(_P_OWN[c, p][:, None], own, _P_RGB[c, p])
            strength = np.where(c == _LIGHT, 0.6 + 0.8 * lights, 0.25 + 0.9 * lights) * _P_EMIT[c, p]
            cv.fill(_box(X, Y, x0, x1, y0, y1, part_on), rgb, emit=rgb * strength[:, None])

    # Tunnel: walls and ceiling around a bright exit, lit by its own lamps whatever the hour.
    tun = f["tunnel"] > 0
    inside = None
    if tun.any():
        tc = np.clip((h - y) / 0.5, 0, None)
        tw = side / 0.55
        struct = np.where(below, np.maximum(tw, t), np.maximum(tc, tw))
        inside = _col(tun) & (struct > 0.07)
        wall = inside & (tw >= np.where(below, t, tc)) & ~road
        ceiling = inside & ~below & (tc > tw)
        cv.fill(wall, np.array([0.62, 0.58, 0.5], F))
        cv.fill(wall & (_frac(1.0 / (tw + 0.02)) < 0.12), np.array([0.45, 0.42, 0.36], F))
        cv.fill(ceiling, np.array([0.3, 0.3, 0.32], F))
        lamps = ceiling & (side < 0.08 * tc) & (_frac(1.2 / (tc + 0.02) + _col(f["dash_phase"])) < 0.3)
        cv.fill(lamps, np.array([1.0, 0.8, 0.5], F), emit=np.array([1.0, 0.75, 0.4], F) * 1.2)
        road = road & ~inside                                        # no headlight pool inside
        
    # Resolve materials; light: brightness, warm or night tint, headlight pool; tunnels have their own.
    albedo, glowing, glow_rgb = cv.resolve()
    is_sky = cv.ids[:, :R] == 0
    albedo *= np.where(cv.ids == 0, np.float32(1), 0.9 + 0.2 * tex)[..., None]
    np.copyto(albedo[:, :R], sky, where=is_sky[..., None])
    b = np.asarray(f["brightness"], F)[:, None]
    night = np.clip((0.8 - b) / 0.6, 0, 1)
    tint = 1 + np.array([0.14, -0.1, -0.28], F) * (0.6 * warm) + np.array([-0.12, -0.06, 0.12], F) * night
    illum = (b * tint * (1 - 0.12 * f["overcast"][:, None]).astype(F))[:, None, None, :]
    out = albedo * illum
    pool = (road * np.exp(-((x - rx) / 0.25) ** 2 - ((1 - y) / 0.3) ** 2)) * _col(0.5 * lights)
    out += albedo * pool[..., None]
    if inside is not None:
        np.copyto(out, albedo * np.array([0.55, 0.47, 0.36], F), where=inside[..., None])
    del albedo
    out.reshape(-1, 3)[glowing] += glow_rgb
    out += (glow + lit_win)[..., None] * _LAMP

    # Weather overlays: fog, rain streaks, snow flakes.
    fog_a = np.clip(_col(f["fog"]) * np.where(below, 0.55 + 0.45 * (1 - t), 1.0) * 1.1, 0, 0.95)[..., None]
    fog_rgb = (np.array([0.74, 0.75, 0.77], F) * (0.3 + 0.7 * b))[:, None, None, :]
    out *= 1 - fog_a
    out += fog_a * fog_rgb
    rain = np.asarray(f["rain"], F)
    p = (x - _col(f["rain_slant"]) * y) * 40                            # one column per streak
    colk = np.floor(p)
    streak = np.abs(p - colk - 0.5) < np.float32(max(0.6 / S, 0.006) * 40)
    colk = colk.astype(np.int64).reshape(B, -1) % 64
    gate = np.take_along_axis(rain_gate, colk, 1).reshape(B, S, S)
    phase = np.take_along_axis(rain_phase, colk, 1).reshape(B, S, S)
    drops = np.nonzero(streak & (gate < _col(0.8 * rain)) & (_frac(y * 6 + phase) < 0.35))
    a = (0.35 * np.clip(rain * 1.4, 0, 1))[drops[0], None]
    out[drops] += a * (np.array([0.85, 0.87, 0.9], F) - out[drops])
    flake = np.nonzero(flakes < _col(0.07 * f["snow"]))
    out[flake] = out[flake] * np.float32(0.15) + np.float32(0.85) * np.array([0.95, 0.95, 0.97], F)

    # Camera: contrast and colour gains, sensor noise, 8-bit quantisation.
    mean = out.mean(axis=(1, 2), keepdims=True)
    c = _col(f["contrast"])[..., None]
    gain = (np.asarray(f["gain"], F) * np.asarray(f["exposure"], F)[:, None])[:, None, None, :]
    out *= c * gain
    out += mean * (1 - c) * gain
    noise = rng.standard_normal(out.shape, dtype=F)
    noise *= _col(f["noise_sigma"])[..., None]
    out += noise
    np.clip(out, 0, 1, out=out)
    out *= 255
    out += 0.5
    return out.astype(np.uint8)
