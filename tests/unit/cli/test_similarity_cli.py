"""``ireval-df similarity``: means per run and slice, per-query rows, and the gate."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import polars as pl

from ireval_df.cli.main import main

DATA = Path(__file__).resolve().parents[3] / "data"
BM25 = str(DATA / "runs" / "bm25.run")
HYBRID = str(DATA / "runs" / "hybrid.run")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def copy_as(tmp_path: Path, source: str, tag: str) -> str:
    """The same rankings under another run tag: a 'migration' that changed nothing."""
    lines = Path(source).read_text().splitlines()
    path = tmp_path / f"{tag}.run"
    path.write_text(
        "".join(" ".join([*line.split()[:5], tag]) + "\n" for line in lines)
    )
    return str(path)


def test_means_per_run_and_slice() -> None:
    code, out, _ = run(
        [
            "similarity",
            "--run",
            BM25,
            HYBRID,
            "-m",
            "RBO@100",
            "-m",
            "Overlap@10",
            "--queries",
            str(DATA / "queries.tsv"),
            "--by",
            "query_class",
        ]
    )
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split() == [
        "run_id",
        "baseline",
        "query_class",
        "RBO@100",
        "Overlap@10",
        "n_queries",
    ]
    assert len(rows) == 3
    assert all(row.split()[:2] == ["hybrid", "bm25"] for row in rows)


def test_the_gate_passes_an_unchanged_run(tmp_path: Path) -> None:
    same = copy_as(tmp_path, HYBRID, "migrated")
    code, out, err = run(["similarity", "--run", HYBRID, same, "--fail-below", "0.999"])
    assert code == 0
    assert "1.0000" in out
    assert "every query is at or above 0.999" in err


def test_the_gate_fails_and_lists_the_queries_below(tmp_path: Path) -> None:
    # one query's ranking reversed in the candidate: only that query fails
    lines = Path(HYBRID).read_text().splitlines()
    first = lines[0].split()[0]
    changed = []
    for line in lines:
        qid, q0, doc, rank, score, _ = line.split()
        if qid == first:
            score = str(-float(score))
        changed.append(" ".join([qid, q0, doc, rank, score, "candidate"]))
    path = tmp_path / "candidate.run"
    path.write_text("\n".join(changed) + "\n")
    code, _, err = run(
        ["similarity", "--run", HYBRID, str(path), "--fail-below", "0.95"]
    )
    assert code == 1
    assert "1 of 152 (run, query, measure) values are below 0.95" in err
    assert f"candidate  hybrid    {first} " in err


def test_per_query_rows_and_output_file(tmp_path: Path) -> None:
    target = tmp_path / "sim.parquet"
    code, _, err = run(["similarity", "--run", BM25, HYBRID, "-o", str(target)])
    assert code == 0
    assert "wrote" in err
    frame = pl.read_parquet(target)
    assert frame.columns == ["run_id", "baseline", "query_id", "metric", "value"]
    assert frame["metric"].unique().to_list() == ["RBO(ties=b)"]


def test_bad_input_is_usage_or_data_error_without_traceback(tmp_path: Path) -> None:
    code, _, err = run(["similarity", "--run", BM25, HYBRID, "-m", "RBO(p=2)"])
    assert code == 2
    assert "p must be in (0, 1), found 2.0" in err
    code, _, err = run(["similarity", "--run", BM25, HYBRID, "--baseline", "nope"])
    assert code == 2
    assert "baseline ['nope'] is not one of the runs" in err
    code, _, err = run(["similarity", "--run", BM25])
    assert code == 2
    assert "only one run was given" in err
    code, _, err = run(["similarity", "--run", BM25, HYBRID, "--by", "query_class"])
    assert code == 2
    assert "--by needs --queries" in err
    assert "Traceback" not in err
