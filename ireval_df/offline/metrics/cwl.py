"""The C/W/L user-model measures of cwl_eval (Azzopardi, Thomas & Moffat 2019).

A C/W/L measure describes a user who reads rank i and goes on to rank i + 1
with probability ``C(i)``. The weight of rank i is the chance of reaching
it, ``prod_{j<i} C(j)``, normalised to sum to 1 over the ranks, and the
measure is the expected gain per document read: ``sum_i W(i) g_i``.

As cwl_eval (through ir_measures' ``cwl_eval`` provider) computes them:

* gains: ``(clip(grade, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``,
  in [0, 1]; negative grades and unjudged documents gain 0 (cwl_eval's
  "worst case"). ir_measures requires ``max_rel``; here ``max_rel=0`` (the
  default) means the highest grade anywhere in the qrels, as ``ERR``;
* depth: the ranking is cut, and padded with documents of gain 0, to
  :data:`DEPTH` ranks (cwl_eval's ``max_n``); the weights are normalised
  over all of them, padding included;
* cost: one per document (no cost file).

With ``C(i) = w(i+1)/w(i) x (1 - g_i)`` for a rank weight w (or without the
gain factor), the weight of rank i is ``w(i) P(i)`` with
``P(i) = prod_{j<i} (1 - g_j)``: ``P`` only changes at documents with a
gain, so these measures need only the judged rows, and the sum of the
weights over the unread ranks has a closed form from the partial sums
``S(r) = sum_{i<=r} w(i)``. INST's continuation depends on the gain still
missing; its weights telescope too, and between two documents with a gain
they are summed as a list (see :func:`inst`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Param
from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import (
    Plan,
    define,
    ordered_sum,
    per_ranking,
    register,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from ireval_df.measures.spec import Metric

#: Ranks cwl_eval reads (its ``max_n``, which ir_measures passes): a
#: ranking is cut to this depth and padded with gain 0 up to it.
DEPTH = 1000

_MIN_REL = Param(0, "grade mapped to gain 0 (lower grades are clipped to it)")
_MAX_REL = Param(
    0, "grade mapped to gain 1 (higher grades are clipped; 0: the qrels' highest grade)"
)
_T = Param(1.0, "total gain the user wants (gains are in [0, 1])")

_GAIN_PARAMS = {"min_rel": _MIN_REL, "max_rel": _MAX_REL}


def _check(m: Metric) -> None:
    params = dict(m.params)
    low, high = int(m.param("min_rel")), int(m.param("max_rel"))
    if low < 0 or high < 0:
        msg = (
            f"metric {str(m)!r}: min_rel and max_rel must be >= 0, found "
            f"{low} and {high}.\n  Hint: max_rel=0 takes the qrels' highest grade."
        )
        raise MetricSpecError(msg)
    if high > 0 and low >= high:
        msg = f"metric {str(m)!r}: min_rel ({low}) must be below max_rel ({high})."
        raise MetricSpecError(msg)
    if "T" in params and not float(m.param("T")) > 0.0:
        msg = (
            f"metric {str(m)!r}: the desired gain T must be > 0, found "
            f"{float(m.param('T'))!r}.\n  Hint: T is in units of [0, 1] gains (T=1: "
            "one fully relevant document)."
        )
        raise MetricSpecError(msg)
    if "p" in params and not 0.0 < float(m.param("p")) < 1.0:
        msg = (
            f"metric {str(m)!r}: the persistence p must be in (0, 1), found "
            f"{float(m.param('p'))!r}."
        )
        raise MetricSpecError(msg)


def _depth(m: Metric) -> int:
    """The last rank read: the cutoff, at most :data:`DEPTH`."""
    return DEPTH if m.k is None else min(int(m.k), DEPTH)


def gain(m: Metric) -> pl.Expr:
    """cwl_eval's gain of each ranked document, in [0, 1]."""
    low = int(m.param("min_rel"))
    high_param = int(m.param("max_rel"))
    if high_param > 0:
        high: pl.Expr = pl.lit(float(high_param))
    else:
        overall = define("__ireval_qrels_maxgrade", "qrels_row", pl.col("label").max())
        high = define("__ireval_maxgrade", "qrels", overall.first()).cast(pl.Float64)
    label = pl.col("label").cast(pl.Float64)
    clipped = pl.min_horizontal(pl.max_horizontal(label, pl.lit(float(low))), high)
    expr = (
        pl.when((pl.col("label") >= 0) & (high > low))
        .then((clipped - low) / (high - low))
        .otherwise(0.0)
    )
    return define(f"__ireval_cwlgain_{low}_{high_param}", "row", expr)


