"""``tukey_hsd()``: all-pairs comparison with Tukey's honest significant difference."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df.errors import AlignmentError, OptionError
from ireval_df.measures import parse_metric
from ireval_df.stats.comparison import OUTPUT_STATS, resolve_missing
from ireval_df.stats.distributions import GM_FLOOR
from ireval_df.stats.frames import (
    check_choice,
    check_unique,
    declared,
    metric_table,
    output,
    reference_slice,
    run_order,
    run_pairs,
    slice_columns,
    to_frame,
)
from ireval_df.stats.paired import require_scipy

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

    from ireval_df.measures.properties import AggregateOption, Direction
    from ireval_df.stats.comparison import Missing

__all__ = ["Design", "tukey_hsd"]

Design = Literal["blocked", "independent"]

#: compare()'s statistics up to ``significant`` (Tukey has no wins or effect size).
_COLUMNS = OUTPUT_STATS[: OUTPUT_STATS.index("significant") + 1]


def tukey_hsd(
    per_query: Any,
    *,
    metric: str | None = None,
    by: str | Sequence[str] | None = None,
    alpha: float = 0.05,
    design: Design = "blocked",
    missing: Missing | None = None,
    higher_is_better: Direction = None,
    aggregate: AggregateOption = None,
) -> Any:
    """All-pairs comparison of runs on one metric with Tukey's HSD.

    Parameters
    ----------
    per_query : polars or pandas DataFrame
        The output of :func:`ireval_df.evaluate`.
    metric : str, optional
        The metric to compare on (its canonical name, as in the ``metric``
        column). None: every metric of ``per_query``, each its own family.
    by : str or list of str, optional
        Slice columns; each slice is its own family.
    alpha : float, default 0.05
        Family-wise error rate; intervals have coverage ``1 - alpha``.
    design : {"blocked", "independent"}, default "blocked"
        ``"blocked"``: queries are blocks (two-way ANOVA without
        interaction, error mean square with ``(n - 1)(k - 1)`` degrees of
        freedom), the usual design when every run answers the same queries.
        ``"independent"``: one-way ANOVA, as ``scipy.stats.tukey_hsd``.
    missing : {"zero", "skip", "error"} or None, default None
        A query without a value for some run: scored 0, left out (only
        queries every run answered are kept), or an error. None follows
        ``evaluate()``'s policy ("zero" if unknown). Counted in ``n_missing``.

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
        One row per pair of runs, slice and metric: ``run_id, baseline,
        [by...], metric, n_queries, n_missing, mean, baseline_mean, delta,
        delta_rel, ci_low, ci_high, p_value, p_adjusted, significant``.
        Tukey's p-values already account for all pairs of the family, so
        ``p_adjusted`` equals ``p_value``; the interval is Tukey's
        simultaneous interval of ``delta``.

    Raises
    ------
    SchemaError
        A needed or ``by`` column is absent.
    DataError
        Fewer than two runs, or a (run, query, metric) appears twice.
    AlignmentError
        ``missing="error"`` and a query lacks a value for some run.
    MetricSpecError
        ``metric`` is not a metric name.
    IrevalError
        ``metric`` is not in the results, an unknown option, or no scipy
        (the studentized range distribution comes from ``scipy.stats``).

    See Also
    --------
    compare : paired tests against one or more baselines.

    Notes
    -----
    For runs ``i`` and ``j`` with mean difference ``D``, ``q = |D| / s``
    where ``s = sqrt(MSE / n)`` (blocked; for independent groups of
    different sizes ``sqrt(MSE (1/n_i + 1/n_j) / 2)``); the p-value is the
    studentized range survival function at ``q`` for ``k`` runs and the
    error degrees of freedom, and the interval is ``D +- q_crit s``.
    Geometric-mean metrics are compared on the logarithm of the values.

    Examples
    --------
    >>> import polars as pl
    >>> per_query = pl.DataFrame({
    ...     "run_id": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "query_id": ["1", "2", "3", "4"] * 3,
    ...     "metric": "AP",
    ...     "value": [0.1, 0.2, 0.3, 0.4, 0.3, 0.3, 0.5, 0.7, 0.1, 0.3, 0.3, 0.4],
    ... })
    >>> out = tukey_hsd(per_query)
    >>> out.select("run_id", "baseline", "significant").rows()
    [('b', 'a', True), ('c', 'a', False), ('c', 'b', True)]
    """
    import numpy as np

    check_choice("design", design, ("blocked", "independent"))
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, int | float)
        or not 0 < alpha < 1
    ):
        msg = f"alpha must be a number between 0 and 1 (exclusive), found {alpha!r}."
        raise OptionError(msg)
    stats = require_scipy("tukey_hsd()")
    slices = slice_columns(by)
    frame = to_frame(per_query, ["run_id", "query_id", "metric", "value", *slices])
    frame, slices = reference_slice(frame, slices, "reference")
    check_unique(frame, ["run_id", "query_id", "metric", *slices])
    policy = resolve_missing(per_query, missing)
    metrics = [str(m) for m in frame["metric"].unique(maintain_order=True).to_list()]
    if metric is not None:
        if metric not in metrics:
            metric = str(parse_metric(metric))
        if metric not in metrics:
            msg = (
                f"metric {metric!r} is not in the per-query results; they hold "
                f"{metrics!r}.\n"
                "  Hint: use the canonical name, as in the 'metric' column."
            )
            raise OptionError(msg)
        metrics = [metric]
        frame = frame.filter(pl.col("metric") == metric)
    runs = run_order(frame)
    pairs = run_pairs(runs, None)
    kinds = dict(
        metric_table(metrics, higher_is_better=higher_is_better, aggregate=aggregate)
        .select("metric", "__kind")
        .iter_rows()
    )
    families = (
        frame.select(*slices, "metric")
        .unique()
        .join(
            pl.DataFrame({"metric": metrics, "__m": list(range(len(metrics)))}),
            on="metric",
        )
        .sort([*slices, "__m"], nulls_last=True)
    )
    records: list[dict[str, Any]] = []
    for family in families.iter_rows(named=True):
        condition = pl.lit(value=True)
        for column in [*slices, "metric"]:
            value = family[column]
            condition &= (
                pl.col(column).is_null() if value is None else pl.col(column) == value
            )
        part = frame.filter(condition)
        matrix, n_missing = _matrix(part, runs, policy, family)
        if kinds[family["metric"]] == "gmean":
            matrix = np.log(np.maximum(matrix, GM_FLOOR))
        records.extend(
            _family(
                matrix,
                runs,
                pairs,
                alpha,
                design,
                stats,
                family,
                n_missing,
                logged=kinds[family["metric"]] == "gmean",
                slices=slices,
            )
        )
    schema: dict[str, Any] = {
        "run_id": pl.String,
        "baseline": pl.String,
        **{s: frame.schema[s] for s in slices},
        "metric": pl.String,
        "n_queries": pl.Int64,
        "n_missing": pl.Int64,
        **dict.fromkeys(_COLUMNS[2:10], pl.Float64),
        "significant": pl.Boolean,
    }
    result = pl.DataFrame(records, schema=schema, orient="row").with_columns(
        pl.col(c).fill_nan(None) for c in _COLUMNS[2:10]
    )
    settings = {
        "test": "tukey_hsd",
        "design": design,
        "alpha": alpha,
        "tukey_by": slices,
        "missing_in_pair": policy,
    }
    settings.update(declared(metrics, higher_is_better, aggregate))
    return output(result, per_query, settings)


def _matrix(
    part: pl.DataFrame, runs: list[str], policy: Missing, family: dict[str, Any]
) -> tuple[np.ndarray[Any, np.dtype[np.float64]], int]:
    """Return the queries x runs values of one family, after the missing policy."""
    import numpy as np

    wide = part.pivot(on="run_id", index="query_id", values="value").sort("query_id")
    for run in runs:
        if run not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Float64).alias(run))
    matrix = wide.select(runs).cast(pl.Float64).to_numpy().astype(np.float64)
    incomplete = np.isnan(matrix).any(axis=1)
    n_missing = int(incomplete.sum())
    if n_missing and policy == "error":
        query = wide["query_id"].filter(pl.Series(incomplete)).to_list()[0]
        msg = (
            f"{n_missing} queries lack a value for some run ({family!r}), e.g. query "
            f"{query!r}.\n  Hint: pass missing='zero' or missing='skip'."
        )
        raise AlignmentError(msg)
    if policy == "skip":
        return matrix[~incomplete], n_missing
    return np.nan_to_num(matrix, nan=0.0), n_missing


def _family(
    matrix: np.ndarray[Any, np.dtype[np.float64]],
    runs: list[str],
    pairs: list[tuple[str, str]],
    alpha: float,
    design: Design,
    stats: Any,
    family: dict[str, Any],
    n_missing: int,
    *,
    logged: bool,
    slices: list[str],
) -> list[dict[str, Any]]:
    import numpy as np

    n, k = matrix.shape
    means = matrix.mean(axis=0) if n else np.full(k, np.nan)
    if design == "blocked":
        resid = matrix - matrix.mean(axis=1, keepdims=True) - means + matrix.mean()
        df = float((n - 1) * (k - 1))
        sse = float((resid**2).sum())
    else:
        df = float(n * k - k)
        sse = float(((matrix - means) ** 2).sum())
    se = float(np.sqrt(sse / df / n)) if df > 0 and n > 0 else np.nan
    index = {r: i for i, r in enumerate(runs)}
    diffs = np.array([means[index[r]] - means[index[b]] for r, b in pairs])
    if np.isnan(se):
        p = np.full(len(pairs), np.nan)
        crit = np.nan
    elif se == 0.0:
        p = np.where(diffs == 0.0, 1.0, 0.0)
        crit = 0.0
    else:
        p = np.asarray(
            stats.studentized_range.sf(np.abs(diffs) / se, k, df), dtype=np.float64
        )
        crit = float(stats.studentized_range.ppf(1.0 - alpha, k, df))
    shown = np.exp(means) if logged else means
    out = []
    for (run, base), diff, pv in zip(pairs, diffs.tolist(), p.tolist(), strict=True):
        mean, base_mean = float(shown[index[run]]), float(shown[index[base]])
        out.append(
            {
                "run_id": run,
                "baseline": base,
                **{s: family[s] for s in slices},
                "metric": family["metric"],
                "n_queries": n,
                "n_missing": n_missing,
                "mean": mean,
                "baseline_mean": base_mean,
                "delta": mean - base_mean,
                "delta_rel": (mean - base_mean) / base_mean
                if base_mean != 0
                else np.nan,
                "ci_low": diff - crit * se,
                "ci_high": diff + crit * se,
                "p_value": pv,
                "p_adjusted": pv,
                "significant": None if np.isnan(pv) else bool(pv <= alpha),
            }
        )
    return out
