"""Diversity and intent-aware measures, as TREC's ndeval computes them.

These read qrels judged per intent (subtopic): TREC diversity qrels (``qid
subtopic docno relevance``, read with ``ireval_df.read_qrels(path,
intents=True)``), or any table with an ``intent`` column. Notation, as in
ndeval (Clarke et al. 2008, 2009; Agrawal et al. 2009):

* ``J(d, i)`` is 1 when document ``d``'s grade for intent ``i`` is at least
  ``rel`` (ndeval reads every positive grade as 1), else 0; unjudged
  documents have ``J = 0`` for every intent;
* ``M`` is the number of the query's intents with at least one relevant
  document (ndeval's "actual subtopics"); an intent without one is left
  out, and a query with ``M = 0`` scores 0;
* ``c_i(r)`` is the number of documents above rank ``r`` relevant to
  intent ``i``, and ``G(r) = sum_i J(d_r, i) (1 - alpha)^c_i(r)`` the novelty
  gain at rank ``r``.

Ranks are the library's (score descending, ties by ``doc_id`` descending,
ndeval's ``-traditional`` order); the cutoffs are any ``k`` (ndeval's are
5, 10 and 20). The sums run over the ranked rows of each (ranking, intent)
in one pass of the engine (``ireval_df.offline.intents``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Param
from ireval_df.offline.intents import GAIN, IDEAL_RANK, ideal_key
from ireval_df.offline.plan import Plan, define, per_intent, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric

_ALPHA = Param(0.5, "redundancy penalty: each repeat of an intent keeps 1 - alpha")
_BETA = Param(0.5, "patience: the chance of going on to the next rank")


def _check(m: Metric) -> None:
    for name in ("alpha", "beta"):
        if name in m.info.params:
            value = float(m.param(name))
            if not 0.0 <= value <= 1.0:
                msg = f"metric {str(m)!r}: {name} must be in [0, 1], found {value!r}."
                raise MetricSpecError(msg)


# --- per intent and per query ------------------------------------------------


def _hit(rel: int) -> pl.Expr:
    """Whether an intent row's document is relevant to its intent: J(d, i)."""
    return define(f"__ireval_ihit_{rel}", "intent_row", pl.col("relevance") >= rel)


def _n_relevant(rel: int) -> pl.Expr:
    """Documents relevant to each intent (per query and intent)."""
    expr = (pl.col("relevance") >= rel).sum().cast(pl.Int64)
    return define(f"__ireval_inrel_{rel}", "intent_qrels", expr)


def _n_intents(rel: int) -> pl.Expr:
    """M: the query's intents with at least one relevant document."""
    expr = (_n_relevant(rel) > 0).sum().cast(pl.Int64)
    return define(f"__ireval_nintents_{rel}", "intent_topic", expr)


def _before(rel: int) -> pl.Expr:
    """c_i(r): documents above this row's rank relevant to its intent."""
    hit = _hit(rel).cast(pl.Int64)
    return define(
        f"__ireval_ibefore_{rel}", "intent_row", per_intent(hit.cum_sum()) - hit
    )


def _novelty(rel: int, alpha: float) -> pl.Expr:
    """J(d, i) (1 - alpha)^c_i(r): this row's share of the novelty gain G(r)."""
    expr = pl.when(_hit(rel)).then(pl.lit(1.0 - alpha).pow(_before(rel))).otherwise(0.0)
    return define(f"__ireval_inovel_{rel}_{alpha!r}", "intent_row", expr)


def _total(name: str, term: pl.Expr, where: pl.Expr | None = None) -> pl.Expr:
    """Sum ``term`` over each ranking's intent rows, in (rank, intent) order.

    A running sum in that order, read at its end, so that the last bit of a
    result never depends on how a parallel aggregation met the rows.
    """
    if where is not None:
        term = pl.when(where).then(term).otherwise(0.0)
    term = term.cast(pl.Float64)
    total = term.sort_by("rank", "intent").cum_sum().last()
    return define(name, "intent_agg", total.fill_null(0.0))


