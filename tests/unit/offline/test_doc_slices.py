"""evaluate(..., docs=, by_doc=): metrics restricted to slices of the documents.

The worked example (docs/slices.md uses the same one). Query q, ranked:

    rank  doc  slice  grade
    1     d1   news   2
    2     d2   blog   0
    3     d3   news   (not judged)
    4     d4   blog   1
    5     d5   news   1
    -     d6   blog   2   (judged, not retrieved)
    -     d7   news   1   (judged, not retrieved)

Relevant (grade >= 1): d1, d4, d5, d6, d7; news holds d1, d5, d7, blog d4, d6.
At k = 4, the top is d1 d2 d3 d4:

    P@4     news 1/4 (d1)            blog 1/4 (d4)            all 2/4
    R@4     news 1/3 (d1 of 3)       blog 1/2 (d4 of 2)
    nDCG@4  news 2/1 / (2 + 1/log2 3 + 1/log2 4)
            blog (1/log2 5) / (2 + 1/log2 3)
    Share@4 news 2/4 (d1 d3)         blog 2/4 (d2 d4)
    RelShare news 3/5                blog 2/5
"""

from __future__ import annotations

import datetime as dt
import math
import warnings

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import (
    DataError,
    IrevalWarning,
    MetricSpecError,
    OptionError,
    SchemaError,
)

RUN = pl.DataFrame(
    {
        "query_id": "q",
        "doc_id": ["d1", "d2", "d3", "d4", "d5"],
        "score": [5.0, 4.0, 3.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": "q",
        "doc_id": ["d1", "d2", "d4", "d5", "d6", "d7"],
        "relevance": [2, 0, 1, 1, 2, 1],
    }
)
DOCS = pl.DataFrame(
    {
        "doc_id": ["d1", "d2", "d3", "d4", "d5", "d6", "d7"],
        "source_type": ["news", "blog", "news", "blog", "news", "blog", "news"],
    }
)
METRICS = ["P@4", "R@4", "nDCG@4", "Share@4", "RelShare"]


def log2(x: float) -> float:
    return math.log2(x)


def values(frame: pl.DataFrame, *slices: str) -> dict[tuple[object, ...], float]:
    return {
        (*(row[s] for s in slices), row["metric"]): row["value"]
        for row in frame.iter_rows(named=True)
    }


def test_the_worked_example() -> None:
    out = ie.evaluate(RUN, QRELS, METRICS, docs=DOCS, by_doc="source_type")
    assert out.columns == ["run_id", "query_id", "source_type", "metric", "value"]
    # slices in sorted order, metrics in the order asked for
    assert out["source_type"].to_list() == ["blog"] * 5 + ["news"] * 5
    got = values(out, "source_type")
    want = {
        ("news", "P@4"): 1 / 4,
        ("blog", "P@4"): 1 / 4,
        ("news", "R@4"): 1 / 3,
        ("blog", "R@4"): 1 / 2,
        ("news", "nDCG@4"): 2 / (2 + 1 / log2(3) + 1 / log2(4)),
        ("blog", "nDCG@4"): (1 / log2(5)) / (2 + 1 / log2(3)),
        ("news", "Share@4"): 2 / 4,
        ("blog", "Share@4"): 2 / 4,
        ("news", "RelShare"): 3 / 5,
        ("blog", "RelShare"): 2 / 5,
    }
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-12), key


def test_without_by_doc_the_slice_is_every_document() -> None:
    out = ie.evaluate(RUN, QRELS, ["P@4", "Share@4", "Share@10", "RelShare"])
    # P@4: d1 d4; Share: 4 of 4, 5 of 10; RelShare: all of R = 5
    assert out["value"].to_list() == [0.5, 1.0, 0.5, 1.0]
    sliced = ie.evaluate(RUN, QRELS, ["P@4"], docs=DOCS, by_doc="source_type")
    assert sliced["value"].sum() == pytest.approx(0.5)


def test_slices_keep_the_original_ranks() -> None:
    # re-ranking news alone would put d5 at rank 3 and count it in P@3; at
    # its original rank 5 it is outside the top 3
    out = ie.evaluate(RUN, QRELS, ["P@3"], docs=DOCS, by_doc="source_type")
    assert values(out, "source_type") == {("blog", "P@3"): 0.0, ("news", "P@3"): 1 / 3}


