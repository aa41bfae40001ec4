"""headroom(): each slice's share, mean, gap to a reference and the gain of closing it."""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import IrevalWarning, MetricSpecError, OptionError, SchemaError

DATA = Path(__file__).resolve().parents[3] / "data"

# Run a: de queries 1, 2 (AP 0.2, 0.4: mean 0.3), en queries 3, 4, 5 (0.9,
# 0.9, 0.6: mean 0.8). Run b: de 0.6, 0.8 (0.7), en 0.9, 0.7, 0.8 (0.8).
PER_QUERY = pl.DataFrame(
    {
        "run_id": ["a"] * 5 + ["b"] * 5,
        "query_id": ["1", "2", "3", "4", "5"] * 2,
        "metric": "AP",
        "value": [0.2, 0.4, 0.9, 0.9, 0.6, 0.6, 0.8, 0.9, 0.7, 0.8],
        "lang": ["de", "de", "en", "en", "en"] * 2,
    }
)


def _rows(out: pl.DataFrame, run: str) -> list[tuple[object, ...]]:
    return [
        (
            r["lang"],
            r["n_queries"],
            r["share"],
            round(r["value"], 6),
            round(r["reference"], 6),
            round(r["gap"], 6),
            round(r["gain"], 6),
        )
        for r in out.filter(pl.col("run_id") == run).iter_rows(named=True)
    ]


def test_against_the_best_run_of_each_slice():
    out = ie.headroom(PER_QUERY, by="lang")
    assert out.columns == [
        "run_id",
        "lang",
        "metric",
        "n_queries",
        "share",
        "value",
        "reference",
        "gap",
        "gain",
    ]
    # de: best 0.7 (b), a's gap 0.4 over 2 of 5 queries: gain 0.16; en: best 0.8
    assert _rows(out, "a") == [
        ("de", 2, 0.4, 0.3, 0.7, 0.4, 0.16),
        ("en", 3, 0.6, 0.8, 0.8, 0.0, 0.0),
    ]
    # a's overall mean is 0.6; closing every gap gives 0.76 = 0.6 + 0.16
    assert _rows(out, "b") == [
        ("de", 2, 0.4, 0.7, 0.7, 0.0, 0.0),
        ("en", 3, 0.6, 0.8, 0.8, 0.0, 0.0),
    ]


def test_against_a_run_and_perfect():
    against_b = ie.headroom(PER_QUERY, by="lang", against="b")
    assert _rows(against_b, "a")[0] == ("de", 2, 0.4, 0.3, 0.7, 0.4, 0.16)
    perfect = ie.headroom(PER_QUERY, by="lang", against="perfect")
    # AP's best value is 1: de's gap 0.7 on 40% of the queries (gain 0.28)
    # outweighs en's 0.2 on 60% (0.12)
    assert _rows(perfect, "a") == [
        ("de", 2, 0.4, 0.3, 1.0, 0.7, 0.28),
        ("en", 3, 0.6, 0.8, 1.0, 0.2, 0.12),
    ]
    # no slices: one row per run, the whole gap
    whole = ie.headroom(PER_QUERY, against="perfect").filter(pl.col("run_id") == "a")
    assert (whole["share"].item(), round(whole["gain"].item(), 6)) == (1.0, 0.4)


def test_a_better_run_than_the_reference_has_a_negative_gap():
    out = ie.headroom(PER_QUERY, by="lang", against="a").filter(pl.col("run_id") == "b")
    assert [round(g, 6) for g in out["gap"]] == [0.0, -0.4]


def test_lower_is_better_metrics_and_missing_slices():
    # latency: lower is better; b is faster on de, and has no en query
    latency = pl.DataFrame(
        {
            "run_id": ["a", "a", "a", "b", "b"],
            "query_id": ["1", "2", "3", "1", "2"],
            "metric": "latency_ms",
            "value": [100.0, 300.0, 50.0, 80.0, 120.0],
            "lang": ["de", "de", "en", "de", "de"],
        }
    )
    out = ie.headroom(latency, by="lang", higher_is_better=False, against="b")
    a = out.filter(pl.col("run_id") == "a")
    # de: a's mean 200 against b's 100: 100 ms to gain on 2 of 3 queries
    assert a.select("lang", "gap", "gain").rows()[0] == (
        "de",
        100.0,
        pytest.approx(200 / 3),
    )
    # en: b has no en query, so no reference
    assert a.filter(pl.col("lang") == "en")["gap"].item() is None
    best = ie.headroom(latency, by="lang", higher_is_better=False)
    assert best.filter(pl.col("run_id") == "a")["reference"].to_list() == [100.0, 50.0]
    unjudged = latency.with_columns(
        metric=pl.lit("Unjudged@10"), value=pl.col("value") / 400
    )
    perfect = ie.headroom(unjudged, against="perfect")
    assert perfect["reference"].to_list() == [0.0, 0.0]


def test_on_evaluate_output_with_query_attributes():
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore", IrevalWarning
        )  # data/ misses a query, on purpose
        per_query = ie.evaluate(
            [DATA / "runs" / "bm25.run", DATA / "runs" / "dense.run"],
            DATA / "qrels.txt",
            ["nDCG@10", "AP"],
            queries=DATA / "queries.tsv",
        )
    out = ie.headroom(per_query, by="query_class")
    means = ie.summarize(per_query, ci="t")
    for (run, metric), rows in out.group_by(["run_id", "metric"]):
        # the shares add up to 1, and the share-weighted slice means to the mean
        assert rows["share"].sum() == pytest.approx(1.0)
        mean = means.filter((pl.col("run_id") == run) & (pl.col("metric") == metric))
        assert (rows["share"] * rows["value"]).sum() == pytest.approx(
            mean["value"].item()
        )
        # sorted by gain, the largest first
        assert rows["gain"].to_list() == sorted(rows["gain"].to_list(), reverse=True)
    pandas_out = ie.headroom(per_query.to_pandas(), by="query_class")
    assert type(pandas_out).__module__.startswith("pandas")


def test_errors():
    with pytest.raises(
        OptionError, match=r"against='c' is neither one of \('best', 'perfect'\)"
    ):
        ie.headroom(PER_QUERY, against="c")
    dcg = PER_QUERY.with_columns(metric=pl.lit("DCG@10"))
    with pytest.raises(OptionError, match="needs the best possible value of 'DCG@10'"):
        ie.headroom(dcg, against="perfect")
    own = PER_QUERY.with_columns(metric=pl.lit("clicks"))
    with pytest.raises(OptionError, match="needs the best possible value of 'clicks'"):
        ie.headroom(own, against="perfect", higher_is_better=True)
    with pytest.raises(MetricSpecError, match="whether higher is better is unknown"):
        ie.headroom(own)
    summed = PER_QUERY.with_columns(metric=pl.lit("NumRet"))
    with pytest.raises(OptionError, match="compared by their mean"):
        ie.headroom(summed)
    with pytest.raises(SchemaError, match=r"missing column\(s\) \['lang2'\]"):
        ie.headroom(PER_QUERY, by="lang2")
