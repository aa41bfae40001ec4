"""Rankings with their tie groups, paired with a baseline: what every similarity kernel reads.

A similarity measure compares two rankings of one query: a run's (``x``)
and a baseline's (``y``). Both are frames of the same shape, one row per
ranked document:

``key`` (Int64)
    the comparison: one (run_id, baseline, query_id), numbered by
    :func:`pair_rankings`; the same key on both sides;
``doc_id`` (String)
``pos`` (Int32)
    1-based position in the ranking, in :func:`ireval_df.evaluate`'s order
    (score descending, then ``doc_id`` descending, byte order) up to the
    order within a tie group, which is any unless the rankings were made
    with ``tie_order`` (:func:`rank_with_ties`); :func:`cut` puts a group
    it cuts through in order, and a measure that reads the order within a
    group (ties broken) puts the groups in order first (:func:`order_ties`);
``tie_start`` (Int32), ``tie_size`` (Int32)
    the first position and the size of the document's tie group: the
    documents of one ranking with equal scores (with ``rank_from="column"``,
    equal ranks). A document without a tie is its own group of one.

A key may have rows on one side only: the other ranking is empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal

import polars as pl

from ireval_df._utils.parallel import run_all, workers
from ireval_df.errors import AlignmentError, DataError, OptionError, warn
from ireval_df.offline.engine import EngineOptions, Rankings, find_rankings
from ireval_df.offline.plan import KEYS, N_RET, RANKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

__all__ = [
    "check_two_runs",
    "compared",
    "KEY",
    "RANKED",
    "Pairs",
    "Ranked",
    "order_ties",
    "choose_baselines",
    "cut",
    "pair_rankings",
    "rank_with_ties",
    "run_ids",
    "without_ties",
]

KEY = "key"
#: The columns of one side of a pair (see the module doc)
RANKED = (KEY, "doc_id", "pos", "tie_start", "tie_size")
_VALUE, _TIED = "__ireval_tie_value", "__ireval_tied"
#: find_rankings' flag of a ranking whose rows are not best first
_UNORDERED = "__ireval_unordered"
#: The columns _tie_groups lays out
_LAID = ("pos", "tie_start", "tie_size")
#: pair_rankings' numbers of each comparison's two rankings
_X_RANKING, _Y_RANKING = "__ireval_x_ranking", "__ireval_y_ranking"

Missing = Literal["zero", "skip", "error"]


@dataclass(frozen=True)
class Ranked:
    """Every ranking of a run, its documents positioned (:func:`rank_with_ties`)."""

    #: ``__ireval_ranking, doc_id, pos, tie_start, tie_size``: one row per
    #: row of the run kept, in its order; ``__ireval_ranking`` names the ranking
    rows: pl.DataFrame
    #: ``run_id, query_id, __ireval_ranking``: one row per ranking
    rankings: pl.DataFrame


def rank_with_ties(
    run: pl.LazyFrame,
    *,
    rank_from: Literal["score", "column"] = "score",
    found: Rankings | None = None,
    tie_order: bool = True,
    reach: int | None = None,
) -> Ranked:
    """Give each ranking's documents a position and find their tie groups.

    Parameters
    ----------
    run : polars.LazyFrame
        A checked canonical run (``run_id, query_id, doc_id, score`` and, for
        ``rank_from="column"``, ``rank``), one row per document and ranking.
    rank_from : {"score", "column"}, default "score"
        Order by score descending (ties: equal scores), or by the ``rank``
        column ascending (ties: equal ranks).
    found : Rankings, optional
        :func:`~ireval_df.offline.engine.find_rankings` of ``run`` with the
        same ``rank_from``, when already known.
    tie_order : bool, default True
        Order the documents of a tie group as :func:`ireval_df.evaluate`
        does (``doc_id`` descending). Without it their order within the
        group is any; :func:`cut` and :func:`order_ties` give it where it
        is needed. A measure that reads only the groups (RBO with ties
        ``a``, ``b`` or ``w``, tau, tau_AP, the overlaps) does not need it,
        and sorting the documents' ids is most of the cost of ranking.
    reach : int, optional
        Keep only the documents whose tie group starts at position ``reach``
        or above: those a measure that reads no deeper needs
        (:func:`ireval_df.similarity.measures.reach`). Each ranking's cut is
        found by a selection of its ``reach`` best values, and only what is
        kept is sorted. Default: every document. Applies where each
        ranking's rows are adjacent in the run (as in a TREC file);
        otherwise every document is kept.

    Returns
    -------
    Ranked

    Notes
    -----
    Positions are found without sorting the rows (which hold the ids):
    when each ranking's rows are adjacent (a TREC file, or a frame sorted
    by query), those already best first are read off the row order and
    the others are sorted by value in numpy, the rankings of one length as
    the rows of a matrix; otherwise (rankings interleaved) one polars sort
    by ranking and value orders them. Tie groups are then the runs of
    equal values, in numpy over the rankings laid end to end.

    Examples
    --------
    >>> run = pl.LazyFrame({"run_id": "r", "query_id": "q", "doc_id": ["a", "b", "c"],
    ...                     "score": [1.0, 2.0, 1.0]})
    >>> rank_with_ties(run).rows.sort("pos").drop(RANKING).rows()
    [('b', 1, 1, 1), ('c', 2, 2, 2), ('a', 3, 2, 2)]
    """
    import numpy as np

    options = EngineOptions(rank_from=rank_from)
    if found is None:
        found = find_rankings(run, options)
    # both keys descending: a rank orders ascending, so it is negated
    value = pl.col("score") if rank_from == "score" else -pl.col("rank").cast(pl.Int64)
    if found.layout is not None:
        # each ranking's rows are adjacent: numbered in row order, no id to hash
        frame = run.select("doc_id", value.alias(_VALUE)).collect()
        sizes = found.layout[N_RET].to_numpy().astype(np.int64)
        rankings = found.layout.select(
            *KEYS, pl.int_range(pl.len(), dtype=pl.UInt32).alias(RANKING)
        )
        unordered = found.layout[_UNORDERED].to_numpy()
        if reach is not None and (sizes > reach).any():
            values = frame[_VALUE].to_numpy()
            keep = np.empty(len(values), dtype=bool)
            kept = np.empty_like(sizes)

            def cut(part: slice, rows: slice) -> None:
                keep[rows] = _within_reach(
                    values[rows], sizes[part], unordered[part], reach
                )
                starts = np.cumsum(sizes[part]) - sizes[part]
                kept[part] = np.add.reduceat(keep[rows], starts, dtype=np.int64)

            run_all([partial(cut, part, rows) for part, rows in _parts(sizes)])
            frame, sizes = frame.filter(keep), kept
        values = frame[_VALUE].to_numpy()
        ids = np.repeat(np.arange(len(sizes), dtype=np.uint32), sizes)
        laid = {name: np.empty(len(values), dtype=np.int32) for name in _LAID}

        def lay_out(part: slice, rows: slice) -> None:
            one = _tie_groups(
                values[rows],
                _order_adjacent(values[rows], sizes[part], unordered[part]),
                sizes[part],
            )
            for name, column in laid.items():
                column[rows] = one[name]

        # parts of the rankings a few cache-sized arrays each, side by side
        run_all([partial(lay_out, part, rows) for part, rows in _parts(sizes)])
    else:
        frame = run.select(
            found.ranking.alias(RANKING), "doc_id", value.alias(_VALUE)
        ).collect()
        ids = frame[RANKING].to_numpy()
        rankings = found.sizes.select(*KEYS, RANKING)
        by = pl.arg_sort_by([RANKING, _VALUE], descending=[False, True])
        order = frame.select(by).to_series().to_numpy()
        moves = (np.arange(frame.height, dtype=np.int64), order)
        sizes = np.diff(np.flatnonzero(_starts(ids[order])), append=frame.height)
        laid = _tie_groups(frame[_VALUE].to_numpy(), moves, sizes)
    rows = pl.DataFrame(
        [
            pl.Series(RANKING, ids),
            frame["doc_id"],
            *(pl.Series(name, column, dtype=pl.Int32) for name, column in laid.items()),
        ]
    )
    if tie_order:
        rows = order_ties(rows.lazy(), by=RANKING).collect()
    return Ranked(rows, rankings)


#: Rows of a part of the rankings (:func:`_parts`): its arrays stay in the
#: processor's caches
_PART_ROWS = 1 << 16


def _parts(sizes: np.ndarray) -> list[tuple[slice, slice]]:
    """Split adjacent rankings into parts of about :data:`_PART_ROWS` rows, at least one per thread.

    Returns ``(rankings, rows)`` slices, in order: each part's rankings and
    their rows (``sizes`` of them each, laid end to end). Parts hold whole
    rankings, so a long ranking makes its part longer.
    """
    import numpy as np

    if not len(sizes):
        return [(slice(0, 0), slice(0, 0))]
    ends = np.cumsum(sizes)
    total = int(ends[-1])
    n = max(workers(), -(-total // _PART_ROWS))
    wanted = np.arange(1, n) * total // n
    cuts = np.unique(np.searchsorted(ends, wanted, side="right"))
    bounds = [0, *(int(c) for c in cuts if 0 < c < len(sizes)), len(sizes)]
    rows = [0, *(int(ends[b - 1]) for b in bounds[1:])]
    return [
        (slice(bounds[i], bounds[i + 1]), slice(rows[i], rows[i + 1]))
        for i in range(len(bounds) - 1)
    ]


def _within_reach(
    values: np.ndarray,
    sizes: np.ndarray,
    unordered: np.ndarray,
    reach: int,
) -> np.ndarray:
    """Flag the rows whose tie group starts at position ``reach`` or above.

    Those are the rows at least as good as the ranking's ``reach``-th best
    value: read off the row order where a ranking is best first, found by a
    selection where not (:func:`_reach_values`). Each ranking's rows are
    adjacent (``sizes`` of them, in row order).
    """
    import numpy as np

    long = sizes > reach
    starts = np.cumsum(sizes) - sizes
    floor = np.iinfo(values.dtype).min if values.dtype.kind == "i" else -np.inf
    lowest = np.full(len(sizes), floor, dtype=values.dtype)
    in_order = long & ~unordered
    lowest[in_order] = values[starts[in_order] + reach - 1]
    mixed = np.flatnonzero(long & unordered)
    if len(mixed):
        lowest[mixed] = _reach_values(values, starts, sizes, mixed, reach)
    keep: np.ndarray = values >= np.repeat(lowest, sizes)
    return keep


#: Rankings of more distinct lengths than this are selected in one polars
#: pass, and sorted (:func:`_sort_rows`) padded to a power of two
_LENGTHS = 8


def _reach_values(
    values: np.ndarray,
    starts: np.ndarray,
    sizes: np.ndarray,
    which: np.ndarray,
    reach: int,
) -> np.ndarray:
    """Return the ``reach``-th best value of each ranking ``which`` names.

    Rankings of one length are a matrix, one row each, and ``np.partition``
    selects along the rows (a run's rankings mostly share a length: its
    depth); with many lengths, a polars ``top_k`` per ranking instead.
    """
    import numpy as np

    lengths = sizes[which]
    distinct = np.unique(lengths)
    out = np.empty(len(which), dtype=values.dtype)
    if len(distinct) > _LENGTHS:
        rows = np.repeat(np.isin(np.arange(len(sizes)), which), sizes)
        ids = np.repeat(np.arange(len(sizes), dtype=np.uint32), sizes)
        found = (
            pl.DataFrame({RANKING: ids[rows], _VALUE: values[rows]})
            .group_by(RANKING)
            .agg(pl.col(_VALUE).top_k(reach).min())
        )
        lowest = np.empty(len(sizes), dtype=values.dtype)
        lowest[found[RANKING].to_numpy()] = found[_VALUE].to_numpy()
        out[:] = lowest[which]
        return out
    for length in distinct:
        same = lengths == length
        matrix = values[starts[which[same]][:, None] + np.arange(length)]
        # the reach-th largest is the (length - reach)-th smallest
        out[same] = np.partition(matrix, length - reach, axis=1)[:, length - reach]
    return out


def _order_adjacent(
    values: np.ndarray, sizes: np.ndarray, unordered: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """Say which rows move to put each ranking best first (None: none do).

    Each ranking's rows are adjacent (``sizes`` of them, in row order);
    those already best first stay where they are, and the rows of the
    ``unordered`` rankings are sorted by value (:func:`_sort_rows`). Tied
    rows keep any order. Returns ``(to, rows)``: row ``rows[i]`` goes to
    place ``to[i]``.
    """
    import numpy as np

    which = np.flatnonzero(unordered)
    if not len(which):
        return None
    starts = (np.cumsum(sizes) - sizes)[which]
    to, rows = [], []
    for group, order in _sort_rows(values, starts, sizes[which]):
        width = order.shape[1]
        real = np.arange(width) < sizes[which[group]][:, None]
        first = starts[group][:, None]
        to.append((first + np.arange(width))[real])
        rows.append((first + order)[real])
    return np.concatenate(to), np.concatenate(rows)


def _sort_rows(
    values: np.ndarray, starts: np.ndarray, sizes: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Sort each ranking's values, best first: the rankings of one width as a matrix.

    The rankings (``starts``, ``sizes`` into ``values``) are grouped by a
    width: their length, or with more than :data:`_LENGTHS` lengths the
    next power of two, the rest of a row padded with NaN (which sorts
    last; a NaN score is refused long before). Each group is one matrix,
    sorted along its rows by ``np.argsort``: cheaper than one sort keyed
    by ranking, and no Python loop over rankings. Returns, per group, the
    rankings in it (indices into ``starts``) and each one's order (offsets
    into the ranking, best first; a row of the matrix).
    """
    import numpy as np

    if not len(sizes):
        return []
    if len(np.unique(sizes)) > _LENGTHS:
        widths = 1 << np.ceil(np.log2(sizes)).astype(np.int64)
    else:
        widths = sizes
    groups = []
    for width in np.unique(widths):
        rows = np.flatnonzero(widths == width)
        size = sizes[rows]
        at = starts[rows][:, None] + np.arange(int(width))
        # best first is ascending order of the negated values
        if (size == width).all():
            matrix = -values[at].astype(np.float64)
        else:
            real = np.arange(int(width)) < size[:, None]
            matrix = np.full((len(rows), int(width)), np.nan)
            matrix[real] = -values[at[real]]
        groups.append((rows, np.argsort(matrix, axis=1)))
    return groups


