r"""The whitespace tokenizer of TREC text: what a line is and what a field is.

Every reader of whitespace-separated text (:mod:`ireval_df.io.trec` and
:mod:`ireval_df.trec_eval`) splits its input here, by one rule, trec_eval's:

* **a line** ends at ``\n``; a ``\r`` right before it belongs to the line
  ending (CRLF), and the last line needs no ``\n``;
* **a field** is a run of bytes that are not C ``isspace``: fields are
  separated by runs of space, tab, carriage return, vertical tab and form
  feed (:data:`BLANKS`), and blanks before the first field or after the last
  are not fields.

Which lines are comments, how many fields a line needs and what a field
means belong to each file format, not to the tokenizer.

:func:`split_fields` is the rule itself, for any text, with no Python loop
over lines. Two accelerators give the same fields, typed, for plain files
only, and return None for anything else (then the caller uses
:func:`split_fields`, which also finds the line to report):

* :func:`split_single` hands files whose fields are separated by exactly
  one space (or exactly one tab) to polars' multithreaded CSV reader;
* :func:`split_native` runs the optional C tokenizer (``_ctrec.c``, built
  by ``pip install`` where a C compiler is), on all cores with the GIL
  released.

Both skip blank lines and lines whose first field starts with ``#``, the
comments of TREC runs, so they serve only formats with that comment rule.
The tests hold both to :func:`split_fields`.
"""

from __future__ import annotations

import io
import mmap
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from ireval_df.io.files import bytes_in

try:
    from ireval_df.io import _ctrec
except ImportError:  # built without a C compiler: polars reads everything
    _ctrec = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from io import FileIO

__all__ = [
    "BLANK",
    "BLANKS",
    "FIELD",
    "SKIPPED",
    "Blanks",
    "fields_of",
    "native_available",
    "split_fields",
    "split_lines",
    "split_native",
    "split_single",
]

#: The bytes that separate fields: C ``isspace`` without the newline.
BLANKS = " \t\r\x0b\x0c"
#: One separating byte, as a regular expression.
BLANK = "[ \t\r\x0b\x0c]"
#: One field, as a regular expression.
FIELD = "[^ \t\r\x0b\x0c]+"
#: Lines that are blank, or whose first field starts with ``#`` (a pattern
#: for ``str.contains``): the lines the accelerators skip.
SKIPPED = f"^{BLANK}*(?:#|$)"
_FIELD_BYTES = re.compile(FIELD.encode())
_BLANK_RUN = f"{BLANK}+"
# a CR not ending a line (old Mac line endings, or a CR between fields)
_LONE_CR_BYTES = re.compile(rb"\r(?!\n)")
# split_single's flags: every field of the line is empty (a blank line),
# some field is empty or missing
_BLANK_LINE, _GAP = "__ireval_blank", "__ireval_gap"


def fields_of(line: bytes) -> list[bytes]:
    r"""Return the fields of one line.

    Examples
    --------
    >>> fields_of(b" 301\tQ0  d1\x0b1 ")
    [b'301', b'Q0', b'd1', b'1']
    """
    return _FIELD_BYTES.findall(line)


def split_lines(
    data: bytes | mmap.mmap, *, encoding: str = "utf-8", path: str | None = None
) -> pl.Series:
    r"""Split text into its lines, without their line endings.

    Parameters
    ----------
    data : bytes or mmap.mmap
        The text.
    encoding : str, default "utf-8"
        How ``data`` is encoded; anything else than UTF-8 is transcoded first.
    path : str, optional
        The file ``data`` maps, for polars to read it itself.

    Returns
    -------
    polars.Series
        ``text``: one string a line, ``""`` for an empty line.

    Raises
    ------
    UnicodeDecodeError
        ``encoding`` is UTF-8 and ``data`` is not.

    Examples
    --------
    >>> split_lines(b"a b\r\n\n#c\nd").to_list()
    ['a b', '', '#c', 'd']
    """
    source: str | io.BytesIO = path if path is not None else io.BytesIO(data)
    if encoding != "utf-8":
        source = io.BytesIO(bytes(data).decode(encoding).encode("utf-8"))
    try:
        frame = pl.read_csv(
            source,
            has_header=False,
            separator="\x00",  # a byte that is never in text: one field a line
            quote_char=None,
            schema={"text": pl.String},
            truncate_ragged_lines=True,
            raise_if_empty=False,
        )
    except pl.exceptions.ComputeError as exc:  # invalid UTF-8
        codec = "utf-8"
        raise UnicodeDecodeError(codec, b"", 0, 1, str(exc)) from None
    return frame.get_column("text").fill_null("")


