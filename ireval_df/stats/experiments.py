"""A/B-test statistics on a unit-level frame: one row per randomisation unit.

Family-neutral: the frame holds a variant column, a unit id, numeric per-unit
columns (sums such as clicks and searches, or values such as revenue) and,
optionally, slice columns; nothing here knows about searches or clicks. The
online family (``ireval_df.online``) builds such frames from a search log and
calls these functions.

Every function reduces the units to sufficient statistics with one polars
``group_by`` over (variant, slice): counts, means, variances and covariances
of the columns a metric needs. The tests then run in numpy and scipy on that
small frame, so ten million units cost one pass over the data.

- :func:`ab_test_units`: each treatment arm against the control, per slice
  and metric: Welch's t with Welch-Satterthwaite degrees of freedom for means
  and ratios (ratios by the delta method on per-unit sums), the relative
  change by the delta method on the log ratio, CUPED (Deng et al. 2013) for
  means and ratios, a two-proportion z-test for unit-level proportions,
  multiple-testing correction over the call, and a sample-ratio check.
- :func:`srm_counts`, :func:`srm`: sample-ratio mismatch by a chi-square
  goodness-of-fit test.
- :func:`power`, :func:`power_units`: sample size per arm for a minimum
  detectable effect, or the effect for a sample size.
- :func:`aa_units`: random re-splits of units that received the same
  treatment, to show that the analysis' false-positive rate is what it says.
- :func:`quantile_test`: a quantile of row-level values (the median time to
  first click), by a bootstrap that resamples units.

The numbers agree with tea-tasting 1.14 (``Mean``, ``RatioOfMeans`` with and
without covariates, ``Proportion``, ``SampleRatio``) and statsmodels (two
proportions, power) to 1e-9: ``tests/reference/test_tea_tasting.py``.

References
----------
Kohavi, Tang and Xu. *Trustworthy Online Controlled Experiments*, 2020.
Deng, Xu, Kohavi and Walker. Improving the sensitivity of online controlled
experiments by utilizing pre-experiment data. WSDM 2013.
Deng, Knoblich and Lu. Applying the delta method in metric analytics. KDD 2018.
Fabijan et al. Diagnosing sample ratio mismatch in online controlled
experiments. KDD 2019.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import polars as pl

from ireval_df._utils.frames import to_polars
from ireval_df._utils.options import check_choice
from ireval_df._utils.progress import Progress
from ireval_df.errors import DataError, OptionError, SchemaError, warn
from ireval_df.stats.corrections import adjust
from ireval_df.stats.frames import output, slice_columns
from ireval_df.stats.paired import require_scipy
from ireval_df.stats.resampling import CHUNK

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from numpy.typing import NDArray

    from ireval_df.stats.corrections import Correction

__all__ = [
    "AB_COLUMNS",
    "SRM_THRESHOLD",
    "Mean",
    "Proportion",
    "Ratio",
    "Spec",
    "aa_units",
    "ab_test_units",
    "mean",
    "power",
    "power_units",
    "proportion",
    "quantile_test",
    "ratio",
    "srm",
    "srm_counts",
]

#: A sample-ratio test below this p-value flags the comparison (Kohavi et al.).
SRM_THRESHOLD = 0.001

#: The statistics columns of :func:`ab_test_units` and :func:`quantile_test`,
#: after ``variant``, the slice columns and ``metric``.
AB_COLUMNS = (
    "control_mean",
    "treatment_mean",
    "delta",
    "delta_rel",
    "ci_low",
    "ci_high",
    "rel_ci_low",
    "rel_ci_high",
    "p_value",
    "p_adjusted",
    "significant",
    "n_control",
    "n_treatment",
    "srm_p_value",
    "srm_flag",
    "reason",
)

_CORRECTIONS: tuple[str | None, ...] = ("holm", "bonferroni", "bh", "by", "none", None)


# --------------------------------------------------------------------------
# metric specifications


@dataclass(frozen=True)
class Mean:
    """The mean of a per-unit value (revenue per user, searches per user).

    Build it with :func:`mean`. ``pre`` names the pre-period covariate
    CUPED uses (``ab_test_units(..., cuped=True)``).
    """

    value: str
    pre: str | None = None

    def columns(self, *, cuped: bool) -> tuple[str, ...]:
        """Return the columns the analysis reads."""
        return (
            (self.value,) if not cuped or self.pre is None else (self.value, self.pre)
        )


@dataclass(frozen=True)
class Ratio:
    """A ratio of two per-unit sums (clicks per search), by the delta method.

    Build it with :func:`ratio`. ``pre`` is the pair of pre-period columns
    ``(pre_numer, pre_denom)`` whose ratio CUPED uses as covariate.
    """

    numer: str
    denom: str
    pre: tuple[str, str] | None = None

    def columns(self, *, cuped: bool) -> tuple[str, ...]:
        """Return the columns the analysis reads."""
        if not cuped or self.pre is None:
            return (self.numer, self.denom)
        return (self.numer, self.denom, *self.pre)


@dataclass(frozen=True)
class Proportion:
    """The share of units with a 0/1 outcome (converted, had a successful session).

    Build it with :func:`proportion`. Tested by the two-proportion z-test
    (see :func:`ab_test_units`); it has no CUPED form.
    """

    value: str

    def columns(self, *, cuped: bool) -> tuple[str, ...]:
        """Return the columns the analysis reads."""
        return (self.value,)


#: A metric of a unit-level frame.
Spec: TypeAlias = Mean | Ratio | Proportion


def _column_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not name:
        msg = f"{what} must be a column name (a non-empty str), found {name!r}."
        raise OptionError(msg)
    return name


def mean(value: str, pre: str | None = None) -> Mean:
    """Specify the mean of a per-unit column.

    Parameters
    ----------
    value : str
        The column of per-unit values.
    pre : str, optional
        A pre-period covariate column for CUPED (the same quantity measured
        before the experiment), used when ``cuped=True``.

    Returns
    -------
    Mean

    Raises
    ------
    OptionError
        A name is not a non-empty string.

    Examples
    --------
    >>> mean("revenue", pre="pre_revenue")
    Mean(value='revenue', pre='pre_revenue')
    """
    return Mean(
        _column_name(value, "mean(value)"),
        None if pre is None else _column_name(pre, "mean(pre=)"),
    )


def ratio(numer: str, denom: str, pre: tuple[str, str] | None = None) -> Ratio:
    """Specify a ratio of two per-unit sums, analysed by the delta method.

    Parameters
    ----------
    numer, denom : str
        Columns of per-unit sums: the metric is ``sum(numer) / sum(denom)``
        over an arm's units (clicks per search, not the mean of per-unit
        click-through rates).
    pre : tuple of two str, optional
        Pre-period ``(numer, denom)`` columns for CUPED.

    Returns
    -------
    Ratio

    Raises
    ------
    OptionError
        A name is not a non-empty string, or ``pre`` is not a pair.

    Examples
    --------
    >>> ratio("clicks", "searches", pre=("pre_clicks", "pre_searches"))
    Ratio(numer='clicks', denom='searches', pre=('pre_clicks', 'pre_searches'))
    """
    if pre is not None:
        if not isinstance(pre, tuple | list) or len(pre) != 2:
            msg = f"ratio(pre=) must be a pair (pre_numer, pre_denom), found {pre!r}."
            raise OptionError(msg)
        pre = (
            _column_name(pre[0], "ratio(pre=)[0]"),
            _column_name(pre[1], "ratio(pre=)[1]"),
        )
    return Ratio(
        _column_name(numer, "ratio(numer)"), _column_name(denom, "ratio(denom)"), pre
    )


def proportion(value: str) -> Proportion:
    """Specify the share of units whose 0/1 (or boolean) column is 1.

    Parameters
    ----------
    value : str
        A column holding 0 and 1, or booleans, one per unit.

    Returns
    -------
    Proportion

    Raises
    ------
    OptionError
        The name is not a non-empty string.

    Examples
    --------
    >>> proportion("converted")
    Proportion(value='converted')
    """
    return Proportion(_column_name(value, "proportion(value)"))


def _check_metrics(metrics: Any) -> dict[str, Spec]:
    if not isinstance(metrics, Mapping) or not metrics:
        msg = (
            "metrics must be a non-empty mapping of output names to specs, e.g. "
            f"{{'ctr': ratio('clicks', 'searches')}}, found {metrics!r}."
        )
        raise OptionError(msg)
    out: dict[str, Spec] = {}
    for name, spec in metrics.items():
        if not isinstance(name, str) or not name:
            msg = f"metric names must be non-empty strings, found {name!r}."
            raise OptionError(msg)
        if not isinstance(spec, Mean | Ratio | Proportion):
            msg = (
                f"metric {name!r} is {spec!r}; expected mean(...), ratio(...) or "
                "proportion(...) from ireval_df.stats.experiments."
            )
            raise OptionError(msg)
        out[name] = spec
    return out


# --------------------------------------------------------------------------
# options and input


def _check_level(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        msg = f"{name} must be a number between 0 and 1 (exclusive), found {value!r}."
        raise OptionError(msg)
    if not 0.0 < value < 1.0:
        msg = f"{name} must be a number between 0 and 1 (exclusive), found {value!r}."
        raise OptionError(msg)
    return float(value)


def _check_count(name: str, value: Any, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        msg = f"{name} must be a whole number of at least {least}, found {value!r}."
        raise OptionError(msg)
    return value


def _slices(by: Any, *reserved: str | None) -> list[str]:
    """``by`` as a list, refusing the variant and unit columns and output names."""
    slices = slice_columns(by)
    taken = {r for r in reserved if r is not None} | {"metric", *AB_COLUMNS}
    clash = [s for s in slices if s in taken or s.startswith("__")]
    if clash or len(set(slices)) < len(slices):
        msg = (
            f"by={slices!r} cannot slice by {clash or slices!r}: a slice column "
            "must differ from the variant and unit columns, from the result's "
            "own columns, and from the other slices."
        )
        raise OptionError(msg)
    return slices


def _lazy(units: Any) -> pl.LazyFrame:
    return to_polars(units).lazy()


def _require_columns(
    schema: pl.Schema, needed: Mapping[str, str], what: str = "units"
) -> None:
    """Raise naming the first absent column, what it is for, and the columns found."""
    for column, purpose in needed.items():
        if column not in schema:
            msg = (
                f"{purpose} needs column {column!r}, which the {what} frame does not "
                f"have (found {schema.names()!r})."
            )
            raise SchemaError(msg)


def _require_numeric(schema: pl.Schema, columns: Sequence[str], what: str) -> None:
    for column in columns:
        dtype = schema[column]
        if not (dtype.is_numeric() or dtype == pl.Boolean):
            msg = (
                f"column {column!r} ({what}) must hold numbers or booleans, found "
                f"{dtype}.\n  Hint: cast it, e.g. pl.col({column!r}).cast(pl.Float64)."
            )
            raise SchemaError(msg)


def _as_key(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _check_expected(expected: Any) -> dict[str, float] | None:
    if expected is None:
        return None
    if not isinstance(expected, Mapping) or len(expected) < 2:
        msg = (
            "expected must map at least two variants to their planned weights, "
            f"e.g. {{'A': 0.5, 'B': 0.5}}, found {expected!r}."
        )
        raise OptionError(msg)
    weights: dict[str, float] = {}
    for key, weight in expected.items():
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not math.isfinite(weight)
            or weight <= 0
        ):
            msg = f"expected[{key!r}] must be a positive weight, found {weight!r}."
            raise OptionError(msg)
        weights[_as_key(key)] = float(weight)
    return weights


# --------------------------------------------------------------------------
# sufficient statistics


@dataclass
class _Moments:
    """Counts, means, variances and covariances of columns, one entry per group.

    Arrays run over groups (arm x slice, or resplits). A column name of None
    stands for the constant 1 (mean 1, variance and covariances 0), which
    makes a mean a ratio with denominator 1, as in tea-tasting.
    """

    n: NDArray[np.float64]
    means: dict[str, NDArray[np.float64]]
    variances: dict[str, NDArray[np.float64]]
    covariances: dict[tuple[str, str], NDArray[np.float64]]

    def m(self, c: str | None) -> Any:
        return 1.0 if c is None else self.means[c]

    def v(self, c: str | None) -> Any:
        return 0.0 if c is None else self.variances[c]

    def c(self, a: str | None, b: str | None) -> Any:
        if a is None or b is None:
            return 0.0
        if a == b:
            return self.variances[a]
        return self.covariances[(a, b) if a < b else (b, a)]

    def ratio_var(self, num: str | None, den: str | None) -> Any:
        """Per-unit variance of ``mean(num) / mean(den)`` (delta method)."""
        mn, md = self.m(num), self.m(den)
        return (
            self.v(num)
            - 2.0 * self.c(num, den) * mn / md
            + self.v(den) * mn * mn / (md * md)
        ) / (md * md)

    def ratio_cov(
        self, ln: str | None, ld: str | None, rn: str | None, rd: str | None
    ) -> Any:
        """Per-unit covariance of two ratios of means (delta method)."""
        lr = self.m(ln) / self.m(ld)
        rr = self.m(rn) / self.m(rd)
        return (
            (
                self.c(ln, rn)
                - self.c(ln, rd) * rr
                - self.c(ld, rn) * lr
                + self.c(ld, rd) * lr * rr
            )
            / self.m(ld)
            / self.m(rd)
        )

    def __add__(self, other: _Moments) -> _Moments:
        """Pool two groups: exact sample moments of their union."""
        n1, n2 = self.n, other.n
        total = n1 + n2
        means = {
            k: (n1 * self.means[k] + n2 * other.means[k]) / total for k in self.means
        }
        shift = {k: self.means[k] - other.means[k] for k in self.means}
        variances = {
            k: (
                self.variances[k] * (n1 - 1)
                + other.variances[k] * (n2 - 1)
                + shift[k] * shift[k] * n1 * n2 / total
            )
            / (total - 1)
            for k in self.variances
        }
        covariances = {
            (a, b): (
                self.covariances[(a, b)] * (n1 - 1)
                + other.covariances[(a, b)] * (n2 - 1)
                + shift[a] * shift[b] * n1 * n2 / total
            )
            / (total - 1)
            for a, b in self.covariances
        }
        return _Moments(total, means, variances, covariances)


def _pairs(columns: Sequence[str]) -> list[tuple[str, str]]:
    ordered = sorted(set(columns))
    return [(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]]


class _Plan:
    """Which columns and covariances the metrics need, and their aggregations."""

    def __init__(self, specs: Mapping[str, Spec], *, cuped: bool) -> None:
        self.specs = dict(specs)
        self.cuped = cuped
        self.columns: list[str] = []
        pairs: set[tuple[str, str]] = set()
        self.binary: list[str] = []
        for spec in self.specs.values():
            cols = spec.columns(cuped=cuped)
            for c in cols:
                if c not in self.columns:
                    self.columns.append(c)
            pairs.update(_pairs(cols))
            if isinstance(spec, Proportion) and spec.value not in self.binary:
                self.binary.append(spec.value)
        self.pairs = sorted(pairs)
        self.index = {c: i for i, c in enumerate(self.columns)}

    def aggregations(self) -> list[pl.Expr]:
        """Moments of every column, and counts of values the tests cannot use.

        NaN and infinite values are not counted (that costs a pass): they
        make the mean non-finite, which :meth:`check_values` notices.
        """
        out: list[pl.Expr] = []
        for c, i in self.index.items():
            x = pl.col(c).cast(pl.Float64)
            out += [
                x.mean().alias(f"__m{i}"),
                x.var().alias(f"__v{i}"),
                x.null_count().alias(f"__null{i}"),
            ]
            if c in self.binary:
                out.append(((x != 0.0) & (x != 1.0)).sum().alias(f"__nb{i}"))
        for a, b in self.pairs:
            i, j = self.index[a], self.index[b]
            out.append(
                pl.cov(pl.col(a).cast(pl.Float64), pl.col(b).cast(pl.Float64)).alias(
                    f"__c{i}_{j}"
                )
            )
        return out

    def check_values(self, stats: pl.DataFrame, lf: pl.LazyFrame) -> None:
        """Raise for null, NaN or infinite values, and non-0/1 proportions."""
        for c, i in self.index.items():
            bad = int(stats[f"__null{i}"].sum())
            if not bad and not stats[f"__m{i}"].is_finite().all():
                x = pl.col(c).cast(pl.Float64)
                bad = int(lf.select(x.is_finite().not_().sum()).collect().item())
            if bad:
                msg = (
                    f"column {c!r} holds {bad} null, NaN or infinite value(s); every "
                    "unit needs a number.\n  Hint: fill them (e.g. "
                    f"pl.col({c!r}).fill_null(0) for a count) or drop those units."
                )
                raise DataError(msg)
            if c in self.binary:
                other = int(stats[f"__nb{i}"].sum())
                if other:
                    msg = (
                        f"proportion({c!r}) needs 0/1 (or boolean) values, but "
                        f"{other} unit(s) hold something else.\n  Hint: use "
                        f"mean({c!r}) for a mean of any values."
                    )
                    raise DataError(msg)

    def moments(self, stats: pl.DataFrame, n: NDArray[np.float64]) -> _Moments:
        """Read the aggregated columns of ``stats`` (null: NaN) into arrays."""
        import numpy as np

        def column(name: str) -> NDArray[np.float64]:
            return (
                stats[name]
                .cast(pl.Float64)
                .fill_null(np.nan)
                .to_numpy()
                .astype(np.float64)
            )

        return _Moments(
            n,
            {c: column(f"__m{i}") for c, i in self.index.items()},
            {c: column(f"__v{i}") for c, i in self.index.items()},
            {
                (a, b): column(f"__c{self.index[a]}_{self.index[b]}")
                for a, b in self.pairs
            },
        )


# --------------------------------------------------------------------------
# the tests, vectorised over comparisons


@dataclass
class _Result:
    """One metric's statistics, one entry per comparison (NaN: undefined)."""

    control_mean: NDArray[np.float64]
    treatment_mean: NDArray[np.float64]
    delta: NDArray[np.float64]
    delta_rel: NDArray[np.float64]
    ci_low: NDArray[np.float64]
    ci_high: NDArray[np.float64]
    rel_ci_low: NDArray[np.float64]
    rel_ci_high: NDArray[np.float64]
    p_value: NDArray[np.float64]
    reason: list[str | None]


