"""TREC text files: runs, qrels and simple query lists.

The reading rules are those of trec_eval 10.0
(``tests/conformance/trec_eval/SPEC.md`` section 1), with
three deliberate differences: relevance must be an integer (trec_eval's
``atol`` turns ``1.7`` into 1 and ``abc`` into 0 silently), scores must be
numbers (``atof`` turns junk into 0.0), and a carriage return inside a line
is refused (trec_eval reads it as a blank, so a file with old Mac line
endings is one line and a run keeps only its first row); each is a
:class:`FormatError` naming the line here. Qrels comment lines are accepted
anywhere.

Lines and fields are those of :mod:`ireval_df.io.tokenize`. Its
accelerators read plain files (the C tokenizer where it is built, else
polars' CSV reader when single blanks separate the fields); whenever they
cannot vouch for a file, a careful reader splits every line with the
tokenizer's rule, keeping line numbers, so that every malformed line is
reported precisely. All give the same frame for the same valid file.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import FormatError
from ireval_df.io.files import (
    check_text,
    compression_of,
    display,
    file_error,
    line_error,
    read_bytes,
)
from ireval_df.io.tokenize import (
    BLANK,
    BLANKS,
    FIELD,
    SKIPPED,
    Blanks,
    fields_of,
    native_available,
    split_fields,
    split_lines,
    split_native,
    split_single,
)

if TYPE_CHECKING:
    from ireval_df._utils.typing import PathLike

__all__ = [
    "read_trec_qrels",
    "read_trec_queries",
    "read_trec_run",
    "trec_run_id_of_last_line",
]

# A carriage return followed by more data on the same line: old Mac (CR-only)
# line endings, which would otherwise glue every line into one.
_LONE_CR = f"\r[^{BLANKS}]"
_INT32 = (-(2**31), 2**31 - 1)
# the C tokenizer's letter for each field it converts; other kept fields are
# strings ("s"), fields it only checks for are "x"
_KINDS = {"score": "f", "rank": "u", "relevance": "i"}


@dataclass(frozen=True)
class _Layout:
    """The fields of one kind of TREC line."""

    kind: str
    fields: tuple[str, ...]
    exact: bool
    spelled: str

    @property
    def expected(self) -> str:
        amount = "exactly" if self.exact else "at least"
        return (
            f"expected {amount} {len(self.fields)} whitespace-separated fields "
            f"({self.spelled})"
        )


_RUN = _Layout(
    "run",
    ("query_id", "iter", "doc_id", "rank", "score", "run_id"),
    exact=False,
    spelled="qid Q0 docno rank score tag",
)
_QRELS = _Layout(
    "qrels",
    ("query_id", "iter", "doc_id", "relevance"),
    exact=True,
    spelled="qid iter docno relevance",
)
#: TREC diversity qrels (ndeval's input): the second field names the intent
#: (subtopic) the line judges, where other qrels have an ignored iteration
_QRELS_INTENTS = _Layout(
    "qrels",
    ("query_id", "intent", "doc_id", "relevance"),
    exact=True,
    spelled="qid subtopic docno relevance",
)


def read_trec_run(path: PathLike, *, rank: bool = True) -> pl.DataFrame:
    r"""Read a TREC run file (``qid Q0 docno rank score tag`` per line).

    Parameters
    ----------
    path : str or pathlib.Path
        The file; compressed files (gzip, bzip2, xz, zstd) are recognised by
        content.
    rank : bool, default True
        Return the ``rank`` column; False leaves it out (trec_eval ignores
        it too). The field must be there either way.

    Returns
    -------
    polars.DataFrame
        ``query_id``, ``doc_id`` (String), ``rank`` (UInt32, unless
        ``rank=False``), ``score`` (Float64), ``run_id`` (String, the tag of
        each line), in file order. A ``rank`` that is not a non-negative
        integer becomes null (trec_eval ignores the column).

    Raises
    ------
    FormatError
        Missing or unreadable file, empty file, a line with fewer than six
        fields, a score that is not a number, bytes that are not UTF-8.

    Notes
    -----
    Fields are separated by any whitespace; blank lines and lines whose first
    non-blank character is ``#`` are skipped; fields after the sixth are
    ignored. Each line keeps its own tag (trec_eval uses the tag of the last
    line for the whole file: see :func:`trec_run_id_of_last_line`).

    Examples
    --------
    >>> path = getfixture("tmp_path") / "bm25.run"
    >>> _ = path.write_text("301 Q0 FR940104-0-00001 1 12.5 bm25\n")
    >>> read_trec_run(path).rows()
    [('301', 'FR940104-0-00001', 1, 12.5, 'bm25')]
    >>> read_trec_run(path, rank=False).rows()
    [('301', 'FR940104-0-00001', 12.5, 'bm25')]
    """
    return _read(path, _RUN, rank=rank)


def read_trec_qrels(
    path: PathLike, *, lenient: bool = False, intents: bool = False
) -> pl.DataFrame:
    r"""Read a TREC qrels file (``qid iter docno relevance`` per line).

    Parameters
    ----------
    path : str or pathlib.Path
        The file; compressed files (gzip, bzip2, xz, zstd) are recognised by
        content.
    lenient : bool, default False
        Read grades as Float64 and keep fractional ones (``1.7``), for
        :func:`ireval_df.validate` to report; text that is not a finite
        number is still an error.
    intents : bool, default False
        Read the second field as the intent (subtopic) the line judges, as
        ndeval reads TREC diversity qrels (``qid subtopic docno relevance``),
        rather than ignore it as trec_eval does.

    Returns
    -------
    polars.DataFrame
        ``query_id``, ``doc_id`` (String), ``relevance`` (Int32; Float64 when
        ``lenient``), in file order; with ``intents``, ``intent`` (String)
        after them. Negative grades are kept: they mean "pooled, not judged".

    Raises
    ------
    FormatError
        A line without exactly four fields, a relevance that is not an
        integer (``1.7``, ``abc``), an unreadable or empty file.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "qrels.txt"
    >>> _ = path.write_text("# judged by NIST\n301 0 FR940104-0-00001 2\n")
    >>> read_trec_qrels(path).rows()
    [('301', 'FR940104-0-00001', 2)]
    >>> read_trec_qrels(path, intents=True).rows()
    [('301', 'FR940104-0-00001', 2, '0')]
    """
    return _read(path, _QRELS_INTENTS if intents else _QRELS, lenient=lenient)


def read_trec_queries(path: PathLike) -> pl.DataFrame:
    r"""Read a plain query list: a query id, whitespace, the query text.

    This is the layout of MS MARCO ``queries.tsv`` and of most
    ``topics.txt`` files. Blank lines and ``#`` comments are skipped.

    Parameters
    ----------
    path : str or pathlib.Path
        The file; compressed files (gzip, bzip2, xz, zstd) are recognised by
        content.

    Returns
    -------
    polars.DataFrame
        ``query_id`` and ``text`` (String; empty when a line has only an id).

    Examples
    --------
    >>> path = getfixture("tmp_path") / "topics.txt"
    >>> _ = path.write_text("301\tinternational organized crime\n")
    >>> read_trec_queries(path).rows()
    [('301', 'international organized crime')]
    """
    data = read_bytes(path)
    name = display(path)
    lines = _lines(data, name)
    # the text after the id is kept as written, blanks inside it included
    pattern = f"^{BLANK}*(?P<query_id>{FIELD})(?:{BLANK}+(?P<text>.*?))?{BLANK}*$"
    lines = lines.filter(~pl.col("text").str.contains(SKIPPED))
    _refuse_lone_cr(lines, name)
    parsed = (
        lines.lazy()
        .select(pl.col("text").str.extract_groups(pattern).alias("fields"))
        .unnest("fields")
        .with_columns(pl.col("text").fill_null(""))
        .collect()
    )
    if parsed.height == 0:
        raise _no_data(name, "a query id and the query text")
    return parsed


def trec_run_id_of_last_line(path: PathLike) -> str:
    r"""Return the tag of the last run line, which trec_eval uses for a file.

    Parameters
    ----------
    path : str or pathlib.Path
        A TREC run file, possibly compressed (gzip, bzip2, xz, zstd).

    Returns
    -------
    str
        The sixth field of the last line that is neither blank nor a ``#``
        comment.

    Raises
    ------
    FormatError
        The file has no data line, or its last one has fewer than six fields.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "two.run"
    >>> _ = path.write_text("1 Q0 a 1 2.0 first\n1 Q0 b 2 1.0 second\n# end\n")
    >>> trec_run_id_of_last_line(path)
    'second'
    """
    data = read_bytes(path)
    name = display(path)
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end) + 1
        line = data[start:end]
        end = start - 1
        fields = fields_of(line)
        if not fields or fields[0].startswith(b"#"):
            continue
        text = line.rstrip(b"\r").decode("utf-8", errors="replace")
        if len(fields) < len(_RUN.fields):
            number = data.count(b"\n", 0, start) + 1
            problem = f"{_RUN.expected}, found {len(fields)}"
            raise line_error(name, number, text, problem)
        try:
            return fields[5].decode("utf-8")
        except UnicodeDecodeError as exc:
            number = data.count(b"\n", 0, start) + 1
            problem = "the tag is not valid UTF-8 text; convert the file to UTF-8"
            raise line_error(name, number, text, problem) from exc
    raise _no_data(name, _RUN.spelled)


# --------------------------------------------------------------------------
# reading


def _read(
    path: PathLike, layout: _Layout, *, lenient: bool = False, rank: bool = True
) -> pl.DataFrame:
    """Read with the fastest reader that can vouch for the file."""
    name = display(path)
    data: bytes | None = None
    try:
        with open(path, "rb", buffering=0) as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                msg = f"{name} is empty"
                raise FormatError(msg)
            compressed = compression_of(fh.read(6)) is not None
            frame = None
            if not compressed and native_available():
                with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                    frame = _native(mm, layout, rank=rank)
            flags = None if compressed or frame is not None else Blanks.of(fh)
    except OSError as exc:
        raise file_error(path, exc) from exc
    if frame is not None:
        return _finish(frame, layout, lenient=lenient, rank=rank)
    source: str | bytes = os.fspath(path)
    if flags is None:  # compressed: decompress once, for every reader
        data = read_bytes(path)
        frame = _native(data, layout, rank=rank)
        if frame is not None:
            return _finish(frame, layout, lenient=lenient, rank=rank)
        flags = Blanks.of(data)
        source = data
    frame = _fast(source, flags, layout, rank=rank)
    if frame is None:
        raw = read_bytes(path) if data is None else data
        return _careful(raw, name, layout, lenient=lenient, rank=rank)
    return _finish(frame, layout, lenient=lenient, rank=rank)


def _native(
    data: bytes | mmap.mmap,
    layout: _Layout,
    *,
    rank: bool = True,
    threads: int | None = None,
) -> pl.DataFrame | None:
    """Read plain text with the C tokenizer (:func:`split_native`), or return None.

    Anything it does not take is still read, and every problem reported,
    by the Python readers below it.
    """
    kept = _kept(layout, rank=rank)
    kinds = {
        field: _KINDS.get(field, "s") if field in kept else "x"
        for field in layout.fields
    }
    return split_native(data, kinds, exact=layout.exact, threads=threads)


def _fast(
    source: str | bytes, flags: Blanks, layout: _Layout, *, rank: bool = True
) -> pl.DataFrame | None:
    """Read a file split by single blanks (:func:`split_single`), or return None.

    The fields the caller does not want (``iter``; ``rank`` when ``rank`` is
    False) are parsed and tested for emptiness, never kept. Skipping them
    outright would be unsafe: an empty one shifts every later field
    (``q Q0 d  1.5 tag`` has five fields for trec_eval, not a null rank), and
    only that test sees it. A byte search for doubled separators could stand
    in for it, but a two-byte ``find`` over a file full of separators runs
    at about 1 GB/s on one thread, slower than polars parsing both fields.
    Qrels need every field parsed anyway: polars refuses a fifth field only
    when every column is read.
    """
    # ranks and grades parse as integers here (a rank like "1.0" sends the
    # file to the careful reader, which reads it as trec_eval would), kept or
    # not: an integer parses faster than a string is stored. iter, only
    # tested for emptiness, stays a string: parsed as a category, each value
    # is looked up in polars' global map, which costs more than the string
    typed: dict[str, type[pl.DataType]] = {
        "score": pl.Float64,
        "rank": pl.Int64,
        "relevance": pl.Int64,
    }
    schema = {field: typed.get(field, pl.String) for field in layout.fields}
    kept = _kept(layout, rank=rank)
    frame = split_single(source, flags, schema, exact=layout.exact, keep=kept)
    if frame is None:
        return None
    if "relevance" in schema and not _in_int32(frame["relevance"]):
        return None
    return frame


def _kept(layout: _Layout, *, rank: bool) -> list[str]:
    """Return the fields of ``layout`` that the frame keeps."""
    dropped = {"iter"} if rank else {"iter", "rank"}
    return [field for field in layout.fields if field not in dropped]


def _in_int32(values: pl.Series) -> bool:
    """Tell whether integer ``values`` all fit in an Int32."""
    low, high = values.min(), values.max()
    return (
        isinstance(low, int)
        and isinstance(high, int)
        and _INT32[0] <= low
        and high <= _INT32[1]
    )


def _lines(data: bytes, name: str) -> pl.DataFrame:
    """Split checked UTF-8 bytes into lines: ``line`` (1-based), ``text``."""
    check_text(data, name)
    try:
        text = split_lines(data)
    except UnicodeDecodeError as exc:  # pragma: no cover - checked above
        msg = f"{name}: could not be read as text ({exc})"
        raise FormatError(msg) from exc
    return text.to_frame().with_row_index("line", offset=1)


def _careful(
    data: bytes, name: str, layout: _Layout, *, lenient: bool = False, rank: bool = True
) -> pl.DataFrame:
    """Split every line with the tokenizer's rule and report the first bad one."""
    lines = _lines(data, name)
    if layout is _RUN:
        field, value = "score", pl.col("score").cast(pl.Float64, strict=False)
        problem = "is not a number"
    elif lenient:
        field, value = "relevance", pl.col("relevance").cast(pl.Float64, strict=False)
        value = pl.when(value.is_finite()).then(value)
        problem = "is not a finite number"
    else:  # a whole number, also written as a float ("1.0"), as other readers take
        number = pl.col("relevance").cast(pl.Float64, strict=False)
        whole = number.is_finite() & (number == number.floor())
        field, value = "relevance", pl.when(whole).then(number).cast(pl.Int64)
        problem = "is not a whole number (relevance grades are integers)"
    lines = lines.filter(~pl.col("text").str.contains(SKIPPED))
    _refuse_lone_cr(lines, name)
    if lines.height == 0:
        raise _no_data(name, layout.spelled)
    count = len(layout.fields)
    names = {f"f{i}": field for i, field in enumerate(layout.fields)}
    fields = split_fields(lines.get_column("text"), count).rename(names)
    parsed = pl.concat([lines, fields], how="horizontal")
    wrong = pl.col(layout.fields[-1]).is_null()
    if layout.exact:
        wrong = wrong | pl.col("rest").is_not_null()
    malformed = parsed.filter(wrong)
    if malformed.height:
        line, text = malformed.row(0)[:2]
        found = len(fields_of(text.encode()))
        raise _more(
            line_error(name, line, text, f"{layout.expected}, found {found}"),
            malformed.height - 1,
            "malformed",
        )
    parsed = parsed.with_columns(value.alias("__ireval_value"))
    if field == "relevance" and parsed["__ireval_value"].null_count() == 0:
        value = pl.col("__ireval_value")
        parsed = parsed.with_columns(pl.when(value.is_between(*_INT32)).then(value))
        problem = "is outside the Int32 range"
    if parsed["__ireval_value"].null_count():
        bad = parsed.filter(pl.col("__ireval_value").is_null())
        row = bad.row(0, named=True)
        problem = f"{field} {row[field]!r} {problem}"
        error = line_error(name, row["line"], row["text"], problem)
        raise _more(error, bad.height - 1, "such")
    parsed = parsed.with_columns(pl.col("__ireval_value").alias(field))
    return _finish(parsed, layout, lenient=lenient, rank=rank)


