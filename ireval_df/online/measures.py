"""The online metrics: one registry entry each, in the shared ``Name(params)@k`` grammar.

Each entry's function returns a :class:`~ireval_df.online.derive.Measure`:
the grain whose rows it sums (``unit`` in the registry: ``search``,
``result``, ``click`` or ``session``) and two per-row expressions, a
numerator and a denominator. Over any set of rows (an arm, a slice, one
randomisation unit) the metric is ``sum(numerator) / sum(denominator)``,
so it is a ratio of per-unit sums (``aggregate="ratio"``), the form the A/B
tests analyse with the delta method. The registry option ``numer`` and
``denom`` name those per-unit quantities (``clicked_searches``,
``searches_with_results`` ...); with CUPED the pre-period covariates are
the ``units`` table's ``pre_<numer>`` and ``pre_<denom>``.
``TimeToFirstClick(stat=median)`` is a median (``aggregate="median"``),
which no per-unit sums give.

Definitions, pitfalls and references: ``docs/online.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Param, family_registrar
from ireval_df.online.derive import (
    ABANDONED,
    ANSWER,
    CLICKED,
    DWELL,
    FIRST_CLICK,
    HAS_CLICK,
    HAS_RESULTS,
    LAST_CLICK,
    N_ADD_TO_CART,
    N_CLICKS,
    N_PURCHASE,
    N_QUERIES,
    ONE,
    REVENUE,
    TOP_CLICK,
    Def,
    Measure,
    col,
    last_search_failed,
    reformulated,
)

if TYPE_CHECKING:
    from ireval_df.measures import Metric

__all__ = ["quantities", "register"]

#: Parameters that several online metrics share (bare defaults allowed)
PARAMETERS = {
    "window": "seconds within which the next search of the session counts as a "
    "reformulation",
    "tau": "seconds of dwell that make a click satisfied (SAT); the session's "
    "last click is SAT too",
    "cap": "seconds at which each value is capped (winsorised) before averaging",
}

#: The decorator that registers an online metric
register = family_registrar("online", PARAMETERS)

_ONE = ONE


def quantities(metric: Metric) -> tuple[str, str]:
    """Name the per-unit numerator and denominator of a ratio metric.

    Examples
    --------
    >>> from ireval_df.measures import parse_metric
    >>> quantities(parse_metric("CTR"))
    ('clicked_searches', 'searches_with_results')
    """
    options = metric.info.options
    return str(options["numer"]), str(options["denom"])


def _flag(expr: pl.Expr) -> pl.Expr:
    return expr.fill_null(value=False).cast(pl.Int64)


def _results_shown() -> pl.Expr:
    return _flag(pl.col(HAS_RESULTS))


def _check_positive(m: Metric, name: str) -> None:
    value = float(m.param(name))
    if not value > 0:
        msg = f"metric {str(m)!r}: {name} must be positive, found {value!r}"
        raise MetricSpecError(msg)


def _check_window(m: Metric) -> None:
    _check_positive(m, "window")


def _check_tau(m: Metric) -> None:
    _check_positive(m, "tau")


def _check_cap(m: Metric) -> None:
    _check_positive(m, "cap")


def _check_f(m: Metric) -> None:
    f = float(m.param("f"))
    if not 0.0 < f < 1.0:
        msg = f"metric {str(m)!r}: f must be in (0, 1), found {f!r}"
        raise MetricSpecError(msg)


def _slug(value: float) -> str:
    return repr(float(value)).replace(".", "_").replace("-", "m")


def _shown(m: Metric) -> pl.Expr:
    """A displayed result within the metric's cutoff (every result without one)."""
    position = pl.col("position")
    return position.is_not_null() if m.k is None else position <= int(m.k)


def _reform(window: float) -> Def:
    return Def(col(f"reform_{_slug(window)}"), "search", reformulated(window))


def _sat(tau: float) -> tuple[Def, Def]:
    """A click's SAT flag, and each search's count of SAT clicks."""
    flag = col(f"sat_{_slug(tau)}")
    count = col(f"n_sat_{_slug(tau)}")
    sat = (pl.col(DWELL) >= tau).fill_null(value=False) | pl.col(LAST_CLICK)
    return Def(flag, "click", sat), Def(count, "click_search", pl.col(flag).sum())


