"""Gain-based measures: CG, DCG, nDCG, ideal DCG, and trec_eval's ndcg_rel, Rndcg and G.

Gains follow trec_eval: the grade itself (linear, ``dcg=log2``, the default)
or ``2^grade - 1`` (``dcg=exp-log2``, Burges et al.), replaced level by level
by a ``gains={level:gain}`` map; unjudged documents gain 0. The discount is
``1 / log2(rank + 1)``. The ideal ranking orders every judged document with a
positive gain, retrieved or not, by gain descending.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, define, ordered_sum, per_ranking, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric

GAIN_PARAMS: dict[str, Any] = {"dcg": "log2", "gains": ()}
GAIN_CHOICES = {"dcg": ("log2", "exp-log2")}


def _gain(m: Metric) -> tuple[str, tuple[tuple[int, float], ...]]:
    return str(m.param("dcg")), tuple(m.param("gains"))


def _k(m: Metric) -> int | None:
    return None if m.k is None else int(m.k)


@register(
    "CG",
    cutoff="optional",
    params=GAIN_PARAMS,
    choices=GAIN_CHOICES,
    bounds=(None, None),
)
def cumulative_gain(m: Metric) -> Plan:
    """Cumulative gain: the sum of the gains in the top k (no discount).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [3, 1]})
    >>> ie.evaluate(run, qrels, ["CG@1", "CG(dcg=exp-log2)@2"])["value"].to_list()
    [3.0, 8.0]
    """
    dcg, gains = _gain(m)
    total = m.col("cg")
    return Plan(
        per_query={
            total: ordered_sum(shared.row_gain(dcg, gains), where=m.in_cutoff())
        },
        value=pl.col(total),
    )


@register(
    "DCG",
    aliases=("dcg",),
    cutoff="optional",
    params=GAIN_PARAMS,
    choices=GAIN_CHOICES,
    bounds=(0.0, None),
    trec_eval="dcg",
)
def discounted_cumulative_gain(m: Metric) -> Plan:
    """Discounted cumulative gain: ``sum_{i <= k} gain_i / log2(i + 1)``.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["b"], "relevance": [1]})
    >>> round(ie.evaluate(run, qrels, ["DCG@2"])["value"].item(), 4)
    0.6309
    """
    dcg, gains = _gain(m)
    return Plan(value=shared.dcg_at(dcg, gains, _k(m)))


@register(
    "IDCG",
    aliases=("ideal_dcg",),
    cutoff="optional",
    params=GAIN_PARAMS,
    choices=GAIN_CHOICES,
    bounds=(0.0, None),
    trec_eval="ideal_dcg",
)
def ideal_dcg(m: Metric) -> Plan:
    """Ideal DCG: the DCG of the best possible ranking of the judged documents.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 2]})
    >>> round(ie.evaluate(run, qrels, ["IDCG"])["value"].item(), 4)
    2.6309
    """
    dcg, gains = _gain(m)
    return Plan(value=shared.idcg(dcg, gains, _k(m)))


@register(
    "nDCG",
    aliases=("ndcg", "ndcg_cut", ("ndcg_burges", {"dcg": "exp-log2"})),
    cutoff="optional",
    params=GAIN_PARAMS,
    choices=GAIN_CHOICES,
    trec_eval="ndcg|ndcg_cut_{k}",
    doc_slices="engine",
    slice_denominator="IDCG",
)
def ndcg(m: Metric) -> Plan:
    """Normalised DCG: DCG at k over the ideal DCG at k (0 when the ideal is 0).

    Linear gain by default, as trec_eval (``ndcg``, ``ndcg_cut_k``);
    ``nDCG(dcg=exp-log2)`` uses 2^grade - 1 (ranx ``ndcg_burges``); a
    ``gains={1:1,2:3}`` map sets the gain of listed levels. The relevance level
    ``rel`` does not apply: grades are gains.

    Examples
    --------
    Grades (3, 2, 3) against the ideal (3, 3, 2), exponential gain:
    (7 + 3/log2(3) + 7/2) / (7 + 7/log2(3) + 3/2) = 12.393 / 12.917.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [3, 2, 3]})
    >>> round(ie.evaluate(run, qrels, ["nDCG(dcg=exp-log2)@3"])["value"].item(), 4)
    0.9595
    """
    dcg, gains = _gain(m)
    k = _k(m)
    return Plan(
        value=shared.safe_div(shared.dcg_at(dcg, gains, k), shared.idcg(dcg, gains, k))
    )


def _cum_dcg(dcg: str, gains: tuple[tuple[int, float], ...]) -> pl.Expr:
    key = shared.gain_key(dcg, gains)
    term = shared.row_gain(dcg, gains) / (shared.rank() + 1.0).log(2)
    return define(f"__ireval_cumdcg_{key}", "row", per_ranking(term.cum_sum()))


@register(
    "nDCGRel",
    aliases=("ndcg_rel",),
    params=GAIN_PARAMS,
    choices=GAIN_CHOICES,
    trec_eval="ndcg_rel",
)
def ndcg_rel(m: Metric) -> Plan:
    """nDCG averaged over the relevant documents (trec_eval ``ndcg_rel``, experimental).

    With Rp judged documents of positive gain: for each retrieved document of
    positive gain at rank i add ``DCG@i / IDCG@min(i, Rp)``; add
    ``(Rp - found) * DCG@n / IDCG@Rp`` for those not retrieved; divide by Rp.
    0 when the sum is not positive.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "x"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 1]})
    >>> round(ie.evaluate(run, qrels, ["nDCGRel"])["value"].item(), 4)
    0.8066
    """
    dcg, gains = _gain(m)
    cum = _cum_dcg(dcg, gains)
    full = shared.idcg(dcg, gains, None)
    ideal_here = shared.ideal_col(dcg, gains, "cumdcg").fill_null(full)
    positive = shared.row_gain(dcg, gains) > 0
    total, found = m.col("sum"), m.col("found")
    rp = shared.n_positive_gain(dcg, gains)
    numerator = pl.col(total) + (rp - pl.col(found)) * shared.safe_div(
        shared.dcg_at(dcg, gains, None), full
    )
    return Plan(
        per_query={
            total: ordered_sum(shared.safe_div(cum, ideal_here), where=positive),
            found: positive.sum(),
        },
        value=pl.when(numerator > 0)
        .then(shared.safe_div(numerator, rp))
        .otherwise(0.0),
    )


@register(
    "Rndcg",
    aliases=("rndcg",),
    params={**GAIN_PARAMS, "rel": 1},
    choices=GAIN_CHOICES,
    bounds=(0.0, None),
    trec_eval="Rndcg",
    full_sort=True,
)
def rndcg(m: Metric) -> Plan:
    """nDCG averaged over the ideal ranking's gain boundaries (trec_eval ``Rndcg``).

    B = the positions k <= Rp where the ideal gain changes (I_k != I_k+1,
    I_Rp+1 = 0). The value is the mean of ``DCG@k / IDCG@k`` over k in B,
    plus the term ``DCG@n / IDCG@Rp`` when n > Rp + 1; 0 when R = 0 (R at
    level ``rel``); NaN when there is no term (trec_eval's behaviour).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["c", "x", "a"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [1, 1, 0]})
    >>> ie.evaluate(run, qrels, ["Rndcg"])["value"].item()
    0.0
    """
    dcg, gains = _gain(m)
    key = shared.gain_key(dcg, gains)
    irank = pl.col(f"__ireval_irank_{key}")
    igain = shared.ideal_col(dcg, gains, "gain")
    icum = shared.ideal_col(dcg, gains, "cumdcg")
    ideal_order = {"order_by": irank}
    nxt = igain.shift(-1).over("query_id", **ideal_order).fill_null(0.0)  # type: ignore[arg-type]
    boundary = define(f"__ireval_rndcg_b_{key}", "ideal", igain != nxt, table=key)
    inv = pl.when(boundary).then(1.0 / icum).otherwise(0.0)
    cnt = boundary.cast(pl.Int64)
    tail_inv = define(
        f"__ireval_rndcg_tinv_{key}",
        "ideal",
        # terms are >= 0, so the ordered running sum's max is its (deterministic) total
        inv.cum_sum().over("query_id", order_by=irank).max().over("query_id")
        - inv.cum_sum().over("query_id", order_by=irank),
        table=key,
    )
    tail_cnt = define(
        f"__ireval_rndcg_tcnt_{key}",
        "ideal",
        cnt.sum().over("query_id") - cnt.cum_sum().over("query_id", order_by=irank),
        table=key,
    )
    n_bounds = define(
        f"__ireval_rndcg_nb_{key}",
        "qrels",
        shared.qrels_gain(dcg, gains)
        .filter(shared.qrels_gain(dcg, gains) > 0)
        .n_unique(),
    )
    cum = _cum_dcg(dcg, gains)
    full = shared.idcg(dcg, gains, None)
    rp = shared.n_positive_gain(dcg, gains)
    s_in, c_in, t_inv, t_cnt = m.col("sin"), m.col("cin"), m.col("tinv"), m.col("tcnt")
    last = pl.col("rank") == pl.col("rank").max()
    dcg_n = shared.dcg_at(dcg, gains, None)
    n = shared.n_ret()
    extra = (n > rp + 1).cast(pl.Float64)
    total = pl.col(s_in) + dcg_n * pl.col(t_inv) + extra * shared.safe_div(dcg_n, full)
    count = (
        pl.when(n == 0).then(n_bounds).otherwise(pl.col(c_in) + pl.col(t_cnt)) + extra
    )
    return Plan(
        per_query={
            s_in: ordered_sum(cum / icum, where=boundary.fill_null(value=False)),
            c_in: boundary.fill_null(value=False).sum(),
            t_inv: tail_inv.filter(last).first().fill_null(0.0),
            t_cnt: tail_cnt.filter(last).first().fill_null(0),
        },
        value=pl.when(shared.n_rel(m.rel) == 0)
        .then(pl.lit(0.0))
        .otherwise(total / count.cast(pl.Float64)),
    )


@register(
    "G",
    params=GAIN_PARAMS,
    choices=GAIN_CHOICES,
    bounds=(0.0, None),
    trec_eval="G",
    full_sort=True,
)
def g_measure(m: Metric) -> Plan:
    """trec_eval's experimental G: gains discounted by the gain still missing.

    ``sum_{i: g_i != 0} g_i / log2(2 + C(i) - S(i))`` over the total ideal
    gain, with S(i) the gain retrieved in ranks 1..i and
    ``C(i) = sum_{j <= i} max(I_j, 1)`` (I_j = 0 past the ideal list).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["G"])["value"].item()
    1.0
    """
    dcg, gains = _gain(m)
    gain = shared.row_gain(dcg, gains)
    ideal = shared.ideal_col(dcg, gains, "gain").fill_null(0.0)
    s_col, c_col, term = m.col("s"), m.col("c"), m.col("term")
    qgain = shared.qrels_gain(dcg, gains)
    total_ideal = define(
        f"__ireval_itotal_{shared.gain_key(dcg, gains)}",
        "qrels",
        ordered_sum(qgain, where=qgain > 0, by=shared.ideal_rank(dcg, gains)),
    )
    return Plan(
        row={
            s_col: per_ranking(gain.cum_sum()),
            c_col: per_ranking(pl.max_horizontal(ideal, pl.lit(1.0)).cum_sum()),
        },
        per_query={
            term: ordered_sum(
                gain / (2.0 + pl.col(c_col) - pl.col(s_col)).log(2), where=gain != 0
            )
        },
        value=shared.safe_div(pl.col(term), total_ideal),
    )
