"""A/B statistics against tea-tasting 1.14 (and statsmodels), to 1e-9.

tea-tasting (https://github.com/e10v/tea-tasting) analyses the same
unit-level frames: ``Mean``, ``RatioOfMeans`` with and without CUPED
covariates, ``Proportion``, ``SampleRatio`` and its multiple-testing
adjustments. Every number of ``ab_test_units`` is compared on random frames:
several seeds, two or three arms of unequal sizes, with and without CUPED,
and within slices.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest

from ireval_df.stats.experiments import (
    ab_test_units,
    mean,
    proportion,
    ratio,
    srm,
    srm_counts,
)

tt = pytest.importorskip(
    "tea_tasting",
    reason="tea-tasting is the oracle of these tests: pip install 'tea-tasting>=1.14,<2' "
    "(in the dev extra; 1.x runs on Python 3.11)",
)

RTOL = 1e-9
ATOL = 1e-12
SEEDS = range(20)

#: (our column, tea-tasting's field)
FIELDS = [
    ("control_mean", "control"),
    ("treatment_mean", "treatment"),
    ("delta", "effect_size"),
    ("ci_low", "effect_size_ci_lower"),
    ("ci_high", "effect_size_ci_upper"),
    ("delta_rel", "rel_effect_size"),
    ("rel_ci_low", "rel_effect_size_ci_lower"),
    ("rel_ci_high", "rel_effect_size_ci_upper"),
    ("p_value", "pvalue"),
]


def make_units(seed: int, arms: int = 3) -> pl.DataFrame:
    """Units of unequal arms: sums per unit, pre-period sums, values, a 0/1 outcome."""
    rng = np.random.default_rng(seed)
    names = ["A", "B", "C"][:arms]
    sizes = rng.integers(40, 1500, arms)
    frames = []
    for k, (name, size) in enumerate(zip(names, sizes, strict=True)):
        activity = rng.gamma(2.0, 2.0, size)
        searches = rng.poisson(activity) + 1
        pre_searches = rng.poisson(activity) + rng.integers(0, 2, size)
        rate = np.clip(0.3 + 0.02 * k + rng.normal(0, 0.1, size), 0.01, 0.99)
        clicks = rng.binomial(searches, rate)
        pre_clicks = rng.binomial(pre_searches, rate)
        revenue = rng.lognormal(1.0 + 0.05 * k, 1.0, size) * (activity > 1)
        pre_revenue = 0.6 * revenue + rng.lognormal(0.5, 1.0, size)
        converted = (rng.random(size) < 0.2 + 0.03 * k).astype(np.int64)
        frames.append(
            pl.DataFrame(
                {
                    "unit_id": [f"{name}{i}" for i in range(size)],
                    "variant": name,
                    "device": rng.choice(["desktop", "mobile"], size),
                    "clicks": clicks,
                    "searches": searches,
                    "pre_clicks": pre_clicks,
                    "pre_searches": pre_searches,
                    "revenue": revenue,
                    "pre_revenue": pre_revenue,
                    "converted": converted,
                }
            )
        )
    return pl.concat(frames)


OURS = {
    "ctr": ratio("clicks", "searches", pre=("pre_clicks", "pre_searches")),
    "revenue": mean("revenue", pre="pre_revenue"),
    "clicks": mean("clicks", pre="pre_clicks"),
}


def theirs(*, cuped: bool) -> dict[str, object]:
    if cuped:
        return {
            "ctr": tt.RatioOfMeans("clicks", "searches", "pre_clicks", "pre_searches"),
            "revenue": tt.Mean("revenue", "pre_revenue"),
            "clicks": tt.Mean("clicks", "pre_clicks"),
        }
    return {
        "ctr": tt.RatioOfMeans("clicks", "searches"),
        "revenue": tt.Mean("revenue"),
        "clicks": tt.Mean("clicks"),
    }


def analyze(units: pl.DataFrame, metrics: dict[str, object]) -> dict:
    """tea-tasting's results per (control, treatment), control "A"."""
    return tt.Experiment(metrics).analyze(units, control="A", all_variants=True)


def ours(units: pl.DataFrame, metrics, **options) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unequal arms: a sample-ratio warning
        return ab_test_units(units, metrics, control="A", correction="none", **options)


def assert_agree(row: dict, reference, fields=FIELDS) -> None:
    for column, field in fields:
        expected = float(getattr(reference, field))
        assert row[column] == pytest.approx(expected, rel=RTOL, abs=ATOL), (
            column,
            row["metric"],
        )


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("cuped", [False, True])
def test_means_and_ratios_agree(seed, cuped):
    units = make_units(seed)
    result = ours(units, OURS, cuped=cuped)
    reference = analyze(units, theirs(cuped=cuped))
    assert result.height == 2 * len(OURS)
    for row in result.iter_rows(named=True):
        assert_agree(row, reference["A", row["variant"]][row["metric"]])
        assert row["n_control"] == units.filter(pl.col("variant") == "A").height