def _estimates(
    spec: Mean | Ratio, c: _Moments, t: _Moments, *, cuped: bool
) -> tuple[Any, Any, Any, Any]:
    """Per-arm means and per-unit variances of a mean or ratio, CUPED or not.

    As tea-tasting's ``RatioOfMeans``: the CUPED coefficient ``theta`` is the
    delta-method covariance of the metric and its pre-period ratio over their
    pre-period variance, both on the two arms pooled; each arm's estimate is
    ``R - theta (R_pre - R_pre_pooled)`` and its variance ``var(R) + theta^2
    var(R_pre) - 2 theta cov(R, R_pre)`` (delta method on per-unit sums).
    """
    import numpy as np

    num, den = (
        (spec.value, None) if isinstance(spec, Mean) else (spec.numer, spec.denom)
    )
    pre_num: str | None = None
    pre_den: str | None = None
    if cuped and spec.pre is not None:
        if isinstance(spec, Mean):
            pre_num = spec.pre
        else:
            pre_num, pre_den = spec.pre
    with np.errstate(all="ignore"):
        if pre_num is None:
            return (
                c.m(num) / c.m(den),
                c.ratio_var(num, den),
                t.m(num) / t.m(den),
                t.ratio_var(num, den),
            )
        pooled = c + t
        pre_var = pooled.ratio_var(pre_num, pre_den)
        theta = np.where(
            pre_var == 0, 0.0, pooled.ratio_cov(num, den, pre_num, pre_den) / pre_var
        )
        centre = pooled.m(pre_num) / pooled.m(pre_den)

        def arm(a: _Moments) -> tuple[Any, Any]:
            value = a.m(num) / a.m(den) - theta * (a.m(pre_num) / a.m(pre_den) - centre)
            var = (
                a.ratio_var(num, den)
                + theta * theta * a.ratio_var(pre_num, pre_den)
                - 2.0 * theta * a.ratio_cov(num, den, pre_num, pre_den)
            )
            return value, var

        (mc, vc), (mt, vt) = arm(c), arm(t)
    return mc, vc, mt, vt


def _welch_df(a: Any, b: Any, na: Any, nb: Any) -> Any:
    """Welch-Satterthwaite degrees of freedom of ``a + b`` (variances of means)."""
    return (a + b) ** 2 / (a * a / (na - 1.0) + b * b / (nb - 1.0))


