"""A/B statistics on unit-level frames: closed forms, hand-worked cases, errors.

The agreement with tea-tasting on random frames is in
``tests/reference/test_tea_tasting.py``; here each formula is checked against
an independent computation (scipy, statsmodels, numpy), and every error and
warning path once.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from scipy import stats
from statsmodels.stats.multitest import multipletests

from ireval_df.errors import DataError, IrevalWarning, OptionError, SchemaError
from ireval_df.stats import experiments as ex
from ireval_df.stats.experiments import (
    AB_COLUMNS,
    Mean,
    Proportion,
    Ratio,
    aa_units,
    ab_test_units,
    mean,
    power,
    power_units,
    proportion,
    quantile_test,
    ratio,
    srm,
    srm_counts,
)


def units_of(**arms: dict[str, list[float]]) -> pl.DataFrame:
    """A unit frame from per-arm column lists: units_of(A={"y": [...]}, B=...)."""
    frames = []
    for name, columns in arms.items():
        size = len(next(iter(columns.values())))
        frames.append(
            pl.DataFrame(
                {
                    "unit_id": [f"{name}{i}" for i in range(size)],
                    "variant": [name] * size,
                    **{k: [float(v) for v in vs] for k, vs in columns.items()},
                }
            )
        )
    return pl.concat(frames)


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        return function(*args, **kwargs)


def only_row(result: pl.DataFrame) -> dict:
    assert result.height == 1
    return result.row(0, named=True)


RNG = np.random.default_rng(7)
Y_A = RNG.normal(10.0, 3.0, 40)
Y_B = RNG.normal(11.0, 5.0, 55)


# --------------------------------------------------------------------------
# specs


def test_constructors_build_frozen_specs():
    assert mean("revenue") == Mean("revenue")
    assert ratio("clicks", "searches", pre=["pc", "ps"]) == Ratio(
        "clicks", "searches", ("pc", "ps")
    )
    assert proportion("converted") == Proportion("converted")
    spec = mean("revenue", pre="pre_revenue")
    with pytest.raises(AttributeError):
        spec.value = "other"  # type: ignore[misc]
    assert len({mean("a"), mean("a"), ratio("a", "b")}) == 2


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: mean(""), r"mean\(value\) must be a column name"),
        (lambda: mean(3), r"mean\(value\) must be a column name"),  # type: ignore[arg-type]
        (lambda: mean("y", pre=1), r"mean\(pre=\) must be a column name"),  # type: ignore[arg-type]
        (lambda: ratio("c", None), r"ratio\(denom\) must be"),  # type: ignore[arg-type]
        (lambda: ratio("c", "s", pre="pc"), r"ratio\(pre=\) must be a pair"),  # type: ignore[arg-type]
        (lambda: ratio("c", "s", pre=("pc", "")), r"ratio\(pre=\)\[1\]"),
        (lambda: proportion(None), r"proportion\(value\) must be"),  # type: ignore[arg-type]
    ],
)
def test_constructors_refuse_bad_names(build, match):
    with pytest.raises(OptionError, match=match):
        build()


# --------------------------------------------------------------------------
# means, ratios, proportions against independent computations


def welch_interval(b: np.ndarray, a: np.ndarray) -> tuple[float, float]:
    """The 95% Welch interval of mean(b) - mean(a), by statsmodels.

    (scipy's ``confidence_interval`` on a t-test result needs scipy 1.11,
    above the floor.)
    """
    from statsmodels.stats.weightstats import CompareMeans

    low, high = CompareMeans.from_data(b, a).tconfint_diff(alpha=0.05, usevar="unequal")
    return float(low), float(high)


def test_mean_is_welchs_t_test():
    units = units_of(A={"y": Y_A}, B={"y": Y_B})
    row = only_row(ab_test_units(units, {"y": mean("y")}, control="A"))
    reference = stats.ttest_ind(Y_B, Y_A, equal_var=False)
    low, high = welch_interval(Y_B, Y_A)
    assert row["p_value"] == pytest.approx(reference.pvalue, rel=1e-12)
    assert (row["ci_low"], row["ci_high"]) == (
        pytest.approx(low, rel=1e-12),
        pytest.approx(high, rel=1e-12),
    )
    assert row["delta"] == pytest.approx(Y_B.mean() - Y_A.mean(), rel=1e-12)
    assert row["delta_rel"] == pytest.approx(Y_B.mean() / Y_A.mean() - 1, rel=1e-12)
    assert (row["n_control"], row["n_treatment"]) == (40, 55)
    assert row["p_adjusted"] == row["p_value"]  # a family of one
    assert row["significant"] == (row["p_value"] <= 0.05)
    assert row["reason"] is None


def test_relative_interval_is_the_delta_method_on_the_log_ratio():
    units = units_of(A={"y": Y_A}, B={"y": Y_B})
    row = only_row(ab_test_units(units, {"y": mean("y")}, control="A", alpha=0.1))
    vc = Y_A.var(ddof=1) / len(Y_A) / Y_A.mean() ** 2
    vt = Y_B.var(ddof=1) / len(Y_B) / Y_B.mean() ** 2
    df = (vc + vt) ** 2 / (vc**2 / (len(Y_A) - 1) + vt**2 / (len(Y_B) - 1))
    half = stats.t.ppf(0.95, df) * math.sqrt(vc + vt)
    ratio_ = Y_B.mean() / Y_A.mean()
    assert row["rel_ci_low"] == pytest.approx(ratio_ * math.exp(-half) - 1, rel=1e-12)
    assert row["rel_ci_high"] == pytest.approx(ratio_ * math.exp(half) - 1, rel=1e-12)


def test_ratio_by_the_delta_method_by_hand():
    # control: clicks / searches = 6 / 10; treatment 10 / 12
    units = units_of(
        A={"c": [1, 2, 0, 3], "s": [2, 4, 1, 3]},
        B={"c": [2, 3, 1, 4], "s": [2, 4, 2, 4]},
    )
    row = only_row(ab_test_units(units, {"ctr": ratio("c", "s")}, control="A"))

    def arm(c, s):
        c, s = np.asarray(c, float), np.asarray(s, float)
        r = c.sum() / s.sum()
        # the linearised per-unit value (c - r s) / mean(s): var of the ratio
        linear = (c - r * s) / s.mean()
        return r, linear.var(ddof=1) / len(c)

    rc, vc = arm([1, 2, 0, 3], [2, 4, 1, 3])
    rt, vt = arm([2, 3, 1, 4], [2, 4, 2, 4])
    df = (vc + vt) ** 2 / (vc**2 / 3 + vt**2 / 3)
    p = 2 * stats.t.sf(abs(rt - rc) / math.sqrt(vc + vt), df)
    assert (row["control_mean"], row["treatment_mean"]) == (0.6, pytest.approx(10 / 12))
    assert row["p_value"] == pytest.approx(p, rel=1e-12)
    half = stats.t.ppf(0.975, df) * math.sqrt(vc + vt)
    assert row["ci_high"] == pytest.approx(rt - rc + half, rel=1e-12)


def test_a_ratio_over_ones_is_the_mean():
    units = units_of(A={"y": Y_A, "one": [1] * 40}, B={"y": Y_B, "one": [1] * 55})
    result = ab_test_units(units, {"r": ratio("y", "one"), "m": mean("y")}, control="A")
    r, m = result.rows(named=True)
    for column in AB_COLUMNS[:9]:
        assert r[column] == pytest.approx(m[column], rel=1e-12), column


def test_cuped_mean_is_welch_on_the_adjusted_values():
    """Y - theta (X - mean X), theta = cov(X, Y) / var(X) on both arms pooled."""
    rng = np.random.default_rng(3)
    x_a, x_b = rng.normal(5, 2, 60), rng.normal(5, 2, 80)
    y_a = 2 * x_a + rng.normal(0, 1, 60)
    y_b = 2 * x_b + 0.5 + rng.normal(0, 1, 80)
    units = units_of(A={"y": y_a, "x": x_a}, B={"y": y_b, "x": x_b})
    row = only_row(
        ab_test_units(units, {"y": mean("y", pre="x")}, control="A", cuped=True)
    )
    x, y = np.concatenate([x_a, x_b]), np.concatenate([y_a, y_b])
    theta = np.cov(x, y)[0, 1] / x.var(ddof=1)
    adjusted_a = y_a - theta * (x_a - x.mean())
    adjusted_b = y_b - theta * (x_b - x.mean())
    reference = stats.ttest_ind(adjusted_b, adjusted_a, equal_var=False)
    assert row["control_mean"] == pytest.approx(adjusted_a.mean(), rel=1e-12)
    assert row["treatment_mean"] == pytest.approx(adjusted_b.mean(), rel=1e-12)
    assert row["p_value"] == pytest.approx(reference.pvalue, rel=1e-9)
    low, high = welch_interval(adjusted_b, adjusted_a)
    assert row["ci_low"] == pytest.approx(low, rel=1e-12)
    plain = only_row(ab_test_units(units, {"y": mean("y", pre="x")}, control="A"))
    assert plain["ci_high"] - plain["ci_low"] > 3 * (row["ci_high"] - row["ci_low"])


def test_cuped_with_an_independent_covariate_changes_little():
    rng = np.random.default_rng(11)
    n = 5000
    y_a, y_b = rng.normal(10, 3, n), rng.normal(10.2, 3, n)
    units = units_of(
        A={"y": y_a, "x": rng.normal(0, 1, n)}, B={"y": y_b, "x": rng.normal(0, 1, n)}
    )
    spec = {"y": mean("y", pre="x")}
    plain = only_row(ab_test_units(units, spec, control="A"))
    cuped = only_row(ab_test_units(units, spec, control="A", cuped=True))
    se = (plain["ci_high"] - plain["ci_low"]) / (2 * 1.96)
    assert abs(cuped["delta"] - plain["delta"]) < 0.1 * se
    width = cuped["ci_high"] - cuped["ci_low"]
    assert width == pytest.approx(plain["ci_high"] - plain["ci_low"], rel=0.01)


def test_proportion_is_the_two_proportion_z_test():
    from statsmodels.stats.proportion import (
        confint_proportions_2indep,
        proportions_ztest,
    )

    units = units_of(A={"y": [1] * 30 + [0] * 70}, B={"y": [1] * 45 + [0] * 75})
    row = only_row(ab_test_units(units, {"y": proportion("y")}, control="A"))
    _, p = proportions_ztest([45, 30], [120, 100])
    low, high = confint_proportions_2indep(45, 120, 30, 100, method="wald")
    r_low, r_high = confint_proportions_2indep(
        45, 120, 30, 100, compare="ratio", method="log"
    )
    assert row["p_value"] == pytest.approx(p, rel=1e-12)
    assert (row["ci_low"], row["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert row["rel_ci_low"] == pytest.approx(r_low - 1, rel=1e-12)
    assert row["rel_ci_high"] == pytest.approx(r_high - 1, rel=1e-12)
    assert (row["control_mean"], row["treatment_mean"]) == (0.3, 0.375)


def test_proportion_takes_booleans():
    units = units_of(A={"y": [1, 0, 0, 1]}, B={"y": [1, 1, 1, 0]}).with_columns(
        pl.col("y").cast(pl.Boolean)
    )
    row = only_row(ab_test_units(units, {"y": proportion("y")}, control="A"))
    assert (row["control_mean"], row["treatment_mean"]) == (0.5, 0.75)


def test_zero_variance():
    same = units_of(A={"y": [2, 2, 2]}, B={"y": [2, 2, 2]})
    row = only_row(ab_test_units(same, {"y": mean("y")}, control="A"))
    assert (row["delta"], row["p_value"], row["ci_low"], row["ci_high"]) == (0, 1, 0, 0)
    shifted = units_of(A={"y": [2, 2, 2]}, B={"y": [3, 3, 3]})
    row = only_row(ab_test_units(shifted, {"y": mean("y")}, control="A"))
    assert (row["delta"], row["p_value"], row["ci_low"], row["ci_high"]) == (1, 0, 1, 1)
    assert row["rel_ci_low"] == row["rel_ci_high"] == 0.5
    flat = units_of(A={"y": [0, 0, 0]}, B={"y": [0, 0, 0]})
    row = only_row(ab_test_units(flat, {"y": proportion("y")}, control="A"))
    assert (row["p_value"], row["delta_rel"], row["rel_ci_low"]) == (1.0, None, None)


# --------------------------------------------------------------------------
# rows that cannot be tested


def test_a_slice_with_one_unit_is_null_with_its_reason():
    units = units_of(
        A={"y": [1, 2, 3, 4], "s": [0, 0, 1, 1]},
        B={"y": [2, 3, 4, 5], "s": [0, 0, 0, 1]},
    ).with_columns(pl.col("s").cast(pl.Int64))
    with pytest.warns(IrevalWarning, match=r"1 of 2 comparisons could not be tested"):
        result = ab_test_units(units, {"y": mean("y")}, control="A", by="s")
    small = result.filter(pl.col("s") == 1).row(0, named=True)
    assert small["reason"] == "fewer than 2 units in treatment"
    assert small["p_value"] is None
    assert small["ci_low"] is None
    assert small["p_adjusted"] is None
    assert small["significant"] is None
    assert (small["control_mean"], small["treatment_mean"]) == (3.5, 5.0)
    tested = result.filter(pl.col("s") == 0).row(0, named=True)
    assert tested["p_adjusted"] == tested["p_value"]  # the family holds one row


def test_a_slice_missing_from_an_arm_is_null():
    units = units_of(
        A={"y": [1, 2, 3], "s": [0, 0, 0]}, B={"y": [2, 3, 4, 5], "s": [0, 0, 1, 1]}
    )
    with pytest.warns(IrevalWarning, match="no units in control"):
        result = ab_test_units(units, {"y": mean("y")}, control="A", by="s")
    row = result.filter(pl.col("s") == 1).row(0, named=True)
    assert (row["n_control"], row["n_treatment"]) == (0, 2)
    assert (row["control_mean"], row["delta"], row["reason"]) == (
        None,
        None,
        "no units in control",
    )


def test_a_denominator_summing_to_zero():
    units = units_of(
        A={"c": [0, 0, 0], "s": [0, 0, 0]}, B={"c": [1, 0, 2], "s": [1, 1, 2]}
    )
    with pytest.warns(IrevalWarning, match="could not be tested"):
        row = only_row(ab_test_units(units, {"ctr": ratio("c", "s")}, control="A"))
    assert row["reason"] == "'s' sums to 0 in control"
    assert row["control_mean"] is None
    assert row["p_value"] is None
    assert row["treatment_mean"] == 0.75


def test_a_variant_named_in_expected_without_units():
    units = units_of(A={"y": [1, 2, 3]}, B={"y": [2, 3, 4]})
    expected = {"A": 1, "B": 1, "C": 1}
    with pytest.warns(IrevalWarning) as caught:
        result = ab_test_units(units, {"y": mean("y")}, control="A", expected=expected)
    texts = [str(w.message) for w in caught]
    assert any("['C'] named in expected have no units" in t for t in texts)
    assert any("sample ratio mismatch" in t for t in texts) is False  # 3 units only
    row = result.filter(pl.col("variant") == "C").row(0, named=True)
    assert (row["n_treatment"], row["reason"]) == (0, "no units in treatment")
    assert result.filter(pl.col("variant") == "B")["reason"][0] is None


def test_control_errors():
    units = units_of(A={"y": [1, 2, 3]}, B={"y": [2, 3, 4]})
    with pytest.raises(
        OptionError,
        match=r"control='Z' is not a variant; the variants are \['A', 'B'\]",
    ):
        ab_test_units(units, {"y": mean("y")}, control="Z")
    with pytest.raises(DataError, match="control 'Z' has no units"):
        ab_test_units(
            units, {"y": mean("y")}, control="Z", expected={"A": 1, "B": 1, "Z": 1}
        )
    with pytest.raises(
        OptionError, match=r"\['B'\] have units but no weight in expected"
    ):
        ab_test_units(units, {"y": mean("y")}, control="A", expected={"A": 1, "C": 1})
    with pytest.raises(OptionError, match="at least two variants"):
        ab_test_units(
            units.filter(pl.col("variant") == "A"), {"y": mean("y")}, control="A"
        )


def test_null_slice_values_are_a_slice_of_their_own():
    units = units_of(
        A={"y": [1, 2, 3, 4, 5, 6]}, B={"y": [2, 3, 4, 5, 6, 7]}
    ).with_columns(s=pl.Series(["a", "a", "a", None, None, None] * 2))
    result = ab_test_units(units.to_pandas(), {"y": mean("y")}, control="A", by="s")
    assert result["s"].tolist()[0] == "a"
    assert result["s"].isna().tolist() == [False, True]
    assert result["n_control"].tolist() == [3, 3]
    assert result["delta"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("by", ["variant", "unit_id", "metric", "p_value", ["s", "s"]])
def test_slices_must_be_other_columns(by):
    units = units_of(A={"y": [1, 2]}, B={"y": [2, 3]}).with_columns(
        s=pl.lit("x"), metric=pl.lit("m"), p_value=pl.lit(0.1)
    )
    with pytest.raises(OptionError, match="cannot slice by"):
        ab_test_units(units, {"y": mean("y")}, control="A", by=by)


def test_integer_variants_and_control():
    units = units_of(A={"y": Y_A}, B={"y": Y_B}).with_columns(
        (pl.col("variant") == "B").cast(pl.Int64).alias("variant")
    )
    row = only_row(ab_test_units(units, {"y": mean("y")}, control=0))
    assert row["variant"] == "1"
    assert row["n_control"] == 40


# --------------------------------------------------------------------------
# input errors


@pytest.mark.parametrize(
    ("metrics", "options", "error", "match"),
    [
        (
            {"y": mean("nope")},
            {},
            SchemaError,
            r"metric 'y' \(Mean\(value='nope'.*needs column 'nope'.*found \['unit_id', 'variant', 'y', 's', 'txt'\]",
        ),
        ({"y": mean("txt")}, {}, SchemaError, r"column 'txt' .* must hold numbers"),
        (
            {"y": mean("y")},
            {"by": "region"},
            SchemaError,
            r"a slice \(by=\) needs column 'region'",
        ),
        ({"y": mean("y")}, {"variant": "arm"}, SchemaError, "the variant column"),
        ({"y": mean("y")}, {"unit": "user"}, SchemaError, r"unit=None to skip"),
        ({"y": "y"}, {}, OptionError, r"metric 'y' is 'y'; expected mean\(...\)"),
        ({}, {}, OptionError, "non-empty mapping"),
        (
            {"y": mean("y")},
            {"correction": "sidak"},
            OptionError,
            "correction='sidak' is not one of",
        ),
        ({"y": mean("y")}, {"alpha": 1.5}, OptionError, "alpha must be a number"),
        (
            {"y": mean("y")},
            {"cuped": "yes"},
            OptionError,
            "cuped must be True or False",
        ),
        (
            {"y": mean("y")},
            {"cuped": True},
            OptionError,
            r"(?s)cuped=True needs a pre-period covariate for metric 'y'.*mean\('y', pre='pre_y'\)",
        ),
        (
            {"y": ratio("y", "s")},
            {"cuped": True},
            OptionError,
            r"ratio\('y', 's', pre=\('pre_y', 'pre_s'\)\)",
        ),
        (
            {"y": mean("y")},
            {"expected": {"A": 1}},
            OptionError,
            "at least two variants to their planned weights",
        ),
        (
            {"y": mean("y")},
            {"expected": {"A": 1, "B": -1}},
            OptionError,
            r"expected\['B'\] must be a positive weight",
        ),
    ],
)
def test_input_errors(metrics, options, error, match):
    units = units_of(
        A={"y": [1, 2], "s": [1, 1]}, B={"y": [2, 3], "s": [1, 2]}
    ).with_columns(txt=pl.lit("x"))
    with pytest.raises(error, match=match):
        ab_test_units(units, metrics, control="A", **options)


@pytest.mark.parametrize("bad", [None, float("nan"), float("inf")])
def test_missing_or_non_finite_values_are_an_error(bad):
    units = units_of(A={"y": [1, 2, 3]}, B={"y": [2, 3, 4]}).with_columns(
        pl.when(pl.col("unit_id") == "B1").then(bad).otherwise(pl.col("y")).alias("y")
    )
    with pytest.raises(DataError, match=r"column 'y' holds 1 null, NaN or infinite"):
        ab_test_units(units, {"y": mean("y")}, control="A")


def test_a_proportion_needs_zeros_and_ones():
    units = units_of(A={"y": [0, 1, 2]}, B={"y": [0, 1, 1]})
    with pytest.raises(DataError, match=r"proportion\('y'\) needs 0/1 .* 1 unit"):
        ab_test_units(units, {"y": proportion("y")}, control="A")


def test_repeated_and_shared_units_are_errors():
    units = units_of(A={"y": [1, 2, 3]}, B={"y": [2, 3, 4]})
    repeated = pl.concat([units, units.head(1)])
    with pytest.raises(
        DataError, match=r"repeats 1 unit row\(s\), e.g. unit_id='A0', variant='A'"
    ):
        ab_test_units(repeated, {"y": mean("y")}, control="A")
    shared = pl.concat([units, units.head(2).with_columns(variant=pl.lit("B"))])
    with pytest.raises(
        DataError,
        match=r"2 unit\(s\) appear in more than one variant, e.g. 'A0' in \['A', 'B'\]",
    ):
        ab_test_units(shared, {"y": mean("y")}, control="A")
    # with slices, a unit may have a row in each slice, but in one variant only
    sliced = pl.concat(
        [units.with_columns(s=pl.lit("x")), units.with_columns(s=pl.lit("z"))]
    )
    assert ab_test_units(sliced, {"y": mean("y")}, control="A", by="s").height == 2
    moved = sliced.with_columns(
        pl.when((pl.col("unit_id") == "A0") & (pl.col("s") == "z"))
        .then(pl.lit("B"))
        .otherwise(pl.col("variant"))
        .alias("variant")
    )
    with pytest.raises(DataError, match=r"1 unit\(s\) appear in more than one variant"):
        ab_test_units(moved, {"y": mean("y")}, control="A", by="s")
    assert ab_test_units(repeated, {"y": mean("y")}, control="A", unit=None).height == 1


def test_units_without_a_variant_are_left_out_with_a_warning():
    units = units_of(A={"y": [1, 2, 3]}, B={"y": [2, 3, 4]})
    holed = units.with_columns(
        pl.when(pl.col("unit_id") == "B2")
        .then(None)
        .otherwise(pl.col("variant"))
        .alias("variant")
    )
    with pytest.warns(IrevalWarning, match=r"1 unit row\(s\) have no variant"):
        row = only_row(ab_test_units(holed, {"y": mean("y")}, control="A"))
    assert row["n_treatment"] == 2


# --------------------------------------------------------------------------
# corrections, sample ratio, output


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "bh", "by"])
def test_the_family_is_every_row_of_the_call(correction):
    rng = np.random.default_rng(5)
    n = 300
    units = pl.DataFrame(
        {
            "unit_id": [str(i) for i in range(3 * n)],
            "variant": ["A"] * n + ["B"] * n + ["C"] * n,
            "device": rng.choice(["d", "m"], 3 * n),
            "y": rng.normal(0, 1, 3 * n) + np.repeat([0.0, 0.1, 0.2], n),
            "z": rng.normal(0, 1, 3 * n),
        }
    )
    metrics = {"y": mean("y"), "z": mean("z")}
    result = quiet(
        ab_test_units, units, metrics, control="A", by="device", correction=correction
    )
    assert result.height == 2 * 2 * 2
    names = {"bh": "fdr_bh", "by": "fdr_by"}
    expected = multipletests(
        result["p_value"].to_numpy(), method=names.get(correction, correction)
    )[1]
    np.testing.assert_allclose(result["p_adjusted"].to_numpy(), expected, rtol=1e-12)
    none = quiet(
        ab_test_units, units, metrics, control="A", by="device", correction="none"
    )
    assert none["p_adjusted"].to_list() == none["p_value"].to_list()
    assert none.select("variant", "device", "metric").rows() == [
        (v, d, m) for v in "BC" for d in "dm" for m in "yz"
    ]


def test_sample_ratio_mismatch_flags_and_warns():
    units = units_of(A={"y": RNG.normal(0, 1, 600)}, B={"y": RNG.normal(0, 1, 400)})
    with pytest.warns(
        IrevalWarning,
        match=r"sample ratio mismatch in the experiment \(p = 2.54e-10.*not trustworthy",
    ):
        row = only_row(ab_test_units(units, {"y": mean("y")}, control="A"))
    assert row["srm_p_value"] == pytest.approx(2.539e-10, rel=1e-3)
    assert row["srm_flag"] is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        row = only_row(
            ab_test_units(
                units, {"y": mean("y")}, control="A", expected={"A": 3, "B": 2}
            )
        )
    assert (row["srm_p_value"], row["srm_flag"]) == (1.0, False)


def test_an_overall_mismatch_flags_every_slice():
    # 600/400 overall, but each slice alone is too small to show it
    rng = np.random.default_rng(2)
    units = units_of(A={"y": rng.normal(0, 1, 600)}, B={"y": rng.normal(0, 1, 400)})
    units = units.with_columns(s=pl.Series(rng.integers(0, 12, 1000)))
    with pytest.warns(IrevalWarning, match=r"all units \(p = 2.54e-10"):
        result = ab_test_units(units, {"y": mean("y")}, control="A", by="s")
    assert result["srm_flag"].all()
    assert (result["srm_p_value"] > 0.001).any()


def test_srm_closed_forms():
    result = srm_counts({"A": 600, "B": 400})
    assert result["statistic"][0] == 40.0
    assert result["p_value"][0] == pytest.approx(2.54e-10, rel=2e-3)
    assert result["p_value"][0] == pytest.approx(
        stats.chisquare([600, 400]).pvalue, rel=1e-12
    )
    assert srm_counts({"A": 44_000, "B": 45_000})["p_value"][0] == pytest.approx(
        8.02e-4, rel=1e-3
    )
    three = srm_counts({"A": 500, "B": 260, "C": 240}, {"A": 2, "B": 1, "C": 1})
    reference = stats.chisquare([500, 260, 240], [500, 250, 250])
    assert three["p_value"][0] == pytest.approx(reference.pvalue, rel=1e-12)
    assert three["df"][0] == 2
    assert three["expected_share"].to_list() == [0.5, 0.25, 0.25]
    assert srm_counts({"A": 0, "B": 0})["p_value"][0] is None


@pytest.mark.parametrize(
    ("observed", "expected", "match"),
    [
        ({"A": 1}, None, "at least two variants"),
        ({"A": 1.5, "B": 2}, None, r"observed\['A'\] must be a whole number"),
        ({"A": -1, "B": 2}, None, r"observed\['A'\]"),
        ({"A": 1, "B": 2}, {"A": 1, "B": 0}, "positive weight"),
        ({"A": 1, "B": 2}, {"A": 1, "C": 1}, r"\['B'\] have units but no weight"),
    ],
)
def test_srm_counts_errors(observed, expected, match):
    with pytest.raises(OptionError, match=match):
        srm_counts(observed, expected)


def test_srm_per_slice_and_by_distinct_units():
    rows = pl.DataFrame(
        {
            "user": ["u1", "u1", "u2", "u3", "u3", "u3", "u4"],
            "arm": ["A", "A", "A", "B", "B", "B", "B"],
            "device": ["d", "m", "d", "d", "d", "d", "m"],
        }
    )
    by_rows = srm(rows, variant="arm")
    assert by_rows["n_units"].to_list() == [3, 4]
    by_units = srm(rows, variant="arm", unit="user")
    assert by_units["n_units"].to_list() == [2, 2]
    sliced = srm(
        rows, variant="arm", unit="user", by="device", expected={"A": 1, "B": 3}
    )
    assert sliced.select("device", "arm", "n_units", "expected_share").rows() == [
        ("d", "A", 2, 0.25),
        ("d", "B", 1, 0.75),
        ("m", "A", 1, 0.25),
        ("m", "B", 1, 0.75),
    ]
    with pytest.raises(DataError, match="more than one variant"):
        srm(
            rows.with_columns(arm=pl.lit("A")).vstack(
                rows.head(1).with_columns(arm=pl.lit("B"))
            ),
            variant="arm",
            unit="user",
        )
    with pytest.warns(IrevalWarning, match=r"\['C'\] named in expected have no units"):
        assert srm(rows, variant="arm", expected={"A": 1, "B": 1, "C": 1}).height == 3


def test_output_follows_the_input_kind():
    units = units_of(A={"y": Y_A}, B={"y": Y_B})
    eager = ab_test_units(units, {"y": mean("y")}, control="A")
    lazy = ab_test_units(units.lazy(), {"y": mean("y")}, control="A")
    assert isinstance(lazy, pl.DataFrame)
    # polars sums in parallel: the last bit may differ between two runs
    assert_frame_equal(lazy, eager, check_exact=False, rel_tol=1e-12)
    from_pandas = ab_test_units(units.to_pandas(), {"y": mean("y")}, control="A")
    assert type(from_pandas).__name__ == "DataFrame"
    assert not isinstance(from_pandas, pl.DataFrame)
    assert from_pandas["p_value"].tolist() == pytest.approx(eager["p_value"].to_list())
    assert eager.columns == ["variant", "metric", *AB_COLUMNS]
    assert eager.schema["n_control"] == pl.Int64
    assert eager.schema["srm_flag"] == pl.Boolean
    assert eager.schema["reason"] == pl.String


def test_row_order_does_not_matter():
    units = units_of(
        A={"c": [1, 2, 0, 3], "s": [2, 4, 1, 3]},
        B={"c": [2, 3, 1, 4], "s": [2, 4, 2, 4]},
    )
    shuffled = units.sample(fraction=1.0, shuffle=True, seed=3)
    metrics = {"ctr": ratio("c", "s"), "c": mean("c")}
    assert_frame_equal(
        ab_test_units(shuffled, metrics, control="A"),
        ab_test_units(units, metrics, control="A"),
        check_exact=False,
        rel_tol=1e-12,
    )


# --------------------------------------------------------------------------
# properties

values = st.lists(
    st.floats(min_value=-1e3, max_value=1e3, allow_nan=False).map(
        lambda v: round(v, 3)
    ),
    min_size=2,
    max_size=30,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    a=values,
    b=values,
    shift=st.floats(min_value=-100, max_value=100).map(lambda v: round(v, 2)),
)
def test_properties_of_the_mean_test(a, b, shift):
    units = units_of(A={"y": a}, B={"y": b})
    row = only_row(quiet(ab_test_units, units, {"y": mean("y")}, control="A"))
    # swapping the arms negates the difference and keeps the p-value
    swapped = only_row(quiet(ab_test_units, units, {"y": mean("y")}, control="B"))
    assert swapped["delta"] == pytest.approx(-row["delta"], abs=1e-9)
    assert swapped["p_value"] == pytest.approx(row["p_value"], rel=1e-9, abs=1e-12)
    # a constant added to the treatment moves the difference by that constant
    moved = units.with_columns(
        pl.when(pl.col("variant") == "B")
        .then(pl.col("y") + shift)
        .otherwise(pl.col("y"))
        .alias("y")
    )
    moved_row = only_row(quiet(ab_test_units, moved, {"y": mean("y")}, control="A"))
    assert moved_row["delta"] == pytest.approx(row["delta"] + shift, abs=1e-6)
    if row["ci_low"] is not None and row["ci_high"] > row["ci_low"]:
        width = row["ci_high"] - row["ci_low"]
        assert moved_row["ci_high"] - moved_row["ci_low"] == pytest.approx(
            width, rel=1e-6, abs=1e-6
        )
        assert row["ci_low"] <= row["delta"] <= row["ci_high"]


@settings(max_examples=40, deadline=None)
@given(
    sums=st.lists(
        st.tuples(st.integers(0, 20), st.integers(1, 20), st.booleans()),
        min_size=6,
        max_size=40,
    )
)
def test_swapping_arms_negates_ratio_deltas_with_and_without_cuped(sums):
    rng = np.random.default_rng(len(sums))
    arms = ["B" if b else "A" for _, _, b in sums]
    if min(arms.count("A"), arms.count("B")) < 2:
        return
    units = pl.DataFrame(
        {
            "unit_id": [str(i) for i in range(len(sums))],
            "variant": arms,
            "c": [float(min(c, s)) for c, s, _ in sums],
            "s": [float(s) for _, s, _ in sums],
            "pc": rng.integers(0, 5, len(sums)).astype(float),
            "ps": rng.integers(1, 6, len(sums)).astype(float),
        }
    )
    metrics = {"ctr": ratio("c", "s", pre=("pc", "ps"))}
    for cuped in (False, True):
        one = only_row(quiet(ab_test_units, units, metrics, control="A", cuped=cuped))
        other = only_row(quiet(ab_test_units, units, metrics, control="B", cuped=cuped))
        assert other["delta"] == pytest.approx(-one["delta"], abs=1e-12)
        if one["p_value"] is not None:
            assert other["p_value"] == pytest.approx(
                one["p_value"], rel=1e-9, abs=1e-12
            )


# --------------------------------------------------------------------------
# power


def test_power_closed_form():
    assert power(baseline_mean=0.10, mde=0.01)["n_per_arm"].item() == 14_128
    assert (
        power(baseline_mean=0.10, mde=0.1, relative=True)["n_per_arm"].item() == 14_128
    )
    back = power(baseline_mean=0.10, n=14_128).row(0, named=True)
    assert back["mde"] == pytest.approx(0.01, rel=1e-4)
    assert back["mde_rel"] == pytest.approx(0.1, rel=1e-4)
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert power(baseline_mean=3.0, baseline_var=4.0, n=1000)[
        "mde"
    ].item() == pytest.approx(z * math.sqrt(8.0 / 1000), rel=1e-12)
    assert power(baseline_mean=0.5, mde=0.05, alpha=0.01, power=0.9)[
        "n_per_arm"
    ].item() == math.ceil(
        (stats.norm.ppf(0.995) + stats.norm.ppf(0.9)) ** 2 * 2 * 0.25 / 0.05**2
    )
    assert power(baseline_mean=0.1, mde=0.01).columns == [
        "baseline_mean",
        "baseline_var",
        "mde",
        "mde_rel",
        "n_per_arm",
        "alpha",
        "power",
    ]


def test_power_against_statsmodels():
    """NormalIndPower with d = mde / sd is the same question; Cohen's h is another."""
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    # statsmodels also counts the far tail's tiny power: a hair fewer units
    exact = NormalIndPower().solve_power(effect_size=0.01 / 0.3, alpha=0.05, power=0.8)
    assert power(baseline_mean=0.10, mde=0.01)["n_per_arm"].item() == math.ceil(exact)
    assert power(baseline_mean=0.10, n=14_128)["mde"].item() == pytest.approx(
        0.3 * NormalIndPower().solve_power(nobs1=14_128, alpha=0.05, power=0.8),
        rel=1e-4,
    )
    cohen = NormalIndPower().solve_power(
        effect_size=proportion_effectsize(0.11, 0.10), alpha=0.05, power=0.8
    )
    assert math.ceil(cohen) == 14_745


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"baseline_mean": 0.1}, "exactly one of mde= .* and n="),
        ({"baseline_mean": 0.1, "mde": 0.01, "n": 10}, "exactly one of"),
        ({"baseline_mean": 0.1, "mde": -0.01}, "mde must be a positive number"),
        ({"baseline_mean": 0.1, "n": 1}, "n must be a whole number of at least 2"),
        (
            {"baseline_mean": 2.0, "mde": 0.1},
            r"baseline_var is needed for a mean outside \[0, 1\]",
        ),
        (
            {"baseline_mean": 2.0, "baseline_var": -1, "mde": 0.1},
            "baseline_var must be a number >= 0",
        ),
        (
            {"baseline_mean": 0.1, "mde": 0.01, "power": 1.0},
            "power must be a number between 0 and 1",
        ),
        ({"baseline_mean": "0.1", "mde": 0.01}, "baseline_mean must be a number"),
    ],
)
def test_power_errors(options, match):
    with pytest.raises(OptionError, match=match):
        power(**options)


