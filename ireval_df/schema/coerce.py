"""Canonical columns and dtypes: every input is checked here, once.

:func:`as_run`, :func:`as_qrels` and :func:`as_queries` turn whatever the
caller has (polars, pandas or pyarrow tables, files, dict-of-dicts) into a
``polars.LazyFrame`` with the canonical column names, dtypes and order, or
raise an error that says what was expected, what was found and how to fix
it. Inner code trusts their output.

Canonical columns:

========= ============================================================
frame     columns
========= ============================================================
run       ``run_id`` (String), ``query_id`` (String), ``doc_id`` (String),
          ``score`` (Float64), ``rank`` (UInt32, only when the input has it)
qrels     ``query_id`` (String), ``doc_id`` (String), ``relevance`` (Int32)
queries   ``query_id`` (String), then the attribute columns as they are
========= ============================================================
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from ireval_df._utils.frames import is_frame_like, is_pandas, to_polars
from ireval_df.errors import DataError, FormatError, IrevalError, SchemaError

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence
    from pathlib import Path

    from ireval_df._utils.typing import Kind, PathLike, QrelsLike, QueriesLike, RunLike

__all__ = [
    "DTYPES",
    "QRELS_COLUMNS",
    "RUN_COLUMNS",
    "Lenient",
    "as_lenient",
    "as_qrels",
    "as_queries",
    "as_run",
    "is_pandas",
]

_log = logging.getLogger("ireval_df")

#: Run columns in canonical order; ``rank`` follows when the input has one.
RUN_COLUMNS = ("run_id", "query_id", "doc_id", "score")
#: Qrels columns in canonical order.
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
#: The dtype of every canonical column.
DTYPES: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "query_id": pl.String(),
    "doc_id": pl.String(),
    "score": pl.Float64(),
    "rank": pl.UInt32(),
    "relevance": pl.Int32(),
}
#: The run_id of a single run that names none.
DEFAULT_RUN_ID = "run"

# Well-known spellings, best first, compared after lower-casing and turning
# '-' and ' ' into '_'. The canonical name itself comes first.
_QUERY_ID = ("query_id", "qid", "queryid", "topic", "topic_id", "topicid", "query")
_DOC_ID = (
    "doc_id",
    "docno",
    "docid",
    "doc",
    "document_id",
    "pid",
    "passage_id",
    "corpus_id",
)
_RELEVANCE = ("relevance", "label", "rel", "grade", "judgment", "judgement")
_RUN_ID = ("run_id", "tag", "system", "run", "runid", "run_name")

# Float ids are accepted when whole and exactly representable.
_MAX_EXACT_FLOAT = 2.0**53
_INT32 = (-(2**31), 2**31 - 1)
_IDS, _NUMBERS, _INTEGERS = "strings or integers", "numbers", "integers"
_ID_COLUMNS = ("query_id", "doc_id", "run_id")


@dataclass(frozen=True)
class _Spec:
    """What one kind of frame needs."""

    kind: Kind
    required: tuple[str, ...]
    optional: tuple[str, ...]
    aliases: Mapping[str, tuple[str, ...]]
    example: str = field(default="")

    @property
    def canonical(self) -> tuple[str, ...]:
        return self.required + self.optional


_RUN = _Spec(
    "run",
    ("query_id", "doc_id", "score"),
    ("run_id", "rank"),
    {
        "query_id": _QUERY_ID,
        "doc_id": _DOC_ID,
        "score": ("score", "sim", "similarity"),
        "run_id": _RUN_ID,
        "rank": ("rank",),
    },
)
_QRELS = _Spec(
    "qrels",
    ("query_id", "doc_id", "relevance"),
    (),
    {
        "query_id": _QUERY_ID,
        "doc_id": _DOC_ID,
        "relevance": (*_RELEVANCE, "score"),  # BEIR: query-id corpus-id score
    },
)
_QUERIES = _Spec("queries", ("query_id",), (), {"query_id": (*_QUERY_ID, "id")})


# --------------------------------------------------------------------------
# public entry points


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
        return _stack_runs(
            obj, columns, rank=rank, in_memory=in_memory, scratch=scratch
        ).frame
    label = _label(obj, "run")
    # a file names its run, alone as in a list (a frame or dict is "run")
    if _is_path(obj):
        from ireval_df.io.files import stem  # io imports this module: import late

        default = stem(cast("PathLike", obj))
    else:
        default = DEFAULT_RUN_ID
    return _one_run(
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
    label = _label(obj, "qrels")
    return _prepare(obj, _QRELS, columns, label, in_memory=in_memory).frame


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
        ``query_id`` (String) first, then every other column as it is.

    Raises
    ------
    SchemaError
        No query id column.
    DataError
        Null or duplicate query ids.

    Examples
    --------
    >>> meta = pl.DataFrame({"qid": [301, 302], "lang": ["en", "de"]})
    >>> as_queries(meta).collect().rows()
    [('301', 'en'), ('302', 'de')]
    """
    return _prepare(obj, _QUERIES, columns, _label(obj, "queries")).frame


