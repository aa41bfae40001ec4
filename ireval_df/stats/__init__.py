"""Statistics over any family's long frames: summaries, paired comparisons, HSD.

A/B tests on unit-level frames (one row per randomisation unit) are in
:mod:`ireval_df.stats.experiments`.

Every function takes a long frame with ``run_id``, ``query_id``, ``metric``
and ``value`` columns (the output of :func:`ireval_df.evaluate`, or any
family's per-unit frame, or a user's own) and returns a long frame. A
metric's direction and aggregation come from the measure registry when its
name is known there, otherwise from ``higher_is_better=`` and
``aggregate=``. Nothing here reads a family's internals.

The functions are imported on first use (PEP 562), so that ``import
ireval_df.stats`` does not load numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ireval_df._utils.lazy import lazy_names

if TYPE_CHECKING:
    from ireval_df.stats.comparison import compare
    from ireval_df.stats.divergence import agreement, tau_ap
    from ireval_df.stats.experiments import (
        aa_units,
        ab_test_units,
        power,
        power_units,
        quantile_test,
        srm,
        srm_counts,
    )
    from ireval_df.stats.gating import gate
    from ireval_df.stats.headroom import headroom
    from ireval_df.stats.slices import (
        age_buckets,
        length_buckets,
        position_buckets,
        quantile_bins,
    )
    from ireval_df.stats.summary import summarize
    from ireval_df.stats.tukey import tukey_hsd

__all__ = [
    "aa_units",
    "ab_test_units",
    "agreement",
    "age_buckets",
    "compare",
    "gate",
    "headroom",
    "length_buckets",
    "position_buckets",
    "power",
    "power_units",
    "quantile_bins",
    "quantile_test",
    "srm",
    "srm_counts",
    "summarize",
    "tau_ap",
    "tukey_hsd",
]

_MODULES = {
    "aa_units": "ireval_df.stats.experiments",
    "ab_test_units": "ireval_df.stats.experiments",
    "agreement": "ireval_df.stats.divergence",
    "age_buckets": "ireval_df.stats.slices",
    "compare": "ireval_df.stats.comparison",
    "gate": "ireval_df.stats.gating",
    "headroom": "ireval_df.stats.headroom",
    "length_buckets": "ireval_df.stats.slices",
    "position_buckets": "ireval_df.stats.slices",
    "power": "ireval_df.stats.experiments",
    "power_units": "ireval_df.stats.experiments",
    "quantile_bins": "ireval_df.stats.slices",
    "quantile_test": "ireval_df.stats.experiments",
    "srm": "ireval_df.stats.experiments",
    "srm_counts": "ireval_df.stats.experiments",
    "summarize": "ireval_df.stats.summary",
    "tau_ap": "ireval_df.stats.divergence",
    "tukey_hsd": "ireval_df.stats.tukey",
}

__getattr__, __dir__ = lazy_names(__name__, _MODULES, __all__)
