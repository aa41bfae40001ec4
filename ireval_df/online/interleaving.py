"""Interleaved comparison of rankings: ``interleave``, per-search outcomes, tests.

Interleaving shows one user one list merged from two (or more) rankers'
lists and credits each click to the ranker that contributed the clicked
document. Every user then compares the rankers under the same position
bias, which makes interleaving far more sensitive than an A/B split of the
traffic (Chapelle, Joachims, Radlinski & Yue, ACM TOIS 30(1), 2012).

Three steps, each a function over flat polars frames:

:func:`interleave`
    rankings ``search_id, ranker, doc_id, rank`` to the ``results`` frame
    a search log holds: ``search_id, position, doc_id, team`` and each
    ranker's rank of the document (``rank_<ranker>``; and for
    probabilistic interleaving ``p_<ranker>``, what its outcome needs).
:func:`interleaving_outcomes`
    results and clicks to one row per search: each ranker's credit and the
    winner, by the method's own rule.
:func:`interleaving_test`
    outcomes to ``delta_ab`` (Chapelle et al.'s preference), wins, losses,
    ties, an interval and a p-value per ranker pair and slice, corrected
    over the family.

Randomness is per search: a search's draws come from a key
``blake2b(search_id, key=f"ireval_df.interleave:{seed}")`` (8 bytes, read
little-endian) and a splitmix64 sequence started at that key, so the same
search gets the same interleaving on every run, with every polars version,
whatever the other searches in the frame and the order of the rows. The
draft runs over all searches at once: numpy arrays of shape (searches,
rankers, depth), one vectorised step per position of the list.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._utils import provenance as _provenance
from ireval_df._utils.frames import eager
from ireval_df._utils.options import check_choice
from ireval_df._utils.progress import Progress
from ireval_df.errors import (
    DataError,
    InterleavingWarning,
    OptionError,
    SchemaError,
    warn,
)
from ireval_df.online.log import SearchLog
from ireval_df.stats.corrections import adjust
from ireval_df.stats.frames import output as summary_output

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from numpy.typing import NDArray

    from ireval_df.stats.corrections import Correction

__all__ = [
    "CREDITS",
    "METHODS",
    "Credit",
    "Method",
    "interleave",
    "interleaving_outcomes",
    "interleaving_test",
    "search_keys",
    "uniform_draws",
]

Method = Literal["team_draft", "balanced", "probabilistic", "team_draft_multileave"]
Credit = Literal["click", "sat_click", "add_to_cart"]
#: The interleaving methods ``interleave`` and ``interleaving_outcomes`` know.
METHODS: tuple[str, ...] = (
    "team_draft",
    "balanced",
    "probabilistic",
    "team_draft_multileave",
)
#: Methods defined for exactly two rankers.
TWO_RANKERS: tuple[str, ...] = ("team_draft", "balanced", "probabilistic")
#: The events that earn credit.
CREDITS: tuple[str, ...] = ("click", "sat_click", "add_to_cart")
TESTS: tuple[str, ...] = ("sign", "bootstrap")
CORRECTION_WORDS: tuple[str | None, ...] = ("holm", "bonferroni", "bh", "by", "none")
#: Credits closer than this are equal (probabilistic credits are sums of floats).
TIE_TOLERANCE = 1e-12
#: About this many numbers per array while drafting a block of searches.
BLOCK = 1 << 21

_GAMMA = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_MASK64 = (1 << 64) - 1


# --- randomness ------------------------------------------------------------------------


def search_keys(search_ids: Sequence[str], seed: int) -> NDArray[np.uint64]:
    """Return each search's 64-bit random key: a stable hash of ``seed`` and its id.

    ``blake2b(search_id.encode("utf-8"), digest_size=8,
    key=f"ireval_df.interleave:{seed}".encode())``, read as a little-endian
    unsigned integer. hashlib's blake2b is the same on every platform and
    Python version, unlike polars' ``hash``, which may change between polars
    versions.

    Examples
    --------
    >>> keys = search_keys(["s1", "s2"], seed=0)
    >>> keys.dtype.name, len(set(keys.tolist())), bool(search_keys(["s1"], 0)[0] == keys[0])
    ('uint64', 2, True)
    """
    import numpy as np

    base = hashlib.blake2b(digest_size=8, key=f"ireval_df.interleave:{seed}".encode())
    out = np.empty(len(search_ids), dtype=np.uint64)
    for i, search_id in enumerate(search_ids):
        h = base.copy()
        h.update(search_id.encode("utf-8"))
        out[i] = int.from_bytes(h.digest(), "little")
    return out


def uniform_draws(keys: NDArray[np.uint64], index: int) -> NDArray[np.float64]:
    """Return the ``index``-th uniform draw in [0, 1) of every search (splitmix64).

    Draw ``i`` of a search with key ``K`` is the ``i``-th output of
    splitmix64 started at ``K``: ``x = K + (i + 1) * 0x9E3779B97F4A7C15``
    (mod 2^64), mixed by splitmix64's finaliser, its top 53 bits over 2^53.
    Exact integer arithmetic, so the draws are the same everywhere.

    Examples
    --------
    >>> import numpy as np
    >>> u = uniform_draws(np.array([0], dtype=np.uint64), 0)
    >>> int(u[0] * 2**53) == 0xE220A8397B1DCDAF >> 11  # splitmix64(0)'s first output
    True
    """
    import numpy as np

    x = keys + np.uint64(((index + 1) * _GAMMA) & _MASK64)
    z = (x ^ (x >> np.uint64(30))) * np.uint64(_MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
    z = z ^ (z >> np.uint64(31))
    out: NDArray[np.float64] = (z >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return out


# --- input checks ----------------------------------------------------------------------


def _require(frame: pl.DataFrame, what: str, needed: Sequence[str], hint: str) -> None:
    absent = [c for c in needed if c not in frame.columns]
    if absent:
        msg = (
            f"{what} is missing column(s) {absent!r} (found {frame.columns!r}).\n"
            f"  Hint: {hint}"
        )
        raise SchemaError(msg)


def _id_column(frame: pl.DataFrame, name: str, what: str) -> pl.Expr:
    dtype = frame.schema[name]
    if dtype == pl.String:
        return pl.col(name)
    if (
        dtype == pl.Null
        or dtype.is_integer()
        or isinstance(dtype, pl.Categorical | pl.Enum)
    ):
        return pl.col(name).cast(pl.String)
    msg = (
        f"{what} column {name!r} must hold strings or integers, found {dtype}.\n"
        f"  Hint: cast it, e.g. pl.col({name!r}).cast(pl.String)."
    )
    raise SchemaError(msg)


def _int_column(frame: pl.DataFrame, name: str, what: str) -> pl.Expr:
    dtype = frame.schema[name]
    if dtype.is_integer():
        return pl.col(name).cast(pl.Int64)
    if dtype.is_float():
        values = frame.get_column(name).drop_nulls()
        if values.is_finite().all() and (values == values.floor()).all():
            return pl.col(name).cast(pl.Int64)
    msg = f"{what} column {name!r} must hold whole numbers, found {dtype}."
    raise SchemaError(msg)


def _no_nulls(frame: pl.DataFrame, what: str, columns: Sequence[str]) -> None:
    counts = frame.select(pl.col(c).null_count() for c in columns).row(0)
    bad = {c: n for c, n in zip(columns, counts, strict=True) if n}
    if bad:
        msg = f"{what} holds nulls: {bad!r} (rows per column); every row needs a value."
        raise DataError(msg)


def _check_method(method: str, what: str = "method") -> None:
    if method not in METHODS:
        options = ", ".join(repr(m) for m in METHODS)
        msg = f"unknown {what} {method!r}; the methods are {options}."
        raise OptionError(msg)


def _check_whole(name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        msg = f"{name} must be a whole number >= {low}, found {value!r}."
        raise OptionError(msg)


def _example(frame: pl.DataFrame, columns: Sequence[str]) -> str:
    row = frame.row(0, named=True)
    return ", ".join(f"{c}={row[c]!r}" for c in columns)


def _rankings_frame(rankings: Any) -> pl.DataFrame:
    frame = eager(
        rankings,
        "rankings",
        "one row per (search_id, ranker, doc_id) with the document's rank.",
    )
    needed = ["search_id", "ranker", "doc_id", "rank"]
    _require(
        frame,
        "rankings",
        needed,
        "rename yours, e.g. frame.rename({'query': 'search_id', 'system': 'ranker'}).",
    )
    frame = frame.select(
        _id_column(frame, "search_id", "rankings"),
        _id_column(frame, "ranker", "rankings"),
        _id_column(frame, "doc_id", "rankings"),
        _int_column(frame, "rank", "rankings"),
    )
    _no_nulls(frame, "rankings", needed)
    return frame


def _ranker_names(
    frame: pl.DataFrame, rankers: Sequence[str] | None, *, allow_absent: bool
) -> list[str]:
    present = sorted(frame.get_column("ranker").unique().to_list())
    if rankers is None:
        return present
    if isinstance(rankers, str):
        rankers = [rankers]
    names = [str(r) for r in rankers]
    if len(set(names)) != len(names):
        msg = f"rankers={names!r} names a ranker twice."
        raise OptionError(msg)
    absent = [r for r in names if r not in present]
    if absent and not allow_absent:
        msg = (
            f"rankers {absent!r} have no rows in rankings (found {present!r}).\n"
            "  Hint: rankers= picks which of the rankings' rankers to interleave; "
            "missing_ranker='empty' reads a ranker without rows as empty rankings."
        )
        raise DataError(msg)
    return names


def _check_ranker_count(names: Sequence[str], method: str) -> None:
    if len(names) < 2:
        msg = (
            f"interleaving needs at least 2 rankers, found {len(names)}: {names!r}.\n"
            "  Hint: stack both rankings in one frame, told apart by 'ranker'."
        )
        raise DataError(msg)
    if method in TWO_RANKERS and len(names) > 2:
        msg = (
            f"method={method!r} compares two rankers, found {len(names)}: {names!r}.\n"
            "  Hint: method='team_draft_multileave' compares three or more at once; "
            "rankers=[a, b] picks two."
        )
        raise OptionError(msg)


# --- layout: rankings as (searches x rankers x depth) arrays ----------------------------


@dataclass
class _Prepared:
    """The rankings in (search, ranker, rank) order, as numpy arrays."""

    work: pl.DataFrame  # the rows as given: doc_id is read from here by row number
    ids: pl.Series  # search_id of each search index, sorted
    names: list[str]
    row: NDArray[np.int64]  # row of `work` at each place of the order
    s: NDArray[np.int64]
    r: NDArray[np.int64]
    ordinal: NDArray[np.int64]  # 0-based place in its list
    h1: NDArray[np.uint64]
    h2: NDArray[np.uint64]
    count: NDArray[np.int64]  # (S, R) list lengths
    search_start: NDArray[np.int64]  # first place of each search (S + 1)


def _prepare(frame: pl.DataFrame, names: list[str]) -> _Prepared:
    """Give searches numbers (by sorted id) and order the rows, moving no strings.

    Only integer keys are sorted: one int64 key ``(search, ranker, rank)``
    when it fits (else a three-column sort); the strings stay where they
    are and are gathered once, for the output.
    """
    import numpy as np

    ids = frame.get_column("search_id").unique().sort()
    n_s, n_r = len(ids), len(names)
    if n_s == 0:
        none = np.zeros(0, dtype=np.int64)
        return _Prepared(
            work=frame,
            ids=ids,
            names=names,
            row=none,
            s=none,
            r=none,
            ordinal=none,
            h1=none.astype(np.uint64),
            h2=none.astype(np.uint64),
            count=np.zeros((0, n_r), dtype=np.int64),
            search_start=np.zeros(1, dtype=np.int64),
        )
    code = {n: i for i, n in enumerate(names)}
    # the document hashes only tell documents apart within a search (two
    # independent 64-bit hashes); their values never reach the output
    keys = frame.select(
        pl.col("search_id")
        .replace_strict(ids, pl.int_range(n_s, eager=True), return_dtype=pl.Int64)
        .alias("s"),
        pl.col("ranker").replace_strict(code, return_dtype=pl.Int64).alias("r"),
        pl.col("rank"),
        pl.col("doc_id").hash(seed=0).alias("h1"),
        pl.col("doc_id").hash(seed=1).alias("h2"),
    )
    rank = keys.get_column("rank").to_numpy()
    low = int(rank.min())
    span = int(rank.max()) - low + 1
    if n_s * n_r * span < 1 << 62:
        key = keys.get_column("s").to_numpy() * n_r + keys.get_column("r").to_numpy()
        key = key * span + (rank - low)
        row = pl.Series(key).arg_sort().to_numpy().astype(np.int64)
        key = key[row]
        same = key[1:] == key[:-1]  # the same (search, ranker, rank) twice
        del key
    else:
        row = keys.select(pl.arg_sort_by("s", "r", "rank")).to_series().to_numpy()
        row = row.astype(np.int64)
        ordered = [keys.get_column(c).to_numpy()[row] for c in ("s", "r", "rank")]
        same = np.logical_and.reduce([c[1:] == c[:-1] for c in ordered])
    if same.any():
        places = np.flatnonzero(same)
        first = frame[row[places[0] : places[0] + 2]]
        msg = (
            f"rankings hold {len(places)} repeated (search_id, ranker, rank) keys, "
            f"e.g. {_example(first, ['search_id', 'ranker', 'rank'])} for doc_ids "
            f"{first.get_column('doc_id').to_list()!r}; a rank orders one document.\n"
            "  Hint: break the ties first, e.g. rank by score then doc_id."
        )
        raise DataError(msg)
    del rank, same
    s = keys.get_column("s").to_numpy()[row]
    r = keys.get_column("r").to_numpy()[row]
    h1 = keys.get_column("h1").to_numpy()[row]
    h2 = keys.get_column("h2").to_numpy()[row]
    del keys
    group = s * n_r + r
    count = np.bincount(group, minlength=n_s * n_r).astype(np.int64)
    ordinal = np.arange(len(group), dtype=np.int64)
    ordinal -= (np.cumsum(count) - count)[group]
    del group
    per_search = count.reshape(n_s, n_r).sum(axis=1)
    search_start = np.concatenate([[0], np.cumsum(per_search)]).astype(np.int64)
    return _Prepared(
        work=frame,
        ids=ids,
        names=names,
        row=row,
        s=s,
        r=r,
        ordinal=ordinal,
        h1=h1,
        h2=h2,
        count=count.reshape(n_s, n_r),
        search_start=search_start,
    )


@dataclass
class _Block:
    """One block of searches laid out for drafting."""

    loc: NDArray[np.int64]  # (B, R, L) local document number, -1 past the list
    length: NDArray[np.int64]  # (B, R) list lengths within the depth
    rank_of: NDArray[np.int64]  # (B, R, D + 1) 1-based rank of each document, 0 absent
    doc_row: NDArray[np.int64]  # (B, D + 1) a row of `work` holding the document
    n_docs: int  # D, distinct documents of the widest search


def _block(prep: _Prepared, s0: int, s1: int, depth: int) -> _Block:
    """Lay out searches ``s0 .. s1 - 1``: local document numbers, ranks, rows."""
    import numpy as np

    n_b, n_r = s1 - s0, len(prep.names)
    width = n_r * depth
    lo, hi = int(prep.search_start[s0]), int(prep.search_start[s1])
    keep = np.flatnonzero(prep.ordinal[lo:hi] < depth) + lo
    cell = (prep.s[keep] - s0) * width + prep.r[keep] * depth + prep.ordinal[keep]
    top = np.iinfo(np.uint64).max
    flat_h1 = np.full(n_b * width, top, dtype=np.uint64)
    flat_h2 = np.full(n_b * width, top, dtype=np.uint64)
    flat_row = np.full(n_b * width, -1, dtype=np.int64)
    flat_h1[cell], flat_h2[cell] = prep.h1[keep], prep.h2[keep]
    flat_row[cell] = prep.row[keep]
    h1 = flat_h1.reshape(n_b, width)
    h2 = flat_h2.reshape(n_b, width)
    row = flat_row.reshape(n_b, width)
    valid = row >= 0
    local, duplicate = _local_ids(h1, h2, valid, depth)
    if duplicate is not None:
        _duplicate_document(prep, int(row[duplicate]))
    n_docs = int(local.max()) + 1 if local.size else 0
    b, j = np.nonzero(valid)
    lid = local[b, j]
    rank_of = np.zeros((n_b, n_r, n_docs + 1), dtype=np.int64)
    rank_of[b, j // depth, lid] = j % depth + 1
    doc_row = np.full((n_b, n_docs + 1), -1, dtype=np.int64)
    doc_row[b, lid] = row[b, j]
    length = np.minimum(prep.count[s0:s1], depth)
    return _Block(
        loc=local.reshape(n_b, n_r, depth),
        length=length,
        rank_of=rank_of,
        doc_row=doc_row,
        n_docs=n_docs,
    )


def _duplicate_document(prep: _Prepared, row: int) -> None:
    first = prep.work.slice(row, 1)
    msg = (
        "rankings list a document twice for one (search_id, ranker), e.g. "
        f"{_example(first, ['search_id', 'ranker', 'doc_id'])}.\n"
        "  Hint: keep each document's best rank: rankings.group_by('search_id', "
        "'ranker', 'doc_id').agg(pl.col('rank').min())."
    )
    raise DataError(msg)


def _check_deep_duplicates(prep: _Prepared, depth: int) -> None:
    """Find a document listed twice by one ranker when a list runs below ``depth``.

    Blocks lay out the top ``depth`` of each list only and check those; a
    repeat further down needs this check over the whole rankings.
    """
    import numpy as np

    if not (prep.ordinal >= depth).any():
        return
    keys = pl.DataFrame({"s": prep.s, "r": prep.r, "h1": prep.h1, "h2": prep.h2})
    repeated = np.flatnonzero(keys.is_duplicated().to_numpy())
    if len(repeated):
        _duplicate_document(prep, int(prep.row[repeated[0]]))


def _deep_ranks(
    prep: _Prepared,
    depth: int,
    s: NDArray[np.int64],
    row: NDArray[np.int64],
    ranks: NDArray[np.int64],
) -> NDArray[np.int64]:
    """Fill in the ranks below the drafting depth of the documents shown.

    A document shown from one list may sit below rank ``depth`` in another,
    outside the layout: found by its (search, hashes) among those rows.
    """
    import numpy as np

    deep = prep.ordinal >= depth
    if not deep.any():
        return ranks
    place = np.empty_like(prep.row)
    place[prep.row] = np.arange(len(prep.row))
    wanted = np.flatnonzero((ranks == 0).any(axis=1))
    at = place[row[wanted]]
    shown = pl.DataFrame(
        {"i": wanted, "s": s[wanted], "h1": prep.h1[at], "h2": prep.h2[at]}
    )
    tail = pl.DataFrame(
        {
            "s": prep.s[deep],
            "h1": prep.h1[deep],
            "h2": prep.h2[deep],
            "r": prep.r[deep],
            "rank": prep.ordinal[deep] + 1,
        }
    )
    found = shown.join(tail, on=["s", "h1", "h2"])
    out = ranks.copy()
    out[found["i"].to_numpy(), found["r"].to_numpy()] = found["rank"].to_numpy()
    return out


def _local_ids(
    h1: NDArray[np.uint64], h2: NDArray[np.uint64], valid: NDArray[np.bool_], depth: int
) -> tuple[NDArray[np.int64], tuple[int, int] | None]:
    """Give each search's distinct documents the numbers 0, 1, ... (-1: empty cell).

    Each row is sorted by the first hash; equal (first, second) hashes are
    one document. Rows where equal first hashes come with different second
    ones are sorted again by both. Also returns a cell whose document
    repeats within one ranker's list (None when there is none).
    """
    import numpy as np

    order = np.argsort(h1, axis=1, kind="stable")
    a1 = np.take_along_axis(h1, order, axis=1)
    a2 = np.take_along_axis(h2, order, axis=1)
    split = (a1[:, 1:] == a1[:, :-1]) & (a2[:, 1:] != a2[:, :-1])
    if split.any():
        rows = np.flatnonzero(split.any(axis=1))
        order[rows] = np.lexsort((h2[rows], h1[rows]), axis=1)
        a1[rows] = np.take_along_axis(h1[rows], order[rows], axis=1)
        a2[rows] = np.take_along_axis(h2[rows], order[rows], axis=1)
    ok = np.take_along_axis(valid, order, axis=1)
    same = (a1[:, 1:] == a1[:, :-1]) & (a2[:, 1:] == a2[:, :-1]) & ok[:, 1:]
    same &= ok[:, :-1]
    repeat = same & (order[:, 1:] // depth == order[:, :-1] // depth)
    duplicate = None
    if repeat.any():
        b, j = np.argwhere(repeat)[0]
        duplicate = (int(b), int(order[b, j + 1]))
    new = np.ones(order.shape, dtype=np.int64)
    new[:, 1:] = ~same
    ranked = np.cumsum(new, axis=1) - 1
    local = np.empty_like(ranked)
    np.put_along_axis(local, order, ranked, axis=1)
    local[~valid] = -1
    return local, duplicate


# --- the drafts -------------------------------------------------------------------------


@dataclass
class _Drafted:
    doc: NDArray[np.int64]  # (B, k) local document, -1 past the end
    team: NDArray[np.int64]  # (B, k) ranker index, -1 none
    prob: NDArray[np.float64] | None  # (B, k, R) softmax probabilities


def _advance(
    flat: NDArray[np.int64],
    used: NDArray[np.bool_],
    ptr: NDArray[np.int64],
    length: NDArray[np.int64],
    depth: int,
) -> None:
    """Move each ranker's pointer past the documents already placed."""
    import numpy as np

    n_b, n_r = ptr.shape
    for r in range(n_r):
        idx = np.arange(n_b)
        while idx.size:
            p = ptr[idx, r]
            inside = p < length[idx, r]
            idx, p = idx[inside], p[inside]
            blocked = used[idx, flat[idx, r * depth + p]]
            idx = idx[blocked]
            ptr[idx, r] += 1