@dataclass(frozen=True)
class Lenient:
    """An input read without its value checks, for :func:`ireval_df.validate`.

    Attributes
    ----------
    frame : polars.DataFrame
        The canonical columns, as :func:`as_run`, :func:`as_qrels` or
        :func:`as_queries` return them, except that values those reject are
        kept: null ids, null or NaN scores, repeated rows, and ``relevance``
        as Float64 so that fractional grades survive (a grade or score that
        is not a number is null).
    dtypes : mapping of str to polars.DataType
        The dtype each canonical column had in the input, before casting
        (``Int64`` for integer ids, ``String`` for text files).
    """

    frame: pl.DataFrame
    dtypes: Mapping[str, pl.DataType]


def as_lenient(
    obj: Any, kind: Kind, *, columns: Mapping[str, str] | None = None
) -> Lenient:
    """Read an input like :func:`as_run`/:func:`as_qrels`/:func:`as_queries`, leniently.

    Problems in the values (nulls, NaN scores, fractional or
    non-numeric grades, repeated rows) are kept for the caller to report.
    What makes the input unreadable still raises: a missing file, a
    malformed line, a missing column, an unusable dtype.

    Parameters
    ----------
    obj : frame, path or dict-of-dicts (or a list of runs when ``kind="run"``)
        As the strict readers take it.
    kind : {"run", "qrels", "queries"}
        What ``obj`` holds.
    columns : mapping of str to str, optional
        Source column name to canonical name.

    Returns
    -------
    Lenient
        The frame and the input's own dtypes.

    Raises
    ------
    SchemaError, FormatError
        As the strict readers, for unreadable inputs.

    Examples
    --------
    >>> run = pl.DataFrame({"qid": [1, 1], "docno": ["a", "a"], "sim": [float("nan"), 1]})
    >>> read = as_lenient(run, "run")
    >>> read.frame.rows(), read.dtypes["query_id"]
    ([('run', '1', 'a', nan), ('run', '1', 'a', 1.0)], Int64)
    """
    spec = {"run": _RUN, "qrels": _QRELS, "queries": _QUERIES}[kind]
    if kind == "run" and isinstance(obj, list | tuple):
        prepared = _stack_runs(obj, columns, lenient=True)
    elif kind == "run":
        label = _label(obj, "run")
        prepared = _one_run(obj, columns, None, DEFAULT_RUN_ID, label, lenient=True)
    else:
        prepared = _prepare(obj, spec, columns, _label(obj, kind), lenient=True)
    try:
        frame = prepared.frame.collect()
    except pl.exceptions.PolarsError as exc:  # a LazyFrame whose plan fails
        msg = f"could not read {_label(obj, kind)}: {_first_line(exc)}"
        raise SchemaError(msg) from exc
    return Lenient(frame, prepared.dtypes)


# --------------------------------------------------------------------------
# sources


@dataclass(frozen=True)
class _Prepared:
    """A checked frame, the run ids it holds when asked for, the input dtypes."""

    frame: pl.LazyFrame
    run_ids: frozenset[str] = frozenset()
    dtypes: Mapping[str, pl.DataType] = field(default_factory=dict)


def _is_path(obj: object) -> bool:
    return isinstance(obj, str | os.PathLike)


def _label(obj: Any, kind: str) -> str:
    """Name the input in messages: ``run`` or ``run file 'bm25.run'``."""
    if _is_path(obj):
        return f"{kind} file {os.fspath(obj)!r}"
    return kind