def _weighted(gain: pl.Expr, rank: str, by: str | float) -> pl.Expr:
    """``gain`` at the rank in column ``rank``, weighed by its position.

    ``by`` is the discount: ``"log2"`` divides by ``log2(r + 1)``,
    ``"rank"`` by ``r``, and a number ``beta`` multiplies by
    ``beta^(r - 1)`` (rank-biased precision's patience).
    """
    r = pl.col(rank).cast(pl.Float64)
    if by == "log2":
        return gain / (r + 1.0).log(2)
    if by == "rank":
        return gain / r
    return gain * pl.lit(float(by)).pow(r - 1.0)


def _tag(by: str | float) -> str:
    return by if isinstance(by, str) else f"rbp{by!r}"


def _discounted_gain(rel: int, alpha: float, k: int | None, by: str | float) -> pl.Expr:
    """``sum_{r <= k} G(r) w(r)``, w the weight ``by`` names (:func:`_weighted`).

    ``k=None`` sums over the whole ranking.
    """
    where = None if k is None else pl.col("rank") <= k
    name = f"__ireval_igain_{_tag(by)}_{rel}_{alpha!r}_{k}"
    return _total(name, _weighted(_novelty(rel, alpha), "rank", by), where)


def _ideal_gain(rel: int, alpha: float, k: int | None, by: str | float) -> pl.Expr:
    """The same sum for the greedy ideal ranking of the query's judgments.

    ``k=None`` sums over the whole ideal ranking, to its last relevant
    document.
    """
    term = _weighted(pl.col(GAIN), IDEAL_RANK, by)
    if k is not None:
        term = pl.when(pl.col(IDEAL_RANK) <= k).then(term).otherwise(0.0)
    total = term.sort_by(IDEAL_RANK).cum_sum().last().fill_null(0.0)
    name = f"__ireval_iideal_{_tag(by)}_{rel}_{alpha!r}_{k}"
    return define(name, "intent_ideal", total, table=ideal_key(rel, alpha, k))


def _ideal_ideal(alpha: float, k: int, by: str) -> float:
    """``sum_{r <= k} (1 - alpha)^(r-1) / d(r)``: ndeval's "ideal ideal" per intent.

    The discounted gain of a ranking whose every document is relevant to
    every intent, over M; the collection-independent normaliser.
    """
    total = 0.0
    for r in range(1, k + 1):
        discount = math.log2(r + 1.0) if by == "log2" else float(r)
        total += (1.0 - alpha) ** (r - 1) / discount
    return total


def _over_m(value: pl.Expr, rel: int) -> pl.Expr:
    """``value / M``, 0 for a query without a relevant intent."""
    m = _n_intents(rel).cast(pl.Float64)
    return pl.when(m > 0).then(value / m).otherwise(0.0)


def _ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(0.0)


# --- the measures --------------------------------------------------------------


@register(
    "alpha_nDCG",
    judgments="intents",
    aliases=("alpha-nDCG", "alpha_ndcg"),
    cutoff="required",
    params={"rel": 1, "alpha": _ALPHA},
    validate=_check,
)
def alpha_ndcg(m: Metric) -> Plan:
    """alpha-nDCG at k: novelty-discounted gain over that of a greedy ideal ranking.

    ``sum_{r <= k} G(r) / log2(r + 1)``, divided by the same sum for the
    ideal ranking ndeval builds greedily from the qrels (at each rank the
    document of highest novelty gain, ties to the highest ``doc_id``; the
    best ranking is NP-hard to find). Clarke et al. (SIGIR 2008); ndeval's
    ``alpha-nDCG@k``. Grades are binary at ``rel``; ``alpha`` is ndeval's
    ``-alpha`` (default 0.5). ``G(r)``, the novelty gain at rank r, and
    the rest of the notation: [diversity.md](diversity.md).

    Examples
    --------
    Intents x and y; ``a`` is relevant to both, ``b`` to x. Ranking b, a:
    G = (1, 1 + 0.5); ideal a, b: G = (2, 0.5).
    (1 + 1.5 / log2 3) / (2 + 0.5 / log2 3) = 0.8406...

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b"],
    ...                       "intent": ["x", "y", "x"], "relevance": 1})
    >>> round(ie.evaluate(run, qrels, "alpha_nDCG@2")["value"].item(), 4)
    0.8406
    """
    assert m.k is not None
    rel, alpha, k = m.rel, float(m.param("alpha")), int(m.k)
    value = _ratio(
        _discounted_gain(rel, alpha, k, "log2"), _ideal_gain(rel, alpha, k, "log2")
    )
    return Plan(value=value)


