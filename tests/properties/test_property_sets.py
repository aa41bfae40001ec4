"""Every metric's declared properties, as sets written out once (sklearn's test_common).

Each set below is a hand-written list of metric names, not read from the
registry: one test checks that every family of sets partitions the
registry (complete and disjoint), one that the registry declares what the
sets say, and the others that the metrics behave as their set says, on
generated inputs. A new metric fails the completeness test until it is put
in one set of each family, which is the decision its author must make.
"""

from __future__ import annotations

import math
import warnings
from itertools import combinations
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import NO_SHRINK, Case, cases

import ireval_df as ie
from ireval_df.errors import IrevalWarning
from ireval_df.measures import REGISTRY, parse_metric
from ireval_df.measures.spec import build_metric
from ireval_df.offline.plan import measures_reading

PREFERENCE_MEASURES = measures_reading("preferences")

# --- the sets ------------------------------------------------------------------------

#: How per-query values combine into a run's number (summarize, compare)
SUM_AGGREGATED = {"NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet"}
#: trec_eval's preference measures (scored with ie.evaluate_prefs, here on the
#: qrels read as preferences, as trec_eval -R qrels_prefs does)
PREFS_COUNTS = {"NumPrefsFul", "NumPrefsFulRet", "NumPrefsPoss"}
PREFS_SHARES = {
    "PrefsAvgJG", "PrefsAvgJGImp", "PrefsAvgJGRNonRel", "PrefsAvgJGRNonRelRet",
    "PrefsAvgJGRet", "PrefsPair", "PrefsPairImp", "PrefsPairRet", "PrefsSimp",
    "PrefsSimpImp", "PrefsSimpRet",
}  # fmt: skip
SUM_AGGREGATED |= PREFS_COUNTS
GMEAN_AGGREGATED = {"gmAP", "gmBpref"}
MEAN_AGGREGATED = {
    "11pt", "AP", "Best", "Bpref", "CG", "DCG", "ERR", "F", "G", "Hits", "IDCG",
    "IPrec", "Judged", "P", "R", "RBP", "RBPResidual", "RR", "RelP", "RelShare",
    "Rndcg", "Rprec", "SetAP", "SetF", "SetP", "SetR", "SetRelP", "Share",
    "Success", "Unjudged", "Utility", "binG", "infAP", "nDCG", "nDCGRel", "yaap",
    # diversity (ndeval)
    "AP_IA", "ERR_IA", "NRBP", "P_IA", "StRecall", "alpha_DCG", "alpha_nDCG",
    "nDCG_IA", "nERR_IA", "nNRBP",
    "BPM", "Compat", "INSQ", "INST", "NERR8", "NERR9", "NERR10", "NERR11", "SDCG",
}  # fmt: skip
MEAN_AGGREGATED |= PREFS_SHARES

#: Direction: lower is better only where a higher value means more unknown
#: (Share and RelShare describe a slice; their "higher" is nominal)
LOWER_IS_BETTER = {"RBPResidual", "Unjudged"}
HIGHER_IS_BETTER = (
    MEAN_AGGREGATED | SUM_AGGREGATED | GMEAN_AGGREGATED
) - LOWER_IS_BETTER

#: Range of a per-query value
IN_UNIT_INTERVAL = {
    "11pt", "AP", "Best", "Bpref", "ERR", "F", "IPrec", "Judged", "P", "R", "RBP",
    "RBPResidual", "RR", "RelP", "RelShare", "Rprec", "SetAP", "SetF", "SetP",
    "SetR", "SetRelP", "Share", "Success", "Unjudged", "binG", "gmAP", "gmBpref",
    "infAP", "nDCG", "nDCGRel",
    "AP_IA", "ERR_IA", "NRBP", "P_IA", "StRecall", "alpha_DCG", "alpha_nDCG",
    "nDCG_IA", "nERR_IA", "nNRBP",
    "BPM", "Compat", "INSQ", "INST", "NERR8", "NERR9", "NERR10", "NERR11", "SDCG",
}  # fmt: skip
IN_UNIT_INTERVAL |= PREFS_SHARES
NON_NEGATIVE = {
    "DCG", "G", "Hits", "IDCG", "NumNonRelJudgedRet", "NumQ", "NumRel", "NumRelRet",
    "NumRet", "Rndcg",
}  # fmt: skip
NON_NEGATIVE |= PREFS_COUNTS
#: CG: negative gain maps; Utility: costs; yaap: log ratios
UNBOUNDED = {"CG", "Utility", "yaap"}

