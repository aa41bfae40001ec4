"""The fast TREC reader against the careful one, field by field.

The fast reader splits on one separator and does not keep ``iter`` (nor
``rank`` with ``rank=False``); an empty field there shifts every later field
with no null among the kept ones. Each line below must read as the careful
reader reads it (the same frame or the same error), with and without the
rank, and must go to the careful reader exactly when the fast one cannot
vouch for it. The C tokenizer, which reads plain files before either of
them, is turned off here (``test_trec_native.py`` holds it to the careful
reader), so that the public readers below exercise the polars ones.
"""

from __future__ import annotations

import gzip
from typing import TYPE_CHECKING, Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from ireval_df import evaluate, read_run
from ireval_df.errors import FormatError, SchemaError
from ireval_df.io import files as _files
from ireval_df.io import tokenize, trec
from ireval_df.io.load import load, read_header
from ireval_df.schema.coerce import as_run

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path


@pytest.fixture(autouse=True)
def _without_the_c_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenize, "_ctrec", None)


GOOD_RUN = "1 Q0 a 1 2.5 x\n"
GOOD_QRELS = "1 0 a 1\n"
FAST, CAREFUL = "fast", "careful"

# line -> (that line between good ones, which reader takes the file with
# rank=True, with rank=False); two spaces in a row make an empty field
RUN_CASES = {
    # an empty field the fast reader does not keep: only its emptiness shows
    "empty-rank": ("1 Q0 b  1.5 x", CAREFUL, CAREFUL),  # trec_eval: 5 fields
    "empty-rank-7": ("1 Q0 b  2 1.5 x", CAREFUL, CAREFUL),  # valid, shifted
    "empty-iter": ("1  b 2 1.5 x", CAREFUL, CAREFUL),  # trec_eval: 5 fields
    "empty-iter-7": ("1  Q0 b 2 1.5 x", CAREFUL, CAREFUL),  # valid, shifted
    # an empty field it keeps
    "empty-doc": ("1 Q0  b 2 1.5 x", CAREFUL, CAREFUL),
    "empty-score": ("1 Q0 b 2  1.5 x", CAREFUL, CAREFUL),
    "empty-tag": ("1 Q0 b 2 1.5  x", CAREFUL, CAREFUL),
    # a separator first: an empty query id
    "indented": (" 1 Q0 b 2 1.5 x", CAREFUL, CAREFUL),
    "indented-1-field": (" b", CAREFUL, CAREFUL),  # only iter is non-empty
    "indented-2-fields": (" b c", CAREFUL, CAREFUL),
    "indented-5-fields": (" 1 Q0 b 2", CAREFUL, CAREFUL),
    "only-rank-set": ("   2", CAREFUL, CAREFUL),  # every kept field empty
    "indented-comment": (" # c", CAREFUL, CAREFUL),
    # blank lines: every field empty
    "blank": ("", FAST, FAST),
    "whitespace-only": (" ", FAST, FAST),
    "whitespace-only-2": ("  ", FAST, FAST),
    # separators after the sixth field: empty fields that nobody reads
    "trailing-separator": ("1 Q0 b 2 1.5 x ", FAST, FAST),
    "trailing-separators": ("1 Q0 b 2 1.5 x  ", FAST, FAST),
    "extra-fields": ("1 Q0 b 2 1.5 x y  z", FAST, FAST),
    # short lines: the tag, always kept, is missing or empty
    "5-fields": ("1 Q0 b 2 1.5", CAREFUL, CAREFUL),
    "5-fields-trailing": ("1 Q0 b 2 1.5 ", CAREFUL, CAREFUL),
    "3-fields": ("1 Q0 b", CAREFUL, CAREFUL),
    "1-field": ("1", CAREFUL, CAREFUL),
    # comments start with '#'
    "comment": ("# a  comment", FAST, FAST),
    # values the fast reader cannot parse
    "score-not-a-number": ("1 Q0 b 2 abc x", CAREFUL, CAREFUL),
    "rank-not-a-count": ("1 Q0 b 1.0 1.5 x", CAREFUL, CAREFUL),
    "rank-word": ("1 Q0 b - 1.5 x", CAREFUL, CAREFUL),
}

