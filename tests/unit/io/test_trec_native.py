"""The C tokenizer (``ireval_df.io._ctrec``) against the careful reader.

The tokenizer is an accelerator: for any input it either returns exactly the
careful reader's frame or None (and the Python readers take the file). These
tests hold it to that on hand-picked lines, on generated numbers and files,
and on inputs large enough to be split over several threads; and they check
that it is really used and really built wherever a C compiler is.
"""

from __future__ import annotations

import gzip
import math
import re
import shutil
import sys
import sysconfig
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from ireval_df.errors import FormatError
from ireval_df.io import tokenize, trec

if TYPE_CHECKING:
    from pathlib import Path

    import polars as pl

needs_extension = pytest.mark.skipif(
    tokenize._ctrec is None, reason="the C tokenizer is not built here"
)


def careful(data: bytes, layout: trec._Layout, *, rank: bool = True) -> Any:
    """The careful reader's frame, or None where it raises a FormatError."""
    try:
        return trec._careful(data, "f", layout, rank=rank)
    except FormatError:
        return None


def native(
    data: bytes, layout: trec._Layout, *, rank: bool = True, threads: int = 2
) -> pl.DataFrame | None:
    """The tokenizer's frame as ``_read`` finishes it, or None."""
    frame = trec._native(data, layout, rank=rank, threads=threads)
    return None if frame is None else trec._finish(frame, layout, rank=rank)


def assert_agrees(data: bytes, layout: trec._Layout, *, rank: bool = True) -> bool:
    """Check the tokenizer against the careful reader; tell whether it read."""
    got = native(data, layout, rank=rank)
    if got is None:
        return False
    expected = careful(data, layout, rank=rank)
    assert expected is not None, "the tokenizer read a file the careful one refuses"
    assert_frame_equal(got, expected)
    return True


def test_extension_is_built_where_a_compiler_is() -> None:
    # setup.py marks the extension optional, so a broken build would pass
    # silently everywhere but here
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) on this machine")
    assert tokenize._ctrec is not None, "pip install did not build ireval_df.io._ctrec"


# --------------------------------------------------------------------------
# lines it reads, and lines it leaves to the Python readers

GOOD_RUN = "1 Q0 a 1 2.5 x\n"
READ = {
    "spaces": "1 Q0 b 2 1.5 y",
    "tabs": "1\tQ0\tb\t2\t1.5\ty",
    "runs-of-blanks": "  1 \t Q0\x0bb\x0c 2   1.5 y  ",
    "extra-fields": "1 Q0 b 2 1.5 y z w",
    "crlf": "1 Q0 b 2 1.5 y\r",
    "blank": " \t",
    "comment": "# 1 Q0 b 2 1.5 y",
    "indented-comment": "  # note",
    "negative-exponent": "1 Q0 b 2 -1.25e-3 y",
    "long-mantissa": "1 Q0 b 2 0.12345678901234568 y",
    "big-exponent": "1 Q0 b 2 1E300 y",
    "zero-rank": "1 Q0 b 0 1 y",
    "leading-zeros": "1 Q0 b 007 0001.50 y",
    "long-ids": "query-0000000001 Q0 document-00000000001 2 1 a-run-tag-of-some-length",
}
LEFT = {
    "lone-cr": "1 Q0 b 2 1.5 y\r1 Q0 c 3 1 y",
    "cr-between-fields": "1 Q0 b\r 2 1.5 y",
    "nul": "1 Q0 b\x00 2 1.5 y",
    "not-ascii": "1 Q0 bé 2 1.5 y",
    "not-ascii-in-comment": "# é",
    "5-fields": "1 Q0 b 2 1.5",
    "plus-score": "1 Q0 b 2 +1.5 y",
    "dot-first": "1 Q0 b 2 .5 y",
    "dot-last": "1 Q0 b 2 5. y",
    "inf": "1 Q0 b 2 inf y",
    "nan": "1 Q0 b 2 nan y",
    "overflow": "1 Q0 b 2 1e400 y",
    "underflow": "1 Q0 b 2 1e-400 y",
    "not-a-number": "1 Q0 b 2 abc y",
}
# ranks it does not convert: left when the rank is kept, read when it is not
# (trec_eval ignores the field)
RANKS_LEFT = {
    "fraction-rank": "1 Q0 b 1.0 1.5 y",
    "negative-rank": "1 Q0 b -1 1.5 y",
    "rank-past-uint32": "1 Q0 b 4294967296 1.5 y",
}
QRELS_READ = {
    "plain": "1 0 b 2",
    "negative": "1 0 b -1",
    "int32-edges": "1 0 b -2147483648\n1 0 c 2147483647",
    "tabs-and-comment": "1\t0\tb\t1\n# c",
}
QRELS_LEFT = {
    "5-fields": "1 0 b 1 extra",
    "plus": "1 0 b +1",
    "fraction": "1 0 b 1.5",
    "past-int32": "1 0 b 2147483648",
}


