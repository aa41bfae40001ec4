"""Interpolated precision at a recall level, and the 11-point average."""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Param
from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, define, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric

_COMPAT = Param(
    "10",
    "trec_eval version whose recall-level rounding is reproduced (9: pytrec_eval's)",
    choices=("10", "9"),
)
ELEVEN = tuple(i / 10 for i in range(11))


def cutoff_count(rel: int, level: float, compat: str) -> pl.Expr:
    """Relevant documents needed to reach recall ``level``: lround(level R) (10.0).

    trec_eval 9.x used ``(long)(level R + 0.9)``; ``compat="9"`` selects it.
    """
    big_r = shared.n_rel(rel).cast(pl.Float64)
    x = big_r * level
    if compat == "9":
        need = (x + 0.9).floor()
    else:
        need = x.floor() + (x - x.floor() >= 0.5).cast(pl.Float64)
    slug = repr(level).replace(".", "p").replace("-", "m")
    return define(f"__ireval_iprec_c_{rel}_{slug}_{compat}", "qrels", need)


def iprec_value(m: Metric, level: float) -> pl.Expr:
    """Interpolated precision at ``level`` for spec ``m`` (its rel and compat)."""
    compat = str(m.param("compat"))
    need = cutoff_count(m.rel, level, compat)
    relcum = shared.relret_cum(m.rel)
    slug = repr(level).replace(".", "p")
    best = define(
        f"__ireval_iprec_max_{m.rel}_{slug}_{compat}",
        "agg",
        (relcum / shared.rank()).filter(relcum.cast(pl.Float64) >= need).max(),
        fill=None,
    )
    n = shared.n_ret()
    return (
        pl.when((n == 0) & (need <= 0))
        .then(pl.lit(float("nan")))
        .otherwise(best.fill_null(0.0))
    )


def _check_level(m: Metric) -> None:
    for level in m.param("points") if m.name == "11pt" else ():
        if not 0.0 <= level <= 1.0:
            msg = (
                f"metric {str(m)!r}: recall levels must be in [0, 1], found {level!r}."
            )
            raise MetricSpecError(msg)


@register(
    "IPrec",
    aliases=("iprec_at_recall",),
    cutoff="required",
    cutoff_type=float,
    params={"rel": 1, "compat": _COMPAT},
    trec_eval="iprec_at_recall_{k:.2f}",
)
def interpolated_precision(m: Metric) -> Plan:
    """Interpolated precision at recall r: the best P@k reached with recall >= r.

    ``max {P@k : relret@k >= c}`` (0 if none), with ``c = lround(r R)`` as in
    trec_eval 10.0; ``compat=9`` uses 9.x's ``(long)(r R + 0.9)`` (what
    pytrec_eval computes). NaN when nothing is retrieved and c = 0 (trec_eval).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "x", "b"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [1, 1]})
    >>> [round(v, 4) for v in ie.evaluate(run, qrels, ["IPrec@0.5", "IPrec@1"])["value"]]
    [1.0, 0.6667]
    """
    assert m.k is not None
    return Plan(value=iprec_value(m, float(m.k)))


@register(
    "11pt",
    aliases=("11pt_avg",),
    params={
        "rel": 1,
        "compat": _COMPAT,
        "points": Param(
            ELEVEN, "the recall levels whose interpolated precisions are averaged"
        ),
    },
    validate=_check_level,
    trec_eval="11pt_avg",
)
def eleven_point(m: Metric) -> Plan:
    """Mean interpolated precision over recall levels (default 0.0, 0.1, ..., 1.0).

    ``points=[0.25,0.5,0.75]`` changes the levels (trec_eval
    ``11pt_avg.25,.5,.75``; trec_eval does not sort them, and neither does
    the mean need it).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["11pt"])["value"].item()
    1.0
    """
    points = tuple(m.param("points"))
    if not points:
        return Plan(value=pl.lit(0.0))
    total = iprec_value(m, points[0])
    for level in points[1:]:
        total = total + iprec_value(m, level)
    return Plan(value=total / float(len(points)))
