"""``gate()``: a regression gate, a non-inferiority test per metric and slice.

Three kinds of frame, told apart by their columns (never by a family's code):

- a per-query frame of several runs (``run_id, query_id, metric, value``):
  each run against ``baseline``, a one-sided paired t-test of
  ``H0: the run is worse than the baseline by at least margin``;
- a per-query frame with ``minimum=`` (a similarity result, or any
  higher-is-better per-query score): a one-sample t-test of
  ``H0: the mean is at most minimum`` per run (and baseline) and slice;
- an A/B-test result (``variant, metric, delta, ci_low, ci_high``, as
  :func:`ireval_df.online.ab_test` returns): its interval against the
  margin.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df.errors import AlignmentError, OptionError
from ireval_df.measures.properties import properties
from ireval_df.stats.corrections import adjust
from ireval_df.stats.distributions import t_ppf, t_two_sided
from ireval_df.stats.frames import (
    check_choice,
    check_unique,
    declared,
    metric_table,
    output,
    pair_names,
    reference_slice,
    run_order,
    run_pairs,
    slice_columns,
    to_frame,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ireval_df.measures.properties import AggregateOption, Direction
    from ireval_df.stats.comparison import Missing
    from ireval_df.stats.corrections import Correction

__all__ = ["VERDICTS", "gate"]

#: ``verdict``: non-inferiority shown; not shown (the interval straddles the
#: margin, or too few queries); worse (the whole interval beyond the margin)
VERDICTS: tuple[str, ...] = ("passed", "not shown", "worse")
_CORRECTIONS: tuple[str | None, ...] = ("holm", "bonferroni", "bh", "by", "none", None)

PAIRED_COLUMNS = [
    "n_queries",
    "baseline_mean",
    "candidate_mean",
    "delta",
    "ci_low",
    "ci_high",
    "margin",
    "p_value",
    "p_adjusted",
    "passed",
    "verdict",
]
THRESHOLD_COLUMNS = [
    "n_queries",
    "mean",
    "ci_low",
    "ci_high",
    "minimum",
    "p_value",
    "p_adjusted",
    "passed",
    "verdict",
]
AB_COLUMNS = [
    "n_control",
    "n_treatment",
    "control_mean",
    "treatment_mean",
    "delta",
    "ci_low",
    "ci_high",
    "margin",
    "passed",
    "verdict",
]


def _number(name: str, value: object, *, low: float, high: float | None) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or math.isnan(value)
        or value < low
        or (high is not None and value >= high)
    ):
        bound = f"at least {low:g}" if high is None else f"in [{low:g}, {high:g})"
        msg = f"{name} must be a number {bound}, found {value!r}."
        raise OptionError(msg)
    return float(value)


def _upper_tail(t: float, df: int) -> float:
    """``P(T >= t)`` for Student's t with ``df`` degrees of freedom."""
    two = t_two_sided(t, df)
    return two / 2.0 if t > 0 else 1.0 - two / 2.0


def _one_sided(
    n: int, shift: float, sd: float | None, alpha: float
) -> tuple[float, float]:
    """P-value of ``H0: mean <= 0`` for values of mean ``shift``, and the half-width.

    The half-width is ``t(1 - alpha, n - 1) * sd / sqrt(n)``: the two-sided
    ``1 - 2 alpha`` interval, whose ends are the one-sided ``1 - alpha``
    bounds. NaN for fewer than two values.
    """
    if n < 2 or math.isnan(shift):
        return math.nan, math.nan
    if sd is None or math.isnan(sd) or sd == 0.0:
        return (0.0 if shift > 0 else 1.0), 0.0
    se = sd / math.sqrt(n)
    return _upper_tail(shift / se, n - 1), t_ppf(1.0 - alpha, n - 1) * se


