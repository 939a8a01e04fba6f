"""Command line: ``embdiag sync | chapter | book | train | report | verify | vectors | embeddings``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml

from embdiag import exits
from embdiag._atomic import Busy, claimed, out_refusal, terminable


def _parameters(pairs) -> dict:
    return {key: yaml.safe_load(value) for key, value in pairs or ()}


def _run_chapter(pipeline, name: str, parameters=None) -> None:
    start = time.perf_counter()
    print(f"executing {name} ...", end=" ", file=sys.stderr, flush=True)
    path = pipeline.execute(name, parameters)
    print(f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    print(path.relative_to(pipeline.REPO))


def _run_elsewhere(pipeline, name: str, parameters: dict, out: Path, output: str | None = None) -> None:
    """Execute chapter ``name`` into the folder ``out`` and render it there as one offline HTML
    page, both or neither, named ``output`` (default the chapter's name). ``out`` is refused
    (:class:`~embdiag.paper.pipeline.ChapterInputError`) where it is, lies inside or holds the
    book's folders, or holds an input (a ``*_path`` or ``*_dir`` parameter;
    :func:`~embdiag._atomic.out_refusal`), and while another run writes it. A chapter that
    reports its progress (:data:`~embdiag.paper.pipeline.PROGRESS`) does, on stderr, unless
    the parameter is given."""
    if pipeline.PROGRESS in pipeline.parameters(name):
        parameters = {pipeline.PROGRESS: True, **parameters}
    values = pipeline.check_parameters(name, parameters)
    inputs = {
        f"-p {key}": parameters[key]
        for key, value in values.items()
        if isinstance(value, str) and key.endswith(("_path", "_dir")) and key != "out_dir"
    }
    refusal = out_refusal(out, inputs)
    if refusal:
        raise pipeline.ChapterInputError(refusal)
    blocked = next((p for p in (out, *out.parents) if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise pipeline.ChapterInputError(f"cannot make the output folder {out} (--out): {blocked} is a file")
    start = time.perf_counter()
    streamed = values.get(pipeline.PROGRESS) is True  # the chapter's lines come between these two
    print(f"executing {name} ...", end="\n" if streamed else " ", file=sys.stderr, flush=True)
    try:
        with terminable(), claimed(out, make=True):
            path = pipeline.execute(name, parameters, out_dir=out, output=output, beside=_page)
    except Busy as e:
        raise pipeline.ChapterInputError(str(e)) from None
    print((f"{name}: " if streamed else "") + f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    print(path)
    print(path.with_suffix(".html"))


def _page(nb, path: Path) -> dict:
    """The executed chapter ``nb``, saved at ``path``, as one offline HTML page beside it: ``{page: write}``."""
    import nbformat

    from embdiag.report.html import render

    html = render(nbformat.reads(nbformat.writes(nb), as_version=4), f"embdiag: {path.stem}")
    return {path.with_suffix(".html"): lambda tmp: Path(tmp).write_text(html, encoding="utf-8")}


def _chapter(pipeline, args) -> None:
    """``embdiag chapter``: the book's page when the parameters are the book's, else a page of its
    own under ``--out``, which the book never holds; a declared variant is its chapter with the
    variant's parameters (and any given on top), always under ``--out``."""
    parameters = _parameters(args.parameter)
    variant = pipeline.variants().get(args.name)
    if variant is not None and args.out is None:
        raise pipeline.ChapterInputError(
            f"variant {args.name} is not a page of the book (its findings are on the book's Across encoders "
            "page): name a folder for it with --out DIR"
        )
    if args.out is not None:
        name, output = (variant["chapter"], args.name) if variant else (args.name, None)
        given = {**variant["parameters"], **parameters} if variant else parameters
        _run_elsewhere(pipeline, name, given, Path(args.out).expanduser().resolve(), output)
        return
    changed = pipeline.changed_parameters(args.name, parameters)
    if changed:
        raise pipeline.ChapterInputError(
            f"parameters other than the book's ({', '.join(changed)}) make a page of your own: name a folder "
            "for it with --out DIR (the book's pages keep their parameters)"
        )
    _run_chapter(pipeline, args.name, parameters)
    if not args.no_build:
        _build(pipeline)