def _relative(
    mc: Any, mt: Any, log_se: Any, quantile: Any
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Interval of ``mt / mc - 1`` from the delta method on the log ratio."""
    import numpy as np

    with np.errstate(all="ignore"):
        ratio_ = mt / mc
        half = np.exp(np.where(log_se == 0, 0.0, quantile * log_se))
        low, high = ratio_ / half - 1.0, ratio_ * half - 1.0
    defined = (mc != 0) & (mt != 0) & (ratio_ > 0) & np.isfinite(log_se)
    return np.where(defined, low, np.nan), np.where(defined, high, np.nan)


def _welch(
    mc: Any, vc: Any, nc: Any, mt: Any, vt: Any, nt: Any, alpha: float
) -> tuple[Any, ...]:
    """Welch's t on two means with their per-unit variances (tea-tasting's ``Mean``).

    Returns the interval of the difference, the p-value and the interval of
    the relative difference; zero standard error gives p = 1 for a zero
    difference and 0 otherwise.
    """
    import numpy as np

    stats = require_scipy("ab_test_units")
    q = 1.0 - alpha / 2.0
    with np.errstate(all="ignore"):
        ec, et = vc / nc, vt / nt
        se = np.sqrt(ec + et)
        df = _welch_df(ec, et, nc, nt)
        delta = mt - mc
        zero = se == 0
        half = np.where(zero, 0.0, stats.t.ppf(q, df) * se)
        p = np.where(
            zero,
            np.where(delta == 0, 1.0, 0.0),
            2.0 * stats.t.sf(np.abs(delta) / se, df),
        )
        lc, lt = vc / (mc * mc) / nc, vt / (mt * mt) / nt
        log_se = np.sqrt(lc + lt)
        log_q = stats.t.ppf(q, _welch_df(lc, lt, nc, nt))
    rel_low, rel_high = _relative(mc, mt, log_se, log_q)
    return delta - half, delta + half, p, rel_low, rel_high


def _ztest(pc: Any, nc: Any, pt: Any, nt: Any, alpha: float) -> tuple[Any, ...]:
    """Two-proportion z-test: pooled p-value, Wald interval, log-ratio interval.

    The p-value is ``statsmodels.stats.proportion.proportions_ztest`` (the
    pooled variance under the null, no continuity correction); the interval
    of the difference is Wald's (unpooled: ``confint_proportions_2indep(...,
    method="wald")``) and that of the ratio the log method
    (``compare="ratio", method="log"``).
    """
    import numpy as np

    stats = require_scipy("ab_test_units")
    z = stats.norm.ppf(1.0 - alpha / 2.0)
    with np.errstate(all="ignore"):
        delta = pt - pc
        pooled = (pc * nc + pt * nt) / (nc + nt)
        se0 = np.sqrt(pooled * (1.0 - pooled) * (1.0 / nc + 1.0 / nt))
        p = np.where(
            se0 == 0,
            np.where(delta == 0, 1.0, 0.0),
            2.0 * stats.norm.sf(np.abs(delta) / se0),
        )
        half = z * np.sqrt(pc * (1.0 - pc) / nc + pt * (1.0 - pt) / nt)
        log_se = np.sqrt((1.0 - pc) / (nc * pc) + (1.0 - pt) / (nt * pt))
    rel_low, rel_high = _relative(pc, pt, log_se, z)
    return delta - half, delta + half, p, rel_low, rel_high


def _reasons(spec: Spec, c: _Moments, t: _Moments, *, cuped: bool) -> list[str | None]:
    """Why a comparison cannot be tested, or None; the first cause found wins."""
    checks: list[tuple[Any, str]] = [
        (c.n == 0, "no units in control"),
        (t.n == 0, "no units in treatment"),
        (c.n < 2, "fewer than 2 units in control"),
        (t.n < 2, "fewer than 2 units in treatment"),
    ]
    if isinstance(spec, Ratio):
        checks += [
            (c.m(spec.denom) == 0, f"{spec.denom!r} sums to 0 in control"),
            (t.m(spec.denom) == 0, f"{spec.denom!r} sums to 0 in treatment"),
        ]
        if cuped and spec.pre is not None:
            pre_den = spec.pre[1]
            checks += [
                (c.m(pre_den) == 0, f"{pre_den!r} sums to 0 in control"),
                (t.m(pre_den) == 0, f"{pre_den!r} sums to 0 in treatment"),
            ]
    out: list[str | None] = [None] * len(c.n)
    for mask, text in reversed(checks):
        for i, hit in enumerate(mask.tolist()):
            if hit:
                out[i] = text
    return out


def _analyse(
    spec: Spec, c: _Moments, t: _Moments, *, cuped: bool, alpha: float
) -> _Result:
    """Test one metric on every comparison (control ``c`` against treatment ``t``)."""
    import numpy as np

    reason = _reasons(spec, c, t, cuped=cuped)
    if isinstance(spec, Proportion):
        mc, mt = c.m(spec.value), t.m(spec.value)
        low, high, p, rel_low, rel_high = _ztest(mc, c.n, mt, t.n, alpha)
    else:
        mc, vc, mt, vt = _estimates(spec, c, t, cuped=cuped)
        low, high, p, rel_low, rel_high = _welch(mc, vc, c.n, mt, vt, t.n, alpha)
    blocked = np.array([r is not None for r in reason], dtype=bool)
    undefined = (c.n == 0) | (t.n == 0) | ~np.isfinite(mc) | ~np.isfinite(mt)

    def keep(x: Any, mask: Any) -> NDArray[np.float64]:
        return np.where(mask, np.nan, np.asarray(x, dtype=np.float64))

    with np.errstate(all="ignore"):
        delta = mt - mc
        delta_rel = np.where(mc != 0, mt / mc - 1.0, np.nan)
    return _Result(
        control_mean=keep(mc, (c.n == 0) | ~np.isfinite(mc)),
        treatment_mean=keep(mt, (t.n == 0) | ~np.isfinite(mt)),
        delta=keep(delta, undefined),
        delta_rel=keep(delta_rel, undefined),
        ci_low=keep(low, blocked),
        ci_high=keep(high, blocked),
        rel_ci_low=keep(rel_low, blocked),
        rel_ci_high=keep(rel_high, blocked),
        p_value=keep(p, blocked),
        reason=reason,
    )


# --------------------------------------------------------------------------
# sample ratio


def _chi_square(
    counts: NDArray[np.float64], weights: NDArray[np.float64]
) -> tuple[NDArray[np.float64], int, NDArray[np.float64]]:
    """Chi-square goodness of fit of each row of ``counts`` to the shares ``weights``.

    No continuity correction (``scipy.stats.chisquare``); a row without
    units gets NaN.
    """
    import numpy as np

    stats = require_scipy("the sample-ratio test")
    share = weights / weights.sum()
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(all="ignore"):
        expected_ = total * share
        statistic = ((counts - expected_) ** 2 / expected_).sum(axis=1)
    df = counts.shape[1] - 1
    statistic = np.where(total[:, 0] > 0, statistic, np.nan)
    return statistic, df, stats.chi2.sf(statistic, df)


def _srm_frame(
    slices: pl.DataFrame | None,
    arms: Sequence[str],
    counts: NDArray[np.float64],
    weights: NDArray[np.float64],
    variant: str,
) -> pl.DataFrame:
    """One row per (slice, arm): counts, shares and the slice's test.

    ``counts`` has one row per slice (in the order of ``slices``; one row
    when ``slices`` is None) and one column per arm.
    """
    import numpy as np

    statistic, df, p = _chi_square(counts, weights)
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(all="ignore"):
        observed = counts / total
    n_slices, n_arms = counts.shape
    frame = pl.DataFrame({variant: list(arms) * n_slices}, schema={variant: pl.String})
    if slices is not None:
        frame = pl.concat(
            [
                slices.select(
                    pl.all().gather([i // n_arms for i in range(frame.height)])
                ),
                frame,
            ],
            how="horizontal",
        )
    frame = frame.with_columns(
        pl.Series("n_units", counts.reshape(-1).astype(np.int64)),
        pl.Series("expected_share", np.tile(weights / weights.sum(), n_slices)),
        pl.Series("observed_share", observed.reshape(-1), nan_to_null=True),
        pl.Series("statistic", np.repeat(statistic, n_arms), nan_to_null=True),
        pl.lit(df, dtype=pl.Int64).alias("df"),
        pl.Series("p_value", np.repeat(p, n_arms), nan_to_null=True),
    )
    return frame.with_columns((pl.col("p_value") < SRM_THRESHOLD).alias("srm_flag"))


def srm_counts(
    observed: Mapping[str, int], expected: Mapping[str, float] | None = None
) -> pl.DataFrame:
    """Sample-ratio mismatch of unit counts per variant: chi-square goodness of fit.

    Parameters
    ----------
    observed : mapping of str to int
        Units per variant, e.g. ``{"A": 600, "B": 400}``; at least two.
    expected : mapping of str to float, optional
        Planned weight per variant (any positive scale: ``{"A": 1, "B": 1}``
        and ``{"A": 0.5, "B": 0.5}`` are the same); default an equal split.
        A variant in ``expected`` but not in ``observed`` counts 0 units.

    Returns
    -------
    polars.DataFrame
        One row per variant: ``variant, n_units, expected_share,
        observed_share, statistic, df, p_value, srm_flag`` (the last four
        the same on every row: Pearson's chi-square, its degrees of freedom
        ``arms - 1``, the p-value, and whether it is below
        :data:`SRM_THRESHOLD`, 0.001).

    Raises
    ------
    OptionError
        Fewer than two variants, a negative or fractional count, a
        non-positive weight, or an observed variant without a weight.

    See Also
    --------
    srm : the same from a unit-level frame, per slice.

    Notes
    -----
    ``statistic = sum((n_i - N w_i)^2 / (N w_i))`` over variants, with ``N``
    the total and ``w_i`` the expected shares, without continuity correction
    (``scipy.stats.chisquare``); for two arms its p-value is that of the
    two-sided normal test of one arm's share (tea-tasting's
    ``SampleRatio(method="norm", correction=False)``).

    Examples
    --------
    >>> result = srm_counts({"A": 600, "B": 400})
    >>> float(result["statistic"][0]), f"{result['p_value'][0]:.3g}"
    (40.0, '2.54e-10')
    >>> f"{srm_counts({'A': 44_000, 'B': 45_000})['p_value'][0]:.3g}"
    '0.000802'
    """
    import numpy as np

    if not isinstance(observed, Mapping) or len(observed) < 1:
        msg = f"observed must map variants to unit counts, found {observed!r}."
        raise OptionError(msg)
    counts: dict[str, int] = {}
    for key, count in observed.items():
        if (
            isinstance(count, bool)
            or not isinstance(count, int | np.integer)
            or count < 0
        ):
            msg = f"observed[{key!r}] must be a whole number of units, found {count!r}."
            raise OptionError(msg)
        counts[_as_key(key)] = int(count)
    weights = _check_expected(expected)
    arms = _arms(sorted(counts), weights, "observed")
    matrix = np.array([[counts.get(a, 0) for a in arms]], dtype=np.float64)
    shares = _weights(arms, weights)
    return _srm_frame(None, arms, matrix, shares, "variant")


def _arms(
    seen: Sequence[str], weights: Mapping[str, float] | None, what: str
) -> list[str]:
    """Every variant: those with units and those with a weight (sorted)."""
    if weights is not None:
        unplanned = [v for v in seen if v not in weights]
        if unplanned:
            msg = (
                f"variant(s) {unplanned!r} have units but no weight in expected "
                f"(which names {sorted(weights)!r}).\n  Hint: give every variant "
                "its planned weight, e.g. expected={'A': 0.5, 'B': 0.5}."
            )
            raise OptionError(msg)
    arms = sorted({*seen, *(weights or {})})
    if len(arms) < 2:
        msg = (
            f"a sample-ratio test needs at least two variants, found {arms!r} in "
            f"{what}.\n  Hint: check the variant column, or name the planned "
            "variants in expected=."
        )
        raise OptionError(msg)
    return arms


def _weights(
    arms: Sequence[str], weights: Mapping[str, float] | None
) -> NDArray[np.float64]:
    import numpy as np

    if weights is None:
        return np.ones(len(arms), dtype=np.float64)
    return np.array([weights[a] for a in arms], dtype=np.float64)


# --------------------------------------------------------------------------
# reading a unit-level frame


@dataclass
class _Units:
    """Sufficient statistics of a unit-level frame, one row per (slice, arm)."""

    grid: pl.DataFrame  # sorted by slice, then arm; ``__n`` 0 where no unit
    slices: pl.DataFrame | None  # the distinct slices, in the grid's order
    arms: list[str]  # every variant, sorted
    seen: list[str]  # the variants that have units
    overall: NDArray[np.float64] | None  # distinct units per arm (with slices)

    def counts(self) -> NDArray[np.float64]:
        """Units per (slice, arm), one row per slice."""
        import numpy as np

        n = self.grid["__n"].to_numpy().astype(np.float64)
        return n.reshape(-1, len(self.arms))

    def arm(self, name: str) -> pl.DataFrame:
        """Return the rows of one arm, one per slice."""
        return self.grid.filter(pl.col("__arm") == name)


def _read_units(
    lf: pl.LazyFrame,
    plan: _Plan | None,
    *,
    variant: str,
    unit: str | None,
    slices: list[str],
    weights: Mapping[str, float] | None,
    repeats: bool = False,
) -> _Units:
    """Aggregate the units by (variant, slice) in one pass, and check them.

    Raises for units in more than one variant and, unless ``repeats`` (a
    frame of rows, several per unit, whose distinct units are counted),
    for a unit repeated within a slice; warns for units without a variant
    (left out).
    """
    import numpy as np

    keys = [variant, *slices]
    aggs = [pl.len().alias("__n")]
    if unit is not None and repeats:
        aggs.append(pl.col(unit).n_unique().alias("__units"))
    if plan is not None:
        aggs += plan.aggregations()
    present = lf.filter(pl.col(variant).is_not_null())
    screens = []
    if unit is not None:
        screens.append(
            present.select(_unit_screen(unit, variant, slices, repeats=repeats))
        )
        if slices:
            screens.append(
                present.group_by(variant).agg(
                    pl.col(unit).hash(_SEED).n_unique().alias("__units")
                )
            )
    # polars' streaming engine aggregates fastest, its in-memory engine counts
    # distinct values fastest (measured on ten million units)
    results = [
        lf.group_by(keys).agg(aggs).collect(),
        *(pl.collect_all(screens, engine="in-memory") if screens else []),
    ]
    stats = results[0].with_columns(pl.col(variant).cast(pl.String).alias("__arm"))
    missing = stats.filter(pl.col("__arm").is_null())
    if missing.height:
        warn(
            f"{int(missing['__n'].sum())} unit row(s) have no variant (null in "
            f"{variant!r}) and are left out.\n  Hint: fill or drop them before the "
            "analysis to silence this."
        )
        stats = stats.filter(pl.col("__arm").is_not_null())
    if stats.height == 0:
        msg = f"the units frame has no rows with a variant (column {variant!r})."
        raise DataError(msg)
    if plan is not None:
        plan.check_values(stats, present)
    overall: dict[str, int] | None = None
    if unit is not None:
        screen = results[1].row(0, named=True)
        suspect = (
            (not repeats and not slices and screen["__rows"] != screen["__units"])
            or (not repeats and slices and screen["__rows"] != screen["__cells"])
            or ((repeats or bool(slices)) and screen["__pairs"] != screen["__units"])
        )
        if suspect:  # exact checks; they find nothing after a hash collision
            _contamination(present, unit, variant)
            if not repeats:
                _repeats(present, [unit, variant, *slices])
        if repeats:
            stats = stats.with_columns(pl.col("__units").alias("__n"))
        if slices:
            overall = {
                str(a): int(k) for a, k in results[2].iter_rows() if a is not None
            }
    seen = sorted(str(v) for v in stats["__arm"].unique().to_list())
    arms = _arms(seen, weights, f"column {variant!r}")
    arm_frame = pl.DataFrame({"__arm": arms}, schema={"__arm": pl.String})
    stats = stats.drop(variant)
    if slices:
        slice_frame = (
            stats.select(slices)
            .unique()
            .sort(slices, nulls_last=True, maintain_order=True)
        )
        grid = slice_frame.with_row_index("__s").join(
            arm_frame.with_row_index("__a"), how="cross"
        )
        grid = grid.join(stats, on=["__arm", *slices], how="left", nulls_equal=True)
    else:
        slice_frame = None
        grid = arm_frame.with_row_index("__a").with_columns(
            pl.lit(0, dtype=pl.UInt32).alias("__s")
        )
        grid = grid.join(stats, on="__arm", how="left")
    grid = grid.sort("__s", "__a").with_columns(pl.col("__n").fill_null(0))
    totals: NDArray[np.float64] | None = None
    if overall is not None:
        totals = np.array([overall.get(a, 0) for a in arms], dtype=np.float64)
    elif slices:
        by_arm = grid.group_by("__arm").agg(pl.col("__n").sum())
        found_n = dict(
            zip(by_arm["__arm"].to_list(), by_arm["__n"].to_list(), strict=True)
        )
        totals = np.array([found_n.get(a, 0) for a in arms], dtype=np.float64)
    return _Units(grid, slice_frame, arms, seen, totals)


#: Seed of the hashes that screen for repeated units (exact checks follow a hit).
_SEED = 0x1EE7


def _unit_screen(
    unit: str, variant: str, slices: list[str], *, repeats: bool
) -> list[pl.Expr]:
    """Distinct counts of hashed keys that reveal repeated or shared units.

    Hashing makes the screen one fast pass over ten million ids; a
    collision can only cause a needless exact check, never a missed one.
    """
    h_unit = pl.col(unit).hash(_SEED)
    screen = [pl.len().alias("__rows"), h_unit.n_unique().alias("__units")]
    if slices and not repeats:
        cell = h_unit
        for i, column in enumerate(slices):
            cell = cell ^ pl.col(column).hash(_SEED + 2 + i)
        screen.append(cell.n_unique().alias("__cells"))
    if slices or repeats:
        pair = h_unit ^ pl.col(variant).hash(_SEED + 1)
        screen.append(pair.n_unique().alias("__pairs"))
    return screen


def _repeats(present: pl.LazyFrame, keys: list[str]) -> None:
    found = present.group_by(keys).len().filter(pl.col("len") > 1).collect()
    if not found.height:
        return
    n_repeated = int((found["len"] - 1).sum())
    example = found.sort(keys, nulls_last=True).row(0, named=True)
    shown = ", ".join(f"{k}={example[k]!r}" for k in keys)
    msg = (
        f"the units frame repeats {n_repeated} unit row(s), e.g. {shown} "
        f"x{example['len']}; each unit must have one row per slice.\n  Hint: "
        f"sum its values first, e.g. units.group_by({keys!r}).sum()."
    )
    raise DataError(msg)


def _contamination(present: pl.LazyFrame, unit: str, variant: str) -> None:
    found = (
        present.group_by(unit)
        .agg(pl.col(variant).cast(pl.String).unique().sort().alias("__variants"))
        .filter(pl.col("__variants").list.len() > 1)
        .sort(unit)
        .collect()
    )
    if not found.height:
        return
    examples = ", ".join(f"{u!r} in {v!r}" for u, v in found.head(3).iter_rows())
    msg = (
        f"{found.height} unit(s) appear in more than one variant, e.g. {examples}; "
        "a randomisation unit belongs to one arm.\n  Hint: drop them (and report "
        "how many) or fix the assignment before the analysis."
    )
    raise DataError(msg)


# --------------------------------------------------------------------------
# the A/B test


def _spec_columns(specs: Mapping[str, Spec], *, cuped: bool) -> dict[str, str]:
    """Each column the metrics read, with the first metric that reads it."""
    needed: dict[str, str] = {}
    for name, spec in specs.items():
        if cuped and isinstance(spec, Mean | Ratio) and spec.pre is None:
            hint = (
                f"mean({spec.value!r}, pre='pre_{spec.value}')"
                if isinstance(spec, Mean)
                else f"ratio({spec.numer!r}, {spec.denom!r}, pre=('pre_{spec.numer}', 'pre_{spec.denom}'))"
            )
            msg = (
                f"cuped=True needs a pre-period covariate for metric {name!r} "
                f"({spec!r} has pre=None).\n  Hint: {hint}, or cuped=False."
            )
            raise OptionError(msg)
        for column in spec.columns(cuped=cuped):
            needed.setdefault(column, f"metric {name!r} ({spec!r})")
    return needed


def _srm_columns(
    units: _Units, weights: Mapping[str, float] | None
) -> tuple[NDArray[np.float64], float | None, list[str]]:
    """Test the sample ratio of each slice and overall; describe any mismatch."""
    import numpy as np

    shares = _weights(units.arms, weights)
    counts = units.counts()
    _, _, p_slices = _chi_square(counts, shares)
    overall_p = None
    problems: list[str] = []
    if units.overall is not None:
        overall_p = float(_chi_square(units.overall[None, :], shares)[2][0])
        if overall_p < SRM_THRESHOLD:
            found = units.overall.astype(int).tolist()
            problems.append(
                f"all units (p = {overall_p:.3g}, units "
                f"{dict(zip(units.arms, found, strict=True))})"
            )
    flagged = np.flatnonzero(p_slices < SRM_THRESHOLD)
    if len(flagged):
        first = int(flagged[0])
        found = counts[first].astype(int).tolist()
        shown = f"p = {p_slices[first]:.3g}, units {dict(zip(units.arms, found, strict=True))}"
        if units.slices is None:
            problems.append(f"the experiment ({shown})")
        else:
            where = ", ".join(
                f"{k}={v!r}" for k, v in units.slices.row(first, named=True).items()
            )
            problems.append(
                f"{len(flagged)} of {len(p_slices)} slices (e.g. {where}: {shown})"
            )
    return p_slices, overall_p, problems


def _srm_warning(
    problems: list[str], weights: Mapping[str, float] | None, arms: Sequence[str]
) -> None:
    if not problems:
        return
    planned = weights or dict.fromkeys(arms, 1.0)
    total = sum(planned.values())
    shares = {a: round(planned[a] / total, 4) for a in arms}
    warn(
        f"sample ratio mismatch in {' and '.join(problems)} against the planned "
        f"shares {shares} (chi-square p < {SRM_THRESHOLD}): the comparison is not "
        "trustworthy and its rows are flagged in srm_flag.\n  Hint: find the cause "
        "(assignment, logging, bots, a trigger that depends on the treatment) "
        "before reading the deltas; pass expected= if the split is not equal."
    )


def _reason_warning(reasons: Sequence[str | None], total: int) -> None:
    blocked = [r for r in reasons if r is not None]
    if not blocked:
        return
    kinds: dict[str, int] = {}
    for r in blocked:
        kinds[r] = kinds.get(r, 0) + 1
    listed = "; ".join(f"{text} ({k})" for text, k in sorted(kinds.items()))
    warn(
        f"{len(blocked)} of {total} comparisons could not be tested: {listed}. "
        "Their intervals and p-values are null (outside the correction family) "
        "and the reason column says why.\n  Hint: slice more coarsely, or leave "
        "out the slices or variants without enough units."
    )


def _finish(
    rows: pl.DataFrame,
    *,
    correction: str | None,
    alpha: float,
    slices: list[str],
    variant: str,
) -> tuple[pl.DataFrame, int]:
    """Adjust the p-values over every tested row, flag, order and select columns."""
    import numpy as np

    p = rows["p_value"].to_numpy().astype(np.float64)
    tested = ~np.isnan(p)
    adjusted = np.full(len(p), np.nan)
    adjusted[tested] = adjust(p[tested], None if correction == "none" else correction)  # type: ignore[arg-type]
    rows = rows.with_columns(
        pl.Series("p_adjusted", adjusted, nan_to_null=True),
    ).with_columns(
        (pl.col("p_adjusted") <= alpha).alias("significant"),
        *(
            pl.col(c).fill_nan(None)
            for c in AB_COLUMNS
            if c
            not in (
                "n_control",
                "n_treatment",
                "srm_flag",
                "reason",
                "significant",
                "p_adjusted",
            )
        ),
    )
    rows = rows.sort("__t", "__s", "__m").rename({"__variant": variant})
    return rows.select(variant, *slices, "metric", *AB_COLUMNS), int(tested.sum())


def _treatments(data: _Units, control: Any) -> tuple[str, list[str]]:
    """Return the control's name and the treatments; raise or warn for empty arms."""
    control_key = _as_key(control)
    if control_key not in data.arms:
        msg = (
            f"control={control!r} is not a variant; the variants are {data.arms!r}.\n"
            "  Hint: pass one of them as control=."
        )
        raise OptionError(msg)
    empty = [a for a in data.arms if a not in data.seen]
    if control_key in empty:
        msg = (
            f"control {control_key!r} has no units (it is only named in expected); "
            f"the variants with units are {data.seen!r}."
        )
        raise DataError(msg)
    if empty:
        warn(
            f"variant(s) {empty!r} named in expected have no units: their "
            "comparisons are null (reason 'no units in treatment') and the "
            "sample-ratio test counts them as 0 units."
        )
    return control_key, [a for a in data.arms if a != control_key]


