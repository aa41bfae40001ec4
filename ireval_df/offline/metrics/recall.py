"""Recall and F-measure at a cutoff."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Param
from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


#: F's beta (also SetF's)
BETA = Param(1.0, "weight of recall against precision (1: their harmonic mean)")


@register(
    "R",
    aliases=("recall",),
    cutoff="required",
    params={"rel": 1},
    trec_eval="recall_{k}",
    doc_slices="engine",
    slice_denominator="NumRel",
)
def recall(m: Metric) -> Plan:
    """Recall at k: the share of the query's relevant documents found in the top k.

    ``relret@k / R``; 0 when R = 0. R counts every judged document with grade
    >= ``rel``, retrieved or not.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "z"], "relevance": [1, 1]})
    >>> ie.evaluate(run, qrels, ["R@1"])["value"].item()
    0.5
    """
    assert m.k is not None
    return Plan(
        value=shared.safe_div(shared.relret(m.rel, int(m.k)), shared.n_rel(m.rel))
    )


def _check_beta(m: Metric) -> None:
    if float(m.param("beta")) <= 0:
        msg = f"metric {str(m)!r}: beta must be positive."
        raise MetricSpecError(msg)


def f_measure(
    relret: pl.Expr, precision: pl.Expr, recall: pl.Expr, beta: float
) -> pl.Expr:
    """``(1 + b^2) P R / (b^2 P + R)``, 0 when nothing relevant was retrieved."""
    b2 = beta * beta
    return (
        pl.when(relret > 0)
        .then((1.0 + b2) * precision * recall / (b2 * precision + recall))
        .otherwise(pl.lit(0.0))
    )


@register(
    "F",
    aliases=("F1", "f1"),
    cutoff="required",
    params={"rel": 1, "beta": BETA},
    validate=_check_beta,
)
def f_at_k(m: Metric) -> Plan:
    """F-measure at k of P@k and R@k, weighted by ``beta`` (F1 by default).

    ``(1 + b^2) P R / (b^2 P + R)`` with P = relret@k / k and R = relret@k / R;
    0 when nothing relevant is in the top k. (trec_eval has only the set
    version, ``SetF``.)

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "z"], "relevance": [1, 1]})
    >>> ie.evaluate(run, qrels, ["F1@2"])["value"].item()
    0.5
    """
    assert m.k is not None
    hits = shared.relret(m.rel, int(m.k))
    precision = hits / float(m.k)
    recall_ = shared.safe_div(hits, shared.n_rel(m.rel))
    return Plan(value=f_measure(hits, precision, recall_, float(m.param("beta"))))
