"""The checks behind :func:`validate`: one long frame of findings.

Every check is a handful of vectorised polars aggregations over the leniently
read inputs (see :func:`ireval_df.schema.lenient.as_lenient`) that yields at most one
row per run (or one row for the qrels or the query table). Messages are built
with polars string expressions from the aggregates, never by looping over
data rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._utils.frames import is_pandas
from ireval_df.errors import OptionError
from ireval_df.measures import parse_metrics
from ireval_df.schema.lenient import as_lenient

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ireval_df.measures import Metric
    from ireval_df.schema.lenient import Lenient

__all__ = ["CHECKS", "COLUMNS", "Check", "validate"]

Severity = Literal["error", "warning", "info"]

#: Share of unjudged documents in the top k above which ``unjudged_at_k`` is a
#: warning rather than information (the threshold evaluate() warns at).
UNJUDGED_WARNING = 0.5
#: How many example ids a finding quotes.
_EXAMPLES = 3
#: Longest id quoted in full.
_ID_CHARS = 40
#: Digits after zero padding, for comparing ids: '001' -> '1', 'q007' -> 'q7'.
_PADDING = r"(^|[^0-9])0+([0-9])"


@dataclass(frozen=True)
class Check:
    """One diagnostic: its default severity and what it looks for."""

    severity: Severity
    summary: str


#: Every check, in the order findings are listed within a severity.
CHECKS: dict[str, Check] = {
    "empty_input": Check("error", "an input has no rows"),
    "null_ids": Check("error", "rows with a null run_id, query_id or doc_id"),
    "null_scores": Check("error", "scores that are null or not a number"),
    "nan_scores": Check("error", "NaN scores"),
    "duplicate_docs": Check("error", "a document twice in one ranking"),
    "null_grades": Check("error", "grades that are null or not a number"),
    "non_integer_grades": Check("error", "grades that are not whole numbers"),
    "duplicate_judgments": Check("error", "a document judged twice for one query"),
    "duplicate_queries": Check("error", "a query twice in the query table"),
    "no_shared_queries": Check("error", "a run shares no query with the qrels"),
    "id_format": Check(
        "warning", "ids that differ only by zero padding, case or whitespace"
    ),
    "queries_only_in_qrels": Check("warning", "qrels queries a run did not answer"),
    "queries_only_in_run": Check("warning", "run queries without judgments"),
    "no_relevant": Check("warning", "qrels queries without a relevant document"),
    "unjudged_at_k": Check(
        "warning", "unjudged documents in the top k (info when at most 50 %)"
    ),
    "short_rankings": Check("warning", "rankings shorter than the deepest cutoff"),
    "rank_column_ignored": Check(
        "warning", "a rank column that orders documents unlike the scores"
    ),
    "queries_without_metadata": Check(
        "warning", "evaluated queries missing from the query table"
    ),
    "null_ranks": Check("info", "rank column values that are not counts"),
    "id_dtypes": Check("info", "run and qrels ids of different types"),
    "negative_grades": Check("info", "negative grades: pooled, not judged"),
    "infinite_scores": Check("info", "inf or -inf scores: ranked first or last"),
    "tied_scores": Check("info", "equal scores in the top k"),
    "queries_only_in_metadata": Check("info", "query table rows never evaluated"),
}

#: The columns of :func:`validate`'s result.
COLUMNS: dict[str, pl.DataType] = {
    "check": pl.String(),
    "severity": pl.String(),
    "input": pl.String(),
    "run_id": pl.String(),
    "count": pl.Int64(),
    "value": pl.Float64(),
    "example": pl.String(),
    "message": pl.String(),
    "fix": pl.String(),
}
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
#: Depths beyond this are all the same (and fit in Int64).
_DEEPEST = 2**40
_POS = "__ireval_pos"


def validate(
    run: Any = None,
    qrels: Any = None,
    queries: Any = None,
    *,
    metrics: str | Metric | Iterable[str | Metric] | None = None,
    k: int = 10,
    depth: int | None = None,
    rel: int = 1,
    columns: Mapping[str, str] | None = None,
) -> Any:
    """Diagnose a run, qrels and query table: one row per problem found.

    Unlike :func:`ireval_df.evaluate`, which stops at the first unusable
    value, this reads the inputs leniently and reports every problem it
    finds, with counts, examples and the option or code that fixes it.

    Parameters
    ----------
    run : frame, path, dict or list of these, optional
        As :func:`ireval_df.evaluate` takes it (several runs stacked with
        ``run_id``, or a list of runs).
    qrels : frame, path or dict, optional
        Relevance judgements. At least one of ``run`` and ``qrels`` is needed;
        the checks that compare them run when both are given.
    queries : frame or path, optional
        Query metadata (``query_id`` plus attribute columns).
    metrics : str, Metric or list of them, optional
        The metrics you mean to compute: the deepest integer cutoff among
        them (``R@100`` -> 100) is the depth ``short_rankings`` checks.
    k : int, default 10
        The top of the ranking that ``unjudged_at_k`` and ``tied_scores``
        look at.
    depth : int, optional
        The ranking length ``short_rankings`` expects; overrides ``metrics``.
        Without both, ``k``.
    rel : int, default 1
        Lowest grade counted as relevant (``no_relevant``).
    columns : mapping of str to str, optional
        Renames for the run's columns, e.g. ``{"qid": "query_id"}``.

    Returns
    -------
    Frame of the kind of ``run`` (else ``qrels``): polars, pandas; lazy stays lazy
        One row per finding, errors first, then warnings, then information:

        ``check``
            A stable identifier (see Notes).
        ``severity``
            ``"error"`` (:func:`~ireval_df.evaluate` would reject the input
            or give wrong numbers), ``"warning"`` (it would warn, or the
            numbers are likely misleading) or ``"info"``.
        ``input``
            ``"run"``, ``"qrels"``, ``"queries"``, or two of them joined by
            ``+`` for checks that compare inputs.
        ``run_id``
            The run the finding is about; null for the others.
        ``count``
            How many rows, documents or queries have the problem (what is
            counted is in the message); null when not a count.
        ``value``
            A share or length for checks that measure one (the mean unjudged
            share for ``unjudged_at_k``, the share of queries otherwise);
            else null.
        ``example``
            A few of the offending ids or values.
        ``message``
            What was found and what it does to an evaluation.
        ``fix``
            The option or code that addresses it.

        No rows means no problem was found.

    Raises
    ------
    FormatError
        A file cannot be read (malformed line, not UTF-8, corrupt gzip ...).
    SchemaError
        A needed column is missing or has an unusable dtype.
    MetricSpecError
        An unknown metric in ``metrics``.
    IrevalError
        Neither ``run`` nor ``qrels`` given, or a bad ``k``, ``depth``, ``rel``.

    See Also
    --------
    ireval_df.evaluate : which these checks anticipate.

    Notes
    -----
    The checks (``check`` column), by default severity:

    - error: ``empty_input``, ``null_ids``, ``null_scores``,
      ``nan_scores``, ``duplicate_docs`` (a document twice
      in one ranking), ``null_grades``, ``non_integer_grades``,
      ``duplicate_judgments`` (a document judged twice for one query),
      ``duplicate_queries`` (in the query table), ``no_shared_queries``;
    - warning: ``id_format`` (query or document ids that differ from the
      other side's only by zero padding, case or surrounding whitespace:
      ``'001'`` vs ``'1'``), ``queries_only_in_qrels``,
      ``queries_only_in_run``, ``no_relevant`` (no grade >= ``rel``),
      ``unjudged_at_k`` (info when at most half of the top k is unjudged),
      ``short_rankings`` (fewer documents than the depth), ``rank_column_ignored``
      (the input's rank column disagrees with the score order),
      ``queries_without_metadata``;
    - info: ``id_dtypes`` (e.g. integer ids in the run, strings in the
      qrels), ``negative_grades`` (trec_eval's "pooled, not judged"),
      ``infinite_scores`` (inf ranks first, -inf last),
      ``tied_scores`` (ties in the top k are broken by ``doc_id``
      descending, as trec_eval does), ``null_ranks`` (rank column values
      that are not counts), ``queries_only_in_metadata``.

    Ranks are derived as :func:`~ireval_df.evaluate` derives them: score
    descending, then ``doc_id`` descending. A document is unjudged when the
    qrels do not grade it for that query or grade it below 0; the unjudged
    share of a query is ``1 - Judged@k``.

    Examples
    --------
    >>> run = pl.DataFrame({
    ...     "query_id": ["1", "1", "1", "002"],
    ...     "doc_id": ["a", "a", "b", "c"],
    ...     "score": [2.0, 2.0, float("nan"), 1.0],
    ... })
    >>> qrels = pl.DataFrame({
    ...     "query_id": ["1", "2", "3"], "doc_id": ["a", "c", "d"], "relevance": [1, 1, 0],
    ... })
    >>> report = validate(run, qrels)
    >>> report.select("check", "severity", "count").rows()
    [('nan_scores', 'error', 1),
     ('duplicate_docs', 'error', 1),
     ('id_format', 'warning', 1),
     ('queries_only_in_qrels', 'warning', 2),
     ('queries_only_in_run', 'warning', 1),
     ('no_relevant', 'warning', 1),
     ('short_rankings', 'warning', 2),
     ('unjudged_at_k', 'info', 1),
     ('tied_scores', 'info', 1)]
    >>> print(report.filter(check="id_format")["message"].item())
    run 'run': 1 query id differs from a qrels id only by zero padding, case or
    surrounding whitespace, e.g. '002' ~ '2': such ids do not match, so these
    queries count as missing from the run.
    """
    if run is None and qrels is None:
        msg = "validate() needs a run, qrels or both; both were None."
        raise OptionError(msg)
    k = min(_positive("k", k), _DEEPEST)
    if depth is not None:
        depth = _positive("depth", depth)
    if isinstance(rel, bool) or not isinstance(rel, int):
        msg = f"rel must be a whole number (the lowest relevant grade), found {rel!r}."
        raise OptionError(msg)
    specs = parse_metrics(metrics) if metrics is not None else []
    deepest, origin = _depth(depth, specs, k)

    r = as_lenient(run, "run", columns=columns) if run is not None else None
    q = as_lenient(qrels, "qrels") if qrels is not None else None
    m = as_lenient(queries, "queries") if queries is not None else None

    parts: list[pl.DataFrame] = []
    ranked = None
    if r is not None and r.frame.height:
        ranked = _rankings(r.frame, k, max(k, deepest))
    if r is not None:
        parts += _run_checks(r.frame, ranked, k, deepest, origin)
    if q is not None:
        parts += _qrels_checks(q.frame, rel)
    if r is not None and q is not None and ranked is not None and q.frame.height:
        parts += _pair_checks(r, q, ranked, k, max(k, deepest))
    if m is not None:
        against, reference = ("qrels", q) if q is not None else ("run", r)
        if reference is not None:  # always: run or qrels is given
            parts += _metadata_checks(m.frame, reference.frame, against)
    return _output(_collate(parts), run if run is not None else qrels)


# --------------------------------------------------------------------------
# options and output


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"{name} must be a positive whole number, found {value!r}."
        raise OptionError(msg)
    return value


def _depth(depth: int | None, specs: list[Metric], k: int) -> tuple[int, str]:
    """Return the ranking length to expect, and where it comes from."""
    if depth is not None:
        return min(depth, _DEEPEST), f"depth={depth}"
    cutoffs = [
        (int(m.k), str(m))
        for m in specs
        if m.k is not None and m.info.cutoff_type is int
    ]
    if cutoffs:
        deepest, name = max(cutoffs, key=lambda c: c[0])
        return min(deepest, _DEEPEST), f"the cutoff of {name}"
    return k, f"k={k}"


def _collate(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Stack the findings: errors, warnings, information; then check order."""
    empty = pl.DataFrame(schema=COLUMNS)
    found = pl.concat([empty, *parts], how="vertical") if parts else empty
    order = {name: i for i, name in enumerate(CHECKS)}
    return found.sort(
        pl.col("severity").replace_strict(_SEVERITY_ORDER, return_dtype=pl.Int32),
        pl.col("check").replace_strict(order, return_dtype=pl.Int32),
        "input",
        "run_id",
        nulls_last=False,
    )


def _output(found: pl.DataFrame, like: Any) -> Any:
    if is_pandas(like):
        from ireval_df._utils.frames import to_pandas

        return to_pandas(found)
    if isinstance(like, pl.LazyFrame):
        return found.lazy()
    return found


# --------------------------------------------------------------------------
# expression helpers


def _quoted(expr: pl.Expr) -> pl.Expr:
    """Quote an id for messages: ``'q1'``, long ones cut, null as None."""
    text = expr.cast(pl.String)
    cut = pl.format("'{}...'", text.str.slice(0, _ID_CHARS))
    return (
        pl.when(text.is_null())
        .then(pl.lit("None"))
        .when(text.str.len_chars() > _ID_CHARS)
        .then(cut)
        .otherwise(pl.format("'{}'", text))
    )


def _sample(expr: pl.Expr) -> pl.Expr:
    """Join the first few distinct values in byte order, quoted (aggregation)."""
    return _quoted(expr.drop_nulls().unique().sort().head(_EXAMPLES)).str.join(", ")


def _first(mask: pl.Expr, value: str | None = None) -> pl.Expr:
    """Describe the first matching row: ``query 'q1' doc 'a'`` (and ``: value``).

    Only the one row is formatted, not every row before filtering.
    """
    where = pl.format(
        "query {} doc {}",
        _quoted(pl.col("query_id").filter(mask).first()),
        _quoted(pl.col("doc_id").filter(mask).first()),
    )
    if value is None:
        return where
    shown = pl.col(value).filter(mask).first().cast(pl.String)
    return pl.format("{}: {}", where, shown)


def _plural(n: pl.Expr, one: str, many: str) -> pl.Expr:
    """``1 query`` / ``3 queries``."""
    return pl.format(
        "{} {}", n, pl.when(n == 1).then(pl.lit(one)).otherwise(pl.lit(many))
    )


def _percent(share: pl.Expr) -> pl.Expr:
    return pl.format("{}%", (share * 100).round(1))


def _run_name() -> pl.Expr:
    return pl.format("run {}", _quoted(pl.col("run_id")))


def _emit(
    frame: pl.DataFrame,
    check: str,
    source: str,
    *,
    count: pl.Expr,
    message: pl.Expr,
    fix: str,
    example: pl.Expr | None = None,
    value: pl.Expr | None = None,
    severity: pl.Expr | None = None,
    per_run: bool = True,
) -> pl.DataFrame:
    """Turn the rows of an aggregate frame into findings of one check."""
    return frame.select(
        pl.lit(check, dtype=pl.String).alias("check"),
        (
            pl.lit(CHECKS[check].severity, dtype=pl.String)
            if severity is None
            else severity
        ).alias("severity"),
        pl.lit(source, dtype=pl.String).alias("input"),
        (pl.col("run_id") if per_run else pl.lit(None, dtype=pl.String)).alias(
            "run_id"
        ),
        count.cast(pl.Int64).alias("count"),
        (pl.lit(None) if value is None else value).cast(pl.Float64).alias("value"),
        (pl.lit(None) if example is None else example).cast(pl.String).alias("example"),
        message.cast(pl.String).alias("message"),
        pl.lit(fix, dtype=pl.String).alias("fix"),
    )


def _empty(kind: str, consequence: str, fix: str) -> pl.DataFrame:
    return _emit(
        pl.DataFrame({"n": [0]}),
        "empty_input",
        kind,
        count=pl.col("n"),
        message=pl.lit(f"the {kind} has no rows: {consequence}"),
        fix=fix,
        per_run=False,
    )


@dataclass(frozen=True)
class _Rankings:
    """What the checks need from a run's rankings, computed in one pass.

    ``per_query``: ``run_id``, ``query_id``, ``n`` (rows), ``tied`` (equal
    scores in the top k) and, with a rank column, ``backwards`` (it puts a
    document above one with a higher score; ties may come in any order). ``top``: ``run_id``, ``query_id``,
    ``doc_id`` and the position of the rows in the top ``deep``.
    """

    per_query: pl.DataFrame
    top: pl.DataFrame


def _rankings(run: pl.DataFrame, k: int, deep: int) -> _Rankings:
    """Rank every query as evaluate() does: score descending, then doc_id descending.

    A position is the inverse of the per-query sort permutation, computed in
    a window: no global sort of the run. Ties in the top k are equal scores
    among the top k + 1 rows (tied documents are adjacent in the ranking).
    """
    keys = ["run_id", "query_id"]
    order = pl.int_range(pl.len()).sort_by(
        ["score", "doc_id"], descending=[True, True], nulls_last=True
    )
    rows = run.filter(pl.col("query_id").is_not_null()).with_columns(
        (order.arg_sort() + 1).over(keys).cast(pl.Int64).alias(_POS)
    )
    pos, score = pl.col(_POS), pl.col("score")
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
    return _Rankings(
        per_query=rows.group_by(keys).agg(facts),
        top=rows.filter(pos <= deep).select(*keys, "doc_id", _POS),
    )


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


# --------------------------------------------------------------------------
# the run alone


def _run_checks(
    run: pl.DataFrame, ranked: _Rankings | None, k: int, depth: int, origin: str
) -> list[pl.DataFrame]:
    if run.height == 0:
        return [
            _empty(
                "run",
                "every qrels query would score as an empty ranking.",
                "check the file or the filter that produced the run.",
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
        null_scores_example=_first(score.is_null()),
        nan=nan.sum(),
        nan_example=_first(nan, "score"),
        infinite=infinite.sum(),
        inf=(infinite & (score > 0)).sum(),
        neg_inf=(infinite & (score < 0)).sum(),
        infinite_example=_first(infinite, "score"),
    )
    found = [
        _emit(
            rows.filter(pl.col("null_ids") > 0),
            "null_ids",
            "run",
            count=pl.col("null_ids"),
            example=pl.col("null_ids_example"),
            message=pl.format(
                "{} has {} with a null run_id, query_id or doc_id (NaN in pandas "
                "becomes null); evaluate() rejects them.",
                _run_name(),
                _plural(pl.col("null_ids"), "row", "rows"),
            ),
            fix="drop them first: run.drop_nulls(['query_id', 'doc_id']).",
        ),
        _emit(
            rows.filter(pl.col("null_scores") > 0),
            "null_scores",
            "run",
            count=pl.col("null_scores"),
            example=pl.col("null_scores_example"),
            message=pl.format(
                "{} has {} that are null or not a number; evaluate() rejects them.",
                _run_name(),
                _plural(pl.col("null_scores"), "score", "scores"),
            ),
            fix="drop them: run.drop_nulls('score'); or give them a score below "
            "every other: run.with_columns(pl.col('score').fill_null(-1e9)).",
        ),
        _emit(
            rows.filter(pl.col("nan") > 0),
            "nan_scores",
            "run",
            count=pl.col("nan"),
            example=pl.col("nan_example"),
            message=pl.format(
                "{} has {}; evaluate() rejects them (trec_eval's order for NaN "
                "is undefined).",
                _run_name(),
                _plural(pl.col("nan"), "NaN score", "NaN scores"),
            ),
            fix="drop them: run.filter(pl.col('score').is_not_nan()); or rank them "
            "last: run.with_columns(pl.col('score').fill_nan(float('-inf'))).",
        ),
        _emit(
            rows.filter(pl.col("infinite") > 0),
            "infinite_scores",
            "run",
            count=pl.col("infinite"),
            example=pl.col("infinite_example"),
            message=pl.format(
                "{} has {} ({} inf, {} -inf): inf ranks before every other score "
                "and -inf after, ties broken by doc_id as usual.",
                _run_name(),
                _plural(pl.col("infinite"), "infinite score", "infinite scores"),
                pl.col("inf"),
                pl.col("neg_inf"),
            ),
            fix="nothing to fix if that is meant; trec_eval ranks them the same.",
        ),
        _duplicates(run),
    ]
    if ranked is not None:
        found += _ranking_checks(ranked, k, depth, origin)
    if "rank" in run.columns:
        found.append(_null_ranks(run))
    return found


def _no_repeats(frame: pl.DataFrame, keys: list[str]) -> bool:
    """Tell cheaply that no key repeats: as many distinct hashes as rows.

    False may be a hash collision; the exact count that follows decides.
    """
    hashed = pl.lit(0, dtype=pl.UInt64)
    for seed, key in enumerate(keys, start=1):
        hashed = hashed ^ pl.col(key).hash(seed)
    return bool(frame.select(hashed.n_unique() == pl.len()).item())


def _duplicates(run: pl.DataFrame) -> pl.DataFrame:
    qid, doc = pl.col("query_id"), pl.col("doc_id")
    if _no_repeats(run, ["run_id", "query_id", "doc_id"]):
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
                "query {} doc {} x{}", _quoted(qid), _quoted(doc), pl.col("n")
            )
            .head(_EXAMPLES)
            .str.join(", "),
        )
    )
    return _emit(
        repeated,
        "duplicate_docs",
        "run",
        count=pl.col("extra"),
        example=pl.col("example"),
        message=pl.format(
            "{} has {} beyond the first: {} more than once in the same ranking; "
            "evaluate() rejects such runs by default, as trec_eval does.",
            _run_name(),
            _plural(pl.col("extra"), "repeated row", "repeated rows"),
            _plural(pl.col("docs"), "document appears", "documents appear"),
        ),
        fix="evaluate(..., duplicates='first') keeps the first row of each, "
        "duplicates='max' the highest score (both warn with the count).",
    )