# --- search grain: clicks -------------------------------------------------------------------


@register(
    "CTR",
    cutoff="optional",
    aggregate="ratio",
    unit="search",
    empty=None,
    numer="clicked_searches",
    denom="searches_with_results",
)
def ctr(m: Metric) -> Measure:
    """Search click-through rate: the share of searches with results that got a click.

    ``@k`` counts only clicks at positions 1 to ``k``. Over searches that
    showed at least one result (``n_results > 0``); a click without a
    position counts for ``CTR`` but not for ``CTR@k``.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["CTR", "CTR@1"])["value"].to_list()
    [0.5, 0.0, 0.5, 0.5]
    """
    clicked = (
        pl.col(HAS_CLICK)
        if m.k is None
        else (pl.col(TOP_CLICK) <= int(m.k)).fill_null(value=False)
    )
    return Measure(
        "search",
        _flag(clicked & pl.col(HAS_RESULTS)),
        _results_shown(),
        needs=frozenset({"clicks"}),
    )


@register(
    "ClicksPerSearch",
    aggregate="ratio",
    unit="search",
    bounds=(0.0, None),
    empty=None,
    numer="clicks",
    denom="searches_with_results",
)
def clicks_per_search(m: Metric) -> Measure:
    """Clicks per search with results: every click event counts, repeats included.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["ClicksPerSearch"])["value"].to_list()
    [0.5, 0.5]
    """
    return Measure(
        "search",
        pl.when(pl.col(HAS_RESULTS)).then(pl.col(N_CLICKS)).otherwise(0).cast(pl.Int64),
        _results_shown(),
        needs=frozenset({"clicks"}),
    )


@register(
    "ClickRR",
    aggregate="ratio",
    unit="search",
    empty=None,
    numer="click_reciprocal_ranks",
    denom="searches_with_results",
)
def click_rr(m: Metric) -> Measure:
    """Reciprocal rank of the top click: 1 / the smallest clicked position, 0 without one.

    The mean over searches with results (Radlinski et al. 2008's "max
    reciprocal rank"); clicks without a position are not counted.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["ClickRR"])["value"].to_list()
    [0.25, 0.5]
    """
    rr = (1.0 / pl.col(TOP_CLICK).cast(pl.Float64)).fill_null(0.0)
    return Measure(
        "search",
        pl.when(pl.col(HAS_RESULTS)).then(rr).otherwise(0.0),
        _results_shown(),
        needs=frozenset({"clicks"}),
    )


@register(
    "PaulScore",
    params={"f": Param(0.5, "the weight of position r is f^(r-1), from 1 at the top")},
    aggregate="ratio",
    unit="search",
    bounds=(0.0, None),
    empty=None,
    validate=_check_f,
    numer="paul_scores",
    denom="searches_with_results",
)
def paul_score(m: Metric) -> Measure:
    """Wikimedia's PaulScore: the sum over a search's clicks of f^(position - 1).

    Positions are 1-based here (Wikimedia writes f^position with 0-based
    positions: the same number). Every click event counts; the mean over
    searches with results.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["PaulScore"])["value"].to_list()
    [0.25, 0.5]
    """
    f = float(m.param("f"))
    name = col(f"paul_{_slug(f)}")
    weight = pl.lit(f).pow(pl.col("position").cast(pl.Float64) - 1.0)
    return Measure(
        "search",
        pl.when(pl.col(HAS_RESULTS)).then(pl.col(name)).otherwise(0.0),
        _results_shown(),
        defs=(Def(name, "click_search", weight.fill_null(0.0).sum()),),
        needs=frozenset({"clicks"}),
    )