def test_power_units_variances():
    rng = np.random.default_rng(4)
    n = 400
    c = rng.poisson(2, n).astype(float)
    s = c + rng.poisson(3, n) + 1
    pc = c + rng.poisson(1, n)
    base = pl.DataFrame(
        {
            "c": c,
            "s": s,
            "pc": pc,
            "conv": (c > 2).astype(int),
            "arm": rng.choice(["A", "B"], n),
        }
    )
    # ratio: n times the delta-method variance of the ratio of sums
    row = power_units(base, ratio("c", "s"), mde=0.01).row(0, named=True)
    r = c.sum() / s.sum()
    linear = (c - r * s) / s.mean()
    assert row["baseline_mean"] == pytest.approx(r, rel=1e-12)
    assert row["baseline_var"] == pytest.approx(linear.var(ddof=1), rel=1e-12)
    assert row["n_units"] == n
    same = power(baseline_mean=r, baseline_var=row["baseline_var"], mde=0.01)
    assert row["n_per_arm"] == same["n_per_arm"].item()
    # proportion: p (1 - p), as power()
    row = power_units(base, proportion("conv"), n=500).row(0, named=True)
    p = (c > 2).mean()
    assert row["baseline_var"] == pytest.approx(p * (1 - p), rel=1e-12)
    # CUPED: var(Y) - cov(X, Y)^2 / var(X)
    row = power_units(base, mean("c", pre="pc"), cuped=True, mde=0.1).row(0, named=True)
    expected = c.var(ddof=1) - np.cov(c, pc)[0, 1] ** 2 / pc.var(ddof=1)
    assert row["baseline_var"] == pytest.approx(expected, rel=1e-12)
    assert row["baseline_mean"] == pytest.approx(c.mean(), rel=1e-12)
    per_arm = power_units(base, mean("c"), variant="arm", mde=0.1)
    assert per_arm["arm"].to_list() == ["A", "B"]
    for arm, var in per_arm.select("arm", "baseline_var").iter_rows():
        mask = base["arm"].to_numpy() == arm
        assert var == pytest.approx(c[mask].var(ddof=1), rel=1e-12)
    with pytest.raises(SchemaError, match="needs column 'nope'"):
        power_units(base, mean("nope"), mde=0.1)


