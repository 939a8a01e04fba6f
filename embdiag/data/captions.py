"""Five captions per scene, each describing a different subset of its facts.

Captions are built from the same facts the renderer draws (attributes and object
instances), with templates and synonyms, so they are true of the image but worded
variously. Each of the five picks a different *facet*: place and time, weather, coloured
objects, counts, positions, traffic control, lighting. Some facets name the weather or
the hour and others only objects, so finding one caption of an image and recovering all
five are different tasks, as with COCO's five human captions. Attributes labelled
"undefined" are never stated.
"""

from __future__ import annotations

import random
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
    "parking lot": ["a parking lot", "a car park", "a parking area with rows of cars"],
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
LIGHTING = {
    "night": ["Street lamps and tail lights glow in the dark.", "Lit windows and headlights break the darkness."],
    "dawn/dusk": ["The low sun colours the sky orange.", "A warm glow sits on the horizon."],
    "overcast": ["A flat grey sky hangs over the road.", "Grey clouds cover the whole sky."],
    "rainy": ["Rain streaks across the view and the road looks wet.", "Raindrops fall on a wet, shiny road."],
    "snowy": ["Snowflakes fill the air and snow lines the road.", "Snow is falling on the roadside."],
    "foggy": ["Thick haze washes out the distance.", "Fog makes everything look pale and faint."],
    "partly cloudy": ["White clouds drift across a blue sky.", "Patches of cloud float in the sky."],
}


def _an(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _cap(s: str) -> str:
    return s[0].upper() + s[1:]


def _count_phrase(rng: random.Random, cat: str, n: int) -> str:
    sing, plur = rng.choice(NOUNS[cat])
    if n == 1:
        return _an(sing) if rng.random() < 0.6 else f"one {sing}"
    return f"{NUMBERS[n] if n < len(NUMBERS) else n} {plur}"


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _where(x: float, depth: float) -> str:
    side = "on the left" if x < 0.4 else "on the right" if x > 0.6 else "straight ahead"
    dist = "close by" if depth > 0.7 else "in the distance" if depth < 0.45 else ""
    return f"{side} {dist}".strip()


def describe(weather: str, scene: str, timeofday: str, objects: Sequence[tuple[str, str, float, float]],
             rng: random.Random) -> list[str]:
    """Five distinct captions of one scene; ``objects`` are (category, colour, x, depth) tuples."""
    place_words = SCENE_PHRASES[scene]
    place = rng.choice(place_words)
    wp = rng.choice(WEATHER_PHRASES[weather]) if weather in WEATHER_PHRASES else None
    tp = rng.choice(TIME_PHRASES[timeofday]) if timeofday in TIME_PHRASES else None
    counts = {c: sum(o[0] == c for o in objects) for c in OBJECT_CATEGORIES}
    near = sorted(objects, key=lambda o: -o[3])
    movers = [o for o in near if o[0] in ("car", "truck", "bus", "pedestrian", "cyclist")]

    facets = {}
    facets["place_time"] = lambda: (_cap(f"{rng.choice(place_words)} {tp}.") if tp
                                    else _cap(f"a view of {rng.choice(place_words)} from a car."))
    if wp:
        facets["weather"] = lambda: rng.choice([f"{_cap(place)} {wp}.", f"Driving along {place} {wp}.",
                                                f"{_cap(wp)}, {place} stretches ahead."])
    if movers:
        def coloured():
            items = [f"{_an(o[1])} {rng.choice(NOUNS[o[0]])[0]}" if o[0] in ("car", "truck", "bus")
                     else f"{_an(rng.choice(NOUNS[o[0]])[0])} in {o[1]}" for o in movers[:rng.choice([1, 2, 2, 3])]]
            return rng.choice([f"{_cap(_join(items))} on {place}.", f"There is {_join(items)} in view.",
                               f"{_cap(_join(items))} {'can be seen' if len(items) == 1 else 'are visible'} ahead."])
        facets["colours"] = coloured

        def spatial():
            o = movers[0]
            noun = rng.choice(NOUNS[o[0]])[0]
            s = (f"{_cap(_an(o[1]))} {noun}" if o[0] in ("car", "truck", "bus")
                 else f"{_cap(_an(noun))} in {o[1]}") + f" {_where(o[2], o[3])}"
            if len(movers) > 1:
                o2 = movers[1]
                s += f", with {_an(rng.choice(NOUNS[o2[0]])[0])} {_where(o2[2], o2[3])}"
            return s + "."
        facets["spatial"] = spatial
    present = [c for c in OBJECT_CATEGORIES if counts[c]]
    if present:
        def counting():
            cats = present if len(present) <= 3 else rng.sample(present, 3)
            items = [_count_phrase(rng, c, counts[c]) for c in cats]
            return rng.choice([f"{_cap(_join(items))}.", f"The scene shows {_join(items)}.",
                               f"{_cap(_join(items))} on {rng.choice(place_words)}."])
        facets["counts"] = counting
    if counts["traffic light"] or counts["traffic sign"]:
        def control():
            parts = []
            lights = [o for o in objects if o[0] == "traffic light"]
            signs = [o for o in objects if o[0] == "traffic sign"]
            if lights:
                parts.append(f"{_an(rng.choice(NOUNS['traffic light'])[0])} showing {lights[0][1]}")
            if signs:
                parts.append(f"{_an(signs[0][1])} {rng.choice(NOUNS['traffic sign'])[0]}")
            return rng.choice([f"{_cap(_join(parts))} by the road.", f"Beside the road: {_join(parts)}."])
        facets["control"] = control
    mood = [k for k in (timeofday, weather) if k in LIGHTING]
    if mood:
        facets["lighting"] = lambda: rng.choice(LIGHTING[rng.choice(mood)])
    facets["both"] = lambda: _cap(" ".join(p for p in (f"{place}", wp, tp) if p) + ".")
    facets["generic"] = lambda: rng.choice([f"A dashboard camera view of {rng.choice(place_words)}.",
                                            f"Looking down {rng.choice(place_words)}.",
                                            f"The view through a windshield on {rng.choice(place_words)}."])

    names = list(facets)
    rng.shuffle(names)
    out: list[str] = []
    for name in names * 3:                                        # retry facets if wording collides
        if len(out) == N_CAPTIONS:
            break
        cap = facets[name]()
        if cap not in out:
            out.append(cap)
    k = 2
    while len(out) < N_CAPTIONS:                                   # tiny scenes: number the views
        out.append(f"{_cap(place)}, view {k}.")
        k += 1
    return out


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