def test_a_slice_absent_from_a_query() -> None:
    # q2 holds only news: blog scores 0 in P and Share, has no R or nDCG row
    # (no relevant blog document) and RelShare 0 (q2 has relevant documents)
    run = pl.concat(
        [RUN, pl.DataFrame({"query_id": "q2", "doc_id": ["d7"], "score": [1.0]})]
    )
    qrels = pl.concat(
        [QRELS, pl.DataFrame({"query_id": "q2", "doc_id": ["d7"], "relevance": [1]})]
    )
    out = ie.evaluate(run, qrels, METRICS, docs=DOCS, by_doc="source_type")
    q2 = values(out.filter(pl.col("query_id") == "q2"), "source_type")
    assert q2 == {
        ("blog", "P@4"): 0.0,
        ("blog", "Share@4"): 0.0,
        ("blog", "RelShare"): 0.0,
        ("news", "P@4"): 0.25,
        ("news", "R@4"): 1.0,
        ("news", "nDCG@4"): 1.0,
        ("news", "Share@4"): 0.25,
        ("news", "RelShare"): 1.0,
    }


def test_a_query_without_relevant_documents_has_no_relshare() -> None:
    qrels = QRELS.with_columns(relevance=pl.lit(0))
    out = ie.evaluate(RUN, qrels, METRICS, docs=DOCS, by_doc="source_type")
    assert sorted(set(out["metric"])) == ["P@4", "Share@4"]


def test_parameters_reach_the_sliced_metrics() -> None:
    # rel=2: only d1 (news) and d6 (blog) are relevant
    out = ie.evaluate(
        RUN,
        QRELS,
        ["P(rel=2)@4", "R(rel=2)@4", "RelShare(rel=2)", "nDCG(dcg=exp-log2)@2"],
        docs=DOCS,
        by_doc="source_type",
    )
    got = values(out, "source_type")
    assert got[("news", "P(rel=2)@4")] == 0.25
    assert got[("blog", "P(rel=2)@4")] == 0.0
    assert got[("news", "R(rel=2)@4")] == 1.0
    assert got[("blog", "R(rel=2)@4")] == 0.0
    assert got[("news", "RelShare(rel=2)")] == 0.5
    # exponential gains: news DCG@2 = 3 (d1), ideal 3 + 1/log2(3) (d1, d5)
    assert got[("news", "nDCG(dcg=exp-log2)@2")] == pytest.approx(3 / (3 + 1 / log2(3)))


def test_depth_ties_and_rank_from_are_those_of_the_whole_ranking() -> None:
    # depth=3 cuts d4 and d5 before slicing
    out = ie.evaluate(RUN, QRELS, ["R@4"], docs=DOCS, by_doc="source_type", depth=3)
    assert values(out, "source_type") == {("blog", "R@4"): 0.0, ("news", "R@4"): 1 / 3}
    # ranks from a column: d4 first
    ranked = RUN.with_columns(rank=pl.Series([2, 3, 4, 1, 5]))
    out = ie.evaluate(
        ranked, QRELS, ["P@1"], docs=DOCS, by_doc="source_type", rank_from="column"
    )
    assert values(out, "source_type") == {("blog", "P@1"): 1.0, ("news", "P@1"): 0.0}
    # tied scores: doc_id descending, so d2 ranks above d1
    tied = RUN.with_columns(score=pl.Series([5.0, 5.0, 3.0, 2.0, 1.0]))
    out = ie.evaluate(tied, QRELS, ["Share@1"], docs=DOCS, by_doc="source_type")
    assert values(out, "source_type") == {
        ("blog", "Share@1"): 1.0,
        ("news", "Share@1"): 0.0,
    }


def test_several_slice_columns_and_runs() -> None:
    docs = DOCS.with_columns(lang=pl.Series(["en", "en", "de", "de", "en", "en", "de"]))
    other = RUN.with_columns(run_id=pl.lit("b"), score=-pl.col("score"))
    runs = pl.concat(
        [RUN.with_columns(run_id=pl.lit("a")), other.select(RUN.columns + ["run_id"])],
        how="diagonal",
    )
    out = ie.evaluate(
        runs, QRELS, ["Share@2"], docs=docs, by_doc=["source_type", "lang"]
    )
    assert out.columns == [
        "run_id",
        "query_id",
        "source_type",
        "lang",
        "metric",
        "value",
    ]
    # every run gets every slice seen: (blog, de), (blog, en), (news, de), (news, en)
    assert out.height == 2 * 4
    a = values(out.filter(pl.col("run_id") == "a"), "source_type", "lang")
    b = values(out.filter(pl.col("run_id") == "b"), "source_type", "lang")
    # a's top 2: d1 (news, en), d2 (blog, en); b's: d5 (news, en), d4 (blog, de)
    assert a == {
        ("blog", "de", "Share@2"): 0.0,
        ("blog", "en", "Share@2"): 0.5,
        ("news", "de", "Share@2"): 0.0,
        ("news", "en", "Share@2"): 0.5,
    }
    assert b == {
        ("blog", "de", "Share@2"): 0.5,
        ("blog", "en", "Share@2"): 0.0,
        ("news", "de", "Share@2"): 0.0,
        ("news", "en", "Share@2"): 0.5,
    }


