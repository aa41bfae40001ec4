"""The offline metrics: one module per family, one ``@register`` entry per metric.

Importing this package registers every offline metric in the family-neutral
registry (:mod:`ireval_df.measures`), which imports it on first look-up.
"""

from __future__ import annotations

from ireval_df.offline.metrics import (  # noqa: F401  (imported to register their metrics)
    ap,
    bpref,
    compat,
    counts,
    cwl,
    diversity,
    err,
    iprec,
    judged,
    ndcg,
    precision,
    prefs,
    rbp,
    recall,
    rr,
    sets,
    shares,
)
