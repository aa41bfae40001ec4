"""validate(): diagnostics before evaluating: what is wrong with a run, qrels or query table.

:func:`validate` reads its inputs leniently and returns one row per finding
(duplicates, NaN scores, ids that differ only by zero padding, one-sided
queries, unjudged documents, short rankings, ties ...) instead of raising on
the first problem. ``ireval-df validate`` prints the same table.
"""

from __future__ import annotations

from ireval_df.diagnostics.validation.checks import CHECKS, COLUMNS, validate

__all__ = ["CHECKS", "COLUMNS", "validate"]
