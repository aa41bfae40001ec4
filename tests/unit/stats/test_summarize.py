"""summarize(): aggregates, t and bootstrap intervals, small-slice flags."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from ireval_df._utils import provenance as _provenance
from ireval_df.errors import DataError, IrevalError, MetricSpecError, SchemaError
from ireval_df.stats.summary import AUTO_T_QUERIES, summarize


def _frame(seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for run in ("a", "b"):
        for cls, n in (("x", 25), ("y", 6)):
            values = np.round(rng.uniform(0, 1, n), 2)
            rows += [
                {
                    "run_id": run,
                    "query_id": f"{cls}{i}",
                    "metric": "AP",
                    "value": float(v),
                    "cls": cls,
                }
                for i, v in enumerate(values)
            ]
    return pl.DataFrame(rows)


def test_t_interval_equals_scipy():
    frame = _frame()
    out = summarize(frame, by="cls", ci="t", level=0.9)
    assert out.columns == [
        "run_id",
        "cls",
        "metric",
        "value",
        "n_queries",
        "ci_low",
        "ci_high",
        "small_slice",
    ]
    for row in out.rows(named=True):
        values = frame.filter(
            (pl.col("run_id") == row["run_id"]) & (pl.col("cls") == row["cls"])
        )
        v = values["value"].to_numpy()
        low, high = stats.t.interval(0.9, len(v) - 1, loc=v.mean(), scale=stats.sem(v))
        assert row["value"] == pytest.approx(v.mean(), abs=1e-12)
        assert (row["ci_low"], row["ci_high"]) == (
            pytest.approx(low, abs=1e-9),
            pytest.approx(high, abs=1e-9),
        )
        assert row["small_slice"] == (row["cls"] == "y")


def test_bootstrap_is_reproducible_and_percentile():
    frame = _frame()
    out = summarize(frame, by="cls", n_resamples=3000, ci="bootstrap")
    again = summarize(frame, by="cls", n_resamples=3000, ci="bootstrap")
    assert out["ci_low"].to_list() == again["ci_low"].to_list()
    # below 1000 queries a slice is resampled by default too, with the same draws
    assert out.equals(summarize(frame, by="cls", n_resamples=3000))
    other = summarize(frame, by="cls", n_resamples=3000, seed=5, ci="bootstrap")
    assert other["ci_low"].to_list() != out["ci_low"].to_list()
    t = summarize(frame, by="cls", ci="t")
    big = out.filter(pl.col("cls") == "x")
    np.testing.assert_allclose(
        big["ci_low"], t.filter(pl.col("cls") == "x")["ci_low"], atol=0.03
    )
    for row in out.rows(named=True):
        assert row["ci_low"] < row["value"] < row["ci_high"]
    assert _provenance.settings_of(out)["ci"] == "percentile bootstrap, 95%"


def _skewed(n: int, cls: str, seed: int = 0) -> pl.DataFrame:
    """Values like RR: 60% zeros, the rest 1/rank."""
    rng = np.random.default_rng(seed)
    values = np.where(rng.random(n) < 0.6, 0.0, 1.0 / rng.integers(1, 11, n))
    return pl.DataFrame(
        {
            "run_id": "r",
            "query_id": [f"{cls}{i}" for i in range(n)],
            "metric": "RR",
            "value": values,
            "cls": cls,
        }
    )


def test_auto_takes_t_for_large_slices_and_the_bootstrap_below():
    large, small = _skewed(AUTO_T_QUERIES, "large"), _skewed(40, "small", seed=1)
    frame = pl.concat([large, small])
    out = summarize(frame, by="cls")
    t = summarize(frame, by="cls", ci="t")
    assert out.filter(pl.col("cls") == "large").equals(
        t.filter(pl.col("cls") == "large")
    )
    assert out.filter(pl.col("cls") == "small").equals(
        summarize(small, by="cls", ci="bootstrap")
    )
    assert not out.filter(pl.col("cls") == "small").equals(
        t.filter(pl.col("cls") == "small")
    )
    settings = _provenance.settings_of(out)
    assert settings["ci"] == (
        "t for slices of at least 1000 queries, percentile bootstrap below, 95%"
    )
    assert settings["n_resamples"] == 10_000
    # one slice of 1000 queries or more: no resampling at all
    settings = _provenance.settings_of(summarize(large))
    assert settings["ci"] == "t, 95%"
    assert "n_resamples" not in settings
    assert _provenance.settings_of(summarize(small))["ci"] == (
        "percentile bootstrap, 95%"
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_t_and_bootstrap_agree_from_the_auto_threshold_on(seed):
    # the reason for AUTO_T_QUERIES: on skewed values the two intervals'
    # ends differ by a few percent of the half-width, about the bootstrap's
    # own noise at 10,000 resamples (1.4% of it at each end)
    frame = _skewed(AUTO_T_QUERIES, "x", seed=seed)
    t = summarize(frame, ci="t").row(0, named=True)
    boot = summarize(frame, ci="bootstrap", seed=seed).row(0, named=True)
    half = (t["ci_high"] - t["ci_low"]) / 2
    for end in ("ci_low", "ci_high"):
        assert abs(boot[end] - t[end]) < 0.05 * half


def test_bootstrap_single_draw_matches_numpy_reference():
    # one group: the interval is the percentiles of means over resampled indices
    values = np.array([0.1, 0.5, 0.2, 0.9, 0.4])
    frame = pl.DataFrame(
        {"run_id": "r", "query_id": list("abcde"), "metric": "AP", "value": values}
    )
    out = summarize(frame, n_resamples=500, seed=9).row(0, named=True)
    rng = np.random.default_rng(9)
    picks = rng.integers(0, 5, size=(500, 5))
    means = values[picks].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    assert out["ci_low"] == pytest.approx(low, abs=1e-12)
    assert out["ci_high"] == pytest.approx(high, abs=1e-12)


def test_bootstrap_coverage_simulation():
    """Percentile intervals cover the true mean at close to 95%."""
    rng = np.random.default_rng(2024)
    n, reps = 40, 300
    alpha, beta = 2.0, 5.0  # Beta(2, 5): skewed like per-query AP, mean 2/7
    values = rng.beta(alpha, beta, size=(reps, n))
    frame = pl.DataFrame(
        {
            "run_id": "r",
            "query_id": [f"{r}-{i}" for r in range(reps) for i in range(n)],
            "metric": "AP",
            "value": values.ravel(),
            "rep": np.repeat(np.arange(reps), n),
        }
    )
    out = summarize(frame, by="rep", n_resamples=1000, seed=1)
    truth = alpha / (alpha + beta)
    covered = ((out["ci_low"] <= truth) & (truth <= out["ci_high"])).mean()
    # the binomial s.e. of the rate is 0.013; percentile intervals run slightly narrow
    assert 0.90 <= covered <= 0.99


def test_aggregates_small_slices_and_minimum():
    frame = pl.DataFrame(
        {
            "run_id": "r",
            "query_id": ["1", "2", "3", "1", "2", "3"],
            "metric": ["NumRet"] * 3 + ["gmAP"] * 3,
            "value": [10.0, 20.0, 30.0, 0.1, 0.4, 0.0],
        }
    )
    out = summarize(frame, min_queries=3, n_resamples=200)
    numret, gmap = out.rows(named=True)
    assert numret["value"] == 60.0
    assert numret["ci_low"] is None
    assert gmap["value"] == pytest.approx((0.1 * 0.4 * 1e-5) ** (1 / 3))
    assert gmap["ci_low"] <= gmap["value"] <= gmap["ci_high"]
    assert out["small_slice"].to_list() == [False, False]
    one = summarize(frame.head(1), ci="t")
    assert one.row(0, named=True)["ci_low"] is None
    assert one["small_slice"].item() is True


def test_pandas_in_pandas_out():
    pd = pytest.importorskip("pandas")
    out = summarize(_frame().to_pandas(), by=["cls"], n_resamples=100)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns)[-1] == "small_slice"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"ci": "normal"},
            IrevalError,
            r"ci='normal' is not one of 'auto', 'bootstrap', 't'",
        ),
        ({"level": 95}, IrevalError, "level must be a number between 0 and 1"),
        (
            {"n_resamples": 0},
            IrevalError,
            "n_resamples must be a positive whole number",
        ),
        (
            {"min_queries": 2.5},
            IrevalError,
            "min_queries must be a positive whole number",
        ),
        ({"by": "language"}, SchemaError, r"missing column\(s\) \['language'\]"),
    ],
)
def test_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        summarize(_frame(), **kwargs)


def test_unknown_metric():
    frame = pl.DataFrame(
        {"run_id": "r", "query_id": ["1"], "metric": "ndgc@10", "value": [0.1]}
    )
    with pytest.raises(MetricSpecError):
        summarize(frame)


def test_a_query_counted_twice_in_one_slice_is_an_error():
    # a result sliced by document, summarized without its slice column
    frame = pl.DataFrame(
        {
            "run_id": "a",
            "query_id": ["1", "1", "2", "2"],
            "kind": ["news", "blog"] * 2,
            "metric": "P@2",
            "value": [0.0, 0.5, 0.25, 0.5],
        }
    )
    with pytest.raises(
        DataError, match=r"repeated .* keys.*\n.*pass its slice columns as by="
    ):
        summarize(frame)
    assert summarize(frame, by="kind", ci="t")["n_queries"].to_list() == [2, 2]
