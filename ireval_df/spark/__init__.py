"""ireval_df on Apache Spark: the same numbers, where the data already is.

:func:`evaluate`, :func:`similarity` and :func:`failures` take Spark
DataFrames and return Spark DataFrames with exactly the rows of their
local counterparts. The queries are split into groups by a stable hash of
their id (``pmod(xxhash64(query_id), partitions)``); each group's rows,
on every side, go to one Python worker as Arrow tables, where the local
polars engine evaluates them (:mod:`.kernels`). :func:`online_metrics` and
:func:`unit_table` do the same for search logs, grouped by user (the users
a unit, an event or an ``event_id`` links, together), the per-unit sums
added up by Spark; :func:`ab_test` analyses that unit table (and a median
metric's per-search values) locally.
Options, metric names and columns are checked on the driver before any
job; errors found on the executors come back as the same
:class:`~ireval_df.errors.IrevalError`. ``docs/spark.md`` says how to run
it on a cluster.

Needs pyspark 4 (``pip install 'ireval-df[spark]'``) and Java 17; nothing
here is imported by ``import ireval_df``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ireval_df._utils.lazy import lazy_names

if TYPE_CHECKING:
    from ireval_df.spark.comparison import similarity
    from ireval_df.spark.diagnosis import failures
    from ireval_df.spark.evaluation import evaluate
    from ireval_df.spark.online import ab_test, online_metrics, unit_table

__all__ = [
    "ab_test",
    "evaluate",
    "failures",
    "online_metrics",
    "similarity",
    "unit_table",
]

_MODULES = {
    "evaluate": "ireval_df.spark.evaluation",
    "failures": "ireval_df.spark.diagnosis",
    "similarity": "ireval_df.spark.comparison",
    "online_metrics": "ireval_df.spark.online",
    "unit_table": "ireval_df.spark.online",
    "ab_test": "ireval_df.spark.online",
}

__getattr__, __dir__ = lazy_names(__name__, _MODULES, __all__)
