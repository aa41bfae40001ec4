"""ireval_df.spark.evaluate gives exactly the rows of ie.evaluate, and its errors.

Equality: every offline metric of the registry (tests/fuzz's list, with
cutoffs and variants) on the bundled data and on seeded random data with
ties, graded and negative grades, queries on one side only, stacked runs
(one without rows in some groups), under each option; values to 1e-12.
Errors: option, metric and schema errors before any Spark job; data errors
from the executors as the same IrevalError with the same message.
"""

from __future__ import annotations

import polars as pl
import pytest
from spark_helpers import assert_same, caught, collect, random_case

import ireval_df as ie
import ireval_df.spark as isp
from ireval_df.errors import (
    AlignmentError,
    DataError,
    MetricSpecError,
    OptionError,
    SchemaError,
)

pytestmark = pytest.mark.spark

DATA = pytest.importorskip("pathlib").Path(__file__).resolve().parents[3] / "data"


def _every_metric() -> list[str]:
    from fuzz.test_fuzz_evaluate import every_metric

    return every_metric()


def both(spark_frames, local_frames, metrics, **options):
    """(spark rows, its warnings), (local rows, its warnings)."""
    got, got_warnings = caught(
        lambda: collect(isp.evaluate(*spark_frames, metrics, **options))
    )
    want, want_warnings = caught(lambda: ie.evaluate(*local_frames, metrics, **options))
    return (got, got_warnings), (want, want_warnings)


def test_every_metric_on_the_bundled_data(to_spark):
    runs = ie.read_run(
        [DATA / "runs" / f"{n}.run" for n in ("bm25", "dense", "rerank")]
    )
    runs = runs.drop("rank")
    # judged per intent, for the diversity measures (the others see each
    # document's highest grade over its intents: its grade in qrels.txt)
    qrels = pl.read_csv(DATA / "qrels_intents.tsv", separator="\t", infer_schema=False)
    queries = ie.read_queries(DATA / "queries.tsv")
    metrics = _every_metric()
    (got, got_w), (want, want_w) = both(
        (to_spark(runs), to_spark(qrels)),
        (runs, qrels),
        metrics,
        queries=queries,
    )
    n = runs["run_id"].n_unique() * qrels["query_id"].n_unique() * len(metrics)
    assert "alpha_nDCG@3" in metrics
    assert want.height == n
    assert_same(got, want)
    assert got_w == want_w


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"missing": "skip", "depth": 5},
        {"duplicates": "max", "compat": "9"},
        {"duplicates": "first", "partitions": 7},
        {"rank_from": "column", "partitions": 1},
    ],
    ids=["default", "skip-depth", "max-compat9", "first-7", "rank-column-1"],
)
def test_every_metric_on_random_data(to_spark, options):
    repeats = options.get("duplicates") in ("max", "first")
    run, qrels = random_case(11, repeats=repeats, intents=True)
    if options.get("rank_from") == "column":  # ranks with ties and gaps
        run = run.with_columns(
            rank=(pl.col("score") * 2)
            .cast(pl.Int64)
            .rank("dense", descending=True)
            .over("run_id", "query_id")
            .cast(pl.Int64)
        )
    local = {k: v for k, v in options.items() if k != "partitions"}
    got, got_w = caught(
        lambda: collect(
            isp.evaluate(to_spark(run), to_spark(qrels), _every_metric(), **options)
        )
    )
    want, want_w = caught(lambda: ie.evaluate(run, qrels, _every_metric(), **local))
    assert_same(got, want)
    assert sorted(got_w) == sorted(want_w)
    assert got_w  # the one-sided queries (and dropped rows) are reported


def test_integer_ids_on_one_side_match_strings_on_the_other(to_spark):
    run = pl.DataFrame(
        {
            "qid": [1, 1, 2, 3],
            "docno": ["a", "b", "a", "c"],
            "sim": [2.0, 1.0, 1.0, 3.0],
        }
    )
    qrels = pl.DataFrame(
        {"query_id": ["1", "2", "3"], "doc_id": ["b", "a", "x"], "relevance": [1, 2, 1]}
    )
    got = collect(
        isp.evaluate(to_spark(run), to_spark(qrels), ["RR", "nDCG@3"], partitions=3)
    )
    assert_same(got, ie.evaluate(run, qrels, ["RR", "nDCG@3"]))


def test_bad_options_metrics_and_columns_fail_before_any_job(spark, to_spark):
    run, qrels = random_case(3, queries=5)
    srun, sqrels = to_spark(run), to_spark(qrels)
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup("ireval-checks", "driver checks")
    with pytest.raises(MetricSpecError, match="nDCG"):
        isp.evaluate(srun, sqrels, ["nDGC@10"])
    with pytest.raises(OptionError, match="missing='often'"):
        isp.evaluate(srun, sqrels, "AP", missing="often")
    with pytest.raises(OptionError, match="depth"):
        isp.evaluate(srun, sqrels, "AP", depth=0)
    with pytest.raises(OptionError, match="partitions"):
        isp.evaluate(srun, sqrels, "AP", partitions=0)
    with pytest.raises(SchemaError, match="missing column 'score'"):
        isp.evaluate(srun.drop("score"), sqrels, "AP")
    with pytest.raises(SchemaError, match="expected numbers"):
        isp.evaluate(
            srun.withColumn("score", srun["score"].cast("boolean")), sqrels, "AP"
        )
    with pytest.raises(SchemaError, match="Spark DataFrames"):
        isp.evaluate(run, sqrels, "AP")
    with pytest.raises(OptionError, match="evaluate_prefs"):
        isp.evaluate(srun, sqrels, ["AP", "PrefsSimp"])
    assert tracker.getJobIdsForGroup("ireval-checks") == []
    spark.sparkContext.setJobGroup(None, None)  # type: ignore[arg-type]