QRELS_CASES = {
    "empty-iter": ("1  b 1", CAREFUL),  # trec_eval: 3 fields
    "empty-iter-5": ("1  0 b 1", CAREFUL),  # valid, shifted
    "empty-doc": ("1 0  b 1", CAREFUL),
    "indented": (" 1 0 b 1", CAREFUL),
    "indented-1-field": (" b", CAREFUL),
    "blank": ("", FAST),
    "whitespace-only": (" ", FAST),
    # exactly four fields, but trec_eval allows trailing blanks
    "trailing-separator": ("1 0 b 1 ", CAREFUL),
    "5-fields": ("1 0 b 1 x", CAREFUL),
    "3-fields": ("1 0 b", CAREFUL),
    "comment": ("# a  comment", FAST),
    "fraction": ("1 0 b 1.5", CAREFUL),
}


def outcome(read: Callable[..., pl.DataFrame], *args: Any, **kw: Any) -> Any:
    """Return the frame ``read`` returns, or the text of its FormatError."""
    try:
        return read(*args, **kw)
    except FormatError as exc:
        return f"FormatError: {exc}"


def assert_same(got: Any, expected: Any) -> None:
    if isinstance(got, pl.DataFrame) and isinstance(expected, pl.DataFrame):
        assert_frame_equal(got, expected)
    else:
        assert got == expected


def files(line: str, good: str) -> dict[str, bytes]:
    """The line among good ones, with spaces or tabs, LF or CRLF."""
    texts = {
        "middle": f"{good}{line}\n{good}",
        "first": f"{line}\n{good}",
        "last-unterminated": f"{good}{line}",
    }
    out = {}
    for where, text in texts.items():
        for sep_name, sep in (("space", " "), ("tab", "\t")):
            for eol_name, eol in (("lf", "\n"), ("crlf", "\r\n")):
                data = text.replace(" ", sep).replace("\n", eol)
                out[f"{where}-{sep_name}-{eol_name}"] = data.encode()
    return out


def paths(tmp_path: Path, name: str, data: bytes) -> list[Path]:
    """Write ``data`` plainly, and gzipped for the first layout."""
    plain = tmp_path / name
    plain.write_bytes(data)
    if name.startswith("middle-space-lf"):
        packed = tmp_path / f"{name}.gz"
        packed.write_bytes(gzip.compress(data))
        return [plain, packed]
    return [plain]


def route(data: bytes, tmp_path: Path, layout: trec._Layout, **kw: Any) -> str:
    """Tell which reader takes the file: the fast one, or the careful one."""
    path = tmp_path / "route.txt"
    path.write_bytes(data)
    fast = trec._fast(str(path), tokenize.Blanks.of(data), layout, **kw)
    return CAREFUL if fast is None else FAST


# --------------------------------------------------------------------------
# malformed and unusual lines


@pytest.mark.parametrize("rank", [True, False], ids=["rank", "no-rank"])
@pytest.mark.parametrize("case", list(RUN_CASES))
def test_run_line_reads_as_the_careful_reader(
    tmp_path: Path, case: str, rank: bool
) -> None:
    line = RUN_CASES[case][0]
    for name, data in files(line, GOOD_RUN).items():
        for path in paths(tmp_path, f"{name}.run", data):
            expected = outcome(trec._careful, data, str(path), trec._RUN, rank=rank)
            got = outcome(trec.read_trec_run, path, rank=rank)
            assert_same(got, expected)


@pytest.mark.parametrize("rank", [True, False], ids=["rank", "no-rank"])
@pytest.mark.parametrize("case", list(RUN_CASES))
def test_run_line_takes_the_expected_reader(
    tmp_path: Path, case: str, rank: bool
) -> None:
    line, with_rank, without_rank = RUN_CASES[case]
    data = f"{GOOD_RUN}{line}\n{GOOD_RUN}".encode()
    expected = with_rank if rank else without_rank
    assert route(data, tmp_path, trec._RUN, rank=rank) == expected


