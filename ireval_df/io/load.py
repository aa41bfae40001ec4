"""Read any supported file into a frame, choosing the reader by extension.

:mod:`ireval_df.schema.coerce` calls :func:`load` for paths; it passes a callback
that tells which of a header's columns it recognises, so ids are read as
strings (keeping leading zeros) without this module knowing any aliases.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ireval_df.io import tabular, trec
from ireval_df.io.files import detect_format, display
from ireval_df.io.spill import spill_trec_run

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence
    from pathlib import Path

    import polars as pl

    from ireval_df._utils.typing import Kind, PathLike

__all__ = ["Loaded", "load"]

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


def load(
    path: PathLike,
    kind: Kind,
    recognise: Callable[[Sequence[str]], Collection[str] | None],
    *,
    lenient: bool = False,
    rank: bool = True,
    scratch: Path | None = None,
) -> Loaded:
    """Read ``path`` as the format its extension names.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.
    kind : {"run", "qrels", "queries"}
        What the file should hold (chooses the TREC layout).
    recognise : callable
        Given a header, returns the id columns, to be read as strings (ids
        keep leading zeros), or None when needed columns are missing; a
        CSV/TSV file whose header then looks like a data row is read as
        header-less. Runs and qrels in CSV/TSV are read all as strings.
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
    fmt, _ = detect_format(path)
    if fmt == "trec":
        if kind == "qrels":
            return Loaded(trec.read_trec_qrels(path, lenient=lenient), fmt)
        if kind == "run":
            if scratch is not None:
                lazy = spill_trec_run(path, scratch, rank=rank)
                if lazy is not None:
                    return Loaded(lazy, fmt)
            return Loaded(trec.read_trec_run(path, rank=rank), fmt)
        return Loaded(trec.read_trec_queries(path), fmt)
    if fmt == "parquet":
        return Loaded(tabular.scan_parquet(path), fmt)
    if fmt == "json":
        return Loaded(tabular.read_json(path), fmt)
    if fmt == "jsonl":
        frame = tabular.read_ndjson(path, strings=lambda names: recognise(names) or ())
        return Loaded(frame, fmt)
    separator = "\t" if fmt == "tsv" else ","
    names = tabular.csv_columns(path, separator=separator)
    strings = recognise(names)
    if strings is None:
        headerless = _headerless(
            path, kind, names, separator, lenient=lenient, rank=rank
        )
        if headerless is not None:
            return Loaded(headerless, fmt)
    if kind != "queries":
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
