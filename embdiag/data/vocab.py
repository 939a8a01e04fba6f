"""BDD100K attribute vocabularies, default class shares and object categories.

The three image-level attributes and their values are exactly those of the BDD100K
label files (``attributes.weather``, ``attributes.scene``, ``attributes.timeofday``);
"undefined" is a label of its own, as in the study. ``DEFAULT_SHARES`` mimic the
imbalance of BDD100K: clear, city street and daytime dominate, several classes are rare.
"""

from __future__ import annotations

ATTRIBUTES: tuple[str, ...] = ("weather", "scene", "timeofday")

WEATHER: tuple[str, ...] = ("clear", "overcast", "partly cloudy", "rainy", "snowy", "foggy", "undefined")
SCENE: tuple[str, ...] = ("city street", "highway", "residential", "parking lot", "gas stations", "tunnel",
                          "undefined")
TIMEOFDAY: tuple[str, ...] = ("daytime", "night", "dawn/dusk", "undefined")

VOCAB: dict[str, tuple[str, ...]] = {"weather": WEATHER, "scene": SCENE, "timeofday": TIMEOFDAY}

# Shares used by the procedural generator (normalised per attribute). Close to BDD100K's
# published validation shares; the rarest classes are raised a little so that a
# 2,000-image training split still holds a handful of each.
DEFAULT_SHARES: dict[str, dict[str, float]] = {
    "weather": {"clear": 0.50, "overcast": 0.13, "partly cloudy": 0.07, "rainy": 0.07, "snowy": 0.08,
                "foggy": 0.005, "undefined": 0.08},
    "scene": {"city street": 0.60, "highway": 0.25, "residential": 0.12, "parking lot": 0.006,
              "gas stations": 0.003, "tunnel": 0.004, "undefined": 0.005},
    "timeofday": {"daytime": 0.53, "night": 0.40, "dawn/dusk": 0.07, "undefined": 0.004},
}

# Classes absent from the procedural validation split by default, as in the study's subset.
DEFAULT_VAL_ABSENT: tuple[str, ...] = ("foggy", "gas stations", "tunnel")

# Object categories of the procedural scenes (multi-label per image).
OBJECT_CATEGORIES: tuple[str, ...] = ("car", "truck", "bus", "pedestrian", "cyclist", "traffic light",
                                      "traffic sign")

# BDD100K detection categories (boxes); lane and drivable-area polygons are not objects.
BDD100K_OBJECT_CATEGORIES: tuple[str, ...] = ("bike", "bus", "car", "motor", "person", "rider",
                                              "traffic light", "traffic sign", "train", "truck")

# Named colours of object instances, with their RGB in [0, 1].
COLOURS: dict[str, tuple[float, float, float]] = {
    "white": (0.92, 0.92, 0.90), "black": (0.08, 0.08, 0.09), "silver": (0.68, 0.70, 0.72),
    "grey": (0.42, 0.43, 0.45), "red": (0.78, 0.10, 0.10), "blue": (0.12, 0.25, 0.72),
    "yellow": (0.95, 0.78, 0.10), "green": (0.12, 0.55, 0.22), "orange": (0.95, 0.50, 0.08),
}
COLOUR_NAMES: tuple[str, ...] = tuple(COLOURS)


def check_value(attribute: str, value: str) -> str:
    """Return ``value`` if it belongs to the BDD100K vocabulary of ``attribute``, else raise ValueError."""
    if attribute not in VOCAB:
        raise ValueError(f"unknown attribute {attribute!r}; expected one of {ATTRIBUTES}")
    if value not in VOCAB[attribute]:
        raise ValueError(f"{attribute}: {value!r} is not a BDD100K value; expected one of {VOCAB[attribute]}")
    return value
