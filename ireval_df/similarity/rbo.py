"""Rank-Biased Overlap with ties: Corsi & Urbano (SIGIR 2024), every comparison at once.

The numbers are those of the authors' reference code (``rbo/Python/rbo.py``
of github.com/julian-urbano/sigir2024-rbo, called as
``rbo(x_groups, y_groups, p, ties=..., score=(score,))``), computed without
its item-by-depth matrices: per depth, the expected overlap is a handful of
counts (running sums of events over the documents), so the cost is linear
in the rankings' lengths.

Notation, per comparison: ``S`` is the ranking with fewer documents and
``L`` the other (equal lengths: ``S`` is the baseline ``y``, ``L`` the run
``x``, as in the reference); ``s <= l`` their lengths; ``d = 1..l`` the
depth. A document ``i`` of a ranking sits in a tie group that starts at
position ``t_i`` and ends at ``b_i`` (size ``g_i``); its share of the
ranking's top ``d`` is ``c(i, d) = 1[d >= t_i]`` for ``ties="w"`` and
``clip((d - t_i + 1) / g_i, 0, 1)`` for ``"a"`` and ``"b"``.

The overlap ``X_d = sum_i c_S(i, d) c_L(i, d)`` over the common documents
is split by where each one stands at depth ``d`` in each ranking: in a group
that ended before ``d`` (``c = 1``), or in the group that covers position
``d`` (the same ``c`` for all its members). So, with ``cS(d)``, ``cL(d)``
the shares of the covering groups::

    X_d = #{both ended} + cS(d) #{in S's covering group, ended in L}
          + cL(d) #{ended in S, in L's covering group}
          + cS(d) cL(d) #{in both covering groups}

Each count is a running sum of events (+1 at the depth where a document
enters that case, -1 where it leaves it), so no row is exploded, not even a
tie group's: rows stay linear in the rankings' length whatever the ties.
The max bound's L-only documents and ext's mean share are closed forms of
the same counts.

How it is computed: past depth ``D = ceil(64 ln 2 / ln(1/p))`` (422 for
``p = 0.9``) the weight left is below ``2**-64`` (:func:`horizon`), so each
ranking is cut after the tie group that covers depth ``D`` before anything
else (:func:`ireval_df.similarity` ranks only that far): on 1,000-document
rankings with ``p = 0.9`` that is 58 % of the rows and depths never read.
Only the scores asked for are summed. Then the common documents are found
(a polars join on ``key, doc_id``'s hash, in the first side's row order)
and everything else is numpy over flat arrays, the keys a batch of about
``2**16`` depths at a time (:func:`_batches`; the arrays of a batch stay
in the processor's caches, which halves the kernel's time, and batches run
side by side on polars' thread count). Within a batch every key's depths
``1..l`` are laid end to end, key ``k``'s depth ``d`` at ``offset[k] + d -
1`` (``offset`` the running sum of the ``l``'s), so a ranking's row at
position ``d`` lands there without a sort (positions run 1..n without
gaps), giving the covering groups; events are added with ``np.bincount``
at those indices and summed up within each key with one ``np.cumsum``; the
scores are elementwise, and their per-key sums are ``np.bincount`` with
weights. ``docs/benchmarks.md`` has the timings (``bench/similarity.py``).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, get_args

import polars as pl

if TYPE_CHECKING:
    import numpy as np

from ireval_df._utils.parallel import run_all
from ireval_df.errors import OptionError
from ireval_df.similarity.rankings import KEY, RANKED, without_ties

__all__ = ["RBO_SCORES", "RBO_TIES", "horizon", "rbo"]

Score = Literal["ext", "min", "max", "res"]
Ties = Literal["a", "b", "w", "none"]
#: The scores :func:`rbo` computes
RBO_SCORES: tuple[Score, ...] = get_args(Score)
#: The treatments of ties :func:`rbo` knows
RBO_TIES: tuple[Ties, ...] = get_args(Ties)


def rbo(
    x: pl.LazyFrame,
    y: pl.LazyFrame,
    keys: pl.DataFrame,
    *,
    p: float,
    score: Score,
    ties: Ties,
) -> pl.DataFrame:
    """Rank-Biased Overlap of each run ranking ``x`` with its baseline ``y``.

    Parameters
    ----------
    x : polars.LazyFrame
        The compared run's rankings: ``key, doc_id, pos, tie_start,
        tie_size`` (:mod:`ireval_df.similarity.rankings`), positions 1..n
        without gaps in each ranking.
    y : polars.LazyFrame
        The baseline's rankings, same columns.
    keys : polars.DataFrame
        Every comparison (column ``key``); a key without rows on a side
        compares with an empty ranking.
    p : float
        Persistence, in (0, 1): the weight of depth ``d`` is proportional
        to ``p ** d``.
    score : {"ext", "min", "max", "res"}
        The extrapolated value, the lower and upper bounds over every way
        the rankings could continue past their ends, and the residual
        ``max - min``.
    ties : {"a", "b", "w", "none"}
        Ties as uncertainty, averaged over their orders (``"a"``), as
        uncertainty with the information they lose taken off (``"b"``), as
        equality (``"w"``), or broken in position order (``"none"``: every
        document its own group, Webber et al.'s RBO).

    Returns
    -------
    polars.DataFrame
        ``key, value`` (Float64), one row per row of ``keys``, in its order.

    Raises
    ------
    OptionError
        ``p`` is not in (0, 1), or ``score`` or ``ties`` is not one of the
        words above.

    Notes
    -----
    Corsi & Urbano's definitions, as their reference code computes them
    (not clamped: a value can pass 1 by a rounding error). Where it gives
    no number, ours:

    - both rankings empty: ``ext = min = max = 1.0``, ``res = 0.0``
      (identical, nothing to disagree on; the reference raises);
    - one ranking empty: ``ext = 0.0`` (the reference raises); ``min``,
      ``max`` and ``res`` are the reference's: ``min = 0.0`` and ``max``
      the bound it gives for the empty ranking becoming the other one
      (1.0 without ties), so ``res = max``.

    Depth runs over the whole of both rankings: to compare at a cutoff,
    :func:`~ireval_df.similarity.rankings.cut` them first. As in the
    reference, a comparison in which neither ranking has a tie uses the
    ``"w"`` formulas, whatever ``ties`` (the three agree there, up to
    rounding). RBO is symmetric: swapping ``x`` and ``y`` changes a value
    by rounding only.

    Examples
    --------
    Identical rankings agree at every depth; ``[a, b, c]`` against
    ``[b, a, c]`` disagrees at depth 1 only, so with ``p = 0.5``:
    ``(1 - p) / p * (0 * p + 1 * p**2 + 1 * p**3 + p**4 / (1 - p)) = 0.5``.

    >>> def side(key, docs, tie_start):
    ...     return pl.LazyFrame({"key": key, "doc_id": docs, "pos": range(1, len(docs) + 1),
    ...                          "tie_start": tie_start,
    ...                          "tie_size": [tie_start.count(t) for t in tie_start]})
    >>> x = pl.concat([side(0, ["a", "b", "c"], [1, 2, 3]), side(1, ["a", "b", "c"], [1, 2, 3])])
    >>> y = pl.concat([side(0, ["a", "b", "c"], [1, 2, 3]), side(1, ["b", "a", "c"], [1, 2, 3])])
    >>> keys = pl.DataFrame({"key": [0, 1, 2]})
    >>> rbo(x, y, keys, p=0.5, score="ext", ties="a").rows()
    [(0, 1.0), (1, 0.5), (2, 1.0)]

    Key 2 has no ranking on either side. A tie at the top of ``x``: with
    ``ties="a"`` it is either order, half the time the right one.

    >>> x = side(0, ["a", "b", "c"], [1, 1, 3])
    >>> y = side(0, ["a", "b", "c"], [1, 2, 3])
    >>> rbo(x, y, keys.head(1), p=0.5, score="ext", ties="a")["value"].round(4).to_list()
    [0.75]
    """
    _check(p, score, ties)
    if ties == "none":
        x, y = without_ties(x), without_ties(y)
        ties = "w"
    # past the horizon the remaining weight is below 2**-64: cut each ranking
    # after the tie group that covers that depth (module notes)
    depth = horizon(p)
    sides = pl.collect_all([side.select(RANKED) for side in (x, y)])
    # similarity() ranks only within the deepest reach, so this cut is
    # mostly done already: a filter then only copies the rows (ids and all)
    x_rows, y_rows = (
        side.filter(pl.col("tie_start") <= depth)
        if side.height and side["tie_start"].max() > depth  # type: ignore[operator]
        else side
        for side in sides
    )
    values = _per_key(
        x_rows, y_rows, p, ties, ("min", "max") if score == "res" else (score,)
    )
    out = (
        keys.lazy().select(KEY).join(values, on=KEY, how="left", maintain_order="left")
    )
    both_empty = pl.col("s").is_null()
    one_empty = pl.col("s") == 0
    if score == "res":
        value = pl.when(both_empty).then(0.0).otherwise(pl.col("max") - pl.col("min"))
    elif score == "ext":
        value = (
            pl.when(both_empty)
            .then(1.0)
            .when(one_empty)
            .then(0.0)
            .otherwise(pl.col("ext"))
        )
    else:
        value = pl.when(both_empty).then(1.0).otherwise(pl.col(score))
    return out.select(KEY, value.cast(pl.Float64).alias("value")).collect()


def _check(p: float, score: str, ties: str) -> None:
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 < p < 1.0:
        msg = f"RBO's persistence p must be a number in (0, 1), got p={p!r}.\n  Hint: p=0.9 weighs roughly the top 10."
        raise OptionError(msg)
    for name, value, allowed in (
        ("score", score, RBO_SCORES),
        ("ties", ties, RBO_TIES),
    ):
        if value not in allowed:
            options = ", ".join(repr(a) for a in allowed)
            msg = f"RBO's {name}={value!r} is not one of {options}."
            raise OptionError(msg)


#: The documents' hash seed, and the odd multiplier that mixes a key into it
_SEED, _MIX = 11, 0x9E3779B97F4A7C15
#: Depths scored at once: the score stage's arrays stay a few MB each
_BATCH = 1 << 18
#: RBO's weight past the horizon is below 2 ** -_HORIZON_BITS
_HORIZON_BITS = 64


def horizon(p: float) -> int:
    """Return the depth ``D`` past which RBO's remaining weight is below ``2**-64``.

    The weight of the depths past ``D`` is ``(1 - p) / p * sum_{d > D} p**d
    = p**D``; every agreement is at most 1, so leaving them out changes a
    value by at most a few ``p**D`` (the extrapolated terms past a ranking's
    end are of the same order): ``D = ceil(64 ln 2 / ln(1 / p))``, 422 for
    ``p = 0.9``, 61 for ``p = 0.5``.

    >>> horizon(0.9), horizon(0.5), horizon(0.99)
    (422, 64, 4414)
    """
    return math.ceil(_HORIZON_BITS * math.log(2) / -math.log(p))


@dataclass(frozen=True)
class _Side:
    """One side's rows as numpy arrays (row order of the collected frame)."""

    key: np.ndarray
    pos: np.ndarray
    start: np.ndarray
    size: np.ndarray


@dataclass(frozen=True)
class _Depths:
    """Every key's depths ``1..l`` in one flat array.

    Key code ``k``'s depth ``d`` sits at ``offset[k] + d - 1``. ``len_s,
    len_l``: per key code, ``s`` and ``l``; ``t_l, g_l``: L's covering group
    at each depth; ``t_s, g_s``: S's (``0, 1`` past ``s``, where S has none); ``n``: the running sums of
    :func:`_events`, by name.
    """

    len_s: np.ndarray
    len_l: np.ndarray
    offset: np.ndarray
    tied: np.ndarray
    xl: np.ndarray
    t_l: np.ndarray
    g_l: np.ndarray
    t_s: np.ndarray
    g_s: np.ndarray
    n: dict[str, np.ndarray]


def _per_key(
    x_frame: pl.DataFrame,
    y_frame: pl.DataFrame,
    p: float,
    ties: str,
    wanted: tuple[str, ...],
) -> pl.LazyFrame:
    """``key, s`` and the ``wanted`` scores (of ext, min, max) for every key with a document on either side."""
    import numpy as np

    keys_x, keys_y = x_frame[KEY].to_numpy(), y_frame[KEY].to_numpy()
    everything = np.concatenate([keys_x, keys_y])
    key_type = x_frame.schema[KEY]
    if not len(everything):
        schema: dict[str, pl.DataType] = {KEY: key_type, "s": pl.Int64()}
        schema.update(dict.fromkeys(wanted, pl.Float64()))
        return pl.LazyFrame(schema=schema)
    low, high = int(everything.min()), int(everything.max())
    if low >= 0 and high <= 2 * len(everything) + 1024:
        # keys are row numbers (pair_rankings): each its own code
        names = np.arange(high + 1, dtype=np.int64)
        codes = everything.astype(np.int64, copy=False)
    else:
        names, codes = np.unique(everything, return_inverse=True)
    sides = [
        _Side(
            key=code,
            pos=frame["pos"].to_numpy().astype(np.int32, copy=False),
            start=frame["tie_start"].to_numpy().astype(np.int32, copy=False),
            size=frame["tie_size"].to_numpy().astype(np.int32, copy=False),
        )
        for frame, code in zip(
            (x_frame, y_frame), np.split(codes, [len(keys_x)]), strict=True
        )
    ]
    nx = np.bincount(sides[0].key, minlength=len(names))
    ny = np.bincount(sides[1].key, minlength=len(names))
    batches = _batches(sides[0], sides[1], nx, ny)
    # the join (polars) while numpy lays out the batches' depths
    found: list[Any] = run_all(
        [
            partial(_common, x_frame, y_frame),
            *(partial(_layout, batch.x, batch.y, batch.n_keys) for batch in batches),
        ]
    )
    rows_x, rows_y = found[0]
    kinds = _kinds(ties, wanted)
    parts = run_all(
        [
            partial(_batch_scores, layout, batch, common, p, ties, wanted, kinds)
            for layout, batch, common in zip(
                found[1:],
                batches,
                _split(batches, sides[0], rows_x, rows_y),
                strict=True,
            )
        ]
    )
    values = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    present = np.maximum(nx, ny) > 0
    return pl.LazyFrame(
        {
            KEY: names[present],
            "s": np.minimum(nx, ny)[present],
            **{name: value[present] for name, value in values.items()},
        },
        schema_overrides={KEY: key_type, "s": pl.Int64},
    )


#: Depths a batch of keys holds (its arrays then stay in the processor's
#: caches, and fresh ones cost no page faults)
_BATCH_DEPTHS = 1 << 16


@dataclass(frozen=True)
class _Batch:
    """Keys ``first..first + n_keys - 1``: both sides' rows, the keys counted from 0."""

    first: int
    n_keys: int
    x: _Side
    y: _Side
    #: where the batch's rows stand among each side's
    x_rows: slice
    y_rows: slice


def _batches(x: _Side, y: _Side, nx: np.ndarray, ny: np.ndarray) -> list[_Batch]:
    """Split the keys into batches of about :data:`_BATCH_DEPTHS` depths.

    Where both sides' rows come in key order (``pair_rankings`` numbers the
    keys so, when each ranking's rows are adjacent), each batch is a
    stretch of each side's rows; otherwise everything is one batch.
    """
    import numpy as np

    n_keys = len(nx)
    whole = [_Batch(0, n_keys, x, y, slice(0, len(x.key)), slice(0, len(y.key)))]
    in_order = all(
        not len(side.key) or bool((side.key[1:] >= side.key[:-1]).all())
        for side in (x, y)
    )
    depths = np.cumsum(np.maximum(nx, ny))
    if not in_order or not n_keys or depths[-1] <= _BATCH_DEPTHS:
        return whole
    ends = np.searchsorted(
        depths, np.arange(_BATCH_DEPTHS, depths[-1], _BATCH_DEPTHS), side="right"
    )
    bounds = np.unique(np.concatenate([[0], ends, [n_keys]]))
    cut_x = np.searchsorted(x.key, bounds)
    cut_y = np.searchsorted(y.key, bounds)
    batches = []
    for i in range(len(bounds) - 1):
        first = int(bounds[i])
        xs, ys = slice(cut_x[i], cut_x[i + 1]), slice(cut_y[i], cut_y[i + 1])
        batches.append(
            _Batch(
                first=first,
                n_keys=int(bounds[i + 1]) - first,
                x=_Side(x.key[xs] - first, x.pos[xs], x.start[xs], x.size[xs]),
                y=_Side(y.key[ys] - first, y.pos[ys], y.start[ys], y.size[ys]),
                x_rows=xs,
                y_rows=ys,
            )
        )
    return batches


def _split(
    batches: list[_Batch], x: _Side, rows_x: np.ndarray, rows_y: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each batch's common documents, as rows of its own sides.

    The common documents come in ``x``'s row order (:func:`_common`), so in
    key order where there are several batches.
    """
    import numpy as np

    if len(batches) == 1:
        return [(rows_x, rows_y)]
    firsts = [batch.first for batch in batches]
    cuts = np.searchsorted(x.key[rows_x], [*firsts, firsts[-1] + batches[-1].n_keys])
    return [
        (
            rows_x[cuts[i] : cuts[i + 1]] - batch.x_rows.start,
            rows_y[cuts[i] : cuts[i + 1]] - batch.y_rows.start,
        )
        for i, batch in enumerate(batches)
    ]


def _batch_scores(
    layout: _Layout,
    batch: _Batch,
    common: tuple[np.ndarray, np.ndarray],
    p: float,
    ties: str,
    wanted: tuple[str, ...],
    kinds: tuple[str, ...],
) -> dict[str, np.ndarray]:
    """Compute the ``wanted`` scores of one batch's keys."""
    depths = _depths(layout, batch.x, batch.y, *common, kinds)
    return _scores(depths, p, ties, wanted)


def _common(x: pl.DataFrame, y: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Find the rows of ``x`` and ``y`` that hold the same document of the same key.

    A join on one 64-bit hash of key and document (a third faster than on
    the two columns), then the ids of each pair compared: a collision adds
    a pair that the comparison removes, and a true pair always has equal
    hashes, so the result is exact. In the order of ``x``'s rows, a key's
    documents together: the events' writes (``np.bincount``) then stay
    close together, 5x faster than in any order.
    """
    import numpy as np

    def hashed(side: pl.DataFrame) -> pl.LazyFrame:
        mixed = pl.col("doc_id").hash(_SEED) ^ (pl.col(KEY).cast(pl.UInt64) * _MIX)
        return side.lazy().select(mixed.alias("__ireval_h")).with_row_index("row")

    pairs = (
        hashed(x)
        .join(hashed(y), on="__ireval_h", suffix="_y")
        .select(pl.col("row").alias("row_x"), "row_y")
        .sort("row_x")
        .collect()
    )
    # one chunk each: a gather from many chunks costs 4x more
    same = (x[KEY].gather(pairs["row_x"]) == y[KEY].gather(pairs["row_y"])) & (
        x["doc_id"].rechunk().gather(pairs["row_x"])
        == y["doc_id"].rechunk().gather(pairs["row_y"])
    )
    pairs = pairs.filter(same)
    return (
        pairs["row_x"].to_numpy().astype(np.int64),
        pairs["row_y"].to_numpy().astype(np.int64),
    )


@dataclass(frozen=True)
class _Layout:
    """Every key's depths laid out: the covering groups, without the common documents.

    ``x_long``: per key code, whether ``x`` is L; the rest as in
    :class:`_Depths`.
    """

    len_s: np.ndarray
    len_l: np.ndarray
    offset: np.ndarray
    x_long: np.ndarray
    tied: np.ndarray
    t_l: np.ndarray
    g_l: np.ndarray
    t_s: np.ndarray
    g_s: np.ndarray


def _layout(x: _Side, y: _Side, n_keys: int) -> _Layout:
    """Lay out every key's depths and the groups that cover them on each side."""
    import numpy as np

    nx = np.bincount(x.key, minlength=n_keys)
    ny = np.bincount(y.key, minlength=n_keys)
    # the longer ranking is L; equal lengths: x (the reference's flatten)
    x_long = nx >= ny
    offset = np.zeros(n_keys + 1, dtype=np.int64)
    n_long = np.maximum(nx, ny)
    np.cumsum(n_long, out=offset[1:])
    size = int(offset[-1])
    tied = np.zeros(n_keys, dtype=bool)
    # positions 1..n without gaps: a ranking's row at depth d is its
    # covering group there (none past its end: 0, 1); L's depths fill the
    # first half of each buffer and S's the second, so each row is written
    # once, straight to its side
    starts = np.zeros(2 * size, dtype=np.int32)
    groups = np.ones(2 * size, dtype=np.int32)

    def lay(side: _Side, long_side: np.ndarray) -> None:
        # the two sides write to separate places (each key's depths are L's
        # on one side, S's on the other), so they are laid out side by side
        tied[side.key[side.size > 1]] = True
        at = offset[side.key] + side.pos - 1
        at += np.where(long_side[side.key], 0, size)
        starts[at], groups[at] = side.start, side.size

    run_all([lambda: lay(x, x_long), lambda: lay(y, ~x_long)])
    return _Layout(
        len_s=np.minimum(nx, ny),
        len_l=n_long,
        offset=offset,
        x_long=x_long,
        tied=tied,
        t_l=starts[:size],
        g_l=groups[:size],
        t_s=starts[size:],
        g_s=groups[size:],
    )


def _depths(
    layout: _Layout,
    x: _Side,
    y: _Side,
    rows_x: np.ndarray,
    rows_y: np.ndarray,
    kinds: tuple[str, ...],
) -> _Depths:
    """Add the common documents' events' running sums to the laid-out depths."""
    import numpy as np

    # the common documents: their key and both rankings' groups
    key = x.key[rows_x]
    long = layout.x_long[key]
    t_x, t_y = x.start[rows_x], y.start[rows_y]
    b_x, b_y = t_x + x.size[rows_x] - 1, t_y + y.size[rows_y] - 1
    c_t_l, c_t_s = np.where(long, t_x, t_y), np.where(long, t_y, t_x)
    c_b_l, c_b_s = np.where(long, b_x, b_y), np.where(long, b_y, b_x)
    n = _events(key, c_t_s, c_b_s, c_t_l, c_b_l, layout.offset, layout.len_l, kinds)
    return _Depths(
        len_s=layout.len_s,
        len_l=layout.len_l,
        offset=layout.offset,
        tied=layout.tied,
        xl=np.bincount(key, minlength=len(layout.len_l)),
        t_l=layout.t_l,
        g_l=layout.g_l,
        t_s=layout.t_s,
        g_s=layout.g_s,
        n=n,
    )


def _kinds(ties: str, wanted: tuple[str, ...]) -> tuple[str, ...]:
    """Name the running counts (:func:`_events`) that the ``wanted`` scores read."""
    kinds = ["ended", "in_s", "in_l", "in_both"]  # the overlap
    if ties != "w" and "ext" in wanted:  # the mean share of the unseen documents
        kinds.append("started")
    if ties != "w" and "max" in wanted:  # the unseen documents of ended groups
        kinds.append("ended_l")
    return tuple(kinds)


def _events(
    key: np.ndarray,
    t_s: np.ndarray,
    b_s: np.ndarray,
    t_l: np.ndarray,
    b_l: np.ndarray,
    offset: np.ndarray,
    n_long: np.ndarray,
    kinds: tuple[str, ...],
) -> dict[str, np.ndarray]:
    """Per depth, the counts of common documents in each case, as running sums.

    ``ended`` (both groups ended), ``started`` (L group started),
    ``ended_l`` (L group ended), and the documents in a covering group:
    ``in_s`` (in S's, its L group ended), ``in_l`` (the converse),
    ``in_both``; those of ``kinds``. Each is +1 at the depth where a
    document enters the case and -1 past the depth where it leaves it
    (``l + 1`` at the latest, as every group ends by ``l``), added with
    ``np.bincount`` and summed with one ``np.cumsum`` over every key's
    depths laid end to end. The -1 past key ``k``'s last depth falls on the
    next key's first depth (one spare slot after the last key): by then
    every event of key ``k`` has cancelled, so the running sum of each key
    starts from 0 without a reset or a gather, and an empty span (+1 and -1
    at the same slot) needs no mask.
    """
    import numpy as np

    size = int(offset[-1])
    # key k's depth d at offset[k] + d - 1
    base = offset[key] - 1
    past = n_long[key] + 1

    def span(start: np.ndarray, end: np.ndarray | None = None) -> np.ndarray:
        leave = past if end is None else np.maximum(end + 1, start)
        added = np.bincount(base + start, minlength=size + 1)
        added -= np.bincount(base + leave, minlength=size + 1)
        total: np.ndarray = np.cumsum(added[:size], dtype=np.int32)
        return total

    cases = {
        "ended": lambda: span(np.maximum(b_s, b_l) + 1),
        "started": lambda: span(t_l),
        "ended_l": lambda: span(b_l + 1),
        "in_s": lambda: span(np.maximum(b_l + 1, t_s), b_s),
        "in_l": lambda: span(np.maximum(b_s + 1, t_l), b_l),
        "in_both": lambda: span(np.maximum(t_s, t_l), np.minimum(b_s, b_l)),
    }
    return dict(zip(kinds, run_all([cases[name] for name in kinds]), strict=True))


def _scores(
    depths: _Depths, p: float, ties: str, wanted: tuple[str, ...]
) -> dict[str, np.ndarray]:
    """Compute the ``wanted`` scores per key code, the depths a batch of keys at a time."""
    import numpy as np

    n_keys = len(depths.len_l)
    longest = int(depths.len_l.max()) if n_keys else 0
    # p ** d for every depth of the sums and of max's tail (up to l + s)
    power = p ** np.arange(2 * longest + 2, dtype=np.float64)
    totals = {name: np.zeros(n_keys) for name in _sums(wanted)}
    # batches of keys write to separate slices of the totals: side by side
    bounds = [0]
    while bounds[-1] < n_keys:
        first = bounds[-1]
        stop = int(np.searchsorted(depths.offset, depths.offset[first] + _BATCH))
        bounds.append(min(max(stop, first + 1), n_keys))
    run_all(
        [
            partial(_score_batch, depths, first, stop, p, ties, power, totals)
            for first, stop in itertools.pairwise(bounds)
        ]
    )
    k = (1 - p) / p
    s = depths.len_s.astype(np.float64)
    n_long = depths.len_l.astype(np.float64)
    xl = depths.xl.astype(np.float64)
    scores = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        if "ext" in wanted:
            scores["ext"] = k * (
                totals["sum_ext"]
                + (xl + (n_long - s) * totals["a_s"])
                / n_long
                * p ** (n_long + 1)
                / (1 - p)
            )
        if "min" in wanted:
            weight = power[1 : longest + 1] / np.arange(
                1, longest + 1, dtype=np.float64
            )
            harmonic = np.concatenate([[0.0], np.cumsum(weight)])[depths.len_l]
            scores["min"] = k * (
                totals["sum_min"] + xl * (math.log(1 / (1 - p)) - harmonic)
            )
        if "max" in wanted:
            f = n_long + s - xl
            scores["max"] = k * (
                totals["sum_max"] + (totals["tail_max"] + p ** (f + 1) / (1 - p))
            )
    return scores


def _sums(wanted: tuple[str, ...]) -> list[str]:
    """Name the per-key sums that the ``wanted`` scores read."""
    needs = {
        "ext": ["sum_ext", "a_s"],
        "min": ["sum_min"],
        "max": ["sum_max", "tail_max"],
    }
    return [name for score in wanted for name in needs[score]]


def _score_batch(
    depths: _Depths,
    first: int,
    stop: int,
    p: float,
    ties: str,
    power: np.ndarray,
    totals: dict[str, np.ndarray],
) -> None:
    """Add the per-key sums of keys ``first..stop - 1`` to ``totals`` (those it holds)."""
    import numpy as np

    rows = slice(int(depths.offset[first]), int(depths.offset[stop]))
    lengths = depths.len_l[first:stop]
    key = np.repeat(np.arange(stop - first), lengths)
    level = (
        np.arange(rows.stop - rows.start, dtype=np.int64)
        - np.repeat(depths.offset[first:stop] - depths.offset[first], lengths)
        + 1
    )
    d = level.astype(np.float64)
    len_s = depths.len_s[first:stop][key]
    beyond = level > len_s  # S has run out
    tied = depths.tied[first:stop][key]
    t_l = depths.t_l[rows].astype(np.float64)
    g_l = depths.g_l[rows].astype(np.float64)
    t_s = depths.t_s[rows].astype(np.float64)
    g_s = depths.g_s[rows].astype(np.float64)
    b_l = t_l + g_l - 1
    n = {name: value[rows].astype(np.float64) for name, value in depths.n.items()}

    def norm2(t: np.ndarray, g: np.ndarray) -> np.ndarray:
        # sum of c(i, d)^2 over a ranking: the groups before, and the covering one
        value: np.ndarray = (t - 1) + (d - t + 1) ** 2 / g
        return value

    if ties == "w":
        c_s: np.ndarray | float = 1.0
        c_l: np.ndarray | float = 1.0
    else:
        c_s, c_l = (d - t_s + 1) / g_s, (d - t_l + 1) / g_l
    overlap = (
        n["ended"]
        + c_l * n["in_l"]
        + np.where(beyond, 0.0, c_s * (n["in_s"] + c_l * n["in_both"]))
    )
    # past s, S's unseen documents count as untied: its size and norm are d
    size_s = np.where(beyond, d, t_s + g_s - 1)
    if ties == "b":
        norm_s = np.sqrt(np.where(beyond, d, norm2(t_s, g_s)))
        norm_l = np.sqrt(norm2(t_l, g_l))

    def agreement(num: np.ndarray) -> np.ndarray:
        w: np.ndarray = 2 * num / (size_s + b_l)
        if ties == "w":
            return w
        tie: np.ndarray = num / d if ties == "a" else num / norm_s / norm_l
        return np.where(tied, tie, w)

    def per_key(values: np.ndarray, which: np.ndarray = key) -> np.ndarray:
        summed: np.ndarray = np.bincount(which, weights=values, minlength=stop - first)
        return summed

    weight = power[level]
    past = np.maximum(d - len_s, 0.0)
    a_min = agreement(overlap)
    if "sum_min" in totals:
        totals["sum_min"][first:stop] = per_key(a_min * weight)
    if "sum_ext" in totals:
        # A at depth s, each key's; none when S is empty (0)
        at_s = level == len_s
        a_s = np.zeros(stop - first)
        a_s[key[at_s]] = a_min[at_s]
        totals["a_s"][first:stop] = a_s
        if ties == "w":
            mean_unseen: np.ndarray | float = 1.0
        else:
            # the mean c_L(d) of the L-only documents already started (past s)
            with np.errstate(divide="ignore", invalid="ignore"):
                mean_unseen = (d - overlap) / (b_l - n["started"])
        with np.errstate(invalid="ignore"):
            unseen_ext = np.where(beyond, past * a_s[key] * mean_unseen, 0.0)
        totals["sum_ext"][first:stop] = per_key(
            agreement(overlap + unseen_ext) * weight
        )
    if "sum_max" in totals:
        if ties == "w":
            unseen_max = past
        else:
            # S's positions s+1..d hold u_1..u_{d-s}, the L-only documents in
            # L's order: first the `ended` ones of the groups before d's
            # (share 1), then members of d's covering group (share c_L)
            ended = t_l - 1 - n["ended_l"]
            unseen_max = np.minimum(past, ended) + c_l * np.maximum(past - ended, 0.0)
        totals["sum_max"][first:stop] = per_key(
            agreement(overlap + unseen_max) * weight
        )
        # max's tail l+1..f, f = l + s - X_l: depths l + d for d = 1..s - X_l
        xl = depths.xl[first:stop][key]
        n_long = lengths[key]
        in_tail = level <= len_s - xl
        tail_d = (n_long + level)[in_tail]
        s = len_s[in_tail].astype(np.float64)
        tail = (2 * tail_d - n_long[in_tail] - s + xl[in_tail]) / tail_d * power[tail_d]
        totals["tail_max"][first:stop] = per_key(tail, key[in_tail])
