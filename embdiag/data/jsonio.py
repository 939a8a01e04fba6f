"""Reading JSON label files: whole documents, and large top-level arrays record by record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from .errors import DataFileNotFoundError, DataFormatError

_CHUNK = 1 << 22


def _existing(path: str | Path, what: str) -> Path:
    path = Path(path)
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: {what} not found")
    return path


def read_json(path: str | Path, what: str = "JSON file"):
    """Parse a whole JSON document; errors name the file."""
    path = _existing(path, what)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataFormatError(f"{path}: not valid JSON ({e})") from e


def iter_array(path: str | Path, what: str = "JSON file") -> Iterator[object]:
    """Yield the elements of a top-level JSON array one at a time, without loading the whole file.

    BDD100K's training label file is over a gigabyte; decoding it record by record keeps
    memory to one record plus a read buffer.
    """
    path = _existing(path, what)
    dec = json.JSONDecoder()
    with open(path, encoding="utf-8") as f:
        buf, pos, eof = "", 0, False

        def more() -> bool:
            nonlocal buf, pos, eof
            chunk = f.read(_CHUNK)
            if not chunk:
                eof = True
                return False
            buf, pos = buf[pos:] + chunk, 0
            return True

        def skip_ws():
            nonlocal pos
            while True:
                while pos < len(buf) and buf[pos] in " \t\r\n":
                    pos += 1
                if pos < len(buf) or not more():
                    return

        try:
            skip_ws()
            if pos >= len(buf) or buf[pos] != "[":
                raise DataFormatError(f"{path}: expected a JSON array of records at the top level")
            pos += 1
            skip_ws()
            if pos < len(buf) and buf[pos] == "]":
                return
            count = 0
            while True:
                while True:  # decode one record; re-read if it may be cut short
                    try:
                        obj, end = dec.raw_decode(buf, pos)
                    except json.JSONDecodeError as e:
                        if eof:
                            raise DataFormatError(f"{path}: not valid JSON ({e})") from e
                        more()
                        continue
                    j = end
                    while j < len(buf) and buf[j] in " \t\r\n":
                        j += 1
                    if eof or (j < len(buf) and buf[j] in ",]"):
                        break
                    more()  # a number such as 1.5 may continue past the buffer
                yield obj
                count += 1
                pos = end
                skip_ws()
                if pos >= len(buf):
                    raise DataFormatError(f"{path}: not valid JSON (unterminated array)")
                if buf[pos] == "]":
                    return
                if buf[pos] != ",":
                    raise DataFormatError(f"{path}: not valid JSON (expected ',' or ']' after record {count - 1})")
                pos += 1
                skip_ws()
        except UnicodeDecodeError as e:
            raise DataFormatError(f"{path}: not valid UTF-8 JSON ({e})") from e