@register(
    "TimeToFirstClick",
    aliases=("TTFC",),
    params={
        "stat": Param(
            "median",
            "median, or mean (a ratio of per-unit sums, which the A/B tests take)",
            choices=("median", "mean"),
        ),
        "cap": 1800.0,
    },
    higher_is_better=False,
    aggregate="median",
    unit="search",
    bounds=(0.0, None),
    empty=None,
    validate=_check_cap,
    numer="first_click_seconds",
    denom="clicked_searches",
)
def time_to_first_click(m: Metric) -> Measure:
    """Seconds from the result page to its first click, over searches with a click.

    Capped at ``cap`` seconds. Searches without a click are left out (their
    time is censored): read it beside ``CTR``. ``stat=median`` is the
    registry's aggregate (a median, robust to the heavy tail);
    ``stat=mean`` is a ratio of per-unit sums, which ``ab_test`` can
    compare.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["TimeToFirstClick"])["value"].to_list()
    [10.0, 30.0]
    """
    cap = float(m.param("cap"))
    seconds = (
        (pl.col(FIRST_CLICK) - pl.col("ts")).dt.total_microseconds().cast(pl.Float64)
        / 1e6
    ).clip(0.0, cap)
    has = pl.col(FIRST_CLICK).is_not_null()
    return Measure(
        "search",
        pl.when(has).then(seconds).otherwise(0.0),
        _flag(has),
        needs=frozenset({"clicks"}),
        median=seconds if str(m.param("stat")) == "median" else None,
    )


# --- click grain ----------------------------------------------------------------------------


@register(
    "DwellTime",
    params={"cap": 1800.0},
    aggregate="ratio",
    unit="click",
    bounds=(0.0, None),
    empty=None,
    validate=_check_cap,
    numer="dwell_seconds",
    denom="clicks_with_dwell",
)
def dwell_time(m: Metric) -> Measure:
    """Mean dwell time of a click, in seconds, capped at ``cap``.

    The client's ``dwell_ms`` when the event has it, else the time to the
    next logged action of the session (result pages included). A click
    with neither (the session's last action) has no dwell and is left out.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["DwellTime"])["value"].to_list()
    [50.0, 40.0]
    """
    cap = float(m.param("cap"))
    known = pl.col(DWELL).is_not_null()
    return Measure(
        "click",
        pl.col(DWELL).clip(0.0, cap).fill_null(0.0),
        _flag(known),
        needs=frozenset({"clicks"}),
    )


@register(
    "SatClickRate",
    params={"tau": 30.0},
    aggregate="ratio",
    unit="click",
    empty=None,
    validate=_check_tau,
    numer="sat_clicks",
    denom="clicks",
)
def sat_click_rate(m: Metric) -> Measure:
    """The share of clicks that are satisfied: dwell of at least ``tau`` seconds, or the session's last click.

    Fox et al. (2005) found 30 s of dwell the best single predictor of a
    satisfied click; the session's last click is counted satisfied because
    its dwell is unknown and the user stopped searching.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["SatClickRate"])["value"].to_list()
    [1.0, 1.0]
    """
    flag, _ = _sat(float(m.param("tau")))
    return Measure(
        "click",
        _flag(pl.col(flag.name)),
        _ONE,
        defs=(flag,),
        needs=frozenset({"clicks"}),
    )


# --- search grain: abandonment and reformulation --------------------------------------------


@register(
    "Abandonment",
    higher_is_better=False,
    aggregate="ratio",
    unit="search",
    empty=None,
    numer="abandoned_searches",
    denom="searches_with_results",
)
def abandonment(m: Metric) -> Measure:
    """The share of searches with results that got no click, add-to-cart or purchase.

    Zero-result searches are left out (see ``ZeroResultRate``).

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["Abandonment"])["value"].to_list()
    [0.5, 0.5]
    """
    return Measure(
        "search",
        _flag(pl.col(ABANDONED)),
        _results_shown(),
        needs=frozenset({"clicks", "commerce"}),
    )


@register(
    "GoodAbandonment",
    params={"window": 300.0},
    aggregate="ratio",
    unit="search",
    empty=None,
    validate=_check_window,
    numer="good_abandoned_searches",
    denom="searches_with_results",
)
def good_abandonment(m: Metric) -> Measure:
    """Abandoned searches that look answered: an answer shown, no reformulation within the window.

    A heuristic (Li, Huffman & Tokuda 2009): the result page answered the
    query, so the user needed no click. "An answer shown" is the search's
    ``serp_answer`` when the log has that column; without it every
    abandoned search not reformulated within ``window`` seconds counts.
    Over searches with results.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["GoodAbandonment"])["value"].to_list()
    [0.5, 0.0]
    """
    reform = _reform(float(m.param("window")))
    good = pl.col(ABANDONED) & pl.col(ANSWER) & ~pl.col(reform.name)
    return Measure(
        "search",
        _flag(good),
        _results_shown(),
        defs=(reform,),
        needs=frozenset({"clicks", "commerce", "next", "answer"}),
    )


