"""A search log as the flat click frame of the click models and propensity estimators.

:func:`click_frame` turns a :class:`~ireval_df.online.log.SearchLog` into
one row per result shown, ``search_id, query_id, position, doc_id,
clicked``, plus the searches' ``randomization`` and ``ranker`` columns when
the log has them; :func:`check_flat` checks such a frame given by the user.
Kept apart from :mod:`.click_models` and :mod:`.propensity` so that both
can use them without importing each other.
"""

from __future__ import annotations

import polars as pl

from ireval_df.errors import DataError, LogWarning, SchemaError, warn
from ireval_df.online.log import SearchLog

__all__ = ["FLAGS", "check_flat", "click_frame", "query_key"]

#: Search columns carried over to the flat frame when the log has them.
FLAGS = ("randomization", "ranker")


def query_key(log: SearchLog) -> str:
    """Return the searches column naming a query: ``query_id``, else ``query_norm``."""
    return "query_id" if "query_id" in log.searches.columns else "query_norm"


def click_frame(log: SearchLog, *, first_page: bool = False) -> pl.DataFrame:
    """Return a log's results as a flat click frame.

    One row per result shown: ``search_id``, ``query_id`` (the searches'
    ``query_id`` when there is one, else ``query_norm``), ``position``,
    ``doc_id`` and ``clicked`` (a click event at that search and position),
    then ``randomization`` and ``ranker`` when the searches have them.
    ``first_page=True`` keeps only the searches whose positions start at 1
    (a later results page shows positions 11, 12, ...: a click model needs
    every position above a click), with a counted warning when some go.
    Reading the log already dropped clicks on positions a search did not
    show; clicks it could not place (no position, no document shown) are
    counted in a warning; searches with no results have no rows.

    Examples
    --------
    >>> from ireval_df.online import example_log
    >>> flat = click_frame(example_log())
    >>> flat.filter(pl.col("clicked")).select("search_id", "position").rows()
    [('s1', 2), ('s4', 1)]
    """
    if not isinstance(log, SearchLog):
        msg = (
            f"click_frame takes a SearchLog (from read_log), not {type(log).__name__}."
        )
        raise SchemaError(msg)
    if log.results is None or "doc_id" not in log.results.columns:
        msg = (
            "the log has no results table with doc_id: a click frame needs the "
            "documents shown at each position.\n  Hint: read_log(..., results=...)."
        )
        raise SchemaError(msg)
    key = query_key(log)
    flags = [c for c in FLAGS if c in log.searches.columns]
    searches = log.searches.select(
        "search_id", pl.col(key).cast(pl.String).alias("query_id"), *flags
    )
    if log.events is not None and "position" in log.events.columns:
        unplaced = log.events.filter(
            (pl.col("event_type") == "click")
            & pl.col("search_id").is_not_null()
            & pl.col("position").is_null()
        ).height
        if unplaced:
            warn(
                f"{unplaced:,} click(s) name no position (and no document the "
                "search showed), so the click frame cannot place them: those "
                "results count as not clicked. Log the position (or the doc_id) "
                "of every click to use them.",
                LogWarning,
            )
        clicks = (
            log.events.filter(
                (pl.col("event_type") == "click")
                & pl.col("search_id").is_not_null()
                & pl.col("position").is_not_null()
            )
            .select("search_id", "position")
            .unique()
            .with_columns(clicked=pl.lit(value=True))
        )
    else:
        clicks = pl.DataFrame(
            schema={"search_id": pl.String, "position": pl.Int32, "clicked": pl.Boolean}
        )
    frame = (
        log.results.select("search_id", "position", "doc_id")
        .join(searches, on="search_id", how="inner")
        .join(clicks, on=["search_id", "position"], how="left")
        .select(
            "search_id",
            "query_id",
            "position",
            "doc_id",
            pl.col("clicked").fill_null(value=False),
            *flags,
        )
        .sort("search_id", "position")
    )
    if first_page:
        later = pl.col("position").min().over("search_id") > 1
        n_later = frame.filter(later)["search_id"].n_unique()
        if n_later:
            warn(
                f"{n_later:,} searches show a later results page (positions that do "
                "not start at 1) and are left out of the click frame: a click "
                "model reads every result above a click. To keep them, number "
                "their positions from 1 and pass the flat frame instead.",
                LogWarning,
            )
            frame = frame.filter(~later)
    return frame


