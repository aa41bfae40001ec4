"""Every check of :func:`validate` as one declarative row, and its findings' text.

A :class:`Row` names a check, its default severity and what it looks for
(:data:`CHECKS` is read off the rows), and, for each input it is found in,
a :class:`Text`: the message (what was found and what it does to an
evaluation) and the fix. The check modules (:mod:`.run`, :mod:`.qrels`,
:mod:`.pairs`, :mod:`.queries`) only compute aggregates and hand them to
:func:`emit`, which fills the text in; no message is written anywhere else.

A message is a template whose fields :func:`emit` fills from the aggregate
frame (polars expressions) or from the options (plain values):

- ``{name}``: the value as text;
- ``{name:one|many}``: a count and its noun, ``1 row`` / ``3 rows``;
- ``{name:%}``: a share as a percentage, ``55.8%``;
- ``{run}``: always given for a per-run finding, ``run 'bm25'``.

A fix is the same template filled with the plain values only; ``{{`` and
``}}`` stand for literal braces in both.

The thresholds evaluate() applies come from :mod:`ireval_df.offline.conventions`,
so that a warning here means the same as a warning there.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import polars as pl

from ireval_df.diagnostics.validation.expressions import percent, plural, run_name
from ireval_df.offline.conventions import TIE_BREAK, UNJUDGED_WARN

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["CHECKS", "COLUMNS", "ROWS", "Check", "Row", "Severity", "Text", "emit"]

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Check:
    """One diagnostic: its default severity and what it looks for."""

    severity: Severity
    summary: str


@dataclass(frozen=True)
class Text:
    """How a finding of one check in one input reads.

    Attributes
    ----------
    message : str
        Template (see the module) of what was found and its consequence.
    fix : str
        Template of the option or code that addresses it.
    input : str, optional
        The ``input`` column; a template too. Default: the key of this text
        in :attr:`Row.texts`.
    severity : {"error", "warning", "info"}, optional
        When this input's findings differ from the check's severity.
    """

    message: str
    fix: str
    input: str | None = None
    severity: Severity | None = None


@dataclass(frozen=True)
class Row:
    """One check: what it is, how bad, and how its findings read per input.

    Attributes
    ----------
    name : str
        The ``check`` column, a stable identifier.
    severity : {"error", "warning", "info"}
        Default severity.
    summary : str
        What the check looks for (:data:`CHECKS`).
    texts : mapping of str to Text
        The findings' text by input (``"run"``, ``"qrels"``, ``"queries"``,
        ``"run+qrels"``), or by kind of id for ``id_format``.
    info_up_to : float, optional
        A finding whose ``value`` is at most this is information, not the
        default severity.
    """

    name: str
    severity: Severity
    summary: str
    texts: Mapping[str, Text]
    info_up_to: float | None = None


def _empty(kind: str, consequence: str, severity: Severity | None = None) -> Text:
    return Text(
        f"the {kind} has no rows: {consequence}",
        f"check the file or the filter that produced the {kind}.",
        severity=severity,
    )


def _id_format(what: str, consequence: str) -> Text:
    return Text(
        f"{{run}}: {{n:{what} id differs|{what} ids differ}} from a qrels id only "
        f"by zero padding, case or surrounding whitespace, e.g. {{first}}: such "
        f"ids do not match, so {consequence}.",
        f"make the {what} ids identical on both sides first, e.g. "
        f"pl.col('{what}_id').str.strip_chars().str.to_lowercase(), or "
        "strip the padding: .str.replace(r'^0+(\\d)', '${{1}}').",
        input="run+qrels",
    )


#: Every check, in the order findings are listed within a severity.
ROWS: tuple[Row, ...] = (
    Row(
        "empty_input",
        "error",
        "an input has no rows",
        {
            "run": _empty("run", "every qrels query would score as an empty ranking."),
            "qrels": _empty(
                "qrels", "there is nothing to evaluate against (evaluate() raises)."
            ),
            "queries": _empty(
                "query table", "every slice attribute would be null.", "warning"
            ),
        },
    ),
    Row(
        "null_ids",
        "error",
        "rows with a null run_id, query_id or doc_id",
        {
            "run": Text(
                "{run} has {n:row|rows} with a null run_id, query_id or doc_id (NaN "
                "in pandas becomes null); evaluate() rejects them.",
                "drop them first: run.drop_nulls(['query_id', 'doc_id']).",
            ),
            "qrels": Text(
                "the qrels have {n:row|rows} with a null query_id or doc_id; "
                "evaluate() rejects them.",
                "drop them first: qrels.drop_nulls(['query_id', 'doc_id']).",
            ),
            "queries": Text(
                "the query table has {n:row|rows} with a null query_id; evaluate() "
                "rejects them.",
                "drop them first: queries.drop_nulls('query_id').",
            ),
        },
    ),
    Row(
        "null_scores",
        "error",
        "scores that are null or not a number",
        {
            "run": Text(
                "{run} has {n:score|scores} that are null or not a number; "
                "evaluate() rejects them.",
                "drop them: run.drop_nulls('score'); or give them a score below "
                "every other: run.with_columns(pl.col('score').fill_null(-1e9)).",
            )
        },
    ),
    Row(
        "nan_scores",
        "error",
        "NaN scores",
        {
            "run": Text(
                "{run} has {n:NaN score|NaN scores}; evaluate() rejects them "
                "(trec_eval's order for NaN is undefined).",
                "drop them: run.filter(pl.col('score').is_not_nan()); or rank them "
                "last: run.with_columns(pl.col('score').fill_nan(float('-inf'))).",
            )
        },
    ),
    Row(
        "duplicate_docs",
        "error",
        "a document twice in one ranking",
        {
            "run": Text(
                "{run} has {extra:repeated row|repeated rows} beyond the first: "
                "{docs:document appears|documents appear} more than once in the "
                "same ranking; evaluate() rejects such runs by default, as "
                "trec_eval does.",
                "evaluate(..., duplicates='first') keeps the first row of each, "
                "duplicates='max' the highest score (both warn with the count).",
            )
        },
    ),
    Row(
        "null_grades",
        "error",
        "grades that are null or not a number",
        {
            "qrels": Text(
                "the qrels have {n:grade|grades} that are null or not a number; "
                "evaluate() rejects them.",
                "drop them (qrels.drop_nulls('relevance')) or give them a grade.",
            )
        },
    ),
    Row(
        "non_integer_grades",
        "error",
        "grades that are not whole numbers",
        {
            "qrels": Text(
                "the qrels have {n:grade|grades} that are not whole numbers; "
                "relevance is an integer grade and evaluate() rejects them "
                "(trec_eval would silently truncate 1.7 to 1).",
                "round or map them first: "
                "qrels.with_columns(pl.col('relevance').round().cast(pl.Int32)).",
            )
        },
    ),
    Row(
        "duplicate_judgments",
        "error",
        "a document judged twice for one query",
        {
            "qrels": Text(
                "the qrels have {extra:repeated row|repeated rows} beyond the "
                "first: {pairs:document|documents} judged more than once for the "
                "same query ({conflicting} with different grades); evaluate() "
                "rejects them, as trec_eval does ('duplicate docs').",
                "keep one grade per document: qrels.unique(['query_id', 'doc_id'], "
                "keep='last'), or the highest: qrels.group_by('query_id', 'doc_id')"
                ".agg(pl.col('relevance').max()); diversity qrels, with the intent "
                "in the second field of each line, are read with "
                "validate(..., intents=True) (ireval-df validate --qrels-intents).",
            ),
            # qrels with an intent column: a document may be judged once per
            # intent of its query
            "intents": Text(
                "the qrels have {extra:repeated row|repeated rows} beyond the "
                "first: {pairs:document|documents} judged more than once for the "
                "same intent of a query ({conflicting} with different grades); "
                "evaluate() rejects them (a document may be judged once for each "
                "intent).",
                "keep one grade per document and intent: qrels.unique(['query_id', "
                "'intent', 'doc_id'], keep='last').",
                input="qrels",
            ),
        },
    ),
    Row(
        "duplicate_queries",
        "error",
        "a query twice in the query table",
        {
            "queries": Text(
                "the query table has {extra:extra row|extra rows} for a query_id "
                "already listed; each query needs one row and evaluate() rejects "
                "the table.",
                "keep one row per query: queries.unique('query_id', keep='first').",
            )
        },
    ),
    Row(
        "no_shared_queries",
        "error",
        "a run shares no query with the qrels",
        {
            "run+qrels": Text(
                "{run} shares no query id with the qrels ({queries} in the run, "
                "{judged} in the qrels): every qrels query would score as missing.",
                "check the query id column of each side (columns=...) and "
                "zero padding or prefixes in the ids.",
            )
        },
    ),
    Row(
        "id_format",
        "warning",
        "ids that differ only by zero padding, case or whitespace",
        {
            "query": _id_format("query", "these queries count as missing from the run"),
            "doc": _id_format(
                "doc", "the run's documents count as unjudged and non-relevant"
            ),
        },
    ),
    Row(
        "queries_only_in_qrels",
        "warning",
        "qrels queries a run did not answer",
        {
            "run+qrels": Text(
                "{run} did not answer {n} of {judged} qrels queries; evaluate() "
                "scores them as empty rankings by default (missing='zero', "
                "trec_eval -c) and says so in a warning.",
                "evaluate(..., missing='skip') leaves them out (trec_eval without "
                "-c), missing='error' rejects the run.",
            )
        },
    ),
    Row(
        "queries_only_in_run",
        "warning",
        "run queries without judgments",
        {
            "run+qrels": Text(
                "{run} answers {n:query|queries} without judgments (of {queries}); "
                "evaluate() ignores them and says so in a warning.",
                "judge them, or filter the run first: "
                "run.filter(pl.col('query_id').is_in(qrels['query_id'].implode())).",
            )
        },
    ),
    Row(
        "no_relevant",
        "warning",
        "qrels queries without a relevant document",
        {
            "qrels": Text(
                "{n} of {queries} qrels queries have no relevant document (no "
                "grade >= {rel}); every run scores 0 on them in most metrics, which "
                "lowers every mean alike (trec_eval keeps them too).",
                "keep them to match trec_eval, or leave them out of the qrels: "
                "qrels.filter((pl.col('relevance') >= {rel}).any().over('query_id')).",
            )
        },
    ),
    Row(
        "unjudged_at_k",
        "warning",
        f"unjudged documents in the top k (info when at most "
        f"{UNJUDGED_WARN * 100:g} %)",
        {
            "run+qrels": Text(
                "{run}: on average {share:%} of the top {k} documents are unjudged "
                "(not in the qrels, or graded below 0; 1 - Judged@{k}), over "
                "{queries:judged query|judged queries}; {n} unjudged in all. "
                "Metrics count them as non-relevant.",
                "judge more documents, or use measures that skip unjudged ones: "
                "Bpref, infAP, nDCG(judged_only=true)@{k}.",
            )
        },
        info_up_to=UNJUDGED_WARN,
    ),
    Row(
        "short_rankings",
        "warning",
        "rankings shorter than the deepest cutoff",
        {
            "run": Text(
                "{run}: {n} of {queries:query|queries} ({share:%}) return fewer "
                "than {depth} documents ({origin}), the shortest {shortest}; the "
                "missing ranks count as non-relevant (P@k still divides by k).",
                "retrieve deeper rankings, or use cutoffs no deeper than the "
                "rankings (validate(..., metrics=[...]) checks the deepest one).",
            )
        },
    ),
    Row(
        "rank_column_ignored",
        "warning",
        "a rank column that orders documents unlike the scores",
        {
            "run": Text(
                "{run}: in {n} of {queries:query|queries} the rank column orders "
                "the documents differently from the scores; evaluate() ranks by "
                "score (ties by doc_id descending), as trec_eval does, and ignores "
                "the rank column.",
                "evaluate(..., rank_from='column') ranks by the rank column instead.",
            )
        },
    ),
    Row(
        "queries_without_metadata",
        "warning",
        "evaluated queries missing from the query table",
        {
            "queries": Text(
                "{n} of {evaluated} {against} queries have no row in the query "
                "table: their attributes are null, so summarize(by=...) puts them "
                "in a null slice.",
                "add rows for them to the query table.",
                input="queries+{against}",
            )
        },
    ),
    Row(
        "null_ranks",
        "info",
        "rank column values that are not counts",
        {
            "run": Text(
                "{run} has {n:row|rows} whose rank is not a whole number >= 0; "
                "evaluate() ranks by score and ignores them, but rank_from='column' "
                "cannot place those documents.",
                "keep ranking by score (the default), or fix the rank column before "
                "passing rank_from='column'.",
            )
        },
    ),
    Row(
        "id_dtypes",
        "info",
        "run and qrels ids of different types",
        {
            "run+qrels": Text(
                "the run's {column} is {ours} and the qrels' is {theirs}; both are "
                "compared as text, integers written in decimal (7 -> '7'), so a "
                "zero-padded string ('007') matches no integer id.",
                "read both {column} columns as strings, or cast the integers with "
                "the same padding.",
            )
        },
    ),
    Row(
        "negative_grades",
        "info",
        "negative grades: pooled, not judged",
        {
            "qrels": Text(
                "{n} of {rows} judgments have a negative grade: trec_eval's 'in the "
                "pool, not judged'. They count as non-relevant and as unjudged "
                "(Judged@k, Bpref and infAP skip them).",
                "nothing to do if that is what they mean; to make them judged "
                "non-relevant: qrels.with_columns(pl.col('relevance').clip(0)).",
            )
        },
    ),
    Row(
        "infinite_scores",
        "info",
        "inf or -inf scores: ranked first or last",
        {
            "run": Text(
                "{run} has {n:infinite score|infinite scores} ({inf} inf, {neg_inf} "
                "-inf): inf ranks before every other score and -inf after, ties "
                "broken by doc_id as usual.",
                "nothing to fix if that is meant; trec_eval ranks them the same.",
            )
        },
    ),
    Row(
        "tied_scores",
        "info",
        "equal scores in the top k",
        {
            "run": Text(
                "{run}: {n} of {queries:query|queries} ({share:%}) have equal "
                "scores in the top {k}; ties are broken by "
                + TIE_BREAK
                + ", as trec_eval does, so their order depends on the ids.",
                "nothing to do if that rule suits you; else break the ties in the "
                "scores themselves (e.g. add a small second-stage score).",
            )
        },
    ),
    Row(
        "queries_only_in_metadata",
        "info",
        "query table rows never evaluated",
        {
            "queries": Text(
                "{n} of {described} queries of the query table are not in the "
                "{against}; they are never evaluated (no effect on results).",
                "nothing to do.",
                input="queries+{against}",
            )
        },
    ),
)

#: Every check, in the order findings are listed within a severity.
CHECKS: dict[str, Check] = {row.name: Check(row.severity, row.summary) for row in ROWS}

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

_BY_NAME = {row.name: row for row in ROWS}

Field = pl.Expr | str | int | None


def _fill(template: str, fields: Mapping[str, Field]) -> pl.Expr:
    """Fill a message template from expressions and plain values (module notes)."""
    parts: list[pl.Expr | str] = []
    for literal, name, spec, _ in string.Formatter().parse(template):
        if literal:
            parts.append(literal)
        if name is None:
            continue
        value = fields[name]
        if not isinstance(value, pl.Expr):
            parts.append(str(value))
        elif spec == "%":
            parts.append(percent(value))
        elif spec:
            one, many = spec.split("|")
            parts.append(plural(value, one, many))
        else:
            parts.append(value)
    # adjacent text joined, so a message of plain values is one literal
    merged: list[pl.Expr | str] = []
    for part in parts:
        if merged and isinstance(part, str) and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    exprs = [pl.lit(p, dtype=pl.String) if isinstance(p, str) else p for p in merged]
    return exprs[0] if len(exprs) == 1 else pl.concat_str(exprs, separator="")


def emit(
    frame: pl.DataFrame,
    check: str,
    where: str,
    *,
    count: pl.Expr,
    example: pl.Expr | None = None,
    value: pl.Expr | None = None,
    per_run: bool = True,
    **fields: Field,
) -> pl.DataFrame:
    """Turn the rows of an aggregate frame into findings of one check.

    Parameters
    ----------
    frame : pl.DataFrame
        One row per finding (with ``run_id`` when ``per_run``), holding the
        columns the expressions read.
    check : str
        The check's name in :data:`ROWS`.
    where : str
        The key of the finding's :class:`Text` in the check's row.
    count, example, value : pl.Expr
        The ``count``, ``example`` and ``value`` columns (the latter two
        null when not given).
    per_run : bool, default True
        Whether a finding is about one run (its ``run_id``) or about the
        qrels or the query table (null ``run_id``).
    **fields : pl.Expr, str or int
        The template's fields.

    Returns
    -------
    pl.DataFrame
        Findings, in :data:`COLUMNS`.
    """
    row = _BY_NAME[check]
    text = row.texts[where]
    if per_run:
        fields = {"run": run_name(), **fields}
    plain = {k: v for k, v in fields.items() if not isinstance(v, pl.Expr)}
    base = text.severity or row.severity
    severity = pl.lit(base, dtype=pl.String)
    if row.info_up_to is not None and value is not None:
        severity = (
            pl.when(value > row.info_up_to).then(severity).otherwise(pl.lit("info"))
        )
    return frame.select(
        pl.lit(check, dtype=pl.String).alias("check"),
        severity.alias("severity"),
        pl.lit((text.input or where).format(**plain), dtype=pl.String).alias("input"),
        (pl.col("run_id") if per_run else pl.lit(None, dtype=pl.String)).alias(
            "run_id"
        ),
        count.cast(pl.Int64).alias("count"),
        (pl.lit(None) if value is None else value).cast(pl.Float64).alias("value"),
        (pl.lit(None) if example is None else example).cast(pl.String).alias("example"),
        _fill(text.message, fields).cast(pl.String).alias("message"),
        pl.lit(text.fix.format(**plain), dtype=pl.String).alias("fix"),
    )
