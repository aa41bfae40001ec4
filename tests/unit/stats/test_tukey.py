"""tukey_hsd(): against scipy.stats.tukey_hsd and a two-way ANOVA from statsmodels."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from ireval_df.errors import AlignmentError, IrevalError, MetricSpecError
from ireval_df.stats import tukey_hsd


def _matrix(per_query: pl.DataFrame, metric: str) -> tuple[list[str], np.ndarray]:
    wide = (
        per_query.filter(pl.col("metric") == metric)
        .pivot(on="run_id", index="query_id", values="value")
        .sort("query_id")
    )
    runs = ["base", "alt", "new"]
    return runs, wide.select(runs).to_numpy()


def test_independent_design_equals_scipy(per_query):
    result = tukey_hsd(per_query, metric="AP", design="independent", alpha=0.1)
    runs, matrix = _matrix(per_query, "AP")
    reference = stats.tukey_hsd(*matrix.T)
    ci = reference.confidence_interval(0.9)
    index = {r: i for i, r in enumerate(runs)}
    assert result.height == 3
    for row in result.rows(named=True):
        i, j = index[row["run_id"]], index[row["baseline"]]
        assert row["delta"] == pytest.approx(reference.statistic[i, j], abs=1e-12)
        assert row["p_value"] == pytest.approx(reference.pvalue[i, j], abs=1e-9)
        assert row["ci_low"] == pytest.approx(ci.low[i, j], abs=1e-9)
        assert row["ci_high"] == pytest.approx(ci.high[i, j], abs=1e-9)
        assert row["p_adjusted"] == row["p_value"]
        assert row["significant"] == (row["p_value"] <= 0.1)


def test_blocked_design_uses_the_two_way_anova_error():
    smf = pytest.importorskip("statsmodels.formula.api")
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(2)
    n, runs = 25, ["a", "b", "c", "d"]
    base = rng.uniform(0, 1, n)
    values = {r: base + 0.05 * i + rng.normal(0, 0.1, n) for i, r in enumerate(runs)}
    per_query = pl.DataFrame(
        {
            "run_id": np.repeat(runs, n),
            "query_id": [f"q{i:02d}" for i in range(n)] * len(runs),
            "metric": "AP",
            "value": np.concatenate([values[r] for r in runs]),
        }
    )
    model = smf.ols("value ~ C(run_id) + C(query_id)", data=per_query.to_pandas()).fit()
    table = sm.stats.anova_lm(model)
    mse, df = table.loc["Residual", "mean_sq"], table.loc["Residual", "df"]
    assert df == (n - 1) * (len(runs) - 1)
    result = tukey_hsd(per_query)
    assert result.height == 6
    for row in result.rows(named=True):
        diff = values[row["run_id"]].mean() - values[row["baseline"]].mean()
        se = np.sqrt(mse / n)
        expected = stats.studentized_range.sf(abs(diff) / se, len(runs), df)
        assert row["p_value"] == pytest.approx(expected, abs=1e-9)
        crit = stats.studentized_range.ppf(0.95, len(runs), df)
        assert row["ci_high"] - row["ci_low"] == pytest.approx(2 * crit * se, rel=1e-9)


def test_slices_metrics_and_missing(per_query):
    result = tukey_hsd(per_query, by="slice")
    assert result.height == 3 * 2 * 2  # pairs x slices x metrics
    assert result.columns[:4] == ["run_id", "baseline", "slice", "metric"]
    dropped = per_query.filter(
        ~((pl.col("run_id") == "new") & (pl.col("query_id") == "short-001"))
    )
    skip = tukey_hsd(dropped, metric="ndcg_cut_10", by="slice", missing="skip")
    short = skip.filter(pl.col("slice") == "short")
    assert short["n_queries"].to_list() == [13, 13, 13]
    assert short["n_missing"].to_list() == [1, 1, 1]
    with pytest.raises(AlignmentError, match="lack a value for some run"):
        tukey_hsd(dropped, missing="error")


def test_errors(per_query):
    with pytest.raises(
        IrevalError, match=r"metric 'P@10' is not in the per-query results"
    ):
        tukey_hsd(per_query, metric="P@10")
    with pytest.raises(MetricSpecError):
        tukey_hsd(per_query, metric="no_such_metric")
    with pytest.raises(IrevalError, match=r"design='paired' is not one of"):
        tukey_hsd(per_query, design="paired")
    with pytest.raises(IrevalError, match="alpha must be a number"):
        tukey_hsd(per_query, alpha=0)
