"""``failures()``: why relevant documents do not reach the top k, kind by kind."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df.diagnostics.intents import (
    intent_failures,
    primary_intents,
    read_intent_weights,
    read_judgments,
)
from ireval_df.diagnostics.inversions import inverted_pairs
from ireval_df.diagnostics.stages import pipeline, positive
from ireval_df.errors import OptionError, SchemaError, warn
from ireval_df.offline.engine import (
    EngineOptions,
    find_rankings,
    label_qrels,
    may_repeat,
    ranked_rows,
)
from ireval_df.offline.evaluation import deduplicate
from ireval_df.schema.coerce import as_docs, as_queries, as_run
from ireval_df.stats.frames import check_choice, output, slice_columns

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ireval_df.diagnostics.intents import Judgments
    from ireval_df.diagnostics.stages import Pipeline
    from ireval_df.offline.engine import Rankings

__all__ = ["DOCUMENT_KINDS", "FAILURES", "failure_rows", "failures", "report_dropped"]

#: Kinds that lose a relevant document, in their priority on ties
DOCUMENT_KINDS = ("candidate", "dropped", "scoring")
#: Values of ``failure``, the dominant kind of a query (see :func:`failures`)
FAILURES = (
    "none",
    "no_relevant",
    "intent",
    "candidate",
    "dropped",
    "scoring",
    "calibration",
    "freshness",
    "inverted",
)
_DOCS = ["n_relevant", "n_top_k", "n_candidate", "n_scoring", "n_dropped"]
_PAIRS = ["n_inverted_pairs", "n_calibration_pairs", "n_freshness_pairs"]
_COUNTS = [*_DOCS, *_PAIRS]
_KEYS = ["run_id", "query_id"]
_KEPT = "__ireval_kept"
_FOUND = "__ireval_doc"
#: The document attribute each pair subset needs
ATTRIBUTES = {"calibration": "source_type", "freshness": "published_at"}

Duplicates = Literal["error", "first", "max"]


def failures(
    run: Any,
    qrels: Any,
    *,
    k: int = 10,
    rel: int = 1,
    queries: Any = None,
    by: str | Sequence[str] | None = None,
    columns: Mapping[str, str] | None = None,
    docs: Any = None,
    stages: Sequence[str] | None = None,
    stage_depth: int | None = None,
    intents: Any = None,
    duplicates: Duplicates = "error",
) -> Any:
    """Name every way relevant documents miss the top ``k``, per query or per slice.

    Kinds, for a run's ranking of one query (grades >= ``rel`` are
    relevant; ranks follow the library's tie rule):

    - **candidate**: a relevant document the run never retrieved;
    - **scoring**: a relevant document retrieved, but ranked below ``k``;
    - **dropped** (with ``stages``): a relevant document an earlier stage of
      the pipeline kept (ranked within ``stage_depth``, or at all when it
      is None) that the last stage ranks below ``k`` or not at all. It is
      counted on the last stage's rows *instead of* as candidate or scoring,
      so ``n_top_k + n_candidate + n_scoring + n_dropped == n_relevant``
      always;
    - **inverted pair**: two judged documents (any grade >= 0) both in the
      top ``k``, the one of lower grade ranked above the one of higher grade.
      With ``docs``: a **calibration** pair when the two documents'
      ``source_type`` differ (scores of two sources are not on one scale),
      a **freshness** pair when the lower-ranked, more relevant document is
      the newer (``published_at``); a pair with a document whose attribute
      is unknown is neither;
    - **intent failure** (qrels with an ``intent`` column): the top ``k``
      holds a document relevant to some intent of the query, but none
      relevant to its primary intent.

    A query can count toward several kinds; ``failure`` names the dominant
    one (see Notes).

    Parameters
    ----------
    run : frame, path, dict or list of these
        One or more runs, in any form :func:`ireval_df.evaluate` accepts.
    qrels : frame, path or dict
        Relevance judgments. A table may have an ``intent`` (or
        ``subtopic``) column: each row then judges a document for one intent
        (a document may have a row per intent; its grade elsewhere is its
        highest).
    k : int, default 10
        The cutoff: ranks ``1..k`` are "found".
    rel : int, default 1
        Lowest relevant grade.
    queries : frame or path, optional
        Query attributes joined onto the result (needed for ``by``).
    by : str or list of str, optional
        Summarise per run and slice instead of per query; ``[]`` gives one
        row per run. A column of ``queries`` slices queries; a column of
        ``docs`` slices documents: each relevant document counts in the
        slice of its own attribute, each inverted pair in that of its
        lower-ranked document, and a query is a unit of every such slice
        it has a document in (a document ``docs`` does not hold has a null
        slice).
    columns : mapping, optional
        Renames for the run's columns, e.g. ``{"qid": "query_id"}``.
    docs : frame or path, optional
        Document attributes (:func:`ireval_df.read_docs`: ``doc_id``, or
        ``query_id, doc_id``, then ``source_type``, ``published_at``, ...):
        needed for the calibration and freshness counts (each is null
        without its column) and for document slices.
    stages : list of str, optional
        The run ids of one pipeline's stages, earliest first, e.g.
        ``["bm25", "rerank"]``: turns on the ``dropped`` kind. The input
        may hold other runs too.
    stage_depth : int, optional
        How deep each earlier stage's ranking is handed on (default: all of
        it). A document an earlier stage ranks deeper was not handed on, so
        the last stage's miss of it is a candidate or scoring failure.
    intents : frame or path, optional
        ``query_id, intent, weight``: the primary intent of a query listed
        there is its intent of highest weight instead of the one with most
        relevant documents. Needs qrels with an intent column.
    duplicates : {"error", "first", "max"}, default "error"
        A document twice in one ranking, as :func:`ireval_df.evaluate`.

    Returns
    -------
    Frame (pandas when ``run`` is pandas)
        Per query (``by`` None): ``run_id, query_id, n_relevant, n_top_k,
        n_candidate, n_scoring, n_dropped, n_inverted_pairs,
        n_calibration_pairs, n_freshness_pairs`` (Int64; the last two null
        without ``docs`` or its attribute), ``intent_failure`` (Boolean; null when
        the qrels have no intent column, or the query no relevant document
        for any intent) and ``failure`` (String, one of ``FAILURES``), then
        the query attributes. Every query of the qrels counts for every
        run; one a run did not answer has all its relevant documents as
        candidate failures (or dropped, on a last stage).

        Per slice (``by`` given): ``run_id, [by...], n_queries`` (the
        queries, or for document slices the queries with a document in the
        slice), the sums
        of the counts above, then the rates: ``candidate_rate,
        scoring_rate, dropped_rate`` (the share of relevant documents lost
        to each kind), ``inverted_rate, calibration_rate, freshness_rate``
        (the share of queries with at least one such pair),
        ``intent_failure_rate`` (the share of queries with an intent failure,
        among those where it is not null), and ``queries_<failure>``, the
        number of queries of each dominant kind.

    Raises
    ------
    OptionError
        ``k``, ``rel`` or ``stage_depth`` not a positive whole number; bad
        ``stages`` (fewer than two, repeated, not runs of the input);
        ``stage_depth`` without ``stages``; ``by`` without ``queries`` or
        ``docs``; ``intents`` with qrels that have no intent column.
    SchemaError
        A ``by`` column in neither ``queries`` nor ``docs``, or in both;
        ``docs`` with neither ``source_type``, ``published_at`` nor a
        ``by`` column; unusable run, qrels, queries, docs or intents (as
        :func:`ireval_df.evaluate`).
    DataError
        A document twice in one ranking (``duplicates="error"``), or judged
        twice for one intent of a query.

    Warns
    -----
    IrevalWarning
        Documents looked up (the judged top ``k``, and the relevant
        documents for document slices) that ``docs`` does not hold or holds
        without an attribute, counted in one warning; qrels rows without an
        intent; queries ``intents`` does not list; repeated documents
        dropped by ``duplicates``.

    Notes
    -----
    The dominant kind of a query, ``failure``, is the first that applies:

    1. ``no_relevant``: the qrels hold no relevant document for it;
    2. ``intent``: an intent failure (the most specific diagnosis: the
       documents it misses are counted by the document kinds too);
    3. ``candidate``, ``dropped`` or ``scoring``: the kind that lost the
       most relevant documents, when any was lost; ties go in that order,
       the earliest point of the pipeline first;
    4. ``calibration`` or ``freshness``: no relevant document lost, but
       inverted pairs, the more of these two subsets (ties: calibration)
       when either holds a pair; else ``inverted``;
    5. ``none``.

    With more relevant documents than ``k``, even a perfect ranking leaves
    ``n_relevant - k`` of them below ``k`` as scoring failures.

    A query's primary intent is, among its intents with a relevant document,
    the one with most relevant documents (with ``intents``: of highest
    weight). Ties: every tied intent is primary, and the top ``k`` needs a
    relevant document for any one of them.

    Examples
    --------
    >>> import polars as pl
    >>> run = pl.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "c"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["c", "d", "a"],
    ...                       "relevance": [1, 2, 0]})
    >>> failures(run, qrels, k=2).select(
    ...     "n_relevant", "n_top_k", "n_candidate", "n_scoring", "failure").rows()
    [(2, 0, 1, 1, 'candidate')]
    """
    positive("k", k)
    positive("rel", rel)
    check_choice("duplicates", duplicates, ("error", "first", "max"))
    if stages is None and stage_depth is not None:
        msg = (
            f"stage_depth={stage_depth!r} needs stages= (the run ids of one "
            "pipeline, earliest first).\n  Hint: pass stages=['bm25', 'rerank'] "
            "or leave stage_depth out."
        )
        raise OptionError(msg)
    slices = slice_columns(by)
    if slices and queries is None and docs is None:
        msg = (
            f"failures(by={slices!r}) needs queries= or docs= (the table holding "
            "the slice columns).\n  Hint: pass queries='data/queries.tsv' or a "
            "frame with query_id and the attributes, or docs= with doc_id and "
            "document attributes such as source_type."
        )
        raise OptionError(msg)
    attributes = None if queries is None else as_queries(queries).collect()
    documents_lf = None if docs is None else as_docs(docs)
    query_by, doc_by = _slices(slices, attributes, documents_lf)
    known = _known(documents_lf, doc_by)
    judged = read_judgments(qrels)
    if intents is not None and judged.intents is None:
        msg = (
            "intents= weighs the intents of the qrels, but the qrels have no "
            "'intent' column.\n  Hint: pass qrels with an intent (or subtopic) "
            "column, one row per document and intent, or leave intents out."
        )
        raise OptionError(msg)
    weights = None if intents is None else read_intent_weights(intents)

    run_lf = as_run(run, columns=columns, in_memory=True)
    options = EngineOptions()
    rankings = find_rankings(run_lf, options, repeats=True)
    run_lf, rankings = _deduplicated(run_lf, rankings, duplicates)
    run_ids = sorted(str(r) for r in rankings.sizes["run_id"].unique().to_list())
    found = None if stages is None else pipeline(stages, stage_depth, run_ids)
    per_query, documents, pairs = failure_rows(
        run_lf,
        rankings,
        run_ids,
        judged,
        weights,
        k=k,
        rel=rel,
        found=found,
        documents_lf=documents_lf,
        known=known,
        doc_by=doc_by,
    )
    settings: dict[str, Any] = {"failures_k": k, "rel": rel}
    if found is not None:
        settings.update(stages=list(found.stages), stage_depth=found.depth)
    if by is None:
        if attributes is not None:
            per_query = per_query.join(
                attributes, on="query_id", how="left", maintain_order="left"
            )
        return output(per_query, run, settings)
    units = per_query
    if doc_by:  # a query is a unit in each document slice it has documents in
        keys = [*_KEYS, *doc_by]
        present = pl.concat(
            [documents.select(keys), pairs.select(keys)], how="vertical"
        ).unique()
        units = _counted(present, documents, pairs, keys, known=known).join(
            per_query.select(*_KEYS, "intent_failure", "failure"), on=_KEYS
        )
    if query_by and attributes is not None:
        units = units.join(
            attributes.select("query_id", *query_by), on="query_id", how="left"
        )
    settings["failures_by"] = slices
    return output(_summary(units, slices), run, settings)


def _slices(
    slices: list[str],
    attributes: pl.DataFrame | None,
    documents: pl.LazyFrame | None,
) -> tuple[list[str], list[str]]:
    """Split the ``by`` columns into query attributes and document attributes."""
    in_queries = [] if attributes is None else attributes.columns
    in_docs = [] if documents is None else documents.collect_schema().names()
    both = [c for c in slices if c in in_queries and c in in_docs]
    if both:
        msg = (
            f"by column(s) {both!r} are in both the queries and the docs table, "
            "so it is not clear which to slice by.\n  Hint: rename one of them."
        )
        raise SchemaError(msg)
    absent = [c for c in slices if c not in in_queries and c not in in_docs]
    if absent:
        tables = [
            f"the {name} table ({found!r})"
            for name, found in (("queries", in_queries), ("docs", in_docs))
            if found
        ]
        msg = (
            f"by column(s) {absent!r} are not in {' or '.join(tables)}.\n"
            "  Hint: choose slice columns of queries= (query attributes) or docs= "
            "(document attributes)."
        )
        raise SchemaError(msg)
    return [c for c in slices if c in in_queries], [c for c in slices if c in in_docs]


def _known(documents: pl.LazyFrame | None, doc_by: list[str]) -> list[str]:
    """List the pair subsets the documents table can tell (see ``ATTRIBUTES``)."""
    if documents is None:
        return []
    names = documents.collect_schema().names()
    known = [kind for kind, column in ATTRIBUTES.items() if column in names]
    if not known and not doc_by:
        msg = (
            f"docs= has neither {' nor '.join(map(repr, ATTRIBUTES.values()))} "
            f"(found {names!r}), and no by column is in it: it tells failures() "
            "nothing.\n  Hint: rename the columns, e.g. docs.rename({'type': "
            "'source_type', 'date': 'published_at'}), or leave docs out."
        )
        raise SchemaError(msg)
    return known


def _attach(
    rows: pl.DataFrame, documents: pl.LazyFrame, wanted: Sequence[str]
) -> pl.DataFrame:
    """Join the ``wanted`` document attributes onto ``rows`` (null when unknown).

    By ``doc_id``, or by ``query_id`` and ``doc_id`` when the table holds
    attributes per query. ``_FOUND`` is true on the rows the table has.
    """
    names = documents.collect_schema().names()
    key = ["query_id", "doc_id"] if "query_id" in names else ["doc_id"]
    needed = rows.select(key).unique()
    table = (
        documents.select(*key, *dict.fromkeys(wanted))
        .join(needed.lazy(), on=key, how="semi")
        .with_columns(pl.lit(value=True).alias(_FOUND))
        .collect()
    )
    return rows.drop(_FOUND, strict=False).join(table, on=key, how="left")


def _warn_unknown(
    top: pl.DataFrame, documents: pl.DataFrame | None, wanted: Sequence[str]
) -> None:
    """Count, in one warning, the documents looked up that docs= cannot tell about."""
    looked_up = [top.select("query_id", "doc_id", _FOUND, *wanted)]
    if documents is not None:
        looked_up.append(documents.select("query_id", "doc_id", _FOUND, *wanted))
    rows = pl.concat(looked_up, how="vertical_relaxed").unique(["query_id", "doc_id"])
    absent = rows.filter(pl.col(_FOUND).is_null())
    present = rows.filter(pl.col(_FOUND).is_not_null())
    blanks = {
        column: present[column].null_count()
        for column in dict.fromkeys(wanted)
        if present[column].null_count()
    }
    if not absent.height and not blanks:
        return
    parts = []
    if absent.height:
        example = absent.sort("query_id", "doc_id").row(0, named=True)
        parts.append(
            f"{absent.height} of the {rows.height} documents failures() looks up "
            f"are not in docs= (e.g. doc {example['doc_id']!r} of query "
            f"{example['query_id']!r})"
        )
    parts += [f"{n} have no {column}" for column, n in blanks.items()]
    warn(
        "; ".join(parts) + ": a pair with such a document counts as neither a "
        "calibration nor a freshness pair, and a document slice of theirs is "
        "null.\n  Hint: add the missing documents and attributes to docs=."
    )


def _deduplicated(
    run: pl.LazyFrame, rankings: Rankings, duplicates: Duplicates
) -> tuple[pl.LazyFrame, Rankings]:
    """Refuse, or keep one of, a document twice in one ranking (as evaluate)."""
    if not may_repeat(run, rankings):
        return run, rankings
    key = ["run_id", "query_id", "doc_id"]
    counts = (
        run.group_by(key)
        .agg(pl.len().alias("n"))
        .filter(pl.col("n") > 1)
        .sort(key)
        .collect()
    )
    if not counts.height:  # a hash collision, no repeat
        return run, rankings
    kept, extra = deduplicate(run, counts, duplicates)
    kept = kept.collect().lazy()
    report_dropped(extra, duplicates)
    return kept, find_rankings(kept, EngineOptions())


def _documents(
    ranked: pl.DataFrame,
    labelled: pl.DataFrame,
    runs: pl.DataFrame,
    found: Pipeline | None,
    k: int,
    rel: int,
) -> pl.DataFrame:
    """One row per run and relevant document: how it fared (Boolean flags).

    ``run_id, query_id, doc_id, top_k, candidate, scoring, dropped``; exactly
    one flag is true on each row.
    """
    relevant = labelled.filter(pl.col("label") >= rel).select("query_id", "doc_id")
    rows = runs.join(relevant, how="cross").join(
        ranked.select("run_id", "query_id", "doc_id", "rank"),
        on=["run_id", "query_id", "doc_id"],
        how="left",
    )
    rank = pl.col("rank")
    top_k = rank.is_not_null() & (rank <= k)
    dropped = pl.lit(value=False)
    if found is not None:
        rows = rows.join(
            found.kept_earlier(ranked, rel), on=["query_id", "doc_id"], how="left"
        )
        last = pl.col("run_id") == found.last
        dropped = last & pl.col(_KEPT).fill_null(value=False) & ~top_k
    return rows.select(
        *_KEYS,
        "doc_id",
        top_k.alias("top_k"),
        (rank.is_null() & ~dropped).alias("candidate"),
        (rank.is_not_null() & ~top_k & ~dropped).alias("scoring"),
        dropped.alias("dropped"),
    )


def _counted(
    units: pl.DataFrame,
    documents: pl.DataFrame,
    pairs: pl.DataFrame,
    keys: list[str],
    *,
    known: Sequence[str],
) -> pl.DataFrame:
    """Count the documents and pairs of each unit (a query, or a query's slice).

    ``known``: the pair kinds whose document attribute was given; the
    others' counts are null.
    """
    counts = documents.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("n_relevant"),
        *(
            pl.col(flag).sum().cast(pl.Int64).alias(f"n_{flag}")
            for flag in ("top_k", "candidate", "scoring", "dropped")
        ),
    )
    pair_counts = pairs.group_by(keys).agg(
        pl.len().cast(pl.Int64).alias("n_inverted_pairs"),
        *(
            pl.col(kind).sum().cast(pl.Int64).alias(f"n_{kind}_pairs")
            for kind in ("calibration", "freshness")
        ),
    )
    # a document the docs table does not know has a null slice, a unit too
    out = units.join(counts, on=keys, how="left", nulls_equal=True).join(
        pair_counts, on=keys, how="left", nulls_equal=True
    )
    return out.with_columns(
        *(pl.col(c).fill_null(0) for c in [*_DOCS, "n_inverted_pairs"]),
        *(
            pl.col(f"n_{kind}_pairs").fill_null(0)
            if kind in known
            else pl.lit(None, dtype=pl.Int64).alias(f"n_{kind}_pairs")
            for kind in ("calibration", "freshness")
        ),
    )


def _dominant() -> pl.Expr:
    """Name the dominant kind of each query (see the Notes of :func:`failures`)."""
    lost = pl.max_horizontal(*(pl.col(f"n_{kind}") for kind in DOCUMENT_KINDS))
    calibration = pl.col("n_calibration_pairs").fill_null(0)
    freshness = pl.col("n_freshness_pairs").fill_null(0)
    kind = (
        pl.when(pl.col("n_relevant") == 0)
        .then(pl.lit("no_relevant"))
        .when(pl.col("intent_failure").fill_null(value=False))
        .then(pl.lit("intent"))
    )
    for name in DOCUMENT_KINDS:
        kind = kind.when((lost > 0) & (pl.col(f"n_{name}") == lost)).then(pl.lit(name))
    return (
        kind.when((calibration > 0) & (calibration >= freshness))
        .then(pl.lit("calibration"))
        .when(freshness > 0)
        .then(pl.lit("freshness"))
        .when(pl.col("n_inverted_pairs") > 0)
        .then(pl.lit("inverted"))
        .otherwise(pl.lit("none"))
    )


def _summary(per_query: pl.DataFrame, slices: list[str]) -> pl.DataFrame:
    """Sum the counts and take the rates per run and slice."""

    def total(column: str) -> pl.Expr:
        values = pl.col(column)
        return (
            pl.when(values.is_null().all())
            .then(None)
            .otherwise(values.sum())
            .cast(pl.Int64)
            .alias(column)
        )

    def share(column: str, name: str) -> pl.Expr:
        values = pl.col(column)
        return (
            pl.when(values.is_null().all())
            .then(None)
            .otherwise((values > 0).mean())
            .alias(name)
        )

    grouped = per_query.group_by(["run_id", *slices], maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("n_queries"),
        *(total(c) for c in _COUNTS),
        share("n_inverted_pairs", "inverted_rate"),
        share("n_calibration_pairs", "calibration_rate"),
        share("n_freshness_pairs", "freshness_rate"),
        pl.col("intent_failure").cast(pl.Float64).mean().alias("intent_failure_rate"),
        *(
            (pl.col("failure") == name).sum().cast(pl.Int64).alias(f"queries_{name}")
            for name in FAILURES
        ),
    )
    relevant = pl.col("n_relevant").cast(pl.Float64)
    rates = [
        pl.when(relevant > 0)
        .then(pl.col(f"n_{kind}") / relevant)
        .otherwise(None)
        .alias(f"{kind}_rate")
        for kind in ("candidate", "scoring", "dropped")
    ]
    return (
        grouped.with_columns(rates)
        .sort(["run_id", *slices], nulls_last=True)
        .select(
            "run_id",
            *slices,
            "n_queries",
            *_COUNTS,
            "candidate_rate",
            "scoring_rate",
            "dropped_rate",
            "inverted_rate",
            "calibration_rate",
            "freshness_rate",
            "intent_failure_rate",
            *(f"queries_{name}" for name in FAILURES),
        )
    )


def failure_rows(
    run_lf: pl.LazyFrame,
    rankings: Rankings,
    run_ids: list[str],
    judged: Judgments,
    weights: pl.LazyFrame | None,
    *,
    k: int,
    rel: int,
    found: Pipeline | None,
    documents_lf: pl.LazyFrame | None = None,
    known: list[str] | None = None,
    doc_by: list[str] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Count the failures of every (run, query): :func:`failures`'s per-query rows.

    ``run_lf`` is a checked run without repeated documents and
    ``rankings`` its rankings; ``run_ids`` the runs of the whole data
    (each is scored on every query of ``judged``, one it did not answer
    as all candidate failures); an engine that splits the queries
    (``ireval_df.spark``) passes those of all its parts. Returns the
    per-query rows, sorted by run and query, and the relevant documents
    and inverted pairs they count (for slices).
    """
    known = known or []
    doc_by = doc_by or []
    options = EngineOptions()
    labelled = label_qrels(judged.qrels).collect()
    ranked = (
        ranked_rows(run_lf, labelled.lazy(), options, every=False, rankings=rankings)
        .select("run_id", "query_id", "doc_id", "rank", "label")
        .collect()
    )
    runs = pl.DataFrame({"run_id": run_ids}, schema={"run_id": pl.String})
    documents = _documents(ranked, labelled, runs, found, k, rel)
    top = ranked.filter((pl.col("rank") <= k) & (pl.col("label") >= 0))
    if documents_lf is not None:
        wanted = list(dict.fromkeys([*(ATTRIBUTES[kind] for kind in known), *doc_by]))
        top = _attach(top, documents_lf, wanted)
        if doc_by:
            documents = _attach(documents, documents_lf, wanted)
        _warn_unknown(top, documents if doc_by else None, wanted)
    pairs = inverted_pairs(top.lazy(), doc_by).collect()
    grid = runs.join(labelled.select("query_id").unique(), how="cross")
    per_query = _counted(grid, documents, pairs, _KEYS, known=known)
    if judged.intents is None:
        per_query = per_query.with_columns(
            pl.lit(None, dtype=pl.Boolean).alias("intent_failure")
        )
    else:
        primary = primary_intents(judged.intents, rel, weights)
        failed = intent_failures(ranked, judged.intents, primary, k, rel)
        has_primary = pl.col("query_id").is_in(primary["query_id"].implode())
        per_query = per_query.join(failed, on=_KEYS, how="left").with_columns(
            pl.when(has_primary)
            .then(pl.col("intent_failure").fill_null(value=False))
            .otherwise(None)
            .alias("intent_failure")
        )
    per_query = (
        per_query.with_columns(_dominant().alias("failure"))
        .select(*_KEYS, *_COUNTS, "intent_failure", "failure")
        .sort(_KEYS)
    )
    return per_query, documents, pairs


def report_dropped(extra: int, duplicates: Duplicates) -> None:
    """Warn that ``extra`` repeated run rows were dropped (nothing when none were)."""
    if extra:
        warn(
            f"dropped {extra} repeated run rows (duplicates={duplicates!r}): a document "
            "appeared more than once in the same ranking."
        )
