"""The bundled data keeps showing every failure kind (data/README.md says where).

``data/make_example.py`` draws the documents table, the ``rerank`` stage and
the intents so that each kind of :func:`ireval_df.failures` occurs; a change
to the script that loses one fails here, not silently in the notebook.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl

import ireval_df as ie
from ireval_df.diagnostics.failure_kinds import FAILURES

DATA = Path(__file__).resolve().parents[2] / "data"
STAGES = [str(DATA / "runs" / "bm25.run"), str(DATA / "runs" / "rerank.run")]


def _failures() -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every document is in docs.tsv
        return ie.failures(
            STAGES,
            DATA / "qrels_intents.tsv",
            docs=DATA / "docs.tsv",
            stages=["bm25", "rerank"],
            stage_depth=50,
        )


def test_every_failure_kind_occurs():
    found = _failures()
    rerank = found.filter(pl.col("run_id") == "rerank")
    for count in (
        "n_candidate",
        "n_scoring",
        "n_dropped",
        "n_inverted_pairs",
        "n_calibration_pairs",
        "n_freshness_pairs",
    ):
        assert rerank[count].sum() > 0, count
    assert rerank["intent_failure"].any()
    assert set(found["failure"]) == set(FAILURES)


def test_intent_qrels_are_the_qrels_with_intents():
    intents = pl.read_csv(
        DATA / "qrels_intents.tsv", separator="\t", schema_overrides={"query_id": str}
    )
    assert intents["intent"].null_count() == 0
    collapsed = intents.group_by("query_id", "doc_id").agg(pl.col("relevance").max())
    qrels = ie.read_qrels(DATA / "qrels.txt")
    assert (
        collapsed.sort("query_id", "doc_id").rows()
        == qrels.sort("query_id", "doc_id").rows()
    )


def test_documents_have_ages_and_the_leak_is_there():
    docs = ie.read_docs(DATA / "docs.tsv")
    assert docs["published_at"].null_count() == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dense lacks 42; 151 and 152 are unjudged
        shares = ie.evaluate(
            STAGES[0],
            DATA / "qrels.txt",
            "Share@10",
            docs=docs,
            by_doc=ie.age_buckets(),
            queries=DATA / "queries.tsv",
        )
    seen = shares.filter(pl.col("value") > 0)
    assert "future" in set(seen["age_bucket"].cast(pl.String))
    assert "unknown" not in set(shares["age_bucket"].cast(pl.String))