def _verdicts(
    p_adjusted: list[float | None], beyond: list[bool | None], alpha: float
) -> tuple[list[bool], list[str]]:
    passed = [p is not None and not math.isnan(p) and p < alpha for p in p_adjusted]
    verdict = [
        "passed" if ok else ("worse" if b else "not shown")
        for ok, b in zip(passed, beyond, strict=True)
    ]
    return passed, verdict


def _corrected(p: list[float], correction: Correction | None) -> list[float | None]:
    import numpy as np

    values = np.array(p, dtype=np.float64)
    tested = ~np.isnan(values)
    out = np.full(len(values), np.nan)
    out[tested] = adjust(values[tested], correction)
    return [None if math.isnan(v) else float(v) for v in out.tolist()]


def gate(
    frame: Any,
    *,
    baseline: str | None = None,
    margin: float | None = None,
    minimum: float | None = None,
    relative: bool = False,
    by: str | Sequence[str] | None = None,
    alpha: float = 0.05,
    correction: Correction | Literal["none"] | None = "holm",
    missing: Missing | None = None,
    higher_is_better: Direction = None,
    aggregate: AggregateOption = None,
) -> Any:
    """Gate runs on non-inferiority: none may be worse than its baseline by a margin.

    Parameters
    ----------
    frame : polars or pandas DataFrame
        A per-query frame (``run_id, query_id, metric, value`` and the ``by``
        columns), as :func:`ireval_df.evaluate` or
        :func:`ireval_df.similarity` return; or an A/B-test result
        (``variant, metric, delta, ci_low, ci_high, ...``), as
        :func:`ireval_df.online.ab_test` returns.
    baseline : str, optional
        Per-query frames with ``margin``: the run every other run is gated
        against (required).
    margin : float, optional
        How much worse than the baseline a run may be, in the metric's
        units (``>= 0``); with ``relative=True`` a share of the baseline's
        mean (``0.01`` is 1%). Required unless ``minimum`` is given.
    minimum : float, optional
        Per-query frames only, instead of ``baseline`` and ``margin``: the
        mean of every run (and slice) must be above this value, e.g. a mean
        RBO of 0.9 against the production ranking (a no-change gate).
    relative : bool, default False
        ``margin`` is a share of the baseline's mean (of ``control_mean``
        for an A/B result, whose relative interval is then used).
    by : str or list of str, optional
        Slice columns: every test is repeated within each slice (A/B
        results keep the slices they were computed with).
    alpha : float, default 0.05
        One-sided level: a row passes when its corrected p-value is below it.
    correction : {"holm", "bonferroni", "bh", "by", "none"} or None, default "holm"
        Multiple-testing correction over every (run, slice, metric) row of
        the call, as :func:`ireval_df.compare`.
    missing : {"zero", "skip", "error"} or None, default None
        A query with a value for only one of the run and the baseline, as
        :func:`ireval_df.compare` (None: ``evaluate()``'s policy, else "zero").
    higher_is_better : bool or mapping of str to bool, optional
        The direction of metrics the registry does not know.
    aggregate : {"mean"} or mapping of str to str, optional
        Declares metrics the registry does not know; the gate compares means
        and refuses other aggregations.

    Returns
    -------
    Frame of the same kind as ``frame``
        Paired: ``run_id, baseline, [by...], metric, n_queries,
        baseline_mean, candidate_mean, delta, ci_low, ci_high, margin,
        p_value, p_adjusted, passed, verdict``. With ``minimum``: ``run_id,
        [baseline,] [by...], metric, n_queries, mean, ci_low, ci_high,
        minimum, p_value, p_adjusted, passed, verdict``. A/B: ``variant,
        [slices...], metric, n_control, n_treatment, control_mean,
        treatment_mean, delta, ci_low, ci_high, margin, passed, verdict``
        (relative deltas and intervals with ``relative=True``).

    Raises
    ------
    OptionError
        A missing or negative ``margin``, an unknown baseline or option,
        a lower-is-better metric with ``minimum``, a non-mean aggregation.
    AlignmentError
        A run shares no query with its baseline.
    SchemaError
        A needed column is absent.
    MetricSpecError
        A metric name neither the registry knows nor ``higher_is_better`` declares.

    Notes
    -----
    For a higher-is-better metric, with ``d`` the per-query differences
    (run minus baseline) and ``m`` the margin, the p-value is that of the
    one-sided t-test of ``H0: mean(d) <= -m`` against ``mean(d) > -m``, i.e.
    ``scipy.stats.ttest_1samp(d + m, 0, alternative="greater")``; for a
    lower-is-better metric the same on ``-d``. ``ci_low, ci_high`` is the
    two-sided ``1 - 2 alpha`` t interval of ``delta`` (uncorrected), whose
    end on the harmful side is the one-sided ``1 - alpha`` bound the test
    compares with the margin.

    A row *passes* when its corrected p-value is below ``alpha``:
    non-inferiority is shown. A row that does not pass is ``"worse"`` when
    the whole interval lies beyond the margin on the harmful side (the run
    is shown to be worse by more than the margin), else ``"not shown"``
    (the interval straddles the margin: too few queries, or too much
    noise). Fewer than two queries give no test: ``"not shown"``. With
    ``margin=0`` the test is one of superiority: an identical run does not
    pass.

    ``minimum`` tests ``H0: mean <= minimum`` (one-sample, one-sided t) per
    run, baseline (a similarity frame's baseline is a slice) and slice; a
    row is ``"worse"`` when its whole interval is below ``minimum``. A
    constant per-query value (every RBO 1) above ``minimum`` passes.

    An A/B result already carries its interval (two-sided, at the level of
    its own ``alpha``): a row passes when the interval's end on the harmful
    side (``ci_low`` for a higher-is-better metric) is within the margin,
    and is ``"worse"`` when the whole interval is beyond it. Untested rows
    (``reason`` set) do not pass. No further correction is applied: a
    two-sided ``1 - 2 alpha`` interval is the one-sided test at ``alpha``;
    for a family of k rows, compute the A/B result with ``alpha=2 * alpha /
    k`` (Bonferroni).

    Examples
    --------
    >>> per_query = pl.DataFrame({
    ...     "run_id": ["prod"] * 4 + ["new"] * 4,
    ...     "query_id": ["1", "2", "3", "4"] * 2,
    ...     "metric": "AP",
    ...     "value": [0.5, 0.4, 0.6, 0.3, 0.5, 0.42, 0.59, 0.3],
    ... })
    >>> row = gate(per_query, baseline="prod", margin=0.05).row(0, named=True)
    >>> row["run_id"], round(row["delta"], 4), round(row["p_value"], 4), row["verdict"]
    ('new', 0.0025, 0.0018, 'passed')
    """
    check_choice("correction", correction, _CORRECTIONS)
    alpha = _number("alpha", alpha, low=0.0, high=1.0)
    if alpha == 0.0:
        msg = "alpha must be a number in (0, 1), found 0."
        raise OptionError(msg)
    if correction == "none":
        correction = None
    slices = slice_columns(by)
    kind = frame
    polars_frame = to_frame(frame, ["metric"])
    if {"variant", "delta", "ci_low", "ci_high"} <= set(polars_frame.columns):
        if margin is None:
            msg = "gating an A/B result needs margin= (how much worse is acceptable)."
            raise OptionError(msg)
        return _gate_ab(
            polars_frame,
            kind,
            _number("margin", margin, low=0.0, high=None),
            relative=relative,
            higher_is_better=higher_is_better,
        )
    if minimum is not None:
        if margin is not None or baseline is not None:
            msg = (
                "minimum= is a gate against a fixed value; it takes neither margin= "
                "nor baseline=.\n  Hint: pass minimum= alone (similarity results), "
                "or baseline= and margin= (a run against a baseline)."
            )
            raise OptionError(msg)
        return _gate_threshold(
            polars_frame,
            kind,
            _number("minimum", minimum, low=-math.inf, high=None),
            slices,
            alpha,
            correction,
            higher_is_better,
            aggregate,
        )
    if margin is None or baseline is None:
        msg = (
            "gate() needs baseline= and margin= (or minimum= for a gate on a fixed "
            f"value); found baseline={baseline!r}, margin={margin!r}.\n"
            "  Hint: e.g. gate(per_query, baseline='prod', margin=0.01)."
        )
        raise OptionError(msg)
    return _gate_paired(
        polars_frame,
        kind,
        baseline,
        _number("margin", margin, low=0.0, high=None),
        relative,
        slices,
        alpha,
        correction,
        missing,
        higher_is_better,
        aggregate,
    )


