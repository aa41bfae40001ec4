"""Value checks: casting each canonical column and the errors its values raise.

Each builder turns a :class:`Column` into the expression that casts it to
its canonical dtype and appends the :class:`Check` objects its values need
(nulls, NaN scores, fractional grades ...). The checks are counted in one
aggregate by :mod:`ireval_df.schema.canonical`, strict and lenient alike:
a check's ``level`` tells whether lenient reading keeps it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import DataError, IrevalError, OptionError, SchemaError, warn

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = [
    "Check",
    "Column",
    "cast",
    "duplicate_documents",
    "duplicate_judgments",
    "duplicate_queries",
    "parse_time",
    "parse_times",
    "single_run",
]

# Float ids are accepted when whole and exactly representable.
_MAX_EXACT_FLOAT = 2.0**53
_INT32 = (-(2**31), 2**31 - 1)
_IDS, _NUMBERS, _INTEGERS = "strings or integers", "numbers", "integers"


@dataclass
class Check:
    """One data check: a count over the frame and the error it stands for.

    Attributes
    ----------
    count : polars.Expr
        Aggregates to the number of offending rows.
    bad : polars.Expr
        A row predicate, to fetch an example for the message.
    error : callable
        Given the count and the example row, the error to raise.
    level : {"data", "schema", "warning"}
        ``"schema"``: the frame cannot be read as its kind at all (checked
        even when reading leniently); ``"data"``: a value problem
        :func:`ireval_df.validate` reports instead; ``"warning"``: a value
        the cast leaves null, reported by :meth:`report` as one warning
        with the message of ``error`` instead of raised.
    exact : polars.Expr or None
        When ``count`` may overestimate (hashes), the exact count, for the
        message.
    """

    count: pl.Expr  # aggregates to the number of offending rows
    bad: pl.Expr  # row predicate, to fetch an example
    error: Callable[[int, dict[str, Any]], IrevalError]
    # "schema": the frame cannot be read as the kind at all (checked even when
    # reading leniently); "data": a value problem validate() reports instead;
    # "warning": a value left null, reported in one warning
    level: str = "data"
    # when ``count`` may overestimate (hashes), the exact count, for the message
    exact: pl.Expr | None = None

    def report(self, n: int, row: dict[str, Any]) -> None:
        """Raise the error for ``n`` offending rows, or warn at level "warning"."""
        error = self.error(n, row)
        if self.level != "warning":
            raise error
        warn(str(error))


@dataclass(frozen=True)
class Column:
    """A canonical column being checked: where it came from, what it holds.

    Attributes
    ----------
    canon : str
        Its canonical name (the staged frame has it under this name).
    src : str
        Its name in the source, for hints.
    dtype : polars.DataType
        Its dtype in the source.
    label : str
        The source, for messages (``run`` or ``run file 'bm25.run'``).
    """

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
        """Return the error for a dtype that cannot hold ``expected`` values."""
        target = {_IDS: "String", _NUMBERS: "Float64", _INTEGERS: "Int32"}[expected]
        return SchemaError(
            f"{self.label} column {self.name} has dtype {self.dtype}; expected "
            f"{expected}.\n  Hint: cast it first, e.g. "
            f"pl.col({self.src!r}).cast(pl.{target})."
        )


def _plural(n: int, noun: str) -> str:
    """``1 value that is`` / ``2 values that are``."""
    return f"{n} {noun} that is" if n == 1 else f"{n} {noun}s that are"


def _example(row: dict[str, Any], *keys: str) -> str:
    return ", ".join(f"{k}={row[k]!r}" for k in keys if k in row)


def _nulls(col: Column) -> Check:
    def error(n: int, row: dict[str, Any]) -> IrevalError:
        values = "value" if n == 1 else "values"
        return DataError(
            f"{col.label} has {n} null {values} in column {col.name} (NaN in "
            f"pandas becomes null); every row needs a {col.canon}.\n  Hint: "
            f"drop those rows first, e.g. frame.drop_nulls({col.src!r})."
        )

    return Check(pl.col(col.canon).null_count(), pl.col(col.canon).is_null(), error)


def _identifier(col: Column, checks: list[Check]) -> pl.Expr:
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

    checks.append(Check(bad.sum(), bad, error, level="schema"))
    return x.cast(pl.Int64, strict=False).cast(pl.String)


def _number(col: Column, checks: list[Check]) -> pl.Expr:
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

    checks.append(Check(bad.sum(), bad, error))
    return x


def _score(col: Column, checks: list[Check]) -> pl.Expr:
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

    checks.append(Check(bad.sum(), bad, error))
    return x


def _relevance(col: Column, checks: list[Check]) -> pl.Expr:
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

        checks.append(Check(fractional.sum(), fractional, fraction_error))
        x = pl.when(fractional).then(None).otherwise(x)
    outside = x.is_not_null() & ~x.is_between(*_INT32)

    def range_error(n: int, row: dict[str, Any]) -> IrevalError:
        return DataError(
            f"{col.label} column {col.name} has {_plural(n, 'grade')} outside "
            f"the Int32 range, e.g. {row[col.canon]!r}"
        )

    checks.append(Check(outside.sum(), outside, range_error))
    return pl.when(outside).then(None).otherwise(x).cast(pl.Int32)


def _rank(col: Column, checks: list[Check]) -> pl.Expr:
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


# ISO-8601 as written in the wild, tried in turn: an offset ("Z", "+02:00",
# "-0130") moves the time to UTC; without one, it is read as UTC already.
_T = "%Y-%m-%dT%H:%M"


def _parse_time(text: pl.Expr) -> pl.Expr:
    """ISO-8601 dates and times to a naive UTC ``Datetime("us")``, else null."""
    iso = text.str.strip_chars().str.replace(" ", "T").str.replace(r"[zZ]$", "+00:00")
    with_offset = (
        iso.str.to_datetime(f"{_T}:%S%.f%z", strict=False, time_unit="us")
        .dt.convert_time_zone("UTC")
        .dt.replace_time_zone(None)
    )
    return pl.coalesce(
        with_offset,
        iso.str.to_datetime(f"{_T}:%S%.f", strict=False, time_unit="us"),
        iso.str.to_datetime(_T, strict=False, time_unit="us"),
        iso.str.to_date("%Y-%m-%d", strict=False).cast(pl.Datetime("us")),
    )


def parse_times(text: pl.Expr) -> pl.Expr:
    """Read ISO-8601 text as the time columns are read: naive UTC, null if not a time.

    Examples
    --------
    >>> times = pl.DataFrame({"t": ["2024-01-31T12:00:00+02:00", "2024-01-31", "x"]})
    >>> times.select(parse_times(pl.col("t")))["t"].to_list()
    [datetime.datetime(2024, 1, 31, 10, 0), datetime.datetime(2024, 1, 31, 0, 0), None]
    """
    return _parse_time(text)


def parse_time(value: Any, name: str) -> dt.datetime:
    """Read one point in time as the time columns are read: naive UTC.

    Parameters
    ----------
    value : datetime.datetime, datetime.date or str
        A datetime (one with a time zone is converted to UTC), a date (its
        midnight) or ISO-8601 text.
    name : str
        The option it was given as, for the message.

    Returns
    -------
    datetime.datetime
        Without a time zone, in UTC.

    Raises
    ------
    OptionError
        ``value`` is none of these, or text that is not a date or time.

    Examples
    --------
    >>> parse_time("2024-01-31T12:00:00+02:00", "as_of")
    datetime.datetime(2024, 1, 31, 10, 0)
    >>> parse_time(dt.date(2024, 1, 31), "as_of")
    datetime.datetime(2024, 1, 31, 0, 0)
    """
    found: dt.datetime | None = None
    if isinstance(value, dt.datetime):
        found = value
        if value.tzinfo is not None:
            found = value.astimezone(dt.UTC).replace(tzinfo=None)
    elif isinstance(value, dt.date):
        found = dt.datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        found = pl.select(_parse_time(pl.lit(value, pl.String))).item()
    if found is None:
        msg = (
            f"{name}={value!r} is not a point in time; expected a datetime, a "
            f"date or ISO-8601 text.\n  Hint: e.g. {name}='2024-01-31' or "
            f"{name}=datetime.datetime(2024, 1, 31, 12)."
        )
        raise OptionError(msg)
    return found


def _time(col: Column, checks: list[Check]) -> pl.Expr:
    """Cast a point in time (Date, Datetime, ISO-8601 text) to naive UTC.

    A time zone is converted to UTC and dropped; text that does not parse is
    left null and counted in one warning (never dropped, never an error).
    """
    expr = pl.col(col.canon)
    dtype = col.dtype
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is not None:
            expr = expr.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        return expr.cast(pl.Datetime("us"))
    if dtype in (pl.Date, pl.Null):
        return expr.cast(pl.Datetime("us"))
    if dtype not in (pl.String,) and not isinstance(dtype, pl.Categorical | pl.Enum):
        msg = (
            f"{col.label} column {col.name} has dtype {dtype}; expected dates "
            f"or times (Date, Datetime, or ISO-8601 text such as '2024-01-31' "
            f"or '2024-01-31T12:00:00Z').\n  Hint: convert it first, e.g. "
            f"pl.from_epoch(pl.col({col.src!r}), time_unit='s') for Unix "
            f"seconds."
        )
        raise SchemaError(msg)
    text = expr.cast(pl.String)
    parsed = _parse_time(text)
    bad = text.is_not_null() & parsed.is_null()
    # the row's keys: a query's, or a document's (per query, maybe)
    keys = ("query_id", "doc_id") if col.canon == "published_at" else ("query_id",)

    def error(n: int, row: dict[str, Any]) -> IrevalError:
        values = "value" if n == 1 else "values"
        return DataError(
            f"{col.label} column {col.name} has {n} {values} that "
            f"{'is' if n == 1 else 'are'} not a date or time, e.g. "
            f"{row[col.canon]!r} ({_example(row, *keys)}); "
            f"{'it is' if n == 1 else 'they are'} left null (age 'unknown').\n"
            f"  Hint: write them as ISO-8601, e.g. '2024-01-31' or "
            f"'2024-01-31T12:00:00Z', or parse them first with "
            f"pl.col({col.src!r}).str.to_datetime(format)."
        )

    checks.append(Check(bad.sum(), bad, error, level="warning"))
    return parsed


def _lenient_relevance(col: Column, checks: list[Check]) -> pl.Expr:
    """Grades as Float64, fractions kept; text that is not a number is null."""
    if col.dtype.is_integer() or col.dtype in (pl.Boolean, pl.Null):
        return pl.col(col.canon).cast(pl.Float64)
    return _number(col, checks)


_BUILDERS: dict[str, Callable[[Column, list[Check]], pl.Expr]] = {
    "score": _score,
    "relevance": _relevance,
    "rank": _rank,
    "published_at": _time,
    "issued_at": _time,
}
_LENIENT_BUILDERS = {**_BUILDERS, "relevance": _lenient_relevance}


def cast(col: Column, checks: list[Check], *, lenient: bool = False) -> pl.Expr:
    """Return the expression that casts ``col`` to its canonical dtype.

    Parameters
    ----------
    col : Column
        The column, as the source has it.
    checks : list of Check
        The checks its values need are appended here, to be counted in one
        aggregate with every other column's.
    lenient : bool, default False
        Cast grades to Float64 and keep fractions (see
        :func:`ireval_df.schema.lenient.as_lenient`).

    Returns
    -------
    polars.Expr

    Raises
    ------
    SchemaError
        The column's dtype cannot hold its kind of value.

    Examples
    --------
    >>> checks = []
    >>> expr = cast(Column("score", "sim", pl.Int64(), "run"), checks)
    >>> pl.DataFrame({"score": [2, 1]}).select(expr)["score"].to_list(), len(checks)
    ([2.0, 1.0], 2)
    """
    builders = _LENIENT_BUILDERS if lenient else _BUILDERS
    return builders.get(col.canon, _identifier)(col, checks)


def duplicate_queries(label: str) -> Check:
    """Reject a query with more than one row of metadata."""
    dup = pl.col("query_id").is_duplicated()

    def error(n: int, row: dict[str, Any]) -> IrevalError:
        return DataError(
            f"{label} has {n} rows with a repeated query_id, e.g. "
            f"{row['query_id']!r}; each query needs exactly one row.\n  Hint: "
            f"drop the duplicates first, e.g. queries.unique('query_id')."
        )

    return Check(dup.sum(), dup, error)


def duplicate_judgments(label: str, source: Mapping[str, str]) -> Check:
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
            f"qrels.group_by({ids[0]!r}, {ids[1]!r}).agg(pl.col({grade!r}).max()); "
            f"diversity qrels, a line per subtopic, are read with "
            f"read_qrels(path, intents=True) (ireval-df evaluate --qrels-intents)."
        )

    return Check(
        pl.len() - hashed.n_unique(),
        key.is_duplicated(),
        error,
        exact=pl.len() - key.n_unique(),
    )


def duplicate_documents(label: str, source: Mapping[str, str]) -> Check:
    """Reject a document with two rows (per query, when there is ``query_id``)."""
    per_query = "query_id" in source
    keys = ["query_id", "doc_id"] if per_query else ["doc_id"]
    dup = (
        pl.struct(keys).is_duplicated()
        if per_query
        else pl.col("doc_id").is_duplicated()
    )
    unique = pl.struct(keys).n_unique() if per_query else pl.col("doc_id").n_unique()

    def error(n: int, row: dict[str, Any]) -> IrevalError:
        rows = "row" if n == 1 else "rows"
        ids = [source[k] for k in keys]
        each = "each (query_id, doc_id)" if per_query else "each document"
        return DataError(
            f"{label} has more than one row for a document ({n} extra {rows}), "
            f"e.g. {_example(row, *keys)}; {each} needs exactly one row of "
            f"attributes.\n  Hint: keep one row per document first, e.g. "
            f"docs.unique({ids!r}, keep='last')."
        )

    return Check(pl.len() - unique, dup, error)


def single_run(run_id: str, label: str) -> Check:
    """Reject ``run_id=`` for a frame whose ``run_id`` column holds several runs."""
    runs = pl.col("run_id").n_unique()

    def error(n: int, row: dict[str, Any]) -> IrevalError:
        return DataError(
            f"{label} holds {n} runs (e.g. {row['run_id']!r}), so "
            f"run_id={run_id!r} would merge them into one.\n  Hint: leave out "
            f"run_id=, or keep one run first, e.g. "
            f"run.filter(pl.col('run_id') == {row['run_id']!r})."
        )

    return Check(pl.when(runs > 1).then(runs).otherwise(0), pl.lit(value=True), error)