def test_documents_per_query() -> None:
    # d1 is news for q and blog for q2
    run = pl.concat(
        [RUN, pl.DataFrame({"query_id": "q2", "doc_id": ["d1"], "score": [1.0]})]
    )
    qrels = pl.concat(
        [QRELS, pl.DataFrame({"query_id": "q2", "doc_id": ["d1"], "relevance": [1]})]
    )
    docs = pl.concat(
        [
            DOCS.with_columns(query_id=pl.lit("q")),
            pl.DataFrame(
                {"doc_id": ["d1"], "source_type": ["blog"], "query_id": ["q2"]}
            ),
        ]
    )
    out = ie.evaluate(run, qrels, ["P@1"], docs=docs, by_doc="source_type")
    q2 = values(out.filter(pl.col("query_id") == "q2"), "source_type")
    assert q2 == {("blog", "P@1"): 1.0, ("news", "P@1"): 0.0}


def test_documents_missing_from_docs_form_a_null_slice_with_one_warning() -> None:
    docs = DOCS.filter(~pl.col("doc_id").is_in(["d3", "d7"]))
    with pytest.warns(IrevalWarning) as caught:
        out = ie.evaluate(
            RUN, QRELS, ["Share@4", "RelShare"], docs=docs, by_doc="source_type"
        )
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    # d3 of the 4 documents in the top 4; d7 of the 5 relevant documents
    assert messages[0].startswith(
        "1 of the 4 documents in the runs' top k and 1 of the 5 relevant "
        "documents of the qrels have no row in docs: their slice ('source_type') "
        "is null"
    )
    got = values(out, "source_type")
    assert got[(None, "Share@4")] == 0.25
    assert got[(None, "RelShare")] == 0.2
    assert sum(v for (_, m), v in got.items() if m == "Share@4") == 1.0


ISSUED = dt.datetime(2024, 3, 10)
DATED = DOCS.with_columns(
    published_at=pl.Series(
        [
            ISSUED - dt.timedelta(hours=2),  # d1 <1d
            ISSUED - dt.timedelta(days=3),  # d2 1d-7d
            ISSUED - dt.timedelta(days=400),  # d3 >=365d
            ISSUED + dt.timedelta(days=1),  # d4 future
            None,  # d5 unknown
            ISSUED - dt.timedelta(days=3),  # d6 1d-7d
            ISSUED - dt.timedelta(days=3),  # d7 1d-7d
        ]
    )
)


def test_age_buckets_from_the_queries_issued_at() -> None:
    queries = pl.DataFrame({"query_id": ["q"], "issued_at": [ISSUED]})
    out = ie.evaluate(
        RUN, QRELS, ["Share@5"], docs=DATED, by_doc=ie.age_buckets(), queries=queries
    )
    assert out.columns == [
        "run_id",
        "query_id",
        "age_bucket",
        "metric",
        "value",
        "issued_at",
    ]
    # sorted youngest first; 1d-7d holds d2 (retrieved) and d6, d7 (judged)
    assert values(out, "age_bucket") == {
        ("future", "Share@5"): 0.2,
        ("<1d", "Share@5"): 0.2,
        ("1d-7d", "Share@5"): 0.2,
        (">=365d", "Share@5"): 0.2,
        ("unknown", "Share@5"): 0.2,
    }
    assert out["age_bucket"].to_list() == [
        "future",
        "<1d",
        "1d-7d",
        ">=365d",
        "unknown",
    ]