def _tie_groups(
    values: np.ndarray,
    moves: tuple[np.ndarray, np.ndarray] | None,
    sizes: np.ndarray,
) -> dict[str, np.ndarray]:
    """Return ``pos, tie_start, tie_size`` of every row, in row order.

    ``moves`` (:func:`_order_adjacent`) sorts the rows by ranking, then
    value descending (None: they are); ``sizes`` are the rankings' sizes in
    that order. In sorted order each ranking and each tie group is a
    stretch of rows.
    """
    import numpy as np

    n = len(values)
    if moves is not None:
        to, rows = moves
        values = values.copy()
        values[to] = values[rows]
    starts = np.cumsum(sizes) - sizes
    new_group = np.zeros(n, dtype=bool)
    new_group[starts] = True
    new_group[1:] |= values[1:] != values[:-1]
    # 32-bit while the row numbers fit (half the memory traffic of 64);
    # positions within a ranking always do
    wide = np.dtype(np.int32 if n < np.iinfo(np.int32).max else np.int64)
    group_starts = np.flatnonzero(new_group).astype(wide)
    group_sizes = np.diff(group_starts, append=np.array([n], dtype=wide))
    # in place where they can: fresh large arrays cost page faults
    first = np.repeat(starts.astype(wide), sizes)
    pos = np.arange(1, n + 1, dtype=wide)
    np.subtract(pos, first, out=pos)
    tie_start = np.repeat(group_starts, group_sizes)
    tie_start -= first
    tie_start += 1
    del first
    laid = {
        "pos": pos.astype(np.int32, copy=False),
        "tie_start": tie_start.astype(np.int32, copy=False),
        "tie_size": np.repeat(group_sizes, group_sizes).astype(np.int32, copy=False),
    }
    if moves is not None:  # back to the run's row order
        to, rows = moves
        for column in laid.values():
            column[rows] = column[to]
    return laid


