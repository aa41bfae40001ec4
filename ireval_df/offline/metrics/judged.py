"""Judgment coverage: the share of the top k that is judged, or unjudged."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


@register("Judged", aliases=("judged",), cutoff="optional", empty=None)
def judged(m: Metric) -> Plan:
    """Share of the top k with a judgment (grade >= 0), over min(k, n).

    The denominator is the number of documents actually in the top k, as in
    ir_measures; documents with a negative grade ("pooled, not judged") count
    as unjudged. 0 when nothing is retrieved.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "x"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [0]})
    >>> ie.evaluate(run, qrels, ["Judged@10"])["value"].item()
    0.5
    """
    k = None if m.k is None else int(m.k)
    hit = m.col("hit")
    return Plan(
        row={hit: (pl.col("label") >= 0) & m.in_cutoff()},
        per_query={hit: pl.col(hit).sum()},
        value=shared.safe_div(pl.col(hit), shared.n_ret(k)),
    )


@register(
    "Unjudged",
    empty=None,
    aliases=("unj",),
    cutoff="required",
    higher_is_better=False,
    trec_eval="unj_{k}",
    full_sort=True,
)
def unjudged(m: Metric) -> Plan:
    """Share of unjudged documents in the top k, over k (trec_eval 10 ``unj_k``).

    Unjudged: absent from the qrels or with a negative grade. Missing ranks
    (fewer than k retrieved) count as judged, as in trec_eval.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "x"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [0]})
    >>> ie.evaluate(run, qrels, ["Unjudged@4"])["value"].item()
    0.25
    """
    assert m.k is not None
    hit = m.col("hit")
    return Plan(
        row={hit: (pl.col("label") < 0) & m.in_cutoff()},
        per_query={hit: pl.col(hit).sum()},
        value=pl.col(hit) / float(m.k),
    )