def _team_draft(
    blk: _Block, keys: NDArray[np.uint64], k: int, *, stop: bool, prefix: bool
) -> _Drafted:
    """Team draft (Chapelle et al. 2012, Alg. 2) and its multileave (Schuth et al. 2014).

    Each pick goes to the ranker with the fewest picks so far among those
    that still have an unplaced document (ties broken at random: the
    draw of each ranker is added to its team size and the least wins, so
    each round is a uniformly random order of the rankers); it places its
    best document not yet shown.
    """
    import numpy as np

    n_b, n_r, depth = blk.loc.shape
    flat = np.where(blk.loc >= 0, blk.loc, blk.n_docs).reshape(n_b, n_r * depth)
    used = np.zeros((n_b, blk.n_docs + 1), dtype=bool)
    ptr = np.zeros((n_b, n_r), dtype=np.int64)
    size = np.zeros((n_b, n_r), dtype=np.int64)
    doc = np.full((n_b, k), -1, dtype=np.int64)
    team = np.full((n_b, k), -1, dtype=np.int64)
    n = np.zeros(n_b, dtype=np.int64)
    rows = np.arange(n_b)
    if prefix:
        agree = (blk.loc >= 0).all(axis=1) & (blk.loc == blk.loc[:, :1, :]).all(axis=1)
        shared = np.minimum(np.cumprod(agree, axis=1).sum(axis=1), k)
        for i in range(int(shared.max()) if n_b else 0):
            m = rows[shared > i]
            doc[m, i] = blk.loc[m, 0, i]
            used[m, blk.loc[m, 0, i]] = True
        ptr[:] = shared[:, None]
        n = shared.astype(np.int64)
    for t in range(k):
        _advance(flat, used, ptr, blk.length, depth)
        has = ptr < blk.length
        go = (n < k) & (has.all(axis=1) if stop else has.any(axis=1))
        if not go.any():
            break
        draws = np.stack([uniform_draws(keys, t * n_r + r) for r in range(n_r)], 1)
        score = np.where(has, size + draws, np.inf)
        sel = rows[go]
        choice = score[sel].argmin(axis=1)
        d = flat[sel, choice * depth + ptr[sel, choice]]
        doc[sel, n[sel]] = d
        team[sel, n[sel]] = choice
        used[sel, d] = True
        ptr[sel, choice] += 1
        size[sel, choice] += 1
        n[sel] += 1
    return _Drafted(doc=doc, team=team, prob=None)