# --------------------------------------------------------------------------
# A/A


def test_aa_split_is_analysed_as_ab_test_units():
    """With one split, the KS statistic of its p-value p is max(p, 1 - p)."""
    rng = np.random.default_rng(9)
    n = 200
    units = pl.DataFrame(
        {"c": rng.poisson(2, n).astype(float), "s": rng.poisson(4, n) + 1.0}
    )
    metrics = {"ctr": ratio("c", "s"), "c": mean("c")}
    result = aa_units(units, metrics, n_splits=1, seed=42)
    halves = np.random.default_rng(42).random((1, n))[0] < 0.5
    split = units.with_columns(
        unit_id=pl.Series([str(i) for i in range(n)]),
        variant=pl.Series(np.where(halves, "T", "C")),
    )
    reference = quiet(ab_test_units, split, metrics, control="C")
    for name in metrics:
        p = reference.filter(pl.col("metric") == name)["p_value"][0]
        row = result.filter(pl.col("metric") == name).row(0, named=True)
        assert row["ks_statistic"] == pytest.approx(max(p, 1 - p), rel=1e-12)
        assert row["false_positive_rate"] == float(p <= 0.05)


def test_aa_false_positive_rate_is_alpha():
    rng = np.random.default_rng(1)
    n = 2000
    units = pl.DataFrame(
        {
            "y": rng.normal(10, 2, n),
            "c": rng.poisson(3, n).astype(float),
            "s": rng.poisson(6, n) + 1.0,
            "conv": (rng.random(n) < 0.3).astype(int),
        }
    )
    metrics = {"y": mean("y"), "ctr": ratio("c", "s"), "conv": proportion("conv")}
    result = aa_units(units, metrics, n_splits=800, seed=3)
    assert result["n_splits"].to_list() == [800] * 3
    for row in result.iter_rows(named=True):
        assert row["fpr_ci_low"] <= 0.05 <= row["fpr_ci_high"], row
        assert row["ks_p_value"] > 0.001, row
        # Clopper-Pearson
        k = round(row["false_positive_rate"] * 800)
        assert row["fpr_ci_low"] == pytest.approx(stats.beta.ppf(0.025, k, 801 - k))
    again = aa_units(units, metrics, n_splits=800, seed=3)
    assert again.equals(result)


