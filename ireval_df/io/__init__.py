"""Reading and writing: TREC text, CSV/TSV, Parquet, JSON Lines, frames, dicts.

This package talks to the outside world and holds no metric code. Readers
return canonical frames (see :mod:`ireval_df._schema`); every malformed
input raises an :class:`~ireval_df.errors.IrevalError` subclass that names
the file, the line and the fix.
"""

from __future__ import annotations

from ireval_df.io.read import read_qrels, read_queries, read_run, scan_qrels, scan_run
from ireval_df.io.trec import trec_run_id_of_last_line
from ireval_df.io.write import SUPPORTED_EXTENSIONS, write_results

__all__ = [
    "SUPPORTED_EXTENSIONS",
    "read_qrels",
    "read_queries",
    "read_run",
    "scan_qrels",
    "scan_run",
    "trec_run_id_of_last_line",
    "write_results",
]
