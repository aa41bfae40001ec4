"""Small numerical helpers that must not need scipy (a soft dependency).

``t_ppf``, ``t_two_sided`` and ``binom_two_sided`` are checked against
scipy (``t.ppf``, ``ttest_rel``, ``binomtest``) in the unit tests.
"""

from __future__ import annotations

import math

__all__ = [
    "GM_FLOOR",
    "betainc",
    "binom_two_sided",
    "t_cdf",
    "t_ppf",
    "t_two_sided",
]

#: trec_eval's floor for geometric means (gm_map, gm_bpref).
GM_FLOOR = 1e-5


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b).

    Examples
    --------
    >>> round(betainc(2.0, 3.0, 0.4), 10)
    0.5248
    """
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b)
        - math.lgamma(a)
        - math.lgamma(b)
        + a * math.log(x)
        + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Student-t cumulative distribution function.

    Examples
    --------
    >>> t_cdf(0.0, 5)
    0.5
    """
    x = df / (df + t * t)
    tail = 0.5 * betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def t_ppf(p: float, df: float) -> float:
    """Student-t quantile, by bisection on :func:`t_cdf` (to ~1e-13).

    Examples
    --------
    >>> round(t_ppf(0.975, 10), 6)
    2.228139
    """
    if not 0.0 < p < 1.0:
        msg = f"t_ppf needs 0 < p < 1, found {p!r}"
        raise ValueError(msg)
    if p == 0.5:
        return 0.0
    lo, hi = -1.0, 1.0
    while t_cdf(lo, df) > p:
        lo *= 2.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13 * max(1.0, abs(mid)):
            break
    return 0.5 * (lo + hi)


def t_two_sided(t: float, df: float) -> float:
    """Two-sided p-value of Student's t: ``P(|T| >= |t|)`` for ``df`` dof.

    Parameters
    ----------
    t : float
        The statistic; ``inf`` gives 0 and NaN gives NaN.
    df : float
        Degrees of freedom (> 0).

    Returns
    -------
    float
        ``I_{df/(df+t^2)}(df/2, 1/2)``, the regularised incomplete beta
        function, accurate to about 1e-14.

    Examples
    --------
    >>> round(t_two_sided(2.228138851986, 10), 9)
    0.05
    >>> t_two_sided(0.0, 3)
    1.0
    """
    if math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def binom_two_sided(k: int, n: int) -> float:
    """Exact two-sided binomial test of ``k`` successes in ``n`` trials at p = 1/2.

    Parameters
    ----------
    k : int
        Successes (for the sign test: queries where the run wins).
    n : int
        Trials (wins plus losses; ties are left out).

    Returns
    -------
    float
        ``min(1, 2 P(X <= min(k, n - k)))`` for ``X ~ Binomial(n, 1/2)``,
        computed in exact integer arithmetic (as ``scipy.stats.binomtest``,
        whose two-sided p-value is the same for p = 1/2). 1 when ``n`` is 0.

    Examples
    --------
    >>> binom_two_sided(0, 5)
    0.0625
    >>> binom_two_sided(3, 6)
    1.0
    """
    if n <= 0:
        return 1.0
    low = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(low + 1))
    return min(1.0, (2 * tail) / (1 << n))