def _starts(ranking: np.ndarray) -> np.ndarray:
    """Flag the first row of each stretch of rows of one ranking."""
    import numpy as np

    starts = np.ones(len(ranking), dtype=bool)
    starts[1:] = ranking[1:] != ranking[:-1]
    return starts


def order_ties(
    side: pl.LazyFrame, *, by: str = KEY, which: pl.Expr | None = None
) -> pl.LazyFrame:
    """Order the documents of tie groups as :func:`ireval_df.evaluate` does: ``doc_id`` descending.

    Only the tied rows (``which`` of them, default all) are sorted; their
    ``pos`` becomes ``tie_start`` plus the number of the group's documents
    that sort before them. ``by`` names each ranking.

    Examples
    --------
    >>> side = pl.LazyFrame({"key": 0, "doc_id": ["a", "b", "c"], "pos": [1, 2, 3],
    ...                      "tie_start": [1, 1, 3], "tie_size": [2, 2, 1]})
    >>> order_ties(side).sort("pos").collect()["doc_id"].to_list()
    ['b', 'a', 'c']
    """
    tied = pl.col("tie_size") > 1
    if which is not None:
        tied = tied & which
    flagged = side.with_columns(tied.alias(_TIED))
    ordered = (
        flagged.filter(_TIED)
        .sort([by, "tie_start", "doc_id"], descending=[False, False, True])
        .with_columns(
            (
                pl.col("tie_start")
                + pl.int_range(pl.len(), dtype=pl.Int64).over(by, "tie_start")
            ).alias("pos")
        )
    )
    # rank_with_ties' positions are Int32, int_range's Int64: the supertype
    return pl.concat(
        [flagged.filter(~pl.col(_TIED)), ordered], how="vertical_relaxed"
    ).drop(_TIED)