def _insq_weight(
    t: float,
) -> tuple[Callable[[pl.Expr], pl.Expr], Callable[[int], float]]:
    """INSQ's rank weight ``(2T / (i - 1 + 2T))^2``, as an expression and a number."""
    return (
        lambda r: (2.0 * t / (r - 1.0 + 2.0 * t)).pow(2),
        lambda i: (2.0 * t / (i - 1.0 + 2.0 * t)) ** 2,
    )


def _cwl(
    m: Metric,
    weight: Callable[[pl.Expr], pl.Expr],
    weight_at: Callable[[int], float],
    *,
    stops: bool,
) -> Plan:
    """Expected gain per document with rank weight ``w(i)`` (times ``P(i)`` if ``stops``).

    ``value = sum_{i<=K} w(i) P(i) g_i / sum_{i<=K} w(i) P(i)``, the ranks
    past the ranking counted with gain 0. As ``P(i) = 1 - sum_{j<i} P(j) g_j``,
    the denominator is ``S(K) - sum_{j<=K} P(j) g_j (S(K) - S(r_j))``.
    """
    depth = _depth(m)
    partial = [0.0]
    for i in range(1, depth + 1):
        partial.append(partial[-1] + weight_at(i))
    g = gain(m)
    within = pl.col("rank") <= depth
    num, lost = m.col("num"), m.col("lost")
    per_query: dict[str, pl.Expr] = {}
    if stops:
        key = g.meta.output_name()
        reach = define(
            f"{key}_reach",
            "row",
            per_ranking((1.0 - g).cum_prod().shift(1, fill_value=1.0)),
        )
        s_rank = pl.col("rank").replace_strict(
            list(range(1, depth + 1)),
            partial[1:],
            default=partial[depth],
            return_dtype=pl.Float64,
        )
        per_query[num] = ordered_sum(weight(shared.rank()) * reach * g, where=within)
        per_query[lost] = ordered_sum(
            reach * g * (partial[depth] - s_rank), where=within
        )
        denominator = partial[depth] - pl.col(lost)
    else:
        per_query[num] = ordered_sum(weight(shared.rank()) * g, where=within)
        denominator = pl.lit(partial[depth])
    return Plan(per_query=per_query, value=pl.col(num) / denominator)


