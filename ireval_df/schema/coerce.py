"""The strict readers: every input kind to a checked canonical LazyFrame.

:func:`as_run`, :func:`as_qrels`, :func:`as_queries` and :func:`as_docs`
turn whatever the
caller has (polars, pandas or pyarrow tables, files, dict-of-dicts) into a
``polars.LazyFrame`` with the canonical column names, dtypes and order (see
:mod:`ireval_df.schema.columns`), or raise an error that says what was
expected, what was found and how to fix it. Inner code trusts their output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ireval_df.errors import SchemaError
from ireval_df.schema.columns import DEFAULT_RUN_ID, DOCS, QRELS, QUERIES
from ireval_df.schema.prepare import prepare, prepare_run, prepare_runs
from ireval_df.schema.sources import label_of, run_name

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    import polars as pl

    from ireval_df._utils.typing import DocsLike, QrelsLike, QueriesLike, RunLike

__all__ = ["as_docs", "as_qrels", "as_queries", "as_run"]


def as_run(
    obj: RunLike,
    *,
    columns: Mapping[str, str] | None = None,
    run_id: str | None = None,
    rank: bool = True,
    in_memory: bool = False,
    scratch: Path | None = None,
) -> pl.LazyFrame:
    """Return a run as a checked LazyFrame with the canonical columns.

    Parameters
    ----------
    obj : frame, path, dict-of-dicts, or a list or tuple of these
        A polars ``DataFrame``/``LazyFrame``, pandas ``DataFrame`` or pyarrow
        ``Table``; a file (TREC text ``qid Q0 docno rank score tag``,
        optionally ``.gz``; ``.csv``, ``.tsv``, ``.parquet``/``.pq``,
        ``.jsonl``/``.ndjson``, ``.json``); ``{query_id: {doc_id: score}}``.
        A list or tuple stacks several runs: each keeps its own ``run_id``
        column or TREC tags, else takes its file's stem, else ``run1``,
        ``run2``, ... by position.
    columns : mapping of str to str, optional
        Source column name to canonical name, e.g. ``{"qid": "query_id"}``.
        Well-known spellings (``qid``, ``docno``, ``docid``, ``sim``, ``tag``,
        ...) are recognised without it and reported at INFO level on the
        ``"ireval_df"`` logger. Not used for TREC text, whose columns are fixed.
    run_id : str, optional
        The run's name when the input has no ``run_id`` column (default: the
        file's name without its extensions, ``"run"`` for a frame or dict).
        When it has one holding a single name, this replaces it.
    rank : bool, default True
        Read the rank column of files; False skips it, which saves
        converting and checking it; the rank is only used by
        ``rank_from="column"``. With False a rank column of any input (file
        or frame) is left out of the result, unchecked.
    in_memory : bool, default False
        Read a lazy input (a ``LazyFrame``, a Parquet file) into memory once
        and check it there, instead of keeping it lazy: one read instead of
        one per pass, for callers that go over the run several times (as
        :func:`ireval_df.evaluate` does). The run must fit in memory.
    scratch : pathlib.Path, optional
        An existing folder for temporary files. With it, a TREC text run is
        read window by window into Arrow IPC files there and returned lazy,
        so it need not fit in memory (``evaluate(..., buckets=N)`` passes
        one); the caller removes the folder when done.

    Returns
    -------
    polars.LazyFrame
        ``run_id``, ``query_id``, ``doc_id`` (String), ``score`` (Float64),
        and ``rank`` (UInt32) when the input has a rank column and ``rank``
        is True. Integer ids become strings (``7`` -> ``"7"``). Inputs are
        never modified.

    Raises
    ------
    SchemaError
        A needed column is missing (the message suggests ``columns=``), a
        column has an unusable dtype, or a float id is not a whole number.
    DataError
        Null ids or scores, NaN scores, scores that are not
        numbers, two runs of a list sharing a ``run_id``.
    FormatError
        A file cannot be read; names the file and line.

    Notes
    -----
    Checks that need the data (nulls, NaN) run as one aggregate. Files in
    text formats and in-memory frames are read once and returned as
    ``.lazy()`` of the result; a ``LazyFrame`` or a Parquet file stays lazy
    (the checks then read the needed columns once more) unless ``in_memory``.

    Examples
    --------
    >>> run = pl.DataFrame({"qid": [1, 1], "docno": ["a", "b"], "sim": [2, 1]})
    >>> as_run(run, run_id="bm25").collect().rows()
    [('bm25', '1', 'a', 2.0), ('bm25', '1', 'b', 1.0)]
    >>> as_run([{"q1": {"a": 1.0}}, {"q1": {"b": 2.0}}]).collect()["run_id"].to_list()
    ['run1', 'run2']
    >>> ranked = run.with_columns(rank=pl.Series([1, 2]))
    >>> as_run(ranked).collect_schema().names()
    ['run_id', 'query_id', 'doc_id', 'score', 'rank']
    >>> as_run(ranked, rank=False).collect_schema().names()
    ['run_id', 'query_id', 'doc_id', 'score']
    """
    if isinstance(obj, list | tuple):
        if run_id is not None:
            msg = (
                "run_id= names one run, but a list of runs was given.\n  Hint: "
                "give each run its own run_id column, or read them one by one "
                "with read_run(source, run_id=...) and pass the frames."
            )
            raise SchemaError(msg)
        return prepare_runs(
            obj, columns, rank=rank, in_memory=in_memory, scratch=scratch
        ).frame
    label = label_of(obj, "run")
    # a file names its run, alone as in a list (a frame or dict is "run")
    default = run_name(obj, DEFAULT_RUN_ID)
    return prepare_run(
        obj,
        columns,
        run_id,
        default,
        label,
        rank=rank,
        in_memory=in_memory,
        scratch=scratch,
    ).frame


def as_qrels(
    obj: QrelsLike,
    *,
    columns: Mapping[str, str] | None = None,
    in_memory: bool = False,
) -> pl.LazyFrame:
    """Return relevance judgements as a checked LazyFrame.

    Parameters
    ----------
    obj : frame, path or dict-of-dicts
        A polars, pandas or pyarrow table; a file (TREC qrels
        ``qid iter docno relevance``, optionally ``.gz``; CSV/TSV with a
        header, including BEIR's ``query-id corpus-id score``; Parquet;
        JSONL; JSON); or ``{query_id: {doc_id: relevance}}``.
    columns : mapping of str to str, optional
        Source column name to canonical name, e.g. ``{"grade": "relevance"}``.
        ``label``, ``rel``, ``grade``, ``judgment`` and (when no other
        relevance column exists) ``score`` are recognised automatically.
    in_memory : bool, default False
        Read a lazy input into memory once, as :func:`as_run` does.

    Returns
    -------
    polars.LazyFrame
        ``query_id``, ``doc_id`` (String), ``relevance`` (Int32). Negative
        grades are kept (trec_eval: "pooled, not judged").

    Raises
    ------
    SchemaError
        A needed column is missing or has an unusable dtype.
    DataError
        Null ids or grades, fractional grades (``1.5``), grades that are not
        numbers or do not fit in Int32, a document judged twice for one
        query (trec_eval: "duplicate docs").
    FormatError
        A file cannot be read; names the file and line.

    Examples
    --------
    >>> as_qrels({"q1": {"a": 1, "b": 0}}).collect().rows()
    [('q1', 'a', 1), ('q1', 'b', 0)]
    """
    if isinstance(obj, list | tuple):
        msg = (
            f"qrels must be one table, file or dict, found a "
            f"{type(obj).__name__}.\n  Hint: concatenate them first, e.g. "
            f"pl.concat([read_qrels(a), read_qrels(b)])."
        )
        raise SchemaError(msg)
    label = label_of(obj, "qrels")
    return prepare(obj, QRELS, columns, label, in_memory=in_memory).frame


def as_queries(
    obj: QueriesLike, *, columns: Mapping[str, str] | None = None
) -> pl.LazyFrame:
    """Return query metadata as a checked LazyFrame, one row per query.

    Parameters
    ----------
    obj : frame or path
        A polars, pandas or pyarrow table, or a file (CSV/TSV with a header,
        Parquet, JSONL, JSON; other extensions are read as ``qid text``
        lines).
    columns : mapping of str to str, optional
        Source column name to new name; the one mapped to ``query_id`` is the
        key (``qid``, ``query_id``, ``topic``, ``id`` ... are recognised).

    Returns
    -------
    polars.LazyFrame
        ``query_id`` (String) first, then every other column as it is,
        except ``issued_at`` (when the query was issued, for
        :func:`ireval_df.age_buckets`): parsed as :func:`as_docs` parses
        ``published_at``.

    Raises
    ------
    SchemaError
        No query id column; an ``issued_at`` that holds neither dates nor
        text.
    DataError
        Null or duplicate query ids.

    Warns
    -----
    IrevalWarning
        ``issued_at`` text that is not a date or time, left null.

    Examples
    --------
    >>> meta = pl.DataFrame({"qid": [301, 302], "lang": ["en", "de"]})
    >>> as_queries(meta).collect().rows()
    [('301', 'en'), ('302', 'de')]
    """
    return prepare(obj, QUERIES, columns, label_of(obj, "queries")).frame


def as_docs(obj: DocsLike, *, columns: Mapping[str, str] | None = None) -> pl.LazyFrame:
    """Return document attributes as a checked LazyFrame, one row per document.

    Read as :func:`as_queries` reads query metadata, keyed by ``doc_id``
    instead; a table with a ``query_id`` column holds attributes per query
    (a document can then have one row for each query it answers).

    Parameters
    ----------
    obj : frame or path
        A polars, pandas or pyarrow table, or a file: CSV/TSV with a header,
        Parquet, JSON Lines or JSON (by extension; compressed text is
        recognised by its first bytes).
    columns : mapping of str to str, optional
        Source column name to new name, e.g. ``{"url": "doc_id",
        "date": "published_at"}``. ``doc_id``, ``docno``, ``docid``,
        ``pid``, ``id`` ... are recognised as the key; ``query_id`` and
        ``qid`` as the query, ``published_at`` as the publication time.

    Returns
    -------
    polars.LazyFrame
        ``query_id`` (String, only when the input has one), ``doc_id``
        (String), then every other column as it is, except
        ``published_at``, which becomes ``Datetime("us")`` in UTC without a
        time zone: a ``Date`` is its midnight, a ``Datetime`` with a zone is
        converted to UTC, text is read as ISO-8601 (``2024-01-31``,
        ``2024-01-31T12:00``, ``2024-01-31 12:00:00.5``,
        ``2024-01-31T12:00:00Z``, ``2024-01-31T12:00:00+02:00``), a time
        without an offset being taken as UTC already.

    Raises
    ------
    SchemaError
        No document id column; a ``published_at`` that holds neither dates
        nor text; a dict instead of a table.
    DataError
        Null ids; a document with two rows (two for one query, when there
        is a ``query_id``): the message names the source and the document.
    FormatError
        A file cannot be read, or its extension names no table format.

    Warns
    -----
    IrevalWarning
        ``published_at`` text that is not a date or time: one warning naming
        the source, the column, their number and an example. Those values
        are left null (their age is unknown); no row is dropped.

    Examples
    --------
    >>> docs = pl.DataFrame({"docno": [7, 8], "source_type": ["news", "wiki"],
    ...                      "published_at": ["2024-01-31", "2024-02-01T06:00:00Z"]})
    >>> as_docs(docs).collect().rows()
    [('7', 'news', datetime.datetime(2024, 1, 31, 0, 0)),
     ('8', 'wiki', datetime.datetime(2024, 2, 1, 6, 0))]
    """
    return prepare(obj, DOCS, columns, label_of(obj, "docs")).frame
