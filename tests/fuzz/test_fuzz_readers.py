"""Fuzzing every reader: whatever the input, only IrevalError subclasses escape.

TREC text is checked against an oracle of the reading rules (SPEC.md 1 and
``ireval_df/io/trec.py``): a file is either read into exactly the rows the
rules give, or rejected with a FormatError naming the file and the first bad
line (a DataError for NaN scores and repeated judgments). The fast and the
careful reader both meet the oracle, so they agree with each other. Tables
(CSV, TSV, JSON Lines, JSON, Parquet), frames and dicts have no oracle: any
outcome but a canonical frame or an IrevalError is a bug.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ireval_df.errors import DataError, FormatError, IrevalError, IrevalWarning
from ireval_df.io.files import shorten
from ireval_df.schema import read_docs, read_qrels, read_queries, read_run
from ireval_df.schema.lenient import as_lenient

if TYPE_CHECKING:
    from pathlib import Path

# IREVAL_FUZZ_SCALE=20 HYPOTHESIS_PROFILE=dev pytest tests/fuzz: a longer hunt
SCALE = int(os.environ.get("IREVAL_FUZZ_SCALE", "1"))
FUZZ = settings(max_examples=40 * SCALE, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=15 * SCALE, suppress_health_check=[HealthCheck.too_slow])

RUN_SCHEMA = {
    "run_id": pl.String,
    "query_id": pl.String,
    "doc_id": pl.String,
    "score": pl.Float64,
}
QRELS_SCHEMA = {"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32}
KINDS = ["run", "qrels", "queries", "docs"]
READERS = {
    "run": read_run,
    "qrels": read_qrels,
    "queries": read_queries,
    "docs": read_docs,
}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def put(directory: Path, name: str, data: bytes) -> Path:
    path = directory / name
    path.write_bytes(data)
    return path


def read_any(kind: str, path: Any) -> pl.DataFrame | None:
    """Read as ``kind``; None when an IrevalError says why not."""
    reader = READERS[kind]
    # a reader may warn about values it leaves null (an unparsable date ...):
    # fine, as long as it is the library's own warning, never another's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            frame = reader(path)
        except IrevalError:
            return None
    stray = [w for w in caught if not issubclass(w.category, IrevalWarning)]
    assert not stray, [str(w.message) for w in stray]
    assert isinstance(frame, pl.DataFrame)
    return frame


def check_canonical(kind: str, frame: pl.DataFrame | None) -> None:
    if frame is None:
        return
    if kind == "run":
        assert dict(frame.select(list(RUN_SCHEMA)).schema) == RUN_SCHEMA
        assert frame["score"].is_finite().all()
        assert frame.null_count().select(list(RUN_SCHEMA)).sum_horizontal().item() == 0
    elif kind == "qrels":
        assert dict(frame.schema) == QRELS_SCHEMA
        assert frame.null_count().sum_horizontal().item() == 0
        assert not frame.select("query_id", "doc_id").is_duplicated().any()
    elif kind == "queries":
        assert frame.columns[0] == "query_id"
        assert frame.schema["query_id"] == pl.String
        assert not frame["query_id"].is_duplicated().any()
        if "issued_at" in frame.columns:
            assert frame.schema["issued_at"] == pl.Datetime("us")
    else:
        keys = ["query_id", "doc_id"] if "query_id" in frame.columns else ["doc_id"]
        assert frame.columns[: len(keys)] == keys
        assert all(frame.schema[k] == pl.String for k in keys)
        assert frame.select(keys).null_count().sum_horizontal().item() == 0
        assert not frame.select(keys).is_duplicated().any()
        if "published_at" in frame.columns:
            assert frame.schema["published_at"] == pl.Datetime("us")


# --------------------------------------------------------------------------
# TREC text against an oracle of the rules

WS = " \t\r\x0b\x0c"  # C isspace without the newline
IDS = ("301", "1", "q-1", "D1", "d1", "\u00e9t\u00e9", "a#b", "#x", "0")
#: score token -> value (None: not a number, a FormatError)
SCORES: dict[str, float | None] = {
    "2.5": 2.5,
    "1": 1.0,
    "-1.25e2": -125.0,
    "0": 0.0,
    "-0": -0.0,
    ".5": 0.5,
    "+3": 3.0,
    "1.": 1.0,
    "abc": None,
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
    "1e999": float("inf"),
}
#: rank token -> rank (None: not a count, read as null)
RANKS: dict[str, int | None] = {
    "1": 1,
    "2": 2,
    "0": 0,
    "007": 7,
    "x": None,
    "-1": None,
    "1.0": None,
    "4294967296": None,
}
#: grade token -> grade (None: not an integer, a FormatError)
GRADES: dict[str, int | None] = {
    "0": 0,
    "1": 1,
    "2": 2,
    "-1": -1,
    "+2": 2,
    "007": 7,
    "1.7": None,
    "abc": None,
    "2147483648": 2147483648,  # outside Int32: a FormatError too
}
INT32 = (-(2**31), 2**31 - 1)


@dataclass
class Expected:
    """What reading a file must give."""

    rows: list[tuple[Any, ...]] | None = None
    error: type[IrevalError] | None = None
    line: int | None = None  # the line a FormatError names
    text: str = ""


def data_lines(text: str) -> list[tuple[int, str, list[str]]]:
    """(line number, line, fields) of every line that is not blank or a comment."""
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip(WS)
        if not stripped or stripped.startswith("#"):
            continue
        out.append((number, line, re.split(f"[{WS}]+", stripped)))
    return out


def lone_cr(line: str) -> bool:
    """A carriage return inside a line, followed by more data."""
    return re.search(f"\r[^{WS}]", line) is not None


def first(bad: list[tuple[int, str]]) -> Expected:
    number, line = bad[0]
    return Expected(error=FormatError, line=number, text=line)


def oracle_run(text: str) -> Expected:
    lines = data_lines(text)
    if not lines:
        return Expected(error=FormatError)
    crs = [(n, line) for n, line, _ in lines if lone_cr(line)]
    if crs:
        return first(crs)
    short = [(n, line) for n, line, fields in lines if len(fields) < 6]
    if short:
        return first(short)
    scores = [(n, line) for n, line, f in lines if SCORES[f[4]] is None]
    if scores:
        return first(scores)
    rows = [(f[5], f[0], f[2], SCORES[f[4]], RANKS[f[3]]) for _, _, f in lines]
    if any(r[3] != r[3] or r[3] in (float("inf"), float("-inf")) for r in rows):
        return Expected(error=DataError)
    return Expected(rows=rows)


def oracle_qrels(text: str) -> Expected:
    lines = data_lines(text)
    if not lines:
        return Expected(error=FormatError)
    crs = [(n, line) for n, line, _ in lines if lone_cr(line)]
    if crs:
        return first(crs)
    wrong = [(n, line) for n, line, fields in lines if len(fields) != 4]
    if wrong:
        return first(wrong)
    fractions = [(n, line) for n, line, f in lines if GRADES[f[3]] is None]
    if fractions:
        return first(fractions)
    outside = [
        (n, line)
        for n, line, f in lines
        if not INT32[0] <= (GRADES[f[3]] or 0) <= INT32[1]
    ]
    if outside:
        return first(outside)
    rows = [(f[0], f[2], GRADES[f[3]]) for _, _, f in lines]
    if len({(q, d) for q, d, _ in rows}) < len(rows):
        return Expected(error=DataError)
    return Expected(rows=rows)


def oracle_queries(text: str) -> Expected:
    crs = [(n, line) for n, line, _ in data_lines(text) if lone_cr(line)]
    if crs:
        return first(crs)
    rows = []
    for _, line, fields in data_lines(text):
        stripped = line.strip(WS)
        rest = stripped[len(fields[0]) :].strip(WS)
        rows.append((fields[0], rest))
    if not rows:
        return Expected(error=FormatError)
    if len({q for q, _ in rows}) < len(rows):
        return Expected(error=DataError)
    return Expected(rows=rows)


@st.composite
def trec_text(draw: st.DrawFn, kind: str) -> str:
    """A TREC file: mostly well-formed lines in one layout, some broken ones."""
    style = draw(st.sampled_from(["space", "space", "tab", "tab", "mixed"]))
    separators = {
        "space": [" "],
        "tab": ["\t"],
        "mixed": [" ", "\t", "  ", " \t", "\x0b", "\r"],
    }[style]
    width = {"run": 6, "qrels": 4, "queries": 2}[kind]
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        shape = draw(
            st.sampled_from(["data"] * 6 + ["short", "long", "blank", "comment"])
        )
        if shape == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t", "\r"])))
            continue
        if shape == "comment":
            lines.append(
                draw(st.sampled_from(["#", "# note", " # indented", "#1 Q0 a 1 2 t"]))
            )
            continue
        n = {
            "data": width,
            "short": draw(st.integers(1, width - 1)) if width > 1 else 1,
            "long": width + draw(st.integers(1, 3)),
        }[shape]
        fields = []
        for i in range(n):
            if kind == "run" and i == 3:
                fields.append(draw(st.sampled_from(sorted(RANKS))))
            elif kind == "run" and i == 4:
                fields.append(draw(st.sampled_from(sorted(SCORES))))
            elif kind == "qrels" and i == 3:
                fields.append(draw(st.sampled_from(sorted(GRADES))))
            elif i == 1 and kind != "queries":
                fields.append(draw(st.sampled_from(["Q0", "0", "x"])))
            else:
                fields.append(draw(st.sampled_from(IDS)))
        text = fields[0]
        for field in fields[1:]:
            text += draw(st.sampled_from(separators)) + field
        if style == "mixed":
            text = draw(st.sampled_from(["", " ", "\t"])) + text
            text += draw(st.sampled_from(["", " ", "\t", "\r"]))
        lines.append(text)
    ending = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    body = ending.join(lines)
    if draw(st.booleans()):
        body += ending
    return body


def check_against(expected: Expected, kind: str, path: Path) -> None:
    reader = {"run": read_run, "qrels": read_qrels, "queries": read_queries}[kind]
    error: IrevalError | None = None
    try:
        frame = reader(path)
    except IrevalError as exc:
        error = exc
    if error is not None:
        message = str(error)
        assert expected.error is not None, f"unexpected {error!r}"
        assert isinstance(error, expected.error), message
        if expected.line is not None:
            assert f"{path}, line {expected.line}:" in message
            text = expected.text
            quoted = {shorten(text), shorten(text.removesuffix("\r"))}
            assert any(q in message for q in quoted), (quoted, message)
        return
    assert expected.error is None, f"expected a {expected.error.__name__}"
    columns = {
        "run": ["run_id", "query_id", "doc_id", "score", "rank"],
        "qrels": ["query_id", "doc_id", "relevance"],
        "queries": ["query_id", "text"],
    }[kind]
    assert frame.select(columns).rows() == expected.rows


@FUZZ
@given(text=trec_text("run"), gz=st.booleans(), bom=st.booleans())
@example(text="1 Q0 a 1 2 t\r1 Q0 b 2 1 t\n", gz=False, bom=False)  # CR line ends
@example(text="\n\n1 Q0 a\n", gz=False, bom=False)  # line numbers count blanks
def test_trec_run_follows_the_reading_rules(
    workdir: Path, text: str, gz: bool, bom: bool
) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    path = put(
        workdir, "fuzz.run" + (".gz" if gz else ""), gzip.compress(data) if gz else data
    )
    check_against(oracle_run(text), "run", path)


@FUZZ
@given(text=trec_text("qrels"), gz=st.booleans(), bom=st.booleans())
@example(text="1 0 a 1\r1 0 b 1\n", gz=False, bom=False)
def test_trec_qrels_follow_the_reading_rules(
    workdir: Path, text: str, gz: bool, bom: bool
) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    path = put(
        workdir,
        "fuzz.qrels" + (".gz" if gz else ""),
        gzip.compress(data) if gz else data,
    )
    check_against(oracle_qrels(text), "qrels", path)


@FEW
@given(text=trec_text("queries"))
def test_trec_queries_follow_the_reading_rules(workdir: Path, text: str) -> None:
    path = put(workdir, "fuzz-topics.txt", text.encode())
    check_against(oracle_queries(text), "queries", path)


# --------------------------------------------------------------------------
# garbage: random text and bytes, corrupt gzip, in every format

NAMES = (
    "a.run",
    "a.txt",
    "a.csv",
    "a.tsv",
    "a.jsonl",
    "a.json",
    "a.parquet",
    "a.run.gz",
    "a.csv.gz",
)


@FUZZ
@given(
    data=st.binary(max_size=300),
    name=st.sampled_from(NAMES),
    kind=st.sampled_from(KINDS),
)
def test_random_bytes_in_every_format(
    workdir: Path, data: bytes, name: str, kind: str
) -> None:
    path = put(workdir, name, data)
    check_canonical(kind, read_any(kind, path))


ALPHABET = st.sampled_from(
    list("0123456789 \t\n\r,.-+eE#\"'{}[]:qdQ")
    + ["nan", "\u00e9", "\ufeff", "\x00", "true", "null"]
)


@FUZZ
@given(
    text=st.lists(ALPHABET, max_size=120).map("".join),
    name=st.sampled_from(NAMES[:6]),
    kind=st.sampled_from(KINDS),
)
def test_random_text_in_every_text_format(
    workdir: Path, text: str, name: str, kind: str
) -> None:
    path = put(workdir, name, text.encode())
    check_canonical(kind, read_any(kind, path))


@FEW
@given(cut=st.integers(0, 200), flip=st.integers(0, 10_000))
def test_corrupt_gzip(workdir: Path, cut: int, flip: int) -> None:
    data = bytearray(gzip.compress(b"1 Q0 a 1 2.5 t\n1 Q0 b 2 1.5 t\n" * 20))
    data[flip % len(data)] ^= 0xFF
    path = put(workdir, "r.run.gz", bytes(data[: len(data) - cut]))
    frame = read_any("run", path)
    if frame is not None:  # the flip may hit a byte gzip does not check
        check_canonical("run", frame)


# --------------------------------------------------------------------------
# tables with headers: CSV, TSV, JSON Lines, JSON

HEADER = (
    "qid",
    "query_id",
    "docno",
    "doc_id",
    "score",
    "sim",
    "relevance",
    "label",
    "rank",
    "tag",
    "run_id",
    "published_at",
    "issued_at",
    "x",
    "",
)
CELLS = (
    "1",
    "001",
    "q1",
    "d1",
    "2.5",
    "-1",
    "1.7",
    "nan",
    "inf",
    "",
    "abc",
    '"a,b"',
    "\u00e9",
    "true",
    "1e400",
    "9223372036854775808",
    "2024-01-31",
    "2024-01-31T12:00:00+02:00",
)


@st.composite
def delimited(draw: st.DrawFn, separator: str) -> str:
    header = draw(st.lists(st.sampled_from(HEADER), min_size=1, max_size=6))
    rows = [
        draw(st.lists(st.sampled_from(CELLS), min_size=0, max_size=len(header) + 1))
        for _ in range(draw(st.integers(0, 5)))
    ]
    return "\n".join(separator.join(r) for r in [header, *rows]) + draw(
        st.sampled_from(["", "\n", "\r\n"])
    )


@FUZZ
@given(
    text=delimited(","),
    kind=st.sampled_from(KINDS),
    gz=st.booleans(),
)
def test_csv(workdir: Path, text: str, kind: str, gz: bool) -> None:
    data = text.encode()
    path = put(
        workdir, "t.csv" + (".gz" if gz else ""), gzip.compress(data) if gz else data
    )
    check_canonical(kind, read_any(kind, path))


@FUZZ
@given(text=delimited("\t"), kind=st.sampled_from(KINDS))
def test_tsv(workdir: Path, text: str, kind: str) -> None:
    check_canonical(kind, read_any(kind, put(workdir, "t.tsv", text.encode())))


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    st.sampled_from(["1", "001", "q1", "d1", "2.5", "nan", ""]),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(HEADER), inner, max_size=3)
    ),
    max_leaves=8,
)
RECORDS = st.dictionaries(st.sampled_from(HEADER), JSON_VALUES, max_size=6)


@FUZZ
@given(
    lines=st.lists(
        st.one_of(
            RECORDS.map(json.dumps), JSON_VALUES.map(json.dumps), st.just("{broken")
        ),
        max_size=5,
    ),
    kind=st.sampled_from(KINDS),
)
def test_json_lines(workdir: Path, lines: list[str], kind: str) -> None:
    path = put(workdir, "t.jsonl", "\n".join(lines).encode())
    check_canonical(kind, read_any(kind, path))


@FUZZ
@given(
    value=st.one_of(
        st.lists(RECORDS, max_size=4),
        JSON_VALUES,
        st.dictionaries(
            st.sampled_from(["q1", "2", ""]),
            st.dictionaries(st.sampled_from(["d1", "3"]), JSON_VALUES, max_size=3),
            max_size=3,
        ),
    ),
    kind=st.sampled_from(KINDS),
)
def test_json(workdir: Path, value: Any, kind: str) -> None:
    path = put(workdir, "t.json", json.dumps(value).encode())
    check_canonical(kind, read_any(kind, path))


# --------------------------------------------------------------------------
# frames, Parquet files, dicts

DTYPES = [
    pl.String,
    pl.Int64,
    pl.Int8,
    pl.UInt64,
    pl.Float64,
    pl.Float32,
    pl.Boolean,
    pl.Null,
    pl.Categorical,
    pl.Decimal(10, 2),
    pl.List(pl.Int64),
    pl.Date,
    pl.Binary,
]
NAMES_OF_COLUMNS = (
    "qid",
    "query_id",
    "docno",
    "doc_id",
    "score",
    "relevance",
    "label",
    "rank",
    "run_id",
    "text",
    "published_at",
    "issued_at",
)
VALUES = {
    pl.String: st.sampled_from(["1", "001", "q1", "1.5", "nan", "", "\u00e9"]),
    pl.Int64: st.integers(-(2**63), 2**63 - 1),
    pl.Int8: st.integers(-128, 127),
    pl.UInt64: st.integers(0, 2**64 - 1),
    pl.Float64: st.floats(),
    pl.Float32: st.floats(width=32),
    pl.Boolean: st.booleans(),
}


@st.composite
def frames(draw: st.DrawFn) -> pl.DataFrame:
    names = draw(
        st.lists(st.sampled_from(NAMES_OF_COLUMNS), min_size=1, max_size=5, unique=True)
    )
    height = draw(st.integers(0, 5))
    columns = {}
    for name in names:
        dtype = draw(st.sampled_from(DTYPES))
        strategy = VALUES.get(dtype)
        if strategy is None:
            series = pl.Series(name, [None] * height, dtype=dtype)
        else:
            values = draw(
                st.lists(
                    st.one_of(st.none(), strategy), min_size=height, max_size=height
                )
            )
            series = pl.Series(name, values, dtype=dtype, strict=False)
        columns[name] = series
    return pl.DataFrame(list(columns.values()))


@FUZZ
@given(
    frame=frames(),
    kind=st.sampled_from(KINDS),
    lazy=st.booleans(),
)
def test_random_frames(frame: pl.DataFrame, kind: str, lazy: bool) -> None:
    source = frame.lazy() if lazy else frame
    check_canonical(kind, read_any(kind, source))
    try:
        as_lenient(source, kind)  # type: ignore[arg-type]
    except IrevalError:
        pass


@FEW
@given(
    frame=frames(),
    kind=st.sampled_from(KINDS),
    cut=st.integers(0, 60),
    flip=st.integers(0, 10_000),
    corrupt=st.booleans(),
)
def test_random_and_corrupt_parquet(
    workdir: Path, frame: pl.DataFrame, kind: str, cut: int, flip: int, corrupt: bool
) -> None:
    buffer = io.BytesIO()
    try:
        frame.write_parquet(buffer)
    except pl.exceptions.PolarsError:  # a dtype Parquet cannot hold
        return
    data = bytearray(buffer.getvalue())
    if corrupt:
        data[flip % len(data)] ^= 0x5A
        data = data[: len(data) - cut]
    check_canonical(kind, read_any(kind, put(workdir, "t.parquet", bytes(data))))


@FUZZ
@given(
    value=st.dictionaries(
        st.one_of(st.sampled_from(["q1", "1", ""]), st.integers(), st.none()),
        st.one_of(
            st.dictionaries(
                st.one_of(st.sampled_from(["d1", "d2"]), st.integers(), st.floats()),
                JSON_VALUES,
                max_size=3,
            ),
            JSON_SCALARS,
        ),
        max_size=3,
    ),
    kind=st.sampled_from(["run", "qrels"]),
)
def test_dict_of_dicts(value: dict[Any, Any], kind: str) -> None:
    check_canonical(kind, read_any(kind, value))


@FEW
@given(frame=frames())
def test_pandas_frames(frame: pl.DataFrame) -> None:
    pd = pytest.importorskip("pandas")
    try:
        pandas_frame = frame.to_pandas()
    except Exception:  # a dtype pandas cannot hold
        return
    mixed = pandas_frame.copy()
    if len(mixed) and len(mixed.columns):
        mixed[mixed.columns[0]] = pd.Series(
            [1, "a", None, 2.5, b"x"][: len(mixed)], dtype=object
        )
    for source in (pandas_frame, mixed):
        for kind in KINDS:
            check_canonical(kind, read_any(kind, source))