def _only_means(table: pl.DataFrame) -> None:
    other = table.filter(pl.col("__kind") != "mean")["metric"].to_list()
    if other:
        msg = (
            f"the gate compares means; metric(s) {other!r} aggregate otherwise.\n"
            "  Hint: gate metrics whose per-query values combine by their mean."
        )
        raise OptionError(msg)


def _gate_paired(
    frame: pl.DataFrame,
    like: Any,
    baseline: str,
    margin: float,
    relative: bool,  # noqa: FBT001
    slices: list[str],
    alpha: float,
    correction: Correction | None,
    missing: Missing | None,
    higher_is_better: Direction,
    aggregate: AggregateOption,
) -> Any:
    from ireval_df.stats.comparison import paired_values, resolve_missing

    frame = to_frame(frame, ["run_id", "query_id", "metric", "value", *slices])
    frame, slices = reference_slice(frame, slices, "reference")
    check_unique(frame, ["run_id", "query_id", "metric", *slices])
    policy = resolve_missing(like, missing)
    runs = run_order(frame)
    if baseline not in runs:
        msg = (
            f"baseline {baseline!r} is not a run of these results; the runs are "
            f"{runs!r}.\n  Hint: pass one of the run ids."
        )
        raise OptionError(msg)
    pairs = run_pairs(runs, baseline)
    metrics = [str(m) for m in frame["metric"].unique(maintain_order=True).to_list()]
    table = metric_table(
        metrics, higher_is_better=higher_is_better, aggregate=aggregate
    )
    _only_means(table)
    paired = paired_values(frame, pairs, slices, "zero" if policy == "zero" else "skip")
    shared = (
        paired.group_by("__pair")
        .agg((~pl.col("__missing")).sum().alias("__both"))
        .filter(pl.col("__both") == 0)
    )
    if shared.height:
        run, base = pairs[int(shared["__pair"][0])]
        msg = (
            f"run {run!r} and baseline {base!r} share no query: nothing to gate, "
            "and a gate without evidence never passes.\n  Hint: check that both "
            "runs answer the same queries (query ids spelled alike)."
        )
        raise AlignmentError(msg)
    if policy == "error":
        paired_values(frame, pairs, slices, "error")
    paired = paired.join(table, on="metric").with_columns(
        (pl.col("__x") - pl.col("__y")).alias("__d")
    )
    keys = ["__pair", *slices, "__m"]
    groups = (
        paired.group_by(keys)
        .agg(
            pl.col("metric").first(),
            pl.col("__sign").first(),
            pl.col("__d").is_not_null().sum().cast(pl.Int64).alias("n_queries"),
            pl.col("__y").mean().alias("baseline_mean"),
            pl.col("__x").mean().alias("candidate_mean"),
            pl.col("__d").mean().alias("delta"),
            pl.col("__d").std().alias("__sd"),
        )
        .sort(keys, nulls_last=True)
    )
    p, low, high, margins, beyond = [], [], [], [], []
    for row in groups.iter_rows(named=True):
        sign, delta = row["__sign"], row["delta"]
        base = row["baseline_mean"]
        m = margin * abs(base) if relative and base is not None else margin
        mean = math.nan if delta is None else float(delta)
        pv, half = _one_sided(row["n_queries"], sign * mean + m, row["__sd"], alpha)
        p.append(pv)
        margins.append(m)
        lo, hi = mean - half, mean + half
        low.append(lo)
        high.append(hi)
        good_end = hi if sign > 0 else -lo
        beyond.append(None if math.isnan(good_end) else good_end < -m)
    p_adjusted = _corrected(p, correction)
    passed, verdict = _verdicts(p_adjusted, beyond, alpha)
    result = (
        groups.with_columns(
            pl.Series("ci_low", low, dtype=pl.Float64).fill_nan(None),
            pl.Series("ci_high", high, dtype=pl.Float64).fill_nan(None),
            pl.Series("margin", margins, dtype=pl.Float64),
            pl.Series("p_value", p, dtype=pl.Float64).fill_nan(None),
            pl.Series("p_adjusted", p_adjusted, dtype=pl.Float64),
            pl.Series("passed", passed, dtype=pl.Boolean),
            pl.Series("verdict", verdict, dtype=pl.String),
        )
        .join(pair_names(pairs), on="__pair")
        .sort(keys, nulls_last=True)
        .select("run_id", "baseline", *slices, "metric", *PAIRED_COLUMNS)
    )
    settings = {
        "gate": "paired t, non-inferiority",
        "margin": margin,
        "relative": relative,
        "alpha": alpha,
        "correction": correction,
        "ci": f"t, {1.0 - 2.0 * alpha:.0%} two-sided (one-sided {1.0 - alpha:.0%})",
        "missing_in_pair": policy,
        "gate_by": slices,
        "baseline": baseline,
        "family_size": sum(not math.isnan(v) for v in p),
    }
    settings.update(declared(metrics, higher_is_better, aggregate))
    return output(result, like, settings)


