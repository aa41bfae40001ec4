"""diff(): the top k of run and baseline side by side, and the metric deltas it splits."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import NO_SHRINK, Case, cases

import ireval_df as ie
from ireval_df.errors import DataError, IrevalWarning, OptionError

DATA = Path(__file__).resolve().parents[3] / "data"
COLUMNS = [
    "run_id",
    "baseline",
    "query_id",
    "doc_id",
    "rank",
    "baseline_rank",
    "relevance",
    "change",
    "delta_ndcg",
    "delta_p",
]

# Hand-worked case, k = 3.
#   old q1: a 4, b 3, c 2, d 1          -> ranks a1 b2 c3 d4, top 3 {a, b, c}
#   new q1: c 4, e 3, a 3, b 1          -> e and a tie: doc_id descending puts e
#                                          first: c1 e2 a3 b4, top 3 {c, e, a}
#   qrels q1: d 3, a 2, b 1, c 1, f 1, e -1 (pooled, not judged: gain 0)
#   IDCG@3 = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3.5 + 2/log2(3)
#   c: rank 1, was 3: up.      gain 1: (1/log2(2) - 1/log2(4)) / IDCG = 0.5 / IDCG
#   a: rank 3, was 1: down.    gain 2: (2/log2(4) - 2/log2(2)) / IDCG = -1 / IDCG
#   e: rank 2, not retrieved by old: entered, gain 0: 0
#   b: rank 4, was 2: left.    gain 1: -(1/log2(3)) / IDCG;  P: -1/3
#   sorted by min(rank, baseline_rank): c (1; rank 1) a (1; rank 3) e (2) b (2; rank 4)
#   check: DCG old = 2 + 1/log2(3) + 1/2, new = 1 + 0 + 1: delta -(0.5 + 1/log2(3))
#   old q2: x 1; new does not rank q2; qrels q2: x 1 -> x left, -1 (IDCG 1), P -1/3
#   new q3: y 1; old does not rank q3 and the qrels do not judge it -> y entered,
#   relevance and deltas null (evaluate leaves q3 out)
RUNS = pl.DataFrame(
    {
        "run_id": ["old"] * 5 + ["new"] * 5,
        "query_id": ["q1"] * 4 + ["q2"] + ["q1"] * 4 + ["q3"],
        "doc_id": ["a", "b", "c", "d", "x", "c", "e", "a", "b", "y"],
        "score": [4.0, 3.0, 2.0, 1.0, 1.0, 4.0, 3.0, 3.0, 1.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["q1"] * 6 + ["q2", "q4"],
        "doc_id": ["d", "a", "b", "c", "f", "e", "x", "z"],
        "relevance": [3, 2, 1, 1, 1, -1, 1, 1],
    }
)
IDCG = 3.5 + 2 / math.log2(3)


def quiet_diff(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        return ie.diff(*args, **kwargs)


def test_hand_worked_case():
    out = quiet_diff(RUNS, QRELS, baseline="old", k=3)
    assert out.columns == COLUMNS
    assert out.drop("delta_ndcg", "delta_p").rows() == [
        ("new", "old", "q1", "c", 1, 3, 1, "up"),
        ("new", "old", "q1", "a", 3, 1, 2, "down"),
        ("new", "old", "q1", "e", 2, None, -1, "entered"),
        ("new", "old", "q1", "b", 4, 2, 1, "left"),
        ("new", "old", "q2", "x", None, 1, 1, "left"),
        ("new", "old", "q3", "y", 1, None, None, "entered"),
    ]
    want_ndcg = [0.5 / IDCG, -1 / IDCG, 0.0, -1 / math.log2(3) / IDCG, -1.0, None]
    for got, want in zip(out["delta_ndcg"].to_list(), want_ndcg, strict=True):
        assert (
            got == pytest.approx(want, abs=1e-15) if want is not None else got is None
        )
    assert out["delta_p"].to_list() == [0.0, 0.0, 0.0, -1 / 3, -1 / 3, None]
    q1 = out.filter(pl.col("query_id") == "q1")["delta_ndcg"].sum()
    assert q1 == pytest.approx(-(0.5 + 1 / math.log2(3)) / IDCG, abs=1e-15)
    assert out.schema["rank"] == pl.Int64
    assert out.schema["relevance"] == pl.Int32


def test_sums_match_evaluate_on_the_hand_worked_case():
    out = quiet_diff(RUNS, QRELS, baseline="old", k=3)
    assert_sums_match(out, RUNS, QRELS, 3)


def test_default_baseline_is_the_first_run_and_a_query_one_run_lacks_warns():
    with pytest.warns(IrevalWarning, match="ranking on one side only"):
        out = ie.diff(RUNS, QRELS, k=3)
    # "old" comes first in RUNS: new is compared with it
    assert set(out["baseline"]) == {"old"}
    assert set(out["run_id"]) == {"new"}


def test_without_qrels_relevance_and_deltas_are_null():
    out = quiet_diff(RUNS, baseline="old", k=3)
    with_qrels = quiet_diff(RUNS, QRELS, baseline="old", k=3)
    assert (
        out.select("doc_id", "change").rows()
        == with_qrels.select("doc_id", "change").rows()
    )
    for column in ("relevance", "delta_ndcg", "delta_p"):
        assert out[column].null_count() == out.height


def test_several_baselines_queries_and_input_kinds():
    third = RUNS.filter(pl.col("run_id") == "new").with_columns(run_id=pl.lit("z"))
    runs = pl.concat([RUNS, third])
    out = quiet_diff(runs, QRELS, baseline=["new", "old"], k=3)
    # a pair once (new against old is old against new), in input order
    pairs = out.select("run_id", "baseline").unique(maintain_order=True).rows()
    assert pairs == [("old", "new"), ("z", "old"), ("z", "new")]
    # z ranks as new: nothing moves
    assert set(out.filter(run_id="z", baseline="new")["change"]) == {"same"}
    attributes = pl.DataFrame({"qid": ["q1", "q2"], "kind": ["long", "short"]})
    with_kind = quiet_diff(RUNS, QRELS, baseline="old", k=3, queries=attributes)
    assert with_kind.columns == [*COLUMNS, "kind"]
    assert with_kind["kind"].to_list() == ["long"] * 4 + ["short", None]
    as_pandas = quiet_diff(RUNS.to_pandas(), QRELS, baseline="old", k=3)
    assert isinstance(as_pandas, pd.DataFrame)
    renamed = RUNS.rename({"query_id": "topic"})
    same = quiet_diff(
        renamed, QRELS, baseline="old", k=3, columns={"topic": "query_id"}
    )
    assert same.rows() == quiet_diff(RUNS, QRELS, baseline="old", k=3).rows()


def test_errors():
    with pytest.raises(OptionError, match="k must be a positive whole number"):
        ie.diff(RUNS, QRELS, k=0)
    with pytest.raises(OptionError, match="k must be a positive whole number"):
        ie.diff(RUNS, QRELS, k=True)
    with pytest.raises(
        OptionError, match=r"baseline \['nope'\] is not one of the runs"
    ):
        ie.diff(RUNS, QRELS, baseline="nope")
    with pytest.raises(OptionError, match="only one run was given"):
        ie.diff(RUNS.filter(pl.col("run_id") == "old"), QRELS)
    twice = pl.concat([RUNS, RUNS.head(1)])
    with pytest.raises(DataError, match="appear more than once in the same ranking"):
        ie.diff(twice, QRELS)


def assert_sums_match(out, runs, qrels, k):
    """Each (run, baseline, query) of evaluate: the rows' deltas add up to its delta."""
    names = [f"nDCG@{k}", f"P@{k}"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        per_query = ie.evaluate(runs, qrels, names, warn_unjudged=None)
    wide = per_query.pivot(on="metric", index=["run_id", "query_id"], values="value")
    sums = out.group_by("run_id", "baseline", "query_id").agg(
        pl.col("delta_ndcg").sum(), pl.col("delta_p").sum()
    )
    pairs = out.select("run_id", "baseline").unique()
    checked = (
        pairs.join(wide, on="run_id")
        .join(
            wide.rename({"run_id": "baseline"}),
            on=["baseline", "query_id"],
            suffix="_base",
        )
        .join(sums, on=["run_id", "baseline", "query_id"], how="left")
        .with_columns(pl.col("delta_ndcg", "delta_p").fill_null(0.0))
    )
    assert checked.height == pairs.height * wide["query_id"].n_unique()
    for metric, delta in zip(names, ("delta_ndcg", "delta_p"), strict=True):
        error = (checked[metric] - checked[f"{metric}_base"] - checked[delta]).abs()
        assert error.max() is None or error.max() <= 1e-12, checked.filter(
            error > 1e-12
        )


@pytest.mark.parametrize("k", [1, 5, 10, 30])
def test_sums_match_evaluate_on_data(k):
    runs = [str(DATA / "runs" / f"{name}.run") for name in ("bm25", "dense", "hybrid")]
    qrels = str(DATA / "qrels.txt")
    out = quiet_diff(runs, qrels, k=k)
    assert set(out["baseline"]) == {"bm25"}
    assert set(out["change"]) <= {"entered", "left", "up", "down", "same"}
    # every row is in one of the two top k, and the changes agree with the ranks
    top = pl.col("rank").is_not_null() & (pl.col("rank") <= k)
    top_base = pl.col("baseline_rank").is_not_null() & (pl.col("baseline_rank") <= k)
    assert out.filter(~top & ~top_base).height == 0
    assert out.filter((pl.col("change") == "entered") != (top & ~top_base)).height == 0
    assert out.filter((pl.col("change") == "left") != (~top & top_base)).height == 0
    assert_sums_match(out, runs, qrels, k)


@settings(phases=NO_SHRINK, max_examples=25, deadline=None)
@given(
    cases(max_queries=5, max_runs=3).filter(lambda c: len(c.runs) >= 2),
    st.integers(1, 8),
    st.booleans(),
)
def test_sums_match_evaluate_on_generated_cases(case: Case, k: int, last: bool) -> None:
    # ties, unjudged and negative grades, queries one run or the qrels lack
    run, qrels = case.run_frame(), case.qrels_frame()
    baseline = case.run_ids()[-1 if last else 0]
    out = quiet_diff(run, qrels, baseline=baseline, k=k)
    assert set(out["baseline"]) == {baseline}
    assert_sums_match(out, run, qrels, k)
    # the rows of a query are the union of both top k, each document once
    assert not out.select("run_id", "query_id", "doc_id").is_duplicated().any()