def _balanced(blk: _Block, keys: NDArray[np.uint64], k: int, *, stop: bool) -> _Drafted:
    """Balanced interleaving (Joachims 2003; Chapelle et al. 2012, Alg. 1).

    A coin (draw 0) says which ranker leads; the one whose pointer is behind
    (or the leader, when level) offers its next document, placed unless
    already shown. ``stop`` ends the list when either ranking runs out
    (Alg. 1); otherwise the other ranking goes on alone.
    """
    import numpy as np

    n_b, _, depth = blk.loc.shape
    a_first = uniform_draws(keys, 0) < 0.5
    used = np.zeros((n_b, blk.n_docs + 1), dtype=bool)
    ka = np.zeros(n_b, dtype=np.int64)
    kb = np.zeros(n_b, dtype=np.int64)
    doc = np.full((n_b, k), -1, dtype=np.int64)
    n = np.zeros(n_b, dtype=np.int64)
    rows = np.arange(n_b)
    len_a, len_b = blk.length[:, 0], blk.length[:, 1]
    loc_a = np.where(blk.loc[:, 0, :] >= 0, blk.loc[:, 0, :], blk.n_docs)
    loc_b = np.where(blk.loc[:, 1, :] >= 0, blk.loc[:, 1, :], blk.n_docs)
    for _ in range(2 * depth):
        has_a, has_b = ka < len_a, kb < len_b
        go = (n < k) & ((has_a & has_b) if stop else (has_a | has_b))
        if not go.any():
            break
        pick_a = has_a & (~has_b | (ka < kb) | ((ka == kb) & a_first))
        sel = rows[go]
        pa = pick_a[sel]
        d = np.where(
            pa,
            loc_a[sel, np.minimum(ka[sel], depth - 1)],
            loc_b[sel, np.minimum(kb[sel], depth - 1)],
        )
        fresh = ~used[sel, d]
        put = sel[fresh]
        doc[put, n[put]] = d[fresh]
        used[put, d[fresh]] = True
        n[put] += 1
        ka[sel[pa]] += 1
        kb[sel[~pa]] += 1
    return _Drafted(doc=doc, team=np.full((n_b, k), -1, dtype=np.int64), prob=None)


def _probabilistic(
    blk: _Block, keys: NDArray[np.uint64], k: int, *, stop: bool, tau: float
) -> _Drafted:
    """Probabilistic interleaving (Hofmann, Whiteson & de Rijke, CIKM 2011).

    Each ranker is a softmax over its documents not yet shown, weight
    ``rank ** -tau``. Each position: a ranker drawn uniformly among those
    with a document left (draw ``2t``), then a document from its softmax
    (draw ``2t + 1``, by inverse CDF in rank order). The probability of the
    placed document under every ranker's softmax is kept: the outcome's
    marginalisation needs nothing else.
    """
    import numpy as np

    n_b, n_r, depth = blk.loc.shape
    has_doc = blk.loc >= 0
    flat_loc = np.where(has_doc, blk.loc, blk.n_docs)
    weight = np.where(has_doc, np.arange(1, depth + 1, dtype=np.float64) ** -tau, 0.0)
    used = np.zeros((n_b, blk.n_docs + 1), dtype=bool)
    doc = np.full((n_b, k), -1, dtype=np.int64)
    team = np.full((n_b, k), -1, dtype=np.int64)
    prob = np.zeros((n_b, k, n_r), dtype=np.float64)
    n = np.zeros(n_b, dtype=np.int64)
    rows = np.arange(n_b)
    rank_weight = np.where(blk.rank_of > 0, blk.rank_of.astype(np.float64), np.inf)
    rank_weight = rank_weight**-tau  # (B, R, D + 1): 0 where absent
    for t in range(k):
        live = weight * ~used[rows[:, None, None], flat_loc]
        mass = live.sum(axis=2)
        active = mass > 0
        go = (n < k) & (active.all(axis=1) if stop else active.any(axis=1))
        if not go.any():
            break
        sel = rows[go]
        act = active[sel]
        nth = np.floor(uniform_draws(keys[sel], 2 * t) * act.sum(axis=1))
        choice = (np.cumsum(act, axis=1) > nth[:, None]).argmax(axis=1)
        w = live[sel, choice]
        cum = np.cumsum(w, axis=1)
        target = uniform_draws(keys[sel], 2 * t + 1) * cum[:, -1]
        i = (cum <= target[:, None]).sum(axis=1)
        last = depth - 1 - (w[:, ::-1] > 0).argmax(axis=1)
        i = np.minimum(i, last)
        d = flat_loc[sel, choice, i]
        doc[sel, n[sel]] = d
        team[sel, n[sel]] = choice
        left = mass[sel]
        prob[sel, n[sel]] = np.where(
            left > 0, rank_weight[sel, :, d] / np.where(left > 0, left, 1.0), 0.0
        )
        used[sel, d] = True
        n[sel] += 1
    return _Drafted(doc=doc, team=team, prob=prob)


# --- interleave -------------------------------------------------------------------------


