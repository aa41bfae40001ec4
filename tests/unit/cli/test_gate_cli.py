"""``ireval-df gate``: the table on stdout, failing rows on stderr, exit codes."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import polars as pl

from ireval_df.cli.main import main

DATA = Path(__file__).resolve().parents[3] / "data"
BM25 = str(DATA / "runs" / "bm25.run")
DENSE = str(DATA / "runs" / "dense.run")
HYBRID = str(DATA / "runs" / "hybrid.run")
QRELS = str(DATA / "qrels.txt")
QUERIES = str(DATA / "queries.tsv")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def retag(tmp_path: Path, source: str, tag: str, prefix: str = "") -> str:
    """The same rankings under another run tag (query ids optionally prefixed)."""
    lines = Path(source).read_text().splitlines()
    path = tmp_path / f"{tag}.run"
    path.write_text(
        "".join(
            " ".join([prefix + line.split()[0], *line.split()[1:5], tag]) + "\n"
            for line in lines
        )
    )
    return str(path)


def test_passes_with_exit_0_and_one_line(tmp_path: Path) -> None:
    target = tmp_path / "gate.parquet"
    argv = ["gate", "--run", HYBRID, "--baseline", BM25, "--qrels", QRELS]
    argv += ["-m", "nDCG@10", "-m", "RR@10", "--margin", "0.01", "-o", str(target)]
    code, out, err = run(argv)
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split()[:4] == ["run_id", "baseline", "metric", "n_queries"]
    assert header.split()[-2:] == ["passed", "verdict"]
    assert len(rows) == 2
    assert "gate passed: all 2 rows" in err
    written = pl.read_parquet(target)
    assert written["verdict"].to_list() == ["passed", "passed"]


def test_a_failing_slice_exits_1_and_is_listed() -> None:
    argv = ["gate", "--run", HYBRID, "--baseline", BM25, "--qrels", QRELS]
    argv += ["-m", "nDCG@10", "--margin", "0.01", "--queries", QUERIES]
    argv += ["--by", "query_class"]
    code, out, err = run(argv)
    assert code == 1
    assert len(out.splitlines()) == 4  # header and every slice, passed or not
    assert "gate failed: 1 of 3 rows" in err
    listed = err.split("noise):\n", 1)[1].splitlines()
    assert listed[0].split() == [
        "run_id",
        "baseline",
        "query_class",
        "metric",
        "delta",
        "ci_low",
        "ci_high",
        "margin",
        "verdict",
    ]
    assert listed[1].split()[2] == "navigational"
    assert listed[1].split()[-1] == "worse"


def test_an_unchanged_candidate_passes_the_rbo_gate(tmp_path: Path) -> None:
    same = retag(tmp_path, BM25, "candidate")
    code, out, err = run(
        ["gate", "--run", same, "--baseline", BM25, "--min-rbo", "0.9"]
    )
    assert code == 0, err
    assert "RBO(ties=b)" in out
    assert "gate passed" in err
    code, _, err = run(
        ["gate", "--run", HYBRID, "--baseline", BM25, "--min-rbo", "0.9"]
    )
    assert code == 1
    assert "worse" in err


def test_ab_results(tmp_path: Path) -> None:
    ab = tmp_path / "ab.parquet"
    assert run(["online", "ab", "--log", str(DATA / "log"), "-o", str(ab)])[0] == 0
    code, out, err = run(["gate", "--ab", str(ab), "--margin", "0.01"])
    assert code == 0, err
    assert out.splitlines()[0].split()[:2] == ["variant", "metric"]
    code, _, err = run(
        ["gate", "--ab", str(tmp_path / "none.parquet"), "--margin", "0.01"]
    )
    assert code == 1
    assert "no such file" in err


def test_no_overlapping_queries_is_an_error_not_a_pass(tmp_path: Path) -> None:
    apart = retag(tmp_path, HYBRID, "apart", prefix="x")
    argv = ["gate", "--run", apart, "--baseline", BM25, "--qrels", QRELS]
    code, out, err = run([*argv, "--margin", "0.01"])
    assert code == 1
    assert out == ""
    assert "shares no query with the baseline 'bm25'" in err
    assert "Traceback" not in err


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    base = ["gate", "--run", HYBRID, "--baseline", BM25, "--qrels", QRELS]
    code, _, err = run([*base, "--margin", "-0.01"])
    assert code == 2
    assert "margin must be a number at least 0" in err
    code, _, err = run(base)
    assert code == 2
    assert "--margin" in err
    code, _, err = run([*base, "--margin", "0.01", "-m", "nDGC@10"])
    assert code == 2
    assert "nDGC@10" in err
    code, _, err = run([*base, "--margin", "0.01", "--by", "query_class"])
    assert code == 2
    assert "--queries" in err
    same = retag(tmp_path, DENSE, "bm25")
    code, _, err = run(["gate", "--run", same, "--baseline", BM25, "--min-rbo", "0.5"])
    assert code == 2
    assert "share the run id 'bm25'" in err
    code, _, err = run(["gate", "--ab", "x.parquet", "--run", HYBRID, "--margin", "1"])
    assert code == 2
