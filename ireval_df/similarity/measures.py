"""The similarity measures: one registry entry each, in the shared ``Name(params)@k`` grammar.

A similarity measure compares a run's ranking of a query (``x``) with a
baseline's (``y``); ``@k`` cuts both rankings at depth ``k`` first
(:func:`~ireval_df.similarity.rankings.cut`). Each entry's function returns
the kernel that computes it over every (run, baseline, query) at once: a
function of the two sides and the keys (:mod:`.rankings`) to ``key, value``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Param, family_registrar
from ireval_df.similarity import correlation, overlap, rbo
from ireval_df.similarity.rankings import cut, order_ties, without_ties

if TYPE_CHECKING:
    from ireval_df.measures import Metric

__all__ = ["Kernel", "reach", "register"]

#: What a similarity entry's function returns: (x, y, keys) -> ``key, value``
Kernel = Callable[
    [pl.LazyFrame, pl.LazyFrame, pl.DataFrame], pl.DataFrame | pl.LazyFrame
]

#: Parameters that several similarity measures share (bare defaults allowed)
PARAMETERS = {
    "ties": "how documents with equal scores count (see docs/similarity.md)",
}

#: The decorator that registers a similarity measure
register = family_registrar("similarity", PARAMETERS)


def _at(
    metric: Metric, kernel: Kernel, *, ordered: bool = False, untie: bool = False
) -> Kernel:
    """Cut both sides at the metric's cutoff before ``kernel``.

    similarity() ranks the documents of a tie group in any order;
    ``ordered`` puts them in ``evaluate()``'s (``doc_id`` descending) for a
    kernel that reads it, and ``untie`` then breaks every group in it.
    """
    k = None if metric.k is None else int(metric.k)

    def run(
        x: pl.LazyFrame, y: pl.LazyFrame, keys: pl.DataFrame
    ) -> pl.DataFrame | pl.LazyFrame:
        x, y = cut(x, k), cut(y, k)
        if ordered or untie:
            x, y = order_ties(x), order_ties(y)
        if untie:
            x, y = without_ties(x), without_ties(y)
        return kernel(x, y, keys)

    return run


def reach(metric: Metric) -> int | None:
    """Return how deep a measure reads each ranking: the last tie-group start it needs.

    Rows of a tie group that starts deeper are never read, so
    :func:`ireval_df.similarity` need not rank them. A measure declares it
    with the registry option ``reach`` (a function of the parsed metric);
    otherwise it is the cutoff ``@k``, or None (the whole ranking).

    Examples
    --------
    >>> from ireval_df.measures import parse_metric
    >>> [reach(parse_metric(m)) for m in ("RBO", "RBO@10", "Tau", "Overlap@5")]
    [422, 10, None, 5]
    """
    declared = metric.info.options.get("reach")
    if declared is not None:
        value: int | None = declared(metric)
        return value
    return None if metric.k is None else int(metric.k)


def _rbo_reach(metric: Metric) -> int:
    """RBO reads no deeper than its cutoff, nor past the depth its weights vanish."""
    horizon = rbo.horizon(float(metric.param("p")))
    return horizon if metric.k is None else min(int(metric.k), horizon)


def _check_p(metric: Metric) -> None:
    p = float(metric.param("p"))
    if not 0.0 < p < 1.0:
        msg = (
            f"metric {str(metric)!r}: p must be in (0, 1), found {p!r}; "
            "p = 0.9 puts about 86% of the weight on the top 10."
        )
        raise MetricSpecError(msg)


@register(
    "RBO",
    aliases=("rbo",),
    cutoff="optional",
    params={
        "p": Param(
            0.9, "persistence: the weight of depth d is proportional to p^(d-1)"
        ),
        "score": Param(
            "ext",
            "ext: Webber's extrapolated estimate; min and max: its bounds; res: max - min",
            choices=("ext", "min", "max", "res"),
        ),
        "ties": Param(
            "a",
            "a, b or w: Corsi & Urbano's treatments of tied documents; none: "
            "ties broken as evaluate() breaks them",
            choices=("a", "b", "w", "none"),
        ),
    },
    empty=None,
    validate=_check_p,
    reach=_rbo_reach,
)
def rank_biased_overlap(m: Metric) -> Kernel:
    """Rank-biased overlap of the run's and the baseline's rankings (Webber et al. 2010).

    ``RBO = (1 - p) sum_d p^(d-1) A_d``, the agreement ``A_d`` being the
    overlap of the two top ``d`` over ``d``, extrapolated past the end of
    the lists (``score=ext``, Webber's eq. 32, exact for lists of uneven
    length) or bounded (``min``, ``max``; ``res`` is their difference). Tied
    documents (equal scores) count as Corsi & Urbano (SIGIR 2024) define:
    ``a`` (the expected overlap over random tie breaks), ``b`` (that
    normalised so a ranking has RBO 1 with itself), ``w`` (a tie group
    enters the top ``d`` whole); ``none`` breaks ties in ``evaluate()``'s
    order. Values equal Corsi & Urbano's reference implementation.

    Examples
    --------
    >>> runs = pl.DataFrame({"run_id": ["old"] * 3 + ["new"] * 3, "query_id": "q",
    ...                      "doc_id": ["a", "b", "c", "a", "c", "b"],
    ...                      "score": [3.0, 2.0, 1.0] * 2})
    >>> value = ie.similarity(runs, ["RBO(p=0.9)"])["value"].item()
    >>> round(value, 4)
    0.955
    """
    p, score, ties = float(m.param("p")), str(m.param("score")), str(m.param("ties"))

    def kernel(
        x: pl.LazyFrame, y: pl.LazyFrame, keys: pl.DataFrame
    ) -> pl.DataFrame | pl.LazyFrame:
        return rbo.rbo(x, y, keys, p=p, score=score, ties=ties)  # type: ignore[arg-type]

    return _at(m, kernel, untie=ties == "none")


@register(
    "Tau",
    aliases=("kendall_tau", "tau_b"),
    cutoff="optional",
    bounds=(-1.0, 1.0),
    empty=None,
)
def kendall_tau(m: Metric) -> Kernel:
    """Kendall's tau-b between the two rankings, over the documents both hold.

    Tied documents (equal scores) are ties, as ``scipy.stats.kendalltau``
    counts them; NaN with fewer than two common documents or when one side
    ties them all.

    Examples
    --------
    >>> runs = pl.DataFrame({"run_id": ["old"] * 3 + ["new"] * 3, "query_id": "q",
    ...                      "doc_id": ["a", "b", "c", "a", "c", "b"],
    ...                      "score": [3.0, 2.0, 1.0] * 2})
    >>> round(ie.similarity(runs, ["Tau"])["value"].item(), 4)
    0.3333
    """
    return _at(m, correlation.tau)


@register(
    "TauAP",
    aliases=("tau_ap", "tauap"),
    cutoff="optional",
    params={
        "ties": Param(
            "a",
            "a: ties in the run count by their expected value (Urbano & Marrero "
            "2017); b: ties in both, symmetric",
            choices=("a", "b"),
        ),
        "sym": Param(
            False,  # noqa: FBT003
            "the mean of both directions (the baseline as reference, then the run)",
        ),
    },
    bounds=(-1.0, 1.0),
    empty=None,
)
def tau_ap(m: Metric) -> Kernel:
    """Yilmaz, Aslam & Robertson's tau_AP: rank correlation that weights the top.

    The baseline's ordering is the reference; agreement is counted from the
    run's top down, each position weighted as in average precision. Over
    the documents both rankings hold. ``ties=a`` and ``ties=b`` are Urbano
    & Marrero's (ICTIR 2017) treatments of tied documents.

    Examples
    --------
    >>> runs = pl.DataFrame({"run_id": ["old"] * 3 + ["new"] * 3, "query_id": "q",
    ...                      "doc_id": ["a", "b", "c", "a", "c", "b"],
    ...                      "score": [3.0, 2.0, 1.0] * 2})
    >>> round(ie.similarity(runs, ["TauAP"])["value"].item(), 4)
    0.5
    """
    ties, sym = str(m.param("ties")), bool(m.param("sym"))

    def kernel(
        x: pl.LazyFrame, y: pl.LazyFrame, keys: pl.DataFrame
    ) -> pl.DataFrame | pl.LazyFrame:
        return correlation.tau_ap(x, y, keys, ties=ties, sym=sym)  # type: ignore[arg-type]

    # ties="a" breaks the reference's tie groups in evaluate()'s order
    return _at(m, kernel, ordered=ties == "a")


@register("Jaccard", aliases=("jaccard",), cutoff="optional", empty=None)
def jaccard(m: Metric) -> Kernel:
    """The Jaccard index of the two rankings' documents (in their top ``k``).

    ``|A ∩ B| / |A ∪ B|``; 1 when both are empty.

    Examples
    --------
    >>> runs = pl.DataFrame({"run_id": ["old"] * 3 + ["new"] * 3, "query_id": "q",
    ...                      "doc_id": ["a", "b", "c", "a", "c", "d"],
    ...                      "score": [3.0, 2.0, 1.0] * 2})
    >>> ie.similarity(runs, ["Jaccard@2"])["value"].item()
    0.3333333333333333
    """
    return _at(m, overlap.jaccard)


@register("Overlap", aliases=("overlap",), cutoff="required", empty=None)
def top_k_overlap(m: Metric) -> Kernel:
    """The share of the top ``k`` the two rankings have in common: ``|A_k ∩ B_k| / k``.

    Divided by ``k`` even when a ranking holds fewer than ``k`` documents.

    Examples
    --------
    >>> runs = pl.DataFrame({"run_id": ["old"] * 3 + ["new"] * 3, "query_id": "q",
    ...                      "doc_id": ["a", "b", "c", "a", "c", "d"],
    ...                      "score": [3.0, 2.0, 1.0] * 2})
    >>> ie.similarity(runs, ["Overlap@2"])["value"].item()
    0.5
    """
    k = int(m.k)  # type: ignore[arg-type]

    def kernel(
        x: pl.LazyFrame, y: pl.LazyFrame, keys: pl.DataFrame
    ) -> pl.DataFrame | pl.LazyFrame:
        return overlap.overlap(x, y, keys, k)

    return _at(m, kernel)
