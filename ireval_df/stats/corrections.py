"""Multiple-testing corrections, equal to statsmodels' ``multipletests``.

Each takes the family's p-values and returns adjusted p-values; a
comparison is significant when its adjusted p-value is at most ``alpha``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["CORRECTIONS", "Correction", "adjust"]

Correction = Literal["holm", "bonferroni", "bh", "by"]
#: The accepted ``correction=`` words (and ``None``) and statsmodels' names.
CORRECTIONS: dict[str, str] = {
    "holm": "holm",
    "bonferroni": "bonferroni",
    "bh": "fdr_bh",
    "by": "fdr_by",
}


def adjust(p: NDArray[np.float64], method: Correction | None) -> NDArray[np.float64]:
    """Adjust a family of p-values.

    Parameters
    ----------
    p : ndarray
        The family's p-values (no NaN).
    method : {"holm", "bonferroni", "bh", "by"} or None
        Holm's step-down (family-wise error), Bonferroni, Benjamini-Hochberg
        or Benjamini-Yekutieli (false discovery rate); None leaves ``p``.

    Returns
    -------
    ndarray
        Adjusted p-values, capped at 1, in the order of ``p``; equal to
        ``statsmodels.stats.multitest.multipletests(p, method=...)[1]``
        (methods ``holm``, ``bonferroni``, ``fdr_bh``, ``fdr_by``).

    Examples
    --------
    >>> import numpy as np
    >>> adjust(np.array([0.01, 0.04, 0.03]), "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust(np.array([0.01, 0.04, 0.03]), "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
    """
    import numpy as np

    p = np.asarray(p, dtype=np.float64)
    n = len(p)
    if method is None or n == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(p * n, 1.0)
    order = np.argsort(p, kind="mergesort")
    ranked = p[order]
    if method == "holm":
        stepped = np.maximum.accumulate((n - np.arange(n)) * ranked)
        adjusted = np.minimum(stepped, 1.0)
    else:
        factor = np.arange(1, n + 1) / n
        if method == "by":
            factor = factor / np.sum(1.0 / np.arange(1, n + 1))
        raw = ranked / factor
        adjusted = np.minimum(np.minimum.accumulate(raw[::-1])[::-1], 1.0)
    out = np.empty(n)
    out[order] = adjusted
    return out