@register(
    "alpha_DCG",
    judgments="intents",
    aliases=("alpha-DCG", "alpha_dcg"),
    cutoff="required",
    params={"rel": 1, "alpha": _ALPHA},
    validate=_check,
)
def alpha_dcg(m: Metric) -> Plan:
    """alpha-DCG at k, over the ideal of a ranking relevant to every intent at every rank.

    ``sum_{r <= k} G(r) / log2(r + 1)`` over
    ``M sum_{r <= k} (1 - alpha)^(r-1) / log2(r + 1)``, ndeval's
    collection-independent ("ideal ideal") normalisation, so the value is
    in [0, 1]; ndeval's ``alpha-DCG@k``.

    ndeval leaves rank 1 out of that normalisation (it divides from the
    second rank on), so its ``alpha-DCG@1`` is ``G(1)``, up to M; here it is
    ``G(1) / M``, as the definition says at every other k.

    Notation (G, M, J): [diversity.md](diversity.md).

    Examples
    --------
    Ranking b, a of the alpha_nDCG example (M = 2):
    (1 + 1.5 / log2 3) / (2 (1 + 0.5 / log2 3)) = 0.7398...

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b"],
    ...                       "intent": ["x", "y", "x"], "relevance": 1})
    >>> round(ie.evaluate(run, qrels, "alpha_DCG@2")["value"].item(), 4)
    0.7398
    """
    assert m.k is not None
    rel, alpha, k = m.rel, float(m.param("alpha")), int(m.k)
    norm = _ideal_ideal(alpha, k, "log2")
    value = _over_m(_discounted_gain(rel, alpha, k, "log2") / norm, rel)
    return Plan(value=value)


@register(
    "ERR_IA",
    judgments="intents",
    aliases=("ERR-IA", "err_ia"),
    cutoff="required",
    params={"rel": 1, "alpha": _ALPHA},
    validate=_check,
)
def err_ia(m: Metric) -> Plan:
    """Intent-aware ERR at k, as ndeval computes it (novelty gain over rank).

    ``sum_{r <= k} G(r) / r`` over ``M sum_{r <= k} (1 - alpha)^(r-1) / r``:
    the mean over intents of ERR with a stopping probability of ``alpha``
    at each relevant document (Chapelle et al. 2009), with ndeval's
    collection-independent normalisation, so the value is in [0, 1];
    ndeval's ``ERR-IA@k``. ir_measures fixes ``alpha`` at 0.5.

    ndeval leaves rank 1 out of that normalisation, so its ``ERR-IA@1`` is
    ``G(1)``; here it is ``G(1) / M``.

    Notation (G, M, J): [diversity.md](diversity.md).

    Examples
    --------
    Ranking b, a of the alpha_nDCG example (M = 2):
    (1 + 1.5 / 2) / (2 (1 + 0.5 / 2)) = 0.7.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b"],
    ...                       "intent": ["x", "y", "x"], "relevance": 1})
    >>> round(ie.evaluate(run, qrels, "ERR_IA@2")["value"].item(), 4)
    0.7
    """
    assert m.k is not None
    rel, alpha, k = m.rel, float(m.param("alpha")), int(m.k)
    norm = _ideal_ideal(alpha, k, "rank")
    value = _over_m(_discounted_gain(rel, alpha, k, "rank") / norm, rel)
    return Plan(value=value)


