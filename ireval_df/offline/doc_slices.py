"""Document slices: metrics restricted to the documents of one slice of the top k.

``evaluate(run, qrels, metrics, docs=..., by_doc=...)`` tags every document
with its slice (a column of the documents table, several columns, or an
expression such as :func:`ireval_df.age_buckets`) and scores each
(run, query, slice) on the documents of that slice, in the positions the
full ranking gave them (``docs/slices.md``):

- ``P@k``: relevant documents of the slice in the top k, over k;
- ``R@k``: relevant documents of the slice in the top k, over the relevant
  documents of the slice in the qrels;
- ``nDCG@k``: the DCG of the slice's documents at their original ranks in
  the top k, over the ideal DCG of the slice's judged documents;
- ``Share@k``: documents of the slice in the top k, over k;
- ``RelShare``: relevant documents of the slice, over the query's.

A metric opts in with its registry entry's ``doc_slices`` option, which
says how it is computed per slice:

``"engine"`` (``P``, ``R``, ``nDCG``)
    by the engine unchanged, on one synthetic ranking per (run, query,
    slice): the whole ranking (cut at the largest k), in which only the
    slice's documents keep their judgments; the others count as unjudged,
    so non-relevant with no gain. These metrics therefore get every
    parameter and convention they have unsliced (``rel``, gain maps, ties,
    ``depth``, ``rank_from``, ``missing``). ``slice_denominator`` names the
    registered metric (with the same parameters) whose value 0 leaves the
    sliced one undefined: ``NumRel`` for ``R``, ``IDCG`` for ``nDCG``;
    without one, a slice absent from a query scores 0.
``"top"`` (``Share``)
    the slice's documents in the top k over k, counted directly.
``"qrels"`` (``RelShare``)
    the slice's relevant documents over the query's, from the qrels.

The slices of each query are every slice seen anywhere (in the top k of a
run, or among the judged documents): a slice absent from a query scores 0
in ``P`` and ``Share``; ``R`` and ``nDCG`` have no row where the slice holds
no relevant document for the query, ``RelShare`` none where the query has
none, since their denominators are 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import OptionError, SchemaError, warn
from ireval_df.measures import REGISTRY
from ireval_df.measures.spec import build_metric
from ireval_df.offline.engine import (
    EngineOptions,
    label_qrels,
    per_query_wide,
    ranked_rows,
)
from ireval_df.offline.metrics import shared
from ireval_df.schema.checks import parse_time
from ireval_df.schema.coerce import as_docs, as_queries

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ireval_df.measures import Metric

__all__ = ["DocSlicing", "SlicePart", "assemble", "doc_slicing", "slice_part"]

#: The column holding when each query was issued, read by age expressions.
ISSUED_AT = "issued_at"
_KNOWN = "__ireval_known"  # the document has a row in the docs table
_SLICE = "__ireval_slice"  # a slice's number among those of its query
_QID = "__ireval_qid"  # the query of a synthetic (query, slice) ranking
#: columns of the result that a slice may not be named
_RESERVED = ("run_id", "query_id", "doc_id", "metric", "value")


@dataclass(frozen=True)
class DocSlicing:
    """What ``evaluate(docs=..., by_doc=...)`` asked for, checked.

    Attributes
    ----------
    docs : polars.DataFrame
        The documents table, canonical (:func:`ireval_df.read_docs`), with
        only the columns the slices read.
    keys : list of str
        ``["doc_id"]``, or ``["query_id", "doc_id"]`` for documents per query.
    names : list of str
        The slice columns of the result, in order.
    exprs : list of polars.Expr
        Each slice column, computed on the documents table's columns (and
        ``issued_at``).
    times : polars.DataFrame or None
        ``query_id, issued_at`` when a slice reads the query's time.
    as_of : polars.Expr or None
        The time of the queries without an ``issued_at`` of their own.
    metrics : list of Metric
        The metrics asked for, each one that a slice restricts.
    top : int or None
        How many documents of each ranking the slices need: the largest
        cutoff, None for the whole ranking (``nDCG`` without one).
    """

    docs: pl.DataFrame
    keys: list[str]
    names: list[str]
    exprs: list[pl.Expr]
    times: pl.DataFrame | None
    as_of: pl.Expr | None
    metrics: list[Metric]
    top: int | None


@dataclass(frozen=True)
class SlicePart:
    """The slices of one group of queries (:func:`slice_part`).

    Attributes
    ----------
    values : polars.DataFrame
        ``run_id, query_id, <slices>``, then a column per metric computed from
        the run (``P``, ``R``, ``nDCG``, ``Share``), for the slices seen in
        each query; null where undefined.
    judged : polars.DataFrame
        ``query_id, <slices>, relevance``: the qrels, tagged.
    seen : polars.DataFrame
        The distinct slices seen (``<slices>``).
    unknown : tuple of int
        Documents absent from the docs table: in the runs' top k and of all
        there, relevant in the qrels and of all those.
    """

    values: pl.DataFrame
    judged: pl.DataFrame
    seen: pl.DataFrame
    unknown: tuple[int, int, int, int]


def _how(m: Metric) -> str | None:
    """How ``m`` is computed per slice (its ``doc_slices`` option), or None."""
    how = m.info.options.get("doc_slices")
    return None if how is None else str(how)


def _sliceable() -> list[str]:
    return [n for n, i in REGISTRY.items() if i.options.get("doc_slices")]


def _denominator(m: Metric) -> Metric | None:
    """Return the metric whose value 0 leaves ``m`` undefined in a slice, if any."""
    name = m.info.options.get("slice_denominator")
    if name is None:
        return None
    info = REGISTRY[name]
    params = {k: v for k, v in m.params if k in info.parameters}
    return build_metric(name, params, m.k if info.cutoff != "none" else None)


def _check_metrics(metrics: Sequence[Metric]) -> None:
    for m in metrics:
        if _how(m) is None:
            msg = (
                f"metric {str(m)!r} cannot be restricted to a slice of the "
                f"documents (by_doc=); those that can are {_sliceable()!r}.\n"
                f"  Hint: evaluate {m.name!r} in a call without by_doc=, or "
                f"slice by query attributes with queries= and "
                f"summarize(by=...)."
            )
            raise OptionError(msg)
        if m.judged_only:
            msg = (
                f"metric {str(m)!r}: judged_only=true drops unjudged documents "
                f"and renumbers the ranking, so a document slice would no longer "
                f"keep its original ranks.\n  Hint: leave out judged_only with "
                f"by_doc=, or evaluate it without by_doc=."
            )
            raise OptionError(msg)
        if shared.full_sort(m):  # rel < 0, or a gain for unjudged documents
            msg = (
                f"metric {str(m)!r} gives documents absent from the qrels a "
                f"relevance or a gain, and by_doc= restricts a metric to a slice "
                f"by treating the other slices' documents as absent.\n  Hint: "
                f"use rel >= 0 and no gain for level -1 with by_doc=."
            )
            raise OptionError(msg)


def _slice_exprs(
    by_doc: Any, columns: Sequence[str], reserved: Sequence[str]
) -> tuple[list[str], list[pl.Expr]]:
    """Each ``by_doc`` item as a named expression, checked against ``columns``."""
    items = list(by_doc) if isinstance(by_doc, list | tuple) else [by_doc]
    if not items:
        msg = "by_doc= is empty; name at least one column of docs, or an expression."
        raise OptionError(msg)
    names: list[str] = []
    exprs: list[pl.Expr] = []
    for item in items:
        if isinstance(item, str):
            name, expr = item, pl.col(item)
            reads = [item]
        elif isinstance(item, pl.Expr):
            output = item.meta.output_name(raise_if_undetermined=False)
            if output is None:
                msg = (
                    f"by_doc expression {item} has no output name.\n  Hint: "
                    f"name it, e.g. expr.alias('slice')."
                )
                raise OptionError(msg)
            name, expr = output, item
            reads = list(item.meta.root_names())
        else:
            msg = (
                f"by_doc= takes column names of docs or polars expressions "
                f"(e.g. ie.age_buckets()), found a {type(item).__name__}: {item!r}"
            )
            raise OptionError(msg)
        keys = [c for c in reads if c in ("query_id", "doc_id")]
        if keys:
            msg = (
                f"by_doc= reads {keys[0]!r}, the key of docs, not an attribute: a "
                f"slice per {keys[0].removesuffix('_id')} is not a document slice."
                f"\n  Hint: slice by a docs attribute, e.g. by_doc='source_type'; "
                f"per-query values are evaluate()'s rows already."
            )
            raise OptionError(msg)
        absent = [c for c in reads if c not in columns]
        if absent:
            msg = (
                f"by_doc= reads column {absent[0]!r}, which docs does not "
                f"have (found {[c for c in columns if c != ISSUED_AT]!r})."
            )
            if absent[0] == ISSUED_AT:
                msg += (
                    "\n  Hint: an age needs the time of each query: pass "
                    "queries= with an 'issued_at' column, or as_of= (one time "
                    "for all), to evaluate() or to age_buckets()."
                )
            else:
                msg += (
                    "\n  Hint: add it to docs; ie.read_docs(source, columns="
                    "{'old name': 'new name'}) renames a column first."
                )
            raise SchemaError(msg)
        if name in reserved or name in names:
            msg = (
                f"by_doc= would name a slice column {name!r}, which the result "
                f"already has.\n  Hint: rename it, e.g. pl.col({name!r})"
                f".alias('{name}_slice')."
            )
            raise OptionError(msg)
        names.append(name)
        exprs.append(expr.alias(name))
    return names, exprs


def doc_slicing(
    docs: Any,
    by_doc: Any,
    metrics: Sequence[Metric],
    *,
    queries: Any = None,
    as_of: Any = None,
    attributes: Sequence[str] = (),
) -> DocSlicing:
    """Check ``evaluate``'s ``docs``, ``by_doc`` and ``as_of`` and read the docs.

    Parameters
    ----------
    docs : frame or path
        The documents table (see :func:`ireval_df.read_docs`).
    by_doc : str, polars.Expr, or a list of these
        Slice columns: names of docs columns, or expressions over them (and
        ``issued_at``, the query's time).
    metrics : sequence of Metric
        The metrics asked for.
    queries : frame or path, optional
        Query metadata; its ``issued_at``, when it has one, times each query.
    as_of : datetime, date or str, optional
        The time of queries without an ``issued_at``.
    attributes : sequence of str
        The query attributes the result gets, which a slice may not be named.

    Returns
    -------
    DocSlicing

    Raises
    ------
    OptionError
        A metric that cannot be sliced, a bad ``by_doc`` or ``as_of``.
    SchemaError
        ``by_doc`` reads a column docs lacks.
    """
    _check_metrics(metrics)
    table = as_docs(docs).collect()
    keys = ["query_id", "doc_id"] if "query_id" in table.columns else ["doc_id"]
    attrs = [c for c in table.columns if c not in keys]
    times = None
    if queries is not None:
        meta = as_queries(queries).collect()
        if ISSUED_AT in meta.columns:
            times = meta.select("query_id", ISSUED_AT)
    when = None
    if as_of is not None:
        when = pl.lit(parse_time(as_of, "as_of"), dtype=pl.Datetime("us"))
    timed = times is not None or when is not None
    if timed and ISSUED_AT in attrs:
        msg = (
            f"docs has a column {ISSUED_AT!r}, and so does the query time "
            f"(queries= or as_of=) that by_doc= expressions read under that name."
            f"\n  Hint: rename the docs column, e.g. "
            f"docs.rename({{{ISSUED_AT!r}: 'doc_{ISSUED_AT}'}})."
        )
        raise SchemaError(msg)
    columns = [*attrs, *([ISSUED_AT] if timed else [])]
    names, exprs = _slice_exprs(by_doc, columns, [*_RESERVED, *attributes])
    read = sorted({c for e in exprs for c in e.meta.root_names()} & set(attrs))
    # "qrels" metrics read no ranking; the others need its top
    tops = [None if m.k is None else int(m.k) for m in metrics if _how(m) != "qrels"]
    top = None if None in tops else max((k for k in tops if k is not None), default=0)
    return DocSlicing(
        docs=table.select(*keys, *read).with_columns(pl.lit(value=True).alias(_KNOWN)),
        keys=keys,
        names=names,
        exprs=exprs,
        times=times,
        as_of=when,
        metrics=list(metrics),
        top=top,
    )


def _tag(slicing: DocSlicing, pairs: pl.DataFrame) -> pl.DataFrame:
    """``query_id, doc_id, <slices>, known`` for each distinct (query, doc)."""
    frame = pairs.join(slicing.docs, on=slicing.keys, how="left")
    if slicing.times is not None:
        frame = frame.join(slicing.times, on="query_id", how="left")
        if slicing.as_of is not None:
            frame = frame.with_columns(pl.col(ISSUED_AT).fill_null(slicing.as_of))
    elif slicing.as_of is not None:
        frame = frame.with_columns(slicing.as_of.alias(ISSUED_AT))
    try:
        return frame.select(
            "query_id",
            "doc_id",
            *slicing.exprs,
            pl.col(_KNOWN).fill_null(value=False),
        )
    except pl.exceptions.PolarsError as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc)
        msg = f"by_doc= could not be computed on docs: {text}"
        raise SchemaError(msg) from exc


def slice_part(
    slicing: DocSlicing,
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    options: EngineOptions,
    run_ids: pl.LazyFrame,
) -> SlicePart:
    """Score the slices of one group of queries (every run's rankings of them).

    Parameters
    ----------
    slicing : DocSlicing
        What to slice by and compute.
    run : polars.LazyFrame
        The canonical run (or this group's part), without repeated documents.
    qrels : polars.LazyFrame
        The canonical qrels of the same queries.
    options : EngineOptions
        ``depth``, ``missing`` and ``rank_from``, as for the whole call.
    run_ids : polars.LazyFrame
        A ``run_id`` column: every run scored.

    Returns
    -------
    SlicePart
    """
    names = slicing.names
    rows = ranked_rows(run, label_qrels(qrels), options)
    if slicing.top is not None:
        rows = rows.filter(pl.col("rank") <= slicing.top)
    top = rows.select("run_id", "query_id", "doc_id", "rank", "label").collect()
    judged = qrels.select("query_id", "doc_id", "relevance").collect()
    pairs = pl.concat([top.select("query_id", "doc_id"), judged.drop("relevance")])
    tags = _tag(slicing, pairs.unique())
    top = top.join(tags, on=["query_id", "doc_id"], how="left")
    judged = judged.join(tags, on=["query_id", "doc_id"], how="left")
    unknown = (
        top.filter(~pl.col(_KNOWN)).select("query_id", "doc_id").n_unique(),
        top.select("query_id", "doc_id").n_unique(),
        judged.filter(~pl.col(_KNOWN) & (pl.col("relevance") > 0)).height,
        judged.filter(pl.col("relevance") > 0).height,
    )
    # the slices seen in each query, each (query, slice) numbered
    per_query = (
        pl.concat([top.select("query_id", *names), judged.select("query_id", *names)])
        .unique(maintain_order=True)
        .with_row_index(_SLICE)
    )
    slice_key = ["run_id", "query_id", *names]
    values = top.select(slice_key).unique()  # completed below by the grid
    engine = [m for m in slicing.metrics if _how(m) == "engine"]
    if engine:
        values = _engine_values(
            slicing, engine, top, judged, per_query, options, run_ids
        )
    shares = []  # "top": the slice's documents in the top k, over k
    for m in slicing.metrics:
        if _how(m) == "top" and m.k is not None:
            k = int(m.k)
            shares.append(((pl.col("rank") <= k).sum() / float(k)).alias(str(m)))
    if shares:
        counts = top.group_by(slice_key).agg(shares)
        values = values.join(
            counts, on=slice_key, how="full", coalesce=True, nulls_equal=True
        )
    return SlicePart(
        values=values,
        judged=judged.select("query_id", *names, "relevance"),
        seen=per_query.select(names).unique(),
        unknown=unknown,
    )


def _engine_values(
    slicing: DocSlicing,
    metrics: list[Metric],
    top: pl.DataFrame,
    judged: pl.DataFrame,
    per_query: pl.DataFrame,
    options: EngineOptions,
    run_ids: pl.LazyFrame,
) -> pl.DataFrame:
    """``P``, ``R``, ``nDCG`` per (run, query, slice), by the engine, undefined null.

    Each (query, slice) is a synthetic query, named by its number in
    ``per_query``: every document of the query's ranking (so the ranks
    stay), judged only when it belongs to the slice.
    """
    names = slicing.names
    synthetic = pl.col(_SLICE).cast(pl.String).alias("query_id")
    ids = per_query.select(synthetic, pl.col("query_id").alias(_QID), *names)
    # score = -rank: the engine ranks each synthetic ranking as the original
    run = top.join(per_query.select("query_id", _SLICE), on="query_id").select(
        "run_id",
        synthetic,
        "doc_id",
        (-pl.col("rank").cast(pl.Float64)).alias("score"),
    )
    qrels = judged.join(
        per_query, on=["query_id", *names], how="inner", nulls_equal=True
    ).select(synthetic, "doc_id", "relevance")
    # the denominators, to leave out R and nDCG where they are 0
    hidden = {str(m): d for m in metrics if (d := _denominator(m)) is not None}
    wide = per_query_wide(
        [*metrics, *{str(h): h for h in hidden.values()}.values()],
        run.lazy(),
        qrels.lazy(),
        EngineOptions(missing=options.missing),
        run_ids=run_ids,
    ).collect()
    undefined = {
        name: pl.when(pl.col(str(h)) > 0).then(pl.col(name))
        for name, h in hidden.items()
    }
    return wide.join(ids, on="query_id").select(
        "run_id",
        pl.col(_QID).alias("query_id"),
        *names,
        *(undefined.get(str(m), pl.col(str(m))).alias(str(m)) for m in metrics),
    )


def assemble(
    slicing: DocSlicing, parts: Sequence[SlicePart], pairs: pl.DataFrame
) -> pl.DataFrame:
    """Return the long result: every (run, query) of ``pairs`` x every slice seen.

    Parameters
    ----------
    slicing : DocSlicing
        What was asked for.
    parts : sequence of SlicePart
        Every group of queries, as :func:`slice_part` scored it.
    pairs : polars.DataFrame
        ``run_id, query_id``: the rankings the unsliced evaluation scored
        (after ``missing=``), sorted.

    Returns
    -------
    polars.DataFrame
        ``run_id, query_id, <slices>, metric, value``, sorted by run, query,
        slice and the order of the metrics; undefined values (a denominator
        of 0) have no row. Warns once about documents absent from docs.
    """
    names = slicing.names
    seen = pl.concat([p.seen for p in parts]).unique()
    ordered = seen.sort(names, nulls_last=True).with_row_index("__ireval_order")
    grid = pairs.join(ordered, how="cross")
    values = pl.concat([p.values for p in parts], how="diagonal_relaxed")
    key = ["run_id", "query_id", *names]
    grid = grid.join(values, on=key, how="left", nulls_equal=True)
    computed = [str(m) for m in slicing.metrics if _how(m) != "qrels"]
    zero = [  # defined in every slice: 0 where a slice is absent
        str(m)
        for m in slicing.metrics
        if _how(m) == "top" or (_how(m) == "engine" and _denominator(m) is None)
    ]
    absent = [c for c in computed if c not in grid.columns]  # no rows to score
    grid = grid.with_columns(pl.lit(None, pl.Float64).alias(c) for c in absent)
    grid = grid.with_columns(pl.col(c).fill_null(0.0) for c in zero)
    relshares = [m for m in slicing.metrics if _how(m) == "qrels"]
    if relshares:
        judged = pl.concat([p.judged for p in parts])
        grid = grid.join(
            _relshares(relshares, judged, seen, names),
            on=["query_id", *names],
            how="left",
            nulls_equal=True,
        )
    metrics = [str(m) for m in slicing.metrics]
    order = pl.DataFrame({"metric": metrics}).with_row_index("__ireval_m")
    long = (
        grid.unpivot(index=["__ireval_order", *key], on=metrics, variable_name="metric")
        .filter(pl.col("value").is_not_null())
        .join(order, on="metric")
        .sort(["run_id", "query_id", "__ireval_order", "__ireval_m"])
        .select(*key, "metric", pl.col("value").cast(pl.Float64))
    )
    _warn_unknown(parts, names)
    return long


def _relshares(
    metrics: list[Metric], judged: pl.DataFrame, seen: pl.DataFrame, names: list[str]
) -> pl.DataFrame:
    """``query_id, <slices>, RelShare...`` for every query with a relevant document."""
    frames = []
    for m in metrics:
        relevant = judged.filter(pl.col("relevance") >= m.rel)
        total = relevant.group_by("query_id").agg(pl.len().alias("__ireval_r"))
        counts = relevant.group_by(["query_id", *names]).agg(pl.len().alias("__n"))
        frames.append(
            total.join(seen, how="cross")
            .join(counts, on=["query_id", *names], how="left", nulls_equal=True)
            .select(
                "query_id",
                *names,
                (pl.col("__n").fill_null(0) / pl.col("__ireval_r")).alias(str(m)),
            )
        )
    result = frames[0]
    for frame in frames[1:]:
        result = result.join(
            frame, on=["query_id", *names], how="full", coalesce=True, nulls_equal=True
        )
    return result


def _warn_unknown(parts: Sequence[SlicePart], names: list[str]) -> None:
    top, top_all, rel, rel_all = (sum(p.unknown[i] for p in parts) for i in range(4))
    if not (top or rel):
        return
    slices = ", ".join(repr(n) for n in names)
    warn(
        f"{top} of the {top_all} documents in the runs' top k and {rel} of the "
        f"{rel_all} relevant documents of the qrels have no row in docs: their "
        f"slice ({slices}) is null, or 'unknown' for an age.\n  Hint: add rows "
        f"for them to docs; to count them apart, filter the null slice out of "
        f"the result."
    )
