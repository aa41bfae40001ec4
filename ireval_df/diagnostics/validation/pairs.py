"""The checks of a run against the qrels: shared queries, id spellings, unjudged.

:func:`pairs_findings` takes both leniently read inputs and the run's
reconstructed rankings (:mod:`.ranking`) and returns the findings; their
text is in :mod:`.catalog`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.diagnostics.validation.catalog import emit
from ireval_df.diagnostics.validation.expressions import EXAMPLES, quoted, sample
from ireval_df.diagnostics.validation.ranking import POS

if TYPE_CHECKING:
    from ireval_df.diagnostics.validation.ranking import Rankings
    from ireval_df.schema.lenient import Lenient

__all__ = ["pairs_findings"]

#: Digits after zero padding, for comparing ids: '001' -> '1', 'q007' -> 'q7'.
_PADDING = r"(^|[^0-9])0+([0-9])"


def pairs_findings(
    r: Lenient, q: Lenient, ranked: Rankings, k: int, deep: int
) -> list[pl.DataFrame]:
    """Find where a run and the qrels do not fit together.

    Parameters
    ----------
    r, q : Lenient
        The run and the qrels, read leniently (both with rows).
    ranked : Rankings
        The run's rankings.
    k : int
        The top looked at for unjudged documents.
    deep : int
        The top looked at for document ids spelled unlike the qrels'.

    Returns
    -------
    list of pl.DataFrame
        Findings, one frame per check.
    """
    qrels = q.frame
    judged_q = qrels.select("query_id").drop_nulls().unique()
    answered = ranked.per_query.select("run_id", "query_id")
    runs = answered.select("run_id").unique()
    only_run = answered.join(judged_q, on="query_id", how="anti")
    only_qrels = runs.join(judged_q, how="cross").join(
        answered, on=["run_id", "query_id"], how="anti", nulls_equal=True
    )
    per_run = (
        answered.group_by("run_id")
        .agg(queries=pl.len())
        .join(
            only_run.group_by("run_id").agg(
                only_run=pl.len(), only_run_example=sample(pl.col("query_id"))
            ),
            on="run_id",
            how="left",
            nulls_equal=True,
        )
        .join(
            only_qrels.group_by("run_id").agg(
                only_qrels=pl.len(), only_qrels_example=sample(pl.col("query_id"))
            ),
            on="run_id",
            how="left",
            nulls_equal=True,
        )
        .with_columns(pl.col("only_run", "only_qrels").fill_null(0))
        .with_columns(shared=pl.col("queries") - pl.col("only_run"))
        .sort("run_id", nulls_last=False)
    )
    n_judged = judged_q.height
    qrels_sample = judged_q.select(sample(pl.col("query_id"))).item()
    disjoint = per_run.filter(pl.col("shared") == 0)
    overlapping = per_run.filter(pl.col("shared") > 0)
    return [
        emit(
            disjoint,
            "no_shared_queries",
            "run+qrels",
            count=pl.col("queries"),
            example=pl.format(
                "run: {}; qrels: {}", pl.col("only_run_example"), pl.lit(qrels_sample)
            ),
            queries=pl.col("queries"),
            judged=n_judged,
        ),
        emit(
            overlapping.filter(pl.col("only_qrels") > 0),
            "queries_only_in_qrels",
            "run+qrels",
            count=pl.col("only_qrels"),
            value=pl.col("only_qrels") / pl.lit(n_judged),
            example=pl.col("only_qrels_example"),
            n=pl.col("only_qrels"),
            judged=n_judged,
        ),
        emit(
            overlapping.filter(pl.col("only_run") > 0),
            "queries_only_in_run",
            "run+qrels",
            count=pl.col("only_run"),
            value=pl.col("only_run") / pl.col("queries"),
            example=pl.col("only_run_example"),
            n=pl.col("only_run"),
            queries=pl.col("queries"),
        ),
        _query_id_format(only_run, only_qrels),
        _doc_id_format(ranked.top, qrels, judged_q, deep),
        *_id_dtypes(r, q),
        _unjudged(ranked.top, qrels, judged_q, k),
    ]


def _coarse(expr: pl.Expr) -> pl.Expr:
    """Drop surrounding blanks, case and every zero: equal for equal _normalised."""
    return (
        expr.str.strip_chars().str.to_lowercase().str.replace_all("0", "", literal=True)
    )


def _normalised(expr: pl.Expr) -> pl.Expr:
    """Drop surrounding blanks, case and zero padding: ' Q007' -> 'q7'."""
    return (
        expr.str.strip_chars().str.to_lowercase().str.replace_all(_PADDING, "${1}${2}")
    )


def _id_format_finding(pairs: pl.DataFrame, what: str) -> pl.DataFrame:
    """``pairs``: run_id, the run's id (``ours``) and the qrels' (``theirs``)."""
    per_run = (
        pairs.unique()
        .sort("run_id", "ours", "theirs")
        .group_by("run_id", maintain_order=True)
        .agg(
            n=pl.col("ours").n_unique(),
            example=pl.format(
                "{} ~ {}", quoted(pl.col("ours")), quoted(pl.col("theirs"))
            )
            .head(EXAMPLES)
            .str.join(", "),
        )
    )
    return emit(
        per_run,
        "id_format",
        what,
        count=pl.col("n"),
        example=pl.col("example"),
        n=pl.col("n"),
        first=pl.col("example").str.split(", ").list.first(),
    )


def _query_id_format(only_run: pl.DataFrame, only_qrels: pl.DataFrame) -> pl.DataFrame:
    key = "__ireval_norm"
    pairs = (
        only_run.with_columns(_normalised(pl.col("query_id")).alias(key))
        .join(
            only_qrels.with_columns(_normalised(pl.col("query_id")).alias(key)),
            on=["run_id", key],
            nulls_equal=True,
        )
        .select("run_id", ours="query_id", theirs="query_id_right")
    )
    return _id_format_finding(pairs, "query")


def _doc_id_format(
    top: pl.DataFrame, qrels: pl.DataFrame, judged_q: pl.DataFrame, deep: int
) -> pl.DataFrame:
    """Find top-``deep`` documents unjudged only for the spelling of their id."""
    key, coarse = "__ireval_norm", "__ireval_coarse"
    judged = qrels.select("query_id", "doc_id").drop_nulls()
    unjudged = (
        top.drop_nulls("doc_id")
        .filter(pl.col(POS) <= deep)
        .join(judged_q, on="query_id", how="semi")
        .join(judged, on=["query_id", "doc_id"], how="anti")
        .select("run_id", "query_id", "doc_id")
        .with_columns(_coarse(pl.col("doc_id")).alias(coarse))
    )
    # equal normalised ids are equal without any zero: a cheap literal
    # prefilter, so that the regex runs on the few plausible qrels ids only
    candidates = (
        judged.join(unjudged.select("query_id").unique(), on="query_id", how="semi")
        .with_columns(_coarse(pl.col("doc_id")).alias(coarse))
        .join(unjudged.select("query_id", coarse), on=["query_id", coarse], how="semi")
        .unique()
    )
    pairs = (
        unjudged.with_columns(_normalised(pl.col("doc_id")).alias(key))
        .join(
            candidates.with_columns(_normalised(pl.col("doc_id")).alias(key)),
            on=["query_id", key],
        )
        .select(
            "run_id",
            ours=pl.format("{}/{}", pl.col("query_id"), pl.col("doc_id")),
            theirs=pl.format("{}/{}", pl.col("query_id"), pl.col("doc_id_right")),
        )
    )
    return _id_format_finding(pairs, "doc")


def _kind_of(dtype: pl.DataType | None) -> str:
    if dtype is None:
        return "missing"
    if dtype.is_integer():
        return "integer"
    if dtype.is_float() or dtype.is_decimal():
        return "float"
    if dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum):
        return "string"
    return str(dtype)


def _id_dtypes(r: Lenient, q: Lenient) -> list[pl.DataFrame]:
    found = []
    for column in ("query_id", "doc_id"):
        ours, theirs = r.dtypes.get(column), q.dtypes.get(column)
        if _kind_of(ours) == _kind_of(theirs):
            continue
        found.append(
            emit(
                pl.DataFrame({"n": [None]}, schema={"n": pl.Int64}),
                "id_dtypes",
                "run+qrels",
                count=pl.col("n"),
                example=pl.lit(f"{column}: {ours} (run), {theirs} (qrels)"),
                per_run=False,
                column=column,
                ours=str(ours),
                theirs=str(theirs),
            )
        )
    return found


def _unjudged(
    top: pl.DataFrame, qrels: pl.DataFrame, judged_q: pl.DataFrame, k: int
) -> pl.DataFrame:
    """Average, per run, the share of the top k without a grade >= 0."""
    grades = qrels.select("query_id", "doc_id", grade="relevance").drop_nulls(
        ["query_id", "doc_id"]
    )
    top = (
        top.filter(pl.col(POS) <= k)
        .join(judged_q, on="query_id", how="semi")
        .join(grades, on=["query_id", "doc_id"], how="left")
        # a document judged twice (an error reported apart) counts once
        .group_by("run_id", "query_id", "doc_id", POS)
        .agg(pl.col("grade").max())
    )
    unjudged = pl.col("grade").is_null() | (pl.col("grade") < 0)
    per_query = top.group_by("run_id", "query_id").agg(
        n=pl.len(), unjudged=unjudged.sum()
    )
    share = pl.col("unjudged") / pl.col("n")
    worst = pl.format(
        "{} ({} of {})", quoted(pl.col("query_id")), pl.col("unjudged"), pl.col("n")
    )
    per_run = (
        per_query.with_columns(share.alias("share"))
        .sort("run_id", "share", "query_id", descending=[False, True, False])
        .group_by("run_id", maintain_order=True)
        .agg(
            unjudged=pl.col("unjudged").sum(),
            share=pl.col("share").mean(),
            queries=pl.len(),
            example=worst.filter(pl.col("unjudged") > 0).head(EXAMPLES).str.join(", "),
        )
        .filter(pl.col("unjudged") > 0)
    )
    # severity: info when the share is at most evaluate()'s warning threshold
    return emit(
        per_run,
        "unjudged_at_k",
        "run+qrels",
        count=pl.col("unjudged"),
        value=pl.col("share"),
        example=pl.col("example"),
        n=pl.col("unjudged"),
        share=pl.col("share"),
        queries=pl.col("queries"),
        k=k,
    )
