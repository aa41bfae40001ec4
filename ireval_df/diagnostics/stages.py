"""The stages of one pipeline, given as runs: which stage lost each relevant document.

A pipeline (a first-stage retriever, then rerankers) is given as its
stages' runs, earliest first: ``stages=["bm25", "rerank"]``. An earlier
stage *keeps* a document when it ranks it within ``stage_depth`` (anywhere,
when None: the whole ranking is handed on); the last stage keeps it when it
ranks it within ``k``. A relevant document the last stage does not keep,
though an earlier stage kept it, was *dropped* by the pipeline
(:func:`ireval_df.failures`); :func:`trace` shows every relevant
document's rank at each stage and the stage that lost it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.diagnostics.intents import read_judgments
from ireval_df.errors import OptionError
from ireval_df.offline.engine import EngineOptions, label_qrels, ranked_rows
from ireval_df.schema.coerce import as_run
from ireval_df.stats.frames import output

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Pipeline", "pipeline", "positive", "trace"]

_KEPT = "__ireval_kept"
#: Columns of a trace beside the stages'
_TRACE = ("query_id", "doc_id", "relevance", "lost_at")


def positive(name: str, number: object) -> int:
    """Return ``number`` when it is a positive whole number, else raise.

    Examples
    --------
    >>> positive("k", 10)
    10
    """
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        msg = (
            f"{name} must be a positive whole number, found {number!r}.\n"
            f"  Hint: pass e.g. {name}=10."
        )
        raise OptionError(msg)
    return number


@dataclass(frozen=True)
class Pipeline:
    """The stages of one pipeline, earliest first, and the depth each hands on."""

    stages: tuple[str, ...]
    depth: int | None

    @property
    def last(self) -> str:
        """The stage whose ranking users see."""
        return self.stages[-1]

    def keeps(self, rank: pl.Expr) -> pl.Expr:
        """Whether an earlier stage that ranks a document at ``rank`` hands it on."""
        kept = rank.is_not_null()
        return kept if self.depth is None else kept & (rank <= self.depth)

    def kept_earlier(self, ranked: pl.DataFrame, rel: int) -> pl.DataFrame:
        """Find the relevant documents some earlier stage kept: ``query_id, doc_id``."""
        earlier = pl.col("run_id").is_in(list(self.stages[:-1]))
        return (
            ranked.lazy()
            .filter(earlier & (pl.col("label") >= rel) & self.keeps(pl.col("rank")))
            .select("query_id", "doc_id")
            .unique()
            .with_columns(pl.lit(value=True).alias(_KEPT))
            .collect()
        )


def pipeline(
    stages: Sequence[str] | None, stage_depth: int | None, run_ids: Sequence[str]
) -> Pipeline:
    """Check ``stages`` and ``stage_depth`` against the runs.

    Raises
    ------
    OptionError
        No stages or fewer than two, a stage named twice or not among the
        runs, ``stage_depth`` not a positive whole number.

    Examples
    --------
    >>> pipeline(["bm25", "rerank"], 100, ["bm25", "dense", "rerank"])
    Pipeline(stages=('bm25', 'rerank'), depth=100)
    """
    if stages is None:
        msg = (
            "stages= names the run ids of one pipeline, earliest first; found None."
            "\n  Hint: pass e.g. stages=['bm25', 'rerank']."
        )
        raise OptionError(msg)
    if stage_depth is not None:
        positive("stage_depth", stage_depth)
    names = [stages] if isinstance(stages, str) else list(stages)
    if len(names) < 2 or len(set(names)) < len(names):
        msg = (
            f"stages must name at least two different runs, earliest first, found "
            f"{names!r}.\n  Hint: pass e.g. stages=['bm25', 'rerank']."
        )
        raise OptionError(msg)
    unknown = [s for s in names if s not in run_ids]
    if unknown:
        msg = (
            f"stage(s) {unknown!r} are not runs of the input; the runs are "
            f"{sorted(run_ids)!r}.\n  Hint: name stages by run_id (a run file's "
            "name without its extension, or its TREC tag)."
        )
        raise OptionError(msg)
    return Pipeline(tuple(str(s) for s in names), stage_depth)


def trace(
    run: Any,
    qrels: Any,
    *,
    stages: Sequence[str] | None,
    query_id: str | Sequence[str] | None = None,
    k: int = 10,
    rel: int = 1,
    stage_depth: int | None = None,
    columns: Any = None,
) -> Any:
    """Follow every relevant document through the stages of a pipeline.

    Parameters
    ----------
    run : frame, path, dict or list of these
        The runs, in any form :func:`ireval_df.evaluate` accepts, holding
        at least the stages' runs.
    qrels : frame, path or dict
        Relevance judgments (an ``intent`` column is allowed and ignored).
    stages : list of str
        The run ids of the pipeline's stages, earliest first (at least two).
    query_id : str or list of str, optional
        Only these queries (default: every query of the qrels).
    k : int, default 10
        The cutoff of the last stage: ranks ``1..k`` are found.
    rel : int, default 1
        Lowest relevant grade.
    stage_depth : int, optional
        How deep each earlier stage's ranking is handed on (default: all of
        it).
    columns : mapping, optional
        Renames for the runs' columns, e.g. ``{"qid": "query_id"}``.

    Returns
    -------
    Frame (pandas when ``run`` is pandas)
        ``query_id, doc_id, relevance``, one column per stage, named after
        it, with the document's rank there (Int64, null when not retrieved),
        and ``lost_at``: null when the last stage ranks the document within
        ``k``; else the stage after the last earlier stage that kept it
        (ranked within ``stage_depth``), or the first stage when none did.
        In a pipeline whose every stage re-ranks the one before, that is
        the first stage that did not keep it. :func:`ireval_df.failures`
        counts a document as *dropped* exactly when ``lost_at`` is not the
        first stage. Sorted by query, then rank at each stage from the last
        (not retrieved last), then ``doc_id``.

    Raises
    ------
    IrevalError
        Bad ``stages``, ``k``, ``rel`` or ``stage_depth``, a stage name that
        is not a run, a stage named like one of the other columns, or a
        ``query_id`` the qrels do not hold; unusable runs or qrels.

    Examples
    --------
    >>> runs = pl.DataFrame({
    ...     "run_id": ["bm25"] * 3 + ["rerank"] * 2,
    ...     "query_id": "1",
    ...     "doc_id": ["a", "b", "c", "b", "c"],
    ...     "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    ... })
    >>> qrels = pl.DataFrame({"query_id": "1", "doc_id": ["a", "c", "z"],
    ...                       "relevance": [1, 2, 1]})
    >>> trace(runs, qrels, stages=["bm25", "rerank"], k=1).rows()
    [('1', 'c', 2, 3, 2, 'rerank'), ('1', 'a', 1, 1, None, 'rerank'), ('1', 'z', 1, None, None, 'bm25')]
    """
    positive("k", k)
    positive("rel", rel)
    run_lf = as_run(run, columns=columns, in_memory=True)
    run_ids = run_lf.select(pl.col("run_id").unique()).collect()["run_id"].to_list()
    found = pipeline(stages, stage_depth, run_ids)
    clash = [s for s in found.stages if s in _TRACE]
    if clash:
        msg = (
            f"stage(s) {clash!r} would name a column of the trace, which has "
            f"{list(_TRACE)!r} besides the stages.\n  Hint: rename the run first, "
            "e.g. run.with_columns(run_id=pl.lit('bm25'))."
        )
        raise OptionError(msg)
    labelled = label_qrels(read_judgments(qrels).qrels)
    relevant = labelled.filter(pl.col("label") >= rel).select(
        "query_id", "doc_id", "relevance"
    )
    if query_id is not None:
        wanted = [query_id] if isinstance(query_id, str) else list(query_id)
        known = relevant.select("query_id").unique().collect()["query_id"]
        absent = [q for q in wanted if q not in set(known.to_list())]
        if absent:
            msg = (
                f"query_id {absent!r} has no relevant document in the qrels; "
                f"queries that do are e.g. {sorted(known.to_list())[:5]!r}.\n"
                "  Hint: pass query ids as strings, as the qrels hold them."
            )
            raise OptionError(msg)
        relevant = relevant.filter(pl.col("query_id").is_in(wanted))
    in_stages = run_lf.filter(pl.col("run_id").is_in(list(found.stages)))
    ranked = ranked_rows(in_stages, labelled, EngineOptions(), every=False)
    ranks = (
        ranked.filter(pl.col("label") >= rel)
        .group_by("query_id", "doc_id")
        .agg(
            pl.col("rank").filter(pl.col("run_id") == s).first().alias(s)
            for s in found.stages
        )
    )
    traced = (
        relevant.join(ranks, on=["query_id", "doc_id"], how="left")
        .with_columns(_lost_at(found, k))
        .sort(
            ["query_id", *reversed(found.stages), "doc_id"],
            nulls_last=True,
        )
        .collect()
    )
    settings: dict[str, Any] = {"trace_k": k, "rel": rel, "stages": list(found.stages)}
    if stage_depth is not None:
        settings["stage_depth"] = stage_depth
    return output(traced, run, settings)


def _lost_at(found: Pipeline, k: int) -> pl.Expr:
    """Name the stage that lost each document (see :func:`trace`)."""
    *earlier, last = found.stages
    # the stage after the last earlier stage that kept it, else the first
    after = [
        pl.when(found.keeps(pl.col(earlier[i]))).then(pl.lit(found.stages[i + 1]))
        for i in reversed(range(len(earlier)))
    ]
    lost = pl.coalesce(*after, pl.lit(found.stages[0]))
    found_at_k = pl.col(last) <= k
    return (
        pl.when(found_at_k).then(pl.lit(None, dtype=pl.String)).otherwise(lost)
    ).alias("lost_at")
