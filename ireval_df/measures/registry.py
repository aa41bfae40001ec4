"""The measure registry: one entry per measure, of every family.

A family (offline metrics today; run similarity and online metrics next)
declares each of its measures here with a decorator made by
:func:`family_registrar`: name, aliases, typed and described parameters,
cutoff, direction, bounds, how per-unit values aggregate, and the function
that computes it. Names and spellings are unique across families. Parser,
``list_metrics()`` (:mod:`.docs`), CLI help, ``docs/metrics.md``, the statistics layer
(direction and aggregation) and the reference tests all read from here; no
other file lists measure names.

The registry knows each family's module by name (:data:`FAMILY_MODULES`)
and imports them on first look-up, so that a layer below the families (the
statistics) can ask about a measure without importing any family.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ireval_df.errors import MetricSpecError

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric

__all__ = [
    "AGGREGATES",
    "FAMILY_MODULES",
    "REGISTRY",
    "Aggregate",
    "Alias",
    "MeasureInfo",
    "Param",
    "Registry",
    "family_registrar",
    "lookup",
]

#: How per-unit values (per query, per user ...) combine into one number:
#: their mean, their sum, their geometric mean (values floored at 1e-5, as
#: trec_eval's gm_map), the ratio of the sums of a numerator and a
#: denominator (click-through rate over searches), or their median (time to
#: first click); the statistics layer summarizes the first three
Aggregate = Literal["mean", "sum", "gmean", "ratio", "median"]
AGGREGATES: tuple[str, ...] = ("mean", "sum", "gmean", "ratio", "median")
Cutoff = Literal["none", "optional", "required"]
Suffix = Callable[[str], tuple[dict[str, Any], Any]]

#: Each family, the module whose import registers its measures, and the
#: public function that computes them
FAMILY_MODULES: tuple[tuple[str, str, str], ...] = (
    ("offline", "ireval_df.offline.metrics", "ireval_df.evaluate"),
    ("similarity", "ireval_df.similarity.measures", "ireval_df.similarity"),
    ("online", "ireval_df.online.measures", "ireval_df.online.metrics"),
)


@dataclass(frozen=True)
class Alias:
    """Another spelling of a measure, possibly with preset parameters.

    ``suffix`` reads a trec_eval parameter suffix (``P_10``, ``set_F.0.5``)
    into parameters and a cutoff.
    """

    spelling: str
    metric: str
    preset: Mapping[str, Any] = field(default_factory=dict)
    suffix: Suffix | None = None


@dataclass(frozen=True)
class Param:
    """One parameter of a measure: default (which fixes its type), meaning, choices.

    The type is the default's: ``int``, ``float``, ``bool``, a word (``str``,
    restricted to ``choices`` when given), a list of numbers (a tuple) or a
    gain map (an empty tuple named ``gains``).

    Examples
    --------
    >>> Param("R", "denominator", choices=("R", "relret")).kind
    'word'
    >>> Param(0.8, "persistence").kind
    'float'
    """

    default: Any
    description: str
    choices: tuple[str, ...] | None = None

    @property
    def kind(self) -> str:
        """The parameter's type, in words: int, float, bool, word, list or gain map."""
        if self.default == () and "gain" in self.description:
            return "gain map"
        if isinstance(self.default, bool):
            return "bool"
        if isinstance(self.default, int):
            return "int"
        if isinstance(self.default, float):
            return "float"
        if isinstance(self.default, tuple):
            return "list"
        return "word"


@dataclass(frozen=True)
class MeasureInfo:
    """Everything known about one measure.

    ``compute`` is the family's function from a parsed :class:`Metric` to
    what that family's engine runs (an offline metric returns a
    :class:`~ireval_df.offline.plan.Plan`). ``options`` holds settings only
    its family reads (``full_sort`` for offline metrics).
    """

    name: str
    family: str
    compute: Callable[[Metric], Any]
    aliases: tuple[Alias, ...]
    cutoff: Cutoff
    cutoff_type: type
    parameters: Mapping[str, Param]
    higher_is_better: bool
    bounds: tuple[float | None, float | None]
    aggregate: Aggregate
    unit: str
    empty: float | None
    trec_eval: str | None
    validate: Callable[[Metric], None] | None
    summary: str
    notes: str
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def params(self) -> dict[str, Any]:
        """Every parameter's default, by name."""
        return {name: p.default for name, p in self.parameters.items()}

    @property
    def choices(self) -> dict[str, tuple[str, ...]]:
        """The allowed words of the parameters that have them."""
        return {n: p.choices for n, p in self.parameters.items() if p.choices}


