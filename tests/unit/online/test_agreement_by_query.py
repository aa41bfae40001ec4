"""Per-query offline-online agreement on the bundled log and qrels."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.online import agreement_by_query, read_log


def test_per_query_agreement_on_the_bundled_log():
    log = read_log("data/log")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary, per_query = agreement_by_query(log, "data/qrels.txt", by="query_class")
    assert summary.columns == ["query_class", "n_queries", "spearman", "kendall_tau"]
    assert set(summary["query_class"]) == {
        "informational",
        "navigational",
        "transactional",
    }
    assert (
        summary["n_queries"].sum()
        == per_query.filter(pl.col("online").is_not_null()).height
    )
    assert (summary["spearman"].abs() <= 1).all()
    # the offline value of one query by hand: mean nDCG@10 of its shown
    # first-page lists
    q = per_query.row(0, named=True)
    searches = log.searches.filter(
        (pl.col("query_id") == q["query_id"]) & (pl.col("page") == 1)
    )["search_id"]
    shown = log.results.filter(pl.col("search_id").is_in(searches.implode()))
    qrels = ie.read_qrels("data/qrels.txt").filter(pl.col("query_id") == q["query_id"])
    values = []
    for sid in searches:
        run = shown.filter(pl.col("search_id") == sid).select(
            query_id=pl.lit(q["query_id"]), doc_id="doc_id", score=-pl.col("position")
        )
        if run.height:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                values.append(ie.evaluate(run, qrels, "nDCG@10")["value"][0])
    assert q["offline"] == pytest.approx(sum(values) / len(values))
    assert q["n_searches"] == len(values)


def test_without_classes():
    log = read_log("data/log")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary, _ = agreement_by_query(
            log, "data/qrels.txt", "P@5", "CTR", min_searches=5
        )
    assert summary.height == 1
    assert summary["n_queries"][0] > 10


def test_searches_without_results_are_left_out_and_counted():
    log = read_log("data/log")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, per_query = agreement_by_query(log, "data/qrels.txt")
    messages = [str(w.message) for w in caught]
    # 218 zero-result searches, 217 of them of judged queries (data/README.md)
    assert any(
        "217 searches of judged queries showed no results" in m for m in messages
    )
    # evaluate's own warning, in terms of the internal per-search run, stays inside
    assert not any("'shown'" in m for m in messages), messages
    # a query with a zero-result search: its mean is over the (first-page)
    # lists shown
    q = "59"
    searches = log.searches.filter((pl.col("query_id") == q) & (pl.col("page") == 1))[
        "search_id"
    ]
    with_results = log.results.filter(pl.col("search_id").is_in(searches.implode()))[
        "search_id"
    ].n_unique()
    assert with_results < searches.len()
    row = per_query.filter(pl.col("query_id") == q).row(0, named=True)
    assert row["n_searches"] == with_results


def test_an_unknown_class_column_is_named():
    with pytest.raises(ie.errors.SchemaError, match=r"by=\['nope'\]"):
        agreement_by_query(read_log("data/log"), "data/qrels.txt", by="nope")


def test_without_scipy_the_error_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ie.errors.IrevalError, match=r"ireval-df\[stats\]"):
            agreement_by_query(read_log("data/log"), "data/qrels.txt")


def test_later_pages_are_left_out_of_the_offline_side_and_counted():
    # a page-2 list holds positions 11..20: judged as a ranking of its own it
    # would score as a top 10, so only first pages are judged
    log = read_log("data/log")
    n_later = log.searches.filter(pl.col("page") > 1).height
    assert n_later > 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, per_query = agreement_by_query(log, "data/qrels.txt")
    said = [str(w.message) for w in caught if "after the first" in str(w.message)]
    assert len(said) == 1
    assert said[0].startswith(
        f"{n_later:,} searches are of a result page after the first"
    )
    first = log.searches.filter(pl.col("page") == 1)
    with_results = first.filter(pl.col("n_results") > 0)
    judged = ie.read_qrels("data/qrels.txt")["query_id"].cast(pl.String).unique()
    expected = with_results.filter(
        pl.col("query_id").cast(pl.String).is_in(judged.implode())
    ).height
    assert per_query["n_searches"].sum() == expected
