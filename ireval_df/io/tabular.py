"""Files with named columns: CSV, TSV, Parquet, JSON Lines and JSON.

These readers return the file's own column names; mapping them to the
canonical ones is :mod:`ireval_df.schema`'s job. Text formats are read
eagerly (parsing is the expensive part, so it is done once); Parquet is
scanned lazily. Every failure becomes a
:class:`~ireval_df.errors.FormatError` naming the file.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import FormatError
from ireval_df.io.files import (
    check_text,
    display,
    file_error,
    line_error,
    polars_source,
    read_bytes,
    refuse_nul,
)

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from ireval_df._utils.typing import PathLike

__all__ = [
    "csv_columns",
    "ndjson_columns",
    "read_csv",
    "read_json",
    "read_ndjson",
    "scan_parquet",
]

#: Rows used to infer the dtypes of columns that are not read as strings.
_INFER_ROWS = 10_000


def _csv_options(separator: str) -> dict[str, Any]:
    # TSV files (BEIR, MS MARCO) do not quote, and their text contains '"'.
    return {
        "separator": separator,
        "quote_char": '"' if separator == "," else None,
        "glob": False,
    }


def csv_columns(path: PathLike, *, separator: str) -> list[str]:
    r"""Return the header of a CSV or TSV file (compressed allowed).

    Examples
    --------
    >>> path = getfixture("tmp_path") / "qrels.tsv"
    >>> _ = path.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    >>> csv_columns(path, separator="\t")
    ['query-id', 'corpus-id', 'score']
    """
    try:
        lf = pl.scan_csv(
            polars_source(path), infer_schema=False, **_csv_options(separator)
        )
        return lf.collect_schema().names()
    except OSError as exc:
        raise file_error(path, exc) from exc
    except pl.exceptions.PolarsError as exc:
        raise _text_error(path, exc, "CSV" if separator == "," else "TSV") from exc


def read_csv(
    path: PathLike,
    *,
    separator: str,
    string_columns: Collection[str] | None = None,
    new_columns: Sequence[str] | None = None,
) -> pl.DataFrame:
    r"""Read a CSV or TSV file (compressed allowed) into a DataFrame.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.
    separator : str
        ``","`` or ``"\t"``.
    string_columns : collection of str, optional
        Columns read as strings, as written (ids keep leading zeros); the
        others get inferred dtypes. None reads every column as a string.
    new_columns : sequence of str, optional
        Read a file without a header, naming its columns so.

    Returns
    -------
    polars.DataFrame

    Raises
    ------
    FormatError
        Unreadable, empty or malformed file; NUL bytes (a binary file).

    Examples
    --------
    >>> path = getfixture("tmp_path") / "run.csv"
    >>> _ = path.write_text("qid,docno,score\n007,d1,1.5\n")
    >>> read_csv(path, separator=",", string_columns=["qid"]).rows()
    [('007', 'd1', 1.5)]
    """
    kind = "CSV" if separator == "," else "TSV"
    options = _csv_options(separator)
    if new_columns is not None:
        options.update(has_header=False, new_columns=list(new_columns))
    if string_columns is None:
        options["infer_schema"] = False
    else:
        options.update(
            schema_overrides=dict.fromkeys(string_columns, pl.String),
            infer_schema_length=_INFER_ROWS,
        )
    refuse_nul(path)
    try:
        return pl.scan_csv(polars_source(path), **options).collect()
    except OSError as exc:
        raise file_error(path, exc) from exc
    except pl.exceptions.PolarsError as exc:
        raise _text_error(path, exc, kind) from exc


def scan_parquet(path: PathLike) -> pl.LazyFrame:
    """Scan a Parquet file lazily, checking now that it is one.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "run.parquet"
    >>> pl.DataFrame({"qid": ["q1"]}).write_parquet(path)
    >>> scan_parquet(path).collect_schema().names()
    ['qid']
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise file_error(path, exc) from exc
    name = display(path)
    if head != b"PAR1":
        what = "it is empty" if not head else "it does not start with 'PAR1'"
        msg = f"{name} is not a Parquet file ({what})"
        raise FormatError(msg)
    try:
        lf = pl.scan_parquet(os.fspath(path), glob=False)
        lf.collect_schema()
    except OSError as exc:
        raise file_error(path, exc) from exc
    except pl.exceptions.PolarsError as exc:
        msg = f"{name} is not a valid Parquet file: {_first_line(exc)}"
        raise FormatError(msg) from exc
    return lf


