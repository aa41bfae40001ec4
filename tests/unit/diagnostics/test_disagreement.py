"""disagreement(): metric directions per slice and Kendall's tau between run orderings."""

from __future__ import annotations

import polars as pl
import pytest
from scipy import stats

from ireval_df.diagnostics import disagreement
from ireval_df.errors import DataError


def test_hand_example():
    # Two queries, run b vs run a: AP +0.1 on both, P@10 -0.1 on both -> metrics disagree.
    per_query = pl.DataFrame(
        {
            "run_id": ["a"] * 4 + ["b"] * 4,
            "query_id": ["1", "2"] * 4,
            "metric": ["AP", "AP", "P@10", "P@10"] * 2,
            "value": [0.2, 0.4, 0.5, 0.5, 0.3, 0.5, 0.4, 0.4],
            "cls": ["x", "y"] * 4,
        }
    )
    row = disagreement(per_query).row(0, named=True)
    assert (row["run_id"], row["baseline"], row["metric"], row["metric_b"]) == (
        "b",
        "a",
        "AP",
        "P@10",
    )
    assert row["delta"] == pytest.approx(0.1)
    assert row["delta_b"] == pytest.approx(-0.1)
    assert (row["better"], row["better_b"], row["agree"]) == (1, -1, False)
    assert row["query_agreement"] == 0.0
    assert row["n_queries"] == 2
    assert row["kendall_tau"] == -1.0
    assert row["n_runs"] == 2
    by = disagreement(per_query, by="cls")
    assert by["cls"].to_list() == ["x", "y"]
    assert by["n_queries"].to_list() == [1, 1]


def test_lower_is_better_metric_is_oriented():
    # Unjudged@10 lower is better: b has fewer unjudged and higher AP -> agree
    per_query = pl.DataFrame(
        {
            "run_id": ["a", "a", "b", "b"],
            "query_id": ["1"] * 4,
            "metric": ["AP", "Unjudged@10"] * 2,
            "value": [0.2, 0.6, 0.4, 0.3],
        }
    )
    row = disagreement(per_query).row(0, named=True)
    assert (row["better"], row["better_b"], row["agree"], row["kendall_tau"]) == (
        1,
        1,
        True,
        1.0,
    )


def test_kendall_tau_equals_scipy(make):
    per_query = make(
        seed=4, runs=("r1", "r2", "r3", "r4", "r5"), metrics=("AP", "nDCG@10", "RR")
    )
    result = disagreement(per_query, by="slice")
    assert result.height == 10 * 2 * 3  # run pairs x slices x metric pairs
    means = per_query.group_by("run_id", "slice", "metric").agg(pl.col("value").mean())
    for (slice_name, m1, m2), part in result.group_by("slice", "metric", "metric_b"):
        a = means.filter(
            (pl.col("slice") == slice_name) & (pl.col("metric") == m1)
        ).sort("run_id")
        b = means.filter(
            (pl.col("slice") == slice_name) & (pl.col("metric") == m2)
        ).sort("run_id")
        expected = stats.kendalltau(a["value"], b["value"]).statistic
        assert part["kendall_tau"].unique().to_list() == [
            pytest.approx(expected, abs=1e-12)
        ]
        assert part["n_runs"].unique().to_list() == [5]


def test_errors(per_query):
    with pytest.raises(DataError, match=r"at least two metrics, found \['AP'\]"):
        disagreement(per_query.filter(pl.col("metric") == "AP"))
    with pytest.raises(DataError, match="at least two runs"):
        disagreement(per_query.filter(pl.col("run_id") == "alt"))
