"""``ireval-df failures``: the summary, per-query rows, stages, docs, headroom, exits."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import polars as pl
import pytest

from ireval_df.cli.main import main

DATA = Path(__file__).resolve().parents[3] / "data"
BM25 = str(DATA / "runs" / "bm25.run")
HYBRID = str(DATA / "runs" / "hybrid.run")
QRELS = str(DATA / "qrels.txt")
QUERIES = str(DATA / "queries.tsv")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def test_summary_per_run_and_slice() -> None:
    code, out, _ = run(
        [
            "failures",
            "--run",
            BM25,
            HYBRID,
            "--qrels",
            QRELS,
            "--queries",
            QUERIES,
            "--by",
            "query_class",
        ]
    )
    assert code == 0
    header, *rows = out.splitlines()
    # no stages, docs or intents: their columns are left out of the table
    assert header.split() == [
        "run_id",
        "query_class",
        "n_queries",
        "n_relevant",
        "n_top_k",
        "candidate_rate",
        "scoring_rate",
        "inverted_rate",
    ]
    assert len(rows) == 6
    assert rows[0].split()[:3] == ["bm25", "informational", "84"]


def test_stages_and_per_query_rows_written(tmp_path: Path) -> None:
    target = tmp_path / "failures.parquet"
    code, _, err = run(
        [
            "failures",
            "--run",
            BM25,
            HYBRID,
            "--qrels",
            QRELS,
            "--stages",
            "bm25",
            "hybrid",
            "--stage-depth",
            "50",
            "-k",
            "5",
            "--per-query",
            "-o",
            str(target),
        ]
    )
    assert code == 0
    assert "wrote 300 rows" in err
    written = pl.read_parquet(target)
    assert written.filter(pl.col("run_id") == "bm25")["n_dropped"].sum() == 0
    assert written.filter(pl.col("run_id") == "hybrid")["n_dropped"].sum() > 0
    total = written.select(
        pl.sum_horizontal("n_top_k", "n_candidate", "n_scoring", "n_dropped")
    ).to_series()
    assert total.to_list() == written["n_relevant"].to_list()
    code, out, _ = run(
        [
            "failures",
            "--run",
            BM25,
            HYBRID,
            "--qrels",
            QRELS,
            "--stages",
            "bm25",
            "hybrid",
        ]
    )
    assert code == 0
    assert "dropped_rate" in out.splitlines()[0].split()


def test_documents_slices(tmp_path: Path) -> None:
    run_frame = pl.read_parquet(DATA / "runs.parquet")
    docs = (
        run_frame.select("doc_id")
        .unique()
        .with_columns(
            source_type=pl.when(pl.col("doc_id").str.slice(-1).cast(pl.Int32) % 2 == 0)
            .then(pl.lit("news"))
            .otherwise(pl.lit("web"))
        )
    )
    path = tmp_path / "docs.parquet"
    docs.write_parquet(path)
    code, out, err = run(
        [
            "failures",
            "--run",
            BM25,
            "--qrels",
            QRELS,
            "--docs",
            str(path),
            "--by",
            "source_type",
        ]
    )
    assert code == 0, err
    header, *rows = out.splitlines()
    assert "calibration_rate" in header.split()
    assert "freshness_rate" not in header.split()  # no published_at
    assert [r.split()[1] for r in rows][:2] == ["news", "web"]


def test_headroom(tmp_path: Path) -> None:
    code, out, _ = run(
        [
            "failures",
            "--run",
            BM25,
            HYBRID,
            "--qrels",
            QRELS,
            "--headroom",
            "-m",
            "nDCG@10",
            "--queries",
            QUERIES,
            "--by",
            "query_class",
            "--against",
            "perfect",
        ]
    )
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == [
        "run_id",
        "query_class",
        "metric",
        "n_queries",
        "share",
        "value",
        "reference",
        "gap",
        "gain",
    ]
    gains = [float(r.split()[-1]) for r in rows if r.startswith("bm25")]
    assert gains == sorted(gains, reverse=True)
    target = tmp_path / "room.csv"
    code, _, _ = run(
        [
            "failures",
            "--run",
            BM25,
            HYBRID,
            "--qrels",
            QRELS,
            "--headroom",
            "-o",
            str(target),
        ]
    )
    assert code == 0
    assert pl.read_csv(target)["metric"].unique().to_list() == ["nDCG@10"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--stages", "bm25", "dense"], "stage(s) ['dense'] are not runs"),
        (["--stage-depth", "10"], "needs stages="),
        (["-k", "0"], "k must be a positive whole number"),
        (["--by", "query_class"], "needs queries= or docs="),
        (["--headroom", "--stages", "bm25", "hybrid"], "it takes no --stages"),
        (["-m", "AP"], "-m and --against go with --headroom"),
        (["--per-query", "--by", "x", "--queries", QUERIES], "choose one"),
        (["--headroom", "--against", "dense"], "against='dense' is neither"),
    ],
)
def test_usage_errors_exit_2(extra: list[str], message: str) -> None:
    code, _, err = run(["failures", "--run", BM25, HYBRID, "--qrels", QRELS, *extra])
    assert code == 2
    assert message in err


def test_bad_data_exits_1(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.csv"
    pl.DataFrame(
        {
            "query_id": ["1", "1"],
            "doc_id": ["a", "a"],
            "relevance": [1, 2],
            "intent": ["x", "x"],
        }
    ).write_csv(qrels)
    code, _, err = run(["failures", "--run", BM25, "--qrels", str(qrels)])
    assert code == 1
    assert "more than once for the same intent" in err
    missing = tmp_path / "nothing.run"
    code, _, err = run(["failures", "--run", str(missing), "--qrels", QRELS])
    assert code == 1
    assert "ireval-df: error:" in err
