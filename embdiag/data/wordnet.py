"""A reader of the WordNet 3.0 database files ``data.noun``, ``data.verb``, ``data.adj``, ``data.adv``.

The format is Princeton's wndb(5): license lines begin with two spaces; every other line is one
synset, ``offset lex_filenum ss_type w_cnt word lex_id ... p_cnt [pointer ...] [frames] | gloss``,
whose first field equals its byte offset in the file; ``w_cnt`` and ``lex_id`` are hexadecimal,
``p_cnt`` is decimal, each pointer is ``symbol offset pos source/target`` (four hex digits) and
verbs carry ``f_cnt`` frames ``+ f_num w_num``. The lexicographer file number names the synset's
category in lexnames(5) (:data:`LEXNAMES`, e.g. ``noun.animal``).

Decisions: an adjective satellite (``ss_type`` ``s``) has part of speech ``a`` (it lives in
``data.adj`` and its offset is unique there, so its id is ``OFFSET-a``); ``ss_type`` keeps the
``s``. A synset's *examples* are the double-quoted spans of its gloss (48,339 in 32,923 glosses
of WordNet 3.0); its *definition* is the gloss before the first double quote, separators
stripped (70 glosses quote inside the definition, which then ends at that quote).
Parse errors are :class:`~embdiag.data.errors.DataFormatError` naming the file and line.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import DataFileNotFoundError, DataFormatError

#: Where Debian's ``wordnet-base`` installs the database.
DEFAULT_DIR = Path("/usr/share/wordnet")
#: Part of speech -> its data file.
FILES: dict[str, str] = {"n": "data.noun", "v": "data.verb", "a": "data.adj", "r": "data.adv"}
SS_TYPES = ("n", "v", "a", "s", "r")
#: lexnames(5): the lexicographer file of each number (the 2-digit field after the offset).
LEXNAMES: tuple[str, ...] = (
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
)
_QUOTED = re.compile(r'"([^"]*)"')


@dataclass(frozen=True)
class Pointer:
    """A relation to another synset: ``symbol`` (e.g. ``@`` hypernym), target ``offset`` and ``pos``,
    ``source`` and ``target`` word numbers (0 and 0: between whole synsets)."""

    symbol: str
    offset: int
    pos: str
    source: int
    target: int


@dataclass(frozen=True)
class Synset:
    """One line of a data file: ``id`` (``OFFSET-P``), ``lexname``, ``words``, ``pointers``,
    verb ``frames`` (``(f_num, w_num)``), the gloss's ``definition`` and quoted ``examples``."""

    offset: int
    pos: str
    ss_type: str
    lexname: str
    words: tuple[str, ...]
    lex_ids: tuple[int, ...]
    pointers: tuple[Pointer, ...]
    frames: tuple[tuple[int, int], ...]
    definition: str
    examples: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.offset:08d}-{self.pos}"


def split_gloss(gloss: str) -> tuple[str, tuple[str, ...]]:
    """(definition, examples) of a gloss (see the module docstring).

    >>> split_gloss('a member of the genus Canis; "the dog barked all night"')
    ('a member of the genus Canis', ('the dog barked all night',))
    """
    definition = gloss.split('"', 1)[0].strip().rstrip(";:,").strip()
    return definition, tuple(e.strip() for e in _QUOTED.findall(gloss))


def _int(text: str, base: int, what: str, where: str) -> int:
    try:
        return int(text, base)
    except ValueError:
        raise DataFormatError(
            f"{where}: {what} {text!r} is not a {'hexadecimal' if base == 16 else 'decimal'} number"
        ) from None


