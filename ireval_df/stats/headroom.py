"""``headroom()``: which slice of the queries would lift a run's mean the most."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import MetricSpecError, OptionError
from ireval_df.measures import parse_metric
from ireval_df.stats.frames import (
    metric_table,
    output,
    reference_slice,
    run_order,
    slice_columns,
    to_frame,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ireval_df.measures.properties import AggregateOption, Direction

__all__ = ["REFERENCES", "headroom"]

#: The words ``against=`` takes besides a run id
REFERENCES = ("best", "perfect")
_SIGN = "__sign"


def headroom(
    per_query: Any,
    by: str | Sequence[str] | None = None,
    *,
    against: str = "best",
    higher_is_better: Direction = None,
    aggregate: AggregateOption = None,
) -> Any:
    """Rank slices by how much closing their gap would lift a run's overall mean.

    Parameters
    ----------
    per_query : polars or pandas DataFrame
        The output of :func:`ireval_df.evaluate` (``run_id, query_id,
        metric, value`` and the query attribute columns), or any long frame
        of per-query values.
    by : str or list of str, optional
        Attribute columns to slice by; None (or ``[]``) gives one slice, all
        queries.
    against : str, default "best"
        The reference each slice's mean is measured against:

        - ``"best"``: the best mean on that slice among the runs of the
          frame (the highest, or the lowest for a metric where lower is
          better): what some run already reaches;
        - a run id: that run's mean on the slice (a run better than it
          there has a negative gap);
        - ``"perfect"``: the metric's best possible value, its registry
          bound (1.0 for nDCG, AP, P@k, RR ...; 0 for a metric where lower
          is better, such as ``Unjudged@k``).

        The two words win over a run of the same name.
    higher_is_better : bool or mapping of str to bool, optional
        The direction of metrics the registry does not know, as for
        :func:`ireval_df.summarize`.
    aggregate : "mean" or mapping of str to str, optional
        Their aggregation; only means have a headroom.

    Returns
    -------
    Frame of the same kind as ``per_query``
        One row per run, slice and metric: ``run_id, [by...], metric,
        n_queries, share`` (the slice's share of the run's queries for the
        metric), ``value`` (the slice's mean), ``reference``, ``gap`` (how
        far the mean is from the reference, in the direction of better:
        ``reference - value``, or ``value - reference`` when lower is
        better) and ``gain = share * gap``, how much the run's overall mean
        would improve if this slice closed its gap. Sorted by run (in order
        of appearance), metric, then ``gain`` descending (nulls last).

    Raises
    ------
    SchemaError
        ``per_query`` lacks a needed column, or a ``by`` column.
    OptionError
        ``against`` is neither ``"best"``, ``"perfect"`` nor a run of the
        frame; ``"perfect"`` for a metric without a registry bound on its
        better side (``DCG``, a user's own metric); a metric that does not
        aggregate by its mean (``NumRet``, ``gmAP``).
    MetricSpecError
        A metric the registry does not know and ``higher_is_better`` does
        not declare.

    Notes
    -----
    The overall mean is the share-weighted mean of the slice means, so a
    slice that reached its reference would move the overall mean by exactly
    ``share * gap``; the gains of all slices add up to the overall gap when
    every slice closes its own. ``"perfect"`` is a bound, not always
    reachable: a query without a relevant document scores 0 in nDCG however
    it is ranked, and P@10 cannot reach 1 with fewer than 10 relevant
    documents; ``"best"`` measures against what a run did reach. A slice the
    reference run does not have gets a null reference, gap and gain.

    Examples
    --------
    >>> per_query = pl.DataFrame({
    ...     "run_id": ["a"] * 4 + ["b"] * 4,
    ...     "query_id": ["1", "2", "3", "4"] * 2,
    ...     "metric": "AP",
    ...     "value": [0.2, 0.4, 0.9, 0.9, 0.6, 0.8, 0.9, 0.7],
    ...     "lang": ["de", "de", "en", "en"] * 2,
    ... })
    >>> out = headroom(per_query, by="lang").filter(pl.col("run_id") == "a")
    >>> [(r["lang"], r["share"], round(r["gap"], 2), round(r["gain"], 2))
    ...  for r in out.iter_rows(named=True)]
    [('de', 0.5, 0.4, 0.2), ('en', 0.5, 0.0, 0.0)]
    """
    slices = slice_columns(by)
    frame = to_frame(per_query, ["run_id", "query_id", "metric", "value", *slices])
    frame, slices = reference_slice(frame, slices, "baseline")
    runs = run_order(frame)
    if not isinstance(against, str) or (
        against not in REFERENCES and against not in runs
    ):
        msg = (
            f"against={against!r} is neither one of {REFERENCES!r} nor a run of "
            f"these results; the runs are {runs!r}.\n  Hint: pass 'best', "
            "'perfect' or one of the run ids."
        )
        raise OptionError(msg)
    metrics = [str(m) for m in frame["metric"].unique(maintain_order=True).to_list()]
    table = metric_table(
        metrics, higher_is_better=higher_is_better, aggregate=aggregate
    )
    other = table.filter(pl.col("__kind") != "mean")
    if other.height:
        msg = (
            f"headroom needs metrics whose runs are compared by their mean; "
            f"{other['metric'].to_list()!r} aggregate by "
            f"{other['__kind'].to_list()!r}.\n  Hint: leave them out, e.g. "
            "per_query.filter(pl.col('metric') != 'NumRet')."
        )
        raise OptionError(msg)
    keys = ["run_id", *slices, "metric"]
    means = (
        frame.group_by(keys, maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("n_queries"),
            pl.col("value").cast(pl.Float64).mean().alias("value"),
        )
        .join(table.select("metric", "__m", _SIGN), on="metric", how="left")
        .with_columns(
            (
                pl.col("n_queries") / pl.col("n_queries").sum().over("run_id", "metric")
            ).alias("share")
        )
    )
    sign = pl.col(_SIGN)
    on = [*slices, "metric"]
    if against == "best":
        best = means.group_by(on).agg(
            (sign * pl.col("value")).max().alias("__best"), sign.first()
        )
        reference = best.select(*on, (pl.col("__best") * sign).alias("reference"))
    elif against == "perfect":
        reference = _perfect(metrics, table)
    else:
        reference = means.filter(pl.col("run_id") == against).select(
            *on, pl.col("value").alias("reference")
        )
    gap = sign * (pl.col("reference") - pl.col("value"))
    out = (
        means.join(
            reference,
            on=["metric"] if against == "perfect" else on,
            how="left",
            nulls_equal=True,
        )
        .with_columns(gap.alias("gap"))
        .with_columns((pl.col("share") * pl.col("gap")).alias("gain"))
        .sort(
            pl.col("run_id").cast(pl.Enum(runs)),
            "__m",
            pl.col("gain"),
            *slices,
            descending=[False, False, True, *([False] * len(slices))],
            nulls_last=True,
        )
        .select(*keys, "n_queries", "share", "value", "reference", "gap", "gain")
    )
    settings: dict[str, Any] = {"headroom_by": slices, "headroom_against": against}
    return output(out, per_query, settings)


def _perfect(metrics: list[str], table: pl.DataFrame) -> pl.DataFrame:
    """Each metric's best possible value: its registry bound on the better side."""
    signs = dict(zip(table["metric"], table[_SIGN], strict=True))
    values: list[float] = []
    for name in metrics:
        try:
            low, high = parse_metric(name).info.bounds
        except MetricSpecError:
            low = high = None
        bound = high if signs[name] > 0 else low
        if bound is None:
            msg = (
                f"against='perfect' needs the best possible value of {name!r}, and "
                "the registry gives it none (no bound on its better side, or not a "
                "registry measure).\n  Hint: measure against 'best' (the best run "
                "on each slice) or a run id."
            )
            raise OptionError(msg)
        values.append(float(bound))
    return pl.DataFrame(
        {"metric": metrics, "reference": values},
        schema={"metric": pl.String, "reference": pl.Float64},
    )