def _single_spaced(lines: pl.Series) -> pl.Series:
    """Rewrite lines so that single spaces separate their fields, and nothing else.

    Tabs become spaces in one literal pass; only the few lines that then
    still hold other blanks, runs of them, or blanks at either end go
    through the regular expression.
    """
    if lines.str.contains("\t", literal=True).any():
        lines = lines.str.replace_all("\t", " ", literal=True)
    unclean = (
        lines.str.contains_any(["\x0b", "\x0c", "\r", "  "])
        | lines.str.starts_with(" ")
        | lines.str.ends_with(" ")
    )
    if unclean.any():
        rows = unclean.arg_true()
        fixed = lines.gather(rows).str.replace_all(_BLANK_RUN, " ").str.strip_chars(" ")
        lines = lines.scatter(rows, fixed)
    return lines


def split_fields(lines: pl.Series, count: int) -> pl.DataFrame:
    r"""Split lines into their first ``count`` fields and the rest.

    This is the tokenizer's rule, for any text; the accelerators give the
    same fields for the files they take.

    Parameters
    ----------
    lines : polars.Series
        Lines, as :func:`split_lines` returns them.
    count : int
        How many fields to return apart.

    Returns
    -------
    polars.DataFrame
        ``f0`` .. ``f{count-1}``: the fields, null where a line has fewer;
        ``rest``: the fields after them, joined by single spaces, null when
        there are none. A line's field count is the number of non-null
        ``f`` columns, plus more when ``rest`` is not null.

    Examples
    --------
    >>> split_fields(pl.Series([" a\tb  c\x0bd ", "x", "", "p q\r"]), 2).rows()
    [('a', 'b', 'c d'), ('x', None, None), (None, None, None), ('p', 'q', None)]
    """
    names = [f"f{i}" for i in range(count)] + ["rest"]
    line = pl.col("line")
    return (
        _single_spaced(lines)
        .rename("line")
        .to_frame()
        .select(
            pl.when(line != "")
            .then(line)
            .str.splitn(" ", count + 1)
            .struct.rename_fields(names)
            .alias("line")
        )
        .unnest("line")
    )


@dataclass(frozen=True)
class Blanks:
    """Which blanks and control bytes occur in a text (memchr-fast).

    :func:`split_single` reads what it decides from these flags.
    """

    tab: bool
    space: bool
    cr: bool
    hash: bool  # without any '#', no comment handling (it costs 20 %)
    other: bool  # vertical tab, form feed, NUL or a CR not ending a line

    @classmethod
    def of(cls, source: bytes | mmap.mmap | FileIO) -> Blanks:
        """Scan bytes, a map, or a file opened unbuffered, from its start."""
        found = bytes_in(source, (b"\t", b" ", b"\r", b"#", b"\x0b", b"\x0c", b"\x00"))
        cr = b"\r" in found
        return cls(
            tab=b"\t" in found,
            space=b" " in found,
            cr=cr,
            hash=b"#" in found,
            other=bool(found & {b"\x0b", b"\x0c", b"\x00"})
            or (cr and _has_lone_cr(source)),
        )


