"""Conversions between pandas / pyarrow and polars (the only place doing them).

pandas and pyarrow are optional: they are imported inside the functions that
need them, and only when the caller already handed over one of their objects
(checked through ``sys.modules``, so a polars-only program never loads them).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import IrevalError, SchemaError

if TYPE_CHECKING:
    from types import ModuleType

    import pandas as pd

__all__ = [
    "cut_like",
    "is_frame_like",
    "is_pandas",
    "is_pyarrow",
    "to_pandas",
    "to_polars",
    "with_series",
]


def _require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import an optional dependency or explain how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        msg = f'{purpose} needs {module}: pip install "ireval-df[{extra}]"'
        raise IrevalError(msg) from exc


def is_pandas(obj: object) -> bool:
    """Tell whether ``obj`` is a pandas DataFrame, without importing pandas.

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
        True for a ``pandas.DataFrame`` (pandas must already be imported for
        such an object to exist, so ``sys.modules`` is checked first).

    Examples
    --------
    >>> is_pandas(pl.DataFrame({"a": [1]}))
    False
    """
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(obj, pd.DataFrame)


def is_pyarrow(obj: object) -> bool:
    """Tell whether ``obj`` is a pyarrow Table or RecordBatch, without importing it.

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
        True for a ``pyarrow.Table`` or ``pyarrow.RecordBatch``.

    Examples
    --------
    >>> is_pyarrow([1, 2])
    False
    """
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(obj, pa.Table | pa.RecordBatch)


def is_frame_like(obj: object) -> bool:
    """Tell whether ``obj`` is a table :func:`to_polars` converts.

    Examples
    --------
    >>> is_frame_like(pl.LazyFrame({"a": [1]})), is_frame_like({"q1": {}})
    (True, False)
    """
    return (
        isinstance(obj, pl.DataFrame | pl.LazyFrame)
        or is_pandas(obj)
        or is_pyarrow(obj)
    )


def to_polars(obj: Any) -> pl.DataFrame | pl.LazyFrame:
    """Return ``obj`` as a polars frame; polars frames come back as they are.

    Parameters
    ----------
    obj : polars.DataFrame, polars.LazyFrame, pandas.DataFrame or pyarrow.Table
        The table to convert. A pandas index with a name is kept as a column
        (``df.set_index("query_id")`` round-trips); an unnamed index is dropped.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        Lazy stays lazy; pandas and pyarrow inputs give a ``DataFrame``.
        The input is never modified.

    Raises
    ------
    SchemaError
        ``obj`` is no table, or a pandas column mixes types (e.g. ``str`` and
        ``int``) that no polars dtype holds.

    Examples
    --------
    >>> to_polars(pl.DataFrame({"a": [1]})).shape
    (1, 1)
    """
    if isinstance(obj, pl.DataFrame | pl.LazyFrame):
        return obj
    if is_pandas(obj):
        return _from_pandas(obj)
    if is_pyarrow(obj):
        try:
            frame = pl.from_arrow(obj)
        except Exception as exc:  # pyarrow and polars raise their own types
            msg = f"could not convert the pyarrow table to polars: {exc}"
            raise SchemaError(msg) from exc
        if not isinstance(frame, pl.DataFrame):  # pragma: no cover - Table in
            frame = frame.to_frame()
        return frame
    msg = (
        f"expected a polars or pandas DataFrame, a polars LazyFrame or a "
        f"pyarrow Table, found {type(obj).__name__}"
    )
    raise SchemaError(msg)


def _from_pandas(df: pd.DataFrame) -> pl.DataFrame:
    """Convert a pandas frame, naming the column when a conversion fails."""
    include_index = any(name is not None for name in df.index.names)
    try:
        return pl.from_pandas(df, include_index=include_index)
    except Exception as exc:  # pyarrow raises its own types: find the column
        failing = _failing_pandas_column(df)
        if failing is None:
            msg = f"could not convert the pandas frame to polars: {exc}"
            raise SchemaError(msg) from exc
        kinds = sorted({type(v).__name__ for v in df[failing].dropna().head(1000)})
        msg = (
            f"pandas column {failing!r} mixes value types {kinds}, which no "
            f"column type holds.\n  Hint: convert it first, e.g. "
            f"df[{failing!r}] = df[{failing!r}].astype(str)."
        )
        raise SchemaError(msg) from exc


def _failing_pandas_column(df: pd.DataFrame) -> str | None:
    """Return the name of the first column pyarrow cannot convert."""
    for name in df.columns:
        try:
            pl.from_pandas(df[[name]])
        except Exception:  # any failure identifies the column
            return str(name)
    return None


def eager(obj: Any, what: str, hint: str) -> pl.DataFrame:
    """Return a table given as polars (lazy or not), pandas or pyarrow as an eager polars DataFrame.

    ``what`` names the table and ``hint`` says what to pass, for the error.

    Raises
    ------
    SchemaError
        ``obj`` is no table.

    Examples
    --------
    >>> eager(pl.LazyFrame({"a": [1]}), "runs", "pass a run.").shape
    (1, 1)
    """
    frame = obj
    if is_pandas(obj) or is_pyarrow(obj):
        frame = to_polars(obj)
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    if not isinstance(frame, pl.DataFrame):
        msg = (
            f"expected {what} as a polars or pandas DataFrame, found "
            f"{type(obj).__name__!r}.\n  Hint: {hint}"
        )
        raise SchemaError(msg)
    return frame


def to_pandas(df: pl.DataFrame) -> pd.DataFrame:
    """Return a polars DataFrame as a pandas DataFrame.

    Parameters
    ----------
    df : polars.DataFrame
        The frame to convert.

    Returns
    -------
    pandas.DataFrame
        Same columns and rows; strings use pandas' default string dtype.

    Raises
    ------
    IrevalError
        pandas or pyarrow is not installed.

    Examples
    --------
    >>> to_pandas(pl.DataFrame({"a": [1, 2]}))["a"].tolist()
    [1, 2]
    """
    _require("pandas", "pandas", "returning a pandas frame")
    _require("pyarrow", "pandas", "returning a pandas frame")
    return df.to_pandas()


def with_series(frame: pl.DataFrame, series: list[pl.Series]) -> pl.DataFrame:
    """``frame.with_columns(series)``, each Series cut at the frame's chunks.

    A frame read from Parquet has one chunk per row group, while a Series
    computed from it is usually one chunk. polars re-aligns a frame whose
    columns are chunked differently by copying every column, at each later
    ``select``, ``filter`` or ``drop`` (3 s for one ``drop`` on 50M rows
    from 60 row groups). Slices cost nothing, so the new columns are cut
    to the frame's layout instead (:func:`cut_like`).

    Examples
    --------
    >>> frame = pl.concat([pl.DataFrame({"a": [1, 2]}), pl.DataFrame({"a": [3]})],
    ...                   rechunk=False)
    >>> out = with_series(frame, [pl.Series("b", [4, 5, 6])])
    >>> out.n_chunks("all"), out["b"].to_list()
    ([2, 2], [4, 5, 6])
    """
    return frame.with_columns(cut_like(frame, series))


def cut_like(frame: pl.DataFrame, series: list[pl.Series]) -> list[pl.Series]:
    """Cut each Series of ``frame``'s height at the frame's chunk boundaries.

    Unchanged when the frame is one chunk, when its columns are chunked
    differently from each other, or when a Series is already in as many
    chunks (or of another length).
    """
    layouts = frame.n_chunks("all") if frame.width else [1]
    if max(layouts) == 1 or min(layouts) != max(layouts):
        return series
    bounds = [c.len() for c in frame.to_series(0).get_chunks()]
    cut = []
    for s in series:
        if s.n_chunks() == len(bounds) or s.len() != frame.height:
            cut.append(s)
            continue
        parts, at = [], 0
        for n in bounds:
            parts.append(s.slice(at, n))
            at += n
        cut.append(pl.concat(parts, rechunk=False))
    return cut
