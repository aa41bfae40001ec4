"""A/B tests on a search log: ``ab_test``, ``srm``, ``power`` and ``aa_test``.

The statistics are family-neutral and live in
:mod:`ireval_df.stats.experiments`, which works on a *unit-level* frame
(one row per randomisation unit). This module builds that frame from a
:class:`~ireval_df.online.SearchLog` once per call
(:func:`~ireval_df.online.unit_table`: each registry metric's per-unit
numerator and denominator, and the ``units`` table's ``pre_*`` columns)
and maps every registry metric to ``Ratio("<name>__num", "<name>__den")``:
a per-search or per-result rate is a ratio of per-unit sums, analysed by
the delta method with the unit, never the search, as the observation
(Kohavi, Tang and Xu 2020, ch. 18; Deng, Knoblich and Lu 2018).
``TimeToFirstClick(stat=median)`` has no per-unit sums and goes through
:func:`~ireval_df.stats.experiments.quantile_test` on per-search rows, a
bootstrap that resamples units.

Every function also takes a unit-level frame (``unit_id, variant`` and
numeric columns) with specs from :func:`mean`, :func:`ratio` and
:func:`proportion`, for logs that are already aggregated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._utils.frames import to_polars
from ireval_df._utils.options import check_choice
from ireval_df.errors import MetricSpecError, OptionError, SchemaError
from ireval_df.online.derive import (
    GROUP,
    UNIT,
    derive,
    named_measures,
    slice_columns,
)
from ireval_df.online.log import SearchLog
from ireval_df.online.metrics import output
from ireval_df.online.units import unit_columns, unit_table
from ireval_df.stats import experiments as ex
from ireval_df.stats.corrections import adjust
from ireval_df.stats.experiments import (
    AB_COLUMNS,
    Mean,
    Proportion,
    Ratio,
    Spec,
    mean,
    proportion,
    ratio,
)
from ireval_df.stats.frames import output as stats_output

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import TypeAlias

    from ireval_df.online.derive import Named
    from ireval_df.stats.corrections import Correction

    #: what :func:`ab_test_on` reads of a log: its unit table (None: no
    #: sums asked for) and, per median metric, its per-search rows and slices
    LogTables: TypeAlias = tuple[
        pl.DataFrame | None, dict[str, tuple[pl.DataFrame, list[str]]]
    ]

__all__ = [
    "aa_test",
    "ab_test",
    "ab_test_on",
    "mean",
    "power",
    "proportion",
    "ratio",
    "srm",
]

_CORRECTIONS: tuple[str | None, ...] = ("holm", "bonferroni", "bh", "by", "none", None)
_SPECS = (Mean, Ratio, Proportion)
_EXPERIMENT = "experiment_id"


# --------------------------------------------------------------------------
# reading the call's metrics


def _split_metrics(
    metrics: Any,
) -> tuple[dict[str, str], dict[str, Spec], list[str]]:
    """Split a log call's metrics into registry metrics and unit-level specs.

    Returns the registry metrics (output name -> registry name), the specs
    (output name -> spec, on the unit table's columns) and the output names
    in the call's order.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    registry: dict[str, str] = {}
    specs: dict[str, Spec] = {}
    order: list[str] = []
    if isinstance(metrics, Mapping):
        items = list(metrics.items())
    else:
        try:
            items = [(str(m), m) for m in metrics]
        except TypeError:
            msg = (
                "metrics must be a registry name, a list of them, or a dict from "
                f"output name to a registry name or a spec; found {metrics!r}."
            )
            raise MetricSpecError(msg) from None
    if not items:
        msg = "no metrics given: pass at least one, e.g. ['CTR', 'ZeroResultRate']."
        raise MetricSpecError(msg)
    for name, spec in items:
        if not isinstance(name, str) or not name:
            msg = f"an output name must be a non-empty string, found {name!r}."
            raise MetricSpecError(msg)
        if name in order:
            msg = f"metric {name!r} is named twice."
            raise MetricSpecError(msg)
        if isinstance(spec, _SPECS):
            specs[name] = spec
        elif isinstance(spec, str):
            registry[name] = spec
        else:
            msg = (
                f"metrics[{name!r}] = {spec!r}: expected a registry name such as "
                "'CTR' or a spec from ie.online.mean/ratio/proportion."
            )
            raise MetricSpecError(msg)
        order.append(name)
    return registry, specs, order


def _registry_specs(
    named: Sequence[Named], table: pl.DataFrame, *, cuped: bool
) -> dict[str, Spec]:
    """``Ratio("<name>__num", "<name>__den")`` per metric (per position of a curve)."""
    specs: dict[str, Spec] = {}
    missing: dict[str, list[str]] = {}
    for n in named:
        positions: list[int] = []
        if n.measure.by_position:
            pattern = re.compile(re.escape(n.name) + r"\[(\d+)\]__num")
            positions = sorted(
                int(m.group(1))
                for c in table.columns
                if (m := pattern.fullmatch(c)) is not None
            )
        for columns in unit_columns({n.name: str(n.metric)}, positions=positions):
            pre = None
            if cuped:
                pre = (
                    f"pre_{columns.numer_quantity}",
                    f"pre_{columns.denom_quantity}",
                )
                absent = [c for c in pre if c not in table.columns]
                if absent:
                    missing[columns.name] = absent
            specs[columns.name] = Ratio(columns.numer, columns.denom, pre)
    if missing:
        present = sorted(c for c in table.columns if c.startswith("pre_"))
        listed = "; ".join(f"{k}: {v!r}" for k, v in missing.items())
        msg = (
            f"cuped=True needs the units table's pre-period columns of each "
            f"metric's per-unit quantities, and these are missing: {listed}. "
            f"The units table has {present!r}.\n  Hint: add them to the log's "
            "units table (pre_<quantity>, summed over the pre-period), or "
            "cuped=False."
        )
        raise SchemaError(msg)
    return specs


def _check_options(correction: Any, alpha: Any, cuped: Any) -> None:
    check_choice("correction", correction, _CORRECTIONS)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float):
        msg = f"alpha must be a number in (0, 1), found {alpha!r}."
        raise OptionError(msg)
    if not 0.0 < alpha < 1.0:
        msg = f"alpha must be in (0, 1), found {alpha!r}."
        raise OptionError(msg)
    if not isinstance(cuped, bool):
        msg = f"cuped must be True or False, found {cuped!r}."
        raise OptionError(msg)


