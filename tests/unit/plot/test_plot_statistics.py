"""Charts of the statistics' frames: data as the frame says, encodings, a PNG."""

from __future__ import annotations

import polars as pl
import pytest
from plot_helpers import assert_png, fields, rows

import ireval_df as ie
from ireval_df.errors import OptionError, SchemaError


@pytest.fixture(scope="module")
def compared(per_query):
    return ie.compare(per_query, baseline="bm25", by="query_class")


def test_deltas_draws_each_difference_and_interval(compared, tmp_path):
    chart = ie.plot.deltas(compared)
    drawn = pl.DataFrame(rows(chart))
    # one point per run pair, slice and metric, at the frame's numbers
    assert drawn.height == compared.height == 2 * 3 * 3
    expected = compared.select(
        pl.concat_str("run_id", pl.lit(" − "), "baseline").alias("pair"),
        pl.col("query_class").alias("slice"),
        "metric",
        "delta",
        "ci_low",
        "ci_high",
        "significant",
    )
    joined = expected.join(drawn, on=["pair", "slice", "metric"])
    assert joined.height == expected.height
    for column in ("delta", "ci_low", "ci_high"):
        assert (joined[column] == joined[f"{column}_right"]).all()
    # colour: significant rows by their direction (all three are higher-better)
    outcomes = joined.select(
        pl.when(~pl.col("significant"))
        .then(pl.lit("not significant"))
        .when(pl.col("delta") > 0)
        .then(pl.lit("better (significant)"))
        .otherwise(pl.lit("worse (significant)"))
        .alias("want"),
        "outcome",
    )
    assert (outcomes["want"] == outcomes["outcome"]).all()
    assert {"better (significant)", "worse (significant)"} <= set(drawn["outcome"])
    assert fields(chart, "x") == {"ci_low", "delta"}
    assert fields(chart, "y") == {"metric"}
    assert fields(chart, "color") == {"outcome"}
    spec = chart.to_dict()
    assert spec["facet"]["row"]["field"] == "slice"
    assert spec["facet"]["column"]["field"] == "pair"
    # the baseline line at 0
    assert spec["spec"]["layer"][0]["encoding"]["x"] == {"datum": 0}
    assert_png(chart, tmp_path / "deltas.png")


def test_deltas_of_a_lower_is_better_metric_is_better_when_it_falls():
    frame = pl.DataFrame(
        {
            "run_id": "b",
            "baseline": "a",
            "metric": ["ZeroResultRate", "CTR"],
            "delta": [-0.1, -0.1],
            "ci_low": [-0.2, -0.2],
            "ci_high": [-0.05, -0.05],
            "significant": True,
        }
    )
    drawn = rows(ie.plot.deltas(frame))
    assert [r["outcome"] for r in drawn] == [
        "better (significant)",
        "worse (significant)",
    ]


def test_deltas_takes_pandas_and_arrow_alike(compared):
    polars_rows = rows(ie.plot.deltas(compared))
    assert rows(ie.plot.deltas(compared.to_pandas())) == polars_rows
    assert rows(ie.plot.deltas(compared.to_arrow())) == polars_rows


def test_a_frame_without_the_columns_names_them_and_its_producer(per_query):
    with pytest.raises(
        SchemaError, match=r"plot.deltas\(\) needs column\(s\) \['baseline'"
    ):
        ie.plot.deltas(per_query)
    with pytest.raises(SchemaError, match=r"pass the frame ie.compare\(\) returns"):
        ie.plot.deltas(per_query)
    with pytest.raises(SchemaError, match=r"ie.summarize"):
        ie.plot.slices(per_query)
    with pytest.raises(SchemaError, match=r"(?s)'metric_b'.*ie.disagreement"):
        ie.plot.disagreement(per_query)
    with pytest.raises(SchemaError, match=r"ie.evaluate"):
        ie.plot.per_query(per_query.drop("value"), "dense", "bm25", "AP")
    with pytest.raises(SchemaError, match=r"expected a frame for .*found 'dict'"):
        ie.plot.deltas({"a": 1})


def test_per_query_sorts_wins_above_losses_below(per_query, tmp_path):
    chart = ie.plot.per_query(per_query, "hybrid", "bm25", "nDCG@10")
    drawn = pl.DataFrame(rows(chart))
    wide = (
        per_query.filter(pl.col("metric") == "nDCG@10")
        .pivot("run_id", index="query_id", values="value")
        .select("query_id", (pl.col("hybrid") - pl.col("bm25")).alias("want"))
    )
    joined = drawn.join(wide, on="query_id")
    assert joined.height == drawn.height == 150
    assert ((joined["delta"] - joined["want"]).abs() < 1e-12).all()
    # drawn in order of the difference, biggest win first
    ordered = drawn.sort("order")["delta"]
    assert ordered.to_list() == sorted(ordered.to_list(), reverse=True)
    assert set(drawn.filter(pl.col("delta") > 0)["outcome"]) == {"win"}
    assert set(drawn.filter(pl.col("delta") < 0)["outcome"]) == {"loss"}
    assert set(drawn.filter(pl.col("delta") == 0)["outcome"]) == {"tie"}
    assert "query_class" in drawn.columns  # the query's attributes, for the tooltip
    assert fields(chart, "x") == {"query_id"}
    assert fields(chart, "y") == {"delta"}
    assert fields(chart, "color") == {"outcome"}
    counts = drawn["outcome"].value_counts()
    wins = counts.filter(pl.col("outcome") == "win")["count"].item()
    assert f"{wins} wins" in chart.to_dict()["title"]["subtitle"]
    assert_png(chart, tmp_path / "per_query.png")


