"""Per-query values against ir_measures, where its semantics agree with ours.

Three kinds of check:

* canonical names mean the same thing: our spec strings are ir_measures'
  syntax (docs/design.md, metric names), so ``ir_measures.parse_measure(str(m))``
  through its pytrec_eval provider (trec_eval 9.x: ties broken by doc_id
  descending, like ours) must give our values, ``rtol=1e-9``;
* measures pytrec_eval lacks: ``nDCG(dcg=exp-log2)@k`` and ``ERR@k`` from
  gdeval (perl; it prints 5 decimals, hence ``atol=6e-6``, and needs numeric
  query ids and grades <= 4; its ties are doc_id descending too, and its ERR
  uses a fixed top grade of 4: our ``ERR(max_rel=4)``), ``Judged@k`` from the
  judged provider and ``RR`` from the MS MARCO provider. Those two sort ties
  by doc_id *ascending*, so their inputs have distinct scores; the judged
  provider also counts negative grades as judged (ours: unjudged), so its
  inputs have none;
* known disagreements, pinned: ir_measures' ``SetF(beta=b)`` passes ``b`` to
  trec_eval's set_F, whose parameter is beta squared (SPEC.md 8.12).
"""

from __future__ import annotations

import math
import shutil
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from strategies import NUMERIC_QUERY_IDS, Case, cases

import ireval_df as ie
from ireval_df.errors import IrevalWarning
from ireval_df.measures import parse_metric

irm = pytest.importorskip("ir_measures")

#: Canonical specs whose ir_measures spelling is the same string (booleans
#: capitalised) and which ir_measures computes with pytrec_eval.
SAME_NAME = [
    "P@1",
    "P@5",
    "P(rel=2)@5",
    "P(judged_only=true)@3",
    "RR",
    "RR(rel=2)",
    "RR(judged_only=true)",
    "Rprec",
    "Rprec(rel=2)",
    "AP",
    "AP@5",
    "AP(rel=2)@10",
    "AP(judged_only=true)",
    "infAP",
    "infAP(rel=2)",
    "nDCG",
    "nDCG@5",
    "nDCG@100",
    "nDCG(judged_only=true)@3",
    "R@5",
    "R(rel=2)@10",
    "Bpref",
    "Bpref(rel=2)",
    "NumRet",
    "NumQ",
    "NumRel",
    "NumRelRet",
    "NumRelRet(rel=2)",
    "SetAP",
    "SetF",
    "SetP",
    "SetP(rel=2)",
    "SetR",
    "Success@1",
    "Success@5",
    "Success(rel=2)@3",
]
#: Ours -> ir_measures, where the spellings differ but the meaning agrees.
RENAMED = {
    # ir_measures' IPrec is pytrec_eval's, i.e. trec_eval 9.x's +0.9 rule
    "IPrec(compat=9)@0.7": "IPrec@0.7",
    "IPrec(compat=9)@0.2": "IPrec@0.2",
    "IPrec(compat=9)@0": "IPrec@0.0",
    # ir_measures hands beta to set_F, whose parameter is beta squared
    "SetF(beta=0.5)": "SetF(beta=0.25)",
    "SetF(beta=2)": "SetF(beta=4.0)",
}


def ir_spelling(spec: str) -> str:
    return RENAMED.get(spec, spec.replace("=true", "=True"))


def ours(case: Case, specs: list[str], **options: Any) -> dict[tuple[str, str], float]:
    """(query, spec) -> value for the case's single run."""
    (run_id,) = case.runs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        result = ie.evaluate(case.run_frame(), case.qrels_frame(), specs, **options)
    return {(q, m): v for _, q, m, v in result.iter_rows()}


def theirs(provider: Any, case: Case, specs: list[str]) -> dict[tuple[str, str], float]:
    """(query, spec) -> value from ``provider``, for the queries the run answered
    (ir_measures adds zeros for the others; ours are checked by test_oracle)."""
    measures = {irm.parse_measure(ir_spelling(s)): s for s in specs}
    (run,) = case.runs.values()
    return {
        (row.query_id, measures[row.measure]): row.value
        for row in provider.iter_calc(list(measures), case.qrels, run)
        if row.query_id in run
    }


def check(
    got: dict[tuple[str, str], float],
    want: dict[tuple[str, str], float],
    *,
    rtol: float = 1e-9,
    atol: float = 1e-12,
    same_keys: bool = True,
) -> None:
    if same_keys:
        assert set(got) == set(want), "evaluated queries differ"
    else:
        assert set(want) <= set(got), "ir_measures scored queries we did not"
    bad = [
        f"{key}: ours {got[key]!r}, ir_measures {value!r}"
        for key, value in want.items()
        if not math.isclose(got[key], value, rel_tol=rtol, abs_tol=atol)
    ]
    assert not bad, "\n".join(bad[:15])