def without_ties(ranked: pl.LazyFrame) -> pl.LazyFrame:
    """Break every tie group in position order: each document its own group.

    For ``evaluate``'s order, :func:`order_ties` first.

    Examples
    --------
    >>> side = pl.LazyFrame({"key": 0, "doc_id": ["a", "b"], "pos": [1, 2],
    ...                      "tie_start": [1, 1], "tie_size": [2, 2]})
    >>> without_ties(side).collect()["tie_start"].to_list()
    [1, 2]
    >>> without_ties(order_ties(side)).sort("pos").collect()["doc_id"].to_list()
    ['b', 'a']
    """
    return ranked.with_columns(
        pl.col("pos").alias("tie_start"), pl.lit(1, pl.Int64).alias("tie_size")
    )


def cut(ranked: pl.LazyFrame, k: int | None) -> pl.LazyFrame:
    """Keep the top ``k`` positions of each ranking; a tie group cut by ``k`` shrinks.

    The documents kept are those at positions 1..k of ``evaluate``'s order
    (as its cutoffs): a tie group that straddles ``k`` is first put in that
    order (:func:`order_ties`), keeps its first members only, and its size
    is what is left of it.

    Examples
    --------
    >>> side = pl.LazyFrame({"key": 0, "doc_id": ["a", "b", "c"], "pos": [1, 2, 3],
    ...                      "tie_start": [1, 2, 2], "tie_size": [1, 2, 2]})
    >>> cut(side, 2).collect().select("doc_id", "tie_size").rows()
    [('a', 1), ('c', 1)]
    """
    if k is None:
        return ranked
    straddles = (pl.col("tie_start") <= k) & (
        pl.col("tie_start") + pl.col("tie_size") - 1 > k
    )
    kept = order_ties(ranked, which=straddles).filter(pl.col("pos") <= k)
    return kept.with_columns(
        pl.min_horizontal(pl.col("tie_size"), k - pl.col("tie_start") + 1).alias(
            "tie_size"
        )
    )