def test_aa_errors():
    units = pl.DataFrame({"y": [1.0, 2.0, 3.0]})
    with pytest.raises(DataError, match="at least 4 units"):
        aa_units(units, {"y": mean("y")})
    with pytest.raises(OptionError, match="n_splits must be a whole number"):
        aa_units(units, {"y": mean("y")}, n_splits=0)
    with pytest.raises(SchemaError, match="needs column 'z'"):
        aa_units(units, {"z": mean("z")})


# --------------------------------------------------------------------------
# quantiles


def test_weighted_quantile_is_numpys_inverted_cdf():
    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 50):
        values = np.sort(rng.integers(0, 10, size).astype(float))
        weights = rng.poisson(1.0, (20, size)).astype(float)
        for q in (0.1, 0.3, 0.5, 0.9):
            ours = ex._weighted_quantile(values, weights, q)
            for w, got in zip(weights, ours, strict=True):
                if w.sum() == 0:
                    assert np.isnan(got)
                else:
                    # whole weights: a value weighed w times is a value repeated
                    # w times (numpy's own weights= needs numpy 2)
                    repeated = np.repeat(values, w.astype(int))
                    assert got == np.quantile(repeated, q, method="inverted_cdf")
            ones = ex._weighted_quantile(values, np.ones((1, size)), q)[0]
            assert ones == np.quantile(values, q, method="inverted_cdf")


