"""``embdiag report``: measure a user's vectors by running the report chapter on them.

The command checks its arguments and every input file's type, shape, labels and pairs first
(a bad file stops it within seconds), then executes the report chapter (:data:`CHAPTER`) with
papermill in a temporary folder beside ``--out``, passing the inputs as parameters; the chapter
reads the files, scans every vector row once for NaN, inf and zero rows before it measures
anything, and saves ``report.json`` and one CSV per table there. The command renders the executed chapter to
``report.html`` (:func:`embdiag.report.html.render`), tests ``--fail-if`` against the metrics
records of ``report.json`` (:mod:`embdiag.report.fail_if`) and moves the finished folder into
place in one rename, so ``--out`` holds a whole report or what it held before, never half of one.
``--fail-if`` rules are checked before the chapter runs, against the metrics the inputs will give
(:func:`~embdiag.report.measurement.available_metrics`: metric names, the conditions parsed from
``--compare`` / ``--compress`` / ``--index``, the label columns), and the chapter records each
rule's outcome in ``report.json`` and on the page.

Exit status (:data:`OK`, :data:`VIOLATED`, :data:`BAD_INPUT`, :data:`FAILED`, the contract of
every command in :mod:`embdiag.exits`):

- 0: the report was written and no ``--fail-if`` rule is violated;
- 1: the report was written and at least one rule is violated (each violation is printed);
- 2: bad input: an unusable file or option (the message names it and the problem), including
  a ``--fail-if`` rule naming a metric, condition or attribute the report will not have (refused
  before anything is measured; the message lists what it will have) and an ``InputError`` raised
  by the chapter;
- 3: the chapter failed for another reason (a bug, not the user's input): cell and error are
  printed and ``--out`` is left as it was;
- 143: stopped by SIGTERM: the kernel is stopped, the temporary folder removed, ``--out`` left
  as it was.

``--out`` is refused (2) when an input lies inside it or it is, lies inside or holds the book's
folders (:func:`~embdiag._atomic.out_refusal`), or while another run writes it
(:func:`~embdiag._atomic.claimed`); a full disk or a read-only folder, met by the command or by
the chapter's kernel, is 2 naming ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from concurrent.futures import Future
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
from ..exits import BAD_INPUT, FAILED, OK, VIOLATED, is_storage_error, kernel_storage_error  # the statuses
from . import conditions, fail_if
from .measurement import available_metrics, check_judgments, check_margin, check_quick_index, qrels_depth
from .options import ReportOptions, add_arguments
from .sharded import check_address

#: The report chapter: a jupytext notebook with a ``parameters`` cell (see :func:`chapter_parameters`),
#: package data, so that an installed wheel runs it anywhere (``notebooks/21_report.py`` links to it).
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
    "(file or option named); 3 the report chapter failed; 143 stopped by SIGTERM (nothing left behind). "
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
    None). ``qrels`` is :func:`~embdiag.data.files.read_qrels`'s list of judgments per query.
    ``pairs`` is ``(positives, query_indices)`` as :func:`~embdiag.data.files.read_pairs`
    returns it with ``allow_missing=True``: the positives of the queries that have any, and
    those queries' row indices (queries are VECTORS' rows, or ``--queries``' rows). Ids in the
    pairs file are matched against the labels' ``id`` column when there is one.

    ``scan=False``: vector files are not scanned for NaN, inf and zero rows (see
    :func:`~embdiag.data.files.read_vectors`).

    Raises:
        InputError: any reader's error; ``--compare`` with another number of rows than VECTORS;
            ``--queries`` with another dimension than VECTORS.
    """
    X = read_vectors(vectors, "VECTORS", scan=scan)
    n, d = X.shape
    out = {"vectors": X, "labels": None, "compare": None, "pairs": None, "qrels": None, "queries": None}
    if compare is not None:
        Y = read_vectors(compare, "--compare", scan=scan)
        if len(Y) != n:
            raise InputError(
                f"{compare} (--compare): has {len(Y)} rows, VECTORS ({vectors}) has {n}; "
                "--compare must hold a second representation of the same items, in the same order"
            )
        out["compare"] = Y
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
    """What the report chapter measures: ``measure``'s data arguments (:func:`read_inputs`), one
    sentence naming the data, and the files read (a future of option ->
    :func:`~embdiag.data.files.file_record`: name, size and SHA-256, hashed in a background
    thread while the report is measured; :func:`~embdiag.report.measure` waits for it).
    Without ``vectors_path``, the project's cached ``encoder`` embeddings of the procedural
    driving scenes with their labels (:func:`project_vectors`) and no files. With ``cluster``
    (connected: :func:`embdiag.cluster.maybe_connect`) the vector files' check for NaN, inf and
    zero rows runs as Ray tasks over row shards (:func:`~embdiag.report.sharded.sharded_check`).
    The prebuilt index files named in ``index`` (``file:`` items) are recorded with the others."""
    if vectors_path is None:
        vectors, labels, source = project_vectors(encoder)
        data = {"vectors": vectors, "labels": labels, "compare": None, "pairs": None, "qrels": None, "queries": None}
        return data, source, {}
    options = ReportOptions(
        vectors=vectors_path,
        labels=labels_path,
        compare=compare_path,
        pairs=pairs_path,
        qrels=qrels_path,
        queries=queries_path,
    )
    data = read_inputs(**options.inputs(), scan=cluster is None)
    given = options.files()
    files = file_records_later(given | conditions.index_files(index))
    if cluster is not None:
        from .sharded import sharded_check

        for key, option in (("vectors", "VECTORS"), ("compare", "--compare"), ("queries", "--queries")):
            if data[key] is not None:
                sharded_check(data[key], f"{given[option]} ({option})")
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


