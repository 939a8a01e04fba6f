"""Benchmark: reading WordNet 3.0 and embedding every gloss and example with WordLlama l2_supercat.

    python benchmarks/bench_wordnet.py                # the installed database (/usr/share/wordnet)
    python benchmarks/bench_wordnet.py --data-dir DIR

Times what `embdiag embeddings` would cost on the whole database rather than the book's sample:
parsing the four data files, loading the pinned model (digests checked), and embedding all
117,659 definitions and 48,339 examples. Target on the 2-core CPU: the embedding under 30 s.
Measured on the busy 2-core machine (one core taken by training): parse 6.0 s, load 0.7 s,
definitions 12.1 s, examples 3.4 s: 15.5 s for the 165,998 texts (about 10,000 and 14,000 texts
per second; 18-23 s before the encoder batched texts by length).
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from embdiag.data.wordnet import read_wordnet
from embdiag.encoders.wordllama import load_wordllama


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="folder of data.noun etc. (default /usr/share/wordnet)")
    args = parser.parse_args(argv)
    synsets, parse = _timed(lambda: read_wordnet(args.data_dir))
    encoder, load = _timed(load_wordllama)
    texts = {"definitions": [s.definition for s in synsets], "examples": [e for s in synsets for e in s.examples]}
    rows = [
        {"step": "parse the data files", "rows": len(synsets), "wall s": round(parse, 2)},
        {"step": "load the pinned model", "rows": 1, "wall s": round(load, 2)},
    ]
    for what, batch in texts.items():
        _, dt = _timed(lambda: encoder.encode_texts(batch))
        rows.append({"step": f"embed all {what}", "rows": len(batch), "wall s": round(dt, 2)})
    table = pd.DataFrame(rows).assign(**{"rows per s": lambda t: (t["rows"] / t["wall s"]).round()})
    print(table.to_string(index=False))
    embedding = table["wall s"].iloc[2:].sum()
    print(f"embedding {sum(map(len, texts.values())):,} texts: {embedding:.1f} s (target: under 30 s)")


if __name__ == "__main__":
    main()
