"""Read any supported file into a frame, choosing the reader by extension.

Reading is two calls, both made by :mod:`ireval_df.schema` for a path:
:func:`read_header` returns the file's format and column names, and
:func:`load` reads the file, given the id columns the caller found among
those names (read as strings, keeping leading zeros). This module knows no
aliases and never calls back into :mod:`ireval_df.schema`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ireval_df.errors import FormatError
from ireval_df.io import tabular, trec
from ireval_df.io.files import detect_format, display
from ireval_df.io.spill import spill_trec_run

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence
    from pathlib import Path

    import polars as pl

    from ireval_df._utils.typing import Kind, PathLike
    from ireval_df.io.files import Format

__all__ = ["Header", "Loaded", "load", "read_header"]

_log = logging.getLogger("ireval_df")

#: Columns of header-less CSV/TSV files, by kind and number of columns.
_HEADERLESS: dict[tuple[str, int], tuple[str, ...]] = {
    ("qrels", 4): ("query_id", "iter", "doc_id", "relevance"),
    ("queries", 2): ("query_id", "text"),
}
_RUN_FIELDS = ("query_id", "iter", "doc_id", "rank", "score", "run_id")
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True)
class Loaded:
    """What a file held.

    Attributes
    ----------
    data : polars.DataFrame, polars.LazyFrame or dict
        The table (lazy for Parquet), or a dict-of-dicts read from JSON.
    fmt : str
        The format it was read as (``"trec"``, ``"csv"``, ...).
    """

    data: pl.DataFrame | pl.LazyFrame | dict[Any, Any]
    fmt: str


@dataclass(frozen=True)
class Header:
    """A file's format and, for tables with a header, its column names.

    Attributes
    ----------
    path : str or pathlib.Path
        The file.
    fmt : str
        The format its extension names (``"trec"``, ``"csv"``, ...).
    names : tuple of str or None
        The header of a CSV/TSV file, the keys of a JSON Lines file's
        records; None for TREC text, Parquet and JSON, whose columns are
        known only once read.
    """

    path: PathLike
    fmt: Format
    names: tuple[str, ...] | None = None
    #: a JSON Lines file's bytes, read once for its keys and again not
    data: bytes | None = field(default=None, repr=False)


def read_header(path: PathLike) -> Header:
    r"""Find a file's format and, when it has one, read its header.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.

    Returns
    -------
    Header

    Raises
    ------
    FormatError
        The file cannot be read, or its first lines are malformed.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "qrels.tsv"
    >>> _ = path.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    >>> read_header(path).names
    ('query-id', 'corpus-id', 'score')
    >>> read_header("bm25.run").fmt, read_header("bm25.run").names
    ('trec', None)
    """
    fmt, _ = detect_format(path)
    if fmt in ("csv", "tsv"):
        separator = "\t" if fmt == "tsv" else ","
        names = tabular.csv_columns(path, separator=separator)
        return Header(path, fmt, tuple(names))
    if fmt == "jsonl":
        data, keys = tabular.ndjson_columns(path)
        return Header(path, fmt, tuple(keys), data)
    return Header(path, fmt)


def load(
    header: Header,
    kind: Kind,
    *,
    ids: Collection[str] | None = None,
    lenient: bool = False,
    rank: bool = True,
    scratch: Path | None = None,
) -> Loaded:
    """Read the file of ``header`` as the format its extension names.

    Parameters
    ----------
    header : Header
        The file, as :func:`read_header` returned it.
    kind : {"run", "qrels", "queries", "docs"}
        What the file should hold (chooses the TREC layout; documents have
        none and are refused in TREC text).
    ids : collection of str, optional
        The id columns among ``header.names``, read as strings (ids keep
        leading zeros); None when the header lacks a needed column, and a
        CSV/TSV file whose header then looks like a data row is read as
        header-less. Runs and qrels in CSV/TSV are read all as strings.
        Not used for TREC text, Parquet and JSON.
    lenient : bool, default False
        Keep fractional grades in TREC qrels (for :func:`ireval_df.validate`).
    rank : bool, default True
        Read the ``rank`` column of TREC runs; False leaves it out (used only
        when ``kind`` is ``"run"``; other formats are read whole).
    scratch : pathlib.Path, optional
        A folder for temporary files: a TREC run is then read window by
        window into Arrow IPC files there and returned lazy
        (:func:`ireval_df.io.spill.spill_trec_run`), where its text allows.

    Returns
    -------
    Loaded
    """
    path, fmt = header.path, header.fmt
    if fmt == "trec":
        if kind == "qrels":
            return Loaded(trec.read_trec_qrels(path, lenient=lenient), fmt)
        if kind == "run":
            if scratch is not None:
                lazy = spill_trec_run(path, scratch, rank=rank)
                if lazy is not None:
                    return Loaded(lazy, fmt)
            return Loaded(trec.read_trec_run(path, rank=rank), fmt)
        if kind == "docs":
            msg = (
                f"{display(path)}: a documents table is read from CSV, TSV, "
                f"Parquet, JSON Lines or JSON, named by its extension (.csv, "
                f".tsv, .parquet, .jsonl, .json); this name has none of them.\n"
                f"  Hint: rename the file, or read it with polars and pass the "
                f"frame."
            )
            raise FormatError(msg)
        return Loaded(trec.read_trec_queries(path), fmt)
    if fmt == "parquet":
        return Loaded(tabular.scan_parquet(path), fmt)
    if fmt == "json":
        return Loaded(tabular.read_json(path), fmt)
    if fmt == "jsonl":
        frame = tabular.read_ndjson(path, strings=ids or (), data=header.data)
        return Loaded(frame, fmt)
    separator = "\t" if fmt == "tsv" else ","
    names = header.names if header.names is not None else ()
    strings = ids
    if strings is None:
        headerless = _headerless(
            path, kind, names, separator, lenient=lenient, rank=rank
        )
        if headerless is not None:
            return Loaded(headerless, fmt)
    if kind not in ("queries", "docs"):
        strings = None  # every column as written: only mapped ones are kept
    return Loaded(
        tabular.read_csv(path, separator=separator, string_columns=strings), fmt
    )


def _headerless(
    path: PathLike,
    kind: Kind,
    header: Sequence[str],
    separator: str,
    *,
    lenient: bool = False,
    rank: bool = True,
) -> pl.DataFrame | None:
    """Read a CSV/TSV file whose first line is data, not a header, or None."""
    n = len(header)
    if kind == "run" and n >= len(_RUN_FIELDS) and _NUMBER.match(header[4]):
        if separator == "\t":  # a TREC run with a .tsv name
            frame = trec.read_trec_run(path, rank=rank)
        else:
            names = _RUN_FIELDS + tuple(f"extra_{i}" for i in range(n - 6))
            frame = tabular.read_csv(path, separator=separator, new_columns=names)
    elif (kind, n) in _HEADERLESS:
        names = _HEADERLESS[kind, n]
        looks_like_data = (
            header[0].isdigit()
            if kind == "queries"
            else bool(re.match(r"^[+-]?\d+$", header[-1]))
        )
        if not looks_like_data:
            return None
        if kind == "qrels" and separator == "\t":  # TREC qrels named .tsv
            frame = trec.read_trec_qrels(path, lenient=lenient)
        elif kind == "queries" and separator == "\t":
            # an id, then the text, which may hold tabs itself (Anserini's
            # Robust04 topics): the rest of the line, as in TREC query lists
            frame = trec.read_trec_queries(path)
        else:
            frame = tabular.read_csv(path, separator=separator, new_columns=names)
    else:
        return None
    _log.info(
        "%s: the first line is data, not a header; reading it as %s",
        display(path),
        " ".join(frame.columns),
    )
    return frame