#: Need the rank of every retrieved document, not only of the judged ones
FULL_SORT = {"G", "RBPResidual", "Rndcg", "Unjudged"}
JUDGED_ROWS = (MEAN_AGGREGATED | SUM_AGGREGATED | GMEAN_AGGREGATED) - FULL_SORT

#: 0 for a query without a relevant document, whatever the ranking; the others
#: count documents or judgments, or measure what is unknown
ZERO_WITHOUT_RELEVANT = {
    "11pt", "AP", "Best", "Bpref", "CG", "DCG", "ERR", "F", "G", "Hits", "IDCG",
    "IPrec", "P", "R", "RBP", "RR", "RelP", "RelShare", "Rndcg", "Rprec", "SetAP",
    "SetF", "SetP", "SetR", "SetRelP", "Success", "binG", "gmAP", "gmBpref",
    "infAP", "nDCG", "nDCGRel", "yaap",
    "AP_IA", "ERR_IA", "NRBP", "P_IA", "StRecall", "alpha_DCG", "alpha_nDCG",
    "nDCG_IA", "nERR_IA", "nNRBP",
    "BPM", "Compat", "INSQ", "INST", "NERR8", "NERR9", "NERR10", "NERR11", "SDCG",
}  # fmt: skip
#: with one grade for every judged document there is no preference
ZERO_WITHOUT_RELEVANT |= PREFS_COUNTS | PREFS_SHARES
DEPENDS_WITHOUT_RELEVANT = {
    "Judged", "NumNonRelJudgedRet", "NumQ", "NumRel", "NumRelRet", "NumRet",
    "RBPResidual", "Share", "Unjudged", "Utility",
}  # fmt: skip

FAMILIES: dict[str, list[set[str]]] = {
    "aggregation": [MEAN_AGGREGATED, SUM_AGGREGATED, GMEAN_AGGREGATED],
    "direction": [HIGHER_IS_BETTER, LOWER_IS_BETTER],
    "range": [IN_UNIT_INTERVAL, NON_NEGATIVE, UNBOUNDED],
    "ranks": [FULL_SORT, JUDGED_ROWS],
    "no relevant document": [ZERO_WITHOUT_RELEVANT, DEPENDS_WITHOUT_RELEVANT],
}


#: the offline family's metrics, which these sets describe
OFFLINE = {name for name, info in REGISTRY.items() if info.family == "offline"}


def spec_of(name: str, **params: Any) -> str:
    """The canonical spelling of ``name`` with a cutoff where one is needed."""
    info = REGISTRY[name]
    k: Any = None
    if info.cutoff == "required":
        k = 0.5 if info.cutoff_type is float else 10
    return str(build_metric(name, params, k))


def evaluate(case: Case, metrics: list[str]) -> pl.DataFrame:
    """Score a case: the preference measures on its qrels read as preferences.

    The others on its qrels judged per intent, for the diversity measures
    (the others see each document's highest grade over its intents: its
    grade in the case).
    """
    prefs = [m for m in metrics if parse_metric(m).name in PREFERENCE_MEASURES]
    others = [m for m in metrics if m not in prefs]
    frames = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        if others:
            frames.append(
                ie.evaluate(case.run_frame(), case.intent_qrels_frame(), others)
            )
        if prefs:
            frames.append(
                ie.evaluate_prefs(case.run_frame(), case.qrels_frame(), prefs)
            )
    return pl.concat(frames)


# --- the sets are complete, disjoint, and what the registry says ------------------------


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_family_of_sets_partitions_the_registry(family: str) -> None:
    sets = FAMILIES[family]
    union = set().union(*sets)
    assert union == OFFLINE, (
        f"{family}: put {sorted(OFFLINE - union)} in one of its sets; "
        f"{sorted(union - OFFLINE)} are not registered offline metrics"
    )
    for a, b in combinations(sets, 2):
        assert not a & b, f"{family}: {sorted(a & b)} are in two sets"


@pytest.mark.parametrize("name", sorted(OFFLINE))
def test_the_registry_declares_what_the_sets_say(name: str) -> None:
    info = REGISTRY[name]
    aggregate = {
        "mean": MEAN_AGGREGATED,
        "sum": SUM_AGGREGATED,
        "gmean": GMEAN_AGGREGATED,
    }
    assert name in aggregate[info.aggregate]
    assert (name in HIGHER_IS_BETTER) == info.higher_is_better
    bounds = {
        (0.0, 1.0): IN_UNIT_INTERVAL,
        (0.0, None): NON_NEGATIVE,
        (None, None): UNBOUNDED,
    }
    assert name in bounds[info.bounds]
    assert (name in FULL_SORT) == bool(info.options.get("full_sort", False))
    assert (name in ZERO_WITHOUT_RELEVANT) == (info.empty == 0.0)
    assert info.family == "offline"


