"""ireval_df.spark.failures gives exactly the per-query rows of ie.failures."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from spark_helpers import assert_same, caught, collect, random_case

import ireval_df as ie
import ireval_df.spark as isp
from ireval_df.errors import DataError, OptionError

pytestmark = pytest.mark.spark

DATA = Path(__file__).resolve().parents[3] / "data"


def test_the_bundled_pipeline_with_intents(to_spark):
    runs = ie.read_run([DATA / "runs" / "bm25.run", DATA / "runs" / "rerank.run"])
    runs = runs.drop("rank")
    qrels = pl.read_csv(
        DATA / "qrels_intents.tsv",
        separator="\t",
        schema_overrides={"query_id": pl.String},
    )
    options = {
        "k": 5,
        "stages": ["bm25", "rerank"],
        "stage_depth": 50,
        "queries": DATA / "queries.tsv",
    }
    got, got_w = caught(
        lambda: collect(
            isp.failures(to_spark(runs), to_spark(qrels), partitions=3, **options)
        )
    )
    want, want_w = caught(lambda: ie.failures(runs, qrels, **options))
    assert_same(got, want)
    assert got_w == want_w


@pytest.mark.parametrize("duplicates", ["max", "error"])
def test_random_data(to_spark, duplicates):
    run, qrels = random_case(31, queries=40, repeats=True)
    if duplicates == "error":
        with pytest.raises(DataError) as local:
            ie.failures(run, qrels)
        with pytest.raises(DataError) as remote:
            isp.failures(to_spark(run), to_spark(qrels))
        assert str(remote.value) == str(local.value)
        return
    got, got_w = caught(
        lambda: collect(
            isp.failures(
                to_spark(run), to_spark(qrels), k=3, rel=2, duplicates=duplicates
            )
        )
    )
    want, want_w = caught(
        lambda: ie.failures(run, qrels, k=3, rel=2, duplicates=duplicates)
    )
    assert_same(got, want)
    assert got_w == want_w


def test_bad_options_are_refused_before_the_job(to_spark):
    run, qrels = random_case(31, queries=5)
    with pytest.raises(OptionError, match="k"):
        isp.failures(to_spark(run), to_spark(qrels), k=0)
    with pytest.raises(OptionError, match="stage_depth"):
        isp.failures(to_spark(run), to_spark(qrels), stage_depth=3)
