"""Textbook and trec_eval worked examples, each derived by hand in a comment.

Every example is one query; ``ranked`` builds a run whose scores follow the
given order (rank 1 gets the highest score).
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import IrevalWarning


def ranked(docs: list[str], query: str = "q") -> pl.DataFrame:
    """A run returning ``docs`` in this order (distinct descending scores)."""
    n = len(docs)
    return pl.DataFrame(
        {"query_id": query, "doc_id": docs, "score": [float(n - i) for i in range(n)]}
    )


def qrels_of(grades: dict[str, int], query: str = "q") -> pl.DataFrame:
    return pl.DataFrame(
        {"query_id": query, "doc_id": list(grades), "relevance": list(grades.values())},
        schema_overrides={"relevance": pl.Int32},
    )


def values(
    run: pl.DataFrame, qrels: pl.DataFrame, metrics: list[str], **options: Any
) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        result = ie.evaluate(run, qrels, metrics, **options)
    return dict(zip(result["metric"], result["value"], strict=True))


# --- precision, recall, AP, RR ----------------------------------------------------


def test_precision_and_recall_at_5() -> None:
    # relevance by rank (1, 0, 1, 1, 0) and 4 relevant documents in all (d6 is
    # never retrieved): 3 relevant in the top 5, so P@5 = 3/5 = 0.60 and
    # R@5 = 3/4 = 0.75.
    run = ranked(["d1", "d2", "d3", "d4", "d5"])
    qrels = qrels_of({"d1": 1, "d2": 0, "d3": 1, "d4": 1, "d5": 0, "d6": 1})
    got = values(run, qrels, ["P@5", "R@5"])
    assert got == pytest.approx({"P@5": 0.60, "R@5": 0.75}, rel=1e-12)


def test_average_precision_relevant_at_1_3_6() -> None:
    # relevant at ranks 1, 3 and 6, 3 relevant in all:
    # AP = (1/1 + 2/3 + 3/6) / 3 = (1 + 0.6667 + 0.5) / 3 = 0.7222
    run = ranked(["d1", "d2", "d3", "d4", "d5", "d6"])
    qrels = qrels_of({"d1": 1, "d3": 1, "d6": 1})
    ap = values(run, qrels, ["AP"])["AP"]
    assert ap == pytest.approx(13 / 18, rel=1e-12)
    assert round(ap, 3) == 0.722


def test_reciprocal_rank_first_relevant_at_3() -> None:
    # first relevant document at rank 3: RR = 1/3; RR@2 sees none: 0
    run = ranked(["d1", "d2", "d3", "d4"])
    qrels = qrels_of({"d3": 1, "d4": 1, "d1": 0})
    got = values(run, qrels, ["RR", "RR@2"])
    assert got == pytest.approx({"RR": 1 / 3, "RR@2": 0.0}, rel=1e-12)


# --- nDCG with exponential gain ---------------------------------------------------


def test_exponential_ndcg_3_2_3_against_ideal_3_3_2() -> None:
    # gains 2^g - 1: ranking (3, 2, 3) -> (7, 3, 7); ideal (3, 3, 2) -> (7, 7, 3)
    # DCG@3  = 7/log2(2) + 3/log2(3) + 7/log2(4) = 7 + 1.8928 + 3.5 = 12.3928
    # IDCG@3 = 7/log2(2) + 7/log2(3) + 3/log2(4) = 7 + 4.4165 + 1.5 = 12.9165
    # nDCG@3 = 12.3928 / 12.9165 = 0.95945 (quoted as 0.96; to 3 decimals 0.959)
    run = ranked(["d1", "d2", "d3"])
    qrels = qrels_of({"d1": 3, "d2": 2, "d3": 3})
    dcg = 7 + 3 / math.log2(3) + 7 / 2
    idcg = 7 + 7 / math.log2(3) + 3 / 2
    got = values(run, qrels, ["nDCG(dcg=exp-log2)@3"])["nDCG(dcg=exp-log2)@3"]
    assert got == pytest.approx(dcg / idcg, rel=1e-12)
    assert round(got, 2) == 0.96


def test_exponential_ndcg_3_0_2_1_0() -> None:
    # grades by rank (3, 0, 2, 1, 0), gains (7, 0, 3, 1, 0):
    # DCG@5  = 7/1 + 0/1.585 + 3/2 + 1/log2(5) + 0 = 7 + 1.5 + 0.4307 = 8.9307
    # The ideal is over the query's judged documents. The textbook example
    # judges exactly these five, so the qrels hold those five grades and the
    # ideal order is (3, 2, 1, 0, 0) -> gains (7, 3, 1, 0, 0):
    # IDCG@5 = 7/1 + 3/log2(3) + 1/2 = 7 + 1.8928 + 0.5 = 9.3928
    # nDCG@5 = 8.9307 / 9.3928 = 0.9508 -> 0.951
    run = ranked(["d1", "d2", "d3", "d4", "d5"])
    qrels = qrels_of({"d1": 3, "d2": 0, "d3": 2, "d4": 1, "d5": 0})
    dcg = 7 + 3 / 2 + 1 / math.log2(5)
    idcg = 7 + 3 / math.log2(3) + 1 / 2
    got = values(run, qrels, ["nDCG(dcg=exp-log2)@5"])["nDCG(dcg=exp-log2)@5"]
    assert got == pytest.approx(dcg / idcg, rel=1e-12)
    assert round(got, 3) == 0.951
    # a sixth judged document of grade 3 that was not retrieved raises the
    # ideal (7, 7, 3, 1, 0): IDCG@5 = 7 + 4.4165 + 1.5 + 0.4307 = 13.3472
    more = qrels_of({"d1": 3, "d2": 0, "d3": 2, "d4": 1, "d5": 0, "d9": 3})
    idcg_more = 7 + 7 / math.log2(3) + 3 / 2 + 1 / math.log2(5)
    got_more = values(run, more, ["nDCG(dcg=exp-log2)@5"])["nDCG(dcg=exp-log2)@5"]
    assert got_more == pytest.approx(dcg / idcg_more, rel=1e-12)


# --- ERR (Chapelle et al. 2009) -----------------------------------------------------


def test_err_from_its_definition() -> None:
    # ERR = sum_r (1/r) R_r prod_{i<r} (1 - R_i), R(g) = (2^g - 1) / 2^gmax.
    # Grades by rank (2, 0, 1), gmax = 2 (the top grade in the qrels):
    # R = (3/4, 0, 1/4)
    # ERR@3 = 3/4 + (1/4)(0)/2 + (1/4)(1)(1/4)/3 = 0.75 + 0 + 1/48 = 0.770833
    # ERR@2 = 0.75
    # With max_rel=4: R = (3/16, 0, 1/16);
    # ERR@3 = 3/16 + (13/16)(1/16)/3 = 0.1875 + 13/768 = 0.204427
    run = ranked(["d1", "d2", "d3"])
    qrels = qrels_of({"d1": 2, "d2": 0, "d3": 1})
    got = values(run, qrels, ["ERR@3", "ERR@2", "ERR(max_rel=4)@3"])
    assert got == pytest.approx(
        {"ERR@3": 0.75 + 1 / 48, "ERR@2": 0.75, "ERR(max_rel=4)@3": 3 / 16 + 13 / 768},
        rel=1e-12,
    )


# --- trec_eval's worked mini-example (SPEC.md section 7) ---------------------------

SPEC7_QRELS = {"a": 2, "b": 0, "c": -1, "d": 1, "e": -5, "f": 3}
SPEC7_RUN = {"z": 10.0, "c": 9.0, "a": 8.0, "e": 7.0, "b": 6.0, "d": 5.0}
#: trec_eval column -> our metric (rbp and rbp_resid: trec_eval's p = 0.9).
SPEC7_COLUMNS = {
    "num_ret": "NumRet",
    "R": "NumRel",
    "map": "AP",
    "bpref": "Bpref",
    "infAP": "infAP",
    "ndcg": "nDCG",
    "ndcg_cut_3": "nDCG@3",
    "P_2": "P@2",
    "unj_4": "Unjudged@4",
    "rbp": "RBP(p=0.9)",
    "rbp_resid": "RBPResidual(p=0.9)",
}
# The ranking is z c a e b d, labels (NONPOOL, UNJUDGED, 2, UNJUDGED, 0, 1),
# relstring '-.2.01'. E.g. row (none): relevant at ranks 3 and 6 of R = 3, so
# map = (1/3 + 2/6) / 3 = 0.2222; unj_4 = 3 unjudged of 4 = 0.75;
# rbp = (1 - .9)(2/3 .9^2 + 1/3 .9^5) = 0.0737 (levels rescaled by the top 3).
# -J keeps a b d (labels 2, 0, 1): map = (1/1 + 2/3) / 3 = 0.5556.
SPEC7_TABLE = {
    "none": (6, 3, 0.2222, 0.3333, 0.3333, 0.2848, 0.2100, 0.0, 0.75, 0.0737, 0.7943),
    "-J": (3, 3, 0.5556, 0.3333, 0.5556, 0.5250, 0.5250, 0.5, 0.0, 0.0937, 0.0),
    "-l2": (6, 2, 0.1667, 0.5000, 0.2500, 0.2848, 0.2100, 0.0, 0.75, 0.0737, 0.7943),
    "-M3": (3, 3, 0.1111, 0.3333, 0.1667, 0.2100, 0.2100, 0.0, 0.50, 0.0540, 0.9190),
}


def _spec7_metric(name: str, option: str) -> str:
    metric = ie.parse_metric(name)
    params = dict(metric.params)
    if option == "-J":
        params["judged_only"] = True
    if option == "-l2" and "rel" in metric.info.params:
        params["rel"] = 2
    from ireval_df.measures.spec import build_metric

    return str(build_metric(metric.name, params, metric.k))


@pytest.mark.parametrize("option", list(SPEC7_TABLE))
def test_trec_eval_mini_example(option: str) -> None:
    run = pl.DataFrame(
        {"query_id": "1", "doc_id": list(SPEC7_RUN), "score": list(SPEC7_RUN.values())}
    )
    qrels = qrels_of(SPEC7_QRELS, query="1")
    specs = {col: _spec7_metric(name, option) for col, name in SPEC7_COLUMNS.items()}
    got = values(run, qrels, list(specs.values()), depth=3 if option == "-M3" else None)
    for (column, spec), want in zip(specs.items(), SPEC7_TABLE[option], strict=True):
        # the table shows trec_eval's 4 decimals
        assert round(got[spec], 4) == pytest.approx(want, abs=1e-9), (
            option,
            column,
            spec,
        )


# --- interpolated precision: trec_eval 10's lround vs 9.x and the textbook -------


def test_iprec_lround_not_ceil() -> None:
    # R = 7, p = 0.2: x = 1.4. 10.0: c = lround(1.4) = 1; 9.x: (long)(1.4 + 0.9)
    # = 2; textbook: ceil(1.4) = 2. Relevant at ranks 1 and 4 (5 more never
    # retrieved): 10.0 takes max(P@1, P@4) = max(1, 2/4) = 1.0; 9.x and the
    # textbook need 2 relevant: P@4 = 0.5.
    run = ranked(["d1", "d2", "d3", "d4"])
    qrels = qrels_of({"d1": 1, "d4": 1, **{f"r{i}": 1 for i in range(5)}})
    got = values(run, qrels, ["IPrec@0.2", "IPrec(compat=9)@0.2"])
    assert got == pytest.approx(
        {"IPrec@0.2": 1.0, "IPrec(compat=9)@0.2": 0.5}, rel=1e-12
    )


def test_iprec_products_are_ieee_doubles() -> None:
    # R = 3, p = 0.7 (SPEC.md 4.3): 3 * 0.7 = 2.0999999999999996 in double, so
    # lround gives 2, and 9.x's (long)(2.0999999999999996 + 0.9) is 2 as well
    # (the sum is 2.9999999999999996); only the textbook ceil gives 3.
    # Relevant at ranks 1, 2, 6: 2 relevant are reached at P@2 = 1.0, which is
    # what both rules give (the textbook's 3 relevant would give P@6 = 0.5).
    assert 3 * 0.7 + 0.9 < 3
    run = ranked(["d1", "d2", "d3", "d4", "d5", "d6"])
    qrels = qrels_of({"d1": 1, "d2": 1, "d6": 1})
    got = values(run, qrels, ["IPrec@0.7", "IPrec(compat=9)@0.7"])
    assert got == {"IPrec@0.7": 1.0, "IPrec(compat=9)@0.7": 1.0}


def test_iprec_half_rounds_away_from_zero() -> None:
    # R = 5, p = 0.5: lround(2.5) = 3 (Python's round() would give 2).
    # Relevant at ranks 1, 2, 5, 6, 7: 2 relevant by P@2 = 1.0; 3 relevant
    # first at rank 5: max(P@5 = 3/5, P@6 = 4/6, P@7 = 5/7) = 0.7143.
    run = ranked(["d1", "d2", "d3", "d4", "d5", "d6", "d7"])
    qrels = qrels_of({"d1": 1, "d2": 1, "d5": 1, "d6": 1, "d7": 1})
    assert values(run, qrels, ["IPrec@0.5"])["IPrec@0.5"] == pytest.approx(
        5 / 7, rel=1e-12
    )


# --- Rndcg's n = Rp + 1 quirk (SPEC.md 4.3) ------------------------------------------


def test_rndcg_appending_a_document_can_raise_it() -> None:
    # qrels {a: 1, b: 1, c: 0}; run c, x, a: Rp = 2, n = 3 = Rp + 1, so the
    # final term is dropped and B = {2}: DCG@2 / IDCG@2 = 0 -> 0.0000.
    # Adding y at rank 4 (n > Rp + 1) adds DCG@4 / IDCG@2 = 0.5 / 1.6309, and
    # the mean of (0, 0.3066) is 0.1533.
    qrels = qrels_of({"a": 1, "b": 1, "c": 0})
    assert values(ranked(["c", "x", "a"]), qrels, ["Rndcg"])["Rndcg"] == 0.0
    longer = values(ranked(["c", "x", "a", "y"]), qrels, ["Rndcg"])["Rndcg"]
    assert round(longer, 4) == 0.1533


# --- ties and byte order -------------------------------------------------------------


@pytest.mark.parametrize("order", list(itertools.permutations(["d1", "d2", "d3"])))
def test_ties_go_to_the_larger_doc_id_whatever_the_input_order(
    order: tuple[str, ...],
) -> None:
    # three documents with the same score rank by doc_id descending:
    # d3, d2, d1. Only d3 is relevant, so it is at rank 1: nDCG@3 = RR = 1.0.
    run = pl.DataFrame(
        {"query_id": "q", "doc_id": list(order), "score": [1.0, 1.0, 1.0]}
    )
    qrels = qrels_of({"d3": 1, "d1": 0})
    assert values(run, qrels, ["nDCG@3", "RR"]) == {"nDCG@3": 1.0, "RR": 1.0}


@pytest.mark.parametrize(("relevant", "rr"), [("a", 1.0), ("B", 1 / 2), ("A", 1 / 3)])
def test_ties_use_byte_order(relevant: str, rr: float) -> None:
    # byte order: 'a' (0x61) > 'B' (0x42) > 'A' (0x41), so tied documents
    # rank a, B, A (not the case-insensitive or "natural" order)
    run = pl.DataFrame({"query_id": "q", "doc_id": ["A", "a", "B"], "score": [0.5] * 3})
    qrels = qrels_of({relevant: 1})
    assert values(run, qrels, ["RR"])["RR"] == pytest.approx(rr, rel=1e-12)


def test_digit_doc_ids_tie_in_byte_order() -> None:
    # '9' > '100' > '10' as bytes: tied, they rank 9, 100, 10
    run = pl.DataFrame(
        {"query_id": "q", "doc_id": ["10", "100", "9"], "score": [2.0] * 3}
    )
    assert values(run, qrels_of({"10": 1}), ["RR"])["RR"] == pytest.approx(1 / 3)
    assert values(run, qrels_of({"9": 1}), ["RR"])["RR"] == 1.0


def test_rows_are_sorted_by_query_id_in_byte_order() -> None:
    queries = ["a", "9", "B", "100", "10", "A"]
    run = pl.DataFrame({"query_id": queries, "doc_id": "d", "score": 1.0})
    qrels = pl.DataFrame({"query_id": queries, "doc_id": "d", "relevance": 1})
    result = ie.evaluate(run, qrels, ["RR", "P@1"])
    assert result["query_id"].to_list() == [
        q for q in ["10", "100", "9", "A", "B", "a"] for _ in range(2)
    ]
    assert result["metric"].to_list() == ["RR", "P@1"] * 6
