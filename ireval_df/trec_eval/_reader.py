"""Read trec_eval's input files exactly as trec_eval 10.0 reads them.

This reader is deliberately separate from :mod:`ireval_df.io`: trec_eval is
lenient (``atol``/``atof`` on numbers, its own comment rules) and a drop-in
must accept, and reject, exactly what it does
(``tests/conformance/trec_eval/SPEC.md`` section 1):

* qrels (``qid iter docno rel``): exactly four whitespace-separated fields;
  ``rel`` goes through ``atol`` (``1.7`` is 1, ``abc`` is 0); a line whose
  first byte is ``#`` is a comment; any other line, blank ones included, with
  more or fewer fields is ``Malformed line N`` (N counts non-comment lines).
* run (``qid iter docno rank sim run_id [ignored...]``): at least six fields;
  ``sim`` goes through ``atof`` (``1e-3``, ``inf`` and ``0x10`` parse, junk
  is 0.0); blank lines and lines whose first non-blank byte is ``#`` are
  skipped; the run id is the one of the last line.
* Z-score files (``qid measure mean stddev``): exactly four fields.
* preferences (``-R prefs``: ``qid jg jsg docno rel_level``; ``-R
  qrels_prefs``: ``qid jg docno rel_level``, the sub-group ``"0"``):
  exactly five (four) fields, ``rel_level`` through ``atof``, comments as
  in qrels (:mod:`ireval_df.io.prefs`).

Lines and fields are those of :mod:`ireval_df.io.tokenize`, trec_eval's own:
fields are separated by C ``isspace`` characters (space, tab, CR, VT, FF).
Files are read as bytes. Valid UTF-8 is kept as is; otherwise every byte is
mapped to one character (Latin-1), which keeps byte order for sorting and
gives the same bytes back on output (``Tables.encoding``).

Speed: a plain run is read by the tokenizer's accelerators (the C tokenizer
where it is built, else polars' CSV reader when single blanks separate the
fields), whose rules agree with trec_eval's on every run they take; any
other file by :func:`~ireval_df.io.tokenize.split_fields`. No Python loop
runs over lines.
"""

from __future__ import annotations

import math
import mmap
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import polars as pl

from ireval_df.io.prefs import bad_prefs_line, split_prefs
from ireval_df.io.tokenize import (
    SKIPPED,
    Blanks,
    split_fields,
    split_lines,
    split_native,
    split_single,
)

__all__ = [
    "InputError",
    "Tables",
    "atof",
    "read_prefs",
    "read_qrels",
    "read_run",
    "read_source",
    "read_zscores",
]

#: A run's fields, for the tokenizer's accelerators: what each becomes (the
#: rank is only required, as trec_eval ignores it), and its type in polars.
_RUN_KINDS = {
    "query_id": "s",
    "iter": "x",
    "doc_id": "s",
    "rank": "x",
    "score": "f",
    "run_id": "s",
}
_RUN_SCHEMA: dict[str, type[pl.DataType]] = dict.fromkeys(_RUN_KINDS, pl.String)
_RUN_SCHEMA["score"] = pl.Float64  # a score polars cannot read goes the careful way
_INT64 = (-(2**63), 2**63 - 1)

_DECIMAL = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_HEX = r"^[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
_HEX_RE = re.compile(_HEX)
_INF = r"^[+-]?(?i:inf)"
_NAN = r"^[+-]?(?i:nan)"


class InputError(Exception):
    """An input file trec_eval would reject; ``messages`` go to stderr.

    ``code`` is trec_eval's exit status (2 for input errors).
    """

    def __init__(self, messages: list[str], code: int = 2) -> None:
        super().__init__("".join(messages))
        self.messages = messages
        self.code = code


@dataclass(frozen=True)
class Tables:
    """The parsed qrels and run, with the text encoding both were read in."""

    qrels: pl.DataFrame
    run: pl.DataFrame
    run_id: str
    encoding: str


#: File contents: bytes, or a read-only map of a (large) file.
Data = bytes | mmap.mmap