@needs_extension
@pytest.mark.parametrize("rank", [True, False], ids=["rank", "no-rank"])
@pytest.mark.parametrize("case", list(READ))
def test_it_reads_plain_lines_as_the_careful_reader(case: str, rank: bool) -> None:
    for text in (f"{GOOD_RUN}{READ[case]}\n{GOOD_RUN}", f"{GOOD_RUN}{READ[case]}"):
        assert assert_agrees(text.encode(), trec._RUN, rank=rank)


@needs_extension
@pytest.mark.parametrize("case", list(LEFT))
def test_it_leaves_anything_else_to_the_python_readers(case: str) -> None:
    data = f"{GOOD_RUN}{LEFT[case]}\n{GOOD_RUN}".encode()
    assert native(data, trec._RUN) is None
    assert native(data, trec._RUN, rank=False) is None


@needs_extension
@pytest.mark.parametrize("case", list(RANKS_LEFT))
def test_it_converts_only_plain_ranks(case: str) -> None:
    data = f"{GOOD_RUN}{RANKS_LEFT[case]}\n{GOOD_RUN}".encode()
    assert native(data, trec._RUN) is None
    assert assert_agrees(data, trec._RUN, rank=False)


@needs_extension
@pytest.mark.parametrize("case", list(QRELS_READ))
def test_it_reads_plain_qrels(case: str) -> None:
    assert assert_agrees(f"1 0 a 1\n{QRELS_READ[case]}\n".encode(), trec._QRELS)


@needs_extension
@pytest.mark.parametrize("case", list(QRELS_LEFT))
def test_it_leaves_other_qrels(case: str) -> None:
    assert native(f"1 0 a 1\n{QRELS_LEFT[case]}\n".encode(), trec._QRELS) is None


@needs_extension
@pytest.mark.parametrize("text", ["", "\n\n", "# only\n# comments\n", "   \n"])
def test_no_data_line_is_left_to_the_python_readers(text: str) -> None:
    # they report the file as having no data lines
    assert native(text.encode(), trec._RUN) is None
    assert native(text.encode(), trec._QRELS) is None


# --------------------------------------------------------------------------
# numbers

DIGITS = st.text("0123456789", min_size=1, max_size=22)


@st.composite
def decimals(draw: st.DrawFn) -> str:
    """Scores in the tokenizer's grammar, some past 15 digits or with exponents."""
    text = draw(st.sampled_from(["", "-"])) + draw(DIGITS)
    if draw(st.booleans()):
        text += "." + draw(DIGITS)
    if draw(st.booleans()):
        text += draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "-", "+"]))
        text += str(draw(st.integers(0, 330)))
    return text


def refused(text: str, value: float) -> bool:
    """Tell whether the tokenizer must leave a score: overflow or underflow."""
    nonzero = any(c in "123456789" for c in re.split("[eE]", text)[0])
    return math.isinf(value) or (nonzero and abs(value) < sys.float_info.min)


@needs_extension
@settings(max_examples=300)
@given(scores=st.lists(decimals(), min_size=1, max_size=20))
def test_scores_are_correctly_rounded(scores: list[str]) -> None:
    data = "".join(f"q Q0 d{i} 1 {s} t\n" for i, s in enumerate(scores)).encode()
    got = native(data, trec._RUN)
    values = [float(s) for s in scores]  # Python's own correctly rounded parse
    if any(refused(s, v) for s, v in zip(scores, values, strict=True)):
        assert got is None
        return
    assert got is not None
    assert [v.hex() for v in got["score"]] == [v.hex() for v in values]
    assert_frame_equal(got, careful(data, trec._RUN))


