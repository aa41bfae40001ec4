"""What every chart shares: altair on first use, the input frame, colours, sizes."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df._utils.frames import eager
from ireval_df.errors import IrevalError, SchemaError
from ireval_df.measures.properties import properties

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

__all__ = [
    "ALL",
    "between",
    "records",
    "OUTCOME_COLORS",
    "OUTCOMES",
    "WIDTH",
    "altair",
    "outcome_color",
    "title",
    "direction",
    "outcome",
    "read_frame",
    "slice_label",
]

#: Width of one panel, in pixels; a panel's height follows its rows
WIDTH = 360
#: The label of the one slice of an unsliced frame
ALL = "all"
#: The outcome of a tested difference, in legend order, and its colour
OUTCOMES = ("better (significant)", "not significant", "worse (significant)")
OUTCOME_COLORS = ("#1a9850", "#8c8c8c", "#d73027")


def altair() -> ModuleType:
    """Import altair, or say which extra installs it.

    Returns
    -------
    module
        ``altair``, imported on the first chart asked for, never by
        ``import ireval_df``.

    Raises
    ------
    IrevalError
        altair is not installed.
    """
    try:
        return importlib.import_module("altair")
    except ImportError as exc:
        msg = (
            "charts need altair (and vl-convert-python to save PNG or SVG), "
            'found neither installed.\n  Hint: pip install "ireval-df[plot]"'
        )
        raise IrevalError(msg) from exc


def read_frame(
    obj: Any, needed: Sequence[str], *, chart: str, producer: str
) -> pl.DataFrame:
    """Return a chart's input as an eager polars frame, its columns checked.

    Parameters
    ----------
    obj : polars DataFrame or LazyFrame, pandas DataFrame or pyarrow Table
        The frame a function of the library returned.
    needed : sequence of str
        The columns the chart reads.
    chart : str
        The chart's function, for the message (``"plot.deltas"``).
    producer : str
        The function that returns such a frame (``"ie.compare"``).

    Returns
    -------
    polars.DataFrame

    Raises
    ------
    SchemaError
        ``obj`` is no frame, or lacks some of ``needed``: the message names
        them and ``producer``.

    Examples
    --------
    >>> read_frame(pl.DataFrame({"a": [1]}), ["a"], chart="c", producer="p").shape
    (1, 1)
    """
    frame = eager(
        obj, f"a frame for {chart}()", f"pass the frame {producer}() returns."
    )
    absent = [column for column in needed if column not in frame.columns]
    if absent:
        msg = (
            f"{chart}() needs column(s) {absent!r}, which the frame lacks "
            f"(found {frame.columns!r}).\n"
            f"  Hint: pass the frame {producer}() returns."
        )
        raise SchemaError(msg)
    return frame


def slice_label(frame: pl.DataFrame, by: Sequence[str]) -> pl.Expr:
    """Return one text label per row for the slice columns ``by``.

    One column gives its values (``"informational"``), several their values
    joined (``"informational, en"``: the axis title names the columns), none
    gives ``"all"``.

    Examples
    --------
    >>> frame = pl.DataFrame({"c": ["x", None], "d": [1, 2]})
    >>> frame.select(slice_label(frame, ["c"]))["c"].to_list()
    ['x', 'null']
    >>> frame.select(slice_label(frame, ["c", "d"]).alias("s"))["s"].to_list()
    ['x, 1', 'null, 2']
    """
    if not by:
        return pl.lit(ALL)
    texts = [pl.col(c).cast(pl.String).fill_null("null") for c in by]
    return texts[0] if len(by) == 1 else pl.concat_str(texts, separator=", ")


def direction(
    metrics: Sequence[str], *, higher_is_better: bool | Mapping[str, bool] | None = None
) -> dict[str, bool]:
    """Return whether higher is better for each metric name.

    Registry measures bring their own direction; any other name (a user's
    own score) takes ``higher_is_better`` (one for all, or per name), else
    higher is better. Contradicting the registry is an ``OptionError``.

    Examples
    --------
    >>> direction(["AP", "ZeroResultRate"])
    {'AP': True, 'ZeroResultRate': False}
    >>> direction(["latency_ms", "AP"], higher_is_better={"latency_ms": False})
    {'latency_ms': False, 'AP': True}
    """
    out = {}
    for name in metrics:
        # a bool applies to unregistered names only; a mapping's entry is checked
        given: bool | dict[str, bool] = (
            higher_is_better
            if isinstance(higher_is_better, bool)
            else {name: higher_is_better[name]}
            if isinstance(higher_is_better, Mapping) and name in higher_is_better
            else True
        )
        out[name] = properties([name], higher_is_better=given)[0].higher_is_better
    return out


def outcome(delta: pl.Expr, significant: pl.Expr, higher: pl.Expr) -> pl.Expr:
    """Return the outcome of a tested difference as one of :data:`OUTCOMES`.

    ``higher`` says, row by row, whether higher is better.

    Examples
    --------
    >>> frame = pl.DataFrame({"d": [0.1, -0.1, 0.1], "s": [True, True, False]})
    >>> frame.select(outcome(pl.col("d"), pl.col("s"), pl.lit(True)).alias("o"))["o"].to_list()
    ['better (significant)', 'worse (significant)', 'not significant']
    """
    better = pl.when(higher).then(delta > 0).otherwise(delta < 0)
    return (
        pl.when(significant.fill_null(value=False).not_())
        .then(pl.lit(OUTCOMES[1]))
        .when(better)
        .then(pl.lit(OUTCOMES[0]))
        .otherwise(pl.lit(OUTCOMES[2]))
    )


def between(frame: pl.DataFrame, first: str, last: str) -> list[str]:
    """Return the columns between ``first`` and ``last``: a result's slices.

    The library's results put their ``by`` columns after their keys and
    before ``metric`` (``run_id, baseline, query_class, metric, ...``).

    Examples
    --------
    >>> between(pl.DataFrame({"a": [1], "s": [1], "m": [1]}), "a", "m")
    ['s']
    """
    columns = frame.columns
    return columns[columns.index(first) + 1 : columns.index(last)]


def records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Return the rows as JSON-ready dicts, the chart's inline data.

    Inline values need neither pyarrow nor altair's dataframe support, and
    a chart's JSON carries its data, for a report to embed. Times become
    ISO text.

    Examples
    --------
    >>> records(pl.DataFrame({"a": [1], "b": ["x"]}))
    [{'a': 1, 'b': 'x'}]
    """
    temporal = [c for c, t in frame.schema.items() if t.is_temporal()]
    return frame.with_columns(pl.col(temporal).cast(pl.String)).to_dicts()


def title(alt: Any, text: str, subtitle: str | list[str]) -> Any:
    """Return a chart title: bold, with a subtitle (a list: lines), at the left edge."""
    return alt.TitleParams(text, subtitle=subtitle, anchor="start", fontSize=15)


def outcome_color(alt: Any) -> Any:
    """Return the colour encoding of a tested difference (:func:`outcome`)."""
    return alt.Color(
        "outcome:N",
        scale=alt.Scale(domain=list(OUTCOMES), range=list(OUTCOME_COLORS)),
        legend=alt.Legend(title="outcome", orient="bottom"),
    )
