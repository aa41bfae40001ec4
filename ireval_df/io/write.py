"""Writing result frames: Parquet (with provenance), CSV, TSV, JSON Lines.

Writes are atomic: the data goes to a temporary file beside the target, which
then replaces it in one ``os.replace``. A failed write removes the temporary
file and leaves any previous file untouched.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df._utils.frames import is_frame_like, to_polars
from ireval_df._utils.provenance import metadata_of
from ireval_df._utils.signals import remove, terminate_as_interrupt, track, untrack
from ireval_df.errors import FormatError, SchemaError, warn

if TYPE_CHECKING:
    from collections.abc import Callable

    from ireval_df._utils.typing import FrameLike, PathLike

__all__ = ["SUPPORTED_EXTENSIONS", "write_results", "write_text"]

_PARQUET = (".parquet", ".pq")

_WRITERS: dict[str, Callable[[pl.DataFrame, Path, dict[str, str]], None]] = {
    ".parquet": lambda df, p, meta: df.write_parquet(p, metadata=meta or None),
    ".pq": lambda df, p, meta: df.write_parquet(p, metadata=meta or None),
    ".csv": lambda df, p, _: df.write_csv(p),
    ".tsv": lambda df, p, _: df.write_csv(p, separator="\t", quote_style="never"),
    ".jsonl": lambda df, p, _: df.write_ndjson(p),
    ".ndjson": lambda df, p, _: df.write_ndjson(p),
}

#: The file extensions :func:`write_results` understands.
SUPPORTED_EXTENSIONS = tuple(_WRITERS)


def write_results(
    frame: FrameLike,
    path: PathLike,
    *,
    metadata: Mapping[str, str] | None = None,
) -> None:
    """Write a frame to a file, atomically, in the format its extension names.

    Parameters
    ----------
    frame : polars.DataFrame, polars.LazyFrame or pandas.DataFrame
        Usually a result of :func:`ireval_df.evaluate` or
        :func:`ireval_df.summarize`; any frame works. Lazy frames are
        collected.
    path : str or pathlib.Path
        ``.parquet``/``.pq``, ``.csv``, ``.tsv`` or ``.jsonl``/``.ndjson``.
        Its directory must exist. An existing file is replaced only once the
        new one is complete: the frame is written to a hidden temporary file
        beside it (``.NAME.XXXXXXXXXXXX.tmp``), then renamed. Ctrl-C and
        SIGTERM (unless the program handles SIGTERM itself) remove the
        temporary file, even when a second Ctrl-C interrupts the removal
        (then at exit); only SIGKILL or a crash of the interpreter can leave
        it behind.
    metadata : mapping of str to str, optional
        Parquet key-value metadata. By default, the settings that produced
        ``frame`` (see :mod:`ireval_df._utils.provenance`), when known. Other
        formats cannot store it (an :class:`IrevalWarning` says so when it
        is given explicitly).

    Raises
    ------
    FormatError
        Unsupported extension (the message lists the supported ones), a
        frame the format cannot hold (e.g. nested columns in CSV), or a path
        that cannot be written.
    SchemaError
        ``frame`` is not a table.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "results.parquet"
    >>> result = pl.DataFrame({"metric": ["AP"], "value": [0.25]})
    >>> write_results(result, path, metadata={"qrels": "qrels.txt"})
    >>> pl.read_parquet(path).rows()
    [('AP', 0.25)]
    >>> pl.read_parquet_metadata(path)["qrels"]
    'qrels.txt'
    """
    target = Path(path)
    name = os.fspath(path)
    suffix = target.suffix.lower()
    writer = _WRITERS.get(suffix)
    if writer is None:
        supported = ", ".join(SUPPORTED_EXTENSIONS)
        msg = (
            f"cannot write {name!r}: unsupported extension {suffix or '(none)'!r}; "
            f"use one of {supported}"
        )
        raise FormatError(msg)
    meta = _metadata(frame, metadata, suffix)
    df = _to_dataframe(frame)
    if suffix == ".tsv":
        _check_tsv(df, name)
    _replace(target, name, lambda temporary: writer(df, temporary, meta))


def write_text(text: str, path: PathLike) -> None:
    """Write ``text`` (UTF-8) to ``path``, atomically: all of it or nothing.

    Raises
    ------
    FormatError
        The path is a directory, its directory does not exist, or the write
        failed; no file is left behind.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "page.html"
    >>> write_text("<p>hi</p>", path)
    >>> path.read_text()
    '<p>hi</p>'
    """
    target = Path(path)
    _replace(
        target,
        os.fspath(path),
        lambda temporary: temporary.write_text(text, encoding="utf-8"),
    )


def _replace(target: Path, name: str, write: Callable[[Path], object]) -> None:
    """Write a temporary file beside ``target`` with ``write``, then rename it there."""
    if target.is_dir():
        msg = f"cannot write {name!r}: it is a directory"
        raise FormatError(msg)
    parent = target.parent
    if not parent.is_dir():
        msg = f"cannot write {name!r}: directory {os.fspath(parent)!r} does not exist"
        raise FormatError(msg)
    temporary = track(parent / f".{target.name}.{secrets.token_hex(6)}.tmp")
    try:
        with terminate_as_interrupt(only_default=True):
            write(temporary)
            os.replace(temporary, target)
        untrack(temporary)
    except BaseException as exc:
        remove(temporary)
        if isinstance(exc, pl.exceptions.PolarsError | OSError):
            msg = f"cannot write {name!r}: {_first_line(exc)}"
            raise FormatError(msg) from exc
        raise


def _metadata(
    frame: Any, metadata: Mapping[str, str] | None, suffix: str
) -> dict[str, str]:
    """Return the key-value metadata to store: explicit, else provenance."""
    if metadata is None:
        return metadata_of(frame) if suffix in _PARQUET else {}
    if not isinstance(metadata, Mapping):
        msg = f"metadata= must map str to str, found {type(metadata).__name__}"
        raise FormatError(msg)
    bad = [
        (k, v)
        for k, v in metadata.items()
        if not isinstance(k, str) or not isinstance(v, str)
    ]
    if bad:
        key, value = bad[0]
        msg = (
            f"metadata= must map str to str, found {key!r}: {value!r}.\n  Hint: "
            f"serialise values first, e.g. json.dumps(value)."
        )
        raise FormatError(msg)
    if suffix not in _PARQUET:
        warn(
            f"metadata= is stored only in Parquet files; writing {suffix!r} without it"
        )
        return {}
    return dict(metadata)


def _check_tsv(df: pl.DataFrame, name: str) -> None:
    """Refuse text TSV cannot hold: tabs or line breaks inside values."""
    for column, dtype in df.schema.items():
        if dtype != pl.String:
            continue
        if df.select(pl.col(column).str.contains(r"[\t\n\r]").any()).item():
            msg = (
                f"cannot write {name!r}: column {column!r} has values with tabs or "
                f"line breaks, which TSV cannot hold; write .csv or .parquet"
            )
            raise FormatError(msg)


def _to_dataframe(frame: Any) -> pl.DataFrame:
    """Convert (pandas) or collect (lazy) what is to be written."""
    if not is_frame_like(frame):
        msg = (
            f"write_results needs a polars or pandas DataFrame, found "
            f"{type(frame).__name__}"
        )
        raise SchemaError(msg)
    converted = to_polars(frame)
    if isinstance(converted, pl.LazyFrame):
        try:
            return converted.collect()
        except pl.exceptions.PolarsError as exc:
            msg = f"could not compute the frame to write: {_first_line(exc)}"
            raise SchemaError(msg) from exc
    return converted


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
