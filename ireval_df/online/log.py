"""Reading a search log: four tables, canonical columns, checked once.

:func:`read_log` reads the ``searches``, ``results``, ``events`` and
``units`` tables (a folder of files, or frames), maps their columns to the
canonical names, casts them, derives what is missing (``query_norm``,
``session_id``, ``unit_id``, ``experiment_id``, ``n_results``), checks every
rule of the table below once, and returns a :class:`SearchLog` that every
other function of :mod:`ireval_df.online` trusts.

Canonical columns (dtypes after reading):

=========  ==================================================================
table      columns
=========  ==================================================================
searches   ``search_id``, ``user_id``, ``ts`` (Datetime us, UTC), ``session_id``,
           ``unit_id``, ``experiment_id``, ``variant``, ``query``,
           ``query_norm`` (String), ``page``, ``n_results`` (Int32), then the
           attribute columns as they are (``serp_answer`` becomes Boolean)
results    ``search_id`` (String), ``position`` (Int32, from 1), ``doc_id``
           (String, when present), ``published_at`` (Datetime, when
           present), then the attribute columns
events     ``event_id`` (String, when present), ``search_id``, ``user_id``
           (String, ``search_id`` nullable), ``ts`` (Datetime), ``event_type``
           (String), ``position`` (Int32), ``doc_id`` (String), ``value``
           (Float64), ``dwell_ms`` (Int64), the last four when present
units      ``unit_id``, ``experiment_id``, ``variant`` (String, the last two
           when present), ``pre_*`` (Float64), other attributes as they are
=========  ==================================================================

Bad input (the behaviour with the default ``invalid="drop"``; every dropped
or changed row is counted in one :class:`~ireval_df.errors.LogWarning`, and
``invalid="error"`` raises a :class:`~ireval_df.errors.DataError` instead):

=========================================================  ====================
problem                                                    default
=========================================================  ====================
a required column is missing, or has an unusable dtype     error (``columns=``)
null or repeated ``search_id`` in searches                 error
a unit with two rows in units (per experiment)             error
a unit seen in more than one variant                       error, or dropped
                                                           with its searches
                                                           (``contaminated=``)
searches: null ``user_id``, time missing, unparsable or    dropped
negative, null ``variant``, ``page`` < 1, ``n_results``
null or negative
results: null ``search_id`` or ``position``, position < 1  dropped
results of unknown searches, of a search with              dropped
``n_results = 0``
two rows for one (``search_id``, ``position``)             one kept (the
                                                           smallest ``doc_id``)
events: time missing, unparsable or negative, null         dropped
``event_type``, no user (none given, no search to take it
from), before their search's time
events pointing at unknown searches                        dropped
clicks at a position the search did not display            dropped
repeated ``event_id``                                      one kept (the
                                                           earliest)
negative ``dwell_ms``                                      left null (the time
                                                           to the next action
                                                           is used)
``published_at`` that is not a time                        left null
rows of searches dropped above                             dropped with them
=========================================================  ====================
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._utils.frames import (
    is_frame_like,
    is_pandas,
    is_pyarrow,
    to_polars,
    with_series,
)
from ireval_df._utils.options import check_choice
from ireval_df.errors import (
    DataError,
    FormatError,
    LogWarning,
    OptionError,
    SchemaError,
    warn,
)
from ireval_df.io import tabular
from ireval_df.io.files import detect_format, display
from ireval_df.schema.checks import parse_times
from ireval_df.schema.columns import Spec, resolve

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "TABLES",
    "ROW_NUMBER",
    "Issue",
    "SearchLog",
    "Whole",
    "contamination_issue",
    "duplicates_message",
    "nulls_message",
    "source_columns",
    "unit_repeats_hint",
    "contamination_message",
    "epoch_unit_of",
    "example_log",
    "normalize_query",
    "read_log",
    "read_part",
]

Table = Literal["searches", "results", "events", "units"]
#: The four tables, in the order they are checked.
TABLES: tuple[Table, ...] = ("searches", "results", "events", "units")
Invalid = Literal["drop", "error"]
Contaminated = Literal["error", "drop"]
EpochUnit = Literal["s", "ms", "us", "ns"]

_US = pl.Datetime("us")
_KEY = "__ireval_search"  # a search's row number in the searches frame
_RESULT = "__ireval_result"  # an event's slot's row number in the results frame
_PROBLEM = "__ireval_problem"

_SEARCH_ID = ("search_id", "serp_id", "impression_id", "request_id")
_USER_ID = ("user_id", "uid", "user", "client_id", "cookie_id")
_TS = ("ts", "timestamp", "time", "event_time")
_EXPERIMENT = ("experiment_id", "experiment", "exp_id")
_VARIANT = ("variant", "arm", "bucket", "treatment")
_DOC_ID = ("doc_id", "docno", "docid", "item_id", "product_id")

#: What each table holds: required columns, optional ones, well-known spellings.
SPECS: Mapping[Table, Spec] = {
    "searches": Spec(
        "searches",
        ("search_id", "user_id", "ts", "query"),
        (
            "session_id",
            "unit_id",
            "experiment_id",
            "variant",
            "page",
            "n_results",
        ),
        {
            "search_id": _SEARCH_ID,
            "user_id": _USER_ID,
            "ts": _TS,
            "query": ("query", "query_text", "search_term", "q"),
            "session_id": ("session_id", "session"),
            "unit_id": ("unit_id",),
            "experiment_id": _EXPERIMENT,
            "variant": _VARIANT,
            "page": ("page", "page_number"),
            "n_results": ("n_results", "num_results", "result_count"),
        },
        attributes=True,
    ),
    "results": Spec(
        "results",
        ("search_id", "position"),
        ("doc_id", "published_at"),
        {
            "search_id": _SEARCH_ID,
            "position": ("position", "pos", "rank", "slot"),
            "doc_id": _DOC_ID,
            "published_at": ("published_at",),
        },
        attributes=True,
    ),
    "events": Spec(
        "events",
        ("ts", "event_type"),
        (
            "event_id",
            "search_id",
            "user_id",
            "position",
            "doc_id",
            "value",
            "dwell_ms",
        ),
        {
            "ts": _TS,
            "event_type": ("event_type", "type", "action", "event"),
            "event_id": ("event_id",),
            "search_id": _SEARCH_ID,
            "user_id": _USER_ID,
            "position": ("position", "pos", "rank", "slot"),
            "doc_id": _DOC_ID,
            "value": ("value", "revenue", "amount"),
            "dwell_ms": ("dwell_ms",),
        },
        attributes=True,
    ),
    "units": Spec(
        "units",
        ("unit_id",),
        ("experiment_id", "variant"),
        {
            "unit_id": ("unit_id", "user_id", "uid"),
            "experiment_id": _EXPERIMENT,
            "variant": _VARIANT,
        },
        attributes=True,
    ),
}
_IDS = {
    "searches": ("search_id", "user_id", "session_id", "unit_id", "experiment_id"),
    "results": ("search_id", "doc_id"),
    "events": ("event_id", "search_id", "user_id", "doc_id"),
    "units": ("unit_id", "experiment_id"),
}
#: Event types the metrics read; any other type is kept (it ends a dwell time).
CLICK, ADD_TO_CART, PURCHASE = "click", "add_to_cart", "purchase"


@dataclass(frozen=True)
class Issue:
    """One problem found while reading, and what was done about it.

    Attributes
    ----------
    table : str
        ``searches``, ``results``, ``events`` or ``units``.
    problem : str
        What the rows have, e.g. ``"pointing at unknown searches"``.
    rows : int
        How many rows have it.
    action : str
        ``dropped``, ``kept one`` (duplicates), ``left null``.
    example : str
        One offending row's identifying values.
    row : int, optional
        The example's number in its input (:data:`ROW_NUMBER`), when a part
        of a log was given one (:func:`read_part`): the example of the whole
        log is the first of the parts'.
    """

    table: str
    problem: str
    rows: int
    action: str
    example: str
    row: int | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return (
            f"{self.table}: {self.rows} {'row' if self.rows == 1 else 'rows'} "
            f"{self.problem}, {self.action} (e.g. {self.example})"
        )


@dataclass(frozen=True)
class _Index:
    """Keys computed while reading, aligned row by row with the public frames.

    Integer keys let the derived frames join without string keys: each
    result's and event's search (its row in ``searches``), each result's
    slot (:func:`slot_key` of its search's key and its position), each search's
    session and the next search in it, and for each event the time of the
    next action in its session and whether it is the session's last click.
    """

    session: pl.Series  # per search, UInt64
    first: pl.Series  # per search: the first of its session
    next_search: pl.Series  # per search, the key of the next search in the session
    unit: pl.Series  # per search, a UInt64 key of its unit_id
    result_search: pl.Series | None  # per result row
    result_slot: pl.Series | None  # per result row: slot_key(search key, position)
    event_search: pl.Series | None  # per event, null when not attributed
    event_next_ts: pl.Series | None  # per event, Datetime, null: nothing follows
    event_last_click: pl.Series | None  # per event, Boolean
    #: per event, the row in ``results`` of the (search, position) slot it
    #: clicked, null for other events and for clicks on no displayed slot;
    #: None when the results' slots were not in order
    event_result: pl.Series | None


@dataclass(frozen=True)
class SearchLog:
    """A search log read and checked by :func:`read_log`.

    Attributes
    ----------
    searches, results, events, units : polars.DataFrame or None
        The tables with their canonical columns (see
        :mod:`ireval_df.online.log`); ``searches`` is always there.
    issues : tuple of Issue
        What reading dropped or changed, by table and problem.
    session_gap : datetime.timedelta
        The inactivity gap that ends a session.
    sessions_derived : bool
        Whether ``session_id`` was derived (True) or given.
    kind : {"polars", "pandas", "arrow", "lazy"}
        The kind of frame results are returned as: pandas when every table
        was given as a pandas frame, a pyarrow Table when every one was an
        Arrow table, a (computed) LazyFrame when every one was lazy, else a
        polars DataFrame.
    """

    searches: pl.DataFrame
    results: pl.DataFrame | None
    events: pl.DataFrame | None
    units: pl.DataFrame | None
    issues: tuple[Issue, ...]
    session_gap: dt.timedelta
    sessions_derived: bool
    kind: str
    index: _Index = field(repr=False, compare=False)

    def __repr__(self) -> str:
        sizes = ", ".join(
            f"{name}={frame.height}"
            for name in TABLES
            if (frame := getattr(self, name)) is not None
        )
        return f"SearchLog({sizes}, issues={len(self.issues)})"

    def issues_frame(self) -> pl.DataFrame:
        """Return :attr:`issues` as a frame: ``table, problem, rows, action, example``.

        Examples
        --------
        >>> log = read_log(searches=pl.DataFrame({
        ...     "search_id": ["s1"], "user_id": ["u1"], "ts": ["2024-01-01T10:00:00"],
        ...     "variant": ["A"], "query": ["red shoes"], "n_results": [10]}))
        >>> log.issues_frame().height
        0
        """
        return pl.DataFrame(
            [
                {
                    k: getattr(i, k)
                    for k in ("table", "problem", "rows", "action", "example")
                }
                for i in self.issues
            ],
            schema={
                "table": pl.String,
                "problem": pl.String,
                "rows": pl.Int64,
                "action": pl.String,
                "example": pl.String,
            },
        )

    def with_keys(self, table: Table) -> pl.DataFrame:
        """Return a table with the integer keys the derived frames join on.

        ``searches`` gains ``__ireval_search`` (its row number),
        ``__ireval_session``, ``__ireval_first`` (the first of its
        session), ``__ireval_next`` and ``__ireval_unit``; ``results`` and
        ``events`` gain ``__ireval_search``; ``events`` also
        ``__ireval_next_ts`` and ``__ireval_last_click``.
        """
        index = self.index
        if table == "searches":
            n = self.searches.height
            wide = index.next_search.dtype == pl.UInt64
            row = pl.int_range(n, dtype=pl.UInt64 if wide else pl.UInt32, eager=True)
            frame = with_series(
                self.searches,
                [
                    index.session.alias("__ireval_session"),
                    index.first.alias("__ireval_first"),
                    index.next_search.alias("__ireval_next"),
                    index.unit.alias("__ireval_unit"),
                    row.alias(_KEY),
                ],
            )
            return frame.select(_KEY, pl.exclude(_KEY))
        if table == "results" and self.results is not None:
            assert index.result_search is not None  # noqa: S101 - set with results
            return with_series(self.results, [index.result_search.alias(_KEY)])
        if table == "events" and self.events is not None:
            assert index.event_search is not None  # noqa: S101 - set with events
            assert index.event_next_ts is not None  # noqa: S101
            assert index.event_last_click is not None  # noqa: S101
            return with_series(
                self.events,
                [
                    index.event_search.alias(_KEY),
                    index.event_next_ts.alias("__ireval_next_ts"),
                    index.event_last_click.alias("__ireval_last_click"),
                ],
            )
        msg = f"the log has no {table} table"
        raise SchemaError(msg)


# --- query normalisation ------------------------------------------------------------------


_CASED_BELOW = 0x20000


@functools.cache
def _casefold_table() -> tuple[list[str], list[str]]:
    """Every code point that ``str.casefold`` changes, and what it becomes."""
    keys, values = [], []
    # every cased script lies below U+20000 (CJK extension B and above have no case)
    for code in range(_CASED_BELOW):
        if 0xD800 <= code < 0xE000:
            continue
        char = chr(code)
        folded = char.casefold()
        if folded != char:
            keys.append(char)
            values.append(folded)
    return keys, values


@functools.cache
def _space_class() -> str:
    """Return a regex class of the characters Python's ``str.split()`` splits on."""
    spaces = [chr(c) for c in range(_CASED_BELOW) if chr(c).isspace()]
    return "[" + "".join(re.escape(c) for c in spaces) + "]"


def normalize_query(query: pl.Expr) -> pl.Expr:
    r"""Normalise query text: NFKC, case folding, whitespace collapsed and trimmed.

    Equal, character for character, to Python's
    ``" ".join(unicodedata.normalize("NFKC", q).casefold().split())``: the
    folding is Unicode full case folding (``Straße`` -> ``strasse``), and
    whitespace is every character ``str.isspace`` accepts.

    Examples
    --------
    >>> q = pl.DataFrame({"q": ["  Red\tSHOES ", "Straße", "ﬁne"]})
    >>> q.select(normalize_query(pl.col("q")))["q"].to_list()
    ['red shoes', 'strasse', 'fine']
    """
    keys, values = _casefold_table()
    space = _space_class()
    folded = query.str.normalize("NFKC").str.replace_many(keys, values)
    return folded.str.replace_all(space + "+", " ").str.strip_chars(" ")


def _normalize_series(queries: pl.Series) -> pl.Series:
    """Apply :func:`normalize_query` to a Series, cheaply for ASCII text.

    Most queries are already normal: ASCII without capitals, single inner
    spaces. One scan finds the others; ASCII text needs only lower-casing
    and ASCII whitespace (NFKC and case folding change nothing else in
    it), and the full expression runs on the non-ASCII rows alone.
    """
    other = queries.str.len_bytes() != queries.str.len_chars()
    changes = queries.str.contains(r"[A-Z\t\n\x0b\x0c\r\x1c-\x1f]|  |^ | $") | other
    if not changes.any():
        return queries
    out = queries.clone()
    at = (changes & ~other).arg_true()
    if at.len():
        fast = (
            queries.gather(at)
            .str.to_lowercase()
            .str.replace_all(r"[\t\n\x0b\x0c\r\x1c-\x1f ]+", " ")
            .str.strip_chars(" ")
        )
        out.scatter(at, fast)
    at = other.arg_true()
    if at.len():
        full = queries.gather(at).to_frame("q").select(normalize_query(pl.col("q")))
        out.scatter(at, full.to_series())
    return out


# --- reading the sources ------------------------------------------------------------------


def _find_files(folder: Path) -> dict[Table, Path]:
    """Find the table files of a folder: ``searches.parquet``, ``events.csv`` ..."""
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is not a folder"
        msg = (
            f"read_log: {display(folder)!r} {what}; pass the folder that holds "
            f"searches.parquet (or .csv, .jsonl), or the tables as frames."
        )
        raise FormatError(msg)
    found: dict[Table, list[Path]] = {t: [] for t in TABLES}
    for path in sorted(folder.iterdir()):
        name = path.name.split(".")[0]
        if name in found and path.is_file():
            fmt, _ = detect_format(path)
            if fmt != "trec":
                found[name].append(path)
    out: dict[Table, Path] = {}
    for table, paths in found.items():
        if len(paths) > 1:
            names = [p.name for p in paths]
            msg = (
                f"read_log: {display(folder)!r} holds {len(paths)} files for the "
                f"{table} table ({names}); keep one, or pass {table}= explicitly."
            )
            raise FormatError(msg)
        if paths:
            out[table] = paths[0]
    return out


def _read_file(path: Path, table: Table, columns: Mapping[str, str] | None) -> Any:
    """Read one table file with its own column names; ids as written."""
    fmt, _ = detect_format(path)
    spec = SPECS[table]
    label = f"{table} file {display(path)!r}"
    if fmt == "parquet":
        return tabular.scan_parquet(path).collect()
    if fmt == "json":
        data = tabular.read_json(path)
        if isinstance(data, dict):
            msg = f"{label}: expected an array of records, found a JSON object"
            raise FormatError(msg)
        return data
    if fmt == "jsonl":
        raw, names = tabular.ndjson_columns(path)
        ids = _id_sources(names, spec, columns, table, label)
        return tabular.read_ndjson(path, strings=ids, data=raw)
    separator = "\t" if fmt == "tsv" else ","
    names = tabular.csv_columns(path, separator=separator)
    ids = _id_sources(names, spec, columns, table, label)
    return tabular.read_csv(path, separator=separator, string_columns=ids)


def _id_sources(
    names: Sequence[str],
    spec: Spec,
    columns: Mapping[str, str] | None,
    table: Table,
    label: str,
) -> list[str]:
    """Return the source names of a file's id columns, read as text (zeros kept)."""
    mapping = resolve(names, spec, columns, label)
    return [src for src, dst in mapping.items() if dst in _IDS[table]]


def _table_columns(
    columns: Mapping[str, Any] | None, names: Mapping[Table, Sequence[str]]
) -> dict[Table, dict[str, str] | None]:
    """Split ``columns=`` into one mapping per table.

    Either ``{"searches": {"qid": "search_id"}, ...}`` or one flat mapping
    applied to every table that has the source column.
    """
    if columns is None:
        return dict.fromkeys(TABLES, None)
    if not isinstance(columns, Mapping):
        msg = (
            "columns= maps source names to canonical ones, per table "
            "({'searches': {'qid': 'search_id'}}) or for all tables "
            f"({{'uid': 'user_id'}}); found a {type(columns).__name__}"
        )
        raise SchemaError(msg)
    if columns and all(isinstance(v, Mapping) for v in columns.values()):
        unknown = [t for t in columns if t not in TABLES]
        if unknown:
            msg = (
                f"columns= names tables {unknown!r}; the tables are "
                f"{list(TABLES)!r}.\n  Hint: a flat mapping {{'uid': 'user_id'}} "
                f"applies to every table."
            )
            raise SchemaError(msg)
        return {t: dict(columns[t]) if t in columns else None for t in TABLES}
    if not all(isinstance(v, str) for v in columns.values()):
        msg = (
            "columns= mixes tables and column names; give either "
            "{'searches': {'qid': 'search_id'}} or {'qid': 'search_id'}"
        )
        raise SchemaError(msg)
    used = {src for cols in names.values() for src in cols}
    missing = [src for src in columns if src not in used]
    if missing:
        msg = f"columns= maps {missing!r}, but no table has such a column"
        raise SchemaError(msg)
    return {
        t: {s: d for s, d in columns.items() if s in names.get(t, ())} or None
        for t in TABLES
    }


def source_columns(
    names: Mapping[Table, Sequence[str]], columns: Mapping[str, Any] | None
) -> dict[Table, dict[str, str]]:
    """Return, for each table given by its column names, canonical name -> source name.

    ``columns`` is :func:`read_log`'s option; the spellings are resolved as
    :func:`read_log` resolves them (a missing required column raises).
    """
    per_table = _table_columns(columns, names)
    out: dict[Table, dict[str, str]] = {}
    for table, cols in names.items():
        mapping = resolve(list(cols), SPECS[table], per_table[table], table)
        out[table] = {dst: src for src, dst in mapping.items()}
    return out


def _kind_of(obj: Any) -> str:
    if is_pandas(obj):
        return "pandas"
    if is_pyarrow(obj):
        return "arrow"
    if isinstance(obj, pl.LazyFrame):
        return "lazy"
    return "polars"


# --- casting ------------------------------------------------------------------------------


def _label(table: str, src: str, canon: str) -> str:
    return repr(canon) if src == canon else f"{canon!r} (from {src!r})"


def _as_id(
    frame: pl.DataFrame, canon: str, src: str, table: str
) -> tuple[pl.Expr, pl.Expr | None]:
    """Ids become text: integers and whole floats in decimal."""
    dtype = frame.schema[canon]
    expr = pl.col(canon)
    if dtype in (pl.String, pl.Null) or isinstance(dtype, pl.Categorical | pl.Enum):
        return expr.cast(pl.String), None
    if dtype.is_integer():
        return expr.cast(pl.String), None
    if dtype.is_float() or dtype.is_decimal():
        x = expr.cast(pl.Float64)
        whole = x.is_finite() & (x == x.floor()) & (x.abs() < 2.0**53)
        return (
            pl.when(whole).then(x.cast(pl.Int64, strict=False)).cast(pl.String),
            x.is_not_null() & ~whole,
        )
    msg = (
        f"{table} column {_label(table, src, canon)} has dtype {dtype}; expected "
        f"strings or integers.\n  Hint: cast it first, e.g. "
        f"pl.col({src!r}).cast(pl.String)."
    )
    raise SchemaError(msg)


def _as_int(frame: pl.DataFrame, canon: str, src: str, table: str) -> pl.Expr:
    """Whole numbers to Int32; text that is not a whole number becomes null."""
    dtype = frame.schema[canon]
    expr = pl.col(canon)
    if dtype.is_integer() or dtype == pl.Null:
        return expr.cast(pl.Int32, strict=False)
    if dtype.is_float() or dtype.is_decimal():
        x = expr.cast(pl.Float64)
        return pl.when(x == x.floor()).then(x).cast(pl.Int32, strict=False)
    if dtype == pl.String:
        return expr.str.strip_chars().cast(pl.Int32, strict=False)
    msg = (
        f"{table} column {_label(table, src, canon)} has dtype {dtype}; expected "
        f"whole numbers.\n  Hint: cast it first, e.g. pl.col({src!r}).cast(pl.Int32)."
    )
    raise SchemaError(msg)


def _as_float(frame: pl.DataFrame, canon: str, src: str, table: str) -> pl.Expr:
    dtype = frame.schema[canon]
    expr = pl.col(canon)
    if dtype.is_numeric() or dtype in (pl.Boolean, pl.Null):
        return expr.cast(pl.Float64)
    if dtype == pl.String:
        return expr.str.strip_chars().cast(pl.Float64, strict=False)
    msg = (
        f"{table} column {_label(table, src, canon)} has dtype {dtype}; expected "
        f"numbers.\n  Hint: cast it first, e.g. pl.col({src!r}).cast(pl.Float64)."
    )
    raise SchemaError(msg)


def _as_bool(frame: pl.DataFrame, canon: str, src: str, table: str) -> pl.Expr:
    dtype = frame.schema[canon]
    expr = pl.col(canon)
    if dtype in (pl.Boolean, pl.Null):
        return expr.cast(pl.Boolean)
    if dtype.is_integer():
        return expr.cast(pl.Boolean)
    if dtype == pl.String:
        low = expr.str.strip_chars().str.to_lowercase()
        return (
            pl.when(low.is_in(["true", "1", "yes"]))
            .then(pl.lit(value=True))
            .when(low.is_in(["false", "0", "no"]))
            .then(pl.lit(value=False))
        )
    msg = (
        f"{table} column {_label(table, src, canon)} has dtype {dtype}; expected "
        f"true/false values.\n  Hint: cast it first, e.g. pl.col({src!r}) == 'yes'."
    )
    raise SchemaError(msg)


_EPOCH_FACTORS = {"s": 1e6, "ms": 1e3, "us": 1.0, "ns": 1e-3}


def _epoch_unit(frame: pl.DataFrame, canon: str, given: EpochUnit | None) -> str:
    """Seconds, milliseconds, microseconds or nanoseconds, by magnitude."""
    if given is not None:
        return given
    return epoch_unit_of(
        frame.select(pl.col(canon).cast(pl.Float64).abs().max()).item()
    )


def epoch_unit_of(top: float | None) -> EpochUnit:
    """Return the unit of epoch times whose largest absolute value is ``top``.

    Examples
    --------
    >>> epoch_unit_of(1.7e9), epoch_unit_of(1.7e12), epoch_unit_of(None)
    ('s', 'ms', 's')
    """
    if top is None or top < 1e11:
        return "s"
    if top < 1e14:
        return "ms"
    if top < 1e17:
        return "us"
    return "ns"


def _as_time(
    frame: pl.DataFrame, canon: str, src: str, table: str, unit: EpochUnit | None
) -> pl.Expr:
    """Points in time to naive UTC ``Datetime("us")``; null when not a time.

    Datetimes with a zone are converted to UTC; naive ones are taken as UTC;
    dates are their midnight; text is ISO-8601; numbers are Unix epochs
    (seconds, ms, us or ns by magnitude unless ``epoch_unit`` says), and a
    negative epoch is not a time.
    """
    dtype = frame.schema[canon]
    expr = pl.col(canon)
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is not None:
            expr = expr.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        return expr.cast(_US)
    if dtype in (pl.Date, pl.Null):
        return expr.cast(_US)
    if dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum):
        return parse_times(expr.cast(pl.String))
    if dtype.is_numeric():
        factor = _EPOCH_FACTORS[_epoch_unit(frame, canon, unit)]
        x = expr.cast(pl.Float64)
        micros = (x * factor).round()
        ok = x.is_finite() & (x >= 0) & (micros < 2.0**62)
        return pl.when(ok).then(micros).cast(pl.Int64).cast(_US)
    msg = (
        f"{table} column {_label(table, src, canon)} has dtype {dtype}; expected "
        f"times: Datetime, Date, ISO-8601 text or Unix epoch numbers.\n  Hint: "
        f"convert it first, e.g. pl.col({src!r}).str.to_datetime(format)."
    )
    raise SchemaError(msg)


