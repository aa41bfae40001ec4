"""Offline-online agreement: whether two families of comparisons rank systems alike.

:func:`agreement` reads two frames of pairwise system comparisons, offline
(from :func:`ireval_df.compare`: ``run_id`` against ``baseline``) and online
(from an A/B test: ``variant`` against the control, or from
``interleaving_test``: ``ranker_a`` against ``ranker_b``), matches their
system pairs and reports, per slice and per pair of metrics, how often the
deltas agree in sign, the pairs significant in opposite directions, Kendall
tau and tau_AP between the system orderings, and each metric's share of
significant pairs. Deltas are turned so that positive means better, by
each metric's direction (the registry's, or ``higher_is_better=``). It
reads only frames: no family's internals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df._utils.frames import to_polars
from ireval_df.errors import DataError, SchemaError
from ireval_df.measures.properties import Direction, properties

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["agreement", "tau_ap"]

_SIDES = ("__a", "__b")
#: the metric of an interleaving frame without a ``metric`` column: its
#: ``delta_ab > 0`` prefers ``ranker_a``, so it reads as higher-is-better
INTERLEAVING = "interleaving"


def tau_ap(truth: Sequence[float], estimate: Sequence[float]) -> float:
    """Return Yilmaz, Aslam & Robertson's tau_AP of ``estimate`` against ``truth``.

    Items are ordered by ``estimate`` (higher first); for each item i from
    the second, C(i) counts the items above it in that order that ``truth``
    also places above it; tau_AP = 2 / (n - 1) * sum C(i) / (i - 1) - 1.
    Ties in ``estimate`` are broken by input order; pairs tied in ``truth``
    count as not concordant. NaN for fewer than two items.

    Examples
    --------
    >>> tau_ap([3, 2, 1], [3, 2, 1]), tau_ap([3, 2, 1], [1, 2, 3])
    (1.0, -1.0)
    >>> round(tau_ap([3, 2, 1], [2, 3, 1]), 4)  # the top swapped costs more ...
    0.0
    >>> round(tau_ap([3, 2, 1], [3, 1, 2]), 4)  # ... than the bottom
    0.5
    """
    n = len(truth)
    if n != len(estimate):
        msg = "truth and estimate have different lengths."
        raise DataError(msg)
    if n < 2:
        return math.nan
    order = sorted(range(n), key=lambda i: -estimate[i])
    total = 0.0
    for pos in range(1, n):
        item = order[pos]
        above = sum(1 for j in order[:pos] if truth[j] > truth[item])
        total += above / pos
    return 2.0 / (n - 1) * total - 1.0


def _frame(data: Any, what: str) -> pl.DataFrame:
    frame = to_polars(data)
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    return frame


def _pairs(
    frame: pl.DataFrame,
    what: str,
    by: list[str],
    control: str | None,
    systems: Mapping[str, str],
    alpha: float,
    higher_is_better: Direction,
) -> pl.DataFrame:
    """Return one row per (slice, metric, system pair): ``__a, __b, metric, delta, significant``.

    ``delta`` is turned so that positive means ``__a`` is better, by the
    metric's direction.
    """
    names = frame.columns
    if {"run_id", "baseline"} <= set(names):
        a, b, delta = pl.col("run_id"), pl.col("baseline"), pl.col("delta")
        metric = pl.col("metric")
    elif {"ranker_a", "ranker_b", "delta_ab"} <= set(names):
        a, b, delta = pl.col("ranker_a"), pl.col("ranker_b"), pl.col("delta_ab")
        metric = pl.col("metric") if "metric" in names else pl.lit(INTERLEAVING)
    elif "variant" in names and "delta" in names:
        a, delta = pl.col("variant"), pl.col("delta")
        if "control" in names:
            b = pl.col("control")
        elif control is not None:
            b = pl.lit(control)
        else:
            msg = (
                f"{what} looks like an A/B test (variant, delta) but names no control: "
                "pass control='<control arm>'."
            )
            raise SchemaError(msg)
        metric = pl.col("metric")
    else:
        msg = (
            f"{what} is not a frame of comparisons: expected run_id and baseline "
            "(ie.compare), variant and delta (an A/B test) or ranker_a, ranker_b "
            f"and delta_ab (interleaving_test); found {names}."
        )
        raise SchemaError(msg)
    missing = [c for c in by if c not in names]
    if missing:
        msg = f"{what} has no slice column(s) {missing} (by=); found {names}."
        raise SchemaError(msg)
    if "significant" in names:
        sig = pl.col("significant").fill_null(value=False)
    elif "p_adjusted" in names:
        sig = pl.col("p_adjusted") < alpha
    elif "p_value" in names:
        sig = pl.col("p_value") < alpha
    else:
        sig = pl.lit(value=False)
    rename = dict(systems)
    out = frame.select(
        *by,
        a.cast(pl.String).replace(rename).alias("__a"),
        b.cast(pl.String).replace(rename).alias("__b"),
        metric.cast(pl.String).alias("metric"),
        delta.cast(pl.Float64).alias("delta"),
        sig.cast(pl.Boolean).alias("significant"),
    )
    better = _directions(out["metric"].unique().to_list(), higher_is_better)
    out = out.with_columns(
        delta=pl.col("delta")
        * pl.col("metric").replace_strict(better, return_dtype=pl.Float64)
    )
    # one orientation per unordered pair: a < b, the delta's sign follows
    swap = pl.col("__a") > pl.col("__b")
    return out.with_columns(
        __a=pl.when(swap).then("__b").otherwise("__a"),
        __b=pl.when(swap).then("__a").otherwise("__b"),
        delta=pl.when(swap).then(-pl.col("delta")).otherwise("delta"),
    )


def _directions(metrics: list[str], higher_is_better: Direction) -> dict[str, float]:
    """Return +1 for each metric where higher is better, -1 where lower is."""
    signs = {}
    for name in metrics:
        if name is None:
            msg = "a frame of comparisons has rows without a metric name."
            raise SchemaError(msg)
        if name == INTERLEAVING and not (
            isinstance(higher_is_better, Mapping) and name in higher_is_better
        ):
            signs[name] = 1.0
            continue
        # an A/B test's per-position rows read PositionCTR@3[1]: the registry
        # knows PositionCTR@3
        base = name.split("[", 1)[0] if name.endswith("]") else name
        own: Direction = higher_is_better
        if isinstance(higher_is_better, Mapping) and name in higher_is_better:
            own = {base: higher_is_better[name]}
        signs[name] = (
            1.0
            if properties([base], higher_is_better=own)[0].higher_is_better
            else -1.0
        )
    return signs


def _scores(pairs: pl.DataFrame) -> dict[str, float]:
    """Each system's sum of deltas over its pairs (+ as a, - as b): its place in the order."""
    score: dict[str, float] = {}
    for a, b, d in pairs.select("__a", "__b", "delta").iter_rows():
        score[a] = score.get(a, 0.0) + d
        score[b] = score.get(b, 0.0) - d
    return score


