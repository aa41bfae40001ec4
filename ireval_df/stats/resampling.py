"""Vectorised resampling: query bootstrap and Fisher's sign-flip randomization.

Every function works on many groups at once (runs x metrics x slices):

- groups that hold the same set of queries form a *block*, a matrix with one
  row per query and one column per group; one draw of resampled queries
  serves the whole block through a matrix product;
- the randomization test flips the signs of all paired differences of all
  groups with one matrix of random signs (Monte Carlo), or enumerates every
  sign pattern exactly for groups of at most :data:`EXACT_MAX` queries
  (meet in the middle: the two halves' sums are sorted and counted, never
  the ``2^n`` patterns one by one).

Draws come in chunks of about :data:`CHUNK` numbers so memory stays bounded
whatever the number of queries and resamples.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df._utils.progress import Progress

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "CHUNK",
    "EXACT_MAX",
    "TOLERANCE",
    "blocks",
    "bootstrap_blocks",
    "bootstrap_means",
    "bootstrap_pvalues",
    "randomization_pvalues",
]

#: Numbers drawn per chunk (bounds memory to a few tens of MB).
CHUNK = 1 << 22
#: Largest number of queries for which the randomization test is exact.
EXACT_MAX = 20
#: Sums closer than this (relative to the sum of absolute differences) are equal.
TOLERANCE = 1e-10


def blocks(
    frame: pl.DataFrame, group: str, key: str, value: str
) -> list[tuple[NDArray[np.int64], NDArray[np.float64]]]:
    """Split values into blocks of groups that share the same set of keys.

    Parameters
    ----------
    frame : polars.DataFrame
        One row per (group, key): ``group`` an integer id, ``key`` the query
        id, ``value`` a float.
    group, key, value : str
        Column names.

    Returns
    -------
    list of (group ids, matrix)
        The matrix has one row per key (sorted) and one column per group id.

    Examples
    --------
    >>> import polars as pl
    >>> f = pl.DataFrame({"g": [0, 0, 1, 1, 2], "q": ["a", "b", "b", "a", "a"],
    ...                   "v": [1.0, 2.0, 4.0, 3.0, 5.0]})
    >>> [(g.tolist(), x.tolist()) for g, x in blocks(f, "g", "q", "v")]
    [([0, 1], [[1.0, 3.0], [2.0, 4.0]]), ([2], [[5.0]])]
    """
    import numpy as np

    per_group = (
        frame.group_by(group)
        .agg(pl.col(key).sort().alias("__k"), pl.col(value).sort_by(key).alias("__v"))
        .sort(group)
    )
    grouped = per_group.group_by("__k", maintain_order=True).agg(
        pl.col(group), pl.col("__v")
    )
    out = []
    for ids, values in zip(grouped[group], grouped["__v"], strict=True):
        matrix = np.array(values.to_list(), dtype=np.float64).T
        out.append((ids.to_numpy().astype(np.int64), np.ascontiguousarray(matrix)))
    return out


def _chunk_rows(n_resamples: int, width: int) -> int:
    return max(1, min(n_resamples, CHUNK // max(width, 1)))


def bootstrap_means(
    matrix: NDArray[np.float64],
    n_resamples: int,
    rng: np.random.Generator,
    bar: Progress | None = None,
) -> NDArray[np.float64]:
    """Means of every column over ``n_resamples`` resamples of the rows.

    One draw of row indices (with replacement) is shared by all columns, so
    the columns of a block are resampled jointly, as paired data must be.

    Parameters
    ----------
    matrix : ndarray, shape (n, g)
        One row per query, one column per group.
    n_resamples : int
        Number of bootstrap resamples ``R``.
    rng : numpy.random.Generator
        Source of the draws.
    bar : Progress, optional
        Advanced by one step per resample.

    Returns
    -------
    ndarray, shape (R, g)

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0], [1.0]])
    >>> bootstrap_means(x, 3, np.random.default_rng(0)).ravel().tolist()
    [1.0, 1.0, 1.0]
    """
    import numpy as np

    n, width = matrix.shape
    out = np.empty((n_resamples, width), dtype=np.float64)
    step = _chunk_rows(n_resamples, n)
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        picks = rng.integers(0, n, size=(rows, n))
        flat = (picks + (np.arange(rows) * n)[:, None]).ravel()
        counts = np.bincount(flat, minlength=rows * n).reshape(rows, n)
        out[start : start + rows] = (counts @ matrix) / n
        if bar is not None:
            bar.update(rows)
    return out


def bootstrap_blocks(
    parts: Sequence[tuple[NDArray[np.int64], NDArray[np.float64]]],
    n_resamples: int,
    rng: np.random.Generator,
    reduce: Callable[[NDArray[np.int64], NDArray[np.float64]], None],
) -> None:
    """Bootstrap every block and hand each group's resampled means to ``reduce``.

    A block's columns are processed a few hundred at a time so that at most
    about :data:`CHUNK` means are held at once; every chunk of a block
    replays the same draws (the generator state is restored), so the result
    does not depend on the chunking.

    Parameters
    ----------
    parts : list of (group ids, matrix)
        As returned by :func:`blocks`.
    n_resamples : int
        Resamples per block.
    rng : numpy.random.Generator
        Source of the draws; advanced past all blocks.
    reduce : callable
        Called with group ids and their ``(n_resamples, len(ids))`` means.

    Examples
    --------
    >>> import numpy as np
    >>> seen = []
    >>> parts = [(np.array([0, 1]), np.ones((3, 2)))]
    >>> bootstrap_blocks(parts, 4, np.random.default_rng(0),
    ...                  lambda ids, m: seen.append((ids.tolist(), m.shape)))
    >>> seen
    [([0, 1], (4, 2))]
    """
    import numpy as np

    work = sum(n_resamples * m.shape[0] * max(m.shape[1], 1) for _, m in parts)
    step = max(1, CHUNK // n_resamples)
    with Progress(n_resamples * len(parts), "bootstrap", work=work) as bar:
        for ids, matrix in parts:
            state = rng.bit_generator.state
            for start in range(0, matrix.shape[1], step):
                rng.bit_generator.state = state
                columns = np.ascontiguousarray(matrix[:, start : start + step])
                ticks = bar if start == 0 else None
                means = bootstrap_means(columns, n_resamples, rng, ticks)
                reduce(ids[start : start + step], means)


def bootstrap_pvalues(
    means: NDArray[np.float64],
    observed: NDArray[np.float64],
    scale: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Two-sided paired bootstrap p-values by the shift method.

    ``p = (1 + #{|m* - d| >= |d|}) / (R + 1)``: the resampled means ``m*``
    are centred on the observed mean difference ``d`` (the null of no
    difference), and a resample counts when it lies at least as far from 0
    as ``d`` (within :data:`TOLERANCE` x ``scale``). 1 when ``d`` is 0.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([[0.5], [1.5], [1.0], [3.0]])
    >>> bootstrap_pvalues(m, np.array([1.0]), np.array([1.0])).tolist()
    [0.4]
    """
    import numpy as np

    threshold = np.abs(observed) - TOLERANCE * scale
    hits = (np.abs(means - observed) >= threshold).sum(axis=0)
    p = (1.0 + hits) / (means.shape[0] + 1.0)
    return np.where(threshold <= 0, 1.0, p)


