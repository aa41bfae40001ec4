"""Canonical columns: every input kind coerced to runs, qrels and query tables.

The one place that knows the canonical column names and their spellings
(``qid``, ``docno``, ``label`` ...), reads a source through :mod:`ireval_df.io`
when it is a path, stacks several runs, and checks ids, scores and grades
once, at the boundary; everything above it trusts its frames.

Modules, each with one job, each importing only those listed before it:

``columns``
    Canonical names and dtypes, the spellings, recognising and resolving
    a source's columns, the "missing column" messages.
``checks``
    Casting each canonical column and the checks on its values.
``sources``
    What a source is (path, table, dict-of-dicts) and reading it into a
    raw frame; paths go through :func:`ireval_df.io.load.load`, which never
    calls back.
``prepare``
    One source, or a list of runs stacked, to a checked frame: the one
    aggregate pass that strict and lenient reading share.
``coerce``
    The strict readers :func:`~ireval_df.schema.coerce.as_run`,
    :func:`~ireval_df.schema.coerce.as_qrels`,
    :func:`~ireval_df.schema.coerce.as_queries`,
    :func:`~ireval_df.schema.coerce.as_docs`.
``lenient``
    :func:`~ireval_df.schema.lenient.as_lenient`, for
    :func:`ireval_df.validate`.
``intents``
    Qrels judged per intent (subtopic): the canonical qrels and the intent
    rows beside them (:func:`~ireval_df.schema.intents.read_judgments`).
``read``
    The public readers (:func:`read_run` ...).
"""

from __future__ import annotations

from ireval_df.schema.read import (
    read_docs,
    read_qrels,
    read_queries,
    read_run,
    scan_qrels,
    scan_run,
)

__all__ = [
    "read_docs",
    "read_qrels",
    "read_queries",
    "read_run",
    "scan_qrels",
    "scan_run",
]
