"""Comparing runs: paired tests, corrections, all-pairs HSD, disagreement, failures.

Every function takes per-query results (the output of
:func:`ireval_df.evaluate`), or runs and qrels for :func:`failures`, and
returns a long frame: one row per (run, baseline, slice, metric), the
statistics as columns.
"""

from __future__ import annotations

from ireval_df.compare._compare import compare
from ireval_df.compare._disagreement import disagreement
from ireval_df.compare._failures import failures
from ireval_df.compare._tukey import tukey_hsd

__all__ = ["compare", "disagreement", "failures", "tukey_hsd"]
