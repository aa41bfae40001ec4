"""What a metric builder returns: expressions for each stage of the engine.

The engine (``ireval_df._engine``) runs these stages, each once for all
metrics of a call:

``qrels_row``
    columns on qrels rows (``query_id, doc_id, relevance, label``); windows
    run ``over("query_id")``.
``qrels``
    one ``group_by("query_id").agg`` over the qrels: R, the ideal gains, ...
``ideal``
    columns of an ideal ranking table (judged documents with positive gain,
    one table per gain function), joined onto the run by position.
``row``
    columns on ranked run rows (``run_id, query_id, doc_id, score, rank,
    label``); rank-dependent windows use :func:`per_ranking`. Unless a
    metric of the call is registered ``full_sort=True``, only the rows of
    documents in the qrels are there (each with its true rank): a row or agg
    expression must then give the same result without the documents absent
    from the qrels (label -1), and the ranking's size is the column
    ``N_RET``, never ``pl.len()``.
``agg``
    one ``group_by("run_id", "query_id").agg`` over the ranked rows.
``value``
    the final per-query expression over agg and qrels columns.

Intermediates that several metrics share are declared with :func:`define`
under a name that encodes their parameters, so each is computed once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

import polars as pl

__all__ = [
    "KEYS",
    "RANKING",
    "N_RET",
    "Def",
    "Plan",
    "Stage",
    "define",
    "ordered_sum",
    "per_ranking",
]

Stage = Literal["qrels_row", "qrels", "ideal", "row", "agg"]

#: The columns that identify one ranking.
KEYS = ("run_id", "query_id")
#: A 64-bit id of each ranking (run_id, query_id), unique within one call:
#: the engine groups and partitions by it, not by the two strings.
RANKING = "__ireval_ranking"

#: Per-query column the engine provides: the number of documents in the
#: ranking (after ``depth`` and ``judged_only``).
N_RET = "__ireval_nret"


@dataclass(frozen=True)
class Def:
    """One named intermediate column and the stage computing it.

    ``fill`` is the value an ``agg`` column takes for a query the run did not
    answer (an empty ranking). ``table`` names the ideal table of an
    ``ideal`` column.
    """

    name: str
    stage: Stage
    expr: pl.Expr
    fill: float | None = 0.0
    table: str | None = None


#: Shared intermediates, keyed by name; a name fully determines its expression.
DEFS: dict[str, Def] = {}


def define(
    name: str,
    stage: Stage,
    expr: pl.Expr,
    *,
    fill: float | None = 0.0,
    table: str | None = None,
) -> pl.Expr:
    """Declare a shared intermediate and return ``pl.col(name)``.

    Examples
    --------
    >>> define("__ireval_doc_example", "qrels", pl.len()).meta.output_name()
    '__ireval_doc_example'
    """
    if name not in DEFS:
        DEFS[name] = Def(name, stage, expr, fill, table)
    return pl.col(name)


def per_ranking(expr: pl.Expr) -> pl.Expr:
    """Evaluate ``expr`` within each ranking, in rank order (explicitly).

    Examples
    --------
    >>> rows = pl.DataFrame({RANKING: [7] * 3, "rank": [2, 1, 3], "x": [1, 10, 100]})
    >>> rows.select(per_ranking(pl.col("x").cum_sum())).to_series().to_list()
    [11, 10, 111]
    """
    return expr.over(RANKING, order_by="rank")


def ordered_sum(
    term: pl.Expr, *, where: pl.Expr | None = None, by: str | pl.Expr = "rank"
) -> pl.Expr:
    """Sum ``term`` (where ``where`` holds) in rank order, as trec_eval's loops do.

    A plain ``sum()`` in a parallel group-by adds the rows in whatever order
    the threads meet them, so the last bit of a result could change from one
    call to the next, or with the input's row order. An ordered cumulative
    sum does not; skipped rows add an exact 0.

    The running sum is a window, declared (under a name taken from its
    expression) for the ``row`` stage, per ranking in rank order, or with an
    ideal rank as ``by``, for the ``qrels_row`` stage, per query in that
    order. The aggregation returned reads it at the last position. Windows
    sort each group once for every such sum; a sort inside the aggregation
    cost about twice as much.

    Examples
    --------
    >>> rows = pl.DataFrame({RANKING: [7] * 3, "rank": [3, 1, 2], "x": [0.1, 0.2, 0.3]})
    >>> total = ordered_sum(pl.col("x"), where=pl.col("rank") < 3)
    >>> running = DEFS[total.meta.root_names()[0]]
    >>> running.stage
    'row'
    >>> rows = rows.with_columns(running.expr.alias(running.name))
    >>> rows.group_by(RANKING).agg(total).item(0, 1)
    0.5
    """
    if where is not None:
        term = pl.when(where).then(term).otherwise(pl.lit(0.0))
    term = term.cast(pl.Float64).fill_null(0.0)
    stage: Stage
    if isinstance(by, str):
        order = pl.col(by)
        stage, running = "row", term.cum_sum().over(RANKING, order_by=by)
    else:
        order = by
        stage, running = "qrels_row", term.cum_sum().over("query_id", order_by=by)
    digest = hashlib.blake2b(running.meta.serialize(), digest_size=8).hexdigest()
    total = define(f"__ireval_cumsum_{digest}", stage, running)
    return total.get(order.arg_max()).fill_null(0.0)


class Plan:
    """The expressions one metric needs, by stage (see the module doc).

    Parameters
    ----------
    value : polars.Expr
        The per-query value, over ``agg`` and ``qrels`` columns.
    row : dict, optional
        Row-stage columns private to this metric.
    per_query : dict, optional
        Agg-stage columns private to this metric.
    fills : dict, optional
        Value of an agg column for an empty ranking (default 0).
    """

    __slots__ = ("defs", "value")

    def __init__(
        self,
        *,
        value: pl.Expr,
        row: dict[str, pl.Expr] | None = None,
        per_query: dict[str, pl.Expr] | None = None,
        fills: dict[str, float | None] | None = None,
    ) -> None:
        fills = fills or {}
        defs = [Def(name, "row", expr) for name, expr in (row or {}).items()]
        defs += [
            Def(name, "agg", expr, fills.get(name, 0.0))
            for name, expr in (per_query or {}).items()
        ]
        self.defs: tuple[Def, ...] = tuple(defs)
        self.value = value