def _gate_threshold(
    frame: pl.DataFrame,
    like: Any,
    minimum: float,
    slices: list[str],
    alpha: float,
    correction: Correction | None,
    higher_is_better: Direction,
    aggregate: AggregateOption,
) -> Any:
    frame = to_frame(frame, ["run_id", "query_id", "metric", "value", *slices])
    frame, slices = reference_slice(frame, slices, "baseline")
    check_unique(frame, ["run_id", "query_id", "metric", *slices])
    metrics = [str(m) for m in frame["metric"].unique(maintain_order=True).to_list()]
    table = metric_table(
        metrics, higher_is_better=higher_is_better, aggregate=aggregate
    )
    _only_means(table)
    lower = table.filter(pl.col("__sign") < 0)["metric"].to_list()
    if lower:
        msg = (
            f"minimum= gates higher-is-better measures; {lower!r} are lower-is-better.\n"
            "  Hint: gate them against a baseline with margin= instead."
        )
        raise OptionError(msg)
    if frame.filter(pl.col("value").is_not_null()).is_empty():
        msg = "no per-query value to gate: the frame is empty, and an empty gate never passes."
        raise AlignmentError(msg)
    keys = ["run_id", *slices, "__m"]
    groups = (
        frame.join(table, on="metric")
        .group_by(keys)
        .agg(
            pl.col("metric").first(),
            pl.col("value").is_not_null().sum().cast(pl.Int64).alias("n_queries"),
            pl.col("value").cast(pl.Float64).mean().alias("mean"),
            pl.col("value").cast(pl.Float64).std().alias("__sd"),
        )
        .sort(keys, nulls_last=True)
    )
    p, low, high, beyond = [], [], [], []
    for row in groups.iter_rows(named=True):
        mean = math.nan if row["mean"] is None else float(row["mean"])
        pv, half = _one_sided(row["n_queries"], mean - minimum, row["__sd"], alpha)
        p.append(pv)
        low.append(mean - half)
        high.append(mean + half)
        beyond.append(None if math.isnan(half) else mean + half < minimum)
    p_adjusted = _corrected(p, correction)
    passed, verdict = _verdicts(p_adjusted, beyond, alpha)
    result = groups.with_columns(
        pl.Series("ci_low", low, dtype=pl.Float64).fill_nan(None),
        pl.Series("ci_high", high, dtype=pl.Float64).fill_nan(None),
        pl.lit(minimum, dtype=pl.Float64).alias("minimum"),
        pl.Series("p_value", p, dtype=pl.Float64).fill_nan(None),
        pl.Series("p_adjusted", p_adjusted, dtype=pl.Float64),
        pl.Series("passed", passed, dtype=pl.Boolean),
        pl.Series("verdict", verdict, dtype=pl.String),
    ).select("run_id", *slices, "metric", *THRESHOLD_COLUMNS)
    settings = {
        "gate": "one-sample t, mean above a minimum",
        "minimum": minimum,
        "alpha": alpha,
        "correction": correction,
        "ci": f"t, {1.0 - 2.0 * alpha:.0%} two-sided (one-sided {1.0 - alpha:.0%})",
        "gate_by": slices,
        "family_size": sum(not math.isnan(v) for v in p),
    }
    settings.update(declared(metrics, higher_is_better, aggregate))
    return output(result, like, settings)


