"""The checks of a run alone: nulls, NaN and infinite scores, repeats, rankings.

:func:`run_findings` takes the leniently read run and its reconstructed
rankings (:mod:`.ranking`) and returns the findings; their text is in
:mod:`.catalog`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.diagnostics.validation.catalog import emit
from ireval_df.diagnostics.validation.expressions import (
    EXAMPLES,
    first,
    no_repeats,
    plural,
    quoted,
    sample,
)

if TYPE_CHECKING:
    from ireval_df.diagnostics.validation.ranking import Rankings

__all__ = ["run_findings"]


def run_findings(
    run: pl.DataFrame, ranked: Rankings | None, k: int, depth: int, origin: str
) -> list[pl.DataFrame]:
    """Find what is wrong with a run on its own.

    Parameters
    ----------
    run : pl.DataFrame
        The run, read leniently.
    ranked : Rankings or None
        Its rankings; None when the run has no rows.
    k : int
        The top looked at for ties.
    depth : int
        The ranking length expected.
    origin : str
        Where ``depth`` comes from, for the message (``"k=10"`` ...).

    Returns
    -------
    list of pl.DataFrame
        Findings, one frame per check.
    """
    if run.height == 0:
        return [
            emit(
                pl.DataFrame({"n": [0]}),
                "empty_input",
                "run",
                count=pl.col("n"),
                per_run=False,
            )
        ]
    qid, doc, score = pl.col("query_id"), pl.col("doc_id"), pl.col("score")
    null_id = pl.any_horizontal(pl.col("run_id", "query_id", "doc_id").is_null())
    nan = score.is_nan()
    infinite = score.is_infinite()
    rows = run.group_by("run_id").agg(
        null_ids=null_id.sum(),
        null_ids_example=pl.format(
            "run_id: {}, query_id: {}, doc_id: {}",
            pl.col("run_id").null_count(),
            qid.null_count(),
            doc.null_count(),
        ).first(),
        null_scores=score.null_count(),
        null_scores_example=first(score.is_null()),
        nan=nan.sum(),
        nan_example=first(nan, "score"),
        infinite=infinite.sum(),
        inf=(infinite & (score > 0)).sum(),
        neg_inf=(infinite & (score < 0)).sum(),
        infinite_example=first(infinite, "score"),
    )
    found = [
        emit(
            rows.filter(pl.col("null_ids") > 0),
            "null_ids",
            "run",
            count=pl.col("null_ids"),
            example=pl.col("null_ids_example"),
            n=pl.col("null_ids"),
        ),
        emit(
            rows.filter(pl.col("null_scores") > 0),
            "null_scores",
            "run",
            count=pl.col("null_scores"),
            example=pl.col("null_scores_example"),
            n=pl.col("null_scores"),
        ),
        emit(
            rows.filter(pl.col("nan") > 0),
            "nan_scores",
            "run",
            count=pl.col("nan"),
            example=pl.col("nan_example"),
            n=pl.col("nan"),
        ),
        emit(
            rows.filter(pl.col("infinite") > 0),
            "infinite_scores",
            "run",
            count=pl.col("infinite"),
            example=pl.col("infinite_example"),
            n=pl.col("infinite"),
            inf=pl.col("inf"),
            neg_inf=pl.col("neg_inf"),
        ),
        _duplicates(run),
    ]
    if ranked is not None:
        found += _ranking_findings(ranked, k, depth, origin)
    if "rank" in run.columns:
        found.append(_null_ranks(run))
    return found


def _duplicates(run: pl.DataFrame) -> pl.DataFrame:
    qid, doc = pl.col("query_id"), pl.col("doc_id")
    if no_repeats(run, ["run_id", "query_id", "doc_id"]):
        run = run.clear()
    repeated = (
        run.group_by("run_id", "query_id", "doc_id")
        .agg(n=pl.len())
        .filter(pl.col("n") > 1)
        .sort("run_id", "query_id", "doc_id")
        .group_by("run_id", maintain_order=True)
        .agg(
            extra=(pl.col("n") - 1).sum(),
            docs=pl.len(),
            example=pl.format(
                "query {} doc {} x{}", quoted(qid), quoted(doc), pl.col("n")
            )
            .head(EXAMPLES)
            .str.join(", "),
        )
    )
    return emit(
        repeated,
        "duplicate_docs",
        "run",
        count=pl.col("extra"),
        example=pl.col("example"),
        extra=pl.col("extra"),
        docs=pl.col("docs"),
    )


def _ranking_findings(
    ranked: Rankings, k: int, depth: int, origin: str
) -> list[pl.DataFrame]:
    """Ties in the top k, short rankings, a rank column unlike the scores."""
    per_query = ranked.per_query
    short = pl.col("n") < depth
    shortest = pl.format(
        "{} ({})", quoted(pl.col("query_id")), plural(pl.col("n"), "doc", "docs")
    )
    per_run = (
        per_query.sort("run_id", "n", "query_id")
        .group_by("run_id", maintain_order=True)
        .agg(
            queries=pl.len(),
            tied=pl.col("tied").sum(),
            tied_example=sample(pl.col("query_id").filter(pl.col("tied"))),
            short=short.sum(),
            short_example=shortest.filter(short).head(EXAMPLES).str.join(", "),
            shortest=pl.col("n").min(),
        )
    )
    found = [
        emit(
            per_run.filter(pl.col("tied") > 0),
            "tied_scores",
            "run",
            count=pl.col("tied"),
            value=pl.col("tied") / pl.col("queries"),
            example=pl.col("tied_example"),
            n=pl.col("tied"),
            queries=pl.col("queries"),
            share=pl.col("tied") / pl.col("queries"),
            k=k,
        ),
        emit(
            per_run.filter(pl.col("short") > 0),
            "short_rankings",
            "run",
            count=pl.col("short"),
            value=pl.col("short") / pl.col("queries"),
            example=pl.col("short_example"),
            n=pl.col("short"),
            queries=pl.col("queries"),
            share=pl.col("short") / pl.col("queries"),
            depth=depth,
            origin=origin,
            shortest=pl.col("shortest"),
        ),
    ]
    if "backwards" in per_query.columns:
        found.append(_rank_disagreement(per_query))
    return found


def _null_ranks(run: pl.DataFrame) -> pl.DataFrame:
    """Count rows whose rank column holds no count (``x``, ``-1``, ``1.5``)."""
    missing = pl.col("rank").is_null()
    per_run = (
        run.group_by("run_id")
        .agg(n=missing.sum(), rows=pl.len(), example=first(missing))
        .filter(pl.col("n") > 0)
    )
    return emit(
        per_run,
        "null_ranks",
        "run",
        count=pl.col("n"),
        value=pl.col("n") / pl.col("rows"),
        example=pl.col("example"),
        n=pl.col("n"),
    )


def _rank_disagreement(per_query: pl.DataFrame) -> pl.DataFrame:
    """Count queries whose rank column orders documents unlike the scores."""
    per_run = per_query.group_by("run_id").agg(
        queries=pl.len(),
        bad=pl.col("backwards").sum(),
        example=sample(pl.col("query_id").filter(pl.col("backwards"))),
    )
    return emit(
        per_run.filter(pl.col("bad") > 0),
        "rank_column_ignored",
        "run",
        count=pl.col("bad"),
        value=pl.col("bad") / pl.col("queries"),
        example=pl.col("example"),
        n=pl.col("bad"),
        queries=pl.col("queries"),
    )