@dataclass(frozen=True)
class Pairs:
    """Every comparison of a call: its key, and both sides' rankings."""

    #: ``key, run_id, baseline, query_id``, one row per comparison
    keys: pl.DataFrame
    #: the compared run's rankings (:data:`RANKED` columns)
    x: pl.LazyFrame
    #: the baseline's rankings (:data:`RANKED` columns)
    y: pl.LazyFrame


def run_ids(run: pl.LazyFrame, found: Rankings, *, caller: str) -> list[str]:
    """Return every run id of ``run`` in order of first appearance: at least two.

    ``found`` (:func:`~ireval_df.offline.engine.find_rankings` of ``run``)
    lists them when each ranking's rows are adjacent, without a pass over
    the run. ``caller`` names the function in the error.

    Raises
    ------
    OptionError
        Fewer than two runs.
    """
    if found.layout is not None:
        column = found.layout["run_id"]
    else:
        column = run.select("run_id").collect()["run_id"]
    ids = [str(r) for r in column.unique(maintain_order=True)]
    check_two_runs(ids, caller=caller)
    return ids


def check_two_runs(ids: Sequence[str], *, caller: str) -> None:
    """Raise :class:`OptionError` unless ``ids`` name two runs or more."""
    if len(ids) < 2:
        msg = (
            f"{caller} compares runs with a baseline, but only one run was given "
            f"({list(ids)!r}).\n  Hint: pass a list of runs, or a frame with a run_id "
            "column holding two or more."
        )
        raise OptionError(msg)