@register(
    "SDCG",
    aliases=("NDCGCWLMetric",),
    cutoff="required",
    params=_GAIN_PARAMS,
    validate=_check,
)
def scaled_dcg(m: Metric) -> Plan:
    """Scaled DCG at k: DCG of [0, 1] gains over the DCG of k fully relevant documents.

    ``sum_{i<=k} g_i / log2(i + 1)  /  sum_{i<=k} 1 / log2(i + 1)``: nDCG as
    if at least k documents of the top grade existed (cwl_eval's ``NDCG-k``,
    ``C(i) = log2(i + 1) / log2(i + 2)`` for i < k). k is read at most to
    rank 1000 (cwl_eval's depth).

    The C/W/L measures (SDCG, INSQ, INST, NERR8..11, BPM) follow cwl_eval as
    ir_measures runs it, and so give its numbers: gains
    ``(clip(grade, min_rel, max_rel) - min_rel) / (max_rel - min_rel)``;
    unjudged documents and negative grades gain 0 (cwl_eval's lower bound;
    its ``-r`` residuals, which give them the top gain, are not exposed by
    ir_measures nor here); the ranking is cut at rank 1000 and padded with
    gain 0 to it, and the weights are normalised over all 1000 ranks, where
    the papers' sums run to infinity. ir_measures requires ``max_rel``;
    ``max_rel=0`` here means the qrels' highest grade. Ties: ours by doc_id
    descending, cwl_eval in the order of its input. Unlike nDCG, whose ideal
    comes from the qrels, SDCG's ideal is k documents of gain 1. The
    aliases are cwl_eval's class names (``NDCGCWLMetric``, ``INSTCWLMetric``,
    ``NERReq8CWLMetric``, ...).

    Examples
    --------
    Grades (2, 0, 1) with top grade 2: gains (1, 0, 0.5);
    (1 + 0.5/2) / (1 + 1/log2(3) + 1/2) = 1.25 / 2.1309.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 0, 1]})
    >>> round(ie.evaluate(run, qrels, ["SDCG@3"])["value"].item(), 4)
    0.5866
    """
    return _cwl(
        m,
        lambda r: 1.0 / (r + 1.0).log(2),
        lambda i: 1.0 / math.log2(i + 1),
        stops=False,
    )


@register(
    "INSQ",
    aliases=("INSQCWLMetric",),
    params={"T": _T, **_GAIN_PARAMS},
    validate=_check,
)
def insq(m: Metric) -> Plan:
    """INSQ (Moffat, Scholer & Thomas 2012): weighted precision with ``C(i) = ((i+2T-1)/(i+2T))^2``.

    The weight of rank i is proportional to ``(2T / (i - 1 + 2T))^2``,
    normalised over ranks 1..1000: ``sum_i g_i (2T/(i-1+2T))^2 / sum_{i<=1000}
    (2T/(i-1+2T))^2``. T is the gain the user wants; unlike INST, INSQ does
    not adapt to the gain found.
    The normaliser stops at rank 1000 (cwl_eval), where Moffat et al.'s sum
    is infinite: 4 (pi^2/6 - 1) for T = 1, 0.16% above it. Gains and depth
    as SDCG.

    Examples
    --------
    One relevant document at rank 1, T = 1: ``1 / sum_{i<=1000} (2/(i+1))^2``,
    ``4 (pi^2/6 - 1)`` less the tail past rank 1000.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 0]})
    >>> round(ie.evaluate(run, qrels, ["INSQ"])["value"].item(), 4)
    0.3882
    """
    return _cwl(m, *_insq_weight(float(m.param("T"))), stops=False)


@register(
    "NERR8",
    aliases=("NERReq8CWLMetric",),
    cutoff="required",
    params=_GAIN_PARAMS,
    validate=_check,
)
def nerr8(m: Metric) -> Plan:
    """Not (but nearly) ERR, equation 8 of Azzopardi, Mackenzie & Moffat 2021.

    ``C(i) = 1 - g_i`` for i < k, 0 at k: the user stops at a satisfying
    document or at rank k; ``W(i)`` is proportional to ``prod_{j<i}(1 - g_j)``.
    ERR's stopping probability is ``(2^g - 1) / 2^gmax``; cwl_eval's NERR,
    and so this one, stops with the linear gain of SDCG's notes (k at most
    1000).

    Examples
    --------
    Gains (0.5, 1): weights 1, 0.5 normalised to 2/3, 1/3; 2/3 x 0.5 + 1/3 x 1.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 2]})
    >>> round(ie.evaluate(run, qrels, ["NERR8@2"])["value"].item(), 4)
    0.6667
    """
    return _cwl(m, lambda r: pl.lit(1.0), lambda i: 1.0, stops=True)


