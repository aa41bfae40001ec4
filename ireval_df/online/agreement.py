"""Per-query offline-online agreement: the judged quality of what users saw against what they did.

:func:`agreement_by_query` evaluates the result lists the log shows with
the qrels (each search's list as a ranking, by :func:`ireval_df.evaluate`),
averages the offline metric per query, joins each query's online metric
(:func:`ireval_df.online.metrics` with ``by`` the query) and reports, per
query class, the rank correlation of the two over queries: the classes
where the judged metric and the users disagree stand out. The system-level
counterpart is :func:`ireval_df.agreement`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import DataError, IrevalWarning, SchemaError, warn
from ireval_df.offline import evaluate
from ireval_df.online.flat import query_key
from ireval_df.online.log import SearchLog
from ireval_df.online.metrics import metrics as online_metrics
from ireval_df.schema import read_qrels

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["agreement_by_query"]


def agreement_by_query(
    log: SearchLog,
    qrels: Any,
    offline_metric: str = "nDCG@10",
    online_metric: str = "CTR",
    *,
    by: str | Sequence[str] | None = None,
    min_searches: int = 1,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Correlate, per query, the judged metric of the lists shown with the online metric.

    Parameters
    ----------
    log : SearchLog
        A log with ``results`` (``doc_id``) whose searches name a query
        (``query_id``, else ``query_norm``) the qrels judge.
    qrels : frame or path
        Judgments, read by :func:`ireval_df.read_qrels`.
    offline_metric : str, default "nDCG@10"
        An offline metric, evaluated on each search's shown list (ranked by
        position) and averaged over the query's first-page searches that
        showed results (searches without results, and those of a later
        page, whose list continues the first page's, are counted in a
        warning and left out).
    online_metric : str, default "CTR"
        An online metric of the registry (:func:`ireval_df.online.metrics`),
        computed per query over all arms together.
    by : str or list of str, optional
        Search columns that classify queries (``query_class``): the
        correlation is reported per class. A query must have one class.
    min_searches : int, default 1
        Queries with fewer logged searches are left out of the correlation
        (still listed).

    Returns
    -------
    (summary, per_query) : tuple of polars.DataFrame
        ``summary``: ``[by], n_queries, spearman, kendall_tau`` (over the
        class's queries; null below 3 queries). ``per_query``: ``[by],
        query_id, n_searches, offline, online`` and ``offline_rank``,
        ``online_rank`` (ranks within the class, 1 = best) and
        ``rank_gap = offline_rank - online_rank``: large gaps are the
        queries where offline and online disagree.
    """
    from ireval_df.stats.paired import require_scipy

    scipy_stats = require_scipy("agreement_by_query")
    kendalltau, spearmanr = scipy_stats.kendalltau, scipy_stats.spearmanr

    if not isinstance(log, SearchLog):
        msg = f"agreement_by_query takes a SearchLog, not {type(log).__name__}."
        raise SchemaError(msg)
    if log.results is None or "doc_id" not in log.results.columns:
        msg = "the log has no results with doc_id: nothing to judge."
        raise SchemaError(msg)
    by_cols = [by] if isinstance(by, str) else list(by or [])
    unknown = [c for c in by_cols if c not in log.searches.columns]
    if unknown:
        msg = (
            f"by={unknown} are not columns of the log's searches; they have "
            f"{sorted(log.searches.columns)}.\n  Hint: by= names a column that "
            "classifies queries, such as query_class."
        )
        raise SchemaError(msg)
    key = query_key(log)
    # a later page continues the first one's list: judging its positions
    # 11..20 as a ranking of their own would score them as a top 10
    later = log.searches.filter(pl.col("page") > 1)
    if later.height:
        warn(
            f"{later.height:,} searches are of a result page after the first "
            f"(e.g. search_id {later['search_id'].sort()[0]!r}, page "
            f"{later.sort('search_id')['page'][0]}): the offline {offline_metric} "
            "judges first pages only, so they are left out of it and of "
            "n_searches (the online metric counts them).",
            IrevalWarning,
        )
    searches = log.searches.filter(pl.col("page") == 1).select(
        "search_id", pl.col(key).cast(pl.String).alias("query_id"), *by_cols
    )
    judged = read_qrels(qrels)
    # each search's list is one ranking: query_id := search_id, qrels copied per search
    run = log.results.join(searches, on="search_id").select(
        run_id=pl.lit("shown"),
        query_id=pl.col("search_id"),
        doc_id="doc_id",
        score=-pl.col("position").cast(pl.Float64),
    )
    per_search_qrels = searches.join(
        judged.select(pl.col("query_id").cast(pl.String), "doc_id", "relevance"),
        on="query_id",
    ).select(query_id=pl.col("search_id"), doc_id="doc_id", relevance="relevance")
    unjudged = searches.join(
        judged.select(pl.col("query_id").cast(pl.String)).unique(),
        on="query_id",
        how="anti",
    )
    if unjudged.height:
        warn(
            f"{unjudged.height:,} searches are of queries the qrels do not judge "
            f"(e.g. {unjudged['query_id'][0]!r}) and are left out.",
            IrevalWarning,
        )
    if per_search_qrels.height == 0:
        msg = "no search of the log is of a query the qrels judge."
        raise DataError(msg)
    shown = run.join(
        per_search_qrels.select("query_id").unique(), on="query_id", how="semi"
    )
    # a search that showed nothing (n_results = 0) has no list to judge; the
    # online metrics leave it out of their "searches with results" too
    judged_searches = per_search_qrels.select("query_id").unique()
    empty = judged_searches.join(shown.select("query_id"), on="query_id", how="anti")
    if empty.height:
        warn(
            f"{empty.height:,} searches of judged queries showed no results "
            f"(e.g. search_id {empty['query_id'].sort()[0]!r}): there is no list "
            f"to judge, so they are left out of the offline {offline_metric} and "
            "of n_searches (ZeroResultRate counts them online).",
            IrevalWarning,
        )
        per_search_qrels = per_search_qrels.join(empty, on="query_id", how="anti")
    scores = evaluate(shown, per_search_qrels, offline_metric, missing="zero")
    offline = (
        scores.select(search_id="query_id", offline="value")
        .join(searches, on="search_id")
        .group_by("query_id", *by_cols)
        .agg(pl.col("offline").mean(), n_searches=pl.len().cast(pl.Int64))
    )
    dup = offline.group_by("query_id").len().filter(pl.col("len") > 1)
    if dup.height:
        msg = (
            f"{dup.height} queries have more than one value of by={by_cols}, e.g. "
            f"{dup['query_id'][0]!r}: by must classify queries."
        )
        raise DataError(msg)
    on = online_metrics(log, online_metric, by=[key])
    if not isinstance(on, pl.DataFrame):
        on = pl.from_pandas(on) if hasattr(on, "to_numpy") else pl.DataFrame(on)
    online = on.group_by(pl.col(key).cast(pl.String).alias("query_id")).agg(
        online=(pl.col("value") * pl.col("n_searches")).sum()
        / pl.col("n_searches").sum()
    )
    per_query = offline.join(online, on="query_id", how="left")
    ranks = [
        pl.col(c).rank("average", descending=True).alias(f"{c}_rank")
        for c in ("offline", "online")
    ]
    per_query = (
        per_query.with_columns([r.over(by_cols) for r in ranks] if by_cols else ranks)
        .with_columns(rank_gap=pl.col("offline_rank") - pl.col("online_rank"))
        .sort([*by_cols, "query_id"])
        .select(
            *by_cols,
            "query_id",
            "n_searches",
            "offline",
            "online",
            "offline_rank",
            "online_rank",
            "rank_gap",
        )
    )
    rows = []
    usable = per_query.filter(
        (pl.col("n_searches") >= min_searches) & pl.col("online").is_not_null()
    )
    parts = usable.group_by(by_cols, maintain_order=True) if by_cols else [((), usable)]
    for cls, part in parts:
        x, y = part["offline"].to_numpy(), part["online"].to_numpy()
        rho = tau = math.nan
        if part.height >= 3 and x.std() > 0 and y.std() > 0:
            rho = float(spearmanr(x, y).statistic)
            tau = float(kendalltau(x, y).statistic)
        rows.append(
            {
                **dict(zip(by_cols, cls, strict=True)),
                "n_queries": part.height,
                "spearman": None if math.isnan(rho) else rho,
                "kendall_tau": None if math.isnan(tau) else tau,
            }
        )
    summary = pl.DataFrame(
        rows,
        schema={
            **{c: per_query.schema[c] for c in by_cols},
            "n_queries": pl.Int64,
            "spearman": pl.Float64,
            "kendall_tau": pl.Float64,
        },
    )
    if by_cols:
        summary = summary.sort(by_cols)
    return summary, per_query
