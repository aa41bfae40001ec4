"""trec_eval's measure table, nicknames and ``-m name.params`` syntax.

The table lists every measure in trec_eval 10.0's print order
(``trec_eval/measures.c``) with its parameter kind, defaults and summary
rule. :func:`expand` turns the selected measures and their parameters into
output lines, each backed by one registry :class:`~ireval_df.measures.Metric`
(no metric is implemented here) or by a special column (``runid``,
``num_q``, ``relstring``).

Parameter syntax (``tests/conformance/trec_eval/SPEC.md`` section 3.1), everything after the first ``.``:

* integer cutoff lists (``P.5,7,3``): ``atol`` each (``23.4`` is 23), sorted
  ascending, a value <= 0 or a duplicate is an error;
* float cutoff lists (``iprec_at_recall..10,.5``): ``atof``, sorted, no
  duplicates; printed ``%3.2f``;
* float parameter lists (``utility.2,-1,0,0``, ``11pt_avg..25,.5,.75``,
  ``set_F.0.5``, ``relstring.20``): kept in order;
* pairs (``ndcg.1=3,2=9,4=4.5``, ``rbp.p=0.8``): ``name=value`` items; an
  integer name is a gain for that relevance level, ``p`` is rbp's
  persistence, anything else is ignored.

Parameterised measures are printed ``name_<params as typed>`` (lists of
floats and pairs) or one line per cutoff (``P_5``, ``iprec_at_recall_0.10``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ireval_df.errors import MetricSpecError
from ireval_df.measures.spec import build_metric

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ireval_df.measures import Metric

__all__ = [
    "MEASURES",
    "NICKNAMES",
    "Context",
    "Measure",
    "Output",
    "ParamError",
    "Selection",
    "expand",
    "parse_long",
]

Kind = Literal["none", "cut_long", "cut_double", "doubles", "pairs"]
Summary = Literal["mean", "sum", "gm", "num_q", "runid", "none"]
Source = Literal["qrels", "jg", "prefs", "any"]

_CUTS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)
_RECALL_LEVELS = tuple(i / 10 for i in range(11))
_MULTS = tuple(i / 10 for i in range(2, 21, 2))


@dataclass(frozen=True)
class Measure:
    """One row of trec_eval's measure table."""

    name: str
    kind: Kind = "none"
    default: tuple[float, ...] = ()
    summary: Summary = "mean"
    per_topic: bool = True
    integer: bool = False
    source: Source = "qrels"


def _m(
    name: str, kind: Kind = "none", default: tuple[float, ...] = (), **kw: Any
) -> Measure:
    return Measure(name, kind, default, **kw)


_PREFS = (
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
)

#: trec_eval 10.0's measure table, in print order.
MEASURES: tuple[Measure, ...] = (
    _m("runid", summary="runid", per_topic=False, source="any"),
    _m("num_q", summary="num_q", per_topic=False, source="any"),
    _m("num_ret", summary="sum", integer=True),
    _m("num_rel", summary="sum", integer=True),
    _m("num_rel_ret", summary="sum", integer=True),
    _m("map"),
    _m("gm_map", summary="gm", per_topic=False),
    _m("Rprec"),
    _m("bpref"),
    _m("recip_rank"),
    _m("iprec_at_recall", "cut_double", _RECALL_LEVELS),
    _m("P", "cut_long", _CUTS),
    _m("relstring", "doubles", (10.0,), summary="none"),
    _m("recall", "cut_long", _CUTS),
    _m("infAP"),
    _m("gm_bpref", summary="gm", per_topic=False),
    _m("Rprec_mult", "cut_double", _MULTS),
    _m("utility", "doubles", (1.0, -1.0, 0.0, 0.0)),
    _m("11pt_avg", "doubles", _RECALL_LEVELS),
    _m("binG"),
    _m("G", "pairs"),
    _m("dcg", "pairs"),
    _m("ideal_dcg", "pairs"),
    _m("ndcg", "pairs"),
    _m("ndcg_rel", "pairs"),
    _m("Rndcg", "pairs"),
    _m("ndcg_cut", "cut_long", _CUTS),
    _m("map_cut", "cut_long", _CUTS),
    _m("relative_P", "cut_long", _CUTS),
    _m("success", "cut_long", (1.0, 5.0, 10.0)),
    _m("set_P"),
    _m("set_relative_P"),
    _m("set_recall"),
    _m("set_map"),
    _m("set_F", "doubles", (1.0,)),
    _m("num_nonrel_judged_ret", summary="sum", integer=True),
    *(
        _m(name, summary="sum", integer=True, source="prefs")
        if name.startswith("prefs_num")
        else _m(name, source="prefs")
        for name in _PREFS
    ),
    _m("map_avgjg", source="jg"),
    _m("P_avgjg", "cut_long", _CUTS, source="jg"),
    _m("Rprec_mult_avgjg", "cut_double", _MULTS, source="jg"),
    _m("yaap"),
    _m("rbp", "pairs"),
    _m("rbp_resid"),
    _m("unj", "cut_long", (5.0, 10.0, 20.0)),
)
BY_NAME = {m.name: m for m in MEASURES}

