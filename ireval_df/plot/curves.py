"""Precision against recall, per run: trec_eval's 11 points, or each query's own."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import OptionError
from ireval_df.measures import Metric, parse_metric
from ireval_df.offline import evaluate
from ireval_df.offline.engine import EngineOptions, label_qrels, ranked_rows
from ireval_df.plot._base import WIDTH, altair, records, slice_label, title
from ireval_df.schema.coerce import as_qrels, as_queries, as_run

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["pr_curve", "pr_points"]

#: trec_eval's recall levels, ``iprec_at_recall_0.00`` ... ``_1.00``
LEVELS = tuple(i / 10 for i in range(11))


def _metrics(rel: int) -> dict[str, float]:
    """Return the canonical ``IPrec`` name of each recall level."""
    names = {}
    for level in LEVELS:
        metric: Metric = parse_metric(f"IPrec(rel={rel})@{level}")
        names[str(metric)] = level
    return names


def pr_points(
    runs: Any,
    qrels: Any,
    *,
    interpolated: bool = True,
    by: str | Sequence[str] | None = None,
    queries: Any = None,
    rel: int = 1,
) -> pl.DataFrame:
    """Return the points of the precision-recall curves: what :func:`pr_curve` draws.

    Parameters
    ----------
    runs, qrels, queries, by, interpolated, rel
        As for :func:`pr_curve`.

    Returns
    -------
    polars.DataFrame
        Interpolated: ``run_id, [by...], recall, precision, n_queries``,
        precision the mean over queries of trec_eval's
        ``iprec_at_recall`` (``IPrec@<recall>``) at the 11 levels. Raw:
        ``run_id, query_id, [by...], rank, recall, precision``, one row per
        rank at which a relevant document is retrieved: ``i / R`` and
        ``i / rank`` for the i-th relevant document of R.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["b", "c"], "relevance": [1, 1]})
    >>> pr_points(run, qrels, interpolated=False).select("rank", "recall", "precision").rows()
    [(2, 0.5, 0.5), (3, 1.0, 0.6666666666666666)]
    >>> pr_points(run, qrels)["precision"].round(3).to_list()[:3]
    [0.667, 0.667, 0.667]
    """
    slices = [by] if isinstance(by, str) else list(by or [])
    if isinstance(rel, bool) or not isinstance(rel, int) or rel < 1:
        msg = f"rel must be a positive whole number, found {rel!r}.\n  Hint: pass e.g. rel=1."
        raise OptionError(msg)
    if slices and queries is None:
        msg = (
            f"by={by!r} names query attributes, but no queries= were given.\n"
            '  Hint: pass queries="queries.tsv" (or a frame) holding those columns.'
        )
        raise OptionError(msg)
    if interpolated:
        names = _metrics(rel)
        per_query = evaluate(runs, qrels, list(names), queries=queries)
        frame = per_query if isinstance(per_query, pl.DataFrame) else None
        if frame is None:  # pandas or arrow in: evaluate answers in kind
            from ireval_df._utils.frames import to_polars

            found = to_polars(per_query)
            frame = found.collect() if isinstance(found, pl.LazyFrame) else found
        _check_by(frame, slices)
        return (
            frame.with_columns(
                pl.col("metric")
                .replace_strict(names, return_dtype=pl.Float64)
                .alias("recall")
            )
            .group_by("run_id", *slices, "recall", maintain_order=True)
            .agg(pl.col("value").mean().alias("precision"), pl.len().alias("n_queries"))
            .sort("run_id", *slices, "recall")
        )
    run = as_run(runs, in_memory=True)
    labelled = label_qrels(as_qrels(qrels, in_memory=True))
    relevant = pl.col("label") >= rel
    n_relevant = (
        labelled.filter(relevant).group_by("query_id").agg(pl.len().alias("__ireval_r"))
    )
    # the i-th relevant document of a ranking, by rank: order-free, so the
    # join may reorder rows
    nth = pl.col("rank").rank("ordinal").over("run_id", "query_id")
    found_at = (
        ranked_rows(run, labelled, EngineOptions(), every=False)
        .filter(relevant)
        .join(n_relevant, on="query_id")
        .select(
            "run_id",
            "query_id",
            pl.col("rank").cast(pl.Int64),
            (nth / pl.col("__ireval_r")).alias("recall"),
            (nth / pl.col("rank")).alias("precision"),
        )
    )
    if slices:
        attributes = as_queries(queries)
        _check_by(attributes.collect_schema(), slices)
        found_at = found_at.join(
            attributes.select("query_id", *slices), on="query_id", how="left"
        )
    points = found_at.collect()
    return points.select(
        "run_id", "query_id", *slices, "rank", "recall", "precision"
    ).sort("run_id", "query_id", "rank")


def _check_by(frame: Any, slices: Sequence[str]) -> None:
    columns = frame.columns if isinstance(frame, pl.DataFrame) else frame.names()
    absent = [c for c in slices if c not in columns]
    if absent:
        msg = (
            f"by column(s) {absent!r} are not query attributes of the queries "
            f"given (found {columns!r}).\n  Hint: pass by= one of the queries' columns."
        )
        raise OptionError(msg)


def pr_curve(
    runs: Any,
    qrels: Any,
    *,
    interpolated: bool = True,
    by: str | Sequence[str] | None = None,
    queries: Any = None,
    rel: int = 1,
) -> Any:
    """Precision against recall per run, as trec_eval computes it; per slice as panels.

    ``interpolated=True`` draws the 11-point interpolated curve of each run:
    the mean over queries of trec_eval's ``iprec_at_recall_0.00`` ...
    ``_1.00`` (the registry's ``IPrec@0`` ... ``IPrec@1``): at level r,
    the best precision at a rank that has retrieved at least
    ``lround(r * R)`` of the R relevant documents (trec_eval 10.0's
    rounding). ``interpolated=False``
    draws each query's raw curve, one thin line per query in a panel per
    run: its precision and recall at each rank where a relevant document is
    retrieved (a query that retrieves none has no line).

    Parameters
    ----------
    runs : run or list of runs
        What :func:`ireval_df.evaluate` takes: frames, paths, dicts.
    qrels : qrels
        What :func:`ireval_df.evaluate` takes.
    interpolated : bool, default True
        The 11-point interpolated means, or the raw per-query curves.
    by : str or list of str, optional
        Query attributes (from ``queries``) to draw a panel per slice.
    queries : frame or path, optional
        The query attributes ``by`` names.
    rel : int, default 1
        The lowest grade that counts as relevant (trec_eval ``-l``).

    Returns
    -------
    altair.Chart or altair.FacetChart
        ``.save("pr.png")`` writes it; the points are :func:`pr_points`.

    Raises
    ------
    OptionError
        ``by`` without ``queries``, or naming no column of them; ``rel``
        not a positive whole number.

    See Also
    --------
    pr_points : the numbers behind the chart.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["b", "c"], "relevance": [1, 1]})
    >>> chart = ie.plot.pr_curve(run, qrels)
    >>> [row["recall"] for row in chart.data.values][:3]
    [0.0, 0.1, 0.2]
    """
    alt = altair()
    slices = [by] if isinstance(by, str) else list(by or [])
    points = pr_points(
        runs, qrels, interpolated=interpolated, by=slices, queries=queries, rel=rel
    )
    data = points.with_columns(
        pl.col("run_id").cast(pl.String), slice_label(points, slices).alias("slice")
    )
    runs_ = data["run_id"].unique(maintain_order=True).to_list()
    several = data["slice"].n_unique() > 1
    order = data.sort("slice")["slice"].unique(maintain_order=True).to_list()
    x = alt.X(
        "recall:Q",
        title="recall",
        scale=alt.Scale(domain=[0, 1]),
        axis=alt.Axis(format=".1f"),
    )
    y = alt.Y(
        "precision:Q",
        title="interpolated precision (mean over queries)"
        if interpolated
        else "precision",
        scale=alt.Scale(domain=[0, 1]),
        axis=alt.Axis(format=".1f"),
    )
    color = alt.Color(
        "run_id:N", sort=runs_, title="run", legend=alt.Legend(orient="bottom")
    )
    base = alt.Chart(alt.Data(values=records(data)))
    if interpolated:
        tooltip = [
            alt.Tooltip("run_id:N", title="run"),
            *([alt.Tooltip("slice:N")] if several else []),
            alt.Tooltip("recall:Q", format=".1f"),
            alt.Tooltip("precision:Q", format=".4f"),
            alt.Tooltip("n_queries:Q"),
        ]
        chart = alt.layer(
            base.mark_line(strokeWidth=2).encode(x=x, y=y, color=color),
            base.mark_point(filled=True, size=45).encode(
                x=x, y=y, color=color, tooltip=tooltip
            ),
        ).properties(width=WIDTH * 3 // 4, height=WIDTH * 3 // 4)
        heading = title(
            alt,
            "11-point interpolated precision-recall curve",
            subtitle="trec_eval's iprec_at_recall, mean over queries",
        )
        if several:
            chart = chart.facet(
                column=alt.Column("slice:N", sort=order, title=", ".join(slices))
            )
        return chart.properties(title=heading)
    tooltip = [
        alt.Tooltip("run_id:N", title="run"),
        alt.Tooltip("query_id:N", title="query"),
        *([alt.Tooltip("slice:N")] if several else []),
        alt.Tooltip("rank:Q"),
        alt.Tooltip("recall:Q", format=".3f"),
        alt.Tooltip("precision:Q", format=".3f"),
    ]
    chart = (
        base.mark_line(
            strokeWidth=1, opacity=0.35, point=alt.OverlayMarkDef(size=10, opacity=0.5)
        )
        .encode(
            x=x,
            y=y,
            color=color,
            detail="query_id:N",
            order="rank:Q",
            tooltip=tooltip,
        )
        .properties(width=WIDTH * 2 // 3, height=WIDTH * 2 // 3)
    )
    facets: dict[str, Any] = {"column": alt.Column("run_id:N", sort=runs_, title=None)}
    if several:
        facets["row"] = alt.Row("slice:N", sort=order, title=", ".join(slices))
    return chart.facet(**facets).properties(
        title=title(
            alt,
            "Precision-recall curve of each query",
            subtitle="precision and recall at each rank that retrieves a relevant document",
        )
    )