def ab_test_units(
    units: Any,
    metrics: Mapping[str, Spec],
    *,
    control: Any,
    variant: str = "variant",
    unit: str | None = "unit_id",
    by: str | Sequence[str] | None = None,
    cuped: bool = False,
    correction: Correction | Literal["none"] | None = "holm",
    alpha: float = 0.05,
    expected: Mapping[str, float] | None = None,
) -> Any:
    """Compare every treatment arm with the control, per slice and metric.

    Parameters
    ----------
    units : polars DataFrame or LazyFrame, pandas DataFrame or pyarrow Table
        One row per randomisation unit (and slice): the ``variant`` column,
        the ``unit`` id, the metrics' numeric (or boolean) columns, and the
        ``by`` columns.
    metrics : mapping of str to Mean, Ratio or Proportion
        Output name to spec: :func:`mean`, :func:`ratio`, :func:`proportion`.
    control : str
        The control variant; every other variant is a treatment.
    variant : str, default "variant"
        The column naming each unit's arm (cast to text).
    unit : str or None, default "unit_id"
        The unit id column, used to check that a unit appears once per slice
        and in one variant only; None skips the check (for a frame without
        ids).
    by : str or list of str, optional
        Slice columns: every comparison is repeated within each slice. Slice
        only by attributes the treatment cannot change (device, country,
        pre-period activity); a slice defined by behaviour after assignment
        (the query class of the searches a unit made) is a diagnostic.
    cuped : bool, default False
        Adjust means and ratios by their pre-period covariates (the specs'
        ``pre``), which every mean and ratio must then have. Proportions
        have no CUPED form and are tested as they are.
    correction : {"holm", "bonferroni", "bh", "by", "none"} or None, default "holm"
        Multiple-testing correction over the family of every (treatment,
        slice, metric) row of the call, by the same code as
        :func:`ireval_df.compare` (statsmodels' ``multipletests``).
    alpha : float, default 0.05
        Significance level; intervals cover ``1 - alpha``.
    expected : mapping of str to float, optional
        Planned weight of each variant, for the sample-ratio test (default an
        equal split). A variant named here without units is counted as 0
        units, and its comparisons are null.

    Returns
    -------
    Frame of the same kind as ``units`` (a LazyFrame gives a polars DataFrame)
        One row per (treatment, slice, metric), ordered so: ``variant`` (the
        treatment arm), the ``by`` columns, ``metric`` (the output name),
        ``control_mean, treatment_mean, delta, delta_rel, ci_low, ci_high,
        rel_ci_low, rel_ci_high, p_value, p_adjusted`` (Float64),
        ``significant`` (Boolean), ``n_control, n_treatment`` (Int64, units),
        ``srm_p_value`` (Float64), ``srm_flag`` (Boolean) and ``reason``
        (String: null, or why the row could not be tested).

    Raises
    ------
    SchemaError
        A needed column is absent (named, with the columns found), or not
        numeric.
    DataError
        Null, NaN or infinite values in a metric column; a proportion's
        column not 0/1; a unit repeated within a slice or found in two
        variants; the control without units.
    OptionError
        An unknown option, a control that is not a variant (the variants are
        listed), ``cuped=True`` with a mean or ratio without ``pre``.
    IrevalError
        scipy is not installed (``pip install "ireval-df[stats]"``).

    Warns
    -----
    IrevalWarning
        Once for a sample-ratio mismatch (the comparison is not
        trustworthy), once for rows that could not be tested, once for
        variants without units, once for units without a variant.

    See Also
    --------
    srm : the sample-ratio test alone.
    quantile_test : quantiles of row-level values (median time to first click).
    power_units : the sample size these tests need.

    Notes
    -----
    For each arm the analysis reads the units' count ``n``, and the means,
    variances and covariances of the metric's columns (one polars
    ``group_by``).

    - ``mean(y)``: the arm's mean ``ȳ`` with variance ``s²_y / n``.
    - ``ratio(y, x)``: ``R = ȳ / x̄`` (sum over sum), with the delta-method
      variance ``(s²_y - 2 R s_xy + R² s²_x) / (n x̄²)``: units, not searches
      or clicks, are the independent observations.
    - Both: ``delta = R_t - R_c``, the interval ``delta ± t(1 - alpha/2, df)
      · se`` and the two-sided p-value of Welch's t, with ``se² = var_c +
      var_t`` and Welch-Satterthwaite's ``df`` (tea-tasting's ``Mean`` and
      ``RatioOfMeans``).
    - ``delta_rel = R_t / R_c - 1``; its interval is the delta method on the
      log ratio: ``(R_t / R_c) · exp(± t(1 - alpha/2, df') · se')`` minus 1,
      with ``se'² = var_c / R_c² + var_t / R_t²`` and its own Welch df
      (null when a mean is 0 or the means differ in sign).
    - CUPED (Deng et al. 2013): with the pre-period ratio ``P`` (a pre-period
      mean for ``mean``), ``theta = cov(R, P) / var(P)`` on the two arms
      pooled (0 when ``var(P)`` is 0), each arm's estimate ``R - theta (P -
      P_pooled)`` and its variance ``var(R) + theta² var(P) - 2 theta cov(R,
      P)``, all by the delta method on per-unit sums: tea-tasting's
      ``RatioOfMeans(numer, denom, numer_covariate, denom_covariate)``.
      ``control_mean`` and ``treatment_mean`` are then the adjusted means.
    - ``proportion(y)``: the two-proportion z-test with the pooled variance
      under the null (statsmodels' ``proportions_ztest``, tea-tasting's
      ``Proportion(method="norm", correction=False)``), Wald's interval of
      the difference (unpooled, statsmodels'
      ``confint_proportions_2indep(method="wald")``) and the log-ratio
      interval of the relative difference (``compare="ratio",
      method="log"``).
    - A zero standard error gives p = 1 when the means are equal and 0
      otherwise, and an interval of width 0.
    - A row is not tested (null interval and p-value, outside the
      correction family, ``reason`` says why, and one warning counts them)
      when an arm has fewer than 2 units in the slice, or a ratio's
      denominator sums to 0 in an arm.
    - The moments are sums that polars computes in parallel, so two runs on
      the same data may differ in the last bit (about 1e-16 relative);
      compare results with a tolerance.
    - ``srm_p_value`` is the chi-square test of the slice's unit counts
      against ``expected`` (all arms at once, :func:`srm`); ``srm_flag`` is
      true when it, or the test over all slices (distinct units per arm;
      rows per arm with ``unit=None``), is below 0.001, and a warning then
      says the comparison is not trustworthy.

    Examples
    --------
    >>> units = pl.DataFrame({
    ...     "unit_id": [f"u{i}" for i in range(8)],
    ...     "variant": ["A", "A", "A", "A", "B", "B", "B", "B"],
    ...     "clicks": [1, 2, 0, 3, 2, 3, 1, 4],
    ...     "searches": [2, 4, 1, 3, 2, 4, 2, 4],
    ... })
    >>> result = ab_test_units(units, {"ctr": ratio("clicks", "searches")}, control="A")
    >>> row = result.row(0, named=True)
    >>> row["variant"], row["metric"], row["control_mean"], row["treatment_mean"]
    ('B', 'ctr', 0.6, 0.8333333333333334)
    >>> round(row["p_value"], 4), row["n_control"], row["srm_flag"]
    (0.2789, 4, False)
    """
    import numpy as np

    specs = _check_metrics(metrics)
    check_choice("correction", correction, _CORRECTIONS)
    alpha = _check_level("alpha", alpha)
    if not isinstance(cuped, bool):
        msg = f"cuped must be True or False, found {cuped!r}."
        raise OptionError(msg)
    weights = _check_expected(expected)
    slices = _slices(by, variant, unit)
    lf = _lazy(units)
    schema = lf.collect_schema()
    columns = _spec_columns(specs, cuped=cuped)
    needed = {variant: "the variant column (variant=)"}
    if unit is not None:
        needed[unit] = "the unit id (unit=, or unit=None to skip the check)"
    needed.update({s: "a slice (by=)" for s in slices})
    needed.update(columns)
    _require_columns(schema, needed)
    _require_numeric(schema, list(columns), "a metric's column")
    plan = _Plan(specs, cuped=cuped)
    data = _read_units(
        lf, plan, variant=variant, unit=unit, slices=slices, weights=weights
    )

    control_key, treatments = _treatments(data, control)
    p_slices, overall_p, problems = _srm_columns(data, weights)
    flag_all = overall_p is not None and overall_p < SRM_THRESHOLD

    control_rows = data.arm(control_key)
    treated = pl.concat([data.arm(a) for a in treatments])
    controls = pl.concat([control_rows] * len(treatments))
    n_c = controls["__n"].to_numpy().astype(np.float64)
    n_t = treated["__n"].to_numpy().astype(np.float64)
    c_moments, t_moments = plan.moments(controls, n_c), plan.moments(treated, n_t)
    keys = treated.select(
        pl.col("__arm").alias("__variant"),
        *slices,
        pl.col("__a").alias("__t"),
        "__s",
    )
    srm_p = np.tile(p_slices, len(treatments))
    parts = []
    reasons: list[str | None] = []
    for m, (name, spec) in enumerate(specs.items()):
        r = _analyse(spec, c_moments, t_moments, cuped=cuped, alpha=alpha)
        reasons += r.reason
        parts.append(
            keys.with_columns(
                pl.lit(name, dtype=pl.String).alias("metric"),
                pl.lit(m, dtype=pl.Int64).alias("__m"),
                *(
                    pl.Series(field, getattr(r, field), dtype=pl.Float64)
                    # the estimates, up to the p-value (the rest come later)
                    for field in AB_COLUMNS[: AB_COLUMNS.index("p_adjusted")]
                ),
                pl.Series("n_control", n_c.astype(np.int64), dtype=pl.Int64),
                pl.Series("n_treatment", n_t.astype(np.int64), dtype=pl.Int64),
                pl.Series("srm_p_value", srm_p, dtype=pl.Float64),
                pl.Series(
                    "srm_flag", (srm_p < SRM_THRESHOLD) | flag_all, dtype=pl.Boolean
                ),
                pl.Series("reason", r.reason, dtype=pl.String),
            )
        )
    result, family = _finish(
        pl.concat(parts),
        correction=correction,
        alpha=alpha,
        slices=slices,
        variant=variant,
    )
    _srm_warning(problems, weights, data.arms)
    _reason_warning(reasons, result.height)
    settings = {
        "analysis": "per unit: Welch t (means, ratios by the delta method), "
        "two-proportion z-test (proportions)",
        "control": control_key,
        "cuped": cuped,
        "correction": None if correction == "none" else correction,
        "alpha": alpha,
        "ci": f"{1.0 - alpha:.0%}",
        "family_size": family,
        "ab_by": slices,
        "expected": weights,
        "srm_threshold": SRM_THRESHOLD,
        "srm_overall_p_value": overall_p,
        "metrics": {name: repr(spec) for name, spec in specs.items()},
    }
    return output(result, units, settings)