def ndjson_columns(path: PathLike) -> tuple[bytes, list[str]]:
    r"""Read a JSON Lines file and the keys of its records.

    The keys are those of the first rows polars infers dtypes from.

    Returns
    -------
    tuple of bytes and list of str
        The file's bytes (decompressed), for :func:`read_ndjson` to parse
        without reading the file again, and the keys.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "qrels.jsonl"
    >>> _ = path.write_text('{"qid": 1, "docid": "d1", "label": 2}\n')
    >>> ndjson_columns(path)[1]
    ['qid', 'docid', 'label']
    """
    data = read_bytes(path)
    try:
        lf = pl.scan_ndjson(data, infer_schema_length=_INFER_ROWS)
        return data, lf.collect_schema().names()
    except pl.exceptions.PolarsError as exc:
        raise _ndjson_error(data, display(path), exc) from exc


def read_ndjson(
    path: PathLike,
    *,
    strings: Collection[str] = (),
    data: bytes | None = None,
) -> pl.DataFrame:
    r"""Read a JSON Lines file (one object per line; compression and BOM allowed).

    Parameters
    ----------
    path : str or pathlib.Path
        The file.
    strings : collection of str, optional
        Keys to read as strings (JSON numbers become their decimal text),
        e.g. the id columns.
    data : bytes, optional
        The file's bytes, when :func:`ndjson_columns` has read them already.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "qrels.jsonl"
    >>> _ = path.write_text('{"qid": 1, "docid": "d1", "label": 2}\n')
    >>> read_ndjson(path, strings=["qid"]).rows()
    [('1', 'd1', 2)]
    """
    if data is None:
        data = read_bytes(path)
    overrides = dict.fromkeys(strings, pl.String())
    try:
        return pl.scan_ndjson(
            data, schema_overrides=overrides or None, infer_schema_length=_INFER_ROWS
        ).collect()
    except pl.exceptions.PolarsError as exc:
        raise _ndjson_error(data, display(path), exc) from exc


def read_json(path: PathLike) -> pl.DataFrame | dict[Any, Any]:
    """Read a ``.json`` file: an array of records, a dict-of-dicts, or JSON Lines.

    Returns
    -------
    polars.DataFrame or dict
        A frame for an array of records (or a JSON Lines file named
        ``.json``), the dict itself for ``{query_id: {doc_id: value}}``.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "run.json"
    >>> _ = path.write_text('{"q1": {"d1": 1.5}}')
    >>> read_json(path)
    {'q1': {'d1': 1.5}}
    """
    data = read_bytes(path)
    name = display(path)
    check_text(data, name)
    try:
        value = json.loads(data)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # several JSON values: JSON Lines
            return read_ndjson(path)
        text = exc.doc.splitlines()[exc.lineno - 1] if exc.doc else ""
        raise line_error(name, exc.lineno, text, f"invalid JSON ({exc.msg})") from exc
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        try:
            return pl.from_dicts(value, infer_schema_length=None)
        except (pl.exceptions.PolarsError, TypeError, ValueError) as exc:
            msg = f"{name}: the records do not form a table ({_first_line(exc)})"
            raise FormatError(msg) from exc
    msg = (
        f"{name}: expected an array of records or an object "
        f"{{query_id: {{doc_id: value}}}}, found a JSON {type(value).__name__}"
    )
    raise FormatError(msg)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _text_error(path: PathLike, exc: Exception, kind: str) -> FormatError:
    """Explain a polars failure on a text file, with the line when possible."""
    name = display(path)
    data = read_bytes(path)
    check_text(data, name)  # raises for empty, binary, non-UTF-8
    ragged = _ragged_line(data, "\t" if kind == "TSV" else ",")
    if ragged is not None:
        number, line, found, expected = ragged
        problem = (
            f"{found} fields where the first line has {expected} (a separator "
            "inside a value?); quote the value, or remove the extra separator"
        )
        return line_error(name, number, line, problem)
    msg = f"{name} could not be read as {kind}: {_first_line(exc)}"
    return FormatError(msg)


def _ragged_line(data: bytes, separator: str) -> tuple[int, str, int, int] | None:
    """Find the first line with more fields than the first: number, text, counts.

    Quoted values are taken as they are by ``csv``, so only real extra fields count.
    """
    import csv

    lines = data.decode("utf-8").splitlines()
    rows = csv.reader(lines, delimiter=separator)
    expected = None
    for number, row in enumerate(rows, start=1):
        if not row:
            continue
        if expected is None:
            expected = len(row)
        elif len(row) > expected:
            return number, lines[number - 1], len(row), expected
    return None


def _ndjson_error(data: bytes, name: str, exc: Exception) -> FormatError:
    """Find the JSON Lines line polars choked on."""
    check_text(data, name)
    for number, raw in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as err:
            return line_error(name, number, raw, f"invalid JSON ({err.msg})")
        if not isinstance(record, dict):
            problem = (
                f"expected one JSON object per line, found a {type(record).__name__}"
            )
            return line_error(name, number, raw, problem)
    msg = f"{name} could not be read as JSON Lines: {_first_line(exc)}"
    return FormatError(msg)
