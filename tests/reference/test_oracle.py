"""``evaluate`` against the naive oracle: every metric x its parameter grid.

The main net for every metric: hypothesis draws small qrels/run pairs (ties,
byte-order-sensitive ids, graded and negative judgments, unjudged retrieved
documents, queries on one side only, several runs) and every value of every
spec in ``GRID`` must equal ``oracle.evaluate`` to ``rtol=1e-9``.

``GRID`` is built from the registry (cutoffs, ``rel``, ``judged_only``) plus a
per-metric list of parameter variants; ``tests/unit/measures/test_registry.py`` checks that
it reaches every registered metric.
"""

from __future__ import annotations

import math
import warnings
from itertools import product
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import oracle
from strategies import NO_SHRINK, Case, batches

import ireval_df as ie
from ireval_df.errors import IrevalWarning
from ireval_df.measures import REGISTRY, Metric, parse_metric
from ireval_df.measures.spec import build_metric
from ireval_df.offline.plan import measures_reading

PREFERENCE_MEASURES = measures_reading("preferences")

RTOL = 1e-9
ATOL = 1e-12

#: Cutoffs for rank-cutoff metrics: 1, shorter than, about and longer than
#: the generated rankings (at most ~12 documents).
CUTOFFS = (1, 3, 5, 10, 100)
#: Recall levels: the ends, tenths where lround, ceil and 9.x's +0.9 differ
#: for the R values generated (R = 3, p = 0.7: 2 / 3 / 3; R = 7, p = 0.2:
#: 1 / 2 / 2; R = 5, p = 0.5: 3 (half away from zero) where round() gives 2).
LEVELS = (0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.75, 1.0)
RELS = (1, 2)

EXP = {"dcg": "exp-log2"}
#: Metric-specific parameter variants (each combined with the generic axes).
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "AP": [{}, {"norm": "min_R_k"}, {"norm": "relret"}],
    "Rprec": [{}, {"mult": 0.2}, {"mult": 0.5}, {"mult": 1.5}, {"mult": 2.0}],
    "F": [{}, {"beta": 0.5}, {"beta": 2.0}],
    "SetF": [{}, {"beta": 0.5}, {"beta": 2.0}],
    "Utility": [
        {},
        {
            "rel_ret": 2.0,
            "nonrel_ret": -1.0,
            "rel_nonret": -0.5,
            "nonrel_nonret": 0.25,
            "collection": 100,
        },
    ],
    "ERR": [{}, {"max_rel": 1}, {"max_rel": 2}, {"max_rel": 4}],
    "alpha_nDCG": [{}, {"alpha": 0.2}, {"alpha": 1.0}],
    "alpha_DCG": [{}, {"alpha": 0.2}],
    "ERR_IA": [{}, {"alpha": 0.8}],
    "nERR_IA": [{}, {"alpha": 0.2}],
    "NRBP": [{}, {"alpha": 0.2, "beta": 0.9}, {"beta": 0.1}],
    "nNRBP": [{}, {"alpha": 0.2, "beta": 0.9}, {"beta": 1.0}, {"beta": 0.0}],
    "RBP": [
        {},
        {"p": 0.5},
        {"p": 0.9},
        {"p": 0.95},
        {"gains": {1: 0.5, 2: 1.0, 3: 1.0, 4: 1.0}},  # stays in [0, 1]: no rescale
        {"gains": {2: 5.0}},
        {"p": 0.9, "gains": {0: -1.0}},
    ],  # rescaled
    "RBPResidual": [{}, {"p": 0.5}, {"p": 0.9}],
    "INST": [{}, {"T": 0.3}, {"T": 3.0, "min_rel": 1, "max_rel": 2}],
    "INSQ": [{}, {"T": 2.0, "max_rel": 3}],
    "BPM": [{}, {"T": 0.5}, {"T": 2.0, "max_rel": 2}],
    "SDCG": [{}, {"min_rel": 1, "max_rel": 3}],
    "NERR8": [{}, {"max_rel": 1}],
    "NERR9": [{}, {"min_rel": 1}],
    "NERR10": [{}, {"p": 0.5, "max_rel": 2}],
    "NERR11": [{}, {"T": 2.0, "max_rel": 4}],
    "Compat": [{}, {"p": 0.5}, {"normalize": False}, {"p": 0.8, "normalize": False}],
    "IPrec": [{}, {"compat": "9"}],
    "11pt": [
        {},
        {"compat": "9"},
        {"points": [0.25, 0.5, 0.75]},
        {"points": [1.0, 0.5, 0.0], "compat": "9"},
    ],
}
#: Gain variants of the gain-based metrics: linear, exponential, and maps
#: (one raising a level, one zeroing a level, one giving grade 0 a gain).
GAIN_VARIANTS: list[dict[str, Any]] = [
    {},
    EXP,
    {"gains": {2: 5.0}},
    {"gains": {1: 0.0, 3: 10.0}},
    {"dcg": "exp-log2", "gains": {0: 1.0}},
]
for _name in ("CG", "DCG", "IDCG", "nDCG", "nDCGRel", "Rndcg", "G"):
    VARIANTS[_name] = GAIN_VARIANTS


