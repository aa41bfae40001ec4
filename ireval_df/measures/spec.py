"""Metric specifications: the ``Metric`` value type and its grammar.

A metric is written ``Name(param=value,...)@k``: the registry name, optional
parameters in brackets (defaults left out, sorted by name) and an optional
cutoff. ``str(parse_metric(s))`` is the canonical spelling and
``parse_metric(str(m)) == m`` always holds. Parameter values are numbers,
``true``/``false``, bare words, lists ``[0.25,0.5]`` or gain maps
``{1:3,2:9}``. Nothing is ever evaluated: the grammar below is the whole
language.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import polars as pl

from ireval_df.errors import MetricSpecError
from ireval_df.measures.registry import REGISTRY, lookup

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ireval_df.measures.registry import MeasureInfo

__all__ = ["Metric", "format_value", "parse_metric"]

#: A parameter value after coercion: scalar, list of floats or gain map.
ParamValue = (
    int | float | bool | str | tuple[float, ...] | tuple[tuple[int, float], ...]
)

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def format_value(value: Any) -> str:
    """Return the canonical text of a parameter or cutoff value.

    Examples
    --------
    >>> format_value(True), format_value(0.8), format_value(3.0), format_value(10)
    ('true', '0.8', '3', '10')
    >>> format_value(((1, 3.0), (2, 9.0))), format_value((0.25, 0.5))
    ('{1:3,2:9}', '[0.25,0.5]')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, tuple):
        if value and isinstance(value[0], tuple):
            return "{" + ",".join(f"{k}:{format_value(v)}" for k, v in value) + "}"
        return "[" + ",".join(format_value(v) for v in value) + "]"
    return str(value)


@dataclass(frozen=True)
class Metric:
    """One metric with its parameters and cutoff; hashable, canonical.

    Build it with :func:`parse_metric`; ``str(metric)`` is the canonical
    spelling that the ``metric`` column of a result holds.

    Examples
    --------
    >>> m = parse_metric("ndcg_cut_10")
    >>> str(m), m.k, m.trec_name
    ('nDCG@10', 10, 'ndcg_cut_10')
    """

    name: str
    params: tuple[tuple[str, ParamValue], ...] = ()
    k: int | float | None = None

    def __str__(self) -> str:
        text = self.name
        if self.params:
            text += (
                "(" + ",".join(f"{k}={format_value(v)}" for k, v in self.params) + ")"
            )
        if self.k is not None:
            text += "@" + format_value(self.k)
        return text

    def __repr__(self) -> str:
        return f"Metric({str(self)!r})"

    @property
    def info(self) -> MeasureInfo:
        """The registry entry of this metric."""
        return REGISTRY[self.name]

    @property
    def trec_name(self) -> str | None:
        """The trec_eval measure name (``P_10``, ``map``), or None when it has none.

        Examples
        --------
        >>> [parse_metric(s).trec_name for s in ["nDCG", "AP@100", "IPrec@0.1", "ERR@10"]]
        ['ndcg', 'map_cut_100', 'iprec_at_recall_0.10', None]
        >>> parse_metric("Rprec(mult=0.2)").trec_name
        'Rprec_mult_0.20'
        """
        template = self.info.trec_eval
        if template is None:
            return None
        if self.name == "Rprec" and float(self.param("mult")) != 1.0:
            return f"Rprec_mult_{float(self.param('mult')):.2f}"
        plain, _, with_cutoff = template.partition("|")
        if self.k is None:
            return plain if "{k" not in plain else None
        return (with_cutoff or plain).format(k=self.k)

    def param(self, key: str) -> Any:
        """Return parameter ``key``, falling back to the registry default."""
        for name, value in self.params:
            if name == key:
                return value
        return self.info.params[key]

    @property
    def rel(self) -> int:
        """Lowest relevance grade counted as relevant (binary metrics)."""
        return int(self.param("rel"))

    @property
    def judged_only(self) -> bool:
        """Whether unjudged documents are removed before ranking."""
        return bool(self.param("judged_only"))

    def col(self, what: str) -> str:
        """Return a temporary column name unique to this spec and ``what``."""
        return "__ireval_" + _slug(str(self)) + "_" + what

    def in_cutoff(self) -> pl.Expr:
        """Boolean expression: the row's rank is within the cutoff (or no cutoff)."""
        if self.k is None:
            return pl.lit(value=True)
        return pl.col("rank") <= int(self.k)