def interleave(
    rankings: Any,
    *,
    method: Method = "team_draft",
    k: int = 10,
    seed: int = 0,
    rankers: Sequence[str] | None = None,
    on_exhaustion: Literal["fill", "stop"] = "fill",
    tau: float = 3.0,
    common_prefix: bool = False,
    missing_ranker: Literal["error", "skip", "empty"] = "error",
) -> Any:
    """Merge each search's rankings into one interleaved list of at most ``k``.

    Parameters
    ----------
    rankings : polars DataFrame, LazyFrame or pandas DataFrame
        Long frame ``search_id, ranker, doc_id, rank``: one row per document
        of each ranker's list for each search; ``rank`` orders the list
        (smallest first; gaps are closed, so ranks 1, 2, 5 read as 1, 2, 3).
        Integer ids become strings.
    method : {"team_draft", "balanced", "probabilistic", "team_draft_multileave"}
        ``team_draft``: Radlinski, Kurup & Joachims (CIKM 2008), as Chapelle
        et al. (TOIS 2012) Alg. 2; ``balanced``: Joachims (2003), Chapelle
        et al. Alg. 1; ``probabilistic``: Hofmann, Whiteson & de Rijke (CIKM
        2011), softmax ``rank ** -tau``; ``team_draft_multileave``: Schuth et
        al. (CIKM 2014), two or more rankers. The first three take exactly two.
    k : int, default 10
        Length of the interleaved list (the page size).
    seed : int, default 0
        With the search id, seeds the search's draws (see Notes).
    rankers : list of str, optional
        Which rankers to interleave, in this order (the order of the
        ``rank_<ranker>`` columns); rows of other rankers are not read.
        Default: every ranker in ``rankings``, sorted by name.
    on_exhaustion : {"fill", "stop"}, default "fill"
        When a ranker has no unshown document left: ``"fill"`` lets the
        others go on until ``k`` documents are shown (as mpkato's
        ``interleaving`` package does); ``"stop"`` ends the list there, as
        Chapelle et al.'s algorithms do.
    tau : float, default 3.0
        Softmax exponent of probabilistic interleaving.
    common_prefix : bool, default False
        Team-draft methods only: show first the leading documents on which
        all rankers agree, credited to no ranker (``team`` null), then draft
        the rest (Lerot's ``TeamDraft``). Clicks on them carry no preference,
        so it removes noise; off by default, as in the published algorithm.
    missing_ranker : {"error", "skip", "empty"}, default "error"
        A search without rows for one of the rankers: an error; left out of
        the output; or read as an empty ranking (the other rankers fill the
        list under ``on_exhaustion="fill"``). "skip" and "empty" count such
        searches in an :class:`~ireval_df.errors.InterleavingWarning`, and
        accept a ranker of ``rankers=`` that has no rows at all.

    Returns
    -------
    Frame of the same kind as ``rankings``
        One row per shown document, sorted by ``search_id`` and
        ``position``: ``search_id`` (String), ``position`` (Int32, from 1),
        ``doc_id`` (String), ``team`` (String: the ranker credited; null for
        balanced interleaving and for a common prefix), then
        ``rank_<ranker>`` (UInt32, the document's rank in that ranker's
        list, null when absent) for each ranker, and for probabilistic
        interleaving ``p_<ranker>`` (Float64): the probability that the
        ranker's softmax, over its documents not shown above, draws this
        document. ``team`` there is the ranker actually drawn; the outcome
        marginalises over it.

    Raises
    ------
    SchemaError
        A column is missing or has an unusable dtype.
    DataError
        Nulls; a (search_id, ranker, doc_id) or (search_id, ranker, rank)
        twice; fewer than two rankers; a search without one of the rankers
        (``missing_ranker="error"``).
    OptionError
        An unknown method or option; three or more rankers for a
        two-ranker method.

    See Also
    --------
    interleaving_outcomes : credit and winner of each search from its clicks.

    Notes
    -----
    **Randomness.** Every draw of a search comes from its key,
    :func:`search_keys` (blake2b of ``seed`` and ``search_id``), through
    :func:`uniform_draws` (splitmix64): the same search gets the same list
    on every run and polars version, whatever other searches the frame
    holds and in whatever row order. Team draft uses draw ``t * R + r`` for
    ranker ``r`` at step ``t`` (the ranker with the fewest picks, then the
    smallest draw, picks); balanced draw 0 (ranker A leads when below 1/2);
    probabilistic draws ``2t`` (ranker) and ``2t + 1`` (document).

    **Depth.** Team draft and balanced interleaving never read below rank
    ``k`` of a list, so only the top ``k`` of each list is laid out;
    probabilistic interleaving samples from whole lists, so memory grows
    with the longest list. Searches are drafted in blocks of about
    :data:`BLOCK` cells.

    Examples
    --------
    >>> rankings = pl.DataFrame({
    ...     "search_id": "s1",
    ...     "ranker": ["A"] * 3 + ["B"] * 3,
    ...     "doc_id": ["a", "b", "c", "b", "a", "d"],
    ...     "rank": [1, 2, 3] * 2,
    ... })
    >>> interleave(rankings, k=4, seed=1)
    shape: (4, 6)
    ┌───────────┬──────────┬────────┬──────┬────────┬────────┐
    │ search_id ┆ position ┆ doc_id ┆ team ┆ rank_A ┆ rank_B │
    │ ---       ┆ ---      ┆ ---    ┆ ---  ┆ ---    ┆ ---    │
    │ str       ┆ i32      ┆ str    ┆ str  ┆ u32    ┆ u32    │
    ╞═══════════╪══════════╪════════╪══════╪════════╪════════╡
    │ s1        ┆ 1        ┆ b      ┆ B    ┆ 2      ┆ 1      │
    │ s1        ┆ 2        ┆ a      ┆ A    ┆ 1      ┆ 2      │
    │ s1        ┆ 3        ┆ d      ┆ B    ┆ null   ┆ 3      │
    │ s1        ┆ 4        ┆ c      ┆ A    ┆ 3      ┆ null   │
    └───────────┴──────────┴────────┴──────┴────────┴────────┘
    """
    import numpy as np

    _check_method(method)
    _check_whole("k", k, 1)
    if isinstance(seed, bool) or not isinstance(seed, int):
        msg = f"seed must be a whole number, found {seed!r}."
        raise OptionError(msg)
    check_choice("on_exhaustion", on_exhaustion, ("fill", "stop"))
    check_choice("missing_ranker", missing_ranker, ("error", "skip", "empty"))
    if (
        isinstance(tau, bool)
        or not isinstance(tau, int | float)
        or not math.isfinite(tau)
        or tau <= 0
    ):
        msg = f"tau must be a positive number, found {tau!r}."
        raise OptionError(msg)
    if common_prefix and method not in ("team_draft", "team_draft_multileave"):
        msg = (
            f"common_prefix=True is for the team-draft methods, not {method!r}.\n"
            "  Hint: balanced interleaving shows a shared prefix first by itself."
        )
        raise OptionError(msg)

    frame = _rankings_frame(rankings)
    names = _ranker_names(frame, rankers, allow_absent=missing_ranker != "error")
    if rankers is not None:
        frame = frame.filter(pl.col("ranker").is_in(names))
    _check_ranker_count(names, method)
    prep = _prepare(frame, names)
    n_s, n_r = prep.count.shape
    lacking = (prep.count == 0).any(axis=1)
    if lacking.any():
        _missing_rankers(prep, lacking, missing_ranker)
        if missing_ranker == "skip":
            prep.count[lacking] = 0
    longest = int(prep.count.max()) if prep.count.size else 0
    depth = max(1, longest if method == "probabilistic" else min(k, longest))
    keys = search_keys(prep.ids.to_list(), seed)
    _check_deep_duplicates(prep, depth)
    stop = on_exhaustion == "stop"
    step = max(1, BLOCK // (n_r * depth + k * (n_r + 2)))
    parts: list[tuple[NDArray[Any], ...]] = []
    for s0 in range(0, n_s, step):
        s1 = min(n_s, s0 + step)
        blk = _block(prep, s0, s1, depth)
        if method == "balanced":
            drafted = _balanced(blk, keys[s0:s1], k, stop=stop)
        elif method == "probabilistic":
            drafted = _probabilistic(blk, keys[s0:s1], k, stop=stop, tau=float(tau))
        else:
            drafted = _team_draft(blk, keys[s0:s1], k, stop=stop, prefix=common_prefix)
        b, j = np.nonzero(drafted.doc >= 0)
        d = drafted.doc[b, j]
        prob = drafted.prob[b, j] if drafted.prob is not None else None
        parts.append(
            (
                b + s0,
                j + 1,
                blk.doc_row[b, d],
                drafted.team[b, j],
                blk.rank_of[b, :, d],
                *(() if prob is None else (prob,)),
            )
        )
    result = _results_frame(
        prep, parts, depth=depth, with_prob=method == "probabilistic"
    )
    settings = {
        "interleaving_method": method,
        "interleaving_k": k,
        "interleaving_seed": seed,
        "interleaving_rankers": names,
        "interleaving_on_exhaustion": on_exhaustion,
        "interleaving_tau": float(tau),
        "interleaving_common_prefix": common_prefix,
        "interleaving_missing_ranker": missing_ranker,
    }
    return _provenance.output(result, rankings, settings)


def _missing_rankers(prep: _Prepared, lacking: NDArray[np.bool_], policy: str) -> None:
    import numpy as np

    n_lacking = int(lacking.sum())
    first = int(np.flatnonzero(lacking)[0])
    absent = [n for n, c in zip(prep.names, prep.count[first], strict=True) if c == 0]
    example = f"search_id={prep.ids[first]!r} has no rows for ranker(s) {absent!r}"
    if policy == "error":
        msg = (
            f"{n_lacking} search(es) lack a ranker, e.g. {example}.\n"
            "  Hint: missing_ranker='empty' reads a missing ranking as empty; "
            "missing_ranker='skip' leaves those searches out."
        )
        raise DataError(msg)
    what = (
        "left out" if policy == "skip" else "interleaved with an empty ranking for it"
    )
    warn(
        f"{n_lacking} search(es) lack a ranker ({example}); they are {what} "
        f"(missing_ranker={policy!r}; 'error' raises instead).",
        InterleavingWarning,
    )


def _results_frame(
    prep: _Prepared,
    parts: list[tuple[NDArray[Any], ...]],
    *,
    depth: int,
    with_prob: bool,
) -> pl.DataFrame:
    import numpy as np

    names = prep.names
    n_r = len(names)

    def joined(i: int, shape: tuple[int, ...], dtype: Any) -> NDArray[Any]:
        arrays = [p[i] for p in parts]
        if not arrays:
            return np.zeros(shape, dtype=dtype)
        return np.concatenate(arrays).astype(dtype, copy=False)

    s = joined(0, (0,), np.int64)
    position = joined(1, (0,), np.int32)
    row = joined(2, (0,), np.int64)
    team = joined(3, (0,), np.int64)
    ranks = _deep_ranks(prep, depth, s, row, joined(4, (0, n_r), np.int64))
    columns: dict[str, Any] = {
        "search_id": prep.ids.gather(s),
        "position": pl.Series("position", position, dtype=pl.Int32),
        "doc_id": prep.work.get_column("doc_id").gather(row),
        "team": pl.Series(names, dtype=pl.String).gather(
            pl.Series(team).set(pl.Series(team < 0), None)
        ),
    }
    for i, name in enumerate(names):
        rank = pl.Series(ranks[:, i], dtype=pl.UInt32)
        columns[f"rank_{name}"] = rank.set(rank == 0, None)
    if with_prob:
        prob = joined(5, (0, n_r), np.float64)
        for i, name in enumerate(names):
            columns[f"p_{name}"] = pl.Series(prob[:, i], dtype=pl.Float64)
    return pl.DataFrame(columns)


# --- outcomes ---------------------------------------------------------------------------


def _results_rankers(frame: pl.DataFrame, rankers: Sequence[str] | None) -> list[str]:
    if rankers is not None:
        names = [rankers] if isinstance(rankers, str) else [str(r) for r in rankers]
    else:
        names = [c[len("rank_") :] for c in frame.columns if c.startswith("rank_")]
    if len(names) < 2:
        msg = (
            f"results name {len(names)} ranker(s) {names!r}; interleaving compares "
            "two or more.\n  Hint: results from interleave() carry a rank_<ranker> "
            "column per ranker; or pass rankers=[...]."
        )
        raise SchemaError(msg)
    return names


def _results_method(
    results: Any, frame: pl.DataFrame, names: Sequence[str], method: str | None
) -> str:
    if method is not None:
        _check_method(method)
        return method
    recorded = (_provenance.settings_of(results) or {}).get("interleaving_method")
    if recorded in METHODS:
        return str(recorded)
    if all(f"p_{n}" in frame.columns for n in names):
        return "probabilistic"
    if "team" in frame.columns and frame.get_column("team").null_count() < frame.height:
        return "team_draft" if len(names) == 2 else "team_draft_multileave"
    return "balanced"


def _credited_events(
    clicks: pl.DataFrame, credit: str, sat_tau: float
) -> tuple[pl.DataFrame, int]:
    """Return the events that earn credit, and how many lack a search or place."""
    hint = "pass the search log's events (search_id, position, event_type, dwell_ms)."
    if credit == "add_to_cart":
        _require(clicks, "clicks", ["event_type"], hint)
    if credit == "sat_click":
        _require(clicks, "clicks", ["dwell_ms"], hint)
        dtype = clicks.schema["dwell_ms"]
        if not (dtype.is_numeric() or dtype == pl.Null):
            msg = (
                f"clicks column 'dwell_ms' must hold milliseconds as numbers, found "
                f"{dtype}.\n  Hint: e.g. pl.col('dwell_ms').cast(pl.Float64)."
            )
            raise SchemaError(msg)
    keep: list[pl.Expr] = []
    if "event_type" in clicks.columns:
        wanted = "add_to_cart" if credit == "add_to_cart" else "click"
        keep.append(pl.col("event_type") == wanted)
    if credit == "sat_click":
        keep.append(pl.col("dwell_ms") >= sat_tau * 1000.0)
    has_position = "position" in clicks.columns
    has_doc = "doc_id" in clicks.columns
    if not (has_position or has_doc):
        _require(clicks, "clicks", ["position"], hint)
    columns = [_id_column(clicks, "search_id", "clicks").alias("search_id")]
    if has_position:
        columns.append(_int_column(clicks, "position", "clicks").alias("position"))
    else:
        columns.append(pl.lit(None, dtype=pl.Int64).alias("position"))
    if has_doc:
        columns.append(_id_column(clicks, "doc_id", "clicks").alias("doc_id"))
    else:
        columns.append(pl.lit(None, dtype=pl.String).alias("doc_id"))
    if keep:
        clicks = clicks.filter(pl.all_horizontal(keep).fill_null(value=False))
    events = clicks.select(columns)
    placed = pl.col("search_id").is_not_null() & (
        pl.col("position").is_not_null() | pl.col("doc_id").is_not_null()
    )
    unplaced = int(events.select((~placed).sum()).item())
    return events.filter(placed), unplaced


def _from_log(
    log: SearchLog, clicks: Any, searches: Any
) -> tuple[pl.DataFrame, Any, Any]:
    """Return a log's interleaved results, its events and its searches' attributes."""
    if log.results is None:
        msg = (
            "the search log has no results table; interleaving outcomes need the "
            "interleaved lists (search_id, position, doc_id, team, rank_<ranker>).\n"
            "  Hint: log the output of interleave() as the log's results."
        )
        raise SchemaError(msg)
    results = log.results
    marks = ["team"] if "team" in results.columns else []
    marks = marks or [c for c in results.columns if c.startswith("rank_")]
    if not marks:
        msg = (
            "the search log's results have no team or rank_<ranker> column, so "
            "none of its searches was interleaved (an A/B log?).\n  Hint: log "
            "what interleave() returns (search_id, position, doc_id, team, "
            "rank_<ranker>...) as the interleaved searches' results."
        )
        raise SchemaError(msg)
    # the searches that were interleaved (an A/B arm's rows lack these)
    interleaved = (
        results.group_by("search_id")
        .agg(pl.any_horizontal(pl.col(marks).is_not_null()).any().alias("__i"))
        .filter(pl.col("__i"))
        .get_column("search_id")
    )
    results = results.filter(pl.col("search_id").is_in(interleaved.implode()))
    _warn_empty_searches(log, results)
    if clicks is None:
        if log.events is None:
            msg = (
                "the search log has no events table, so no clicks to credit.\n"
                "  Hint: pass clicks= (search_id, position or doc_id)."
            )
            raise SchemaError(msg)
        clicks = log.events.filter(  # the events of the interleaved searches
            pl.col("search_id").is_in(log.searches.get_column("search_id").implode())
            & pl.col("search_id").is_in(results.get_column("search_id").implode())
        )
    if searches is None:
        searches = log.searches.filter(
            pl.col("search_id").is_in(results.get_column("search_id").implode())
        )
    return results, clicks, searches


def _warn_empty_searches(log: SearchLog, results: pl.DataFrame) -> None:
    """Count the searches of the interleaved arms that showed nothing."""
    arm = ["experiment_id", "variant"]
    arms = (
        log.searches.filter(
            pl.col("search_id").is_in(results.get_column("search_id").implode())
        )
        .select(arm)
        .unique()
    )
    shown = log.results.get_column("search_id") if log.results is not None else None
    empty = log.searches.join(arms, on=arm, how="semi")
    if shown is not None:
        empty = empty.filter(~pl.col("search_id").is_in(shown.implode()))
    if empty.height:
        first = empty.get_column("search_id").sort()[0]
        warn(
            f"{empty.height:,} search(es) of the interleaved arm(s) showed no results "
            f"(e.g. search_id={first!r}): with nothing shown they carry no "
            "preference and get no outcome row (interleaving_test's n_no_click "
            "does not count them; online.metrics' ZeroResultRate does).",
            InterleavingWarning,
        )


def interleaving_outcomes(
    results: Any,
    clicks: Any = None,
    *,
    method: Method | None = None,
    credit: Credit = "click",
    sat_tau: float = 30.0,
    searches: Any = None,
    rankers: Sequence[str] | None = None,
    unmatched: Literal["warn", "error"] = "warn",
) -> Any:
    """Credit each ranker with the clicks of each interleaved search; name the winner.

    Parameters
    ----------
    results : polars or pandas DataFrame, or SearchLog
        What :func:`interleave` returns: ``search_id, position, doc_id,
        team, rank_<ranker>...`` (and ``p_<ranker>`` for probabilistic).
        Or a :class:`~ireval_df.online.SearchLog` whose ``results`` carry
        those columns: its searches with a ``team`` (else a
        ``rank_<ranker>``) value are the interleaved ones, ``clicks``
        defaults to its ``events`` and ``searches`` to its ``searches``
        (``user_id``, ``query_class`` and the other slice columns come
        along for :func:`interleaving_test`). Searches of the interleaved
        arms that showed no results are counted in an
        :class:`~ireval_df.errors.InterleavingWarning`.
    clicks : polars or pandas DataFrame, optional
        One row per event: ``search_id`` and ``position`` (or ``doc_id``,
        matched to the document's position in the search's results);
        optional ``event_type`` (only ``"click"`` rows count as clicks, or
        ``"add_to_cart"`` for that credit; without the column every row is
        a click) and ``dwell_ms``. Required unless ``results`` is a log.
    method : {"team_draft", "balanced", "probabilistic", "team_draft_multileave"}, optional
        Default: the method :func:`interleave` recorded for ``results``;
        else read from its columns: ``p_<ranker>`` columns mean
        probabilistic, a ``team`` column with values a team draft, neither
        balanced. Pass it to be sure.
    credit : {"click", "sat_click", "add_to_cart"}, default "click"
        The events that earn credit: clicks; satisfied clicks (dwell of at
        least ``sat_tau`` seconds; a null dwell is not satisfied); or
        add-to-cart events.
    sat_tau : float, default 30
        Seconds of dwell that make a click satisfied.
    searches : polars or pandas DataFrame, optional
        One row per ``search_id`` with attributes (``user_id``, slices) to
        join onto the outcomes, for :func:`interleaving_test`'s ``unit`` and
        ``by``.
    rankers : list of str, optional
        The rankers, in order; default: the ``rank_<ranker>`` columns.
    unmatched : {"warn", "error"}, default "warn"
        Credited events on a position (or document) the search did not
        show, or without a search or position: left out and counted in an
        :class:`~ireval_df.errors.InterleavingWarning`, or an error.

    Returns
    -------
    Frame of the same kind as ``results``
        One row per search of ``results``, sorted by ``search_id``:
        ``search_id``, ``credit_<ranker>`` (Float64) for each ranker,
        ``n_clicks`` (Int64: credited positions clicked), ``winner``
        (String: the ranker with the strictly largest credit; null for a tie
        or without a credited click), then the columns of ``searches``.

    Raises
    ------
    SchemaError
        A needed column is missing.
    DataError
        A (search_id, position) twice in results, a ``team`` that is not a
        ranker, unmatched events with ``unmatched="error"``.
    OptionError
        An unknown method or credit.

    See Also
    --------
    interleave : makes ``results``.
    interleaving_test : delta_ab, its interval and test, per ranker pair.

    Notes
    -----
    A position counts once however many credited events it has. Credit
    rules:

    * team draft and multileave: ``credit_r`` is the number of clicked
      positions on ranker r's team; a common prefix (null team) earns none.
    * balanced (Chapelle et al. 2012): with ``d`` the lowest clicked
      document, ``k* = min(rank_A(d), rank_B(d))`` (a ranker without ``d``
      does not bound it); ``credit_r`` is the number of clicked documents
      with ``rank_r <= k*``.
    * probabilistic (Hofmann et al. 2011): ``credit_r`` is the probability
      that ranker r wins, i.e. gets more clicks than the other, under the
      posterior over which ranker contributed each document,
      ``P(a | list) ∝ prod_j p_{a_j}(list_j)``. ``credit_A - credit_B`` is
      Hofmann et al.'s expected outcome E[o]. Because a document is removed
      from every softmax once shown, ``p_r`` at position j does not depend
      on the assignment above it: the posterior is a product over
      positions, each assigned to A with probability ``p_A / (p_A + p_B)``,
      and the win probability is exact by dynamic programming over the
      clicked positions (the difference of the rankers' click counts), equal
      to the sum over all ``2^k`` assignments, normalised (mpkato's
      two-ranker ``Probabilistic.compute_scores`` returns the same masses
      unnormalised).

    Examples
    --------
    >>> results = pl.DataFrame({
    ...     "search_id": "s1", "position": [1, 2, 3], "doc_id": ["a", "b", "c"],
    ...     "team": ["A", "B", "A"], "rank_A": [1, None, 2], "rank_B": [None, 1, 2],
    ... })
    >>> clicks = pl.DataFrame({"search_id": ["s1", "s1"], "position": [1, 3]})
    >>> interleaving_outcomes(results, clicks).rows()
    [('s1', 2.0, 0.0, 2, 'A')]
    """
    check_choice("credit", credit, CREDITS)
    check_choice("unmatched", unmatched, ("warn", "error"))
    if isinstance(sat_tau, bool) or not isinstance(sat_tau, int | float):
        msg = f"sat_tau must be a number of seconds, found {sat_tau!r}."
        raise OptionError(msg)
    if isinstance(results, SearchLog):
        results, clicks, searches = _from_log(results, clicks, searches)
    elif clicks is None:
        msg = (
            "interleaving_outcomes needs clicks (one row per event: search_id, "
            "position or doc_id) unless results is a SearchLog."
        )
        raise SchemaError(msg)
    hint = "pass the frame interleave() returned (or the search log's results)."
    frame = eager(results, "results", hint)
    _require(frame, "results", ["search_id", "position"], hint)
    names = _results_rankers(frame, rankers)
    chosen = _results_method(results, frame, names, method)
    if chosen in ("balanced", "probabilistic") and len(names) != 2:
        msg = (
            f"{chosen} interleaving compares two rankers, results name "
            f"{len(names)}: {names!r}."
        )
        raise OptionError(msg)
    needed = {
        "balanced": [f"rank_{n}" for n in names],
        "probabilistic": [f"p_{n}" for n in names],
    }.get(chosen, ["team"])
    _require(frame, "results", needed, f"method={chosen!r} reads these columns.")
    extra = [c for c in ("doc_id",) if c in frame.columns]
    frame = frame.select(
        _id_column(frame, "search_id", "results").alias("search_id"),
        _int_column(frame, "position", "results").alias("position"),
        *(_id_column(frame, c, "results").alias(c) for c in extra),
        *(
            (_id_column(frame, c, "results") if c == "team" else pl.col(c)).alias(c)
            for c in needed
        ),
    )
    _no_nulls(frame, "results", ["search_id", "position"])
    repeated = frame.group_by("search_id", "position").len().filter(pl.col("len") > 1)
    if repeated.height:
        msg = (
            f"results hold {repeated.height} repeated (search_id, position) keys, e.g. "
            f"{_example(repeated.sort('search_id', 'position'), ['search_id', 'position'])}"
            "; a position shows one document."
        )
        raise DataError(msg)
    if chosen in ("team_draft", "team_draft_multileave"):
        strangers = frame.filter(
            pl.col("team").is_not_null() & ~pl.col("team").is_in(names)
        )
        if strangers.height:
            msg = (
                f"results credit {strangers.height} position(s) to a team that is not "
                f"one of the rankers {names!r}, e.g. "
                f"{_example(strangers, ['search_id', 'position', 'team'])}."
            )
            raise DataError(msg)

    events_frame = eager(clicks, "clicks", "one row per click event.")
    _require(events_frame, "clicks", ["search_id"], "one row per click event.")
    events, unplaced = _credited_events(events_frame, credit, float(sat_tau))
    clicked, unshown, example = _match_events(frame, events)
    n_bad = unplaced + unshown
    if n_bad:
        what = f"{n_bad} {credit} event(s) are not on a shown result"
        detail = (
            f" ({unshown} on positions or documents the search did not show"
            f"{', e.g. ' + example if example else ''}; {unplaced} without a "
            "search_id, position or doc_id)"
        )
        if unmatched == "error":
            msg = f"{what}{detail}.\n  Hint: unmatched='warn' leaves them out."
            raise DataError(msg)
        warn(
            f"{what}{detail}; they earn no credit (unmatched='error' raises instead).",
            InterleavingWarning,
        )
    frame = frame.join(clicked, on=["search_id", "position"], how="left").with_columns(
        pl.col("__ireval_clicked").fill_null(value=False)
    )
    if chosen == "probabilistic":
        out = _probabilistic_credit(frame, names)
    elif chosen == "balanced":
        out = _balanced_credit(frame, names)
    else:
        out = _team_credit(frame, names)
    out = out.with_columns(_winner(names)).sort("search_id")
    if searches is not None:
        out = _join_searches(out, searches)
    settings = {
        "interleaving_method": chosen,
        "interleaving_credit": credit,
        "interleaving_sat_tau": float(sat_tau),
        "interleaving_rankers": names,
    }
    merged = dict(_provenance.settings_of(results) or {})
    merged.update(settings)
    return _provenance.output(out, results, merged)


def _match_events(
    frame: pl.DataFrame, events: pl.DataFrame
) -> tuple[pl.DataFrame, int, str]:
    """Clicked (search_id, position) pairs; the count and an example of unshown ones."""
    by_doc = events.filter(pl.col("position").is_null())
    if by_doc.height and "doc_id" in frame.columns:
        found = by_doc.drop("position").join(
            frame.select("search_id", "doc_id", "position"),
            on=["search_id", "doc_id"],
            how="left",
        )
        events = pl.concat(
            [
                events.filter(pl.col("position").is_not_null()),
                found.select(events.columns),
            ]
        )
    shown = frame.select("search_id", "position").with_columns(
        pl.lit(value=True).alias("__ireval_shown")
    )
    matched = events.join(shown, on=["search_id", "position"], how="left")
    missing = matched.filter(pl.col("__ireval_shown").is_null())
    example = ""
    if missing.height:
        row = missing.row(0, named=True)
        where = (
            f"position={row['position']!r}"
            if row["position"] is not None
            else f"doc_id={row['doc_id']!r}"
        )
        example = f"search_id={row['search_id']!r} {where}"
    clicked = (
        matched.filter(pl.col("__ireval_shown").is_not_null())
        .select("search_id", "position")
        .unique()
        .with_columns(pl.lit(value=True).alias("__ireval_clicked"))
    )
    return clicked, missing.height, example


def _team_credit(frame: pl.DataFrame, names: Sequence[str]) -> pl.DataFrame:
    clicked = pl.col("__ireval_clicked")
    return frame.group_by("search_id").agg(
        *(
            (clicked & (pl.col("team") == n))
            .sum()
            .cast(pl.Float64)
            .alias(f"credit_{n}")
            for n in names
        ),
        (clicked & pl.col("team").is_not_null()).sum().cast(pl.Int64).alias("n_clicks"),
    )


def _balanced_credit(frame: pl.DataFrame, names: Sequence[str]) -> pl.DataFrame:
    clicked = pl.col("__ireval_clicked")
    lowest = pl.col("position").filter(clicked).max()
    ranks = [pl.col(f"rank_{n}").cast(pl.Int64) for n in names]
    k_star = pl.min_horizontal(ranks).filter(pl.col("position") == lowest).min()
    return frame.group_by("search_id").agg(
        *(
            (clicked & (rank <= k_star).fill_null(value=False))
            .sum()
            .cast(pl.Float64)
            .alias(f"credit_{n}")
            for n, rank in zip(names, ranks, strict=True)
        ),
        clicked.sum().cast(pl.Int64).alias("n_clicks"),
    )


def _probabilistic_credit(frame: pl.DataFrame, names: Sequence[str]) -> pl.DataFrame:
    """Win probabilities of each ranker, marginalised over assignments (exact)."""
    import numpy as np

    pa, pb = (pl.col(f"p_{n}").cast(pl.Float64) for n in names)
    rows = frame.filter(pl.col("__ireval_clicked")).sort("search_id", "position")
    bad = rows.filter(((pa + pb) <= 0) | (pa < 0) | (pb < 0) | (pa + pb).is_null())
    if bad.height:
        msg = (
            f"results give {bad.height} clicked position(s) no probability under "
            f"either ranker (p_{names[0]} + p_{names[1]} must be > 0), e.g. "
            f"{_example(bad, ['search_id', 'position'])}.\n"
            "  Hint: pass the results interleave(method='probabilistic') returned."
        )
        raise DataError(msg)
    share = rows.select("search_id", (pa / (pa + pb)).alias("q"))
    ids = share.get_column("search_id")
    group = (ids != ids.shift(1)).fill_null(value=True).cum_sum().to_numpy() - 1
    q = share.get_column("q").to_numpy()
    searches = ids.unique(maintain_order=True)
    n_g = len(searches)
    counts = np.bincount(group, minlength=n_g)
    width = int(counts.max()) if n_g else 0
    start = np.cumsum(counts) - counts
    place = np.arange(len(group)) - start[group]
    grid = np.full((n_g, width), np.nan)
    grid[group, place] = q
    # dist[:, width + d]: probability that A's clicks minus B's clicks is d
    dist = np.zeros((n_g, 2 * width + 1))
    dist[:, width] = 1.0
    for j in range(width):
        qj = grid[:, j : j + 1]
        moved = np.zeros_like(dist)
        moved[:, 1:] += dist[:, :-1] * qj
        moved[:, :-1] += dist[:, 1:] * (1.0 - qj)
        dist = np.where(np.isnan(qj), dist, moved)
    win_a = dist[:, width + 1 :].sum(axis=1)
    win_b = dist[:, :width].sum(axis=1)
    wins = pl.DataFrame(
        {
            "search_id": searches,
            f"credit_{names[0]}": win_a,
            f"credit_{names[1]}": win_b,
            "n_clicks": counts.astype(np.int64),
        }
    )
    every = frame.select("search_id").unique()
    return every.join(wins, on="search_id", how="left").with_columns(
        pl.col(f"credit_{names[0]}", f"credit_{names[1]}").fill_null(0.0),
        pl.col("n_clicks").fill_null(0),
    )


def _winner(names: Sequence[str]) -> pl.Expr:
    expr: Any = pl
    for name in names:
        beats = [
            pl.col(f"credit_{name}") - pl.col(f"credit_{other}") > TIE_TOLERANCE
            for other in names
            if other != name
        ]
        expr = expr.when(pl.all_horizontal(beats) & (pl.col("n_clicks") > 0)).then(
            pl.lit(name, dtype=pl.String)
        )
    out: pl.Expr = expr.otherwise(pl.lit(None, dtype=pl.String)).alias("winner")
    return out


def _join_searches(out: pl.DataFrame, searches: Any) -> pl.DataFrame:
    hint = "one row per search_id with its user_id and slice columns."
    table = eager(searches, "searches", hint)
    _require(table, "searches", ["search_id"], hint)
    table = table.with_columns(_id_column(table, "search_id", "searches"))
    clash = [c for c in table.columns if c != "search_id" and c in out.columns]
    if clash:
        msg = f"searches has column(s) {clash!r} that the outcomes already hold."
        raise SchemaError(msg)
    if table.get_column("search_id").is_duplicated().any():
        repeated = table.filter(pl.col("search_id").is_duplicated())
        msg = (
            f"searches hold {repeated.height} rows of repeated search_ids, e.g. "
            f"{_example(repeated, ['search_id'])}; one row per search."
        )
        raise DataError(msg)
    return out.join(table, on="search_id", how="left")


# --- the test ---------------------------------------------------------------------------


def _outcome_rankers(frame: pl.DataFrame, rankers: Sequence[str] | None) -> list[str]:
    if rankers is not None:
        names = [rankers] if isinstance(rankers, str) else [str(r) for r in rankers]
    else:
        names = [c[len("credit_") :] for c in frame.columns if c.startswith("credit_")]
    if len(names) < 2:
        msg = (
            f"outcomes name {len(names)} ranker(s) {names!r}; a test compares two "
            "or more.\n  Hint: pass what interleaving_outcomes() returned."
        )
        raise SchemaError(msg)
    return names


def interleaving_test(
    outcomes: Any,
    *,
    unit: str | None = None,
    by: str | Sequence[str] | None = None,
    test: Literal["sign", "bootstrap"] = "sign",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    correction: Correction | Literal["none"] | None = "holm",
    rankers: Sequence[str] | None = None,
) -> Any:
    """Preference of each ranker pair, Chapelle et al.'s delta_ab, with a test.

    Parameters
    ----------
    outcomes : polars or pandas DataFrame
        What :func:`interleaving_outcomes` returns: ``search_id``,
        ``credit_<ranker>...``, ``n_clicks``, and the ``unit`` and ``by``
        columns (joined there with ``searches=``).
    unit : str, optional
        The unit of analysis: ``"search"`` (each search is one observation)
        or a column naming the unit searches cluster in, normally
        ``"user_id"``. Default: ``"user_id"`` when the outcomes have that
        column, else ``"search"``.
    by : str or list of str, optional
        Slice columns: every pair is tested within each slice.
    test : {"sign", "bootstrap"}, default "sign"
        ``"sign"``: the exact two-sided sign test
        (``scipy.stats.binomtest(wins, wins + losses, 0.5)``, ties left out),
        on searches or, with a unit column, on one vote per unit (the sign
        of the unit's summed search outcomes). ``"bootstrap"``: resampling
        searches, or with a unit column whole units (a cluster bootstrap)
        with the search-level delta_ab; percentile interval, shift-method
        p-value.
    alpha : float, default 0.05
        Significance level; the interval covers ``1 - alpha``.
    n_resamples : int, default 10000
        Bootstrap resamples.
    seed : int or None, default 0
        Seed of the bootstrap.
    correction : {"holm", "bonferroni", "bh", "by", "none"} or None, default "holm"
        Multiple-testing correction over every (pair, slice) test of the
        call, as :func:`ireval_df.compare`'s.
    rankers : list of str, optional
        The rankers, in order; default: the ``credit_<ranker>`` columns.

    Returns
    -------
    Frame of the same kind as ``outcomes`` (eager for a LazyFrame)
        One row per ranker pair (``ranker_a`` before ``ranker_b`` in the
        rankers' order; the pair reversed has the opposite ``delta_ab``)
        and slice: ``ranker_a, ranker_b, [by...], unit, n_units,
        n_searches, n_no_click, wins, losses, ties, delta_ab, ci_low,
        ci_high, p_value, p_adjusted, significant``. ``n_units`` counts the
        units with a credited click (searches or users), ``n_searches`` the
        searches with one, ``n_no_click`` the searches without (left out).
        ``wins``, ``losses`` and ``ties`` count what the test counts: the
        sign test's observations (searches, or units' votes), the
        bootstrap's searches.

    Raises
    ------
    SchemaError
        A needed, ``unit`` or ``by`` column is missing.
    OptionError
        An unknown option.

    See Also
    --------
    interleaving_outcomes : the per-search credits this reads.
    ireval_df.compare : the same corrections for offline metrics.

    Notes
    -----
    Chapelle et al. (TOIS 2012, section 4):
    ``delta_ab = (wins + ties / 2) / (wins + losses + ties) - 1/2
    = (wins - losses) / (2 n)``, where a search wins for A when A's credit
    is larger, loses when smaller, ties when equal, and ``n = wins + losses
    + ties`` counts the searches with at least one credited click; searches
    without one carry no preference and are left out (``n_no_click``).
    delta_ab is in [-1/2, 1/2]; positive means ``ranker_a`` is preferred.
    With a unit column the sign test applies the same formula to units:
    each unit (user) with a credited click votes win, loss or tie by the
    sign of the sum of its searches' outcomes (+1, -1, 0), so a heavy user
    is one observation; the bootstrap keeps the search-level delta_ab
    (``sum of outcomes / (2 x searches)``) and resamples users with all
    their searches. Searches of one user are not independent: treating
    them as such (``unit="search"`` when users issue many searches)
    understates the variance.

    The sign test's interval is Clopper-Pearson's for the share of wins
    among non-ties, ``[lo, hi]``, mapped to delta_ab with the ties held
    fixed: ``(wins + losses) / n * ([lo, hi] - 1/2)``; it is ``[0, 0]`` when
    every observation is a tie (p-value 1). Without observations the
    statistics are null and the test is left out of the correction.

    Examples
    --------
    >>> outcomes = pl.DataFrame({
    ...     "search_id": [f"s{i}" for i in range(10)],
    ...     "credit_A": [1.0] * 8 + [0.0, 1.0],
    ...     "credit_B": [0.0] * 8 + [1.0, 1.0],
    ...     "n_clicks": [1] * 9 + [2],
    ... })
    >>> row = interleaving_test(outcomes).row(0, named=True)
    >>> row["wins"], row["losses"], row["ties"], row["delta_ab"], round(row["p_value"], 4)
    (8, 1, 1, 0.35, 0.0391)
    """
    import numpy as np

    check_choice("test", test, TESTS)
    check_choice("correction", correction, CORRECTION_WORDS + (None,))
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, int | float)
        or not 0.0 < alpha < 1.0
    ):
        msg = f"alpha must be a number between 0 and 1 (exclusive), found {alpha!r}."
        raise OptionError(msg)
    _check_whole("n_resamples", n_resamples, 1)
    adjust_with: Correction | None = None if correction == "none" else correction
    hint = "pass what interleaving_outcomes() returned."
    frame = eager(outcomes, "outcomes", hint)
    names = _outcome_rankers(frame, rankers)
    slices = [by] if isinstance(by, str) else list(by or [])
    if unit is None:
        unit = "user_id" if "user_id" in frame.columns else "search"
    clustered = unit != "search"
    needed = [
        "search_id",
        "n_clicks",
        *(f"credit_{n}" for n in names),
        *slices,
        *([unit] if clustered else []),
    ]
    _require(
        frame,
        "outcomes",
        needed,
        "unit and slice columns come from interleaving_outcomes(..., searches=...); "
        "unit='search' needs none.",
    )
    credits = [f"credit_{n}" for n in names]
    undefined = frame.select(
        pl.sum_horizontal(
            pl.col(c).is_null() | pl.col(c).cast(pl.Float64).is_nan() for c in credits
        )
        .gt(0)
        .sum()
    ).item()
    if undefined:
        msg = (
            f"outcomes hold {undefined} search(es) with a null or NaN credit in "
            f"{credits}; a search's credit is a number (0 without a credited "
            "click).\n  Hint: pass what interleaving_outcomes() returned, or fill "
            "them: pl.col('^credit_.*$').fill_nan(0.0).fill_null(0.0)."
        )
        raise DataError(msg)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    unit_expr = pl.col("search_id").cast(pl.String)
    if clustered:
        n_null = frame.get_column(unit).null_count()
        if n_null:
            warn(
                f"{n_null} search(es) have a null {unit!r}; each is its own unit "
                f"(fill {unit!r} in, or pass unit='search').",
                InterleavingWarning,
            )
        unit_expr = pl.coalesce(
            pl.col(unit).cast(pl.String), pl.lit("\x00search:") + unit_expr
        )
    long = pl.concat(
        [
            frame.select(
                pl.lit(i, dtype=pl.Int64).alias("__ireval_pair"),
                *slices,
                unit_expr.alias("__ireval_unit"),
                (pl.col("n_clicks") > 0).alias("__ireval_has"),
                _sign(pl.col(f"credit_{a}") - pl.col(f"credit_{b}")).alias(
                    "__ireval_o"
                ),
            )
            for i, (a, b) in enumerate(pairs)
        ]
    )
    keys = ["__ireval_pair", *slices]
    base = (
        long.group_by(keys)
        .agg(
            pl.col("__ireval_unit")
            .filter(pl.col("__ireval_has"))
            .n_unique()
            .cast(pl.Int64)
            .alias("n_units"),
            pl.col("__ireval_has").sum().cast(pl.Int64).alias("n_searches"),
            (~pl.col("__ireval_has")).sum().cast(pl.Int64).alias("n_no_click"),
        )
        .sort(keys, nulls_last=True)
        .with_row_index("__ireval_g")
        .with_columns(pl.col("__ireval_g").cast(pl.Int64))
    )
    rows = long.filter(pl.col("__ireval_has")).join(
        base.select(*keys, "__ireval_g"), on=keys, nulls_equal=True
    )
    n_g = base.height
    if test == "sign":
        if clustered:
            rows = (
                rows.group_by("__ireval_g", "__ireval_unit")
                .agg(pl.col("__ireval_o").sum())
                .with_columns(_sign(pl.col("__ireval_o")).alias("__ireval_o"))
            )
        wins, losses, ties = _counts(rows, n_g)
        p, low, high = _sign_test(wins, losses, ties, alpha)
    else:
        wins, losses, ties = _counts(rows, n_g)
        p, low, high = _bootstrap(
            rows,
            n_g,
            clustered=clustered,
            alpha=alpha,
            n_resamples=n_resamples,
            seed=seed,
        )
    n = wins + losses + ties
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = np.where(n > 0, (wins - losses) / (2.0 * np.maximum(n, 1)), np.nan)
    tested = ~np.isnan(p)
    p_adjusted = np.full(n_g, np.nan)
    p_adjusted[tested] = adjust(p[tested], adjust_with)
    names_frame = pl.DataFrame(
        {
            "__ireval_pair": list(range(len(pairs))),
            "ranker_a": [a for a, _ in pairs],
            "ranker_b": [b for _, b in pairs],
        },
        schema={
            "__ireval_pair": pl.Int64,
            "ranker_a": pl.String,
            "ranker_b": pl.String,
        },
    )
    result = (
        base.with_columns(
            pl.lit(unit, dtype=pl.String).alias("unit"),
            pl.Series("wins", wins, dtype=pl.Int64),
            pl.Series("losses", losses, dtype=pl.Int64),
            pl.Series("ties", ties, dtype=pl.Int64),
            pl.Series("delta_ab", delta, nan_to_null=True),
            pl.Series("ci_low", low, nan_to_null=True),
            pl.Series("ci_high", high, nan_to_null=True),
            pl.Series("p_value", p, nan_to_null=True),
            pl.Series("p_adjusted", p_adjusted, nan_to_null=True),
        )
        .with_columns((pl.col("p_adjusted") <= alpha).alias("significant"))
        .join(names_frame, on="__ireval_pair")
        .sort("__ireval_g")
        .select(
            "ranker_a",
            "ranker_b",
            *slices,
            "unit",
            "n_units",
            "n_searches",
            "n_no_click",
            "wins",
            "losses",
            "ties",
            "delta_ab",
            "ci_low",
            "ci_high",
            "p_value",
            "p_adjusted",
            "significant",
        )
    )
    settings = {
        "test": test,
        "interleaving_unit": unit,
        "correction": adjust_with,
        "alpha": alpha,
        "n_resamples": n_resamples,
        "seed": seed,
        "family_size": int(tested.sum()),
    }
    return summary_output(result, outcomes, settings)


