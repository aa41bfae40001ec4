"""The C/W/L user models and Compat on hand-derived cases, and their bad parameters.

Gains are cwl_eval's: ``(clip(grade, min_rel, max_rel) - min_rel) /
(max_rel - min_rel)``, with max_rel the qrels' highest grade by default. The
rankings are padded with gain 0 to rank 1000 and the weights normalised
over all 1000 ranks.
"""

from __future__ import annotations

import math
import warnings

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import IrevalWarning, MetricSpecError


def ranked(docs: list[str]) -> pl.DataFrame:
    n = len(docs)
    return pl.DataFrame(
        {"query_id": "q", "doc_id": docs, "score": [float(n - i) for i in range(n)]}
    )


def qrels_of(grades: dict[str, int]) -> pl.DataFrame:
    return pl.DataFrame(
        {"query_id": "q", "doc_id": list(grades), "relevance": list(grades.values())}
    )


def value(docs: list[str], grades: dict[str, int], metric: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        result = ie.evaluate(ranked(docs), qrels_of(grades), [metric])
    return float(result["value"].item())


# grades 0..2 (top grade 2): a -> 1, b -> 0.5, z -> 0
GRADES = {"a": 2, "b": 1, "z": 0}


def test_bpm_stops_where_the_gain_reaches_t() -> None:
    # gains (0, 0.5, 0.5, 1), T = 1: cumulative 0, 0.5, 1 -> s = 3, 1/3
    grades = {"z": 0, "b": 1, "c": 1, "a": 2}
    assert value(["z", "b", "c", "a"], grades, "BPM@10") == pytest.approx(1 / 3)
    # k = 2 comes first: s = 2, gain 0.5 over 2 documents
    assert value(["z", "b", "c", "a"], grades, "BPM@2") == pytest.approx(0.25)


def test_bpm_reads_past_a_short_ranking_up_to_k_or_1000() -> None:
    # gain 0.5 at rank 1, never T = 1: s = k = 4 (padding), 0.5 / 4
    assert value(["b"], GRADES, "BPM@4") == pytest.approx(0.125)
    # k beyond cwl_eval's depth: s = 1000
    assert value(["b"], GRADES, "BPM@2000") == pytest.approx(0.0005)


def test_sdcg_scales_by_k_documents_of_gain_one() -> None:
    # gains (0.5, 1): (0.5 + 1/log2(3)) / (1 + 1/log2(3) + 1/2 + 1/log2(5))
    ideal = 1 + 1 / math.log2(3) + 0.5 + 1 / math.log2(5)
    want = (0.5 + 1 / math.log2(3)) / ideal
    assert value(["b", "a"], GRADES, "SDCG@4") == pytest.approx(want)
    assert value(["a"], GRADES, "SDCG@1") == 1.0


def test_nerr_stops_at_a_satisfying_document() -> None:
    # gain 1 at rank 1: C(1) = 0 for every NERR, so W(1) = 1
    for spec in ("NERR8@5", "NERR9@5", "NERR10", "NERR11"):
        assert value(["a", "b"], GRADES, spec) == pytest.approx(1.0), spec
    # NERR8@3, gains (0.5, 0, 0.5): weights 1, 0.5, 0.5 -> (0.5 + 0.25) / 2
    grades = {"b": 1, "z": 0, "c": 1, "a": 2}
    assert value(["b", "z", "c"], grades, "NERR8@3") == pytest.approx(0.375)
    # NERR9@3, same gains: weights 1, 0.5/2, 0.5/3 -> (0.5 + 0.5/3 x 0.5) / (17/12)
    want = (0.5 + 0.25 / 3) / (1 + 0.25 + 0.5 / 3)
    assert value(["b", "z", "c"], grades, "NERR9@3") == pytest.approx(want)


def test_inst_with_one_relevant_document_first() -> None:
    # gain 1 at rank 1, T = 1: y_1 = 1 + 2 - 1 = 2, C(1) = 1/4; past rank 1
    # the weights telescope to 1/i^2, so INST = 1 / sum_{i<=1000} 1/i^2
    want = 1 / math.fsum(1 / i**2 for i in range(1, 1001))
    assert value(["a", "z"], GRADES, "INST") == pytest.approx(want, rel=1e-12)


def test_insq_weights_do_not_depend_on_the_gains() -> None:
    # T = 1: W(i) proportional to (2/(i+1))^2; gain 1 at rank 2: 4/9 over the sum
    total = math.fsum((2 / (i + 1)) ** 2 for i in range(1, 1001))
    assert value(["z", "a"], GRADES, "INSQ") == pytest.approx((4 / 9) / total)


def test_min_rel_and_max_rel_clip_and_scale_the_grades() -> None:
    # min_rel=1, max_rel=2: grade 1 -> 0, grade 2 -> 1; NERR8@2 with gains (0, 1)
    assert value(["b", "a"], GRADES, "NERR8(min_rel=1,max_rel=2)@2") == 0.5
    # max_rel=1: grade 2 is clipped to 1, so b and a both gain 1
    assert value(["b", "a"], GRADES, "NERR8(max_rel=1)@2") == 1.0


def test_nothing_relevant_or_retrieved_gives_zero() -> None:
    for spec in ("SDCG@5", "INSQ", "INST", "NERR8@5", "NERR10", "BPM@5", "Compat"):
        assert value(["z", "x"], {"z": 0, "y": 0}, spec) == 0.0, spec


def test_compat_of_the_ideal_ranking_is_one() -> None:
    assert value(["a", "b", "z"], GRADES, "Compat") == pytest.approx(1.0)


def test_compat_ranks_the_ideal_by_grade_then_by_the_run() -> None:
    # ideal [a, b] (grades 2, 1); run [b, a]: D = 2, overlaps 0 then 2:
    # (p x 2/2) / (1 + p x 2/2) with p = 0.5: 1/3
    assert value(["b", "a"], GRADES, "Compat(p=0.5)") == pytest.approx(1 / 3)
    # run [a] alone, unnormalised: D = 2, overlaps 1 then 1:
    # (1 + p/2) / (1 + p), the RBO weights' sum 1 + p
    assert value(["a"], GRADES, "Compat(p=0.5,normalize=false)") == pytest.approx(
        (1 + 0.25) / 1.5
    )


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("INST(T=0)", "T must be > 0"),
        ("BPM(T=-1)@5", "T must be > 0"),
        ("NERR10(p=1)", r"p must be in \(0, 1\)"),
        ("SDCG(min_rel=2,max_rel=1)@5", "must be below max_rel"),
        ("INSQ(min_rel=-1)", "must be >= 0"),
        ("Compat(p=0)", r"p must be in \(0, 1\)"),
    ],
)
def test_bad_parameters_are_named(spec: str, match: str) -> None:
    with pytest.raises(MetricSpecError, match=match):
        value(["a"], GRADES, spec)
