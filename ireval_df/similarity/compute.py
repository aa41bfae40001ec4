"""``similarity()``: every run against its baseline, query by query, one row per measure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._utils.options import check_choice
from ireval_df._utils.provenance import output
from ireval_df._utils.versions import POLARS_VERSION, version_of
from ireval_df.errors import warn
from ireval_df.measures import parse_metrics
from ireval_df.offline.conventions import TIE_RULE
from ireval_df.offline.engine import EngineOptions
from ireval_df.offline.evaluation import check_ranks, unique_rankings
from ireval_df.schema.coerce import as_queries, as_run
from ireval_df.similarity.measures import reach
from ireval_df.similarity.rankings import (
    KEY,
    choose_baselines,
    pair_rankings,
    rank_with_ties,
    run_ids,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from ireval_df.measures import Metric
    from ireval_df.offline.engine import Rankings
    from ireval_df.similarity.measures import Kernel

__all__ = ["report_dropped", "similarity", "similarity_rows"]

Duplicates = Literal["error", "first", "max"]


def similarity(
    runs: Any,
    metrics: str | Metric | Iterable[str | Metric] = "RBO",
    *,
    baseline: str | Sequence[str] | None = None,
    queries: Any = None,
    missing: Literal["zero", "skip", "error"] = "zero",
    rank_from: Literal["score", "column"] = "score",
    duplicates: Duplicates = "error",
    columns: Mapping[str, str] | None = None,
) -> Any:
    """Compare runs with a baseline, without judgments: one row per run, query and measure.

    Parameters
    ----------
    runs : frame, path, dict or list of these
        At least two runs, in any form :func:`ireval_df.evaluate` takes
        (several stacked with ``run_id``, or a list of paths or frames).
    metrics : str, Metric or list of them, default "RBO"
        Similarity measures: ``RBO(p=0.9)@100``, ``RBO(ties=w,score=min)``,
        ``Tau``, ``TauAP(ties=b)``, ``Jaccard@10``, ``Overlap@10``; see
        :func:`ireval_df.list_metrics` (family ``similarity``).
    baseline : str or list of str, optional
        The run every other run is compared with (default: the first run);
        several baselines compare each run with each (a pair once).
    queries : frame or path, optional
        Query attributes joined onto the result by ``query_id``, as
        :func:`ireval_df.evaluate` does.
    missing : {"zero", "skip", "error"}, default "zero"
        A query one run of a pair ranks and the other does not: compared with
        an empty ranking, left out of that pair, or an error; always counted
        in a warning.
    rank_from : {"score", "column"}, default "score"
        Rank by score (ties: equal scores) or by the run's ``rank`` column
        (ties: equal ranks); ``doc_id`` descending orders tied documents, as
        in :func:`ireval_df.evaluate`.
    duplicates : {"error", "first", "max"}, default "error"
        A document twice in one ranking: an error, or keep its first row or
        its highest score (counted in a warning).
    columns : mapping of str to str, optional
        Source column names to canonical ones, e.g. ``{"qid": "query_id"}``.

    Returns
    -------
    Frame of the same kind as ``runs``
        ``run_id, baseline, query_id, metric, value`` (and the ``queries``
        attribute columns). ``summarize``, ``compare`` and the report
        functions take it as they take :func:`ireval_df.evaluate`'s.

    Raises
    ------
    MetricSpecError
        An unknown measure, one that is not a similarity measure, or a bad
        parameter (``p`` outside (0, 1), a cutoff below 1).
    OptionError
        Fewer than two runs, an unknown baseline, an unknown option value.
    DataError
        A document twice in one ranking (``duplicates="error"``), NaN scores.
    AlignmentError
        ``missing="error"`` and a query is ranked by one run of a pair only.

    Notes
    -----
    Each measure is computed for every (run, baseline, query) at once, with
    joins, cumulative counts and grouped aggregations; nothing loops over
    queries or depths. ``docs/similarity.md`` says which RBO to report, how
    ties count, and where other packages differ.

    Examples
    --------
    >>> runs = pl.DataFrame({"run_id": ["old"] * 3 + ["new"] * 3, "query_id": "q",
    ...                      "doc_id": ["a", "b", "c", "a", "c", "b"],
    ...                      "score": [3.0, 2.0, 1.0] * 2})
    >>> ie.similarity(runs, ["Jaccard", "Overlap@1"]).select("run_id", "baseline", "metric", "value").rows()
    [('new', 'old', 'Jaccard', 1.0), ('new', 'old', 'Overlap@1', 1.0)]
    """
    check_choice("missing", missing, ("zero", "skip", "error"))
    check_choice("rank_from", rank_from, ("score", "column"))
    check_choice("duplicates", duplicates, ("error", "first", "max"))
    specs = parse_metrics(metrics, family="similarity")
    run = as_run(runs, columns=columns, rank=rank_from == "column", in_memory=True)
    run, found, dropped = unique_rankings(
        run, EngineOptions(rank_from=rank_from), duplicates
    )
    runs_given = run_ids(run, found, caller="similarity")
    baselines = choose_baselines(baseline, runs_given)
    report_dropped(dropped, duplicates)
    if rank_from == "column":
        check_ranks(run)
    result = similarity_rows(
        run, found, specs, runs_given, baselines, missing=missing, rank_from=rank_from
    )
    if queries is not None:
        attributes = as_queries(queries).collect()
        result = result.join(attributes, on="query_id", how="left")
    settings = {
        "family": "similarity",
        "metrics": [str(m) for m in specs],
        "baselines": baselines,
        "missing": missing,
        "rank_from": rank_from,
        "tie_rule": TIE_RULE,
        "duplicates": duplicates,
        "duplicates_dropped": dropped,
        "ireval_df": version_of("ireval-df"),
        "polars": POLARS_VERSION,
    }
    return output(result, runs, settings)


def report_dropped(dropped: int, duplicates: Duplicates) -> None:
    """Warn that ``dropped`` repeated rows were dropped (nothing when none were)."""
    if dropped:
        warn(
            f"{dropped} repeated rows of documents that appear more than once in one "
            f"ranking were dropped (duplicates={duplicates!r})."
        )


def similarity_rows(
    run: pl.LazyFrame,
    found: Rankings,
    specs: list[Metric],
    runs_given: list[str],
    baselines: list[str],
    *,
    missing: Literal["zero", "skip", "error"],
    rank_from: Literal["score", "column"],
    report: bool = True,
) -> pl.DataFrame:
    """Score every (run, baseline, query) of a checked run: :func:`similarity`'s rows.

    ``run`` holds whole queries (every run's rows of each), without
    repeated documents, with its rankings ``found``; ``runs_given`` are the
    runs of the whole data in order of first appearance (an engine that
    splits the queries, such as ``ireval_df.spark``, passes those of all
    its parts) and ``baselines`` those chosen among them. ``report=False``
    leaves the queries ranked on one side only to the caller
    (:func:`~ireval_df.similarity.rankings.compared`).
    """
    # every similarity measure reads the tie groups, not the order within them
    # (cut and without_ties order the groups they need)
    # and none reads deeper than its reach: documents below it are not ranked
    reaches = [reach(metric) for metric in specs]
    deepest = None if None in reaches else max(reaches)  # type: ignore[type-var]
    ranked = rank_with_ties(
        run, rank_from=rank_from, found=found, tie_order=False, reach=deepest
    )
    pairs = pair_rankings(ranked, runs_given, baselines, missing=missing, report=report)
    # the sides stay lazy over the ranked rows (in memory): a kernel that reads
    # only the top of each ranking (RBO past its horizon, a cutoff) filters
    # the rows before the join that pairs them
    x, y = pairs.x, pairs.y
    parts = []
    for metric in specs:
        kernel: Kernel = metric.info.compute(metric)
        values = kernel(x, y, pairs.keys.select(KEY))
        if isinstance(values, pl.LazyFrame):
            values = values.collect()
        parts.append(
            pairs.keys.join(values, on=KEY, how="left").select(
                "run_id",
                "baseline",
                "query_id",
                pl.lit(str(metric)).alias("metric"),
                pl.col("value").cast(pl.Float64),
            )
        )
    return pl.concat(parts).sort(
        pl.col("run_id").cast(pl.Enum(runs_given)),
        pl.col("baseline").cast(pl.Enum(runs_given)),
        "query_id",
        maintain_order=True,
    )
