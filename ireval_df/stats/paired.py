"""Paired tests on per-group summaries: Student's t, the sign test, Wilcoxon.

The t-test and sign test need no scipy (``ireval_df.stats.distributions``); Wilcoxon's
signed-rank test calls ``scipy.stats.wilcoxon`` (the ``stats`` extra), so
its exact and normal-approximation p-values are scipy's own.
"""

from __future__ import annotations

import importlib
import math
import warnings
from typing import TYPE_CHECKING

from ireval_df.errors import IrevalError
from ireval_df.stats.distributions import binom_two_sided, t_ppf, t_two_sided

if TYPE_CHECKING:
    from types import ModuleType

    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "require_scipy",
    "sign_pvalues",
    "t_intervals",
    "t_pvalues",
    "wilcoxon_pvalues",
]


def require_scipy(purpose: str) -> ModuleType:
    """Import ``scipy.stats`` or explain how to install it."""
    try:
        module = importlib.import_module("scipy.stats")
    except ImportError as exc:
        msg = f'{purpose} needs scipy: pip install "ireval-df[stats]"'
        raise IrevalError(msg) from exc
    return module


def t_pvalues(
    n: NDArray[np.int64], mean: NDArray[np.float64], sd: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Two-sided paired t-test p-values from ``n``, mean and sd of the differences.

    Equal to ``scipy.stats.ttest_rel(a, b).pvalue``. When every difference is
    0 the p-value is 1 (scipy gives NaN); a constant non-zero difference
    gives 0; fewer than two queries give NaN.

    Examples
    --------
    >>> import numpy as np
    >>> n, mean, sd = np.array([3, 3, 1]), np.array([0, 0.5, 0.5]), np.array([0, 0.5, 0])
    >>> t_pvalues(n, mean, sd).round(4).tolist()
    [1.0, 0.2254, nan]
    """
    import numpy as np

    out = np.full(len(n), np.nan)
    for i, (k, m, s) in enumerate(
        zip(n.tolist(), mean.tolist(), sd.tolist(), strict=True)
    ):
        if k < 2 or m is None or math.isnan(m):
            continue
        if s is None or math.isnan(s) or s == 0.0:
            out[i] = 1.0 if m == 0.0 else 0.0
            continue
        out[i] = t_two_sided(m / (s / math.sqrt(k)), k - 1)
    return out


def t_intervals(
    n: NDArray[np.int64],
    mean: NDArray[np.float64],
    sd: NDArray[np.float64],
    level: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Student-t interval of a mean (NaN below two values).

    Examples
    --------
    >>> import numpy as np
    >>> lo, hi = t_intervals(np.array([11]), np.array([1.0]), np.array([1.0]), 0.95)
    >>> round(float(lo[0]), 4), round(float(hi[0]), 4)
    (0.3282, 1.6718)
    """
    import numpy as np

    quantile = {k: t_ppf(0.5 + level / 2.0, k - 1) for k in set(n.tolist()) if k > 1}
    q = np.array([quantile.get(k, np.nan) for k in n.tolist()], dtype=np.float64)
    with np.errstate(invalid="ignore"):
        half = q * np.nan_to_num(sd) / np.sqrt(np.maximum(n, 1))
    return mean - half, mean + half


def sign_pvalues(
    wins: NDArray[np.int64], losses: NDArray[np.int64]
) -> NDArray[np.float64]:
    """Exact two-sided sign test (binomial, p = 1/2, ties left out).

    Examples
    --------
    >>> import numpy as np
    >>> sign_pvalues(np.array([5, 2]), np.array([0, 2])).tolist()
    [0.0625, 1.0]
    """
    import numpy as np

    return np.array(
        [
            binom_two_sided(w, w + lost)
            for w, lost in zip(wins.tolist(), losses.tolist(), strict=True)
        ],
        dtype=np.float64,
    )


def wilcoxon_pvalues(
    values: NDArray[np.float64], lengths: NDArray[np.int64]
) -> NDArray[np.float64]:
    """``scipy.stats.wilcoxon`` (defaults) on each group's differences.

    Groups whose differences are all 0 get p = 1 (scipy gives NaN); empty
    groups get NaN.
    """
    import numpy as np

    stats = require_scipy('compare(test="wilcoxon")')
    out = np.full(len(lengths), np.nan)
    start = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, k in enumerate(lengths.tolist()):
            d = values[start : start + k]
            start += k
            if k == 0:
                continue
            if not np.any(d):
                out[i] = 1.0
                continue
            out[i] = float(stats.wilcoxon(d).pvalue)
    return out