def _grid() -> list[Metric]:
    """Every registered metric x cutoffs x rel x judged_only x its variants."""
    grid: list[Metric] = []
    for name, info in REGISTRY.items():
        # preference measures read preference judgments, not qrels: their
        # reference is trec_eval itself (test_prefs_trec_eval.py)
        if info.family != "offline" or name in PREFERENCE_MEASURES:
            continue
        if info.cutoff_type is float:
            ks: tuple[Any, ...] = LEVELS
        elif info.cutoff == "required":
            ks = CUTOFFS
        elif info.cutoff == "optional":
            ks = (None, *CUTOFFS)
        else:
            ks = (None,)
        rels = RELS if "rel" in info.params else (None,)
        for variant, k, rel, judged_only in product(
            VARIANTS.get(name, [{}]), ks, rels, (False, True)
        ):
            params = dict(variant)
            if rel is not None:
                params["rel"] = rel
            params["judged_only"] = judged_only
            metric = build_metric(name, params, k)
            if metric not in grid:
                grid.append(metric)
    return grid


GRID: list[Metric] = _grid()
GRID_NAMES: frozenset[str] = frozenset(m.name for m in GRID)


def close(got: float | None, want: float) -> bool:
    """Equal to ``RTOL`` (NaN equals NaN)."""
    if got is None:
        return False
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    return math.isclose(got, want, rel_tol=RTOL, abs_tol=ATOL)


def run_evaluate(case: Case, metrics: list[Metric], **options: Any) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        # qrels judged per intent, for the diversity measures: every other
        # measure sees each document's highest grade, its grade in case.qrels
        qrels = case.intent_qrels_frame()
        return ie.evaluate(case.run_frame(), qrels, metrics, **options)


def compare(
    case: Case,
    metrics: list[Metric],
    *,
    depth: int | None = None,
    missing: str = "zero",
) -> None:
    result = run_evaluate(case, metrics, depth=depth, missing=missing)
    got = {(r, q, m): v for r, q, m, v in result.iter_rows()}
    want = oracle.evaluate(
        case.qrels,
        case.runs,
        metrics,
        depth=depth,
        missing=missing,
        intents=case.intents(),
    )
    assert set(got) == set(want), "result rows differ from the oracle's"
    mismatches: list[tuple[tuple[str, str, str], float | None, float]] = []
    for key, expected in want.items():
        if not close(got.get(key), expected):
            mismatches.append((key, got.get(key), expected))
    if mismatches:
        first = mismatches[0]
        repro = sub_case(case, first[0][0], first[0][1])
        lines = [f"{k}: got {g!r}, oracle {w!r}" for k, g, w in mismatches[:15]]
        pytest.fail(
            f"{len(mismatches)} mismatches, e.g.\n"
            + "\n".join(lines)
            + f"\nrepro (depth={depth}, missing={missing!r}): {repro!r}"
        )


def sub_case(case: Case, run_id: str, query: str) -> Case:
    """The one (run, query) of ``case`` a mismatch is about (qrels kept whole
    for ERR's global top grade)."""
    docs = case.runs[run_id].get(query)
    return Case(qrels=case.qrels, runs={run_id: {query: docs} if docs else {}})