def _stack_runs(
    items: Sequence[Any],
    columns: Mapping[str, str] | None,
    *,
    lenient: bool = False,
    rank: bool = True,
    in_memory: bool = False,
    scratch: Path | None = None,
) -> _Prepared:
    """Check every run of a list and stack them, refusing shared run ids."""
    if not items:
        msg = "the list of runs is empty; pass at least one run"
        raise SchemaError(msg)
    from ireval_df.io.files import stem  # io imports this module: import late

    parts: list[_Prepared] = []
    for i, item in enumerate(items, start=1):
        if isinstance(item, list | tuple):
            msg = (
                f"run #{i} of the list is itself a {type(item).__name__}; "
                f"pass one flat list of runs"
            )
            raise SchemaError(msg)
        default = stem(item) if _is_path(item) else f"run{i}"
        label = _label(item, "run") if _is_path(item) else f"run #{i}"
        parts.append(
            _one_run(
                item,
                columns,
                None,
                default,
                label,
                want_ids=True,
                lenient=lenient,
                rank=rank,
                in_memory=in_memory,
                scratch=scratch,
            )
        )
    seen: dict[str, int] = {}
    for i, part in enumerate(parts, start=1):
        for name in sorted(part.run_ids):
            if name in seen:
                msg = (
                    f"runs #{seen[name]} and #{i} of the list both have run_id "
                    f"{name!r}; stacked runs need distinct run_ids.\n  Hint: "
                    f"rename one first, e.g. read_run(source).with_columns("
                    f"run_id=pl.lit('{name}-2'))."
                )
                raise DataError(msg)
            seen[name] = i
    frames = [p.frame for p in parts]
    if not all("rank" in f.collect_schema().names() for f in frames):
        frames = [f.select(RUN_COLUMNS) for f in frames]
    return _Prepared(
        pl.concat(frames, how="vertical"), frozenset(seen), parts[0].dtypes
    )


def _one_run(
    obj: Any,
    columns: Mapping[str, str] | None,
    run_id: str | None,
    default_run_id: str,
    label: str,
    *,
    want_ids: bool = False,
    lenient: bool = False,
    rank: bool = True,
    in_memory: bool = False,
    scratch: Path | None = None,
) -> _Prepared:
    run = _RunOptions(
        run_id=run_id, default=default_run_id, want_ids=want_ids, rank=rank
    )
    return _prepare(
        obj,
        _RUN,
        columns,
        label,
        run,
        lenient=lenient,
        in_memory=in_memory,
        scratch=scratch,
    )


@dataclass(frozen=True)
class _RunOptions:
    run_id: str | None
    default: str
    want_ids: bool
    rank: bool = True  # False: leave out any rank column


def _prepare(
    obj: Any,
    spec: _Spec,
    columns: Mapping[str, str] | None,
    label: str,
    run: _RunOptions | None = None,
    *,
    lenient: bool = False,
    in_memory: bool = False,
    scratch: Path | None = None,
) -> _Prepared:
    """Turn any single input into a checked canonical frame.

    ``in_memory``: see :func:`_check`; ``scratch``: see :func:`as_run`.
    """
    if columns is not None and not isinstance(columns, Mapping):
        msg = (
            f"columns= must map source names to canonical names, e.g. "
            f"{{'qid': 'query_id'}}, found a {type(columns).__name__}"
        )
        raise SchemaError(msg)
    from_file = _is_path(obj)
    frame: pl.DataFrame | pl.LazyFrame
    if from_file:
        from ireval_df.io.load import load, read_header

        header = read_header(obj)
        ids = None if header.names is None else _recognise(header.names, spec, columns)
        loaded = load(
            header,
            spec.kind,
            ids=ids,
            lenient=lenient,
            rank=run is None or run.rank,
            scratch=None if in_memory else scratch,
        )
        if loaded.fmt == "trec":
            columns = None  # fixed, already canonical columns
        data = loaded.data
        frame = _from_dict(data, spec, label) if isinstance(data, dict) else data
    elif isinstance(obj, Mapping):
        frame = _from_dict(obj, spec, label)
    elif is_frame_like(obj):
        frame = to_polars(obj)
    else:
        expected = "a frame, a file path, a dict-of-dicts" + (
            " or a list of these" if spec.kind == "run" else ""
        )
        msg = f"{label} must be {expected}; found {type(obj).__name__}"
        raise SchemaError(msg)
    return _check(
        frame,
        spec,
        columns,
        label,
        run,
        from_file=from_file,
        lenient=lenient,
        in_memory=in_memory,
    )


