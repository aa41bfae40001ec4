"""Metric registry and families; importing this package registers every metric."""

from __future__ import annotations

from ireval_df.metrics import (  # noqa: F401  (imported to register their metrics)
    ap,
    bpref,
    counts,
    err,
    iprec,
    judged,
    ndcg,
    precision,
    rbp,
    recall,
    rr,
    sets,
)
from ireval_df.metrics._registry import REGISTRY, MetricInfo, list_metrics
from ireval_df.metrics._spec import Metric, parse_metric, parse_metrics

__all__ = [
    "REGISTRY",
    "Metric",
    "MetricInfo",
    "list_metrics",
    "parse_metric",
    "parse_metrics",
]
