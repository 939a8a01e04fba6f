"""The options of ``embdiag report``, declared once: :class:`ReportOptions`.

Each field of :class:`ReportOptions` is one option, and its :class:`Option` (the field's
metadata, listed in order by :data:`OPTIONS`) says where it appears:

- on the command line: ``flag`` (``VECTORS`` positional, ``--labels``, ...; None: not an option
  of the command), with its ``help``, ``metavar`` and argparse ``parse``
  (:func:`add_arguments`);
- in the GitHub Action (``action.yml``): the input ``name`` with ``_`` as ``-``, described by
  ``action`` (None: not an input, ``not_in_action`` says why), read from ``EMBDIAG_<NAME>``
  (:func:`embdiag.report.action.arguments`);
- in the report chapter: its ``parameter`` (files as ``<name>_path``; None: not a parameter),
  set by :meth:`ReportOptions.parameters`;
- in ``report.json``: ``recorded`` (``"files"``: ``inputs.files[flag]``, ``"inputs"``:
  ``inputs[key]``, ``"options"``: ``inputs.options[key]``; None: not recorded), written by
  :func:`~embdiag.report.measure` (:func:`recorded`) and read back by ``embdiag verify``
  (:meth:`ReportOptions.from_report`), which measures again with
  :meth:`ReportOptions.measure_arguments`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import Field, dataclass, field, fields, replace
from pathlib import Path


#: The default loss margin of a relevance change, in percentage points (``embdiag report --margin``):
#: a loss smaller than one point of P@k, Hit@k or nDCG@k is what a user of the study would accept.
MARGIN_PP = 1.0
#: The default recall an index setting must reach (``embdiag report --target-recall``): the share of
#: the exact top-k an approximate search returns, a common service-level target for vector search.
TARGET_RECALL = 0.95

__all__ = [
    "MARGIN_PP",
    "TARGET_RECALL",
    "Option",
    "ReportOptions",
    "OPTIONS",
    "add_arguments",
    "recorded",
    "in_action",
    "file_options",
    "paths",
]


def _int_at_least(minimum: int, what: str):
    """An argparse type: an integer of at least ``minimum`` (``what`` names the kind)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {value}")
        return value

    return parse


@dataclass(frozen=True)
class Option:
    """One option of ``embdiag report`` and the places it appears (module doc).

    ``kind``: ``file`` (a path), ``spec`` (conditions, :func:`~embdiag.report.conditions.parse_conditions`),
    ``int``, ``number``, ``switch``, ``rules`` (``--fail-if``), ``address`` (a Ray cluster) or
    ``folder`` (the output). ``many``: the option may be given more than once (its value is a
    tuple; in the Action, one per line).
    """

    kind: str
    flag: str | None
    help: str
    default: object = None
    metavar: str | None = None
    parse: Callable[[str], object] | None = None
    required: bool = False
    action: str | None = None
    not_in_action: str = ""
    action_default: str | None = None
    recorded: str | None = None
    recorded_key: str | None = None
    many: bool = False
    name: str = ""

    @property
    def key(self) -> str:
        """Its key in report.json's ``inputs`` or ``inputs.options``."""
        return self.recorded_key or self.name

    @property
    def input(self) -> str:
        """The Action's input name."""
        return self.name.replace("_", "-")

    @property
    def env(self) -> str:
        """The variable through which the Action passes the input."""
        return f"EMBDIAG_{self.name.upper()}"

    @property
    def parameter(self) -> str | None:
        """The report chapter's parameter (None: the chapter has none)."""
        if self.flag is None or self.kind == "folder":
            return None
        return f"{self.name}_path" if self.kind == "file" else self.name

    def keys(self, value) -> dict[str, object]:
        """A file option's entries in report.json's ``inputs.files`` (as the user writes it -> path):
        ``{flag: path}``, or for an option given more than once ``{"FLAG STEM": path}`` per file,
        each named by its file's stem as its condition is."""
        if not self.many:
            return {} if value is None else {self.flag: value}
        return {f"{self.flag} {Path(path).stem}": path for path in value}

    def to_json(self, value):
        """``value`` as report.json records it: a spec string (a list of conditions as its names
        joined, which parse to the same conditions), a bool, an int, a float, a list of rule strings."""
        if self.kind == "spec":
            return value if isinstance(value, str) else ",".join(c.name for c in value)
        if self.kind == "rules":
            return [str(r) for r in value]
        return {"switch": bool, "int": int, "number": float}.get(self.kind, lambda v: v)(value)


