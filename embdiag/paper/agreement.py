"""Whether a re-executed chapter agrees with the committed one: exactly, or within tolerance.

On the float path the book was executed on (:mod:`embdiag.floatpath`) a chapter must
re-execute byte for byte. On another path (another instruction set, ARM, the pin turned
off) the last bits of float sums differ, so :func:`compare` reads each output as text in
which numbers are compared within :data:`TOLERANCE` and everything else exactly: every
word, verdict, label and table cell that is not a number must be the same.

Numbers are the decimal literals of the text (``91.37``, ``-0.30``, ``6.55e-05``,
``2,000``, and ``6.765 × 10⁻⁶`` as tables show small values, one number; not digits inside
words or identifiers such as ``s0`` or ``x86``). Two agree when
they differ by at most ``rtol`` of the larger, or by one unit of the last digit the
committed one shows (a value printed as ``33.12`` may print as ``33.13`` where it sits on a
rounding boundary), or by at most :data:`ABSOLUTE` (the float32 rounding of a unit-scale
quantity: every score the book shows is a cosine or an error of one, and the storage chapter's
FP32 arithmetic condition measures exactly this rounding, which is the float path's own).
Before comparing, what is derived from exact bits is masked: chart and table ids (hashes of
their content), the short checksums of regenerable inputs and the
highest/lowest marks (they follow the numbers, which are compared themselves).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from urllib.parse import unquote

from ..view.exhibits import _SUPERSCRIPT

__all__ = ["TOLERANCE", "Difference", "numbers", "compare", "compare_files"]

#: Relative tolerance between the committed and a re-executed number on another float path
#: (measured: float32 margins of the report moved by 2e-5 between an AVX2 and an SSE4 path).
TOLERANCE = 1e-4
#: Absolute tolerance: float32 rounding of unit-scale scores (FP32 errors moved 5.5e-7 -> 7.6e-7).
ABSOLUTE = 1e-6

_NUMBER = re.compile(
    r"(?<![\w.\-−+])[-−+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?(?: × 10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?(?![\w])"
    r"|(?<![\w.])\.\d+(?:[eE][-+]?\d+)?(?![\w])"
)
#: ``m × 10ⁿ`` (:func:`embdiag.view.exhibits.readable_number`): the power's superscript digits.
_TIMES_TEN = " × 10"
_MASKS = (
    (re.compile(r"vega-[0-9a-f]{12}"), "vega-ID"),
    (re.compile(r"T_[0-9a-f]{5}(?=[_ \"])"), "T_ID"),
    (re.compile(r'(<span class="embdiag-sha"[^>]*>)[0-9a-f]{12}'), r"\1SHA"),
    (re.compile(r"\b(embdiag-max|embdiag-min)\b"), "embdiag-mark"),
    (re.compile(r"[▲▼]"), "MARK"),
)


@dataclass(frozen=True)
class Difference:
    """Where a re-executed chapter departs from the committed one: ``cell`` (index), ``output``
    (index within the cell, -1 for the cell itself), ``what`` (in words)."""

    cell: int
    output: int
    what: str

    def __str__(self) -> str:
        where = f"cell {self.cell}" + (f", output {self.output}" if self.output >= 0 else "")
        return f"{where}: {self.what}"


def numbers(text: str) -> tuple[str, list[str]]:
    """``text`` with each number replaced by ``#``, and the numbers as written, in order."""
    found = []

    def take(m):
        found.append(m.group(0))
        return "#"

    return _NUMBER.sub(take, text), found


def _scaled(literal: str) -> tuple[str, int]:
    """``literal`` without its `` × 10ⁿ`` and that ``n`` (0 without one)."""
    literal, _, power = literal.partition(_TIMES_TEN)
    return literal, int(power.translate(_SUPERSCRIPT)) if power else 0


def _value(literal: str) -> float:
    literal, power = _scaled(literal)
    return float(literal.replace(",", "").replace("−", "-")) * 10.0**power


def _unit(literal: str) -> float:
    """One unit of the last digit ``literal`` shows."""
    literal, power = _scaled(literal)
    mantissa, _, exponent = literal.lower().partition("e")
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return 10.0 ** (int(exponent or 0) + power - decimals)