class Registry(Mapping[str, MeasureInfo]):
    """Every measure by canonical name, filled by the families' registrars.

    Reading it (``REGISTRY["AP"]``, ``list(REGISTRY)``, :meth:`lookup`)
    first imports every family of :data:`FAMILY_MODULES` not yet imported.
    Adding a name or spelling that another measure has raises: a measure
    is never overwritten silently.
    """

    def __init__(self, families: tuple[tuple[str, str, str], ...]) -> None:
        self._families = families
        self._entries: dict[str, MeasureInfo] = {}
        #: spellings exactly as registered; looked up first, so that
        #: trec_eval's ``rbp`` (p=0.9) and the canonical ``RBP`` (p=0.8) both
        #: mean what they say
        self._exact: dict[str, Alias] = {}
        #: spellings lower-cased: the case-insensitive fallback
        self._lower: dict[str, Alias] = {}
        self._state = "new"

    def _load(self) -> None:
        if self._state != "new":
            return
        self._state = "loading"
        try:
            for _, module, _ in self._families:
                importlib.import_module(module)
        finally:
            self._state = "loaded"

    def __getitem__(self, name: str) -> MeasureInfo:
        self._load()
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(self._entries)

    def __len__(self) -> int:
        self._load()
        return len(self._entries)

    def add(self, info: MeasureInfo) -> None:
        """Register ``info``; raise if its name or a spelling is taken."""
        if info.name in self._entries:
            other = self._entries[info.name].family
            msg = f"measure {info.name!r} of family {info.family!r} is already registered by {other!r}"
            raise RuntimeError(msg)
        spellings = [Alias(info.name, info.name, {}, _suffix_of(info)), *info.aliases]
        for alias in spellings:
            taken = self._lower.get(alias.spelling.lower())
            if taken is not None and taken.metric != info.name:
                msg = f"alias {alias.spelling!r} of {info.name!r} is taken by {taken.metric!r}"
                raise RuntimeError(msg)
        self._entries[info.name] = info
        for alias in spellings:
            self._exact.setdefault(alias.spelling, alias)
            self._lower.setdefault(alias.spelling.lower(), alias)

    def lookup(self, spelling: str) -> Alias | None:
        """Find a spelling: exact case first, then case-insensitively."""
        self._load()
        return self._exact.get(spelling) or self._lower.get(spelling.lower())

    def entry_point(self, family: str) -> str:
        """Return the public function that computes ``family``'s measures."""
        return next(f for name, _, f in self._families if name == family)

    def spellings(self) -> dict[str, str]:
        """Every spelling, lower-cased, and the canonical name it means."""
        self._load()
        return {low: alias.metric for low, alias in self._lower.items()}


REGISTRY = Registry(FAMILY_MODULES)


def lookup(spelling: str) -> Alias | None:
    """Find a spelling: exact case first, then case-insensitively.

    Examples
    --------
    >>> lookup("rbp").preset, lookup("RBP").preset, lookup("Ndcg").metric
    ({'p': 0.9}, {}, 'nDCG')
    """
    return REGISTRY.lookup(spelling)


def _suffix_of(info: MeasureInfo) -> Suffix | None:
    if info.cutoff == "none":
        return None
    return float_suffix if info.cutoff_type is float else cutoff_suffix


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


def family_registrar(
    family: str, descriptions: Mapping[str, str] | None = None
) -> Callable[..., Callable[[Callable[[Metric], Any]], Callable[[Metric], Any]]]:
    """Make the ``@register`` decorator of one family of measures.

    Parameters
    ----------
    family : str
        The family's name (``"offline"``), recorded on every entry.
    descriptions : mapping of str to str, optional
        One-line descriptions of parameters the family's measures share, so
        that a registration may give such a parameter as a bare default
        (``params={"rel": 1}``); any other parameter is a :class:`Param`.

    Returns
    -------
    callable
        ``register(name, **declaration)``, a decorator factory; see
        :func:`declare` for the declaration's fields.
    """
    shared = dict(descriptions or {})

    def register(
        name: str, **declaration: Any
    ) -> Callable[[Callable[[Metric], Any]], Callable[[Metric], Any]]:
        def decorate(compute: Callable[[Metric], Any]) -> Callable[[Metric], Any]:
            REGISTRY.add(
                declare(name, compute, family=family, shared=shared, **declaration)
            )
            return compute

        return decorate

    register.__doc__ = (
        f"Register a measure of the {family!r} family (see family_registrar)."
    )
    return register


