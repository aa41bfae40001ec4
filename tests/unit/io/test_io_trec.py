"""TREC text runs and qrels: the trec_eval 10.0 reading rules (SPEC.md 1)."""

from __future__ import annotations

import gzip
from pathlib import Path

import polars as pl
import pytest

from ireval_df.errors import DataError, FormatError
from ireval_df.io import trec, trec_run_id_of_last_line
from ireval_df.io.trec import read_trec_qrels, read_trec_run
from ireval_df.schema import read_qrels, read_queries, read_run

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance"
TREC_EVAL_DATA = CONFORMANCE / "trec_eval"

RUN_TEXT = "301 Q0 d1 1 2.5 bm25\n301 Q0 d2 2 1.5 bm25\n302 Q0 d3 1 0.25 bm25\n"
RUN_ROWS = [
    ("bm25", "301", "d1", 2.5, 1),
    ("bm25", "301", "d2", 1.5, 2),
    ("bm25", "302", "d3", 0.25, 1),
]


def write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# --------------------------------------------------------------------------
# runs: layout variants all read the same


def test_run_single_spaces(tmp_path: Path) -> None:
    run = read_run(write(tmp_path / "a.run", RUN_TEXT))
    assert run.rows() == RUN_ROWS
    assert run.schema == pl.Schema(
        {
            "run_id": pl.String,
            "query_id": pl.String,
            "doc_id": pl.String,
            "score": pl.Float64,
            "rank": pl.UInt32,
        }
    )


@pytest.mark.parametrize(
    "text",
    [
        RUN_TEXT.replace(" ", "\t"),  # tabs only
        RUN_TEXT.replace(" ", "  \t "),  # runs of mixed blanks
        "  " + RUN_TEXT.replace("\n", "   \n"),  # indented, trailing blanks
        RUN_TEXT.replace("\n", "\r\n"),  # CRLF
        "\ufeff" + RUN_TEXT,  # UTF-8 byte order mark
        RUN_TEXT.replace("\n", "\n\n   \n"),  # blank and whitespace-only lines
        "# header\n" + RUN_TEXT.replace("\n", "\n# comment\n  # indented\n", 1),
        RUN_TEXT.replace("bm25\n", "bm25 extra junk at end\n"),  # ignored fields
        "301\tQ0\td1\t1\t  2.5\tbm25\n"  # trec_eval's own results.test layout
        "301 Q0 d2 2 1.5 bm25\n302 Q0 d3 1 0.25 bm25",  # no final newline
    ],
    ids=[
        "tabs",
        "mixed-blanks",
        "indented",
        "crlf",
        "bom",
        "blank-lines",
        "comments",
        "extra-fields",
        "tab-and-space",
    ],
)
def test_run_whitespace_variants(tmp_path: Path, text: str) -> None:
    assert read_run(write(tmp_path / "a.run", text)).rows() == RUN_ROWS


def test_run_extra_fields_on_the_first_line(tmp_path: Path) -> None:
    text = RUN_TEXT.replace("bm25\n", "bm25 more junk\n", 1)
    assert read_run(write(tmp_path / "a.run", text)).rows() == RUN_ROWS


def test_run_keeps_each_lines_tag(tmp_path: Path) -> None:
    path = write(tmp_path / "two.run", "1 Q0 a 1 2.0 first\n1 Q0 b 2 1.0 second\n")
    assert read_run(path)["run_id"].to_list() == ["first", "second"]
    assert trec_run_id_of_last_line(path) == "second"


def test_run_hash_inside_docno_is_data(tmp_path: Path) -> None:
    # MS MARCO v2.1 segment ids contain '#': only a leading '#' is a comment
    path = write(tmp_path / "a.run", "q1 Q0 msmarco_doc_00#4_1633 1 0.7 t\n")
    assert read_run(path)["doc_id"].to_list() == ["msmarco_doc_00#4_1633"]


def test_run_rank_that_is_not_a_count_becomes_null(tmp_path: Path) -> None:
    # trec_eval ignores the rank field, so odd values must not stop reading
    text = "1 Q0 a 1.0 2.0 t\n1 Q0 b -3 1.0 t\n1 Q0 c 7 0.5 t\n"
    run = read_run(write(tmp_path / "a.run", text))
    assert run["rank"].to_list() == [None, None, 7]


def test_run_score_forms_accepted_by_atof(tmp_path: Path) -> None:
    text = "1 Q0 a 1 1e-3 t\n1 Q0 b 2 -.5 t\n1 Q0 c 3 +5. t\n"
    assert read_run(write(tmp_path / "a.run", text))["score"].to_list() == [
        0.001,
        -0.5,
        5.0,
    ]