@dataclass(frozen=True)
class Whole:
    """What one part of a log, read on its own, must know of the whole log.

    :mod:`ireval_df.spark` reads a log in parts (the actions of some users
    each) with :func:`read_part`; a part alone would tell these from its own
    rows, and could tell them differently from the whole log.

    Attributes
    ----------
    epoch_units : mapping of str to str
        The unit of each time column given as numbers whose unit is told
        by magnitude (``"searches.ts"``, ``"events.ts"``,
        ``"results.published_at"``), told from the whole table.
    sessions_given : bool
        Whether any search of the whole log has a ``session_id`` (else
        sessions are derived from the gaps).
    """

    epoch_units: Mapping[str, EpochUnit] = field(default_factory=dict)
    sessions_given: bool = False


@dataclass(frozen=True)
class _Options:
    invalid: Invalid
    contaminated: Contaminated
    epoch_unit: EpochUnit | None
    #: set when reading one part of a log (:func:`read_part`)
    whole: Whole | None = None
    #: where a part puts the units it dropped as contaminated
    mixed: list[pl.DataFrame] | None = None


# --- rules: count, report, drop -----------------------------------------------------------


@dataclass(frozen=True)
class _Rule:
    """Rows that break a rule: what they have, and the columns that identify one."""

    problem: str
    bad: pl.Expr
    show: Sequence[str]
    action: str = "dropped"


