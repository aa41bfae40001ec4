"""failures(): candidate failures (never retrieved) vs scoring failures (below k)."""

from __future__ import annotations

import polars as pl
import pytest

from ireval_df.diagnostics import failures
from ireval_df.errors import IrevalError, SchemaError

# Run "r" on query 1 ranks a, b, c, d (scores 4..1); on query 2 only x.
# Qrels: query 1 relevant c (rank 3), d (rank 4), z (never retrieved), a grade 0;
#        query 2 relevant y (never retrieved); query 3 only non-relevant; query 4
#        relevant w, and run "r" did not answer query 4.
RUN = pl.DataFrame(
    {
        "run_id": "r",
        "query_id": ["1", "1", "1", "1", "2"],
        "doc_id": ["a", "b", "c", "d", "x"],
        "score": [4.0, 3.0, 2.0, 1.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["1", "1", "1", "1", "2", "3", "4"],
        "doc_id": ["c", "d", "z", "a", "y", "q", "w"],
        "relevance": [1, 2, 1, 0, 1, 0, 3],
    }
)
QUERIES = pl.DataFrame({"query_id": ["1", "2", "3", "4"], "cls": ["x", "x", "y", "y"]})


def test_per_query_counts_and_classes():
    out = failures(RUN, QRELS, k=3)
    assert out.columns == [
        "run_id",
        "query_id",
        "n_relevant",
        "n_top_k",
        "n_below_k",
        "n_not_retrieved",
        "failure",
    ]
    assert out.select(
        "query_id", "n_relevant", "n_top_k", "n_below_k", "n_not_retrieved", "failure"
    ).rows() == [
        ("1", 3, 1, 1, 1, "found"),
        ("2", 1, 0, 0, 1, "candidate"),
        ("3", 0, 0, 0, 0, "no_relevant"),
        ("4", 1, 0, 0, 1, "candidate"),
    ]
    # at k=2 query 1 has its relevant documents only below the cutoff
    assert failures(RUN, QRELS, k=2).row(0, named=True)["failure"] == "scoring"
    # rel=2: only d counts on query 1
    assert failures(RUN, QRELS, k=3, rel=2).row(0, named=True)["n_relevant"] == 1


def test_summary_by_slice():
    out = failures(RUN, QRELS, k=3, queries=QUERIES, by="cls")
    rows = out.rows(named=True)
    assert [r["cls"] for r in rows] == ["x", "y"]
    x, y = rows
    assert (
        x["n_queries"],
        x["n_relevant"],
        x["n_top_k"],
        x["n_below_k"],
        x["n_not_retrieved"],
    ) == (2, 4, 1, 1, 2)
    assert x["scoring_failure_rate"] == 0.25
    assert x["candidate_failure_rate"] == 0.5
    assert (x["queries_found"], x["queries_candidate"], y["queries_no_relevant"]) == (
        1,
        1,
        1,
    )
    overall = failures(RUN, QRELS, k=3, by=[])
    assert overall.height == 1
    assert overall["n_relevant"].item() == 5
    per_query = failures(RUN, QRELS, k=3, queries=QUERIES)
    assert per_query["cls"].to_list() == ["x", "x", "y", "y"]


def test_errors():
    with pytest.raises(IrevalError, match="k must be a positive whole number"):
        failures(RUN, QRELS, k=0)
    with pytest.raises(IrevalError, match="rel must be a positive whole number"):
        failures(RUN, QRELS, rel=True)
    with pytest.raises(IrevalError, match=r"needs queries="):
        failures(RUN, QRELS, by="cls")
    with pytest.raises(
        SchemaError, match=r"by column\(s\) \['lang'\] are not in the queries"
    ):
        failures(RUN, QRELS, queries=QUERIES, by="lang")
