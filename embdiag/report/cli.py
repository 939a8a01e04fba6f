"""``embdiag report``: measure a user's vectors and write the report, in this process.

The command checks its arguments and every input file's type, shape, labels and pairs first
(a bad file stops it within seconds), then reads the files again (memory-mapped), scans every
vector row once for NaN, inf and zero rows, measures (:func:`~embdiag.report.measure`) and
saves ``report.json``, one CSV per table and ``report.html`` (:mod:`embdiag.report.page`: the
same section functions the book's report chapter displays, one file that opens offline) into
a temporary folder beside ``--out``. It tests ``--fail-if`` against the metrics records of
``report.json`` (:mod:`embdiag.report.fail_if`) and moves the finished folder into place in
one rename, so ``--out`` holds a whole report or what it held before, never half of one.
``--fail-if`` rules are checked before anything is measured, against the metrics the inputs
will give (:func:`~embdiag.report.measurement.available_metrics`: metric names, the conditions
parsed from ``--compare`` / ``--compress`` / ``--index``, the label columns), and each rule's
outcome is recorded in ``report.json`` and on the page. No Jupyter kernel runs: the book
executes the same measurement and sections in its report chapter (:data:`CHAPTER`).

Exit status (:data:`OK`, :data:`VIOLATED`, :data:`BAD_INPUT`, :data:`FAILED`, the contract of
every command in :mod:`embdiag.exits`):

- 0: the report was written and no ``--fail-if`` rule is violated;
- 1: the report was written and at least one rule is violated (each violation is printed);
- 2: bad input: an unusable file or option (the message names it and the problem), including
  a ``--fail-if`` rule naming a metric, condition or attribute the report will not have (refused
  before anything is measured; the message lists what it will have) and an ``InputError`` raised
  while measuring;
- 3: the measurement failed for another reason (a bug, not the user's input): the traceback and
  the error are printed and ``--out`` is left as it was;
- 143: stopped by SIGTERM: the temporary folder removed, ``--out`` left as it was.

``--out`` is refused (2) when an input lies inside it or it is, lies inside or holds the book's
folders (:func:`~embdiag._atomic.out_refusal`), or while another run writes it
(:func:`~embdiag._atomic.claimed`); a full disk or a read-only folder is 2 naming ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from .._atomic import Busy, claimed, out_refusal, replace_folder, terminable, workspace
from ..data.files import (
    InputError,
    file_records_later,
    read_labels,
    read_pairs,
    read_qrels,
    read_vectors,
    split_labels,
    write_vector_files,
)
from ..exits import BAD_INPUT, FAILED, OK, VIOLATED, is_storage_error  # the statuses
from . import conditions, fail_if
from .measurement import (
    available_metrics,
    check_judgments,
    check_margin,
    check_quick_index,
    check_target_recall,
    qrels_depth,
)
from .options import ReportOptions, add_arguments, paths
from .sharded import check_address

#: The book's report chapter: a jupytext notebook with a ``parameters`` cell (:meth:`ReportOptions.parameters
#: <embdiag.report.options.ReportOptions.parameters>`), package data (``notebooks/21_report.py`` links to it).
CHAPTER = Path(__file__).resolve().parent / "chapter" / "21_report.py"
TITLE = "embdiag report"
REPORT_JSON, REPORT_HTML = "report.json", "report.html"

_DESCRIPTION = (
    "Measure geometry, label probes, neighbour identity and retrieval relevance of your own "
    "vectors, and what a second representation (a file, a storage format, a compression, an "
    "ANN index) changes. Writes DIR/report.html (one file that opens offline), DIR/report.json "
    "(every number) and one CSV per table."
)
_EPILOG = (
    "exit status: 0 written, no --fail-if violated; 1 written, a --fail-if violated; 2 bad input "
    "(file or option named); 3 the measurement failed (a bug); 143 stopped by SIGTERM (nothing left behind). "
    "--fail-if grammar: " + fail_if.GRAMMAR + "; a qualifier in brackets matches the condition "
    "or the attribute (e.g. probe_ba[weather]<0.5); NaN values count as violations."
)


def build_parser() -> argparse.ArgumentParser:
    """The ``embdiag report`` argument parser: every option of :class:`~embdiag.report.options.ReportOptions`.

    Example:
        >>> args = build_parser().parse_args(["v.npy", "--compress", "fp16,pca64", "--out", "report"])
        >>> args.compress, args.index, args.k, args.fail_if
        ('fp16,pca64', '', 10, [])
    """
    p = argparse.ArgumentParser(prog="embdiag report", description=_DESCRIPTION, epilog=_EPILOG)
    add_arguments(p)
    return p


# -- inputs ------------------------------------------------------------------------------------
def read_inputs(vectors, *, labels=None, compare=None, pairs=None, qrels=None, queries=None, scan: bool = True) -> dict:
    """Read and cross-check the report's files; return ``measure``'s data arguments.

    Returns ``{"vectors", "labels", "compare", "pairs", "qrels", "queries"}`` (absent inputs are
    None). ``compare`` (a path or several) becomes a list of
    :class:`~embdiag.report.conditions.CompareFile`, each named by its file's stem. ``qrels`` is
    :func:`~embdiag.data.files.read_qrels`'s list of judgments per query.
    ``pairs`` is ``(positives, query_indices)`` as :func:`~embdiag.data.files.read_pairs`
    returns it with ``allow_missing=True``: the positives of the queries that have any, and
    those queries' row indices (queries are VECTORS' rows, or ``--queries``' rows). Ids in the
    pairs file are matched against the labels' ``id`` column when there is one.

    ``scan=False``: vector files are not scanned for NaN, inf and zero rows (see
    :func:`~embdiag.data.files.read_vectors`).

    Raises:
        InputError: any reader's error; ``--compare`` with another number of rows than VECTORS, or
            two of them with one stem; ``--queries`` with another dimension than VECTORS.
    """
    X = read_vectors(vectors, "VECTORS", scan=scan)
    n, d = X.shape
    out = {"vectors": X, "labels": None, "compare": None, "pairs": None, "qrels": None, "queries": None}
    compared = paths(compare)
    stems = [Path(path).stem for path in compared]
    if len(set(stems)) < len(stems):
        same = next(stem for stem in stems if stems.count(stem) > 1)
        files = ", ".join(str(p) for p in compared if Path(p).stem == same)
        raise InputError(
            f"--compare: two files named {same!r} ({files}); each --compare is a condition named by its file's "
            "stem: rename one"
        )
    for path in compared:
        Y = read_vectors(path, "--compare", scan=scan)
        if len(Y) != n:
            raise InputError(
                f"{path} (--compare): has {len(Y)} rows, VECTORS ({vectors}) has {n}; "
                "--compare must hold a second representation of the same items, in the same order"
            )
        file = conditions.file_condition(Y, name=Path(path).stem, source=Path(path).name)
        out["compare"] = [*(out["compare"] or []), file]
    if queries is not None:
        Q = read_vectors(queries, "--queries", scan=scan)
        if Q.shape[1] != d:
            raise InputError(
                f"{queries} (--queries): rows have dimension {Q.shape[1]}, VECTORS ({vectors}) has {d}; "
                "queries are searched against VECTORS"
            )
        out["queries"] = Q
    if labels is not None:
        out["labels"] = read_labels(labels, n, allow_missing=True)
    if pairs is not None:
        ids = out["labels"].index if out["labels"] is not None and out["labels"].index.name == "id" else None
        n_queries = n if queries is None else len(out["queries"])
        out["pairs"] = read_pairs(
            pairs, n_queries, n, query_ids=ids if queries is None else None, target_ids=ids, allow_missing=True
        )
    if qrels is not None:
        if pairs is not None:
            raise InputError("--qrels: give --pairs or --qrels, not both (each judges what is relevant)")
        ids = out["labels"].index if out["labels"] is not None and out["labels"].index.name == "id" else None
        n_queries = n if queries is None else len(out["queries"])
        out["qrels"] = read_qrels(qrels, n_queries, n, query_ids=ids if queries is None else None, document_ids=ids)
    return out


def project_vectors(encoder: str = "reference-cnn") -> tuple[np.ndarray, pd.DataFrame, str]:
    """The project's own cached embeddings as report inputs: ``encoder``'s training and evaluation
    vectors of the procedural driving scenes (in that order) with their weather, scene and
    time-of-day labels, and one sentence naming the data and the encoder. What the book's report
    chapter measures when no file is given."""
    from ..encoders.vectors import driving_vectors

    v = driving_vectors(encoder)
    labels = pd.DataFrame({a: np.concatenate([v.train_labels[a], v.val_labels[a]]) for a in v.attributes})
    return np.vstack([v.train, v.val]), labels, f"{v.source} (training and evaluation rows together)"


def export_project_vectors(out_dir, encoder: str = "reference-cnn") -> dict[str, Path]:
    """Write :func:`project_vectors` as files ``embdiag report`` reads: ``vectors.npy`` (float32,
    n x d) and ``labels.csv`` (one row per vector: ``id`` and one column per attribute) in
    ``out_dir`` (created if needed). Returns ``{"vectors": path, "labels": path}``."""
    vectors, labels, _ = project_vectors(encoder)
    labels.insert(0, "id", np.arange(len(labels)))
    return write_vector_files(out_dir, vectors, labels)


def export_main(argv=None) -> int:
    """``embdiag vectors``: write the project's cached embeddings for ``embdiag report``."""
    p = argparse.ArgumentParser(
        prog="embdiag vectors",
        description=(
            "Write the project's cached embeddings of the procedural driving scenes (training and evaluation "
            "images, the reference encoder's by default) and their weather, scene and time-of-day labels as "
            "DIR/vectors.npy and DIR/labels.csv: inputs to try `embdiag report` on."
        ),
    )
    p.add_argument("--encoder", default="reference-cnn", help="a registered encoder (default reference-cnn)")
    p.add_argument(
        "--dataset",
        default="procedural",
        choices=("procedural", "wordnet"),
        help="procedural driving "
        "scenes (default), or wordnet: WordNet glosses with id, split, pos and lexname labels "
        "(--encoder wordllama:l2_supercat; embdiag.encoders.wordnet.export_wordnet_vectors)",
    )
    p.add_argument("--out", metavar="DIR", required=True, help="output folder")
    args = p.parse_args(argv)
    export = export_project_vectors
    if args.dataset == "wordnet":
        from ..encoders.wordnet import export_wordnet_vectors as export
    refusal = out_refusal(Path(args.out).expanduser().resolve())
    if refusal:
        print(f"embdiag vectors: {refusal}", file=sys.stderr)
        return BAD_INPUT
    try:
        with terminable(), claimed(Path(args.out).expanduser().resolve(), make=True):
            paths = export(args.out, args.encoder)
    except (ValueError, Busy) as e:  # bad input: an unknown encoder; or another run writing --out
        print(f"embdiag vectors: {e}", file=sys.stderr)
        return BAD_INPUT
    except OSError as e:  # a read-only, forbidden or full folder: both files written or neither
        print(
            f"embdiag vectors: {args.out} (--out): cannot write ({e.strerror or e}); what was there is unchanged",
            file=sys.stderr,
        )
        return BAD_INPUT
    print(paths["vectors"])
    print(paths["labels"])
    _say(f"now: embdiag report {paths['vectors']} --labels {paths['labels']} --compress fp16,int8 --out REPORT_DIR")
    return OK