def _sign(diff: pl.Expr) -> pl.Expr:
    return (
        pl.when(diff > TIE_TOLERANCE)
        .then(1)
        .when(diff < -TIE_TOLERANCE)
        .then(-1)
        .otherwise(0)
        .cast(pl.Int64)
    )


def _counts(
    rows: pl.DataFrame, n_g: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    import numpy as np

    g = rows.get_column("__ireval_g").to_numpy()
    o = rows.get_column("__ireval_o").to_numpy()
    wins = np.bincount(g[o > 0], minlength=n_g).astype(np.int64)
    losses = np.bincount(g[o < 0], minlength=n_g).astype(np.int64)
    ties = np.bincount(g[o == 0], minlength=n_g).astype(np.int64)
    return wins, losses, ties


def _sign_test(
    wins: NDArray[np.int64],
    losses: NDArray[np.int64],
    ties: NDArray[np.int64],
    alpha: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    import numpy as np

    from ireval_df.stats.paired import require_scipy

    stats = require_scipy('interleaving_test(test="sign")')
    n_g = len(wins)
    p, low, high = np.full(n_g, np.nan), np.full(n_g, np.nan), np.full(n_g, np.nan)
    for g in range(n_g):
        w, lost, n = int(wins[g]), int(losses[g]), int(wins[g] + losses[g] + ties[g])
        if n == 0:
            continue
        if w + lost == 0:
            p[g], low[g], high[g] = 1.0, 0.0, 0.0
            continue
        result = stats.binomtest(w, w + lost, 0.5)
        interval = result.proportion_ci(confidence_level=1.0 - alpha, method="exact")
        share = (w + lost) / n
        p[g] = result.pvalue
        low[g] = share * (interval.low - 0.5)
        high[g] = share * (interval.high - 0.5)
    return p, low, high


def _bootstrap(
    rows: pl.DataFrame,
    n_g: int,
    *,
    clustered: bool,
    alpha: float,
    n_resamples: int,
    seed: int | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Percentile interval and shift-method p-value of delta_ab, per group.

    Searches are resampled (``clustered=False``), or units with all their
    searches: each unit brings the sum of its outcomes and its number of
    searches, and a resample's delta_ab is their ratio over 2.
    """
    import numpy as np

    from ireval_df.stats.resampling import bootstrap_means, bootstrap_pvalues

    rng = np.random.default_rng(seed)
    p, low, high = np.full(n_g, np.nan), np.full(n_g, np.nan), np.full(n_g, np.nan)
    if clustered:
        per_unit = (
            rows.group_by("__ireval_g", "__ireval_unit")
            .agg(
                pl.col("__ireval_o").sum().cast(pl.Float64).alias("__ireval_sum"),
                pl.len().cast(pl.Float64).alias("__ireval_n"),
            )
            .sort("__ireval_g", "__ireval_unit")
        )
        g = per_unit.get_column("__ireval_g").to_numpy()
        matrix = per_unit.select("__ireval_sum", "__ireval_n").to_numpy()
    else:
        ordered = rows.sort("__ireval_g", "__ireval_unit")
        g = ordered.get_column("__ireval_g").to_numpy()
        o = ordered.get_column("__ireval_o").to_numpy().astype(np.float64)
        matrix = np.column_stack([o, np.ones_like(o)])
    bounds = np.searchsorted(g, np.arange(n_g + 1))
    work = n_resamples * len(matrix)
    with Progress(n_resamples * n_g, "interleaving bootstrap", work=work) as bar:
        for i in range(n_g):
            part = matrix[bounds[i] : bounds[i + 1]]
            if not len(part):
                bar.update(n_resamples)
                continue
            observed = part[:, 0].sum() / (2.0 * part[:, 1].sum())
            means = bootstrap_means(part, n_resamples, rng, bar)
            deltas = (means[:, 0] / (2.0 * means[:, 1]))[:, None]
            p[i] = bootstrap_pvalues(deltas, np.array([observed]), np.array([1.0]))[0]
            low[i], high[i] = np.quantile(
                deltas[:, 0], [alpha / 2.0, 1.0 - alpha / 2.0]
            )
    return p, low, high
