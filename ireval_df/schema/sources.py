"""What a source is, and reading one into a raw frame.

A source is a path (read through :mod:`ireval_df.io`), a dict-of-dicts
(``{query_id: {doc_id: value}}``), or a polars, pandas or pyarrow table.
:func:`read_source` turns any of them into a frame with the source's own
column names; mapping and checking them is :mod:`ireval_df.schema.prepare`'s
job. The flow goes one way: this module calls :mod:`ireval_df.io`, which
never calls back (the id columns a file's header holds are found here, from
the header :func:`ireval_df.io.load.read_header` returns, and handed to
:func:`ireval_df.io.load.load` as data).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df._utils.frames import is_frame_like, to_polars
from ireval_df.errors import SchemaError
from ireval_df.io.files import stem
from ireval_df.io.load import load, read_header
from ireval_df.schema.columns import recognise

if TYPE_CHECKING:
    from pathlib import Path

    from ireval_df.schema.columns import Spec

__all__ = ["Raw", "is_path", "label_of", "read_source", "run_name"]


def is_path(obj: object) -> bool:
    """Return whether ``obj`` names a file (``str`` or any ``os.PathLike``)."""
    return isinstance(obj, str | os.PathLike)


def label_of(obj: Any, kind: str) -> str:
    """Name the input in messages: ``run`` or ``run file 'bm25.run'``.

    Examples
    --------
    >>> label_of("bm25.run", "run"), label_of({}, "qrels")
    ("run file 'bm25.run'", 'qrels')
    """
    if is_path(obj):
        return f"{kind} file {os.fspath(obj)!r}"
    return kind


def run_name(obj: Any, fallback: str) -> str:
    """Name a run that has no ``run_id`` column: its file's stem, or ``fallback``.

    Examples
    --------
    >>> run_name("runs/bm25.run.gz", "run1"), run_name({}, "run1")
    ('bm25', 'run1')
    """
    return stem(obj) if is_path(obj) else fallback


@dataclass(frozen=True)
class Raw:
    """A source's table, before its columns are mapped and checked.

    Attributes
    ----------
    frame : polars.DataFrame or polars.LazyFrame
        The table with the source's own column names (lazy for Parquet files
        and LazyFrames).
    columns : mapping of str to str or None
        The ``columns=`` mapping to apply: the caller's, or None for TREC
        text, whose columns are canonical already.
    from_file : bool
        Whether the source was a file (errors in it are then
        :class:`~ireval_df.errors.FormatError`).
    """

    frame: pl.DataFrame | pl.LazyFrame
    columns: Mapping[str, str] | None
    from_file: bool


def read_source(
    obj: Any,
    spec: Spec,
    columns: Mapping[str, str] | None,
    label: str,
    *,
    lenient: bool = False,
    rank: bool = True,
    scratch: Path | None = None,
) -> Raw:
    """Read a path, dict-of-dicts or table into a raw frame.

    Parameters
    ----------
    obj : path, dict-of-dicts or table
        One source.
    spec : Spec
        What it should hold.
    columns : mapping of str to str, optional
        The caller's source -> canonical mapping; with the well-known
        spellings, it tells which columns of a CSV/TSV or JSON Lines header
        are ids (read as strings, keeping leading zeros).
    label : str
        The source, for messages.
    lenient : bool, default False
        Keep fractional grades in TREC qrels.
    rank : bool, default True
        Read the rank column of TREC runs.
    scratch : pathlib.Path, optional
        A folder to spill a TREC run to (see
        :func:`ireval_df.schema.coerce.as_run`).

    Returns
    -------
    Raw

    Raises
    ------
    SchemaError
        ``obj`` is none of these, or a dict that is not a dict-of-dicts of
        numbers (or any dict, for queries).
    FormatError
        A file cannot be read.

    Examples
    --------
    >>> from ireval_df.schema.columns import QRELS
    >>> read_source({"q1": {"d1": 1}}, QRELS, None, "qrels").frame.rows()
    [('q1', 'd1', 1)]
    """
    frame: pl.DataFrame | pl.LazyFrame
    if is_path(obj):
        header = read_header(obj)
        ids = None if header.names is None else recognise(header.names, spec, columns)
        loaded = load(
            header, spec.kind, ids=ids, lenient=lenient, rank=rank, scratch=scratch
        )
        if loaded.fmt == "trec":
            columns = None  # fixed, already canonical columns
        data = loaded.data
        frame = _from_dict(data, spec, label) if isinstance(data, dict) else data
        return Raw(frame, columns, from_file=True)
    if isinstance(obj, Mapping):
        frame = _from_dict(obj, spec, label)
    elif is_frame_like(obj):
        frame = to_polars(obj)
    else:
        expected = "a frame, a file path, a dict-of-dicts" + (
            " or a list of these" if spec.kind == "run" else ""
        )
        msg = f"{label} must be {expected}; found {type(obj).__name__}"
        raise SchemaError(msg)
    return Raw(frame, columns, from_file=False)


def _from_dict(obj: Mapping[Any, Any], spec: Spec, label: str) -> pl.DataFrame:
    """Flatten ``{query_id: {doc_id: value}}`` into a frame."""
    if spec.kind in ("queries", "docs"):
        msg = f"{label} must be a frame or a file, found a dict"
        raise SchemaError(msg)
    value_name = "score" if spec.kind == "run" else "relevance"
    qids: list[str] = []
    docs: list[str] = []
    values: list[Any] = []
    for qid, inner in obj.items():
        if not isinstance(inner, Mapping):
            msg = (
                f"{label} as a dict must be {{query_id: {{doc_id: {value_name}}}}}; "
                f"under key {qid!r} found a {type(inner).__name__}."
            )
            if is_frame_like(inner) or is_path(inner):
                msg += "\n  Hint: to stack several runs, pass a list: [run_a, run_b]."
            raise SchemaError(msg)
        qids.extend([qid if isinstance(qid, str) else str(qid)] * len(inner))
        docs.extend(d if isinstance(d, str) else str(d) for d in inner)
        values.extend(inner.values())
    try:
        series = pl.Series(values, strict=False)
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
        series = None
    if (
        series is None
        or series.len() != len(values)
        or series.dtype.is_nested()
        or series.dtype == pl.Object
    ):
        raise _dict_value_error(obj, value_name, label)
    return pl.DataFrame(
        {
            "query_id": pl.Series(qids, dtype=pl.String),
            "doc_id": pl.Series(docs, dtype=pl.String),
            value_name: series,
        }
    )


def _dict_value_error(
    obj: Mapping[Any, Any], value_name: str, label: str
) -> SchemaError:
    """Name the first value of a dict-of-dicts that is not a number."""
    where, found = "", "values of mixed types"
    for qid, inner in obj.items():
        bad = [
            (doc, v)
            for doc, v in inner.items()
            if not isinstance(v, int | float | str | type(None))
        ]
        if bad:
            doc, value = bad[0]
            where = f" under query {qid!r}, doc {doc!r}"
            found = f"a {type(value).__name__}"
            break
    return SchemaError(
        f"{label} as a dict must be {{query_id: {{doc_id: {value_name}}}}} with a "
        f"number for each document;{where} found {found}."
    )
