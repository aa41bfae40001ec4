"""Charts of the library's frames: ``ie.plot.deltas(ie.compare(...))``.

Each function takes a frame the library returns (polars, pandas or arrow)
and returns an altair chart: it displays, interactive, in Jupyter, and
``chart.save("name.png")`` (or ``.svg``, ``.html``) writes it; PNG and SVG
go through vl-convert. ``chart.to_dict()`` is its Vega-Lite specification,
data included, for a page to embed. altair is imported on the first chart,
never by ``import ireval_df``: ``pip install "ireval-df[plot]"``.

Examples
--------
>>> summary = pl.DataFrame({"run_id": ["a", "b"], "metric": "AP", "value": [0.3, 0.4],
...     "ci_low": [0.2, 0.3], "ci_high": [0.4, 0.5], "n_queries": 50})
>>> chart = ie.plot.slices(summary)
>>> chart.to_dict()["spec"]["layer"][1]["encoding"]["x"]["field"]
'value'
"""

from __future__ import annotations

from ireval_df.plot.curves import pr_curve
from ireval_df.plot.experiments import ab, interleaving, position_ctr, propensities
from ireval_df.plot.statistics import (
    deltas,
    disagreement,
    per_query,
    similarity,
    slices,
)

__all__ = [
    "ab",
    "deltas",
    "disagreement",
    "interleaving",
    "per_query",
    "position_ctr",
    "pr_curve",
    "propensities",
    "similarity",
    "slices",
]
