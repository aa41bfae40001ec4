"""compare(): p-values, intervals and corrections against scipy and statsmodels."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from ireval_df._utils import provenance as _provenance
from ireval_df.errors import AlignmentError, DataError, IrevalError, SchemaError
from ireval_df.stats import compare
from ireval_df.stats.corrections import adjust
from ireval_df.stats.distributions import binom_two_sided, t_two_sided
from ireval_df.stats.resampling import randomization_pvalues


def _rows(result: pl.DataFrame) -> list[dict]:
    return result.rows(named=True)


def test_t_test_equals_scipy_ttest_rel(per_query, paired):
    result = compare(per_query, baseline="base", by="slice", test="t", correction=None)
    assert result.height == 2 * 2 * 2  # runs x slices x metrics
    for row in _rows(result):
        x, y = paired(per_query, row["run_id"], "base", row["metric"], row["slice"])
        reference = stats.ttest_rel(x, y)
        assert row["p_value"] == pytest.approx(reference.pvalue, abs=1e-9)
        low, high = reference.confidence_interval(0.95)
        assert row["ci_low"] == pytest.approx(low, abs=1e-9)
        assert row["ci_high"] == pytest.approx(high, abs=1e-9)
        d = x - y
        assert row["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        assert row["delta"] == pytest.approx(x.mean() - y.mean(), abs=1e-12)
        assert row["delta_rel"] == pytest.approx(
            (x.mean() - y.mean()) / y.mean(), rel=1e-9
        )
        assert (row["wins"], row["ties"], row["losses"]) == (
            int((d > 0).sum()),
            int((d == 0).sum()),
            int((d < 0).sum()),
        )
        assert row["n_queries"] == len(x)
        assert row["n_missing"] == 0


def test_wilcoxon_equals_scipy(per_query, paired):
    result = compare(per_query, baseline="base", by="slice", test="wilcoxon")
    for row in _rows(result):
        x, y = paired(per_query, row["run_id"], "base", row["metric"], row["slice"])
        assert row["p_value"] == pytest.approx(stats.wilcoxon(x - y).pvalue, abs=1e-9)


def test_sign_test_is_the_exact_binomial_test(per_query, paired):
    result = compare(per_query, test="sign", by="slice")
    for row in _rows(result):
        x, y = paired(
            per_query, row["run_id"], row["baseline"], row["metric"], row["slice"]
        )
        wins, losses = int((x > y).sum()), int((x < y).sum())
        expected = stats.binomtest(wins, wins + losses).pvalue
        assert row["p_value"] == pytest.approx(expected, abs=1e-12)


def test_stats_helpers_against_scipy():
    rng = np.random.default_rng(3)
    for _ in range(200):
        df = int(rng.integers(1, 400))
        t = float(rng.normal(0, 3))
        assert t_two_sided(t, df) == pytest.approx(
            2 * stats.t.sf(abs(t), df), abs=1e-12
        )
    for n in (1, 2, 9, 40, 333):
        for k in range(0, n + 1, max(1, n // 9)):
            assert binom_two_sided(k, n) == pytest.approx(
                stats.binomtest(k, n).pvalue, abs=1e-13
            )
    assert t_two_sided(float("inf"), 4) == 0.0
    assert binom_two_sided(0, 0) == 1.0


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("holm", "holm"),
        ("bonferroni", "bonferroni"),
        ("bh", "fdr_bh"),
        ("by", "fdr_by"),
    ],
)
def test_corrections_equal_statsmodels(per_query, ours, theirs):
    result = compare(per_query, by="slice", correction=ours, alpha=0.1)
    p = result["p_value"].to_numpy()
    reject, corrected, _, _ = multipletests(p, alpha=0.1, method=theirs)
    np.testing.assert_allclose(
        result["p_adjusted"].to_numpy(), corrected, rtol=0, atol=1e-15
    )
    assert result["significant"].to_list() == reject.tolist()
    # the family is the whole call: 3 pairs x 2 slices x 2 metrics
    assert result.height == 12


def test_adjust_with_ties_and_uniform_values():
    rng = np.random.default_rng(0)
    p = np.round(rng.uniform(0, 0.2, 60), 3)
    for ours, theirs in [("holm", "holm"), ("bh", "fdr_bh"), ("by", "fdr_by")]:
        np.testing.assert_allclose(
            adjust(p, ours), multipletests(p, method=theirs)[1], atol=1e-15
        )
    assert adjust(p, None).tolist() == p.tolist()


def _brute_force(d: np.ndarray) -> float:
    observed = abs(d.sum())
    hits = sum(
        abs(np.dot(signs, d)) >= observed - 1e-12
        for signs in itertools.product((1.0, -1.0), repeat=len(d))
    )
    return hits / 2 ** len(d)


def test_randomization_exact_on_small_inputs():
    rng = np.random.default_rng(11)
    groups = [np.round(rng.normal(0.1, 0.3, n), 2) for n in (1, 2, 5, 8, 11, 12)]
    groups.append(np.array([0.0, 0.0, 0.0]))
    groups.append(np.array([0.5, -0.5, 0.25, -0.25]))  # sum 0: p = 1
    values = np.concatenate(groups)
    lengths = np.array([len(g) for g in groups])
    p, exact = randomization_pvalues(values, lengths, 100, np.random.default_rng(0))
    assert exact.all()
    for got, d in zip(p, groups, strict=True):
        assert got == pytest.approx(_brute_force(d), abs=1e-15)
    # scipy's exact paired permutation test agrees too
    d = groups[4]
    reference = stats.permutation_test(
        (d,), np.mean, permutation_type="samples", n_resamples=np.inf
    ).pvalue
    assert p[4] == pytest.approx(reference, abs=1e-12)


def test_randomization_monte_carlo_approximates_exact():
    rng = np.random.default_rng(5)
    d = np.round(rng.normal(0.08, 0.3, 14), 2)
    exact, _ = randomization_pvalues(d, np.array([14]), 10, np.random.default_rng(0))
    sampled, is_exact = randomization_pvalues(
        d, np.array([14]), 20_000, np.random.default_rng(1), exact_max=0
    )
    assert not is_exact[0]
    assert sampled[0] == pytest.approx(exact[0], abs=0.01)


def test_randomization_through_compare(per_query, paired):
    result = compare(
        per_query,
        baseline="base",
        by="slice",
        test="randomization",
        n_resamples=2000,
        seed=3,
    )
    for row in _rows(result):
        x, y = paired(per_query, row["run_id"], "base", row["metric"], row["slice"])
        if row["slice"] == "short":  # 14 queries: exact
            assert row["p_value"] == pytest.approx(_brute_force(x - y), abs=1e-12)
        else:  # 33 queries: Monte Carlo, never 0, close to the t-test
            assert 1 / 2001 <= row["p_value"] <= 1
            assert row["p_value"] == pytest.approx(
                stats.ttest_rel(x, y).pvalue, abs=0.05
            )
    again = compare(
        per_query,
        baseline="base",
        by="slice",
        test="randomization",
        n_resamples=2000,
        seed=3,
    )
    assert again["p_value"].to_list() == result["p_value"].to_list()


def test_bootstrap_test_and_interval(per_query, paired):
    result = compare(
        per_query, baseline="base", test="bootstrap", n_resamples=4000, seed=1
    )
    for row in _rows(result):
        x, y = paired(per_query, row["run_id"], "base", row["metric"])
        d = x - y
        assert row["ci_low"] < d.mean() < row["ci_high"]
        t_low, t_high = stats.ttest_rel(x, y).confidence_interval(0.95)
        assert row["ci_low"] == pytest.approx(t_low, abs=0.02)
        assert row["ci_high"] == pytest.approx(t_high, abs=0.02)
        assert row["p_value"] == pytest.approx(stats.ttest_rel(x, y).pvalue, abs=0.05)
    same = compare(
        per_query, baseline="base", test="bootstrap", n_resamples=4000, seed=1
    )
    assert same["ci_low"].to_list() == result["ci_low"].to_list()
    other = compare(
        per_query, baseline="base", test="bootstrap", n_resamples=4000, seed=2
    )
    assert other["ci_low"].to_list() != result["ci_low"].to_list()


def test_ci_option_bootstrap_with_t_test(per_query):
    t = compare(per_query, baseline="base", test="t")
    boot = compare(
        per_query, baseline="base", test="t", ci="bootstrap", n_resamples=2000
    )
    assert boot["p_value"].to_list() == t["p_value"].to_list()
    assert boot["ci_low"].to_list() != t["ci_low"].to_list()


def test_lower_is_better_metric_swaps_wins_and_losses():
    # Unjudged@10 is lower-is-better: run b has fewer unjudged documents on 2 queries
    per_query = pl.DataFrame(
        {
            "run_id": ["a"] * 3 + ["b"] * 3,
            "query_id": ["1", "2", "3"] * 2,
            "metric": "Unjudged@10",
            "value": [0.5, 0.5, 0.2, 0.3, 0.4, 0.6],
        }
    )
    row = compare(per_query, baseline="a").row(0, named=True)
    assert (row["wins"], row["ties"], row["losses"]) == (2, 0, 1)
    assert row["delta"] == pytest.approx(0.1 / 3)


def test_identical_runs_give_p_one_and_ties():
    per_query = pl.DataFrame(
        {
            "run_id": ["a"] * 3 + ["b"] * 3,
            "query_id": ["1", "2", "3"] * 2,
            "metric": "AP",
            "value": [0.1, 0.2, 0.3] * 2,
        }
    )
    for test in ("t", "wilcoxon", "sign", "randomization", "bootstrap"):
        row = compare(per_query, test=test, n_resamples=200).row(0, named=True)
        assert row["p_value"] == 1.0, test
        assert row["ties"] == 3
        assert row["effect_size"] is None
        assert row["significant"] is False


def test_single_query_has_no_t_p_value():
    per_query = pl.DataFrame(
        {
            "run_id": ["a", "b"],
            "query_id": ["1", "1"],
            "metric": "AP",
            "value": [0.1, 0.4],
        }
    )
    row = compare(per_query).row(0, named=True)
    assert row["p_value"] is None
    assert row["p_adjusted"] is None
    assert row["significant"] is None
    assert row["ci_low"] is None


def test_geometric_mean_metric_compares_logs():
    per_query = pl.DataFrame(
        {
            "run_id": ["a"] * 3 + ["b"] * 3,
            "query_id": ["1", "2", "3"] * 2,
            "metric": "gmAP",
            "value": [0.1, 0.4, 0.0, 0.2, 0.4, 0.5],
        }
    )
    row = compare(per_query, baseline="a").row(0, named=True)
    floor = 1e-5
    assert row["baseline_mean"] == pytest.approx((0.1 * 0.4 * floor) ** (1 / 3))
    assert row["mean"] == pytest.approx((0.2 * 0.4 * 0.5) ** (1 / 3))
    logs = np.log([0.2, 0.4, 0.5]) - np.log([0.1, 0.4, floor])
    assert row["p_value"] == pytest.approx(stats.ttest_1samp(logs, 0).pvalue, abs=1e-9)


def test_baselines_and_pairs(per_query):
    assert compare(per_query).select("run_id", "baseline").unique(
        maintain_order=True
    ).rows() == [("alt", "base"), ("new", "base"), ("new", "alt")]
    several = compare(per_query, baseline=["base", "alt"])
    assert several.select("run_id", "baseline").unique(maintain_order=True).rows() == [
        ("alt", "base"),
        ("new", "base"),
        ("new", "alt"),
    ]
    one = compare(per_query, baseline="new")
    assert one.select("run_id", "baseline").unique(maintain_order=True).rows() == [
        ("base", "new"),
        ("alt", "new"),
    ]
    assert one.columns[:4] == ["run_id", "baseline", "metric", "n_queries"]


def _drop(per_query: pl.DataFrame) -> pl.DataFrame:
    return per_query.filter(
        ~((pl.col("run_id") == "alt") & (pl.col("query_id") == "long-000"))
    )


def test_missing_queries_follow_the_policy(per_query):
    dropped = _drop(per_query)
    zero = compare(dropped, baseline="base", missing="zero").filter(
        pl.col("run_id") == "alt"
    )
    skip = compare(dropped, baseline="base", missing="skip").filter(
        pl.col("run_id") == "alt"
    )
    assert zero["n_missing"].to_list() == [1, 1]
    assert skip["n_missing"].to_list() == [1, 1]
    assert zero["n_queries"].to_list() == [47, 47]
    assert skip["n_queries"].to_list() == [46, 46]
    with pytest.raises(
        AlignmentError, match=r"query 'long-000' .* no value for run 'alt'"
    ):
        compare(dropped, baseline="base", missing="error")
    # None follows the policy evaluate() recorded
    _provenance.attach(dropped, {"missing": "skip"})
    assert compare(dropped, baseline="base")["n_queries"].to_list()[:2] == [46, 46]
    with pytest.raises(IrevalError, match="missing='maybe' is not one of"):
        compare(dropped, missing="maybe")


def test_pandas_in_pandas_out(per_query):
    pd = pytest.importorskip("pandas")
    result = compare(per_query.to_pandas(), baseline="base")
    assert isinstance(result, pd.DataFrame)
    np.testing.assert_allclose(
        result["p_value"], compare(per_query, baseline="base")["p_value"]
    )


def test_lazy_input(per_query):
    assert compare(per_query.lazy(), baseline="base").height == 4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"test": "z"}, r"test='z' is not one of 't', 'wilcoxon'"),
        ({"correction": "fdr"}, r"correction='fdr' is not one of 'holm'"),
        ({"alpha": 1.5}, "alpha must be a number between 0 and 1"),
        ({"n_resamples": 0}, "n_resamples must be a positive whole number"),
        ({"ci": "normal"}, r"ci='normal' is not one of"),
        ({"baseline": "bm25"}, r"baseline \['bm25'\] is not a run .* the runs are"),
    ],
)
def test_bad_options(per_query, kwargs, match):
    with pytest.raises(IrevalError, match=match):
        compare(per_query, **kwargs)


def test_bad_inputs(per_query):
    with pytest.raises(SchemaError, match=r"missing column\(s\) \['language'\]"):
        compare(per_query, by="language")
    with pytest.raises(
        SchemaError, match="expected per-query results as a polars or pandas"
    ):
        compare({"a": 1})
    with pytest.raises(DataError, match="needs at least two runs, found \\['base'\\]"):
        compare(per_query.filter(pl.col("run_id") == "base"))
    with pytest.raises(DataError, match="repeated .* keys"):
        compare(pl.concat([per_query, per_query.head(1)]))


def test_import_loads_neither_scipy_nor_pandas():
    code = (
        "import sys, polars as pl, ireval_df\n"
        "from ireval_df.stats import compare\n"
        "from ireval_df.stats.summary import summarize\n"
        "f = pl.DataFrame({'run_id': ['a']*3 + ['b']*3, 'query_id': ['1','2','3']*2,"
        " 'metric': 'AP', 'value': [.1, .2, .3, .3, .3, .5]})\n"
        "for t in ('t', 'sign', 'randomization', 'bootstrap'):\n"
        "    compare(f, test=t, n_resamples=50)\n"
        "summarize(f, n_resamples=50)\n"
        "assert 'scipy' not in sys.modules and 'pandas' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_correction_none_is_spelled_as_on_the_command_line():
    per_query = pl.DataFrame(
        {
            "run_id": ["a"] * 4 + ["b"] * 4,
            "query_id": ["1", "2", "3", "4"] * 2,
            "metric": "AP",
            "value": [0.1, 0.2, 0.3, 0.4, 0.3, 0.5, 0.4, 0.6],
        }
    )
    words = compare(per_query, baseline="a", correction="none")
    assert words.equals(compare(per_query, baseline="a", correction=None))
    assert words["p_adjusted"].to_list() == words["p_value"].to_list()


def test_slices_that_vary_within_a_query_pair_by_slice():
    # document slices: each query has a value per slice; a and b are paired
    # slice by slice (news: +0.5 and +0.25; blog: -0.5 and 0), not across
    frame = pl.DataFrame(
        {
            "run_id": ["a"] * 4 + ["b"] * 4,
            "query_id": ["1", "1", "2", "2"] * 2,
            "kind": ["news", "blog"] * 4,
            "metric": "P@2",
            "value": [0.0, 0.5, 0.25, 0.5, 0.5, 0.0, 0.5, 0.5],
        }
    )
    result = compare(frame, baseline="a", by="kind", correction=None)
    rows = {r["kind"]: r for r in result.iter_rows(named=True)}
    assert rows["news"]["n_queries"] == rows["blog"]["n_queries"] == 2
    assert rows["news"]["delta"] == pytest.approx(0.375)
    assert rows["blog"]["delta"] == pytest.approx(-0.25)
    assert (rows["news"]["wins"], rows["blog"]["losses"], rows["blog"]["ties"]) == (
        2,
        1,
        1,
    )
    # a null slice (documents missing from the docs table) pairs with itself
    nulls = frame.with_columns(
        kind=pl.when(pl.col("kind") == "blog").then(None).otherwise(pl.col("kind"))
    )
    result = compare(nulls, baseline="a", by="kind", correction=None)
    assert result.filter(pl.col("kind").is_null())["n_queries"].item() == 2