@pytest.mark.parametrize("name", ["a.run.gz", "a.run"])
def test_run_gzip_recognised_by_content(tmp_path: Path, name: str) -> None:
    path = write(tmp_path / name, gzip.compress(RUN_TEXT.encode()))
    assert read_run(path).rows() == RUN_ROWS


def test_gzip_with_irregular_whitespace(tmp_path: Path) -> None:
    data = gzip.compress(RUN_TEXT.replace(" ", " \t").encode())
    assert read_run(write(tmp_path / "a.txt.gz", data)).rows() == RUN_ROWS


# --------------------------------------------------------------------------
# run errors: file, line number, line text, what was expected


def test_run_too_few_fields(tmp_path: Path) -> None:
    text = RUN_TEXT + "301 Q0 FR940104-0-00001 1\n"
    path = write(tmp_path / "results.run", text)
    expected = (
        "results.run, line 4: expected at least 6 whitespace-separated fields "
        "(qid Q0 docno rank score tag), found 4: '301 Q0 FR940104-0-00001 1'"
    )
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert str(info.value).endswith(expected)


def test_run_error_counts_further_bad_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "r.run", "1 Q0 a\n" + RUN_TEXT + "2 Q0\n3\n")
    with pytest.raises(FormatError, match=r"line 1: .*found 3.*\n.*2 more malformed"):
        read_run(path)


def test_run_score_not_a_number(tmp_path: Path) -> None:
    path = write(tmp_path / "r.run", RUN_TEXT + "303 Q0 d9 1 high bm25\n")
    with pytest.raises(
        FormatError, match=r"r\.run, line 4: score 'high' is not a number: '303 Q0"
    ):
        read_run(path)


def test_run_nan_score_is_a_data_error(tmp_path: Path) -> None:
    path = write(tmp_path / "r.run", RUN_TEXT + "303 Q0 d9 1 nan bm25\n")
    with pytest.raises(DataError, match=r"1 score that is NaN.*doc_id='d9'") as info:
        read_run(path)
    assert "is_not_nan()" in str(info.value)


def test_long_line_is_shortened_in_the_message(tmp_path: Path) -> None:
    path = write(tmp_path / "r.run", "1 Q0 " + "x" * 5000 + "\n")
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert len(str(info.value)) < 400
    assert str(info.value).endswith("...")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", r"empty\.run is empty"),
        (b"  \n\t\n", r"contains only whitespace"),
        (b"# nothing\n\n# here\n", r"has no data lines, only blank lines and #"),
        (b"1 Q0 a 1 2 t\n1 Q0 caf\xe9 2 1 t\n", r"line 2: not valid UTF-8.*0xe9"),
        (
            b"\xff\xfe1\x00 \x00",
            r"line 1: contains a NUL byte; this looks like a binary",
        ),
        (bytes(range(256)), r"line 1: contains a NUL byte"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", r"NUL byte"),
    ],
    ids=["empty", "whitespace", "comments-only", "latin-1", "utf-16", "bytes", "png"],
)
def test_unreadable_text(tmp_path: Path, data: bytes, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        read_run(write(tmp_path / "empty.run", data))


def test_corrupt_gzip(tmp_path: Path) -> None:
    data = gzip.compress(RUN_TEXT.encode() * 50)[:-30]
    with pytest.raises(FormatError, match=r"a\.run\.gz: not a valid gzip file"):
        read_run(write(tmp_path / "a.run.gz", data))


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=r"cannot read '.*nope\.run': no such file"):
        read_run(tmp_path / "nope.run")
    with pytest.raises(FormatError, match="it is a directory"):
        read_run(tmp_path)


# --------------------------------------------------------------------------
# qrels


def test_qrels_basic_and_negative_grades(tmp_path: Path) -> None:
    text = "301 0 d1 1\n301 0 d2 0\n301 0 d3 -1\n302 0 d1 4\n"
    qrels = read_qrels(write(tmp_path / "qrels.txt", text))
    assert qrels.rows() == [
        ("301", "d1", 1),
        ("301", "d2", 0),
        ("301", "d3", -1),
        ("302", "d1", 4),
    ]
    assert qrels.schema["relevance"] == pl.Int32