def agreement(
    offline: Any,
    online: Any,
    *,
    by: str | Sequence[str] | None = None,
    systems: Mapping[str, str] | None = None,
    control: str | None = None,
    alpha: float = 0.05,
    higher_is_better: Direction = None,
) -> pl.DataFrame:
    """Compare offline and online verdicts on the same system pairs, per slice.

    Parameters
    ----------
    offline : frame
        Offline comparisons: the output of :func:`ireval_df.compare`
        (``run_id, baseline, metric, delta, ..., significant``).
    online : frame
        Online comparisons: an A/B test (``variant, metric, delta, ...,
        significant``, each variant against ``control``) or
        ``interleaving_test`` (``ranker_a, ranker_b, delta_ab, ...,
        significant``; metric ``"interleaving"``). Either frame may be of
        either kind.
    by : str or list of str, optional
        Slice columns present in both frames; each slice is compared apart.
    systems : mapping of str to str, optional
        Offline system name -> online name, where they differ (``{"bm25":
        "control", "hybrid": "treatment"}``). Pairs are matched as unordered
        pairs of names; a delta is turned round when a pair is given the
        other way round, so that its sign always says whether the first
        name (in byte order) wins.
    control : str, optional
        The control arm of an A/B frame without a ``control`` column.
    alpha : float, default 0.05
        Significance level where a frame has p-values but no ``significant``.
    higher_is_better : bool or mapping of str to bool, optional
        The direction of metrics the registry does not know (an A/B test's
        own output names, a user's column): one for all, or one per name,
        as in :func:`ireval_df.compare`. Registry metrics bring their own
        (``Abandonment``, ``ZeroResultRate`` and ``TimeToFirstClick`` are
        lower-is-better); an interleaving frame's ``delta_ab`` reads as
        higher-is-better for ``ranker_a``.

    Returns
    -------
    polars.DataFrame
        One row per slice, offline metric and online metric: ``[by],
        offline_metric, online_metric, n_pairs, sign_agreement`` (share of
        matched pairs whose deltas have the same sign; a zero delta agrees
        with nothing), ``n_both_significant, significant_agreement`` (the
        share among pairs significant on both sides), ``n_opposite`` and
        ``opposite_pairs`` (pairs significant in opposite directions, as
        ``"a vs b"``: the real divergences), ``n_systems, kendall_tau``
        (tau-b between the system orderings), ``tau_ap`` (tau_AP of the
        offline ordering against the online one, taken as the truth: does
        the offline metric find the systems users prefer?), and
        ``offline_significant_share``, ``online_significant_share`` (each
        metric's share of significant pairs, its discriminative power).
        A system's place in an ordering is the sum of its deltas over the
        pairs it is in (with every pair against one baseline, the order of
        the means). Deltas are read as "higher is better".

    Raises
    ------
    SchemaError
        A frame is not a frame of comparisons, or lacks a ``by`` column.
    DataError
        No system pair is in both frames.
    MetricSpecError
        A metric the registry does not know, not declared in
        ``higher_is_better`` (an :class:`~ireval_df.errors.OptionError`).
    """
    from ireval_df.stats.paired import require_scipy

    kendalltau = require_scipy("agreement").kendalltau

    by_cols = [by] if isinstance(by, str) else list(by or [])
    mapping = dict(systems or {})
    off = _pairs(
        _frame(offline, "offline"),
        "offline",
        by_cols,
        control,
        mapping,
        alpha,
        higher_is_better,
    )
    on = _pairs(
        _frame(online, "online"),
        "online",
        by_cols,
        control,
        {},
        alpha,
        higher_is_better,
    )
    keys = [*by_cols, *_SIDES]
    joined = off.join(on, on=keys, how="inner", suffix="_on")
    if joined.height == 0:
        off_pairs = off.select(*_SIDES).unique().head(3).rows()
        on_pairs = on.select(*_SIDES).unique().head(3).rows()
        msg = (
            f"no system pair is in both frames: offline has e.g. {off_pairs}, online "
            f"e.g. {on_pairs}.\n  Hint: map offline names to online ones with "
            "systems={'bm25': 'control', ...}."
        )
        raise DataError(msg)
    rows = []
    groups = [*by_cols, "metric", "metric_on"]
    for key, part in joined.sort(groups).group_by(groups, maintain_order=True):
        d_off = part["delta"].to_numpy()
        d_on = part["delta_on"].to_numpy()
        s_off = part["significant"].to_numpy()
        s_on = part["significant_on"].to_numpy()
        same = (d_off * d_on) > 0
        both = s_off & s_on
        opposite = both & ((d_off * d_on) < 0)
        labels = [f"{a} vs {b}" for a, b in part.select(*_SIDES).iter_rows()]
        score_off = _scores(part)
        score_on = _scores(part.select(*_SIDES, delta="delta_on"))
        common = sorted(set(score_off) & set(score_on))
        x = [score_off[s] for s in common]
        y = [score_on[s] for s in common]
        if len(common) >= 2:
            tau = float(kendalltau(x, y).statistic)
            tap = tau_ap(y, x)
        else:
            tau = tap = math.nan
        n = part.height
        rows.append(
            {
                **dict(zip(groups, key, strict=True)),
                "n_pairs": n,
                "sign_agreement": float(same.mean()),
                "n_both_significant": int(both.sum()),
                "significant_agreement": (
                    float(same[both].mean()) if both.any() else None
                ),
                "n_opposite": int(opposite.sum()),
                "opposite_pairs": [
                    lab for lab, o in zip(labels, opposite, strict=True) if o
                ],
                "n_systems": len(common),
                "kendall_tau": None if math.isnan(tau) else tau,
                "tau_ap": None if math.isnan(tap) else tap,
                "offline_significant_share": float(s_off.mean()),
                "online_significant_share": float(s_on.mean()),
            }
        )
    result = pl.DataFrame(rows).rename(
        {"metric": "offline_metric", "metric_on": "online_metric"}
    )
    return result.with_columns(
        pl.col("significant_agreement", "kendall_tau", "tau_ap").cast(pl.Float64),
        pl.col("opposite_pairs").cast(pl.List(pl.String)),
    )
