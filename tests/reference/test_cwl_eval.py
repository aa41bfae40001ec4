"""The user-model measures against ir_measures' cwl_eval and compat providers, per query.

* cwl_eval (Azzopardi, Thomas & Moffat's package ``cwl-eval``, run by
  ir_measures): SDCG, INSQ, INST, NERR8..11 and BPM on generated inputs
  (graded, negative and unjudged documents, ties, cutoffs beyond the
  list, queries only in the qrels) and on rankings longer than cwl_eval's
  depth of 1000. cwl_eval ranks tied documents in input order (ir_measures
  sorts the run by score with a stable sort), so the run is handed over in
  our order (score, then doc_id descending) and ties then agree;
* compat (ir_measures' own code, Clarke, Vtyurina & Smucker 2020) on runs
  with distinct positive scores, where its ideal ranking is the paper's;
* its two known errors, pinned with the right values: an unretrieved
  relevant document is given score 0 in the ideal's tie-break, so with
  negative scores it goes before retrieved documents of its grade, and
  tied scores are ranked by doc_id ascending in the run but by qrels order
  in the ideal. Both lower the value of a ranking for reasons the measure
  does not mean; ours follows the paper.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from strategies import Case, cases

import ireval_df as ie
from ireval_df.errors import IrevalWarning
from ireval_df.measures import parse_metric

irm = pytest.importorskip("ir_measures")
pytest.importorskip("cwl", reason="cwl_eval is not installed (pip install cwl-eval)")

#: cwl_eval measures with ir_measures' required max_rel given (grades 0..4)
CWL_SPECS = [
    "SDCG(max_rel=4)@1",
    "SDCG(max_rel=4)@5",
    "SDCG(min_rel=1,max_rel=3)@20",
    "INSQ(max_rel=4)",
    "INSQ(T=2,max_rel=2)",
    "INST(max_rel=4)",
    "INST(T=0.3,max_rel=4)",
    "INST(T=3,min_rel=1,max_rel=2)",
    "NERR8(max_rel=4)@1",
    "NERR8(max_rel=4)@3",
    "NERR8(max_rel=1)@100",
    "NERR9(max_rel=4)@5",
    "NERR9(min_rel=2,max_rel=4)@1000",
    "NERR10(max_rel=4)",
    "NERR10(p=0.5,max_rel=2)",
    "NERR11(max_rel=4)",
    "NERR11(T=2,max_rel=3)",
    "BPM(max_rel=4)@3",
    "BPM(T=0.5,max_rel=4)@10",
    "BPM(T=2,max_rel=2)@2000",
]
COMPAT_SPECS = ["Compat", "Compat(p=0.5)", "Compat(normalize=false)"]


def ordered(case: Case) -> dict[str, dict[str, float]]:
    """The single run with each query's documents in our rank order."""
    (run,) = case.runs.values()
    return {
        q: dict(sorted(docs.items(), key=lambda d: (d[1], d[0].encode()), reverse=True))
        for q, docs in run.items()
    }