# --------------------------------------------------------------------------
# whole files, split over threads

IDS = ["1", "22", "q-0000000000001", "q-0000000000002", "document-0000000001"]


@st.composite
def plain_runs(draw: st.DrawFn) -> str:
    """Runs the tokenizer must read: any blanks, comments, CRLF, long ids."""
    blanks = st.sampled_from([" ", "\t", "  ", " \t", "\x0b", "\x0c"])
    lines = []
    for _ in range(draw(st.integers(1, 30))):
        shape = draw(st.sampled_from(["data"] * 8 + ["blank", "comment"]))
        if shape == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t \x0b"])))
        elif shape == "comment":
            lines.append(draw(st.sampled_from(["#", "# x y", " #1 Q0 a 1 2 t"])))
        else:
            fields = [
                draw(st.sampled_from(IDS)),
                "Q0",
                draw(st.sampled_from(IDS)),
                str(draw(st.integers(0, 2**32 - 1))),
                draw(decimals().filter(lambda s: "e" not in s.lower())),
                draw(st.sampled_from(IDS)),
            ]
            fields += draw(st.lists(st.sampled_from(IDS), max_size=2))
            text = draw(st.sampled_from(["", " ", "\t"]))
            text += "".join(f + draw(blanks) for f in fields[:-1]) + fields[-1]
            lines.append(text + draw(st.sampled_from(["", " ", "\r"])))
    ending = "\n" if draw(st.booleans()) else ""
    return "\n".join(lines) + ending


@needs_extension
@settings(max_examples=150)
@given(text=plain_runs(), rank=st.booleans())
def test_plain_runs_read_as_the_careful_reader(text: str, rank: bool) -> None:
    data = text.encode()
    if careful(data, trec._RUN, rank=rank) is None:  # only comments and blanks
        assert native(data, trec._RUN, rank=rank) is None
        return
    # a line that ends "\r" unterminated is fine too: only a CR inside is not
    assert assert_agrees(data, trec._RUN, rank=rank)


def big_run(rows: int) -> bytes:
    """A run past the 1 MiB below which the tokenizer uses one thread.

    Ids longer than 12 bytes are stored apart from their views; consecutive
    rows repeat query ids and tags (shared bytes), and doc ids of one length
    change from row to row (no sharing).
    """
    lines = [
        f"query-{i // 7:012d} Q0 document-{i % 5:02d}{i:010d} {i % 1000} "
        f"{(i * 7919) % 10007 / 97:.6f} {'tag-of-a-long-run' if i % 3 else 'x'}\n"
        for i in range(rows)
    ]
    return "".join(lines).encode()


@needs_extension
@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_a_file_split_over_threads_reads_whole_and_in_order(threads: int) -> None:
    data = big_run(40_000)
    assert len(data) > 2**21
    got = native(data, trec._RUN, threads=threads)
    assert got is not None
    assert_frame_equal(got, careful(data, trec._RUN))