_OFFICIAL = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
    "iprec_at_recall P"
).split()
_ALL_TREC = (
    _OFFICIAL
    + (
        "relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg "
        "relative_P Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P "
        "set_recall set_relative_P set_map set_F num_nonrel_judged_ret"
    ).split()
)

#: Nicknames for sets of measures (trec_eval 10.0).
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": tuple(_OFFICIAL),
    "set": tuple(
        "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall "
        "set_relative_P set_map set_F".split()
    ),
    "all_trec": tuple(_ALL_TREC),
    "all_prefs": ("runid", "num_q", *_PREFS),
    "prefs": ("runid", "num_q", *_PREFS[:6]),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}
#: Measures trec_eval 9.x did not have (left out of ``all_trec`` with ``--compat 9``).
NEW_IN_10 = ("rbp", "rbp_resid", "unj")


class ParamError(Exception):
    """Bad measure parameters: trec_eval's "Cannot initialize measure" (exit 2)."""

    def __init__(self, measure: str, detail: str) -> None:
        super().__init__(detail)
        self.measure = measure
        self.detail = detail


@dataclass
class Selection:
    """The measures marked with ``-m`` and the first parameter string of each.

    ``explicit`` holds measures named directly, ``nicknamed`` those marked
    through a nickname (``all_trec`` lacks 10.0's new measures under
    ``--compat 9``, whatever the order of the options).
    """

    explicit: set[str]
    nicknamed: set[str]
    params: dict[str, str]

    @classmethod
    def empty(cls) -> Selection:
        """No measure marked yet."""
        return cls(set(), set(), {})

    def marked(self, compat: str = "10") -> set[str]:
        """Return the measures to compute.

        Examples
        --------
        >>> s = Selection.empty()
        >>> _ = s.mark("all_trec"), s.mark("unj.3")
        >>> {"rbp", "unj"} & s.marked("9")
        {'unj'}
        """
        nick = self.nicknamed
        if compat == "9":
            nick = nick - set(NEW_IN_10)
        return self.explicit | nick

    def mark(self, arg: str) -> str | None:
        r"""Mark ``-m arg``; return an error message (trec_eval exits 1) or None.

        Examples
        --------
        >>> s = Selection.empty()
        >>> s.mark("P.5,10"), s.mark("P.20"), sorted(s.marked()), s.params
        (None, None, ['P'], {'P': '5,10'})
        >>> s.mark("foo")
        "trec_eval: illegal measure 'foo'\n"
        """
        name, dot, params = arg.partition(".")
        if dot:
            if not params:
                return (
                    f"trec_eval: improper measure in parameter '{name}'\n"
                    f"trec_eval: illegal measure '{name}'\n"
                )
            self.params.setdefault(name, params)
        if name in NICKNAMES:
            self.nicknamed.update(NICKNAMES[name])
            return None
        if name in BY_NAME:
            self.explicit.add(name)
            return None
        return f"trec_eval: illegal measure '{arg}'\n"


@dataclass(frozen=True)
class Context:
    """The command-line settings that shape the metric specs."""

    rel: int = 1
    judged_only: bool = False
    compat: str = "10"
    collection: int = 0


@dataclass(frozen=True)
class Output:
    """One printed measure: its label, table row and the column holding it.

    ``column`` is ``str(metric)`` for registry metrics (for the ``*_avgjg``
    measures: the metric computed per judgment group, then averaged), or a
    special key (``runid``, ``num_q``, ``relstring:<label>``).
    ``param`` carries the measure's numeric parameter where a special column
    needs it (relstring's length).
    """

    label: str
    measure: Measure
    column: str
    metric: Metric | None = None
    param: float = 0.0


# --- parameter parsing (trec_eval/meas_init.c semantics) ---------------------

_LONG_RE = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")
_DOUBLE_RE = re.compile(
    r"[ \t\n\v\f\r]*([+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
    r"(?:[pP][+-]?[0-9]+)?|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|(?i:infinity|inf|nan)))"
)


def parse_long(text: str) -> int:
    """C ``atol``: the leading integer of ``text``, 0 when there is none.

    Examples
    --------
    >>> parse_long("23.4"), parse_long("x"), parse_long(" -7z")
    (23, 0, -7)
    """
    match = _LONG_RE.match(text)
    if match is None:
        return 0
    value = int(match.group(1))
    return max(-(2**63), min(2**63 - 1, value))


