"""Lenient reading, for :func:`ireval_df.validate`: values kept, not checked.

:func:`as_lenient` reads an input as the strict readers of
:mod:`ireval_df.schema.coerce` do, with the same column mapping and the
same errors for inputs that cannot be read at all, but keeps the values
their data checks reject, for the caller to report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import SchemaError
from ireval_df.schema.columns import DEFAULT_RUN_ID, SPECS
from ireval_df.schema.prepare import first_line, prepare, prepare_run, prepare_runs
from ireval_df.schema.sources import label_of

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ireval_df._utils.typing import Kind

__all__ = ["Lenient", "as_lenient"]


@dataclass(frozen=True)
class Lenient:
    """An input read without its value checks, for :func:`ireval_df.validate`.

    Attributes
    ----------
    frame : polars.DataFrame
        The canonical columns, as :func:`~ireval_df.schema.coerce.as_run`,
        :func:`~ireval_df.schema.coerce.as_qrels` or
        :func:`~ireval_df.schema.coerce.as_queries` return them, except that values those reject are
        kept: null ids, null or NaN scores, repeated rows, and ``relevance``
        as Float64 so that fractional grades survive (a grade or score that
        is not a number is null).
    dtypes : mapping of str to polars.DataType
        The dtype each canonical column had in the input, before casting
        (``Int64`` for integer ids, ``String`` for text files).
    """

    frame: pl.DataFrame
    dtypes: Mapping[str, pl.DataType]


def as_lenient(
    obj: Any, kind: Kind, *, columns: Mapping[str, str] | None = None
) -> Lenient:
    """Read an input as the readers of :mod:`ireval_df.schema.coerce` do, leniently.

    Problems in the values (nulls, NaN scores, fractional or
    non-numeric grades, repeated rows) are kept for the caller to report.
    What makes the input unreadable still raises: a missing file, a
    malformed line, a missing column, an unusable dtype.

    Parameters
    ----------
    obj : frame, path or dict-of-dicts (or a list of runs when ``kind="run"``)
        As the strict readers take it.
    kind : {"run", "qrels", "queries"}
        What ``obj`` holds.
    columns : mapping of str to str, optional
        Source column name to canonical name.

    Returns
    -------
    Lenient
        The frame and the input's own dtypes.

    Raises
    ------
    SchemaError, FormatError
        As the strict readers, for unreadable inputs.

    Examples
    --------
    >>> run = pl.DataFrame({"qid": [1, 1], "docno": ["a", "a"], "sim": [float("nan"), 1]})
    >>> read = as_lenient(run, "run")
    >>> read.frame.rows(), read.dtypes["query_id"]
    ([('run', '1', 'a', nan), ('run', '1', 'a', 1.0)], Int64)
    """
    if kind == "run" and isinstance(obj, list | tuple):
        prepared = prepare_runs(obj, columns, lenient=True)
    elif kind == "run":
        label = label_of(obj, "run")
        prepared = prepare_run(obj, columns, None, DEFAULT_RUN_ID, label, lenient=True)
    else:
        spec = SPECS[kind]
        prepared = prepare(obj, spec, columns, label_of(obj, kind), lenient=True)
    try:
        frame = prepared.frame.collect()
    except pl.exceptions.PolarsError as exc:  # a LazyFrame whose plan fails
        msg = f"could not read {label_of(obj, kind)}: {first_line(exc)}"
        raise SchemaError(msg) from exc
    return Lenient(frame, prepared.dtypes)
