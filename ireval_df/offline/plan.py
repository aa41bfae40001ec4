"""What a metric builder returns: expressions for each stage of the engine.

The engine (``ireval_df.offline.engine``) runs these stages, each once for all
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
    one ``group_by`` over the ranked rows, by each ranking's 64-bit id
    (:data:`RANKING`, one per (run_id, query_id)).
``value``
    the final per-query expression over agg and qrels columns.

The diversity measures read qrels with intents (:data:`INTENTS`) through
stages of their own, run only when a metric declares one:

``intent_qrels_row``
    columns on intent judgment rows (``query_id, doc_id, intent,
    relevance``); windows run ``over("query_id", "intent")``.
``intent_qrels``
    one ``group_by("query_id", "intent").agg`` over them: per intent.
``intent_topic``
    one ``group_by("query_id").agg`` over the per-intent columns; joined
    onto the ``qrels`` columns.
``intent_ideal``
    a greedy ideal ranking of each query's documents (table ``table``,
    ``"rel:alpha"``: :func:`ireval_df.offline.metrics.diversity.greedy_ideal`),
    ``query_id, __ireval_grank, __ireval_ggain``, aggregated per query
    (``group_by("query_id").agg``) and joined onto the ``qrels`` columns.
``intent_row``
    columns on ranked intent rows (``RANKING, query_id, doc_id, rank,
    intent, relevance`` and the per-intent columns): a judged document of
    a ranking once per intent it is judged for; windows per ranking and
    intent use :func:`per_intent`.
``intent_agg``
    one ``group_by`` of the ranked intent rows by ranking, beside ``agg``.

Intermediates that several metrics share are declared with :func:`define`
under a name that encodes their parameters, so each is computed once per
call. There is no global table of them: :func:`build_plan` runs a metric's
builder with a fresh :class:`Needs` collecting every :func:`define` it makes,
and returns a :class:`Plan` that carries them all. The engine merges the
plans' needs with ``|``, which refuses one name defined two different ways.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

import polars as pl

from ireval_df.measures import REGISTRY, family_registrar, parse_metric

if TYPE_CHECKING:
    from ireval_df.measures import Metric

T = TypeVar("T")

__all__ = [
    "KEYS",
    "INTENTS",
    "N_RET",
    "RANKING",
    "Def",
    "Needs",
    "Plan",
    "Stage",
    "build_plan",
    "define",
    "ordered_sum",
    "per_intent",
    "per_ranking",
    "register",
]

Stage = Literal[
    "qrels_row",
    "qrels",
    "ideal",
    "row",
    "agg",
    "intent_qrels_row",
    "intent_qrels",
    "intent_topic",
    "intent_ideal",
    "intent_row",
    "intent_agg",
]

#: The columns that identify one ranking.
KEYS = ("run_id", "query_id")
#: A 64-bit id of each ranking (run_id, query_id), unique within one call:
#: the engine groups and partitions by it, not by the two strings.
RANKING = "__ireval_ranking"

#: Per-query column the engine provides: the number of documents in the
#: ranking (after ``depth`` and ``judged_only``).
N_RET = "__ireval_nret"

#: Column of the qrels that carries a document's intent judgments, when the
#: qrels have intents: a list of ``{intent, relevance}`` structs
INTENTS = "__ireval_intents"


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


class Needs(Mapping[tuple[str, str], Def]):
    """The intermediates a plan depends on, keyed by (stage, name); merge with ``|``.

    A name fully determines its expression: merging two sets that define one
    (stage, name) differently raises, so two metrics can never silently
    share a column that means two things.

    Examples
    --------
    >>> a = Needs([Def("__ireval_x", "qrels", pl.len())])
    >>> b = Needs([Def("__ireval_y", "row", pl.col("label") > 0)])
    >>> sorted(name for _, name in a | b)
    ['__ireval_x', '__ireval_y']
    >>> a | Needs([Def("__ireval_x", "qrels", pl.len() + 1)])
    Traceback (most recent call last):
    ...
    ValueError: intermediate '__ireval_x' (qrels stage) is defined two different ways: ...
    """

    __slots__ = ("_defs",)

    def __init__(self, defs: Mapping[tuple[str, str], Def] | list[Def] = ()) -> None:  # type: ignore[assignment]
        self._defs: dict[tuple[str, str], Def] = {}
        for d in defs.values() if isinstance(defs, Mapping) else defs:
            self._add(d)

    def _add(self, d: Def) -> None:
        key = (d.stage, d.name)
        known = self._defs.get(key)
        if known is None:
            self._defs[key] = d
        elif not (
            known.expr.meta.eq(d.expr)
            and known.fill == d.fill
            and known.table == d.table
        ):
            msg = (
                f"intermediate {d.name!r} ({d.stage} stage) is defined two different "
                f"ways: {known.expr} and {d.expr}; give each its own name"
            )
            raise ValueError(msg)

    def __getitem__(self, key: tuple[str, str]) -> Def:
        return self._defs[key]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._defs)

    def __len__(self) -> int:
        return len(self._defs)

    def __or__(self, other: Needs) -> Needs:
        merged = Needs(self._defs)
        for d in other.values():
            merged._add(d)
        return merged

    def by_name(self) -> dict[str, Def]:
        """Every definition by name (a name used in two stages: the later stage)."""
        order = {
            "qrels_row": 0,
            "qrels": 1,
            "ideal": 2,
            "row": 3,
            "agg": 4,
            "intent_qrels_row": 5,
            "intent_qrels": 6,
            "intent_topic": 7,
            "intent_ideal": 8,
            "intent_row": 9,
            "intent_agg": 10,
        }
        out: dict[str, Def] = {}
        for d in sorted(self._defs.values(), key=lambda d: order[d.stage]):
            out[d.name] = d
        return out


#: The :class:`Needs` a builder running under :func:`build_plan` adds to; a
#: context variable, so that it is never shared between two builds (threads
#: or nested builds included) and holds nothing once a build returns
_COLLECTING: ContextVar[Needs | None] = ContextVar("ireval_plan_needs", default=None)


def define(
    name: str,
    stage: Stage,
    expr: pl.Expr,
    *,
    fill: float | None = 0.0,
    table: str | None = None,
) -> pl.Expr:
    """Declare an intermediate of the plan being built and return ``pl.col(name)``.

    Only a builder running under :func:`build_plan` may call it: the
    definition goes into that plan's :class:`Needs`.

    Examples
    --------
    >>> define("__ireval_doc_example", "qrels", pl.len())
    Traceback (most recent call last):
    ...
    RuntimeError: define('__ireval_doc_example') outside a metric build: call it from a builder that build_plan() runs
    """
    needs = _COLLECTING.get()
    if needs is None:
        msg = (
            f"define({name!r}) outside a metric build: call it from a builder "
            "that build_plan() runs"
        )
        raise RuntimeError(msg)
    needs._add(Def(name, stage, expr, fill, table))
    return pl.col(name)


def collecting(builder: Callable[[], T]) -> tuple[T, Needs]:
    """Run ``builder`` with a fresh :class:`Needs`; return its result and the needs.

    Examples
    --------
    >>> expr, needs = collecting(lambda: define("__ireval_n", "qrels", pl.len()) + 1)
    >>> [name for _, name in needs]
    ['__ireval_n']
    """
    needs = Needs()
    token = _COLLECTING.set(needs)
    try:
        return builder(), needs
    finally:
        _COLLECTING.reset(token)


def per_ranking(expr: pl.Expr) -> pl.Expr:
    """Evaluate ``expr`` within each ranking, in rank order (explicitly).

    Examples
    --------
    >>> rows = pl.DataFrame({RANKING: [7] * 3, "rank": [2, 1, 3], "x": [1, 10, 100]})
    >>> rows.select(per_ranking(pl.col("x").cum_sum())).to_series().to_list()
    [11, 10, 111]
    """
    return expr.over(RANKING, order_by="rank")


def per_intent(expr: pl.Expr) -> pl.Expr:
    """Evaluate ``expr`` within each ranking and intent, in rank order.

    Examples
    --------
    >>> rows = pl.DataFrame({RANKING: [7] * 3, "intent": ["x", "y", "x"],
    ...                      "rank": [2, 1, 1], "x": [1, 10, 100]})
    >>> rows.select(per_intent(pl.col("x").cum_sum())).to_series().to_list()
    [101, 10, 100]
    """
    return expr.over([RANKING, "intent"], order_by="rank")


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
    >>> total, needs = collecting(lambda: ordered_sum(pl.col("x"), where=pl.col("rank") < 3))
    >>> (running,) = needs.values()
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
    needs : Needs, optional
        Intermediates it depends on besides its own (:func:`build_plan`
        adds those its builder declared with :func:`define`).
    """

    __slots__ = ("needs", "value")

    def __init__(
        self,
        *,
        value: pl.Expr,
        row: dict[str, pl.Expr] | None = None,
        per_query: dict[str, pl.Expr] | None = None,
        fills: dict[str, float | None] | None = None,
        needs: Needs | None = None,
    ) -> None:
        fills = fills or {}
        defs = [Def(name, "row", expr) for name, expr in (row or {}).items()]
        defs += [
            Def(name, "agg", expr, fills.get(name, 0.0))
            for name, expr in (per_query or {}).items()
        ]
        self.needs: Needs = Needs(defs) if needs is None else needs | Needs(defs)
        self.value = value