def test_per_query_names_what_the_frame_holds(per_query):
    with pytest.raises(OptionError, match=r"run='bm26'.*\['bm25', 'dense', 'hybrid'\]"):
        ie.plot.per_query(per_query, "bm26", "bm25", "AP")
    with pytest.raises(OptionError, match=r"metric='MAP'"):
        ie.plot.per_query(per_query, "dense", "bm25", "MAP")


def test_per_query_counts_a_query_one_run_lacks_as_zero():
    frame = pl.DataFrame(
        {
            "run_id": ["a", "a", "b"],
            "query_id": ["1", "2", "1"],
            "metric": "AP",
            "value": [0.5, 0.3, 0.2],
        }
    )
    drawn = {
        r["query_id"]: r["delta"]
        for r in rows(ie.plot.per_query(frame, "b", "a", "AP"))
    }
    assert drawn == pytest.approx({"1": -0.3, "2": -0.3})


def test_slices_draws_each_mean_and_flags_small_slices(per_query, tmp_path):
    summary = ie.summarize(per_query, by=["query_class", "language"])
    chart = ie.plot.slices(summary)
    drawn = pl.DataFrame(rows(chart))
    assert drawn.height == summary.height
    assert drawn["value"].to_list() == summary["value"].to_list()
    assert drawn["ci_low"].to_list() == summary["ci_low"].to_list()
    small = summary["small_slice"].to_list()
    assert (drawn["size"] == "small slice").to_list() == small
    assert any(small)
    assert drawn["slice"][0] == "informational, de (n=25)"
    assert fields(chart, "x") == {"ci_low", "value"}
    assert fields(chart, "y") == {"slice"}
    assert fields(chart, "color") == {"run_id"}
    assert fields(chart, "shape") == {"size"}
    assert chart.to_dict()["facet"]["field"] == "metric"
    assert_png(chart, tmp_path / "slices.png")


def test_slices_without_slices_is_one_row_all():
    summary = pl.DataFrame(
        {
            "run_id": ["a", "b"],
            "metric": "AP",
            "value": [0.3, 0.4],
            "ci_low": [0.2, 0.3],
            "ci_high": [0.4, 0.5],
            "n_queries": 50,
        }
    )
    assert {r["slice"] for r in rows(ie.plot.slices(summary))} == {"all (n=50)"}


def test_disagreement_is_a_heatmap_of_query_agreement(per_query, tmp_path):
    frame = ie.disagreement(per_query, by="query_class")
    chart = ie.plot.disagreement(frame)
    drawn = pl.DataFrame(rows(chart))
    assert drawn.height == frame.height
    assert drawn["query_agreement"].to_list() == frame["query_agreement"].to_list()
    assert drawn["metrics"][0] == "nDCG@10 / AP"
    assert fields(chart, "x") == {"slice"}
    assert fields(chart, "y") == {"metrics"}
    assert fields(chart, "color") == {"query_agreement"}
    assert chart.to_dict()["facet"]["column"]["field"] == "pair"
    assert_png(chart, tmp_path / "disagreement.png")


def test_disagreement_marks_metrics_that_disagree():
    frame = pl.DataFrame(
        {
            "run_id": "a",
            "baseline": "b",
            "metric": ["AP", "AP"],
            "metric_b": ["P@10", "RR"],
            "agree": [False, True],
            "query_agreement": [0.5, None],
        }
    )
    assert [r["label"] for r in rows(ie.plot.disagreement(frame))] == ["0.50 ≠", "–"]


def test_similarity_boxes_per_slice(rbo, tmp_path):
    frame = rbo
    chart = ie.plot.similarity(frame, by="query_class")
    drawn = pl.DataFrame(rows(chart))
    assert drawn.height == frame.height
    assert sorted(drawn["value"].to_list()) == sorted(frame["value"].to_list())
    assert set(drawn["panel"]) == {"RBO: dense vs bm25", "RBO: hybrid vs bm25"}
    n = frame.filter(
        (pl.col("run_id") == "dense") & (pl.col("query_class") == "navigational")
    ).height
    assert f"navigational (n={n})" in set(drawn["slice"])
    assert chart.to_dict()["spec"]["mark"]["type"] == "boxplot"
    assert fields(chart, "x") == {"value"}
    assert fields(chart, "y") == {"slice"}
    assert_png(chart, tmp_path / "similarity.png")
    with pytest.raises(SchemaError, match=r"(?s)\['device'\].*ie.similarity"):
        ie.plot.similarity(frame, by="device")


def test_a_users_own_metric_takes_its_declared_direction():
    per_query = pl.DataFrame(
        {
            "run_id": ["a"] * 4 + ["b"] * 4,
            "query_id": ["1", "2", "3", "4"] * 2,
            "metric": "latency_ms",
            "value": [100.0, 120.0, 90.0, 110.0, 80.0, 95.0, 70.0, 85.0],
        }
    )
    compared = ie.compare(per_query, baseline="a", higher_is_better=False, ci="t")
    assert rows(ie.plot.deltas(compared))[0]["outcome"] == "worse (significant)"
    faster = ie.plot.deltas(compared, higher_is_better={"latency_ms": False})
    assert rows(faster)[0]["outcome"] == "better (significant)"
    wins = ie.plot.per_query(per_query, "b", "a", "latency_ms", higher_is_better=False)
    assert {r["outcome"] for r in rows(wins)} == {"win"}
    with pytest.raises(OptionError, match=r"contradicts the registry"):
        ie.plot.deltas(
            compared.with_columns(metric=pl.lit("AP")), higher_is_better={"AP": False}
        )