@pytest.mark.parametrize("case", list(QRELS_CASES))
def test_qrels_line_reads_as_the_careful_reader(tmp_path: Path, case: str) -> None:
    line, expected_route = QRELS_CASES[case]
    for name, data in files(line, GOOD_QRELS).items():
        for path in paths(tmp_path, f"{name}.qrels", data):
            expected = outcome(trec._careful, data, str(path), trec._QRELS)
            assert_same(outcome(trec.read_trec_qrels, path), expected)
    data = f"{GOOD_QRELS}{line}\n{GOOD_QRELS}".encode()
    assert route(data, tmp_path, trec._QRELS) == expected_route


def test_the_cases_include_errors_and_shifted_valid_lines(tmp_path: Path) -> None:
    # the comparisons above would be weak if every case failed alike
    def careful(line: str) -> Any:
        data = f"{GOOD_RUN}{line}\n".encode()
        return outcome(trec._careful, data, "r", trec._RUN)

    assert careful("1 Q0 b  1.5 x").startswith("FormatError: r, line 2: expected")
    shifted = careful("1 Q0 b  2 1.5 x")
    assert shifted.row(1) == ("1", "b", 2, 1.5, "x")


# --------------------------------------------------------------------------
# valid files


VALID_RUNS = {
    "spaces": GOOD_RUN + "1 Q0 b 2 1.5 x\n2 Q0 c 1 -1e2 y\n",
    "tabs": "1\tQ0\ta\t1\t2.5\tx\n2\tQ0\tc\t1\t-1e2\ty",
    "crlf-comments-blanks": "# c\r\n1 Q0 a 1 2.5 x\r\n\r\n \r\n2 Q0 c 1 3 y\r\n",
    "trailing-and-extra": "1 Q0 a 1 2.5 x \n1 Q0 b 2 1.5 x more  junk\n",
}


