"""ie.similarity(): pairing, options, bad input, and the statistics on its frames."""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import (
    AlignmentError,
    DataError,
    IrevalWarning,
    MetricSpecError,
    OptionError,
)

DATA = Path(__file__).resolve().parents[3] / "data"
RUNS = [DATA / "runs" / f"{name}.run" for name in ("bm25", "dense", "hybrid")]

# two queries; "new" swaps b and c on q1 and ties two documents on q2
RUNS_FRAME = pl.DataFrame(
    {
        "run_id": ["old"] * 5 + ["new"] * 5,
        "query_id": ["q1", "q1", "q1", "q2", "q2"] * 2,
        "doc_id": ["a", "b", "c", "x", "y"] + ["a", "c", "b", "x", "y"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0] + [3.0, 2.0, 1.0, 1.0, 1.0],
    }
)


def test_one_row_per_run_baseline_query_and_measure() -> None:
    out = ie.similarity(RUNS_FRAME, ["RBO", "Jaccard"])
    assert out.columns == ["run_id", "baseline", "query_id", "metric", "value"]
    assert out.select("run_id", "baseline", "query_id", "metric").rows() == [
        ("new", "old", "q1", "RBO"),
        ("new", "old", "q1", "Jaccard"),
        ("new", "old", "q2", "RBO"),
        ("new", "old", "q2", "Jaccard"),
    ]
    # q1: the same documents in another order; q2: the same, tied in "new"
    assert out.filter(pl.col("metric") == "Jaccard")["value"].to_list() == [1.0, 1.0]


def test_identical_runs_have_rbo_one() -> None:
    same = pl.concat(
        [RUNS_FRAME.head(5), RUNS_FRAME.head(5).with_columns(run_id=pl.lit("copy"))]
    )
    out = ie.similarity(
        same, ["RBO", "RBO(ties=b)", "RBO(ties=w)", "Tau", "TauAP", "Overlap@2"]
    )
    assert out["value"].to_list() == pytest.approx([1.0] * out.height)


def test_every_run_against_each_baseline_and_query_attributes() -> None:
    queries = pl.DataFrame({"query_id": ["q1", "q2"], "query_class": ["nav", "info"]})
    third = RUNS_FRAME.head(5).with_columns(run_id=pl.lit("third"))
    out = ie.similarity(
        pl.concat([RUNS_FRAME, third]),
        ["Jaccard"],
        baseline=["old", "new"],
        queries=queries,
    )
    pairs = out.select("run_id", "baseline").unique(maintain_order=True).rows()
    assert pairs == [("new", "old"), ("third", "old"), ("third", "new")]
    assert out["query_class"].to_list()[:2] == ["nav", "info"]


def test_a_query_on_one_side_is_an_empty_ranking_and_is_reported() -> None:
    partial = RUNS_FRAME.filter(
        ~((pl.col("run_id") == "new") & (pl.col("query_id") == "q2"))
    )
    with pytest.warns(
        IrevalWarning,
        match=r"1 \(run, baseline, query\) comparisons have a ranking on one side only",
    ):
        out = ie.similarity(partial, ["RBO", "Jaccard"])
    q2 = dict(out.filter(pl.col("query_id") == "q2").select("metric", "value").rows())
    assert q2 == {"RBO": 0.0, "Jaccard": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        skipped = ie.similarity(partial, ["RBO"], missing="skip")
    assert skipped["query_id"].to_list() == ["q1"]
    with pytest.raises(AlignmentError, match=r"missing='zero'"):
        ie.similarity(partial, ["RBO"], missing="error")


def test_files_in_and_the_bundled_runs() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        out = ie.similarity(RUNS, ["RBO(p=0.9)@100", "Tau@10"])
    assert set(out["run_id"]) == {"dense", "hybrid"}
    assert set(out["baseline"]) == {"bm25"}
    rbo = out.filter(pl.col("metric") == "RBO@100")["value"]
    assert rbo.min() >= 0.0
    assert rbo.max() <= 1.0


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: ie.similarity(RUNS_FRAME, ["RBO(p=1.5)"]),
            MetricSpecError,
            r"p must be in \(0, 1\), found 1.5",
        ),
        (
            lambda: ie.similarity(RUNS_FRAME, ["RBO(p=0)"]),
            MetricSpecError,
            r"p must be in \(0, 1\)",
        ),
        (
            lambda: ie.similarity(RUNS_FRAME, ["Overlap@0"]),
            MetricSpecError,
            r"the cutoff must be positive",
        ),
        (
            lambda: ie.similarity(RUNS_FRAME, ["Overlap"]),
            MetricSpecError,
            r"needs a cutoff",
        ),
        (
            lambda: ie.similarity(RUNS_FRAME, ["nDCG@10"]),
            MetricSpecError,
            r"'nDCG@10' is an offline measure.*use ireval_df.evaluate",
        ),
        (
            lambda: ie.similarity(RUNS_FRAME, ["RBO"], baseline="nope"),
            OptionError,
            r"baseline \['nope'\] is not one of the runs",
        ),
        (
            lambda: ie.similarity(RUNS_FRAME.head(5), ["RBO"]),
            OptionError,
            r"only one run was given",
        ),
        (
            lambda: ie.similarity(RUNS_FRAME, ["RBO"], missing="drop"),
            OptionError,
            r"missing='drop' is not one of",
        ),
    ],
)
def test_bad_input_says_what_and_how(call, error, match) -> None:
    with pytest.raises(error, match=match):
        call()


def test_a_document_twice_in_a_ranking_is_an_error_unless_a_policy_says() -> None:
    repeated = pl.concat(
        [RUNS_FRAME, RUNS_FRAME.head(1).with_columns(score=pl.lit(0.5))]
    )
    with pytest.raises(DataError, match=r"appear more than once in the same ranking"):
        ie.similarity(repeated, ["RBO"])
    with pytest.warns(IrevalWarning, match=r"duplicates='max'"):
        out = ie.similarity(repeated, ["Jaccard"], duplicates="max")
    assert out.height == 2


def test_evaluate_refuses_a_similarity_measure() -> None:
    qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(
        MetricSpecError,
        match=r"'RBO' is a similarity measure.*use ireval_df.similarity",
    ):
        ie.evaluate(RUNS_FRAME, qrels, ["RBO"])


def test_summarize_compare_and_report_take_a_similarity_frame() -> None:
    third = RUNS_FRAME.filter(pl.col("run_id") == "new").with_columns(
        run_id=pl.lit("third")
    )
    out = ie.similarity(pl.concat([RUNS_FRAME, third]), ["RBO", "Jaccard"])
    summary = ie.summarize(out, ci="t")
    assert summary.columns[:3] == ["run_id", "baseline", "metric"]
    assert summary.height == 4
    compared = ie.compare(out, baseline="new")
    # the similarity baseline is a slice of the comparison: "reference"
    assert compared.select("run_id", "baseline", "reference").unique().rows() == [
        ("third", "new", "old")
    ]
    assert "RBO" in ie.to_markdown(summary)
