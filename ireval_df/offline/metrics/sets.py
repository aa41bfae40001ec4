"""Set measures: the retrieved list as an unranked set (trec_eval ``set_*``), and utility."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import polars as pl

from ireval_df.measures import Param
from ireval_df.measures.registry import Alias
from ireval_df.offline.metrics import shared
from ireval_df.offline.metrics.recall import BETA, _check_beta, f_measure
from ireval_df.offline.plan import Plan, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


@register("SetP", aliases=("set_P",), params={"rel": 1}, trec_eval="set_P")
def set_precision(m: Metric) -> Plan:
    """Set precision: relevant retrieved over retrieved, ``relret / n`` (0 when n = 0).

    Unlike P@k there is no padding: the denominator is the number retrieved.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["SetP"])["value"].item()
    0.5
    """
    return Plan(value=shared.safe_div(shared.relret(m.rel), shared.n_ret()))


@register("SetR", aliases=("set_recall",), params={"rel": 1}, trec_eval="set_recall")
def set_recall(m: Metric) -> Plan:
    """Set recall: relevant retrieved over R (0 when R = 0).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "z"], "relevance": [1, 1]})
    >>> ie.evaluate(run, qrels, ["SetR"])["value"].item()
    0.5
    """
    return Plan(value=shared.safe_div(shared.relret(m.rel), shared.n_rel(m.rel)))


@register(
    "SetRelP",
    aliases=("set_relative_P",),
    params={"rel": 1},
    trec_eval="set_relative_P",
)
def set_relative_precision(m: Metric) -> Plan:
    """Set relative precision: ``relret / min(n, R)`` (0 when that is 0).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["SetRelP"])["value"].item()
    1.0
    """
    denominator = pl.min_horizontal(shared.n_ret(), shared.n_rel(m.rel))
    return Plan(value=shared.safe_div(shared.relret(m.rel), denominator))


@register("SetAP", aliases=("set_map",), params={"rel": 1}, trec_eval="set_map")
def set_average_precision(m: Metric) -> Plan:
    """Set AP: set precision times set recall, ``relret^2 / (n R)``.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["SetAP"])["value"].item()
    0.5
    """
    hits = shared.relret(m.rel).cast(pl.Float64)
    return Plan(
        value=shared.safe_div(hits * hits, shared.n_ret() * shared.n_rel(m.rel))
    )


def _set_f_suffix(text: str) -> tuple[dict[str, object], None]:
    # trec_eval's set_F parameter is beta squared
    return {"beta": math.sqrt(float(text))}, None


@register(
    "SetF",
    aliases=(Alias("set_F", "SetF", {}, _set_f_suffix),),
    params={"rel": 1, "beta": BETA},
    trec_eval="set_F",
    validate=_check_beta,
)
def set_f(m: Metric) -> Plan:
    """Set F-measure of set precision and set recall, weighted by ``beta``.

    ``(1 + b^2) P R / (b^2 P + R)``; 0 when nothing relevant was retrieved.
    trec_eval's parameter is b^2: ``set_F.0.25`` is ``SetF(beta=0.5)``.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "z"], "relevance": [1, 1]})
    >>> ie.evaluate(run, qrels, ["SetF"])["value"].item()
    0.5
    """
    hits = shared.relret(m.rel)
    precision = shared.safe_div(hits, shared.n_ret())
    recall_ = shared.safe_div(hits, shared.n_rel(m.rel))
    return Plan(value=f_measure(hits, precision, recall_, float(m.param("beta"))))


def _utility_suffix(text: str) -> tuple[dict[str, object], None]:
    names = ("rel_ret", "nonrel_ret", "rel_nonret", "nonrel_nonret")
    values = [float(v) for v in text.split(",") if v.strip()]
    return dict(zip(names, values, strict=False)), None


@register(
    "Utility",
    empty=None,
    aliases=(Alias("utility", "Utility", {}, _utility_suffix),),
    params={
        "rel": 1,
        "rel_ret": Param(1.0, "utility of each relevant document retrieved"),
        "nonrel_ret": Param(-1.0, "utility of each non-relevant document retrieved"),
        "rel_nonret": Param(0.0, "utility of each relevant document not retrieved"),
        "nonrel_nonret": Param(
            0.0, "utility of each non-relevant document not retrieved"
        ),
        "collection": Param(
            0, "the collection's size, for the documents never retrieved (0: unknown)"
        ),
    },
    bounds=(None, None),
    trec_eval="utility",
)
def utility(m: Metric) -> Plan:
    """Linear utility of the retrieved set (TREC filtering track).

    ``rel_ret*a + nonrel_ret*b + rel_nonret*c + nonrel_nonret*d`` with
    a = relret, b = n - a, c = R - a, d = collection + a - n - R, where
    ``collection`` is the collection size (trec_eval ``-N``, default 0, so d
    is negative unless it is set).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["Utility"])["value"].item()
    0.0
    """
    a = shared.relret(m.rel).cast(pl.Float64)
    n = shared.n_ret().cast(pl.Float64)
    big_r = shared.n_rel(m.rel).cast(pl.Float64)
    b = n - a
    c = big_r - a
    d = float(m.param("collection")) + a - n - big_r
    value = (
        float(m.param("rel_ret")) * a
        + float(m.param("nonrel_ret")) * b
        + float(m.param("rel_nonret")) * c
        + float(m.param("nonrel_nonret")) * d
    )
    return Plan(value=value)
