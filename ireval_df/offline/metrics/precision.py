"""Precision-like measures: P@k, relative P@k, R-precision, Success@k, Best@k."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Param
from ireval_df.measures.registry import Alias
from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


@register(
    "P",
    aliases=("precision",),
    cutoff="required",
    params={"rel": 1},
    trec_eval="P_{k}",
    doc_slices="engine",
)
def precision(m: Metric) -> Plan:
    """Precision at k: relevant documents in the top k, divided by k.

    ``relret@k / k``. The denominator is k even when fewer than k documents
    were retrieved (missing ranks count as non-relevant), as in trec_eval.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["b"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["P@2", "P@10"])["value"].to_list()
    [0.5, 0.1]
    """
    assert m.k is not None
    return Plan(value=shared.relret(m.rel, int(m.k)) / float(m.k))


@register(
    "RelP",
    aliases=("relative_P",),
    cutoff="required",
    params={"rel": 1},
    trec_eval="relative_P_{k}",
)
def relative_precision(m: Metric) -> Plan:
    """Relative precision at k: relevant in the top k over min(k, R).

    ``relret@k / min(k, R)``; 0 when R = 0.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["RelP@5"])["value"].item()
    1.0
    """
    assert m.k is not None
    big_r = shared.n_rel(m.rel)
    return Plan(
        value=shared.safe_div(
            shared.relret(m.rel, int(m.k)), pl.min_horizontal(big_r, pl.lit(int(m.k)))
        )
    )


def _check_mult(m: Metric) -> None:
    if float(m.param("mult")) <= 0:
        msg = f"metric {str(m)!r}: mult must be positive."
        raise MetricSpecError(msg)


def _rprec_mult_suffix(text: str) -> tuple[dict[str, object], None]:
    return {"mult": float(text)}, None


@register(
    "Rprec",
    aliases=(
        "r-precision",
        "rprec",
        Alias("Rprec_mult", "Rprec", {}, _rprec_mult_suffix),
    ),
    params={
        "rel": 1,
        "mult": Param(
            1.0, "precision is taken at rank mult x R (trec_eval Rprec_mult)"
        ),
    },
    trec_eval="Rprec",
    validate=_check_mult,
)
def r_precision(m: Metric) -> Plan:
    """R-precision: precision at rank R (or at ``mult`` x R).

    With ``k = (long)(mult * R + 0.9)`` (trec_eval's truncation, also for
    ``mult=1``, where k = R): ``relret@min(k, n) / k``; 0 when k = 0.
    ``Rprec(mult=0.2)`` is trec_eval's ``Rprec_mult_0.20``.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "c"], "relevance": [1, 1]})
    >>> ie.evaluate(run, qrels, ["Rprec"])["value"].item()
    0.5
    """
    mult = float(m.param("mult"))
    hit = m.col("hit")
    big_r = shared.n_rel(m.rel).cast(pl.Float64)
    k_expr = (big_r * mult + 0.9).floor()
    return Plan(
        row={hit: shared.is_rel(m.rel) & (pl.col("rank") <= k_expr)},
        per_query={hit: pl.col(hit).sum()},
        value=shared.safe_div(pl.col(hit), (big_r * mult + 0.9).floor()),
    )


@register(
    "Success",
    aliases=("hit", "hit_rate", "success"),
    cutoff="optional",
    params={"rel": 1},
    trec_eval="success_{k}",
)
def success(m: Metric) -> Plan:
    """Success at k: 1 when a relevant document is in the top k, else 0.

    Also called Hit@k / hit rate. Without a cutoff, over the whole ranking.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["b"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["Success@1", "Hit@2"])["value"].to_list()
    [0.0, 1.0]
    """
    k = None if m.k is None else int(m.k)
    return Plan(value=(shared.relret(m.rel, k) > 0).cast(pl.Float64))


@register("Best", cutoff="optional", params={"rel": 1})
def best(m: Metric) -> Plan:
    """Best at k: 1 when a document of the query's highest grade is in the top k.

    0 when the query's highest grade is below ``rel`` (nothing relevant).
    No trec_eval counterpart.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 3]})
    >>> ie.evaluate(run, qrels, ["Best@1", "Best@2"])["value"].to_list()
    [0.0, 1.0]
    """
    top = shared.max_level()
    hit = m.col("hit")
    return Plan(
        row={hit: (pl.col("label") == top) & m.in_cutoff()},
        per_query={hit: pl.col(hit).any()},
        value=(
            pl.col(hit).fill_null(value=False).cast(pl.Boolean) & (top >= m.rel)
        ).cast(pl.Float64),
    )
