"""``summarize()``: one row per run (and slice) and metric, with an interval."""

from __future__ import annotations


from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df import _provenance
from ireval_df._schema import is_pandas
from ireval_df._stats import t_ppf
from ireval_df.errors import SchemaError
from ireval_df.metrics import parse_metric

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["GM_FLOOR", "summarize"]

#: trec_eval's floor for geometric means (gm_map, gm_bpref).
GM_FLOOR = 1e-5


def summarize(per_query: Any, by: str | Sequence[str] | None = None, *, level: float = 0.95) -> Any:
    """Aggregate per-query values: one row per run, slice and metric.

    Parameters
    ----------
    per_query : polars or pandas DataFrame
        The output of :func:`ireval_df.evaluate` (``run_id, query_id, metric,
        value`` and any attribute columns).
    by : str or list of str, optional
        Attribute columns to slice by, e.g. ``["query_class"]``.
    level : float, default 0.95
        Coverage of the confidence interval.

    Returns
    -------
    Frame of the same kind as ``per_query``
        ``run_id, [by...], metric, value, n_queries, ci_low, ci_high``.
        ``value`` aggregates as the registry says: mean for most metrics,
        sum for counts (``NumRet``...), geometric mean with trec_eval's
        1e-5 floor for ``gmAP``/``gmBpref``. The interval is Student's t on
        the mean (on the logs for geometric means); null for sums and for
        slices with fewer than two queries.

    Raises
    ------
    SchemaError
        ``per_query`` lacks a needed column, or a ``by`` column.

    Examples
    --------
    >>> per_query = pl.DataFrame({"run_id": "r", "query_id": ["1", "2", "3"], "metric": "AP", "value": [0.2, 0.4, 0.6]})
    >>> row = summarize(per_query).row(0, named=True)
    >>> round(row["value"], 3), row["n_queries"], round(row["ci_low"], 3), round(row["ci_high"], 3)
    (0.4, 3, -0.097, 0.897)
    """
    frame = per_query
    if is_pandas(per_query):
        from ireval_df._frames import to_polars

        frame = to_polars(per_query)
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    slices = [by] if isinstance(by, str) else list(by or [])
    needed = ["run_id", "metric", "value", *slices]
    absent = [c for c in needed if c not in frame.columns]
    if absent:
        msg = (
            f"per-query results are missing column(s) {absent!r} (found {frame.columns!r}).\n"
            "  Hint: pass the output of evaluate(); slice columns come from evaluate(..., queries=...)."
        )
        raise SchemaError(msg)
    metrics = frame["metric"].unique(maintain_order=True).to_list()
    kinds = {name: parse_metric(name).info.aggregate for name in metrics}
    kind = pl.col("metric").replace_strict(kinds, return_dtype=pl.String)
    value = pl.col("value")
    logged = value.clip(lower_bound=GM_FLOOR).log()
    x = pl.when(kind == "gmean").then(logged).otherwise(value)
    keys = ["run_id", *slices, "metric"]
    grouped = (
        frame.with_columns(x.alias("__ireval_x"), kind.alias("__ireval_kind"))
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col("__ireval_kind").first(),
            pl.col("__ireval_x").mean().alias("__ireval_mean"),
            pl.col("__ireval_x").std().alias("__ireval_sd"),
            pl.col("value").sum().alias("__ireval_sum"),
            pl.len().alias("n_queries"),
        )
    )
    n = grouped["n_queries"].to_list()
    tq = {k: t_ppf(0.5 + level / 2.0, k - 1) for k in set(n) if k > 1}
    half = (
        pl.col("n_queries").replace_strict(tq, default=None, return_dtype=pl.Float64)
        * pl.col("__ireval_sd")
        / pl.col("n_queries").cast(pl.Float64).sqrt()
    )
    is_sum = pl.col("__ireval_kind") == "sum"
    is_gm = pl.col("__ireval_kind") == "gmean"
    mean = pl.col("__ireval_mean")

    def back(expr: pl.Expr) -> pl.Expr:
        return pl.when(is_gm).then(expr.exp()).otherwise(expr)

    out = grouped.select(
        *keys,
        pl.when(is_sum).then(pl.col("__ireval_sum")).otherwise(back(mean)).alias("value"),
        "n_queries",
        pl.when(is_sum).then(None).otherwise(back(mean - half)).alias("ci_low"),
        pl.when(is_sum).then(None).otherwise(back(mean + half)).alias("ci_high"),
    ).sort(["run_id", *slices], maintain_order=True)
    settings = dict(_provenance.settings_of(per_query) or {})
    settings.update({"summary_by": slices, "ci": f"t, {level:.0%}", "gm_floor": GM_FLOOR})
    if is_pandas(per_query):
        from ireval_df._frames import to_pandas

        return to_pandas(out)
    _provenance.attach(out, settings)
    return out


