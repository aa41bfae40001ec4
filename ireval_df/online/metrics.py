"""``metrics()``: every online metric of a log, per experiment arm and slice."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df._utils.frames import to_pandas
from ireval_df._utils.provenance import attach
from ireval_df.online.derive import (
    GROUP,
    KEYS,
    N_SEARCHES_OUT,
    N_UNITS,
    derive,
    group_sums,
    named_measures,
    slice_columns,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ireval_df.online.log import SearchLog

__all__ = ["metrics", "output"]


def output(frame: pl.DataFrame, log: SearchLog, settings: dict[str, Any]) -> Any:
    """Return ``frame`` as the kind of frame the log's tables were given as."""
    attach(frame, settings)
    if log.kind == "pandas":
        return to_pandas(frame)
    if log.kind == "arrow":
        return frame.to_arrow()
    if log.kind == "lazy":
        return frame.lazy()
    return frame


def metrics(
    log: SearchLog,
    metrics: str | Sequence[str] | dict[str, str],
    *,
    by: str | Sequence[str] | None = None,
) -> Any:
    """Compute online metrics per experiment arm (and slice): one row per metric.

    Parameters
    ----------
    log : SearchLog
        A log read by :func:`~ireval_df.online.read_log`.
    metrics : str, list of str, or dict of str to str
        Registry names of the ``online`` family (``CTR``, ``CTR@3``,
        ``SatClickRate(tau=60)``, ...; :func:`ireval_df.list_metrics`), or a
        dict from output name to registry name.
    by : str or list of str, optional
        Slice columns. A column of ``searches`` (``query_class``,
        ``device`` ...) slices every metric: results, clicks and sessions
        take their search's value (a session its first search's). A column
        of ``results`` (``source_type`` ..., and ``age_bucket`` when the
        results have ``published_at``: the search's time minus it, bucketed
        by :func:`ireval_df.age_buckets`) slices only result- and
        click-grain metrics; for a per-search or per-session metric it is an
        error (it would select searches by their outcome).

    Returns
    -------
    frame
        ``experiment_id, variant, [by...], metric, value, n_units,
        n_searches``, plus ``position`` (after ``metric``) when
        ``PositionCTR`` is asked for: one row per position, null for the
        other metrics. ``value`` is ``sum(numerator) / sum(denominator)``
        over the arm's rows at the metric's grain (null when the
        denominator is 0), or the median for ``TimeToFirstClick``;
        ``n_units`` counts the randomisation units and ``n_searches`` the
        searches with a row at that grain in the slice (every search for a
        per-search metric; the searches of its sessions for a per-session
        one). Sorted by experiment, variant, slices, then the metrics in
        the order given. A polars DataFrame, or the kind of frame every
        table of the log was given as (pandas, pyarrow, a computed
        LazyFrame).

    Raises
    ------
    MetricSpecError
        An unknown metric, or one of another family.
    OptionError
        A slice column the log lacks, or a result attribute for a
        per-search or per-session metric.

    See Also
    --------
    unit_table : the per-unit sums behind each value, for A/B tests.

    Examples
    --------
    >>> log = ie.online.example_log()
    >>> out = ie.online.metrics(log, ["CTR", "ZeroResultRate"])
    >>> out.select("variant", "metric", "value", "n_units", "n_searches").rows()
    [('A', 'CTR', 0.5, 2, 2),
     ('A', 'ZeroResultRate', 0.0, 2, 2),
     ('B', 'CTR', 0.5, 1, 3),
     ('B', 'ZeroResultRate', 0.3333333333333333, 1, 3)]
    """
    named = named_measures(metrics)
    grains = {n.name: n.measure.grain for n in named}
    positional = any(n.measure.by_position for n in named)
    by_names, slices = slice_columns(
        log, by, grains, reserved=["position"] if positional else []
    )
    derived = derive(log, [n.measure for n in named], slices)
    keys = [GROUP, *slices.result]
    passes = group_sums(derived, named, keys)
    grid = derived.groups.select(keys).unique()
    *collected, groups = pl.collect_all([*(frame for _, _, frame in passes), grid])
    parts: list[pl.DataFrame] = []
    for (group, by_position, _), frame in zip(passes, collected, strict=True):
        for n in group:
            num, den = pl.col(f"{n.name}__num"), pl.col(f"{n.name}__den")
            if n.measure.median is not None:
                value = pl.col(f"{n.name}__median")
            else:
                value = pl.when(den != 0).then(num.cast(pl.Float64) / den)
            part = frame
            if by_position:
                part = part.filter(den != 0)
            else:  # a group without a row at this grain: no value, no units
                part = groups.join(
                    part, on=keys, how="left", nulls_equal=True
                ).with_columns(pl.col(N_UNITS, N_SEARCHES_OUT).fill_null(0))
            parts.append(
                part.select(
                    *keys,
                    pl.lit(n.name, pl.String).alias("metric"),
                    pl.lit(len(parts), pl.Int64).alias("__ireval_order"),
                    (
                        pl.col("position")
                        if by_position
                        else pl.lit(None, pl.Int32).alias("position")
                    ),
                    value.cast(pl.Float64).alias("value"),
                    N_UNITS,
                    N_SEARCHES_OUT,
                )
            )
    order = {n.name: i for i, n in enumerate(named)}
    labelled = (
        pl.concat(parts, how="vertical_relaxed")
        .with_columns(
            pl.col("metric")
            .replace_strict(order, return_dtype=pl.Int64)
            .alias("__ireval_order")
        )
        .join(derived.labels, on=GROUP, how="left")
    )
    out_keys = [*KEYS, *by_names]
    result = labelled.sort([*out_keys, "__ireval_order", "position"], nulls_last=False)
    columns = [*out_keys, "metric", *(["position"] if positional else []), "value"]
    result = result.select(*columns, N_UNITS, N_SEARCHES_OUT)
    settings = {
        "metrics": [n.name for n in named],
        "by": by_names,
        "session_gap": str(log.session_gap),
    }
    return output(result, log, settings)