def chapter_inputs(
    vectors_path=None,
    *,
    labels_path=None,
    compare_path=None,
    pairs_path=None,
    qrels_path=None,
    queries_path=None,
    encoder: str = "reference-cnn",
    cluster: str | None = None,
    index: str = "",
) -> tuple[dict, str, Future | dict]:
    """What the report chapter measures: ``measure``'s data arguments, one sentence naming the
    data, and the files read (:func:`report_inputs`, a future of option ->
    :func:`~embdiag.data.files.file_record`: name, size and SHA-256, hashed in a background
    thread while the report is measured; :func:`~embdiag.report.measure` waits for it).
    Without ``vectors_path``, the project's cached ``encoder`` embeddings of the procedural
    driving scenes with their labels (:func:`project_vectors`) and no files. ``compare_path``:
    one path or a list of them."""
    if vectors_path is None:
        vectors, labels, source = project_vectors(encoder)
        data = {"vectors": vectors, "labels": labels, "compare": None, "pairs": None, "qrels": None, "queries": None}
        return data, source, {}
    return report_inputs(
        ReportOptions(
            vectors=vectors_path,
            labels=labels_path,
            compare=compare_path,
            pairs=pairs_path,
            qrels=qrels_path,
            queries=queries_path,
            cluster=cluster,
            index=index,
        )
    )


