"""validate(): diagnostics before evaluating: what is wrong with a run, qrels or query table.

:func:`validate` reads its inputs leniently and returns one row per finding
(duplicates, NaN scores, ids that differ only by zero padding, one-sided
queries, unjudged documents, short rankings, ties ...) instead of raising on
the first problem. ``ireval-df validate`` prints the same table.

The package, by job:

- this module: :func:`validate`, the entry point: its options, the lenient
  reading (:func:`ireval_df.schema.coerce.as_lenient`), the collation of the
  findings and the output frame;
- :mod:`.catalog`: every check as one declarative row (severity, what it
  looks for, each finding's message and fix), the source of :data:`CHECKS`,
  :data:`COLUMNS` and of all the text;
- :mod:`.run`, :mod:`.qrels`, :mod:`.queries`, :mod:`.pairs` (run against
  qrels): one module per input, each a function from frames to findings;
- :mod:`.ranking`: the rankings the run checks need, built as evaluate()
  builds them; :mod:`.expressions`: the quoting and counting they share.

Every check is a handful of vectorised polars aggregations that yields at
most one row per run (or one row for the qrels or the query table); messages
are built with polars string expressions from the aggregates, never by
looping over data rows. Thresholds evaluate() applies (the unjudged share it
warns at, its tie rule) come from :mod:`ireval_df.offline.conventions`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, get_args

import polars as pl

from ireval_df._utils.frames import is_pandas
from ireval_df.diagnostics.validation.catalog import CHECKS, COLUMNS, Severity
from ireval_df.diagnostics.validation.pairs import pairs_findings
from ireval_df.diagnostics.validation.qrels import qrels_findings
from ireval_df.diagnostics.validation.queries import queries_findings
from ireval_df.diagnostics.validation.ranking import rankings
from ireval_df.diagnostics.validation.run import run_findings
from ireval_df.errors import OptionError
from ireval_df.measures import parse_metrics
from ireval_df.offline.conventions import UNJUDGED_AT
from ireval_df.schema.intents import intent_labels
from ireval_df.schema.lenient import Lenient, as_lenient

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ireval_df.measures import Metric

__all__ = ["CHECKS", "COLUMNS", "validate"]

#: Errors first, then warnings, then information.
_SEVERITY_ORDER = {name: i for i, name in enumerate(get_args(Severity))}
#: Depths beyond this are all the same (and fit in Int64).
_DEEPEST = 2**40


def validate(
    run: Any = None,
    qrels: Any = None,
    queries: Any = None,
    *,
    metrics: str | Metric | Iterable[str | Metric] | None = None,
    k: int = UNJUDGED_AT,
    depth: int | None = None,
    rel: int = 1,
    columns: Mapping[str, str] | None = None,
    intents: bool = False,
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
    intents : bool, default False
        Read TREC text qrels as diversity qrels (``qid subtopic docno
        relevance``), as :func:`ireval_df.read_qrels` does with
        ``intents=True``. Qrels with an ``intent`` (or ``subtopic``) column
        are recognised whatever this says: a document may then be judged
        once per intent (``duplicate_judgments`` looks for repeats of a
        query, intent and document), and the checks against the run see
        each document's highest grade over its intents, as
        :func:`~ireval_df.evaluate` does.

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
    specs = parse_metrics(metrics, family="offline") if metrics is not None else []
    deepest, origin = _depth(depth, specs, k)

    r = as_lenient(run, "run", columns=columns) if run is not None else None
    q = as_lenient(qrels, "qrels") if qrels is not None else None
    judged = None  # the qrels rows with their intents, when they have some
    labels = intent_labels(qrels, intents=intents) if q is not None else None
    if q is not None and labels is not None and labels.len() == q.frame.height:
        judged = q.frame.with_columns(labels)
        best = q.frame.group_by("query_id", "doc_id", maintain_order=True).agg(
            pl.col("relevance").max()
        )
        q = Lenient(best.select(q.frame.columns), q.dtypes)
    m = as_lenient(queries, "queries") if queries is not None else None

    parts: list[pl.DataFrame] = []
    ranked = None
    if r is not None and r.frame.height:
        ranked = rankings(r.frame, k, max(k, deepest))
    if r is not None:
        parts += run_findings(r.frame, ranked, k, deepest, origin)
    if q is not None:
        parts += qrels_findings(judged if judged is not None else q.frame, rel)
    if r is not None and q is not None and ranked is not None and q.frame.height:
        parts += pairs_findings(r, q, ranked, k, max(k, deepest))
    if m is not None:
        against, reference = ("qrels", q) if q is not None else ("run", r)
        if reference is not None:  # always: run or qrels is given
            parts += queries_findings(m.frame, reference.frame, against)
    return _output(_collate(parts), run if run is not None else qrels)


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