def _gate_ab(
    frame: pl.DataFrame,
    like: Any,
    margin: float,
    *,
    relative: bool,
    higher_is_better: Direction,
) -> Any:
    needed = ["control_mean", "treatment_mean"]
    if relative:
        needed += ["delta_rel", "rel_ci_low", "rel_ci_high"]
    frame = to_frame(frame, needed)
    if frame.is_empty():
        msg = "the A/B result has no row: nothing to gate, and an empty gate never passes."
        raise AlignmentError(msg)
    metrics = [str(m) for m in frame["metric"].unique(maintain_order=True).to_list()]
    sign = {
        p.metric: 1.0 if p.higher_is_better else -1.0
        for p in properties(metrics, higher_is_better=higher_is_better)
    }
    delta, low, high = (
        ("delta_rel", "rel_ci_low", "rel_ci_high")
        if relative
        else ("delta", "ci_low", "ci_high")
    )
    s = pl.col("metric").replace_strict(sign, return_dtype=pl.Float64)
    harmful = pl.when(s > 0).then(pl.col(low)).otherwise(-pl.col(high))
    good = pl.when(s > 0).then(pl.col(high)).otherwise(-pl.col(low))
    tested = pl.col(low).is_not_null() & pl.col(high).is_not_null()
    if "reason" in frame.columns:
        tested = tested & pl.col("reason").is_null()
    passed = (tested & (harmful > -margin)).fill_null(value=False)
    keys = [
        c
        for c in frame.columns
        if c not in AB_COLUMNS
        and c
        not in (
            "delta_rel",
            "rel_ci_low",
            "rel_ci_high",
            "p_value",
            "p_adjusted",
            "significant",
            "srm_p_value",
            "srm_flag",
            "reason",
        )
    ]
    counts = [c for c in ("n_control", "n_treatment") if c in frame.columns]
    result = frame.select(
        *keys,
        *counts,
        "control_mean",
        "treatment_mean",
        pl.col(delta).alias("delta"),
        pl.col(low).alias("ci_low"),
        pl.col(high).alias("ci_high"),
        pl.lit(margin, dtype=pl.Float64).alias("margin"),
        passed.alias("passed"),
        pl.when(passed)
        .then(pl.lit("passed"))
        .when(tested & (good < -margin))
        .then(pl.lit("worse"))
        .otherwise(pl.lit("not shown"))
        .alias("verdict"),
    )
    settings = {
        "gate": "A/B interval against a margin",
        "margin": margin,
        "relative": relative,
    }
    return output(result, like, settings)
