"""ireval_df: trec_eval-exact IR evaluation as polars dataframe expressions.

Runs and qrels are frames; every metric is a grouped window/aggregation over
rank and relevance columns, all metrics and runs sharing every pass over the
data; results are tidy frames to slice, compare and write to Parquet.

Examples
--------
>>> import ireval_df as ie
>>> run = pl.DataFrame({"query_id": "q1", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
>>> qrels = pl.DataFrame({"query_id": "q1", "doc_id": ["b"], "relevance": [1]})
>>> ie.evaluate(run, qrels, ["nDCG@10", "RR"])["value"].round(4).to_list()
[0.6309, 0.5]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ireval_df import errors
from ireval_df._utils.lazy import lazy_names
from ireval_df.io import write_results
from ireval_df.measures import Metric, list_metrics, parse_metric
from ireval_df.offline import evaluate
from ireval_df.schema import read_docs, read_qrels, read_queries, read_run

# imported now, not on first use: the subpackage shares its name with the
# function, and binding the function after the subpackage's first import is
# what keeps ie.similarity the function
from ireval_df.similarity import diff, similarity

if TYPE_CHECKING:
    from ireval_df import online, plot
    from ireval_df.cli.report import html_report
    from ireval_df.diagnostics import disagreement, failures, trace, validate
    from ireval_df.offline.prefs import evaluate_prefs, read_prefs
    from ireval_df.report import to_html, to_latex, to_markdown, to_wide
    from ireval_df.stats import (
        age_buckets,
        agreement,
        compare,
        gate,
        headroom,
        length_buckets,
        position_buckets,
        quantile_bins,
        summarize,
        tukey_hsd,
    )

__all__ = [
    "Metric",
    "age_buckets",
    "agreement",
    "compare",
    "diff",
    "disagreement",
    "errors",
    "evaluate",
    "evaluate_prefs",
    "failures",
    "gate",
    "headroom",
    "html_report",
    "length_buckets",
    "list_metrics",
    "online",
    "parse_metric",
    "plot",
    "position_buckets",
    "quantile_bins",
    "read_docs",
    "read_prefs",
    "read_qrels",
    "read_queries",
    "read_run",
    "similarity",
    "summarize",
    "to_html",
    "to_latex",
    "to_markdown",
    "to_wide",
    "trace",
    "tukey_hsd",
    "validate",
    "write_results",
]

#: Public names imported on first use (PEP 562): ``import ireval_df`` then
#: ``evaluate`` needs neither numpy nor the statistics and report modules.
_LAZY = {
    "age_buckets": "ireval_df.stats",
    "agreement": "ireval_df.stats",
    "compare": "ireval_df.stats",
    "gate": "ireval_df.stats",
    # from its own module: importing ireval_df.stats.headroom makes the
    # package attribute ireval_df.stats.headroom that module, not the function
    "headroom": "ireval_df.stats.headroom",
    "length_buckets": "ireval_df.stats",
    "position_buckets": "ireval_df.stats",
    "quantile_bins": "ireval_df.stats",
    "summarize": "ireval_df.stats",
    "tukey_hsd": "ireval_df.stats",
    # preference judgments (trec_eval's prefs_* measures)
    "evaluate_prefs": "ireval_df.offline.prefs",
    "read_prefs": "ireval_df.offline.prefs",
    "disagreement": "ireval_df.diagnostics",
    "failures": "ireval_df.diagnostics",
    "trace": "ireval_df.diagnostics",
    "validate": "ireval_df.diagnostics",
    "to_html": "ireval_df.report",
    "to_latex": "ireval_df.report",
    "to_markdown": "ireval_df.report",
    "to_wide": "ireval_df.report",
    # the HTML report runs every family and the charts: the command line's layer
    "html_report": "ireval_df.cli.report",
    # a module, not a function: ie.online.read_log, ie.online.metrics ...
    "online": "module:ireval_df.online",
    # charts (altair, the [plot] extra): ie.plot.deltas, ie.plot.pr_curve ...
    "plot": "module:ireval_df.plot",
}

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
