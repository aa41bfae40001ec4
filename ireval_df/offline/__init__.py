"""Offline evaluation: a run against qrels, one row per (run, query, metric).

:func:`evaluate` coerces its inputs (:mod:`ireval_df.schema`), parses the
metric names (:mod:`ireval_df.measures`), and runs :mod:`.engine`, which
merges every metric's :class:`~.plan.Plan` into lazy polars plans.
The metrics themselves live in :mod:`.metrics`, one module per family.
"""

from __future__ import annotations

from ireval_df.offline.evaluation import evaluate

__all__ = ["evaluate"]