def parse_line(line: str, offset: int, pos: str, where: str) -> Synset:
    """The synset of one data line found at byte ``offset`` of the ``pos`` file (``where``: file:line)."""
    head, sep, gloss = line.partition(" | ")
    if not sep:
        raise DataFormatError(f"{where}: no gloss (' | ')")
    f = head.split()
    try:
        if _int(f[0], 10, "offset", where) != offset:
            raise DataFormatError(f"{where}: offset field {f[0]} differs from the line's byte offset {offset}")
        lexfile = _int(f[1], 10, "lex_filenum", where)
        if not 0 <= lexfile < len(LEXNAMES):
            raise DataFormatError(f"{where}: lex_filenum {lexfile} is not in lexnames(5) (0-{len(LEXNAMES) - 1})")
        ss_type = f[2]
        if ss_type not in (("a", "s") if pos == "a" else (pos,)):
            raise DataFormatError(f"{where}: ss_type {ss_type!r} does not belong in the {FILES[pos]} file")
        n_words, i = _int(f[3], 16, "w_cnt", where), 4
        words = tuple(f[i + 2 * k] for k in range(n_words))
        lex_ids = tuple(_int(f[i + 2 * k + 1], 16, "lex_id", where) for k in range(n_words))
        i += 2 * n_words
        n_pointers, i = _int(f[i], 10, "p_cnt", where), i + 1
        pointers = []
        for _ in range(n_pointers):
            symbol, target, target_pos, st = f[i], f[i + 1], f[i + 2], f[i + 3]
            if target_pos not in SS_TYPES or len(st) != 4:
                raise DataFormatError(f"{where}: malformed pointer {' '.join(f[i : i + 4])!r}")
            pointers.append(
                Pointer(
                    symbol,
                    _int(target, 10, "pointer offset", where),
                    target_pos,
                    _int(st[:2], 16, "pointer source", where),
                    _int(st[2:], 16, "pointer target", where),
                )
            )
            i += 4
        frames = []
        if pos == "v":
            n_frames, i = _int(f[i], 10, "f_cnt", where), i + 1
            for _ in range(n_frames):
                if f[i] != "+":
                    raise DataFormatError(f"{where}: verb frame without '+' ({' '.join(f[i : i + 3])!r})")
                frames.append((_int(f[i + 1], 10, "f_num", where), _int(f[i + 2], 16, "w_num", where)))
                i += 3
    except IndexError:
        raise DataFormatError(f"{where}: the line ends before its fields do") from None
    if i != len(f):
        raise DataFormatError(f"{where}: {len(f) - i} unexpected field(s) before the gloss: {' '.join(f[i:])!r}")
    definition, examples = split_gloss(gloss.strip())
    return Synset(
        int(f[0]), pos, ss_type, LEXNAMES[lexfile], words, lex_ids, tuple(pointers), tuple(frames), definition, examples
    )


def read_file(path: Path, pos: str) -> list[Synset]:
    """Every synset of one data file (``pos``: its part of speech), license lines skipped."""
    path = Path(path)
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: WordNet data file not found (Debian: apt-get install wordnet-base)")
    out, offset = [], 0
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            start, offset = offset, offset + len(raw)
            try:
                line = raw.decode("utf-8").rstrip("\n")
            except UnicodeDecodeError as e:
                raise DataFormatError(f"{path}:{number}: not UTF-8 text ({e.reason})") from None
            if line.startswith("  ") or not line.strip():
                continue
            out.append(parse_line(line, start, pos, f"{path}:{number}"))
    if not out:
        raise DataFormatError(f"{path}: no synsets")
    return out


def file_digests(data_dir=None) -> dict[str, str]:
    """SHA-256 of each data file under ``data_dir`` (default :data:`DEFAULT_DIR`)."""
    folder = Path(data_dir) if data_dir is not None else DEFAULT_DIR
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in FILES.values()}


def read_wordnet(data_dir=None) -> list[Synset]:
    """All synsets of the database under ``data_dir`` (default :data:`DEFAULT_DIR`), in file order
    (noun, verb, adjective, adverb)."""
    folder = Path(data_dir) if data_dir is not None else DEFAULT_DIR
    if not folder.is_dir():
        raise DataFileNotFoundError(f"{folder}: no WordNet folder (Debian: apt-get install wordnet-base)")
    return [s for pos, name in FILES.items() for s in read_file(folder / name, pos)]