_RAW = "__ireval_raw_"  # a time column's value as given, for messages
#: A column a part of a log may carry in every table: each row's number in
#: its input, which an issue keeps for its example (dropped after reading).
ROW_NUMBER = "__ireval_rowno"


def _example(row: Mapping[str, Any], show: Sequence[str]) -> str:
    return ", ".join(f"{k.removeprefix(_RAW)}={row[k]!r}" for k in show if k in row)


def _repeats(frame: pl.DataFrame, key: pl.Expr, order: Sequence[pl.Expr]) -> pl.Series:
    """Flag every row but the first of each ``key``, first by ``order``.

    ``key`` is one column (null: never a repeat); only the rows whose key
    repeats are sorted, and ``order`` is computed for them alone, so a
    frame without repeats costs one hash pass.
    """
    keys = frame.select(key.alias("k")).to_series()
    given = keys.is_not_null()
    n = int(given.sum())
    present = keys if n == keys.len() else keys.filter(given)
    # strictly increasing (a log written in order) proves no repeat in one pass
    if n < 2 or (present.slice(1) > present.slice(0, n - 1)).all():
        return pl.repeat(value=False, n=frame.height, eager=True)
    if present.n_unique() == n:
        return pl.repeat(value=False, n=frame.height, eager=True)
    dup = keys.is_duplicated() & given
    ranked = [o.alias(f"__ireval_o{i}") for i, o in enumerate(order)]
    extra = (
        frame.with_row_index("__ireval_i")
        .with_columns(keys.alias("__ireval_k"))
        .filter(dup)
        .with_columns(ranked)
        .sort(
            "__ireval_k",
            *(f"__ireval_o{i}" for i in range(len(order))),
            nulls_last=True,
        )
        .filter(~pl.col("__ireval_k").is_first_distinct())["__ireval_i"]
    )
    rows = pl.int_range(frame.height, eager=True).cast(extra.dtype)
    return rows.is_in(extra.implode())


def slot_key(search: pl.Expr, position: pl.Expr) -> pl.Expr:
    """One UInt64 per (search key, position >= 0): a cheap join and set key."""
    return search.cast(pl.UInt64) * (1 << 32) + position.cast(pl.UInt64)


def _row_hash(columns: Sequence[str], seed: int) -> pl.Expr:
    """Hash a row's values, to order rows that tie on every key."""
    return pl.struct([pl.col(c) for c in columns if not c.startswith("__ireval")]).hash(
        seed
    )


def _apply(
    frame: pl.DataFrame,
    table: str,
    rules: Sequence[_Rule],
    issues: list[Issue],
    invalid: Invalid,
) -> pl.DataFrame:
    """Count the rows breaking each rule (the first it breaks), then drop them.

    With ``invalid="error"`` any such row raises a DataError listing them all.
    """
    if not rules or frame.height == 0:
        return frame
    any_bad = pl.any_horizontal([r.bad.fill_null(value=False) for r in rules]).any()
    if not frame.select(any_bad).item():  # the common case: one pass, no copy
        return frame
    code: Any = pl.when(rules[0].bad).then(pl.lit(0, pl.Int32))
    for i, rule in enumerate(rules[1:], start=1):
        code = code.when(rule.bad).then(pl.lit(i, pl.Int32))
    marked = frame.with_columns(code.otherwise(None).alias(_PROBLEM))
    counts = (
        marked.filter(pl.col(_PROBLEM).is_not_null())
        .group_by(_PROBLEM)
        .agg(pl.len().alias("__n"), pl.all().first())
        .sort(_PROBLEM)
    )
    if counts.height == 0:
        return frame
    found = []
    for row in counts.iter_rows(named=True):
        rule = rules[row[_PROBLEM]]
        found.append(
            Issue(
                table,
                rule.problem,
                row["__n"],
                rule.action,
                _example(row, rule.show),
                row.get(ROW_NUMBER),
            )
        )
    _raise_or_record(found, issues, invalid)
    return marked.filter(pl.col(_PROBLEM).is_null()).drop(_PROBLEM)