def report_inputs(options: ReportOptions) -> tuple[dict, str, Future]:
    """What the report of ``options`` measures: its files read and scanned (:func:`read_inputs`;
    on ``options.cluster``, connected, as Ray tasks over row shards:
    :func:`~embdiag.report.sharded.sharded_check`), one sentence naming them, and a future of
    their records (name, size, SHA-256), the prebuilt index files of ``--index`` included."""
    data = read_inputs(**options.inputs(), scan=options.cluster is None)
    given = options.files()
    files = file_records_later(given | conditions.index_files(options.index))
    if options.cluster is not None:
        from .sharded import sharded_check

        for key, option in (("vectors", "VECTORS"), ("queries", "--queries")):
            if data[key] is not None:
                sharded_check(data[key], f"{given[option]} ({option})")
        for file in data["compare"] or ():
            sharded_check(file.array, f"{given[f'--compare {file.name}']} (--compare)")
    source = "the user's vectors " + ", ".join(f"{Path(path).name} ({option})" for option, path in given.items())
    return data, source, files


def _check_rules(rules, conds, data: dict, args: argparse.Namespace) -> None:
    """Raise ``InputError`` for a ``--fail-if`` rule naming a metric, condition or attribute that
    the report of these inputs will not have (before anything is measured)."""
    attributes = []
    if data["labels"] is not None:
        attributes = [str(c) for c in split_labels(data["labels"], f"{args.labels} (--labels)")[0].columns]
    fail_if.check(
        rules,
        available_metrics(
            conds,
            attributes,
            k=args.k,
            pairs=data["pairs"] is not None,
            self_search=data["queries"] is None,
            stress=args.stress,
            qrels_depth=None
            if data["qrels"] is None
            else qrels_depth(args.k, len(data["vectors"]), data["queries"] is None),
            n_gallery=len(data["vectors"]),
        ),
    )


