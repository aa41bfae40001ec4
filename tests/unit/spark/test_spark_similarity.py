"""ireval_df.spark.similarity gives exactly the rows of ie.similarity."""

from __future__ import annotations

import polars as pl
import pytest
from spark_helpers import assert_same, caught, collect, random_case

import ireval_df as ie
import ireval_df.spark as isp
from ireval_df.errors import DataError, MetricSpecError, OptionError
from ireval_df.measures import list_metrics

pytestmark = pytest.mark.spark


def _every_measure() -> list[str]:
    out = []
    for row in list_metrics().filter(family="similarity").iter_rows(named=True):
        if row["cutoff"] in ("none", "optional"):
            out.append(row["metric"])
        if row["cutoff"] in ("optional", "required"):
            out.append(f"{row['metric']}@5")
    return [*out, "RBO(p=0.8,ties=w)@10", "TauAP(ties=b)"]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"missing": "skip", "baseline": ["r1", "r0"], "partitions": 5},
        {"duplicates": "first", "partitions": 1},
    ],
    ids=["default", "skip-two-baselines", "first"],
)
def test_every_measure_on_random_data(to_spark, options):
    run, _ = random_case(21, queries=40, repeats=options.get("duplicates") == "first")
    local = {k: v for k, v in options.items() if k != "partitions"}
    measures = _every_measure()
    got, got_w = caught(
        lambda: collect(isp.similarity(to_spark(run), measures, **options))
    )
    want, want_w = caught(lambda: ie.similarity(run, measures, **local))
    assert_same(got, want)
    assert sorted(got_w) == sorted(want_w)


@pytest.mark.filterwarnings("ignore::ireval_df.errors.IrevalWarning")
def test_errors_are_the_local_ones(to_spark):
    run, _ = random_case(21, queries=20, repeats=True)
    with pytest.raises(DataError) as local:
        ie.similarity(run, "RBO")
    with pytest.raises(DataError) as remote:
        isp.similarity(to_spark(run), "RBO")
    assert str(remote.value) == str(local.value)
    one = run.filter(pl.col("run_id") == "r0")
    with pytest.raises(OptionError, match="only one run"):
        isp.similarity(to_spark(one), "RBO")
    with pytest.raises(MetricSpecError):
        isp.similarity(to_spark(run), "nDCG@10")