def rows_of(seed: int, *, shift: float = 0.0, units: int = 300) -> pl.DataFrame:
    """Searches of users whose speed differs: values correlated within a unit."""
    rng = np.random.default_rng(seed)
    user = rng.integers(0, units, 4000)
    speed = rng.lognormal(0, 1, units)[user]
    arm = np.where(user % 2 == 0, "A", "B")
    value = rng.exponential(1, 4000) * speed + np.where(arm == "B", shift, 0.0)
    return pl.DataFrame({"unit_id": user.astype(str), "variant": arm, "ttfc": value})


def test_quantile_test_point_estimates_and_columns():
    rows = rows_of(0).with_columns(
        pl.when(pl.int_range(pl.len()) % 10 == 0)
        .then(None)
        .otherwise(pl.col("ttfc"))
        .alias("ttfc")
    )
    result = quantile_test(rows, value="ttfc", control="A", q=0.75, n_resamples=300)
    row = only_row(result)
    assert result.columns == ["variant", "metric", *AB_COLUMNS]
    assert row["metric"] == "ttfc_q0.75"
    for arm, column in (("A", "control_mean"), ("B", "treatment_mean")):
        observed = rows.filter(pl.col("variant") == arm)["ttfc"].drop_nulls().to_numpy()
        assert row[column] == np.quantile(observed, 0.75, method="inverted_cdf")
    assert (
        row["n_control"] == rows.filter(pl.col("variant") == "A")["unit_id"].n_unique()
    )
    assert row["ci_low"] <= row["delta"] <= row["ci_high"]
    assert 0 < row["p_value"] <= 1
    assert quantile_test(
        rows, value="ttfc", control="A", q=0.75, n_resamples=300
    ).equals(result)


