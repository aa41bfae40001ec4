"""Charts of the online frames: CTR by position, propensities, A/B and interleaving."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df._utils.frames import is_frame_like
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
    from collections.abc import Mapping

__all__ = ["ab", "interleaving", "position_ctr", "propensities"]


def position_ctr(log: Any) -> Any:
    """Click-through rate at each position of the results page, per arm.

    One line per variant (and per experiment, when several): the share of
    searches with results that have a click at each position, as
    ``PositionCTR`` defines it. A slice (``by=`` of the metrics) makes a
    panel each.

    Parameters
    ----------
    log : SearchLog or frame
        A search log (:func:`ireval_df.online.read_log`), whose
        ``PositionCTR`` is computed, or the output of
        ``ie.online.metrics(log, "PositionCTR")`` (its ``PositionCTR`` rows:
        ``experiment_id, variant, [by...], metric, position, value``).

    Returns
    -------
    altair.Chart or altair.FacetChart

    Raises
    ------
    SchemaError
        A needed column is absent, or the frame has no ``PositionCTR`` row.

    Examples
    --------
    >>> frame = pl.DataFrame({"experiment_id": "e", "variant": ["a", "a"],
    ...     "metric": "PositionCTR", "position": [1, 2], "value": [0.4, 0.2]})
    >>> [row["position"] for row in ie.plot.position_ctr(frame).data.values]
    [1, 2]
    """
    alt = altair()
    if not is_frame_like(log):
        from ireval_df.online import metrics

        log = metrics(log, "PositionCTR")
    needed = ["experiment_id", "variant", "metric", "position", "value"]
    frame = read_frame(
        log,
        needed,
        chart="plot.position_ctr",
        producer='ie.online.metrics(log, "PositionCTR")',
    )
    by = between(frame, "variant", "metric")
    frame = frame.filter(
        pl.col("position").is_not_null()
        & pl.col("metric").str.starts_with("PositionCTR")
    )
    if frame.is_empty():
        from ireval_df.errors import SchemaError

        msg = (
            "plot.position_ctr() found no PositionCTR row (with a position) in the "
            'frame.\n  Hint: pass ie.online.metrics(log, "PositionCTR"), or the log.'
        )
        raise SchemaError(msg)
    several = frame["experiment_id"].n_unique() > 1
    arm = (
        pl.concat_str("experiment_id", pl.lit(": "), "variant")
        if several
        else pl.col("variant")
    )
    extra = [c for c in ("n_units", "n_searches") if c in frame.columns]
    data = frame.select(
        arm.alias("arm"),
        slice_label(frame, by).alias("slice"),
        "metric",
        pl.col("position").cast(pl.Int64),
        "value",
        *extra,
    )
    tooltip = [
        alt.Tooltip("arm:N", title="variant"),
        *([alt.Tooltip("slice:N")] if by else []),
        alt.Tooltip("metric:N"),
        alt.Tooltip("position:O"),
        alt.Tooltip("value:Q", title="CTR", format=".2%"),
        *(alt.Tooltip(f"{c}:Q") for c in extra),
    ]
    arms = data["arm"].unique(maintain_order=True).to_list()
    base = alt.Chart(alt.Data(values=records(data))).encode(
        x=alt.X(
            "position:O",
            title="position on the results page",
            axis=alt.Axis(labelAngle=0),
        ),
        y=alt.Y("value:Q", title="click-through rate", axis=alt.Axis(format=".0%")),
        color=alt.Color(
            "arm:N", sort=arms, title="variant", legend=alt.Legend(orient="bottom")
        ),
    )
    chart = alt.layer(
        base.mark_line(strokeWidth=2),
        base.mark_point(filled=True, size=50).encode(tooltip=tooltip),
    ).properties(width=WIDTH, height=WIDTH * 2 // 3)
    heading = title(
        alt,
        "Click-through rate by position",
        subtitle="clicked results / impressions at each position (PositionCTR)",
    )
    if data["slice"].n_unique() > 1 or data["metric"].n_unique() > 1:
        facets: dict[str, Any] = {}
        if data["slice"].n_unique() > 1:
            facets["column"] = alt.Column("slice:N", title=", ".join(by))
        if data["metric"].n_unique() > 1:
            facets["row"] = alt.Row("metric:N", title=None)
        chart = chart.facet(**facets)
    return chart.properties(title=heading)


def propensities(frame: Any) -> Any:
    """Plot the examination propensity at each position, with its interval.

    Points joined by a line, with the bootstrap confidence interval as a
    band and bars; position 1 (or the pivot) is 1 by definition.

    Parameters
    ----------
    frame : polars, pandas or pyarrow frame
        The output of :func:`ireval_df.online.propensities`: ``position,
        propensity, ci_low, ci_high``; ``n_impressions`` goes into the
        tooltips when present.

    Returns
    -------
    altair.LayerChart

    Raises
    ------
    SchemaError
        A needed column is absent.

    Examples
    --------
    >>> frame = pl.DataFrame({"position": [1, 2], "propensity": [1.0, 0.5],
    ...     "ci_low": [1.0, 0.4], "ci_high": [1.0, 0.6]})
    >>> [row["propensity"] for row in ie.plot.propensities(frame).data.values]
    [1.0, 0.5]
    """
    alt = altair()
    needed = ["position", "propensity", "ci_low", "ci_high"]
    table = read_frame(
        frame, needed, chart="plot.propensities", producer="ie.online.propensities"
    )
    extra = [c for c in ("n_impressions",) if c in table.columns]
    data = table.select(pl.col("position").cast(pl.Int64), *needed[1:], *extra).sort(
        "position"
    )
    tooltip = [
        alt.Tooltip("position:O"),
        alt.Tooltip("propensity:Q", format=".3f"),
        alt.Tooltip("ci_low:Q", format=".3f"),
        alt.Tooltip("ci_high:Q", format=".3f"),
        *(alt.Tooltip(f"{c}:Q") for c in extra),
    ]
    base = alt.Chart(alt.Data(values=records(data)))
    x = alt.X("position:Q", title="position", axis=alt.Axis(tickMinStep=1, format="d"))
    color = "#4c78a8"
    band = base.mark_area(opacity=0.18, color=color).encode(
        x=x, y=alt.Y("ci_low:Q"), y2="ci_high:Q"
    )
    bars = base.mark_rule(color=color, strokeWidth=1.5).encode(
        x=x, y="ci_low:Q", y2="ci_high:Q"
    )
    highest = data.select(pl.col("ci_high", "propensity").max()).row(0)
    top = max([1.0, *(float(v) for v in highest if v is not None)])
    line = base.mark_line(color=color, strokeWidth=2).encode(
        x=x,
        y=alt.Y(
            "propensity:Q",
            title="examination propensity (relative to position 1)",
            scale=alt.Scale(domain=[0, top]),
        ),
    )
    points = base.mark_point(filled=True, size=55, color=color, opacity=1).encode(
        x=x, y="propensity:Q", tooltip=tooltip
    )
    return alt.layer(band, bars, line, points).properties(
        width=WIDTH,
        height=WIDTH * 2 // 3,
        title=title(
            alt,
            "Examination propensity by position",
            subtitle="point: estimate; band: confidence interval",
        ),
    )


def ab(
    ab_frame: Any,
    *,
    relative: bool = True,
    higher_is_better: bool | Mapping[str, bool] | None = None,
) -> Any:
    """Forest plot of an A/B test: each metric's effect and interval, per slice.

    One row per metric: the treatment's difference from control (relative,
    in percent, by default: metrics of different units share one axis) and
    its confidence interval, coloured by the outcome of the test in the
    metric's own direction (``ZeroResultRate`` falling is better), a dashed
    line at 0. Slices make rows of panels, treatment arms columns. Metrics
    left untested (``reason`` not null) are left out.

    Parameters
    ----------
    ab_frame : polars, pandas or pyarrow frame
        The output of :func:`ireval_df.online.ab_test`: ``variant, [by...],
        metric, delta, ci_low, ci_high, significant`` and, for
        ``relative=True``, ``delta_rel, rel_ci_low, rel_ci_high``.
    relative : bool, default True
        Draw ``delta_rel`` (percent of control) rather than ``delta``.
    higher_is_better : bool or mapping of str to bool, optional
        The direction of metrics the registry does not know (default:
        higher is better), for the colour.

    Returns
    -------
    altair.LayerChart or altair.FacetChart

    Raises
    ------
    SchemaError
        A needed column is absent.

    Examples
    --------
    >>> frame = pl.DataFrame({"variant": "t", "metric": ["CTR"], "delta": [0.05],
    ...     "ci_low": [0.01], "ci_high": [0.09], "significant": [True],
    ...     "delta_rel": [0.1], "rel_ci_low": [0.02], "rel_ci_high": [0.18]})
    >>> [row["outcome"] for row in ie.plot.ab(frame).data.values]
    ['better (significant)']
    """
    alt = altair()
    columns = (
        ["delta_rel", "rel_ci_low", "rel_ci_high"]
        if relative
        else ["delta", "ci_low", "ci_high"]
    )
    needed = ["variant", "metric", "delta", *columns, "significant"]
    table = read_frame(
        ab_frame,
        list(dict.fromkeys(needed)),
        chart="plot.ab",
        producer="ie.online.ab_test",
    )
    by = between(table, "variant", "metric")
    metrics = table["metric"].unique(maintain_order=True).to_list()
    extra = [
        c
        for c in (
            "control_mean",
            "treatment_mean",
            "p_adjusted",
            "n_control",
            "n_treatment",
        )
        if c in table.columns
    ]
    effect, low, high = columns
    data = table.select(
        pl.col("variant").cast(pl.String),
        slice_label(table, by).alias("slice"),
        "metric",
        pl.col(effect).alias("effect"),
        pl.col(low).alias("low"),
        pl.col(high).alias("high"),
        outcome(
            pl.col("delta"),
            pl.col("significant"),
            pl.col("metric").replace_strict(
                direction(metrics, higher_is_better=higher_is_better)
            ),
        ).alias("outcome"),
        *extra,
    ).filter(pl.col("effect").is_not_null() & pl.col("low").is_not_null())
    fmt = "+.1%" if relative else "+.4g"
    tooltip = [
        alt.Tooltip("variant:N"),
        *([alt.Tooltip("slice:N")] if by else []),
        alt.Tooltip("metric:N"),
        alt.Tooltip("effect:Q", title="difference", format=fmt),
        alt.Tooltip("low:Q", title="ci_low", format=fmt),
        alt.Tooltip("high:Q", title="ci_high", format=fmt),
        *(alt.Tooltip(f"{c}:Q", format=".4g") for c in extra),
    ]
    base = alt.Chart(alt.Data(values=records(data)))
    y = alt.Y("metric:N", sort=metrics, title=None)
    color = outcome_color(alt)
    title_x = (
        "treatment − control, relative to control"
        if relative
        else "treatment − control"
    )
    chart = alt.layer(
        base.mark_rule(color="#333333", strokeDash=[4, 3]).encode(x=alt.datum(0)),
        base.mark_rule(strokeWidth=2.5).encode(
            x=alt.X(
                "low:Q",
                title=title_x,
                axis=alt.Axis(format="+.0%" if relative else "+", tickCount=6),
            ),
            x2="high:Q",
            y=y,
            color=color,
            tooltip=tooltip,
        ),
        base.mark_point(filled=True, size=70, opacity=1).encode(
            x="effect:Q", y=y, color=color, tooltip=tooltip
        ),
    ).properties(width=WIDTH, height=alt.Step(24))
    facets: dict[str, Any] = {}
    if data["slice"].n_unique() > 1:
        facets["row"] = alt.Row(
            "slice:N",
            title=None,
            header=alt.Header(labelAngle=0, labelAlign="left"),
        )
    if data["variant"].n_unique() > 1:
        facets["column"] = alt.Column("variant:N", title=None)
    if facets:
        chart = chart.facet(**facets)
    return chart.properties(
        title=title(
            alt,
            "A/B test: effect of the treatment, with its interval",
            subtitle="colour: the test's outcome (after the correction) in the "
            "metric's own direction",
        )
    )


def interleaving(frame: Any) -> Any:
    """Forest plot of an interleaving test: ``delta_ab`` and its interval per slice.

    One row per slice (and ranker pair): the preference ``delta_ab``, above
    0 when ``ranker_a`` wins, its confidence interval, green when
    significant, and the wins, losses and ties in the tooltip.

    Parameters
    ----------
    frame : polars, pandas or pyarrow frame
        The output of :func:`ireval_df.online.interleaving_test`:
        ``ranker_a, ranker_b, [by...], unit, delta_ab, ci_low, ci_high,
        significant``; ``wins``, ``losses``, ``ties``, ``n_units`` and
        ``p_adjusted`` go into the tooltips when present.

    Returns
    -------
    altair.LayerChart

    Raises
    ------
    SchemaError
        A needed column is absent.

    Examples
    --------
    >>> frame = pl.DataFrame({"ranker_a": "a", "ranker_b": "b", "unit": "user_id",
    ...     "delta_ab": [-0.1], "ci_low": [-0.15], "ci_high": [-0.05], "significant": [True]})
    >>> [row["winner"] for row in ie.plot.interleaving(frame).data.values]
    ['b']
    """
    alt = altair()
    needed = [
        "ranker_a",
        "ranker_b",
        "unit",
        "delta_ab",
        "ci_low",
        "ci_high",
        "significant",
    ]
    table = read_frame(
        frame, needed, chart="plot.interleaving", producer="ie.online.interleaving_test"
    )
    by = between(table, "ranker_b", "unit")
    extra = [
        c
        for c in ("wins", "losses", "ties", "n_units", "p_adjusted")
        if c in table.columns
    ]
    pair = pl.concat_str("ranker_a", pl.lit(" vs "), "ranker_b")
    several = table.select(pair.n_unique()).item() > 1
    label = slice_label(table, by)
    row = pl.concat_str(pair, pl.lit(": "), label) if several else label
    delta = pl.col("delta_ab")
    significant = pl.col("significant").fill_null(value=False)
    data = table.select(
        row.alias("row"),
        pair.alias("pair"),
        "delta_ab",
        "ci_low",
        "ci_high",
        pl.when(significant & (delta > 0))
        .then(pl.col("ranker_a"))
        .when(significant & (delta < 0))
        .then(pl.col("ranker_b"))
        .otherwise(pl.lit("no significant preference"))
        .alias("winner"),
        *extra,
    ).filter(delta.is_not_null())
    rows = data["row"].unique(maintain_order=True).to_list()
    winners = data["winner"].unique(maintain_order=True).to_list()
    rankers = [w for w in winners if w != "no significant preference"]
    palette = ["#1b9e77", "#7570b3", "#d95f02", "#e7298a", "#66a61e", "#e6ab02"]
    domain = [*rankers, "no significant preference"]
    colors = [*palette[: len(rankers)], OUTCOME_COLORS[1]]
    tooltip = [
        alt.Tooltip("pair:N", title="rankers"),
        *([alt.Tooltip("row:N", title="slice")] if by else []),
        alt.Tooltip("delta_ab:Q", format="+.3f"),
        alt.Tooltip("ci_low:Q", format="+.3f"),
        alt.Tooltip("ci_high:Q", format="+.3f"),
        alt.Tooltip("winner:N", title="preferred"),
        *(
            alt.Tooltip(f"{c}:Q", format=".4g" if c == "p_adjusted" else "d")
            for c in extra
        ),
    ]
    first = table.row(0, named=True)
    base = alt.Chart(alt.Data(values=records(data)))
    y = alt.Y("row:N", sort=rows, title=", ".join(by) or None)
    color = alt.Color(
        "winner:N",
        scale=alt.Scale(domain=domain, range=colors),
        legend=alt.Legend(title="preferred", orient="bottom"),
    )
    axis_title = (
        f"delta_ab: ← {first['ranker_b']} preferred | {first['ranker_a']} preferred →"
        if not several
        else "delta_ab: ← ranker_b preferred | ranker_a preferred →"
    )
    return alt.layer(
        base.mark_rule(color="#333333", strokeDash=[4, 3]).encode(x=alt.datum(0)),
        base.mark_rule(strokeWidth=2.5).encode(
            x=alt.X("ci_low:Q", title=axis_title, axis=alt.Axis(tickCount=6)),
            x2="ci_high:Q",
            y=y,
            color=color,
            tooltip=tooltip,
        ),
        base.mark_point(filled=True, size=70, opacity=1).encode(
            x="delta_ab:Q", y=y, color=color, tooltip=tooltip
        ),
    ).properties(
        width=WIDTH,
        height=alt.Step(26),
        title=title(
            alt,
            "Interleaving: which ranker users prefer",
            subtitle=f"per {first['unit']}; 0: no preference",
        ),
    )
