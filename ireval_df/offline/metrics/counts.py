"""Counts: queries, retrieved, relevant, relevant retrieved (summed over queries)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


@register(
    "NumQ",
    aliases=("num_q",),
    trec_eval="num_q",
    bounds=(0.0, None),
    aggregate="sum",
    empty=None,
)
def num_q(m: Metric) -> Plan:
    """Number of queries: 1 per evaluated query, summed.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": ["q", "r"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": ["q", "r"], "doc_id": ["a", "z"], "relevance": [1, 1]})
    >>> ie.summarize(ie.evaluate(run, qrels, ["NumQ"]))["value"].item()
    2.0
    """
    return Plan(value=pl.lit(1.0))


@register(
    "NumRet",
    aliases=("num_ret",),
    cutoff="optional",
    trec_eval="num_ret",
    bounds=(0.0, None),
    aggregate="sum",
    empty=None,
)
def num_ret(m: Metric) -> Plan:
    """Number of documents retrieved (in the top k), summed over queries.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["NumRet", "NumRet@2"])["value"].to_list()
    [3.0, 2.0]
    """
    return Plan(value=shared.n_ret(None if m.k is None else int(m.k)))


@register(
    "NumRel",
    aliases=("num_rel",),
    params={"rel": 1},
    trec_eval="num_rel",
    bounds=(0.0, None),
    aggregate="sum",
    empty=None,
)
def num_rel(m: Metric) -> Plan:
    """Number of relevant documents in the qrels (R), summed over queries.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [1, 2, 0]})
    >>> ie.evaluate(run, qrels, ["NumRel", "NumRel(rel=2)"])["value"].to_list()
    [2.0, 1.0]
    """
    return Plan(value=shared.n_rel(m.rel))


@register(
    "NumRelRet",
    aliases=("num_rel_ret",),
    cutoff="optional",
    params={"rel": 1},
    trec_eval="num_rel_ret",
    bounds=(0.0, None),
    aggregate="sum",
    empty=None,
)
def num_rel_ret(m: Metric) -> Plan:
    """Number of relevant documents retrieved (in the top k), summed over queries.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [0, 1]})
    >>> ie.evaluate(run, qrels, ["NumRelRet", "NumRelRet@1"])["value"].to_list()
    [1.0, 0.0]
    """
    return Plan(value=shared.relret(m.rel, None if m.k is None else int(m.k)))


@register(
    "Hits",
    aliases=("hits",),
    cutoff="optional",
    params={"rel": 1},
    bounds=(0.0, None),
    aggregate="mean",
)
def hits(m: Metric) -> Plan:
    """Relevant documents in the top k (all retrieved without k), averaged: ranx's hits.

    The per-query value is :func:`num_rel_ret`'s (``NumRelRet@k``); the
    summary is its mean over queries, as ranx reports ``hits@k``, where
    ``NumRelRet`` sums, as trec_eval's ``num_rel_ret`` does.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": ["q", "q", "r"], "doc_id": ["a", "b", "c"],
    ...                     "score": [2.0, 1.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": ["q", "q", "r"], "doc_id": ["a", "b", "c"],
    ...                       "relevance": [1, 1, 0]})
    >>> per_query = ie.evaluate(run, qrels, ["Hits@10", "NumRelRet@10"])
    >>> ie.summarize(per_query, ci="t").select("metric", "value").rows()
    [('Hits@10', 1.0), ('NumRelRet@10', 2.0)]
    """
    return Plan(value=shared.relret(m.rel, None if m.k is None else int(m.k)))


@register(
    "NumNonRelJudgedRet",
    aliases=("num_nonrel_judged_ret",),
    params={"rel": 1},
    trec_eval="num_nonrel_judged_ret",
    bounds=(0.0, None),
    aggregate="sum",
    empty=None,
)
def num_nonrel_judged_ret(m: Metric) -> Plan:
    """Number of retrieved documents judged non-relevant (grade 0..rel-1), summed.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "x"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [0, 1]})
    >>> ie.evaluate(run, qrels, ["NumNonRelJudgedRet"])["value"].item()
    1.0
    """
    hit = m.col("hit")
    return Plan(
        row={hit: (pl.col("label") >= 0) & (pl.col("label") < m.rel)},
        per_query={hit: pl.col(hit).sum()},
        value=pl.col(hit),
    )