def _check_k(k: int, n: int, vectors, *, self_search: bool, quick: bool) -> None:
    """The measurement's one rule on ``k`` (:func:`~embdiag.report.measurement.check_k`), before the chapter runs."""
    from .measurement import check_k

    check_k(k, n, self_search=self_search, quick=quick, name=f"{vectors} (VECTORS)")


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError(f"{out} (--out): exists and is not a folder")
    blocked = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise InputError(f"{out} (--out): {blocked} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / REPORT_JSON).is_file():
        raise InputError(
            f"{out} (--out): a folder that is not empty and holds no {REPORT_JSON}; it would be "
            "replaced: choose a new folder or a previous report's"
        )


def _given(args: argparse.Namespace) -> dict:
    """The report's input files given: the option as the user writes it -> the path as given, the
    prebuilt index files of ``--index`` included."""
    given = ReportOptions.from_namespace(args).files()
    try:
        return given | conditions.index_files(args.index)
    except InputError:  # a malformed spec: refused where the conditions are parsed
        return given


class ReportFailed(RuntimeError):
    """The measurement failed for a reason other than the input (an ``InputError`` stays one)."""


def write_report(options: ReportOptions, folder: Path, *, progress: bool = True) -> None:
    """Measure ``options``' inputs in this process and save ``report.json``, one CSV per table and
    ``report.html`` (:func:`embdiag.report.page.render`, index speeds shown) into ``folder``.

    Raises:
        InputError: the inputs' (read, scanned and measured here).
        OSError: ``folder`` cannot be written.
        ReportFailed: anything else (the traceback is printed to stderr).
    """
    from ..cluster import maybe_connect
    from . import html
    from .measurement import measure
    from .page import render

    try:
        with maybe_connect(options.cluster), ThreadPoolExecutor(1) as pool:  # one connection for all searches
            bundle = pool.submit(html.prepare)  # the page's chart bundle, made while the report is measured
            data, source, files = report_inputs(options)
            report = measure(**data, **options.measure_arguments(), progress=progress, sources=files)
            bundle.result()
        report.save(folder)
        page = render(report, source, title=f"{TITLE}: {Path(options.vectors).name}", arguments=options.command_line())
        (folder / REPORT_HTML).write_text(page, encoding="utf-8")
    except (InputError, OSError, KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        raise ReportFailed(f"the measurement failed: {type(e).__name__}: {e}") from None


def read_metrics(path: Path) -> pd.DataFrame:
    """The ``metrics`` records of a saved ``report.json`` as a table."""
    try:
        records = json.loads(Path(path).read_text(encoding="utf-8"))["metrics"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ReportFailed(f"the report wrote no usable {path.name} ({type(e).__name__}: {e})") from None
    frame = pd.DataFrame.from_records(records)
    if frame.empty:
        frame = pd.DataFrame(columns=["section", "metric", "condition", "attribute", "value", "low", "high"])
    missing = {"metric", "value"} - set(frame.columns)
    if missing:
        raise ReportFailed(f"the report wrote {path.name} whose metrics records lack {', '.join(sorted(missing))}")
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce")  # anything but a number: NaN, a violation
    return frame


def _say(message: str) -> None:
    print(f"embdiag report: {message}", file=sys.stderr, flush=True)


def main(argv=None, *, progress: bool = True) -> int:
    """Run ``embdiag report`` with ``argv`` (default: the command line); return the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # -h (0) or a usage error (2, printed by argparse)
        return e.code if isinstance(e.code, int) else BAD_INPUT
    out = Path(args.out).expanduser().resolve()
    try:
        rules = [fail_if.parse(expr) for expr in args.fail_if]
        refusal = out_refusal(out, _given(args))
        if refusal:
            raise InputError(refusal)
        _check_out(out)
        start = time.perf_counter()
        data = read_inputs(
            **ReportOptions.from_namespace(args).inputs(), scan=False
        )  # the chapter scans the rows, once
        n, d = data["vectors"].shape
        _check_k(args.k, n, args.vectors, self_search=args.queries is None, quick=args.quick)
        if args.stress and data["labels"] is None:
            raise InputError("--stress: needs --labels (the stress grid is measured on label probes)")
        # the chapter builds its conditions with this parser again; a bad spec stops the command here
        conds = conditions.parse_conditions(
            args.compress, args.index, n=n, d=d, seed=args.seed, compare=data["compare"], vectors=data["vectors"]
        )
        check_quick_index(conds, n, args.quick)
        check_margin(args.margin)
        check_target_recall(args.target_recall)
        n_pool = n if data["queries"] is None else len(data["queries"])
        check_judgments(data["pairs"], data["qrels"], n_pool, n, self_search=args.queries is None)
        _check_rules(rules, conds, data, args)
        if args.cluster is not None:
            check_address(args.cluster)
        del data  # read again to measure: memory-mapped arrays cost nothing here
        if progress:
            _say(f"inputs checked in {time.perf_counter() - start:.1f} s ({n} x {d}); measuring ...")
        violated, passing = _write(out, args, rules, progress)
    except (InputError, Busy) as e:
        _say(str(e))
        return BAD_INPUT
    except ReportFailed as e:
        _say(str(e))
        return FAILED
    if progress:
        _say(f"wrote {out} in {time.perf_counter() - start:.1f} s")
    print(out / REPORT_HTML)
    for line in violated:
        print(f"--fail-if violated: {line}")
    if passing is not None:
        print(passing)
    return VIOLATED if violated else OK


def _write(out: Path, args: argparse.Namespace, rules, progress: bool) -> tuple[list[str], str | None]:
    """Write the report into a temporary folder beside ``out`` (:func:`write_report`) and put the
    finished report in its place (one run at a time: :func:`~embdiag._atomic.claimed`; SIGTERM
    removes the temporary: :func:`~embdiag._atomic.terminable`); return the ``--fail-if``
    violations and the smallest passing condition's line.

    Raises:
        InputError: the inputs'; or a full disk or read-only folder, naming ``--out``, what it held kept.
        ReportFailed: the measurement failed.
    """
    try:
        with terminable(), claimed(out):
            tmp = _workspace(out)
            try:
                write_report(ReportOptions.from_namespace(args), tmp, progress=progress)
                violated = fail_if.violations(rules, read_metrics(tmp / REPORT_JSON), strict=False)
                passing = _smallest_passing(tmp / REPORT_JSON) if rules else None
                os.chmod(tmp, 0o755)  # mkdtemp makes it private; the report is an ordinary folder
                replace_folder(tmp, out)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    except OSError as e:
        if not is_storage_error(e):
            raise
        raise InputError(
            f"{out} (--out): cannot write: {e.strerror or f'a short write, {e}'} (a full disk or quota, or a "
            "read-only or forbidden folder); what it held is kept"
        ) from None
    return violated, passing


def _smallest_passing(path: Path) -> str | None:
    """The line naming :func:`~embdiag.report.sections.frontier.smallest_passing` of a saved report's
    frontier (``none`` when no condition passes every rule), or None when it has no frontier."""
    from .sections.frontier import smallest_passing

    frontier = json.loads(path.read_text(encoding="utf-8")).get("tables", {}).get("frontier")
    if not frontier:
        return None
    best = smallest_passing(pd.DataFrame.from_records(frontier))
    return "smallest condition passing every rule: " + (
        "none"
        if best is None
        else f"{best['condition']} ({best['bytes_per_vector']:,.0f} bytes per vector, "
        f"{best['times_smaller']:.3g} times smaller than VECTORS as float32)"
    )


def _workspace(out: Path) -> Path:
    """A new private folder beside ``out`` (its parents made), where the report is written
    before it replaces ``out``; a folder that cannot be made or written is bad input."""
    try:
        return workspace(out)
    except OSError as e:
        raise InputError(f"{out} (--out): cannot write in {out.parent}: {e.strerror or e}") from None


if __name__ == "__main__":
    sys.exit(main())