def _count(
    frame: pl.DataFrame,
    table: str,
    rule: _Rule,
    issues: list[Issue],
    invalid: Invalid,
) -> None:
    """Count the rows of a rule that changes values rather than dropping rows."""
    n = frame.select(rule.bad.sum()).item() if frame.height else 0
    if n:
        row = frame.filter(rule.bad).row(0, named=True)
        found = Issue(
            table,
            rule.problem,
            n,
            rule.action,
            _example(row, rule.show),
            row.get(ROW_NUMBER),
        )
        _raise_or_record([found], issues, invalid)


def _raise_or_record(found: list[Issue], issues: list[Issue], invalid: Invalid) -> None:
    if invalid == "error" and found:
        lines = "\n".join(f"  - {i}" for i in found)
        msg = (
            f"read_log found rows it cannot use (invalid='error'):\n{lines}\n"
            f"  Hint: fix them, or pass invalid='drop' to drop them with a warning."
        )
        raise DataError(msg)
    issues.extend(found)


# --- the tables ---------------------------------------------------------------------------


def _map(
    raw: pl.DataFrame, table: Table, columns: Mapping[str, str] | None, label: str
) -> tuple[pl.DataFrame, dict[str, str]]:
    """Rename to canonical names; return the frame and canonical -> source."""
    names = raw.columns
    mapping = resolve(names, SPECS[table], columns, label)
    renamed = raw.select(pl.col(n).alias(mapping.get(n, n)) for n in names)
    return renamed, {dst: src for src, dst in mapping.items()}


def _cast(
    frame: pl.DataFrame,
    table: Table,
    source: Mapping[str, str],
    epoch_unit: EpochUnit | None,
    whole: Whole | None = None,
) -> tuple[pl.DataFrame, list[_Rule]]:
    """Cast the canonical columns; rules for values that do not cast.

    ``whole`` (a part of a log) gives the epoch units told from the whole log.
    """
    casts: dict[str, pl.Expr] = {}
    fatal: list[tuple[str, pl.Expr]] = []
    for canon, src in source.items():
        if canon in _IDS[table]:
            expr, bad = _as_id(frame, canon, src, table)
            casts[canon] = expr
            if bad is not None:
                fatal.append((canon, bad))
        elif canon in ("ts", "published_at"):
            unit = epoch_unit
            if whole is not None:
                unit = whole.epoch_units.get(f"{table}.{canon}", epoch_unit)
            casts[canon] = _as_time(frame, canon, src, table, unit)
        elif canon in ("page", "n_results", "position"):
            casts[canon] = _as_int(frame, canon, src, table)
        elif canon == "value":
            casts[canon] = _as_float(frame, canon, src, table)
        elif canon == "dwell_ms":
            casts[canon] = _as_float(frame, canon, src, table).round().cast(pl.Int64)
        elif canon in ("variant", "event_type", "query"):
            casts[canon] = _as_text(frame, canon, src, table)
    if table == "searches" and "serp_answer" in frame.columns:
        casts["serp_answer"] = _as_bool(frame, "serp_answer", "serp_answer", table)
    if table == "units":
        for name in frame.columns:
            if name.startswith("pre_"):
                casts[name] = _as_float(frame, name, name, table)
    for canon, bad in fatal:
        n = frame.select(bad.sum()).item()
        if n:
            example = frame.filter(bad)[canon][0]
            msg = (
                f"{table} column {_label(table, source[canon], canon)} holds floats, "
                f"and {n} of them are not whole numbers, e.g. {example!r}; ids must "
                f"be strings or integers.\n  Hint: read the ids as strings, or cast "
                f"them first: pl.col({source[canon]!r}).cast(pl.String)."
            )
            raise SchemaError(msg)
    rules: list[_Rule] = []
    raws = {}
    for canon in ("ts", "published_at"):
        if canon in source:
            raws[_RAW + canon] = pl.col(canon)  # as given, for messages
            if canon == "ts":  # a publication time is an attribute: left null
                ids = [c for c in ("search_id", "event_id") if c in source]
                rules.append(
                    _Rule(
                        "with a time (ts) missing, not a time, or a negative epoch",
                        pl.col("ts").is_null(),
                        (*ids, _RAW + canon),
                    )
                )
    out = frame.with_columns(**raws).with_columns(**casts)
    return out, rules


def _as_text(frame: pl.DataFrame, canon: str, src: str, table: str) -> pl.Expr:
    dtype = frame.schema[canon]
    if dtype.is_nested() or dtype == pl.Object:
        msg = (
            f"{table} column {_label(table, src, canon)} has dtype {dtype}; expected "
            f"text.\n  Hint: cast it first, e.g. pl.col({src!r}).cast(pl.String)."
        )
        raise SchemaError(msg)
    return pl.col(canon).cast(pl.String)


def _fatal_duplicates(
    frame: pl.DataFrame, keys: list[str], table: str, hint: str
) -> None:
    key = pl.struct(keys) if len(keys) > 1 else pl.col(keys[0])
    # as many distinct hashes as rows proves there is no repeat, cheaply
    if frame.select(key.hash(1).n_unique()).item() == frame.height:
        return
    extra = frame.height - frame.select(key.n_unique()).item()
    if extra:
        example = frame.filter(key.is_duplicated()).row(0, named=True)
        raise DataError(duplicates_message(table, keys, extra, example, hint))


#: The hint of repeated search ids, and of repeated units (by their keys).
SEARCH_REPEATS_HINT = (
    "a search_id names one served result page; "
    "drop the repeats, e.g. searches.unique('search_id')."
)


def unit_repeats_hint(keys: Sequence[str]) -> str:
    """Return the hint of a units table with repeated ``keys``."""
    return (
        "one row per unit (per experiment); drop the repeats, e.g. "
        f"units.unique({list(keys)!r})."
    )


def duplicates_message(
    table: str,
    keys: Sequence[str],
    extra: int,
    example: Mapping[str, Any],
    hint: str,
) -> str:
    """Return the error for ``extra`` repeated ``keys`` of ``table`` (``example``: a repeated row)."""
    shown = ", ".join(f"{k}={example[k]!r}" for k in keys)
    what = "(" + ", ".join(keys) + ")" if len(keys) > 1 else keys[0]
    return (
        f"{table} has {extra} repeated {what} "
        f"{'value' if extra == 1 else 'values'}, e.g. {shown}; each must "
        f"appear once.\n  Hint: {hint}"
    )


def nulls_message(table: str, column: str, n: int) -> str:
    """Return the error for ``n`` null values in a column every row needs."""
    return (
        f"{table} has {n} null {'value' if n == 1 else 'values'} in column "
        f"{column!r}; every row needs one.\n  Hint: drop those rows first, "
        f"e.g. {table}.drop_nulls({column!r})."
    )


def _fatal_nulls(frame: pl.DataFrame, column: str, table: str) -> None:
    n = frame.select(pl.col(column).null_count()).item()
    if n:
        raise DataError(nulls_message(table, column, n))


def _join_runs(
    frame: pl.DataFrame,
    keyed: pl.DataFrame,
    on: str,
    expected: pl.Series | None = None,
    unless_expected: Sequence[str] = (),
) -> pl.DataFrame:
    """``frame.join(keyed, on=on, how="left")`` (``keyed`` unique on ``on``), in order.

    A log's results and events come grouped by search: each run of equal
    ids is looked up once (polars' join) and the match spread over the run
    by a gather. When the runs are exactly the rows of ``keyed`` where
    ``expected`` holds, in that order (results written in the order of
    their searches), one comparison of the ids proves it and no lookup is
    needed; the columns ``unless_expected`` are then left out (the caller
    knows what they hold). ``keyed``'s column :data:`_KEY`, when it has
    one, is its row number.
    """
    run = frame[on].rle_id()
    starts = (run != run.shift(1)).fill_null(value=True)
    runs = starts.sum() * 4 <= frame.height * 3
    # a frame's filter keeps the column's chunks (the file's row groups);
    # a Series' joins them into one, copying the strings: 5x slower at 50M
    heads = frame.select(on).filter(starts).to_series() if runs else frame[on]
    others = [c for c in keyed.columns if c != on]
    columns = None
    if expected is not None:
        rows = expected.arg_true()
        if (
            rows.len() == heads.len()
            and keyed[on].filter(expected).eq_missing(heads).all()
        ):
            columns = [
                # the row number of row r is r: no gather
                rows.cast(keyed[c].dtype).alias(c)
                if c == _KEY
                else keyed[c].gather(rows)
                for c in others
                if c not in unless_expected
            ]
    if columns is None:
        found = heads.to_frame().join(keyed, on=on, how="left", maintain_order="left")
        columns = [found[c] for c in others]
    if runs:
        columns = [c.gather(run) for c in columns]
    return with_series(frame, columns)


def _search_sorted_many(table: pl.Series, queries: pl.Series) -> pl.Series:
    """``table.search_sorted(queries)`` (``table`` sorted), the queries taken in order.

    A binary search per query in a large table misses the cache at almost
    every step; queries in sorted order walk the table from one end to the
    other (8M random queries in 50M keys: 4.3 s, against 1.4 s sorting
    them first). Queries already sorted are not sorted again.

    Examples
    --------
    >>> _search_sorted_many(pl.Series([10, 20, 30]), pl.Series([30, 5, 20])).to_list()
    [2, 0, 1]
    """
    if queries.is_sorted():
        return table.search_sorted(queries)
    order = queries.arg_sort()
    hits = table.search_sorted(queries.gather(order))
    out = pl.zeros(queries.len(), dtype=hits.dtype, eager=True)
    out.scatter(order, hits)
    return out


def _among(ids: pl.Expr, dropped: pl.Series) -> pl.Expr:
    """``ids.is_in(dropped)``, a constant when nothing was dropped."""
    return ids.is_in(dropped.implode()) if dropped.len() else pl.lit(value=False)