def build_plan(metric: Metric) -> Plan:
    """Run ``metric``'s registered builder; the plan carries every intermediate it declared.

    Examples
    --------
    >>> from ireval_df.measures import parse_metric
    >>> plan = build_plan(parse_metric("P@5"))
    >>> sorted({stage for stage, _ in plan.needs})
    ['agg', 'row']
    """
    plan, needs = collecting(lambda: metric.info.compute(metric))
    if not isinstance(plan, Plan):  # pragma: no cover - a registration error
        msg = (
            f"the builder of {metric.name!r} returned {type(plan).__name__}, not a Plan"
        )
        raise TypeError(msg)
    return Plan(value=plan.value, needs=needs | plan.needs)


#: Descriptions of the parameters that many offline metrics share, which a
#: registration may give as a bare default (``params={"rel": 1}``); a metric's
#: own parameters are declared with :class:`~ireval_df.measures.Param`
PARAMETERS: Mapping[str, str] = {
    "rel": "lowest grade counted as relevant (trec_eval -l)",
    "judged_only": "drop unjudged documents before ranking (trec_eval -J)",
    "dcg": "discount and gain: log2 (the grade as gain) or exp-log2 (2^grade - 1)",
    "gains": "gain of each grade, e.g. {0:0,1:1,2:3}, replacing the dcg gain (trec_eval ndcg_p)",
}

