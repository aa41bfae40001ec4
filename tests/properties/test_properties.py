"""Properties every metric must have, on hypothesis-generated inputs.

Bounds, invariances (row order, query-id relabelling, input kind), the tie
rule, perfect runs, monotonicity, spec round trips and plan merging. Values
are compared exactly (the same expressions on the same data) unless noted.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pandas as pd
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from reference import oracle
from reference.test_oracle import GRID, VARIANTS
from strategies import NO_SHRINK, Case, cases, perfect_case, shuffled

import ireval_df as ie
from ireval_df.errors import IrevalWarning
from ireval_df.measures import REGISTRY, Metric, parse_metric
from ireval_df.measures.spec import build_metric
from ireval_df.offline.engine import EngineOptions, find_rankings
from ireval_df.offline.intents import uses_intents
from ireval_df.offline.metrics.shared import full_sort
from ireval_df.offline.plan import measures_reading

PREFERENCE_MEASURES = measures_reading("preferences")


def _prop_grid() -> list[Metric]:
    """A smaller grid for properties that evaluate several times per example:
    every metric, its first three variants, one cutoff (or none, or recall
    level 0.5), both judged_only. The diversity measures need qrels judged
    per intent, which these cases do not have: their bounds and invariances
    are in test_diversity_properties.py and test_property_sets.py."""
    grid = []
    for name, info in REGISTRY.items():
        # preference measures read preference judgments (evaluate_prefs)
        if info.family != "offline" or name in PREFERENCE_MEASURES:
            continue
        if info.cutoff_type is float:
            k: Any = 0.5
        else:
            k = 10 if info.cutoff == "required" else None
        if uses_intents(build_metric(name, {}, k)):
            continue
        for variant in VARIANTS.get(name, [{}])[:3]:
            for judged_only in (False, True):
                grid.append(
                    build_metric(name, {**variant, "judged_only": judged_only}, k)
                )
    return grid


PROP_GRID: list[Metric] = _prop_grid()


def evaluate(
    run: Any, qrels: Any, metrics: list[Metric] | list[str], **options: Any
) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        return ie.evaluate(run, qrels, metrics, **options)


def as_dict(result: pl.DataFrame) -> dict[tuple[str, str, str], float]:
    """(run, query, metric) -> value."""
    return {
        (r, q, m): v
        for r, q, m, v in result.select(
            "run_id", "query_id", "metric", "value"
        ).iter_rows()
    }


def same(a: float | None, b: float | None, rtol: float = 0.0) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b or math.isclose(a, b, rel_tol=rtol, abs_tol=rtol)


#: Tolerance where inputs differ in row order. Sums over a ranking's rows are
#: taken in rank order (``ordered_sum``), so row order never changes a sum
#: (``test_row_order_never_changes_a_single_bit`` pins it); what is left is
#: polars dividing by a scalar through its reciprocal on one path and not on
#: another: 1 ulp.
ROW_ORDER_RTOL = 1e-12


def assert_same(
    got: dict[Any, float], want: dict[Any, float], rtol: float = 0.0
) -> None:
    assert set(got) == set(want)
    bad = [(k, got[k], want[k]) for k in want if not same(got[k], want[k], rtol)]
    assert not bad, bad[:10]


# --- bounds -------------------------------------------------------------------------


@settings(phases=NO_SHRINK, max_examples=10)
@given(cases(max_queries=5, max_runs=2))
def test_values_stay_within_registry_bounds(case: Case) -> None:
    result = evaluate(case.run_frame(), case.qrels_frame(), PROP_GRID)
    by_name = {str(m): m for m in PROP_GRID}
    bad = []
    for _, query, name, value in result.iter_rows():
        low, high = by_name[name].info.bounds
        if value is None or math.isnan(value):
            # trec_eval's NaN cases only: IPrec / 11pt with nothing retrieved
            # and c = 0, Rndcg without any term
            assert by_name[name].name in ("IPrec", "11pt", "Rndcg"), (query, name)
            continue
        if (low is not None and value < low - 1e-12) or (
            high is not None and value > high + 1e-12
        ):
            bad.append((query, name, value, (low, high)))
    assert not bad, bad[:10]


# --- invariances ----------------------------------------------------------------------


@settings(phases=NO_SHRINK, max_examples=8)
@given(cases(max_queries=5, max_runs=3), st.integers(0, 2**16))
def test_row_order_never_matters(case: Case, seed: int) -> None:
    run, qrels = case.run_frame(), case.qrels_frame()
    want = as_dict(evaluate(run, qrels, PROP_GRID))
    got = as_dict(evaluate(shuffled(run, seed), shuffled(qrels, seed + 1), PROP_GRID))
    assert_same(got, want, ROW_ORDER_RTOL)


@settings(phases=NO_SHRINK, max_examples=8)
@given(cases(max_queries=5, max_runs=3), st.integers(0, 2**16))
def test_rank_ordered_rows_give_the_same_values(case: Case, seed: int) -> None:
    # rows in rank order take the engine's in-order path (ranks read off the
    # order, ties sorted by doc_id against the order they are listed in),
    # ranking every row (a full_sort metric in the call) or the judged ones
    run, qrels = case.run_frame(), case.qrels_frame()
    order = ["run_id", "query_id", "score", "doc_id"]
    ordered = run.sort(order, descending=[False, False, True, False])
    assert find_rankings(ordered.lazy(), EngineOptions()).in_order == (run.height > 0)
    for grid in (PROP_GRID, [m for m in PROP_GRID if not full_sort(m)]):
        want = as_dict(evaluate(shuffled(run, seed), qrels, grid))
        got = as_dict(evaluate(ordered, qrels, grid))
        assert_same(got, want, ROW_ORDER_RTOL)


def test_row_order_never_changes_a_single_bit() -> None:
    # the repro: one query, 8 documents, 12 seeded row orders
    docs = {
        "10": 0.5,
        "a": 2.0,
        "x": 0.5,
        "\u00e9": 2.0,
        "B": -0.5,
        "Z": 1.5,
        "100": 0.25,
        "9": 0.0,
    }
    qrels = Case(qrels={"q": {"9": 1, "D1": 3}}).qrels_frame()
    run = pl.DataFrame(
        {"query_id": "q", "doc_id": list(docs), "score": list(docs.values())}
    )
    values = {
        evaluate(shuffled(run, seed), qrels, ["RBPResidual"])["value"].item()
        for seed in range(12)
    }
    assert len(values) == 1, values


NEW_IDS = ("n0", "N1", "42", "7", "zz", "Zz", "q 1", "\u00fc", "x-1", "0")


@settings(phases=NO_SHRINK, max_examples=8)
@given(cases(max_queries=5, max_runs=2), st.permutations(NEW_IDS))
def test_query_ids_are_only_labels(case: Case, new_ids: list[str]) -> None:
    queries = sorted(set(case.qrels) | {q for r in case.runs.values() for q in r})
    mapping = dict(zip(queries, new_ids, strict=False))
    want = as_dict(evaluate(case.run_frame(), case.qrels_frame(), PROP_GRID))
    moved = case.relabel(mapping)
    got = as_dict(evaluate(moved.run_frame(), moved.qrels_frame(), PROP_GRID))
    assert_same(
        got, {(r, mapping[q], m): v for (r, q, m), v in want.items()}, ROW_ORDER_RTOL
    )
    # and the rows come sorted by the new ids, in byte order
    result = evaluate(moved.run_frame(), moved.qrels_frame(), ["AP"])
    keys = list(zip(result["run_id"], result["query_id"], strict=True))
    assert keys == sorted(keys, key=lambda k: (k[0].encode(), k[1].encode()))


@settings(phases=NO_SHRINK, max_examples=6)
@given(cases(max_queries=4, max_runs=2))
def test_ties_are_settled_by_doc_id_descending(case: Case) -> None:
    # making the tie rule explicit (distinct scores in the order score desc,
    # doc_id desc) changes nothing
    untied = Case(
        qrels=case.qrels,
        runs={
            r: {
                q: {d: float(len(docs) - i) for i, d in enumerate(oracle.ranking(docs))}
                for q, docs in ranking.items()
            }
            for r, ranking in case.runs.items()
        },
    )
    first = as_dict(evaluate(case.run_frame(), case.qrels_frame(), PROP_GRID))
    explicit = as_dict(evaluate(untied.run_frame(), untied.qrels_frame(), PROP_GRID))
    assert_same(explicit, first, ROW_ORDER_RTOL)
    # ... and ranking by an input rank column in that order changes nothing
    ranks = untied.run_frame().with_columns(
        (pl.col("score").rank("ordinal", descending=True).over("run_id", "query_id"))
        .cast(pl.UInt32)
        .alias("rank"),
        pl.lit(0.0).alias("score"),
    )
    by_rank = as_dict(
        evaluate(ranks, case.qrels_frame(), PROP_GRID, rank_from="column")
    )
    assert_same(by_rank, first, ROW_ORDER_RTOL)


# --- perfect runs and monotonicity ----------------------------------------------------

#: Metrics whose maximum (1) a perfect ranking reaches whenever the query
#: has a relevant document (at rel=1; P@k needs k <= R, checked below; AP@k
#: divides by R, so only its min_R_k form reaches 1).
PERFECT = [
    "AP",
    "AP(norm=min_R_k)@3",
    "nDCG",
    "nDCG@1",
    "nDCG@3",
    "nDCG@10",
    "nDCG(dcg=exp-log2)@5",
    "nDCG(gains={1:2,2:5,3:9,4:20})",
    "RR",
    "RR@1",
    "Rprec",
    "Bpref",
    "Success@1",
    "SetR",
    "IPrec@0",
    "IPrec@0.5",
    "IPrec@1",
    "11pt",
    "Best@1",
    "nDCGRel",
    "SetRelP",
    "RelP@1",
    "RelP@5",
]


@settings(max_examples=20)
@given(
    st.dictionaries(
        st.sampled_from(("a", "A", "B", "9", "10", "x", "y")),
        st.sampled_from((-1, 0, 1, 2, 3, 4)),
        min_size=1,
        max_size=7,
    )
)
def test_a_perfect_run_scores_the_maximum(judged: dict[str, int]) -> None:
    assume(any(g >= 1 for g in judged.values()))
    positive = {d: g for d, g in judged.items() if g >= 0}
    case = perfect_case(positive)
    big_r = sum(1 for g in judged.values() if g >= 1)
    specs = (
        PERFECT
        + [f"P@{k}" for k in range(1, big_r + 1)]
        + [f"R@{big_r}", f"R@{big_r + 2}"]
    )
    result = evaluate(case.run_frame(), Case(qrels={"q": judged}).qrels_frame(), specs)
    got = dict(zip(result["metric"], result["value"], strict=True))
    for spec, value in got.items():
        high = parse_metric(spec).info.bounds[1]
        assert value == pytest.approx(high, rel=1e-12), spec


#: Metrics that never decrease when a document moves above one with a lower label.
MONOTONE = [
    "AP",
    "AP@3",
    "AP(rel=2)",
    "nDCG",
    "nDCG@3",
    "nDCG(dcg=exp-log2)@5",
    "RR",
    "RR@3",
    "RR(rel=2)",
    "P@1",
    "P@3",
    "P(rel=2)@5",
    "R@1",
    "R@3",
    "R(rel=2)@5",
    "Success@2",
    "DCG@3",
    "ERR",
    "ERR@3",
    "RBP",
    "RBP(p=0.5)@3",
    "Bpref",
    "Bpref(rel=2)",
    "CG@3",
]


@settings(max_examples=15)
@given(cases(max_queries=3, max_runs=1, ties=False, one_sided=False), st.data())
def test_moving_a_better_document_up_never_lowers_the_score(
    case: Case, data: Any
) -> None:
    ((run_id, ranking),) = case.runs.items()
    query = data.draw(st.sampled_from(sorted(ranking)))
    docs = ranking[query]
    order = oracle.ranking(docs)
    labels = [oracle.label(d, case.qrels[query]) for d in order]
    swaps = [i for i in range(1, len(order)) if labels[i] > labels[i - 1]]
    assume(swaps)
    i = data.draw(st.sampled_from(swaps))
    upper, lower = order[i - 1], order[i]
    better = dict(docs)
    better[upper], better[lower] = docs[lower], docs[upper]
    moved = Case(qrels=case.qrels, runs={run_id: {**ranking, query: better}})
    before = as_dict(evaluate(case.run_frame(), case.qrels_frame(), MONOTONE))
    after = as_dict(evaluate(moved.run_frame(), moved.qrels_frame(), MONOTONE))
    worse = [(k, before[k], after[k]) for k in before if after[k] < before[k] - 1e-12]
    assert not worse, worse


# --- specs ------------------------------------------------------------------------------


@st.composite
def metric_specs(draw: st.DrawFn) -> Metric:
    """A registry metric with parameters drawn from its grid variants and ranges."""
    name = draw(
        st.sampled_from(
            sorted(
                n
                for n, i in REGISTRY.items()
                if i.family == "offline" and n not in PREFERENCE_MEASURES
            )
        )
    )
    info = REGISTRY[name]
    params: dict[str, Any] = dict(draw(st.sampled_from(VARIANTS.get(name, [{}]))))
    if "rel" in info.params:
        params["rel"] = draw(st.integers(0, 4))
    if draw(st.booleans()):
        params["judged_only"] = draw(st.booleans())
    if "p" in info.params:
        params["p"] = draw(st.floats(0.01, 0.99).map(lambda p: round(p, 3)))
    if "beta" in info.params:
        # F's beta weighs recall (any positive); (n)NRBP's is a probability
        betas = (
            (0.0, 0.25, 0.5, 1.0)
            if name in ("NRBP", "nNRBP")
            else (0.25, 0.5, 1.0, 2.0, 3.0)
        )
        params["beta"] = draw(st.sampled_from(betas))
    if info.cutoff_type is float:
        k: Any = draw(st.sampled_from((0.0, 0.1, 0.25, 1 / 3, 0.5, 0.9, 1.0)))
    elif info.cutoff == "required" or (
        info.cutoff == "optional" and draw(st.booleans())
    ):
        k = draw(st.integers(1, 1000))
    else:
        k = None
    return build_metric(name, params, k)


@settings(max_examples=200)
@given(metric_specs())
def test_spec_round_trip(metric: Metric) -> None:
    text = str(metric)
    assert parse_metric(text) == metric
    assert str(parse_metric(text)) == text
    assert parse_metric(metric) is metric


# --- plans merge, inputs of every kind -------------------------------------------------


@settings(phases=NO_SHRINK, max_examples=5)
@given(
    cases(max_queries=4, max_runs=2),
    st.lists(st.sampled_from(GRID), min_size=4, max_size=6, unique=True),
)
def test_each_metric_alone_equals_all_together(
    case: Case, picked: list[Metric]
) -> None:
    # qrels judged per intent (the same grades per document), for the
    # diversity measures GRID holds
    run, qrels = case.run_frame(), case.intent_qrels_frame()
    together = as_dict(
        evaluate(run, qrels, PROP_GRID + [m for m in picked if m not in PROP_GRID])
    )
    for metric in picked:
        alone = as_dict(evaluate(run, qrels, [metric]))
        assert_same(
            alone,
            {k: v for k, v in together.items() if k[2] == str(metric)},
            ROW_ORDER_RTOL,
        )


@settings(phases=NO_SHRINK, max_examples=5)
@given(cases(max_queries=4, max_runs=2))
def test_pandas_and_lazy_inputs_equal_eager_polars(case: Case) -> None:
    run, qrels = case.run_frame(), case.qrels_frame()
    eager = evaluate(run, qrels, PROP_GRID)
    lazy = evaluate(run.lazy(), qrels.lazy(), PROP_GRID)
    assert isinstance(lazy, pl.LazyFrame)
    assert_same(as_dict(lazy.collect()), as_dict(eager), ROW_ORDER_RTOL)
    from_pandas = evaluate(run.to_pandas(), qrels.to_pandas(), PROP_GRID)
    assert isinstance(from_pandas, pd.DataFrame)
    back = pl.from_pandas(from_pandas, nan_to_null=False)
    assert back.columns == eager.columns
    assert_same(as_dict(back), as_dict(eager), ROW_ORDER_RTOL)
    assert (
        back.select("run_id", "query_id", "metric").rows()
        == eager.select("run_id", "query_id", "metric").rows()
    )


@settings(phases=NO_SHRINK, max_examples=8)
@given(cases(max_queries=5, max_runs=2))
def test_skipped_rows_are_a_subset_of_zero_rows(case: Case) -> None:
    specs = [m for m in PROP_GRID if not m.judged_only]
    zero = as_dict(
        evaluate(case.run_frame(), case.qrels_frame(), specs, missing="zero")
    )
    skip = as_dict(
        evaluate(case.run_frame(), case.qrels_frame(), specs, missing="skip")
    )
    assert set(skip) <= set(zero)
    assert_same(skip, {k: zero[k] for k in skip}, ROW_ORDER_RTOL)
    answered = {
        (r, q) for r, ranking in case.runs.items() for q in ranking if q in case.qrels
    }
    assert {k[:2] for k in skip} == answered


def test_a_run_without_run_id_is_named_run() -> None:
    case = Case(qrels={"q": {"a": 1}}, runs={"run": {"q": {"a": 1.0, "b": 0.5}}})
    with_id = evaluate(case.run_frame(), case.qrels_frame(), PROP_GRID)
    without = evaluate(case.run_frame(with_run_id=False), case.qrels_frame(), PROP_GRID)
    assert_same(as_dict(without), as_dict(with_id))
