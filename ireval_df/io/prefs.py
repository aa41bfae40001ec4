"""Preference judgment files: trec_eval's ``-R prefs`` and ``-R qrels_prefs`` layouts.

``prefs``: ``qid jg jsg docno rel_level``, five whitespace-separated fields;
``qrels_prefs``: a qrels file, ``qid jg docno rel_level``, read as
preferences with one sub-group (``"0"``) per judgment group (the qrels'
second field). A line whose first byte is ``#`` is a comment; any other
line, blank ones included, with another number of fields is malformed.
Fields are split as trec_eval splits them (:mod:`ireval_df.io.tokenize`).
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from ireval_df.io.tokenize import split_fields, split_lines

__all__ = ["FIELDS", "PrefsLayout", "bad_prefs_line", "split_prefs"]

PrefsLayout = Literal["prefs", "qrels_prefs"]
#: The fields of each layout, in file order.
FIELDS: dict[str, tuple[str, ...]] = {
    "prefs": ("query_id", "jg", "jsg", "doc_id", "relevance"),
    "qrels_prefs": ("query_id", "jg", "doc_id", "relevance"),
}


def split_prefs(
    raw: bytes, layout: PrefsLayout, *, encoding: str = "utf-8"
) -> tuple[pl.DataFrame, pl.Series]:
    r"""Split a preference file into its fields (strings), comments left out.

    Returns the frame ``query_id, jg, jsg, doc_id, relevance`` (``jsg`` is
    ``"0"`` for ``qrels_prefs``; ``relevance`` still text) and, per data
    line, its field count (the line is malformed unless it is the layout's)
    and its number in the file (``line``, from 1).
    Raises ``UnicodeDecodeError`` when ``encoding`` is UTF-8 and ``raw`` is
    not.

    Examples
    --------
    >>> frame, counts = split_prefs(b"# c\n1 u1 s1 d1 2\n1 u1 s1 d2 0.5\n", "prefs")
    >>> frame.rows(), counts.to_list()
    ([('1', 'u1', 's1', 'd1', '2', 2), ('1', 'u1', 's1', 'd2', '0.5', 3)], [5, 5])
    """
    names = FIELDS[layout]
    lines = split_lines(raw, encoding=encoding)
    data = ~lines.str.starts_with("#")
    numbers = pl.int_range(1, lines.len() + 1, eager=True).filter(data)
    parts = split_fields(lines.filter(data), len(names))
    fields = [f"f{i}" for i in range(len(names))]
    count = pl.sum_horizontal(pl.col(f).is_not_null().cast(pl.Int64) for f in fields)
    count = count + pl.col("rest").is_not_null().cast(pl.Int64)
    counts = parts.select(count.alias("fields")).get_column("fields")
    frame = parts.select(pl.col(f).alias(n) for f, n in zip(fields, names, strict=True))
    if layout == "qrels_prefs":
        frame = frame.with_columns(pl.lit("0").alias("jsg"))
    frame = frame.with_columns(numbers.alias("line"))
    return frame.select("query_id", "jg", "jsg", "doc_id", "relevance", "line"), counts


def bad_prefs_line(counts: pl.Series, layout: PrefsLayout) -> int | None:
    """Return the 1-based index (among data lines) of the first malformed line, or None.

    Examples
    --------
    >>> bad_prefs_line(pl.Series([5, 4, 5]), "prefs")
    2
    """
    wrong = counts != len(FIELDS[layout])
    if not wrong.any():
        return None
    return int(wrong.arg_true()[0]) + 1
