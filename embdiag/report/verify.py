"""``embdiag verify DIR``: recompute a report from the inputs its ``report.json`` names, compare every number.

A report names each file it read by SHA-256 (``inputs.files``) and records the options it was
measured with (``inputs.options``, ``k``, ``seed``, ``quick``, ``min_support``). Verification:

1. ``report.json`` is read and checked against its JSON Schema (:data:`SCHEMA_FILE`, the
   version named in its ``schema`` field);
2. each input is found (``--inputs FOLDER``/name first, else the path the report recorded) and
   its SHA-256 compared with the recorded one: a changed input is a difference;
3. the report is measured again with :func:`~embdiag.report.measure`, as ``embdiag report``
   measures it (each input hashed once, each index search run once: no speed is compared), and
   every value of the two JSON documents is compared (:func:`differences`):
   numbers within ``atol + rtol * |recorded|``, everything else exactly, except the package
   versions (printed when they differ), the files (step 2) and the run's ``timings`` (index
   build seconds and queries per second, which no rerun reproduces).

The last line says how long the verification took. Exit status (:mod:`embdiag.exits`): 0 when
everything matches, 1 naming each difference, 2 when
the folder, its ``report.json`` or an input cannot be read, or the report names no input file
(it measured the project's cached vectors: the book's report chapter re-executes those).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

from .. import exits
from ..data.files import InputError, sha256_of
from .measurement import SCHEMA
from .options import ReportOptions

__all__ = ["SCHEMA_FILE", "RTOL", "ATOL", "load", "differences", "verify", "main"]

#: The JSON Schema of report.json (this version: :data:`~embdiag.report.measurement.SCHEMA`).
SCHEMA_FILE = Path(__file__).with_name("report.schema.json")
#: Default tolerance of a recomputed number: ``|recomputed - recorded| <= ATOL + RTOL * |recorded|``.
RTOL, ATOL = 1e-9, 1e-12
#: Parts of report.json that are not numbers of the measurement (checked otherwise, or only shown).
_NOT_COMPARED = (("inputs", "files"), ("inputs", "versions"))
_SHOWN = 20


def load(folder) -> dict:
    """``folder``/report.json, checked against :data:`SCHEMA_FILE`.

    Raises:
        InputError: naming the folder or file and what is wrong (missing, not JSON, another
            schema, or the first place where it departs from the schema).
    """
    import jsonschema

    folder = Path(folder)
    path = folder / "report.json"
    if not folder.is_dir():
        raise InputError(f"{folder} (DIR): not a folder")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror or e})") from None
    except ValueError as e:
        raise InputError(f"{path}: not JSON ({e})") from None
    if not isinstance(document, dict) or document.get("schema") != SCHEMA:
        found = document.get("schema") if isinstance(document, dict) else None
        raise InputError(f"{path}: schema {found!r}, this embdiag verifies {SCHEMA!r}")
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(document))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise InputError(f"{path}: does not follow {SCHEMA} at {where}: {error.message}")
    return document


def _located(files: dict, inputs: Path | None) -> dict[str, Path]:
    """Each recorded input's file: ``inputs``/name when given and there, else the recorded path."""
    out = {}
    for option, record in files.items():
        candidates = ([inputs / record["file"]] if inputs is not None else []) + [Path(record["path"])]
        found = next((p for p in candidates if p.is_file()), None)
        if found is None:
            tried = ", ".join(str(p) for p in candidates)
            raise InputError(f"{option}: the report's input {record['file']} is not found (looked for {tried})")
        out[option] = found
    return out


def _measured_again(document: dict, paths: dict[str, Path], digests: dict[str, str]) -> dict:
    """The report's JSON measured again from the files ``paths`` (SHA-256 ``digests``, computed
    once) with its recorded options; each index search runs once (no speed is compared)."""
    from ..data.files import file_record
    from .cli import read_inputs
    from .conditions import with_index_files
    from .measurement import measure

    options = ReportOptions.from_report(document["inputs"], paths)
    index_files = {o: str(p) for o, p in paths.items() if o.startswith("--index ")}
    report = measure(
        **read_inputs(**options.inputs()),
        **replace(options, index=with_index_files(options.index, index_files)).measure_arguments(),
        sources={option: file_record(path, digests[option]) for option, path in paths.items()},
        progress=False,
        timed=False,
    )
    again = json.loads(json.dumps(report.to_json(), allow_nan=False))  # as saved: tuples become lists
    again["inputs"]["options"]["index"] = options.index  # index files found elsewhere: checked by SHA-256
    return again


def _close(a, b, rtol: float, atol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):  # True is not 1 here
        return type(a) is type(b) and a == b
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return a == b
    return math.isfinite(b) and abs(b - a) <= atol + rtol * abs(a)


def _label(item, index: int) -> str:
    """How a list item is named in a difference: its identifying fields, else its index."""
    if isinstance(item, dict):
        keys = [k for k in ("section", "metric", "condition", "attribute", "representation", "space", "rule", "name")]
        named = [f"{k}={item[k]}" for k in keys if isinstance(item.get(k), str) and item[k] != ""]
        if named:
            return "[" + ", ".join(named) + "]"
    return f"[{index}]"


