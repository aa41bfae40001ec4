"""The whitespace tokenizer: one rule, and two accelerators held to it.

:func:`split_fields` is the rule (C ``isspace`` runs separate fields, lines
end at ``\\n``). :func:`split_single` (polars' CSV reader) and
:func:`split_native` (the C tokenizer) must, for any text, either return
None or exactly the fields the rule gives, typed, of the lines that are not
blank or comments.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from ireval_df.io import tokenize
from ireval_df.io.tokenize import (
    SKIPPED,
    Blanks,
    fields_of,
    split_fields,
    split_lines,
    split_native,
    split_single,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

RUN = {"q": "s", "i": "x", "d": "s", "r": "u", "s": "f", "t": "s"}
QRELS = {"q": "s", "i": "x", "d": "s", "g": "i"}
TYPES = {"s": pl.String, "x": pl.String, "f": pl.Float64, "u": pl.UInt32}
TYPES |= {"i": pl.Int32}


def reference(data: bytes, kinds: Mapping[str, str], *, exact: bool) -> Any:
    """The rule's typed fields of the data lines, or None if a line does not fit."""
    lines = split_lines(data)
    lines = lines.filter(~lines.str.contains(SKIPPED))
    parts = split_fields(lines, len(kinds))
    names = dict(zip(parts.columns, kinds, strict=False))
    parts = parts.rename(names)
    if parts.height == 0 or parts[list(kinds)[-1]].null_count():
        return None
    if exact and parts["rest"].null_count() < parts.height:
        return None
    try:
        return parts.select(
            pl.col(field).cast(TYPES[kind], strict=True)
            for field, kind in kinds.items()
            if kind != "x"
        )
    except pl.exceptions.PolarsError:
        return None


def assert_fits(
    got: pl.DataFrame | None, data: bytes, kinds: Mapping[str, str], *, exact: bool
) -> bool:
    """Check an accelerator's frame against the rule; tell whether it read."""
    if got is None:
        return False
    expected = reference(data, kinds, exact=exact)
    assert expected is not None, "an accelerator read text the rule refuses"
    assert_frame_equal(got, expected, check_dtypes=False)
    return True


# --------------------------------------------------------------------------
# the rule


def test_fields_are_runs_of_bytes_that_are_not_c_isspace() -> None:
    lines = pl.Series([" a\tb\r\x0bc\x0cd  ", "", " \t\r", "x"])
    assert split_fields(lines, 2).rows() == [
        ("a", "b", "c d"),
        (None, None, None),
        (None, None, None),
        ("x", None, None),
    ]


def test_other_unicode_spaces_are_field_bytes() -> None:
    # Python's str.split() would split on these; C isspace in trec_eval does not
    line = "a\u00a0b\x1cc\u2003 d"
    assert split_fields(pl.Series([line]), 2).rows() == [
        ("a\u00a0b\x1cc\u2003", "d", None)
    ]
    assert fields_of(line.encode()) == [b"a\xc2\xa0b\x1cc\xe2\x80\x83", b"d"]


def test_lines_end_at_newline_and_a_cr_before_it() -> None:
    # a CR elsewhere is a blank inside the line (the readers may refuse it)
    lines = split_lines(b"a b\r\n\r\nc\rd\n\ne")
    assert lines.to_list() == ["a b", "", "c\rd", "", "e"]
    assert split_fields(lines, 2)["f1"].to_list() == [("b"), None, "d", None, None]


# --------------------------------------------------------------------------
# the accelerators against the rule

FIELDS = ["1", "Q0", "0", "d-00000000000001", "#x", "a#b", "-1", "2.5", "1e-3"]
FIELDS += ["+3", ".5", "nan", "x", "4294967296", "\u00e9"]
SEPARATORS = [" ", "\t"]
BLANK_RUNS = ["  ", " \t", "\x0b", "\x0c", "\r", " \r "]


@st.composite
def texts(draw: st.DrawFn) -> bytes:
    """Whitespace-separated text: mostly plain, some odd or malformed lines."""
    separator = draw(st.sampled_from(SEPARATORS))
    odd = draw(st.booleans())
    blanks = st.sampled_from(SEPARATORS + BLANK_RUNS if odd else [separator])
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        shape = draw(st.sampled_from(["data"] * 6 + ["blank", "comment"]))
        if shape == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t", "\r"])))
            continue
        fields = draw(st.lists(st.sampled_from(FIELDS), min_size=3, max_size=7))
        if shape == "comment":
            fields[0] = "#" + fields[0]
        line = draw(st.sampled_from(["", " "])) if odd else ""
        line += fields[0] + "".join(draw(blanks) + f for f in fields[1:])
        lines.append(line + (draw(st.sampled_from(["", " ", "\r"])) if odd else ""))
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    return (ending.join(lines) + draw(st.sampled_from(["", ending]))).encode()


