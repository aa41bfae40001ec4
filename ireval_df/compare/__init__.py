"""Comparing runs: paired tests, corrections, all-pairs HSD, disagreement, failures.

Every function takes per-query results (the output of
:func:`ireval_df.evaluate`), or runs and qrels for :func:`failures`, and
returns a long frame: one row per (run, baseline, slice, metric), the
statistics as columns.

The functions are imported on first use (PEP 562), so that modules sharing
this package's helpers (:func:`ireval_df.summarize` uses ``_common``) do not
load the statistics and numpy with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ireval_df._lazy import lazy_names

if TYPE_CHECKING:
    from ireval_df.compare._compare import compare
    from ireval_df.compare._disagreement import disagreement
    from ireval_df.compare._failures import failures
    from ireval_df.compare._tukey import tukey_hsd

__all__ = ["compare", "disagreement", "failures", "tukey_hsd"]

_MODULES = {
    "compare": "ireval_df.compare._compare",
    "disagreement": "ireval_df.compare._disagreement",
    "failures": "ireval_df.compare._failures",
    "tukey_hsd": "ireval_df.compare._tukey",
}


__getattr__, __dir__ = lazy_names(__name__, _MODULES, __all__)
