"""``diff()``: the judged top k of each run beside its baseline's, document by document.

When an offline metric moves, the diff is the artifact that says why: which
documents entered or left the top k, which moved, how relevant each is, and
how much each one contributes to the change in nDCG@k and P@k.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df._utils.provenance import output
from ireval_df._utils.versions import POLARS_VERSION, version_of
from ireval_df.errors import OptionError
from ireval_df.offline.conventions import TIE_RULE
from ireval_df.offline.engine import EngineOptions
from ireval_df.offline.evaluation import unique_rankings
from ireval_df.schema.coerce import as_qrels, as_queries, as_run
from ireval_df.similarity.rankings import (
    KEY,
    choose_baselines,
    pair_rankings,
    rank_with_ties,
    run_ids,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["CHANGES", "diff"]

#: The values of the ``change`` column, in the order of the docs
CHANGES = ("entered", "left", "up", "down", "same")


def diff(
    runs: Any,
    qrels: Any = None,
    *,
    baseline: str | Sequence[str] | None = None,
    k: int = 10,
    queries: Any = None,
    columns: Mapping[str, str] | None = None,
) -> Any:
    r"""Set each run's top k beside its baseline's: one row per document in either.

    Parameters
    ----------
    runs : frame, path, dict or list of these
        At least two runs, in any form :func:`ireval_df.evaluate` takes
        (several stacked with ``run_id``, or a list of paths or frames).
    qrels : frame, path or dict, optional
        Judgments, in any form :func:`ireval_df.evaluate` takes. Without
        them ``relevance``, ``delta_ndcg`` and ``delta_p`` are null.
    baseline : str or list of str, optional
        The run every other run is compared with (default: the first run);
        several baselines compare each run with each (a pair once, the later
        baseline against the earlier).
    k : int, default 10
        The depth compared, and the cutoff of the nDCG and P deltas.
    queries : frame or path, optional
        Query attributes joined onto the result by ``query_id``.
    columns : mapping of str to str, optional
        Source column names to canonical ones, e.g. ``{"qid": "query_id"}``.

    Returns
    -------
    Frame of the same kind as ``runs``
        One row per (run, baseline, query, document) in the top k of the run
        or of the baseline: ``run_id, baseline, query_id, doc_id``;
        ``rank`` and ``baseline_rank`` (Int64), the document's rank in each
        full ranking, null when that run does not retrieve it;
        ``relevance`` (Int32), its grade, null when unjudged;
        ``change``: ``entered`` (in the run's top k only), ``left`` (in the
        baseline's only), ``up``, ``down`` or ``same`` (in both: the run's
        rank is smaller, larger, equal); ``delta_ndcg`` and ``delta_p``
        (Float64), the document's share of the change in nDCG@k and P@k.
        Then the ``queries`` attributes. Sorted by run and baseline (in
        input order), query, then the better of the two ranks.

    Raises
    ------
    OptionError
        ``k`` is not a positive whole number, an unknown baseline, fewer
        than two runs.
    DataError
        A document twice in one ranking, NaN scores.
    SchemaError, FormatError
        Unusable input.

    See Also
    --------
    evaluate : the metrics whose change the deltas split up.

    Notes
    -----
    Ranks are :func:`ireval_df.evaluate`'s: score descending, then
    ``doc_id`` descending (byte order). With gain :math:`g_d` the grade
    (0 when negative or unjudged) and :math:`\mathrm{IDCG@k}` from the
    qrels' grades sorted descending (trec_eval's ``ndcg_cut_k``),

    .. math::

        \Delta_{nDCG}(d) = \frac{[r_d \le k]\, g_d / \log_2(r_d + 1)
            - [b_d \le k]\, g_d / \log_2(b_d + 1)}{\mathrm{IDCG@k}},
        \qquad
        \Delta_P(d) = \frac{[g_d \ge 1]\,([r_d \le k] - [b_d \le k])}{k}

    for run rank :math:`r_d` and baseline rank :math:`b_d` (false when
    null). A query's rows therefore add up to its
    ``evaluate(run)["nDCG@k"] - evaluate(baseline)["nDCG@k"]`` (and P@k);
    a query one run does not rank is an empty ranking on that side
    (``missing="zero"``, with a warning), and the deltas are 0 when the
    qrels hold nothing relevant for it and null when they do not judge it
    at all (``evaluate`` leaves it out). Every comparison is joined at once;
    nothing loops over queries.

    Examples
    --------
    >>> runs = pl.DataFrame({"run_id": ["old"] * 3 + ["new"] * 3, "query_id": "q",
    ...                      "doc_id": ["a", "b", "c", "c", "a", "d"],
    ...                      "score": [3.0, 2.0, 1.0] * 2})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["c"], "relevance": [1]})
    >>> out = ie.diff(runs, qrels, baseline="old", k=2)
    >>> out.select("doc_id", "rank", "baseline_rank", "change", "delta_p").rows()
    [('c', 1, 3, 'entered', 0.5), ('a', 2, 1, 'down', 0.0), ('b', None, 2, 'left', 0.0)]
    >>> out["delta_ndcg"].sum()
    1.0
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        msg = f"k must be a positive whole number, found {k!r}."
        raise OptionError(msg)
    run = as_run(runs, columns=columns, rank=False, in_memory=True)
    _, found, _ = unique_rankings(run, EngineOptions(), "error")
    runs_given = run_ids(run, found, caller="diff")
    baselines = choose_baselines(baseline, runs_given)
    pairs = pair_rankings(rank_with_ties(run, found=found), runs_given, baselines)
    x = pairs.x.select(KEY, "doc_id", pl.col("pos").cast(pl.Int64).alias("rank"))
    y = pairs.y.select(
        KEY, "doc_id", pl.col("pos").cast(pl.Int64).alias("baseline_rank")
    )
    shown = (
        pl.concat(
            [x.filter(pl.col("rank") <= k), y.filter(pl.col("baseline_rank") <= k)]
        )
        .select(KEY, "doc_id")
        .unique()
    )
    rows = (
        shown.join(x, on=[KEY, "doc_id"], how="left")
        .join(y, on=[KEY, "doc_id"], how="left")
        .join(pairs.keys.lazy(), on=KEY)
        .with_columns(change=_change(k))
    )
    rows = _with_deltas(rows, None if qrels is None else as_qrels(qrels), k)
    order = pl.Enum(runs_given)
    result = (
        rows.sort(
            pl.col("run_id").cast(order),
            pl.col("baseline").cast(order),
            "query_id",
            pl.min_horizontal("rank", "baseline_rank"),
            pl.col("rank"),
            pl.col("baseline_rank"),
            "doc_id",
            nulls_last=True,
        )
        .select(
            "run_id",
            "baseline",
            "query_id",
            "doc_id",
            "rank",
            "baseline_rank",
            "relevance",
            "change",
            "delta_ndcg",
            "delta_p",
        )
        .collect()
    )
    if queries is not None:
        attributes = as_queries(queries).collect()
        result = result.join(
            attributes, on="query_id", how="left", maintain_order="left"
        )
    settings = {
        "family": "similarity",
        "diff_k": k,
        "baselines": baselines,
        "missing": "zero",
        "ties": TIE_RULE,
        "gains": "linear (the grade; 0 when negative or unjudged)",
        "ireval_df": version_of("ireval-df"),
        "polars": POLARS_VERSION,
    }
    return output(result, runs, settings)