# --- and each set behaves as it says ------------------------------------------------------


@settings(phases=NO_SHRINK, max_examples=15)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=8))
def test_summaries_combine_as_the_aggregation_sets_say(values: list[float]) -> None:
    for name in sorted(OFFLINE):
        spec = spec_of(name)
        frame = pl.DataFrame(
            {
                "run_id": "r",
                "query_id": [str(i) for i in range(len(values))],
                "metric": spec,
                "value": values,
            }
        )
        got = ie.summarize(frame, ci="t")["value"].item()
        if name in SUM_AGGREGATED:
            want = math.fsum(values)
        elif name in GMEAN_AGGREGATED:
            want = math.exp(sum(math.log(max(v, 1e-5)) for v in values) / len(values))
        else:
            want = math.fsum(values) / len(values)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12), name


def test_comparisons_follow_the_direction_sets() -> None:
    for name in sorted(OFFLINE):
        spec = spec_of(name)
        frame = pl.DataFrame(
            {
                "run_id": ["a"] * 3 + ["b"] * 3,
                "query_id": ["1", "2", "3"] * 2,
                "metric": spec,
                "value": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
            }
        )
        row = ie.compare(frame, baseline="a").row(0, named=True)
        expected = (3, 0) if name in HIGHER_IS_BETTER else (0, 3)
        assert (row["wins"], row["losses"]) == expected, name


@settings(phases=NO_SHRINK, max_examples=10)
@given(cases(max_queries=4, max_runs=2))
def test_values_stay_in_the_range_their_set_says(case: Case) -> None:
    specs = [spec_of(name) for name in sorted(OFFLINE)]
    for _, query, spec, value in evaluate(case, specs).iter_rows():
        name = parse_metric(spec).name
        if value is None or math.isnan(value):
            # trec_eval's NaN cases only: IPrec / 11pt with nothing retrieved
            # and c = 0, Rndcg without any term
            assert name in ("IPrec", "11pt", "Rndcg"), (query, spec)
        elif name in IN_UNIT_INTERVAL:
            assert -1e-12 <= value <= 1 + 1e-12, (query, spec, value)
        elif name in NON_NEGATIVE:
            assert value >= -1e-12, (query, spec, value)


@settings(phases=NO_SHRINK, max_examples=10)
@given(cases(max_queries=4, max_runs=2, ties=False))
def test_judged_row_metrics_equal_their_value_with_every_row_ranked(case: Case) -> None:
    # alone, a JUDGED_ROWS metric is computed from the judged rows with their
    # true ranks; beside a FULL_SORT metric every row is ranked: same values
    partial = [spec_of(name) for name in sorted(JUDGED_ROWS)]
    alone = evaluate(case, partial)
    beside = evaluate(case, [*partial, spec_of("Unjudged")]).filter(
        pl.col("metric").is_in(partial)
    )
    key = ["run_id", "query_id", "metric"]
    joined = alone.join(beside, on=key, suffix="_full", nulls_equal=True)
    assert joined.height == alone.height
    differ = joined.filter(
        ~((pl.col("value") - pl.col("value_full")).abs() <= 1e-12)
        & ~(pl.col("value").is_nan() & pl.col("value_full").is_nan())
    )
    assert differ.is_empty(), differ.head(5)


@settings(phases=NO_SHRINK, max_examples=15)
@given(cases(max_queries=3, max_runs=2), st.sampled_from([0, -1]))
def test_zero_without_a_relevant_document(case: Case, grade: int) -> None:
    # every judgment made non-relevant (0) or unjudged (-1)
    qrels = {q: dict.fromkeys(docs, grade) for q, docs in case.qrels.items()}
    no_relevant = Case(qrels=qrels, runs=case.runs)
    specs = [spec_of(name) for name in sorted(ZERO_WITHOUT_RELEVANT)]
    result = evaluate(no_relevant, specs)
    nonzero = result.filter(pl.col("value").fill_nan(0.0) != 0.0)
    assert nonzero.is_empty(), nonzero.head(5)