def test_quantile_test_finds_a_shift_and_resamples_units():
    shifted = only_row(
        quantile_test(rows_of(1, shift=2.0), value="ttfc", control="A", n_resamples=400)
    )
    assert shifted["significant"]
    assert shifted["p_value"] < 0.01
    # each search its own unit: the interval ignores the correlation and shrinks
    rows = rows_of(1)
    clustered = only_row(
        quantile_test(rows, value="ttfc", control="A", n_resamples=400)
    )
    iid = only_row(
        quantile_test(
            rows.with_columns(unit_id=pl.int_range(pl.len()).cast(pl.String)),
            value="ttfc",
            control="A",
            n_resamples=400,
            expected={"A": 2016, "B": 1984},
        )
    )
    assert clustered["ci_high"] - clustered["ci_low"] > 1.5 * (
        iid["ci_high"] - iid["ci_low"]
    )


def test_quantile_test_slices_and_errors():
    rows = rows_of(2).with_columns(
        device=pl.when(pl.col("unit_id") == "1")
        .then(pl.lit("rare"))
        .otherwise(pl.lit("common"))
    )
    with pytest.warns(IrevalWarning, match="could not be tested"):
        result = quantile_test(
            rows, value="ttfc", control="A", by="device", n_resamples=50, metric="TTFC"
        )
    assert result["metric"].unique().to_list() == ["TTFC"]
    assert result.filter(pl.col("device") == "common")["reason"][0] is None
    with pytest.raises(OptionError, match="q must be a number between 0 and 1"):
        quantile_test(rows, value="ttfc", control="A", q=1.0)
    with pytest.raises(DataError, match="NaN or infinite"):
        quantile_test(
            rows.with_columns(ttfc=pl.lit(float("nan"))), value="ttfc", control="A"
        )
    with pytest.raises(
        SchemaError, match=r"the quantile's value \(value=\) needs column 'x'"
    ):
        quantile_test(rows, value="x", control="A")
    with pytest.raises(OptionError, match="control='Z' is not a variant"):
        quantile_test(rows, value="ttfc", control="Z")


