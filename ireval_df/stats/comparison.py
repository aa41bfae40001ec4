"""``compare()``: paired comparison of runs, per metric and slice, with corrections."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._utils import provenance as _provenance
from ireval_df._utils.progress import Progress
from ireval_df.errors import AlignmentError, OptionError
from ireval_df.stats.corrections import adjust
from ireval_df.stats.distributions import GM_FLOOR
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
from ireval_df.stats.paired import (
    sign_pvalues,
    t_intervals,
    t_pvalues,
    wilcoxon_pvalues,
)
from ireval_df.stats.resampling import (
    blocks,
    bootstrap_blocks,
    bootstrap_pvalues,
    randomization_pvalues,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from numpy.typing import NDArray

    from ireval_df.measures.properties import AggregateOption, Direction
    from ireval_df.stats.corrections import Correction

__all__ = ["TESTS", "Interval", "Missing", "Test", "compare", "paired_values"]

Test = Literal["t", "wilcoxon", "sign", "randomization", "bootstrap"]
Missing = Literal["zero", "skip", "error"]
Interval = Literal["t", "bootstrap"]
TESTS: tuple[str, ...] = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
CORRECTION_WORDS: tuple[str | None, ...] = (
    "holm",
    "bonferroni",
    "bh",
    "by",
    "none",
    None,
)
#: Differences within this share of the larger value are ties (float noise).
TIE_TOLERANCE = 1e-12

OUTPUT_STATS = [
    "n_queries",
    "n_missing",
    "mean",
    "baseline_mean",
    "delta",
    "delta_rel",
    "ci_low",
    "ci_high",
    "p_value",
    "p_adjusted",
    "significant",
    "wins",
    "ties",
    "losses",
    "effect_size",
]


def _check_options(
    test: str, correction: str | None, alpha: float, n_resamples: int, ci: str | None
) -> None:
    check_choice("test", test, TESTS)
    check_choice("correction", correction, CORRECTION_WORDS)
    check_choice("ci", ci, ("t", "bootstrap", None))
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, int | float)
        or not 0.0 < alpha < 1.0
    ):
        msg = f"alpha must be a number between 0 and 1 (exclusive), found {alpha!r}."
        raise OptionError(msg)
    if (
        isinstance(n_resamples, bool)
        or not isinstance(n_resamples, int)
        or n_resamples < 1
    ):
        msg = f"n_resamples must be a positive whole number, found {n_resamples!r}."
        raise OptionError(msg)


def resolve_missing(per_query: Any, missing: str | None) -> Missing:
    """Return the policy for queries in one run only (default: evaluate()'s)."""
    if missing is None:
        recorded = (_provenance.settings_of(per_query) or {}).get("missing")
        return recorded if recorded in ("zero", "skip", "error") else "zero"
    check_choice("missing", missing, ("zero", "skip", "error"))
    return missing  # type: ignore[return-value]


def paired_values(
    frame: pl.DataFrame,
    pairs: Sequence[tuple[str, str]],
    slices: Sequence[str],
    missing: Missing,
) -> pl.DataFrame:
    """Pair each run's per-query values with its baseline's, by query id and slice.

    The slices are part of the key: a query has one value per slice of the
    documents (``evaluate(..., by_doc=...)``), and the same value in every
    slice of the queries it belongs to.

    Returns ``__pair, query_id, metric, slices..., __x, __y, __missing``,
    where ``__missing`` marks a query present in only one of the two runs,
    filled with 0 (``missing="zero"``) or dropped (``"skip"``) afterwards.
    """
    pair_frame = pl.DataFrame(
        {
            "run_id": [r for r, _ in pairs],
            "baseline": [b for _, b in pairs],
            "__pair": list(range(len(pairs))),
        },
        schema={"run_id": pl.String, "baseline": pl.String, "__pair": pl.Int64},
    )
    base = frame.select("run_id", "query_id", "metric", "value", *slices).with_columns(
        pl.col("run_id").cast(pl.String), pl.col("value").cast(pl.Float64)
    )
    left = pair_frame.join(base.rename({"value": "__x"}), on="run_id").drop(
        "run_id", "baseline"
    )
    right = pair_frame.join(
        base.rename({"run_id": "baseline", "value": "__y"}), on="baseline"
    ).drop("run_id", "baseline")
    paired = left.join(
        right,
        on=["__pair", "query_id", "metric", *slices],
        how="full",
        coalesce=True,
        nulls_equal=True,
    ).with_columns(
        (pl.col("__x").is_null() | pl.col("__y").is_null()).alias("__missing"),
    )
    absent = paired.filter(pl.col("__missing"))
    if absent.height and missing == "error":
        example = absent.sort("__pair", "query_id").row(0, named=True)
        run, baseline = pairs[example["__pair"]]
        side = run if example["__x"] is None else baseline
        msg = (
            f"{absent.height} (pair, query, metric) values are missing from one "
            f"run of a pair, e.g. query {example['query_id']!r} "
            f"({example['metric']}) has no value for run "
            f"{side!r} (compared: {run!r} vs {baseline!r}).\n  Hint: pass missing='zero' "
            "(count it as an empty ranking) or missing='skip' (leave the query out of that pair)."
        )
        raise AlignmentError(msg)
    if missing == "skip":
        return paired.with_columns(
            pl.when(pl.col("__missing")).then(None).otherwise(pl.col(c)).alias(c)
            for c in ("__x", "__y")
        )
    return paired.with_columns(
        pl.col("__x").fill_null(0.0), pl.col("__y").fill_null(0.0)
    )


def compare(
    per_query: Any,
    *,
    baseline: str | Sequence[str] | None = None,
    test: Test = "t",
    correction: Correction | Literal["none"] | None = "holm",
    by: str | Sequence[str] | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    missing: Missing | None = None,
    ci: Interval | None = None,
    higher_is_better: Direction = None,
    aggregate: AggregateOption = None,
) -> Any:
    """Compare runs query by query: deltas, intervals, tests, corrections.

    Parameters
    ----------
    per_query : polars or pandas DataFrame
        The output of :func:`ireval_df.evaluate`: ``run_id, query_id, metric,
        value`` and, for ``by``, query attribute columns.
    baseline : str, list of str or None, default None
        The run every other run is compared with; several baselines (each
        run against each, a pair never twice); None compares all pairs.
    test : {"t", "wilcoxon", "sign", "randomization", "bootstrap"}, default "t"
        Two-sided paired test on the per-query differences: Student's t
        (as ``scipy.stats.ttest_rel``), Wilcoxon's signed rank (calls
        ``scipy.stats.wilcoxon`` with its defaults; needs the ``stats``
        extra), the exact sign test (binomial, ties left out), Fisher's
        randomization test (sign flips; exact up to 20 queries, else
        ``n_resamples`` random flips), or the paired bootstrap (shift method).
    correction : {"holm", "bonferroni", "bh", "by", "none"} or None, default "holm"
        Multiple-testing correction over the family of every comparison of
        the call (run pairs x metrics x slices), as statsmodels'
        ``multipletests`` (``bh`` = ``fdr_bh``, ``by`` = ``fdr_by``); ``"none"``
        (the command line's spelling) or None leaves the p-values as they are.
    by : str or list of str, optional
        Slice columns: every comparison is repeated within each slice.
    alpha : float, default 0.05
        Significance level, and ``1 - alpha`` is the interval's coverage.
    n_resamples : int, default 10000
        Resamples of the randomization (above 20 queries) and bootstrap.
    seed : int or None, default 0
        Seed of the resampling; the same seed gives the same result.
    missing : {"zero", "skip", "error"} or None, default None
        A query with a value for only one run of a pair: scored 0 for the
        other run, left out of that pair, or an error. None follows the
        policy ``evaluate()`` recorded for ``per_query`` ("zero" if none).
        Such queries are counted in ``n_missing`` either way.
    ci : {"t", "bootstrap"} or None, default None
        Interval of the mean paired difference: Student's t, or percentile
        paired bootstrap. None: bootstrap for ``test="bootstrap"``, else t.

    higher_is_better : bool or mapping of str to bool, optional
        The direction of metrics the registry does not know (a user's own
        per-query column, e.g. ``{"latency_ms": False}``): one for all, or
        one per name. Registry metrics bring their own.
    aggregate : {"mean", "sum", "gmean"} or mapping of str to str, optional
        How the values of metrics the registry does not know combine
        (default ``"mean"``).

    Returns
    -------
    Frame of the same kind as ``per_query``
        One row per (run, baseline, slice, metric): ``run_id, baseline,
        [by...], metric, n_queries, n_missing, mean, baseline_mean, delta,
        delta_rel, ci_low, ci_high, p_value, p_adjusted, significant, wins,
        ties, losses, effect_size``.

    Raises
    ------
    SchemaError
        A needed or ``by`` column is absent.
    DataError
        Fewer than two runs, or a (run, query, metric) appears twice.
    AlignmentError
        ``missing="error"`` and a query lacks a value for one run of a pair.
    MetricSpecError
        A metric name the registry does not know.
    IrevalError
        An unknown option or baseline; ``test="wilcoxon"`` without scipy.

    See Also
    --------
    tukey_hsd : all-pairs comparison controlling the family-wise error.
    ireval_df.to_markdown : a table with significance markers.

    Notes
    -----
    Pairing is by ``query_id``. ``delta = mean - baseline_mean`` and
    ``delta_rel = delta / baseline_mean``; ``effect_size`` is Cohen's
    ``d_z`` (mean difference over its standard deviation). ``wins``,
    ``ties`` and ``losses`` count queries where the run is better, equal
    (differences within 1e-12 relative are ties) or worse, following the
    metric's direction (``higher_is_better``). Metrics that aggregate by
    geometric mean (``gmAP``) are compared on the logarithm of the values
    (floored at 1e-5, as trec_eval): ``mean`` is then the geometric mean and
    the interval, test and effect size are for the mean log ratio.

    A p-value is 1 when every difference is 0 and NaN (null, outside the
    correction family) for fewer than two queries (t), or none.
    ``significant`` is ``p_adjusted <= alpha``. Monte Carlo p-values are
    ``(1 + hits) / (n_resamples + 1)``, never 0.

    Examples
    --------
    >>> import polars as pl
    >>> per_query = pl.DataFrame({
    ...     "run_id": ["a"] * 4 + ["b"] * 4,
    ...     "query_id": ["1", "2", "3", "4"] * 2,
    ...     "metric": "AP",
    ...     "value": [0.1, 0.2, 0.3, 0.4, 0.3, 0.3, 0.5, 0.7],
    ... })
    >>> row = compare(per_query, baseline="a").row(0, named=True)
    >>> row["run_id"], row["baseline"], round(row["delta"], 3), round(row["p_value"], 4)
    ('b', 'a', 0.2, 0.0163)
    >>> row["wins"], row["ties"], row["losses"], round(row["effect_size"], 3)
    (4, 0, 0, 2.449)
    """
    import numpy as np

    _check_options(test, correction, alpha, n_resamples, ci)
    if correction == "none":
        correction = None
    interval: Interval = (
        ci if ci is not None else ("bootstrap" if test == "bootstrap" else "t")
    )
    slices = slice_columns(by)
    frame = to_frame(per_query, ["run_id", "query_id", "metric", "value", *slices])
    frame, slices = reference_slice(frame, slices, "reference")
    check_unique(frame, ["run_id", "query_id", "metric", *slices])
    policy = resolve_missing(per_query, missing)
    runs = run_order(frame)
    pairs = run_pairs(runs, baseline)
    metrics = [str(m) for m in frame["metric"].unique(maintain_order=True).to_list()]
    table = metric_table(
        metrics, higher_is_better=higher_is_better, aggregate=aggregate
    )

    paired = paired_values(frame, pairs, slices, policy).join(table, on="metric")
    logged = pl.col("__kind") == "gmean"

    def scale(c: str) -> pl.Expr:
        return (
            pl.when(logged)
            .then(pl.col(c).clip(lower_bound=GM_FLOOR).log())
            .otherwise(pl.col(c))
        )

    x, y = pl.col("__x"), pl.col("__y")
    raw = x - y
    tiny = TIE_TOLERANCE * pl.max_horizontal(x.abs(), y.abs())
    paired = (
        paired.with_columns(scale("__x").alias("__x"), scale("__y").alias("__y"))
        .with_columns(pl.when(raw.abs() <= tiny).then(0.0).otherwise(raw).alias("__d"))
        .with_columns((pl.col("__d") * pl.col("__sign")).alias("__better"))
    )
    keys = ["__pair", *slices, "__m"]
    present = pl.col("__d").is_not_null()
    groups = (
        paired.group_by(keys)
        .agg(
            pl.col("metric").first(),
            pl.col("__kind").first(),
            present.sum().cast(pl.Int64).alias("n_queries"),
            pl.col("__missing").sum().cast(pl.Int64).alias("n_missing"),
            x.mean().alias("__mx"),
            y.mean().alias("__my"),
            pl.col("__d").mean().alias("__md"),
            pl.col("__d").std().alias("__sd"),
            (pl.col("__better") > 0).sum().cast(pl.Int64).alias("wins"),
            (pl.col("__d") == 0).sum().cast(pl.Int64).alias("ties"),
            (pl.col("__better") < 0).sum().cast(pl.Int64).alias("losses"),
        )
        .sort(keys, nulls_last=True)
        .with_row_index("__g")
        .with_columns(pl.col("__g").cast(pl.Int64))
    )
    rows = (
        paired.filter(present)
        .join(groups.select(*keys, "__g"), on=keys, nulls_equal=True)
        .select("__g", "query_id", "__d")
        .sort("__g", "query_id")
    )
    d = rows["__d"].to_numpy().astype(np.float64)
    n = groups["n_queries"].to_numpy().astype(np.int64)
    mean_d = groups["__md"].fill_null(np.nan).to_numpy().astype(np.float64)
    sd = groups["__sd"].fill_null(np.nan).to_numpy().astype(np.float64)
    rng = np.random.default_rng(seed)

    p = _pvalues(test, d, n, mean_d, sd, groups, rng, n_resamples)
    if interval == "t":
        low, high = t_intervals(n, mean_d, sd, 1.0 - alpha)
    else:
        low, high = np.full(len(n), np.nan), np.full(len(n), np.nan)
    if test == "bootstrap" or interval == "bootstrap":
        scale_abs = np.bincount(
            rows["__g"].to_numpy(), weights=np.abs(d), minlength=len(n)
        ).astype(np.float64)
        quantiles = [alpha / 2.0, 1.0 - alpha / 2.0]

        def reduce(ids: NDArray[np.int64], means: NDArray[np.float64]) -> None:
            if test == "bootstrap":
                p[ids] = bootstrap_pvalues(means, mean_d[ids], scale_abs[ids])
            if interval == "bootstrap":
                low[ids], high[ids] = np.quantile(means, quantiles, axis=0)

        parts = blocks(rows, "__g", "query_id", "__d")
        bootstrap_blocks(parts, n_resamples, rng, reduce)
    p = np.where(n >= (2 if test == "t" else 1), p, np.nan)
    low = np.where(n >= 2, low, np.nan)
    high = np.where(n >= 2, high, np.nan)

    tested = ~np.isnan(p)
    p_adjusted = np.full(len(p), np.nan)
    p_adjusted[tested] = adjust(p[tested], correction)

    gm = pl.col("__kind") == "gmean"

    def back(c: str) -> pl.Expr:
        return pl.when(gm).then(pl.col(c).exp()).otherwise(pl.col(c))

    result = (
        groups.with_columns(
            pl.Series("ci_low", low, nan_to_null=True),
            pl.Series("ci_high", high, nan_to_null=True),
            pl.Series("p_value", p, nan_to_null=True),
            pl.Series("p_adjusted", p_adjusted, nan_to_null=True),
            back("__mx").alias("mean"),
            back("__my").alias("baseline_mean"),
            pl.when(pl.col("__sd") > 0)
            .then(pl.col("__md") / pl.col("__sd"))
            .alias("effect_size"),
        )
        .with_columns(
            (pl.col("mean") - pl.col("baseline_mean")).alias("delta"),
            (pl.col("p_adjusted") <= alpha).alias("significant"),
        )
        .with_columns(
            pl.when(pl.col("baseline_mean") != 0)
            .then(pl.col("delta") / pl.col("baseline_mean"))
            .alias("delta_rel"),
        )
    )
    names = pair_names(pairs)
    result = (
        result.join(names, on="__pair")
        .sort("__g")
        .select("run_id", "baseline", *slices, "metric", *OUTPUT_STATS)
    )
    settings = {
        "test": test,
        "correction": correction,
        "alpha": alpha,
        "ci": f"{interval}, {1.0 - alpha:.0%} of the mean paired difference",
        "n_resamples": n_resamples,
        "seed": seed,
        "missing_in_pair": policy,
        "compare_by": slices,
        "baseline": baseline,
        "family_size": int(tested.sum()),
        "randomization_exact_max": 20,
    }
    settings.update(declared(metrics, higher_is_better, aggregate))
    return output(result, per_query, settings)


def _pvalues(
    test: str,
    d: NDArray[np.float64],
    n: NDArray[np.int64],
    mean_d: NDArray[np.float64],
    sd: NDArray[np.float64],
    groups: pl.DataFrame,
    rng: np.random.Generator,
    n_resamples: int,
) -> NDArray[np.float64]:
    import numpy as np

    if test == "t":
        return t_pvalues(n, mean_d, sd)
    if test == "sign":
        wins = groups["wins"].to_numpy().astype(np.int64)
        losses = groups["losses"].to_numpy().astype(np.int64)
        return np.where(n > 0, sign_pvalues(wins, losses), np.nan)
    if test == "wilcoxon":
        return wilcoxon_pvalues(d, n)
    if test == "randomization":
        sampled = n[n > 20]
        work = n_resamples * int(sampled.max()) * len(sampled) if len(sampled) else 0
        with Progress(n_resamples, "randomization test", work=work) as bar:
            p, _ = randomization_pvalues(d, n, n_resamples, rng, bar=bar)
        return p
    return np.full(len(n), np.nan)
