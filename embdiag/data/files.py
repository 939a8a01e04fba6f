"""A user's files: vectors, labels and retrieval pairs (``embdiag report`` and the chapters' own
``vectors_path`` / ``labels_path``), and the ``split`` column both routes read as the split of
labelled rows into training and evaluation rows (:func:`parse_split`, :func:`split_labels`).

Every reader only reads (never writes) and raises :class:`InputError` whose message starts
with the file and the option it was given for (``emb.npy (VECTORS): ...``) and states the
problem; rows are counted from 0 (the first data row of a CSV is row 0).
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import Future
from pathlib import Path

import numpy as np
import pandas as pd

from .._atomic import write_files
from .._mapped import release_rows
from .._validate import as_float, check_int
from .errors import DataError

VECTOR_SUFFIXES = (".npy", ".npz", ".parquet", ".safetensors")
LABEL_SUFFIXES = (".csv", ".parquet")
#: Array names picked from a file that holds several (``.npz``, ``.safetensors``).
VECTOR_NAMES = ("vectors", "embeddings")
#: Rows per chunk when scanning vectors for NaN/inf and zero rows (a memory-map's pages are released
#: chunk by chunk: :mod:`embdiag._mapped`).
SCAN_ROWS = 16384
#: The labels' column that splits rows into training and evaluation rows (never an attribute).
SPLIT_COLUMN = "split"
#: Its values (compared after stripping and lower-casing): training rows, and evaluation rows.
TRAIN_NAMES = ("train",)
EVAL_NAMES = ("val", "eval", "evaluation", "test")


class InputError(DataError):
    """A user's file (or option) is unusable; the message names it and the problem."""


def _where(path, name: str) -> str:
    return f"{path} ({name})"


def _open(path, name: str, suffixes: tuple[str, ...]) -> tuple[Path, str]:
    path, where = Path(path), _where(path, name)
    if not path.exists():
        raise InputError(f"{where}: no such file")
    if not path.is_file():
        raise InputError(f"{where}: not a file")
    if path.suffix.lower() not in suffixes:
        raise InputError(
            f"{where}: unsupported file type {path.suffix or '(no suffix)'!r}; supported: {', '.join(suffixes)}"
        )
    return path, where


def _pick(names: list[str], where: str, what: str) -> str:
    """The one array of a multi-array file: the only one, or the one named in :data:`VECTOR_NAMES`."""
    named = [v for v in VECTOR_NAMES if v in names]
    if len(names) == 1 or len(named) == 1:
        return names[0] if len(names) == 1 else named[0]
    found = ", ".join(map(repr, names)) or "none"
    raise InputError(f"{where}: expected one {what}, or one named 'vectors' or 'embeddings'; found {found}")


def _read_npz(path: Path, where: str) -> np.ndarray:
    with np.load(path, allow_pickle=False) as z:
        return z[_pick(list(z.files), where, "array")]


def _read_safetensors(path: Path, where: str) -> np.ndarray:
    from safetensors import safe_open

    with safe_open(str(path), framework="np") as f:
        name = _pick(list(f.keys()), where, "tensor")
        if f.get_slice(name).get_dtype() != "BF16":
            return f.get_tensor(name)
    return _read_bfloat16(path, name)


def _read_bfloat16(path: Path, name: str) -> np.ndarray:
    """Tensor ``name`` of a safetensors file (already validated by ``safe_open``) that holds
    bfloat16, as float32: exact, a bfloat16 being the upper 16 bits of the float32 of its value.
    The file's layout: an 8-byte little-endian header length, the JSON header, then the data; the
    bits are memory-mapped, so the float32 copy is the only one held."""
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        entry = json.loads(f.read(size))[name]
    start, stop = entry["data_offsets"]
    count, offset = (stop - start) // 2, 8 + size + start
    bits = np.memmap(path, dtype="<u2", mode="r", offset=offset, shape=(count,)) if count else np.empty(0, "<u2")
    return np.left_shift(bits, 16, dtype=np.uint32).view(np.float32).reshape(entry["shape"])