def _has_lone_cr(source: bytes | mmap.mmap | FileIO) -> bool:
    """Tell whether a CR in ``source`` does not end a line."""
    if isinstance(source, bytes | mmap.mmap):
        return _LONE_CR_BYTES.search(source) is not None
    with mmap.mmap(source.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        return _LONE_CR_BYTES.search(mm) is not None


def split_single(
    source: str | bytes,
    blanks: Blanks,
    schema: Mapping[str, type[pl.DataType]],
    *,
    exact: bool,
    keep: Sequence[str] | None = None,
) -> pl.DataFrame | None:
    r"""Split a file whose fields are separated by single blanks, or return None.

    Splitting on one separator equals splitting on runs of blanks exactly
    when no field comes out empty and no other blank occurs, which
    ``blanks`` and a test for empty fields establish. Anything else (mixed
    tabs and spaces, runs of blanks, indented comments, short lines, a value
    polars cannot parse as its type, invalid UTF-8, no data line) returns
    None.

    Parameters
    ----------
    source : str or bytes
        A file's path (polars reads it itself) or its bytes.
    blanks : Blanks
        The scan of the same text.
    schema : mapping of str to polars type
        The names and types of the fields a line needs, in order.
    exact : bool
        Refuse lines with more fields (else later fields are ignored).
    keep : sequence of str, optional
        The fields returned (all by default). The others are still parsed
        and tested for emptiness: an empty one shifts every later field.

    Returns
    -------
    polars.DataFrame or None
        The ``keep`` fields of every line that is not blank or a comment.

    Examples
    --------
    >>> text = b"1 Q0 a 1 2.5 x\n\n# c\n1 Q0 b 2 1.5 x extra\n"
    >>> schema = dict.fromkeys(["q", "i", "d", "r", "s", "t"], pl.String)
    >>> split_single(text, Blanks.of(text), schema, exact=False, keep=["d"]).rows()
    [('a',), ('b',)]
    >>> split_single(b"1  Q0 a 1 2.5 x\n", Blanks.of(text), schema, exact=False)
    """
    if blanks.other or (blanks.tab and blanks.space):
        return None
    kept = list(schema if keep is None else keep)
    options = {} if exact else {"extra_columns": "ignore"}
    empty = [pl.col(field).is_null() for field in schema]  # or missing
    try:
        frame = (
            pl.scan_csv(
                source,
                separator="\t" if blanks.tab else " ",
                has_header=False,
                quote_char=None,
                comment_prefix="#" if blanks.hash else None,
                schema=dict(schema),
                truncate_ragged_lines=not exact,
                raise_if_empty=False,
                glob=False,
                **options,  # type: ignore[arg-type]  # Literal value in a dict
            )
            .select(
                *kept,
                pl.all_horizontal(empty).alias(_BLANK_LINE),
                pl.any_horizontal(empty).alias(_GAP),
            )
            .collect()
        )
    except (pl.exceptions.PolarsError, OSError):
        return None
    if frame[_BLANK_LINE].any():  # blank lines
        frame = frame.filter(~pl.col(_BLANK_LINE))
    # empty fields (runs of separators, a leading or, before the last field
    # a line needs, trailing one) or missing ones (short lines)
    if frame.height == 0 or frame[_GAP].any():
        return None
    frame = frame.drop(_BLANK_LINE, _GAP)
    strings = [f for f in kept if schema[f] == pl.String]
    if (
        blanks.cr
        and strings
        and frame.select(
            pl.any_horizontal(
                pl.col(f).str.contains("\r", literal=True).any() for f in strings
            )
        ).item()
    ):
        return None
    return frame


def native_available() -> bool:
    """Tell whether the C tokenizer is built here (else :func:`split_native` is None)."""
    return _ctrec is not None


def split_native(
    data: bytes | mmap.mmap,
    kinds: Mapping[str, str],
    *,
    exact: bool,
    threads: int | None = None,
) -> pl.DataFrame | None:
    r"""Split plain text with the C tokenizer, or return None.

    The tokenizer hands polars Arrow columns without a copy (a string field
    with one value on every line, as a run's tag mostly is, comes back as
    that value, which the frame keeps as a scalar column). It takes only
    plain text (ASCII, no NUL, no carriage return inside a line, numbers in
    their simple spellings, the right number of fields, at least one data
    line) and returns None for anything else, as it does where it is not
    built.

    Parameters
    ----------
    data : bytes or mmap.mmap
        The text.
    kinds : mapping of str to str
        Every field a line needs, in order, with what to make of it: ``"s"``
        a string, ``"f"`` a Float64 (``-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?``,
        finite, correctly rounded), ``"u"`` a UInt32 (``[0-9]+``), ``"i"``
        an Int32 (``-?[0-9]+``), ``"x"`` present but not returned.
    exact : bool
        Refuse lines with more fields (else later fields are ignored).
    threads : int, optional
        Threads to split the work over; polars' thread pool size by default.

    Returns
    -------
    polars.DataFrame or None
        The fields not marked ``"x"``, of every line that is not blank or a
        comment.

    Examples
    --------
    >>> kinds = {"q": "s", "i": "x", "d": "s", "r": "u", "s": "f", "t": "s"}
    >>> frame = split_native(b"1 Q0 a 1 2.5 x\n# c\n1 Q0 b 2 1.5 x\n", kinds, exact=False)
    >>> frame is None or frame.rows() == [("1", "a", 1, 2.5, "x"), ("1", "b", 2, 1.5, "x")]
    True
    """
    if _ctrec is None:
        return None
    threads = pl.thread_pool_size() if threads is None else threads
    columns = _ctrec.parse(data, "".join(kinds.values()), exact, threads)
    if columns is None:
        return None
    series: list[pl.Series] = []
    values: dict[str, str] = {}
    rows = 0
    for field, column in zip(kinds, columns, strict=True):
        if isinstance(column, tuple):  # the same string on every line
            values[field], rows = column
        elif column is not None:
            # a Series built from Arrow takes the Arrow field's (empty) name
            chunks = [pl.Series(chunk) for chunk in column]
            series.append(pl.concat(chunks, rechunk=False).alias(field))
    if not series and values:  # nothing else sets the height
        field, value = values.popitem()
        series.append(pl.repeat(value, rows, dtype=pl.String, eager=True).alias(field))
    # a literal stays one value in the frame (a scalar column), not one a row
    frame = pl.DataFrame(series).with_columns(
        pl.lit(value, pl.String).alias(field) for field, value in values.items()
    )
    return frame.select(field for field in kinds if field in frame.columns)
