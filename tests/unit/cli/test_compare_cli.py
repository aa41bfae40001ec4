"""ireval-df compare: exit codes, stdout formats, -o output."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ireval_df.cli.main import main

DATA = Path(__file__).resolve().parents[3] / "data"
RUNS = [str(DATA / "runs" / f"{name}.run") for name in ("bm25", "dense", "hybrid")]
BASE = ["compare", "--run", *RUNS, "--qrels", str(DATA / "qrels.txt"), "-m", "nDCG@10"]


def test_markdown_by_slice(capsys):
    code = main(
        [
            *BASE,
            "--baseline",
            "bm25",
            "--queries",
            str(DATA / "queries.tsv"),
            "--by",
            "query_class",
            "--test",
            "sign",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("| query_class | run | nDCG@10 |")
    assert "(a) bm25" in out
    assert "sign test, holm correction" in out


def test_output_file_and_tsv(tmp_path, capsys):
    path = tmp_path / "cmp.parquet"
    assert main([*BASE, "-m", "AP", "--correction", "none", "-o", str(path)]) == 0
    frame = pl.read_parquet(path)
    assert frame.height == 3 * 2
    assert frame["p_adjusted"].to_list() == frame["p_value"].to_list()
    assert "wrote 6 rows" in capsys.readouterr().err
    assert main([*BASE, "--format", "tsv", "--baseline", "dense"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run_id\tbaseline\tmetric\tn_queries")
    assert len(lines) == 3


def test_latex(capsys):
    assert (
        main(
            [
                *BASE,
                "--format",
                "latex",
                "--test",
                "randomization",
                "--n-resamples",
                "500",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith("\\begin{tabular}{lr}")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--baseline", "bm99"], "--baseline 'bm99' is not a run id"),
        (["--by", "query_class"], "--by needs --queries"),
        (["--alpha", "2"], "--alpha must be between 0 and 1"),
        (
            ["--queries", str(DATA / "queries.tsv"), "--by", "colour"],
            "--by 'colour' is not a column",
        ),
    ],
)
def test_usage_errors_exit_2(capsys, extra, message):
    assert main([*BASE, *extra]) == 2
    assert message in capsys.readouterr().err


def test_one_run_is_a_usage_error(capsys):
    assert main(["compare", "--run", RUNS[0], "--qrels", str(DATA / "qrels.txt")]) == 2
    assert "at least two runs" in capsys.readouterr().err


def test_a_bad_metric_name_is_bad_usage(capsys):
    assert main([*BASE, "-m", "nDGC@10"]) == 2
    assert "nDGC@10" in capsys.readouterr().err


def test_argparse_rejects_output_and_format(capsys):
    with pytest.raises(SystemExit) as info:
        main([*BASE, "-o", "x.parquet", "--format", "latex"])
    assert info.value.code == 2