def _numbers_agree(a: str, b: str, rtol: float) -> bool:
    x, y = _value(a), _value(b)
    if x == y or (math.isnan(x) and math.isnan(y)):
        return True
    return abs(x - y) <= max(rtol * max(abs(x), abs(y)), _unit(a) * (1 + 1e-9), ABSOLUTE)


def _masked(text: str) -> str:
    text = unquote(text)  # CSV downloads are percent-encoded data: URLs
    for pattern, repl in _MASKS:
        text = pattern.sub(repl, text)
    return text


def _text_difference(a: str, b: str, rtol: float) -> str | None:
    """Why ``b`` does not agree with ``a`` (None if it does)."""
    if a == b:
        return None
    a, b = _masked(a), _masked(b)
    (skeleton_a, nums_a), (skeleton_b, nums_b) = numbers(a), numbers(b)
    if skeleton_a != skeleton_b:
        i = next(
            (i for i, (p, q) in enumerate(zip(skeleton_a, skeleton_b)) if p != q), min(len(skeleton_a), len(skeleton_b))
        )
        return f"text differs: {skeleton_a[max(0, i - 60) : i + 60]!r} vs {skeleton_b[max(0, i - 60) : i + 60]!r}"
    for x, y in zip(nums_a, nums_b):
        if not _numbers_agree(x, y, rtol):
            return f"number {x} became {y} (beyond rtol {rtol:g}, {ABSOLUTE:g} and one unit of its last digit)"
    return None


def _output_text(output) -> dict[str, str]:
    """The comparable texts of one output: each mime type's data (JSON data as sorted JSON),
    a stream's text, or an error's name and value."""
    kind = output.get("output_type")
    if kind == "stream":
        return {f"stream:{output.get('name')}": _join(output.get("text", ""))}
    if kind == "error":
        return {"error": f"{output.get('ename')}: {output.get('evalue')}"}
    return {
        mime: json.dumps(value, sort_keys=True) if isinstance(value, dict) else _join(value)
        for mime, value in output.get("data", {}).items()
    }


def _join(value) -> str:
    return value if isinstance(value, str) else "".join(value)


def compare(committed, fresh, *, rtol: float = TOLERANCE, exact: bool = False) -> list[Difference]:
    """Every way the notebook ``fresh`` (an nbformat node) departs from ``committed``: cell
    count, cell sources, and each output's type and texts, exactly when ``exact``, else with
    numbers within ``rtol`` (see the module docstring). An empty list: they agree."""
    out: list[Difference] = []
    if len(committed.cells) != len(fresh.cells):
        return [Difference(-1, -1, f"{len(committed.cells)} cells committed, {len(fresh.cells)} re-executed")]
    for i, (a, b) in enumerate(zip(committed.cells, fresh.cells)):
        if a.cell_type != b.cell_type or a.source != b.source:
            out.append(Difference(i, -1, "the cell's source or type differs"))
            continue
        outputs_a, outputs_b = a.get("outputs", []), b.get("outputs", [])
        if len(outputs_a) != len(outputs_b):
            out.append(Difference(i, -1, f"{len(outputs_a)} outputs committed, {len(outputs_b)} re-executed"))
            continue
        for j, (x, y) in enumerate(zip(outputs_a, outputs_b)):
            tx, ty = _output_text(x), _output_text(y)
            if x.get("output_type") != y.get("output_type") or set(tx) != set(ty):
                out.append(Difference(i, j, f"output kinds differ: {sorted(tx)} vs {sorted(ty)}"))
                continue
            for mime in sorted(tx):
                why = (
                    (None if tx[mime] == ty[mime] else f"{mime} differs")
                    if exact
                    else _text_difference(tx[mime], ty[mime], rtol)
                )
                if why:
                    out.append(Difference(i, j, f"{mime}: {why}" if not exact else why))
    return out


def compare_files(committed_path, fresh_path, *, rtol: float = TOLERANCE, exact: bool = False) -> list[Difference]:
    """:func:`compare` of two ``.ipynb`` files."""
    import nbformat

    return compare(
        nbformat.read(committed_path, as_version=4), nbformat.read(fresh_path, as_version=4), rtol=rtol, exact=exact
    )