def _build(pipeline) -> None:
    start = time.perf_counter()
    print("building the book ...", end=" ", file=sys.stderr, flush=True)
    html = pipeline.build()
    print(f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    print(html / "index.html")


def _train(argv) -> int:
    """``embdiag train``: the JEPA sweep (imported only here: it loads torch)."""
    from embdiag.training import sweep

    parser = argparse.ArgumentParser(prog="embdiag train", description=_TRAIN_HELP)
    args = sweep.add_arguments(parser).parse_args(argv)
    try:
        return sweep.main(args)
    except ValueError as e:  # bad input (a run's own failure is recorded in its record, not raised)
        print(f"embdiag train: {e}", file=sys.stderr)
        return exits.BAD_INPUT


def _embeddings(argv) -> int:
    """``embdiag embeddings``: recompute the book's committed embeddings and say how far they are."""
    from embdiag.encoders.vectors import regenerate_book_embeddings

    parser = argparse.ArgumentParser(prog="embdiag embeddings", description=_EMBEDDINGS_HELP)
    parser.add_argument("--write", action="store_true", help="replace the committed vectors by this machine's")
    args = parser.parse_args(argv)
    results = regenerate_book_embeddings(write=args.write, progress=True)
    for r in results:
        state = (
            "identical"
            if r.identical
            else f"max abs diff {r.max_abs:.3g}, max rel diff {r.max_rel:.3g}"
            if r.max_abs == r.max_abs
            else "nothing committed to compare"
        )
        print(f"{r.name} ({r.rows} rows): {state}{'; written' if r.written else ''}")
    kept = [r for r in results if not r.identical and not r.written]
    if kept:
        print(
            f"embdiag: {len(kept)} of {len(results)} differ from the committed vectors, which are kept "
            "(the book reads those; --write replaces them)",
            file=sys.stderr,
        )
    return exits.VIOLATED if kept else exits.OK


_EMBEDDINGS_HELP = (
    "recompute the embeddings the book reads (both reference encoders; WordLlama on the WordNet sample, which "
    "needs Debian's wordnet-base) and print how far they are from the committed ones; the committed vectors are "
    "kept unless --write"
)
_TRAIN_HELP = "run the JEPA training sweep: finished runs are skipped, interrupted ones resumed"
_REPORT_HELP = (
    "measure your own vectors (geometry, label probes, neighbour identity, relevance) and what a "
    "compression, index or second model changes: one offline report.html, report.json and CSVs"
)


def main(argv=None) -> int:
    """The ``embdiag`` command. Run from the command line (``argv`` None), it first re-executes
    itself on the pinned float path (:func:`embdiag.floatpath.ensure`), which its kernels,
    workers and tasks inherit; called with ``argv`` it runs in this process as it is."""
    if argv is None:
        from embdiag import floatpath

        try:
            floatpath.ensure("embdiag.paper.cli")
        except ValueError as e:
            print(f"embdiag: {e}", file=sys.stderr)
            return exits.BAD_INPUT
    argv = sys.argv[1:] if argv is None else list(argv)
    return exits.guarded(lambda: _dispatch(argv))


def _dispatch(argv: list) -> int:
    """One command of :func:`main`, returning its status (:mod:`embdiag.exits`)."""
    if argv[:1] == ["train"]:
        return _train(argv[1:])
    if argv[:1] == ["report"]:  # its own parser; the same statuses (embdiag.exits)
        from embdiag.report.cli import main as report

        return report(argv[1:])
    if argv[:1] == ["verify"]:
        from embdiag.report.verify import main as verify

        return verify(argv[1:])
    if argv[:1] == ["embeddings"]:
        return _embeddings(argv[1:])
    if argv[:1] == ["vectors"]:
        from embdiag.report.cli import export_main

        return export_main(argv[1:])
    from embdiag.paper import pipeline

    parser = argparse.ArgumentParser(prog="embdiag", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("train", help=_TRAIN_HELP + " (embdiag train -h lists its options)")
    sub.add_parser("report", help=_REPORT_HELP + " (embdiag report -h lists its options)")
    sub.add_parser(
        "verify",
        help="recompute a report from the inputs its report.json names (by SHA-256) and compare every number "
        "(embdiag verify -h lists its options)",
    )
    sub.add_parser(
        "vectors",
        help="write the project's cached embeddings and labels as files for embdiag report "
        "(embdiag vectors -h lists its options)",
    )
    sub.add_parser("embeddings", help=_EMBEDDINGS_HELP + " (embdiag embeddings -h lists its options)")
    sub.add_parser("sync", help="rewrite each notebooks/NN_name.ipynb from its .py")
    ch = sub.add_parser("chapter", help="execute one chapter (optionally with new parameters) and rebuild the book")
    ch.add_argument(
        "name",
        help="chapter name, e.g. 20_rank_diagnostics or rank_diagnostics, or a variant "
        "declared in notebooks/variants.yml",
    )
    ch.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUE"),
        help="override a parameter (VALUE is read as YAML: 20, 0.5, true, a path)",
    )
    ch.add_argument(
        "--out",
        metavar="DIR",
        help="write the executed chapter and its one-file HTML page into DIR "
        "(needed when parameters differ from the book's: the book keeps its own pages); a chapter that "
        "reports its progress prints it on stderr (-p progress false: quiet)",
    )
    ch.add_argument("--no-build", action="store_true", help="execute only (the book is not built with --out)")
    bk = sub.add_parser("book", help="execute every chapter with its defaults, then build the book")
    bk.add_argument("--no-execute", action="store_true", help="build from the executed chapters as they are")
    args = parser.parse_args(argv)

    try:
        with terminable():  # SIGTERM: the kernel stopped, the temporaries removed, exit 143
            if args.command == "sync":
                for name in pipeline.chapter_names():
                    print(pipeline.sync(name).relative_to(pipeline.REPO))
            elif args.command == "chapter":
                _chapter(pipeline, args)
            elif args.command == "book":
                if not args.no_execute:
                    for name in pipeline.chapter_names():
                        _run_chapter(pipeline, name)
                _build(pipeline)
    except pipeline.ChapterError as e:  # bad input, or a chapter that failed: a defect, exit 3
        print(f"\nembdiag: {e}", file=sys.stderr)
        return exits.BAD_INPUT if isinstance(e, pipeline.ChapterInputError) else exits.FAILED
    return exits.OK


if __name__ == "__main__":
    sys.exit(main())