@register(
    "nERR_IA",
    judgments="intents",
    aliases=("nERR-IA", "nerr_ia"),
    cutoff="required",
    params={"rel": 1, "alpha": _ALPHA},
    validate=_check,
)
def nerr_ia(m: Metric) -> Plan:
    """Intent-aware ERR at k over that of the greedy ideal ranking.

    ``sum_{r <= k} G(r) / r`` over the same sum for ndeval's greedy ideal
    ranking (see ``alpha_nDCG``): ndeval's collection-dependent
    normalisation, ``nERR-IA@k``.

    Notation (G, M, J): [diversity.md](diversity.md).

    Examples
    --------
    Ranking b, a of the alpha_nDCG example: (1 + 1.5 / 2) / (2 + 0.5 / 2).

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b"],
    ...                       "intent": ["x", "y", "x"], "relevance": 1})
    >>> round(ie.evaluate(run, qrels, "nERR_IA@2")["value"].item(), 4)
    0.7778
    """
    assert m.k is not None
    rel, alpha, k = m.rel, float(m.param("alpha")), int(m.k)
    value = _ratio(
        _discounted_gain(rel, alpha, k, "rank"), _ideal_gain(rel, alpha, k, "rank")
    )
    return Plan(value=value)


@register(
    "NRBP",
    judgments="intents",
    aliases=("nrbp",),
    params={"rel": 1, "alpha": _ALPHA, "beta": _BETA},
    validate=_check,
)
def nrbp(m: Metric) -> Plan:
    """Novelty- and rank-biased precision over the whole ranking.

    ``(1 - (1 - alpha) beta) / M sum_r G(r) beta^(r-1)`` (Clarke, Kolla &
    Vechtomova, ICTIR 2009): rank-biased precision with patience ``beta``
    over the novelty gain, normalised (collection-independently) so that a
    ranking relevant to every intent at every rank of an endless list
    scores 1; ndeval's ``NRBP``.

    Notation (G, M, J): [diversity.md](diversity.md).

    Examples
    --------
    Ranking b, a of the alpha_nDCG example:
    (1 - 0.25) / 2 (1 + 1.5 / 2) = 0.65625.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b"],
    ...                       "intent": ["x", "y", "x"], "relevance": 1})
    >>> ie.evaluate(run, qrels, "NRBP")["value"].item()
    0.65625
    """
    rel, alpha, beta = m.rel, float(m.param("alpha")), float(m.param("beta"))
    total = _discounted_gain(rel, alpha, None, beta)
    value = _over_m(total * (1.0 - (1.0 - alpha) * beta), rel)
    return Plan(value=value)


