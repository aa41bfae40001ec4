"""How to read a ``metric`` column: each name's direction and aggregation.

The statistics and report layers take any long frame of ``metric`` and
``value`` columns. A name the registry knows (``nDCG@10``, ``ndcg_cut_10``)
brings its own direction and aggregation; any other name (a user's own
per-query column, such as an answer judge's score or a latency) must be
declared by the caller with ``higher_is_better=`` (and ``aggregate=`` when
its values do not combine by their mean).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, cast

from ireval_df.errors import MetricSpecError, OptionError
from ireval_df.measures.registry import AGGREGATES, REGISTRY, Aggregate
from ireval_df.measures.spec import parse_metric

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["Direction", "AggregateOption", "Properties", "properties"]

#: ``higher_is_better=``: one direction for every name the registry does not
#: know, or one per name
Direction: TypeAlias = bool | Mapping[str, bool] | None
#: ``aggregate=``: likewise, for how per-unit values combine
AggregateOption: TypeAlias = str | Mapping[str, str] | None


@dataclass(frozen=True)
class Properties:
    """What the statistics need to know of one metric name."""

    metric: str
    higher_is_better: bool
    aggregate: Aggregate
    #: the name is a registry measure (else the caller declared it)
    registered: bool


def _given(option: object, name: str) -> bool | str | None:
    if option is None or isinstance(option, bool | str):
        return option
    if isinstance(option, Mapping):
        found = option.get(name)
        return found if isinstance(found, bool | str) or found is None else str(found)
    msg = f"expected a bool, a word or a mapping of metric names, found {option!r}."
    raise OptionError(msg)


def _near(name: str) -> str | None:
    """Return a registry spelling very close to ``name`` (a typo), with its cutoff."""
    base, cut, rest = name.partition("@")
    base = base.split("(", 1)[0]
    spellings = REGISTRY.spellings()
    close = difflib.get_close_matches(base.lower(), sorted(spellings), n=1, cutoff=0.75)
    return spellings[close[0]] + cut + rest if close else None


def properties(
    metrics: Iterable[str],
    *,
    higher_is_better: Direction = None,
    aggregate: AggregateOption = None,
) -> list[Properties]:
    """Return the direction and aggregation of each metric name.

    Parameters
    ----------
    metrics : iterable of str
        Names as a ``metric`` column holds them.
    higher_is_better : bool or mapping of str to bool, optional
        The direction of names the registry does not know: one for all, or
        one per name. A registry name keeps its own; a mapping that gives it
        the other direction is an error.
    aggregate : {"mean", "sum", "gmean"} or mapping of str to str, optional
        How values of names the registry does not know combine (default
        ``"mean"``). A registry name keeps its own; a mapping that gives it
        another is an error.

    Returns
    -------
    list of Properties
        One per name, in order.

    Raises
    ------
    MetricSpecError
        A name the registry does not know and ``higher_is_better`` does not
        declare (an :class:`~ireval_df.errors.OptionError`, exit 2 on the
        command line).
    OptionError
        A declaration that contradicts the registry, or an unknown
        aggregation.

    Examples
    --------
    >>> [(p.higher_is_better, p.aggregate) for p in properties(["AP", "NumRet"])]
    [(True, 'mean'), (True, 'sum')]
    >>> properties(["latency_ms"], higher_is_better={"latency_ms": False})[0].higher_is_better
    False
    >>> properties(["latency_ms"])
    Traceback (most recent call last):
    ...
    ireval_df.errors.MetricSpecError: metric 'latency_ms' is not a registry measure, so whether higher is better is unknown.
      Hint: declare it, e.g. higher_is_better={'latency_ms': True} (or False), and aggregate={'latency_ms': 'sum'} if its values do not combine by their mean; ireval_df.list_metrics() lists the registry's measures.
    """
    out = []
    for name in metrics:
        direction = _given(higher_is_better, name)
        combine = _given(aggregate, name)
        try:
            info = parse_metric(name).info
        except MetricSpecError:
            info = None
        if info is not None:
            explicit_direction = (
                None if isinstance(higher_is_better, bool) else direction
            )
            explicit_combine = None if isinstance(aggregate, str) else combine
            if (
                explicit_direction is not None
                and explicit_direction != info.higher_is_better
            ):
                msg = (
                    f"higher_is_better={{{name!r}: {explicit_direction}}} contradicts the "
                    f"registry, where {name!r} has higher_is_better={info.higher_is_better}.\n"
                    "  Hint: leave registry measures out of higher_is_better=."
                )
                raise OptionError(msg)
            if explicit_combine is not None and explicit_combine != info.aggregate:
                msg = (
                    f"aggregate={{{name!r}: {explicit_combine!r}}} contradicts the registry, "
                    f"where {name!r} aggregates by {info.aggregate!r}.\n"
                    "  Hint: leave registry measures out of aggregate=."
                )
                raise OptionError(msg)
            out.append(
                Properties(name, info.higher_is_better, info.aggregate, registered=True)
            )
            continue
        if direction is None:
            hint = _near(name)
            msg = (
                f"metric {name!r} is not a registry measure"
                + (f" (did you mean {hint!r}?)" if hint else "")
                + ", so whether higher is better is unknown.\n"
                f"  Hint: declare it, e.g. higher_is_better={{{name!r}: True}} (or "
                f"False), and aggregate={{{name!r}: 'sum'}} if its values do not combine "
                "by their mean; ireval_df.list_metrics() lists the registry's measures."
            )
            raise MetricSpecError(msg)
        combine = "mean" if combine is None else combine
        if combine not in AGGREGATES or combine in ("ratio", "median"):
            allowed = ", ".join(
                repr(a) for a in AGGREGATES if a not in ("ratio", "median")
            )
            msg = (
                f"aggregate={combine!r} for metric {name!r} is not one of {allowed}.\n"
                "  Hint: a ratio of sums is summarized from its numerator and "
                "denominator columns; declare those as two metrics."
            )
            raise OptionError(msg)
        out.append(
            Properties(
                name, bool(direction), cast("Aggregate", combine), registered=False
            )
        )
    return out