def _eager(frame: Any) -> pl.DataFrame:
    data = to_polars(frame)
    return data.collect() if isinstance(data, pl.LazyFrame) else data


def _experiments(table: pl.DataFrame) -> list[Any]:
    return sorted(table[_EXPERIMENT].unique().to_list(), key=str)


def _check_control(table: pl.DataFrame, control: Any, experiment: Any) -> None:
    """Raise for a control that is not a variant of the experiment (listing them)."""
    variants = sorted(str(v) for v in table["variant"].drop_nulls().unique())
    if str(control) not in variants:
        where = f" of experiment {experiment!r}" if experiment is not None else ""
        msg = (
            f"control={control!r} is not a variant{where}; the variants are "
            f"{variants!r}.\n  Hint: pass one of them as control=."
        )
        raise OptionError(msg)


def _quantile_rows(
    log: SearchLog, n: Named, by: str | Sequence[str] | None
) -> tuple[pl.DataFrame, list[str]]:
    """One row per search: unit, arm, slices and the median metric's value (null: none)."""
    by_names, slices = slice_columns(
        log, by, {n.name: n.measure.grain}, reserved=["position"]
    )
    derived = derive(log, [n.measure], slices)
    assert n.measure.median is not None  # noqa: S101 - only median metrics come here
    rows = (
        derived.frames["search"]
        .select(GROUP, UNIT, n.measure.median.cast(pl.Float64).alias("__value"))
        .join(derived.labels.lazy(), on=GROUP, how="left")
        .join(derived.units, on=UNIT, how="left")
        .select(_EXPERIMENT, "variant", "unit_id", *by_names, "__value")
        .collect()
    )
    return rows, by_names


# --------------------------------------------------------------------------
# ab_test