def _patterns(n: int) -> NDArray[np.float64]:
    """All ``2^n`` sign patterns of length ``n`` as rows of +-1."""
    import numpy as np

    bits = (np.arange(1 << n)[:, None] >> np.arange(n)[None, :]) & 1
    return (1.0 - 2.0 * bits).astype(np.float64)


def _exact_counts(
    matrix: NDArray[np.float64], threshold: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Count the sign patterns whose sum is at least ``threshold``, per column.

    Meet in the middle: the sums of the first and of the second half of the
    rows are computed for all half patterns; a pair counts when
    ``a + b >= t``, i.e. ``b >= t - a``, found by sorting each column's
    ``b`` and ``t - a`` values together.
    """
    import numpy as np

    n, width = matrix.shape
    half = n // 2
    step = max(1, (CHUNK // 8) // ((1 << half) + (1 << (n - half))))
    if width > step:
        return np.concatenate(
            [
                _exact_counts(matrix[:, i : i + step], threshold[i : i + step])
                for i in range(0, width, step)
            ]
        )
    first = _patterns(half) @ matrix[:half]
    second = _patterns(n - half) @ matrix[half:]
    n_first, n_second = first.shape[0], second.shape[0]
    # one row per column: the t - a values first, then the b values; a stable
    # sort puts each t - a before the b values equal to it, so the b values
    # after it are exactly those with b >= t - a
    joint = np.concatenate([(threshold[None, :] - first).T, second.T], axis=1)
    is_second = np.argsort(joint, axis=1, kind="stable") >= n_first
    after = n_second - np.cumsum(is_second, axis=1)
    counts: NDArray[np.float64] = np.where(is_second, 0, after).sum(axis=1) * 1.0
    return counts


def randomization_pvalues(
    values: NDArray[np.float64],
    lengths: NDArray[np.int64],
    n_resamples: int,
    rng: np.random.Generator,
    *,
    exact_max: int = EXACT_MAX,
    bar: Progress | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Two-sided p-values of Fisher's paired randomization (sign-flip) test.

    Parameters
    ----------
    values : ndarray
        Paired differences of all groups, concatenated group after group.
    lengths : ndarray of int
        Number of differences of each group, in order.
    n_resamples : int
        Random sign patterns drawn for groups above ``exact_max`` queries.
    rng : numpy.random.Generator
        Source of the draws.
    exact_max : int, default 20
        Groups with at most this many queries enumerate all ``2^n`` patterns.
    bar : Progress, optional
        Advanced by one step per drawn pattern.

    Returns
    -------
    (p-values, exact)
        ``p = #{|sum s_i d_i| >= |sum d_i|} / 2^n`` when exact, else
        ``(1 + #hits) / (R + 1)`` over ``R`` random patterns, shared by all
        groups (one matrix product). NaN for empty groups, 1 when every
        difference is 0.

    Examples
    --------
    >>> import numpy as np
    >>> p, exact = randomization_pvalues(np.array([1.0, 2.0, 3.0]), np.array([3]),
    ...                                  100, np.random.default_rng(0))
    >>> p.tolist(), exact.tolist()
    ([0.25], [True])
    """
    import numpy as np

    width = len(lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    group = np.repeat(np.arange(width), lengths)
    position = np.arange(len(values)) - np.repeat(starts, lengths)
    observed = np.abs(np.bincount(group, weights=values, minlength=width))
    scale = np.bincount(group, weights=np.abs(values), minlength=width)
    threshold = observed - TOLERANCE * scale
    p = np.full(width, np.nan)
    exact = lengths <= exact_max
    for n in np.unique(lengths[exact & (lengths > 0)]):
        cols = np.flatnonzero(lengths == n)
        matrix = np.zeros((int(n), len(cols)))
        rows = np.isin(group, cols)
        local = np.searchsorted(cols, group[rows])
        matrix[position[rows], local] = values[rows]
        counts = _exact_counts(matrix, threshold[cols])
        p[cols] = np.minimum(1.0, 2.0 * counts / float(1 << int(n)))
    sampled = np.flatnonzero(~exact)
    if len(sampled):
        n_max = int(lengths[sampled].max())
        matrix = np.zeros((n_max, len(sampled)))
        rows = np.isin(group, sampled)
        local = np.searchsorted(sampled, group[rows])
        matrix[position[rows], local] = values[rows]
        hits = np.zeros(len(sampled))
        step = _chunk_rows(n_resamples, max(n_max, len(sampled)))
        for start in range(0, n_resamples, step):
            rows_now = min(step, n_resamples - start)
            signs = 1.0 - 2.0 * rng.integers(0, 2, size=(rows_now, n_max))
            sums = np.abs(signs @ matrix)
            hits += (sums >= threshold[sampled][None, :]).sum(axis=0)
            if bar is not None:
                bar.update(rows_now)
        p[sampled] = (1.0 + hits) / (n_resamples + 1.0)
    p = np.where((threshold <= 0) & (lengths > 0), 1.0, p)
    return p, exact