def declare(
    name: str,
    compute: Callable[[Metric], Any],
    *,
    family: str,
    shared: Mapping[str, str],
    aliases: tuple[str | tuple[str, Mapping[str, Any]] | Alias, ...] = (),
    cutoff: Cutoff = "none",
    cutoff_type: type = int,
    params: Mapping[str, Any] | None = None,
    choices: Mapping[str, tuple[str, ...]] | None = None,
    higher_is_better: bool = True,
    bounds: tuple[float | None, float | None] = (0.0, 1.0),
    aggregate: Aggregate = "mean",
    unit: str = "query",
    empty: float | None = 0.0,
    trec_eval: str | None = None,
    validate: Callable[[Metric], None] | None = None,
    **options: Any,
) -> MeasureInfo:
    """Build the registry entry of one measure.

    Parameters
    ----------
    name : str
        Canonical name (ir_measures spelling for offline metrics).
    compute : callable
        The family's function from a parsed metric to what its engine runs;
        its docstring's first paragraph is the one-line summary, the rest
        the notes of ``docs/metrics.md``.
    family : str
        The family computing it.
    shared : mapping
        Descriptions of the family's shared parameter names.
    aliases : tuple
        Other spellings: a string, ``(spelling, preset_params)`` or an
        :class:`Alias` (for trec_eval suffix forms).
    cutoff : {"none", "optional", "required"}
        Whether ``@k`` is allowed.
    cutoff_type : type
        ``int`` for ranks, ``float`` for recall levels.
    params : mapping
        Each parameter: a :class:`Param`, or a bare default for a name in
        ``shared``. ``judged_only=False`` is added when the family
        describes it.
    choices : mapping
        Allowed words of bare-default string parameters.
    higher_is_better, bounds, aggregate, unit
        Direction, range of a per-unit value, how per-unit values combine,
        what a unit is (a query, a user ...).
    empty : float or None, default 0.0
        The value of a unit with nothing to find (a query without a relevant
        document) whatever the ranking; None where it depends on the ranking
        (counts, judged shares, residuals).
    trec_eval : str, optional
        trec_eval measure name, with ``{k}`` for the cutoff.
    validate : callable, optional
        Extra checks on a parsed spec; raises ``MetricSpecError``.
    **options
        Settings only the family reads (offline: ``full_sort``; and for
        the metrics ``evaluate(..., by_doc=...)`` restricts to a slice of
        the documents, ``doc_slices``, how: ``"engine"``, ``"top"`` or
        ``"qrels"``, see :mod:`ireval_df.offline.doc_slices`, with
        ``slice_denominator``, the metric whose zero leaves it undefined).

    Returns
    -------
    MeasureInfo
    """
    if aggregate not in AGGREGATES:
        msg = f"measure {name!r}: aggregate={aggregate!r} is not one of {AGGREGATES}"
        raise RuntimeError(msg)
    declared: dict[str, Any] = {}
    if "judged_only" in shared:
        declared["judged_only"] = False
    declared.update(params or {})
    parameters: dict[str, Param] = {}
    for key, value in declared.items():
        if isinstance(value, Param):
            parameters[key] = value
        elif key in shared:
            parameters[key] = Param(value, shared[key], (choices or {}).get(key))
        else:
            msg = (
                f"measure {name!r}: parameter {key!r} needs a description: "
                f"declare it as Param(default, description)"
            )
            raise RuntimeError(msg)
    doc = inspect.getdoc(compute) or ""
    summary, _, notes = doc.partition("\n\n")
    suffix = (
        (float_suffix if cutoff_type is float else cutoff_suffix)
        if cutoff != "none"
        else None
    )
    alias_objs = []
    for item in aliases:
        if isinstance(item, Alias):
            alias_objs.append(Alias(item.spelling, name, item.preset, item.suffix))
        elif isinstance(item, str):
            alias_objs.append(Alias(item, name, {}, suffix))
        else:
            alias_objs.append(Alias(item[0], name, item[1], suffix))
    return MeasureInfo(
        name=name,
        family=family,
        compute=compute,
        aliases=tuple(alias_objs),
        cutoff=cutoff,
        cutoff_type=cutoff_type,
        parameters=parameters,
        higher_is_better=higher_is_better,
        bounds=bounds,
        aggregate=aggregate,
        unit=unit,
        empty=empty,
        trec_eval=trec_eval,
        validate=validate,
        summary=" ".join(summary.split()),
        notes=notes.strip(),
        options=options,
    )
