"""Average precision and its relatives: AP, AP@k (three normalisations), gmAP, yaap, infAP."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.measures import Param
from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, define, ordered_sum, per_ranking, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


def precision_sum(m: Metric) -> pl.Expr:
    """S = sum of P@i over the relevant ranks i within the cutoff (agg column)."""
    return define(
        f"__ireval_psum_{m.rel}_{m.k}",
        "agg",
        ordered_sum(
            shared.relret_cum(m.rel) / shared.rank(),
            where=shared.is_rel(m.rel) & m.in_cutoff(),
        ),
    )


@register(
    "AP",
    aliases=("map", "map_cut"),
    cutoff="optional",
    params={
        "rel": 1,
        "norm": Param(
            "R",
            "the denominator: R, min(R, k) or the relevant documents retrieved",
            choices=("R", "min_R_k", "relret"),
        ),
    },
    trec_eval="map|map_cut_{k}",
)
def average_precision(m: Metric) -> Plan:
    """Average precision: the mean of P@i over the relevant documents.

    ``S / D`` with ``S = sum_{i <= k, rel_i} P@i`` and the denominator D chosen
    by ``norm``: ``R`` (default; trec_eval ``map`` and ``map_cut_k``),
    ``min_R_k`` (min(R, k): Spark, recommender libraries) or ``relret`` (the
    relevant documents retrieved in the top k). 0 when D = 0. Its mean over
    queries is MAP.

    Examples
    --------
    Relevant at ranks 1, 3 and 6 of 3 relevant: (1 + 2/3 + 3/6) / 3 = 0.722.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": list("abcdef"), "score": [6.0, 5, 4, 3, 2, 1]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "c", "f"], "relevance": [1, 1, 1]})
    >>> round(ie.evaluate(run, qrels, ["AP"])["value"].item(), 3)
    0.722
    >>> [round(v, 3) for v in ie.evaluate(run, qrels, ["AP@2", "AP(norm=min_R_k)@2", "AP(norm=relret)@2"])["value"]]
    [0.333, 0.5, 1.0]
    """
    norm = m.param("norm")
    big_r = shared.n_rel(m.rel)
    if norm == "R" or m.k is None and norm == "min_R_k":
        denominator = big_r
    elif norm == "min_R_k":
        denominator = pl.min_horizontal(big_r, pl.lit(int(m.k)))  # type: ignore[arg-type]
    else:
        denominator = shared.relret(m.rel, None if m.k is None else int(m.k))
    return Plan(value=shared.safe_div(precision_sum(m), denominator))


@register(
    "gmAP",
    aliases=("gm_map",),
    params={"rel": 1},
    aggregate="gmean",
    trec_eval="gm_map",
)
def gm_average_precision(m: Metric) -> Plan:
    """AP per query, averaged geometrically: ``exp(mean(log(max(AP, 1e-5))))``.

    The per-query value is AP; only the summary differs (trec_eval ``gm_map``).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": ["q", "r"], "doc_id": ["a", "b"], "score": [1.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": ["q", "r"], "doc_id": ["a", "z"], "relevance": [1, 1]})
    >>> round(ie.summarize(ie.evaluate(run, qrels, ["gmAP"]))["value"].item(), 6)
    0.003162
    """
    return Plan(value=shared.safe_div(precision_sum(m), shared.n_rel(m.rel)))


@register("yaap", params={"rel": 1}, bounds=(None, None), trec_eval="yaap")
def yaap(m: Metric) -> Plan:
    """Yet another AP (trec_eval ``yaap``): ``log((1 + S) / (1 + R - S))``.

    S = the sum of P@i over relevant ranks (AP x R). 0 when R = 0 and nothing
    is retrieved; negative for poor rankings.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> round(ie.evaluate(run, qrels, ["yaap"])["value"].item(), 4)
    0.6931
    """
    s = precision_sum(m)
    return Plan(value=((1.0 + s) / (1.0 + shared.n_rel(m.rel) - s)).log())


@register("infAP", aliases=("infap",), params={"rel": 1}, trec_eval="infAP")
def inferred_ap(m: Metric) -> Plan:
    """Inferred AP (Yilmaz & Aslam 2006), as trec_eval computes it.

    Walking ranks i = 1..n with j = i - 1 documents above: at each relevant
    document add 1 when j = 0, else
    ``1/(j+1) + (j/(j+1)) ((r + nr + u)/j) ((r + e)/(r + nr + 2e))``, where r,
    nr and u count the relevant, judged non-relevant and pooled-unjudged
    (negative grade) documents above, and e = 1e-5. Documents absent from the
    qrels add nothing but count in j. Divided by R.

    Examples
    --------
    With every retrieved document judged, infAP is AP up to the e terms.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [0, 1, 1]})
    >>> [round(v, 4) for v in ie.evaluate(run, qrels, ["infAP", "AP"])["value"]]
    [0.5833, 0.5833]
    """
    eps = 1e-5
    label = pl.col("label")
    rel = shared.is_rel(m.rel)
    r_above = shared.relret_cum(m.rel) - rel.cast(pl.Int64)
    nr_col, u_col, term = m.col("nr"), m.col("u"), m.col("term")
    judged_nonrel = ((label >= 0) & (label < m.rel)).cast(pl.Int64)
    unjudged = (label == shared.UNJUDGED).cast(pl.Int64)
    j = pl.col("rank").cast(pl.Float64) - 1.0
    r = r_above.cast(pl.Float64)
    nr, u = pl.col(nr_col).cast(pl.Float64), pl.col(u_col).cast(pl.Float64)
    inner = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r + nr + u) / j) * (
        (r + eps) / (r + nr + 2 * eps)
    )
    return Plan(
        row={
            nr_col: per_ranking(judged_nonrel.cum_sum()) - judged_nonrel,
            u_col: per_ranking(unjudged.cum_sum()) - unjudged,
            term: pl.when(~rel)
            .then(pl.lit(0.0))
            .when(j == 0)
            .then(pl.lit(1.0))
            .otherwise(inner),
        },
        per_query={term: ordered_sum(pl.col(term))},
        value=shared.safe_div(pl.col(term), shared.n_rel(m.rel)),
    )