# --- the main net ---------------------------------------------------------------


# One evaluate call costs ~0.6 s for the whole grid whatever the data size, so
# each example merges several independent cases (query ids prefixed), and
# shrinking (minutes at that cost) is off: a failure prints the one (run,
# query) it is about instead.


@settings(max_examples=10, phases=NO_SHRINK)
@given(batches(4, max_queries=5, max_runs=2))
def test_every_metric_matches_the_oracle(case: Case) -> None:
    compare(case, GRID)


@settings(max_examples=3, phases=NO_SHRINK)
@given(batches(3, max_queries=4, max_runs=2), st.sampled_from((1, 2, 3, 5)))
def test_depth_matches_the_oracle(case: Case, depth: int) -> None:
    # depth (trec_eval -M) cuts after sorting, before judged_only
    compare(case, GRID, depth=depth)


@settings(max_examples=3, phases=NO_SHRINK)
@given(batches(3, max_queries=5, max_runs=2))
def test_missing_skip_matches_the_oracle(case: Case) -> None:
    compare(case, GRID, missing="skip")


def test_grid_is_large_and_canonical() -> None:
    assert len(GRID) > 500
    assert all(parse_metric(str(m)) == m for m in GRID)


# --- rankings that judged_only empties (trec_eval -J leaves n = 0) -----------------
# The run answered the query, so under either ``missing`` policy the query is
# scored on an empty ranking: AP = 0, NumRet = 0, and IPrec at c = 0 is NaN
# (trec_eval -J: 0/0, SPEC.md 8.3; pytrec_eval gives NaN too).

EMPTIED = {
    # q2 retrieves only a document absent from the qrels; q1 is fine
    "one query": Case(
        qrels={"q1": {"a": 1}, "q2": {"b": 1}},
        runs={"r": {"q1": {"a": 1.0}, "q2": {"x": 1.0}}},
    ),
    # the run's only ranking retrieves only a negatively graded document
    "whole run": Case(qrels={"q2": {"b": 1, "y": -1}}, runs={"r": {"q2": {"y": 1.0}}}),
}
EMPTIED_VALUES = {
    "AP(judged_only=true)": 0.0,
    "NumRet(judged_only=true)": 0.0,
    "IPrec(judged_only=true)@0": math.nan,
}


def emptied_rows(which: str, missing: str, with_other: bool) -> dict[str, float | None]:
    metrics = ["AP", *EMPTIED_VALUES] if with_other else list(EMPTIED_VALUES)
    result = run_evaluate(
        EMPTIED[which], [parse_metric(m) for m in metrics], missing=missing
    )
    rows = result.filter(pl.col("query_id") == "q2")
    return dict(zip(rows["metric"], rows["value"], strict=True))


def _run_rows(case: Case, metrics: list[str], missing: str) -> set[tuple[Any, ...]]:
    result = run_evaluate(case, [parse_metric(m) for m in metrics], missing=missing)
    return {
        (r, q, m, "nan" if v is not None and math.isnan(v) else v)
        for r, q, m, v in result.iter_rows()
    }


@pytest.mark.parametrize("which", list(EMPTIED))
@pytest.mark.parametrize("missing", ["zero", "skip"])
@pytest.mark.parametrize("with_other", [False, True])
def test_judged_only_emptied_ranking(
    which: str, missing: str, with_other: bool
) -> None:
    got = emptied_rows(which, missing, with_other)
    for metric, want in EMPTIED_VALUES.items():
        assert metric in got, f"no row for {metric}"
        assert close(got[metric], want), (metric, got[metric], want)


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_metric_order_never_changes_the_rows(missing: str) -> None:
    case = Case(qrels={"q1": {"a": 1}, "q2": {"b": 1}}, runs={"r": {"q1": {"x": 1.0}}})
    plain_first = _run_rows(case, ["AP", "AP(judged_only=true)"], missing)
    judged_first = _run_rows(case, ["AP(judged_only=true)", "AP"], missing)
    assert judged_first == plain_first
    assert ("r", "q1", "AP", 0.0) in judged_first
