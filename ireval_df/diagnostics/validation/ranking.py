"""Rankings as evaluate() builds them, reconstructed once for the run checks.

:func:`rankings` ranks every query of a leniently read run by score
descending, then doc_id descending (:data:`~ireval_df.offline.conventions.TIE_RULE`),
and keeps what the checks of :mod:`.run` and :mod:`.pairs` need: per-query
facts (length, ties, a rank column at odds with the scores) and the top rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

__all__ = ["POS", "Rankings", "rankings"]

#: The column of a row's position in its ranking, from 1.
POS = "__ireval_pos"


@dataclass(frozen=True)
class Rankings:
    """What the checks need from a run's rankings, computed in one pass.

    Attributes
    ----------
    per_query : pl.DataFrame
        ``run_id``, ``query_id``, ``n`` (rows), ``tied`` (equal scores in the
        top k) and, with a rank column, ``backwards`` (it puts a document
        above one with a higher score; ties may come in any order).
    top : pl.DataFrame
        ``run_id``, ``query_id``, ``doc_id`` and the position (:data:`POS`)
        of the rows in the top ``deep``.
    """

    per_query: pl.DataFrame
    top: pl.DataFrame


def rankings(run: pl.DataFrame, k: int, deep: int) -> Rankings:
    """Rank every query as evaluate() does: score descending, then doc_id descending.

    A position is the inverse of the per-query sort permutation, computed in
    a window: no global sort of the run. Ties in the top k are equal scores
    among the top k + 1 rows (tied documents are adjacent in the ranking).

    Parameters
    ----------
    run : pl.DataFrame
        The run, read leniently (nulls where values were unusable).
    k : int
        The top looked at for ties.
    deep : int
        The top kept in :attr:`Rankings.top`.

    Returns
    -------
    Rankings
        The per-query facts and the top rows.
    """
    keys = ["run_id", "query_id"]
    order = pl.int_range(pl.len()).sort_by(
        ["score", "doc_id"], descending=[True, True], nulls_last=True
    )
    rows = run.filter(pl.col("query_id").is_not_null()).with_columns(
        (order.arg_sort() + 1).over(keys).cast(pl.Int64).alias(POS)
    )
    pos, score = pl.col(POS), pl.col("score")
    facts = [
        pl.len().alias("n"),
        score.filter((pos <= k + 1) & score.is_not_null())
        .is_duplicated()
        .any()
        .alias("tied"),
    ]
    if "rank" in rows.columns and rows["rank"].null_count() < rows.height:
        # backwards: a score rises along the rank column. Documents that tie
        # on score may come in any rank order (a system lists its ties as it
        # likes, trec_eval re-sorts them): that is not a different ranking.
        ranked = pl.col("rank").is_not_null()
        along = score.filter(ranked).sort_by(
            [pl.col("rank").filter(ranked), pos.filter(ranked)]
        )
        facts.append((along.diff() > 0).any().alias("backwards"))
    return Rankings(
        per_query=rows.group_by(keys).agg(facts),
        top=rows.filter(pos <= deep).select(*keys, "doc_id", POS),
    )
