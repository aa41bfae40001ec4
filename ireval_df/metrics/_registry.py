"""The metric registry: one entry per metric, filled by ``@register``.

Parser, ``list_metrics()``, CLI help, ``docs/metrics.md`` and the reference
tests all read from here; no other file lists metric names.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df.errors import MetricSpecError

if TYPE_CHECKING:
    from ireval_df.metrics._plan import Plan
    from ireval_df.metrics._spec import Metric

__all__ = [
    "ALIASES",
    "EXACT",
    "REGISTRY",
    "Alias",
    "MetricInfo",
    "list_metrics",
    "lookup",
    "register",
]

Aggregate = Literal["mean", "sum", "gmean"]
Suffix = Callable[[str], tuple[dict[str, Any], Any]]


@dataclass(frozen=True)
class Alias:
    """Another spelling of a metric, possibly with preset parameters.

    ``suffix`` reads a trec_eval parameter suffix (``P_10``, ``set_F.0.5``)
    into parameters and a cutoff.
    """

    spelling: str
    metric: str
    preset: Mapping[str, Any] = field(default_factory=dict)
    suffix: Suffix | None = None


@dataclass(frozen=True)
class MetricInfo:
    """Everything known about one metric."""

    name: str
    builder: Callable[[Metric], Plan]
    aliases: tuple[Alias, ...]
    cutoff: Literal["none", "optional", "required"]
    cutoff_type: type
    params: Mapping[str, Any]
    choices: Mapping[str, tuple[str, ...]]
    higher_is_better: bool
    bounds: tuple[float | None, float | None]
    aggregate: Aggregate
    empty: float | None
    trec_eval: str | None
    full_sort: bool
    validate: Callable[[Metric], None] | None
    summary: str
    notes: str

    def build(self, metric: Metric) -> Plan:
        """Return the plan computing ``metric``."""
        return self.builder(metric)


REGISTRY: dict[str, MetricInfo] = {}
#: Spellings, lower-cased (the case-insensitive fallback).
ALIASES: dict[str, Alias] = {}
#: Spellings exactly as registered; looked up first, so that trec_eval's
#: ``rbp`` (p=0.9) and the canonical ``RBP`` (p=0.8) both mean what they say.
EXACT: dict[str, Alias] = {}


def lookup(spelling: str) -> Alias | None:
    """Find a spelling: exact case first, then case-insensitively.

    Examples
    --------
    >>> lookup("rbp").preset, lookup("RBP").preset, lookup("Ndcg").metric
    ({'p': 0.9}, {}, 'nDCG')
    """
    return EXACT.get(spelling) or ALIASES.get(spelling.lower())


def cutoff_suffix(text: str) -> tuple[dict[str, Any], Any]:
    """Read ``10`` (or trec_eval's ``23.4``, truncated like atol) as a cutoff.

    Examples
    --------
    >>> cutoff_suffix("10"), cutoff_suffix("23.4")
    (({}, 10), ({}, 23))
    """
    match = re.fullmatch(r"\d+(\.\d*)?", text)
    if match is None:
        msg = f"expected a whole-number cutoff after the measure name, found {text!r}."
        raise MetricSpecError(msg)
    return {}, int(float(text))


def float_suffix(text: str) -> tuple[dict[str, Any], Any]:
    """Read ``0.10`` as a float cutoff (recall level).

    Examples
    --------
    >>> float_suffix("0.10")
    ({}, 0.1)
    """
    try:
        return {}, float(text)
    except ValueError:
        msg = f"expected a number after the measure name, found {text!r}."
        raise MetricSpecError(msg) from None


def register(
    name: str,
    *,
    aliases: tuple[str | tuple[str, Mapping[str, Any]] | Alias, ...] = (),
    cutoff: Literal["none", "optional", "required"] = "none",
    cutoff_type: type = int,
    params: Mapping[str, Any] | None = None,
    choices: Mapping[str, tuple[str, ...]] | None = None,
    higher_is_better: bool = True,
    bounds: tuple[float | None, float | None] = (0.0, 1.0),
    aggregate: Aggregate = "mean",
    empty: float | None = 0.0,
    trec_eval: str | None = None,
    full_sort: bool = False,
    validate: Callable[[Metric], None] | None = None,
) -> Callable[[Callable[[Metric], Plan]], Callable[[Metric], Plan]]:
    """Register a metric builder under ``name`` (see STYLE.md section 3).

    Parameters
    ----------
    name : str
        Canonical name (ir_measures spelling).
    aliases : tuple
        Other spellings: a string, ``(spelling, preset_params)`` or an
        :class:`Alias` (for trec_eval suffix forms).
    cutoff : {"none", "optional", "required"}
        Whether ``@k`` is allowed.
    cutoff_type : type
        ``int`` for ranks, ``float`` for recall levels.
    params : mapping
        Parameter defaults; ``judged_only=False`` is added to every metric.
    choices : mapping
        Allowed words for string parameters.
    higher_is_better, bounds, aggregate, empty
        Direction, range, how per-query values combine, value when the query
        has no relevant document.
    trec_eval : str, optional
        trec_eval measure name, with ``{k}`` for the cutoff.
    full_sort : bool
        Whether the metric needs every retrieved document's rank.
    validate : callable, optional
        Extra checks on a parsed spec; raises ``MetricSpecError``.

    Returns
    -------
    callable
        The decorator; it returns the builder unchanged.
    """
    defaults: dict[str, Any] = {"judged_only": False}
    defaults.update(params or {})

    def decorate(builder: Callable[[Metric], Plan]) -> Callable[[Metric], Plan]:
        if name in REGISTRY:
            msg = f"metric {name!r} is registered twice"
            raise RuntimeError(msg)
        doc = inspect.getdoc(builder) or ""
        summary, _, notes = doc.partition("\n\n")
        suffix = (
            (float_suffix if cutoff_type is float else cutoff_suffix)
            if cutoff != "none"
            else None
        )
        alias_objs = [Alias(name, name, {}, suffix)]
        for item in aliases:
            if isinstance(item, Alias):
                alias_objs.append(Alias(item.spelling, name, item.preset, item.suffix))
            elif isinstance(item, str):
                alias_objs.append(Alias(item, name, {}, suffix))
            else:
                alias_objs.append(Alias(item[0], name, item[1], suffix))
        info = MetricInfo(
            name=name,
            builder=builder,
            aliases=tuple(alias_objs[1:]),
            cutoff=cutoff,
            cutoff_type=cutoff_type,
            params=defaults,
            choices=dict(choices or {}),
            higher_is_better=higher_is_better,
            bounds=bounds,
            aggregate=aggregate,
            empty=empty,
            trec_eval=trec_eval,
            full_sort=full_sort,
            validate=validate,
            summary=" ".join(summary.split()),
            notes=notes.strip(),
        )
        REGISTRY[name] = info
        for alias in alias_objs:
            EXACT.setdefault(alias.spelling, alias)
            key = alias.spelling.lower()
            if key in ALIASES and ALIASES[key].metric != name:
                msg = f"alias {alias.spelling!r} of {name!r} is taken by {ALIASES[key].metric!r}"
                raise RuntimeError(msg)
            ALIASES.setdefault(key, alias)
        return builder

    return decorate


def list_metrics() -> pl.DataFrame:
    """List every registered metric, one row each.

    Returns
    -------
    polars.DataFrame
        ``metric, aliases, trec_eval, cutoff, params, aggregate,
        higher_is_better, description``.

    Examples
    --------
    >>> table = list_metrics()
    >>> table.filter(pl.col("metric") == "AP").select("trec_eval", "aggregate").row(0)
    ('map, map_cut_{k}', 'mean')
    """
    from ireval_df.metrics._spec import format_value

    rows = []
    for info in REGISTRY.values():
        shown = {k: v for k, v in info.params.items()}
        rows.append(
            {
                "metric": info.name,
                "aliases": ", ".join(a.spelling for a in info.aliases),
                "trec_eval": None
                if info.trec_eval is None
                else info.trec_eval.replace("|", ", "),
                "cutoff": info.cutoff,
                "params": ", ".join(f"{k}={format_value(v)}" for k, v in shown.items()),
                "aggregate": info.aggregate,
                "higher_is_better": info.higher_is_better,
                "description": info.summary,
            }
        )
    return pl.DataFrame(rows)