def srm(
    units: Any,
    *,
    variant: str = "variant",
    by: str | Sequence[str] | None = None,
    expected: Mapping[str, float] | None = None,
    unit: str | None = None,
) -> Any:
    """Sample-ratio mismatch of a frame's units per variant, overall or per slice.

    Parameters
    ----------
    units : polars DataFrame or LazyFrame, pandas DataFrame or pyarrow Table
        One row per unit (and slice), or any rows with a ``unit`` id column.
    variant : str, default "variant"
        The column naming each unit's arm.
    by : str or list of str, optional
        Slice columns: one test per slice.
    expected : mapping of str to float, optional
        Planned weight per variant; default an equal split over the variants
        found. A variant named here without units counts 0 (and warns).
    unit : str, optional
        Count distinct values of this column instead of rows (for a frame of
        searches or events), and check that no unit is in two variants.

    Returns
    -------
    Frame of the same kind as ``units`` (a LazyFrame gives a polars DataFrame)
        One row per (slice, variant): the ``by`` columns, ``variant``,
        ``n_units``, ``expected_share``, ``observed_share``, ``statistic``,
        ``df``, ``p_value``, ``srm_flag``, as :func:`srm_counts`.

    Raises
    ------
    SchemaError
        A named column is absent.
    OptionError
        Fewer than two variants; a variant with units and no weight.
    DataError
        A unit in two variants (with ``unit``).

    Notes
    -----
    Pearson's chi-square goodness of fit, no continuity correction, df =
    variants - 1. Run it per slice too: a mismatch confined to a slice (a
    device, a language) points at its cause, and a slice defined by
    behaviour after assignment shows a mismatch when the treatment changes
    who falls in it. The test over all units is the call without ``by``.

    Examples
    --------
    >>> units = pl.DataFrame({"variant": ["A"] * 600 + ["B"] * 400})
    >>> result = srm(units)
    >>> result["n_units"].to_list(), f"{result['p_value'][0]:.3g}", result["srm_flag"][0]
    ([600, 400], '2.54e-10', True)
    """
    weights = _check_expected(expected)
    slices = _slices(by, variant, unit)
    lf = _lazy(units)
    needed = {variant: "the variant column (variant=)"}
    if unit is not None:
        needed[unit] = "counting distinct units (unit=)"
    needed.update({s: "a slice (by=)" for s in slices})
    _require_columns(lf.collect_schema(), needed)
    data = _read_units(
        lf,
        None,
        variant=variant,
        unit=unit,
        slices=slices,
        weights=weights,
        repeats=True,
    )
    empty = [a for a in data.arms if a not in data.seen]
    if empty:
        warn(
            f"variant(s) {empty!r} named in expected have no units; the test "
            "counts them as 0."
        )
    result = _srm_frame(
        data.slices, data.arms, data.counts(), _weights(data.arms, weights), variant
    )
    settings = {
        "test": "chi-square goodness of fit",
        "expected": weights,
        "srm_by": slices,
    }
    return output(result, units, settings)