@settings(max_examples=12)
@given(cases(min_queries=3, max_queries=6, max_runs=1, judged_topics=True))
def test_canonical_names_mean_what_ir_measures_means(case: Case) -> None:
    specs = SAME_NAME + list(RENAMED)
    check(ours(case, specs, missing="skip"), theirs(irm.pytrec_eval, case, specs))


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
@settings(max_examples=8)
@given(cases(min_queries=3, max_queries=6, max_runs=1, query_ids=NUMERIC_QUERY_IDS))
def test_exponential_ndcg_and_err_match_gdeval(case: Case) -> None:
    specs = [f"nDCG(dcg=exp-log2)@{k}" for k in (1, 3, 5, 10, 100)]
    specs += [f"ERR(max_rel=4)@{k}" for k in (1, 3, 5, 10, 100)]
    ir_specs = {
        s: s.replace("nDCG(dcg=exp-log2)", "nDCG(dcg='exp-log2')").replace(
            "ERR(max_rel=4)", "ERR"
        )
        for s in specs
    }
    measures = {irm.parse_measure(v): k for k, v in ir_specs.items()}
    (run,) = case.runs.values()
    want = {
        (row.query_id, measures[row.measure]): row.value
        for row in irm.gdeval.iter_calc(list(measures), case.qrels, run)
        if row.query_id in run
    }
    # gdeval scores only queries with a positive grade; it prints %.5f
    check(ours(case, specs, missing="skip"), want, rtol=0, atol=6e-6, same_keys=False)


@settings(max_examples=12)
@given(cases(min_queries=3, max_queries=6, max_runs=1, ties=False, negative=False))
def test_judged_matches_ir_measures(case: Case) -> None:
    specs = ["Judged", "Judged@1", "Judged@3", "Judged@5", "Judged@10", "Judged@100"]
    check(
        ours(case, specs, missing="skip"),
        theirs(irm.judged, case, specs),
        same_keys=False,
    )


@settings(max_examples=12)
@given(cases(min_queries=3, max_queries=6, max_runs=1, ties=False))
def test_rr_matches_ms_marco(case: Case) -> None:
    specs = ["RR", "RR@1", "RR@3", "RR@10", "RR(rel=2)", "RR(rel=2)@5"]
    check(
        ours(case, specs, missing="skip"),
        theirs(irm.msmarco, case, specs),
        same_keys=False,
    )


def test_set_f_beta_is_squared_by_ir_measures() -> None:
    # relret = 1 of n = 2 retrieved and R = 2: P = R' = 1/2 whatever beta, so
    # use P = 1/2 (1 of 2), R' = 1/4 (1 of 4): F_b = (1 + b^2) P R' / (b^2 P + R')
    case = Case(
        qrels={"1": {"a": 1, "b": 1, "c": 1, "d": 1}},
        runs={"r": {"1": {"a": 2.0, "x": 1.0}}},
    )
    p, r = 0.5, 0.25
    got = ours(case, ["SetF(beta=0.5)", "SetF(beta=2)"])
    assert got[("1", "SetF(beta=0.5)")] == pytest.approx(1.25 * p * r / (0.25 * p + r))
    assert got[("1", "SetF(beta=2)")] == pytest.approx(5 * p * r / (4 * p + r))
    # ir_measures' SetF(beta=0.25) is trec_eval set_F.0.25, i.e. our beta=0.5
    want = theirs(irm.pytrec_eval, case, ["SetF(beta=0.5)", "SetF(beta=2)"])
    assert want == pytest.approx(got)
    assert str(parse_metric("set_F.0.25")) == "SetF(beta=0.5)"


def test_why_judged_and_ms_marco_inputs_have_no_ties() -> None:
    # documents 'a' (judged, relevant) and 'b' (unjudged) tie. trec_eval's
    # rule ranks b first (doc_id descending); ir_measures' judged and MS MARCO
    # providers sort (-score, doc_id) and rank a first.
    case = Case(qrels={"1": {"a": 1}}, runs={"r": {"1": {"a": 1.0, "b": 1.0}}})
    assert ours(case, ["Judged@1", "RR"]) == {("1", "Judged@1"): 0.0, ("1", "RR"): 0.5}
    assert theirs(irm.judged, case, ["Judged@1"]) == {("1", "Judged@1"): 1.0}
    assert theirs(irm.msmarco, case, ["RR"]) == {("1", "RR"): 1.0}
    # pytrec_eval (trec_eval) re-sorts, so it agrees with us
    assert theirs(irm.pytrec_eval, case, ["RR"]) == {("1", "RR"): 0.5}
