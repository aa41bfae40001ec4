"""Bad input, diagnostics and nothing lost: one test per case of the issue.

The reader error paths already tested in ``tests/unit/io`` and
``tests/unit/schema/test_coerce.py`` (malformed TREC lines, empty files, binary
files, corrupt gzip, CSV without a needed column, NaN scores, BOM in
CSV/TSV/JSONL, undecodable TREC and CSV bytes, atomic ``write_results``) are
not repeated; this file covers the rest, the command line as a process, and
the fixes made for this issue (duplicate judgments, CR-only line endings, NUL
bytes in CSV, nested values in dicts).
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ireval_df import evaluate, read_qrels, read_queries, read_run
from ireval_df.cli.main import main
from ireval_df.errors import (
    DataError,
    FormatError,
    IrevalWarning,
    SchemaError,
)

ROOT = Path(__file__).resolve().parents[2]
RUN = pl.DataFrame(
    {"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1"], "doc_id": ["a", "c"], "relevance": [1, 0]}
)


def write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


# --------------------------------------------------------------------------
# readers: Parquet columns and dtypes


def test_parquet_without_a_needed_column_suggests_columns(tmp_path: Path) -> None:
    path = tmp_path / "run.parquet"
    pl.DataFrame({"qid": ["1"], "docno": ["a"], "bm25": [1.5]}).write_parquet(path)
    with pytest.raises(SchemaError) as info:
        read_run(path)
    assert str(info.value) == (
        f"run file '{path}' is missing column 'score' (found ['qid', 'docno', 'bm25']).\n"
        "  Hint: pass columns={'qid': 'query_id', 'docno': 'doc_id', 'bm25': 'score'}."
    )
    assert read_run(path, columns={"bm25": "score"})["score"].to_list() == [1.5]


@pytest.mark.parametrize(
    ("column", "values", "message"),
    [
        (
            "score",
            [True],
            r"'score' has dtype Boolean; expected numbers.*cast\(pl\.Float64\)",
        ),
        ("score", [[1.0]], r"'score' has dtype List\(Float64\); expected numbers"),
        (
            "qid",
            [[1]],
            r"'query_id' \(from 'qid'\) has dtype List\(Int64\); expected strings or integers.*cast\(pl\.String\)",
        ),
    ],
)
def test_parquet_with_wrong_dtypes(
    tmp_path: Path, column: str, values: list[Any], message: str
) -> None:
    data = {"qid": ["1"], "docno": ["a"], "score": [1.0]}
    data[column] = values
    path = tmp_path / "run.parquet"
    pl.DataFrame(data).write_parquet(path)
    with pytest.raises(SchemaError, match=f"(?s){message}"):
        read_run(path)


def test_wrong_grade_dtype_suggests_an_integer_cast() -> None:
    qrels = pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [[1]]})
    with pytest.raises(SchemaError, match=r"(?s)expected numbers.*cast\(pl\.Float64\)"):
        read_qrels(qrels)


# --------------------------------------------------------------------------
# readers: encodings


@pytest.mark.parametrize("gz", [False, True])
def test_trec_files_with_a_utf8_bom(tmp_path: Path, gz: bool) -> None:
    def data(text: str) -> bytes:
        raw = b"\xef\xbb\xbf" + text.encode()
        return gzip.compress(raw) if gz else raw

    run = read_run(write(tmp_path / "r.run", data("q1 Q0 a 1 2.5 t\n")))
    assert run.rows() == [("t", "q1", "a", 2.5, 1)]
    qrels = read_qrels(write(tmp_path / "q.txt", data("q1 0 a 1\n")))
    assert qrels.rows() == [("q1", "a", 1)]
    queries = read_queries(write(tmp_path / "topics.txt", data("q1 some words\n")))
    assert queries.rows() == [("q1", "some words")]


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "r.jsonl",
            b'{"qid": "caf\xe9"}\n',
            r"r\.jsonl, line 1: not valid UTF-8 text \(byte 0xe9",
        ),
        ("r.json", b'{"q1": {"caf\xe9": 1}}', r"r\.json, line 1: not valid UTF-8"),
        (
            "r.run.gz",
            gzip.compress(b"1 Q0 a 1 2 t\n1 Q0 \xff 2 1 t\n", mtime=0),
            r"r\.run\.gz, line 2: not valid UTF-8",
        ),
        (
            "r.tsv",
            "qid\tdocno\tscore\n1\ta\t2\n".encode("utf-16"),
            r"r\.tsv, line 1: contains a NUL byte; .*UTF-16 text: convert it to UTF-8",
        ),
    ],
    ids=["jsonl", "json", "run.gz", "tsv-utf16"],
)
def test_undecodable_bytes_name_the_line(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    with pytest.raises(FormatError, match=message):
        read_run(write(tmp_path / name, data))


def test_nul_bytes_in_a_csv_are_a_binary_file(tmp_path: Path) -> None:
    # polars reads NUL bytes as text; before the fix this gave doc_id '\x00'
    path = write(tmp_path / "r.csv", b"qid,docno,score\n1,a,2\n1,\x00,1\n")
    with pytest.raises(
        FormatError,
        match=r"r\.csv, line 3: contains a NUL byte; this looks like a binary file: '1,\\x00,1'",
    ):
        read_run(path)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("e.jsonl", b""),
        ("e.json", b"  \n"),
        ("e.parquet", b""),
        ("e.run.gz", gzip.compress(b"", mtime=0)),
        ("e.tsv", b""),
    ],
    ids=["jsonl", "json", "parquet", "run.gz", "tsv"],
)
def test_empty_files_in_every_format(tmp_path: Path, name: str, data: bytes) -> None:
    with pytest.raises(FormatError, match=r"is empty|only whitespace|it is empty"):
        read_run(write(tmp_path / name, data))


# --------------------------------------------------------------------------
# readers: nothing lost


@pytest.mark.parametrize(
    ("reader", "text"),
    [
        (read_run, "1 Q0 a 1 2.5 t\r1 Q0 b 2 1.5 t\r1 Q0 c 3 0.5 t\r"),
        (read_qrels, "1 0 a 1\r1 0 b 0\r"),
        (read_queries, "1 first query\r2 second query\r"),
    ],
    ids=["run", "qrels", "queries"],
)
def test_cr_only_line_endings_are_refused(
    tmp_path: Path, reader: Any, text: str
) -> None:
    # trec_eval reads '\r' as a blank: the whole file would be one line, and a
    # run would keep its first row only (fields after the sixth are ignored)
    with pytest.raises(
        FormatError, match=r"line 1: a carriage return \(\\r\) inside the line"
    ):
        reader(write(tmp_path / "mac.txt", text))
    assert reader(write(tmp_path / "dos.txt", text.replace("\r", "\r\n"))).height >= 2


def test_repeated_judgments_are_refused_not_double_counted() -> None:
    qrels = pl.DataFrame(
        {"query_id": ["q1"] * 3, "doc_id": ["a", "a", "c"], "relevance": [1, 1, 0]}
    )
    # before the fix: AP 1.5 and nDCG@3 1.23 (the judged row joined twice)
    with pytest.raises(DataError) as info:
        evaluate(RUN, qrels, ["AP", "nDCG@3"])
    message = str(info.value)
    assert (
        "qrels judges a document more than once for the same query (1 extra row)"
        in message
    )
    assert "query_id='q1', doc_id='a'" in message
    assert "qrels.unique(['query_id', 'doc_id'], keep='last')" in message
    fixed = qrels.unique(["query_id", "doc_id"], keep="last", maintain_order=True)
    assert evaluate(RUN, fixed, ["AP"])["value"].to_list() == [1.0]


def test_repeated_judgments_in_a_trec_file(tmp_path: Path) -> None:
    path = write(tmp_path / "qrels.txt", "q1 0 a 1\nq1 0 b 0\nq1 1 a 2\n")
    with pytest.raises(
        DataError, match=r"(?s)1 extra row.*keep one grade per document"
    ):
        read_qrels(path)


def test_dict_of_dicts_with_nested_values() -> None:
    with pytest.raises(SchemaError, match=r"under query 'q1', doc 'd2' found a list"):
        read_run({"q1": {"d1": 1.0, "d2": [1.0, 2.0]}})
    with pytest.raises(SchemaError, match=r"found a dict"):
        read_qrels({"q1": {"d1": {"grade": 1}}})


# --------------------------------------------------------------------------
# warnings: counted, with the option that changes the behaviour


def caught(*args: Any, **kwargs: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        evaluate(*args, **kwargs)
    return [str(w.message) for w in seen if issubclass(w.category, IrevalWarning)]


def test_dropped_duplicates_are_counted_with_the_option() -> None:
    run = pl.concat([RUN, RUN.head(2)])
    (message,) = [
        m for m in caught(run, QRELS, ["AP"], duplicates="first") if "repeated" in m
    ]
    assert "dropped 2 repeated (query, doc) rows" in message
    assert "duplicates='error'" in message


def test_missing_queries_are_counted_with_the_option() -> None:
    qrels = pl.concat(
        [QRELS, pl.DataFrame({"query_id": ["q2"], "doc_id": ["x"], "relevance": [1]})]
    )
    messages = caught(RUN, qrels, ["AP"])
    (message,) = [m for m in messages if "in the qrels but not in the run" in m]
    assert message.startswith("1 (run, query) pairs")
    assert "missing='error'" in message


def test_run_only_queries_are_counted() -> None:
    run = pl.concat(
        [RUN, pl.DataFrame({"query_id": ["q9"], "doc_id": ["x"], "score": [1.0]})]
    )
    (message,) = [m for m in caught(run, QRELS, ["AP"]) if "not in the qrels" in m]
    assert message.startswith(
        "1 queries are in the run but not in the qrels and are ignored"
    )


def test_run_only_queries_warning_says_how_to_act() -> None:
    run = pl.concat(
        [RUN, pl.DataFrame({"query_id": ["q9"], "doc_id": ["x"], "score": [1.0]})]
    )
    (message,) = [m for m in caught(run, QRELS, ["AP"]) if "not in the qrels" in m]
    assert "filter" in message or "validate" in message


def test_rank_from_column_with_null_ranks_is_not_silent() -> None:
    # the relevant document "b" has no rank: it cannot be placed, so the
    # ranking is not scored as if it were absent
    run = RUN.with_columns(rank=pl.Series([1, None, 2], dtype=pl.UInt32))
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [1]})
    with pytest.raises(
        DataError,
        match=r"rank_from='column': 1 run rows have no usable rank.*\n  Hint: fix the rank column",
    ):
        evaluate(run, qrels, ["RR"], rank_from="column")


# --------------------------------------------------------------------------
# the command line: exit codes, stderr, no traceback, atomic output

DATA = ROOT / "data"
HYBRID = str(DATA / "runs" / "hybrid.run")
DATA_QRELS = str(DATA / "qrels.txt")


def test_bad_data_is_exit_1_on_stderr_without_traceback(tmp_path: Path) -> None:
    bad = write(tmp_path / "nan.run", "1 Q0 a 1 nan t\n1 Q0 b 2 nan t\n1 Q0 c 3 1 t\n")
    code, out, err = run_cli(["evaluate", "--run", str(bad), "--qrels", DATA_QRELS])
    assert (code, out) == (1, "")
    assert err.startswith(
        f"ireval-df: error: run file '{bad}' has 2 scores that are NaN"
    )
    assert "drop or fill them" in err
    assert "Traceback" not in err
    with pytest.raises(DataError):
        main(["--debug", "evaluate", "--run", str(bad), "--qrels", DATA_QRELS])


def test_the_process_exit_codes(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.run", "1 Q0 a 1 2.5 t\n1 Q0\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ireval_df", *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            check=False,
        )

    data_error = cli("evaluate", "--run", str(bad), "--qrels", DATA_QRELS)
    assert data_error.returncode == 1
    assert data_error.stdout == ""
    assert "bad.run, line 2: expected at least 6" in data_error.stderr
    assert "Traceback" not in data_error.stderr
    usage = cli("evaluate", "--qrels", DATA_QRELS)
    assert usage.returncode == 2
    assert "the following arguments are required: --run" in usage.stderr
    debug = cli("--debug", "evaluate", "--run", str(bad), "--qrels", DATA_QRELS)
    assert debug.returncode == 1
    assert "Traceback" in debug.stderr


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_a_failed_evaluation_leaves_the_previous_output_intact(tmp_path: Path) -> None:
    target = tmp_path / "summary.csv"
    target.write_text("previous results\n")
    bad = write(tmp_path / "bad.run", "1 Q0 a 1 2.5 t\n1 Q0\n")
    code, _, _ = run_cli(
        ["evaluate", "--run", str(bad), "--qrels", DATA_QRELS, "-o", str(target)]
    )
    assert code == 1
    assert target.read_text() == "previous results\n"
    assert leftovers(tmp_path) == []


def test_a_write_that_fails_half_way_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "summary.csv"
    target.write_text("previous results\n")

    def half_then_fail(
        self: pl.DataFrame, file: Any, *args: Any, **kwargs: Any
    ) -> None:
        Path(file).write_text("run_id,metric\nhyb")  # a partial file ...
        raise OSError(28, "No space left on device")  # ... then the disk is full

    monkeypatch.setattr(pl.DataFrame, "write_csv", half_then_fail)
    code, _, err = run_cli(
        [
            "evaluate",
            "--run",
            HYBRID,
            "--qrels",
            DATA_QRELS,
            "-m",
            "AP",
            "-o",
            str(target),
        ]
    )
    assert code == 1
    assert f"cannot write '{target}': " in err
    assert "No space left on device" in err
    assert target.read_text() == "previous results\n"
    assert leftovers(tmp_path) == []
    code, _, err = run_cli(
        ["validate", "--run", HYBRID, "--qrels", DATA_QRELS, "-o", str(target)]
    )
    assert code == 1
    assert target.read_text() == "previous results\n"
    assert leftovers(tmp_path) == []