def _refuse_lone_cr(lines: pl.DataFrame, name: str) -> None:
    r"""Reject data lines with a carriage return inside (CR-only line endings).

    trec_eval reads ``\r`` as a blank, so a file with old Mac line endings is
    one long line whose fields after the sixth are ignored: every row but the
    first would be lost without a word.
    """
    bad = lines.filter(pl.col("text").str.contains(_LONE_CR))
    if bad.height:
        line, text = bad.row(0)[:2]
        problem = (
            "a carriage return (\\r) inside the line is followed by more data; "
            "the file may use old Mac (CR-only) line endings: convert them to "
            "\\n, e.g. tr '\\r' '\\n'"
        )
        raise _more(line_error(name, line, text, problem), bad.height - 1, "such")


def _finish(
    frame: pl.DataFrame, layout: _Layout, *, lenient: bool = False, rank: bool = True
) -> pl.DataFrame:
    """Select and type the canonical columns of a parsed file."""
    if layout is _RUN:
        ranks = [pl.col("rank").cast(pl.UInt32, strict=False)] if rank else []
        return frame.select(
            "query_id",
            "doc_id",
            *ranks,
            pl.col("score").cast(pl.Float64),
            "run_id",
        )
    grade = pl.Float64 if lenient else pl.Int32
    intent = ["intent"] if "intent" in layout.fields else []
    return frame.select("query_id", "doc_id", pl.col("relevance").cast(grade), *intent)


def _more(error: FormatError, others: int, adjective: str) -> FormatError:
    """Add how many more lines share the problem to a line error."""
    if others <= 0:
        return error
    plural = "line" if others == 1 else "lines"
    return FormatError(f"{error}\n  ({others} more {adjective} {plural} after it)")


def _no_data(name: str, spelled: str) -> FormatError:
    return FormatError(
        f"{name} has no data lines, only blank lines and # comments; "
        f"expected lines of the form '{spelled}'"
    )