def differences(recorded, recomputed, *, rtol: float = RTOL, atol: float = ATOL, path: str = "") -> list[str]:
    """Every place where two report JSON documents differ: numbers beyond ``atol + rtol *
    |recorded|``, any other value, key or length that is not the same (one line each, naming it).

    Example:
        >>> a = {"metrics": [{"metric": "overlap@10", "condition": "fp16", "value": 0.99}], "k": 10}
        >>> b = {"metrics": [{"metric": "overlap@10", "condition": "fp16", "value": 0.98}], "k": 10}
        >>> differences(a, b)
        ['metrics[metric=overlap@10, condition=fp16].value: recorded 0.99, recomputed 0.98']
        >>> differences(a, a), differences({"x": 1.0}, {"x": 1.0 + 1e-12})
        ([], [])
    """
    if isinstance(recorded, dict) and isinstance(recomputed, dict):
        out = []
        for key in sorted(set(recorded) | set(recomputed), key=str):
            where = f"{path}.{key}" if path else str(key)
            if tuple(where.split(".")) in _NOT_COMPARED:
                continue
            if key not in recomputed or key not in recorded:
                out.append(f"{where}: {'not recomputed' if key not in recomputed else 'not recorded'}")
            else:
                out += differences(recorded[key], recomputed[key], rtol=rtol, atol=atol, path=where)
        return out
    if isinstance(recorded, list) and isinstance(recomputed, list):
        if len(recorded) != len(recomputed):
            return [f"{path}: {len(recorded)} items recorded, {len(recomputed)} recomputed"]
        out = []
        for i, (a, b) in enumerate(zip(recorded, recomputed)):
            out += differences(a, b, rtol=rtol, atol=atol, path=path + _label(a, i))
        return out
    if _close(recorded, recomputed, rtol, atol):
        return []
    return [f"{path}: recorded {recorded!r}, recomputed {recomputed!r}"]


def verify(folder, *, inputs=None, rtol: float = RTOL, atol: float = ATOL) -> tuple[list[str], list[str]]:
    """``(differences, notes)`` of the report in ``folder`` recomputed (module doc): changed inputs
    and every number that differs; the notes say what was compared and any version that differs.

    Raises:
        InputError: the folder, its report.json or an input cannot be read, or no file is named.
    """
    document = load(folder)
    files = document["inputs"]["files"]
    if "VECTORS" not in files:
        raise InputError(
            f"{Path(folder) / 'report.json'}: names no input file (it measured the project's cached vectors); "
            "the book's report chapter re-executes those (embdiag chapter report)"
        )
    paths = _located(files, None if inputs is None else Path(inputs))
    digests = {option: sha256_of(path) for option, path in paths.items()}
    changed = [
        f"{option} {path}: SHA-256 {digests[option]} now, {files[option]['sha256']} recorded (the input changed)"
        for option, path in paths.items()
        if digests[option] != files[option]["sha256"]
    ]
    if changed:
        return changed, []
    again = _measured_again(document, paths, digests)
    untimed = lambda doc: {key: value for key, value in doc.items() if key != "timings"}  # noqa: E731
    found = differences(untimed(document), untimed(again), rtol=rtol, atol=atol)
    versions = document["inputs"]["versions"]
    notes = [
        f"{pkg} {versions.get(pkg)} made the report, {now} recomputed it"
        for pkg, now in again["inputs"]["versions"].items()
        if versions.get(pkg) != now
    ]
    return found, notes


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="embdiag verify",
        description="recompute a report from the inputs its report.json names (by SHA-256) and compare every number",
    )
    p.add_argument("dir", metavar="DIR", help="a folder written by embdiag report (holding report.json)")
    p.add_argument("--inputs", metavar="FOLDER", help="look for the report's input files here first (by name)")
    p.add_argument("--rtol", type=float, default=RTOL, help=f"relative tolerance of a number (default {RTOL:g})")
    p.add_argument("--atol", type=float, default=ATOL, help=f"absolute tolerance of a number (default {ATOL:g})")
    return p


def main(argv=None) -> int:
    """Run ``embdiag verify``; return its exit status (module doc)."""
    try:
        args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else exits.BAD_INPUT
    try:
        if not (args.rtol >= 0 and args.atol >= 0 and math.isfinite(args.rtol + args.atol)):
            raise InputError(f"--rtol, --atol: expected finite tolerances of at least 0, got {args.rtol}, {args.atol}")
        started = time.perf_counter()
        found, notes = verify(args.dir, inputs=args.inputs, rtol=args.rtol, atol=args.atol)
        took = f"{time.perf_counter() - started:.1f} s"
    except InputError as e:
        print(f"embdiag verify: {e}", file=sys.stderr)
        return exits.BAD_INPUT
    for note in notes:
        print(f"note: {note}")
    if found:
        for line in found[:_SHOWN]:
            print(f"differs: {line}")
        more = f" ({len(found) - _SHOWN} more not shown)" if len(found) > _SHOWN else ""
        print(f"embdiag verify: {len(found)} difference(s){more}, in {took}", file=sys.stderr)
        return exits.VIOLATED
    print(
        f"verified: {Path(args.dir) / 'report.json'} recomputed from its inputs (SHA-256 unchanged); every number "
        f"within {args.atol:g} + {args.rtol:g} x |recorded|, in {took}"
    )
    return exits.OK