def _from_dict(obj: Mapping[Any, Any], spec: _Spec, label: str) -> pl.DataFrame:
    """Flatten ``{query_id: {doc_id: value}}`` into a frame."""
    if spec.kind == "queries":
        msg = f"{label} must be a frame or a file, found a dict"
        raise SchemaError(msg)
    value_name = "score" if spec.kind == "run" else "relevance"
    qids: list[str] = []
    docs: list[str] = []
    values: list[Any] = []
    for qid, inner in obj.items():
        if not isinstance(inner, Mapping):
            msg = (
                f"{label} as a dict must be {{query_id: {{doc_id: {value_name}}}}}; "
                f"under key {qid!r} found a {type(inner).__name__}."
            )
            if is_frame_like(inner) or _is_path(inner):
                msg += "\n  Hint: to stack several runs, pass a list: [run_a, run_b]."
            raise SchemaError(msg)
        qids.extend([qid if isinstance(qid, str) else str(qid)] * len(inner))
        docs.extend(d if isinstance(d, str) else str(d) for d in inner)
        values.extend(inner.values())
    try:
        series = pl.Series(values, strict=False)
    except (TypeError, ValueError, OverflowError, pl.exceptions.PolarsError):
        series = None
    if (
        series is None
        or series.len() != len(values)
        or series.dtype.is_nested()
        or series.dtype == pl.Object
    ):
        raise _dict_value_error(obj, value_name, label)
    return pl.DataFrame(
        {
            "query_id": pl.Series(qids, dtype=pl.String),
            "doc_id": pl.Series(docs, dtype=pl.String),
            value_name: series,
        }
    )


def _dict_value_error(
    obj: Mapping[Any, Any], value_name: str, label: str
) -> SchemaError:
    """Name the first value of a dict-of-dicts that is not a number."""
    where, found = "", "values of mixed types"
    for qid, inner in obj.items():
        bad = [
            (doc, v)
            for doc, v in inner.items()
            if not isinstance(v, int | float | str | type(None))
        ]
        if bad:
            doc, value = bad[0]
            where = f" under query {qid!r}, doc {doc!r}"
            found = f"a {type(value).__name__}"
            break
    return SchemaError(
        f"{label} as a dict must be {{query_id: {{doc_id: {value_name}}}}} with a "
        f"number for each document;{where} found {found}."
    )


# --------------------------------------------------------------------------
# column names