def ours(case: Case, specs: list[str]) -> dict[tuple[str, str], float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        result = ie.evaluate(
            case.run_frame(), case.qrels_frame(), specs, missing="skip"
        )
    return {(q, m): v for _, q, m, v in result.iter_rows()}


def theirs(
    provider: Any, qrels: Any, run: dict[str, dict[str, float]], specs: list[str]
) -> dict[tuple[str, str], float]:
    """(query, spec) -> value for the queries the run answered."""
    measures = {
        irm.parse_measure(str(parse_metric(s)).replace("=false", "=False")): str(
            parse_metric(s)
        )
        for s in specs
    }
    return {
        (row.query_id, measures[row.measure]): row.value
        for row in provider.iter_calc(list(measures), qrels, run)
        if row.query_id in run
    }


def check(
    got: dict[tuple[str, str], float], want: dict[tuple[str, str], float]
) -> None:
    assert want, "nothing compared"
    assert set(want) <= set(got), sorted(set(want) - set(got))[:5]
    bad = [
        f"{key}: ours {got[key]!r}, reference {value!r}"
        for key, value in want.items()
        if not math.isclose(got[key], value, rel_tol=1e-9, abs_tol=1e-12)
    ]
    assert not bad, "\n".join(bad[:15])


@pytest.fixture(autouse=True)
def _quiet_cwl(caplog: pytest.LogCaptureFixture) -> None:
    # ir_measures' cwl provider logs when max_rel differs from the highest grade
    caplog.set_level("ERROR", logger="ir_measures.cwl_eval")


@settings(max_examples=15)
@given(cases(min_queries=2, max_queries=5, max_runs=1, judged_topics=True))
def test_cwl_measures_match_cwl_eval(case: Case) -> None:
    specs = [str(parse_metric(s)) for s in CWL_SPECS]
    want = theirs(irm.cwl_eval, case.qrels, ordered(case), specs)
    check(ours(case, specs), want)


@settings(max_examples=10)
@given(cases(min_queries=2, max_queries=4, max_runs=1, judged_topics=True))
def test_default_max_rel_is_the_highest_grade(case: Case) -> None:
    top = max(g for docs in case.qrels.values() for g in docs.values())
    if top < 1:
        return  # ir_measures needs min_rel < max_rel
    names = [
        "SDCG@5",
        "INSQ",
        "INST",
        "NERR8@3",
        "NERR9@3",
        "NERR10",
        "NERR11",
        "BPM@5",
    ]
    explicit = {
        n: str(parse_metric(n.replace("@", f"(max_rel={top})@", 1)))
        if "@" in n
        else f"{n}(max_rel={top})"
        for n in names
    }
    want = theirs(irm.cwl_eval, case.qrels, ordered(case), list(explicit.values()))
    got = ours(case, names)
    back = {v: k for k, v in explicit.items()}
    check(got, {(q, back[s]): v for (q, s), v in want.items()})


def test_rankings_longer_than_cwl_evals_depth() -> None:
    # 1500 documents, a relevant one every 7 ranks and past rank 1000: the
    # measures read 1000 ranks and no more
    docs = {f"d{i:04d}": float(1500 - i) for i in range(1500)}
    qrels = {"1": {f"d{i:04d}": 1 + i % 3 for i in range(0, 1500, 7)}, "2": {"x": 1}}
    case = Case(qrels=qrels, runs={"r": {"1": docs, "2": {"y": 1.0, "x": 0.5}}})
    specs = [str(parse_metric(s)) for s in CWL_SPECS]
    want = theirs(irm.cwl_eval, case.qrels, ordered(case), specs)
    check(ours(case, specs), want)


@settings(max_examples=15)
@given(cases(min_queries=2, max_queries=5, max_runs=1, ties=False))
def test_compat_matches_ir_measures(case: Case) -> None:
    # distinct scores, shifted positive: the provider's ideal is then the paper's
    (run,) = case.runs.values()
    low = min((s for docs in run.values() for s in docs.values()), default=0.0)
    positive = {
        q: {d: s - low + 1.0 for d, s in docs.items()} for q, docs in run.items()
    }
    shifted = Case(qrels=case.qrels, runs={"r": positive})
    want = theirs(irm.compat, case.qrels, ordered(shifted), COMPAT_SPECS)
    check(ours(shifted, COMPAT_SPECS), want)


def test_compat_error_unretrieved_documents_score_zero_in_the_ideal() -> None:
    # a and b are relevant (grade 1); the run retrieves a alone. The most
    # compatible ideal is [a, b]: D = 2, overlaps 1 and 1, so
    # (1 + p/2) / (1 + p) with p = 0.5: 5/6. ir_measures orders the ideal by
    # run score with 0 for b, so b goes first when a's score is negative:
    # overlaps 0 and 1, (p/2) / (1 + p) = 1/6, and shifting every score by
    # +2 (same ranking) changes its value back to 5/6.
    qrels = {"1": {"a": 1, "b": 1}}
    negative = Case(qrels=qrels, runs={"r": {"1": {"a": -1.0}}})
    positive = Case(qrels=qrels, runs={"r": {"1": {"a": 1.0}}})
    spec = ["Compat(p=0.5)"]
    assert ours(negative, spec)[("1", "Compat(p=0.5)")] == pytest.approx(5 / 6)
    assert ours(positive, spec)[("1", "Compat(p=0.5)")] == pytest.approx(5 / 6)
    assert theirs(irm.compat, qrels, {"1": {"a": -1.0}}, spec) == {
        ("1", "Compat(p=0.5)"): pytest.approx(1 / 6)
    }
    assert theirs(irm.compat, qrels, {"1": {"a": 1.0}}, spec) == {
        ("1", "Compat(p=0.5)"): pytest.approx(5 / 6)
    }


def test_compat_error_ties_follow_two_different_orders() -> None:
    # a and b tie in the run and are both relevant (grade 1), c too but not
    # retrieved; qrels list b before a. ir_measures ranks the run [a, b]
    # (doc_id ascending) but builds the ideal [b, a, c] (qrels order): the
    # overlaps are 0, 2, 2 where any tie order used on both sides gives
    # 1, 2, 2. Ours ranks [b, a] (doc_id descending) and the ideal [b, a, c].
    qrels = {"1": {"b": 1, "a": 1, "c": 1}}
    run = {"1": {"a": 1.0, "b": 1.0}}
    p = 0.5
    norm = 1 + p + p * p
    best = (1 + p + p * p) / norm
    right = (1 + p * 2 / 2 + p * p * 2 / 3) / norm / best
    wrong = (0 + p * 2 / 2 + p * p * 2 / 3) / norm / best
    case = Case(qrels=qrels, runs={"r": run})
    assert ours(case, ["Compat(p=0.5)"])[("1", "Compat(p=0.5)")] == pytest.approx(right)
    got = theirs(irm.compat, qrels, run, ["Compat(p=0.5)"])
    assert got[("1", "Compat(p=0.5)")] == pytest.approx(wrong)


def test_cwl_eval_ranks_ties_in_input_order() -> None:
    # a (relevant) and b tie: ours ranks b first (doc_id descending, as
    # trec_eval); cwl_eval via ir_measures keeps the order it is given
    qrels = {"1": {"a": 1}}
    case = Case(qrels=qrels, runs={"r": {"1": {"a": 1.0, "b": 1.0}}})
    spec = "NERR8(max_rel=1)@2"
    assert ours(case, [spec])[("1", spec)] == pytest.approx(0.5)
    assert theirs(irm.cwl_eval, qrels, {"1": {"a": 1.0, "b": 1.0}}, [spec]) == {
        ("1", spec): pytest.approx(1.0)
    }
    assert theirs(irm.cwl_eval, qrels, {"1": {"b": 1.0, "a": 1.0}}, [spec]) == {
        ("1", spec): pytest.approx(0.5)
    }


@settings(max_examples=10)
@given(cases(min_queries=2, max_queries=4, max_runs=1, judged_topics=True))
def test_binary_rbp_of_ir_measures_is_a_gain_map(case: Case) -> None:
    # ir_measures' RBP(rel=r) (cwl_eval here) counts grades >= r as gain 1:
    # ours RBP(gains={...}) with those levels at 1 and the others at 0
    # (cwl_eval normalises by 1 - p^1000 too, below 1e-40 for p <= 0.9)
    pairs = {}
    for rel in (1, 2):
        levels = ",".join(f"{g}:{int(g >= rel)}" for g in range(5))
        for p in (0.5, 0.8, 0.9):
            pairs[str(parse_metric(f"RBP(p={p},gains={{{levels}}})"))] = (
                f"RBP(p={p},rel={rel})"
            )
    (run,) = case.runs.values()
    measures = {irm.parse_measure(v): k for k, v in pairs.items()}
    want = {
        (row.query_id, measures[row.measure]): row.value
        for row in irm.cwl_eval.iter_calc(list(measures), case.qrels, ordered(case))
        if row.query_id in run
    }
    check(ours(case, list(pairs)), want)
