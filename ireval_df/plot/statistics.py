"""Charts of the statistics' frames: differences, per-query wins, slices, agreement."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import OptionError
from ireval_df.plot._base import (
    OUTCOME_COLORS,
    WIDTH,
    altair,
    between,
    direction,
    outcome,
    outcome_color,
    read_frame,
    records,
    slice_label,
    title,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["deltas", "disagreement", "per_query", "similarity", "slices"]

#: Per-query outcomes, in legend order, and their colours
_WIN_LOSS = ("win", "tie", "loss")


def _optional(frame: pl.DataFrame, columns: Sequence[str]) -> list[str]:
    return [c for c in columns if c in frame.columns]


def _facet(
    alt: Any, chart: Any, *, row: str | None, column: str | None, **facets: Any
) -> Any:
    """Facet ``chart`` by the fields that take more than one value."""
    if row is None and column is None:
        return chart
    encodings = {}
    if row is not None:
        encodings["row"] = alt.Row(
            f"{row}:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")
        )
    if column is not None:
        encodings["column"] = alt.Column(f"{column}:N", title=None)
    return chart.facet(**encodings, **facets)


def _several(frame: pl.DataFrame, column: str) -> str | None:
    return column if frame[column].n_unique() > 1 else None


def deltas(
    compare_frame: Any, *, higher_is_better: bool | Mapping[str, bool] | None = None
) -> Any:
    """Forest plot of each difference and its interval, per metric and slice.

    One row per metric: the difference of the run's mean from the
    baseline's (a point) and its confidence interval (a line), coloured by
    the outcome of the test (significant and better, significant and worse,
    not significant, in the metric's own direction), with a dashed line at
    0. Several run pairs make columns, slices make rows.

    Parameters
    ----------
    compare_frame : polars, pandas or pyarrow frame
        The output of :func:`ireval_df.compare` (with or without ``by=``):
        ``run_id, baseline, [by...], metric, delta, ci_low, ci_high,
        significant``; ``p_adjusted``, ``n_queries``, ``mean`` and
        ``baseline_mean`` go into the tooltips when present.
    higher_is_better : bool or mapping of str to bool, optional
        The direction of metrics the registry does not know, as given to
        :func:`ireval_df.compare` (default: higher is better), for the
        colour.

    Returns
    -------
    altair.Chart or altair.FacetChart
        Displays in Jupyter; ``.save("deltas.png")`` (or ``.svg``,
        ``.html``) writes it.

    Raises
    ------
    SchemaError
        A needed column is absent (the message names it and
        :func:`ireval_df.compare`).

    Examples
    --------
    >>> per_query = pl.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4,
    ...     "query_id": ["1", "2", "3", "4"] * 2, "metric": "AP",
    ...     "value": [0.1, 0.2, 0.3, 0.4, 0.3, 0.5, 0.4, 0.6]})
    >>> chart = ie.plot.deltas(ie.compare(per_query, baseline="a"))
    >>> [(row["pair"], row["metric"], row["outcome"]) for row in chart.data.values]
    [('b − a', 'AP', 'better (significant)')]
    >>> chart.to_dict()["layer"][2]["encoding"]["x"]["field"]
    'delta'
    """
    alt = altair()
    needed = ["run_id", "baseline", "metric", "delta", "ci_low", "ci_high"]
    frame = read_frame(
        compare_frame,
        [*needed, "significant"],
        chart="plot.deltas",
        producer="ie.compare",
    )
    by = between(frame, "baseline", "metric")
    metrics = frame["metric"].unique(maintain_order=True).to_list()
    extra = _optional(frame, ["p_adjusted", "n_queries", "mean", "baseline_mean"])
    data = frame.select(
        pl.concat_str("run_id", pl.lit(" − "), "baseline").alias("pair"),
        slice_label(frame, by).alias("slice"),
        *needed[2:],
        outcome(
            pl.col("delta"),
            pl.col("significant"),
            pl.col("metric").replace_strict(
                direction(metrics, higher_is_better=higher_is_better)
            ),
        ).alias("outcome"),
        *extra,
    ).filter(pl.col("delta").is_not_null())
    base = alt.Chart(alt.Data(values=records(data)))
    y = alt.Y("metric:N", sort=metrics, title=None)
    color = outcome_color(alt)
    tooltip = [
        alt.Tooltip("pair:N", title="run − baseline"),
        alt.Tooltip("slice:N"),
        alt.Tooltip("metric:N"),
        alt.Tooltip("delta:Q", format="+.4f"),
        alt.Tooltip("ci_low:Q", format="+.4f"),
        alt.Tooltip("ci_high:Q", format="+.4f"),
        *(alt.Tooltip(f"{c}:Q", format=".4g") for c in extra),
    ]
    zero = base.mark_rule(color="#333333", strokeDash=[4, 3]).encode(x=alt.datum(0))
    interval = base.mark_rule(strokeWidth=2.5).encode(
        x=alt.X(
            "ci_low:Q",
            title="difference from the baseline (run − baseline)",
            axis=alt.Axis(tickCount=6),
        ),
        x2="ci_high:Q",
        y=y,
        color=color,
        tooltip=tooltip,
    )
    point = base.mark_point(filled=True, size=70, opacity=1).encode(
        x="delta:Q", y=y, color=color, tooltip=tooltip
    )
    chart = alt.layer(zero, interval, point).properties(
        width=WIDTH, height=alt.Step(24)
    )
    heading = title(
        alt,
        "Difference from the baseline, with its interval",
        subtitle=[
            "point: difference of the means; line: its confidence interval",
            "colour: the test after compare()'s correction "
            "(an interval clear of 0 may still be grey)",
        ],
    )
    return _facet(
        alt, chart, row=_several(data, "slice"), column=_several(data, "pair")
    ).properties(title=heading)


def per_query(
    per_query: Any,
    run: str,
    baseline: str,
    metric: str,
    *,
    higher_is_better: bool | None = None,
) -> Any:
    """Per-query differences of one run from a baseline, sorted: wins, then losses.

    One bar per query, tallest win first: the run's value minus the
    baseline's, green where the run is better (in the metric's direction),
    red where worse, grey for ties. A query that one run lacks counts as 0,
    as :func:`ireval_df.compare` counts it by default.

    Parameters
    ----------
    per_query : polars, pandas or pyarrow frame
        The output of :func:`ireval_df.evaluate`: ``run_id, query_id,
        metric, value``; its query attributes (``queries=``) go into the
        tooltips.
    run, baseline : str
        The two ``run_id`` values to compare.
    metric : str
        The metric, as the ``metric`` column spells it (``"nDCG@10"``).
    higher_is_better : bool, optional
        The direction of a metric the registry does not know (default:
        higher is better): which differences are wins.

    Returns
    -------
    altair.Chart

    Raises
    ------
    SchemaError
        A needed column is absent.
    OptionError
        ``run``, ``baseline`` or ``metric`` is not in the frame.

    Examples
    --------
    >>> per_query = pl.DataFrame({"run_id": ["a", "a", "b", "b"], "query_id": ["1", "2"] * 2,
    ...                           "metric": "AP", "value": [0.5, 0.2, 0.1, 0.4]})
    >>> chart = ie.plot.per_query(per_query, "a", "b", "AP")
    >>> [(row["query_id"], round(row["delta"], 2)) for row in chart.data.values]
    [('1', 0.4), ('2', -0.2)]
    """
    alt = altair()
    keys = ["run_id", "query_id", "metric", "value"]
    frame = read_frame(
        per_query, keys, chart="plot.per_query", producer="ie.evaluate"
    ).with_columns(pl.col("run_id").cast(pl.String), pl.col("metric").cast(pl.String))
    for name, value, column in (
        ("run", run, "run_id"),
        ("baseline", baseline, "run_id"),
        ("metric", metric, "metric"),
    ):
        known = frame[column].unique().sort().to_list()
        if value not in known:
            msg = (
                f"plot.per_query(): {name}={value!r} is not in the frame's "
                f"{column!r} column, which holds {known!r}.\n"
                f"  Hint: pass one of them as {name}=."
            )
            raise OptionError(msg)
    one = frame.filter(pl.col("metric") == metric)
    attributes = [c for c in frame.columns if c not in keys]
    left = one.filter(pl.col("run_id") == run).select(
        "query_id", pl.col("value").alias("run_value"), *attributes
    )
    right = one.filter(pl.col("run_id") == baseline).select(
        "query_id", pl.col("value").alias("baseline_value"), *attributes
    )
    paired = left.join(
        right, on="query_id", how="full", coalesce=True, suffix="__ireval_b"
    ).with_columns(
        *(pl.coalesce(c, f"{c}__ireval_b").alias(c) for c in attributes),
        pl.col("run_value", "baseline_value").fill_null(0.0),
    )
    higher = direction([metric], higher_is_better=higher_is_better)[metric]
    delta = pl.col("run_value") - pl.col("baseline_value")
    better = delta > 0 if higher else delta < 0
    worse = delta < 0 if higher else delta > 0
    data = (
        paired.select(
            "query_id",
            "run_value",
            "baseline_value",
            delta.alias("delta"),
            pl.when(better)
            .then(pl.lit(_WIN_LOSS[0]))
            .when(worse)
            .then(pl.lit(_WIN_LOSS[2]))
            .otherwise(pl.lit(_WIN_LOSS[1]))
            .alias("outcome"),
            *attributes,
        )
        .sort(["delta", "query_id"], descending=[higher, False])
        .with_row_index("order", offset=1)
    )
    counts = data["outcome"].value_counts()
    count = dict(zip(counts["outcome"], counts["count"], strict=True))
    n = data.height
    tooltip = [
        alt.Tooltip("query_id:N", title="query"),
        *(alt.Tooltip(f"{c}:N") for c in attributes),
        alt.Tooltip("run_value:Q", title=run, format=".4f"),
        alt.Tooltip("baseline_value:Q", title=baseline, format=".4f"),
        alt.Tooltip("delta:Q", title="difference", format="+.4f"),
    ]
    bars = (
        alt.Chart(alt.Data(values=records(data)))
        .mark_bar()
        .encode(
            x=alt.X(
                "query_id:N",
                sort=alt.EncodingSortField("order"),
                title=f"queries, sorted by the difference ({n})",
                axis=alt.Axis(labels=n <= 40, ticks=n <= 40),
            ),
            y=alt.Y(
                "delta:Q",
                title=f"{metric}: {run} − {baseline}"
                + ("" if higher else " (lower is better)"),
            ),
            color=alt.Color(
                "outcome:N",
                scale=alt.Scale(
                    domain=list(_WIN_LOSS),
                    range=[OUTCOME_COLORS[0], OUTCOME_COLORS[1], OUTCOME_COLORS[2]],
                ),
                legend=alt.Legend(title=None, orient="bottom"),
            ),
            tooltip=tooltip,
        )
    )
    subtitle = (
        f"{count.get('win', 0)} wins, {count.get('loss', 0)} losses, "
        f"{count.get('tie', 0)} ties"
    )
    return bars.properties(
        width=max(WIDTH, min(4 * n, 900)),
        height=260,
        title=title(
            alt, f"{metric} per query: {run} against {baseline}", subtitle=subtitle
        ),
    )


def slices(summary: Any) -> Any:
    """Each run's mean per slice, with its interval, small slices flagged.

    One panel per metric, one row per slice (its number of queries in the
    label), one point per run with its confidence interval. A slice that
    :func:`ireval_df.summarize` marks ``small_slice`` is drawn hollow and
    faded: too few queries for its interval to be trusted.

    Parameters
    ----------
    summary : polars, pandas or pyarrow frame
        The output of :func:`ireval_df.summarize` (usually with ``by=``):
        ``run_id, [by...], metric, value, ci_low, ci_high, n_queries``, and
        ``small_slice`` when present.

    Returns
    -------
    altair.FacetChart

    Raises
    ------
    SchemaError
        A needed column is absent.

    Examples
    --------
    >>> summary = pl.DataFrame({"run_id": ["a", "b"], "c": "x", "metric": "AP",
    ...     "value": [0.3, 0.4], "ci_low": [0.2, 0.3], "ci_high": [0.4, 0.5],
    ...     "n_queries": 5, "small_slice": True})
    >>> [row["slice"] for row in ie.plot.slices(summary).data.values]
    ['x (n=5)', 'x (n=5)']
    """
    alt = altair()
    needed = ["run_id", "metric", "value", "ci_low", "ci_high", "n_queries"]
    frame = read_frame(summary, needed, chart="plot.slices", producer="ie.summarize")
    by = between(frame, "run_id", "metric")
    small = (
        pl.col("small_slice").fill_null(value=False)
        if "small_slice" in frame.columns
        else pl.lit(value=False)
    )
    label = slice_label(frame, by)
    data = frame.select(
        pl.col("run_id").cast(pl.String),
        pl.concat_str(
            label,
            pl.lit(" (n="),
            pl.col("n_queries").max().over(label).cast(pl.String),
            pl.lit(")"),
        ).alias("slice"),
        "metric",
        "value",
        "ci_low",
        "ci_high",
        "n_queries",
        pl.when(small)
        .then(pl.lit("small slice"))
        .otherwise(pl.lit("enough queries"))
        .alias("size"),
    )
    order = data["slice"].unique(maintain_order=True).to_list()
    runs = data["run_id"].unique(maintain_order=True).to_list()
    base = alt.Chart(alt.Data(values=records(data)))
    y = alt.Y(
        "slice:N",
        sort=order,
        title=", ".join(by) or None,
        axis=alt.Axis(labelLimit=300, grid=False),
    )
    offset = alt.YOffset("run_id:N", sort=runs)
    color = alt.Color(
        "run_id:N", sort=runs, title="run", legend=alt.Legend(orient="bottom")
    )
    tooltip = [
        alt.Tooltip("run_id:N", title="run"),
        alt.Tooltip("slice:N"),
        alt.Tooltip("metric:N"),
        alt.Tooltip("value:Q", format=".4f"),
        alt.Tooltip("ci_low:Q", format=".4f"),
        alt.Tooltip("ci_high:Q", format=".4f"),
        alt.Tooltip("n_queries:Q"),
        alt.Tooltip("size:N", title="slice"),
    ]
    interval = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_low:Q", title="mean, with its interval"),
        x2="ci_high:Q",
        y=y,
        yOffset=offset,
        color=color,
        opacity=alt.Opacity(
            "size:N",
            scale=alt.Scale(domain=["enough queries", "small slice"], range=[1, 0.45]),
            legend=None,
        ),
        tooltip=tooltip,
    )
    point = base.mark_point(size=60, strokeWidth=2).encode(
        x="value:Q",
        y=y,
        yOffset=offset,
        color=color,
        fill=alt.condition(
            alt.datum.size == "small slice",
            alt.value("white"),
            alt.Fill("run_id:N", sort=runs, legend=None),
        ),
        shape=alt.Shape(
            "size:N",
            scale=alt.Scale(
                domain=["enough queries", "small slice"], range=["circle", "diamond"]
            ),
            legend=alt.Legend(title=None, orient="bottom"),
        ),
        tooltip=tooltip,
    )
    # a band of 14 px per run in each slice, and a gap between slices
    height = len(order) * (14 * len(runs) + 14)
    chart = alt.layer(interval, point).properties(width=WIDTH * 3 // 4, height=height)
    return (
        chart.facet(
            alt.Facet(
                "metric:N",
                title=None,
                sort=data["metric"].unique(maintain_order=True).to_list(),
                header=alt.Header(labelFontSize=13, labelFontWeight="bold"),
            ),
            columns=2,
        )
        .resolve_scale(x="independent")
        .properties(
            title=title(
                alt,
                "Mean per slice, with its interval",
                subtitle="hollow diamond: a slice with too few queries to trust its interval",
            )
        )
    )


def disagreement(frame: Any) -> Any:
    """Heatmap of how often two metrics agree, per slice and run pair.

    One cell per pair of metrics (rows) and slice (columns): the share of
    queries on which both metrics prefer the same run (among those where
    both see a difference), red below 0.5 to green at 1; ``≠`` marks the
    cells where the two metrics disagree on which run is better overall.
    Several run pairs make separate panels.

    Parameters
    ----------
    frame : polars, pandas or pyarrow frame
        The output of :func:`ireval_df.disagreement` (usually with ``by=``):
        ``run_id, baseline, [by...], metric, metric_b, agree,
        query_agreement``; ``kendall_tau`` and ``n_queries`` go into the
        tooltips when present.

    Returns
    -------
    altair.Chart or altair.FacetChart

    Raises
    ------
    SchemaError
        A needed column is absent.

    Examples
    --------
    >>> frame = pl.DataFrame({"run_id": "a", "baseline": "b", "metric": "AP",
    ...     "metric_b": "P@10", "agree": [False], "query_agreement": [0.75]})
    >>> [row["label"] for row in ie.plot.disagreement(frame).data.values]
    ['0.75 ≠']
    """
    alt = altair()
    needed = ["run_id", "baseline", "metric", "metric_b", "agree", "query_agreement"]
    table = read_frame(
        frame, needed, chart="plot.disagreement", producer="ie.disagreement"
    )
    by = between(table, "baseline", "metric")
    extra = _optional(table, ["kendall_tau", "n_queries"])
    share = pl.col("query_agreement")
    data = table.select(
        pl.concat_str("run_id", pl.lit(" vs "), "baseline").alias("pair"),
        slice_label(table, by).alias("slice"),
        pl.concat_str("metric", pl.lit(" / "), "metric_b").alias("metrics"),
        "agree",
        "query_agreement",
        pl.concat_str(
            pl.when(share.is_null())
            .then(pl.lit("–"))
            .otherwise(share.round(2).cast(pl.String).str.pad_end(4, "0")),
            pl.when(pl.col("agree")).then(pl.lit("")).otherwise(pl.lit(" ≠")),
        ).alias("label"),
        *extra,
    )
    slices_ = data["slice"].unique(maintain_order=True).to_list()
    pairs = data["metrics"].unique(maintain_order=True).to_list()
    base = alt.Chart(alt.Data(values=records(data))).encode(
        x=alt.X(
            "slice:N",
            sort=slices_,
            title=", ".join(by) if by else None,
            axis=alt.Axis(labelAngle=0, orient="top"),
        ),
        y=alt.Y("metrics:N", sort=pairs, title=None),
    )
    tooltip = [
        alt.Tooltip("pair:N", title="runs"),
        alt.Tooltip("slice:N"),
        alt.Tooltip("metrics:N"),
        alt.Tooltip("query_agreement:Q", format=".3f", title="queries agreeing"),
        alt.Tooltip("agree:N", title="same run better"),
        *(alt.Tooltip(f"{c}:Q", format=".3g") for c in extra),
    ]
    cells = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color(
            "query_agreement:Q",
            scale=alt.Scale(scheme="redyellowgreen", domain=[0.5, 1], clamp=True),
            legend=alt.Legend(title="queries agreeing", format=".0%", orient="right"),
        ),
        tooltip=tooltip,
    )
    text = base.mark_text(fontSize=12).encode(
        text="label:N",
        color=alt.condition(
            "datum.query_agreement >= 0.92 || datum.query_agreement < 0.6",
            alt.value("white"),
            alt.value("#222222"),
        ),
        tooltip=tooltip,
    )
    chart = alt.layer(cells, text).properties(
        width=alt.Step(max(70, 8 * max(len(s) for s in slices_))), height=alt.Step(28)
    )
    heading = title(
        alt,
        "How often two metrics pick the same run",
        subtitle="share of queries where both metrics see a difference and agree; "
        "≠: the metrics disagree on the better run",
    )
    return _facet(alt, chart, row=None, column=_several(data, "pair")).properties(
        title=heading
    )


def similarity(frame: Any, *, by: str | Sequence[str] | None = None) -> Any:
    """Distribution of a similarity (RBO, tau, overlap) per slice, as box plots.

    One box per slice and run pair (median, quartiles, whiskers to 1.5 IQR,
    outliers as points), one panel per metric and run pair.

    Parameters
    ----------
    frame : polars, pandas or pyarrow frame
        The output of :func:`ireval_df.similarity`: ``run_id, baseline,
        query_id, metric, value`` and the query attributes it was given.
    by : str or list of str, optional
        Slice columns of ``frame`` (``"query_class"``, from
        ``similarity(..., queries=...)``); without, one box per panel.

    Returns
    -------
    altair.Chart or altair.FacetChart

    Raises
    ------
    SchemaError
        A needed or ``by`` column is absent.

    Examples
    --------
    >>> frame = pl.DataFrame({"run_id": "a", "baseline": "b", "query_id": ["1", "2"],
    ...     "metric": "RBO", "value": [0.5, 0.7], "c": ["x", "y"]})
    >>> sorted(row["slice"] for row in ie.plot.similarity(frame, by="c").data.values)
    ['x (n=1)', 'y (n=1)']
    """
    alt = altair()
    slices_by = [by] if isinstance(by, str) else list(by or [])
    needed = ["run_id", "baseline", "query_id", "metric", "value"]
    table = read_frame(
        frame,
        [*needed, *slices_by],
        chart="plot.similarity",
        producer="ie.similarity",
    )
    label = slice_label(table, slices_by)
    panel = pl.concat_str("metric", pl.lit(": "), "run_id", pl.lit(" vs "), "baseline")
    data = table.select(
        panel.alias("panel"),
        pl.concat_str(
            label,
            pl.lit(" (n="),
            pl.len().over(panel, label).cast(pl.String),
            pl.lit(")"),
        ).alias("slice"),
        "query_id",
        "metric",
        "value",
    ).filter(pl.col("value").is_not_null())
    order = (
        data.sort("slice")["slice"].unique(maintain_order=True).to_list()
        if slices_by
        else None
    )
    metrics = ", ".join(data["metric"].unique(maintain_order=True).to_list())
    chart = (
        alt.Chart(alt.Data(values=records(data)))
        .mark_boxplot(size=18, extent=1.5, median=alt.MarkConfig(color="white"))
        .encode(
            x=alt.X("value:Q", title=metrics, scale=alt.Scale(zero=False)),
            y=alt.Y("slice:N", sort=order, title=", ".join(slices_by) or None),
            color=alt.Color("slice:N", sort=order, legend=None),
        )
        .properties(width=WIDTH, height=alt.Step(34))
    )
    heading = title(
        alt,
        f"Distribution of {metrics} per query"
        + (f", by {', '.join(slices_by)}" if slices_by else ""),
        subtitle="box: quartiles and median; whiskers: 1.5 IQR; points: outliers",
    )
    return _facet(alt, chart, row=_several(data, "panel"), column=None).properties(
        title=heading
    )
