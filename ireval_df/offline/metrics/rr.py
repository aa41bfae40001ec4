"""Reciprocal rank of the first relevant document."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


@register(
    "RR",
    aliases=("recip_rank", "mrr", "MRR"),
    cutoff="optional",
    params={"rel": 1},
    trec_eval="recip_rank",
)
def reciprocal_rank(m: Metric) -> Plan:
    """Reciprocal rank: 1 / rank of the first relevant document (in the top k).

    0 when no relevant document is retrieved (within the cutoff). Its mean
    over queries is MRR; ``mrr@10`` (ranx) is ``RR@10``.

    Examples
    --------
    First relevant document at rank 3:

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["c"], "relevance": [1]})
    >>> [round(v, 4) for v in ie.evaluate(run, qrels, ["RR", "RR@2"])["value"]]
    [0.3333, 0.0]
    """
    first = m.col("first")
    found = pl.col("rank").filter(shared.is_rel(m.rel) & m.in_cutoff()).min()
    return Plan(
        per_query={first: found},
        fills={first: None},
        value=(1.0 / pl.col(first).cast(pl.Float64)).fill_null(0.0),
    )