def choose_baselines(
    baseline: str | Sequence[str] | None, run_ids: Sequence[str]
) -> list[str]:
    """Return the baselines a call names (default: the first run), checked.

    Examples
    --------
    >>> choose_baselines(None, ["bm25", "dense"]), choose_baselines("dense", ["bm25", "dense"])
    (['bm25'], ['dense'])
    """
    if baseline is None:
        return list(run_ids[:1])
    given = [baseline] if isinstance(baseline, str) else list(baseline)
    unknown = [b for b in given if b not in run_ids]
    if unknown or not given:
        msg = (
            f"baseline {unknown or given!r} is not one of the runs {list(run_ids)!r}.\n"
            "  Hint: name one of the runs (a TREC run tag, else the file's name), "
            "or none for the first run."
        )
        raise OptionError(msg)
    return list(dict.fromkeys(given))


def pair_rankings(
    ranked: Ranked,
    runs: Sequence[str],
    baselines: Sequence[str],
    *,
    missing: Missing = "zero",
    report: bool = True,
) -> Pairs:
    """Pair each run's rankings with each baseline's, query by query.

    Parameters
    ----------
    ranked : Ranked
        :func:`rank_with_ties` of every run.
    runs : sequence of str
        Every run id, in order.
    baselines : sequence of str
        The baselines: every other run is compared with each (a baseline is
        not compared with itself; two baselines are compared once, the later
        against the earlier).
    missing : {"zero", "skip", "error"}, default "zero"
        A query that one run of a pair ranks and the other does not: compared
        with an empty ranking, left out of that pair, or an error. Counted in
        a warning either way.

    Returns
    -------
    Pairs

    Raises
    ------
    AlignmentError
        ``missing="error"`` and a query is ranked by one run of a pair only.
    DataError
        No pair to compare.
    """
    both = compared(
        ranked.rankings.select(KEYS), runs, baselines, missing, report=report
    )
    # keys numbered in the order of the compared run's rankings, then the
    # baseline's: where each ranking's rows are adjacent, both sides' rows
    # then come in key order, and a kernel can take the keys a batch at a
    # time (the output is sorted by run, baseline and query later)
    numbered = both.select("run_id", "baseline", "query_id")
    for run_column, name in (("run_id", _X_RANKING), ("baseline", _Y_RANKING)):
        numbered = numbered.join(
            ranked.rankings.rename({"run_id": run_column, RANKING: name}),
            on=[run_column, "query_id"],
            how="left",
        )
    keys = (
        numbered.sort(_X_RANKING, _Y_RANKING, nulls_last=True)
        .with_row_index(KEY)
        .with_columns(pl.col(KEY).cast(pl.Int64))
    )
    sides = [
        _side(
            ranked.rows,
            keys.filter(pl.col(name).is_not_null()).select(
                KEY, pl.col(name).alias(RANKING)
            ),
        )
        for name in (_X_RANKING, _Y_RANKING)
    ]
    return Pairs(keys.select(KEY, "run_id", "baseline", "query_id"), *sides)