def test_as_of_times_the_queries_without_issued_at() -> None:
    # no queries table: every query at as_of; a day later, d1 is 1d-7d old
    out = ie.evaluate(
        RUN,
        QRELS,
        ["P@1"],
        docs=DATED,
        by_doc=ie.age_buckets(),
        as_of=ISSUED + dt.timedelta(days=1),
    )
    assert values(out, "age_bucket")[("1d-7d", "P@1")] == 1.0
    # a query with a null issued_at takes as_of; one with its own keeps it
    queries = pl.DataFrame(
        {"query_id": ["q"], "issued_at": [None]},
        schema_overrides={"issued_at": pl.Datetime("us")},
    )
    again = ie.evaluate(
        RUN,
        QRELS,
        ["P@1"],
        docs=DATED,
        by_doc=ie.age_buckets(),
        queries=queries,
        as_of=ISSUED + dt.timedelta(days=1),
    )
    assert values(again, "age_bucket")[("1d-7d", "P@1")] == 1.0


def test_an_age_bucket_column_made_in_advance() -> None:
    docs = DATED.with_columns(ie.age_buckets(as_of=ISSUED))
    out = ie.evaluate(RUN, QRELS, ["P@1"], docs=docs, by_doc="age_bucket")
    assert values(out, "age_bucket")[("<1d", "P@1")] == 1.0


def test_output_kinds_follow_the_run() -> None:
    pytest.importorskip("pandas")
    out = ie.evaluate(
        RUN.to_pandas(), QRELS, ["P@4"], docs=DOCS.to_pandas(), by_doc="source_type"
    )
    assert list(out.columns) == ["run_id", "query_id", "source_type", "metric", "value"]
    lazy = ie.evaluate(RUN.lazy(), QRELS, ["P@4"], docs=DOCS, by_doc="source_type")
    assert isinstance(lazy, pl.LazyFrame)