def read_source(path: str, stdin: IO[Any] | None = None) -> Data:
    """Return the contents of ``path``, or of ``stdin`` when ``path`` starts with ``-``.

    A regular file is mapped rather than copied (polars then reads it from
    its path); other files (pipes) and stdin are read. Raises ``OSError``
    when the file cannot be read. A text ``stdin`` is encoded as UTF-8.
    """
    if path.startswith("-"):
        source = stdin if stdin is not None else sys.stdin.buffer
        data = source.read()
        return data.encode("utf-8") if isinstance(data, str) else bytes(data)
    with Path(path).open("rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return file.read()
        if os.fstat(file.fileno()).st_size == 0:
            return b""
        return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def contains(data: Data, needle: bytes) -> bool:
    r"""Tell whether ``needle`` occurs in ``data`` (``in`` does not search a map).

    Examples
    --------
    >>> contains(b"a\tb", b"\t"), contains(b"ab", b"\t")
    (True, False)
    """
    return data.find(needle) != -1


def atof(values: pl.Series) -> pl.Series:
    """C ``atof`` on strings: the longest numeric prefix, 0.0 when there is none.

    Decimal and exponent forms, ``inf``/``infinity``, ``nan`` and hexadecimal
    floats (``0x1p4``) are recognised, case-insensitively, with a sign. Only
    the values polars cannot cast directly take the slow path.

    Examples
    --------
    >>> atof(pl.Series(["1e-3", "2.5x", "abc", "-inf", "0x10", ".5", "7e"])).to_list()
    [0.001, 2.5, 0.0, -inf, 16.0, 0.5, 7.0]
    """
    fast = values.cast(pl.Float64, strict=False)
    if fast.null_count() == values.null_count():
        return fast.fill_null(0.0)
    failed = values.filter(fast.is_null() & values.is_not_null()).unique()
    text = pl.col("text")
    hexa = text.str.extract(_HEX, 0)
    negative = text.str.starts_with("-")
    slow = (
        failed.rename("text")
        .to_frame()
        .with_columns(
            pl.when(text.str.contains(_INF))
            .then(pl.when(negative).then(-math.inf).otherwise(math.inf))
            .when(text.str.contains(_NAN))
            .then(pl.lit(math.nan))
            .otherwise(text.str.extract(_DECIMAL, 0).cast(pl.Float64, strict=False))
            .fill_null(0.0)
            .alias("value"),
            hexa.alias("hex"),
        )
    )
    hex_values = {h: float.fromhex(h) for h in slow.get_column("hex").drop_nulls()}
    if hex_values:
        slow = slow.with_columns(
            pl.col("hex")
            .replace_strict(hex_values, default=None, return_dtype=pl.Float64)
            .fill_null(pl.col("value"))
            .alias("value")
        )
    mapping = dict(zip(slow.get_column("text"), slow.get_column("value"), strict=True))
    patched = values.replace_strict(mapping, default=None, return_dtype=pl.Float64)
    return fast.fill_null(patched).fill_null(0.0)


def atol(values: pl.Series) -> pl.Series:
    """C ``atol`` on strings: the leading integer (``1.7`` is 1, ``abc`` is 0).

    Out-of-range values saturate as ``strtol`` does.

    Examples
    --------
    >>> atol(pl.Series(["3", "-1", "1.7", "abc", "+2x", "-99999999999999999999"])).to_list()
    [3, -1, 1, 0, 2, -9223372036854775808]
    """
    fast = values.cast(pl.Int64, strict=False)
    if fast.null_count() == values.null_count():
        return fast.fill_null(0)
    digits = pl.col("v").str.extract(r"^[+-]?[0-9]+", 0)
    parsed = digits.cast(pl.Int64, strict=False)
    slow = (
        values.rename("v")
        .to_frame()
        .select(
            pl.when(digits.is_null())
            .then(pl.lit(0, pl.Int64))
            .when(parsed.is_null() & digits.str.starts_with("-"))
            .then(pl.lit(_INT64[0], pl.Int64))
            .when(parsed.is_null())
            .then(pl.lit(_INT64[1], pl.Int64))
            .otherwise(parsed)
        )
        .to_series()
    )
    return fast.fill_null(slow)


def _malformed(where: str, index: int) -> InputError:
    return InputError([f"trec_eval.{where}: Malformed line {index}\n"])


def read_qrels(raw: bytes, encoding: str, *, groups: bool = False) -> pl.DataFrame:
    r"""Parse a qrels file: ``query_id, doc_id, relevance`` (Int64, from ``atol``).

    With ``groups`` (``-R qrels_jg``) the second field is kept as ``group``
    (the judgment group) and a document judged twice in one group is an
    input error, as trec_eval checks it while reading.

    Raises :class:`InputError` (``Malformed line N``) as trec_eval does.

    Examples
    --------
    >>> read_qrels(b"# judged\n1 0 d1 2\n1 0 d2 0.9\n", "utf-8").rows()
    [('1', 'd1', 2), ('1', 'd2', 0)]
    """
    lines = split_lines(raw, encoding=encoding)
    parts = split_fields(lines.filter(~lines.str.starts_with("#")), 4)
    bad = pl.col("f3").is_null() | pl.col("rest").is_not_null()
    flags = parts.select(bad.alias("bad")).get_column("bad")
    if flags.any():
        where = "get_qrels_jg" if groups else "get_qrels"
        raise _malformed(where, int(flags.arg_true()[0]) + 1)
    frame = pl.DataFrame(
        {
            "query_id": parts.get_column("f0"),
            "doc_id": parts.get_column("f2"),
            "relevance": atol(parts.get_column("f3")),
        }
    )
    if not groups:
        return frame
    frame = frame.with_columns(parts.get_column("f1").alias("group"))
    dups = frame.filter(pl.struct("query_id", "group", "doc_id").is_duplicated())
    if dups.height:
        first = dups.sort("query_id", "group", "doc_id").get_column("doc_id")[0]
        msg = [f"trec_eval.get_qrels: duplicate docs {first}\n"]
        raise InputError(msg)
    return frame


def read_prefs(raw: bytes, encoding: str, *, qrels_layout: bool) -> pl.DataFrame:
    r"""Parse a preference file: ``query_id, jg, jsg, doc_id, relevance`` (``atof``).

    ``qrels_layout`` reads a qrels file as preferences (``-R qrels_prefs``:
    the second field is the judgment group, the sub-group is ``"0"``).
    Raises :class:`InputError` (``Malformed line N``) as trec_eval does.

    Examples
    --------
    >>> read_prefs(b"1 u s d1 2\n1 u s d2 x\n", "utf-8", qrels_layout=False).rows()
    [('1', 'u', 's', 'd1', 2.0), ('1', 'u', 's', 'd2', 0.0)]
    """
    layout: Literal["prefs", "qrels_prefs"] = "qrels_prefs" if qrels_layout else "prefs"
    frame, counts = split_prefs(raw, layout, encoding=encoding)
    bad = bad_prefs_line(counts, layout)
    if bad is not None:
        raise _malformed("get_qrels_prefs" if qrels_layout else "get_prefs", bad)
    return frame.select(
        "query_id", "jg", "jsg", "doc_id", atof(frame.get_column("relevance"))
    )


def _plain_run(
    raw: Data, encoding: str, path: str | None
) -> tuple[pl.DataFrame, str] | None:
    """Read a plain run with the tokenizer's accelerators, if one takes it.

    They take UTF-8 text with at least six fields a line and scores polars
    reads as numbers, as ``atof`` does; they skip blank lines and lines
    whose first field starts with ``#``, as trec_eval does. Anything else
    (including every file trec_eval rejects) returns None, for the careful
    reader. ``path`` names the file ``raw`` maps, for polars to read it.
    """
    if encoding != "utf-8":
        return None
    frame = split_native(raw, _RUN_KINDS, exact=False)
    if frame is None:
        source = path if path is not None else bytes(raw)
        keep = ["query_id", "doc_id", "score", "run_id"]
        frame = split_single(
            source, Blanks.of(raw), _RUN_SCHEMA, exact=False, keep=keep
        )
    if frame is None:
        return None
    run_id = frame.get_column("run_id")[-1]
    return frame.select("query_id", "doc_id", "score"), str(run_id)


def read_run(
    raw: Data, encoding: str, path: str | None = None
) -> tuple[pl.DataFrame, str]:
    r"""Parse a run: ``query_id, doc_id, score`` (``atof``) and the last line's run id.

    ``path`` names the file ``raw`` maps, for polars to read it directly.
    Raises :class:`InputError` (``Malformed line N``) as trec_eval does.

    Examples
    --------
    >>> frame, run_id = read_run(b"1 Q0 d1 1 2.5 a\n\n  # skip\n1 Q0 d2 2 x b c\n", "utf-8")
    >>> frame.rows(), run_id
    ([('1', 'd1', 2.5), ('1', 'd2', 0.0)], 'b')
    """
    plain = _plain_run(raw, encoding, path)
    if plain is not None:
        return plain
    lines = split_lines(raw, encoding=encoding, path=path)
    data = lines.filter(~lines.str.contains(SKIPPED))
    if data.len() == 0:
        msg = ["trec_eval.get_results: No results lines in results file\n"]
        raise InputError(msg)
    parts = split_fields(data, 6)
    bad = pl.col("f5").is_null()
    flags = parts.select(bad.alias("bad")).get_column("bad")
    if flags.any():
        where = "get_results"
        raise _malformed(where, int(flags.arg_true()[0]) + 1)
    run_id = parts.get_column("f5")[-1]
    frame = pl.DataFrame(
        {
            "query_id": parts.get_column("f0"),
            "doc_id": parts.get_column("f2"),
            "score": atof(parts.get_column("f4")),
        }
    )
    return frame, str(run_id)


def read_zscores(raw: bytes, encoding: str) -> pl.DataFrame:
    r"""Parse a Z-score file: ``query_id, measure, mean, stddev`` (``atof``).

    Examples
    --------
    >>> read_zscores(b"301 map 0.1 0.2\n", "utf-8").rows()
    [('301', 'map', 0.1, 0.2)]
    """
    parts = split_fields(split_lines(raw, encoding=encoding), 4)
    bad = pl.col("f3").is_null() | pl.col("rest").is_not_null()
    flags = parts.select(bad.alias("bad")).get_column("bad")
    if flags.any():
        where = "get_zscores"
        raise _malformed(where, int(flags.arg_true()[0]) + 1)
    return pl.DataFrame(
        {
            "query_id": parts.get_column("f0"),
            "measure": parts.get_column("f1"),
            "mean": atof(parts.get_column("f2")),
            "stddev": atof(parts.get_column("f3")),
        }
    )
