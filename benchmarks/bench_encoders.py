"""Benchmark: embedding the book's data with the reference encoders, without the cache.

    python benchmarks/bench_encoders.py                      # both reference encoders
    python benchmarks/bench_encoders.py --encoders reference-cnn

Times what a cold cache costs the fixed-encoder chapters: the 2,983 labelled driving images
(2,000 training + 983 evaluation), the 1,000 caption-group images, and their 5,000 captions
in the query and in the document role. Target on the 2-core CPU: all of it in under 60 s per
encoder. Images and captions are generated (or read from the data cache) before timing.

Training record (``embdiag.encoders.train``, measured once, not re-run here): the default
3,600 steps of 128 pairs are sized to finish within 30 minutes at about 0.5 s per step (two
threads on a quiet machine; one thread on the busy 2-core machine measured 0.8-1.3 s per
step for either tower). A short run (ViT, one busy thread, 4,000-image pool, lr 2e-3, 200
steps in 4.5 minutes): the loss fell from 4.71 to 3.74 (4.85 at chance) and text→image
Hit@10 on the 1,000 caption groups reached 10.4% (Hit@1 1.3%; chance 1% and 0.1%).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from embdiag.data import load_dataset
from embdiag.encoders import REFERENCE_NAMES, load_encoder


def _time(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def timing(name: str, driving, captions) -> pd.DataFrame:
    enc = load_encoder(name)
    labelled = np.asarray(driving.images)
    texts = np.asarray(captions.captions).ravel()
    jobs = [
        ("labelled images", len(labelled), lambda: enc.encode_images(labelled)),
        ("caption images", len(captions), lambda: enc.encode_images(np.asarray(captions.images))),
        ("captions, query role", len(texts), lambda: enc.encode_texts(texts, "query")),
        ("captions, document role", len(texts), lambda: enc.encode_texts(texts, "document")),
    ]
    rows = []
    for what, n, fn in jobs:
        dt = _time(fn)
        rows.append({"encoder": name, "input": what, "rows": n, "wall s": round(dt, 2), "rows per s": round(n / dt)})
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoders", nargs="+", default=list(REFERENCE_NAMES))
    args = parser.parse_args(argv)
    driving = load_dataset("procedural", splits=("train", "val"))
    captions = load_dataset("procedural", splits=("caption",))
    for name in args.encoders:
        table = timing(name, driving, captions)
        print(table.to_string(index=False))
        print(f"{name}: {table['wall s'].sum():.1f} s in all (target: under 60 s)\n")


if __name__ == "__main__":
    main()