@register(
    "NERR9",
    aliases=("NERReq9CWLMetric",),
    cutoff="required",
    params=_GAIN_PARAMS,
    validate=_check,
)
def nerr9(m: Metric) -> Plan:
    """Not (but nearly) ERR, equation 9: ``C(i) = i/(i+1) (1 - g_i)`` for i < k.

    ``W(i)`` is proportional to ``(1/i) prod_{j<i}(1 - g_j)``, the
    reciprocal-rank discount of ERR within a C/W/L model.
    Gains (linear, not ERR's exponential), depth and k as NERR8.

    Examples
    --------
    Gains (0.5, 1): weights 1, 1/2 x 1/2 normalised to 4/5, 1/5.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 2]})
    >>> round(ie.evaluate(run, qrels, ["NERR9@2"])["value"].item(), 4)
    0.6
    """
    return _cwl(m, lambda r: 1.0 / r, lambda i: 1.0 / i, stops=True)


@register(
    "NERR10",
    aliases=("NERReq10CWLMetric",),
    params={"p": Param(0.9, "persistence phi, as RBP's p"), **_GAIN_PARAMS},
    validate=_check,
)
def nerr10(m: Metric) -> Plan:
    """Not (but nearly) ERR, equation 10: ``C(i) = p (1 - g_i)``, RBP's patience.

    ``W(i)`` is proportional to ``p^(i-1) prod_{j<i}(1 - g_j)`` over ranks
    1..1000 (cwl_eval calls p phi).
    Gains and depth as SDCG.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 0]})
    >>> round(ie.evaluate(run, qrels, ["NERR10(p=0.5)"])["value"].item(), 4)
    1.0
    """
    p = float(m.param("p"))
    return _cwl(m, lambda r: pl.lit(p).pow(r - 1.0), lambda i: p ** (i - 1), stops=True)


@register(
    "NERR11",
    aliases=("NERReq11CWLMetric",),
    params={"T": _T, **_GAIN_PARAMS},
    validate=_check,
)
def nerr11(m: Metric) -> Plan:
    """Not (but nearly) ERR, equation 11: ``C(i) = ((i+2T-1)/(i+2T))^2 (1 - g_i)``.

    INSQ's patience with ERR's stop at a satisfying document: ``W(i)`` is
    proportional to ``(2T/(i-1+2T))^2 prod_{j<i}(1 - g_j)`` over ranks 1..1000.
    Gains and depth as SDCG.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 0]})
    >>> round(ie.evaluate(run, qrels, ["NERR11"])["value"].item(), 4)
    1.0
    """
    return _cwl(m, *_insq_weight(float(m.param("T"))), stops=True)


def _cum_gain(m: Metric) -> pl.Expr:
    g = gain(m)
    return define(f"{g.meta.output_name()}_cum", "row", per_ranking(g.cum_sum()))