def chapter_parameters(args: argparse.Namespace, out_dir: Path, progress: bool = True) -> dict:
    """The parameters the chapter is executed with: the options' (:meth:`ReportOptions.parameters
    <embdiag.report.options.ReportOptions.parameters>`: file paths as absolute strings, None when
    absent), ``out_dir`` (where the chapter saves report.json and the CSVs), ``progress`` (bars on
    the kernel's stderr, which the command shows as it runs) and ``timings`` (the page shows this
    run's speeds).

    Example:
        >>> args = build_parser().parse_args(["/embdiag-example/v.npy", "--index", "hnsw", "--out", "r"])
        >>> p = chapter_parameters(args, Path("/embdiag-example/.r.tmp"), progress=False)
        >>> p["vectors_path"], p["labels_path"], p["compress"], p["index"], p["out_dir"]
        ('/embdiag-example/v.npy', None, '', 'hnsw', '/embdiag-example/.r.tmp')
    """
    return ReportOptions.from_namespace(args).parameters() | {
        "out_dir": str(out_dir),
        "progress": progress,
        "timings": True,
    }


# -- running -----------------------------------------------------------------------------------
class ChapterFailed(RuntimeError):
    """The chapter raised (an ``InputError`` is re-raised as such, not as this)."""


def _read_chapter(chapter: Path):
    import nbformat

    chapter = Path(chapter)
    if chapter.suffix == ".ipynb":
        nb = nbformat.read(chapter, as_version=4)
    else:
        import jupytext

        nb = jupytext.read(chapter)
    nb.metadata.setdefault("kernelspec", {"display_name": "Python 3", "language": "python", "name": "python3"})
    return nb


def run_chapter(chapter, parameters: dict, cwd: Path, *, progress: bool = True):
    """Execute ``chapter`` with papermill (working directory ``cwd``); return the executed notebook.

    The kernel's stderr (progress bars) is streamed to ours when ``progress``.

    Raises:
        InputError: the chapter raised an ``InputError`` (its message).
        OSError: the chapter could not write (a full disk, a read-only folder:
            :func:`~embdiag.exits.kernel_storage_error`).
        ChapterFailed: the chapter raised anything else (cell number, error name and message).
    """
    import papermill

    from .._papermill import run_notebook

    nb = _read_chapter(chapter)
    try:  # the chapter's own parameters, set by chapter_parameters
        return run_notebook(nb, None, parameters, cwd, stderr=sys.stderr if progress else None)
    except papermill.PapermillExecutionError as e:
        if e.ename == "InputError":
            raise InputError(e.evalue) from None
        full = kernel_storage_error(e.ename, e.evalue)
        if full is not None:
            raise full from None
        raise ChapterFailed(
            f"the report chapter {Path(chapter).name} failed in cell {e.exec_count}: {e.ename}: {e.evalue}"
        ) from None


def read_metrics(path: Path) -> pd.DataFrame:
    """The ``metrics`` records of a saved ``report.json`` as a table."""
    try:
        records = json.loads(Path(path).read_text(encoding="utf-8"))["metrics"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ChapterFailed(f"the report chapter wrote no usable {path.name} ({type(e).__name__}: {e})") from None
    frame = pd.DataFrame.from_records(records)
    if frame.empty:
        frame = pd.DataFrame(columns=["section", "metric", "condition", "attribute", "value", "low", "high"])
    missing = {"metric", "value"} - set(frame.columns)
    if missing:
        raise ChapterFailed(
            f"the report chapter wrote {path.name} whose metrics records lack {', '.join(sorted(missing))}"
        )
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
        n_pool = n if data["queries"] is None else len(data["queries"])
        check_judgments(data["pairs"], data["qrels"], n_pool, n, self_search=args.queries is None)
        _check_rules(rules, conds, data, args)
        if args.cluster is not None:
            check_address(args.cluster)
        del data  # the chapter reads the files again; memory-mapped arrays cost nothing here
        if progress:
            _say(f"inputs checked in {time.perf_counter() - start:.1f} s ({n} x {d}); running the report ...")
        violated, passing = _write(out, args, rules, progress)
    except (InputError, Busy) as e:
        _say(str(e))
        return BAD_INPUT
    except ChapterFailed as e:
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
    """Run the chapter into a temporary folder beside ``out`` and put the finished report in its
    place (one run at a time: :func:`~embdiag._atomic.claimed`; SIGTERM removes the temporary:
    :func:`~embdiag._atomic.terminable`); return the ``--fail-if`` violations and the smallest
    passing condition's line.

    Raises:
        InputError: the chapter's; or a full disk or read-only folder (the command's or the
            kernel's), naming ``--out``, what it held kept.
        ChapterFailed: the chapter failed.
    """
    try:
        with terminable(), claimed(out):
            tmp = _workspace(out)
            try:
                nb = run_chapter(CHAPTER, chapter_parameters(args, tmp, progress), tmp, progress=progress)
                (tmp / REPORT_HTML).write_text(_render(nb, f"{TITLE}: {Path(args.vectors).name}"), encoding="utf-8")
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
    """The line naming :func:`~embdiag.report.frontier.smallest_passing` of a saved report's
    frontier (``none`` when no condition passes every rule), or None when it has no frontier."""
    from .frontier import smallest_passing

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


def _render(nb, title: str) -> str:
    from .html import render

    return render(nb, title)


if __name__ == "__main__":
    sys.exit(main())
