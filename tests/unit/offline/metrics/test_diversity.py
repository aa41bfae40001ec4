"""Diversity measures on hand-derived cases (Clarke et al. 2008, 2009; Agrawal et al. 2009).

The running example: intents 1, 2, 3 (M = 3); document ``a`` is relevant to
1 and 2, ``b`` to 1, ``c`` to 3, ``d`` judged for intent 1 but not
relevant; the run ranks a, b, c, u (``u`` unjudged). With alpha = 0.5 the
novelty gains are G = (2, 0.5, 1, 0): ``b`` repeats intent 1 (already
covered once), ``c`` is the first for intent 3.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.cli.main import main
from ireval_df.errors import IrevalWarning, MetricSpecError, SchemaError

if TYPE_CHECKING:
    from pathlib import Path

QRELS = pl.DataFrame(
    {
        "query_id": "q",
        "intent": ["1", "2", "1", "3", "1"],
        "doc_id": ["a", "a", "b", "c", "d"],
        "relevance": [1, 1, 1, 2, 0],
    }
)
RUN = pl.DataFrame(
    {"query_id": "q", "doc_id": ["a", "b", "c", "u"], "score": [4.0, 3.0, 2.0, 1.0]}
)
LOG3 = math.log2(3)


def values(
    run: pl.DataFrame, qrels: pl.DataFrame, metrics: list[str]
) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        frame = ie.evaluate(run, qrels, metrics)
    return {m: v for _, _, m, v in frame.rows()}


def test_the_running_example() -> None:
    got = values(
        RUN,
        QRELS,
        ["alpha_nDCG@3", "alpha_DCG@3", "ERR_IA@3", "nERR_IA@3", "NRBP", "nNRBP",
         "AP_IA", "P_IA@3", "StRecall@2", "StRecall@3"],
    )  # fmt: skip
    # alpha-DCG@3 = 2/1 + 0.5/log2 3 + 1/2; the greedy ideal takes a (2), then
    # c (1, a new intent) over b (0.5), then b: 2 + 1/log2 3 + 0.5/2
    dcg = 2 + 0.5 / LOG3 + 0.5
    assert got["alpha_nDCG@3"] == pytest.approx(dcg / (2 + 1 / LOG3 + 0.25), rel=1e-12)
    # the ideal ideal: M (1 + 0.5 / log2 3 + 0.25 / 2)
    assert got["alpha_DCG@3"] == pytest.approx(dcg / (3 * (1 + 0.5 / LOG3 + 0.125)))
    # ERR-IA@3: (2 + 0.5/2 + 1/3) / (3 (1 + 0.5/2 + 0.25/3)) = 2.5833 / 4
    assert got["ERR_IA@3"] == pytest.approx((2 + 0.25 + 1 / 3) / 4, rel=1e-12)
    # nERR-IA@3: over the ideal's 2 + 1/2 + 0.5/3
    assert got["nERR_IA@3"] == pytest.approx((2 + 0.25 + 1 / 3) / (2.5 + 0.5 / 3))
    # NRBP: (1 - 0.5 * 0.5) / 3 * (2 + 0.5 * 0.5 + 1 * 0.25 + 0) = 0.625
    assert got["NRBP"] == pytest.approx(0.625, rel=1e-12)
    # nNRBP: the same sum over the greedy ideal's (a, c, b: G = 2, 1, 0.5),
    # (2 + 0.25 + 0.25) / (2 + 0.5 + 0.125); the factor (1 - 0.25) / 3 cancels
    assert got["nNRBP"] == pytest.approx(2.5 / 2.625, rel=1e-12)
    # AP per intent: 1 (a, b at 1, 2: (1 + 1) / 2), 2 (a at 1), 3 (c at 3: 1/3)
    assert got["AP_IA"] == pytest.approx((1 + 1 + 1 / 3) / 3, rel=1e-12)
    # P-IA@3: 4 (document, intent) hits over k M = 9
    assert got["P_IA@3"] == pytest.approx(4 / 9, rel=1e-12)
    assert got["StRecall@2"] == pytest.approx(2 / 3, rel=1e-12)
    assert got["StRecall@3"] == 1.0


def test_cutoffs_beyond_the_ranking() -> None:
    got = values(RUN, QRELS, ["P_IA@3", "P_IA@20", "StRecall@20", "alpha_nDCG@20"])
    # P-IA keeps dividing by k (as P); the rest stop growing after rank 4
    assert got["P_IA@20"] == pytest.approx(got["P_IA@3"] * 3 / 20, rel=1e-12)
    assert got["StRecall@20"] == 1.0
    # alpha-nDCG@20: the ranking's whole gain over the whole greedy ideal's
    ideal = 2 + 1 / LOG3 + 0.5 / 2
    assert got["alpha_nDCG@20"] == pytest.approx((2 + 0.5 / LOG3 + 0.5) / ideal)


def test_nnrbp_reads_the_whole_ideal_ranking() -> None:
    # beta = 1: every rank counts fully. The run a, c finds G = 2 + 1 of the
    # ideal's 2 + 1 + 0.5 (b, the third, is beyond the run). beta = 0.9 and
    # the run c alone: 1 over 2 + 0.9 + 0.5 * 0.81 (the ideal's three ranks).
    ac = RUN.filter(pl.col("doc_id").is_in(["a", "c"]))
    c = RUN.filter(pl.col("doc_id") == "c")
    assert values(ac, QRELS, ["nNRBP(beta=1)"]) == {
        "nNRBP(beta=1)": pytest.approx(3 / 3.5, rel=1e-12)
    }
    assert values(c, QRELS, ["nNRBP(beta=0.9)"]) == {
        "nNRBP(beta=0.9)": pytest.approx(1 / (2 + 0.9 + 0.405), rel=1e-12)
    }
    # the greedy ideal itself scores 1
    ideal = pl.DataFrame(
        {"query_id": "q", "doc_id": ["a", "c", "b"], "score": [3.0, 2.0, 1.0]}
    )
    assert values(ideal, QRELS, ["nNRBP"]) == {"nNRBP": 1.0}


def test_alpha_one_counts_each_intent_once() -> None:
    # alpha = 1: a repeat is worth nothing; alpha-nDCG is a discounted
    # subtopic recall. G = (2, 0, 1, 0); the ideal: a (2), c (1).
    got = values(RUN, QRELS, ["alpha_nDCG(alpha=1)@3"])
    assert got["alpha_nDCG(alpha=1)@3"] == pytest.approx(
        (2 + 0.5) / (2 + 1 / LOG3), rel=1e-12
    )


def test_judged_only_drops_the_unjudged_before_ranking() -> None:
    run = pl.DataFrame({"query_id": "q", "doc_id": ["u", "c"], "score": [2.0, 1.0]})
    got = values(run, QRELS, ["StRecall@1", "StRecall(judged_only=true)@1"])
    assert got == {"StRecall@1": 0.0, "StRecall(judged_only=true)@1": 1 / 3}


def test_nothing_relevant_and_nothing_retrieved_score_zero() -> None:
    # q2 has judgments but no relevant one; q3 is not in the run
    qrels = pl.concat(
        [
            QRELS,
            pl.DataFrame(
                {"query_id": "q2", "intent": "1", "doc_id": ["a"], "relevance": [0]}
            ),
            pl.DataFrame(
                {"query_id": "q3", "intent": "1", "doc_id": ["a"], "relevance": [1]}
            ),
        ]
    )
    run = pl.concat(
        [RUN, pl.DataFrame({"query_id": "q2", "doc_id": ["a"], "score": [1.0]})]
    )
    specs = ["alpha_nDCG@5", "alpha_DCG@5", "ERR_IA@5", "nERR_IA@5", "NRBP", "nNRBP",
             "AP_IA", "P_IA@5", "StRecall@5", "nDCG_IA@5"]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        frame = ie.evaluate(run, qrels, specs)
    assert frame.filter(pl.col("query_id") != "q")["value"].to_list() == [0.0] * 20


def test_intent_aware_ndcg_with_one_intent_is_ndcg() -> None:
    qrels = pl.DataFrame(
        {"query_id": "q", "doc_id": ["a", "b", "c", "d"], "relevance": [2, 0, 3, 1]}
    )
    run = pl.DataFrame(
        {
            "query_id": "q",
            "doc_id": ["b", "a", "x", "d", "c"],
            "score": [5.0, 4, 4, 2, 1],
        }
    )
    plain = values(run, qrels, ["nDCG@3", "nDCG@10"])
    aware = values(
        run, qrels.with_columns(intent=pl.lit("only")), ["nDCG_IA@3", "nDCG_IA@10"]
    )
    assert aware["nDCG_IA@3"] == pytest.approx(plain["nDCG@3"], rel=1e-12)
    assert aware["nDCG_IA@10"] == pytest.approx(plain["nDCG@10"], rel=1e-12)


def test_intent_aware_ndcg_averages_the_intents() -> None:
    # intent 1: a (1), b (1); ranking a, b, c: nDCG_1@3 = 1. Intent 2: c (2)
    # at rank 3: (2 / 2) / 2 = 0.5. Intent 3 (only d, not relevant) is left out.
    qrels = pl.DataFrame(
        {"query_id": "q", "intent": ["1", "1", "2", "3"], "doc_id": ["a", "b", "c", "d"],
         "relevance": [1, 1, 2, 0]}
    )  # fmt: skip
    run = pl.DataFrame(
        {"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2, 1]}
    )
    assert values(run, qrels, ["nDCG_IA@3"])["nDCG_IA@3"] == pytest.approx(0.75)


def test_the_other_measures_see_each_documents_highest_grade() -> None:
    # a is graded 1 and 2 for two intents: P(rel=2) counts it
    qrels = pl.DataFrame(
        {
            "query_id": "q",
            "intent": ["1", "2"],
            "doc_id": ["a", "a"],
            "relevance": [1, 2],
        }
    )
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    assert values(run, qrels, ["P(rel=2)@1"]) == {"P(rel=2)@1": 1.0}


def test_buckets_never_change_the_values() -> None:
    qrels = pl.concat([QRELS.with_columns(query_id=pl.lit(f"q{i}")) for i in range(6)])
    run = pl.concat([RUN.with_columns(query_id=pl.lit(f"q{i}")) for i in range(6)])
    specs = ["alpha_nDCG@3", "NRBP", "AP_IA", "nDCG_IA@2"]
    one = ie.evaluate(run, qrels, specs, buckets=1)
    three = ie.evaluate(run, qrels, specs, buckets=3)
    assert one.equals(three)


def test_without_intents_the_error_names_the_column_and_the_fix() -> None:
    qrels = QRELS.drop("intent").unique(["query_id", "doc_id"])
    with pytest.raises(
        SchemaError,
        match=r"'alpha_nDCG@10', 'NRBP': diversity measures need judgments per "
        r"intent .* no 'intent' column\.\n  Hint: .*read_qrels\(path, intents=True\)",
    ):
        ie.evaluate(RUN, qrels, ["nDCG@10", "alpha_nDCG@10", "NRBP"])


@pytest.mark.parametrize(
    "spec", ["alpha_nDCG(alpha=1.5)@5", "NRBP(beta=-0.1)", "nNRBP(alpha=2)"]
)
def test_alpha_and_beta_are_probabilities(spec: str) -> None:
    with pytest.raises(MetricSpecError, match=r"must be in \[0, 1\]"):
        ie.parse_metric(spec)


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("alpha-nDCG@20", "alpha_nDCG@20"),
        ("ERR-IA@20", "ERR_IA@20"),
        ("nERR-IA@10", "nERR_IA@10"),
        ("alpha-DCG@5", "alpha_DCG@5"),
        ("P-IA@10", "P_IA@10"),
        ("strec@10", "StRecall@10"),
        ("MAP-IA", "AP_IA"),
        ("MAP_IA", "AP_IA"),
        ("nnrbp", "nNRBP"),
    ],
)
def test_ndeval_and_ir_measures_names_parse(spelling: str, name: str) -> None:
    assert str(ie.parse_metric(spelling)) == name


# --- the command line ----------------------------------------------------------


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_reads_trec_diversity_qrels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels.diversity.txt"
    qrels.write_text(
        "".join(f"q {i} {d} {g}\n" for q, i, d, g in QRELS.select(
            "query_id", "intent", "doc_id", "relevance").rows())
    )  # fmt: skip
    run = tmp_path / "a.run"
    run.write_text(
        "".join(f"q Q0 {d} {r} {s} a\n" for r, (_, d, s) in enumerate(RUN.rows(), 1))
    )
    base = ["evaluate", "--run", str(run), "--qrels", str(qrels), "-m", "NRBP"]
    code, out, _ = _cli([*base, "--qrels-intents"], capsys)
    assert code == 0
    assert out.splitlines()[1].split() == ["a", "0.6250", "1"]
    code, _, err = _cli(base, capsys)  # read as trec_eval qrels: no intents
    assert code == 1
    assert "--qrels-intents" in err