@register(
    "INST",
    aliases=("INSTCWLMetric",),
    params={"T": _T, **_GAIN_PARAMS},
    validate=_check,
)
def inst(m: Metric) -> Plan:
    """INST (Moffat, Bailey, Scholer & Thomas 2015): INSQ adapting to the gain still wanted.

    ``C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2`` with ``T_i = T - sum_{j<=i} g_j``:
    the more gain found, the sooner the user stops. The weights are
    normalised over ranks 1..1000, the ranks past the ranking read with
    gain 0. Moffat et al. define the weights over an infinite ranking;
    cwl_eval, and so this, stops at rank 1000. Gains as SDCG.

    With ``y_i = i + 2T - G_i`` (G_i the gain in ranks 1..i, ``y_0 = 2T``),
    ``y_i - 1 = y_(i-1) - g_i``, so the weight of rank i telescopes to
    ``(2T / y_(i-1))^2 prod_{j<i, g_j>0} (1 - g_j / y_(j-1))^2``: the product
    changes only at documents with a gain, and between two of them the
    weights sum to ``sum_m 1 / (m + 2T - G)^2`` over a range of ranks, a
    list per such document. So INST needs only the judged rows.

    Examples
    --------
    One relevant document first, T = 1: ``y_1 = 1 + 2T - 1 = 2``,
    ``C(1) = (1/2)^2``, and past rank 1 the weights telescope to 1/i^2:
    INST = 1 / sum_{i<=1000} 1/i^2.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 0]})
    >>> round(ie.evaluate(run, qrels, ["INST"])["value"].item(), 4)
    0.6083
    """
    t2 = 2.0 * float(m.param("T"))
    g = gain(m)
    cum = _cum_gain(m)
    rank = pl.col("rank")
    positive = (g > 0) & (rank <= DEPTH)
    y_before = shared.rank() - 1.0 + t2 - (cum - g)
    factor, kept = m.col("f"), m.col("q")
    nxt = m.col("next")
    num, spans, first = m.col("num"), m.col("spans"), m.col("first")
    # the ranks m = r_j .. (the next gain's rank or 1000) - 1 after a gain at r_j
    start = pl.when(positive).then(rank).otherwise(0)
    stop = pl.when(positive).then(pl.min_horizontal(pl.col(nxt), DEPTH)).otherwise(0)
    after = pl.int_ranges(start, stop).cast(pl.List(pl.Float64)) + (t2 - cum)
    span = (1.0 / (after * after)).list.sum() * pl.col(kept) * pl.col(kept)
    reach = per_ranking(pl.col(factor).cum_prod().shift(1, fill_value=1.0))
    head_end = pl.min_horizontal(pl.col(first).fill_null(DEPTH), DEPTH)
    head = pl.int_ranges(0, head_end).cast(pl.List(pl.Float64)) + t2
    total = t2 * t2 * ((1.0 / (head * head)).list.sum() + pl.col(spans))
    return Plan(
        row={
            factor: pl.when(positive).then(1.0 - g / y_before).otherwise(1.0),
            kept: per_ranking(pl.col(factor).cum_prod()),
            nxt: per_ranking(
                pl.when(positive).then(rank).otherwise(None).shift(-1).backward_fill()
            ).fill_null(DEPTH),
        },
        per_query={
            num: ordered_sum((t2 / y_before).pow(2) * reach.pow(2) * g, where=positive),
            spans: ordered_sum(span, where=positive),
            first: rank.filter(positive).min(),
        },
        fills={first: None},
        value=pl.col(num) / total,
    )


@register(
    "BPM",
    aliases=("BPMCWLMetric",),
    cutoff="required",
    params={"T": _T, **_GAIN_PARAMS},
    validate=_check,
)
def bpm(m: Metric) -> Plan:
    """Bejeweled player model (Zhang et al. 2017), static: stop at gain T or at rank k.

    The user reads ranks 1..s, s the first rank whose cumulative gain reaches
    T, or k (cost 1 per document), or 1000; the value is the gain read per
    document, ``sum_{i<=s} g_i / s`` (cwl_eval's ``BPM-Static``, K = k).
    Zhang et al. count grades on their own scale; here, as cwl_eval, T is in
    units of the [0, 1] gains of SDCG's notes. Only the static form: cwl_eval's
    dynamic ``BPM-Dynamic`` is not exposed by ir_measures, and in cwl_eval
    1.0.12 its cost loop adjusts T where the model adjusts K.

    Examples
    --------
    Gains (0, 1, 1), T = 1: the user stops at rank 2 with gain 1.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [0, 1, 1]})
    >>> ie.evaluate(run, qrels, ["BPM@10"])["value"].item()
    0.5
    """
    t = float(m.param("T"))
    depth = _depth(m)
    g = gain(m)
    cum = _cum_gain(m)
    reached = (cum >= t) & (pl.col("rank") <= depth)
    stop, at_stop, read = m.col("stop"), m.col("atstop"), m.col("read")
    return Plan(
        per_query={
            stop: pl.col("rank").filter(reached).min(),
            at_stop: cum.filter(reached).min(),
            read: ordered_sum(g, where=pl.col("rank") <= depth),
        },
        fills={stop: None, at_stop: None},
        value=pl.when(pl.col(stop).is_not_null())
        .then(pl.col(at_stop) / pl.col(stop).cast(pl.Float64))
        .otherwise(pl.col(read) / float(depth)),
    )
