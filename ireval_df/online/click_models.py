"""Click models fitted on a flat click log, as array programs over integer keys.

A click log here is one row per result shown: ``search_id``, ``query_id``,
``position`` (1 = top), ``doc_id`` and ``clicked``. :func:`fit_click_model`
turns the ids into dense integer codes once, lays the log out as a
positions x searches grid, and then fits one of six models:

========  =======================================================  ===========
model     assumption                                               estimation
========  =======================================================  ===========
``PBM``   click = examined (by position) and attracted (by pair)   EM
``CM``    scan down, click the first attractive result, stop       closed form
``UBM``   examination by position and the last click above it      EM
``DCM``   cascade; after a click, go on with a per-position chance  closed form
``SDBN``  DBN that always goes on (gamma = 1): examined to last     closed form
          click, satisfied by the last click or not at all
``DBN``   cascade with attractiveness, satisfaction after a click   EM
          and a chance gamma of going on past each result
========  =======================================================  ===========

Each EM iteration is a few gathers (``alpha[pair]``) and ``numpy.bincount``
sums over pre-computed integer keys: PBM and UBM run over the distinct
(pair, position) cells of the skipped results, not over rows; DBN runs a
forward-backward pass over the grid, one position at a time for all
searches at once. The defaults reproduce PyClick's conventions (Chuklin,
Markov & de Rijke, *Click Models for Web Search*, 2015): every probability
starts at 0.5 and is estimated as ``(successes + 1) / (trials + 2)``, and
EM runs 50 iterations. ``docs/click_models.md`` has the models, the
formulas, where this differs from PyClick and why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from ireval_df._utils.frames import to_polars
from ireval_df._utils.progress import Progress
from ireval_df._utils.provenance import output
from ireval_df.errors import (
    DataError,
    IdentificationWarning,
    OptionError,
    warn,
)
from ireval_df.online.flat import check_flat, click_frame
from ireval_df.online.log import SearchLog

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]
    Ints = npt.NDArray[np.int64]
    Bools = npt.NDArray[np.bool_]

__all__ = ["MODELS", "ClickModel", "fit_click_model"]

#: The click models :func:`fit_click_model` fits, by name.
MODELS = ("PBM", "CM", "UBM", "DCM", "SDBN", "DBN")

#: Other spellings of a model name (looked up case-insensitively).
_ALIASES = {"CASCADE": "CM"}

_PAIR = ["query_id", "doc_id"]
#: The positions x searches grid may be at most this many times the rows
#: (or _GRID_FLOOR cells): searches of very unequal length waste memory.
_GRID_FACTOR = 4
_GRID_FLOOR = 10_000_000


# --- the log as integer arrays ------------------------------------------------


@dataclass(frozen=True)
class _Log:
    """A validated click log as integer arrays.

    Row ``i`` of the input is cell ``cell[i] = (position - 1) * n_searches +
    search`` of a ``depth x n_searches`` grid (positions down, searches
    across, so that one position of every search is contiguous), and shows
    pair ``pair[i]``, row ``pair[i]`` of ``pairs``.
    """

    frame: pl.DataFrame
    n_searches: int
    depth: int
    cell: Ints
    pair: Ints
    clicked: Bools | None
    pairs: pl.DataFrame

    @property
    def n_rows(self) -> int:
        return len(self.cell)

    @cached_property
    def search(self) -> Ints:
        """The search code of each row."""
        return self.cell % self.n_searches

    @cached_property
    def position(self) -> Ints:
        """The 1-based position of each row."""
        return self.cell // self.n_searches + 1

    def grid(self, values: Any, *, fill: Any, dtype: Any = None) -> Any:
        """Lay ``values`` out on the ``depth x n_searches`` grid, ``fill`` elsewhere."""
        out = np.full(self.depth * self.n_searches, fill, dtype=dtype)
        out[self.cell] = values
        return out.reshape(self.depth, self.n_searches)

    @cached_property
    def valid(self) -> Bools:
        """Which cells of the grid hold a result."""
        valid: Bools = self.grid(values=True, fill=False, dtype=bool)
        return valid

    @cached_property
    def clicks(self) -> Bools:
        """The clicks on the grid (False where no result is shown)."""
        clicks: Bools = self.grid(self.clicked, fill=False, dtype=bool)
        return clicks

    @cached_property
    def first_last(self) -> tuple[Ints, Ints]:
        """Per search, the positions of the first and the last click (0: none)."""
        clicks = self.clicks
        has = clicks.any(axis=0)
        first = np.where(has, clicks.argmax(axis=0) + 1, 0)
        last = np.where(has, self.depth - clicks[::-1].argmax(axis=0), 0)
        return first.astype(np.int64), last.astype(np.int64)

    @cached_property
    def previous_click(self) -> Ints:
        """Per row, the position of the last click above it (0: none)."""
        marks = np.where(self.clicks, np.arange(1, self.depth + 1)[:, None], 0)
        above = np.zeros_like(marks)
        above[1:] = np.maximum.accumulate(marks, axis=0)[:-1]
        previous: Ints = above.ravel()[self.cell].astype(np.int64)
        return previous


def _densify(values: Ints) -> tuple[Ints, int]:
    """Dense codes 0..n-1 for non-negative integer keys, and n."""
    if len(values) == 0:
        return values, 0
    top = int(values.max()) + 1
    if top <= _GRID_FACTOR * len(values) + 1024:
        present = np.zeros(top, dtype=bool)
        present[values] = True
        remap = np.cumsum(present) - 1
        return remap[values].astype(np.int64), int(remap[-1]) + 1
    unique, codes = np.unique(values, return_inverse=True)
    return codes.astype(np.int64).ravel(), len(unique)


def _codes(series: pl.Series) -> tuple[Ints, int]:
    """Dense integer codes of an id column (equal ids, equal codes), and how many."""
    if series.dtype.is_integer():
        values = series.cast(pl.Int64).to_numpy()
        return _densify(values - values.min())
    strings = series.cast(pl.String)
    # a fresh Categories each call: codes dense in order of first appearance,
    # nothing added to the global string cache
    physical = strings.cast(pl.Categorical(pl.Categories.random())).to_physical()
    return _densify(physical.cast(pl.Int64).to_numpy())


def _prepare(data: Any, what: str, *, clicks: bool, ordered: bool = False) -> _Log:
    """Validate a flat click log and code it as integer arrays.

    ``ordered``: number the pairs in (query_id, doc_id) order, so that every
    frame indexed by pair comes out sorted without another sort.
    """
    frame = to_polars(data)
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    check_flat(frame, what, clicks=clicks)
    if frame.height == 0:
        msg = f"{what} has no rows; a click model needs at least one search."
        raise DataError(msg)
    search, n_searches = _codes(frame["search_id"])
    query, _ = _codes(frame["query_id"])
    doc, n_docs = _codes(frame["doc_id"])
    position = frame["position"].cast(pl.Int64).to_numpy()
    depth = int(position.max())
    if depth * n_searches > max(_GRID_FACTOR * frame.height, _GRID_FLOOR):
        median = int(np.median(np.bincount(search)))
        msg = (
            f"{what} has searches of very unequal length: the longest shows "
            f"{depth} results, the median {median}, and a click model lays "
            f"{n_searches:,} searches x {depth} positions out in memory.\n  "
            f"Hint: keep the top results only, e.g. "
            f"frame.filter(pl.col('position') <= {max(median, 10)})."
        )
        raise DataError(msg)
    cell = (position - 1) * n_searches + search
    _check_layout(frame, what, cell, depth, n_searches)
    _check_queries(frame, what, cell, query, depth, n_searches)
    pair, n_pairs = _densify(query * n_docs + doc)
    where = np.empty(n_pairs, dtype=np.int64)
    where[pair] = np.arange(len(pair))  # any row showing the pair
    pairs = frame.select(pl.col(_PAIR).gather(where).cast(pl.String))
    if ordered:
        order = pairs.select(pl.arg_sort_by(_PAIR)).to_series().to_numpy()
        renumber = np.empty(n_pairs, dtype=np.int64)
        renumber[order] = np.arange(n_pairs)
        pair = renumber[pair]
        pairs = pairs[order]
    clicked = frame["clicked"].cast(pl.Boolean).to_numpy() if clicks else None
    return _Log(frame, n_searches, depth, cell, pair, clicked, pairs)


def _check_layout(
    frame: pl.DataFrame, what: str, cell: Ints, depth: int, n_searches: int
) -> None:
    """Each search shows positions 1..n, each once."""
    counts = np.bincount(cell, minlength=depth * n_searches)
    if counts.max() > 1:
        repeated = np.flatnonzero(counts > 1)
        first = int(np.flatnonzero(cell == repeated[0])[0])
        row = frame.row(first, named=True)
        msg = (
            f"{what} shows {len(repeated)} (search_id, position) slot"
            f"{'s' if len(repeated) > 1 else ''} more than once, e.g. "
            f"search_id={row['search_id']!r} at position {row['position']} "
            f"({counts[repeated[0]]} rows); each slot holds one result.\n  "
            "Hint: keep one row per slot, e.g. "
            "frame.unique(['search_id', 'position'], keep='first', "
            "maintain_order=True)."
        )
        raise DataError(msg)
    shown = (counts > 0).reshape(depth, n_searches)
    deepest = depth - shown[::-1].argmax(axis=0)
    gaps = np.flatnonzero(shown.sum(axis=0) != deepest)
    if len(gaps):
        first = int(np.flatnonzero(cell % n_searches == gaps[0])[0])
        search_id = frame["search_id"][first]
        positions = sorted(
            frame.filter(pl.col("search_id") == search_id)["position"].to_list()
        )
        msg = (
            f"{what} has {len(gaps)} search{'es' if len(gaps) > 1 else ''} whose "
            "positions do not run 1, 2, ..., n without gaps, e.g. "
            f"search_id={search_id!r} with positions {positions[:12]}"
            f"{' ...' if len(positions) > 12 else ''}; a click model reads "
            "every result above a click.\n  Hint: if the rows are in display "
            "order, renumber them: pl.col('position').rank('ordinal')"
            ".over('search_id')."
        )
        raise DataError(msg)


def _check_queries(
    frame: pl.DataFrame,
    what: str,
    cell: Ints,
    query: Ints,
    depth: int,
    n_searches: int,
) -> None:
    """All rows of a search name one query."""
    flat = np.full(depth * n_searches, -1, dtype=np.int64)
    flat[cell] = query
    grid = flat.reshape(depth, n_searches)
    bad = ((grid != grid[0]) & (grid >= 0)).any(axis=0)
    if bad.any():
        searches = np.flatnonzero(bad)
        first = int(np.flatnonzero(cell % n_searches == searches[0])[0])
        search_id = frame["search_id"][first]
        queries = (
            frame.filter(pl.col("search_id") == search_id)["query_id"]
            .unique(maintain_order=True)
            .to_list()
        )
        msg = (
            f"{what} has {len(searches)} search{'es' if len(searches) > 1 else ''} "
            f"whose rows disagree on query_id, e.g. search_id={search_id!r} with "
            f"query_id {', '.join(repr(q) for q in queries[:5])}; one search "
            "answers one query.\n  Hint: give each (search, query) its own "
            "search_id, e.g. pl.concat_str('search_id', 'query_id')."
        )
        raise DataError(msg)


# --- options --------------------------------------------------------------------


@dataclass(frozen=True)
class _Options:
    iterations: int
    prior: tuple[float, float]
    init: float
    clip: float

    @property
    def default(self) -> float:
        """The value of a parameter the log says nothing about: the prior mean."""
        a, b = self.prior
        value = a / (a + b) if a + b > 0 else self.init
        return min(max(value, self.clip), 1 - self.clip)

    def rate(self, successes: Any, trials: Any) -> Any:
        """``(successes + a) / (trials + a + b)``, clipped to [clip, 1 - clip].

        Where there are no trials and no pseudo-counts, the prior mean (or
        ``init``).
        """
        a, b = self.prior
        total = np.asarray(trials, dtype=np.float64) + a + b
        safe = np.where(total > 0, total, 1.0)
        value = np.where(total > 0, (successes + a) / safe, self.default)
        return np.clip(value, self.clip, 1 - self.clip)


def _options(
    iterations: int, prior: Sequence[float], init: float, clip: float
) -> _Options:
    if (
        isinstance(iterations, bool)
        or not isinstance(iterations, int)
        or iterations < 0
    ):
        msg = f"iterations={iterations!r} is not a whole number >= 0 (default 50)."
        raise OptionError(msg)
    values = tuple(prior)
    if len(values) != 2 or not all(
        isinstance(v, int | float) and math.isfinite(v) and v >= 0 for v in values
    ):
        msg = (
            f"prior={prior!r} is not two pseudo-counts >= 0 (a, b): each "
            "probability is (successes + a) / (trials + a + b); PyClick's is "
            "(1, 1)."
        )
        raise OptionError(msg)
    if not (isinstance(clip, int | float) and 0 < clip < 0.5):
        msg = f"clip={clip!r} is not a number in (0, 0.5) (default 1e-6)."
        raise OptionError(msg)
    if not (isinstance(init, int | float) and clip <= init <= 1 - clip):
        msg = f"init={init!r} is not a probability in [clip, 1 - clip] (default 0.5)."
        raise OptionError(msg)
    return _Options(iterations, (float(values[0]), float(values[1])), init, clip)


def _model_name(model: str) -> str:
    if isinstance(model, str):
        if model in MODELS:
            return model
        upper = model.upper()
        if upper in MODELS:
            return upper
        if upper in _ALIASES:
            return _ALIASES[upper]
    msg = (
        f"model={model!r} is not a click model; choose one of "
        f"{', '.join(repr(m) for m in MODELS)}."
    )
    raise OptionError(msg)


# --- fitting --------------------------------------------------------------------

#: What a fit returns: its parameter frames by name.
_Params = dict[str, pl.DataFrame]


def _pair_frame(log: _Log, values: Floats) -> pl.DataFrame:
    return log.pairs.with_columns(value=pl.Series(values, dtype=pl.Float64))


def _counts(codes: Ints, n: int, weights: Any = None) -> Floats:
    counts: Floats = np.bincount(codes, weights, minlength=n).astype(np.float64)
    return counts


#: Elementary operations per cell and EM iteration (a few gathers and bincounts),
#: to size the work for the progress bar.
_EM_COST = 10


def _position_em(
    log: _Log, key: Ints, n_keys: int, opts: _Options
) -> tuple[Floats, Floats, Floats, bool]:
    """EM of click = examined(key) x attracted(pair), PBM's and UBM's shape.

    Returns attractiveness per pair, examination per key, impressions per
    key, and whether any pair was seen under two keys (else examination is
    not identified). The skipped rows are summed into distinct (pair, key)
    cells once; each iteration works on those cells.
    """
    assert log.clicked is not None
    clicked = log.clicked
    n_pairs = len(log.pairs)
    shown_pair = _counts(log.pair, n_pairs)
    shown_key = _counts(key, n_keys)
    clicks_pair = _counts(log.pair[clicked], n_pairs)
    clicks_key = _counts(key[clicked], n_keys)
    cells, n_cells = _densify(log.pair * n_keys + key)
    where = np.empty(n_cells, dtype=np.int64)
    where[cells] = log.pair * n_keys + key
    cell_pair, cell_key = where // n_keys, where % n_keys
    skipped = _counts(cells, n_cells, ~clicked)
    identified = bool((np.bincount(cell_pair, minlength=n_pairs) > 1).any())
    keep = skipped > 0
    cell_pair, cell_key, skipped = cell_pair[keep], cell_key[keep], skipped[keep]
    alpha = np.full(n_pairs, opts.init)
    theta = np.full(n_keys, opts.init)
    work = opts.iterations * (len(cell_pair) + n_pairs) * _EM_COST
    with Progress(opts.iterations, "fitting the click model (EM)", work=work) as bar:
        for _ in range(opts.iterations):
            a, t = alpha[cell_pair], theta[cell_key]
            weight = skipped / (1.0 - a * t)
            alpha_new = opts.rate(
                clicks_pair + _counts(cell_pair, n_pairs, weight * (1.0 - t) * a),
                shown_pair,
            )
            theta = opts.rate(
                clicks_key + _counts(cell_key, n_keys, weight * (1.0 - a) * t),
                shown_key,
            )
            alpha = alpha_new
            bar.update()
    return alpha, theta, shown_key, identified


def _fit_pbm(log: _Log, opts: _Options) -> tuple[_Params, bool]:
    key = log.position - 1
    alpha, theta, shown, identified = _position_em(log, key, log.depth, opts)
    seen = shown > 0
    examination = pl.DataFrame(
        {
            "position": np.arange(1, log.depth + 1)[seen],
            "value": theta[seen],
        },
        schema={"position": pl.Int64, "value": pl.Float64},
    )
    return {
        "attractiveness": _pair_frame(log, alpha),
        "examination": examination,
    }, identified


def _fit_ubm(log: _Log, opts: _Options) -> tuple[_Params, bool]:
    depth = log.depth
    key = (log.position - 1) * depth + log.previous_click
    alpha, gamma, shown, identified = _position_em(log, key, depth * depth, opts)
    seen = np.flatnonzero(shown > 0)
    examination = pl.DataFrame(
        {
            "position": seen // depth + 1,
            "prev_click_position": seen % depth,
            "value": gamma[seen],
        },
        schema={
            "position": pl.Int64,
            "prev_click_position": pl.Int64,
            "value": pl.Float64,
        },
    )
    return {
        "attractiveness": _pair_frame(log, alpha),
        "examination": examination,
    }, identified


def _row_last_click(log: _Log) -> Ints:
    return log.first_last[1][log.search]


def _examined_to_last_click(log: _Log, opts: _Options) -> Floats:
    """Attractiveness = clicks / impressions down to the last click (all, if none)."""
    assert log.clicked is not None
    last = _row_last_click(log)
    counted = (last == 0) | (log.position <= last)
    n = len(log.pairs)
    alpha: Floats = opts.rate(
        _counts(log.pair[counted & log.clicked], n), _counts(log.pair[counted], n)
    )
    return alpha


def _fit_cm(log: _Log, opts: _Options) -> tuple[_Params, bool]:
    assert log.clicked is not None
    first = log.first_last[0][log.search]
    counted = (first == 0) | (log.position <= first)
    n = len(log.pairs)
    alpha = opts.rate(
        _counts(log.pair[counted & log.clicked], n), _counts(log.pair[counted], n)
    )
    return {"attractiveness": _pair_frame(log, alpha)}, True


def _fit_dcm(log: _Log, opts: _Options) -> tuple[_Params, bool]:
    assert log.clicked is not None
    last = _row_last_click(log)
    clicked = log.clicked
    key = log.position[clicked] - 1
    went_on = log.position[clicked] != last[clicked]
    lam = opts.rate(
        _counts(key[went_on], log.depth), _counts(key, log.depth)
    )  # per position, over the clicks there
    continuation = pl.DataFrame(
        {"position": np.arange(1, log.depth + 1), "value": lam},
        schema={"position": pl.Int64, "value": pl.Float64},
    )
    return {
        "attractiveness": _pair_frame(log, _examined_to_last_click(log, opts)),
        "continuation": continuation,
    }, True


def _fit_sdbn(log: _Log, opts: _Options) -> tuple[_Params, bool]:
    assert log.clicked is not None
    last = _row_last_click(log)
    clicked = log.clicked
    n = len(log.pairs)
    was_last = clicked & (log.position == last)
    sigma = opts.rate(_counts(log.pair[was_last], n), _counts(log.pair[clicked], n))
    return {
        "attractiveness": _pair_frame(log, _examined_to_last_click(log, opts)),
        "satisfaction": _pair_frame(log, sigma),
    }, True


def _fit_dbn(log: _Log, opts: _Options) -> tuple[_Params, bool]:
    """EM with exact posteriors: a forward-backward pass over the grid.

    With ``l`` the last click of a search (0 if none), every result down to
    ``l`` was examined and every click above ``l`` left the user
    unsatisfied. Below ``l`` lies a tail without clicks, entered with
    probability ``eps = (1 - sigma_l) * gamma`` (1 when nothing was
    clicked). Backward, ``N_r`` = P(no click at r.. | examined r) =
    ``(1 - alpha_r) * (1 - gamma + gamma * N_{r+1})``; forward, ``f_r`` =
    P(examined r, no click in the tail above r) and ``g_r`` = P(no click
    in the tail above r). Given the log, P(examined r) = ``f_r N_r / Z``,
    P(attracted r) = ``alpha_r (g_r - f_r) / Z`` and P(satisfied at l) =
    ``sigma_l / Z``, with ``Z = 1 - eps + eps N_{l+1}``.
    """
    assert log.clicked is not None
    depth, n_searches, n_pairs = log.depth, log.n_searches, len(log.pairs)
    valid, clicks = log.valid, log.clicks
    pairs = log.grid(log.pair, fill=0, dtype=np.int64)
    has = clicks.any(axis=0)
    last = log.first_last[1]
    rows = np.arange(depth)[:, None]  # 0-based position
    across = np.arange(n_searches)
    tail = valid & (rows >= last)  # below the last click
    has_next = np.zeros_like(valid)
    has_next[:-1] = valid[1:]
    tail_cells = np.flatnonzero(tail.ravel())
    tail_pairs = pairs.ravel()[tail_cells]
    last_pair = pairs[np.maximum(last - 1, 0), across]
    at_last_next = has & has_next[np.maximum(last - 1, 0), across]
    # the examinations the clicks prove: every result down to the last click
    sure = valid & (rows < last)
    sure_next = float((sure & (rows >= 1)).sum())  # E_r = 1 for r >= 2
    sure_on = float((sure & (rows < last - 1)).sum())  # E_r = 1, S_r = 0, r < l
    shown = _counts(log.pair, n_pairs)
    clicked_pairs = log.pair[log.clicked]
    clicks_pair = _counts(clicked_pairs, n_pairs)
    alpha = np.full(n_pairs, opts.init)
    sigma = np.full(n_pairs, opts.init)
    gamma = opts.init
    no_click = np.empty((depth + 1, n_searches))
    exam = np.empty((depth, n_searches))
    attracted = np.empty((depth, n_searches))
    work = opts.iterations * depth * n_searches * _EM_COST
    with Progress(opts.iterations, "fitting DBN (EM)", work=work) as bar:
        for _ in range(opts.iterations):
            a = np.where(valid, alpha[pairs], 0.0)  # padding: nothing to click
            no_click[depth] = 1.0
            for r in range(depth - 1, -1, -1):
                no_click[r] = (1.0 - a[r]) * (1.0 - gamma + gamma * no_click[r + 1])
            sig = sigma[last_pair]
            eps = np.where(has, (1.0 - sig) * gamma, 1.0)
            z = 1.0 - eps + eps * no_click[last, across]
            f = np.zeros(n_searches)
            g = np.ones(n_searches)
            for r in range(depth):
                start = last == r
                f = np.where(start, eps, f)
                g = np.where(start, 1.0, g)
                exam[r] = f * no_click[r]
                attracted[r] = a[r] * np.maximum(g - f, 0.0)
                g = g - f * a[r]
                f = f * (1.0 - a[r]) * gamma
            exam /= z
            attracted /= z
            satisfied = np.where(has, sig / z, 0.0)
            tail_exam = np.where(tail, exam, 0.0)
            went_on = (
                sure_on
                + float((1.0 - satisfied)[at_last_next].sum())
                + float(tail_exam[has_next].sum())
            )
            examined_next = sure_next + float(tail_exam[1:].sum())
            alpha_new = opts.rate(
                clicks_pair
                + _counts(tail_pairs, n_pairs, attracted.ravel()[tail_cells]),
                shown,
            )
            sigma = opts.rate(
                _counts(last_pair[has], n_pairs, satisfied[has]), clicks_pair
            )
            gamma = float(opts.rate(examined_next, went_on))
            alpha = alpha_new
            bar.update()
    return {
        "attractiveness": _pair_frame(log, alpha),
        "satisfaction": _pair_frame(log, sigma),
        "continuation": pl.DataFrame({"value": [gamma]}, schema={"value": pl.Float64}),
    }, True


_FITS: dict[str, Callable[[_Log, _Options], tuple[_Params, bool]]] = {
    "PBM": _fit_pbm,
    "CM": _fit_cm,
    "UBM": _fit_ubm,
    "DCM": _fit_dcm,
    "SDBN": _fit_sdbn,
    "DBN": _fit_dbn,
}
#: The models fitted by EM (the others in closed form: ``iterations`` unused).
_EM = frozenset({"PBM", "UBM", "DBN"})


# --- probabilities ----------------------------------------------------------------


@dataclass(frozen=True)
class _Lookup:
    """A fitted model's parameters laid on a log's grid (unseen: the prior mean)."""

    attractiveness: Floats  # depth x searches
    unseen_pairs: int
    unseen_positions: int
    extra: dict[str, Any]


def _cascade(
    attract: Floats,
    stay_clicked: Any,
    stay_skipped: Any,
    clicks: Bools | None,
) -> Floats:
    """Click probabilities of the cascade family (CM, DCM, SDBN, DBN).

    ``e`` is the probability of examining the current position: times
    ``stay_clicked`` after a click, ``stay_skipped`` after a skip. Without
    ``clicks`` the full P(C_r = 1); with them P(C_r = 1 | clicks above r).
    """
    depth, n = attract.shape
    out = np.empty((depth, n))
    e = np.ones(n)
    kappa = np.broadcast_to(stay_clicked, (depth, n))
    rho = np.broadcast_to(stay_skipped, (depth, n))
    for r in range(depth):
        a = attract[r]
        p = a * e
        out[r] = p
        if clicks is None:
            e = e * (a * kappa[r] + (1.0 - a) * rho[r])
        else:
            e = np.where(clicks[r], kappa[r], rho[r] * (e - p) / (1.0 - p))
    return out


def _ubm_full(attract: Floats, gamma: Floats) -> Floats:
    """P(C_r = 1) under UBM: a sum over where the last click above r was.

    ``gamma[r - 1, k]``: examination at position r after a last click at k
    (0: none). ``reach[k]``: P(last click at k, or the start for k = 0, and
    no click since).
    """
    depth, n = attract.shape
    out = np.empty((depth, n))
    reach = np.zeros((depth, n))
    reach[0] = 1.0
    for r in range(depth):
        q = attract[r][None, :] * gamma[r, : r + 1][:, None]
        p = (reach[: r + 1] * q).sum(axis=0)
        out[r] = p
        reach[: r + 1] *= 1.0 - q
        if r + 1 < depth:
            reach[r + 1] = p
    return out


# --- the fitted model -------------------------------------------------------------


@dataclass(frozen=True)
class ClickModel:
    """A click model fitted by :func:`fit_click_model`: parameter frames and methods.

    Attributes
    ----------
    model : str
        One of :data:`MODELS`.
    attractiveness : polars.DataFrame
        ``query_id, doc_id, value``: P(click | examined), per pair.
    examination : polars.DataFrame or None
        PBM: ``position, value``; UBM: ``position, prev_click_position,
        value`` (``prev_click_position`` 0 when nothing above was clicked).
        None for the other models.
    satisfaction : polars.DataFrame or None
        SDBN, DBN: ``query_id, doc_id, value``, P(satisfied | clicked).
    continuation : polars.DataFrame or None
        DCM: ``position, value``, P(going on after a click at the position);
        DBN: one row, ``value``, the chance gamma of going on past any
        unsatisfying result.
    impressions : polars.DataFrame
        ``query_id, doc_id, n_impressions, n_clicks`` of the fitted log.
    iterations, prior, init, clip
        The settings of the fit.
    """

    model: str
    attractiveness: pl.DataFrame = field(repr=False)
    examination: pl.DataFrame | None = field(repr=False)
    satisfaction: pl.DataFrame | None = field(repr=False)
    continuation: pl.DataFrame | None = field(repr=False)
    impressions: pl.DataFrame = field(repr=False)
    iterations: int
    prior: tuple[float, float]
    init: float
    clip: float

    @property
    def _options(self) -> _Options:
        return _Options(self.iterations, self.prior, self.init, self.clip)

    def __str__(self) -> str:
        return (
            f"ClickModel({self.model!r}: {self.attractiveness.height:,} "
            f"(query_id, doc_id) pairs, {self.impressions['n_impressions'].sum():,}"
            f" impressions)"
        )

    # -- parameters on a log's grid --

    def _lookup(self, log: _Log) -> _Lookup:
        default = self._options.default
        joined = log.pairs.join(
            self.attractiveness, on=_PAIR, how="left", maintain_order="left"
        )["value"]
        known = joined.is_not_null().to_numpy()
        alpha = joined.fill_null(default).to_numpy()
        unseen_pairs = int(np.count_nonzero(~known[log.pair]))
        extra: dict[str, Any] = {}
        unseen_positions = 0
        depth = log.depth
        if self.satisfaction is not None:
            sat = log.pairs.join(
                self.satisfaction, on=_PAIR, how="left", maintain_order="left"
            )["value"]
            extra["satisfaction"] = log.grid(
                sat.fill_null(default).to_numpy()[log.pair], fill=0.0
            )
        if self.examination is not None or self.model == "DCM":
            frame = self.examination if self.model != "DCM" else self.continuation
            assert frame is not None
            fitted_depth = int(frame["position"].to_numpy().max())
            unseen_positions = int(np.count_nonzero(log.position > fitted_depth))
            if self.model == "UBM":
                table = np.full((depth, depth), default)
                known = np.zeros((depth, depth), dtype=bool)
                part = frame.filter(pl.col("position") <= depth)
                cells = (
                    part["position"].to_numpy() - 1,
                    part["prev_click_position"].to_numpy(),
                )
                table[cells] = part["value"].to_numpy()
                known[cells] = True
                extra["examination"] = table
                extra["known"] = known
            else:
                by_position = np.full(depth, default)
                part = frame.filter(pl.col("position") <= depth)
                by_position[part["position"].to_numpy() - 1] = part["value"].to_numpy()
                extra["by_position"] = by_position
        if self.model == "DBN":
            assert self.continuation is not None
            extra["gamma"] = float(self.continuation["value"][0])
        return _Lookup(
            log.grid(alpha[log.pair], fill=0.0), unseen_pairs, unseen_positions, extra
        )

    def _grid_probabilities(self, log: _Log, *, conditional: bool) -> Floats:
        found = self._lookup(log)
        if found.unseen_pairs or found.unseen_positions:
            parts = []
            if found.unseen_pairs:
                parts.append(
                    f"{found.unseen_pairs:,} have a (query_id, doc_id) pair the "
                    "model was not fitted on"
                )
            if found.unseen_positions:
                parts.append(
                    f"{found.unseen_positions:,} a position below the deepest "
                    "the model was fitted on"
                )
            warn(
                f"of {log.n_rows:,} rows, {' and '.join(parts)}: their parameters "
                f"are the prior mean {self._options.default:g}. Predict on "
                "searches like those the model was fitted on."
            )
        a = found.attractiveness
        clicks = log.clicks if conditional else None
        extra = found.extra
        if self.model == "PBM":
            pbm: Floats = a * extra["by_position"][:, None]
            return pbm
        if self.model == "UBM":
            table = extra["examination"]
            if not conditional:
                return _ubm_full(a, table)
            previous = log.grid(log.previous_click, fill=0, dtype=np.int64)
            rows = np.arange(log.depth)[:, None]
            unseen = int((log.valid & ~extra["known"][rows, previous]).sum())
            if unseen > found.unseen_positions:  # those rows are counted above
                warn(
                    f"of {log.n_rows:,} rows, {unseen:,} have a (position, "
                    "prev_click_position) the model was not fitted on: their "
                    f"examination is the prior mean {self._options.default:g}."
                )
            out: Floats = a * table[rows, previous]
            return out
        if self.model == "CM":
            return _cascade(a, 0.0, 1.0, clicks)
        if self.model == "DCM":
            return _cascade(a, extra["by_position"][:, None], 1.0, clicks)
        sat = extra["satisfaction"]
        if self.model == "SDBN":
            return _cascade(a, 1.0 - sat, 1.0, clicks)
        gamma = extra["gamma"]
        return _cascade(a, gamma * (1.0 - sat), gamma, clicks)

    def _row_probabilities(self, log: _Log, *, conditional: bool) -> Floats:
        grid = self._grid_probabilities(log, conditional=conditional)
        probabilities: Floats = grid.ravel()[log.cell]
        return probabilities

    # -- public methods --

    def predict(
        self, frame: Any, *, kind: Literal["full", "conditional"] = "full"
    ) -> Any:
        """Click probability of every row of a log, as a new column ``click_prob``.

        Parameters
        ----------
        frame : polars.DataFrame, polars.LazyFrame, pandas.DataFrame or pyarrow.Table
            ``search_id, query_id, position, doc_id`` (and ``clicked`` for
            ``kind="conditional"``), as for :func:`fit_click_model`; other
            columns are kept.
        kind : {"full", "conditional"}, default "full"
            ``"full"``: P(C_r = 1), what the model expects before seeing any
            click (PyClick's ``get_full_click_probs``). ``"conditional"``:
            P(C_r = 1 | the clicks above r in that search). PyClick's
            ``get_conditional_click_probs`` gives the probability of what
            happened instead: this value for a click, one minus it for a skip.

        Returns
        -------
        Frame of the same kind as ``frame``: its rows in their order, plus
        ``click_prob`` (Float64). Pairs and positions the model was not
        fitted on take the prior mean, counted in a warning.

        Examples
        --------
        >>> from ireval_df.online import fit_click_model
        >>> log = pl.DataFrame({"search_id": [1, 1, 2, 2], "query_id": "q",
        ...                     "position": [1, 2, 1, 2], "doc_id": ["a", "b", "b", "a"],
        ...                     "clicked": [True, False, False, True]})
        >>> cm = fit_click_model(log, "CM", min_impressions=0)
        >>> cm.predict(log)["click_prob"].round(4).to_list()
        [0.75, 0.0833, 0.3333, 0.5]
        """
        if kind not in ("full", "conditional"):
            msg = f"kind={kind!r} is not one of 'full', 'conditional'."
            raise OptionError(msg)
        log = _prepare(frame, "frame", clicks=kind == "conditional")
        probabilities = self._row_probabilities(log, conditional=kind == "conditional")
        result = log.frame.with_columns(
            click_prob=pl.Series(probabilities, dtype=pl.Float64)
        )
        return output(result, frame, {"model": self.model, "kind": kind})

    def log_likelihood(self, frame: Any) -> float:
        """Mean log-likelihood of a log's clicks per result, as PyClick computes it.

        ``(1/|S|) sum_s (1/n_s) sum_r ln P(C_r = c_r | C_1..C_{r-1})`` over
        the searches ``s`` of ``frame`` (``n_s`` results each); higher is
        better, 0 is perfect. Probabilities below ``clip`` count as ``clip``.

        Examples
        --------
        >>> from ireval_df.online import fit_click_model
        >>> log = pl.DataFrame({"search_id": [1, 1, 2, 2], "query_id": "q",
        ...                     "position": [1, 2, 1, 2], "doc_id": ["a", "b", "a", "b"],
        ...                     "clicked": [True, False, False, True]})
        >>> round(fit_click_model(log, "PBM", min_impressions=0).log_likelihood(log), 4)
        -0.7392
        """
        log = _prepare(frame, "frame", clicks=True)
        assert log.clicked is not None
        p = self._row_probabilities(log, conditional=True)
        observed = np.maximum(np.where(log.clicked, p, 1.0 - p), self.clip)
        per_search = np.bincount(
            log.search, np.log(observed), minlength=log.n_searches
        ) / np.bincount(log.search, minlength=log.n_searches)
        return float(per_search.mean())

    def perplexity(self, frame: Any) -> pl.DataFrame:
        """Perplexity of the full click probabilities, per position and overall.

        At position ``r``, ``2 ** (-(1/N_r) sum_s log2 P(C_r = c_r))`` over the
        ``N_r`` searches of ``frame`` that show a result there (Dupret &
        Piwowarski 2008; PyClick's ``Perplexity``); overall, the mean over the
        positions. 1 is perfect, 2 is a coin toss; lower is better. Compute
        it on searches the model was not fitted on.

        Returns
        -------
        polars.DataFrame
            ``position`` (Int64; null on the last row, the overall value),
            ``value`` (Float64), ``n_searches`` (Int64).

        Examples
        --------
        >>> from ireval_df.online import fit_click_model
        >>> log = pl.DataFrame({"search_id": [1, 1, 2, 2], "query_id": "q",
        ...                     "position": [1, 2, 1, 2], "doc_id": ["a", "b", "a", "b"],
        ...                     "clicked": [True, False, False, True]})
        >>> pbm = fit_click_model(log, "PBM", min_impressions=0)
        >>> pbm.perplexity(log).with_columns(pl.col("value").round(4)).rows()
        [(1, 2.0942, 2), (2, 2.0942, 2), (None, 2.0942, 2)]
        """
        log = _prepare(frame, "frame", clicks=True)
        assert log.clicked is not None
        p = self._row_probabilities(log, conditional=False)
        observed = np.maximum(np.where(log.clicked, p, 1.0 - p), self.clip)
        index = log.position - 1
        n = np.bincount(index, minlength=log.depth)
        bits = np.bincount(index, np.log2(observed), minlength=log.depth)
        per_position = 2.0 ** (-bits / n)
        return pl.DataFrame(
            {
                "position": [*range(1, log.depth + 1), None],
                "value": [*per_position.tolist(), float(per_position.mean())],
                "n_searches": [*n.tolist(), log.n_searches],
            },
            schema={"position": pl.Int64, "value": pl.Float64, "n_searches": pl.Int64},
        )

    def relevance(self) -> pl.DataFrame:
        """Return what the model says of each (query, document): ``query_id, doc_id, value``.

        Attractiveness for PBM, CM, UBM and DCM; attractiveness times
        satisfaction, P(satisfied | examined), for SDBN and DBN (PyClick's
        ``predict_relevance``).

        Examples
        --------
        >>> from ireval_df.online import fit_click_model
        >>> log = pl.DataFrame({"search_id": [1, 1, 2, 2], "query_id": "q",
        ...                     "position": [1, 2, 1, 2], "doc_id": ["a", "b", "b", "a"],
        ...                     "clicked": [True, False, False, True]})
        >>> sdbn = fit_click_model(log, "SDBN", min_impressions=0)
        >>> sdbn.relevance().with_columns(pl.col("value").round(4)).rows()
        [('q', 'a', 0.5625), ('q', 'b', 0.1667)]
        """
        if self.satisfaction is None:
            return self.attractiveness
        return (
            self.attractiveness.join(
                self.satisfaction,
                on=_PAIR,
                how="left",
                suffix="_s",
                maintain_order="left",
            )
            .with_columns(value=pl.col("value") * pl.col("value_s"))
            .drop("value_s")
        )

    def to_qrels(
        self,
        *,
        levels: int | Sequence[float] = 2,
        min_impressions: int = 1,
    ) -> pl.DataFrame:
        """Click-derived judgments: :meth:`relevance` cut into grades.

        Parameters
        ----------
        levels : int or sequence of float, default 2
            An int ``n``: grades 0..n-1 from ``n`` equal slices of [0, 1]
            (2: relevant when the value is at least 0.5). A sequence of
            increasing thresholds: the grade is how many of them the value
            reaches (``[0.2, 0.5]``: 0 below 0.2, 1 below 0.5, else 2).
        min_impressions : int, default 1
            Pairs shown fewer times are left out (so ``evaluate`` counts them
            as unjudged).

        Returns
        -------
        polars.DataFrame
            ``query_id, doc_id`` (String), ``relevance`` (Int32): qrels that
            :func:`ireval_df.evaluate` reads.

        Examples
        --------
        >>> from ireval_df.online import fit_click_model
        >>> log = pl.DataFrame({"search_id": [1, 1, 2, 2], "query_id": "q",
        ...                     "position": [1, 2, 1, 2], "doc_id": ["a", "b", "b", "a"],
        ...                     "clicked": [True, False, False, True]})
        >>> fit_click_model(log, "CM", min_impressions=0).to_qrels().rows()
        [('q', 'a', 1), ('q', 'b', 0)]
        """
        if isinstance(levels, bool) or (isinstance(levels, int) and levels < 2):
            msg = f"levels={levels!r} is not an int >= 2 or a list of thresholds."
            raise OptionError(msg)
        if isinstance(levels, int):
            grade = (pl.col("value") * levels).floor().clip(0, levels - 1)
        else:
            try:
                cuts = [float(t) for t in levels]
            except (TypeError, ValueError):
                cuts = []
            if not cuts or any(b <= a for a, b in zip(cuts, cuts[1:], strict=False)):
                msg = (
                    f"levels={levels!r} is not an int >= 2 or a list of "
                    "increasing thresholds."
                )
                raise OptionError(msg)
            grade = pl.sum_horizontal([pl.col("value") >= t for t in cuts])
        if isinstance(min_impressions, bool) or not isinstance(min_impressions, int):
            msg = f"min_impressions={min_impressions!r} is not a whole number."
            raise OptionError(msg)
        kept = self.impressions.filter(pl.col("n_impressions") >= min_impressions)
        return (
            self.relevance()
            .join(kept.select(_PAIR), on=_PAIR, how="semi", maintain_order="left")
            .select(*_PAIR, relevance=grade.cast(pl.Int32))
        )


def fit_click_model(
    frame: Any,
    model: str,
    *,
    iterations: int = 50,
    prior: Sequence[float] = (1.0, 1.0),
    init: float = 0.5,
    clip: float = 1e-6,
    min_impressions: int = 10,
) -> ClickModel:
    """Fit a click model to a click log.

    Parameters
    ----------
    frame : SearchLog, polars.DataFrame, polars.LazyFrame, pandas.DataFrame or pyarrow.Table
        A :class:`~ireval_df.online.log.SearchLog` (turned into a flat
        frame by :func:`~ireval_df.online.flat.click_frame`, first results
        pages only, with a warning counting later pages), or one row
        per result shown: ``search_id``, ``query_id``, ``doc_id``
        (strings or integers), ``position`` (integer, 1 = top) and
        ``clicked`` (boolean, or 0/1). Each search shows positions 1..n once
        each, and all its rows name one query. Row order does not matter.
    model : {"PBM", "CM", "UBM", "DCM", "SDBN", "DBN"}
        The model (case-insensitive; ``"cascade"`` is ``"CM"``). See
        :data:`MODELS` and ``docs/click_models.md``.
    iterations : int, default 50
        EM iterations (PBM, UBM, DBN); the others are closed-form and ignore it.
    prior : (float, float), default (1, 1)
        Pseudo-counts ``(a, b)``: every probability is estimated as
        ``(successes + a) / (trials + a + b)``, expected counts for EM.
        PyClick's ``(numerator + 1) / (denominator + 2)`` is (1, 1); (0, 0)
        is the plain maximum-likelihood estimate.
    init : float, default 0.5
        Starting value of every EM parameter (PyClick's 0.5).
    clip : float, default 1e-6
        Every parameter is kept within [clip, 1 - clip] (PyClick caps EM
        parameters at 1 - 1e-6), and log-likelihood and perplexity read
        probabilities below ``clip`` as ``clip``.
    min_impressions : int, default 10
        Warn (:class:`~ireval_df.errors.IdentificationWarning`, counted) when
        (query_id, doc_id) pairs are shown fewer times than this: the log
        says little about them. 0 turns the warning off; nothing is dropped.

    Returns
    -------
    ClickModel
        Parameter frames (``attractiveness``, ``examination``,
        ``satisfaction``, ``continuation``, each a key plus ``value``) and
        ``predict``, ``log_likelihood``, ``perplexity``, ``relevance``,
        ``to_qrels``.

    Raises
    ------
    SchemaError
        A column is missing or has a dtype that cannot hold it.
    DataError
        Nulls; positions below 1, with gaps or repeated within a search; a
        search whose rows disagree on ``query_id``.
    OptionError
        An unknown model or a bad option value.

    Examples
    --------
    >>> from ireval_df.online import fit_click_model
    >>> log = pl.DataFrame({
    ...     "search_id": [1, 1, 2, 2, 3, 3],
    ...     "query_id": "q",
    ...     "position": [1, 2, 1, 2, 1, 2],
    ...     "doc_id": ["a", "b", "b", "a", "a", "b"],
    ...     "clicked": [True, False, False, True, False, False],
    ... })
    >>> pbm = fit_click_model(log, "PBM", min_impressions=0)
    >>> pbm.examination.with_columns(pl.col("value").round(4)).rows()
    [(1, 0.5445), (2, 0.6123)]
    >>> pbm.attractiveness.with_columns(pl.col("value").round(4)).rows()
    [('q', 'a', 0.704), ('q', 'b', 0.2839)]
    """
    name = _model_name(model)
    opts = _options(iterations, prior, init, clip)
    if isinstance(min_impressions, bool) or not isinstance(min_impressions, int):
        msg = f"min_impressions={min_impressions!r} is not a whole number (default 10)."
        raise OptionError(msg)
    if isinstance(frame, SearchLog):
        frame = click_frame(frame, first_page=True)
    log = _prepare(frame, "click log", clicks=True, ordered=True)
    assert log.clicked is not None
    params, identified = _FITS[name](log, opts)
    n_pairs = len(log.pairs)
    shown = np.bincount(log.pair, minlength=n_pairs)
    impressions = log.pairs.with_columns(
        n_impressions=pl.Series(shown, dtype=pl.Int64),
        n_clicks=pl.Series(
            np.bincount(log.pair[log.clicked], minlength=n_pairs), dtype=pl.Int64
        ),
    )
    _warn_sparse(name, shown, log, min_impressions, opts, identified=identified)
    return ClickModel(
        model=name,
        attractiveness=params["attractiveness"],
        examination=params.get("examination"),
        satisfaction=params.get("satisfaction"),
        continuation=params.get("continuation"),
        impressions=impressions,
        iterations=opts.iterations if name in _EM else 0,
        prior=opts.prior,
        init=opts.init,
        clip=opts.clip,
    )


def _warn_sparse(
    name: str,
    shown: Ints,
    log: _Log,
    min_impressions: int,
    opts: _Options,
    *,
    identified: bool,
) -> None:
    """Count the pairs the log says little about, and unidentified examination."""
    sparse = shown < min_impressions
    if sparse.any():
        n = int(sparse.sum())
        rows = int(shown[sparse].sum())
        warn(
            f"{n:,} of {len(shown):,} (query_id, doc_id) pairs ({rows:,} of "
            f"{log.n_rows:,} rows) are shown fewer than min_impressions="
            f"{min_impressions} times: the log says little about them, and "
            f"{name}'s parameters for them stay near the prior mean "
            f"{opts.default:g}. Fit on more searches, or pass min_impressions=0 "
            "to accept them as they are (nothing is dropped).",
            IdentificationWarning,
        )
    if not identified and min_impressions > 0:
        warn(
            f"no (query_id, doc_id) pair is shown at two different "
            f"{'positions' if name == 'PBM' else 'positions or after two different clicks'}: "
            f"{name} cannot tell examination from attractiveness on this log, "
            "and its examination values only follow init. Fit on a log where "
            "documents move between positions (several rankers, or "
            "randomised top results); min_impressions=0 turns this warning off.",
            IdentificationWarning,
        )
