"""Large text inputs in bounded memory: row estimates and a windowed TREC reader.

``evaluate(..., buckets=N)`` holds one bucket of queries at a time. A
Parquet run is scanned lazily, bucket by bucket; a TREC text run is read
here window by window (a few tens of megabytes of lines at a time) into
Arrow IPC files in a scratch folder, which the buckets then scan lazily in
the same way, so no step holds the whole run. :func:`estimate_rows` tells
``buckets="auto"`` how large an input is before it is read.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from typing import TYPE_CHECKING, BinaryIO, cast

import polars as pl

from ireval_df.io import trec
from ireval_df.io.files import compression_of, detect_format
from ireval_df.io.tokenize import Blanks

if TYPE_CHECKING:
    from pathlib import Path

    from ireval_df._utils.typing import PathLike

__all__ = ["WINDOW", "estimate_rows", "spill_trec_run"]

#: Bytes of text parsed at a time.
WINDOW = 1 << 24
#: Bytes read to estimate a text file's line length and compression ratio.
_SAMPLE = 1 << 20


def _open(raw: BinaryIO) -> BinaryIO | None:
    """Return the decompressed stream of an open file (None: zstd, not streamed)."""
    kind = compression_of(raw.read(6))
    raw.seek(0)
    if kind == "gzip":
        return cast("BinaryIO", gzip.GzipFile(fileobj=raw))
    if kind == "bzip2":
        return cast("BinaryIO", bz2.BZ2File(raw))
    if kind == "xz":
        return cast("BinaryIO", lzma.LZMAFile(raw))
    return None if kind == "zstd" else raw  # zstd: read whole by the usual readers


def estimate_rows(path: PathLike) -> int:
    r"""Estimate how many rows a file holds, without reading it all.

    Parquet files say so in their metadata. For text files (TREC, CSV/TSV,
    JSON), the first megabyte gives the mean line length (and, for a
    compressed file, the compression ratio), which the file's size is
    divided by. A file that cannot be opened counts 0: the reader reports it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "a.run"
    ...     _ = path.write_text("q1 Q0 d1 1 2.5 bm25\n" * 1000)
    ...     estimate_rows(path)
    1000
    """
    try:
        fmt, _ = detect_format(path)
        if fmt == "parquet":
            count = pl.scan_parquet(os.fspath(path)).select(pl.len()).collect()
            return int(count.item())
        size = os.path.getsize(path)
        with open(path, "rb") as raw:
            stream = _open(raw)
            if stream is None:
                return size * 4 // 32  # zstd: a typical ratio and line length
            sample = stream.read(_SAMPLE)
            consumed = raw.tell() if stream is not raw else len(sample)
    except (OSError, EOFError, lzma.LZMAError, pl.exceptions.PolarsError):
        return 0
    lines = sample.count(b"\n") or 1
    if len(sample) < _SAMPLE:  # the whole (decompressed) file was read
        return lines if sample.endswith(b"\n") else lines + 1
    ratio = len(sample) / max(consumed, 1)
    return int(size * ratio / (len(sample) / lines))


def spill_trec_run(
    path: PathLike, folder: Path, *, rank: bool = True, window: int = WINDOW
) -> pl.LazyFrame | None:
    """Read a TREC run into Arrow IPC files in ``folder``, window by window.

    Each window of whole lines goes through the TREC readers' fast paths
    (the C tokenizer, else polars' CSV reader), which vouch for plain,
    well-formed text only. When one cannot, this returns None and the
    caller reads the file whole with :func:`ireval_df.io.trec.read_trec_run`,
    which reports every problem by line: the result never depends on the
    window.

    Parameters
    ----------
    path : str or pathlib.Path
        The run; gzip, bzip2 and xz files are decompressed as a stream.
    folder : pathlib.Path
        An existing scratch folder; the caller removes it.
    rank : bool, default True
        Keep the rank column (see :func:`~ireval_df.io.trec.read_trec_run`).
    window : int
        Bytes of text parsed at a time (a longer line makes its window longer).

    Returns
    -------
    polars.LazyFrame or None
        The columns :func:`~ireval_df.io.trec.read_trec_run` returns, in file order.
    """
    files: list[Path] = []
    stem = f"run-{len(list(folder.iterdir()))}"
    with open(path, "rb") as raw:
        stream = _open(raw)
        if stream is None:
            return None
        carry = b""
        if stream.read(3) == b"\xef\xbb\xbf":  # a BOM: the usual readers strip it
            return None
        stream.seek(0)
        while True:
            chunk = stream.read(window)
            data = carry + chunk
            # at the end of the file the last line may lack its newline
            end = data.rfind(b"\n") + 1 if chunk else len(data)
            carry, data = data[end:], data[:end]
            if data.strip():
                frame = _parse(data, rank=rank)
                if frame is None:
                    return None
                files.append(folder / f"{stem}-{len(files):05d}.arrow")
                frame.write_ipc(files[-1], compression="uncompressed")
            if not chunk:
                break
    if not files:
        return None
    return pl.scan_ipc(files)


def _parse(data: bytes, *, rank: bool) -> pl.DataFrame | None:
    """One window of whole lines, by a reader that vouches for it, or None."""
    layout = trec._RUN
    frame = trec._native(data, layout, rank=rank)
    if frame is None:
        frame = trec._fast(data, Blanks.of(data), layout, rank=rank)
    if frame is None:
        return None
    return trec._finish(frame, layout, rank=rank)
