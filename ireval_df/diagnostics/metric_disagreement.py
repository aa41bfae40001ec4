"""``disagreement()``: do the metrics agree on which run is better, per slice."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import DataError
from ireval_df.stats.comparison import TIE_TOLERANCE, paired_values, resolve_missing
from ireval_df.stats.distributions import GM_FLOOR
from ireval_df.stats.frames import (
    check_unique,
    declared,
    metric_table,
    output,
    pair_names,
    reference_slice,
    run_order,
    run_pairs,
    slice_columns,
    to_frame,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ireval_df.measures.properties import AggregateOption, Direction
    from ireval_df.stats.comparison import Missing

__all__ = ["disagreement"]


def _sign(expr: pl.Expr, scale: pl.Expr) -> pl.Expr:
    """-1, 0, +1, with differences within the tie tolerance as 0."""
    return (
        pl.when(expr.abs() <= TIE_TOLERANCE * scale)
        .then(0)
        .otherwise(expr.sign())
        .cast(pl.Int32)
    )


def disagreement(
    per_query: Any,
    by: str | Sequence[str] | None = None,
    *,
    missing: Missing | None = None,
    higher_is_better: Direction = None,
    aggregate: AggregateOption = None,
) -> Any:
    """Metric disagreement by slice: direction of each difference, and Kendall's tau.

    For every pair of runs, every slice and every pair of metrics: does
    each metric say the run is better or worse than the other, do the two
    metrics agree, on how many queries they agree, and how well they agree
    on the ordering of all runs in the slice (Kendall's tau-b).

    Parameters
    ----------
    per_query : polars or pandas DataFrame
        The output of :func:`ireval_df.evaluate` with at least two runs and
        two metrics.
    by : str or list of str, optional
        Slice columns, e.g. ``"query_class"``.
    missing : {"zero", "skip", "error"} or None, default None
        A query with a value for one run of a pair only, as in
        :func:`compare`.

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
        One row per (run pair, slice, metric pair): ``run_id, baseline,
        [by...], metric, metric_b, n_queries, delta, delta_b, better,
        better_b, agree, query_agreement, kendall_tau, n_runs``.

        - ``delta``/``delta_b``: mean of ``run_id`` minus mean of
          ``baseline`` under ``metric``/``metric_b`` (paired queries;
          geometric means for ``gmAP``-like metrics);
        - ``better``/``better_b``: +1 when ``run_id`` is better, -1 worse,
          0 tied, following each metric's direction;
        - ``agree``: ``better == better_b``;
        - ``query_agreement``: among the queries where both metrics see a
          difference, the share where they pick the same run (null if none);
        - ``kendall_tau``: tau-b between the orderings of all the slice's
          runs under the two metrics (1 = same ordering, -1 = reversed),
          repeated on each run pair of the slice; ``n_runs`` runs ranked.

    Raises
    ------
    SchemaError
        A needed or ``by`` column is absent.
    DataError
        Fewer than two runs or two metrics, or a repeated (run, query,
        metric).
    AlignmentError
        ``missing="error"`` and a query lacks a value for one run of a pair.

    See Also
    --------
    compare : the paired tests behind each difference.

    Examples
    --------
    >>> import polars as pl
    >>> per_query = pl.DataFrame({
    ...     "run_id": ["a"] * 4 + ["b"] * 4,
    ...     "query_id": ["1", "2"] * 4,
    ...     "metric": ["AP", "AP", "P@10", "P@10"] * 2,
    ...     "value": [0.2, 0.4, 0.5, 0.5, 0.3, 0.5, 0.4, 0.4],
    ... })
    >>> out = disagreement(per_query)
    >>> columns = ["metric", "metric_b", "better", "better_b", "agree", "kendall_tau"]
    >>> out.select(columns).rows()
    [('AP', 'P@10', 1, -1, False, -1.0)]
    """
    slices = slice_columns(by)
    frame = to_frame(per_query, ["run_id", "query_id", "metric", "value", *slices])
    frame, slices = reference_slice(frame, slices, "reference")
    check_unique(frame, ["run_id", "query_id", "metric", *slices])
    policy = resolve_missing(per_query, missing)
    metrics = [str(m) for m in frame["metric"].unique(maintain_order=True).to_list()]
    if len(metrics) < 2:
        msg = (
            f"disagreement needs at least two metrics, found {metrics!r}.\n"
            "  Hint: evaluate with several metrics, e.g. ['nDCG@10', 'AP', 'RR@10']."
        )
        raise DataError(msg)
    runs = run_order(frame)
    pairs = run_pairs(runs, None)
    table = metric_table(
        metrics, higher_is_better=higher_is_better, aggregate=aggregate
    )
    logged = pl.col("__kind") == "gmean"

    def scale(c: str) -> pl.Expr:
        return (
            pl.when(logged)
            .then(pl.col(c).clip(lower_bound=GM_FLOOR).log())
            .otherwise(pl.col(c))
        )

    paired = (
        paired_values(frame, pairs, slices, policy)
        .join(table, on="metric")
        .with_columns(scale("__x").alias("__x"), scale("__y").alias("__y"))
        .filter(pl.col("__x").is_not_null() & pl.col("__y").is_not_null())
        .with_columns(
            _sign(
                (pl.col("__x") - pl.col("__y")) * pl.col("__sign"),
                pl.max_horizontal(pl.col("__x").abs(), pl.col("__y").abs()),
            ).alias("__q")
        )
    )
    keys = ["__pair", *slices]
    back = pl.when(logged)
    slice_level = (
        paired.group_by([*keys, "metric"])
        .agg(
            pl.col("__m").first(),
            pl.col("__kind").first(),
            pl.col("__sign").first(),
            pl.col("__x").mean().alias("__mx"),
            pl.col("__y").mean().alias("__my"),
            pl.len().alias("__n"),
        )
        .with_columns(
            (
                back.then(pl.col("__mx").exp()).otherwise(pl.col("__mx"))
                - back.then(pl.col("__my").exp()).otherwise(pl.col("__my"))
            ).alias("delta"),
            _sign(
                (pl.col("__mx") - pl.col("__my")) * pl.col("__sign"),
                pl.max_horizontal(pl.col("__mx").abs(), pl.col("__my").abs()),
            ).alias("better"),
        )
        .select(*keys, "metric", "__m", "__n", "delta", "better")
    )
    second = slice_level.rename(
        {
            "metric": "metric_b",
            "__m": "__m_b",
            "__n": "__n_b",
            "delta": "delta_b",
            "better": "better_b",
        }
    )
    joined = slice_level.join(second, on=keys, nulls_equal=True).filter(
        pl.col("__m") < pl.col("__m_b")
    )
    per_q = paired.select(*keys, "query_id", "metric", "__q")
    query_pairs = (
        per_q.join(
            per_q.rename({"metric": "metric_b", "__q": "__q_b"}),
            on=[*keys, "query_id"],
            nulls_equal=True,
        )
        .group_by([*keys, "metric", "metric_b"])
        .agg(
            pl.len().alias("n_queries"),
            ((pl.col("__q") != 0) & (pl.col("__q_b") != 0)).sum().alias("__both"),
            ((pl.col("__q") != 0) & (pl.col("__q") == pl.col("__q_b")))
            .sum()
            .alias("__same"),
        )
    )
    joined = joined.join(
        query_pairs, on=[*keys, "metric", "metric_b"], how="left", nulls_equal=True
    ).with_columns(
        (pl.col("better") == pl.col("better_b")).alias("agree"),
        pl.when(pl.col("__both") > 0)
        .then(pl.col("__same") / pl.col("__both"))
        .alias("query_agreement"),
        pl.col("n_queries").fill_null(0).cast(pl.Int64),
    )
    product = (pl.col("better") * pl.col("better_b")).cast(pl.Float64)
    tau = joined.group_by([*slices, "metric", "metric_b"]).agg(
        (
            product.sum()
            / ((pl.col("better") ** 2).sum() * (pl.col("better_b") ** 2).sum())
            .cast(pl.Float64)
            .sqrt()
        ).alias("kendall_tau"),
        pl.len().alias("__pairs"),
    )
    tau = tau.with_columns(
        pl.when(pl.col("kendall_tau").is_finite())
        .then(pl.col("kendall_tau"))
        .alias("kendall_tau"),
        ((1 + (1 + 8 * pl.col("__pairs")).cast(pl.Float64).sqrt()) / 2)
        .round(0)
        .cast(pl.Int64)
        .alias("n_runs"),
    ).drop("__pairs")
    names = pair_names(pairs)
    result = (
        joined.join(tau, on=[*slices, "metric", "metric_b"], nulls_equal=True)
        .join(names, on="__pair")
        .sort(["__pair", *slices, "__m", "__m_b"], nulls_last=True)
        .select(
            "run_id",
            "baseline",
            *slices,
            "metric",
            "metric_b",
            "n_queries",
            "delta",
            "delta_b",
            "better",
            "better_b",
            "agree",
            "query_agreement",
            "kendall_tau",
            "n_runs",
        )
    )
    settings = {"disagreement_by": slices, "missing_in_pair": policy}
    settings.update(declared(metrics, higher_is_better, aggregate))
    return output(result, per_query, settings)