def _ranking_checks(
    ranked: _Rankings, k: int, depth: int, origin: str
) -> list[pl.DataFrame]:
    """Ties in the top k, short rankings, a rank column unlike the scores."""
    per_query = ranked.per_query
    short = pl.col("n") < depth
    shortest = pl.format(
        "{} ({})", _quoted(pl.col("query_id")), _plural(pl.col("n"), "doc", "docs")
    )
    per_run = (
        per_query.sort("run_id", "n", "query_id")
        .group_by("run_id", maintain_order=True)
        .agg(
            queries=pl.len(),
            tied=pl.col("tied").sum(),
            tied_example=_sample(pl.col("query_id").filter(pl.col("tied"))),
            short=short.sum(),
            short_example=shortest.filter(short).head(_EXAMPLES).str.join(", "),
            shortest=pl.col("n").min(),
        )
    )
    found = [
        _emit(
            per_run.filter(pl.col("tied") > 0),
            "tied_scores",
            "run",
            count=pl.col("tied"),
            value=pl.col("tied") / pl.col("queries"),
            example=pl.col("tied_example"),
            message=pl.format(
                "{}: {} of {} ({}) have equal scores in the top {}; ties are "
                "broken by doc_id descending (byte order), as trec_eval does, so "
                "their order depends on the ids.",
                _run_name(),
                pl.col("tied"),
                _plural(pl.col("queries"), "query", "queries"),
                _percent(pl.col("tied") / pl.col("queries")),
                pl.lit(k),
            ),
            fix="nothing to do if that rule suits you; else break the ties in the "
            "scores themselves (e.g. add a small second-stage score).",
        ),
        _emit(
            per_run.filter(pl.col("short") > 0),
            "short_rankings",
            "run",
            count=pl.col("short"),
            value=pl.col("short") / pl.col("queries"),
            example=pl.col("short_example"),
            message=pl.format(
                "{}: {} of {} ({}) return fewer than {} documents ({}), the "
                "shortest {}; the missing ranks count as non-relevant (P@k still "
                "divides by k).",
                _run_name(),
                pl.col("short"),
                _plural(pl.col("queries"), "query", "queries"),
                _percent(pl.col("short") / pl.col("queries")),
                pl.lit(depth),
                pl.lit(origin),
                pl.col("shortest"),
            ),
            fix="retrieve deeper rankings, or use cutoffs no deeper than the "
            "rankings (validate(..., metrics=[...]) checks the deepest one).",
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
        .agg(n=missing.sum(), rows=pl.len(), example=_first(missing))
        .filter(pl.col("n") > 0)
    )
    return _emit(
        per_run,
        "null_ranks",
        "run",
        count=pl.col("n"),
        value=pl.col("n") / pl.col("rows"),
        example=pl.col("example"),
        message=pl.format(
            "{} has {} whose rank is not a whole number >= 0; evaluate() ranks by "
            "score and ignores them, but rank_from='column' cannot place those "
            "documents.",
            _run_name(),
            _plural(pl.col("n"), "row", "rows"),
        ),
        fix="keep ranking by score (the default), or fix the rank column before "
        "passing rank_from='column'.",
    )


def _rank_disagreement(per_query: pl.DataFrame) -> pl.DataFrame:
    """Count queries whose rank column orders documents unlike the scores."""
    per_run = per_query.group_by("run_id").agg(
        queries=pl.len(),
        bad=pl.col("backwards").sum(),
        example=_sample(pl.col("query_id").filter(pl.col("backwards"))),
    )
    return _emit(
        per_run.filter(pl.col("bad") > 0),
        "rank_column_ignored",
        "run",
        count=pl.col("bad"),
        value=pl.col("bad") / pl.col("queries"),
        example=pl.col("example"),
        message=pl.format(
            "{}: in {} of {} the rank column orders the documents differently "
            "from the scores; evaluate() ranks by score (ties by doc_id "
            "descending), as trec_eval does, and ignores the rank column.",
            _run_name(),
            pl.col("bad"),
            _plural(pl.col("queries"), "query", "queries"),
        ),
        fix="evaluate(..., rank_from='column') ranks by the rank column instead.",
    )


# --------------------------------------------------------------------------
# the qrels alone


def _qrels_checks(qrels: pl.DataFrame, rel: int) -> list[pl.DataFrame]:
    if qrels.height == 0:
        return [
            _empty(
                "qrels",
                "there is nothing to evaluate against (evaluate() raises).",
                "check the file or the filter that produced the qrels.",
            )
        ]
    qid, doc, grade = pl.col("query_id"), pl.col("doc_id"), pl.col("relevance")
    fractional = grade.is_not_null() & ~(grade.is_finite() & (grade == grade.floor()))
    negative = grade.is_not_null() & (grade < 0)
    totals = qrels.select(
        run_id=pl.lit(None, dtype=pl.String),
        null_ids=pl.any_horizontal(qid.is_null(), doc.is_null()).sum(),
        null_ids_example=pl.format(
            "query_id: {}, doc_id: {}", qid.null_count(), doc.null_count()
        ),
        null_grades=grade.null_count(),
        null_grades_example=_first(grade.is_null()),
        fractional=fractional.sum(),
        fractional_example=_first(fractional, "relevance"),
        negative=negative.sum(),
        rows=pl.len(),
    )
    levels = (
        qrels.filter(negative)
        .group_by("relevance")
        .agg(n=pl.len())
        .sort("relevance")
        .select(
            pl.format("{} ({})", pl.col("relevance").cast(pl.Int64), pl.col("n"))
            .str.join(", ")
            .alias("levels")
        )
    )
    totals = totals.with_columns(
        negative_example=pl.lit(levels["levels"].item() if levels.height else None)
    )
    return [
        _emit(
            totals.filter(pl.col("null_ids") > 0),
            "null_ids",
            "qrels",
            count=pl.col("null_ids"),
            example=pl.col("null_ids_example"),
            message=pl.format(
                "the qrels have {} with a null query_id or doc_id; evaluate() "
                "rejects them.",
                _plural(pl.col("null_ids"), "row", "rows"),
            ),
            fix="drop them first: qrels.drop_nulls(['query_id', 'doc_id']).",
            per_run=False,
        ),
        _emit(
            totals.filter(pl.col("null_grades") > 0),
            "null_grades",
            "qrels",
            count=pl.col("null_grades"),
            example=pl.col("null_grades_example"),
            message=pl.format(
                "the qrels have {} that are null or not a number; evaluate() "
                "rejects them.",
                _plural(pl.col("null_grades"), "grade", "grades"),
            ),
            fix="drop them (qrels.drop_nulls('relevance')) or give them a grade.",
            per_run=False,
        ),
        _emit(
            totals.filter(pl.col("fractional") > 0),
            "non_integer_grades",
            "qrels",
            count=pl.col("fractional"),
            example=pl.col("fractional_example"),
            message=pl.format(
                "the qrels have {} that are not whole numbers; relevance is an "
                "integer grade and evaluate() rejects them (trec_eval would "
                "silently truncate 1.7 to 1).",
                _plural(pl.col("fractional"), "grade", "grades"),
            ),
            fix="round or map them first: "
            "qrels.with_columns(pl.col('relevance').round().cast(pl.Int32)).",
            per_run=False,
        ),
        _duplicate_judgments(qrels),
        _emit(
            totals.filter(pl.col("negative") > 0),
            "negative_grades",
            "qrels",
            count=pl.col("negative"),
            value=pl.col("negative") / pl.col("rows"),
            example=pl.col("negative_example"),
            message=pl.format(
                "{} of {} judgments have a negative grade: trec_eval's 'in the "
                "pool, not judged'. They count as non-relevant and as unjudged "
                "(Judged@k, Bpref and infAP skip them).",
                pl.col("negative"),
                pl.col("rows"),
            ),
            fix="nothing to do if that is what they mean; to make them judged "
            "non-relevant: qrels.with_columns(pl.col('relevance').clip(0)).",
            per_run=False,
        ),
        _no_relevant(qrels, rel),
    ]


def _duplicate_judgments(qrels: pl.DataFrame) -> pl.DataFrame:
    qid, doc = pl.col("query_id"), pl.col("doc_id")
    if _no_repeats(qrels, ["query_id", "doc_id"]):
        qrels = qrels.clear()
    repeated = (
        qrels.group_by("query_id", "doc_id")
        .agg(n=pl.len(), grades=pl.col("relevance").n_unique())
        .filter(pl.col("n") > 1)
        .sort("query_id", "doc_id")
        .select(
            run_id=pl.lit(None, dtype=pl.String),
            extra=(pl.col("n") - 1).sum(),
            pairs=pl.len(),
            conflicting=(pl.col("grades") > 1).sum(),
            example=pl.format(
                "query {} doc {} x{}", _quoted(qid), _quoted(doc), pl.col("n")
            )
            .head(_EXAMPLES)
            .str.join(", "),
        )
        .filter(pl.col("extra") > 0)
    )
    return _emit(
        repeated,
        "duplicate_judgments",
        "qrels",
        count=pl.col("extra"),
        example=pl.col("example"),
        message=pl.format(
            "the qrels have {} beyond the first: {} judged more than once for "
            "the same query ({} with different grades); evaluate() rejects "
            "them, as trec_eval does ('duplicate docs').",
            _plural(pl.col("extra"), "repeated row", "repeated rows"),
            _plural(pl.col("pairs"), "document", "documents"),
            pl.col("conflicting"),
        ),
        fix="keep one grade per document: qrels.unique(['query_id', 'doc_id'], "
        "keep='last'), or the highest: qrels.group_by('query_id', 'doc_id')"
        ".agg(pl.col('relevance').max()).",
        per_run=False,
    )


def _no_relevant(qrels: pl.DataFrame, rel: int) -> pl.DataFrame:
    best = (
        qrels.filter(pl.col("query_id").is_not_null())
        .group_by("query_id")
        .agg(best=pl.col("relevance").max())
    )
    lacking = pl.col("best").is_null() | (pl.col("best") < float(rel))
    found = best.select(
        run_id=pl.lit(None, dtype=pl.String),
        queries=pl.len(),
        lacking=lacking.sum(),
        example=_sample(pl.col("query_id").filter(lacking)),
    ).filter(pl.col("lacking") > 0)
    return _emit(
        found,
        "no_relevant",
        "qrels",
        count=pl.col("lacking"),
        value=pl.col("lacking") / pl.col("queries"),
        example=pl.col("example"),
        message=pl.format(
            "{} of {} qrels queries have no relevant document (no grade >= {}); "
            "every run scores 0 on them in most metrics, which lowers every mean "
            "alike (trec_eval keeps them too).",
            pl.col("lacking"),
            pl.col("queries"),
            pl.lit(str(rel)),
        ),
        fix="keep them to match trec_eval, or leave them out of the qrels: "
        f"qrels.filter((pl.col('relevance') >= {rel}).any().over('query_id')).",
        per_run=False,
    )


# --------------------------------------------------------------------------
# run against qrels


def _pair_checks(
    r: Lenient, q: Lenient, ranked: _Rankings, k: int, deep: int
) -> list[pl.DataFrame]:
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
                only_run=pl.len(), only_run_example=_sample(pl.col("query_id"))
            ),
            on="run_id",
            how="left",
            nulls_equal=True,
        )
        .join(
            only_qrels.group_by("run_id").agg(
                only_qrels=pl.len(), only_qrels_example=_sample(pl.col("query_id"))
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
    qrels_sample = judged_q.select(_sample(pl.col("query_id"))).item()
    disjoint = per_run.filter(pl.col("shared") == 0)
    overlapping = per_run.filter(pl.col("shared") > 0)
    found = [
        _emit(
            disjoint,
            "no_shared_queries",
            "run+qrels",
            count=pl.col("queries"),
            example=pl.format(
                "run: {}; qrels: {}", pl.col("only_run_example"), pl.lit(qrels_sample)
            ),
            message=pl.format(
                "{} shares no query id with the qrels ({} in the run, {} in the "
                "qrels): every qrels query would score as missing.",
                _run_name(),
                pl.col("queries"),
                pl.lit(n_judged),
            ),
            fix="check the query id column of each side (columns=...) and "
            "zero padding or prefixes in the ids.",
        ),
        _emit(
            overlapping.filter(pl.col("only_qrels") > 0),
            "queries_only_in_qrels",
            "run+qrels",
            count=pl.col("only_qrels"),
            value=pl.col("only_qrels") / pl.lit(n_judged),
            example=pl.col("only_qrels_example"),
            message=pl.format(
                "{} did not answer {} of {} qrels queries; evaluate() scores them "
                "as empty rankings by default (missing='zero', trec_eval -c) and "
                "says so in a warning.",
                _run_name(),
                pl.col("only_qrels"),
                pl.lit(n_judged),
            ),
            fix="evaluate(..., missing='skip') leaves them out (trec_eval without "
            "-c), missing='error' rejects the run.",
        ),
        _emit(
            overlapping.filter(pl.col("only_run") > 0),
            "queries_only_in_run",
            "run+qrels",
            count=pl.col("only_run"),
            value=pl.col("only_run") / pl.col("queries"),
            example=pl.col("only_run_example"),
            message=pl.format(
                "{} answers {} without judgments (of {}); evaluate() ignores them "
                "and says so in a warning.",
                _run_name(),
                _plural(pl.col("only_run"), "query", "queries"),
                pl.col("queries"),
            ),
            fix="judge them, or filter the run first: "
            "run.filter(pl.col('query_id').is_in(qrels['query_id'].implode())).",
        ),
        _query_id_format(only_run, only_qrels),
        _doc_id_format(ranked.top, qrels, judged_q, deep),
        *_id_dtypes(r, q),
        _unjudged(ranked.top, qrels, judged_q, k),
    ]
    return found


def _id_format_finding(pairs: pl.DataFrame, what: str, where: str) -> pl.DataFrame:
    """``pairs``: run_id, the run's id (``ours``) and the qrels' (``theirs``)."""
    per_run = (
        pairs.unique()
        .sort("run_id", "ours", "theirs")
        .group_by("run_id", maintain_order=True)
        .agg(
            n=pl.col("ours").n_unique(),
            example=pl.format(
                "{} ~ {}", _quoted(pl.col("ours")), _quoted(pl.col("theirs"))
            )
            .head(_EXAMPLES)
            .str.join(", "),
        )
    )
    return _emit(
        per_run,
        "id_format",
        "run+qrels",
        count=pl.col("n"),
        example=pl.col("example"),
        message=pl.format(
            "{}: {} from a qrels id only by zero padding, case or surrounding "
            "whitespace, e.g. {}: such ids do not match, so {}.",
            _run_name(),
            _plural(pl.col("n"), f"{what} id differs", f"{what} ids differ"),
            pl.col("example").str.split(", ").list.first(),
            pl.lit(where),
        ),
        fix=f"make the {what} ids identical on both sides first, e.g. "
        f"pl.col('{what}_id').str.strip_chars().str.to_lowercase(), or "
        "strip the padding: .str.replace(r'^0+(\\d)', '${1}').",
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
    return _id_format_finding(
        pairs, "query", "these queries count as missing from the run"
    )


def _doc_id_format(
    top: pl.DataFrame, qrels: pl.DataFrame, judged_q: pl.DataFrame, deep: int
) -> pl.DataFrame:
    """Find top-``deep`` documents unjudged only for the spelling of their id."""
    key, coarse = "__ireval_norm", "__ireval_coarse"
    judged = qrels.select("query_id", "doc_id").drop_nulls()
    unjudged = (
        top.drop_nulls("doc_id")
        .filter(pl.col(_POS) <= deep)
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
    return _id_format_finding(
        pairs, "doc", "the run's documents count as unjudged and non-relevant"
    )


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
            _emit(
                pl.DataFrame({"n": [None]}, schema={"n": pl.Int64}),
                "id_dtypes",
                "run+qrels",
                count=pl.col("n"),
                example=pl.lit(f"{column}: {ours} (run), {theirs} (qrels)"),
                message=pl.lit(
                    f"the run's {column} is {ours} and the qrels' is {theirs}; "
                    f"both are compared as text, integers written in decimal "
                    f"(7 -> '7'), so a zero-padded string ('007') matches no "
                    f"integer id."
                ),
                fix=f"read both {column} columns as strings, or cast the integers "
                f"with the same padding.",
                per_run=False,
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
        top.filter(pl.col(_POS) <= k)
        .join(judged_q, on="query_id", how="semi")
        .join(grades, on=["query_id", "doc_id"], how="left")
        # a document judged twice (an error reported apart) counts once
        .group_by("run_id", "query_id", "doc_id", _POS)
        .agg(pl.col("grade").max())
    )
    unjudged = pl.col("grade").is_null() | (pl.col("grade") < 0)
    per_query = top.group_by("run_id", "query_id").agg(
        n=pl.len(), unjudged=unjudged.sum()
    )
    share = pl.col("unjudged") / pl.col("n")
    worst = pl.format(
        "{} ({} of {})", _quoted(pl.col("query_id")), pl.col("unjudged"), pl.col("n")
    )
    per_run = (
        per_query.with_columns(share.alias("share"))
        .sort("run_id", "share", "query_id", descending=[False, True, False])
        .group_by("run_id", maintain_order=True)
        .agg(
            unjudged=pl.col("unjudged").sum(),
            share=pl.col("share").mean(),
            queries=pl.len(),
            example=worst.filter(pl.col("unjudged") > 0).head(_EXAMPLES).str.join(", "),
        )
        .filter(pl.col("unjudged") > 0)
    )
    return _emit(
        per_run,
        "unjudged_at_k",
        "run+qrels",
        count=pl.col("unjudged"),
        value=pl.col("share"),
        example=pl.col("example"),
        severity=pl.when(pl.col("share") > UNJUDGED_WARNING)
        .then(pl.lit("warning"))
        .otherwise(pl.lit("info")),
        message=pl.format(
            "{}: on average {} of the top {} documents are unjudged (not in the "
            "qrels, or graded below 0; 1 - Judged@{}), over {}; {} unjudged in "
            "all. Metrics count them as non-relevant.",
            _run_name(),
            _percent(pl.col("share")),
            pl.lit(k),
            pl.lit(k),
            _plural(pl.col("queries"), "judged query", "judged queries"),
            pl.col("unjudged"),
        ),
        fix="judge more documents, or use measures that skip unjudged ones: "
        f"Bpref, infAP, nDCG(judged_only=true)@{k}.",
    )


# --------------------------------------------------------------------------
# the query table


def _metadata_checks(
    meta: pl.DataFrame, reference: pl.DataFrame, against: str
) -> list[pl.DataFrame]:
    if meta.height == 0:
        return [
            _emit(
                pl.DataFrame({"n": [0]}),
                "empty_input",
                "queries",
                count=pl.col("n"),
                severity=pl.lit("warning"),
                message=pl.lit(
                    "the query table has no rows: every slice attribute would be null."
                ),
                fix="check the file or the filter that produced the query table.",
                per_run=False,
            )
        ]
    qid = pl.col("query_id")
    totals = meta.select(
        null_ids=qid.null_count(),
        extra=pl.len() - qid.drop_nulls().n_unique() - qid.null_count(),
        example=_sample(qid.filter(qid.is_duplicated())),
    )
    evaluated = reference.select("query_id").drop_nulls().unique()
    described = meta.select("query_id").drop_nulls().unique()
    without = evaluated.join(described, on="query_id", how="anti")
    unused = described.join(evaluated, on="query_id", how="anti")
    sides = f"queries+{against}"
    return [
        _emit(
            totals.filter(pl.col("null_ids") > 0),
            "null_ids",
            "queries",
            count=pl.col("null_ids"),
            message=pl.format(
                "the query table has {} with a null query_id; evaluate() rejects them.",
                _plural(pl.col("null_ids"), "row", "rows"),
            ),
            fix="drop them first: queries.drop_nulls('query_id').",
            per_run=False,
        ),
        _emit(
            totals.filter(pl.col("extra") > 0),
            "duplicate_queries",
            "queries",
            count=pl.col("extra"),
            example=pl.col("example"),
            message=pl.format(
                "the query table has {} for a query_id already listed; each query "
                "needs one row and evaluate() rejects the table.",
                _plural(pl.col("extra"), "extra row", "extra rows"),
            ),
            fix="keep one row per query: queries.unique('query_id', keep='first').",
            per_run=False,
        ),
        _emit(
            without.select(n=pl.len(), example=_sample(qid)).filter(pl.col("n") > 0),
            "queries_without_metadata",
            sides,
            count=pl.col("n"),
            value=pl.col("n") / pl.lit(evaluated.height),
            example=pl.col("example"),
            message=pl.format(
                "{} of {} {} queries have no row in the query table: their "
                "attributes are null, so summarize(by=...) puts them in a null "
                "slice.",
                pl.col("n"),
                pl.lit(evaluated.height),
                pl.lit(against),
            ),
            fix="add rows for them to the query table.",
            per_run=False,
        ),
        _emit(
            unused.select(n=pl.len(), example=_sample(qid)).filter(pl.col("n") > 0),
            "queries_only_in_metadata",
            sides,
            count=pl.col("n"),
            value=pl.col("n") / pl.lit(described.height),
            example=pl.col("example"),
            message=pl.format(
                "{} of {} queries of the query table are not in the {}; they are "
                "never evaluated (no effect on results).",
                pl.col("n"),
                pl.lit(described.height),
                pl.lit(against),
            ),
            fix="nothing to do.",
            per_run=False,
        ),
    ]
