"""Examination propensities by position, and counterfactual click metrics.

:func:`propensities` estimates how likely a result is to be examined at
each position, relative to position 1, from a click log:

* ``pbm``: a fitted position-based model's examination, theta_r / theta_1;
* ``randtop``: searches whose top n results were shuffled (a
  ``randomization`` value ``"randtop<n>"`` on the searches): there the
  click-through rate at r is proportional to theta_r (Wang et al., SIGIR
  2016);
* ``swap``: searches whose first result was swapped with the one at k
  (``"swap<k>"``): theta_k / theta_1 is the click-through rate of the
  top documents moved to k over that of the top documents left at 1 in
  control searches (``"swap1"``) (Joachims, Swaminathan & Schnabel, WSDM
  2017);
* ``pivot``, ``adjacent_chain``, ``all_pairs``: intervention harvesting
  (Agarwal, Zaitsev, Wang, Li, Najork & Joachims, WSDM 2019): (query,
  document) pairs that different logging rankers showed at two positions
  k and k' are natural interventions. Per (query, doc, position) clicks and
  impressions are one ``group_by``; a self-join on (query, doc) gives every
  pair of positions the pair was shown at.

:func:`counterfactual` reweights the logged clicks by the inverse
propensity of the position they were logged at to estimate the click
metrics a new ranking would get (Joachims, Swaminathan & Schnabel, WSDM
2017). See ``docs/propensities.md``.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from ireval_df._utils.frames import to_polars
from ireval_df._utils.options import check_choice
from ireval_df._utils.progress import Progress
from ireval_df.errors import (
    DataError,
    IrevalWarning,
    MetricSpecError,
    OptionError,
    SchemaError,
    warn,
)
from ireval_df.online.click_models import fit_click_model
from ireval_df.online.flat import check_flat, click_frame
from ireval_df.online.log import SearchLog
from ireval_df.schema import read_run

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["METHODS", "click_frame", "counterfactual", "propensities"]

Method = Literal["pbm", "randtop", "swap", "pivot", "adjacent_chain", "all_pairs"]
#: The estimation methods of :func:`propensities`.
METHODS: tuple[str, ...] = (
    "pbm",
    "randtop",
    "swap",
    "pivot",
    "adjacent_chain",
    "all_pairs",
)
_HARVEST = ("pivot", "adjacent_chain", "all_pairs")
_NEEDED = ("search_id", "query_id", "position", "doc_id", "clicked")
_W = "__ireval_w"


# --- input ----------------------------------------------------------------------------------


def _flat(data: Any, *, first_page: bool = False) -> pl.DataFrame:
    """Return a SearchLog or a flat frame as a checked flat click frame."""
    if isinstance(data, SearchLog):
        return click_frame(data, first_page=first_page)
    frame = to_polars(data)
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    # the click models' checks: columns, dtypes, nulls, positions, 0/1 clicks
    check_flat(frame, "click log", clicks=True)
    repeated = frame.group_by("search_id", "position").len().filter(pl.col("len") > 1)
    if repeated.height:
        row = repeated.sort("search_id", "position").row(0, named=True)
        msg = (
            f"click log shows {repeated.height} (search_id, position) slot(s) more "
            f"than once, e.g. search_id={row['search_id']!r} at position "
            f"{row['position']} ({row['len']} rows); each slot holds one result.\n"
            "  Hint: keep one row per slot, e.g. frame.unique(['search_id', "
            "'position'], keep='first', maintain_order=True)."
        )
        raise DataError(msg)
    return frame.with_columns(
        pl.col("query_id", "doc_id").cast(pl.String),
        pl.col("position").cast(pl.Int64),
        pl.col("clicked").cast(pl.Boolean),
    )


# --- estimators -----------------------------------------------------------------------------
# Each takes the flat frame with a weight column (how many times the bootstrap
# drew the row's search; 1 for the point estimate) and returns theta_r / theta_1
# by position (NaN: not estimable) for positions 1..depth.


def _ctr_by_position(frame: pl.DataFrame, depth: int) -> np.ndarray:
    agg = frame.group_by("position").agg(
        c=(pl.col(_W) * pl.col("clicked")).sum(), n=pl.col(_W).sum()
    )
    ctr = np.full(depth, np.nan)
    for pos, c, n in agg.iter_rows():
        if 1 <= pos <= depth and n > 0:
            ctr[pos - 1] = c / n
    return ctr


def _randtop(frame: pl.DataFrame, depth: int, flag: str) -> np.ndarray:
    top = frame.filter(pl.col("position") <= pl.col("__ireval_n"))
    ctr = _ctr_by_position(top, depth)
    return ctr / ctr[0] if ctr[0] > 0 else np.full(depth, np.nan)


def _swap(frame: pl.DataFrame, depth: int, flag: str) -> np.ndarray:
    """CTR at k of swap<k> searches (the top document moved to k) over CTR at 1 of swap1."""
    theta = np.full(depth, np.nan)
    theta[0] = 1.0
    agg = (
        frame.filter(
            (pl.col("position") == pl.col("__ireval_n"))
            | ((pl.col("__ireval_n") == 1) & (pl.col("position") == 1))
        )
        .group_by("__ireval_n")
        .agg(c=(pl.col(_W) * pl.col("clicked")).sum(), n=pl.col(_W).sum())
    )
    rates = {k: c / n for k, c, n in agg.iter_rows() if n > 0}
    control = rates.get(1, 0.0)
    if control <= 0:
        return theta
    for k, rate in rates.items():
        if 2 <= k <= depth:
            theta[k - 1] = rate / control
    return theta


def _pairs(frame: pl.DataFrame, weighting: str, ranker: str | None) -> pl.DataFrame:
    """Intervention sets: per position pair (a < b), the weighted click rates at a and at b.

    Each (query, doc) shown at both a and b adds omega * rate_a to ``ca`` and
    omega * rate_b to ``cb``; the ratio cb / ca estimates theta_b / theta_a.

    * ``traffic`` (Agarwal et al. 2019, their harvested click rates):
      with a ``ranker`` column, rate_k = clicks at k / w(q, d, k), where
      w(q, d, k) = sum of n_i over the rankers i that showed d at k for q and
      n_i is ranker i's number of searches; omega = 1. Without one, rate_k
      is the click-through rate at k and omega the query's number of
      searches, n_q: the same expectation, Pr(q) theta_k rel(q, d) per pair
      up to a constant, when rankers serve queries alike.
    * ``uniform``: rate_k the click-through rate, omega = 1.
    * ``harmonic``: rate_k the click-through rate, omega = n_a n_b / (n_a +
      n_b), the inverse of the variance factor 1 / n_a + 1 / n_b.
    """
    weight = pl.col(_W)
    keys = ["query_id", "doc_id", "position"]
    if weighting == "traffic" and ranker is not None:
        per_search = frame.unique("search_id")
        n_ranker = per_search.group_by(ranker).agg(
            __ireval_nr=weight.sum().cast(pl.Float64)
        )
        cells = (
            frame.group_by(*keys, ranker)
            .agg(
                c=(weight * pl.col("clicked")).sum().cast(pl.Float64),
                n=weight.sum().cast(pl.Float64),
            )
            .filter(pl.col("n") > 0)
            .join(n_ranker, on=ranker)
            .group_by(keys)
            .agg(pl.col("c").sum(), pl.col("n").sum(), w=pl.col("__ireval_nr").sum())
            .with_columns(rate=pl.col("c") / pl.col("w"), omega=pl.lit(1.0))
        )
    else:
        cells = (
            frame.group_by(keys)
            .agg(
                c=(weight * pl.col("clicked")).sum().cast(pl.Float64),
                n=weight.sum().cast(pl.Float64),
            )
            .filter(pl.col("n") > 0)
            .with_columns(rate=pl.col("c") / pl.col("n"))
        )
        if weighting == "traffic":
            n_query = (
                frame.unique("search_id")
                .group_by("query_id")
                .agg(omega=weight.sum().cast(pl.Float64))
            )
            cells = cells.join(n_query, on="query_id")
        else:
            cells = cells.with_columns(omega=pl.lit(1.0))
    joined = cells.join(cells, on=["query_id", "doc_id"], suffix="_b").filter(
        pl.col("position") < pl.col("position_b")
    )
    if weighting == "harmonic":
        omega = pl.col("n") * pl.col("n_b") / (pl.col("n") + pl.col("n_b"))
    else:
        omega = pl.col("omega")  # per query (or 1): the same on both sides
    return (
        joined.with_columns(omega=omega)
        .group_by(a="position", b="position_b")
        .agg(
            ca=(pl.col("omega") * pl.col("rate")).sum(),
            cb=(pl.col("omega") * pl.col("rate_b")).sum(),
            weight=pl.col("omega").sum(),
        )
        .sort("a", "b")
    )


def _pivot(pairs: pl.DataFrame, depth: int, pivot: int) -> np.ndarray:
    rel = np.full(depth, np.nan)  # theta_r / theta_pivot
    rel[pivot - 1] = 1.0
    for a, b, ca, cb, _ in pairs.iter_rows():
        if a == pivot and b <= depth and ca > 0:
            rel[b - 1] = cb / ca
        elif b == pivot and a <= depth and cb > 0:
            rel[a - 1] = ca / cb
    first = rel[0]
    if not np.isfinite(first) or first <= 0:
        return np.full(depth, np.nan)
    out: np.ndarray = rel / first
    return out


def _adjacent_chain(pairs: pl.DataFrame, depth: int) -> np.ndarray:
    step = np.full(depth, np.nan)
    step[0] = 1.0
    for a, b, ca, cb, _ in pairs.iter_rows():
        if b == a + 1 and b <= depth and ca > 0:
            step[b - 1] = cb / ca
    return np.cumprod(step)  # a NaN step leaves every later position NaN


def _all_pairs(pairs: pl.DataFrame, depth: int) -> np.ndarray:
    """Weighted least squares of log ca - log cb = log theta_a - log theta_b, theta_1 = 1."""
    usable = pairs.filter(
        (pl.col("ca") > 0) & (pl.col("cb") > 0) & (pl.col("b") <= depth)
    )
    theta = np.full(depth, np.nan)
    theta[0] = 1.0
    if usable.height == 0:
        return theta
    a = usable["a"].to_numpy() - 1
    b = usable["b"].to_numpy() - 1
    reached = {0}
    grew = True
    while grew:  # the positions connected to position 1 by some pair
        grew = False
        for i, j in zip(a, b, strict=True):
            if (i in reached) != (j in reached):
                reached |= {int(i), int(j)}
                grew = True
    free = sorted(reached - {0})
    if not free:
        return theta
    column = {p: n for n, p in enumerate(free)}
    keep = np.array([i in reached and j in reached for i, j in zip(a, b, strict=True)])
    a, b = a[keep], b[keep]
    y = np.log(usable["ca"].to_numpy()[keep]) - np.log(usable["cb"].to_numpy()[keep])
    sw = np.sqrt(usable["weight"].to_numpy()[keep])
    design = np.zeros((len(y), len(free)))
    for row, (i, j) in enumerate(zip(a, b, strict=True)):
        if i in column:
            design[row, column[i]] += 1.0
        if j in column:
            design[row, column[j]] -= 1.0
    solution = np.linalg.lstsq(design * sw[:, None], y * sw, rcond=None)[0]
    for p, n in column.items():
        theta[p] = math.exp(solution[n])
    return theta


def _pbm(frame: pl.DataFrame, depth: int, fit_options: Mapping[str, Any]) -> np.ndarray:
    if not (frame[_W] == 1).all():  # a bootstrap draw: repeat each search w times
        frame = (
            frame.filter(pl.col(_W) > 0)
            .with_columns(__ireval_copy=pl.int_ranges(pl.col(_W)))
            .explode("__ireval_copy")
            .with_columns(
                search_id=pl.format("{}#{}", "search_id", "__ireval_copy"),
            )
        )
    model = fit_click_model(
        frame.select(_NEEDED), "PBM", **{"min_impressions": 0, **fit_options}
    )
    exam = model.examination
    assert exam is not None  # noqa: S101 - PBM has examination
    theta = np.full(depth, np.nan)
    for pos, value in exam.iter_rows():
        if pos <= depth:
            theta[pos - 1] = value
    out: np.ndarray = theta / theta[0]
    return out


# --- propensities ---------------------------------------------------------------------------


def _flagged(frame: pl.DataFrame, method: str, column: str) -> pl.DataFrame:
    """Return the searches an experiment flagged, with its n (or k) as __ireval_n."""
    if column not in frame.columns:
        msg = (
            f"method={method!r} needs a {column!r} column on the searches naming "
            f"the randomisation of each search ('{method}3', ...), and the log has "
            f"none.\n  Hint: pass randomization='<column>' if it has another name, "
            "or use method='pivot' (no randomisation needed)."
        )
        raise SchemaError(msg)
    n = pl.col(column).cast(pl.String).str.extract(rf"^{method}(\d+)$").cast(pl.Int64)
    flagged = frame.with_columns(__ireval_n=n).filter(
        pl.col("__ireval_n").is_not_null()
    )
    if flagged.height == 0:
        seen = frame[column].drop_nulls().unique().sort().head(5).to_list()
        msg = (
            f"no search has {column!r} = '{method}<n>' (values seen: {seen}): "
            f"method={method!r} needs randomised searches.\n  Hint: use "
            "method='pbm' or 'pivot' for logs without randomisation."
        )
        raise DataError(msg)
    return flagged


def propensities(
    data: Any,
    method: Method = "pbm",
    *,
    k: int | None = None,
    n_bootstrap: int = 200,
    seed: int = 0,
    alpha: float = 0.05,
    pivot: int = 1,
    cluster: str = "search_id",
    weighting: Literal["traffic", "uniform", "harmonic"] = "traffic",
    randomization: str = "randomization",
    ranker: str | None = "ranker",
    **fit_options: Any,
) -> pl.DataFrame:
    """Estimate examination propensities by position, relative to position 1.

    Parameters
    ----------
    data : SearchLog or frame
        A :class:`~ireval_df.online.log.SearchLog` or a flat click frame
        ``search_id, query_id, position, doc_id, clicked`` (see
        :func:`~ireval_df.online.flat.click_frame`), with a
        ``randomization`` column for ``randtop`` and ``swap``.
    method : {"pbm", "randtop", "swap", "pivot", "adjacent_chain", "all_pairs"}
        ``pbm``: a fitted PBM's examination theta_r / theta_1 (options such
        as ``iterations=`` go to :func:`fit_click_model`). ``randtop``:
        click-through rate by position over searches flagged
        ``"randtop<n>"`` (positions up to n). ``swap``: searches flagged
        ``"swap<k>"`` (first result swapped with the one at k): the CTR at k
        over the CTR at 1 of the control searches, flagged ``"swap1"`` (not
        swapped, randomised alongside the swaps). ``pivot`` (theta_k / theta_pivot
        from the pairs shown at ``pivot`` and k), ``adjacent_chain`` (the
        product of theta_{k+1} / theta_k), ``all_pairs`` (weighted least
        squares of every pair's log ratio): intervention harvesting.
    k : int, optional
        Keep positions 1..k (default: every position shown).
    n_bootstrap : int, default 200
        Bootstrap draws for the percentile intervals (0: no intervals).
    seed : int, default 0
        Seed of the bootstrap.
    alpha : float, default 0.05
        The intervals cover 1 - alpha.
    pivot : int, default 1
        The pivot position of ``method="pivot"``.
    cluster : str, default "search_id"
        The unit the bootstrap resamples: ``"search_id"``, or ``"query_id"``
        to resample whole queries (wider intervals, honest when queries'
        documents are shared across searches).
    weighting : {"traffic", "uniform", "harmonic"}, default "traffic"
        Intervention harvesting: how the (query, doc) pairs of an
        intervention set S_{k,k'} add up. ``"traffic"`` is Agarwal et al.'s
        estimator: each click at k counts 1 / w(q, d, k), where w(q, d, k)
        is the number of searches of the logging rankers that put d at k for
        q (each ranker's whole traffic, n_i, read from the ``ranker``
        column), so a pair counts by its query's share of the traffic.
        Without a ``ranker`` column each pair's click-through rates at k and
        k' count by its query's number of searches, n_q, which has the same
        expectation when the rankers serve queries alike, and also suits
        randomised or interleaved lists, where no single ranker placed a
        document. ``"uniform"`` counts every pair's click-through rates
        alike (``ultr-bias-toolkit``'s default). ``"harmonic"`` weights them
        by n_k n_k' / (n_k + n_k'), the pair's impressions at k and k' (the
        inverse of the variance factor 1 / n_k + 1 / n_k'): less variance
        when a pair's impressions are unbalanced, not in the paper. Every
        weighting depends on counts only, never on clicks, and in
        expectation gives a pair the same weight at k and k', so the ratios
        stay consistent for theta_k' / theta_k under a position-based model.
    randomization : str, default "randomization"
        The column of the flags ``randtop<n>`` and ``swap<k>``.
    ranker : str or None, default "ranker"
        The column naming the ranker that served each search, for
        ``weighting="traffic"`` (a column of the searches when ``data`` is
        a SearchLog, such as ``"variant"`` for an A/B log); ignored when the
        log has no such column, and ``None`` never reads one.

    Returns
    -------
    polars.DataFrame
        ``position, propensity, ci_low, ci_high, n_impressions``: one row
        per position, position 1 first with propensity 1. ``n_impressions``
        counts the impressions at the position the method used. A position
        the method cannot estimate is null, with a warning.

    Raises
    ------
    SchemaError
        A needed column is missing (``randomization`` for randtop and swap).
    DataError
        No search is flagged for ``randtop`` or ``swap``; the ``ranker``
        column is null for some searches or names two rankers in one.
    OptionError
        An unknown method or a bad option.
    """
    check_choice("method", method, METHODS)
    check_choice("weighting", weighting, ("traffic", "uniform", "harmonic"))
    check_choice("cluster", cluster, ("search_id", "query_id"))
    if not 0 < alpha < 1:
        msg = f"alpha={alpha!r} is not between 0 and 1."
        raise OptionError(msg)
    if (
        isinstance(n_bootstrap, bool)
        or not isinstance(n_bootstrap, int)
        or n_bootstrap < 0
    ):
        msg = f"n_bootstrap={n_bootstrap!r} is not a whole number >= 0 (default 200)."
        raise OptionError(msg)
    frame = _flat(data, first_page=method == "pbm")
    ranker_column = (
        _ranker_column(data, frame, ranker)
        if method in _HARVEST and weighting == "traffic"
        else None
    )
    if ranker_column is not None and ranker_column not in frame.columns:
        assert isinstance(data, SearchLog)  # noqa: S101 - _ranker_column checked it
        frame = frame.join(
            data.searches.select("search_id", ranker_column), on="search_id"
        )
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            msg = f"k={k!r} is not a whole number >= 1."
            raise OptionError(msg)
        frame = frame.filter(pl.col("position") <= k)
    if frame.height == 0:
        msg = "the click log has no rows (after k)."
        raise DataError(msg)
    depth = int(frame["position"].max())  # type: ignore[arg-type]
    if method == "pivot" and not (isinstance(pivot, int) and 1 <= pivot <= depth):
        msg = f"pivot={pivot!r} is not a position of the log (1..{depth})."
        raise OptionError(msg)

    estimate: Callable[[pl.DataFrame], np.ndarray]
    if method in ("randtop", "swap"):
        frame = _flagged(frame, method, randomization)
        rule = _randtop if method == "randtop" else _swap
        depth = min(depth, int(frame["__ireval_n"].max()))  # type: ignore[arg-type]
        if method == "swap" and frame.filter(pl.col("__ireval_n") == 1).height == 0:
            msg = (
                f"no search has {randomization!r} = 'swap1': method='swap' compares "
                "the top document moved to k with the top document left at 1 in "
                "control searches, flagged 'swap1' (randomised alongside the swaps)."
            )
            raise DataError(msg)

        def estimate(f: pl.DataFrame) -> np.ndarray:
            return rule(f, depth, method)

        used = (
            frame.filter(pl.col("position") <= pl.col("__ireval_n"))
            if method == "randtop"
            else frame.filter(
                (pl.col("position") == pl.col("__ireval_n")) | (pl.col("position") == 1)
            )
        )
    elif method == "pbm":

        def estimate(f: pl.DataFrame) -> np.ndarray:
            return _pbm(f, depth, fit_options)

        used = frame
    else:

        def estimate(f: pl.DataFrame) -> np.ndarray:
            pairs = _pairs(f, weighting, ranker_column)
            if method == "pivot":
                return _pivot(pairs, depth, pivot)
            if method == "adjacent_chain":
                return _adjacent_chain(pairs, depth)
            return _all_pairs(pairs, depth)

        moved = (
            frame.group_by("query_id", "doc_id")
            .agg(pl.col("position").n_unique().alias("__ireval_moved"))
            .filter(pl.col("__ireval_moved") > 1)
        )
        used = frame.join(moved, on=["query_id", "doc_id"], how="semi")
    if fit_options and method != "pbm":
        msg = f"options {sorted(fit_options)} are for method='pbm' only."
        raise OptionError(msg)

    frame = frame.with_columns(pl.lit(1, dtype=pl.Int64).alias(_W))
    point = estimate(frame)
    draws = _bootstrap(frame, estimate, cluster, n_bootstrap, seed)
    low = np.full(depth, np.nan)
    high = np.full(depth, np.nan)
    if draws.size:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            finite = np.isfinite(draws)
            enough = finite.sum(axis=0) >= max(2, draws.shape[0] // 2)
            low = np.where(enough, np.nanquantile(draws, alpha / 2, axis=0), np.nan)
            high = np.where(
                enough, np.nanquantile(draws, 1 - alpha / 2, axis=0), np.nan
            )
    counts = used.group_by("position").len()
    n_imp = np.zeros(depth, dtype=np.int64)
    for pos, n in counts.iter_rows():
        if pos <= depth:
            n_imp[pos - 1] = n
    result = pl.DataFrame(
        {
            "position": np.arange(1, depth + 1),
            "propensity": point,
            "ci_low": low,
            "ci_high": high,
            "n_impressions": n_imp,
        },
        schema={
            "position": pl.Int64,
            "propensity": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "n_impressions": pl.Int64,
        },
    ).with_columns(pl.col("propensity", "ci_low", "ci_high").fill_nan(None))
    _warn_estimates(result, method)
    return result


def _ranker_column(data: Any, frame: pl.DataFrame, ranker: str | None) -> str | None:
    """Return the column naming each search's ranker, if the log has one."""
    if ranker is None:
        return None
    if ranker in frame.columns:
        column = frame[ranker]
        per_search = frame.select("search_id", ranker)
    elif isinstance(data, SearchLog) and ranker in data.searches.columns:
        column = data.searches[ranker]
        per_search = data.searches.select("search_id", ranker)
    else:
        return None
    if column.null_count():
        msg = (
            f"the {ranker!r} column (the ranker that served each search) is null "
            f"for {column.null_count():,} rows; intervention harvesting with "
            "weighting='traffic' needs each search's ranker.\n  Hint: fill them, "
            "or pass ranker=None to weight pairs by their query's searches instead."
        )
        raise DataError(msg)
    if per_search.unique().group_by("search_id").len()["len"].max() != 1:
        msg = (
            f"the {ranker!r} column names more than one ranker within a search; "
            "it must name the one ranker that served the search.\n  Hint: pass "
            "ranker=None to weight pairs by their query's searches instead."
        )
        raise DataError(msg)
    return ranker


def _bootstrap(
    frame: pl.DataFrame,
    estimate: Callable[[pl.DataFrame], np.ndarray],
    cluster: str,
    n_bootstrap: int,
    seed: int,
) -> np.ndarray:
    """Estimates on n_bootstrap resamples of the clusters (rows: draws)."""
    if n_bootstrap == 0:
        return np.empty((0, 0))
    codes = frame[cluster].cast(pl.String).rank("dense").cast(pl.Int64).to_numpy() - 1
    n = int(codes.max()) + 1
    rng = np.random.default_rng(seed)
    out = []
    # each draw re-estimates on the whole log: a bar once the log is large
    work = n_bootstrap * frame.height * 100
    with (
        warnings.catch_warnings(),
        Progress(n_bootstrap, "propensity bootstrap", work=work) as bar,
    ):
        warnings.simplefilter("ignore")
        for _ in range(n_bootstrap):
            weight = np.bincount(rng.integers(0, n, n), minlength=n)[codes]
            drawn = frame.with_columns(pl.Series(_W, weight, dtype=pl.Int64)).filter(
                pl.col(_W) > 0
            )
            out.append(estimate(drawn))
            bar.update()
    return np.vstack(out)


def _warn_estimates(result: pl.DataFrame, method: str) -> None:
    missing = result.filter(pl.col("propensity").is_null())["position"].to_list()
    if missing:
        hint = (
            "a log where documents move between these positions, or k= to stop above them"
            if method in _HARVEST
            else "more randomised searches, or k= to stop above them"
        )
        warn(
            f"{len(missing)} position(s) have no interventions method={method!r} can "
            f"use and are left null: {missing[:10]}. Needs {hint}.",
            IrevalWarning,
        )
    zero = result.filter(pl.col("propensity") == 0)["position"].to_list()
    if zero:
        warn(
            f"position(s) {zero[:10]} have a propensity of zero (no clicks there): "
            "inverse-propensity weights are infinite. Pass clip= to counterfactual, "
            "or use k= to stop above them.",
            IrevalWarning,
        )


# --- counterfactual -------------------------------------------------------------------------

_METRIC = re.compile(r"^(ctr|dcg|clicks-dcg)@(\d+)$", re.IGNORECASE)


def _metric(name: str) -> tuple[str, int]:
    match = _METRIC.match(name.strip()) if isinstance(name, str) else None
    if not match or int(match.group(2)) < 1:
        msg = (
            f"metric {name!r} is not a counterfactual click metric; use 'CTR@k' "
            "(clicks in the new ranking's top k) or 'DCG@k' (clicks-DCG@k, "
            "1/log2(1 + rank) per click in the top k)."
        )
        raise MetricSpecError(msg)
    return ("ctr" if match.group(1).lower() == "ctr" else "dcg"), int(match.group(2))


def _propensity_map(props: Any) -> dict[int, float]:
    if isinstance(props, Mapping):
        try:
            table = {
                int(p): (math.nan if v is None else float(v)) for p, v in props.items()
            }
        except (TypeError, ValueError):
            msg = (
                "propensities= as a mapping needs whole-number positions and "
                f"numbers, found {dict(list(props.items())[:3])!r}.\n  Hint: pass "
                "the frame propensities() returns, or {1: 1.0, 2: 0.6, ...}."
            )
            raise DataError(msg) from None
    else:
        frame = to_polars(props)
        if isinstance(frame, pl.LazyFrame):
            frame = frame.collect()
        if not {"position", "propensity"} <= set(frame.columns):
            msg = (
                "propensities= needs columns position, propensity (the output of "
                f"propensities()), or a mapping position -> propensity; found {frame.columns}."
            )
            raise SchemaError(msg)
        table = {
            int(p): (math.nan if v is None else float(v))
            for p, v in frame.select("position", "propensity").iter_rows()
        }
    bad = {p: v for p, v in table.items() if not (math.isfinite(v) and v >= 0)}
    if bad:
        msg = (
            f"propensities are null, NaN or negative at positions {sorted(bad)[:10]} "
            "(propensities() leaves a position null when no intervention reaches "
            "it).\n  Hint: drop those positions from propensities= if no logged "
            "click is there, or estimate them with another method (method='pbm' "
            "covers every position)."
        )
        raise DataError(msg)
    return table


def _ranked(run: Any, rank_from: str) -> pl.DataFrame:
    """Return the new ranking: query_id, doc_id, rank in evaluate()'s order."""
    frame = to_polars(run) if not isinstance(run, str) else run
    if (
        rank_from == "rank"
        and isinstance(frame, (pl.DataFrame, pl.LazyFrame))
        and "rank" in frame.collect_schema().names()
    ):
        frame = frame.with_columns(score=-pl.col("rank").cast(pl.Float64))
    ranked = read_run(frame, rank=False)
    if ranked["run_id"].n_unique() > 1:
        msg = (
            f"run has {ranked['run_id'].n_unique()} run_ids; counterfactual "
            "evaluates one new ranking: filter the run first."
        )
        raise DataError(msg)
    return ranked.sort(
        ["query_id", "score", "doc_id"], descending=[False, True, True]
    ).select(
        pl.col("query_id").cast(pl.String),
        pl.col("doc_id").cast(pl.String),
        rank=pl.int_range(1, pl.len() + 1).over("query_id"),
    )


def counterfactual(
    log: Any,
    run: Any,
    metrics: str | Sequence[str] = ("CTR@10",),
    *,
    propensities: Any,
    estimator: Literal["ips", "snips"] = "ips",
    clip: float | None = None,
    k: int = 10,
    alpha: float = 0.05,
    rank_from: Literal["score", "rank"] = "score",
    unseen: bool = False,
) -> Any:
    """Estimate click metrics of a new ranking from the clicks logged on the old one.

    Each logged click on document d of search i counts
    lambda(rank of d in the new ranking) / p(position d was logged at):
    ``CTR@k`` uses lambda(r) = 1[r <= k] (expected clicks in the new top k
    per search, had every result been examined as at position 1, i.e. the
    position-debiased relevant results in the top k), ``DCG@k``
    (clicks-DCG@k) 1[r <= k] / log2(1 + r). The estimate is the mean over
    searches of the per-search sums (Joachims, Swaminathan & Schnabel,
    WSDM 2017); intervals are clustered by search: a normal interval over
    the per-search sums (CLT; for SNIPS, the delta method of the ratio).

    Parameters
    ----------
    log : SearchLog or frame
        The logged searches: a :class:`~ireval_df.online.log.SearchLog` or
        a flat click frame ``search_id, query_id, position, doc_id, clicked``.
    run : frame or path
        The new ranking: ``query_id, doc_id, score`` (or ``rank`` with
        ``rank_from="rank"``), read by :func:`ireval_df.read_run` and ranked
        as :func:`ireval_df.evaluate` ranks (score descending, ties by
        ``doc_id`` descending). Query ids must be the log's (``query_id``,
        else ``query_norm``).
    metrics : str or sequence of str, default ("CTR@10",)
        ``CTR@k`` and ``DCG@k`` (``clicks-DCG@k`` is the same).
    propensities : frame or mapping
        ``position, propensity`` (the output of :func:`propensities`) or a
        mapping position -> propensity. Every clicked position needs one.
    estimator : {"ips", "snips"}, default "ips"
        ``snips`` divides the clipped estimate by the mean over searches of
        the mean over shown results of theta(pos) / max(theta(pos), clip),
        the share of the weight clipping kept: it rescales clipping's
        downward scale (and may overshoot); without ``clip`` it equals
        ``ips``. Not Swaminathan & Joachims's (2015) SNIPS, whose
        denominator is the sum of the logged actions' importance weights
        pi / pi_0 (expectation n, a control variate): examination weights
        1 / theta have no observable counterpart of mean one
        (``docs/propensities.md``).
    clip : float, optional
        Propensities below ``clip`` are raised to it (fewer extreme weights,
        some bias); ``clipped_share`` reports the share of the unclipped
        weight removed (1 when a credited click is at a position of
        propensity zero, whose unclipped weight is infinite).
    k : int, default 10
        Depth of the positivity check: the new ranking's top-k documents
        that no logged search of the query showed cannot earn any credit,
        whatever their relevance. They are counted in ``unseen_share``
        (share of the new top-k slots over searches) and warned about.
    alpha : float, default 0.05
        The intervals cover 1 - alpha.
    rank_from : {"score", "rank"}, default "score"
        Rank the run by score, or by its ``rank`` column.
    unseen : bool, default False
        Also return the unseen documents: ``(estimates, unseen_frame)``
        with ``query_id, doc_id, rank, n_searches`` (searches of the query
        that never showed the document).

    Returns
    -------
    polars.DataFrame
        ``metric, estimator, value, ci_low, ci_high, n_searches,
        clipped_share, unseen_share``, one row per metric.
    """
    check_choice("estimator", estimator, ("ips", "snips"))
    check_choice("rank_from", rank_from, ("score", "rank"))
    if clip is not None and not (isinstance(clip, (int, float)) and 0 < clip <= 1):
        msg = f"clip={clip!r} is not a number in (0, 1]."
        raise OptionError(msg)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        msg = f"k={k!r} is not a whole number >= 1."
        raise OptionError(msg)
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    specs = [_metric(m) for m in names]
    flat = _flat(log)
    props = _propensity_map(propensities)
    clicked_positions = set(
        flat.filter(pl.col("clicked"))["position"].unique().to_list()
    )
    lacking = sorted(clicked_positions - set(props))
    if lacking:
        msg = (
            f"clicks at position(s) {lacking[:10]} have no propensity; estimate "
            "them (propensities(..., k=None)) or filter the log to the positions "
            "you have: log.filter(pl.col('position') <= K)."
        )
        raise DataError(msg)
    zero = sorted(p for p in clicked_positions if props[p] == 0)
    if zero and clip is None:
        msg = (
            f"clicks at position(s) {zero[:10]} have a propensity of zero: their "
            "inverse-propensity weight is infinite. Pass clip= (e.g. clip=0.01)."
        )
        raise DataError(msg)
    ranked = _ranked(run, rank_from)
    table = pl.DataFrame(
        {"position": list(props), "__ireval_p": list(props.values())},
        schema={"position": pl.Int64, "__ireval_p": pl.Float64},
    )
    floor = 0.0 if clip is None else float(clip)
    shown = flat.join(table, on="position", how="left").with_columns(
        __ireval_pu=pl.max_horizontal(pl.col("__ireval_p"), pl.lit(floor)),
    )
    searches = shown.select("search_id", "query_id").unique("search_id")
    n_searches = searches.height
    in_run = set(ranked["query_id"].unique().to_list())
    outside = searches.filter(~pl.col("query_id").is_in(list(in_run))).height
    if outside:
        warn(
            f"{outside:,} of {n_searches:,} searches are of queries the run does not "
            "rank: the new ranking shows nothing for them and they count 0. Filter "
            "the log to the run's queries to leave them out.",
            IrevalWarning,
        )
    # snips normaliser: per search, mean over shown results of theta / max(theta, clip)
    norm = (
        shown.filter(pl.col("__ireval_p").is_not_null())
        .group_by("search_id")
        .agg(
            z=(
                pl.when(pl.col("__ireval_pu") > 0)
                .then(pl.col("__ireval_p") / pl.col("__ireval_pu"))
                .otherwise(1.0)
            ).mean()
        )
    )
    clicks = shown.filter(pl.col("clicked")).join(
        ranked, on=["query_id", "doc_id"], how="left"
    )
    unseen_frame, unseen_share = _unseen(flat, ranked, searches, k)
    z_score = _normal_quantile(1 - alpha / 2)
    rows = []
    for name, (kind, depth) in zip(names, specs, strict=True):
        in_top = pl.col("rank").is_not_null() & (pl.col("rank") <= depth)
        lam = (
            pl.when(in_top)
            .then(
                pl.lit(1.0)
                if kind == "ctr"
                else 1.0 / (pl.col("rank").cast(pl.Float64) + 1.0).log(2)
            )
            .otherwise(0.0)
        )
        weighted = clicks.with_columns(lam=lam).with_columns(
            y=pl.col("lam") / pl.col("__ireval_pu"),
            y_raw=pl.when(pl.col("__ireval_p") > 0)
            .then(pl.col("lam") / pl.col("__ireval_p"))
            .otherwise(None),
        )
        raw_total = float(weighted["y_raw"].sum())
        used_total = float(weighted["y"].sum())
        # a credited click at a position of propensity zero has an infinite
        # unclipped weight: clipping removed all of it, whatever the others
        infinite = weighted.filter(
            (pl.col("__ireval_p") == 0) & (pl.col("lam") > 0)
        ).height
        clipped_share = (
            1.0
            if infinite
            else (raw_total - used_total) / raw_total
            if raw_total > 0
            else 0.0
        )
        per = (
            searches.join(
                weighted.group_by("search_id").agg(pl.col("y").sum()),
                on="search_id",
                how="left",
            )
            .join(norm, on="search_id", how="left")
            .with_columns(pl.col("y").fill_null(0.0), pl.col("z").fill_null(1.0))
        )
        y = per["y"].to_numpy()
        z = per["z"].to_numpy()
        if estimator == "ips":
            value = float(y.mean())
            resid = y - value
            scale = 1.0
        else:
            value = float(y.sum() / z.sum())
            resid = y - value * z
            scale = float(z.mean())
        se = (
            float(resid.std(ddof=1)) / (scale * math.sqrt(len(y)))
            if len(y) > 1
            else math.nan
        )
        rows.append(
            (
                name,
                estimator,
                value,
                value - z_score * se,
                value + z_score * se,
                n_searches,
                clipped_share,
                unseen_share,
            )
        )
    result = pl.DataFrame(
        rows,
        schema={
            "metric": pl.String,
            "estimator": pl.String,
            "value": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "n_searches": pl.Int64,
            "clipped_share": pl.Float64,
            "unseen_share": pl.Float64,
        },
        orient="row",
    )
    if unseen:
        return result, unseen_frame
    return result


def _unseen(
    flat: pl.DataFrame, ranked: pl.DataFrame, searches: pl.DataFrame, k: int
) -> tuple[pl.DataFrame, float]:
    """Return the new top-k documents never shown for their query, and their share."""
    top = ranked.filter(pl.col("rank") <= k)
    seen = flat.select("query_id", "doc_id").unique()
    per_query = searches.group_by("query_id").agg(n_searches=pl.len())
    never = top.join(seen, on=["query_id", "doc_id"], how="anti").join(
        per_query, on="query_id", how="inner"
    )
    slots = top.join(per_query, on="query_id", how="inner")
    total = float(slots["n_searches"].sum())
    missing = float(never["n_searches"].sum())
    share = missing / total if total > 0 else 0.0
    if never.height:
        example = never.sort("n_searches", descending=True).row(0, named=True)
        warn(
            f"{never.height:,} documents the run places in its top {k} were never "
            f"shown for their query in the log ({share:.1%} of the top-{k} slots "
            f"over searches), e.g. query {example['query_id']!r} doc "
            f"{example['doc_id']!r}: no logged click can credit them, so the "
            "estimates say nothing about them (positivity). unseen=True lists them.",
            IrevalWarning,
        )
    return never.sort("query_id", "rank").select(
        "query_id", "doc_id", "rank", "n_searches"
    ), share


def _normal_quantile(q: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(q)