def _declare(default, kind: str, flag: str | None, help: str, **where) -> Field:
    """A field of :class:`ReportOptions` with ``default``, declared as :class:`Option` (``where``: its other fields)."""
    return field(default=default, metadata={"option": Option(kind, flag, help, default, **where)})


_FILE_CELLS = "row indices, or ids of the labels' 'id' column"


@dataclass(frozen=True)
class ReportOptions:
    """The options of one report, with their defaults; each field declared once (module doc).

    Example:
        >>> options = ReportOptions(vectors="v.npy", compress="fp16", k=5, fail_if=("overlap@5<0.9",))
        >>> options.command_line()
        ['v.npy', '--compress', 'fp16', '--k', '5', '--fail-if', 'overlap@5<0.9']
        >>> options.files(), options.measure_arguments()["k"]
        ({'VECTORS': 'v.npy'}, 5)
    """

    vectors: str | None = _declare(
        None,
        "file",
        "VECTORS",
        "n x d float rows: .npy (memory-mapped), .npz, .parquet or .safetensors",
        metavar="VECTORS",
        required=True,
        action="The vectors (.npy, .npz, .parquet or .safetensors; n x d rows).",
        recorded="files",
    )
    labels: str | None = _declare(
        None,
        "file",
        "--labels",
        "CSV or parquet: one row per item, one column per attribute "
        "(an 'id' column names the items; an empty cell is a missing label, that row is left out for "
        "that attribute only; a 'split' column, train or val/eval/evaluation/test, is the probes' split: "
        "train rows fit them, the others score them, and it is not an attribute)",
        metavar="FILE",
        action="CSV or parquet, one row per vector, one column per attribute (optional `split` column).",
        recorded="files",
    )
    compare: tuple[str, ...] = _declare(
        (),
        "file",
        "--compare",
        "a second representation of the same n items (d may differ), a condition named by the file's stem "
        "(repeatable: one condition per file)",
        metavar="VECTORS2",
        action="Second representations of the same items (another model, a quantized copy), one path per line; "
        "each is a condition named by its file's stem.",
        recorded="files",
        many=True,
    )
    pairs: str | None = _declare(
        None,
        "file",
        "--pairs",
        f"CSV with columns query,target: positives for Hit@k and recall@k ({_FILE_CELLS})",
        metavar="FILE",
        action="CSV of (query, target) positives for Hit@k and recall@k.",
        recorded="files",
    )
    qrels: str | None = _declare(
        None,
        "file",
        "--qrels",
        "CSV with columns query,document,grade: graded judgments (TREC grades: 0 not relevant, 1 and above "
        f"relevant) for nDCG@k, MRR@k, MAP@100 and recall@100 ({_FILE_CELLS}); not with --pairs",
        metavar="FILE",
        action="CSV of (query, document, grade) graded judgments for nDCG, MRR, MAP and recall (not with pairs).",
        recorded="files",
    )
    queries: str | None = _declare(
        None,
        "file",
        "--queries",
        "a separate query set (same d as VECTORS) searched against VECTORS",
        metavar="FILE",
        action="A separate query set searched against the vectors.",
        recorded="files",
    )
    compress: str = _declare(
        "",
        "spec",
        "--compress",
        "representations to make and compare, e.g. fp16,int8,int4,binary-rescore,pca256,prefix256: fp16 (or "
        "float16), int8 (per-row scale), fp8 (float8 e4m3, per-row scale), int8cal and int4 (per-dimension "
        "calibration ranges), binary (sign bits, Hamming search), binary-rescore[<M>] (M k Hamming candidates "
        "rescored by the float query, M = 4), pca<DIM> (centred PCA), upca<DIM> (uncentred PCA), prefix<DIM> "
        "(Matryoshka)",
        metavar="SPEC",
        action="Representations to make and compare, e.g. fp16,int8,int4,binary-rescore,pca256,prefix256.",
        recorded="options",
    )
    index: str = _declare(
        "",
        "spec",
        "--index",
        "ANN indexes to compare with exact search: hnsw,ivfpq",
        metavar="SPEC",
        action="Approximate indexes compared with exact search, e.g. hnsw,ivfpq or hnsw;faiss:IVF1024,PQ64 "
        "(a FAISS factory string after a semicolon).",
        recorded="options",
    )
    k: int = _declare(
        10,
        "int",
        "--k",
        "neighbours per query (default 10)",
        parse=_int_at_least(1, "positive"),
        action="Neighbours per query.",
        recorded="inputs",
    )
    seed: int = _declare(
        0,
        "int",
        "--seed",
        "seed of every sample and bootstrap (default 0)",
        parse=_int_at_least(0, "non-negative"),
        action="Seed of every sample, split and bootstrap.",
        recorded="inputs",
    )
    quick: bool = _declare(
        False,
        "switch",
        "--quick",
        "subsample queries, gallery and bootstrap draws (the report says so)",
        action="true: subsample for a first look (the report says so).",
        recorded="inputs",
    )
    min_support: int = _declare(
        10,
        "int",
        None,
        "the fewest labelled rows a class needs to be measured",
        not_in_action="not an option of the command: the measurement's own",
        recorded="inputs",
    )
    margin: float = _declare(
        MARGIN_PP,
        "number",
        "--margin",
        "the loss margin of every relevance change, in percentage points (default 1): a condition is "
        "'within margin' when every relevance interval lies above -PP, 'costs relevance' when one lies wholly "
        "below it, 'inconclusive' when one straddles it",
        metavar="PP",
        parse=float,
        action="The loss margin of every relevance change, in percentage points, against which each verdict "
        "is decided.",
        recorded="inputs",
        recorded_key="margin_pp",
    )
    target_recall: float = _declare(
        TARGET_RECALL,
        "number",
        "--target-recall",
        "the recall@k an index setting must reach (default 0.95): the indexes section names the cheapest "
        "swept setting of each --index whose recall interval lies wholly at or above it",
        metavar="R",
        parse=float,
        action="The recall@k an index setting must reach; the report names the cheapest swept setting that does.",
        recorded="inputs",
    )
    stress: bool = _declare(
        False,
        "switch",
        "--stress",
        "also measure the stress grid (needs --labels)",
        action="true: also measure the stress grid (needs labels).",
        recorded="options",
    )
    cluster: str | None = _declare(
        None,
        "address",
        "--cluster",
        "run every exact search as Ray tasks over gallery shards: "
        "auto, ray://HOST:PORT or local[:N] (the numbers equal a local run's)",
        metavar="ADDRESS",
        not_in_action="a hosted runner joins no Ray cluster",
    )
    fail_if: tuple[str, ...] = _declare(
        (),
        "rules",
        "--fail-if",
        "exit 1 if the rule holds for any row, e.g. 'overlap@10<0.95' (repeatable; checked before "
        "anything is measured, outcomes recorded in report.json and on the page)",
        metavar="EXPR",
        action="The gates, one rule per line, e.g. overlap@10<0.95 or delta_p@10<-1.",
        recorded="options",
        many=True,
    )
    out: str | None = _declare(
        None,
        "folder",
        "--out",
        "output folder (replaced only when the report is complete; never one holding an input, nor the "
        "book's book/, notebooks/ or data/)",
        metavar="DIR",
        required=True,
        action="The report folder.",
        action_default="embdiag-report",
    )

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> ReportOptions:
        """The options parsed by a parser that :func:`add_arguments` made."""
        return cls(**{o.name: _frozen(getattr(args, o.name)) for o in OPTIONS if o.flag is not None})

    @classmethod
    def from_report(cls, inputs: Mapping, paths: Mapping[str, object]) -> ReportOptions:
        """The options a report recorded (its ``inputs``), its input files found at ``paths``
        (option as the user writes it -> path)."""
        where = {"inputs": inputs, "options": inputs["options"]}
        values = {o.name: _frozen(where[o.recorded][o.key]) for o in OPTIONS if o.recorded in where}
        files = {o.name: str(paths[o.flag]) for o in file_options() if not o.many and o.flag in paths}
        many = {
            o.name: tuple(str(p) for key, p in paths.items() if key.startswith(o.flag + " "))
            for o in file_options()
            if o.many
        }
        return cls(**values, **files, **many)

    def __post_init__(self):
        for o in file_options():  # a file option given more than once holds a tuple, even of one path
            if o.many:
                object.__setattr__(self, o.name, paths(getattr(self, o.name)))

    def files(self) -> dict[str, str]:
        """The input files given: option as the user writes it (:meth:`Option.keys`) -> path as given."""
        return {key: path for o in file_options() for key, path in o.keys(getattr(self, o.name)).items()}

    def inputs(self) -> dict[str, str | None]:
        """:func:`~embdiag.report.cli.read_inputs`'s file arguments (None where absent, a tuple where
        an option may be given more than once)."""
        return {o.name: getattr(self, o.name) for o in file_options()}

    def measure_arguments(self) -> dict:
        """:func:`~embdiag.report.measure`'s keyword arguments but the data (every option that is
        neither a file nor the output folder)."""
        return {o.name: getattr(self, o.name) for o in OPTIONS if o.kind not in ("file", "folder")}

    def parameters(self) -> dict:
        """The report chapter's parameters: file paths as absolute strings (None where absent; a list
        of them, or None, where an option may be given more than once), the other values as they
        are (rules as a list)."""

        def absolute(path) -> str:
            return str(Path(path).expanduser().resolve())

        out = {}
        for o in OPTIONS:
            if o.parameter is None:
                continue
            value = getattr(self, o.name)
            if o.kind == "file" and o.many:
                value = [absolute(p) for p in value] or None
            elif o.kind == "file":
                value = None if value is None else absolute(value)
            out[o.parameter] = list(value) if o.kind == "rules" else value
        return out

    def command_line(self) -> list[str]:
        """The ``embdiag report`` arguments giving these options (defaults left out)."""
        out = []
        for o in OPTIONS:
            value = getattr(self, o.name)
            if o.flag is None or value == o.default:
                continue
            if not o.flag.startswith("--"):
                out.append(str(value))
            elif o.kind == "switch":
                out.append(o.flag)
            elif o.many:
                out += [part for item in value for part in (o.flag, str(item))]
            else:
                out += [o.flag, str(value)]
        return out


