"""ireval-df diff: the side-by-side view, -o, and the errors' exit codes."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import polars as pl

from ireval_df.cli.main import main

DATA = Path(__file__).resolve().parents[3] / "data"
RUNS = [str(DATA / "runs" / f"{name}.run") for name in ("bm25", "dense")]
QRELS = str(DATA / "qrels.txt")
BASE = ["diff", "--run", *RUNS, "--qrels", QRELS]
HEADER = re.compile(
    r"^query (\S+)  (\S+): (\S+) (\d\.\d{4}) -> (\S+) (\d\.\d{4})  delta ([+-]\d\.\d{4})$"
)


def run_cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def test_one_query_side_by_side():
    code, out, _ = run_cli([*BASE, "--query", "1", "-k", "5"])
    assert code == 0
    lines = out.splitlines()
    header = HEADER.match(lines[0])
    assert header is not None, lines[0]
    query, metric, base, base_value, run, run_value, delta = header.groups()
    assert (query, metric, base, run) == ("1", "nDCG@5", "bm25", "dense")
    assert float(delta) == round(float(run_value) - float(base_value), 4)
    assert lines[1].split() == ["bm25", "(baseline)", "|", "dense"]
    assert lines[2].split() == ["rank", "doc_id", "rel", "move", "|"] + [
        "rank",
        "doc_id",
        "rel",
        "move",
    ]
    rows = lines[3:8]
    assert [row.split()[0] for row in rows] == ["1", "2", "3", "4", "5"]
    assert all(len(line) <= 100 for line in lines)
    assert lines[8].startswith("nDCG@5 by change: ")
    assert len(lines) == 9
    # the run's side: a mark for every document, one of + ^n vn =
    marks = [row.split("|")[1].split()[-1] for row in rows]
    assert all(re.fullmatch(r"\+|=|\^\d+|v\d+", m) for m in marks), marks


def test_worst_queries_dropped_most_first():
    code, out, err = run_cli([*BASE, "--worst", "3", "-m", "AP", "-k", "4"])
    assert code == 0
    blocks = out.rstrip("\n").split("\n\n")
    assert len(blocks) == 3
    deltas = []
    for block in blocks:
        header = HEADER.match(block.splitlines()[0])
        assert header is not None
        assert header.group(2) == "AP"
        deltas.append(float(header.group(7)))
        assert len(block.splitlines()) <= 3 + 4 + 1
    assert deltas == sorted(deltas)
    assert all(d < 0 for d in deltas)
    # the missing query of dense is reported once (by evaluate), not twice
    assert err.count("not in the run") == 1
    assert "unjudged on average" not in err


def test_output_file_holds_the_diff_frame(tmp_path):
    path = tmp_path / "diff.parquet"
    code, out, err = run_cli([*BASE, "--query", "1", "-o", str(path)])
    assert code == 0
    assert out == ""
    frame = pl.read_parquet(path)
    assert frame.columns[:4] == ["run_id", "baseline", "query_id", "doc_id"]
    assert set(frame["query_id"]) == {"1"}
    assert f"wrote {frame.height} rows" in err
    # no --query / --worst: every query
    assert run_cli([*BASE, "-k", "3", "-o", str(path)])[0] == 0
    assert pl.read_parquet(path)["query_id"].n_unique() == 152


def test_long_doc_ids_are_cut_to_fit(tmp_path):
    runs = []
    # b ranks the long ids the other way round, and drops: 1dd... is relevant
    for name, order in (("a", (2.0, 1.0)), ("b", (1.0, 2.0))):
        path = tmp_path / f"{name}.run"
        path.write_text(
            "".join(
                f"q Q0 {i}{'d' * 60} {i} {score} {name}\n"
                for i, score in enumerate(order, start=1)
            )
        )
        runs.append(str(path))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"q 0 1{'d' * 60} 2\n")
    code, out, _ = run_cli(["diff", "--run", *runs, "--qrels", str(qrels), "-k", "2"])
    assert code == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100
    base, run = lines[3].split(" | ")
    assert base.split() == ["1", "1" + "d" * 32 + "\u2026", "2"]
    assert run.split() == ["1", "2" + "d" * 32 + "\u2026", ".", "^1"]


def test_errors_exit_2_for_usage_and_1_for_data(tmp_path):
    code, out, err = run_cli([*BASE, "--baseline", "nope"])
    assert (code, out) == (2, "")
    assert "baseline ['nope'] is not one of the runs ['bm25', 'dense']" in err
    assert "Traceback" not in err
    code, _, err = run_cli([*BASE, "--query", "no-such-query"])
    assert code == 2
    assert "--query 'no-such-query' is not ranked by the runs compared" in err
    code, _, err = run_cli([*BASE, "-k", "0"])
    assert code == 2
    assert "-k must be a positive whole number, found 0" in err
    assert run_cli([*BASE, "--worst", "0"])[0] == 2
    assert run_cli([*BASE, "--query", "1", "--worst", "2"])[0] == 2  # argparse
    assert run_cli([*BASE, "-m", "NoSuchMetric"])[0] == 2
    assert run_cli(["diff", "--run", RUNS[0], "--qrels", QRELS])[0] == 2  # one run
    twice = tmp_path / "twice.run"
    twice.write_text("q Q0 d 1 2.0 t\nq Q0 d 2 1.0 t\n")
    code, _, err = run_cli(["diff", "--run", RUNS[0], str(twice), "--qrels", QRELS])
    assert code == 1
    assert "appear more than once in the same ranking" in err
    assert "Traceback" not in err