# --------------------------------------------------------------------------
# power


def _power_arrays(
    base: Any,
    var: Any,
    *,
    mde: float | None,
    n: int | None,
    relative: bool,
    alpha: float,
    power_: float,
) -> dict[str, Any]:
    """Return the units per arm for an MDE, or the MDE for n per arm (arrays)."""
    import numpy as np

    normal = NormalDist()
    z = normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(power_)
    base = np.asarray(base, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64)
    with np.errstate(all="ignore"):
        if mde is not None:
            absolute = mde * np.abs(base) if relative else np.full(base.shape, mde)
            raw = z * z * 2.0 * var / (absolute * absolute)
            # a product that should be whole may land just above it
            n_arm = np.ceil(np.round(raw, 9))
        else:
            n_arm = np.full(base.shape, float(n or 0))
            absolute = z * np.sqrt(2.0 * var / n_arm)
        rel = np.where(base != 0, absolute / np.abs(base), np.nan)
    return {"mde": absolute, "mde_rel": rel, "n_per_arm": n_arm}


def _check_power_options(
    mde: Any, n: Any, alpha: Any, power_: Any, relative: Any
) -> tuple[float | None, int | None, float, float]:
    if (mde is None) == (n is None):
        msg = (
            "give exactly one of mde= (to get the units per arm) and n= (to get "
            f"the minimum detectable effect), found mde={mde!r}, n={n!r}."
        )
        raise OptionError(msg)
    if mde is not None and (
        isinstance(mde, bool) or not isinstance(mde, int | float) or not mde > 0
    ):
        msg = f"mde must be a positive number, found {mde!r}."
        raise OptionError(msg)
    if n is not None:
        _check_count("n", n, 2)
    if not isinstance(relative, bool):
        msg = f"relative must be True or False, found {relative!r}."
        raise OptionError(msg)
    return (
        None if mde is None else float(mde),
        n,
        _check_level("alpha", alpha),
        _check_level("power", power_),
    )


def _power_frame(values: dict[str, Any], alpha: float, power_: float) -> pl.DataFrame:
    import numpy as np

    front = {"n_units": values["n_units"]} if "n_units" in values else {}
    return pl.DataFrame(
        {
            **front,
            "baseline_mean": values["baseline_mean"],
            "baseline_var": values["baseline_var"],
            "mde": values["mde"],
            "mde_rel": values["mde_rel"],
            "n_per_arm": np.where(
                np.isfinite(values["n_per_arm"]), values["n_per_arm"], np.nan
            ),
        },
        nan_to_null=True,
    ).with_columns(
        pl.col("n_per_arm").cast(pl.Int64),
        pl.lit(alpha).alias("alpha"),
        pl.lit(power_).alias("power"),
    )


def power(
    *,
    baseline_mean: float,
    baseline_var: float | None = None,
    mde: float | None = None,
    n: int | None = None,
    relative: bool = False,
    alpha: float = 0.05,
    power: float = 0.8,
) -> pl.DataFrame:
    """Units per arm to detect an effect, or the effect detectable with n units per arm.

    Parameters
    ----------
    baseline_mean : float
        The metric's mean in the control (a rate in [0, 1] for a proportion).
    baseline_var : float, optional
        The unit-level variance of the metric (for a ratio, its delta-method
        variance per unit: :func:`power_units` computes it from data).
        Default ``p (1 - p)`` for a rate ``p = baseline_mean`` in [0, 1].
    mde : float, optional
        The minimum detectable effect: an absolute difference, or with
        ``relative=True`` a share of ``baseline_mean`` (0.02 for +2%).
    n : int, optional
        Units per arm; exactly one of ``mde`` and ``n``.
    relative : bool, default False
        ``mde`` is relative to ``baseline_mean``.
    alpha : float, default 0.05
        Two-sided significance level.
    power : float, default 0.8
        Probability of detecting an effect of size ``mde``.

    Returns
    -------
    polars.DataFrame
        One row: ``baseline_mean, baseline_var, mde`` (absolute), ``mde_rel``, ``n_per_arm`` (Int64, rounded up),
        ``alpha, power``. A frame, like every result of the library, so that
        it prints, joins and writes to Parquet as they do.

    Raises
    ------
    OptionError
        Both or neither of ``mde`` and ``n``; a non-positive ``mde``; ``n``
        below 2; ``alpha`` or ``power`` outside (0, 1); no ``baseline_var``
        for a mean outside [0, 1].

    See Also
    --------
    power_units : the same from a baseline unit-level frame, for any spec.

    Notes
    -----
    ``n = (z(1 - alpha/2) + z(power))² · 2 var / mde²`` units per arm, and
    for a given ``n``, ``mde = (z(1 - alpha/2) + z(power)) · sqrt(2 var /
    n)``: a two-sided z-test of two equal arms, with the baseline's
    unit-level variance in both (Kohavi, Tang and Xu 2020, ch. 17; about
    ``16 var / mde²`` at the defaults).

    For a rate of 0.10 and an absolute MDE of 0.01 this gives 14,128 units
    per arm. statsmodels' ``NormalIndPower`` with Cohen's ``h =
    2 asin(sqrt(0.11)) - 2 asin(sqrt(0.10))`` gives 14,745 for the same
    inputs: it answers "how many units to tell a rate of 0.11 from 0.10",
    where the variance grows with the rate (``0.11 · 0.89`` in the
    treatment), while this formula answers "how many units to detect a
    change of 0.01 in a metric whose unit-level variance is the baseline's
    in both arms", the question for any unit-level metric (revenue, clicks
    per search) whose variance under the treatment is unknown in advance.
    For a rate the two differ by the variance at the alternative (the
    treatment's variance in place of the baseline's: ``(0.09 + 0.0979) /
    (2 · 0.09)`` is 4.4% more units).

    Examples
    --------
    >>> power(baseline_mean=0.10, mde=0.01)["n_per_arm"].item()
    14128
    >>> round(power(baseline_mean=0.10, n=14128)["mde"].item(), 5)
    0.01
    >>> power(baseline_mean=5.0, baseline_var=4.0, mde=0.02, relative=True)["n_per_arm"].item()
    6280
    """
    mde_, n_, alpha_, power_ = _check_power_options(mde, n, alpha, power, relative)
    if isinstance(baseline_mean, bool) or not isinstance(baseline_mean, int | float):
        msg = f"baseline_mean must be a number, found {baseline_mean!r}."
        raise OptionError(msg)
    if baseline_var is None:
        if not 0.0 <= baseline_mean <= 1.0:
            msg = (
                f"baseline_var is needed for a mean outside [0, 1] (found "
                f"baseline_mean={baseline_mean!r}); only a rate has the variance "
                "p (1 - p).\n  Hint: pass the unit-level variance, or use "
                "power_units() on a baseline frame."
            )
            raise OptionError(msg)
        var = baseline_mean * (1.0 - baseline_mean)
    elif (
        isinstance(baseline_var, bool)
        or not isinstance(baseline_var, int | float)
        or not baseline_var >= 0
    ):
        msg = f"baseline_var must be a number >= 0, found {baseline_var!r}."
        raise OptionError(msg)
    else:
        var = float(baseline_var)
    values = _power_arrays(
        [float(baseline_mean)],
        [var],
        mde=mde_,
        n=n_,
        relative=relative,
        alpha=alpha_,
        power_=power_,
    )
    values.update({"baseline_mean": [float(baseline_mean)], "baseline_var": [var]})
    return _power_frame(values, alpha_, power_)


