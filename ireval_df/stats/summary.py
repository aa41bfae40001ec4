"""``summarize()``: one row per run (and slice) and metric, with an interval."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df.errors import OptionError
from ireval_df.stats.distributions import GM_FLOOR, t_ppf
from ireval_df.stats.frames import (
    check_choice,
    check_unique,
    declared,
    metric_table,
    output,
    reference_slice,
    slice_columns,
    to_frame,
)
from ireval_df.stats.resampling import blocks, bootstrap_blocks

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

    from ireval_df.measures.properties import AggregateOption, Direction

__all__ = ["AUTO_T_QUERIES", "GM_FLOOR", "MIN_QUERIES", "Interval", "summarize"]

Interval = Literal["auto", "bootstrap", "t"]
#: Slices with fewer queries than this are flagged ``small_slice``.
MIN_QUERIES = 10
#: ``ci="auto"``: slices of at least this many queries get the t interval.
#: From there on the percentile bootstrap and the t interval of a mean differ
#: by less than the bootstrap's own resampling noise (``docs/statistics.md``).
AUTO_T_QUERIES = 1000


def summarize(
    per_query: Any,
    by: str | Sequence[str] | None = None,
    *,
    ci: Interval = "auto",
    level: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    min_queries: int = MIN_QUERIES,
    higher_is_better: Direction = None,
    aggregate: AggregateOption = None,
) -> Any:
    """Aggregate per-query values: one row per run, slice and metric.

    Parameters
    ----------
    per_query : polars or pandas DataFrame
        The output of :func:`ireval_df.evaluate` (``run_id, query_id, metric,
        value`` and any attribute columns).
    by : str or list of str, optional
        Attribute columns to slice by, e.g. ``["query_class"]``.
    ci : {"auto", "bootstrap", "t"}, default "auto"
        Percentile bootstrap over queries, or Student's t interval; ``"auto"``
        takes the t interval for slices of at least ``AUTO_T_QUERIES``
        (1000) queries, where the two agree and t costs nothing, and the
        bootstrap for smaller ones, where it follows a skewed distribution
        of per-query values better.
    level : float, default 0.95
        Coverage of the confidence interval.
    n_resamples : int, default 10000
        Bootstrap resamples.
    seed : int or None, default 0
        Seed of the bootstrap; the same seed gives the same intervals.
    min_queries : int, default 10
        Slices with fewer queries are flagged in ``small_slice`` (never
        dropped): their means and intervals are unreliable.

    higher_is_better : bool or mapping of str to bool, optional
        The direction of metrics the registry does not know (a user's own
        per-query column, e.g. ``{"latency_ms": False}``): one for all, or
        one per name. Registry metrics bring their own.
    aggregate : {"mean", "sum", "gmean"} or mapping of str to str, optional
        How the values of metrics the registry does not know combine
        (default ``"mean"``).

    Returns
    -------
    Frame of the same kind as ``per_query``
        ``run_id, [by...], metric, value, n_queries, ci_low, ci_high,
        small_slice``. ``value`` aggregates as the registry says: mean for
        most metrics, sum for counts (``NumRet``...), geometric mean with
        trec_eval's 1e-5 floor for ``gmAP``/``gmBpref``. The interval is on
        the mean (on the logs for geometric means, then exponentiated); null
        for sums and for slices with fewer than two queries.

    Raises
    ------
    SchemaError
        ``per_query`` lacks a needed column, or a ``by`` column.
    DataError
        A (run, query, metric) has several rows within one slice: stacked
        results, or a result sliced by document summarized without its
        slice columns in ``by``.
    MetricSpecError
        A metric name the registry does not know.
    IrevalError
        An unknown ``ci``, or ``level``, ``n_resamples`` or ``min_queries``
        out of range.

    See Also
    --------
    ireval_df.compare : paired differences between runs.

    Notes
    -----
    The bootstrap resamples queries with replacement (``n_resamples``
    times) and takes the ``(1 - level) / 2`` and ``(1 + level) / 2``
    quantiles of the resampled means (percentile interval, linear
    interpolation). Groups that hold the same queries (the runs and metrics
    of one slice) share each draw, all through one matrix product per
    slice. With ``ci="auto"`` only the slices below ``AUTO_T_QUERIES``
    queries are resampled, so their draws may differ from those of
    ``ci="bootstrap"`` (another seeded bootstrap, not the same one). The t
    interval is ``mean +- t(n - 1) * sd / sqrt(n)``.

    Examples
    --------
    >>> import polars as pl
    >>> per_query = pl.DataFrame({"run_id": "r", "query_id": ["1", "2", "3"],
    ...                           "metric": "AP", "value": [0.2, 0.4, 0.6]})
    >>> row = summarize(per_query, ci="t").row(0, named=True)
    >>> round(row["value"], 3), row["n_queries"]
    (0.4, 3)
    >>> round(row["ci_low"], 3), round(row["ci_high"], 3)
    (-0.097, 0.897)
    >>> row["small_slice"]
    True
    >>> row = summarize(per_query, n_resamples=2000).row(0, named=True)
    >>> 0.2 <= row["ci_low"] < 0.4 < row["ci_high"] <= 0.6
    True
    """
    check_choice("ci", ci, ("auto", "bootstrap", "t"))
    if (
        isinstance(level, bool)
        or not isinstance(level, int | float)
        or not 0 < level < 1
    ):
        msg = f"level must be a number between 0 and 1 (exclusive), found {level!r}."
        raise OptionError(msg)
    for name, number in (("n_resamples", n_resamples), ("min_queries", min_queries)):
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            msg = f"{name} must be a positive whole number, found {number!r}."
            raise OptionError(msg)
    slices = slice_columns(by)
    frame = to_frame(per_query, ["run_id", "query_id", "metric", "value", *slices])
    frame, slices = reference_slice(frame, slices, "baseline")
    # a query counted twice in a mean (stacked results, document slices
    # without their by=) would weigh double
    check_unique(frame, ["run_id", "query_id", "metric", *slices])
    metrics = [str(m) for m in frame["metric"].unique(maintain_order=True).to_list()]
    table = metric_table(
        metrics, higher_is_better=higher_is_better, aggregate=aggregate
    ).select("metric", "__m", "__kind")
    kind = pl.col("__kind")
    value = pl.col("value").cast(pl.Float64)
    logged = value.clip(lower_bound=GM_FLOOR).log()
    x = pl.when(kind == "gmean").then(logged).otherwise(value)
    keys = ["run_id", *slices, "metric"]
    rows = frame.join(table, on="metric", how="left").with_columns(x.alias("__x"))
    grouped = (
        rows.group_by(keys, maintain_order=True)
        .agg(
            pl.col("__kind").first(),
            pl.col("__x").mean().alias("__mean"),
            pl.col("__x").std().alias("__sd"),
            pl.col("value").sum().alias("__sum"),
            pl.len().alias("n_queries"),
        )
        .with_row_index("__g")
        .with_columns(pl.col("__g").cast(pl.Int64))
    )
    by_t = {
        "t": pl.lit(value=True),
        "bootstrap": pl.lit(value=False),
        "auto": pl.col("n_queries") >= AUTO_T_QUERIES,
    }[ci]
    grouped = grouped.with_columns(by_t.alias("__by_t"))
    resampled = grouped.filter(~pl.col("__by_t"))
    n = grouped.filter(pl.col("__by_t"))["n_queries"].unique().to_list()
    quantiles = {k: t_ppf(0.5 + level / 2.0, k - 1) for k in n if k > 1}
    q = pl.col("n_queries").replace_strict(
        quantiles, default=None, return_dtype=pl.Float64
    )
    half = q * pl.col("__sd") / pl.col("n_queries").cast(pl.Float64).sqrt()
    grouped = grouped.with_columns(
        (pl.col("__mean") - half).fill_nan(None).alias("__low"),
        (pl.col("__mean") + half).fill_nan(None).alias("__high"),
    )
    if resampled.height:
        low, high = _bootstrap(
            rows, resampled, keys, level, n_resamples, seed, grouped.height
        )
        grouped = grouped.with_columns(
            pl.when(pl.col("__by_t"))
            .then(pl.col(f"__{end}"))
            .otherwise(pl.Series(values, nan_to_null=True))
            .alias(f"__{end}")
            for end, values in (("low", low), ("high", high))
        )
    is_sum = pl.col("__kind") == "sum"
    is_gm = pl.col("__kind") == "gmean"

    def back(expr: pl.Expr) -> pl.Expr:
        return pl.when(is_gm).then(expr.exp()).otherwise(expr)

    enough = pl.col("n_queries") >= 2
    out = grouped.select(
        *keys,
        pl.when(is_sum)
        .then(pl.col("__sum"))
        .otherwise(back(pl.col("__mean")))
        .alias("value"),
        "n_queries",
        pl.when(is_sum | ~enough)
        .then(None)
        .otherwise(back(pl.col("__low")))
        .alias("ci_low"),
        pl.when(is_sum | ~enough)
        .then(None)
        .otherwise(back(pl.col("__high")))
        .alias("ci_high"),
        (pl.col("n_queries") < min_queries).alias("small_slice"),
    ).sort(["run_id", *slices], maintain_order=True)
    # what was done: with "auto", one of the two when every slice took it
    if ci == "t" or (ci == "auto" and resampled.height == 0):
        interval = "t"
    elif ci == "bootstrap" or resampled.height == grouped.height:
        interval = "percentile bootstrap"
    else:
        interval = (
            f"t for slices of at least {AUTO_T_QUERIES} queries, "
            "percentile bootstrap below"
        )
    interval += f", {level:.0%}"
    settings: dict[str, Any] = {
        "summary_by": slices,
        "ci": interval,
        "gm_floor": GM_FLOOR,
        "min_queries": min_queries,
    }
    if resampled.height:
        settings.update({"n_resamples": n_resamples, "seed": seed})
    settings.update(declared(metrics, higher_is_better, aggregate))
    return output(out, per_query, settings)


def _bootstrap(
    rows: pl.DataFrame,
    grouped: pl.DataFrame,
    keys: list[str],
    level: float,
    n_resamples: int,
    seed: int | None,
    width: int,
) -> tuple[
    np.ndarray[Any, np.dtype[np.float64]], np.ndarray[Any, np.dtype[np.float64]]
]:
    """Percentile bootstrap interval of the mean of every group of ``grouped``.

    The two arrays are indexed by the groups' ``__g`` number (NaN for the
    groups ``grouped`` leaves out).
    """
    import numpy as np

    low, high = np.full(width, np.nan), np.full(width, np.nan)
    values = (
        rows.filter(pl.col("__x").is_not_null())
        .join(grouped.select(*keys, "__g"), on=keys, nulls_equal=True)
        .select("__g", "query_id", "__x")
    )
    quantiles = [0.5 - level / 2.0, 0.5 + level / 2.0]

    def reduce(ids: Any, means: Any) -> None:
        low[ids], high[ids] = np.quantile(means, quantiles, axis=0)

    parts = blocks(values, "__g", "query_id", "__x")
    bootstrap_blocks(parts, n_resamples, np.random.default_rng(seed), reduce)
    return low, high