def paths(value) -> tuple:
    """One path or several (a list or tuple of them; None: none) as a tuple.

    Example:
        >>> paths("b.npy"), paths(["b.npy", "c.npy"]), paths(None)
        (('b.npy',), ('b.npy', 'c.npy'), ())
    """
    if value is None:
        return ()
    return (value,) if isinstance(value, (str, os.PathLike)) else tuple(value)


def _frozen(value):
    return tuple(value) if isinstance(value, list) else value


#: Every option in order, each named by its field.
OPTIONS: tuple[Option, ...] = tuple(replace(f.metadata["option"], name=f.name) for f in fields(ReportOptions))


def file_options() -> tuple[Option, ...]:
    """The options that name an input file, in the order :func:`~embdiag.report.cli.read_inputs` takes them."""
    return tuple(o for o in OPTIONS if o.kind == "file")


def in_action() -> tuple[Option, ...]:
    """The options that are inputs of the GitHub Action."""
    return tuple(o for o in OPTIONS if o.action is not None)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add every option of the command line to ``parser``."""
    for o in OPTIONS:
        if o.flag is None:
            continue
        if not o.flag.startswith("--"):
            parser.add_argument(o.name, metavar=o.metavar, help=o.help)
        elif o.kind == "switch":
            parser.add_argument(o.flag, action="store_true", help=o.help)
        elif o.many:
            parser.add_argument(o.flag, metavar=o.metavar, action="append", default=[], dest=o.name, help=o.help)
        else:
            extra = {"required": True} if o.required else {"default": o.default}
            parser.add_argument(o.flag, metavar=o.metavar, type=o.parse, dest=o.name, help=o.help, **extra)


def recorded(where: str, values: Mapping) -> dict:
    """What report.json records in ``where`` (``"inputs"`` or ``"options"``), from ``values``
    (option name -> value)."""
    return {o.key: o.to_json(values[o.name]) for o in OPTIONS if o.recorded == where}
