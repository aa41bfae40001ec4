"""trec_eval's input rules (SPEC.md section 1), as ireval_df.trec_eval reads files."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ireval_df.io import tokenize
from ireval_df.io.tokenize import split_fields, split_lines
from ireval_df.trec_eval import _reader
from ireval_df.trec_eval._reader import (
    InputError,
    atof,
    atol,
    read_qrels,
    read_run,
    read_zscores,
)


def test_atof_reads_the_numeric_prefix_like_c() -> None:
    values = [
        "1e-3",
        "inf",
        "-Infinity",
        "0x10",
        "-0x1p-2",
        "abc",
        "",
        "2.5junk",
        "nan",
        ".5",
        "7e",
        "+3",
        "1e400",
    ]
    got = atof(pl.Series(values)).to_list()
    assert got[:8] == [0.001, math.inf, -math.inf, 16.0, -0.25, 0.0, 0.0, 2.5]
    assert math.isnan(got[8])
    assert got[9:] == [0.5, 7.0, 3.0, math.inf]


def test_atol_truncates_and_saturates() -> None:
    assert atol(pl.Series(["1.7", "abc", "200", "-1", "+4", "9" * 30])).to_list() == [
        1,
        0,
        200,
        -1,
        4,
        2**63 - 1,
    ]


def test_lines_split_on_newlines_keep_empty_lines_and_drop_crlf() -> None:
    assert split_lines(b"a\r\n\r\nb c\n\nd").to_list() == ["a", "", "b c", "", "d"]


def test_fields_are_split_on_any_c_isspace_run() -> None:
    lines = pl.Series(["a\tb\t\tc", "  x \x0b y\r z ", "p q r", "a b\t"])
    assert split_fields(lines, 3).rows() == [
        ("a", "b", "c", None),
        ("x", "y", "z", None),
        ("p", "q", "r", None),
        ("a", "b", None, None),
    ]


def test_qrels_comments_are_lines_starting_with_hash_anywhere() -> None:
    # trec_eval 10.0 fails on two comment lines in a row and segfaults on a
    # final one; both are read as comments here (docs/trec_eval.md)
    raw = b"# one\n# two\n1 0 d#1 1\n# last"
    assert read_qrels(raw, "utf-8").rows() == [("1", "d#1", 1)]


def test_qrels_rel_goes_through_atol() -> None:
    raw = b"1 0 a 1.7\n1 0 b abc\n1 0 c -3\n1\t0  d\t 200 \r\n"
    assert read_qrels(raw, "utf-8")["relevance"].to_list() == [1, 0, -3, 200]


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        (b"1 0 a 1\n1 0 b\n", 2),  # three fields
        (b"1 0 a 1 extra\n", 1),  # five fields
        (b"1 0 a 1\n\n1 0 b 1\n", 2),  # blank line
        (b"# c\n1 0 a 1\n   \n", 2),  # whitespace-only line (comments do not count)
        (b"1 0 a 1\n  # indented\n", 2),  # an indented # is not a comment
    ],
)
def test_qrels_malformed_lines_are_reported_with_their_number(
    raw: bytes, line: int
) -> None:
    with pytest.raises(InputError) as info:
        read_qrels(raw, "utf-8")
    assert info.value.messages == [f"trec_eval.get_qrels: Malformed line {line}\n"]
    assert info.value.code == 2


def test_qrels_jg_keeps_groups_and_rejects_a_doc_judged_twice_in_a_group() -> None:
    frame = read_qrels(b"1 0 a 1\n1 1 a 0\n", "utf-8", groups=True)
    assert frame.rows() == [("1", "a", 1, "0"), ("1", "a", 0, "1")]
    with pytest.raises(InputError, match="duplicate docs a"):
        read_qrels(b"1 0 a 1\n1 0 a 0\n", "utf-8", groups=True)


def test_run_skips_blank_and_comment_lines_and_takes_the_last_run_id() -> None:
    raw = (
        b"# header\n1 Q0 a 1 2.5 first extra fields\n\n   \n  # indented comment\n"
        b"1\tQ0\tb\t2\t  1e-3\tsecond\r\n2 Q0 c 1 junk last"
    )
    frame, run_id = read_run(raw, "utf-8")
    assert frame.rows() == [("1", "a", 2.5), ("1", "b", 0.001), ("2", "c", 0.0)]
    assert run_id == "last"


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        (b"1 Q0 a 1 2.5\n", 1),  # no run id
        (b"1 Q0 a 1 2.5 r\n\n# c\n1 Q0 b 2 2.5 \n", 2),  # blank lines do not count
        (b"1 Q0 a\n", 1),
    ],
)
def test_run_malformed_lines(raw: bytes, line: int) -> None:
    with pytest.raises(InputError) as info:
        read_run(raw, "utf-8")
    assert info.value.messages == [f"trec_eval.get_results: Malformed line {line}\n"]


def test_run_without_result_lines_is_an_input_error() -> None:
    with pytest.raises(InputError, match="No results lines"):
        read_run(b"# only a comment\n\n", "utf-8")


def test_latin1_bytes_survive_as_characters() -> None:
    raw = b"1 Q0 caf\xe9 1 1.0 r\xfan\n"
    with pytest.raises(UnicodeDecodeError):
        split_lines(raw)
    frame, run_id = read_run(raw, "latin-1")
    assert frame["doc_id"].to_list() == ["caf\xe9"]
    assert run_id.encode("latin-1") == b"r\xfan"


def test_zscores_have_four_fields() -> None:
    assert read_zscores(b"301 map 0.5 0.1\n", "utf-8").rows() == [
        ("301", "map", 0.5, 0.1)
    ]
    with pytest.raises(InputError, match="get_zscores: Malformed line 1"):
        read_zscores(b"301 map 0.5\n", "utf-8")


@pytest.mark.parametrize(
    "variant",
    [
        lambda text: text.replace(" ", "\t"),  # tab separated: still the fast path
        lambda text: text.replace("\n", "\r\n"),  # CRLF: the careful path
        lambda text: text.replace("1 Q0 b", "1  Q0 b"),  # one doubled space
        lambda text: text + "\n\n",  # blank lines at the end
    ],
)
def test_fast_and_careful_readers_agree(variant: object) -> None:
    text = "1 Q0 a 1 2.5 r\n1 Q0 b 2 1e-3 r\n2 Q0 c 1 -0.5 last\n"
    expected = read_run(text.encode(), "utf-8")
    got = read_run(variant(text).encode(), "utf-8")  # type: ignore[operator]
    assert got[0].equals(expected[0])
    assert got[1] == expected[1] == "last"


@pytest.mark.parametrize(
    "text",
    [
        "1 Q0 a 1 2.5 r\n1 Q0 b\x0bx 2 1e-3 r\n",  # a vertical tab splits a field
        "1 Q0 a 1 2.5 r\n1 Q0 b\x0cx 2 1e-3 r\n",  # so does a form feed
        "1 Q0 a 1 2.5 r\n1 Q0 b\rx 2 1e-3 r\n",  # and a CR not ending a line
        "1\tQ0\ta\t1\t2.5\tr\n1\tQ0\tb x\t2\t1e-3\tr\n",  # a space among tabs
    ],
    ids=["vt", "ff", "lone-cr", "space-in-tabs"],
)
def test_other_whitespace_reads_as_the_careful_reader(text: str) -> None:
    # the CSV reader splits on one separator only: these files must not take
    # the fast path (latin-1 always takes the careful one)
    fast, careful = read_run(text.encode(), "utf-8"), read_run(text.encode(), "latin-1")
    assert fast[0].equals(careful[0])
    assert fast[1] == careful[1]


def test_scores_the_csv_reader_cannot_read_fall_back_to_atof() -> None:
    frame, _ = read_run(b"1 Q0 a 1 0x10 r\n1 Q0 b 2 3.5abc r\n", "utf-8")
    assert frame["score"].to_list() == [16.0, 3.5]


# --------------------------------------------------------------------------
# the C tokenizer of ireval_df.io.trec reads plain runs, as trec_eval would

#: Fields and scores the tokenizer takes, then ones only ``atof`` or
#: trec_eval's own splitting read (and numbers out of range)
FIELDS = ["1", "Q0", "doc-00000000001", "#x", "-0"], ["+3", ".5", "7.", "a\x01b"]
SCORES = (
    ["2.5", "-0.125", "10", "1e-3", "3E+2", "12345678901234567", "-0"],
    [
        "0x10",
        "inf",
        "nan",
        "1e400",
        "1e-400",
        "2.5abc",
        "+1",
        ".5",
    ],
)
BLANKS = [" ", "\t", "  ", "\x0b", "\x0c"], [" \r ", "\r"]


@st.composite
def runs_as_written(draw: st.DrawFn) -> bytes:
    """Runs of every shape the drop-in may meet: half plain, half odd or malformed."""
    odd = draw(st.booleans())

    def pick(kinds: tuple[list[str], list[str]]) -> str:
        return draw(st.sampled_from(kinds[0] + kinds[1] if odd else kinds[0]))

    lines = []
    for _ in range(draw(st.integers(0, 12))):
        shape = draw(st.sampled_from(["data"] * 6 + ["blank", "comment", "short"]))
        if shape == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t\x0b"])))
            continue
        fields = [pick(FIELDS) for _ in range(6)]
        fields[4] = pick(SCORES)
        if shape == "comment":
            fields[0] = "#" + fields[0]
        if shape == "short" and odd:
            fields = fields[: draw(st.integers(1, 5))]
        fields += draw(st.lists(st.sampled_from(FIELDS[0]), max_size=2))
        line = draw(st.sampled_from(["", " "]))
        line += "".join(f + pick(BLANKS) for f in fields[:-1])
        lines.append(line + fields[-1] + draw(st.sampled_from(["", "\r", " "])))
    return ("\n".join(lines) + draw(st.sampled_from(["", "\n"]))).encode()


def read_or_error(raw: bytes) -> object:
    try:
        frame, run_id = read_run(raw, "utf-8")
    except InputError as error:
        return error.messages
    return frame.rows(), run_id


@pytest.mark.skipif(tokenize._ctrec is None, reason="the C tokenizer is not built here")
@settings(max_examples=300)
@given(raw=runs_as_written())
def test_the_tokenizer_reads_runs_as_the_python_readers(raw: bytes) -> None:
    got = read_or_error(raw)
    saved, tokenize._ctrec = tokenize._ctrec, None
    try:
        expected = read_or_error(raw)
    finally:
        tokenize._ctrec = saved
    assert repr(got) == repr(expected)  # repr: NaN scores compare equal


@pytest.mark.skipif(tokenize._ctrec is None, reason="the C tokenizer is not built here")
def test_plain_runs_take_the_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kw: object) -> None:
        raise AssertionError("a Python reader was used")

    monkeypatch.setattr(_reader, "split_single", refuse)
    monkeypatch.setattr(_reader, "split_fields", refuse)
    raw = b"# a run\n1 Q0 a 1 2.5 r\n\n1\tQ0 b 2 -1e-3 r\r\n2 Q0 c 1 7 last x\n"
    frame, run_id = read_run(raw, "utf-8")
    assert frame.rows() == [("1", "a", 2.5), ("1", "b", -0.001), ("2", "c", 7.0)]
    assert run_id == "last"
    assert read_run(b"1 Q0 a 1 2.5 r\n" * 3, "utf-8")[1] == "r"  # one tag
