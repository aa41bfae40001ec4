"""Public readers: any supported source in, a canonical polars frame out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ireval_df.errors import OptionError, SchemaError
from ireval_df.schema.coerce import as_docs, as_qrels, as_queries, as_run
from ireval_df.schema.intents import INTENT_COLUMNS, read_judgments
from ireval_df.schema.sources import label_of

if TYPE_CHECKING:
    from collections.abc import Mapping

    import polars as pl

    from ireval_df._utils.typing import DocsLike, QrelsLike, QueriesLike, RunLike

__all__ = [
    "read_docs",
    "read_qrels",
    "read_queries",
    "read_run",
    "scan_qrels",
    "scan_run",
]


def read_run(
    source: RunLike,
    *,
    columns: Mapping[str, str] | None = None,
    run_id: str | None = None,
    rank: bool = True,
) -> pl.DataFrame:
    r"""Read one run, or several stacked, into a canonical DataFrame.

    Parameters
    ----------
    source : path, frame, dict-of-dicts, or a list or tuple of these
        A TREC run file (``qid Q0 docno rank score tag`` lines, optionally
        ``.gz``), a ``.csv``/``.tsv`` with a header, ``.parquet``/``.pq``,
        ``.jsonl``/``.ndjson``/``.json``; a polars, pandas or pyarrow table;
        ``{query_id: {doc_id: score}}``. A list stacks several runs.
    columns : mapping of str to str, optional
        Source name to canonical name, e.g. ``{"qid": "query_id"}``; the
        usual spellings (``qid``, ``docno``, ``sim``, ``tag`` ...) are
        recognised without it.
    run_id : str, optional
        Name of a run whose source has no ``run_id`` column or TREC tag
        (default ``"run"``); replaces a single tag when given.
    rank : bool, default True
        Keep the source's rank column; False leaves it out, unchecked. Only
        ``rank_from="column"`` uses ranks.

    Returns
    -------
    polars.DataFrame
        ``run_id``, ``query_id``, ``doc_id``, ``score``, and ``rank`` when
        the source has ranks (TREC files always do) and ``rank`` is True.
        Rows keep file order.

    Raises
    ------
    FormatError
        The file cannot be read; the message names the file and line.
    SchemaError
        A needed column is missing; the message suggests ``columns=``.
    DataError
        Null ids or scores, NaN or infinite scores.

    See Also
    --------
    scan_run : the same, lazily.
    read_qrels, write_results

    Examples
    --------
    >>> path = getfixture("tmp_path") / "bm25.run"
    >>> _ = path.write_text("301 Q0 FR940104-0-00001 1 12.5 bm25\n"
    ...                     "301\tQ0\tFR940104-0-00002\t2\t11.0\tbm25\n")
    >>> read_run(path).rows()
    [('bm25', '301', 'FR940104-0-00001', 12.5, 1),
     ('bm25', '301', 'FR940104-0-00002', 11.0, 2)]
    >>> read_run(path, rank=False).columns
    ['run_id', 'query_id', 'doc_id', 'score']
    >>> read_run({"q1": {"d1": 2.0}}, run_id="mine").rows()
    [('mine', 'q1', 'd1', 2.0)]
    """
    return as_run(source, columns=columns, run_id=run_id, rank=rank).collect()


def scan_run(
    source: RunLike,
    *,
    columns: Mapping[str, str] | None = None,
    run_id: str | None = None,
    rank: bool = True,
) -> pl.LazyFrame:
    """Read a run like :func:`read_run`, returning a LazyFrame.

    Parquet files and LazyFrames stay lazy (their checks read the needed
    columns once); text files are parsed once, into memory.

    Examples
    --------
    >>> lf = scan_run(pl.LazyFrame({"qid": ["q1"], "docid": ["d1"], "score": [1]}))
    >>> lf.collect().rows()
    [('run', 'q1', 'd1', 1.0)]
    """
    return as_run(source, columns=columns, run_id=run_id, rank=rank)


def read_qrels(
    source: QrelsLike,
    *,
    columns: Mapping[str, str] | None = None,
    intents: bool = False,
) -> pl.DataFrame:
    r"""Read relevance judgements into a canonical DataFrame.

    Parameters
    ----------
    source : path, frame or dict-of-dicts
        A TREC qrels file (``qid iter docno relevance`` lines, optionally
        ``.gz``), a CSV/TSV with a header (BEIR's ``query-id corpus-id
        score`` is recognised), Parquet, JSONL or JSON; a polars, pandas or
        pyarrow table; ``{query_id: {doc_id: relevance}}``.
    columns : mapping of str to str, optional
        Source name to canonical name, e.g. ``{"grade": "relevance"}``.
    intents : bool, default False
        Read judgments per intent (subtopic), for the diversity measures:
        TREC text as diversity qrels, ``qid subtopic docno relevance`` (the
        second field is the intent, as ndeval reads it; trec_eval ignores
        it), a table by its ``intent`` (or ``subtopic``) column. One row per
        document and intent; ``evaluate`` takes the result as qrels. Not
        with ``columns`` (rename the table's columns first).

    Returns
    -------
    polars.DataFrame
        ``query_id``, ``doc_id`` (String), ``relevance`` (Int32); negative
        grades are kept (trec_eval: "pooled, not judged"). With ``intents``,
        ``intent`` (String) after them.

    Raises
    ------
    FormatError
        The file cannot be read (e.g. ``1.7`` as a grade in TREC text); the
        message names the file and line.
    SchemaError
        A needed column is missing; with ``intents``, a table without an
        intent column.
    DataError
        Null ids or grades, fractional grades; a document judged twice for
        one query (with ``intents``: for one intent of a query).
    OptionError
        ``intents`` with ``columns``.

    See Also
    --------
    scan_qrels, read_run

    Examples
    --------
    >>> path = getfixture("tmp_path") / "qrels.tsv"
    >>> _ = path.write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\n")
    >>> read_qrels(path).rows()
    [('q1', 'd1', 2)]

    TREC diversity qrels, the intent in the second field:

    >>> path = getfixture("tmp_path") / "qrels.diversity.txt"
    >>> _ = path.write_text("51 1 clueweb-a 1\n51 2 clueweb-a 0\n51 2 clueweb-b 1\n")
    >>> read_qrels(path, intents=True).rows()
    [('51', 'clueweb-a', 1, '1'), ('51', 'clueweb-a', 0, '2'), ('51', 'clueweb-b', 1, '2')]
    """
    if not intents:
        return as_qrels(source, columns=columns).collect()
    if columns is not None:
        msg = (
            "read_qrels(intents=True) takes no columns=.\n  Hint: rename the "
            "table's columns first, e.g. qrels.rename({'grade': 'relevance'})."
        )
        raise OptionError(msg)
    judged = read_judgments(source, intents=True)
    if judged.intents is None:
        label = label_of(source, "qrels")
        msg = (
            f"{label} has no intent column (one of {list(INTENT_COLUMNS)!r}), "
            "which intents=True reads.\n  Hint: add one (a row per document and "
            "intent), or read TREC diversity qrels, whose second field is the "
            "intent."
        )
        raise SchemaError(msg)
    return judged.intents.select("query_id", "doc_id", "relevance", "intent").collect()


def scan_qrels(
    source: QrelsLike, *, columns: Mapping[str, str] | None = None
) -> pl.LazyFrame:
    """Read qrels like :func:`read_qrels`, returning a LazyFrame.

    Examples
    --------
    >>> scan_qrels({"q1": {"d1": 1}}).collect().rows()
    [('q1', 'd1', 1)]
    """
    return as_qrels(source, columns=columns)


def read_queries(
    source: QueriesLike, *, columns: Mapping[str, str] | None = None
) -> pl.DataFrame:
    r"""Read query metadata (the slicing attributes), one row per query.

    Parameters
    ----------
    source : path or frame
        A CSV/TSV with a header, Parquet, JSONL or JSON file, or a table;
        other extensions are read as ``qid text`` lines (MS MARCO
        ``queries.tsv`` without a header is recognised too).
    columns : mapping of str to str, optional
        Source name to new name; the column named ``query_id`` (or ``qid``,
        ``topic``, ``id`` ...) is the key.

    Returns
    -------
    polars.DataFrame
        ``query_id`` (String) first, then the attribute columns as they are;
        an ``issued_at`` column (when the query was issued) is parsed to
        ``Datetime`` as :func:`read_docs` parses ``published_at``.

    Raises
    ------
    SchemaError
        No query id column.
    DataError
        Null or repeated query ids.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "queries.csv"
    >>> _ = path.write_text("qid,language\n0042,de\n0043,en\n")
    >>> read_queries(path).rows()
    [('0042', 'de'), ('0043', 'en')]
    """
    return as_queries(source, columns=columns).collect()


def read_docs(
    source: DocsLike, *, columns: Mapping[str, str] | None = None
) -> pl.DataFrame:
    r"""Read document attributes (the document slices), one row per document.

    Parameters
    ----------
    source : path or frame
        A CSV/TSV with a header, Parquet, JSON Lines or JSON file, or a
        polars, pandas or pyarrow table. With a ``query_id`` column the
        attributes are per query: one row per (query, document).
    columns : mapping of str to str, optional
        Source name to new name; the column named ``doc_id`` (or ``docno``,
        ``docid``, ``pid``, ``id`` ...) is the key, ``published_at`` the
        publication time.

    Returns
    -------
    polars.DataFrame
        ``query_id`` (when present) and ``doc_id`` (String) first, then the
        attribute columns as they are; ``published_at`` becomes a
        ``Datetime`` in UTC (see :func:`ireval_df.schema.coerce.as_docs`).

    Raises
    ------
    SchemaError
        No document id column.
    DataError
        Null ids, or a document with more than one row (per query, with
        ``query_id``); the message names the file and the document.
    FormatError
        The file cannot be read.

    Warns
    -----
    IrevalWarning
        ``published_at`` values that are not dates or times, counted in one
        warning with an example, and left null.

    See Also
    --------
    read_queries, ireval_df.evaluate : ``docs=`` and ``by_doc=`` slice the
        top k by these attributes.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "docs.csv"
    >>> _ = path.write_text("docno,source_type,published_at\n"
    ...                     "007,news,2024-01-31\nd2,wiki,2023-06-01T12:00:00Z\n")
    >>> read_docs(path).rows()
    [('007', 'news', datetime.datetime(2024, 1, 31, 0, 0)),
     ('d2', 'wiki', datetime.datetime(2023, 6, 1, 12, 0))]
    """
    return as_docs(source, columns=columns).collect()