@register(
    "nNRBP",
    judgments="intents",
    aliases=("nnrbp",),
    params={"rel": 1, "alpha": _ALPHA, "beta": _BETA},
    validate=_check,
)
def nnrbp(m: Metric) -> Plan:
    """NRBP over that of the greedy ideal ranking (normalised NRBP).

    ``sum_r G(r) beta^(r-1)`` over the same sum for ndeval's greedy ideal
    ranking of the whole qrels (see ``alpha_nDCG``; every relevant document,
    no cutoff): ``NRBP`` divided by the ideal ranking's ``NRBP``, whose
    factor ``(1 - (1 - alpha) beta) / M`` cancels. ndeval's
    collection-dependent normalisation, ``nNRBP`` (Clarke, Kolla &
    Vechtomova, ICTIR 2009), with the same ``alpha`` and ``beta`` on both
    sides. The greedy ideal scores 1; it is not always the best ranking, so
    a ranking that beats it scores above 1 (rare; in ndeval too, and the
    same holds for ``alpha_nDCG`` and ``nERR_IA``).

    A query without a relevant intent scores 0, where ndeval divides 0 by 0
    and reports NaN. With ``alpha=0`` and ``beta=1``, ndeval's factor is 0
    on both sides (NaN again); the ratio of the sums above is the value
    here, the share of the (document, intent) hits the ranking finds.

    Notation (G, M, J): [diversity.md](diversity.md).

    Examples
    --------
    Ranking b, a of the alpha_nDCG example, G = (1, 1.5); ideal a, b,
    G = (2, 0.5); beta = 0.5: (1 + 1.5 * 0.5) / (2 + 0.5 * 0.5) = 0.7778...

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b"],
    ...                       "intent": ["x", "y", "x"], "relevance": 1})
    >>> round(ie.evaluate(run, qrels, "nNRBP")["value"].item(), 4)
    0.7778
    """
    rel, alpha, beta = m.rel, float(m.param("alpha")), float(m.param("beta"))
    value = _ratio(
        _discounted_gain(rel, alpha, None, beta), _ideal_gain(rel, alpha, None, beta)
    )
    return Plan(value=value)


@register(
    "AP_IA",
    judgments="intents",
    aliases=("MAP_IA", "MAP-IA", "map_ia"),
    params={"rel": 1},
)
def ap_ia(m: Metric) -> Plan:
    """Intent-aware average precision: the mean over intents of each intent's AP.

    ``1/M sum_i AP_i``, ``AP_i = sum_{r: J(d_r, i)} P_i(r) / R_i``, where
    ``P_i(r)`` is the share of the top r relevant to intent i and ``R_i`` the
    number of documents relevant to it (Agrawal et al., WSDM 2009, with
    equal intent weights); ndeval's ``MAP-IA``.

    Notation (G, M, J): [diversity.md](diversity.md).

    Examples
    --------
    Ranking b, a of the alpha_nDCG example: AP_x = (1 + 1) / 2, AP_y = 1/2.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b"],
    ...                       "intent": ["x", "y", "x"], "relevance": 1})
    >>> ie.evaluate(run, qrels, "AP_IA")["value"].item()
    0.75
    """
    rel = m.rel
    found = _before(rel) + 1
    per_doc = found.cast(pl.Float64) / pl.col("rank") / _n_relevant(rel)
    term = define(f"__ireval_iap_{rel}", "intent_row", per_doc)
    total = _total(f"__ireval_iapsum_{rel}", term, _hit(rel))
    return Plan(value=_over_m(total, rel))


@register(
    "P_IA",
    judgments="intents",
    aliases=("P-IA", "p_ia"),
    cutoff="required",
    params={"rel": 1},
)
def p_ia(m: Metric) -> Plan:
    """Intent-aware precision at k: the mean over intents of each intent's P@k.

    ``1/(k M) sum_{r <= k} sum_i J(d_r, i)`` (Agrawal et al., WSDM 2009,
    equal intent weights); the denominator is k even when fewer documents
    were retrieved, as for ``P``. ndeval's ``P-IA@k``.

    Notation (G, M, J): [diversity.md](diversity.md).

    Examples
    --------
    Ranking b, a of the alpha_nDCG example: (1 + 2) / (2 * 2).

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b"],
    ...                       "intent": ["x", "y", "x"], "relevance": 1})
    >>> ie.evaluate(run, qrels, ["P_IA@2", "P_IA@4"])["value"].to_list()
    [0.75, 0.375]
    """
    assert m.k is not None
    rel, k = m.rel, int(m.k)
    hits = _hit(rel).cast(pl.Float64)
    total = _total(f"__ireval_ipia_{rel}_{k}", hits, pl.col("rank") <= k)
    return Plan(value=_over_m(total / float(k), rel))