needs_extension = pytest.mark.skipif(
    not tokenize.native_available(), reason="the C tokenizer is not built here"
)
PLAIN_RUN = b"1 Q0 a 1 2.5 x\n# c\n\n1 Q0 b 2 1.5 x extra\n"
PLAIN_QRELS = b"1 0 a 1\n1\t0\tb\t-2\r\n"


@needs_extension
@settings(max_examples=300)
@given(data=texts())
@example(data=PLAIN_RUN)
@example(data=PLAIN_QRELS)
def test_the_c_tokenizer_gives_the_rule_s_fields(data: bytes) -> None:
    for kinds, exact in ((RUN, False), (QRELS, True)):
        for threads in (1, 2):
            got = split_native(data, kinds, exact=exact, threads=threads)
            assert_fits(got, data, kinds, exact=exact)


@settings(max_examples=300)
@given(data=texts())
@example(data=PLAIN_RUN)
@example(data=PLAIN_QRELS)
def test_the_csv_reader_gives_the_rule_s_fields(data: bytes) -> None:
    for kinds, exact in ((RUN, False), (QRELS, True)):
        # strings and a float: what polars parses as typed is its own grammar
        kinds = {
            f: "f" if k == "f" else "s" if k != "x" else "x" for f, k in kinds.items()
        }
        schema = {f: TYPES[k] if k == "f" else pl.String for f, k in kinds.items()}
        keep = [f for f, k in kinds.items() if k != "x"]
        got = split_single(data, Blanks.of(data), schema, exact=exact, keep=keep)
        assert_fits(got, data, kinds, exact=exact)


@needs_extension
def test_the_accelerators_read_plain_text() -> None:
    # the comparisons above would be empty if both always declined
    assert assert_fits(
        split_native(PLAIN_RUN, RUN, exact=False), PLAIN_RUN, RUN, exact=False
    )
    assert assert_fits(
        split_native(PLAIN_QRELS, QRELS, exact=True), PLAIN_QRELS, QRELS, exact=True
    )


def test_the_csv_reader_reads_plain_text() -> None:
    # single tabs, CRLF line ends; spaces and tabs mixed are left to the rule
    data = b"1\t0\ta\t1\r\n1\t0\tb\t-2\n"
    schema = dict.fromkeys(QRELS, pl.String)
    assert split_single(PLAIN_QRELS, Blanks.of(PLAIN_QRELS), schema, exact=True) is None
    got = split_single(data, Blanks.of(data), schema, exact=True)
    assert got is not None
    assert got.rows() == [("1", "0", "a", "1"), ("1", "0", "b", "-2")]


def test_without_the_c_tokenizer_split_native_declines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tokenize, "_ctrec", None)
    assert not tokenize.native_available()
    assert split_native(PLAIN_RUN, RUN, exact=False) is None


# --------------------------------------------------------------------------
# trec_eval's own test files (tests/conformance), also split over threads

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance" / "trec_eval"
INPUTS = sorted(
    path.name
    for pattern in ("qrels*", "results*", "prefs*", "zscores_file")
    for path in CONFORMANCE.glob(pattern)
)
#: the files each accelerator must read: a comparison with nothing read is void
READ = {("results.test", "run"), ("results.trunc", "run"), ("qrels.test", "qrels")}


@needs_extension
@pytest.mark.parametrize("name", INPUTS)
def test_the_c_tokenizer_reads_trec_eval_s_files_by_the_rule(name: str) -> None:
    data = (CONFORMANCE / name).read_bytes()
    big = data * (2**21 // len(data) + 1)  # past 1 MiB: split over threads
    for layout, kinds, exact in (("run", RUN, False), ("qrels", QRELS, True)):
        read = assert_fits(
            split_native(data, kinds, exact=exact), data, kinds, exact=exact
        )
        assert read or (name, layout) not in READ
        for threads in (2, 3):
            got = split_native(big, kinds, exact=exact, threads=threads)
            assert assert_fits(got, big, kinds, exact=exact) == read


@pytest.mark.parametrize("name", INPUTS)
def test_the_csv_reader_reads_trec_eval_s_files_by_the_rule(name: str) -> None:
    data = (CONFORMANCE / name).read_bytes()
    for kinds, exact in ((RUN, False), (QRELS, True)):
        schema = dict.fromkeys(kinds, pl.String)
        got = split_single(data, Blanks.of(data), schema, exact=exact)
        assert_fits(got, data, dict.fromkeys(kinds, "s"), exact=exact)
