"""Properties of the diversity measures on generated qrels judged per intent.

* With a single intent they reduce to the measures they extend: ``P_IA`` is
  ``P``, ``AP_IA`` is ``AP``, ``StRecall`` is ``Success`` and ``nDCG_IA`` is
  ``nDCG``.
* Intents are names: renaming them changes nothing, and neither does
  judging every document twice over, for an intent and its copy (every
  measure is a mean over intents, or a ratio whose two sides double).
* Neither the order of the rows nor the kind of input (lazy, pandas)
  changes a value (``test_properties.py`` checks the other measures so).
* A run that ranks the judged documents in ndeval's greedy ideal order
  scores 1 on the measures normalised by that ideal (``alpha_nDCG``,
  ``nERR_IA``, ``nNRBP``), whatever ``alpha``, ``beta`` and ``k``.

Their ranges, direction, aggregation and value without a relevant
document are in the property sets (``test_property_sets.py``).
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import NO_SHRINK, Case, cases, shuffled

import ireval_df as ie
from ireval_df.errors import IrevalWarning

DIVERSITY = [
    "alpha_nDCG@3",
    "alpha_nDCG(alpha=0.2,rel=2)@10",
    "alpha_DCG@5",
    "ERR_IA@1",
    "ERR_IA@10",
    "nERR_IA@5",
    "NRBP",
    "NRBP(alpha=0.7,beta=0.9)",
    "nNRBP",
    "nNRBP(alpha=0.3,beta=1,rel=2)",
    "AP_IA",
    "AP_IA(rel=2)",
    "P_IA@3",
    "StRecall@2",
    "nDCG_IA@5",
]
INTENTS = ("x", "y", "z")


@st.composite
def judged_per_intent(draw: st.DrawFn) -> tuple[Case, pl.DataFrame]:
    """A case, and its judged documents graded for one to three intents."""
    case = draw(cases(max_queries=3, max_runs=2, max_docs=8))
    rows = []
    for query, docs in case.qrels.items():
        for doc in docs:
            for intent in draw(st.sets(st.sampled_from(INTENTS), min_size=1)):
                rows.append((query, doc, draw(st.integers(-1, 3)), intent))
    qrels = pl.DataFrame(
        rows,
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32,
                "intent": pl.String},
        orient="row",
    )  # fmt: skip
    return case, qrels


def values(case: Case, qrels: pl.DataFrame, metrics: list[str]) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        return ie.evaluate(case.run_frame(), qrels, metrics)


def same(a: pl.DataFrame, b: pl.DataFrame) -> None:
    joined = a.join(b, on=["run_id", "query_id", "metric"], suffix="_b")
    assert joined.height == a.height == b.height
    differ = joined.filter(
        (pl.col("value") - pl.col("value_b")).abs()
        > 1e-12 * (1 + pl.col("value").abs())
    )
    assert differ.is_empty(), differ.head(5)


@settings(phases=NO_SHRINK, max_examples=15)
@given(cases(max_queries=3, max_runs=2))
def test_one_intent_reduces_to_the_measure_it_extends(case: Case) -> None:
    pairs = {"P_IA@3": "P@3", "AP_IA": "AP", "AP_IA(rel=2)": "AP(rel=2)",
             "StRecall@2": "Success@2", "nDCG_IA@5": "nDCG@5"}  # fmt: skip
    qrels = case.qrels_frame().with_columns(intent=pl.lit("only"))
    aware = values(case, qrels, list(pairs)).with_columns(
        pl.col("metric").replace(pairs)
    )
    plain = values(case, case.qrels_frame(), list(pairs.values()))
    same(aware, plain)


@settings(phases=NO_SHRINK, max_examples=15)
@given(judged_per_intent())
def test_renaming_the_intents_changes_nothing(drawn: tuple[Case, pl.DataFrame]) -> None:
    case, qrels = drawn
    renamed = qrels.with_columns(
        pl.col("intent").replace({"x": "z", "z": "a", "y": "x"})
    )
    same(values(case, qrels, DIVERSITY), values(case, renamed, DIVERSITY))


@settings(phases=NO_SHRINK, max_examples=15)
@given(judged_per_intent())
def test_judging_every_intent_twice_changes_nothing(
    drawn: tuple[Case, pl.DataFrame],
) -> None:
    case, qrels = drawn
    doubled = pl.concat([qrels, qrels.with_columns(pl.col("intent") + "'")])
    same(values(case, qrels, DIVERSITY), values(case, doubled, DIVERSITY))


@settings(phases=NO_SHRINK, max_examples=10)
@given(judged_per_intent(), st.integers(0, 2**16))
def test_row_order_and_input_kind_change_nothing(
    drawn: tuple[Case, pl.DataFrame], seed: int
) -> None:
    case, qrels = drawn
    run = case.run_frame()
    want = values(case, qrels, DIVERSITY)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        moved = ie.evaluate(shuffled(run, seed), shuffled(qrels, seed + 1), DIVERSITY)
        lazy = ie.evaluate(run.lazy(), qrels.lazy(), DIVERSITY).collect()
        pandas = pl.from_pandas(
            ie.evaluate(run.to_pandas(), qrels.to_pandas(), DIVERSITY)
        )
    same(want, moved)
    same(want, lazy)
    same(want, pandas)


def greedy_order(qrels: pl.DataFrame, query: str, rel: int, alpha: float) -> list[str]:
    """ndeval's greedy ideal of one query: at each rank the document of highest
    novelty gain, ties to the highest doc_id, until none relevant is left."""
    left: dict[str, list[str]] = {}
    for doc, intent, grade in (
        qrels.filter(pl.col("query_id") == query)
        .select("doc_id", "intent", "relevance")
        .rows()
    ):
        if grade >= rel:
            left.setdefault(doc, []).append(intent)
    seen: dict[str, int] = {}
    order = []
    while left:

        def gain(doc: str) -> float:
            return sum((1.0 - alpha) ** seen.get(i, 0) for i in sorted(left[doc]))

        best = max(left, key=lambda doc: (gain(doc), doc.encode()))
        order.append(best)
        for intent in left.pop(best):
            seen[intent] = seen.get(intent, 0) + 1
    return order


@settings(phases=NO_SHRINK, max_examples=15)
@given(
    judged_per_intent(),
    st.sampled_from([0.0, 0.3, 0.5, 1.0]),
    st.sampled_from([0.0, 0.5, 0.9, 1.0]),
    st.integers(1, 2),
)
def test_the_greedy_ideal_ranking_scores_one(
    drawn: tuple[Case, pl.DataFrame], alpha: float, beta: float, rel: int
) -> None:
    _, qrels = drawn
    rows = []
    for query in qrels["query_id"].unique().to_list():
        order = greedy_order(qrels, query, rel, alpha)
        rows += [(query, doc, float(-r)) for r, doc in enumerate(order)]
    if not rows:
        return
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")
    specs = [
        f"nNRBP(alpha={alpha},beta={beta},rel={rel})",
        f"alpha_nDCG(alpha={alpha},rel={rel})@5",
        f"nERR_IA(alpha={alpha},rel={rel})@3",
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        got = ie.evaluate(run, qrels, specs, missing="skip")
    assert got.height == len(specs) * run["query_id"].n_unique()
    assert got["value"].to_list() == pytest.approx([1.0] * got.height, rel=1e-12)
