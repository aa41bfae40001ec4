"""failures(): every kind of failure, hand-derived; trace(); bad input."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.diagnostics import failures
from ireval_df.errors import (
    DataError,
    IrevalError,
    IrevalWarning,
    OptionError,
    SchemaError,
)

COUNTS = [
    "n_relevant",
    "n_top_k",
    "n_candidate",
    "n_scoring",
    "n_dropped",
    "n_inverted_pairs",
    "n_calibration_pairs",
    "n_freshness_pairs",
]

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


def test_per_query_counts_and_kinds():
    out = failures(RUN, QRELS, k=3)
    assert out.columns == [
        "run_id",
        "query_id",
        *COUNTS,
        "intent_failure",
        "failure",
    ]
    # query 1 at k=3: c in the top 3, d below it, z never retrieved; a (grade 0,
    # rank 1) above c (grade 1, rank 3) is one inverted pair (b is unjudged).
    # One candidate and one scoring failure: the tie goes to candidate.
    assert out.select("query_id", *COUNTS[:6], "failure").rows() == [
        ("1", 3, 1, 1, 1, 0, 1, "candidate"),
        ("2", 1, 0, 1, 0, 0, 0, "candidate"),
        ("3", 0, 0, 0, 0, 0, 0, "no_relevant"),
        ("4", 1, 0, 1, 0, 0, 0, "candidate"),
    ]
    # no document attributes, no intents: those columns are null
    assert out["n_calibration_pairs"].null_count() == out.height
    assert out["n_freshness_pairs"].null_count() == out.height
    assert out["intent_failure"].null_count() == out.height
    # at k=2 query 1 has c and d below the cutoff: scoring (2) beats candidate (1)
    first = failures(RUN, QRELS, k=2).row(0, named=True)
    assert (first["n_scoring"], first["n_candidate"], first["failure"]) == (
        2,
        1,
        "scoring",
    )
    # rel=2: only d counts on query 1
    assert failures(RUN, QRELS, k=3, rel=2).row(0, named=True)["n_relevant"] == 1


# Query 1: ranks 1..4 hold grades 0, 2, 1, 3; rank 5 a pooled-unjudged document
# (-1), rank 6 one absent from the qrels, rank 7 'deep', grade 2.
PAIRS_RUN = pl.DataFrame(
    {
        "query_id": "1",
        "doc_id": ["g0", "g2", "g1", "g3", "u", "deep", "pooled"],
        "score": [7.0, 6.0, 5.0, 4.0, 2.0, 1.0, 3.0],
    }
)
PAIRS_QRELS = pl.DataFrame(
    {
        "query_id": "1",
        "doc_id": ["g0", "g2", "g1", "g3", "deep", "pooled"],
        "relevance": [0, 2, 1, 3, 2, -1],
    }
)


def test_inverted_pairs_are_judged_pairs_of_the_top_k_in_the_wrong_order():
    # top 5: g0 (0), g2 (2), g1 (1), g3 (3), pooled (-1: not judged);
    # inverted: g0<g2, g0<g1, g0<g3, g2<g3, g1<g3 = 5 (g2 above g1 is right)
    row = failures(PAIRS_RUN, PAIRS_QRELS, k=5).row(0, named=True)
    assert row["n_inverted_pairs"] == 5
    # 'deep' is relevant and retrieved below k: a scoring failure, which
    # outranks inverted pairs as the dominant kind
    assert (row["n_scoring"], row["failure"]) == (1, "scoring")
    # k=7 brings 'deep' (2) in at rank 7 below g1 (1) and g0 (0): 7 pairs, and
    # with nothing lost, the pairs are the dominant kind
    row = failures(PAIRS_RUN, PAIRS_QRELS, k=7).row(0, named=True)
    assert (row["n_inverted_pairs"], row["n_top_k"], row["failure"]) == (
        7,
        4,
        "inverted",
    )
    # ties in grade are no inversion: all grades equal -> no pair
    flat = PAIRS_QRELS.with_columns(relevance=pl.lit(1))
    assert failures(PAIRS_RUN, flat, k=7)["n_inverted_pairs"].item() == 0


# A pipeline: bm25 ranks a..e, the reranker re-orders bm25's top and puts e, a,
# c first (c at rank 3), and leaves b and d out. Qrels: a 1, c 2, d 1, z 1
# (never retrieved), e 0. Another run, "dense", is not a stage.
STAGE_RUNS = pl.DataFrame(
    {
        "run_id": ["bm25"] * 5 + ["rerank"] * 3 + ["dense"],
        "query_id": "1",
        "doc_id": ["a", "b", "c", "d", "e", "e", "a", "c", "c"],
        "score": [5.0, 4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0, 1.0],
    }
)
STAGE_QRELS = pl.DataFrame(
    {"query_id": "1", "doc_id": ["a", "c", "d", "z", "e"], "relevance": [1, 2, 1, 1, 0]}
)


def _rows(out: pl.DataFrame) -> dict[str, tuple[int, ...]]:
    return {
        r["run_id"]: tuple(r[c] for c in COUNTS[:5]) for r in out.iter_rows(named=True)
    }


def test_dropped_documents_are_counted_on_the_last_stage_only():
    out = failures(STAGE_RUNS, STAGE_QRELS, k=2, stages=["bm25", "rerank"])
    # rerank (k=2): a found; c (bm25 rank 3, rerank rank 3) and d (bm25 rank 4,
    # not reranked) dropped; z never retrieved by anyone: candidate.
    # bm25 and dense keep their own kinds: bm25 finds a, has c and d below k;
    # dense has c at rank 1 and misses a, d, z.
    assert _rows(out) == {
        "bm25": (4, 1, 1, 2, 0),
        "dense": (4, 1, 3, 0, 0),
        "rerank": (4, 1, 1, 0, 2),
    }
    assert out.filter(pl.col("run_id") == "rerank")["failure"].item() == "dropped"
    # stage_depth=3: bm25 hands on a, b, c only, so d was never the
    # reranker's to lose: a candidate failure of the last stage
    deep = failures(
        STAGE_RUNS, STAGE_QRELS, k=2, stages=["bm25", "rerank"], stage_depth=3
    )
    assert _rows(deep)["rerank"] == (4, 1, 2, 0, 1)
    # every kind adds up to the relevant documents
    for counts in [*_rows(out).values(), *_rows(deep).values()]:
        assert counts[0] == sum(counts[1:])


def test_trace_shows_every_stage_and_where_the_document_was_lost():
    traced = ie.trace(STAGE_RUNS, STAGE_QRELS, stages=["bm25", "rerank"], k=2)
    assert traced.columns == [
        "query_id",
        "doc_id",
        "relevance",
        "bm25",
        "rerank",
        "lost_at",
    ]
    # sorted by the last stage's rank (not retrieved last), then the first's
    assert traced.rows() == [
        ("1", "a", 1, 1, 2, None),
        ("1", "c", 2, 3, 3, "rerank"),
        ("1", "d", 1, 4, None, "rerank"),
        ("1", "z", 1, None, None, "bm25"),
    ]
    deep = ie.trace(
        STAGE_RUNS, STAGE_QRELS, stages=["bm25", "rerank"], k=2, stage_depth=3
    )
    assert deep.filter(pl.col("doc_id") == "d")["lost_at"].item() == "bm25"
    one = ie.trace(STAGE_RUNS, STAGE_QRELS, stages=["bm25", "rerank"], query_id="1")
    assert one.height == 4


def test_trace_with_three_stages_names_the_stage_after_the_last_keeper():
    # c: kept by s1, missed by s2, ranked below k by s3 -> lost at s2;
    # d: missed by s1, kept by s2, missed by s3 -> lost at s3;
    # e: missed by s1 and s2, ranked below k by s3 -> lost at s1 (a candidate
    # or scoring failure of the last stage, not dropped)
    runs = pl.DataFrame(
        {
            "run_id": ["s1", "s1", "s2", "s2", "s3", "s3", "s3"],
            "query_id": "1",
            "doc_id": ["a", "c", "a", "d", "a", "c", "e"],
            "score": [2.0, 1.0, 2.0, 1.0, 3.0, 2.0, 1.0],
        }
    )
    qrels = pl.DataFrame(
        {"query_id": "1", "doc_id": ["a", "c", "d", "e"], "relevance": 1}
    )
    stages = ["s1", "s2", "s3"]
    traced = ie.trace(runs, qrels, stages=stages, k=1)
    lost = dict(zip(traced["doc_id"], traced["lost_at"], strict=True))
    assert lost == {"a": None, "c": "s2", "d": "s3", "e": "s1"}
    row = failures(runs, qrels, k=1, stages=stages).filter(pl.col("run_id") == "s3")
    assert row.select(COUNTS[:5]).row(0) == (4, 1, 0, 1, 2)


# Qrels with intents: query 1 has intent x (a, b relevant) and y (c, grade 2;
# a also relevant to y); query 2 ties x (e) and y (f); query 3 judges only
# grade 0, so it has no primary intent; query 4's rows have no intent.
INTENT_QRELS = pl.DataFrame(
    {
        "query_id": ["1", "1", "1", "1", "2", "2", "3", "4"],
        "doc_id": ["a", "b", "c", "a", "e", "f", "g", "h"],
        "relevance": [1, 1, 2, 1, 1, 1, 0, 1],
        "intent": ["x", "x", "y", "y", "x", "y", "x", None],
    }
)
INTENT_RUN = pl.DataFrame(
    {
        "query_id": ["1", "1", "1", "1", "2", "2", "3", "4"],
        "doc_id": ["c", "d", "b", "a", "f", "e", "g", "h"],
        "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0, 1.0, 1.0],
    }
)


def _intent(out: pl.DataFrame) -> dict[str, bool | None]:
    return dict(zip(out["query_id"], out["intent_failure"], strict=True))


def test_intent_failure_when_the_top_k_serves_only_another_intent():
    with pytest.warns(IrevalWarning, match=r"1 row\(s\) without an 'intent'"):
        out = failures(INTENT_RUN, INTENT_QRELS, k=2)
    # query 1: x has a, b relevant, y has c, a: a tie, so both are primary,
    # and c (y) in the top 2 serves one of them
    assert _intent(out) == {"1": False, "2": False, "3": None, "4": None}
    # a document's grade for the other kinds is its highest over its intents
    assert out.filter(pl.col("query_id") == "1")["n_relevant"].item() == 3
    # without a's row for y, y has only c: x (a, b) is the primary intent
    qrels = INTENT_QRELS.filter(
        ~(
            (pl.col("query_id") == "1")
            & (pl.col("intent") == "y")
            & (pl.col("doc_id") == "a")
        )
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        out = failures(INTENT_RUN, qrels, k=2)
        row = out.filter(pl.col("query_id") == "1").row(0, named=True)
        # top 2 = c (relevant to y only), d (not judged): y served, x not
        assert (row["intent_failure"], row["failure"]) == (True, "intent")
        # k=3 brings b (x) in
        at3 = failures(INTENT_RUN, qrels, k=3)
        assert _intent(at3)["1"] is False
        # weights make y primary: no intent failure at k=2
        weights = pl.DataFrame(
            {"query_id": ["1", "1"], "intent": ["x", "y"], "weight": [1, 5]}
        )
        weighed = failures(INTENT_RUN, qrels, k=2, intents=weights)
        assert _intent(weighed)["1"] is False
    # query 2 ties x and y: f (y) at rank 1 serves a primary intent
    assert _intent(out)["2"] is False


def test_intents_table_that_misses_a_query_falls_back_with_a_warning():
    weights = pl.DataFrame({"query_id": ["1"], "intent": ["y"], "weight": [1.0]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        failures(INTENT_RUN, INTENT_QRELS, k=2, intents=weights)
    messages = [str(w.message) for w in caught]
    assert any("lists no weight for 1 quer(ies)" in m for m in messages), messages


def test_qrels_judging_a_document_for_several_intents_from_a_file(tmp_path):
    path = tmp_path / "qrels.csv"
    INTENT_QRELS.filter(pl.col("intent").is_not_null()).rename(
        {"query_id": "qid", "intent": "subtopic"}
    ).write_csv(path)
    out = failures(INTENT_RUN, path, k=2)
    assert _intent(out) == {"1": False, "2": False, "3": None}


def test_summary_by_slice():
    out = failures(RUN, QRELS, k=3, queries=QUERIES, by="cls")
    rows = out.rows(named=True)
    assert [r["cls"] for r in rows] == ["x", "y"]
    x, y = rows
    # slice x = queries 1 and 2: 4 relevant, 1 found, 1 scoring, 2 candidate
    assert tuple(x[c] for c in ["n_queries", *COUNTS[:6]]) == (2, 4, 1, 2, 1, 0, 1)
    assert (x["candidate_rate"], x["scoring_rate"], x["dropped_rate"]) == (
        0.5,
        0.25,
        0.0,
    )
    # one of the two queries has an inverted pair; no document attributes
    assert x["inverted_rate"] == 0.5
    assert x["calibration_rate"] is None
    assert x["n_calibration_pairs"] is None
    assert x["intent_failure_rate"] is None
    assert (
        x["queries_candidate"],
        y["queries_no_relevant"],
        y["queries_candidate"],
    ) == (
        2,
        1,
        1,
    )
    overall = failures(RUN, QRELS, k=3, by=[])
    assert overall.height == 1
    assert overall["n_relevant"].item() == 5
    per_query = failures(RUN, QRELS, k=3, queries=QUERIES)
    assert per_query["cls"].to_list() == ["x", "x", "y", "y"]


def test_duplicates_are_refused_or_dropped_as_evaluate_does():
    doubled = pl.concat([RUN, RUN.head(1).with_columns(score=pl.lit(0.5))])
    with pytest.raises(DataError, match="appear more than once"):
        failures(doubled, QRELS)
    with pytest.warns(IrevalWarning, match="dropped 1 repeated run rows"):
        out = failures(doubled, QRELS, k=3, duplicates="first")
    assert (
        out.select(COUNTS[:6]).rows()
        == failures(RUN, QRELS, k=3).select(COUNTS[:6]).rows()
    )


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
    with pytest.raises(OptionError, match="stage_depth=5 needs stages="):
        failures(RUN, QRELS, stage_depth=5)
    with pytest.raises(OptionError, match=r"stage\(s\) \['ce'\] are not runs"):
        failures(STAGE_RUNS, STAGE_QRELS, stages=["bm25", "ce"])
    with pytest.raises(OptionError, match="at least two different runs"):
        failures(STAGE_RUNS, STAGE_QRELS, stages=["bm25"])
    with pytest.raises(OptionError, match="at least two different runs"):
        failures(STAGE_RUNS, STAGE_QRELS, stages=["bm25", "bm25"])
    with pytest.raises(OptionError, match="stage_depth must be a positive"):
        failures(STAGE_RUNS, STAGE_QRELS, stages=["bm25", "rerank"], stage_depth=0)
    with pytest.raises(OptionError, match="no 'intent' column"):
        failures(
            RUN,
            QRELS,
            intents=pl.DataFrame({"query_id": ["1"], "intent": ["x"], "weight": [1]}),
        )
    with pytest.raises(IrevalError, match="duplicates=.last. is not one of"):
        failures(RUN, QRELS, duplicates="last")


def test_bad_intents():
    twice = pl.concat([INTENT_QRELS, INTENT_QRELS.head(1)])
    with pytest.raises(DataError, match="more than once for the same intent"):
        failures(INTENT_RUN, twice)
    fractional = INTENT_QRELS.with_columns(relevance=pl.col("relevance") + 0.5)
    with pytest.raises(DataError, match="not a whole number"):
        failures(INTENT_RUN, fractional)
    listed = pl.DataFrame({"query_id": ["1"], "intent": ["x"], "weight": [-1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        with pytest.raises(DataError, match="null, NaN or negative"):
            failures(INTENT_RUN, INTENT_QRELS, intents=listed)
        text = listed.with_columns(weight=pl.lit("high"))
        with pytest.raises(SchemaError, match="expected numbers"):
            failures(INTENT_RUN, INTENT_QRELS, intents=text)
        no_weight = listed.drop("weight")
        with pytest.raises(
            SchemaError, match="needs a query id, an 'intent' and a 'weight'"
        ):
            failures(INTENT_RUN, INTENT_QRELS, intents=no_weight)
        repeated = pl.DataFrame(
            {"query_id": ["1", "1"], "intent": ["x", "x"], "weight": [1, 2]}
        )
        with pytest.raises(DataError, match="more than once for a query"):
            failures(INTENT_RUN, INTENT_QRELS, intents=repeated)
    nested = INTENT_QRELS.with_columns(intent=pl.concat_list("intent"))
    with pytest.raises(SchemaError, match="expected intent names"):
        failures(INTENT_RUN, nested)


def test_trace_errors():
    with pytest.raises(OptionError, match="stages= names the run ids"):
        ie.trace(STAGE_RUNS, STAGE_QRELS, stages=None)
    with pytest.raises(OptionError, match="has no relevant document in the qrels"):
        ie.trace(STAGE_RUNS, STAGE_QRELS, stages=["bm25", "rerank"], query_id="9")
    clash = STAGE_RUNS.with_columns(
        run_id=pl.when(pl.col("run_id") == "bm25")
        .then(pl.lit("doc_id"))
        .otherwise("run_id")
    )
    with pytest.raises(OptionError, match="would name a column of the trace"):
        ie.trace(clash, STAGE_QRELS, stages=["doc_id", "rerank"])


# Query 1 ranks a (grade 0), b (1), c (2), d (3): every pair is inverted (6).
# Documents: a web 2020, b news 2021, c web 2019; d is not in the table.
DOC_RUN = pl.DataFrame(
    {"query_id": "1", "doc_id": ["a", "b", "c", "d"], "score": [4.0, 3.0, 2.0, 1.0]}
)
DOC_QRELS = pl.DataFrame(
    {"query_id": "1", "doc_id": ["a", "b", "c", "d"], "relevance": [0, 1, 2, 3]}
)
DOCS = pl.DataFrame(
    {
        "doc_id": ["a", "b", "c"],
        "source_type": ["web", "news", "web"],
        "published_at": ["2020-01-01", "2021-01-01", "2019-01-01"],
    }
)


def test_calibration_and_freshness_pairs_need_document_attributes():
    # (upper, lower) pairs: (a, b) web/news, b newer -> calibration, freshness;
    # (a, c) web/web, c older -> neither; (b, c) news/web, c older ->
    # calibration; (a, d), (b, d), (c, d): d unknown -> neither
    with pytest.warns(IrevalWarning, match=r"1 of the 4 documents .* not in docs="):
        row = failures(DOC_RUN, DOC_QRELS, k=4, docs=DOCS).row(0, named=True)
    assert (
        row["n_inverted_pairs"],
        row["n_calibration_pairs"],
        row["n_freshness_pairs"],
    ) == (6, 2, 1)
    # nothing lost: the larger subset of the pairs is the dominant kind
    assert row["failure"] == "calibration"
    # one source type for all: freshness only
    same = DOCS.with_columns(source_type=pl.lit("web"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        row = failures(DOC_RUN, DOC_QRELS, k=4, docs=same).row(0, named=True)
        assert (row["n_calibration_pairs"], row["failure"]) == (0, "freshness")
        # without published_at, freshness pairs are unknown (null), not zero
        row = failures(DOC_RUN, DOC_QRELS, k=4, docs=DOCS.drop("published_at")).row(
            0, named=True
        )
    assert (row["n_calibration_pairs"], row["n_freshness_pairs"]) == (2, None)


def test_documents_per_query_and_documents_slices():
    # attributes given per (query, document): d is known here
    per_query_docs = pl.concat(
        [
            DOCS,
            pl.DataFrame(
                {
                    "doc_id": ["d"],
                    "source_type": ["news"],
                    "published_at": ["2018-01-01"],
                }
            ),
        ]
    ).with_columns(query_id=pl.lit("1"))
    row = failures(DOC_RUN, DOC_QRELS, k=4, docs=per_query_docs).row(0, named=True)
    # (a, d) web/news, (c, d) web/news -> 2 more calibration pairs; d is oldest
    assert (row["n_calibration_pairs"], row["n_freshness_pairs"]) == (4, 1)
    # k=2: c and d below k (scoring); by source type of the document: relevant
    # b (news, top 2), d (news, scoring), c (web, scoring); pairs counted in
    # the slice of their lower-ranked document: (a, b) in news
    out = failures(DOC_RUN, DOC_QRELS, k=2, docs=per_query_docs, by="source_type")
    rows = {r["source_type"]: r for r in out.iter_rows(named=True)}
    assert set(rows) == {"news", "web"}
    news, web = rows["news"], rows["web"]
    assert (
        news["n_queries"],
        news["n_relevant"],
        news["n_top_k"],
        news["n_scoring"],
    ) == (1, 2, 1, 1)
    assert (web["n_relevant"], web["n_scoring"], web["scoring_rate"]) == (1, 1, 1.0)
    assert (news["n_inverted_pairs"], news["n_calibration_pairs"]) == (1, 1)
    assert (web["n_inverted_pairs"], web["calibration_rate"]) == (0, 0.0)
    # the query's dominant kind is counted in each slice it has documents in
    assert news["queries_scoring"] == web["queries_scoring"] == 1


def test_document_slices_mixed_with_query_slices_and_unknown_documents():
    queries = pl.DataFrame({"query_id": ["1"], "lang": ["en"]})
    with pytest.warns(IrevalWarning, match="not in docs="):
        out = failures(
            DOC_RUN,
            DOC_QRELS,
            k=4,
            docs=DOCS,
            queries=queries,
            by=["lang", "source_type"],
        )
    # d is not in the table: its slice is null, never dropped
    assert out.select("lang", "source_type", "n_relevant").rows() == [
        ("en", "news", 1),
        ("en", "web", 1),
        ("en", None, 1),
    ]
    assert out["n_relevant"].sum() == 3


def test_bad_documents_tables():
    with pytest.raises(
        SchemaError, match="docs= has neither 'source_type' nor 'published_at'"
    ):
        failures(DOC_RUN, DOC_QRELS, docs=DOCS.select("doc_id", kind="source_type"))
    both = DOCS.with_columns(lang=pl.lit("en"))
    queries = pl.DataFrame({"query_id": ["1"], "lang": ["en"]})
    with pytest.raises(
        SchemaError, match=r"\['lang'\] are in both the queries and the docs"
    ):
        failures(DOC_RUN, DOC_QRELS, docs=both, queries=queries, by="lang")
    with pytest.raises(SchemaError, match=r"\['topic'\] are not in the docs table"):
        failures(DOC_RUN, DOC_QRELS, docs=DOCS, by="topic")
    with pytest.raises(OptionError, match="needs queries= or docs="):
        failures(DOC_RUN, DOC_QRELS, by="source_type")


def test_documents_without_an_attribute_are_counted_in_the_warning():
    blank = DOCS.with_columns(
        source_type=pl.when(pl.col("doc_id") == "b").then(None).otherwise("source_type")
    )
    with pytest.warns(IrevalWarning, match="1 have no source_type") as caught:
        row = failures(DOC_RUN, DOC_QRELS, k=4, docs=blank).row(0, named=True)
    assert len([w for w in caught if "docs=" in str(w.message)]) == 1
    # (a, b) and (b, c) no longer tell a calibration pair
    assert row["n_calibration_pairs"] == 0
