"""``ireval-df evaluate --engine spark`` and ``python -m ireval_df.spark`` print what the local engine prints."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from spark_helpers import assert_same, run_spark_python, skip_without_spark

from ireval_df.cli.main import main
from ireval_df.spark.__main__ import main as spark_main

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore")]

DATA = Path(__file__).resolve().parents[3] / "data"
RUNS = [str(DATA / "runs" / "bm25.run"), str(DATA / "runs" / "dense.run")]
QRELS = str(DATA / "qrels.txt")


def _out(capsys, call, argv):
    code = call(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_means_and_the_per_query_rows_are_the_local_ones(spark, capsys, tmp_path):
    argv = ["evaluate", "--run", *RUNS, "--qrels", QRELS, "-m", "nDCG@10", "-m", "GMAP"]
    code, local, _ = _out(capsys, main, argv)
    assert code == 0
    code, remote, _ = _out(
        capsys, main, [*argv, "--engine", "spark", "--partitions", "3"]
    )
    assert code == 0
    assert remote == local
    code, module, _ = _out(capsys, spark_main, argv)  # evaluate runs on Spark
    assert (code, module) == (0, local)

    queries = str(DATA / "queries.tsv")
    parquet = str(tmp_path / "qrels.parquet")
    pl.read_csv(
        QRELS,
        separator=" ",
        has_header=False,
        new_columns=["query_id", "iter", "doc_id", "relevance"],
        schema_overrides={"query_id": pl.String},
    ).write_parquet(parquet)
    per_query = [*argv, "--per-query", "--queries", queries]
    assert main([*per_query, "-o", str(tmp_path / "local.parquet")]) == 0
    remote_argv = [
        *argv[:4],
        "--qrels",
        parquet,
        *argv[6:],
        "--per-query",
        "--queries",
        queries,
    ]
    assert (
        main([*remote_argv, "--engine", "spark", "-o", str(tmp_path / "spark.parquet")])
        == 0
    )
    assert_same(
        pl.read_parquet(tmp_path / "spark.parquet"),
        pl.read_parquet(tmp_path / "local.parquet"),
    )


def test_errors_exit_as_the_local_ones(spark, capsys):
    both = [*RUNS[:1], str(DATA / "runs.parquet")]  # both hold a run 'bm25'
    argv = ["evaluate", "--run", *both, "--qrels", QRELS, "-m", "AP"]
    local = _out(capsys, main, argv)
    remote = _out(capsys, main, [*argv, "--engine", "spark"])
    assert local[0] == remote[0] == 1
    assert local[2] == remote[2]
    bad = [
        "evaluate",
        "--run",
        RUNS[0],
        "--qrels",
        QRELS,
        "-m",
        "nDGC@10",
        "--engine",
        "spark",
    ]
    code, _, err = _out(capsys, main, bad)
    assert code == 2
    assert "nDGC" in err
    assert "Traceback" not in err
    code, _, err = _out(
        capsys,
        main,
        ["evaluate", "--run", RUNS[0], "--qrels", QRELS, "--partitions", "2"],
    )
    assert code == 2
    assert "--engine spark" in err


def test_diversity_qrels_with_qrels_intents_read_as_locally(spark, capsys, tmp_path):
    # TREC diversity qrels: the subtopic in the second field
    qrels = tmp_path / "qrels.div"
    table = pl.read_csv(DATA / "qrels_intents.tsv", separator="\t", infer_schema=False)
    qrels.write_text("".join(f"{q} {i} {d} {r}\n" for q, i, d, r in table.iter_rows()))
    argv = ["evaluate", "--run", RUNS[0], "--qrels", str(qrels), "--qrels-intents"]
    argv += ["-m", "alpha_nDCG@10", "-m", "AP"]
    code, local, _ = _out(capsys, main, argv)
    assert code == 0
    assert "alpha_nDCG@10" in local
    code, remote, _ = _out(capsys, main, [*argv, "--engine", "spark"])
    assert (code, remote) == (0, local)


def test_a_missing_path_and_a_delta_table_without_delta_lake_are_clear_errors(
    spark, capsys, tmp_path
):
    missing = str(tmp_path / "nothere.parquet")
    argv = ["evaluate", "--run", missing, "--qrels", QRELS, "-m", "AP"]
    code, _, err = _out(capsys, main, [*argv, "--engine", "spark"])
    assert code == 1
    assert f"cannot read {missing!r}: no such file or folder" in err
    assert "Traceback" not in err
    # a Delta Lake table (a folder with _delta_log): this test session has no
    # delta-spark, so reading it says how to add it (with delta-spark on the
    # classpath Spark reads it like any other table)
    table = tmp_path / "run.delta"
    (table / "_delta_log").mkdir(parents=True)
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}).write_parquet(
        table / "part-0.parquet"
    )
    argv = ["evaluate", "--run", str(table), "--qrels", QRELS, "-m", "AP"]
    code, _, err = _out(capsys, main, [*argv, "--engine", "spark"])
    try:
        spark.read.format("delta")  # the source is looked up only on load
        has_delta = spark._jvm.java.lang.Class.forName(  # noqa: SLF001
            "io.delta.sql.DeltaSparkSessionExtension"
        )
    except Exception:  # noqa: BLE001 - py4j: the class is absent
        has_delta = None
    if has_delta is None:
        assert code == 2
        assert "Delta Lake" in err
        assert "delta-spark" in err
        assert "Traceback" not in err


def test_online_metrics_on_spark_print_what_the_local_engine_prints(
    spark, capsys, tmp_path
):
    argv = ["online", "metrics", "--log", str(DATA / "log"), "-m", "CTR"]
    argv += ["-m", "PositionCTR", "--by", "device"]
    code, local, _ = _out(capsys, main, argv)
    assert code == 0
    code, remote, _ = _out(capsys, spark_main, [*argv, "--partitions", "3"])
    assert (code, remote) == (0, local)  # online metrics run on Spark there
    assert main([*argv, "-o", str(tmp_path / "local.parquet")]) == 0
    spark_argv = [*argv, "--engine", "spark", "-o", str(tmp_path / "spark.parquet")]
    assert main(spark_argv) == 0
    assert_same(
        pl.read_parquet(tmp_path / "spark.parquet"),
        pl.read_parquet(tmp_path / "local.parquet"),
    )
    code, _, err = _out(capsys, main, [*argv[:4], "--partitions", "2"])
    assert code == 2
    assert "--engine spark" in err


def test_online_ab_on_spark_prints_what_the_local_engine_prints(spark, capsys):
    argv = ["online", "ab", "--log", str(DATA / "log"), "-m", "CTR", "--cuped"]
    code, local, _ = _out(capsys, main, argv)
    assert code == 0
    code, remote, _ = _out(capsys, spark_main, [*argv, "--partitions", "2"])
    assert (code, remote) == (0, local)
    code, _, err = _out(capsys, spark_main, [*argv, "--control", "nope"])
    assert code == 2
    assert "control='nope' is not a variant" in err


def test_a_session_it_builds_prints_errors_only_not_sparks_start_up(tmp_path):
    # a process of its own: the session is built by ireval_df, not the fixture
    skip_without_spark()
    argv = ["evaluate", "--run", RUNS[0], "--qrels", QRELS, "-m", "nDCG@10"]
    done = run_spark_python(
        ["-m", "ireval_df", *argv, "--engine", "spark"], tmp_path, timeout=600
    )
    assert done.stdout.startswith("run_id")
    lines = done.stderr.splitlines()
    # the JVM's own notice of the vector module Spark 4 adds is not a log line
    jvm = "WARNING: Using incubator modules"
    others = [x for x in lines if not x.startswith(("ireval-df: ", jvm))]
    assert others == [], done.stderr
    assert any(x.startswith("ireval-df: warning:") for x in lines)


def test_a_spark_home_with_a_configuration_keeps_its_logging(tmp_path, monkeypatch):
    pytest.importorskip("pyspark", reason="pyspark is not installed")
    from ireval_df.spark.sources import _configured

    for name in ("SPARK_CONF_DIR", "PYSPARK_SUBMIT_ARGS", "PYSPARK_GATEWAY_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    assert not _configured()
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text(
        "spark.driver.extraJavaOptions -Dmy.flag=yes\n"
    )
    assert _configured()
    (tmp_path / "conf" / "spark-defaults.conf").unlink()
    (tmp_path / "conf" / "log4j2.properties").write_text("rootLogger.level = info\n")
    assert _configured()
    (tmp_path / "conf" / "log4j2.properties").unlink()
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--master local[1] pyspark-shell")
    assert _configured()
