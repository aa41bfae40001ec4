"""pr_curve: trec_eval's 11 points, each query's raw points, and the chart."""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from plot_helpers import QRELS, QUERIES, RUNS, assert_png, fields, rows

import ireval_df as ie
from ireval_df.errors import OptionError
from ireval_df.plot.curves import pr_points


@pytest.fixture(scope="module")
def raw():
    return pr_points(RUNS, QRELS, interpolated=False)


@pytest.fixture(scope="module")
def interpolated():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pr_points(RUNS, QRELS)


def test_raw_points_by_hand():
    # relevant b (rank 2), d (rank 4); R = 3 (e is never retrieved)
    run = pl.DataFrame(
        {"query_id": "q", "doc_id": ["a", "b", "c", "d"], "score": [4.0, 3.0, 2.0, 1.0]}
    )
    qrels = pl.DataFrame(
        {"query_id": "q", "doc_id": ["b", "d", "e", "a"], "relevance": [1, 2, 1, 0]}
    )
    points = pr_points(run, qrels, interpolated=False)
    assert points.select("rank", "recall", "precision").rows() == [
        (2, 1 / 3, 1 / 2),
        (4, 2 / 3, 2 / 4),
    ]
    # rel=2: only d counts, R = 1
    strict = pr_points(run, qrels, interpolated=False, rel=2)
    assert strict.select("rank", "recall", "precision").rows() == [(4, 1.0, 0.25)]


def test_the_11_points_are_trec_evals_iprec_means(interpolated):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per_query = ie.evaluate(RUNS, QRELS, ["IPrec@0", "IPrec@0.5", "IPrec@1"])
    means = per_query.group_by("run_id", "metric").agg(pl.col("value").mean())
    for (run_id, metric), value in zip(
        means.select("run_id", "metric").rows(), means["value"], strict=True
    ):
        level = {"IPrec@0": 0.0, "IPrec@0.5": 0.5, "IPrec@1": 1.0}[metric]
        found = interpolated.filter(
            (pl.col("run_id") == run_id) & (pl.col("recall") == level)
        )["precision"].item()
        assert found == pytest.approx(value, abs=1e-12)
    assert interpolated["recall"].unique().sort().to_list() == pytest.approx(
        [i / 10 for i in range(11)]
    )


def test_raw_points_give_back_the_interpolated_curve(raw, interpolated):
    # trec_eval 10.0: interpolated precision at level L is the best precision
    # at a rank that has retrieved at least c = lround(L * R) relevant
    # documents (0 when none does); the mean runs over every qrels query
    qrels = ie.read_qrels(QRELS)
    relevant = (
        qrels.filter(pl.col("relevance") >= 1)
        .group_by("query_id")
        .agg(pl.len().alias("R"))
    )
    points = raw.join(relevant, on="query_id").with_columns(
        (pl.col("recall") * pl.col("R")).round().alias("i")
    )
    n_queries = interpolated["n_queries"].max()
    for level in (0.0, 0.3, 0.5, 0.7, 1.0):
        c = (pl.lit(level) * pl.col("R") + 0.5).floor()
        best = (
            points.filter(pl.col("i") >= c)
            .group_by("run_id", "query_id")
            .agg(pl.col("precision").max())
            .group_by("run_id")
            .agg((pl.col("precision").sum() / n_queries).alias("mean"))
        )
        want = interpolated.filter((pl.col("recall") - level).abs() < 1e-9)
        joined = want.join(best, on="run_id")
        assert joined.height == 3
        assert ((joined["precision"] - joined["mean"]).abs() < 1e-12).all(), level


def test_pr_curve_chart_draws_the_points(interpolated, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chart = ie.plot.pr_curve(RUNS, QRELS)
    drawn = pl.DataFrame(rows(chart))
    assert drawn["precision"].to_list() == interpolated["precision"].to_list()
    assert fields(chart, "x") == {"recall"}
    assert fields(chart, "y") == {"precision"}
    assert fields(chart, "color") == {"run_id"}
    assert_png(chart, tmp_path / "pr.png")


def test_pr_curve_by_slice_makes_panels(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chart = ie.plot.pr_curve(RUNS, QRELS, by="query_class", queries=QUERIES)
    spec = chart.to_dict()
    assert spec["facet"]["column"]["field"] == "slice"
    drawn = pl.DataFrame(rows(chart))
    assert drawn.height == 3 * 3 * 11
    assert set(drawn["slice"]) == {"informational", "navigational", "transactional"}
    assert_png(chart, tmp_path / "pr_by.png")


def test_raw_pr_curve_draws_a_line_per_query(raw, tmp_path):
    chart = ie.plot.pr_curve(RUNS[:1], QRELS, interpolated=False)
    drawn = pl.DataFrame(rows(chart))
    bm25 = raw.filter(pl.col("run_id") == "bm25")
    assert drawn["precision"].to_list() == bm25["precision"].to_list()
    assert fields(chart, "detail") == {"query_id"}
    assert fields(chart, "order") == {"rank"}
    assert chart.to_dict()["facet"]["column"]["field"] == "run_id"
    assert_png(chart, tmp_path / "pr_raw.png")


def test_raw_points_take_slices(raw):
    sliced = pr_points(
        RUNS, QRELS, interpolated=False, by="query_class", queries=QUERIES
    )
    assert sliced.drop("query_class").equals(raw)
    assert sliced["query_class"].null_count() == 0


def test_pr_curve_refuses_bad_options():
    with pytest.raises(OptionError, match=r"no queries= were given"):
        ie.plot.pr_curve(RUNS, QRELS, by="query_class")
    with pytest.raises(OptionError, match=r"\['device'\] are not query attributes"):
        pr_points(RUNS, QRELS, interpolated=False, by="device", queries=QUERIES)
    with pytest.raises(OptionError, match=r"rel must be a positive whole number"):
        pr_points(RUNS, QRELS, rel=0)