@register(
    "BadAbandonment",
    params={"window": 300.0},
    higher_is_better=False,
    aggregate="ratio",
    unit="search",
    empty=None,
    validate=_check_window,
    numer="bad_abandoned_searches",
    denom="searches_with_results",
)
def bad_abandonment(m: Metric) -> Measure:
    """Abandoned searches followed by a reformulation within the window.

    A heuristic: the user had to rephrase, so the page did not answer. Over
    searches with results; good and bad abandonment need not add up to
    ``Abandonment`` (a search abandoned without an answer and without a
    reformulation is neither).

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["BadAbandonment"])["value"].to_list()
    [0.0, 0.5]
    """
    reform = _reform(float(m.param("window")))
    return Measure(
        "search",
        _flag(pl.col(ABANDONED) & pl.col(reform.name)),
        _results_shown(),
        defs=(reform,),
        needs=frozenset({"clicks", "commerce", "next"}),
    )


@register(
    "Reformulation",
    params={"window": 300.0},
    higher_is_better=False,
    aggregate="ratio",
    unit="search",
    empty=None,
    validate=_check_window,
    numer="reformulated_searches",
    denom="searches",
)
def reformulation(m: Metric) -> Measure:
    """The share of searches whose next search in the session reformulates them.

    Within ``window`` seconds, the next search's normalised query differs
    but shares a term. The next page of the same query is not a
    reformulation. Over all searches.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["Reformulation"])["value"].to_list()
    [0.0, 0.3333333333333333]
    """
    reform = _reform(float(m.param("window")))
    return Measure(
        "search",
        _flag(pl.col(reform.name)),
        _ONE,
        defs=(reform,),
        needs=frozenset({"next"}),
    )


@register(
    "ZeroResultRate",
    aliases=("ZRR",),
    higher_is_better=False,
    aggregate="ratio",
    unit="search",
    empty=None,
    numer="zero_result_searches",
    denom="searches",
)
def zero_result_rate(m: Metric) -> Measure:
    """The share of searches that found nothing (``n_results = 0``).

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["ZeroResultRate"])["value"].to_list()
    [0.0, 0.3333333333333333]
    """
    return Measure("search", _flag(pl.col("n_results") == 0), _ONE)


# --- search grain: commerce -----------------------------------------------------------------


@register(
    "AddToCartRate",
    aggregate="ratio",
    unit="search",
    empty=None,
    numer="searches_with_add_to_cart",
    denom="searches",
)
def add_to_cart_rate(m: Metric) -> Measure:
    """The share of searches with at least one add-to-cart attributed to them.

    An event is attributed to the search its ``search_id`` names (the
    logging's attribution, last touch as a rule). Over all searches, so a
    ranker that finds nothing is charged for it.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["AddToCartRate"])["value"].to_list()
    [0.5, 0.0]
    """
    return Measure(
        "search",
        _flag(pl.col(N_ADD_TO_CART) > 0),
        _ONE,
        needs=frozenset({"commerce"}),
    )


@register(
    "ConversionRate",
    aggregate="ratio",
    unit="search",
    empty=None,
    numer="searches_with_purchase",
    denom="searches",
)
def conversion_rate(m: Metric) -> Measure:
    """The share of searches with at least one purchase attributed to them.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["ConversionRate"])["value"].to_list()
    [0.5, 0.0]
    """
    return Measure(
        "search",
        _flag(pl.col(N_PURCHASE) > 0),
        _ONE,
        needs=frozenset({"commerce"}),
    )


@register(
    "RevenuePerSearch",
    aggregate="ratio",
    unit="search",
    bounds=(0.0, None),
    empty=None,
    numer="revenue",
    denom="searches",
)
def revenue_per_search(m: Metric) -> Measure:
    """Revenue (the ``value`` of purchases attributed to a search) per search.

    A purchase without a value counts 0. Heavy-tailed: cap outliers in the
    events before comparing arms.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["RevenuePerSearch"])["value"].to_list()
    [10.0, 0.0]
    """
    return Measure("search", pl.col(REVENUE), _ONE, needs=frozenset({"commerce"}))