def ab_test(
    data: Any,
    metrics: Any,
    *,
    control: Any,
    by: str | Sequence[str] | None = None,
    cuped: bool = False,
    correction: Correction | Literal["none"] | None = "holm",
    alpha: float = 0.05,
    expected: Mapping[str, float] | None = None,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> Any:
    """Compare every treatment arm of an experiment with its control, per slice and metric.

    Parameters
    ----------
    data : SearchLog, or a unit-level frame
        A log read by :func:`~ireval_df.online.read_log`; or one row per
        randomisation unit (and slice) with ``unit_id``, ``variant`` and
        numeric columns (polars, pandas or pyarrow).
    metrics : str, list of str, or dict
        On a log: registry names of the ``online`` family (``CTR``,
        ``ZeroResultRate``, ``PositionCTR@3`` ...), or a dict from output
        name to a registry name or a spec (:func:`mean`, :func:`ratio`,
        :func:`proportion`) on the unit table's columns (``CTR__num``,
        ``pre_revenue`` ...: :func:`~ireval_df.online.unit_table`). On a
        unit-level frame: a dict from output name to a spec.
    control : str
        The control variant; every other variant is a treatment.
    by : str or list of str, optional
        Slice columns (on a log, as :func:`~ireval_df.online.metrics`
        takes them). Slice by attributes the treatment cannot change.
    cuped : bool, default False
        CUPED (Deng et al. 2013). On a log each registry metric uses the
        ``units`` table's ``pre_<numer>`` and ``pre_<denom>``, its declared
        per-unit quantities (``pre_clicked_searches`` and
        ``pre_searches_with_results`` for ``CTR``); a spec its ``pre``. A
        median (``TimeToFirstClick``) has no CUPED form and is tested as
        it is.
    correction : {"holm", "bonferroni", "bh", "by", "none"} or None, default "holm"
        Multiple-testing correction over every (experiment, treatment,
        slice, metric) row of the call.
    alpha : float, default 0.05
        Significance level; intervals cover ``1 - alpha``.
    expected : mapping of str to float, optional
        Planned weight of each variant, for the sample-ratio test (default
        an equal split).
    n_resamples, seed
        The bootstrap of a median metric
        (:func:`~ireval_df.stats.experiments.quantile_test`).

    Returns
    -------
    frame
        The columns of :func:`~ireval_df.stats.experiments.ab_test_units`:
        ``variant`` (the treatment arm), the ``by`` columns, ``metric`` (the
        output name; ``PositionCTR[3]`` per position of a click curve),
        ``control_mean, treatment_mean, delta, delta_rel, ci_low, ci_high,
        rel_ci_low, rel_ci_high, p_value, p_adjusted, significant,
        n_control, n_treatment, srm_p_value, srm_flag, reason``; on a log
        with several experiments, ``experiment_id`` first and one set of
        rows per experiment. Same frame kind as the log's tables (or the
        unit frame).

    Raises
    ------
    OptionError
        A control that is not a variant (the variants are listed), an
        unknown option.
    MetricSpecError
        An unknown metric name, or a registry name on a unit-level frame.
    SchemaError
        ``cuped=True`` on a log whose ``units`` table lacks a metric's
        ``pre_*`` columns (the missing and the present are named); a
        spec's column absent.
    DataError
        As :func:`~ireval_df.stats.experiments.ab_test_units`.

    Warns
    -----
    IrevalWarning
        A sample-ratio mismatch (p < 0.001: every row of the slice is
        flagged in ``srm_flag``), variants without units, rows that could
        not be tested.

    Notes
    -----
    On a log the unit table is built once for the call, one row per
    (experiment, variant, unit, slice); every unit the ``units`` table
    assigns to an arm counts, searched or not (without ``by``). The unit
    table guarantees one row per unit and slice, and ``read_log``
    (``contaminated=``) one variant per unit, so the unit check of
    ``ab_test_units`` is skipped where no slice needs the distinct-unit
    count. A median metric is compared on per-search rows by a bootstrap
    that resamples units (its ``n_control`` counts units with a click).
    The p-values of every row are adjusted together, whatever the test.

    Examples
    --------
    >>> from pathlib import Path
    >>> log = ie.online.read_log(Path(ie.__file__).parents[1] / "data" / "log")
    >>> result = ie.online.ab_test(log, ["CTR"], control="control", cuped=True)
    >>> result.select("variant", "metric").row(0)
    ('treatment', 'CTR')
    """
    _check_options(correction, alpha, cuped)
    if not isinstance(data, SearchLog):
        return _ab_units(
            data,
            metrics,
            control=control,
            by=by,
            cuped=cuped,
            correction=correction,
            alpha=alpha,
            expected=expected,
        )
    log = data

    def tables(sums: dict[str, str], medians: Sequence[Named]) -> LogTables:
        table = _eager(unit_table(log, sums, by=by)) if sums else None
        return table, {n.name: _quantile_rows(log, n, by) for n in medians}

    result, settings = ab_test_on(
        tables,
        metrics,
        control=control,
        by=by,
        correction=correction,
        alpha=alpha,
        cuped=cuped,
        expected=expected,
        n_resamples=n_resamples,
        seed=seed,
    )
    return output(result, log, settings)


def ab_test_on(
    tables: Callable[[dict[str, str], Sequence[Named]], LogTables],
    metrics: Any,
    *,
    control: Any,
    by: str | Sequence[str] | None,
    cuped: bool,
    correction: Any,
    alpha: float,
    expected: Mapping[str, float] | None,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """:func:`ab_test` of a log given by what it reads of it: the result and its settings.

    ``tables(sums, medians)`` is called once. It returns the log's
    :func:`~ireval_df.online.unit_table` of the registry metrics ``sums``
    (output name -> name) with ``by``, as a polars frame (None when
    ``sums`` is empty), and, for each median metric of ``medians``, by its
    output name, its per-search rows (``experiment_id, variant, unit_id``,
    the slices, ``__value``) and their slice columns. A row with a null
    ``__value`` only counts its unit and slice in the sample-ratio check;
    every unit and slice with a search has at least one row.
    :func:`ab_test` builds them locally (a row per search),
    :func:`ireval_df.spark.ab_test` on Spark, in one job (a row per search
    with a value, and a null one per unit and slice).
    """
    _check_options(correction, alpha, cuped)
    registry, given, order = _split_metrics(metrics)
    named = named_measures(registry) if registry else []
    medians_named = [n for n in named if n.measure.median is not None]
    sums = {n.name: registry[n.name] for n in named if n.measure.median is None}
    by_names = ex._slices(by)  # noqa: SLF001 - the same check as the stats layer
    parts: list[pl.DataFrame] = []
    # specs alone read the unit table's pre_* columns
    wanted = sums or ({"__ireval_n": "ZeroResultRate"} if given else {})
    table, median_rows = tables(wanted, medians_named)
    if sums or given:
        assert table is not None  # noqa: S101 - asked for just above
        specs: dict[str, Spec] = {}
        computed = _registry_specs(
            [n for n in named if n.name in sums], table, cuped=cuped
        )
        for name in order:
            if name in given:
                specs[name] = given[name]
            elif name in sums:
                specs.update(
                    {
                        k: v
                        for k, v in computed.items()
                        if k == name or k.startswith(f"{name}[")
                    }
                )
        for experiment in _experiments(table):
            part = table.filter(pl.col(_EXPERIMENT) == experiment)
            _check_control(part, control, experiment)
            result = ex.ab_test_units(
                part,
                specs,
                control=control,
                unit="unit_id" if by_names else None,
                by=by_names or None,
                cuped=cuped,
                correction="none",
                alpha=alpha,
                expected=expected,
            )
            parts.append(
                _eager(result).with_columns(
                    pl.lit(experiment, pl.String).alias(_EXPERIMENT)
                )
            )
    for n in medians_named:
        rows, slices = median_rows[n.name]
        for experiment in _experiments(rows):
            part = rows.filter(pl.col(_EXPERIMENT) == experiment)
            _check_control(part, control, experiment)
            result = ex.quantile_test(
                part,
                value="__value",
                q=0.5,
                control=control,
                by=slices or None,
                n_resamples=n_resamples,
                seed=seed,
                alpha=alpha,
                correction="none",
                expected=expected,
                metric=n.name,
            )
            parts.append(
                _eager(result).with_columns(
                    pl.lit(experiment, pl.String).alias(_EXPERIMENT)
                )
            )
    result = _adjust(pl.concat(parts, how="vertical_relaxed"), correction, alpha)
    rank = {name: i for i, name in enumerate(order)}
    result = result.with_columns(
        pl.col("metric")
        .map_elements(lambda m: rank.get(m.split("[")[0], len(rank)), pl.Int64)
        .alias("__order")
    )
    result = result.with_row_index("__row").sort(
        _EXPERIMENT, "variant", *by_names, "__order", "__row", nulls_last=True
    )
    columns = ["variant", *by_names, "metric", *AB_COLUMNS]
    several = result[_EXPERIMENT].n_unique() > 1
    result = result.select(*([_EXPERIMENT] if several else []), *columns)
    settings = {
        "analysis": "per unit: ratios of per-unit sums by the delta method; "
        "medians by a unit bootstrap",
        "control": str(control),
        "cuped": cuped,
        "correction": None if correction == "none" else correction,
        "alpha": alpha,
        "family_size": int(result["p_value"].is_not_null().sum()),
        "ab_by": by_names,
        "expected": dict(expected) if expected is not None else None,
        "metrics": {name: repr(given.get(name, registry.get(name))) for name in order},
    }
    return result, settings


def _adjust(result: pl.DataFrame, correction: str | None, alpha: float) -> pl.DataFrame:
    """Adjust the p-values over every tested row of the call."""
    import numpy as np

    p = result["p_value"].to_numpy().astype(np.float64)
    tested = ~np.isnan(p)
    adjusted = np.full(len(p), np.nan)
    method = None if correction == "none" else correction
    adjusted[tested] = adjust(p[tested], method)  # type: ignore[arg-type]
    return result.with_columns(
        pl.Series("p_adjusted", adjusted, nan_to_null=True)
    ).with_columns((pl.col("p_adjusted") <= alpha).alias("significant"))


def _ab_units(
    data: Any,
    metrics: Any,
    *,
    control: Any,
    by: str | Sequence[str] | None,
    cuped: bool,
    correction: Any,
    alpha: float,
    expected: Mapping[str, float] | None,
) -> Any:
    if not isinstance(metrics, Mapping) or not all(
        isinstance(s, _SPECS) for s in metrics.values()
    ):
        msg = (
            "on a unit-level frame, metrics is a dict from output name to a spec "
            "(ie.online.mean('revenue'), ie.online.ratio('clicks', 'searches'), "
            f"ie.online.proportion('converted')); found {metrics!r}.\n  Hint: "
            "registry names such as 'CTR' need a search log: ie.online.read_log()."
        )
        raise MetricSpecError(msg)
    return ex.ab_test_units(
        data,
        dict(metrics),
        control=control,
        by=by,
        cuped=cuped,
        correction=correction,
        alpha=alpha,
        expected=expected,
    )


# --------------------------------------------------------------------------
# srm


def _assignment(log: SearchLog) -> pl.DataFrame:
    """``experiment_id, variant, unit_id``: the units table, else the searches' units."""
    units = log.units
    if units is not None and "variant" in units.columns:
        if _EXPERIMENT in units.columns:
            return units.select(_EXPERIMENT, "variant", "unit_id")
        experiments = log.searches[_EXPERIMENT].unique()
        if experiments.len() == 1:
            return units.select(
                pl.lit(experiments[0], pl.String).alias(_EXPERIMENT),
                "variant",
                "unit_id",
            )
    return log.searches.select(_EXPERIMENT, "variant", "unit_id").unique()


def srm(
    data: Any,
    expected: Mapping[str, float] | None = None,
    *,
    by: str | Sequence[str] | None = None,
) -> Any:
    """Sample-ratio mismatch: the units per variant against the planned split.

    Parameters
    ----------
    data : SearchLog, or a unit-level frame
        A log, or one row per unit with a ``variant`` column
        (:func:`ireval_df.stats.experiments.srm`).
    expected : mapping of str to float, optional
        Planned weight per variant; default an equal split.
    by : str or list of str, optional
        Slice columns of ``searches`` (on a log): one test per slice,
        counting the distinct units that searched in it. Use attributes
        fixed before assignment (``device``, ``language``); a slice the
        treatment can change (the query class of the searches a unit made)
        can show a mismatch that the assignment did not cause.

    Returns
    -------
    frame
        One row per (slice, variant): the ``by`` columns, ``variant``,
        ``n_units, expected_share, observed_share, statistic, df, p_value,
        srm_flag``; on a log with several experiments ``experiment_id``
        first.

    Notes
    -----
    Without ``by``, a log's units are those the ``units`` table assigns
    (searched or not) when it has a ``variant`` column, else the distinct
    ``unit_id`` per variant of ``searches``. Pearson's chi-square, no
    continuity correction: 600 and 400 units at 50/50 give p = 2.54e-10.

    Examples
    --------
    >>> from pathlib import Path
    >>> log = ie.online.read_log(Path(ie.__file__).parents[1] / "data" / "log")
    >>> result = ie.online.srm(log)
    >>> result["variant"].to_list(), bool(result["srm_flag"][0])
    (['control', 'treatment'], False)
    """
    if not isinstance(data, SearchLog):
        return ex.srm(data, by=by, expected=expected)
    log = data
    by_names = ex._slices(by)  # noqa: SLF001
    if by_names:
        absent = [c for c in by_names if c not in log.searches.columns]
        if absent:
            msg = (
                f"by={absent!r}: not a column of searches, which has "
                f"{log.searches.columns!r}."
            )
            raise SchemaError(msg)
        frame = log.searches.select(_EXPERIMENT, "variant", "unit_id", *by_names)
        unit: str | None = "unit_id"
    else:
        frame = _assignment(log)
        unit = "unit_id"
    parts = []
    for experiment in _experiments(frame):
        part = frame.filter(pl.col(_EXPERIMENT) == experiment).drop(_EXPERIMENT)
        result = _eager(ex.srm(part, by=by_names or None, expected=expected, unit=unit))
        parts.append(
            result.with_columns(pl.lit(experiment, pl.String).alias(_EXPERIMENT))
        )
    result = pl.concat(parts, how="vertical_relaxed")
    if result[_EXPERIMENT].n_unique() == 1:
        result = result.drop(_EXPERIMENT)
    else:
        result = result.select(_EXPERIMENT, pl.exclude(_EXPERIMENT))
    settings = {
        "test": "chi-square goodness of fit",
        "expected": dict(expected) if expected is not None else None,
        "srm_by": by_names,
    }
    return output(result, log, settings)


# --------------------------------------------------------------------------
# power


def power(
    *,
    baseline_mean: float | None = None,
    baseline_var: float | None = None,
    mde: float | None = None,
    n: int | None = None,
    relative: bool = False,
    alpha: float = 0.05,
    power: float = 0.8,
    log: SearchLog | None = None,
    metric: str | None = None,
    variant: str | None = None,
) -> Any:
    """Units per arm to detect an effect, or the effect detectable with n units per arm.

    Parameters
    ----------
    baseline_mean, baseline_var : float, optional
        The closed form (:func:`ireval_df.stats.experiments.power`): the
        metric's baseline mean and unit-level variance (``p (1 - p)`` by
        default for a rate). Not with ``log``.
    mde : float, optional
        Minimum detectable effect: absolute, or with ``relative=True`` a
        share of the baseline mean. Exactly one of ``mde`` and ``n``.
    n : int, optional
        Units per arm.
    relative : bool, default False
    alpha : float, default 0.05
    power : float, default 0.8
    log : SearchLog, optional
        A baseline log: the metric's mean and unit-level variance come from
        its units (a ratio metric's delta-method variance per unit,
        :func:`ireval_df.stats.experiments.power_units`).
    metric : str, optional
        The registry name, with ``log``.
    variant : str, optional
        The arm of ``log`` whose units are the baseline; default every unit
        of the log pooled, the right choice for a pre-period or A/A log.
        On a log of an A/B test pass the control (pooling the arms adds
        the treatment's effect to the variance).

    Returns
    -------
    polars.DataFrame
        One row: ``baseline_mean, baseline_var, mde, mde_rel, n_per_arm,
        alpha, power``; from a log ``n_units`` (the baseline's units)
        first.

    Raises
    ------
    OptionError
        Neither ``baseline_mean`` nor ``log``, or both; ``log`` without
        ``metric``; ``variant`` not an arm of the log (they are listed);
        and as :func:`ireval_df.stats.experiments.power`.
    MetricSpecError
        An unknown metric, or a median (no per-unit variance).

    Notes
    -----
    ``n = (z(1 - alpha/2) + z(power))² · 2 var / mde²``: a rate of 0.10
    and an absolute MDE of 0.01 need 14,128 units per arm (statsmodels'
    Cohen's-h power gives 14,745: it puts the treatment's variance at the
    alternative, see ``docs/statistics.md``).

    Examples
    --------
    >>> ie.online.power(baseline_mean=0.10, mde=0.01)["n_per_arm"].item()
    14128
    """
    if log is None:
        if metric is not None or variant is not None:
            msg = "metric= and variant= read a baseline log: pass log= too."
            raise OptionError(msg)
        if baseline_mean is None:
            msg = (
                "give baseline_mean= (and baseline_var= for a metric that is not "
                "a rate), or log= and metric= to take them from a baseline log."
            )
            raise OptionError(msg)
        return ex.power(
            baseline_mean=baseline_mean,
            baseline_var=baseline_var,
            mde=mde,
            n=n,
            relative=relative,
            alpha=alpha,
            power=power,
        )
    if not isinstance(log, SearchLog):
        msg = (
            f"log must be a SearchLog (ie.online.read_log), found {type(log).__name__}."
        )
        raise OptionError(msg)
    if baseline_mean is not None or baseline_var is not None:
        msg = "give either baseline_mean=/baseline_var= or log=, not both."
        raise OptionError(msg)
    if not isinstance(metric, str):
        msg = f"log= needs metric=, a registry name such as 'CTR'; found {metric!r}."
        raise OptionError(msg)
    table = _eager(unit_table(log, {metric: metric}))
    if variant is not None:
        variants = sorted(str(v) for v in table["variant"].unique())
        if str(variant) not in variants:
            msg = (
                f"variant={variant!r} is not an arm of the log; the arms are "
                f"{variants!r}."
            )
            raise OptionError(msg)
        table = table.filter(pl.col("variant") == str(variant))
    (columns,) = _registry_specs(
        named_measures({metric: metric}), table, cuped=False
    ).items()
    result = _eager(
        ex.power_units(
            table,
            columns[1],
            mde=mde,
            n=n,
            relative=relative,
            alpha=alpha,
            power=power,
        )
    )
    return result.with_columns(pl.lit(metric, pl.String).alias("metric")).select(
        "metric", pl.exclude("metric")
    )


# --------------------------------------------------------------------------
# A/A


def aa_test(
    data: Any,
    metrics: Any = ("CTR",),
    *,
    n_splits: int = 1000,
    seed: int | None = 0,
    alpha: float = 0.05,
    variant: str | None = None,
) -> Any:
    """A/A test: split one arm's units at random, many times, and test each split.

    Parameters
    ----------
    data : SearchLog, or a unit-level frame
        A log, or one row per unit (with a ``variant`` column to pick the
        arm from, or all from one arm).
    metrics : str, list of str, or dict, default ("CTR",)
        As :func:`ab_test` takes them (no median metric: the splits use
        per-unit sums).
    n_splits : int, default 1000
        Random splits (Bernoulli(1/2) per unit).
    seed : int or None, default 0
    alpha : float, default 0.05
        The level whose false-positive rate is measured.
    variant : str, optional
        The arm whose units are split: default the arm named ``control``
        if there is one, else the arm with the most units (the first by
        name among equals). Ignored for a unit frame without a ``variant``
        column.

    Returns
    -------
    polars.DataFrame
        One row per metric: ``variant`` (the arm split), ``metric,
        n_units, n_splits, alpha, false_positive_rate, fpr_ci_low,
        fpr_ci_high`` (Clopper-Pearson), ``ks_statistic, ks_p_value``
        (uniformity of the p-values); on a log with several experiments
        ``experiment_id`` first.

    Notes
    -----
    With no real difference between the halves, a trustworthy analysis
    rejects in a share ``alpha`` of the splits and gives uniform p-values.
    A false-positive rate whose interval excludes ``alpha`` means the
    analysis does not fit the data (searches analysed as if independent,
    heavy tails with few units).

    Examples
    --------
    >>> from pathlib import Path
    >>> log = ie.online.read_log(Path(ie.__file__).parents[1] / "data" / "log")
    >>> aa = ie.online.aa_test(log, n_splits=200)
    >>> row = aa.row(0, named=True)
    >>> row["variant"], row["metric"], row["fpr_ci_low"] <= 0.05 <= row["fpr_ci_high"]
    ('control', 'CTR', True)
    """
    if isinstance(data, SearchLog):
        registry, given, order = _split_metrics(metrics)
        named = named_measures(registry) if registry else []
        medians = [n.name for n in named if n.measure.median is not None]
        if medians:
            msg = (
                f"{medians!r}: an A/A test splits per-unit sums, which a median "
                "has not.\n  Hint: use TimeToFirstClick(stat=mean)."
            )
            raise MetricSpecError(msg)
        table = _eager(
            unit_table(log=data, metrics=registry)
            if registry
            else unit_table(data, {"__ireval_n": "ZeroResultRate"})
        )
        computed = _registry_specs(named, table, cuped=False)
        specs: dict[str, Spec] = {}
        for name in order:
            if name in given:
                specs[name] = given[name]
            else:
                specs.update(
                    {
                        k: v
                        for k, v in computed.items()
                        if k == name or k.startswith(f"{name}[")
                    }
                )
        like: Any = data
    else:
        if not isinstance(metrics, Mapping) or not all(
            isinstance(s, _SPECS) for s in metrics.values()
        ):
            msg = (
                "on a unit-level frame, metrics is a dict from output name to a "
                f"spec (ie.online.ratio('clicks', 'searches')); found {metrics!r}."
            )
            raise MetricSpecError(msg)
        specs = dict(metrics)
        table = _eager(data)
        if "variant" not in table.columns:
            table = table.with_columns(pl.lit(None, pl.String).alias("variant"))
        if _EXPERIMENT not in table.columns:
            table = table.with_columns(pl.lit("default", pl.String).alias(_EXPERIMENT))
        like = None
    parts = []
    for experiment in _experiments(table):
        part = table.filter(pl.col(_EXPERIMENT) == experiment)
        arm = _aa_arm(part, variant)
        if arm is not None:
            part = part.filter(pl.col("variant").cast(pl.String) == arm)
        result = _eager(
            ex.aa_units(part, specs, n_splits=n_splits, seed=seed, alpha=alpha)
        )
        parts.append(
            result.with_columns(
                pl.lit(experiment, pl.String).alias(_EXPERIMENT),
                pl.lit(arm, pl.String).alias("variant"),
            )
        )
    result = pl.concat(parts, how="vertical_relaxed")
    several = result[_EXPERIMENT].n_unique() > 1
    result = result.select(
        *([_EXPERIMENT] if several else []),
        "variant",
        pl.exclude(_EXPERIMENT, "variant"),
    )
    settings = {"n_splits": n_splits, "seed": seed, "split": "Bernoulli(1/2) per unit"}
    if like is None:
        return stats_output(result, data, settings)
    return output(result, like, settings)


def _aa_arm(table: pl.DataFrame, variant: str | None) -> str | None:
    """Pick the arm to split: ``variant``, else ``control`` if present, else the largest."""
    counts = (
        table.filter(pl.col("variant").is_not_null())
        .group_by(pl.col("variant").cast(pl.String))
        .len()
        .sort("len", "variant", descending=[True, False])
    )
    arms = counts["variant"].to_list()
    if variant is not None:
        if str(variant) not in arms:
            msg = f"variant={variant!r} is not an arm; the arms are {sorted(arms)!r}."
            raise OptionError(msg)
        return str(variant)
    if not arms:
        return None
    if "control" in arms:
        return "control"
    return str(arms[0])