def test_buckets_and_missing_are_those_of_the_whole_call() -> None:
    run = pl.concat(
        [RUN, pl.DataFrame({"query_id": "q2", "doc_id": ["d1"], "score": [1.0]})]
    )
    qrels = pl.concat(
        [
            QRELS,
            pl.DataFrame(
                {"query_id": ["q2", "q3"], "doc_id": ["d1", "d4"], "relevance": [1, 1]}
            ),
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        one = ie.evaluate(run, qrels, METRICS, docs=DOCS, by_doc="source_type")
        three = ie.evaluate(
            run, qrels, METRICS, docs=DOCS, by_doc="source_type", buckets=3
        )
        skip = ie.evaluate(
            run, qrels, METRICS, docs=DOCS, by_doc="source_type", missing="skip"
        )
    assert one.equals(three)
    # q3, answered by no run: an empty ranking (0), or no rows with "skip"
    q3 = values(one.filter(pl.col("query_id") == "q3"), "source_type")
    assert q3[("blog", "R@4")] == 0.0
    assert q3[("blog", "RelShare")] == 1.0
    assert "q3" not in skip["query_id"].to_list()


def test_summarize_and_compare_by_the_slice() -> None:
    other = RUN.with_columns(run_id=pl.lit("b"), score=-pl.col("score"))
    runs = pl.concat([RUN.with_columns(run_id=pl.lit("a")), other], how="diagonal")
    out = ie.evaluate(runs, QRELS, ["P@2", "Share@2"], docs=DOCS, by_doc="source_type")
    summary = ie.summarize(out, by="source_type", ci="t")
    assert summary.height == 2 * 2 * 2
    assert set(summary["n_queries"]) == {1}
    compared = ie.compare(out, by="source_type", baseline="a")
    # one query per slice: each pair of values compared once
    assert set(compared["n_queries"]) == {1}
    assert (compared["wins"] + compared["ties"] + compared["losses"]).to_list() == [
        1
    ] * 4
    with pytest.raises(DataError, match=r"pass its slice columns as by="):
        ie.summarize(out)
    with pytest.raises(DataError, match=r"pass its slice columns as by="):
        ie.compare(out, baseline="a")


# --------------------------------------------------------------------------
# bad input


def test_by_doc_docs_and_as_of_go_together() -> None:
    with pytest.raises(OptionError, match=r"docs= is not given"):
        ie.evaluate(RUN, QRELS, "P@4", by_doc="source_type")
    with pytest.raises(OptionError, match=r"docs= is used only with by_doc="):
        ie.evaluate(RUN, QRELS, "P@4", docs=DOCS)
    with pytest.raises(OptionError, match=r"as_of= is used only with by_doc="):
        ie.evaluate(RUN, QRELS, "P@4", as_of="2024-01-01")


def test_metrics_that_cannot_be_sliced() -> None:
    with pytest.raises(
        OptionError,
        match=r"metric 'AP' cannot be restricted .* \['nDCG', 'P', 'R', 'Share', 'RelShare'\]",
    ):
        ie.evaluate(RUN, QRELS, ["P@4", "AP"], docs=DOCS, by_doc="source_type")
    with pytest.raises(OptionError, match=r"judged_only=true drops unjudged"):
        ie.evaluate(
            RUN, QRELS, "P(judged_only=true)@4", docs=DOCS, by_doc="source_type"
        )
    with pytest.raises(OptionError, match=r"gives documents absent from the qrels"):
        ie.evaluate(RUN, QRELS, "nDCG(gains={-1:1})@4", docs=DOCS, by_doc="source_type")


def test_relshare_takes_no_cutoff() -> None:
    with pytest.raises(MetricSpecError, match=r"RelShare"):
        ie.evaluate(RUN, QRELS, "RelShare@10", docs=DOCS, by_doc="source_type")


def test_by_doc_columns_must_be_in_docs() -> None:
    with pytest.raises(
        SchemaError,
        match=r"by_doc= reads column 'kind', which docs does not have \(found "
        r"\['source_type'\]\).\n  Hint: add it to docs; ie.read_docs",
    ):
        ie.evaluate(RUN, QRELS, "P@4", docs=DOCS, by_doc="kind")
    with pytest.raises(
        SchemaError,
        match=r"(?s)reads column 'issued_at'.*pass queries= with an 'issued_at' column, or as_of=",
    ):
        ie.evaluate(RUN, QRELS, "P@4", docs=DATED, by_doc=ie.age_buckets())


def test_the_keys_are_not_slices() -> None:
    with pytest.raises(OptionError, match=r"by_doc= reads 'doc_id', the key of docs"):
        ie.evaluate(RUN, QRELS, "P@4", docs=DOCS, by_doc="doc_id")
    per_query = DOCS.with_columns(query_id=pl.lit("q"))
    with pytest.raises(OptionError, match=r"reads 'query_id', the key of docs"):
        ie.evaluate(
            RUN, QRELS, "P@4", docs=per_query, by_doc=["source_type", "query_id"]
        )


def test_bad_by_doc_values() -> None:
    with pytest.raises(OptionError, match=r"by_doc= is empty"):
        ie.evaluate(RUN, QRELS, "P@4", docs=DOCS, by_doc=[])
    with pytest.raises(OptionError, match=r"by_doc= takes column names .* found a int"):
        ie.evaluate(RUN, QRELS, "P@4", docs=DOCS, by_doc=3)
    with pytest.raises(OptionError, match=r"would name a slice column 'source_type'"):
        ie.evaluate(RUN, QRELS, "P@4", docs=DOCS, by_doc=["source_type", "source_type"])
    queries = pl.DataFrame({"query_id": ["q"], "source_type": ["x"]})
    with pytest.raises(OptionError, match=r"would name a slice column 'source_type'"):
        ie.evaluate(RUN, QRELS, "P@4", docs=DOCS, by_doc="source_type", queries=queries)
    with pytest.raises(OptionError, match=r"as_of='soon' is not a point in time"):
        ie.evaluate(
            RUN, QRELS, "P@4", docs=DATED, by_doc=ie.age_buckets(), as_of="soon"
        )


def test_bad_docs() -> None:
    twice = pl.concat([DOCS, DOCS.head(1)])
    with pytest.raises(
        DataError, match=r"docs has more than one row for a document .* doc_id='d1'"
    ):
        ie.evaluate(RUN, QRELS, "P@4", docs=twice, by_doc="source_type")
    with pytest.raises(SchemaError, match=r"docs is missing column 'doc_id'"):
        ie.evaluate(RUN, QRELS, "P@4", docs=pl.DataFrame({"x": [1]}), by_doc="x")


def test_unparseable_publication_dates_are_one_warning_and_unknown(tmp_path) -> None:
    path = tmp_path / "docs.csv"
    path.write_text(
        "doc_id,published_at\nd1,2024-03-09\nd2,someday\nd3,2024-03-01\n"
        "d4,2024-03-01\nd5,2024-03-01\nd6,2024-03-01\nd7,2024-03-01\n"
    )
    with pytest.warns(IrevalWarning) as caught:
        out = ie.evaluate(
            RUN, QRELS, ["Share@2"], docs=path, by_doc=ie.age_buckets(as_of=ISSUED)
        )
    assert len(caught) == 1
    assert "docs.csv' column 'published_at' has 1 value" in str(caught[0].message)
    assert values(out, "age_bucket")[("unknown", "Share@2")] == 0.5