@register(
    "AOV",
    aliases=("AverageOrderValue",),
    aggregate="ratio",
    unit="search",
    bounds=(0.0, None),
    empty=None,
    numer="revenue",
    denom="purchases",
)
def average_order_value(m: Metric) -> Measure:
    """Average order value: revenue per purchase attributed to a search.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["AOV"])["value"].to_list()
    [20.0, None]
    """
    return Measure(
        "search",
        pl.col(REVENUE),
        pl.col(N_PURCHASE).cast(pl.Int64),
        needs=frozenset({"commerce"}),
    )


# --- session grain --------------------------------------------------------------------------


@register(
    "QueriesPerSession",
    higher_is_better=False,
    aggregate="ratio",
    unit="session",
    bounds=(0.0, None),
    empty=None,
    numer="queries",
    denom="sessions",
)
def queries_per_session(m: Metric) -> Measure:
    """Queries per session: searches of page 1 (the next pages of a query are not queries).

    Lower is declared better (the user needed fewer queries), a direction
    that depends on the product: more queries can also mean more
    engagement.

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["QueriesPerSession"])["value"].to_list()
    [1.0, 3.0]
    """
    return Measure("session", pl.col(N_QUERIES).cast(pl.Int64), _ONE)


@register(
    "SessionSuccess",
    params={"tau": 30.0},
    aggregate="ratio",
    unit="session",
    empty=None,
    validate=_check_tau,
    numer="successful_sessions",
    denom="sessions",
)
def session_success(m: Metric) -> Measure:
    """The share of sessions with a SAT click or a purchase whose last search did not fail.

    A SAT click has ``tau`` seconds of dwell or is the session's last click
    (as in ``SatClickRate``); the last search fails when it found nothing
    or was abandoned (Hassan et al. 2010 model success on whole sessions).

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["SessionSuccess"])["value"].to_list()
    [0.5, 0.0]
    """
    flag, count = _sat(float(m.param("tau")))
    name = col(f"success_{_slug(float(m.param('tau')))}")
    success = (
        (pl.col(count.name).sum() > 0) | (pl.col(N_PURCHASE).sum() > 0)
    ) & ~last_search_failed()
    return Measure(
        "session",
        _flag(pl.col(name)),
        _ONE,
        defs=(flag, count, Def(name, "session", success)),
        needs=frozenset({"clicks", "commerce"}),
    )


# --- result grain ---------------------------------------------------------------------------


@register(
    "ImpressionCTR",
    cutoff="optional",
    aggregate="ratio",
    unit="result",
    empty=None,
    numer="clicked_results",
    denom="impressions",
)
def impression_ctr(m: Metric) -> Measure:
    """Clicked results over displayed results (impressions), at positions 1 to ``k``.

    A result clicked twice counts once, so the rate stays within [0, 1].

    Examples
    --------
    >>> ie.online.metrics(ie.online.example_log(), ["ImpressionCTR@2"])["value"].to_list()
    [0.25, 0.25]
    """
    shown = _shown(m)
    return Measure(
        "result",
        _flag(pl.col(CLICKED) & shown),
        _flag(shown),
    )


@register(
    "PositionCTR",
    cutoff="optional",
    aggregate="ratio",
    unit="result",
    empty=None,
    numer="clicked_results",
    denom="impressions",
)
def position_ctr(m: Metric) -> Measure:
    """The click curve: clicked over displayed results at each position (1 to ``k``).

    One value per position, in the result's ``position`` column. It mixes
    relevance and position bias: users click the top more whatever it
    holds, so compare curves between arms rather than reading one alone.

    Examples
    --------
    >>> curve = ie.online.metrics(ie.online.example_log(), ["PositionCTR@2"])
    >>> curve.select("variant", "position", "value").rows()
    [('A', 1, 0.0), ('A', 2, 0.5), ('B', 1, 0.5), ('B', 2, 0.0)]
    """
    shown = _shown(m)
    return Measure(
        "result",
        _flag(pl.col(CLICKED) & shown),
        _flag(shown),
        by_position=True,
    )
