"""Online evaluation: search-log metrics, per-unit sums for A/B tests.

:func:`read_log` reads and checks a search log (:mod:`.log`); the
``online`` family of the measure registry (:mod:`.measures`) defines each
metric as a ratio of sums over the rows of one grain, built once per call
(:mod:`.derive`); :func:`metrics` computes them per experiment arm and
slice, and :func:`unit_table` gives the per-unit sums behind them.
"""

from ireval_df.online.log import SearchLog, example_log, read_log
from ireval_df.online.metrics import metrics
from ireval_df.online.units import unit_columns, unit_table

__all__ = [
    "SearchLog",
    "example_log",
    "metrics",
    "read_log",
    "unit_columns",
    "unit_table",
]