def test_qrels_comments_anywhere(tmp_path: Path) -> None:
    # trec_eval 10.0 fails on two comment lines in a row and segfaults on a
    # final one (SPEC.md 8.8); we accept both, and indented ones
    text = "# a\n# b\n301 0 d1 1\n  # c\n\n301\t0\td2\t2  \r\n# last"
    assert read_qrels(write(tmp_path / "q.txt", text)).rows() == [
        ("301", "d1", 1),
        ("301", "d2", 2),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("301 0 d2 1.7", r"line 2: relevance '1\.7' is not a whole number"),
        ("301 0 d2 abc", r"line 2: relevance 'abc' is not a whole number"),
        ("301 0 d2 99999999999", r"line 2: relevance '99999999999' is outside"),
        ("301 0 d2 1 extra", r"line 2: expected exactly 4 .*found 5"),
        ("301 d2 1", r"line 2: expected exactly 4 whitespace-separated fields "),
    ],
    ids=["fraction", "word", "overflow", "five-fields", "three-fields"],
)
def test_qrels_bad_line(tmp_path: Path, line: str, message: str) -> None:
    path = write(tmp_path / "qrels.txt", f"301 0 d1 1\n{line}\n")
    with pytest.raises(FormatError, match=r"qrels\.txt, " + message) as info:
        read_qrels(path)
    assert repr(line) in str(info.value)


@pytest.mark.parametrize(
    "text",
    [RUN_TEXT, RUN_TEXT.replace(" ", "\t"), "# c\n" + RUN_TEXT.replace("\n", "\r\n")],
    ids=["spaces", "tabs", "crlf-comment"],
)
def test_clean_files_take_the_fast_reader(
    tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def careful(*args: object) -> None:
        raise AssertionError("the careful reader was used")

    monkeypatch.setattr(trec, "_careful", careful)
    assert read_run(write(tmp_path / "a.run", text)).rows() == RUN_ROWS
    gz = write(tmp_path / "b.run.gz", gzip.compress(text.encode()))
    assert read_run(gz).rows() == RUN_ROWS


def test_fast_and_careful_readers_agree(tmp_path: Path) -> None:
    clean = write(tmp_path / "clean.run", RUN_TEXT + "303 Q0 d4 9 -1.25e2 other\n")
    messy = write(
        tmp_path / "messy.run",
        "# c\n" + clean.read_text().replace(" ", " \t ").replace("\n", " \n"),
    )
    assert read_trec_run(clean).equals(read_trec_run(messy))
    q_clean = write(tmp_path / "q1.txt", "1 0 a 1\n1 0 b -2\n")
    q_messy = write(tmp_path / "q2.txt", "1\t0 a  1\n 1 0 b\t-2\n")
    assert read_trec_qrels(q_clean).equals(read_trec_qrels(q_messy))


# --------------------------------------------------------------------------
# trec_eval's run id, plain query lists


def test_run_id_of_last_line(tmp_path: Path) -> None:
    text = "1 Q0 a 1 2 x\n1 Q0 b 2 1 y extra\n\n# trailing comment\n   \n"
    assert trec_run_id_of_last_line(write(tmp_path / "r.run", text)) == "y"
    gz = write(tmp_path / "r.run.gz", gzip.compress(text.encode()))
    assert trec_run_id_of_last_line(gz) == "y"


def test_run_id_of_last_line_errors(tmp_path: Path) -> None:
    bad = write(tmp_path / "r.run", "1 Q0 a 1 2 x\n1 Q0 b\n# c\n")
    with pytest.raises(FormatError, match=r"r\.run, line 2: expected at least 6"):
        trec_run_id_of_last_line(bad)
    with pytest.raises(FormatError, match="no data lines"):
        trec_run_id_of_last_line(write(tmp_path / "c.run", "# only\n"))


def test_queries_as_id_and_text(tmp_path: Path) -> None:
    text = "# topics\n301\tinternational organized crime\n302  poliomyelitis \n303\n"
    queries = read_queries(write(tmp_path / "topics.txt", text))
    assert queries.rows() == [
        ("301", "international organized crime"),
        ("302", "poliomyelitis"),
        ("303", ""),
    ]


# --------------------------------------------------------------------------
# the upstream trec_eval test files (tests/conformance/trec_eval)


def test_trec_eval_test_files() -> None:
    run = read_run(TREC_EVAL_DATA / "results.test")
    assert run.height == 1500
    assert run["run_id"].unique().to_list() == ["STANDARD"]
    trunc = read_run(TREC_EVAL_DATA / "results.trunc")  # extra trailing fields
    assert trunc.height == 584
    qrels = read_qrels(TREC_EVAL_DATA / "qrels.test")
    assert qrels.height == 3681
    with_comments = read_qrels(TREC_EVAL_DATA / "qrels.test.with-comments")
    assert with_comments.filter(pl.col("doc_id") == "CR#93E-1860").height == 1
    graded = read_qrels(TREC_EVAL_DATA / "qrels.rel_level")
    assert graded["relevance"].min() == -1