@pytest.mark.parametrize("seed", SEEDS[:8])
def test_slices_agree_with_tea_tasting_on_each_slice(seed):
    units = make_units(seed, arms=2)
    result = ours(units, OURS, cuped=True, by="device")
    assert result.height == 2 * len(OURS)
    for device in ("desktop", "mobile"):
        reference = analyze(
            units.filter(pl.col("device") == device), theirs(cuped=True)
        )
        for row in result.filter(pl.col("device") == device).iter_rows(named=True):
            assert_agree(row, reference["A", "B"][row["metric"]])


@pytest.mark.parametrize("seed", SEEDS)
def test_proportions_agree(seed):
    """The pooled z-test's p-value; the unpooled Wald and log-ratio intervals."""
    units = make_units(seed)
    result = ours(units, {"converted": proportion("converted")})
    pooled = analyze(
        units,
        {"converted": tt.Proportion("converted", method="norm", correction=False)},
    )
    unpooled = analyze(
        units,
        {
            "converted": tt.Proportion(
                "converted", method="norm", correction=False, equal_var=False
            )
        },
    )
    intervals = [f for f in FIELDS if f[0] != "p_value"]
    for row in result.iter_rows(named=True):
        key = ("A", row["variant"])
        assert_agree(row, pooled[key]["converted"], [("p_value", "pvalue")])
        assert_agree(row, unpooled[key]["converted"], intervals)


@pytest.mark.parametrize("seed", SEEDS)
def test_proportions_agree_with_statsmodels(seed):
    from statsmodels.stats.proportion import (
        confint_proportions_2indep,
        proportions_ztest,
    )

    units = make_units(seed)
    result = ours(units, {"converted": proportion("converted")})
    arms = units.group_by("variant").agg(
        pl.col("converted").sum().alias("k"), pl.len().alias("n")
    )
    counts = {v: (k, n) for v, k, n in arms.iter_rows()}
    kc, nc = counts["A"]
    for row in result.iter_rows(named=True):
        kt, nt = counts[row["variant"]]
        _, p = proportions_ztest([kt, kc], [nt, nc])
        low, high = confint_proportions_2indep(kt, nt, kc, nc, method="wald")
        r_low, r_high = confint_proportions_2indep(
            kt, nt, kc, nc, compare="ratio", method="log"
        )
        assert row["p_value"] == pytest.approx(p, rel=RTOL, abs=ATOL)
        assert row["ci_low"] == pytest.approx(low, rel=RTOL, abs=ATOL)
        assert row["ci_high"] == pytest.approx(high, rel=RTOL, abs=ATOL)
        assert row["rel_ci_low"] == pytest.approx(r_low - 1, rel=RTOL, abs=ATOL)
        assert row["rel_ci_high"] == pytest.approx(r_high - 1, rel=RTOL, abs=ATOL)


@pytest.mark.parametrize("seed", SEEDS)
def test_sample_ratio_agrees(seed):
    """Two arms: the chi-square test is tea-tasting's normal test without correction."""
    rng = np.random.default_rng(seed)
    units = make_units(seed, arms=2)
    weights = {"A": float(rng.uniform(0.5, 2.0)), "B": 1.0}
    reference = tt.Experiment(
        srm=tt.SampleRatio(weights, method="norm", correction=False)
    ).analyze(units, control="A")["srm"]
    ours_srm = srm(units, expected=weights)
    assert ours_srm["p_value"][0] == pytest.approx(
        reference.pvalue, rel=RTOL, abs=1e-300
    )
    counts = dict(ours_srm.select("variant", "n_units").iter_rows())
    assert (counts["A"], counts["B"]) == (reference.control, reference.treatment)
    direct = srm_counts(counts, weights)
    assert direct["p_value"][0] == pytest.approx(reference.pvalue, rel=RTOL, abs=1e-300)
    tested = ours(units, {"clicks": mean("clicks")}, expected=weights)
    assert tested["srm_p_value"][0] == pytest.approx(
        reference.pvalue, rel=RTOL, abs=1e-300
    )


@pytest.mark.parametrize("seed", SEEDS[:10])
@pytest.mark.parametrize(
    ("correction", "adjuster"),
    [
        (
            "holm",
            lambda r: tt.adjust_fwer(r, arbitrary_dependence=True, method="bonferroni"),
        ),
        ("bh", lambda r: tt.adjust_fdr(r)),
        ("by", lambda r: tt.adjust_fdr(r, arbitrary_dependence=True)),
    ],
)
def test_corrections_agree(seed, correction, adjuster):
    units = make_units(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = ab_test_units(units, OURS, control="A", correction=correction)
    adjusted = adjuster(analyze(units, theirs(cuped=False)))
    expected = {
        (pair[1], metric): float(row["pvalue_adj"])
        for pair, result in adjusted.items()
        for metric, row in result.items()
    }
    assert len(expected) == result.height
    for row in result.iter_rows(named=True):
        assert row["p_adjusted"] == pytest.approx(
            expected[row["variant"], row["metric"]], rel=RTOL, abs=ATOL
        )