@pytest.mark.filterwarnings("ignore::ireval_df.errors.IrevalWarning")
def test_diversity_measures_without_intents_fail_as_locally(to_spark):
    run, qrels = random_case(6, queries=10)
    with pytest.raises(SchemaError) as local:
        ie.evaluate(run, qrels, ["AP", "alpha_nDCG@5"])
    with pytest.raises(SchemaError) as remote:
        isp.evaluate(to_spark(run), to_spark(qrels), ["AP", "alpha_nDCG@5"])
    assert str(local.value) in str(remote.value)
    assert "intent" in str(remote.value)


@pytest.mark.filterwarnings("ignore::ireval_df.errors.IrevalWarning")
def test_data_errors_come_back_as_the_local_errors(to_spark):
    run, qrels = random_case(5, queries=30, repeats=True)
    with pytest.raises(DataError) as local:
        ie.evaluate(run, qrels, "AP")
    with pytest.raises(DataError) as remote:
        isp.evaluate(to_spark(run), to_spark(qrels), "AP")
    assert str(remote.value) == str(local.value)  # counted over the whole run

    nan = pl.DataFrame(
        {"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, float("nan")]}
    )
    one = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(DataError) as local:
        ie.evaluate(nan, one, "AP")
    with pytest.raises(DataError) as remote:
        isp.evaluate(to_spark(nan), to_spark(one), "AP")
    assert str(remote.value) == str(local.value)
    assert "Traceback" not in str(remote.value)

    clean, _ = random_case(5, queries=30)
    for options in ({"missing": "error"}, {}):
        qrels_used = qrels if options else qrels.filter(pl.col("query_id") == "zzz")
        if not options:
            qrels_used = pl.DataFrame(
                {"query_id": ["zzz"], "doc_id": ["a"], "relevance": [1]}
            )
        with pytest.raises(AlignmentError) as local:
            ie.evaluate(clean, qrels_used, "AP", **options)
        with pytest.raises(AlignmentError) as remote:
            isp.evaluate(to_spark(clean), to_spark(qrels_used), "AP", **options)
        assert str(remote.value) == str(local.value)


def test_the_summary_of_spark_rows_is_the_local_summary(to_spark):
    run, qrels = random_case(8)
    metrics = ["AP", "GMAP", "NumRel", "nDCG@10"]
    got, _ = caught(
        lambda: collect(isp.evaluate(to_spark(run), to_spark(qrels), metrics))
    )
    want, _ = caught(lambda: ie.evaluate(run, qrels, metrics))
    assert_same(
        ie.summarize(got, ci="t").drop("ci_low", "ci_high"),
        ie.summarize(want, ci="t").drop("ci_low", "ci_high"),
    )


def test_large_arrow_strings_setting(spark, to_spark):
    # with useLargeVarTypes Spark sends and expects large_string: the kernels
    # follow; pyspark before 4.3 expects plain strings back, and is refused
    import pyspark

    from ireval_df.spark.jobs import LARGE_STRINGS_FROM

    run, qrels = random_case(4, queries=10)
    key = "spark.sql.execution.arrow.useLargeVarTypes"
    spark.conf.set(key, "true")
    version = tuple(int(p) for p in pyspark.__version__.split(".")[:2])
    try:
        if version < LARGE_STRINGS_FROM:
            with pytest.raises(OptionError, match="useLargeVarTypes"):
                isp.evaluate(to_spark(run), to_spark(qrels), "AP")
            return
        got, _ = caught(
            lambda: collect(isp.evaluate(to_spark(run), to_spark(qrels), "AP"))
        )
    finally:
        spark.conf.set(key, "false")
    want, _ = caught(lambda: ie.evaluate(run, qrels, "AP"))
    assert_same(got, want)


def test_measures_scaled_by_the_top_grade_match_with_many_partitions(to_spark):
    # max_rel=0 is the highest grade of all the qrels, not of one group's
    run = ie.read_run(DATA / "runs" / "bm25.run").drop("rank")
    qrels = ie.read_qrels(DATA / "qrels.txt")
    metrics = ["ERR", "INST", "SDCG@10", "NERR10", "BPM@10"]
    got, _ = caught(
        lambda: collect(
            isp.evaluate(to_spark(run), to_spark(qrels), metrics, partitions=60)
        )
    )
    want, _ = caught(lambda: ie.evaluate(run, qrels, metrics))
    assert_same(got, want)