def parse_double(text: str) -> float:
    """C ``atof``: the longest leading number of ``text``, 0.0 when there is none.

    Examples
    --------
    >>> parse_double(".25"), parse_double("1e-2x"), parse_double("0x10"), parse_double("no")
    (0.25, 0.01, 16.0, 0.0)
    """
    match = _DOUBLE_RE.match(text)
    if match is None:
        return 0.0
    number = match.group(1)
    body = number.lstrip("+-")
    if body[:2] in ("0x", "0X"):
        return float.fromhex(number)
    return float(number)


def _long_cutoffs(measure: str, text: str) -> list[int]:
    values = sorted(parse_long(part) for part in text.split(","))
    if values[0] <= 0:
        raise ParamError(measure, "trec_eval: Negative cutoff detected\n")
    if any(a == b for a, b in zip(values, values[1:], strict=False)):
        raise ParamError(measure, "trec_eval: duplicate cutoffs detected\n")
    return values


def _double_cutoffs(measure: str, text: str) -> list[float]:
    values = sorted(parse_double(part) for part in text.split(","))
    if any(a == b for a, b in zip(values, values[1:], strict=False)):
        raise ParamError(measure, "trec_eval: duplicate cutoffs detected\n")
    return values


def _doubles(text: str) -> list[float]:
    return [parse_double(part) for part in text.split(",")]


def _pairs(measure: str, text: str) -> list[tuple[str, float]]:
    pieces = text.split(",")
    if any(piece.count("=") != 1 for piece in pieces):
        raise ParamError(measure, f"trec_eval: malformed pair parameters in '{text}'\n")
    pairs = []
    for piece in pieces:
        name, _, value = piece.partition("=")
        pairs.append((name, parse_double(value)))
    return pairs


_INT_NAME = re.compile(r"[+-]?[0-9]+")


def _gains(pairs: Sequence[tuple[str, float]]) -> list[tuple[int, float]]:
    """Keep the relevance-level gains of ``name=value`` pairs (integer names)."""
    return [(parse_long(n), v) for n, v in pairs if _INT_NAME.fullmatch(n)]


# --- output lines ---------------------------------------------------------------

#: Binary measures: registry name, and whether ``rel`` (-l) applies.
_SINGLE: dict[str, tuple[str, bool]] = {
    "num_ret": ("NumRet", False),
    "num_rel": ("NumRel", True),
    "num_rel_ret": ("NumRelRet", True),
    "map": ("AP", True),
    "gm_map": ("gmAP", True),
    "Rprec": ("Rprec", True),
    "bpref": ("Bpref", True),
    "recip_rank": ("RR", True),
    "infAP": ("infAP", True),
    "gm_bpref": ("gmBpref", True),
    "binG": ("binG", True),
    "set_P": ("SetP", True),
    "set_relative_P": ("SetRelP", True),
    "set_recall": ("SetR", True),
    "set_map": ("SetAP", True),
    "num_nonrel_judged_ret": ("NumNonRelJudgedRet", True),
    "yaap": ("yaap", True),
}
_CUT_LONG: dict[str, tuple[str, bool]] = {
    "P": ("P", True),
    "recall": ("R", True),
    "ndcg_cut": ("nDCG", False),
    "map_cut": ("AP", True),
    "relative_P": ("RelP", True),
    "success": ("Success", True),
    "unj": ("Unjudged", False),
}
_GAIN: dict[str, tuple[str, bool]] = {
    "G": ("G", False),
    "dcg": ("DCG", False),
    "ideal_dcg": ("IDCG", False),
    "ndcg": ("nDCG", False),
    "ndcg_rel": ("nDCGRel", False),
    "Rndcg": ("Rndcg", True),
}


#: Preference measures: registry name (they read ``-R prefs``/``qrels_prefs``).
_PREFS_METRICS: dict[str, str] = {
    "prefs_num_prefs_poss": "NumPrefsPoss",
    "prefs_num_prefs_ful": "NumPrefsFul",
    "prefs_num_prefs_ful_ret": "NumPrefsFulRet",
    "prefs_simp": "PrefsSimp",
    "prefs_pair": "PrefsPair",
    "prefs_avgjg": "PrefsAvgJG",
    "prefs_avgjg_Rnonrel": "PrefsAvgJGRNonRel",
    "prefs_simp_ret": "PrefsSimpRet",
    "prefs_pair_ret": "PrefsPairRet",
    "prefs_avgjg_ret": "PrefsAvgJGRet",
    "prefs_avgjg_Rnonrel_ret": "PrefsAvgJGRNonRelRet",
    "prefs_simp_imp": "PrefsSimpImp",
    "prefs_pair_imp": "PrefsPairImp",
    "prefs_avgjg_imp": "PrefsAvgJGImp",
}


