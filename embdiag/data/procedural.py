"""The procedural driving-scene dataset: generation, on-disk caching and assembly.

Each split is generated independently from (seed, split, size) and cached as an artifact
``cache/scenes-<split>-<hash>`` (images, attribute codes, categories, the instance table
and packed captions) with a manifest of checksums and parameters, so the book runs on
any machine without downloads and regenerates nothing it has already made.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .. import artifacts
from .._validate import check_int, check_number
from .captions import N_CAPTIONS, scene_captions
from .dataset import SPLITS, Dataset, attribute_frame
from .layout import SPLIT_CODES, draw_facts, object_geometry, stream
from .scenes import render
from .vocab import ATTRIBUTES, COLOUR_NAMES, DEFAULT_SHARES, DEFAULT_VAL_ABSENT, OBJECT_CATEGORIES, VOCAB

GENERATOR_VERSION = 2             # 2: captions state each scene's own facts
GENERATOR_FILES = ("vocab.py", "layout.py", "scenes.py", "captions.py", "procedural.py")
BLOCK = 256                       # images per random stream for textures and noise
DEFAULT_SIZES = {"train": 2000, "val": 983, "pool": 20000, "caption": 1000}


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """SHA-256 (16 hex digits) of the generator's source files: part of every cache key, so an
    edited generator never serves images made by an older one."""
    here = Path(__file__).resolve().parent
    return artifacts.source_digest(*(here / name for name in GENERATOR_FILES))


def _workers(workers: int | None) -> int:
    return max(1, int(workers) if workers else min(2, os.cpu_count() or 1))


def split_params(split: str, n: int, *, seed: int = 0, image_size: int = 64, difficulty: float = 0.5,
                 shares: Mapping | None = None, val_absent: Sequence[str] = DEFAULT_VAL_ABSENT) -> dict:
    """The parameters that fully determine one generated split (recorded in its cache manifest)."""
    if split not in SPLITS:
        raise ValueError(f"split: expected one of {SPLITS}, got {split!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n_{split}: expected a positive integer, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: expected a non-negative integer, got {seed!r}")
    if not 32 <= check_int(image_size, "image_size") <= 224:
        raise ValueError(f"image_size: expected 32..224 pixels, got {image_size}")
    if not 0.0 <= check_number(difficulty, "difficulty") <= 1.0:
        raise ValueError(f"difficulty: expected a value in [0, 1], got {difficulty}")
    shares = {a: dict((shares or DEFAULT_SHARES)[a]) for a in ATTRIBUTES}
    for a in ATTRIBUTES:
        unknown = set(shares[a]) - set(VOCAB[a])
        if unknown:
            raise ValueError(f"shares[{a!r}]: values outside the BDD100K vocabulary: {sorted(unknown)}")
    absent = sorted(val_absent) if split == "val" else []
    return {"generator": GENERATOR_VERSION, "code": code_digest(), "split": split, "n": int(n), "seed": int(seed),
            "image_size": int(image_size), "difficulty": float(difficulty), "shares": shares, "absent": absent}


def _pack(strings: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    data = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(data) + 1, np.int64)
    offsets[1:] = np.cumsum([len(b) for b in data])
    return np.frombuffer(b"".join(data), np.uint8).copy(), offsets


def _unpack(data: np.ndarray, offsets: np.ndarray) -> list[str]:
    raw = np.asarray(data).tobytes()
    return [raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:])]


def generate_split(split: str, n: int, *, seed: int = 0, image_size: int = 64, difficulty: float = 0.5,
                   shares: Mapping | None = None, val_absent: Sequence[str] = DEFAULT_VAL_ABSENT,
                   workers: int | None = None) -> dict[str, np.ndarray]:
    """Generate one split as a dict of plain arrays (the cached artifact's contents)."""
    p = split_params(split, n, seed=seed, image_size=image_size, difficulty=difficulty, shares=shares,
                     val_absent=val_absent)
    S = p["image_size"]
    f = draw_facts(seed, split, n, difficulty=p["difficulty"], shares=p["shares"], absent=tuple(p["absent"]))
    images = np.empty((n, S, S, 3), np.uint8)
    sub = max(1, min(BLOCK, (1 << 20) // (S * S)))                   # bound memory at large sizes

    def block(start: int) -> None:
        rng = stream(seed, split, 100 + start // BLOCK)
        stop = min(start + BLOCK, n)
        for a in range(start, stop, sub):
            b = min(a + sub, stop)
            images[a:b] = render({k: v[a:b] for k, v in f.items()}, S, rng)

    geo = object_geometry(f)
    with ThreadPoolExecutor(_workers(workers)) as ex:
        jobs = [ex.submit(block, s) for s in range(0, n, BLOCK)]
        caps = scene_captions(f["codes"], f["obj_cat"], f["obj_colour"], geo["x"], f["obj_depth"], seed=seed,
                              stream=SPLIT_CODES[split], vocab=[VOCAB[a] for a in ATTRIBUTES])
        for j in jobs:
            j.result()

    on = f["obj_cat"] >= 0
    img_idx, slot = np.nonzero(on)
    categories = np.zeros((n, len(OBJECT_CATEGORIES)), bool)
    categories[img_idx, f["obj_cat"][on]] = True
    data, offsets = _pack([c for cs in caps for c in cs])
    return {"images": images, "attributes": f["codes"], "categories": categories,
            "inst_image": img_idx.astype(np.int32), "inst_category": f["obj_cat"][on].astype(np.int8),
            "inst_colour": f["obj_colour"][on].astype(np.int8), "inst_x": geo["x"][on].astype(np.float32),
            "inst_y": geo["y"][on].astype(np.float32), "inst_size": geo["height"][on].astype(np.float32),
            "inst_depth": f["obj_depth"][on].astype(np.float32), "captions_utf8": data, "captions_offsets": offsets}


def artifact_name(params: Mapping) -> str:
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]
    return f"cache/scenes-{params['split']}-{digest}"


def load_split(split: str, n: int, *, seed: int = 0, image_size: int = 64, difficulty: float = 0.5,
               shares: Mapping | None = None, val_absent: Sequence[str] = DEFAULT_VAL_ABSENT, cache: bool = True,
               root: str | Path | None = None, workers: int | None = None) -> dict[str, np.ndarray]:
    """One split's arrays, from the artifact cache when present (else generated, then cached)."""
    p = split_params(split, n, seed=seed, image_size=image_size, difficulty=difficulty, shares=shares,
                     val_absent=val_absent)
    build = lambda: generate_split(split, n, seed=seed, image_size=image_size, difficulty=difficulty,  # noqa: E731
                                   shares=shares, val_absent=val_absent, workers=workers)
    if not cache:
        return build()
    name = artifact_name(p)
    command = (f"embdiag.data.load_dataset('procedural', seed={seed}, n_{split}={n}, image_size={image_size}, "
               f"difficulty={difficulty}, splits=[{split!r}])")
    return artifacts.cached(name, p, build, command=command, root=Path(root) if root is not None else None)


def source_text(seed: int, image_size: int, difficulty: float) -> str:
    return (f"procedural driving scenes (synthetic; embdiag generator v{GENERATOR_VERSION}, seed {seed}, "
            f"difficulty {difficulty:g}, {image_size}x{image_size} px)")


def load_procedural(*, seed: int = 0, n_train: int = 2000, n_val: int = 983, n_pool: int = 20000,
                    n_caption: int = 1000, image_size: int = 64, difficulty: float = 0.5,
                    splits: Sequence[str] | None = None, shares: Mapping | None = None,
                    val_absent: Sequence[str] = DEFAULT_VAL_ABSENT, cache: bool = True,
                    root: str | Path | None = None, workers: int | None = None) -> Dataset:
    """The procedural dataset: the requested ``splits`` (default all four) in one :class:`Dataset`."""
    sizes = {"train": n_train, "val": n_val, "pool": n_pool, "caption": n_caption}
    splits = SPLITS if splits is None else ((splits,) if isinstance(splits, str) else tuple(splits))
    unknown = set(splits) - set(SPLITS)
    if unknown or not splits:
        raise ValueError(f"splits: expected a non-empty subset of {SPLITS}, got {list(splits)}")
    splits = tuple(s for s in SPLITS if s in splits)
    parts = {s: load_split(s, sizes[s], seed=seed, image_size=image_size, difficulty=difficulty, shares=shares,
                           val_absent=val_absent, cache=cache, root=root, workers=workers) for s in splits}
    total = sum(sizes[s] for s in splits)
    images = np.empty((total, image_size, image_size, 3), np.uint8)
    ids, split_col, codes, cats, caps, inst = [], [], [], [], [], []
    o = 0
    for s in splits:
        a, n = parts[s], sizes[s]
        images[o:o + n] = a["images"]
        ids.append(np.array([f"{s}-{i:05d}" for i in range(n)]))
        split_col.append(np.full(n, s))
        codes.append(a["attributes"])
        cats.append(a["categories"])
        caps.append(np.array(_unpack(a["captions_utf8"], a["captions_offsets"])).reshape(n, N_CAPTIONS))
        inst.append(pd.DataFrame({
            "image": a["inst_image"].astype(np.int64) + o,
            "category": pd.Categorical.from_codes(a["inst_category"], categories=list(OBJECT_CATEGORIES)),
            "colour": pd.Categorical.from_codes(a["inst_colour"], categories=list(COLOUR_NAMES)),
            "x": a["inst_x"], "y": a["inst_y"], "size": a["inst_size"], "depth": a["inst_depth"]}))
        o += n
    ids = np.concatenate(ids)
    codes = np.concatenate(codes)
    attributes = attribute_frame({a: np.asarray(VOCAB[a])[codes[:, j]] for j, a in enumerate(ATTRIBUTES)}, ids)
    params = {"source": "procedural", "generator": GENERATOR_VERSION, "seed": int(seed),
              "image_size": int(image_size), "difficulty": float(difficulty),
              "sizes": {s: int(sizes[s]) for s in splits}, "shares": shares, "val_absent": sorted(val_absent)}
    return Dataset(ids=ids, images=images, attributes=attributes, split=np.concatenate(split_col),
                   categories=np.concatenate(cats), category_names=OBJECT_CATEGORIES,
                   source=source_text(seed, image_size, difficulty), captions=np.concatenate(caps),
                   instances=pd.concat(inst, ignore_index=True), params=params)