def _slug(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_")


# ---------------------------------------------------------------------------
# parsing


def parse_metric(spec: str | Metric) -> Metric:
    """Parse a metric name into its canonical :class:`Metric`.

    Accepts the canonical ir_measures-style syntax, trec_eval names and
    ranx names, case-insensitively.

    Parameters
    ----------
    spec : str or Metric
        ``"nDCG@10"``, ``"P(rel=2)@5"``, ``"ndcg_cut.10"``, ``"map"``,
        ``"mrr@10"``, ``"RBP(p=0.8)"``, ...

    Returns
    -------
    Metric
        Hashable; ``str()`` gives the canonical spelling.

    Raises
    ------
    MetricSpecError
        Unknown name (with the closest valid names), unknown parameter,
        bad value, or a cutoff where none is allowed.

    Examples
    --------
    >>> [str(parse_metric(s)) for s in ["ndcg@10", "map", "P_10", "recip_rank"]]
    ['nDCG@10', 'AP', 'P@10', 'RR']
    >>> str(parse_metric("nDCG(dcg=exp-log2)@10")), str(parse_metric("ndcg_burges@10"))
    ('nDCG(dcg=exp-log2)@10', 'nDCG(dcg=exp-log2)@10')
    >>> parse_metric("ndgc@10")
    Traceback (most recent call last):
    ...
    ireval_df.errors.MetricSpecError: unknown metric 'ndgc@10'. Did you mean 'nDCG@10' or 'Rndcg@10' or 'DCG@10'? See ireval_df.list_metrics().
    """
    if isinstance(spec, Metric):
        return spec
    if not isinstance(spec, str):
        msg = f"a metric must be a string such as 'nDCG@10', found {spec!r}"
        raise MetricSpecError(msg)
    text = spec.strip()
    match = re.fullmatch(
        r"(?P<name>[A-Za-z0-9_\-]+)(?:\((?P<params>.*)\))?(?:@(?P<k>[^@()]+))?", text
    )
    trec = _parse_trec_suffix(text)
    if trec is not None:
        return trec
    if match is None:
        _unknown(spec)
    name = match.group("name")
    alias = lookup(name)
    if alias is None:
        _unknown(spec)
    info = REGISTRY[alias.metric]
    params: dict[str, Any] = dict(alias.preset)
    if match.group("params") is not None:
        for key, raw in _split_params(match.group("params"), spec):
            params[key] = raw
    k_text = match.group("k")
    k: int | float | None = None
    if k_text is not None:
        k = _parse_number(k_text.strip(), spec)
    return build_metric(info.name, params, k, spec=spec)


def build_metric(
    name: str, params: dict[str, Any], k: Any, *, spec: str | None = None
) -> Metric:
    """Validate and coerce ``params``/``k`` for registry entry ``name``.

    Examples
    --------
    >>> str(build_metric("P", {"rel": 2}, 5))
    'P(rel=2)@5'
    """
    info = REGISTRY[name]
    where = spec if spec is not None else name
    coerced: dict[str, ParamValue] = {}
    for key, raw in params.items():
        if key not in info.params:
            valid = ", ".join(sorted(info.params)) or "none"
            msg = (
                f"metric {where!r}: unknown parameter {key!r} for {info.name}. "
                f"Valid parameters: {valid}."
            )
            raise MetricSpecError(msg)
        coerced[key] = _coerce(info, key, raw, where)
    kept = tuple(
        sorted((key, v) for key, v in coerced.items() if v != info.params[key])
    )
    cutoff = _coerce_cutoff(info, k, where)
    metric = Metric(info.name, kept, cutoff)
    if info.validate is not None:
        info.validate(metric)
    return metric


def _coerce_cutoff(info: MeasureInfo, k: Any, where: str) -> int | float | None:
    if k is None:
        if info.cutoff == "required":
            msg = (
                f"metric {where!r}: {info.name} needs a cutoff, e.g. '{info.name}@10'."
            )
            raise MetricSpecError(msg)
        return None
    if info.cutoff == "none":
        msg = f"metric {where!r}: {info.name} takes no cutoff; write '{info.name}'."
        raise MetricSpecError(msg)
    if info.cutoff_type is float:
        value = float(k)
        if not 0.0 <= value <= 1.0:
            msg = f"metric {where!r}: the cutoff of {info.name} is a recall level in [0, 1], found {k!r}."
            raise MetricSpecError(msg)
        return value
    if isinstance(k, float) and not math.isfinite(k):
        msg = f"metric {where!r}: the cutoff must be a finite number, found {k!r}."
        raise MetricSpecError(msg)
    if isinstance(k, float) and k != int(k):
        msg = f"metric {where!r}: the cutoff must be a whole number, found {k!r}."
        raise MetricSpecError(msg)
    value_int = int(k)
    if value_int <= 0:
        msg = f"metric {where!r}: the cutoff must be positive, found {k!r}."
        raise MetricSpecError(msg)
    return value_int


def _coerce(info: MeasureInfo, key: str, raw: Any, where: str) -> ParamValue:
    default = info.params[key]
    choices = info.choices.get(key)
    try:
        if key == "gains":
            return _coerce_gains(raw)
        if isinstance(default, tuple):
            return _coerce_list(raw)
        if isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            if isinstance(raw, str) and raw.lower() in ("true", "false"):
                return raw.lower() == "true"
            raise ValueError  # noqa: TRY301
        if isinstance(default, int):
            if isinstance(raw, bool):
                raise TypeError  # noqa: TRY301
            number = float(raw) if isinstance(raw, str) else raw
            if number != int(number):
                raise ValueError  # noqa: TRY301
            return int(number)
        if isinstance(default, float):
            if isinstance(raw, bool):
                raise TypeError  # noqa: TRY301
            value = float(raw)
            if not math.isfinite(value):
                raise ValueError  # noqa: TRY301
            return value
        text = str(raw)
        if choices is not None:
            lowered = {c.lower(): c for c in choices}
            if text.lower() not in lowered:
                raise ValueError  # noqa: TRY301
            return lowered[text.lower()]
        return text  # noqa: TRY300
    except (ValueError, TypeError, OverflowError):
        if choices is not None:
            expected = "one of " + ", ".join(repr(c) for c in choices)
        elif key == "gains":
            expected = "a gain map such as {1:1,2:3}"
        else:
            expected = f"a value like {format_value(default)!r}"
        msg = f"metric {where!r}: parameter {key}={format_value(raw)!r} is not {expected}."
        raise MetricSpecError(msg) from None


def _coerce_gains(raw: Any) -> tuple[tuple[int, float], ...]:
    if raw is None:
        return ()
    items = raw.items() if isinstance(raw, dict) else raw
    pairs: dict[int, float] = {}
    for level, gain in items:
        if isinstance(level, float) and level != int(level):
            raise ValueError
        value = float(gain)
        if not math.isfinite(value):
            raise ValueError
        pairs[int(level)] = value
    return tuple(sorted(pairs.items()))


def _coerce_list(raw: Any) -> tuple[float, ...]:
    values = tuple(float(v) for v in raw)
    if not all(math.isfinite(v) for v in values):
        raise ValueError
    return values


def _split_params(text: str, spec: str) -> list[tuple[str, Any]]:
    """Split ``a=1,b={1:2,3:4},c=[0.1,0.2]`` at top-level commas."""
    out: list[tuple[str, Any]] = []
    for part in _split_top(text, ",", spec):
        if not part.strip():
            continue
        if "=" not in part:
            msg = f"metric {spec!r}: parameter {part.strip()!r} must be written name=value."
            raise MetricSpecError(msg)
        key, _, raw = part.partition("=")
        out.append((key.strip(), _parse_value(raw.strip(), spec)))
    return out


def _split_top(text: str, sep: str, spec: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth < 0:
                msg = f"metric {spec!r}: unbalanced brackets."
                raise MetricSpecError(msg)
        if char == sep and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if depth != 0:
        msg = f"metric {spec!r}: unbalanced brackets."
        raise MetricSpecError(msg)
    parts.append(current)
    return parts


def _parse_value(raw: str, spec: str) -> Any:
    if raw.startswith("{") and raw.endswith("}"):
        pairs = []
        for item in _split_top(raw[1:-1], ",", spec):
            if not item.strip():
                continue
            level, sep, gain = item.partition(":")
            if not sep:
                msg = (
                    f"metric {spec!r}: gain map entries are level:gain, found {item!r}."
                )
                raise MetricSpecError(msg)
            pairs.append(
                (_parse_number(level.strip(), spec), _parse_number(gain.strip(), spec))
            )
        return pairs
    if raw.startswith("[") and raw.endswith("]"):
        return [
            _parse_number(v.strip(), spec) for v in raw[1:-1].split(",") if v.strip()
        ]
    if _NUMBER.fullmatch(raw):
        return _parse_number(raw, spec)
    return raw


def _parse_number(raw: str, spec: str) -> int | float:
    if not _NUMBER.fullmatch(raw):
        msg = f"metric {spec!r}: expected a number, found {raw!r}."
        raise MetricSpecError(msg)
    value = float(raw)
    if re.fullmatch(r"[+-]?\d+", raw):
        return int(raw)
    return value


def _parse_trec_suffix(text: str) -> Metric | None:
    """trec_eval spellings with a parameter suffix: ``P_10``, ``ndcg_cut.10``."""
    if "(" in text or "@" in text or lookup(text) is not None:
        return None
    for cut in reversed([i for i, char in enumerate(text) if char in "._"]):
        alias = lookup(text[:cut])
        if alias is None or alias.suffix is None or not text[cut + 1 :]:
            continue
        params = dict(alias.preset)
        suffix = text[cut + 1 :]
        try:
            extra, k = alias.suffix(suffix)
        except MetricSpecError as exc:
            msg = f"metric {text!r}: {exc}"
            raise MetricSpecError(msg) from None
        except (ValueError, TypeError):
            msg = (
                f"metric {text!r}: cannot read {suffix!r} as the parameter of "
                f"trec_eval's {text[:cut]!r}. See ireval_df.list_metrics()."
            )
            raise MetricSpecError(msg) from None
        params.update(extra)
        return build_metric(REGISTRY[alias.metric].name, params, k, spec=text)
    return None


def _unknown(spec: str) -> NoReturn:
    name = re.split(r"[(@]", spec.strip(), maxsplit=1)[0]
    if lookup(name) is not None:
        msg = (
            f"malformed metric {spec!r}: expected Name(param=value,...)@k, "
            "e.g. 'P(rel=2)@5' or 'nDCG@10'."
        )
        raise MetricSpecError(msg)
    spellings = REGISTRY.spellings()
    close = difflib.get_close_matches(name.lower(), sorted(spellings), n=3, cutoff=0.5)
    canonical = []
    for low in close:
        target = spellings[low]
        if target not in canonical:
            canonical.append(target)
    rest = spec.strip()[len(name) :]
    hint = ""
    if canonical:
        hint = " Did you mean " + " or ".join(repr(c + rest) for c in canonical) + "?"
    msg = f"unknown metric {spec!r}.{hint} See ireval_df.list_metrics()."
    raise MetricSpecError(msg)


def parse_metrics(
    specs: str | Metric | Iterable[str | Metric], *, family: str | None = None
) -> list[Metric]:
    """Parse one or many metric names, keeping order and dropping repeats.

    ``family`` (``"offline"``, ``"similarity"``) refuses a measure of any
    other family, naming the function that computes it.

    Examples
    --------
    >>> [str(m) for m in parse_metrics(["map", "AP", "P_10"])]
    ['AP', 'P@10']
    >>> parse_metrics(["AP", "RBO"], family="offline")
    Traceback (most recent call last):
    ...
    ireval_df.errors.MetricSpecError: 'RBO' is a similarity measure, which ireval_df.evaluate does not compute: use ireval_df.similarity.
    """
    if isinstance(specs, str | Metric):
        specs = [specs]
    out: list[Metric] = []
    for spec in specs:
        metric = parse_metric(spec)
        if family is not None and metric.info.family != family:
            article = "an" if metric.info.family[0] in "aeiou" else "a"
            msg = (
                f"{str(metric)!r} is {article} {metric.info.family} measure, which "
                f"{REGISTRY.entry_point(family)} does not compute: use "
                f"{REGISTRY.entry_point(metric.info.family)}."
            )
            raise MetricSpecError(msg)
        if metric not in out:
            out.append(metric)
    if not out:
        msg = "no metrics given: pass at least one, e.g. ['nDCG@10', 'AP']."
        raise MetricSpecError(msg)
    return out
