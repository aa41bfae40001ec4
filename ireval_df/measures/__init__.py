"""The one registry of measures of every family, and the ``Name(params)@k`` grammar.

A measure is declared once (:mod:`.registry`): name, aliases, typed and
described parameters, direction, bounds, aggregation, family. A metric
string parses (:mod:`.spec`) into a hashable :class:`Metric` whose ``str()``
is canonical. :func:`properties` tells the statistics layer how to read a
``metric`` column, for registry names and for a user's own columns alike.
"""

from __future__ import annotations

from ireval_df.measures.docs import list_metrics
from ireval_df.measures.properties import Properties, properties
from ireval_df.measures.registry import (
    REGISTRY,
    MeasureInfo,
    Param,
    family_registrar,
)
from ireval_df.measures.spec import Metric, parse_metric, parse_metrics

__all__ = [
    "REGISTRY",
    "MeasureInfo",
    "Metric",
    "Param",
    "Properties",
    "family_registrar",
    "list_metrics",
    "parse_metric",
    "parse_metrics",
    "properties",
]
