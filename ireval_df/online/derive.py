"""The derived frames every online metric reads, built once per call.

A metric is a ratio of two sums over the rows of one *grain* (a
:class:`Measure`): searches, displayed results, clicks or sessions. This
module builds, lazily and once for all the metrics of a call, the frame of
each grain they need, with the columns they need:

``click`` (one row per click attributed to a search)
    its search and position, ``ts``, the dwell time in seconds (the
    client's ``dwell_ms`` when given, else the time to the next logged
    action of the session, search result pages included; null for the
    session's last action) and whether it is the session's last click.
``result`` (one row per displayed slot)
    its search, position, attributes, and whether it was clicked.
``search`` (one row per result page served)
    clicks (count, top position, first time), add-to-carts, purchases and
    revenue attributed by ``search_id``, ``abandoned`` (results shown, no
    click, no add-to-cart, no purchase), and the next search of the
    session (its normalised query and the gap to it) for reformulations.
``session`` (one row per session and arm)
    its number of queries and searches, the outcome columns measures
    define over its searches, and the slice attributes of its first search.

Every grain frame carries ``experiment_id``, ``variant``, ``unit_id`` and
the requested slice columns. Joins use the integer keys
:func:`~ireval_df.online.log.read_log` computed; no Python loop runs over
rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._utils.frames import cut_like, with_series
from ireval_df.errors import MetricSpecError, OptionError
from ireval_df.measures import Metric, parse_metrics
from ireval_df.online.log import ADD_TO_CART, CLICK, PURCHASE, slot_key

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ireval_df.online.log import SearchLog

__all__ = [
    "AGE_BUCKET",
    "GRAINS",
    "KEYS",
    "Def",
    "Grain",
    "Measure",
    "col",
    "derive",
    "slice_columns",
]

Grain = Literal["search", "result", "click", "session"]
#: The grains, in the order their frames are built.
GRAINS: tuple[Grain, ...] = ("search", "result", "click", "session")
Stage = Literal["click", "click_search", "search", "session"]
#: The columns every grain frame is grouped by before the slices.
KEYS = ("experiment_id", "variant")
#: The slice derived from ``published_at`` with :func:`ireval_df.age_buckets`.
AGE_BUCKET = "age_bucket"


def col(name: str) -> str:
    """Return the name of a derived column (``__ireval_<name>``).

    Examples
    --------
    >>> col("has_click")
    '__ireval_has_click'
    """
    return "__ireval_" + name


SEARCH = col("search")  # a search's row number in log.searches
SESSION = col("session")
NEXT = col("next")
HAS_RESULTS = col("has_results")
N_CLICKS = col("n_clicks")
TOP_CLICK = col("top_click")
FIRST_CLICK = col("first_click")
HAS_CLICK = col("has_click")
N_ADD_TO_CART = col("n_add_to_cart")
N_PURCHASE = col("n_purchase")
REVENUE = col("revenue")
ABANDONED = col("abandoned")
NEXT_QUERY = col("next_query")
NEXT_GAP = col("next_gap")
NEXT_TS = col("next_ts")
ANSWER = col("answer")
DWELL = col("dwell")
LAST_CLICK = col("last_click")
CLICKED = col("clicked")
N_QUERIES = col("n_queries")
N_SEARCHES = col("n_searches")


@dataclass(frozen=True)
class Def:
    """A derived column a measure needs, at one stage, under a name that encodes it.

    ``stage``: ``click`` (a column of click rows), ``click_search`` (an
    aggregate of a search's clicks), ``search`` (a column of search rows),
    ``session`` (an aggregate of a session's searches). Two measures that
    define one name share the column; defining it two ways is an error.
    """

    name: str
    stage: Stage
    expr: pl.Expr


@dataclass(frozen=True)
class Measure:
    """How one metric is computed: a ratio of sums over the rows of one grain.

    Attributes
    ----------
    grain : {"search", "result", "click", "session"}
        Whose rows are summed.
    numer, denom : polars.Expr
        Per row of the grain frame; the metric over a set of rows (an arm, a
        slice, a unit) is ``sum(numer) / sum(denom)``. Per-unit sums of both
        are what the A/B tests read.
    defs : tuple of Def
        The derived columns ``numer`` and ``denom`` read.
    needs : frozenset of str
        Which parts of the log the grain frame must join: ``clicks``,
        ``commerce``, ``next`` (the next search), ``answer``.
    median : polars.Expr, optional
        For a median metric: the per-row value (null: not counted); the
        metric is its median, which no per-unit sums give.
    by_position : bool
        One value per displayed position (a ``position`` column).
    """

    grain: Grain
    numer: pl.Expr
    denom: pl.Expr
    defs: tuple[Def, ...] = ()
    needs: frozenset[str] = field(default_factory=frozenset)
    median: pl.Expr | None = None
    by_position: bool = False


@dataclass(frozen=True)
class Slices:
    """The slice columns of a call, by the table that holds them."""

    search: tuple[str, ...]
    result: tuple[str, ...]

    @property
    def all(self) -> tuple[str, ...]:
        """Every slice column, in the caller's order."""
        return self.search + self.result


_RESERVED = {
    "experiment_id",
    "variant",
    "unit_id",
    "metric",
    "value",
    "n_units",
    "n_searches",
}


def slice_columns(
    log: SearchLog,
    by: str | Sequence[str] | None,
    grains: Mapping[str, Grain],
    *,
    reserved: Iterable[str] = (),
) -> tuple[list[str], Slices]:
    """Check ``by`` against the log and the metrics' grains.

    A column of ``searches`` slices every metric (a result, click or
    session takes its search's value; a session its first search's). A
    column of ``results`` (or ``age_bucket``, from ``published_at``) slices
    only result- and click-grain metrics: slicing a per-search or
    per-session metric by an attribute of the documents shown or clicked
    would select searches by their outcome.

    Returns
    -------
    tuple
        The slice columns in order, and the same split by table.
    """
    if by is None:
        names: list[str] = []
    elif isinstance(by, str):
        names = [by]
    else:
        names = list(by)
    taken = _RESERVED | set(reserved)
    search_cols = set(log.searches.columns)
    result_cols = set() if log.results is None else set(log.results.columns)
    if log.results is not None and "published_at" in result_cols:
        result_cols.add(AGE_BUCKET)
    result_cols.discard("search_id")
    on_search: list[str] = []
    on_result: list[str] = []
    for name in names:
        if not isinstance(name, str):
            msg = f"by= takes column names, found {name!r}"
            raise OptionError(msg)
        if name in taken:
            msg = (
                f"by={name!r}: {name!r} is a column of the result already "
                f"(results are by {', '.join(KEYS)}); slice by another column."
            )
            raise OptionError(msg)
        if names.count(name) > 1:
            msg = f"by= names {name!r} twice"
            raise OptionError(msg)
        if name in search_cols and name in result_cols:
            msg = (
                f"by={name!r} is ambiguous: both searches and results have a "
                f"column {name!r}.\n  Hint: rename one when reading, e.g. "
                f"columns={{'results': {{{name!r}: 'doc_{name}'}}}}."
            )
            raise OptionError(msg)
        if name in search_cols:
            on_search.append(name)
        elif name in result_cols:
            on_result.append(name)
        else:
            hint = (
                " (age_bucket needs a published_at column in results)"
                if name == AGE_BUCKET
                else ""
            )
            msg = (
                f"by={name!r} is not a column of searches or results{hint}; "
                f"searches have {sorted(search_cols)!r}"
                + (
                    f", results have {sorted(result_cols)!r}"
                    if log.results is not None
                    else ", and there is no results table"
                )
                + "."
            )
            raise OptionError(msg)
    if on_result:
        coarse = sorted(m for m, g in grains.items() if g in ("search", "session"))
        if coarse:
            msg = (
                f"by={on_result!r} slices by an attribute of the results, but "
                f"{coarse!r} {'is a' if len(coarse) == 1 else 'are'} per-search or "
                f"per-session metric{'s' if len(coarse) > 1 else ''}: a search "
                f"would be counted in the slices of the documents it showed or "
                f"its user clicked, which selects searches by their outcome "
                f"(selection bias).\n  Hint: slice those metrics by search "
                f"attributes (query_class, device ...), and use result-grain "
                f"metrics (ImpressionCTR, PositionCTR) or click-grain ones "
                f"(DwellTime, SatClickRate) for document slices."
            )
            raise OptionError(msg)
    return names, Slices(tuple(on_search), tuple(on_result))


def _merge(defs: Iterable[Def]) -> dict[Stage, dict[str, pl.Expr]]:
    """Group the measures' definitions by stage, refusing a name defined twice."""
    out: dict[Stage, dict[str, pl.Expr]] = {}
    for d in defs:
        stage = out.setdefault(d.stage, {})
        if d.name in stage and not stage[d.name].meta.eq(d.expr):
            msg = f"derived column {d.name!r} is defined two different ways"
            raise ValueError(msg)
        stage[d.name] = d.expr
    return out


@dataclass(frozen=True)
class Derived:
    """The grain frames of one call, lazy, keyed by integers.

    Every grain frame has ``__ireval_group`` (one UInt64 per experiment,
    variant and search slices: its search's), ``__ireval_unit`` (one per
    unit) and, for results and clicks, the result slices. ``labels`` maps
    each group key back to ``experiment_id``, ``variant`` and the search
    slices; ``groups`` lists every (group, unit, result slices) the log has,
    so that a group without a row at some grain still gets its zeros.
    ``shown`` (with a result-grain frame) has the group and unit keys of
    each search with at least one result row: who the result grain counts.
    """

    frames: Mapping[Grain, pl.LazyFrame]
    slices: Slices
    labels: pl.DataFrame
    groups: pl.LazyFrame
    units: pl.LazyFrame
    shown: pl.LazyFrame | None = None


GROUP = col("group")
UNIT = col("unit")
FIRST = col("first")
#: 1 per row of any grain frame (a literal would sum to 1 per group)
ONE = pl.col(GROUP).is_not_null().cast(pl.Int64)


def _group_key(frame: pl.DataFrame, columns: Sequence[str]) -> pl.Series:
    """One small UInt64 (below 2**32) per distinct combination of ``columns``.

    Each column is coded by the rank of its value among the column's
    distinct values (null last), and the codes combined in mixed radix:
    exact, with no hash of the rows. Small codes let a pass by position
    group on one packed key (see :func:`group_sums`). Columns of other
    dtypes, or too many combinations, take a dense rank of the rows.
    """
    simple = all(
        frame.schema[c] == pl.String
        or frame.schema[c] == pl.Boolean
        or frame.schema[c].is_integer()
        or frame.schema[c].is_temporal()
        for c in columns
    )
    if simple:
        # every column's distinct values, then every code, each in one
        # select: polars runs a select's expressions in parallel
        found = frame.select(
            pl.col(c).unique().drop_nulls().sort().implode() for c in columns
        )
        distinct = {c: found[c][0] for c in columns}
        size = 1
        for values in distinct.values():
            size *= values.len() + 1
        if size < 1 << 32:
            total: pl.Expr | None = None
            for name, values in distinct.items():
                column = pl.col(name)
                code = (
                    column.cast(pl.Enum(values)).to_physical()
                    if frame.schema[name] == pl.String
                    else pl.lit(values).search_sorted(column)
                )
                code = (
                    pl.when(column.is_not_null())
                    .then(code)
                    .otherwise(values.len())
                    .cast(pl.UInt64)
                )
                total = code if total is None else total * (values.len() + 1) + code
            if total is not None:
                return frame.select(total.alias("h"))["h"]
    combined = pl.struct([pl.col(c) for c in columns])
    return frame.select((combined.rank("dense") - 1).cast(pl.UInt64).alias("h"))["h"]


def derive(log: SearchLog, measures: Sequence[Measure], slices: Slices) -> Derived:
    """Build the frame of every grain the measures read, lazily.

    Parameters
    ----------
    log : SearchLog
        The log, as :func:`~ireval_df.online.log.read_log` returned it.
    measures : sequence of Measure
        What the call computes; their grains, needs and definitions decide
        which frames and columns are built.
    slices : Slices
        The slice columns, by table (see :func:`slice_columns`).

    Returns
    -------
    Derived
        One LazyFrame per grain needed, with the group and unit keys, the
        result slices and every column the measures read.

    Notes
    -----
    Search attributes reach results and clicks by their search's row number
    (a gather), never by a join on text; the group key codes the slice
    columns' values exactly (:func:`_group_key`), the unit key is a 64-bit
    hash checked to be exact (:func:`~ireval_df.online.log.exact_key`).
    """
    grains = {m.grain for m in measures}
    needs = set().union(*(m.needs for m in measures)) if measures else set()
    defs = _merge(d for m in measures for d in m.defs)
    if "session" in grains:
        needs |= {"clicks", "commerce"}
    if defs.get("click_search") or "click" in grains:
        needs.add("clicks")
    searches = log.with_keys("searches")
    # one chunk each: clicks and results gather them by row number, several
    # times faster than from columns cut at the file's row groups
    group = _group_key(searches, [*KEYS, *slices.search]).rechunk()
    unit = log.index.unit.rechunk()
    added = [group.alias(GROUP), unit.alias(UNIT)]
    if "next" in needs:  # the next search of the session, by row number
        at = log.index.next_search
        added += [
            log.searches["query_norm"].gather(at).alias(NEXT_QUERY),
            log.searches["ts"].gather(at).alias(NEXT_TS),
        ]
    searches = with_series(searches, added)
    # one row per group: its first search's values (a distinct of one
    # integer column, then a gather of those rows)
    labels = searches.select(GROUP, *KEYS, *slices.search)[searches[GROUP].arg_unique()]
    units = searches.lazy().select(UNIT, "unit_id").unique(UNIT, keep="any")
    frames: dict[Grain, pl.LazyFrame] = {}
    clicks = None
    shown = None
    if "clicks" in needs or "click" in grains or "result" in grains:
        clicks = _clicks(log, defs.get("click", {}), group, unit)
    search = _search_frame(log, searches, clicks, needs, defs)
    if {"search", "session"} <= grains:  # two passes read it: build it once
        search = search.collect().lazy()
    if "search" in grains:
        frames["search"] = search
    if "session" in grains:
        frames["session"] = _session_frame(search, defs.get("session", {}))
    results = None
    if "result" in grains or slices.result:
        results = _result_frame(log, searches, (group, unit), slices.result)
    if "result" in grains:
        assert results is not None  # noqa: S101 - built just above
        assert clicks is not None  # noqa: S101
        flags = _clicked_rows(log)
        if flags is None:  # results not in order: a hash set of the clicked slots
            clicked = (
                clicks.filter(pl.col("position").is_not_null())
                .select(slot_key(pl.col(SEARCH), pl.col("position")).alias("slot"))
                .collect()
                .to_series()
            )
            assert log.index.result_slot is not None  # noqa: S101 - results exist
            slots = pl.lit(log.index.result_slot)
            frames["result"] = results.with_columns(
                slots.is_in(clicked.implode()).alias(CLICKED)
            )
        else:
            frames["result"] = results.with_columns(pl.lit(flags).alias(CLICKED))
        if len({m.by_position for m in measures if m.grain == "result"}) > 1:
            frames["result"] = frames["result"].collect().lazy()  # two passes
        assert log.index.result_search is not None  # noqa: S101 - results exist
        has_rows = pl.repeat(value=False, n=searches.height, eager=True)
        has_rows.scatter(log.index.result_search, True)  # noqa: FBT003 - the value
        shown = searches.lazy().select(GROUP, UNIT).filter(has_rows)
    if "click" in grains:
        assert clicks is not None  # noqa: S101
        frame = clicks
        if slices.result:
            assert results is not None  # noqa: S101
            assert log.index.result_slot is not None  # noqa: S101 - results exist
            attrs = results.select(
                pl.lit(log.index.result_slot).alias("__ireval_slot"), *slices.result
            ).unique("__ireval_slot", keep="any")
            frame = frame.with_columns(
                slot_key(pl.col(SEARCH), pl.col("position").clip(0)).alias(
                    "__ireval_slot"
                )
            ).join(attrs, on="__ireval_slot", how="left")
        frames["click"] = frame
    group_keys = [GROUP, UNIT, *slices.result]
    source = searches.lazy() if not slices.result else results
    assert source is not None  # noqa: S101 - results exist with result slices
    groups = source.select(group_keys).unique()
    return Derived(frames, slices, labels, groups, units, shown)


def _clicked_rows(log: SearchLog) -> pl.Series | None:
    """Whether each result row was clicked, when read_log found each click's row.

    A click kept by read_log with a row
    (:attr:`~ireval_df.online.log._Index.event_result`) was attributed to a
    search and displayed. None when read_log did not find the rows
    (results not in order).
    """
    rows = log.index.event_result
    if rows is None or log.results is None:
        return None
    flags = pl.repeat(value=False, n=log.results.height, eager=True)
    flags.scatter(rows.drop_nulls(), True)  # noqa: FBT003 - the value
    return flags


def _clicks(
    log: SearchLog, defs: Mapping[str, pl.Expr], group: pl.Series, unit: pl.Series
) -> pl.LazyFrame:
    """One row per click attributed to a search: position, time, dwell, last click."""
    if log.events is None:
        return pl.LazyFrame(
            schema={
                SEARCH: log.index.next_search.dtype,
                "position": pl.Int32,
                "ts": pl.Datetime("us"),
                DWELL: pl.Float64,
                LAST_CLICK: pl.Boolean,
                GROUP: pl.UInt64,
                UNIT: pl.UInt64,
            }
        ).with_columns(**defs)
    events = log.with_keys("events")
    explicit = (
        pl.col("dwell_ms").cast(pl.Float64) / 1000.0
        if "dwell_ms" in log.events.columns
        else pl.lit(None, pl.Float64)
    )
    timeline = (pl.col("__ireval_next_ts") - pl.col("ts")).dt.total_microseconds()
    clicks = events.filter(
        (pl.col("event_type") == CLICK) & pl.col(SEARCH).is_not_null()
    ).select(
        SEARCH,
        "position",
        "ts",
        pl.coalesce(explicit, timeline.cast(pl.Float64) / 1e6).alias(DWELL),
        pl.col("__ireval_last_click").alias(LAST_CLICK),
    )
    at = clicks[SEARCH]
    return (
        with_series(
            clicks, [group.gather(at).alias(GROUP), unit.gather(at).alias(UNIT)]
        )
        .lazy()
        .with_columns(**defs)
    )


def _spread(
    frame: pl.LazyFrame,
    per_search: pl.LazyFrame,
    searches: pl.DataFrame,
    zero: Sequence[str],
) -> pl.LazyFrame:
    """Add ``per_search``'s columns to the search frame, ``zero`` filled with 0.

    What ``frame.join(per_search, on=SEARCH, how="left")`` gives, without
    copying the searches' columns: ``SEARCH`` is the search's row number,
    so each column is scattered to its rows (cut like ``searches``' chunks).
    """
    n = searches.height
    got = per_search.collect()
    at = got[SEARCH]
    columns = []
    for name in got.columns:
        if name == SEARCH:
            continue
        values = got[name]
        physical = values.to_physical()
        full = (
            pl.zeros(n, dtype=physical.dtype, eager=True)
            if name in zero
            else pl.repeat(None, n, dtype=physical.dtype, eager=True)
        )
        full.scatter(at, physical)
        columns.append(full.cast(values.dtype).alias(name))
    return frame.with_columns(cut_like(searches, columns))


def _search_frame(
    log: SearchLog,
    searches: pl.DataFrame,
    clicks: pl.LazyFrame | None,
    needs: set[str],
    defs: Mapping[Stage, Mapping[str, pl.Expr]],
) -> pl.LazyFrame:
    """One row per search, with its outcomes."""
    frame = searches.lazy().with_columns((pl.col("n_results") > 0).alias(HAS_RESULTS))
    if "clicks" in needs:
        assert clicks is not None  # noqa: S101 - built when clicks are needed
        per_search = clicks.group_by(SEARCH).agg(
            pl.len().alias(N_CLICKS),
            pl.col("position").min().alias(TOP_CLICK),
            pl.col("ts").min().alias(FIRST_CLICK),
            **defs.get("click_search", {}),
        )
        zero = [N_CLICKS, *defs.get("click_search", {})]
        frame = _spread(frame, per_search, searches, zero)
        frame = frame.with_columns((pl.col(N_CLICKS) > 0).alias(HAS_CLICK))
    if "commerce" in needs:
        if log.events is None:
            frame = frame.with_columns(
                pl.lit(0, pl.UInt32).alias(N_ADD_TO_CART),
                pl.lit(0, pl.UInt32).alias(N_PURCHASE),
                pl.lit(0.0).alias(REVENUE),
            )
        else:
            events = log.with_keys("events").lazy()
            value = (
                pl.col("value").fill_null(0.0)
                if "value" in log.events.columns
                else pl.lit(0.0)
            )
            kind = pl.col("event_type")
            per_search = (
                events.filter(
                    pl.col(SEARCH).is_not_null() & kind.is_in([ADD_TO_CART, PURCHASE])
                )
                .group_by(SEARCH)
                .agg(
                    (kind == ADD_TO_CART).sum().alias(N_ADD_TO_CART),
                    (kind == PURCHASE).sum().alias(N_PURCHASE),
                    value.filter(kind == PURCHASE).sum().alias(REVENUE),
                )
            )
            zero = [N_ADD_TO_CART, N_PURCHASE, REVENUE]
            frame = _spread(frame, per_search, searches, zero)
    if "clicks" in needs and "commerce" in needs:
        frame = frame.with_columns(
            (
                pl.col(HAS_RESULTS)
                & ~pl.col(HAS_CLICK)
                & (pl.col(N_ADD_TO_CART) == 0)
                & (pl.col(N_PURCHASE) == 0)
            ).alias(ABANDONED)
        )
    if "next" in needs:  # gathered in derive(), before any join
        frame = frame.with_columns(
            ((pl.col(NEXT_TS) - pl.col("ts")).dt.total_microseconds() / 1e6).alias(
                NEXT_GAP
            )
        )
    if "answer" in needs:
        answer = (
            pl.col("serp_answer").fill_null(value=False)
            if "serp_answer" in log.searches.columns
            else pl.lit(value=True)
        )
        frame = frame.with_columns(answer.alias(ANSWER))
    return frame.with_columns(**defs.get("search", {}))


def reformulated(window: float) -> pl.Expr:
    """Whether the next search of the session reformulates this one.

    Within ``window`` seconds, its normalised query differs and shares a
    term (a word of the normalised query). Pagination (the same query,
    another page) is not a reformulation: the query is the same.
    """
    candidate = (
        pl.col(NEXT_QUERY).is_not_null()
        & (pl.col(NEXT_GAP) <= window)
        & (pl.col(NEXT_QUERY) != pl.col("query_norm"))
        & (pl.col("query_norm") != "")
        & (pl.col(NEXT_QUERY) != "")
    )
    # the terms of the candidates alone are split and intersected
    terms = pl.when(candidate).then(pl.col("query_norm")).str.split(" ")
    next_terms = pl.when(candidate).then(pl.col(NEXT_QUERY)).str.split(" ")
    shared = terms.list.set_intersection(next_terms).list.len() > 0
    return (candidate & shared).fill_null(value=False)


def _result_frame(
    log: SearchLog,
    searches: pl.DataFrame,
    keys: tuple[pl.Series, pl.Series],
    result_slices: Sequence[str],
) -> pl.LazyFrame:
    """One row per displayed slot, with its search's group and unit keys (``keys``)."""
    if log.results is None:
        msg = (
            "result-grain metrics and result slices need a results table "
            "(one row per displayed slot); the log has none."
        )
        raise OptionError(msg)
    results = log.with_keys("results")
    at = results[SEARCH]
    attrs = [c for c in result_slices if c != AGE_BUCKET]
    group, unit = keys
    frame = with_series(
        results.select(SEARCH, "position", *attrs),
        [group.gather(at).alias(GROUP), unit.gather(at).alias(UNIT)],
    )
    if AGE_BUCKET in result_slices:
        from ireval_df.stats.slices import age_buckets

        issued = searches["ts"].gather(at).alias("__ireval_issued")
        frame = (
            with_series(frame, [results["published_at"], issued])
            .with_columns(
                age_buckets(
                    "published_at", issued_at="__ireval_issued", name=AGE_BUCKET
                )
            )
            .drop("published_at", "__ireval_issued")
        )
    return frame.lazy()


def _session_frame(search: pl.LazyFrame, defs: Mapping[str, pl.Expr]) -> pl.LazyFrame:
    """One row per session: counts, outcomes, and its first search's group and unit."""
    first = pl.col(FIRST)
    return search.group_by(SESSION).agg(
        pl.col(GROUP).filter(first).first(),
        pl.col(UNIT).filter(first).first(),
        (pl.col("page") == 1).sum().alias(N_QUERIES),
        pl.len().alias(N_SEARCHES),
        **defs,
    )


def last_search_failed() -> pl.Expr:
    """Aggregate over a session's searches: its last search found nothing or was abandoned."""
    last = pl.col(NEXT).is_null()
    return (last & (~pl.col(HAS_RESULTS) | pl.col(ABANDONED))).any()


# --- metrics of a call, and their sums by group ---------------------------------------------


@dataclass(frozen=True)
class Named:
    """One metric of a call: its output name, parsed spec and measure."""

    name: str
    metric: Metric
    measure: Measure


def named_measures(metrics: Any) -> list[Named]:
    """Parse a call's metrics: a name, a list of names, or output name -> name.

    Raises
    ------
    MetricSpecError
        An unknown name, or a measure of another family.
    """
    if isinstance(metrics, Mapping):
        items = list(metrics.items())
        if not items:
            msg = "no metrics given: pass at least one, e.g. ['CTR', 'ZeroResultRate']."
            raise MetricSpecError(msg)
        out = []
        for name, spec in items:
            if not isinstance(name, str) or not name:
                msg = f"metrics= as a dict maps output names to metrics; found key {name!r}"
                raise MetricSpecError(msg)
            if not isinstance(spec, str | Metric):
                msg = (
                    f"metrics={{{name!r}: {spec!r}}}: expected a registry metric "
                    f"such as 'CTR'"
                )
                raise MetricSpecError(msg)
            (metric,) = parse_metrics([spec], family="online")
            out.append(Named(name, metric, metric.info.compute(metric)))
        return out
    parsed = parse_metrics(metrics, family="online")
    return [Named(str(m), m, m.info.compute(m)) for m in parsed]


N_UNITS, N_SEARCHES_OUT = "n_units", "n_searches"
PACKED = col("packed")


def _searches_counted(grain: Grain) -> pl.Expr:
    if grain == "search":
        return pl.len()
    if grain == "session":
        return pl.col(N_SEARCHES).sum()
    return pl.col(SEARCH).n_unique()


def group_sums(
    derived: Derived,
    named: Sequence[Named],
    keys: Sequence[str],
    *,
    medians: bool = True,
    counts: bool = True,
) -> list[tuple[list[Named], bool, pl.LazyFrame]]:
    """Sum every metric's numerator and denominator by ``keys``, one pass per grain.

    Returns, for each group of metrics that share a pass (a grain, or a
    grain by position), the metrics, whether it is by position, and a
    LazyFrame with ``keys`` (and ``position``), ``<name>__num``,
    ``<name>__den`` (``<name>__median`` for a median) and, with
    ``counts``, ``n_units`` and ``n_searches``.
    """
    out = []
    for grain in GRAINS:
        for by_position in (False, True):
            group = [
                n
                for n in named
                if n.measure.grain == grain and n.measure.by_position == by_position
            ]
            if not group:
                continue
            frame = derived.frames[grain]
            aggs: list[pl.Expr] = []
            for n in group:
                aggs.append(n.measure.numer.sum().alias(f"{n.name}__num"))
                aggs.append(n.measure.denom.sum().alias(f"{n.name}__den"))
                if medians and n.measure.median is not None:
                    aggs.append(n.measure.median.median().alias(f"{n.name}__median"))
            # a result's group is its search's: without result slices, the
            # searches with a result row give the counts (not 50M rows)
            per_search = (
                derived.shown
                if grain == "result" and not by_position and list(keys) == [GROUP]
                else None
            )
            if counts and per_search is None:
                aggs.append(pl.col(UNIT).n_unique().cast(pl.Int64).alias(N_UNITS))
                # a result slot is one row (read_log drops repeated slots):
                # by position, a search has one row at most
                searches = (
                    pl.len()
                    if grain == "result" and by_position
                    else _searches_counted(grain)
                )
                aggs.append(searches.cast(pl.Int64).alias(N_SEARCHES_OUT))
            if by_position and GROUP in keys:
                # the group code and the position in one key: a one-key pass
                by = [PACKED, *(k for k in keys if k != GROUP)]
                packed = pl.col(GROUP) * (1 << 32) + pl.col("position").cast(
                    pl.UInt32
                ).cast(pl.UInt64)
                summed = (
                    frame.with_columns(packed.alias(PACKED))
                    .group_by(by)
                    .agg(aggs)
                    .with_columns(
                        (pl.col(PACKED) // (1 << 32)).alias(GROUP),
                        (pl.col(PACKED) % (1 << 32)).cast(pl.Int32).alias("position"),
                    )
                    .select(*keys, "position", pl.exclude(PACKED, *keys, "position"))
                )
            else:
                by = [*keys, *(["position"] if by_position else [])]
                summed = frame.group_by(by).agg(aggs)
                if counts and per_search is not None:
                    tally = per_search.group_by(GROUP).agg(
                        pl.col(UNIT).n_unique().cast(pl.Int64).alias(N_UNITS),
                        pl.len().cast(pl.Int64).alias(N_SEARCHES_OUT),
                    )
                    summed = summed.join(tally, on=GROUP, how="left")
            out.append((group, by_position, summed))
    return out