@pytest.mark.parametrize("rank", [True, False], ids=["rank", "no-rank"])
@pytest.mark.parametrize("text", list(VALID_RUNS.values()), ids=list(VALID_RUNS))
def test_valid_run_reads_as_the_careful_reader(
    tmp_path: Path, text: str, rank: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = text.encode()
    path = tmp_path / "a.run"
    path.write_bytes(data)
    expected = trec._careful(data, str(path), trec._RUN, rank=rank)

    def careful(*args: object, **kw: object) -> None:
        raise AssertionError("the careful reader was used")

    monkeypatch.setattr(trec, "_careful", careful)
    got = trec.read_trec_run(path, rank=rank)
    assert_frame_equal(got, expected)
    packed = tmp_path / "a.run.gz"
    packed.write_bytes(gzip.compress(data))
    assert_frame_equal(trec.read_trec_run(packed, rank=rank), expected)


def test_without_rank_is_the_same_frame_less_the_rank(tmp_path: Path) -> None:
    path = tmp_path / "a.run"
    path.write_bytes(VALID_RUNS["spaces"].encode())
    with_rank = trec.read_trec_run(path)
    assert with_rank.columns == ["query_id", "doc_id", "rank", "score", "run_id"]
    assert_frame_equal(trec.read_trec_run(path, rank=False), with_rank.drop("rank"))


# --------------------------------------------------------------------------
# rank=False through the public readers


def test_as_run_rank_false_drops_the_column_of_every_source(tmp_path: Path) -> None:
    trec_file = tmp_path / "bm25.run"
    trec_file.write_text(VALID_RUNS["spaces"])
    csv_file = tmp_path / "dense.csv"
    csv_file.write_text("qid,docno,rank,score\n1,a,1,2.0\n")
    frame = pl.DataFrame({"qid": ["1"], "docno": ["a"], "rank": [1], "sim": [2.0]})
    for source in (trec_file, csv_file, frame, frame.lazy(), [trec_file, csv_file]):
        assert "rank" in as_run(source).collect_schema().names()
        names = as_run(source, rank=False).collect_schema().names()
        assert names == ["run_id", "query_id", "doc_id", "score"]
    assert read_run(trec_file, rank=False).columns == names


def test_as_run_rank_false_does_not_check_the_rank() -> None:
    run = pl.DataFrame({"qid": ["1"], "docno": ["a"], "sim": [2.0], "rank": [[1]]})
    with pytest.raises(SchemaError, match=r"column 'rank' has dtype List"):
        as_run(run)
    assert as_run(run, rank=False).collect().rows() == [("run", "1", "a", 2.0)]


def test_load_reads_the_rank_of_trec_runs_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "bm25.run"
    path.write_text(VALID_RUNS["spaces"])
    loaded = load(read_header(path), "run", rank=False)
    assert isinstance(loaded.data, pl.DataFrame)
    assert "rank" not in loaded.data.columns
    ranked = load(read_header(path), "run").data
    assert isinstance(ranked, pl.DataFrame)
    assert "rank" in ranked.columns


def test_evaluate_reads_the_rank_for_rank_from_column(tmp_path: Path) -> None:
    # the ranks put b first, the scores a: RR differs by where ranks come from
    path = tmp_path / "a.run"
    path.write_text("1 Q0 a 2 2.0 x\n1 Q0 b 1 1.0 x\n")
    qrels = pl.DataFrame({"query_id": ["1"], "doc_id": ["b"], "relevance": [1]})
    by_score = evaluate(path, qrels, ["RR"])["value"].to_list()
    by_rank = evaluate(path, qrels, ["RR"], rank_from="column")["value"].to_list()
    assert (by_score, by_rank) == ([0.5], [1.0])


# --------------------------------------------------------------------------
# the byte scan, window by window

SCANNED = {"tab": b"\t", "cr": b"\r", "hash": b"#", "vt": b"\x0b", "ff": b"\x0c"}
SCANNED |= {"nul": b"\x00"}
SPOTS = {"first": 0, "window-end": _files._WINDOW - 1, "window-start": _files._WINDOW}
SPOTS |= {"deep": 3 * _files._WINDOW + 7, "last": -1}


def _scanned(data: bytes, tmp_path: Path) -> tuple[tokenize.Blanks, tokenize.Blanks]:
    path = tmp_path / "scan.txt"
    path.write_bytes(data)
    with open(path, "rb", buffering=0) as fh:
        return tokenize.Blanks.of(data), tokenize.Blanks.of(fh)


@pytest.mark.parametrize("spot", list(SPOTS))
@pytest.mark.parametrize("byte", list(SCANNED))
def test_the_scan_finds_a_byte_in_any_window(
    tmp_path: Path, byte: str, spot: str
) -> None:
    data = bytearray(b"x" * (4 * _files._WINDOW + 100))
    data[SPOTS[spot]] = SCANNED[byte][0]
    in_memory, from_file = _scanned(bytes(data), tmp_path)
    assert in_memory == from_file
    found = {
        "tab": in_memory.tab,
        "cr": in_memory.cr,
        "hash": in_memory.hash,
        "other": in_memory.other,
    }
    # a lone CR, VT, FF and NUL are "other"
    assert found == {
        "tab": byte == "tab",
        "cr": byte == "cr",
        "hash": byte == "hash",
        "other": byte in {"cr", "vt", "ff", "nul"},
    }
    assert not in_memory.space


def test_a_crlf_across_two_windows_is_no_lone_cr(tmp_path: Path) -> None:
    line = b"1 Q0 a 1 2.5 x"
    data = bytearray(b" " * (2 * _files._WINDOW))
    data[_files._WINDOW - 1 : _files._WINDOW + 1] = b"\r\n"
    data[-2:] = b"\r\n"
    data[: len(line)] = line
    in_memory, from_file = _scanned(bytes(data), tmp_path)
    assert in_memory == from_file
    assert (in_memory.cr, in_memory.other) == (True, False)
    data[_files._WINDOW] = ord("y")  # the CR no longer ends a line
    assert _scanned(bytes(data), tmp_path)[1].other
