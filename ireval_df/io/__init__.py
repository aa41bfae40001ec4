"""Paths to raw frames and back: TREC text, CSV/TSV, Parquet, JSON Lines.

This layer talks to files and nothing else: it finds a file's format and
compression, reads it into a frame with the file's own columns (TREC text
gets its positional names) and writes results atomically. Mapping columns
to the canonical names and checking values is :mod:`ireval_df.schema`'s
job; every malformed file raises an :class:`~ireval_df.errors.IrevalError`
subclass that names the file, the line and the fix.
"""

from __future__ import annotations

from ireval_df.io.trec import trec_run_id_of_last_line
from ireval_df.io.write import SUPPORTED_EXTENSIONS, write_results, write_text

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "trec_run_id_of_last_line",
    "write_results",
    "write_text",
]