def check_flat(frame: pl.DataFrame, what: str, *, clicks: bool) -> None:
    """Check a flat click frame: its columns and dtypes, then nulls and positions.

    ``clicks``: the frame must also have a ``clicked`` column of booleans (or
    0 and 1). ``what`` names the frame in the messages (``"click log"``).

    Raises
    ------
    SchemaError
        A missing column, or one of the wrong dtype.
    DataError
        A null where every result shown needs a value, a position below 1,
        a click other than 0 and 1.
    """
    _columns(frame, what, clicks=clicks)
    _values(frame, what, clicks=clicks)


def _columns(frame: pl.DataFrame, what: str, *, clicks: bool) -> None:
    needed = ["search_id", "query_id", "position", "doc_id"]
    if clicks:
        needed.append("clicked")
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        msg = (
            f"{what} is missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(c) for c in missing)} (found {frame.columns}).\n  Hint: "
            "a click log has one row per result shown: search_id, query_id, "
            "position (1 = top), doc_id, clicked; rename yours, e.g. "
            "frame.rename({'rank': 'position'})."
        )
        raise SchemaError(msg)
    for name in ("search_id", "query_id", "doc_id"):
        dtype = frame.schema[name]
        if not (
            dtype in (pl.String, pl.Null)
            or dtype.is_integer()
            or isinstance(dtype, pl.Categorical | pl.Enum)
        ):
            msg = (
                f"{what} column {name!r} has dtype {dtype}; expected strings or "
                f"integers.\n  Hint: cast it first, e.g. "
                f"pl.col({name!r}).cast(pl.String)."
            )
            raise SchemaError(msg)
    if not frame.schema["position"].is_integer():
        msg = (
            f"{what} column 'position' has dtype {frame.schema['position']}; "
            "expected integers (1 = top).\n  Hint: cast it first, e.g. "
            "pl.col('position').cast(pl.Int64)."
        )
        raise SchemaError(msg)
    if clicks:
        dtype = frame.schema["clicked"]
        if not (dtype == pl.Boolean or dtype.is_integer()):
            msg = (
                f"{what} column 'clicked' has dtype {dtype}; expected booleans "
                "(or integers 0 and 1).\n  Hint: e.g. "
                "(pl.col('n_clicks') > 0).alias('clicked')."
            )
            raise SchemaError(msg)


def _values(frame: pl.DataFrame, what: str, *, clicks: bool) -> None:
    """Nulls, positions below 1, clicks other than 0 and 1: one aggregate pass."""
    columns = ["search_id", "query_id", "position", "doc_id"]
    if clicks:
        columns.append("clicked")
    checks = [pl.col(c).null_count().alias(c) for c in columns]
    checks.append((pl.col("position") < 1).sum().alias("__ireval_low"))
    if clicks and frame.schema["clicked"] != pl.Boolean:
        checks.append((~pl.col("clicked").is_in([0, 1])).sum().alias("__ireval_bad"))
    counts = frame.select(checks).row(0, named=True)
    for name in columns:
        n = counts[name]
        if n:
            msg = (
                f"{what} has {n} null value{'s' if n > 1 else ''} in column "
                f"{name!r}; every result shown needs a {name}.\n  Hint: drop "
                f"those rows first, e.g. frame.drop_nulls({name!r}); a search "
                "that loses a row then has a gap and must be dropped whole."
            )
            raise DataError(msg)
    if counts["__ireval_low"]:
        row = frame.filter(pl.col("position") < 1).row(0, named=True)
        msg = (
            f"{what} has {counts['__ireval_low']} row(s) with a position below 1, "
            f"e.g. search_id={row['search_id']!r}, position={row['position']}; "
            "positions count from 1 (the top result).\n  Hint: for 0-based "
            "positions, pl.col('position') + 1."
        )
        raise DataError(msg)
    if counts.get("__ireval_bad"):
        msg = (
            f"{what} column 'clicked' holds {counts['__ireval_bad']} value(s) "
            "other than 0 and 1; a result is clicked or not.\n  Hint: e.g. "
            "(pl.col('clicked') > 0).alias('clicked')."
        )
        raise DataError(msg)