def power_units(
    units: Any,
    spec: Spec,
    *,
    variant: str | None = None,
    by: str | Sequence[str] | None = None,
    cuped: bool = False,
    mde: float | None = None,
    n: int | None = None,
    relative: bool = False,
    alpha: float = 0.05,
    power: float = 0.8,
) -> Any:
    """Units per arm (or the MDE) for a spec, with its variance from a baseline frame.

    Parameters
    ----------
    units : polars DataFrame or LazyFrame, pandas DataFrame or pyarrow Table
        Baseline units (before the experiment, or one arm of a past one):
        one row per unit (and slice) with the spec's columns.
    spec : Mean, Ratio or Proportion
        The metric (:func:`mean`, :func:`ratio`, :func:`proportion`).
    variant : str, optional
        A variant column: one row per arm, each with its own mean and
        variance (take the control's). None treats all rows as one
        population.
    by : str or list of str, optional
        Slice columns: one row per slice (the units each slice needs).
    cuped : bool, default False
        Use the CUPED-adjusted variance (the spec's ``pre``):
        ``var(R) - cov(R, P)² / var(P)``, what the variance reduction buys.
    mde, n, relative, alpha, power
        As :func:`power`.

    Returns
    -------
    Frame of the same kind as ``units`` (a LazyFrame gives a polars DataFrame)
        One row per (variant, slice): the ``variant`` and ``by`` columns,
        ``n_units`` (in the baseline), ``baseline_mean``, ``baseline_var``,
        ``mde``, ``mde_rel``, ``n_per_arm``, ``alpha``, ``power``.

    Raises
    ------
    SchemaError, DataError, OptionError
        As :func:`ab_test_units`, and as :func:`power` for the options.

    Notes
    -----
    The unit-level variance: the sample variance of the value for
    :func:`mean`; ``p (1 - p)`` for :func:`proportion` (as :func:`power`);
    for :func:`ratio` the delta-method variance per unit, ``(s²_y - 2 R s_xy
    + R² s²_x) / x̄²``, which is ``n`` times the variance of the ratio of
    sums. A slice or arm with fewer than 2 units, or a ratio whose
    denominator sums to 0, gets nulls.

    Examples
    --------
    >>> units = pl.DataFrame({"clicks": [1, 0, 2, 1], "searches": [2, 1, 2, 3]})
    >>> row = power_units(units, ratio("clicks", "searches"), mde=0.1).row(0, named=True)
    >>> row["baseline_mean"], round(row["baseline_var"], 4), row["n_per_arm"]
    (0.5, 0.125, 197)
    """
    import numpy as np

    mde_, n_, alpha_, power_ = _check_power_options(mde, n, alpha, power, relative)
    specs = _check_metrics({"spec": spec})
    if not isinstance(cuped, bool):
        msg = f"cuped must be True or False, found {cuped!r}."
        raise OptionError(msg)
    slices = _slices(by, variant)
    keys = ([variant] if variant is not None else []) + slices
    lf = _lazy(units)
    columns = _spec_columns(specs, cuped=cuped)
    needed = {s: "a slice (by=)" for s in slices}
    if variant is not None:
        needed[variant] = "the variant column (variant=)"
    needed.update(columns)
    schema = lf.collect_schema()
    _require_columns(schema, needed)
    _require_numeric(schema, list(columns), "a metric's column")
    plan = _Plan(specs, cuped=cuped)
    aggs = [pl.len().alias("__n"), *plan.aggregations()]
    stats = (
        lf.group_by(keys).agg(aggs).sort(keys, nulls_last=True)
        if keys
        else lf.select(aggs)
    ).collect()
    if variant is not None:
        stats = stats.with_columns(pl.col(variant).cast(pl.String))
    plan.check_values(stats, lf)
    n_units = stats["__n"].to_numpy().astype(np.float64)
    m = plan.moments(stats, n_units)
    with np.errstate(all="ignore"):
        if isinstance(spec, Proportion):
            base = m.m(spec.value)
            var = base * (1.0 - base)
        else:
            # the population against itself: theta from its own moments
            base, var, _, _ = _estimates(spec, m, m, cuped=cuped)
            if cuped:
                base = (
                    m.m(spec.value)
                    if isinstance(spec, Mean)
                    else m.m(spec.numer) / m.m(spec.denom)
                )
    bad = (n_units < 2) | ~np.isfinite(base) | ~np.isfinite(var)
    base = np.where(bad, np.nan, base)
    var = np.where(bad, np.nan, var)
    values = _power_arrays(
        base, var, mde=mde_, n=n_, relative=relative, alpha=alpha_, power_=power_
    )
    values.update(
        {
            "n_units": n_units.astype(np.int64),
            "baseline_mean": base,
            "baseline_var": var,
        }
    )
    result = pl.concat(
        [stats.select(keys), _power_frame(values, alpha_, power_)], how="horizontal"
    )
    settings = {"power": "two-sided z, equal arms", "cuped": cuped, "spec": repr(spec)}
    return output(result, units, settings)


# --------------------------------------------------------------------------
# A/A re-splits


def _moments_from_sums(
    sums: NDArray[np.float64],
    centre: NDArray[np.float64],
    columns: Sequence[str],
    slot: Mapping[tuple[int, int], int],
    pairs: Sequence[tuple[str, str]],
) -> _Moments:
    """Moments of one half of each split from its sums of centred values.

    ``sums[:, 0]`` counts the units, ``sums[:, 1 + i]`` sums column ``i``
    (minus its overall mean ``centre[i]``) and ``sums[:, slot[i, j]]`` the
    products of columns ``i`` and ``j``.
    """
    import numpy as np

    n = sums[:, 0]
    index = {c: i for i, c in enumerate(columns)}
    with np.errstate(all="ignore"):
        s = {c: sums[:, 1 + i] for c, i in index.items()}

        def co(i: int, j: int) -> NDArray[np.float64]:
            a, b = columns[i], columns[j]
            return np.asarray((sums[:, slot[i, j]] - s[a] * s[b] / n) / (n - 1.0))

        return _Moments(
            n,
            {c: centre[i] + s[c] / n for c, i in index.items()},
            {c: co(i, i) for c, i in index.items()},
            {(a, b): co(index[a], index[b]) for a, b in pairs},
        )


