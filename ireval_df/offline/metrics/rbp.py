"""Rank-biased precision (Moffat & Zobel 2008) and its residual, as trec_eval 10."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Param
from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, define, ordered_sum, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


def _check_p(m: Metric) -> None:
    if not 0.0 < float(m.param("p")) < 1.0:
        msg = f"metric {str(m)!r}: the persistence p must be in (0, 1)."
        raise MetricSpecError(msg)


def _weight(p: float) -> pl.Expr:
    """``p^(rank-1)``."""
    return pl.lit(p).pow(pl.col("rank").cast(pl.Float64) - 1.0)


def _normalised_gain(m: Metric) -> pl.Expr:
    """Per-topic gain: rescaled to [0, 1] by (g - min)/(max - min) when the table leaves it."""
    gains = tuple(m.param("gains"))
    key = shared.gain_key("log2", gains)
    top = shared.max_level()
    levels = pl.int_ranges(0, top + 1)
    table = levels.list.eval(shared.gain_of(pl.element(), "log2", gains))
    extra = [pl.lit(float(g)) for _, g in gains]
    low = pl.min_horizontal(table.list.min().fill_null(0.0), *extra)
    high = pl.max_horizontal(table.list.max().fill_null(0.0), *extra)
    g_min = define(f"__ireval_rbp_min_{key}", "qrels", low)
    g_max = define(f"__ireval_rbp_max_{key}", "qrels", high)
    gain = shared.row_gain("log2", gains)
    in_table = (pl.col("label") >= 0) | pl.col("label").is_in([lvl for lvl, _ in gains])
    rescale = (g_min < 0) | (g_max > 1)
    scaled = shared.safe_div(gain - g_min, g_max - g_min)
    return (
        pl.when(in_table & rescale)
        .then(scaled)
        .when(in_table)
        .then(gain)
        .otherwise(0.0)
    )


_P = Param(0.8, "persistence: the probability of reading on to the next document")


@register(
    "RBP",
    aliases=(("rbp", {"p": 0.9}),),
    cutoff="optional",
    params={"p": _P, "gains": ()},
    validate=_check_p,
    trec_eval="rbp",
)
def rank_biased_precision(m: Metric) -> Plan:
    """Rank-biased precision: ``(1 - p) sum_i g_i p^(i-1)``, graded as trec_eval 10.

    Gains are the grades, rescaled per topic to ``(g - min) / (max - min)``
    over the gain table (levels 0..the topic's top grade, plus any
    ``gains={level:gain}``) whenever a table gain is outside [0, 1]; with
    default gains that is grade / top grade. Unjudged documents gain 0.
    ``rbp`` (trec_eval) has p = 0.9; the canonical default is p = 0.8.
    ir_measures' binary ``RBP(rel=2)`` (cwl_eval) is a gain map here:
    ``RBP(gains={0:0,1:0,2:1,3:1})`` for grades 0..3.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["x", "a"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> round(ie.evaluate(run, qrels, ["RBP(p=0.5)"])["value"].item(), 4)
    0.25
    """
    p = float(m.param("p"))
    total = m.col("sum")
    return Plan(
        per_query={
            total: ordered_sum(_normalised_gain(m) * _weight(p), where=m.in_cutoff())
        },
        value=(1.0 - p) * pl.col(total),
    )


@register(
    "RBPResidual",
    empty=None,
    aliases=(("rbp_resid", {"p": 0.9}),),
    params={"p": _P},
    validate=_check_p,
    higher_is_better=False,
    trec_eval="rbp_resid",
    full_sort=True,
)
def rbp_residual(m: Metric) -> Plan:
    """RBP residual as trec_eval 10 computes it: the weight left to unjudged documents.

    When any retrieved document is unjudged (absent from the qrels or with
    a negative grade): ``p^n + (1 - p) sum_{i unjudged} p^(i-1)``; otherwise 0
    (trec_eval's rule, which ignores the tail beyond n in that case).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["x", "a"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["RBPResidual(p=0.5)"])["value"].item()
    0.75
    """
    p = float(m.param("p"))
    unjudged = pl.col("label") < 0
    total, any_unjudged = m.col("sum"), m.col("any")
    n = shared.n_ret().cast(pl.Float64)
    return Plan(
        per_query={
            total: ordered_sum(_weight(p), where=unjudged),
            any_unjudged: unjudged.any(),
        },
        fills={any_unjudged: 0.0},
        value=pl.when(pl.col(any_unjudged).cast(pl.Boolean))
        .then(pl.lit(p).pow(n) + (1.0 - p) * pl.col(total))
        .otherwise(0.0),
    )