def _wide_moments(y: np.ndarray, x: np.ndarray) -> tuple:
    """Count, means, variances and covariance in 80-bit floats, two-pass."""
    y, x = y.astype(np.longdouble), x.astype(np.longdouble)
    n = np.longdouble(len(y))
    dy, dx = y - y.mean(), x - x.mean()
    return (
        n,
        y.mean(),
        x.mean(),
        (dy * dy).sum() / (n - 1),
        (dx * dx).sum() / (n - 1),
        (dy * dx).sum() / (n - 1),
    )


def test_cuped_estimates_keep_their_digits_at_millions_of_units():
    # values far from 0 make float64 sums of squares lose digits (the bench
    # found tea-tasting 1e-7 off at 10M units): against an 80-bit two-pass
    # computation of the same formula, the means and the interval's
    # half-width to 1e-11 and better (polars sums in parallel, in an order
    # that varies from run to run: 1e-13 was seen, never more)
    rng = np.random.default_rng(7)
    n = 1_000_000
    base = rng.gamma(50.0, 20.0, 2 * n) + 1e4
    pre = base + rng.normal(0, 30, 2 * n)
    y = base + rng.normal(0, 30, 2 * n) + np.r_[np.zeros(n), np.full(n, 0.5)]
    units = pl.DataFrame(
        {
            "unit_id": np.arange(2 * n).astype(str),
            "variant": np.r_[np.full(n, "A"), np.full(n, "B")],
            "y": y,
            "pre_y": pre,
        }
    )
    row = quiet(
        ab_test_units, units, {"y": mean("y", pre="pre_y")}, control="A", cuped=True
    ).row(0, named=True)
    _, _, mx, _, vx, cxy = _wide_moments(y, pre)
    theta = cxy / vx
    arms = []
    for part in (slice(0, n), slice(n, 2 * n)):
        k, my_, mx_, vy_, vx_, c_ = _wide_moments(y[part], pre[part])
        arms.append(
            (my_ - theta * (mx_ - mx), (vy_ + theta**2 * vx_ - 2 * theta * c_) / k, k)
        )
    (mc, vc, nc), (mt, vt, nt) = arms
    df = (vc + vt) ** 2 / (vc**2 / (nc - 1) + vt**2 / (nt - 1))
    half = np.longdouble(stats.t.ppf(0.975, float(df))) * np.sqrt(vc + vt)
    assert row["control_mean"] == pytest.approx(float(mc), rel=1e-12)
    assert row["treatment_mean"] == pytest.approx(float(mt), rel=1e-12)
    # a difference of two means of about 1e4: to 1e-12 of their size
    assert row["delta"] == pytest.approx(float(mt - mc), abs=1e-12 * float(mc))
    # the half-width: a difference of variances (CUPED removes most of it)
    got = (row["ci_high"] - row["ci_low"]) / 2
    assert got == pytest.approx(float(half), rel=1e-11)