def aa_units(
    units: Any,
    metrics: Mapping[str, Spec],
    *,
    n_splits: int = 1000,
    seed: int | None = 0,
    alpha: float = 0.05,
    cuped: bool = False,
) -> Any:
    """A/A test: split units that got the same treatment at random, many times.

    Each split assigns every unit to one of two halves with probability 1/2
    and analyses the halves exactly as :func:`ab_test_units` does. With no
    real difference, a trustworthy analysis finds a "significant" one in a
    share ``alpha`` of the splits, and its p-values are uniform.

    Parameters
    ----------
    units : polars DataFrame or LazyFrame, pandas DataFrame or pyarrow Table
        One row per unit, all from one arm (or from before the experiment),
        with the metrics' columns.
    metrics : mapping of str to Mean, Ratio or Proportion
        As :func:`ab_test_units`.
    n_splits : int, default 1000
        Random splits.
    seed : int or None, default 0
        Seed of ``numpy.random.default_rng``; the same seed gives the same
        splits.
    alpha : float, default 0.05
        The significance level whose false-positive rate is measured, and
        ``1 - alpha`` the coverage of its interval.
    cuped : bool, default False
        Analyse with CUPED, as :func:`ab_test_units`.

    Returns
    -------
    Frame of the same kind as ``units`` (a LazyFrame gives a polars DataFrame)
        One row per metric: ``metric, n_units, n_splits`` (the splits that
        could be tested), ``alpha, false_positive_rate`` (the share of
        splits with p <= alpha), ``fpr_ci_low, fpr_ci_high`` (its
        Clopper-Pearson interval, exact binomial), ``ks_statistic,
        ks_p_value`` (Kolmogorov-Smirnov test of the p-values against the
        uniform distribution, ``scipy.stats.kstest``).

    Raises
    ------
    SchemaError, DataError, OptionError
        As :func:`ab_test_units`; fewer than 4 units.

    Notes
    -----
    Vectorised: the units' centred values, their squares and products form
    one matrix, and a batch of splits is one matrix product with a 0/1
    assignment matrix (about ``CHUNK`` numbers at a time), from which each
    half's count, means, variances and covariances follow; the other half
    is the total minus this one. Memory is about ``8 · units · (1 + k + k(k
    + 1)/2)`` bytes for ``k`` distinct columns. A false-positive rate whose
    interval excludes ``alpha``, or a small KS p-value, means the analysis
    does not match the data: units that are not independent (the unit of
    randomisation is coarser than the unit of analysis), heavy tails with
    too few units, or a bug.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> units = pl.DataFrame({"clicks": rng.poisson(2, 500), "searches": rng.poisson(5, 500) + 1})
    >>> result = aa_units(units, {"ctr": ratio("clicks", "searches")}, n_splits=200)
    >>> row = result.row(0, named=True)
    >>> row["n_splits"], row["fpr_ci_low"] <= 0.05 <= row["fpr_ci_high"]
    (200, True)
    """
    import numpy as np

    specs = _check_metrics(metrics)
    n_splits = _check_count("n_splits", n_splits)
    alpha = _check_level("alpha", alpha)
    if not isinstance(cuped, bool):
        msg = f"cuped must be True or False, found {cuped!r}."
        raise OptionError(msg)
    stats_ = require_scipy("aa_units")
    lf = _lazy(units)
    columns = _spec_columns(specs, cuped=cuped)
    schema = lf.collect_schema()
    _require_columns(schema, columns)
    _require_numeric(schema, list(columns), "a metric's column")
    plan = _Plan(specs, cuped=cuped)
    plan.check_values(lf.select(plan.aggregations()).collect(), lf)
    values = (
        lf.select(pl.col(c).cast(pl.Float64) for c in plan.columns)
        .collect()
        .to_numpy()
        .astype(np.float64)
    )
    n, k = values.shape
    if n < 4:
        msg = f"an A/A test needs at least 4 units, found {n}."
        raise DataError(msg)
    centre = values.mean(axis=0)
    centred = values - centre
    slot: dict[tuple[int, int], int] = {}
    parts = [np.ones((n, 1)), centred]
    for i in range(k):
        for j in range(i, k):
            slot[i, j] = slot[j, i] = 1 + k + len(parts) - 2
            parts.append((centred[:, i] * centred[:, j])[:, None])
    matrix = np.hstack(parts)
    totals = matrix.sum(axis=0)
    del parts, centred, values
    rng = np.random.default_rng(seed)
    batch = max(1, CHUNK // n)
    p_values = {name: np.empty(n_splits) for name in specs}
    work = n_splits * n * matrix.shape[1]
    with Progress(n_splits, "A/A splits", work=work) as bar:
        for start in range(0, n_splits, batch):
            size = min(batch, n_splits - start)
            assign = (rng.random((size, n)) < 0.5).astype(np.float64)
            half = assign @ matrix
            one = _moments_from_sums(half, centre, plan.columns, slot, plan.pairs)
            other = _moments_from_sums(
                totals - half, centre, plan.columns, slot, plan.pairs
            )
            for name, spec in specs.items():
                r = _analyse(spec, other, one, cuped=cuped, alpha=alpha)
                p_values[name][start : start + size] = r.p_value
            bar.update(size)
    rows = []
    for name, p in p_values.items():
        tested = p[~np.isnan(p)]
        m = len(tested)
        hits = int((tested <= alpha).sum())
        low = (
            float(stats_.beta.ppf(alpha / 2.0, hits, m - hits + 1)) if hits > 0 else 0.0
        )
        high = (
            float(stats_.beta.ppf(1.0 - alpha / 2.0, hits + 1, m - hits))
            if hits < m
            else 1.0
        )
        ks = stats_.kstest(tested, "uniform") if m else None
        rows.append(
            {
                "metric": name,
                "n_units": n,
                "n_splits": m,
                "alpha": alpha,
                "false_positive_rate": hits / m if m else None,
                "fpr_ci_low": low if m else None,
                "fpr_ci_high": high if m else None,
                "ks_statistic": float(ks.statistic) if ks is not None else None,
                "ks_p_value": float(ks.pvalue) if ks is not None else None,
            }
        )
    schema_ = {
        "metric": pl.String,
        "n_units": pl.Int64,
        "n_splits": pl.Int64,
        **dict.fromkeys(
            (
                "alpha",
                "false_positive_rate",
                "fpr_ci_low",
                "fpr_ci_high",
                "ks_statistic",
                "ks_p_value",
            ),
            pl.Float64,
        ),
    }
    result = pl.DataFrame(rows, schema=schema_)
    settings = {
        "n_splits": n_splits,
        "seed": seed,
        "cuped": cuped,
        "split": "Bernoulli(1/2) per unit",
    }
    return output(result, units, settings)


# --------------------------------------------------------------------------
# quantiles of row-level values


def _weighted_quantile(
    values: NDArray[np.float64], weights: NDArray[np.float64], q: float
) -> NDArray[np.float64]:
    """Inverse empirical CDF of sorted ``values`` under each row of ``weights``.

    The smallest value whose weighted CDF reaches ``q``: numpy's
    ``quantile(values, q, weights=w, method="inverted_cdf")`` for each row
    ``w`` (NaN where a row's weights sum to 0).
    """
    import numpy as np

    cumulative = np.cumsum(weights, axis=1, dtype=np.float64)
    total = cumulative[:, -1]
    with np.errstate(all="ignore"):
        cdf = cumulative / total[:, None]
    index = np.minimum((cdf < q).sum(axis=1), len(values) - 1)
    return np.where(total > 0, values[index], np.nan)


def _bootstrap_quantiles(
    values: NDArray[np.float64],
    owner: NDArray[np.int64],
    n_units: int,
    q: float,
    n_resamples: int,
    rng: np.random.Generator,
    bar: Progress,
) -> NDArray[np.float64]:
    """Return the quantile under ``n_resamples`` Poisson(1) weights per unit."""
    import numpy as np

    out = np.empty(n_resamples)
    batch = max(1, CHUNK // max(len(values), n_units))
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        weights = rng.poisson(1.0, (size, n_units)).astype(np.float64)
        out[start : start + size] = _weighted_quantile(values, weights[:, owner], q)
        bar.update(size)
    return out


def _bootstrap_summary(
    point: float, draws: NDArray[np.float64], alpha: float
) -> tuple[float, float, float]:
    """Percentile interval and two-sided bootstrap p-value of a difference."""
    import numpy as np

    draws = draws[np.isfinite(draws)]
    if not len(draws) or not math.isfinite(point):
        return math.nan, math.nan, math.nan
    low, high = np.quantile(draws, [alpha / 2.0, 1.0 - alpha / 2.0])
    below = int((draws <= 0).sum())
    above = int((draws >= 0).sum())
    p = min(1.0, 2.0 * (1 + min(below, above)) / (len(draws) + 1))
    return float(low), float(high), p


def quantile_test(
    rows: Any,
    *,
    value: str,
    q: float = 0.5,
    unit: str = "unit_id",
    variant: str = "variant",
    control: Any,
    by: str | Sequence[str] | None = None,
    n_resamples: int = 1000,
    seed: int | None = 0,
    alpha: float = 0.05,
    correction: Correction | Literal["none"] | None = "holm",
    expected: Mapping[str, float] | None = None,
    metric: str | None = None,
) -> Any:
    """Compare a quantile of row-level values (median time to first click) between arms.

    Parameters
    ----------
    rows : polars DataFrame or LazyFrame, pandas DataFrame or pyarrow Table
        One row per observation (a search), several per unit: the ``value``,
        ``unit`` and ``variant`` columns and the ``by`` columns.
    value : str
        The numeric column whose quantile is compared. Null values are not
        observations (the time to first click of a search without a click)
        and are left out; NaN and infinite values are an error.
    q : float, default 0.5
        The quantile, in (0, 1).
    unit : str, default "unit_id"
        The randomisation unit: the bootstrap resamples units, with all their
        rows.
    variant, control, by, alpha, correction, expected
        As :func:`ab_test_units`.
    n_resamples : int, default 1000
        Bootstrap resamples.
    seed : int or None, default 0
        Seed of ``numpy.random.default_rng``.
    metric : str, optional
        The ``metric`` column's value; default ``"<value>_q<q>"``.

    Returns
    -------
    Frame of the same kind as ``rows`` (a LazyFrame gives a polars DataFrame)
        The columns of :func:`ab_test_units`; ``n_control`` and
        ``n_treatment`` count units with at least one value.

    Raises
    ------
    SchemaError, DataError, OptionError
        As :func:`ab_test_units`.

    Notes
    -----
    The quantile is the inverse of the empirical CDF, the smallest value
    whose share of rows at or below it reaches ``q`` (numpy's
    ``method="inverted_cdf"``, the definition that extends to weights).

    The rows of one unit are not independent (a user who clicks slowly does
    so on every search), so the bootstrap resamples units: each resample
    gives every unit a Poisson(1) weight (the Poisson bootstrap, which needs
    no sampling with replacement and treats arms and slices independently),
    and every row of the unit takes its unit's weight. ``ci_low, ci_high``
    and ``rel_ci_low, rel_ci_high`` are the percentile intervals of the
    resampled ``q_t - q_c`` and ``q_t / q_c - 1``; ``p_value`` is the
    two-sided bootstrap p-value ``2 min(#(d* <= 0) + 1, #(d* >= 0) + 1) /
    (n_resamples + 1)`` (capped at 1), the smallest level at which the
    percentile interval excludes 0, never 0. Resamples in which an arm has
    no weight are left out. The sample-ratio test counts distinct units.
    Cost: ``n_resamples`` times the number of rows, in batches.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> rows = pl.DataFrame({
    ...     "unit_id": rng.integers(0, 200, 2000).astype(str),
    ...     "ttfc": rng.exponential(5.0, 2000),
    ... }).with_columns(
    ...     variant=pl.when(pl.col("unit_id").str.ends_with("0")).then(pl.lit("B")).otherwise(pl.lit("A"))
    ... )
    >>> result = quantile_test(
    ...     rows, value="ttfc", control="A", n_resamples=200, expected={"A": 9, "B": 1}
    ... )
    >>> result.select("variant", "metric", "n_control", "n_treatment").row(0)
    ('B', 'ttfc_q0.5', 180, 20)
    """
    import numpy as np

    if isinstance(q, bool) or not isinstance(q, int | float) or not 0.0 < q < 1.0:
        msg = f"q must be a number between 0 and 1 (exclusive), found {q!r}."
        raise OptionError(msg)
    check_choice("correction", correction, _CORRECTIONS)
    alpha = _check_level("alpha", alpha)
    n_resamples = _check_count("n_resamples", n_resamples)
    weights = _check_expected(expected)
    name = metric if metric is not None else f"{value}_q{q:g}"
    _column_name(name, "metric")
    slices = _slices(by, variant, unit, value)
    lf = _lazy(rows)
    schema = lf.collect_schema()
    needed = {
        variant: "the variant column (variant=)",
        unit: "the unit id (unit=)",
        value: "the quantile's value (value=)",
    }
    needed.update({s: "a slice (by=)" for s in slices})
    _require_columns(schema, needed, "rows")
    _require_numeric(schema, [value], "value=")
    data = _read_units(
        lf,
        None,
        variant=variant,
        unit=unit,
        slices=slices,
        weights=weights,
        repeats=True,
    )
    control_key, treatments = _treatments(data, control)
    p_slices, overall_p, problems = _srm_columns(data, weights)
    flag_all = overall_p is not None and overall_p < SRM_THRESHOLD

    observed = (
        lf.filter(pl.col(variant).is_not_null() & pl.col(value).is_not_null())
        .select(
            pl.col(variant).cast(pl.String).alias("__arm"),
            pl.col(unit).rank("dense").fill_null(0).cast(pl.Int64).alias("__unit"),
            pl.col(value).cast(pl.Float64).alias("__value"),
            *slices,
        )
        .collect()
    )
    bad = int(observed.select(pl.col("__value").is_finite().not_().sum()).item())
    if bad:
        msg = (
            f"column {value!r} holds {bad} NaN or infinite value(s).\n  Hint: use null "
            "for a row without a value (it is then left out), or drop those rows."
        )
        raise DataError(msg)
    cells = data.grid.select("__s", "__a", "__arm", *slices)
    observed = observed.join(cells, on=["__arm", *slices], nulls_equal=True).sort(
        "__s", "__a", "__value"
    )
    groups = observed.partition_by(["__s", "__a"], as_dict=True, maintain_order=True)
    n_arms = len(data.arms)
    n_slices = data.grid.height // n_arms
    n_units = np.zeros((n_slices, n_arms))
    point = np.full((n_slices, n_arms), np.nan)
    draws: dict[tuple[int, int], NDArray[np.float64]] = {}
    rng = np.random.default_rng(seed)
    work = n_resamples * observed.height
    ones = np.ones((1, 1))
    with Progress(n_resamples * len(groups), "quantile bootstrap", work=work) as bar:
        for key, group in groups.items():
            s, a = int(key[0]), int(key[1])
            values = group["__value"].to_numpy().astype(np.float64)
            owners, owner = np.unique(group["__unit"].to_numpy(), return_inverse=True)
            n_units[s, a] = len(owners)
            point[s, a] = _weighted_quantile(
                values, np.broadcast_to(ones, (1, len(values))), q
            )[0]
            draws[s, a] = _bootstrap_quantiles(
                values, owner.astype(np.int64), len(owners), q, n_resamples, rng, bar
            )

    a_control = data.arms.index(control_key)
    empty = np.full(n_resamples, np.nan)
    keys = data.grid.filter(pl.col("__arm") != control_key).select(
        pl.col("__arm").alias("__variant"), *slices, pl.col("__a").alias("__t"), "__s"
    )
    out: dict[str, list[float]] = {field: [] for field in AB_COLUMNS[:9]}
    reasons: list[str | None] = []
    n_c: list[int] = []
    n_t: list[int] = []
    srm_p: list[float] = []
    for a_t, s in keys.select("__t", "__s").iter_rows():
        nc, nt = int(n_units[s, a_control]), int(n_units[s, a_t])
        qc, qt = point[s, a_control], point[s, a_t]
        reason = (
            "no units in control"
            if nc == 0
            else "no units in treatment"
            if nt == 0
            else "fewer than 2 units in control"
            if nc < 2
            else "fewer than 2 units in treatment"
            if nt < 2
            else None
        )
        dc = draws.get((s, a_control), empty)
        dt = draws.get((s, a_t), empty)
        with np.errstate(all="ignore"):
            d_low, d_high, p = _bootstrap_summary(qt - qc, dt - dc, alpha)
            rel = qt / qc - 1.0 if qc != 0 else math.nan
            r_low, r_high, _ = _bootstrap_summary(
                rel, np.where(dc != 0, dt / dc - 1.0, np.nan), alpha
            )
        if reason is not None:
            d_low = d_high = p = r_low = r_high = math.nan
        for field, x in zip(
            AB_COLUMNS[:9],
            (qc, qt, qt - qc, rel, d_low, d_high, r_low, r_high, p),
            strict=True,
        ):
            out[field].append(float(x))
        reasons.append(reason)
        n_c.append(nc)
        n_t.append(nt)
        srm_p.append(float(p_slices[s]))
    srm_array = np.array(srm_p)
    frame = keys.with_columns(
        pl.lit(name, dtype=pl.String).alias("metric"),
        pl.lit(0, dtype=pl.Int64).alias("__m"),
        *(pl.Series(field, out[field], dtype=pl.Float64) for field in out),
        pl.Series("n_control", n_c, dtype=pl.Int64),
        pl.Series("n_treatment", n_t, dtype=pl.Int64),
        pl.Series("srm_p_value", srm_array, dtype=pl.Float64),
        pl.Series("srm_flag", (srm_array < SRM_THRESHOLD) | flag_all, dtype=pl.Boolean),
        pl.Series("reason", reasons, dtype=pl.String),
    )
    result, family = _finish(
        frame, correction=correction, alpha=alpha, slices=slices, variant=variant
    )
    _srm_warning(problems, weights, data.arms)
    _reason_warning(reasons, result.height)
    settings = {
        "analysis": f"quantile {q:g} of {value!r}: unit bootstrap (Poisson weights)",
        "control": control_key,
        "n_resamples": n_resamples,
        "seed": seed,
        "correction": None if correction == "none" else correction,
        "alpha": alpha,
        "family_size": family,
        "ab_by": slices,
        "expected": weights,
        "srm_threshold": SRM_THRESHOLD,
        "srm_overall_p_value": overall_p,
    }
    return output(result, rows, settings)
