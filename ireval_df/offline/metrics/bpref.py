"""Preference-based measures: bpref, its geometric mean, and binary G (binG)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, define, ordered_sum, per_ranking, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


def bpref_sum(rel: int) -> pl.Expr:
    """Sum of bpref terms over the relevant retrieved documents (agg column)."""
    label = pl.col("label")
    judged_nonrel = ((label >= 0) & (label < rel)).cast(pl.Int64)
    seen = define(
        f"__ireval_bpref_nr_{rel}", "row", per_ranking(judged_nonrel.cum_sum())
    )
    big_r = shared.n_rel(rel)
    big_n = shared.n_judged_nonrel(rel)
    penalty = pl.min_horizontal(seen, big_r).cast(pl.Float64) / pl.min_horizontal(
        big_n, big_r
    )
    term = pl.when(seen == 0).then(pl.lit(1.0)).otherwise(1.0 - penalty)
    return define(
        f"__ireval_bpref_sum_{rel}", "agg", ordered_sum(term, where=shared.is_rel(rel))
    )


@register("Bpref", aliases=("bpref",), params={"rel": 1}, trec_eval="bpref")
def bpref(m: Metric) -> Plan:
    """Binary preference (Buckley & Voorhees 2004; trec_eval's post-2006 form).

    Only judged documents count: for each relevant retrieved document add 1
    when no judged non-relevant document is above it, else
    ``1 - min(nr, R) / min(N, R)``, with nr the judged non-relevant documents
    above and N all judged non-relevant documents of the query. Divided by R.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["x", "n", "a"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "n"], "relevance": [1, 1, 0]})
    >>> ie.evaluate(run, qrels, ["Bpref"])["value"].item()
    0.0
    """
    return Plan(value=shared.safe_div(bpref_sum(m.rel), shared.n_rel(m.rel)))


@register(
    "gmBpref",
    aliases=("gm_bpref",),
    params={"rel": 1},
    aggregate="gmean",
    trec_eval="gm_bpref",
)
def gm_bpref(m: Metric) -> Plan:
    """Bpref per query, averaged geometrically (floor 1e-5), as trec_eval ``gm_bpref``.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> ie.summarize(ie.evaluate(run, qrels, ["gmBpref"]))["value"].item()
    1.0
    """
    return Plan(value=shared.safe_div(bpref_sum(m.rel), shared.n_rel(m.rel)))


@register("binG", params={"rel": 1}, trec_eval="binG")
def binary_g(m: Metric) -> Plan:
    """Binary G (trec_eval ``binG``): relevant documents discounted by the non-relevant above.

    ``sum_{i relevant} 1 / log2(2 + i - relret@i) / R``; ``i - relret@i`` is the
    number of non-relevant (or unjudged) documents above rank i.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["x", "a"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> round(ie.evaluate(run, qrels, ["binG"])["value"].item(), 4)
    0.6309
    """
    term = m.col("term")
    above = pl.col("rank") - shared.relret_cum(m.rel)
    return Plan(
        per_query={
            term: ordered_sum(
                1.0 / (above.cast(pl.Float64) + 2.0).log(2), where=shared.is_rel(m.rel)
            )
        },
        value=shared.safe_div(pl.col(term), shared.n_rel(m.rel)),
    )
