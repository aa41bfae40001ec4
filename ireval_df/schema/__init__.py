"""Canonical columns: every input kind coerced to runs, qrels and query tables.

The one place that knows the canonical column names and their spellings
(``qid``, ``docno``, ``label`` ...), reads a source through :mod:`ireval_df.io`
when it is a path, stacks several runs, and checks ids, scores and grades
once, at the boundary; everything above it trusts its frames.
"""

from __future__ import annotations

from ireval_df.schema.read import (
    read_qrels,
    read_queries,
    read_run,
    scan_qrels,
    scan_run,
)

__all__ = ["read_qrels", "read_queries", "read_run", "scan_qrels", "scan_run"]
