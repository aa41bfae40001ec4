"""A search log as the flat click frame of the click models and propensity estimators.

:func:`click_frame` turns a :class:`~ireval_df.online.log.SearchLog` into
one row per result shown, ``search_id, query_id, position, doc_id,
clicked``, plus the searches' ``randomization`` and ``ranker`` columns when
the log has them. Kept apart from :mod:`.click_models` and
:mod:`.propensity` so that both can use it without importing each other.
"""

from __future__ import annotations

import polars as pl

from ireval_df.errors import LogWarning, SchemaError, warn
from ireval_df.online.log import SearchLog

__all__ = ["FLAGS", "click_frame", "query_key"]

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