def _read_parquet(path: Path, where: str) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    is_list = [pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) for t in schema.types]
    numeric = [pa.types.is_integer(t) or pa.types.is_floating(t) for t in schema.types]
    found = ", ".join(f"{c!r} ({t})" for c, t in zip(schema.names, schema.types)) or "no columns"
    if sum(is_list) == 1:
        column = schema.names[is_list.index(True)]
        col = pq.read_table(path, columns=[column]).column(0).combine_chunks()
        value_type = col.type.value_type
        if not (pa.types.is_integer(value_type) or pa.types.is_floating(value_type)):
            raise InputError(f"{where}: list column {column!r} holds {value_type}, not numbers")
        if col.null_count:
            first = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(
                f"{where}: list column {column!r} has {col.null_count} empty (null) row(s) (first at index {first})"
            )
        lengths = pc.list_value_length(col).to_numpy()
        if len(lengths) and (lengths != lengths[0]).any():
            first = int(np.flatnonzero(lengths != lengths[0])[0])
            raise InputError(
                f"{where}: list column {column!r} has rows of different lengths "
                f"({lengths[0]} at index 0, {lengths[first]} at index {first})"
            )
        d = int(lengths[0]) if len(lengths) else 0
        return col.flatten().to_numpy(zero_copy_only=False).reshape(len(col), d)
    if schema.names and not any(is_list) and all(numeric):
        return np.column_stack([c.to_numpy() for c in pq.read_table(path).columns])
    raise InputError(
        f"{where}: expected one list column of floats, or only numeric columns (one per dimension); found {found}"
    )


_VECTOR_READERS = {
    ".npy": lambda path, where: np.load(path, mmap_mode="r", allow_pickle=False),
    ".npz": _read_npz,
    ".parquet": _read_parquet,
    ".safetensors": _read_safetensors,
}


