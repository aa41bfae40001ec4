"""Expected reciprocal rank (Chapelle et al. 2009)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Param
from ireval_df.offline.plan import Plan, define, ordered_sum, per_ranking, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


def _check(m: Metric) -> None:
    if int(m.param("max_rel")) < 0:
        msg = f"metric {str(m)!r}: max_rel must be >= 1 (or 0: the highest grade in the qrels)."
        raise MetricSpecError(msg)


_MAX_REL = Param(
    0, "the highest grade, for 2^grade / 2^max_rel (0: the qrels' highest grade)"
)


@register(
    "ERR",
    aliases=("err",),
    cutoff="optional",
    params={"max_rel": _MAX_REL},
    validate=_check,
)
def expected_reciprocal_rank(m: Metric) -> Plan:
    """Expected reciprocal rank of a cascade user who stops at a satisfying document.

    ``sum_{r <= k} (1/r) R_r prod_{i < r} (1 - R_i)`` with
    ``R(g) = (2^g - 1) / 2^gmax``; gmax is ``max_rel``, or (``max_rel=0``, the
    default) the highest grade anywhere in the qrels. Unjudged documents
    have R = 0. No trec_eval counterpart (gdeval's ``err``).

    Examples
    --------
    Grades (2, 1) with gmax = 2: R = (3/4, 1/4); ERR = 3/4 + (1/2)(1/4)(1/4).

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [2, 1]})
    >>> ie.evaluate(run, qrels, ["ERR@2"])["value"].item()
    0.78125
    """
    max_rel = int(m.param("max_rel"))
    if max_rel > 0:
        gmax: pl.Expr = pl.lit(float(max_rel))
    else:
        overall = define("__ireval_qrels_maxgrade", "qrels_row", pl.col("label").max())
        gmax = define("__ireval_maxgrade", "qrels", overall.first()).cast(pl.Float64)
    label = pl.col("label").cast(pl.Float64)
    stop = m.col("stop")
    prob = (
        pl.when(pl.col("label") > 0)
        .then(
            (pl.lit(2.0).pow(pl.min_horizontal(label, gmax)) - 1.0)
            / pl.lit(2.0).pow(gmax)
        )
        .otherwise(0.0)
    )
    go_on = m.col("reach")
    term = m.col("term")
    return Plan(
        row={
            stop: prob,
            go_on: per_ranking((1.0 - pl.col(stop)).cum_prod()) / (1.0 - pl.col(stop)),
            term: pl.col(go_on) * pl.col(stop) / pl.col("rank").cast(pl.Float64),
        },
        per_query={term: ordered_sum(pl.col(term), where=m.in_cutoff())},
        value=pl.col(term),
    )
