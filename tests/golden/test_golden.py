"""CLI output and I/O round trips on the bundled data, against committed files.

Refresh after an intended change with ``pytest tests/golden --update-golden``
and review the diff.
"""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
GOLDEN = Path(__file__).resolve().parent
RUNS = [str(DATA / "runs" / f"{name}.run") for name in ("bm25", "dense", "hybrid")]

CASES = {
    "evaluate_default": [
        "evaluate",
        "--run",
        *RUNS,
        "--qrels",
        str(DATA / "qrels.txt"),
    ],
    "evaluate_by_class": [
        "evaluate",
        "--run",
        *RUNS,
        "--qrels",
        str(DATA / "qrels.txt"),
        "--queries",
        str(DATA / "queries.tsv"),
        "--by",
        "query_class",
        "-m",
        "nDCG@10",
        "-m",
        "AP",
        "-m",
        "RR@10",
    ],
    "evaluate_parquet_graded": [
        "evaluate",
        "--run",
        str(DATA / "runs.parquet"),
        "--qrels",
        str(DATA / "qrels.parquet"),
        "-m",
        "nDCG(dcg=exp-log2)@10",
        "-m",
        "ERR@10",
        "-m",
        "RBP(p=0.8)",
        "-m",
        "Bpref",
        "-m",
        "infAP",
        "-m",
        "P(rel=2)@5",
        "-m",
        "Judged@10",
        "-m",
        "NumRelRet",
    ],
    "evaluate_per_query_depth": [
        "evaluate",
        "--run",
        RUNS[0],
        "--qrels",
        str(DATA / "qrels.txt"),
        "--per-query",
        "--depth",
        "20",
        "-m",
        "AP",
        "-m",
        "nDCG@10",
    ],
    "metrics": ["metrics"],
}


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue()


@pytest.mark.parametrize("name", sorted(CASES))
def test_cli_output_matches_golden(name, request):
    code, text = _run(CASES[name])
    assert code == 0
    path = GOLDEN / f"{name}.txt"
    if request.config.getoption("--update-golden"):
        path.write_text(text)
    assert path.exists(), f"missing golden file {path.name}: run pytest --update-golden"
    assert text == path.read_text()


def test_text_and_parquet_inputs_agree():
    metrics = ["nDCG@10", "AP", "RR@10", "P@10", "R@100", "Bpref"]
    with pytest.warns(ie.errors.IrevalWarning):
        from_text = ie.evaluate(RUNS, DATA / "qrels.txt", metrics)
    with pytest.warns(ie.errors.IrevalWarning):
        from_parquet = ie.evaluate(
            DATA / "runs.parquet", DATA / "qrels.parquet", metrics
        )
    # same numbers; polars' parallel sums may differ in the last bit (~1e-16)
    assert from_text.drop("value").equals(from_parquet.drop("value"))
    diff = (from_text["value"] - from_parquet["value"]).abs().max()
    assert diff < 1e-12


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl", ".tsv"])
def test_results_round_trip(tmp_path, suffix):
    with pytest.warns(ie.errors.IrevalWarning):
        per_query = ie.evaluate(RUNS, DATA / "qrels.txt", ["nDCG@10", "AP"])
    path = tmp_path / f"out{suffix}"
    ie.write_results(per_query, path)
    if suffix == ".parquet":
        back = pl.read_parquet(path)
        meta = pl.read_parquet_metadata(path)
        assert '"missing": "zero"' in meta["ireval_df"]
    elif suffix == ".jsonl":
        back = pl.read_ndjson(path)
    else:
        back = pl.read_csv(
            path,
            separator="\t" if suffix == ".tsv" else ",",
            schema_overrides={"query_id": pl.String},
        )
    assert back.select(per_query.columns).equals(per_query)


def test_python_m_entry_point():
    import subprocess

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ireval_df",
            "evaluate",
            "--run",
            RUNS[2],
            "--qrels",
            str(DATA / "qrels.txt"),
            "-m",
            "AP",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].split()[:2] == ["hybrid", "0.5617"]