def _side(rows: pl.DataFrame, ids: pl.DataFrame) -> pl.LazyFrame:
    """Return the rows of the rankings ``ids`` names, each under its comparison's key.

    In the rows' order: a ranking's rows stay together, which keeps the
    kernels' scattered writes close to each other. A ranking in one
    comparison only (each run against one baseline) is a filter and a
    lookup of its key; one in several (a baseline of several runs), a join.
    """
    import numpy as np

    # numbered rankings (rank_with_ties numbers adjacent ones; hashes otherwise)
    numbered = rows.schema[RANKING] == pl.UInt32
    if not numbered or not ids[RANKING].is_unique().all():
        joined = rows.lazy().join(ids.lazy(), on=RANKING, maintain_order="left")
        return joined.select(RANKED)
    ranking = rows[RANKING].to_numpy()
    lookup = np.full(int(ranking.max(initial=0)) + 1, -1, dtype=np.int64)
    lookup[ids[RANKING].to_numpy()] = ids[KEY].to_numpy()
    key = lookup[ranking]
    kept = np.flatnonzero(key >= 0)
    if len(kept) and kept[-1] - kept[0] + 1 == len(kept):
        # one stretch of rows (a run's rankings are adjacent): a slice, no copy
        first = int(kept[0])
        part = rows.slice(first, len(kept))
        keys = key[first : first + len(kept)]
    else:
        part, keys = rows[kept], key[kept]
    return part.with_columns(pl.Series(KEY, keys)).select(RANKED).lazy()


def _report_one_sided(one_sided: pl.DataFrame, missing: Missing) -> None:
    count = one_sided.height
    example = one_sided.sort("run_id", "baseline", "query_id").row(0, named=True)
    side = (
        example["baseline"]
        if example["__ireval_in_base"] is None
        else example["run_id"]
    )
    what = (
        f"{count} (run, baseline, query) comparisons have a ranking on one side "
        f"only, e.g. query {example['query_id']!r} of run {example['run_id']!r} "
        f"against {example['baseline']!r}, which run {side!r} does not rank"
    )
    if missing == "error":
        msg = f"{what}.\n  Hint: pass missing='zero' (compare with an empty ranking) or 'skip'."
        raise AlignmentError(msg)
    done = (
        "compared with an empty ranking (missing='zero')"
        if missing == "zero"
        else "left out (missing='skip')"
    )
    warn(f"{what}: {done}.")


def compared(
    queries: pl.DataFrame,
    runs: Sequence[str],
    baselines: Sequence[str],
    missing: Missing,
    *,
    report: bool = True,
) -> pl.DataFrame:
    """Return every (run, baseline, query) to compare, the one-sided reported.

    ``queries`` holds each ``(run_id, query_id)`` a run ranks, once. A
    comparison where one side does not rank the query is counted in a
    warning (an error with ``missing="error"``; left out with ``"skip"``);
    ``report=False`` leaves the report to a caller that sees all queries
    (``ireval_df.spark`` reports once, for every group of queries).
    """
    if missing not in ("zero", "skip", "error"):
        msg = f"missing={missing!r} is not one of 'zero', 'skip', 'error'."
        raise OptionError(msg)
    pairs: list[tuple[str, str]] = []
    for base in baselines:
        for run in runs:
            if run != base and (base, run) not in pairs:
                pairs.append((run, base))
    if not pairs:
        msg = (
            f"nothing to compare: the runs are {list(runs)!r} and the baseline "
            f"{list(baselines)!r}.\n  Hint: pass at least two runs."
        )
        raise DataError(msg)
    pair_frame = pl.DataFrame(
        {"run_id": [r for r, _ in pairs], "baseline": [b for _, b in pairs]},
        schema={"run_id": pl.String, "baseline": pl.String},
    )
    ranked_by = queries.with_columns(pl.lit(value=True).alias("__ireval_has"))
    both = (
        pl.concat(
            [
                pair_frame.join(queries, on="run_id"),
                pair_frame.join(queries.rename({"run_id": "baseline"}), on="baseline"),
            ]
        )
        .unique()
        .join(
            ranked_by.rename({"__ireval_has": "__ireval_in_run"}),
            on=["run_id", "query_id"],
            how="left",
        )
        .join(
            ranked_by.rename(
                {"run_id": "baseline", "__ireval_has": "__ireval_in_base"}
            ),
            on=["baseline", "query_id"],
            how="left",
        )
    )
    one_sided = both.filter(
        pl.col("__ireval_in_run").is_null() | pl.col("__ireval_in_base").is_null()
    )
    if one_sided.height:
        if report:
            _report_one_sided(one_sided, missing)
        if missing == "skip":
            both = both.filter(
                pl.col("__ireval_in_run").is_not_null()
                & pl.col("__ireval_in_base").is_not_null()
            )
    return both