def _fmt_double(value: float) -> str:
    return f"{value:3.2f}"  # C's %3.2f, byte for byte


def _spec(
    ctx: Context, trec_name: str, name: str, params: dict[str, Any], k: Any = None
) -> Metric:
    if ctx.judged_only:
        params = {**params, "judged_only": True}
    try:
        return build_metric(name, params, k)
    except MetricSpecError as exc:
        raise ParamError(trec_name, f"trec_eval: {exc}\n") from None


def expand(selection: Selection, ctx: Context) -> list[Output]:
    """Turn the marked measures into output lines, in trec_eval's print order.

    Raises :class:`ParamError` for bad parameters.

    Examples
    --------
    >>> s = Selection.empty()
    >>> _ = s.mark("P.10,5"), s.mark("ndcg.1=3"), s.mark("map")
    >>> [(o.label, o.column) for o in expand(s, Context(rel=2))]
    [('map', 'AP(rel=2)'), ('P_5', 'P(rel=2)@5'), ('P_10', 'P(rel=2)@10'), ('ndcg_1=3', 'nDCG(gains={1:3})')]
    """
    outputs: list[Output] = []
    marked = selection.marked(ctx.compat)
    for measure in MEASURES:
        if measure.name in marked:
            outputs += _outputs(measure, selection.params.get(measure.name), ctx)
    return outputs


def _outputs(measure: Measure, raw: str | None, ctx: Context) -> list[Output]:
    name = measure.name
    rel: dict[str, Any] = {"rel": ctx.rel}

    def out(label: str, metric: Metric) -> Output:
        return Output(label, measure, str(metric), metric)

    if name in ("runid", "num_q"):
        return [Output(name, measure, name)]
    if measure.source == "prefs":
        return [out(name, _spec(ctx, name, _PREFS_METRICS[name], {}))]
    if name in _SINGLE:
        registry, binary = _SINGLE[name]
        return [out(name, _spec(ctx, name, registry, rel if binary else {}))]
    if name == "rbp_resid":
        return [out(name, _spec(ctx, name, "RBPResidual", {"p": 0.9}))]
    if measure.kind == "cut_long":
        cutoffs = _long_cutoffs(name, raw) if raw else [int(c) for c in measure.default]
        registry, binary = _CUT_LONG[name.removesuffix("_avgjg")]
        params = rel if binary else {}
        return [
            out(f"{name}_{k}", _spec(ctx, name, registry, params, k)) for k in cutoffs
        ]
    if measure.kind == "cut_double":
        levels = _double_cutoffs(name, raw) if raw else list(measure.default)
        if name == "iprec_at_recall":
            params = {**rel, "compat": ctx.compat}
            return [
                out(f"{name}_{_fmt_double(p)}", _spec(ctx, name, "IPrec", params, p))
                for p in levels
            ]
        return [
            out(
                f"{name}_{_fmt_double(m)}",
                _spec(ctx, name, "Rprec", {**rel, "mult": m}),
            )
            for m in levels
        ]
    if name == "map_avgjg":
        return [out(name, _spec(ctx, name, "AP", rel))]
    label = f"{name}_{raw}" if raw else name
    if measure.kind == "pairs":
        pairs = _pairs(name, raw) if raw else []
        gains = _gains(pairs)
        if name == "rbp":
            p = 0.9
            for key, value in pairs:
                if key == "p":
                    p = value
            return [out(label, _spec(ctx, name, "RBP", {"p": p, "gains": gains}))]
        registry, binary = _GAIN[name]
        params = {"gains": gains, **(rel if binary else {})}
        return [out(label, _spec(ctx, name, registry, params))]
    values = _doubles(raw) if raw else list(measure.default)
    if name == "relstring":
        return [Output(label, measure, f"relstring:{label}", None, values[0])]
    if name == "utility":
        if len(values) < 4:
            raise ParamError(name, "trec_eval: utility needs four coefficients\n")
        keys = ("rel_ret", "nonrel_ret", "rel_nonret", "nonrel_nonret")
        params = {
            **rel,
            **dict(zip(keys, values, strict=False)),
            "collection": ctx.collection,
        }
        return [out(label, _spec(ctx, name, "Utility", params))]
    if name == "11pt_avg":
        params = {**rel, "points": values, "compat": ctx.compat}
        return [out(label, _spec(ctx, name, "11pt", params))]
    # set_F: trec_eval's parameter is beta squared
    if not values[0] > 0 or not math.isfinite(values[0]):
        raise ParamError(name, "trec_eval: set_F needs a positive parameter\n")
    return [out(label, _spec(ctx, name, "SetF", {**rel, "beta": math.sqrt(values[0])}))]