def _change(k: int) -> pl.Expr:
    in_run = pl.col("rank").is_not_null() & (pl.col("rank") <= k)
    in_base = pl.col("baseline_rank").is_not_null() & (pl.col("baseline_rank") <= k)
    return (
        pl.when(in_run & ~in_base)
        .then(pl.lit("entered"))
        .when(~in_run)
        .then(pl.lit("left"))
        .when(pl.col("rank") < pl.col("baseline_rank"))
        .then(pl.lit("up"))
        .when(pl.col("rank") > pl.col("baseline_rank"))
        .then(pl.lit("down"))
        .otherwise(pl.lit("same"))
    )


def _with_deltas(
    rows: pl.LazyFrame, qrels: pl.LazyFrame | None, k: int
) -> pl.LazyFrame:
    """Add ``relevance``, ``delta_ndcg`` and ``delta_p`` (null without qrels)."""
    if qrels is None:
        return rows.with_columns(
            pl.lit(None, pl.Int32).alias("relevance"),
            pl.lit(None, pl.Float64).alias("delta_ndcg"),
            pl.lit(None, pl.Float64).alias("delta_p"),
        )
    # IDCG@k per judged query: the positive grades, best first, at ranks 1..k
    ideal_rank = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(
        "query_id", order_by="relevance", descending=True
    )
    ideal = (
        qrels.select("query_id", "relevance")
        .with_columns(ideal_rank.alias("__ireval_ideal_rank"))
        .group_by("query_id")
        .agg(
            (
                pl.col("relevance").clip(lower_bound=0).cast(pl.Float64)
                / (pl.col("__ireval_ideal_rank").cast(pl.Float64) + 1.0).log(2)
            )
            .filter(pl.col("__ireval_ideal_rank") <= k)
            .sum()
            .alias("__ireval_idcg")
        )
    )
    gain = pl.col("relevance").fill_null(0).clip(lower_bound=0).cast(pl.Float64)

    def discounted(rank: str) -> pl.Expr:
        inside = pl.col(rank).is_not_null() & (pl.col(rank) <= k)
        discount = (pl.col(rank).cast(pl.Float64) + 1.0).log(2)
        return pl.when(inside).then(gain / discount).otherwise(0.0)

    def counted(rank: str) -> pl.Expr:
        return (pl.col(rank).is_not_null() & (pl.col(rank) <= k)).cast(pl.Float64)

    judged = pl.col("__ireval_idcg").is_not_null()
    delta_ndcg = (
        pl.when(pl.col("__ireval_idcg") > 0)
        .then(
            (discounted("rank") - discounted("baseline_rank")) / pl.col("__ireval_idcg")
        )
        .when(judged)
        .then(0.0)
    )
    relevant = pl.col("relevance").fill_null(0) >= 1
    delta_p = (
        pl.when(judged & relevant)
        .then((counted("rank") - counted("baseline_rank")) / k)
        .when(judged)
        .then(0.0)
    )
    return (
        rows.join(qrels, on=["query_id", "doc_id"], how="left")
        .join(ideal, on="query_id", how="left")
        .with_columns(delta_ndcg.alias("delta_ndcg"), delta_p.alias("delta_p"))
        .drop("__ireval_idcg")
    )