def _norm(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def _recognise(
    names: Sequence[str], spec: _Spec, columns: Mapping[str, str] | None
) -> Collection[str] | None:
    """Id columns of a file header (read as strings); None if some are missing."""
    mapping, _ = _match(names, spec, columns)
    if not set(spec.required) <= set(mapping.values()):
        return None
    return [src for src, dst in mapping.items() if dst in _ID_COLUMNS]


def _match(
    names: Sequence[str], spec: _Spec, columns: Mapping[str, str] | None
) -> tuple[dict[str, str], dict[str, str]]:
    """Map source names to canonical ones: explicit first, then well-known.

    Returns the whole mapping and the automatically recognised part.
    """
    present = set(names)
    mapping = {s: d for s, d in (columns or {}).items() if s in present}
    auto: dict[str, str] = {}
    for canon in spec.canonical:
        if canon in mapping.values():
            continue
        if canon in present and canon not in mapping:
            mapping[canon] = canon
            continue
        for alias in spec.aliases[canon]:
            found = next(
                (n for n in names if _norm(n) == alias and n not in mapping), None
            )
            if found is not None:
                mapping[found] = auto[found] = canon
                break
    return mapping, auto


def _resolve(
    names: Sequence[str], spec: _Spec, columns: Mapping[str, str] | None, label: str
) -> dict[str, str]:
    """Check ``columns=`` and return the full source -> canonical mapping."""
    present = set(names)
    for src, dst in (columns or {}).items():
        if src not in present:
            close = difflib.get_close_matches(src, names, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            msg = (
                f"columns= maps {src!r}, but {label} has no column {src!r} "
                f"(found {list(names)!r}).{hint}"
            )
            raise SchemaError(msg)
        if spec.kind != "queries" and dst not in spec.canonical:
            msg = (
                f"columns= maps {src!r} to {dst!r}, which is not a {spec.kind} "
                f"column; {spec.kind} columns are {list(spec.canonical)!r}"
            )
            raise SchemaError(msg)
        if dst in present and dst != src and dst not in (columns or {}):
            msg = (
                f"columns= maps {src!r} to {dst!r}, but {label} already has a "
                f"column {dst!r}.\n  Hint: drop one of them first, or map "
                f"{dst!r} elsewhere too."
            )
            raise SchemaError(msg)
    targets = list((columns or {}).values())
    duplicated = sorted({t for t in targets if targets.count(t) > 1})
    if duplicated:
        msg = f"columns= maps several columns to {duplicated[0]!r}; map one only"
        raise SchemaError(msg)
    mapping, auto = _match(names, spec, columns)
    missing = [c for c in spec.required if c not in mapping.values()]
    if missing:
        raise SchemaError(_missing_message(names, spec, mapping, missing, label))
    if auto:
        _log.info(
            "%s: using %s; pass columns= to choose others",
            label,
            ", ".join(f"column {s!r} as {d!r}" for s, d in auto.items()),
        )
    return mapping


def _missing_message(
    names: Sequence[str],
    spec: _Spec,
    mapping: Mapping[str, str],
    missing: Sequence[str],
    label: str,
) -> str:
    """``run is missing column 'score' (found [...]).`` plus a columns= hint."""
    what = "column" if len(missing) == 1 else "columns"
    listed = ", ".join(repr(m) for m in missing)
    proposal = {s: d for s, d in mapping.items() if s != d}
    unused = [n for n in names if n not in mapping]
    for canon in missing:
        guess = _guess(canon, spec, unused, single=len(missing) == 1)
        if guess is not None:
            unused.remove(guess)
        proposal[guess or f"<{canon} column>"] = canon
    msg = (
        f"{label} is missing {what} {listed} (found {list(names)!r}).\n"
        f"  Hint: pass columns={proposal!r}."
    )
    if "score" in missing and "rank" in mapping.values():
        msg += (
            "\n  A run with ranks but no scores can use them: "
            "run.with_columns(score=-pl.col('rank'))."
        )
    return msg


def _guess(canon: str, spec: _Spec, unused: list[str], *, single: bool) -> str | None:
    """Return the unused column most likely meant as ``canon``, if any."""
    words = (canon, *spec.aliases.get(canon, ()))
    for name in unused:
        if any(w in _norm(name) for w in words if len(w) > 2):
            return name
    close = difflib.get_close_matches(canon, unused, n=1, cutoff=0.6)
    if close:
        return close[0]
    return unused[0] if single and len(unused) == 1 else None


# --------------------------------------------------------------------------
# dtypes and values


@dataclass
class _Check:
    """One data check: a count over the frame and the error it stands for."""

    count: pl.Expr  # aggregates to the number of offending rows
    bad: pl.Expr  # row predicate, to fetch an example
    error: Callable[[int, dict[str, Any]], IrevalError]
    # "schema": the frame cannot be read as the kind at all (checked even when
    # reading leniently); "data": a value problem validate() reports instead
    level: str = "data"
    # when ``count`` may overestimate (hashes), the exact count, for the message
    exact: pl.Expr | None = None


@dataclass(frozen=True)
class _Column:
    """A canonical column being checked: where it came from, what it holds."""

    canon: str
    src: str
    dtype: pl.DataType
    label: str

    @property
    def name(self) -> str:
        """``'score'`` or ``'score' (from 'sim')``, for messages."""
        if self.canon == self.src:
            return repr(self.canon)
        return f"{self.canon!r} (from {self.src!r})"

    def dtype_error(self, expected: str) -> SchemaError:
        target = {_IDS: "String", _NUMBERS: "Float64", _INTEGERS: "Int32"}[expected]
        return SchemaError(
            f"{self.label} column {self.name} has dtype {self.dtype}; expected "
            f"{expected}.\n  Hint: cast it first, e.g. "
            f"pl.col({self.src!r}).cast(pl.{target})."
        )


def _check(
    frame: pl.DataFrame | pl.LazyFrame,
    spec: _Spec,
    columns: Mapping[str, str] | None,
    label: str,
    run: _RunOptions | None = None,
    *,
    from_file: bool = False,
    lenient: bool = False,
    in_memory: bool = False,
) -> _Prepared:
    """Rename, cast and validate, with one aggregate pass over the data.

    ``lenient`` keeps the values the data checks reject (see
    :func:`as_lenient`), and grades as Float64. ``in_memory`` collects a
    lazy input's canonical columns before the checks, so that it is read
    once for them and for every later pass.
    """
    error = FormatError if from_file else SchemaError
    try:
        names = frame.collect_schema().names()
    except pl.exceptions.PolarsError as exc:  # a LazyFrame whose plan fails
        msg = f"could not read {label}: {_first_line(exc)}"
        raise error(msg) from exc
    mapping = _resolve(names, spec, columns, label)
    if run is not None and not run.rank:  # not wanted: neither kept nor checked
        mapping = {src: dst for src, dst in mapping.items() if dst != "rank"}
    source = {dst: src for src, dst in mapping.items()}
    keep_all = spec.kind == "queries"  # attributes are kept as they are
    kept = [
        pl.col(n).alias(mapping.get(n, n)) for n in names if n in mapping or keep_all
    ]
    staged = frame.lazy().select(kept)
    schema = staged.collect_schema()

    casts: dict[str, pl.Expr] = {}
    checks: list[_Check] = []
    builders = _LENIENT_BUILDERS if lenient else _BUILDERS
    for canon in spec.canonical:
        if canon in schema:
            col = _Column(canon, source[canon], schema[canon], label)
            casts[canon] = builders.get(canon, _identifier)(col, checks)
    extra: list[pl.Expr] = []  # aggregates beside the checks
    run_ids: frozenset[str] = frozenset()
    if spec.kind == "queries":
        checks.append(_duplicate_queries(label))
        order = ["query_id", *(n for n in schema.names() if n != "query_id")]
    elif spec.kind == "qrels":
        checks.append(_duplicate_judgments(label, source))
        order = list(QRELS_COLUMNS)
    else:
        run = run or _RunOptions(run_id=None, default=DEFAULT_RUN_ID, want_ids=False)
        order = [*RUN_COLUMNS, *(["rank"] if "rank" in schema else [])]
        if "run_id" not in schema or run.run_id is not None:
            if "run_id" in schema:
                checks.append(_single_run(run.run_id or "", label))
            name = run.run_id or run.default
            casts["run_id"] = pl.lit(name, dtype=pl.String)
            run_ids = frozenset({name})
        elif run.want_ids:
            extra.append(casts["run_id"].unique().implode().alias("__ireval_ids"))

    if lenient:
        checks = [c for c in checks if c.level == "schema"]
    aggregates = [c.count.alias(f"__ireval_check_{i}") for i, c in enumerate(checks)]
    aggregates += extra
    if spec.kind == "run" and not lenient:  # an empty run evaluates nothing
        aggregates.append(pl.len().alias("__ireval_rows"))
    eager = in_memory or isinstance(frame, pl.DataFrame)
    try:
        if eager:  # in memory already, or a file read once: collect the staging
            staged = staged.collect().lazy()
        counts: dict[str, Any] = {}
        if aggregates:
            query = staged.select(aggregates).collect(engine="streaming")
            counts = query.row(0, named=True)
    except pl.exceptions.PolarsError as exc:
        msg = f"could not read {label}: {_first_line(exc)}"
        raise error(msg) from exc
    if counts.get("__ireval_rows") == 0:
        msg = (
            f"{label} has no rows: there is nothing to evaluate.\n  Hint: a run "
            "lists at least one retrieved document; if a filter emptied it, check "
            "the filter (queries it has no rows for are scored by missing=)."
        )
        raise (FormatError if from_file else DataError)(msg)
    for i, check in enumerate(checks):
        n = counts[f"__ireval_check_{i}"]
        if n:
            found = staged.filter(check.bad).head(1).collect()
            if found.height == 0:  # an estimate that was wrong: a hash collision
                continue
            if check.exact is not None:
                n = staged.select(check.exact).collect().item()
            raise check.error(int(n), found.row(0, named=True))
    if "__ireval_ids" in counts:
        run_ids = frozenset(counts["__ireval_ids"])
    result = staged.select([casts.get(c, pl.col(c)).alias(c) for c in order])
    if eager:
        result = result.collect().lazy()
    dtypes = {c: schema[c] for c in spec.canonical if c in schema}
    return _Prepared(result, run_ids, dtypes)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _plural(n: int, noun: str) -> str:
    """``1 value that is`` / ``2 values that are``."""
    return f"{n} {noun} that is" if n == 1 else f"{n} {noun}s that are"


def _example(row: dict[str, Any], *keys: str) -> str:
    return ", ".join(f"{k}={row[k]!r}" for k in keys if k in row)


def _nulls(col: _Column) -> _Check:
    def error(n: int, row: dict[str, Any]) -> IrevalError:
        values = "value" if n == 1 else "values"
        return DataError(
            f"{col.label} has {n} null {values} in column {col.name} (NaN in "
            f"pandas becomes null); every row needs a {col.canon}.\n  Hint: "
            f"drop those rows first, e.g. frame.drop_nulls({col.src!r})."
        )

    return _Check(pl.col(col.canon).null_count(), pl.col(col.canon).is_null(), error)


def _identifier(col: _Column, checks: list[_Check]) -> pl.Expr:
    """Ids are strings; integers and whole floats are written in decimal."""
    expr = pl.col(col.canon)
    checks.append(_nulls(col))
    dtype = col.dtype
    if dtype in (pl.String, pl.Null) or isinstance(dtype, pl.Categorical | pl.Enum):
        return expr.cast(pl.String)
    if dtype.is_integer():
        return expr.cast(pl.String)
    if not (dtype.is_float() or dtype.is_decimal()):
        raise col.dtype_error(_IDS)
    x = expr.cast(pl.Float64)
    bad = x.is_not_null() & ~(
        x.is_finite() & (x == x.floor()) & (x.abs() < _MAX_EXACT_FLOAT)
    )

    def error(n: int, row: dict[str, Any]) -> IrevalError:
        return SchemaError(
            f"{col.label} column {col.name} holds floats, and {n} of them "
            f"{'is not a whole number' if n == 1 else 'are not whole numbers'}, "
            f"e.g. {row[col.canon]!r}; ids must be strings "
            f"or integers.\n  Hint: read the ids as strings, or cast them "
            f"first: pl.col({col.src!r}).cast(pl.String)."
        )

    checks.append(_Check(bad.sum(), bad, error, level="schema"))
    return x.cast(pl.Int64, strict=False).cast(pl.String)


def _number(col: _Column, checks: list[_Check]) -> pl.Expr:
    """Cast a numeric column to Float64; strings must all parse as numbers."""
    expr = pl.col(col.canon)
    if col.dtype.is_numeric() or col.dtype in (pl.Boolean, pl.Null):
        return expr.cast(pl.Float64)
    if col.dtype != pl.String:
        raise col.dtype_error(_NUMBERS)
    x = expr.str.strip_chars().cast(pl.Float64, strict=False)
    bad = expr.is_not_null() & x.is_null()

    def error(n: int, row: dict[str, Any]) -> IrevalError:
        return DataError(
            f"{col.label} column {col.name} has {_plural(n, 'value')} not a "
            f"number, e.g. {row[col.canon]!r} "
            f"({_example(row, 'query_id', 'doc_id')}).\n  Hint: fix or drop "
            f"those rows first."
        )

    checks.append(_Check(bad.sum(), bad, error))
    return x


def _score(col: _Column, checks: list[_Check]) -> pl.Expr:
    """Scores are Float64 numbers, not NaN; ``inf`` ranks first, ``-inf`` last."""
    if col.dtype == pl.Boolean:
        raise col.dtype_error(_NUMBERS)
    checks.append(_nulls(col))
    x = _number(col, checks)
    bad = x.is_nan()

    def error(n: int, row: dict[str, Any]) -> IrevalError:
        return DataError(
            f"{col.label} has {_plural(n, 'score')} NaN, e.g. "
            f"{_example(row, 'query_id', 'doc_id', 'score')}: a NaN score has no "
            f"place in a ranking.\n  Hint: drop or fill them before evaluating, "
            f"e.g. run.filter(pl.col({col.src!r}).is_not_nan())."
        )

    checks.append(_Check(bad.sum(), bad, error))
    return x


def _relevance(col: _Column, checks: list[_Check]) -> pl.Expr:
    """Grades are integers; whole floats are accepted, fractions are not."""
    checks.append(_nulls(col))
    if col.dtype.is_integer() or col.dtype in (pl.Boolean, pl.Null):
        x = pl.col(col.canon).cast(pl.Int64).cast(pl.Float64)
    else:
        x = _number(col, checks)
        fractional = x.is_not_null() & ~(x.is_finite() & (x == x.floor()))

        def fraction_error(n: int, row: dict[str, Any]) -> IrevalError:
            return DataError(
                f"{col.label} column {col.name} has {_plural(n, 'grade')} not a "
                f"whole number, e.g. {row[col.canon]!r} "
                f"({_example(row, 'query_id', 'doc_id')}); relevance must be an "
                f"integer grade.\n  Hint: round or map the grades first, e.g. "
                f"pl.col({col.src!r}).round().cast(pl.Int32)."
            )

        checks.append(_Check(fractional.sum(), fractional, fraction_error))
        x = pl.when(fractional).then(None).otherwise(x)
    outside = x.is_not_null() & ~x.is_between(*_INT32)

    def range_error(n: int, row: dict[str, Any]) -> IrevalError:
        return DataError(
            f"{col.label} column {col.name} has {_plural(n, 'grade')} outside "
            f"the Int32 range, e.g. {row[col.canon]!r}"
        )

    checks.append(_Check(outside.sum(), outside, range_error))
    return pl.when(outside).then(None).otherwise(x).cast(pl.Int32)


def _rank(col: _Column, checks: list[_Check]) -> pl.Expr:
    """Ranks are informational: values that are not counts become null."""
    expr = pl.col(col.canon)
    if col.dtype.is_integer() or col.dtype == pl.Null:
        return expr.cast(pl.UInt32, strict=False)
    if col.dtype.is_float() or col.dtype.is_decimal():
        x = expr.cast(pl.Float64)
        return pl.when(x == x.floor()).then(x).cast(pl.UInt32, strict=False)
    if col.dtype == pl.String:
        whole = expr.str.strip_chars().cast(pl.Int64, strict=False)
        return whole.cast(pl.UInt32, strict=False)
    raise col.dtype_error(_INTEGERS)


def _lenient_relevance(col: _Column, checks: list[_Check]) -> pl.Expr:
    """Grades as Float64, fractions kept; text that is not a number is null."""
    if col.dtype.is_integer() or col.dtype in (pl.Boolean, pl.Null):
        return pl.col(col.canon).cast(pl.Float64)
    return _number(col, checks)


_BUILDERS: dict[str, Callable[[_Column, list[_Check]], pl.Expr]] = {
    "score": _score,
    "relevance": _relevance,
    "rank": _rank,
}
_LENIENT_BUILDERS = {**_BUILDERS, "relevance": _lenient_relevance}


def _duplicate_queries(label: str) -> _Check:
    dup = pl.col("query_id").is_duplicated()

    def error(n: int, row: dict[str, Any]) -> IrevalError:
        return DataError(
            f"{label} has {n} rows with a repeated query_id, e.g. "
            f"{row['query_id']!r}; each query needs exactly one row.\n  Hint: "
            f"drop the duplicates first, e.g. queries.unique('query_id')."
        )

    return _Check(dup.sum(), dup, error)


def _duplicate_judgments(label: str, source: Mapping[str, str]) -> _Check:
    """Reject a (query, doc) pair judged twice: trec_eval's "duplicate docs"."""
    # distinct hashes as many as rows proves there is no repeat, at a tenth of
    # the cost of counting distinct (query_id, doc_id) pairs
    hashed = pl.col("query_id").hash(1) ^ pl.col("doc_id").hash(2)
    key = pl.struct("query_id", "doc_id")

    def error(n: int, row: dict[str, Any]) -> IrevalError:
        rows = "row" if n == 1 else "rows"
        ids = [source["query_id"], source["doc_id"]]
        grade = source["relevance"]
        return DataError(
            f"{label} judges a document more than once for the same query "
            f"({n} extra {rows}), e.g. "
            f"{_example(row, 'query_id', 'doc_id', 'relevance')}; each "
            f"(query_id, doc_id) needs one grade (trec_eval rejects such "
            f"qrels: 'duplicate docs').\n  Hint: keep one grade per document "
            f"first, e.g. qrels.unique({ids!r}, keep='last') or "
            f"qrels.group_by({ids[0]!r}, {ids[1]!r}).agg(pl.col({grade!r}).max())."
        )

    return _Check(
        pl.len() - hashed.n_unique(),
        key.is_duplicated(),
        error,
        exact=pl.len() - key.n_unique(),
    )


def _single_run(run_id: str, label: str) -> _Check:
    runs = pl.col("run_id").n_unique()

    def error(n: int, row: dict[str, Any]) -> IrevalError:
        return DataError(
            f"{label} holds {n} runs (e.g. {row['run_id']!r}), so "
            f"run_id={run_id!r} would merge them into one.\n  Hint: leave out "
            f"run_id=, or keep one run first, e.g. "
            f"run.filter(pl.col('run_id') == {row['run_id']!r})."
        )

    return _Check(pl.when(runs > 1).then(runs).otherwise(0), pl.lit(value=True), error)