@register(
    "StRecall",
    judgments="intents",
    aliases=("strec", "S-Recall", "subtopic_recall"),
    cutoff="required",
    params={"rel": 1},
)
def subtopic_recall(m: Metric) -> Plan:
    """Subtopic recall at k: the share of the intents the top k covers.

    ``|{i : J(d_r, i) for some r <= k}| / M`` (Zhai, Cohen & Lafferty,
    SIGIR 2003); ndeval's ``strec@k``.

    Notation (G, M, J): [diversity.md](diversity.md).

    Examples
    --------
    Ranking b, a of the alpha_nDCG example: b covers x, a adds y.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b"],
    ...                       "intent": ["x", "y", "x"], "relevance": 1})
    >>> ie.evaluate(run, qrels, ["StRecall@1", "StRecall@2"])["value"].to_list()
    [0.5, 1.0]
    """
    assert m.k is not None
    rel, k = m.rel, int(m.k)
    first = _hit(rel) & (_before(rel) == 0) & (pl.col("rank") <= k)
    count = first.sum().cast(pl.Float64)
    covered = define(f"__ireval_istrec_{rel}_{k}", "intent_agg", count)
    return Plan(value=_over_m(covered, rel))


@register(
    "nDCG_IA",
    judgments="intents",
    aliases=("nDCG-IA", "ndcg_ia"),
    cutoff="required",
)
def ndcg_ia(m: Metric) -> Plan:
    """Intent-aware nDCG at k: the mean over intents of each intent's nDCG@k.

    ``1/M' sum_i nDCG_i@k`` (Agrawal et al., WSDM 2009, equal intent
    weights): ``nDCG_i@k`` is ``nDCG@k`` of the ranking judged by intent
    ``i``'s grades alone (the grade as gain, ``log2(r + 1)`` discount, as
    ``nDCG``), and ``M'`` counts the intents with a positive grade. With a
    single intent it is ``nDCG@k``. ndeval does not compute it; ir_measures
    has no name for it.

    Notation (G, M, J): [diversity.md](diversity.md).

    Examples
    --------
    Ranking b, a of the alpha_nDCG example: nDCG_x = 1, nDCG_y = 1 / log2 3.

    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b"],
    ...                       "intent": ["x", "y", "x"], "relevance": 1})
    >>> round(ie.evaluate(run, qrels, "nDCG_IA@2")["value"].item(), 4)
    0.8155
    """
    assert m.k is not None
    k = int(m.k)
    grade = pl.col("relevance")
    gain = pl.when(grade > 0).then(grade.cast(pl.Float64)).otherwise(0.0)
    qgain = define("__ireval_iqgain", "intent_qrels_row", gain)
    irank = qgain.rank("ordinal", descending=True).over("query_id", "intent")
    irank = define("__ireval_iqrank", "intent_qrels_row", irank.cast(pl.Int64))
    ideal_term = pl.when(irank <= k).then(qgain / (irank.cast(pl.Float64) + 1.0).log(2))
    ideal = ideal_term.otherwise(0.0).sort_by(irank).cum_sum().last()
    idcg = define(f"__ireval_iidcg_{k}", "intent_qrels", ideal)
    graded = define("__ireval_igraded", "intent_qrels", (qgain > 0).any())
    n_graded = define("__ireval_ngraded", "intent_topic", graded.sum().cast(pl.Float64))
    rank = pl.col("rank")
    term = gain / (rank.cast(pl.Float64) + 1.0).log(2) / idcg
    term = define(f"__ireval_indcg_{k}", "intent_row", term)
    total = _total(f"__ireval_indcgsum_{k}", term, (rank <= k) & (idcg > 0))
    value = pl.when(n_graded > 0).then(total / n_graded).otherwise(0.0)
    return Plan(value=value)


__all__ = [
    "alpha_dcg",
    "alpha_ndcg",
    "ap_ia",
    "err_ia",
    "ndcg_ia",
    "nerr_ia",
    "nnrbp",
    "nrbp",
    "p_ia",
    "subtopic_recall",
]