def _slot_rows(frame: pl.DataFrame, slots: pl.Series) -> pl.Series | None:
    """Each event's row in ``slots`` (its (search, position) slot), null: none.

    By a binary search per event when the results were written in order
    (``slots`` sorted; read_log dropped repeated slots); None otherwise.
    """
    n = slots.len()
    if n == 0 or not slots.is_sorted():
        return None
    key = slot_key(pl.col(_KEY), pl.col("position").clip(0))
    keys = frame.select(key.fill_null(0)).to_series()
    at = _search_sorted_many(slots, keys).clip(upper_bound=n - 1)
    # slot 0 (search 0, position 0) is never displayed: no false hit on nulls
    return pl.select(pl.when(slots.gather(at) == keys).then(at)).to_series()


def _drop_raw(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.drop([c for c in frame.columns if c.startswith("__ireval")])


def _searches(
    raw: pl.DataFrame,
    columns: Mapping[str, str] | None,
    label: str,
    units: pl.DataFrame | None,
    issues: list[Issue],
    options: _Options,
) -> tuple[pl.DataFrame, pl.Series]:
    """Cast and check the searches; return them and the ids of those dropped."""
    frame, source = _map(raw, "searches", columns, label)
    frame, rules = _cast(frame, "searches", source, options.epoch_unit, options.whole)
    _fatal_nulls(frame, "search_id", "searches")
    _fatal_duplicates(
        frame,
        ["search_id"],
        "searches",
        SEARCH_REPEATS_HINT,
    )
    if "experiment_id" not in frame.columns:
        frame = frame.with_columns(experiment_id=pl.lit("default", pl.String))
    else:
        frame = frame.with_columns(pl.col("experiment_id").fill_null("default"))
    if "unit_id" not in frame.columns:
        frame = frame.with_columns(unit_id=pl.col("user_id"))
    else:
        frame = frame.with_columns(pl.col("unit_id").fill_null(pl.col("user_id")))
    if "variant" not in frame.columns:
        if units is None or "variant" not in units.columns:
            msg = (
                f"{label} has no variant column (found {raw.columns!r}), and no "
                f"units table gives one.\n  Hint: pass columns={{'searches': "
                f"{{'<arm column>': 'variant'}}}}, or a units table with unit_id "
                f"and variant; a log of one arm can add "
                f"searches.with_columns(variant=pl.lit('all'))."
            )
            raise SchemaError(msg)
        on = ["unit_id"]
        if "experiment_id" in units.columns:
            on.append("experiment_id")
        assigned = units.select(*on, "variant").filter(pl.col("variant").is_not_null())
        frame = frame.join(assigned, on=on, how="left")
    if "page" not in frame.columns:
        frame = frame.with_columns(page=pl.lit(1, pl.Int32))
    rules += [
        _Rule("with no user_id", pl.col("user_id").is_null(), ("search_id",)),
        _Rule("with no variant", pl.col("variant").is_null(), ("search_id", "unit_id")),
        _Rule(
            "with a page missing or below 1",
            pl.col("page").is_null() | (pl.col("page") < 1),
            ("search_id", "page"),
        ),
    ]
    if "session_id" in frame.columns and (
        not options.whole.sessions_given
        if options.whole is not None
        else frame["session_id"].null_count() == frame.height
    ):
        frame = frame.drop("session_id")  # none given: derived from the gaps
    if "session_id" in frame.columns:
        rules.append(
            _Rule(
                "with no session_id (while others have one)",
                pl.col("session_id").is_null(),
                ("search_id",),
            )
        )
    if "n_results" in frame.columns:
        rules.append(
            _Rule(
                "with n_results missing or negative",
                pl.col("n_results").is_null() | (pl.col("n_results") < 0),
                ("search_id", "n_results"),
            )
        )
    ids = frame["search_id"]
    frame = _apply(frame, "searches", rules, issues, options.invalid)
    frame = _contamination(frame, units, issues, options.contaminated, options.mixed)
    if frame.height == 0 and options.whole is None:  # a part may have none
        msg = (
            f"{label} has no usable searches left"
            + (f" ({len(ids)} rows, all dropped: see above)" if len(ids) else "")
            + "; there is nothing to measure."
        )
        raise DataError(msg)
    dropped = (
        ids.clear()
        if frame.height == ids.len()
        else ids.filter(~ids.is_in(frame["search_id"].implode()))
    )
    return _drop_raw(frame), dropped


def _contamination(
    frame: pl.DataFrame,
    units: pl.DataFrame | None,
    issues: list[Issue],
    contaminated: Contaminated,
    found: list[pl.DataFrame] | None = None,
) -> pl.DataFrame:
    """Refuse (or drop) a unit seen in more than one variant of an experiment.

    ``found`` (a part of a log) receives the units dropped:
    ``experiment_id, unit_id, variant`` (the sorted list of their variants).
    """
    seen = frame.select("experiment_id", "unit_id", "variant")
    if units is not None and "variant" in units.columns:
        extra = units.filter(pl.col("variant").is_not_null())
        if "experiment_id" in units.columns:
            seen = pl.concat([seen, extra.select(seen.columns)])
        else:  # a unit's one variant, in every experiment it is in
            per = extra.select("unit_id", "variant").join(
                seen.select("experiment_id", "unit_id").unique(), on="unit_id"
            )
            seen = pl.concat([seen, per.select(seen.columns)])
    if _one_variant_each(seen):
        return frame
    variant = pl.col("variant")
    bounds = seen.group_by("experiment_id", "unit_id").agg(
        variant.min().alias("__ireval_lo"), variant.max().alias("__ireval_hi")
    )
    mixed_units = bounds.filter(pl.col("__ireval_lo") != pl.col("__ireval_hi"))
    mixed = (
        seen.join(
            mixed_units.select("experiment_id", "unit_id"),
            on=["experiment_id", "unit_id"],
        )
        .group_by("experiment_id", "unit_id")
        .agg(variant.unique().sort())
        .sort("experiment_id", "unit_id")
    )
    if mixed.height == 0:
        return frame
    if found is not None:
        found.append(mixed)
    if contaminated == "error":
        raise DataError(contamination_message(mixed))
    bad = mixed.select("experiment_id", "unit_id")
    before = frame.height
    frame = frame.join(bad, on=["experiment_id", "unit_id"], how="anti")
    issues.append(contamination_issue(mixed, before - frame.height))
    return frame


def _shown(mixed: pl.DataFrame) -> str:
    """Return the first five contaminated units and their variants, and how many more."""
    shown = "; ".join(
        f"{r['unit_id']!r} in {r['variant']!r}"
        + ("" if r["experiment_id"] == "default" else f" ({r['experiment_id']!r})")
        for r in mixed.head(5).iter_rows(named=True)
    )
    more = f" and {mixed.height - 5} more" if mixed.height > 5 else ""
    return shown + more


def contamination_message(mixed: pl.DataFrame) -> str:
    """Return the error for units seen in more than one variant (``contaminated="error"``).

    ``mixed``: ``experiment_id, unit_id, variant`` (each unit's sorted
    variants), sorted by experiment and unit.
    """
    n = mixed.height
    return (
        f"{n} {'unit is' if n == 1 else 'units are'} seen in more than one "
        f"variant: {_shown(mixed)}. A unit's searches must all belong to one "
        f"arm, or its outcomes cannot be compared (a broken assignment, or "
        f"units shared across arms).\n  Hint: fix the assignment, or pass "
        f"contaminated='drop' to drop those units' searches with their "
        f"results and events (reported in a warning)."
    )


def contamination_issue(mixed: pl.DataFrame, rows: int) -> Issue:
    """Return the issue of ``rows`` searches dropped with the units ``mixed`` (``contaminated="drop"``)."""
    n = mixed.height
    return Issue(
        "searches",
        f"of {n} {'unit' if n == 1 else 'units'} seen in more than one "
        f"variant (contaminated='drop')",
        rows,
        "dropped",
        _shown(mixed),
    )


def _one_variant_each(seen: pl.DataFrame) -> bool:
    """Whether every (experiment_id, unit_id) of ``seen`` has one variant.

    Proved on 64-bit hashes: a collision of two units only merges their
    rows (so it can answer False wrongly, which the exact pass corrects,
    never True), and the variants' hashes are checked distinct first.
    """
    variants = seen["variant"].unique()
    if variants.hash(29).n_unique() != variants.len():
        return False
    spread = (
        seen.select(
            # a cheap combined key: a collision can only merge two units
            (pl.col("experiment_id").hash(23) ^ pl.col("unit_id").hash(31)).alias("k"),
            pl.col("variant").hash(29).alias("v"),
        )
        .group_by("k")
        .agg((pl.col("v").min() != pl.col("v").max()).alias("mixed"))
    )
    return not spread["mixed"].any()


def _units(
    raw: pl.DataFrame,
    columns: Mapping[str, str] | None,
    label: str,
    issues: list[Issue],
    invalid: Invalid,
) -> pl.DataFrame:
    frame, source = _map(raw, "units", columns, label)
    frame, _ = _cast(frame, "units", source, None)
    _fatal_nulls(frame, "unit_id", "units")
    keys = ["unit_id"]
    if "experiment_id" in frame.columns:
        keys.append("experiment_id")
    _fatal_duplicates(frame, keys, "units", unit_repeats_hint(keys))
    if "variant" in frame.columns:
        rule = _Rule("with no variant", pl.col("variant").is_null(), ("unit_id",))
        frame = _apply(frame, "units", [rule], issues, invalid)
    return _drop_raw(frame)


def _results(
    raw: pl.DataFrame,
    columns: Mapping[str, str] | None,
    label: str,
    searches: pl.DataFrame,
    dropped: pl.Series,
    issues: list[Issue],
    invalid: Invalid,
    whole: Whole | None = None,
) -> tuple[pl.DataFrame, pl.Series, pl.Series]:
    """Cast and check the results; return them, each row's search key and slot.

    The slot is :func:`slot_key` of the search key and the position.
    """
    frame, source = _map(raw, "results", columns, label)
    frame, _ = _cast(frame, "results", source, None, whole)
    if "published_at" in frame.columns:
        raw_time = pl.col(_RAW + "published_at")
        rule = _Rule(
            "with a published_at that is not a time",
            pl.col("published_at").is_null() & raw_time.is_not_null(),
            ("search_id", "position", _RAW + "published_at"),
            action="left null (age unknown)",
        )
        _count(frame, "results", rule, issues, invalid)
    keyed = searches.select(
        "search_id", pl.col("n_results").alias("__ireval_n")
    ).with_row_index(_KEY)
    tie_cols = frame.columns
    # results written in their searches' order, for every search with results
    expected = searches.select(pl.col("n_results").fill_null(1) > 0).to_series()
    # in that order, no search of the runs has n_results = 0: no check needed
    frame = _join_runs(frame, keyed, "search_id", expected, ["__ireval_n"])
    slot = ["search_id", "position"]
    rules = [
        _Rule(
            "with no search_id or position",
            pl.col("search_id").is_null() | pl.col("position").is_null(),
            slot,
        ),
        _Rule("with a position below 1", pl.col("position") < 1, slot),
        _Rule(
            "of searches dropped above",
            _among(pl.col("search_id"), dropped),
            ("search_id",),
        ),
        _Rule("pointing at unknown searches", pl.col(_KEY).is_null(), ("search_id",)),
    ]
    if "__ireval_n" in frame.columns:
        rules.append(
            _Rule("of searches with n_results = 0", pl.col("__ireval_n") == 0, slot)
        )
    frame = _apply(frame, "results", rules, issues, invalid)
    doc = pl.col("doc_id") if "doc_id" in frame.columns else pl.lit(None, pl.String)
    # on the two Series: a select would first align the frame's chunks (the
    # file's row groups against the joined key's one chunk), copying every
    # column of 50M rows
    slots = pl.select(
        slot_key(pl.lit(frame[_KEY]), pl.lit(frame["position"]))
    ).to_series()
    repeat = _repeats(frame, pl.lit(slots), [doc, _row_hash(tie_cols, 17)])
    rule = _Rule(
        "repeating a (search_id, position) slot",
        pl.lit(repeat),
        (*slot, "doc_id"),
        action="dropped, the smallest doc_id kept",
    )
    frame = _apply(frame, "results", [rule], issues, invalid)
    if slots.len() != frame.height:
        slots = slots.filter(~repeat)
    return _drop_raw(frame), frame[_KEY], slots.alias("slot")


def _events(
    raw: pl.DataFrame,
    columns: Mapping[str, str] | None,
    label: str,
    searches: pl.DataFrame,
    results: pl.DataFrame | None,
    result_key: pl.Series | None,
    result_slot: pl.Series | None,
    dropped: pl.Series,
    issues: list[Issue],
    options: _Options,
) -> tuple[pl.DataFrame, pl.Series, pl.Series | None]:
    """Cast and check the events.

    Return them, each one's search key (or null), and each click's row in
    the results (see :attr:`_Index.event_result`).
    """
    invalid = options.invalid
    frame, source = _map(raw, "events", columns, label)
    frame, rules = _cast(frame, "events", source, options.epoch_unit, options.whole)
    for name, dtype in (("search_id", pl.String), ("user_id", pl.String)):
        if name not in frame.columns:
            frame = frame.with_columns(pl.lit(None, dtype).alias(name))
    if "position" not in frame.columns:
        frame = frame.with_columns(position=pl.lit(None, pl.Int32))
    keyed = searches.select(
        "search_id",
        pl.col("ts").alias("__ireval_sts"),
        pl.col("user_id").alias("__ireval_user"),
    ).with_row_index(_KEY)
    frame = _join_runs(frame, keyed, "search_id").with_columns(
        pl.col("user_id").fill_null(pl.col("__ireval_user"))
    )
    is_click = pl.col("event_type") == CLICK
    shown = [
        c
        for c in ("event_id", "event_type", "search_id", "position")
        if c in frame.columns
    ]
    if results is not None and result_key is not None and result_slot is not None:
        needs_doc = is_click & pl.col("position").is_null() & pl.col(_KEY).is_not_null()
        if (
            "doc_id" in frame.columns
            and "doc_id" in results.columns
            and frame.select((needs_doc & pl.col("doc_id").is_not_null()).any()).item()
        ):
            # a click that names its document but not its position: where it was shown
            by_doc = (
                results.select(pl.Series(_KEY, result_key), "position", "doc_id")
                .group_by(_KEY, "doc_id")
                .agg(pl.col("position").min().alias("__ireval_pos"))
            )
            frame = frame.join(
                by_doc, on=[_KEY, "doc_id"], how="left", maintain_order="left"
            ).with_columns(pl.col("position").fill_null(pl.col("__ireval_pos")))
        rows = _slot_rows(frame, result_slot)
        if rows is None:  # results not in order: a hash set of every slot
            slot = slot_key(pl.col(_KEY), pl.col("position").clip(0))
            displayed = slot.is_in(result_slot.implode())
        else:  # a click's row, kept with the events (filtered with them)
            frame = with_series(frame, [rows.alias(_RESULT)]).with_columns(
                pl.when(is_click).then(pl.col(_RESULT)).alias(_RESULT)
            )
            displayed = pl.col(_RESULT).is_not_null()
        not_shown = (
            is_click
            & pl.col(_KEY).is_not_null()
            & pl.col("position").is_not_null()
            & ~displayed
        )
    else:
        not_shown = is_click & (pl.col("position") < 1)
    rules += [
        _Rule("with no event_type", pl.col("event_type").is_null(), shown),
        _Rule(
            "of searches dropped above",
            _among(pl.col("search_id"), dropped),
            shown,
        ),
        _Rule(
            "pointing at unknown searches",
            pl.col("search_id").is_not_null() & pl.col(_KEY).is_null(),
            shown,
        ),
        _Rule(
            "with no user_id (and no search to take it from)",
            pl.col("user_id").is_null(),
            shown,
        ),
        _Rule(
            "before their search was served",
            pl.col("ts") < pl.col("__ireval_sts"),
            (*shown, "ts", "__ireval_sts"),
        ),
        _Rule("clicking a position the search did not display", not_shown, shown),
    ]
    frame = _apply(frame, "events", rules, issues, invalid)
    if "event_id" in frame.columns:
        repeat = _repeats(
            frame, pl.col("event_id"), [pl.col("ts"), _row_hash(frame.columns, 29)]
        )
        rule = _Rule(
            "repeating an event_id",
            pl.lit(repeat),
            shown,
            action="dropped, the earliest kept",
        )
        frame = _apply(frame, "events", [rule], issues, invalid)
    if "dwell_ms" in frame.columns:
        negative = pl.col("dwell_ms") < 0
        rule = _Rule(
            "with a negative dwell_ms",
            negative,
            (*shown, "dwell_ms"),
            action="left null (the time to the next action is used)",
        )
        _count(frame, "events", rule, issues, invalid)
        frame = frame.with_columns(
            pl.when(negative.not_()).then(pl.col("dwell_ms")).alias("dwell_ms")
        )
    key = frame[_KEY]
    rows = frame[_RESULT] if _RESULT in frame.columns else None
    return _drop_raw(frame), key, rows


# --- sessions and the timeline ------------------------------------------------------------


def _gap(value: str | dt.timedelta) -> dt.timedelta:
    """Read ``session_gap``: a timedelta, or a number and a unit (``30m``)."""
    if isinstance(value, dt.timedelta) and value > dt.timedelta(0):
        return value
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", value)
        if match:
            unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
            delta = dt.timedelta(**{unit[match.group(2)]: float(match.group(1))})
            if delta > dt.timedelta(0):
                return delta
    msg = (
        f"session_gap={value!r} is not a positive duration.\n  Hint: e.g. "
        f"session_gap='30m', '1h', '90s' or datetime.timedelta(minutes=30)."
    )
    raise OptionError(msg)


def exact_key(values: pl.Series | pl.DataFrame, seed: int = 0) -> pl.Series:
    """Return a UInt64 key per value (or per row of a frame): its 64-bit hash.

    A hash is a cheap join and sort key, used only after checking with a
    second, independent hash that it joins no two distinct values: every
    value of the first hash must come with one value of the second. When
    one does not (a collision), the key is the dense rank of the values
    instead: exact, but slower. The check costs one grouping of two integer
    columns instead of a hash table of the values themselves; it can miss a
    collision only when two distinct values collide in both hashes at once
    (odds about 2**-64 per pair of values).

    Examples
    --------
    >>> key = exact_key(pl.Series(["u1", "u2", "u1"]))
    >>> key[0] == key[2], key[0] == key[1]
    (True, False)
    >>> pairs = pl.DataFrame({"user": ["u1", "u1", "u2"], "session": ["1", "1", "1"]})
    >>> key = exact_key(pairs)
    >>> key[0] == key[1], key[0] == key[2]
    (True, False)
    """
    frame = values.to_frame() if isinstance(values, pl.Series) else values
    row = pl.struct(frame.columns) if frame.width > 1 else pl.col(frame.columns[0])
    hashed = frame.select(row.hash(seed).alias("h"), row.hash(seed + 101).alias("c"))
    collided = (
        hashed.lazy()
        .group_by("h")
        .agg((pl.col("c").min() != pl.col("c").max()).alias("x"))
        .select(pl.col("x").any())
        .collect()
        .item()
    )
    if not collided:
        return hashed["h"]
    return frame.select((row.rank("dense") - 1).cast(pl.UInt64)).to_series()


@dataclass(frozen=True)
class _Timeline:
    """What the one sort of every user's actions gives (see :func:`_timeline`)."""

    searches: pl.DataFrame  # with session_id
    session: pl.Series  # per search, UInt64
    first: pl.Series  # per search: the first of its session
    next_search: pl.Series  # per search: the next search of its session, or null
    next_ts: pl.Series | None  # per event: the next action of its session, or null
    last_click: pl.Series | None  # per event: the session's last click
    user: pl.Series | None  # per search, an exact UInt64 key of user_id (if made)


def _timeline(
    searches: pl.DataFrame,
    events: pl.DataFrame | None,
    event_key: pl.Series | None,
    gap: dt.timedelta,
) -> _Timeline:
    """Sessions, the next search of each search, the next action of each event.

    One sort of every action of every user: by user (derived sessions) or
    session (given ones), then time, a result page before an event at one
    instant, then a hash of the row (the ``search_id``, the ``event_id`` or
    the whole event), so that row order never matters. The results go back
    to each search and event by scatter, not by another sort.
    """
    n = searches.height
    key_type = pl.UInt32 if n < 2**32 - 1 else pl.UInt64
    derive = "session_id" not in searches.columns
    # time and kind in one sort key: a result page (0) before an event (1)
    order = (pl.col("ts").dt.epoch("us") * 2).alias("order")
    s = searches.select(
        order,
        pl.col("search_id").hash(11).alias("tie"),
        pl.int_range(n, dtype=key_type).alias("search"),
        pl.lit(None, key_type).alias("row"),
        pl.lit(value=False).alias("click"),
    )
    if derive:
        users = searches["user_id"]
        if events is not None:
            users = pl.concat([users, events["user_id"]])
        keys = exact_key(users, 5)
        group = user = keys[:n]
    else:
        user = None
        # a given session is its user's: two users' "1" are two sessions
        group = exact_key(searches.select("user_id", "session_id"), 5)
    s = s.with_columns(group.alias("group"))
    parts = [s]
    if events is not None and event_key is not None:
        tie = (
            pl.col("event_id").hash(13)
            if "event_id" in events.columns
            else pl.struct(events.columns).hash(13)
        )
        e = events.select(
            order + 1,
            tie.alias("tie"),
            event_key.cast(key_type).alias("search"),
            pl.int_range(events.height, dtype=key_type).alias("row"),
            (pl.col("event_type") == CLICK).alias("click"),
        )
        if derive:
            e = e.with_columns(keys[n:].alias("group"))
        else:
            e = e.with_columns(
                group.gather(event_key.cast(pl.Int64)).alias("group")
            )  # null where the event has no search
            e = _place(e, s, events, searches, gap)
        parts = [s, e]
    line = pl.concat(parts, how="vertical").sort("group", "order", "tie")
    if derive:
        gap_us = gap // dt.timedelta(microseconds=1)
        new = (pl.col("group") != pl.col("group").shift(1)).fill_null(value=True) | (
            ((pl.col("order") // 2) - (pl.col("order") // 2).shift(1)) > gap_us
        )
        line = line.with_columns(new.cum_sum().cast(pl.UInt64).alias("session"))
    else:
        line = line.with_columns(pl.col("group").alias("session"))
    same = (pl.col("session") == pl.col("session").shift(-1)).fill_null(value=False)
    line = line.with_columns(
        pl.when(same).then(pl.col("order").shift(-1) // 2).alias("next_us")
    )
    on_page = line.filter(pl.col("row").is_null()).with_columns(
        pl.when(same).then(pl.col("search").shift(-1)).alias("next_search"),
        (pl.col("session") != pl.col("session").shift(1))
        .fill_null(value=True)
        .alias("first"),
    )
    at = on_page["search"]
    session = pl.zeros(n, dtype=pl.UInt64, eager=True)
    session.scatter(at, on_page["session"])
    first = pl.repeat(value=False, n=n, eager=True)
    first.scatter(at, on_page["first"])
    next_search = pl.repeat(None, n, dtype=key_type, eager=True)
    next_search.scatter(at, on_page["next_search"])
    if derive:
        # the n-th session of its user: u3/1, u3/2 ...
        ordinal = on_page.select(
            (
                pl.col("first").cum_sum()
                - pl.when(
                    (pl.col("group") != pl.col("group").shift(1)).fill_null(value=True)
                )
                .then(pl.col("first").cum_sum() - 1)
                .forward_fill()
            ).cast(pl.UInt32)
        ).to_series()
        number = pl.zeros(n, dtype=pl.UInt32, eager=True)
        number.scatter(at, ordinal)
        searches = with_series(
            searches,
            [(searches["user_id"] + "/" + number.cast(pl.String)).alias("session_id")],
        )
    next_ts = last_click = None
    if events is not None and event_key is not None:
        click_session = pl.when(pl.col("click")).then(pl.col("session"))
        later_click = click_session.shift(-1).backward_fill()
        acts = line.filter(pl.col("row").is_not_null()).with_columns(
            (
                pl.col("click")
                & (
                    pl.col("session").is_null()
                    | (later_click != pl.col("session")).fill_null(value=True)
                )
            ).alias("last_click")
        )
        m = events.height
        next_ts = pl.repeat(None, m, dtype=pl.Int64, eager=True)
        next_ts.scatter(acts["row"], acts["next_us"])
        next_ts = next_ts.cast(pl.Datetime("us"))
        last_click = pl.repeat(value=False, n=m, eager=True)
        last_click.scatter(acts["row"], acts["last_click"])
    return _Timeline(searches, session, first, next_search, next_ts, last_click, user)


def _place(
    e: pl.DataFrame,
    s: pl.DataFrame,
    events: pl.DataFrame,
    searches: pl.DataFrame,
    gap: dt.timedelta,
) -> pl.DataFrame:
    """Give an event without a search its user's latest earlier search's session.

    Only when that search is at most ``gap`` before it; else it has none.
    """
    loose = e["group"].is_null()
    if not loose.any():
        return e
    anchors = pl.DataFrame(
        {
            "user_id": searches["user_id"],
            "ts": searches["ts"],
            "__anchor": s["group"],
        }
    ).sort("ts")
    placed = (
        events.select("user_id", "ts")
        .with_row_index("__i")
        .filter(loose)
        .sort("ts")
        .join_asof(
            anchors,
            on="ts",
            by="user_id",
            strategy="backward",
            tolerance=gap,
            check_sortedness=False,  # sorted by ts above
        )
    )
    group = e["group"].clone()
    group.scatter(placed["__i"], placed["__anchor"])
    return e.with_columns(group.alias("group"))


# --- the reader ---------------------------------------------------------------------------


def read_log(
    path: str | os.PathLike[str] | None = None,
    *,
    searches: Any = None,
    results: Any = None,
    events: Any = None,
    units: Any = None,
    columns: Mapping[str, Any] | None = None,
    session_gap: str | dt.timedelta = "30m",
    contaminated: Contaminated = "error",
    invalid: Invalid = "drop",
    epoch_unit: EpochUnit | None = None,
) -> SearchLog:
    """Read a search log (a folder of tables, or the tables) and check it once.

    Parameters
    ----------
    path : str or os.PathLike, optional
        A folder holding ``searches.*`` and, optionally, ``results.*``,
        ``events.*`` and ``units.*``: Parquet (``.parquet``, ``.pq``), CSV,
        TSV, JSON Lines (``.jsonl``, ``.ndjson``) or JSON, compressed text
        allowed. A table given as a keyword too is an error.
    searches : frame or path
        One row per result page served: ``search_id``, ``user_id``, ``ts``,
        ``query``, and ``variant`` (or a ``units`` table that gives it);
        optional ``session_id``, ``unit_id``, ``experiment_id``, ``page``,
        ``n_results``, ``serp_answer``, and any slice attributes. A polars
        ``DataFrame`` or ``LazyFrame``, a pandas ``DataFrame``, a pyarrow
        ``Table``, or a file.
    results : frame or path, optional
        One row per displayed slot: ``search_id``, ``position`` (from 1),
        optional ``doc_id``, ``published_at`` and result attributes
        (``source_type`` ...). Needed for the result-grain metrics and for
        checking click positions.
    events : frame or path, optional
        ``ts``, ``event_type`` (``click``, ``add_to_cart``, ``purchase``;
        others are kept: they end a dwell time), optional ``event_id``,
        ``search_id`` (null for actions outside search), ``user_id`` (taken
        from the search when absent), ``position``, ``doc_id``, ``value``
        (revenue of a purchase), ``dwell_ms``.
    units : frame or path, optional
        ``unit_id``, optional ``experiment_id`` and ``variant``, and
        pre-period covariates ``pre_*`` for variance reduction.
    columns : mapping, optional
        Source column names to canonical ones, per table
        (``{"searches": {"qid": "search_id"}}``) or for every table that
        has the column (``{"uid": "user_id"}``). Well-known spellings
        (``timestamp``, ``arm``, ``rank`` ...) are recognised without it.
    session_gap : str or datetime.timedelta, default "30m"
        A user's inactivity (no search, no event) longer than this ends a
        session, when ``searches`` has no ``session_id``.
    contaminated : {"error", "drop"}, default "error"
        A unit seen in more than one variant of an experiment (in searches
        or units): an error naming how many and which, or ``"drop"``: its
        searches, their results and events are dropped and reported.
    invalid : {"drop", "error"}, default "drop"
        Rows that break a rule (see the table in :mod:`ireval_df.online.log`):
        drop them and report every count in one
        :class:`~ireval_df.errors.LogWarning`, or raise a
        :class:`~ireval_df.errors.DataError` listing them.
    epoch_unit : {"s", "ms", "us", "ns"}, optional
        The unit of times given as numbers; by default told by magnitude
        (below 1e11 seconds, then ms, us, ns).

    Returns
    -------
    SearchLog
        The tables with their canonical columns, what was dropped
        (:attr:`SearchLog.issues`), and keys the metrics join on.

    Raises
    ------
    SchemaError
        A required column is missing (the message proposes ``columns=``),
        or a column has an unusable dtype.
    DataError
        Null or repeated search ids, a unit with two rows, contaminated
        units (unless ``contaminated="drop"``), or any rule broken with
        ``invalid="error"``.
    FormatError
        A file cannot be read, or the folder holds two files for one table.

    Warns
    -----
    LogWarning
        One warning listing every problem found: table, count, what was
        done and an example row.

    Notes
    -----
    Times are ``Datetime("us")`` in UTC: a zone is converted, a naive time
    is taken as UTC already, text is ISO-8601, numbers are Unix epochs.
    ``query_norm`` is the query after NFKC normalisation, Unicode case
    folding and whitespace collapsing (:func:`normalize_query`).
    ``unit_id`` defaults to ``user_id``, ``experiment_id`` to
    ``"default"``, ``page`` to 1, and ``n_results`` to the number of the
    search's result rows (an error without a results table).

    Examples
    --------
    >>> log = read_log(
    ...     searches=pl.DataFrame({
    ...         "search_id": ["s1", "s2"], "user_id": ["u1", "u1"],
    ...         "ts": ["2024-01-01T10:00:00", "2024-01-01T11:00:00"],
    ...         "variant": ["A", "A"], "query": ["Red  Shoes", "red shoes"],
    ...         "n_results": [10, 0]}))
    >>> log.searches.select("session_id", "query_norm").rows()
    [('u1/1', 'red shoes'), ('u1/2', 'red shoes')]
    """
    check_choice("contaminated", contaminated, ("error", "drop"))
    check_choice("invalid", invalid, ("drop", "error"))
    if epoch_unit is not None:
        check_choice("epoch_unit", epoch_unit, tuple(_EPOCH_FACTORS))
    gap = _gap(session_gap)
    given = {"searches": searches, "results": results, "events": events, "units": units}
    sources: dict[Table, Any] = {t: given[t] for t in TABLES if given[t] is not None}
    if path is not None:
        for table, file in _find_files(Path(path)).items():
            if table in sources:
                msg = (
                    f"read_log: {table} is given twice, as {table}= and as "
                    f"{file.name!r} in {display(path)!r}; pass one."
                )
                raise OptionError(msg)
            sources[table] = file
    if "searches" not in sources:
        where = f" in {display(path)!r}" if path is not None else ""
        msg = (
            f"read_log needs a searches table (one row per result page served)"
            f"{where}.\n  Hint: pass searches=frame, or a folder with "
            f"searches.parquet (or .csv, .jsonl)."
        )
        raise SchemaError(msg)
    kinds = [_kind_of(obj) for obj in sources.values() if is_frame_like(obj)]
    files = [obj for obj in sources.values() if isinstance(obj, str | os.PathLike)]
    kind = kinds[0] if kinds and not files and len(set(kinds)) == 1 else "polars"

    names = {t: _names(obj) for t, obj in sources.items()}
    per_table = _table_columns(columns, names)
    raws: dict[Table, pl.DataFrame] = {}
    labels: dict[Table, str] = {}
    for table, obj in sources.items():
        if isinstance(obj, str | os.PathLike):
            labels[table] = f"{table} file {display(obj)!r}"
            raws[table] = _read_file(Path(obj), table, per_table[table])
        elif is_frame_like(obj):
            labels[table] = table
            frame = to_polars(obj)
            raws[table] = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
        else:
            msg = (
                f"{table}= must be a frame (polars, pandas, pyarrow) or a file "
                f"path, found {type(obj).__name__}"
            )
            raise SchemaError(msg)

    options = _Options(invalid, contaminated, epoch_unit)
    log = _read(raws, labels, per_table, options, gap, kind)
    if log.issues:
        lines = "\n".join(f"  - {i}" for i in log.issues)
        warn(
            f"read_log dropped or changed rows it could not use:\n{lines}\n"
            f"  Hint: pass invalid='error' to raise instead; log.issues_frame() "
            f"lists them.",
            LogWarning,
        )
    return log


def read_part(
    tables: Mapping[Table, pl.DataFrame],
    *,
    whole: Whole,
    columns: Mapping[str, Any] | None = None,
    session_gap: str | dt.timedelta = "30m",
    epoch_unit: EpochUnit | None = None,
) -> tuple[SearchLog, pl.DataFrame | None]:
    """Read one part of a log, as :func:`read_log` reads the whole, for :mod:`ireval_df.spark`.

    A part holds every row of some users (with their searches' results
    and events, and their units' rows): the rules of :func:`read_log` then
    give each row the fate it has in the whole log, except what ``whole``
    says. Rows are dropped as with ``invalid="drop"`` and
    ``contaminated="drop"``, without a warning: the caller adds up the
    parts' :attr:`SearchLog.issues` and warns, or raises, once. A part may
    have no usable search left. Tables that carry a column
    :data:`ROW_NUMBER` (each row's number in its input, in input order)
    give their issues the number of their example row.

    Returns
    -------
    tuple
        The log, and the units dropped as contaminated (``experiment_id,
        unit_id, variant``; None when there are none).
    """
    gap = _gap(session_gap)
    names = {t: list(frame.columns) for t, frame in tables.items()}
    per_table = _table_columns(columns, names)
    labels: dict[Table, str] = {t: t for t in tables}
    mixed: list[pl.DataFrame] = []
    options = _Options("drop", "drop", epoch_unit, whole=whole, mixed=mixed)
    log = _read(dict(tables), labels, per_table, options, gap, "polars")
    return log, (mixed[0] if mixed else None)


def _read(
    raws: Mapping[Table, pl.DataFrame],
    labels: Mapping[Table, str],
    per_table: Mapping[Table, Mapping[str, str] | None],
    options: _Options,
    gap: dt.timedelta,
    kind: str,
) -> SearchLog:
    """Check and cast the tables read from the sources, in the order of the rules."""
    invalid = options.invalid
    issues: list[Issue] = []
    unit_frame = None
    if "units" in raws:
        unit_frame = _units(
            raws["units"], per_table["units"], labels["units"], issues, invalid
        )
    search_frame, dropped = _searches(
        raws["searches"],
        per_table["searches"],
        labels["searches"],
        unit_frame,
        issues,
        options,
    )
    if "n_results" not in search_frame.columns:
        if "results" not in raws:
            msg = (
                f"{labels['searches']} has no n_results column and there is no "
                f"results table to count them from; zero-result searches and "
                f"every per-search rate need it.\n  Hint: pass "
                f"columns={{'searches': {{'<count column>': 'n_results'}}}}, or a "
                f"results table."
            )
            raise SchemaError(msg)
        search_frame = search_frame.with_columns(n_results=pl.lit(None, pl.Int32))
    result_frame = result_key = result_slot = None
    if "results" in raws:
        result_frame, result_key, result_slot = _results(
            raws["results"],
            per_table["results"],
            labels["results"],
            search_frame,
            dropped,
            issues,
            invalid,
            options.whole,
        )
        if search_frame["n_results"].null_count():  # counted only where missing
            per_search = result_key.value_counts(name="__n")
            counted = pl.zeros(search_frame.height, dtype=pl.Int32, eager=True)
            counted.scatter(per_search[_KEY], per_search["__n"].cast(pl.Int32))
            search_frame = search_frame.with_columns(
                pl.col("n_results").fill_null(counted)
            )
    event_frame = event_key = event_result = None
    if "events" in raws:
        event_frame, event_key, event_result = _events(
            raws["events"],
            per_table["events"],
            labels["events"],
            search_frame,
            result_frame,
            result_key,
            result_slot,
            dropped,
            issues,
            options,
        )
    search_frame = with_series(
        search_frame, [_normalize_series(search_frame["query"]).alias("query_norm")]
    )
    derived = "session_id" not in search_frame.columns
    line = _timeline(search_frame, event_frame, event_key, gap)
    search_frame = line.searches
    return SearchLog(
        searches=_order(search_frame, _SEARCH_ORDER),
        results=None if result_frame is None else _order(result_frame, _RESULT_ORDER),
        events=None if event_frame is None else _order(event_frame, _EVENT_ORDER),
        units=None if unit_frame is None else _order(unit_frame, _UNIT_ORDER),
        issues=tuple(issues),
        session_gap=gap,
        sessions_derived=derived,
        kind=kind,
        index=_Index(
            session=line.session,
            first=line.first,
            next_search=line.next_search,
            unit=_unit_key(search_frame, line.user),
            result_search=result_key,
            result_slot=result_slot,
            event_search=event_key,
            event_next_ts=line.next_ts,
            event_last_click=line.last_click,
            event_result=event_result,
        ),
    )


def _unit_key(searches: pl.DataFrame, user: pl.Series | None) -> pl.Series:
    """Return an exact UInt64 key of each search's unit: its user's when they agree."""
    units = searches["unit_id"]
    if user is not None and units.eq_missing(searches["user_id"]).all():
        return user  # unit_id defaults to user_id: the timeline's key serves
    return exact_key(units, 7)


def _names(obj: Any) -> list[str]:
    """Return the column names of a source, before reading all of it."""
    if isinstance(obj, str | os.PathLike):
        fmt, _ = detect_format(obj)
        if fmt in ("csv", "tsv"):
            return tabular.csv_columns(obj, separator="\t" if fmt == "tsv" else ",")
        if fmt == "jsonl":
            return tabular.ndjson_columns(obj)[1]
        if fmt == "parquet":
            return tabular.scan_parquet(obj).collect_schema().names()
        return []
    if is_frame_like(obj):
        frame = to_polars(obj)
        return frame.collect_schema().names()
    return []


_SEARCH_ORDER = (
    "search_id",
    "user_id",
    "ts",
    "session_id",
    "unit_id",
    "experiment_id",
    "variant",
    "query",
    "query_norm",
    "page",
    "n_results",
)
_RESULT_ORDER = ("search_id", "position", "doc_id", "published_at")
_EVENT_ORDER = (
    "event_id",
    "search_id",
    "user_id",
    "ts",
    "event_type",
    "position",
    "doc_id",
    "value",
    "dwell_ms",
)
_UNIT_ORDER = ("unit_id", "experiment_id", "variant")


def _order(frame: pl.DataFrame, first: Sequence[str]) -> pl.DataFrame:
    """Canonical columns first, in their order; then the attributes as given."""
    head = [c for c in first if c in frame.columns]
    return frame.select(*head, *(c for c in frame.columns if c not in head))


def example_log() -> SearchLog:
    """Return a tiny hand-made log: two arms, three users, five searches.

    Arm ``A``: user ``u1`` searches "red shoes" (``s1``), clicks position
    2 ten seconds later, adds to cart 50 s after that and buys (value 20);
    user ``u2`` searches "blue hat" (``s2``) and clicks nothing. Arm ``B``:
    user ``u3`` searches "red shoes" (``s3``), reformulates after a minute
    to "red running shoes" (``s4``), clicks position 1 after 30 s, and 40 s
    later searches "boots" (``s5``), which finds nothing. Every search with
    results shows four. The examples of :mod:`ireval_df.online` and
    ``docs/online.md`` compute every metric on it by hand.

    Examples
    --------
    >>> log = example_log()
    >>> log.searches.select("search_id", "variant", "session_id").rows()
    [('s1', 'A', 'u1/1'), ('s2', 'A', 'u2/1'), ('s3', 'B', 'u3/1'), ('s4', 'B', 'u3/1'), ('s5', 'B', 'u3/1')]
    """
    t = "2024-05-01T10:"
    searches = pl.DataFrame(
        {
            "search_id": ["s1", "s2", "s3", "s4", "s5"],
            "user_id": ["u1", "u2", "u3", "u3", "u3"],
            "ts": [t + "00:00", t + "00:00", t + "00:00", t + "01:00", t + "02:10"],
            "variant": ["A", "A", "B", "B", "B"],
            "query": [
                "red shoes",
                "Blue Hat",
                "red shoes",
                "red running shoes",
                "boots",
            ],
            "n_results": [4, 4, 4, 4, 0],
            "device": ["mobile", "desktop", "mobile", "mobile", "mobile"],
        }
    )
    shown = ["s1", "s2", "s3", "s4"]
    results = pl.DataFrame(
        {
            "search_id": [s for s in shown for _ in range(4)],
            "position": [1, 2, 3, 4] * 4,
            "doc_id": [f"d{i}" for i in range(16)],
            "source_type": ["product", "guide"] * 8,
        }
    )
    events = pl.DataFrame(
        {
            "event_id": ["e1", "e2", "e3", "e4"],
            "search_id": ["s1", "s1", "s1", "s4"],
            "user_id": ["u1", "u1", "u1", "u3"],
            "ts": [t + "00:10", t + "01:00", t + "02:00", t + "01:30"],
            "event_type": ["click", "add_to_cart", "purchase", "click"],
            "position": [2, None, None, 1],
            "value": [None, None, 20.0, None],
        }
    )
    return read_log(searches=searches, results=results, events=events)