#: The decorator that registers an offline metric: ``@register("P", cutoff=...)``
#: (see :func:`ireval_df.measures.family_registrar`); its builder returns a
#: :class:`Plan`. ``judgments="intents"`` or ``"preferences"`` declares that
#: the metric reads per-intent judgments or preference judgments, not
#: graded qrels (:func:`judgment_kind`).
register = family_registrar("offline", PARAMETERS)

Judgments = Literal["grades", "intents", "preferences"]


def judgment_kind(metric: Metric | str) -> Judgments:
    """Return the judgments an offline metric reads, as its registry entry declares.

    ``"grades"`` (qrels: a grade per query and document, every metric
    unless declared otherwise), ``"intents"`` (qrels with an ``intent``
    column: the diversity measures) or ``"preferences"`` (``query_id, jg,
    jsg, doc_id, relevance``: trec_eval's ``prefs`` measures, scored by
    :func:`ireval_df.evaluate_prefs`).

    Examples
    --------
    >>> judgment_kind("AP"), judgment_kind("alpha_nDCG"), judgment_kind("prefs_simp")
    ('grades', 'intents', 'preferences')
    """
    name = metric if isinstance(metric, str) else metric.name
    info = REGISTRY.get(name)
    if info is None:
        info = parse_metric(name).info
    found: Judgments = info.options.get("judgments", "grades")
    return found


def measures_reading(kind: Judgments) -> frozenset[str]:
    """Return the names of the offline metrics that read ``kind`` judgments.

    Examples
    --------
    >>> sorted(measures_reading("preferences"))[:2]
    ['NumPrefsFul', 'NumPrefsFulRet']
    """
    return frozenset(
        name
        for name, info in REGISTRY.items()
        if info.family == "offline" and info.options.get("judgments", "grades") == kind
    )
