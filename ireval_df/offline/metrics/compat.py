"""Compatibility with an ideal ranking (Clarke, Vtyurina & Smucker 2020).

The rank-biased overlap (RBO, Webber et al. 2010) of the ranking with an
ideal ranking of the judged relevant documents, evaluated to the depth
``D = max(n, m)`` (n retrieved, m relevant):
``RBO(R, I) = sum_{d<=D} p^(d-1) |R[:d] & I[:d]| / d  /  sum_{d<=D} p^(d-1)``,
normalised by ``RBO(I, I)``. The ideal orders the documents by grade; ties
within a grade are broken in the order most compatible with the ranking
(retrieved documents first, in the ranking's order), as the paper defines.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Param
from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import RANKING, Plan, define, ordered_sum, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


def _check(m: Metric) -> None:
    if not 0.0 < float(m.param("p")) < 1.0:
        msg = f"metric {str(m)!r}: the persistence p must be in (0, 1)."
        raise MetricSpecError(msg)


def _prefix(p: float, upto: pl.Expr) -> pl.Expr:
    """``F(x) = sum_{d=1}^{x} p^(d-1) / d`` for a per-row (or per-query) x."""
    depths = pl.int_ranges(1, upto + 1).cast(pl.List(pl.Float64))
    return depths.list.eval(pl.lit(p).pow(pl.element() - 1.0) / pl.element()).list.sum()


@register(
    "Compat",
    params={
        "p": Param(0.95, "persistence of the rank-biased overlap"),
        "normalize": Param(True, "divide by the ideal ranking's own overlap"),  # noqa: FBT003
    },
    validate=_check,
)
def compatibility(m: Metric) -> Plan:
    """Compatibility: rank-biased overlap with the ideal ranking, normalised by the ideal's.

    A relevant document at rank r and ideal rank q is in both prefixes from
    depth ``t = max(r, q)`` on, so the overlap sum is
    ``sum_docs sum_{d=t}^{D} p^(d-1)/d``. With ``normalize`` (the default)
    it is divided by ``RBO(I, I)``, so the ideal ranking scores 1; without,
    by ``sum_{d<=D} p^(d-1)``. Relevant means a grade above 0, whatever
    ``rel``; unjudged documents are not relevant.

    ir_measures' ``compat`` provider gives the same numbers on runs with
    distinct positive scores. Otherwise it errs twice: it breaks ties in the
    ideal by run score with 0 for unretrieved documents, so with negative
    scores an unretrieved document goes before retrieved ones of its grade
    (and adding a constant to every score changes the value); and it ranks
    tied scores by doc_id ascending in the run but keeps qrels order in the
    ideal. Both lower the value for no reason the measure means
    (``tests/reference/test_cwl_eval.py`` pins them).

    Examples
    --------
    One relevant document, retrieved second of two, D = 2:
    (p / 2) / (1 + p / 2) with p = 0.5 gives 0.2.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["x", "a"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> round(ie.evaluate(run, qrels, ["Compat(p=0.5)"])["value"].item(), 4)
    0.2
    """
    p = float(m.param("p"))
    normalize = bool(m.param("normalize"))
    label = pl.col("label")
    grades = define("__ireval_compat_grades", "qrels", label.filter(label > 0))
    m_rel = define("__ireval_compat_m", "qrels", (label > 0).sum().cast(pl.Int64))
    relevant = label > 0
    # the ideal rank: documents of a higher grade, then the retrieved ones of
    # this grade ranked above it, then itself
    above = (grades - label).list.eval(pl.element() > 0).list.sum()
    same = pl.col("rank").rank("ordinal").over([RANKING, "label"])
    ideal = above.cast(pl.Int64) + same.cast(pl.Int64)
    enters = (
        pl.when(relevant).then(pl.max_horizontal(pl.col("rank"), ideal)).otherwise(1)
    )
    before, hits = m.col("before"), m.col("hits")
    n = shared.n_ret()
    depth = pl.max_horizontal(n, m_rel)
    total = _prefix(p, depth)
    overlap = pl.col(hits) * total - pl.col(before)
    if normalize:
        best = (1.0 - pl.lit(p).pow(m_rel)) / (1.0 - p) + m_rel * (
            total - _prefix(p, m_rel)
        )
    else:
        best = (1.0 - pl.lit(p).pow(depth)) / (1.0 - p)
    return Plan(
        per_query={
            before: ordered_sum(_prefix(p, enters - 1), where=relevant),
            hits: relevant.sum().cast(pl.Float64),
        },
        value=shared.safe_div(overlap, best),
    )