@needs_extension
def test_a_bad_line_in_any_part_leaves_the_file() -> None:
    data = big_run(40_000)
    for at in (0, len(data) // 2, len(data) - 3):
        broken = data[:at] + b"\x00" + data[at + 1 :]
        assert native(broken, trec._RUN, threads=3) is None


# --------------------------------------------------------------------------
# a string column holding one value on every line is returned as that value


def tagged_run(tags: list[str], rows: int = 40_000) -> bytes:
    """A run past 1 MiB whose rows take ``tags`` in turn, in equal stretches."""
    stretch = -(-rows // len(tags))
    return "".join(
        f"q{i // 100} Q0 d{i} {i % 100 + 1} {1000 - i % 100} {tags[i // stretch]}\n"
        for i in range(rows)
    ).encode()


def one_values(data: bytes, threads: int) -> dict[str, object]:
    """The run fields the tokenizer returns as one value, with that value."""
    columns = tokenize._ctrec.parse(data, "sxsufs", False, threads)
    assert columns is not None
    return {
        field: column[0]
        for field, column in zip(trec._RUN.fields, columns, strict=True)
        if isinstance(column, tuple)
    }


LONG = "a-tag-longer-than-twelve-bytes"


@needs_extension
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("tag", ["bm25", LONG])
def test_a_tag_on_every_line_is_one_value(tag: str, threads: int) -> None:
    data = tagged_run([tag])
    assert one_values(data, threads) == {"run_id": tag}
    got = native(data, trec._RUN, threads=threads)
    assert got is not None
    assert_frame_equal(got, careful(data, trec._RUN))


@needs_extension
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize(
    "tags",
    [
        ["x", "y"],  # with 2 threads, one value in each part
        ["x", "y", "x"],
        ["bm25", LONG],
        [LONG, LONG + "-2"],  # long values, of one length then another
        [LONG, LONG[::-1]],  # long values of one length
        ["bm25", "bm2"],  # a value that begins the first one
        [LONG, LONG[:-1]],
    ],
    ids=repr,
)
def test_tags_that_change_are_read_row_by_row(tags: list[str], threads: int) -> None:
    data = tagged_run(tags)
    assert one_values(data, threads) == {}
    got = native(data, trec._RUN, threads=threads)
    assert got is not None
    assert_frame_equal(got, careful(data, trec._RUN))


@needs_extension
@pytest.mark.parametrize("at", [1, 20_000, 39_999], ids=["second", "middle", "last"])
def test_one_line_with_another_tag_is_kept(at: int) -> None:
    lines = tagged_run([LONG]).splitlines(keepends=True)
    lines[at] = lines[at].replace(LONG.encode(), b"other")
    data = b"".join(lines)
    for threads in (1, 2, 3):
        assert one_values(data, threads) == {}
        got = native(data, trec._RUN, threads=threads)
        assert got is not None
        assert got["run_id"].to_list().count("other") == 1
        assert_frame_equal(got, careful(data, trec._RUN))


@needs_extension
@pytest.mark.parametrize(
    "tags", [("x", "y"), ("bm25", "bm2"), (LONG, LONG[::-1])], ids=repr
)
def test_parts_of_one_value_each_are_read_row_by_row(tags: tuple[str, str]) -> None:
    # two threads split the file after the first newline past its middle
    # byte; the first tag ends there, so each part holds one value
    def run(cut: int) -> bytes:
        return b"".join(
            f"q{i} Q0 d{i} 1 2.5 {tags[i >= cut]}\n".encode() for i in range(40_000)
        )

    cut, data = 0, run(0)
    while (split := data[: data.index(b"\n", len(data) // 2) + 1].count(b"\n")) != cut:
        cut, data = split, run(split)
    assert one_values(data, 2) == {}
    got = native(data, trec._RUN, threads=2)
    assert got is not None
    assert got["run_id"].to_list() == [tags[i >= cut] for i in range(40_000)]


@needs_extension
def test_a_frame_of_one_value_strings_has_the_file_s_height() -> None:
    # no run or qrels layout keeps only strings; the frame is built all the same
    layout = trec._Layout("pairs", ("a", "b"), exact=True, spelled="a b")
    got = trec._native(b"p q\n\np q\n", layout, rank=False, threads=1)
    assert got is not None
    assert got.to_dict(as_series=False) == {"a": ["p", "p"], "b": ["q", "q"]}


# --------------------------------------------------------------------------
# through the public readers


@needs_extension
def test_read_trec_run_uses_it_for_plain_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = big_run(2_000)
    path = tmp_path / "a.run"
    path.write_bytes(data)
    packed = tmp_path / "a.run.gz"
    packed.write_bytes(gzip.compress(data))
    expected = careful(data, trec._RUN)

    def refuse(*args: object, **kw: object) -> None:
        raise AssertionError("a Python reader was used")

    monkeypatch.setattr(trec, "_fast", refuse)
    monkeypatch.setattr(trec, "_careful", refuse)
    for source in (path, packed):
        assert_frame_equal(trec.read_trec_run(source), expected)


def test_without_it_the_python_readers_give_the_same_frames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, qrels = tmp_path / "a.run", tmp_path / "a.qrels"
    run.write_bytes(big_run(2_000))
    qrels.write_text("query-000000000000 0 document-000000000000 1\n1 0 b -1\n")
    expected = trec.read_trec_run(run), trec.read_trec_qrels(qrels, lenient=True)
    monkeypatch.setattr(tokenize, "_ctrec", None)
    assert_frame_equal(trec.read_trec_run(run), expected[0])
    assert_frame_equal(trec.read_trec_qrels(qrels, lenient=True), expected[1])