def bad_rows(X, start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the NaN/inf rows and of the all-zero rows among rows ``start:stop`` of ``X``,
    read :data:`SCAN_ROWS` rows at a time (a memory-map's pages released as it goes)."""
    stop = len(X) if stop is None else min(stop, len(X))
    bad, zero = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    for a in range(start, stop, SCAN_ROWS):
        b = min(stop, a + SCAN_ROWS)
        chunk = np.asarray(X[a:b])
        bad.append(a + np.flatnonzero(~np.isfinite(chunk).all(axis=1)))
        zero.append(a + np.flatnonzero(~(chunk != 0).any(axis=1)))
        release_rows(X, a, b)
    return np.concatenate(bad), np.concatenate(zero)


def refuse_bad_rows(bad: np.ndarray, zero: np.ndarray, where: str) -> None:
    """Raise :class:`InputError` for NaN/inf rows, then for all-zero rows (count and first index)."""
    if bad.size:
        raise InputError(
            f"{where}: contains NaN or infinite values ({bad.size} bad row(s), first at index {bad.min()})"
        )
    if zero.size:
        raise InputError(f"{where}: {zero.size} zero-norm row(s) (first at index {zero.min()}); cosine is undefined")


def read_vectors(path, name: str = "VECTORS", *, scan: bool = True) -> np.ndarray:
    """Read an n x d matrix of float row vectors (n >= 2).

    Accepted: ``.npy`` (memory-mapped read-only; float32/float64 returned without a copy),
    ``.npz`` (one array, or the one named ``vectors`` or ``embeddings``), ``.parquet`` (one
    list or fixed-size-list column of numbers, other columns ignored; or only numeric
    columns, one per dimension), ``.safetensors`` (one tensor, or the one named ``vectors``
    or ``embeddings``). Integer, boolean, float16 and bfloat16 values are upcast to float32
    (float16 and bfloat16 exactly).
    ``scan=False`` skips the pass over every row for NaN/inf and zero rows (for a caller
    that only checks the file's type and shape before another reads it in full).

    Raises:
        InputError: the file is missing, unreadable or of another type; it does not hold a
            2-D numeric array with at least 2 rows; or (with ``scan``) some rows are NaN/inf
            or all zero (count and first index given).
    """
    path, where = _open(path, name, VECTOR_SUFFIXES)
    try:
        X = _VECTOR_READERS[path.suffix.lower()](path, where)
    except InputError:
        raise
    except Exception as e:  # any library's complaint about the file's content
        raise InputError(f"{where}: cannot read as {path.suffix.lower()} ({type(e).__name__}: {e})") from e
    try:
        checked = as_float(X, where, ndim=2, min_rows=2, finite=False)
    except ValueError as e:
        raise InputError(str(e)) from None
    X = X if X.dtype in (np.float32, np.float64) else checked  # np.asarray would drop the memmap
    if scan:
        refuse_bad_rows(*bad_rows(X), where)
    return X


def write_vector_files(out_dir, vectors, labels: pd.DataFrame) -> dict[str, Path]:
    """Write ``out_dir/vectors.npy`` (float32, n x d) and ``out_dir/labels.csv`` (one row per
    vector) as :func:`read_vectors` and :func:`read_labels` read them, both or neither (hidden
    temporary files renamed once both are written; ``out_dir`` made if needed, and removed again
    with its new parents if the write fails). Returns ``{"vectors": path, "labels": path}``."""
    from .._atomic import made

    out_dir = Path(out_dir)
    paths = {"vectors": out_dir / "vectors.npy", "labels": out_dir / "labels.csv"}
    vectors = np.asarray(vectors, dtype=np.float32)

    def save_vectors(tmp: str) -> None:
        with open(tmp, "wb") as f:  # a file, not a name: np.save would append .npy to the temporary's
            np.save(f, vectors)

    with made(out_dir):
        write_files({paths["vectors"]: save_vectors, paths["labels"]: lambda tmp: labels.to_csv(tmp, index=False)})
    return paths


def file_record(path, sha256: str | None = None) -> dict:
    """``{"file": name, "path": absolute path, "bytes": size, "sha256": hex digest}`` of a file:
    what a report names as its input (``sha256sum FILE`` prints the same digest) and where
    ``embdiag verify`` looks for it first. ``sha256``: the digest, when it is already known."""
    path = Path(path)
    digest = sha256 or sha256_of(path)
    return {"file": path.name, "path": str(path.resolve()), "bytes": path.stat().st_size, "sha256": digest}


def sha256_of(path) -> str:
    """The SHA-256 hex digest of the file at ``path``, read once in sequence."""
    import hashlib

    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def file_records_later(paths: dict) -> Future:
    """A future of ``{key: file_record(path)}`` for ``paths`` (``key -> path``), hashed in a
    background (daemon) thread: the SHA-256 of large files is one sequential read, which can
    then overlap the work that reads them in parallel (an unfinished hash does not delay exit)."""
    future: Future = Future()

    def run():
        try:
            future.set_result({key: file_record(path) for key, path in paths.items()})
        except BaseException as e:  # reaches whoever asks for the result
            future.set_exception(e)

    threading.Thread(target=run, name="embdiag-sha256", daemon=True).start()
    return future


def _read_table(path: Path, where: str) -> pd.DataFrame:
    try:
        if path.suffix.lower() == ".csv":  # only an empty field is missing ("NA" may be a class)
            return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        return pd.read_parquet(path)
    except Exception as e:
        raise InputError(f"{where}: cannot read as {path.suffix.lower()} ({type(e).__name__}: {e})") from e


def _no_missing(table: pd.DataFrame, where: str) -> None:
    for column in table.columns:
        missing = np.flatnonzero(table[column].isna().to_numpy())
        if missing.size:
            raise InputError(
                f"{where}: column {column!r} has {missing.size} missing value(s) (first at row {missing[0]})"
            )


def _as_strings(column: pd.Series) -> pd.Series:
    """The column's values as strings, missing values as None (object dtype)."""
    return column.astype(str).astype(object).where(column.notna(), None)


def _check_attribute(column: pd.Series, name: str, where: str) -> None:
    """Raise unless the labelled values of ``column`` hold at least two classes."""
    classes = column.dropna().unique()
    if len(classes) == 0:
        raise InputError(f"{where}: column {name!r} has no value (all {len(column)} missing)")
    if len(classes) < 2:
        raise InputError(f"{where}: column {name!r} has a single class ({classes[0]!r}); nothing to tell apart")


def read_labels(path, n: int, name: str = "--labels", *, allow_missing: bool = False) -> pd.DataFrame:
    """Read one row per item (``n`` rows) and one column per attribute, as strings.

    Accepted: ``.csv`` (header line; an empty field is missing) or ``.parquet``. An ``id``
    column, when present, becomes the index (as strings, unique); every other column is an
    attribute with at least two classes among its labelled rows. A :data:`SPLIT_COLUMN`
    column is returned like the others (:func:`split_labels` parses it and takes it out).
    Rare classes are not an error: see :func:`check_support`.

    ``allow_missing``: missing values of attribute columns are kept as None (the row is left
    out for that attribute only); the ``id`` and ``split`` columns must still be complete.
    By default any missing value is refused.

    Raises:
        InputError: unreadable file, no attribute column, a row count other than ``n``,
            missing values (column and first row; with ``allow_missing``, only in ``id`` or
            ``split``, or a column with no value at all), duplicate ids, or a column with a
            single class among its labelled rows.
    """
    n = check_int(n, "n", minimum=1)
    path, where = _open(path, name, LABEL_SUFFIXES)
    table = _read_table(path, where)
    if len(table) != n:
        raise InputError(f"{where}: has {len(table)} row(s), expected {n} (one per vector)")
    _no_missing(
        table[[c for c in table.columns if c in ("id", SPLIT_COLUMN)] if allow_missing else table.columns], where
    )
    table = table.apply(_as_strings)
    if "id" in table.columns:
        table = table.set_index("id")
        dup = table.index[table.index.duplicated()]
        if len(dup):
            raise InputError(f"{where}: column 'id' has {len(dup)} duplicate(s) (first: {dup[0]!r})")
    if table.columns.empty:
        raise InputError(f"{where}: no attribute column" + (" besides 'id'" if table.index.name == "id" else ""))
    for column in table.columns.drop(SPLIT_COLUMN, errors="ignore"):  # parse_split checks the split
        _check_attribute(table[column], column, where)
    return table


def parse_split(values, where: str) -> np.ndarray:
    """Which rows are training rows, from a split column's ``values``: ``train`` (a training
    row) or one of :data:`EVAL_NAMES` (an evaluation row), case and surrounding blanks ignored.

    Raises:
        InputError: a missing or unknown value (named), or either part with fewer than 2 rows.

    Example:
        >>> parse_split(["train", " Val", "TEST", "train"], "labels.csv (--labels)")
        array([ True, False, False,  True])
    """
    split = pd.Series(values, dtype=object)
    if split.isna().any():
        first = int(np.flatnonzero(split.isna().to_numpy())[0])
        raise InputError(
            f"{where}: column {SPLIT_COLUMN!r} has {int(split.isna().sum())} missing value(s) (first at row {first})"
        )
    split = split.astype(str).str.strip().str.lower()
    unknown = sorted(set(split) - {*TRAIN_NAMES, *EVAL_NAMES})
    if unknown:
        raise InputError(f"{where}: unknown split names {unknown}; use 'train' or one of {EVAL_NAMES}")
    train = split.isin(TRAIN_NAMES).to_numpy()
    for part, count in (("train", int(train.sum())), ("evaluation", int((~train).sum()))):
        if count < 2:
            raise InputError(f"{where}: the {part} split has {count} rows; at least 2 are needed")
    return train


def split_labels(labels: pd.DataFrame, where: str) -> tuple[pd.DataFrame, np.ndarray | None]:
    """``(attributes, is_train)``: the label table without its :data:`SPLIT_COLUMN` and that
    column parsed by :func:`parse_split` (None, and the table as it is, without one).

    Raises:
        InputError: a bad split column (see :func:`parse_split`), or no attribute column besides it.
    """
    if SPLIT_COLUMN not in labels.columns:
        return labels, None
    is_train = parse_split(labels[SPLIT_COLUMN].to_numpy(), where)
    attributes = labels.drop(columns=SPLIT_COLUMN)
    if attributes.columns.empty:
        raise InputError(f"{where}: no attribute column besides {SPLIT_COLUMN!r}")
    return attributes, is_train


def check_support(labels: pd.DataFrame, min_per_class: int = 10) -> dict[str, dict[str, int]]:
    """Classes with fewer than ``min_per_class`` items: ``{column: {class: count}}``.

    Columns whose classes all have enough support are left out (an empty dict: all fine).
    Nothing is raised; the report drops or merges these classes and says so.
    """
    min_per_class = check_int(min_per_class, "min_per_class", minimum=1)
    out = {}
    for column in labels.columns:
        counts = labels[column].value_counts(sort=False)  # missing values are not a class
        rare = counts[counts < min_per_class]
        if len(rare):
            out[column] = {str(c): int(k) for c, k in sorted(rare.items())}
    return out


def _indices(values: pd.Series, ids, n: int, where: str, column: str) -> np.ndarray:
    """Row indices of ``values``: integer indices in ``[0, n)``, or positions of ids in ``ids``."""
    if ids is not None:
        index = pd.Index([str(i) for i in ids])
        if len(index) != n or not index.is_unique:
            raise InputError(f"{where}: {len(index)} {column} id(s) given ({index.nunique()} distinct) for {n} row(s)")
        idx = index.get_indexer(values)
        unknown = np.flatnonzero(idx < 0)
        if unknown.size:
            raise InputError(
                f"{where}: {unknown.size} unknown {column} id(s) (first: {values.iloc[unknown[0]]!r} "
                f"at row {unknown[0]})"
            )
        return idx
    not_int = np.flatnonzero(~values.str.fullmatch(r"[+-]?\d+").to_numpy(dtype=bool))
    if not_int.size:
        raise InputError(
            f"{where}: column {column!r} holds {not_int.size} value(s) that are not integer row "
            f"indices (first: {values.iloc[not_int[0]]!r} at row {not_int[0]})"
        )
    idx = values.astype(np.int64).to_numpy()
    out = np.flatnonzero((idx < 0) | (idx >= n))
    if out.size:
        raise InputError(
            f"{where}: {out.size} {column} index(es) out of range 0..{n - 1} (first: {idx[out[0]]} at row {out[0]})"
        )
    return idx


def read_qrels(path, n_queries: int, n_gallery: int, *, query_ids=None, document_ids=None, name: str = "--qrels"):
    """Read graded judgments (query, document, grade) for nDCG, MRR, MAP and recall
    (:mod:`embdiag.metrics.graded`).

    Accepted: a ``.csv`` with columns ``query``, ``document`` and ``grade`` (others ignored), one
    judgment per row, TREC's convention for grades: a non-negative integer, 0 judged not
    relevant, larger better. Queries and documents are integer row indices (queries in
    ``[0, n_queries)``, documents in ``[0, n_gallery)``) or, with ``query_ids`` /
    ``document_ids``, ids matched as strings.

    Returns:
        One mapping ``{document index: grade}`` per query (empty for a query with no judgment).

    Raises:
        InputError: unreadable file, missing columns or values, unknown ids, indices out of
            range, a grade that is not a non-negative integer, a (query, document) judged twice,
            or no relevant judgment at all.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.csv"
        >>> _ = path.write_text("query,document,grade\\n0,2,3\\n0,1,0\\n2,0,1\\n")
        >>> read_qrels(path, 3, 4)
        [{1: 0, 2: 3}, {}, {0: 1}]
    """
    n_queries, n_gallery = check_int(n_queries, "n_queries", minimum=1), check_int(n_gallery, "n_gallery", minimum=1)
    path, where = _open(path, name, (".csv",))
    table = _read_table(path, where)
    missing = [c for c in ("query", "document", "grade") if c not in table.columns]
    if missing:
        raise InputError(
            f"{where}: missing column(s) {', '.join(map(repr, missing))}; found "
            f"{', '.join(map(repr, table.columns)) or 'none'}"
        )
    table = table[["query", "document", "grade"]]
    if table.empty:
        raise InputError(f"{where}: no judgments")
    _no_missing(table, where)
    q = _indices(table["query"].str.strip(), query_ids, n_queries, where, "query")
    d = _indices(table["document"].str.strip(), document_ids, n_gallery, where, "document")
    grades = table["grade"].str.strip()
    bad = np.flatnonzero(~grades.str.fullmatch(r"\+?\d+").to_numpy(dtype=bool))
    if bad.size:
        raise InputError(
            f"{where}: column 'grade' holds {bad.size} value(s) that are not non-negative integers "
            f"(first: {grades.iloc[bad[0]]!r} at row {bad[0]}); grades follow TREC: 0 not relevant, 1 and above "
            "relevant"
        )
    g = grades.astype(np.int64).to_numpy()
    twice = pd.Series(list(zip(q, d))).duplicated().to_numpy()
    if twice.any():
        first = int(np.flatnonzero(twice)[0])
        raise InputError(f"{where}: query {q[first]} judges document {d[first]} twice (again at row {first})")
    if not (g >= 1).any():
        raise InputError(f"{where}: no relevant judgment (every grade is 0)")
    out: list[dict] = [{} for _ in range(n_queries)]
    for query, document, grade in sorted(zip(q.tolist(), d.tolist(), g.tolist())):
        out[query][document] = grade
    return out


def read_pairs(
    path,
    n_queries: int,
    n_gallery: int,
    *,
    query_ids=None,
    target_ids=None,
    allow_missing: bool = False,
    name: str = "--pairs",
):
    """Read positive (query, target) pairs for Hit@k and recall@k.

    Accepted: a ``.csv`` with columns ``query`` and ``target`` (others ignored), one pair per
    row. Values are integer row indices (queries in ``[0, n_queries)``, targets in
    ``[0, n_gallery)``), or, when ``query_ids`` / ``target_ids`` are given (e.g. the ``id``
    index of :func:`read_labels`), ids matched as strings. Repeated pairs count once.

    Returns:
        The positives as ``hit_at_k`` accepts them: a list of ``n_queries`` sorted int64
        arrays. With ``allow_missing=True``: ``(positives, queries)``, the positives of only
        the queries that have any and those queries' indices (``hit_at_k(nb[queries], positives)``).

    Raises:
        InputError: unreadable file, missing columns or values, unknown ids, indices that are
            not integers or out of range, or (unless ``allow_missing``) a query without positives.
    """
    n_queries, n_gallery = check_int(n_queries, "n_queries", minimum=1), check_int(n_gallery, "n_gallery", minimum=1)
    path, where = _open(path, name, (".csv",))
    table = _read_table(path, where)
    missing = [c for c in ("query", "target") if c not in table.columns]
    if missing:
        raise InputError(
            f"{where}: missing column(s) {', '.join(map(repr, missing))}; found "
            f"{', '.join(map(repr, table.columns)) or 'none'}"
        )
    table = table[["query", "target"]]
    if table.empty:
        raise InputError(f"{where}: no pairs")
    _no_missing(table, where)
    q = _indices(table["query"].str.strip(), query_ids, n_queries, where, "query")
    t = _indices(table["target"].str.strip(), target_ids, n_gallery, where, "target")
    order = np.lexsort((t, q))
    q, t = q[order], t[order]
    positives = np.split(t, np.searchsorted(q, np.arange(1, n_queries)))
    positives = [np.unique(p) for p in positives]
    has = np.flatnonzero([p.size > 0 for p in positives])
    if has.size < n_queries and not allow_missing:
        first = np.setdiff1d(np.arange(n_queries), has)[0]
        label = repr(str(query_ids[first])) if query_ids is not None else f"index {first}"
        raise InputError(
            f"{where}: {n_queries - has.size} of {n_queries} queries have no positive (first: query {label})"
        )
    return ([positives[i] for i in has], has) if allow_missing else positives
