"""ireval_df: trec_eval-exact IR evaluation as polars dataframe expressions.

Runs and qrels are frames; every metric is a grouped window/aggregation over
rank and relevance columns, all metrics and runs in one lazy plan; results
are tidy frames to slice, compare and write to Parquet.

Examples
--------
>>> import ireval_df as ie
>>> run = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
>>> qrels = pl.DataFrame({"query_id": "q1", "doc_id": ["b"], "relevance": [1]})
>>> ie.evaluate(run, qrels, ["nDCG@10", "RR"])["value"].round(4).to_list()
[0.6309, 0.5]
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from ireval_df import errors
from ireval_df._lazy import lazy_names
from ireval_df.evaluate import evaluate
from ireval_df.io import read_qrels, read_queries, read_run, write_results
from ireval_df.metrics import Metric, list_metrics, parse_metric

if TYPE_CHECKING:
    from ireval_df.compare import compare, disagreement, failures, tukey_hsd
    from ireval_df.report import to_html, to_latex, to_markdown, to_wide
    from ireval_df.slices import length_buckets, position_buckets, quantile_bins
    from ireval_df.summarize import summarize
    from ireval_df.validate import validate

__all__ = [
    "Metric",
    "compare",
    "disagreement",
    "errors",
    "evaluate",
    "failures",
    "length_buckets",
    "list_metrics",
    "parse_metric",
    "position_buckets",
    "quantile_bins",
    "read_qrels",
    "read_queries",
    "read_run",
    "summarize",
    "to_html",
    "to_latex",
    "to_markdown",
    "to_wide",
    "tukey_hsd",
    "validate",
    "write_results",
]

#: Public names imported on first use (PEP 562): ``import ireval_df`` then
#: ``evaluate`` needs neither numpy nor the comparison and report modules.
_LAZY = {
    "compare": "ireval_df.compare",
    "disagreement": "ireval_df.compare",
    "failures": "ireval_df.compare",
    "tukey_hsd": "ireval_df.compare",
    "to_html": "ireval_df.report",
    "to_latex": "ireval_df.report",
    "to_markdown": "ireval_df.report",
    "to_wide": "ireval_df.report",
    "length_buckets": "ireval_df.slices",
    "position_buckets": "ireval_df.slices",
    "quantile_bins": "ireval_df.slices",
    "summarize": "ireval_df.summarize",
    "validate": "ireval_df.validate",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)


class _Package(types.ModuleType):
    """The package's module type: a subpackage never hides its namesake function.

    Importing the subpackage ``ireval_df.compare`` makes the import system set
    the attribute ``ireval_df.compare`` to it; the attribute stays the function.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            name in _LAZY
            and isinstance(value, types.ModuleType)
            and value.__name__ == f"{__name__}.{name}"
        ):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
