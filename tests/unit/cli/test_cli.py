"""The ``ireval-df`` command: exit codes, messages on stderr, output files."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import polars as pl
import pytest

from ireval_df.cli.main import main
from ireval_df.cli.render import render_table

DATA = Path(__file__).resolve().parents[3] / "data"
RUN = str(DATA / "runs" / "hybrid.run")
QRELS = str(DATA / "qrels.txt")


def run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def test_evaluate_prints_a_table():
    code, out, err = run_cli(
        ["evaluate", "--run", RUN, "--qrels", QRELS, "-m", "AP", "-m", "P@10"]
    )
    assert code == 0
    header, row = out.splitlines()
    assert header.split() == ["run_id", "AP", "P@10", "n_queries"]
    assert row.split() == ["hybrid", "0.5617", "0.4700", "150"]
    # hybrid answers every qrels query; 151 and 152 are only in the run:
    assert err.startswith(
        "ireval-df: warning: 2 queries are in the run but not in the qrels and are "
        "ignored, e.g. ['151', '152']."
    )
    assert err.count("\n") == 1


def test_a_preference_measure_points_to_trec_eval_prefs():
    code, out, err = run_cli(
        ["evaluate", "--run", RUN, "--qrels", QRELS, "-m", "AP", "-m", "prefs_simp"]
    )
    assert (code, out) == (2, "")
    assert "['PrefsSimp'] need preference judgments" in err
    assert "ireval-df trec_eval -q -m all_prefs -R prefs" in err


def test_buckets_and_rank_from_reach_evaluate(tmp_path):
    base = ["evaluate", "--run", RUN, "--qrels", QRELS, "-m", "AP", "-m", "RR"]
    code, table, _ = run_cli(base)
    assert code == 0
    assert run_cli([*base, "--buckets", "4"])[:2] == (0, table)
    # ranked by the file's rank column, reversed: another ranking, other numbers
    lines = Path(RUN).read_text().splitlines()
    flipped = tmp_path / "flipped.run"
    flipped.write_text(
        "\n".join(
            " ".join([*f[:3], str(1000 - int(f[3])), *f[4:]])
            for f in (line.split() for line in lines)
        )
        + "\n"
    )
    by_score = run_cli(["evaluate", "--run", str(flipped), *base[3:]])[1]
    assert by_score.split()[-3:] == table.split()[-3:]
    code, by_column, _ = run_cli(
        ["evaluate", "--run", str(flipped), *base[3:], "--rank-from", "column"]
    )
    assert code == 0
    assert by_column.split()[-3:] != table.split()[-3:]
    assert run_cli([*base, "--buckets", "0"])[0] == 2  # bad usage
    assert run_cli([*base, "--buckets", "auto"])[:2] == (0, table)


def test_run_only_queries_are_reported_on_stderr():
    code, _, err = run_cli(
        [
            "evaluate",
            "--run",
            str(DATA / "runs" / "dense.run"),
            "--qrels",
            QRELS,
            "-m",
            "AP",
        ]
    )
    assert code == 0
    assert (
        "ireval-df: warning: 1 (run, query) pairs are in the qrels but not in the run"
        in err
    )
    assert "'42'" in err


def test_missing_file_is_exit_1(tmp_path):
    code, _, err = run_cli(
        ["evaluate", "--run", str(tmp_path / "nope.run"), "--qrels", QRELS]
    )
    assert code == 1
    assert "nope.run" in err


def test_bad_usage_is_exit_2():
    code, _, err = run_cli(["evaluate", "--qrels", QRELS])
    assert code == 2
    assert "--run" in err
    code, _, _ = run_cli(
        ["evaluate", "--run", RUN, "--qrels", QRELS, "--missing", "maybe"]
    )
    assert code == 2


def test_output_file_is_written(tmp_path):
    target = tmp_path / "summary.parquet"
    code, out, err = run_cli(
        ["evaluate", "--run", RUN, "--qrels", QRELS, "-m", "AP", "-o", str(target)]
    )
    assert code == 0
    assert out == ""
    assert "wrote 1 rows" in err
    frame = pl.read_parquet(target)
    assert frame.columns[:4] == ["run_id", "metric", "value", "n_queries"]
    assert frame["value"].round(4).to_list() == [0.5617]


def test_failed_run_leaves_no_output_file(tmp_path):
    target = tmp_path / "summary.parquet"
    code, _, _ = run_cli(
        ["evaluate", "--run", RUN, "--qrels", QRELS, "-m", "bogus", "-o", str(target)]
    )
    assert code == 2
    broken = tmp_path / "broken.run"
    broken.write_text("1 Q0 d1 1 not-a-number tag\n")
    code, _, _ = run_cli(
        ["evaluate", "--run", str(broken), "--qrels", QRELS, "-o", str(target)]
    )
    assert code == 1
    assert list(tmp_path.iterdir()) == [broken]


def test_metrics_lists_the_registry():
    code, out, _ = run_cli(["metrics"])
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()[1:]]
    assert {"nDCG", "AP", "P", "RR", "infAP", "ERR"} <= set(names)


def test_debug_shows_the_traceback():
    with pytest.raises(Exception, match="unknown metric"):
        main(["--debug", "evaluate", "--run", RUN, "--qrels", QRELS, "-m", "bogus"])


def test_render_table_aligns_numbers():
    text = render_table(
        pl.DataFrame({"run_id": ["a", "bb"], "x": [1.0, 0.12345], "n": [5, 150]})
    )
    assert text.splitlines() == [
        "run_id  x       n",
        "a       1.0000    5",
        "bb      0.1235  150",
    ]


@pytest.mark.slow
def test_sigterm_leaves_no_scratch_files(tmp_path):
    # a bucketed text run goes to a scratch folder; SIGTERM must unwind
    # through its cleanup like Ctrl-C, and exit 128 + 15
    import os
    import signal
    import subprocess
    import sys
    import time

    n = 3_000_000
    run = tmp_path / "big.run"
    pl.DataFrame(
        {
            "q": pl.int_range(n, eager=True) // 1000,
            "z": "Q0",
            "d": pl.int_range(n, eager=True).cast(pl.String),
            "r": pl.int_range(n, eager=True) % 1000 + 1,
            "s": (1000 - pl.int_range(n, eager=True) % 1000).cast(pl.Float64),
            "t": "big",
        }
    ).write_csv(run, separator=" ", include_header=False)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    # polars keeps a temporary folder of its own (its streaming engine's),
    # which it never removes: elsewhere, so that TMPDIR holds only ours
    env = {
        **os.environ,
        "TMPDIR": str(scratch),
        "POLARS_TEMP_DIR": str(tmp_path / "polars"),
    }
    argv = [sys.executable, "-m", "ireval_df", "evaluate", "--run", str(run)]
    argv += ["--qrels", QRELS, "-m", "AP", "--buckets", "8"]
    proc = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60

    def ours() -> bool:
        return any(p.name.startswith("ireval_df-") for p in scratch.iterdir())

    while not ours() and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert b"ireval-df: terminated" in err
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-m", "ndgc@10"], "unknown metric 'ndgc@10'. Did you mean 'nDCG@10'"),
        (["-m", "P(rel=x)@5"], "parameter rel='x'"),
        (["--depth", "-1"], "depth must be a positive whole number, found -1"),
        (["--depth", "0"], "depth must be a positive whole number, found 0"),
        (["--buckets", "0"], "--buckets: expected a positive whole number or 'auto'"),
        (["--buckets", "many"], "expected a positive whole number or 'auto'"),
        (["--by", "language"], "--by needs --queries FILE"),
        (["--missing", "none"], "invalid choice: 'none'"),
    ],
)
def test_bad_usage_exits_2(argv, message):
    code, out, err = run_cli(["evaluate", "--run", RUN, "--qrels", QRELS, *argv])
    assert code == 2
    assert out == ""
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        [
            "compare",
            "--run",
            RUN,
            str(DATA / "runs" / "bm25.run"),
            "--qrels",
            QRELS,
            "--baseline",
            "hybrid",
            "-m",
            "nope@3",
        ],
        ["validate", "--run", RUN, "--qrels", QRELS, "-m", "nope@3"],
    ],
)
def test_bad_metric_names_exit_2_in_every_subcommand(argv):
    code, _, err = run_cli(argv)
    assert code == 2
    assert "unknown metric 'nope@3'" in err


def test_bad_data_exits_1(tmp_path):
    broken = tmp_path / "broken.run"
    broken.write_text("1 Q0 d1 1 not-a-number tag\n")
    code, _, err = run_cli(["evaluate", "--run", str(broken), "--qrels", QRELS])
    assert code == 1
    assert "line 1" in err
