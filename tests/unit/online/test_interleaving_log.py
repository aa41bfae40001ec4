"""interleaving_outcomes on a SearchLog: results, clicks and searches from the log."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import SchemaError

pytestmark = pytest.mark.filterwarnings("error::ireval_df.errors.InterleavingWarning")

T0 = dt.datetime(2024, 7, 8, 9, tzinfo=dt.UTC)


def _rankings() -> pl.DataFrame:
    rows = []
    for s in ("s1", "s2", "s3"):
        for ranker, docs in (("A", "abcd"), ("B", "dbca")):
            rows += [(s, ranker, d, r) for r, d in enumerate(docs, start=1)]
    return pl.DataFrame(
        rows, schema=["search_id", "ranker", "doc_id", "rank"], orient="row"
    )


def _tables() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    results = ie.online.interleave(_rankings(), k=4, seed=3)
    searches = pl.DataFrame(
        {
            "search_id": ["s1", "s2", "s3", "s4"],
            "user_id": ["u1", "u1", "u2", "u3"],
            "ts": [T0 + dt.timedelta(hours=h) for h in range(4)],
            "query": ["q", "q", "r", "r"],
            "query_class": ["nav", "nav", "info", "info"],
            "n_results": [4, 4, 4, 2],
            "variant": ["interleaved"] * 3 + ["control"],
        }
    )
    events = pl.DataFrame(
        {
            "event_id": ["e1", "e2", "e3", "e4"],
            "search_id": ["s1", "s2", "s3", "s4"],
            "user_id": ["u1", "u1", "u2", "u3"],
            "ts": [T0 + dt.timedelta(hours=h, seconds=5) for h in range(4)],
            "event_type": ["click"] * 4,
            "position": [1, 2, 3, 1],
        }
    )
    return searches, results, events


def _log(*, with_ab: bool = False, with_events: bool = True) -> ie.online.SearchLog:
    searches, results, events = _tables()
    if with_ab:  # s4 belongs to an A/B arm: plain results, no team or ranks
        plain = pl.DataFrame(
            {"search_id": ["s4", "s4"], "position": [1, 2], "doc_id": ["x", "y"]}
        )
        results = pl.concat([results, plain], how="diagonal_relaxed")
    else:
        searches = searches.head(3)
        events = events.head(3)
    return ie.online.read_log(
        searches=searches, results=results, events=events if with_events else None
    )


def test_a_log_gives_the_same_outcomes_as_its_tables():
    searches, results, events = _tables()
    log = _log()
    from_log = ie.online.interleaving_outcomes(log)
    from_tables = ie.online.interleaving_outcomes(results, events.head(3))
    keep = ["search_id", "credit_A", "credit_B", "n_clicks", "winner"]
    assert from_log.select(keep).rows() == from_tables.select(keep).rows()
    # user_id and slice columns come along from the searches
    assert from_log["user_id"].to_list() == ["u1", "u1", "u2"]
    assert from_log["query_class"].to_list() == ["nav", "nav", "info"]
    test = ie.online.interleaving_test(from_log, unit="user_id", by="query_class")
    assert sorted(test["query_class"]) == ["info", "nav"]


def test_searches_without_interleaved_results_are_left_out():
    log = _log(with_ab=True)
    out = ie.online.interleaving_outcomes(log)
    assert out["search_id"].to_list() == ["s1", "s2", "s3"]
    assert out.select(["search_id", "winner"]).rows() == (
        ie.online.interleaving_outcomes(_log()).select(["search_id", "winner"]).rows()
    )


def test_searches_that_showed_nothing_are_counted():
    searches, results, events = _tables()
    nothing = pl.DataFrame(
        {
            "search_id": ["s5", "s6"],
            "user_id": ["u1", "u3"],
            "ts": [T0 + dt.timedelta(hours=h) for h in (5, 6)],
            "query": ["qq", "rr"],
            "query_class": ["nav", "info"],
            "n_results": [0, 0],
            "variant": ["interleaved", "control"],
        }
    )
    log = ie.online.read_log(
        searches=pl.concat([searches.head(3), nothing]),
        results=results,
        events=events.head(3),
    )
    # s5 is of the interleaved arm; s6 of another arm is not this test's
    with pytest.warns(
        ie.errors.InterleavingWarning, match=r"1 search\(es\) of the interleaved"
    ):
        out = ie.online.interleaving_outcomes(log)
    assert out["search_id"].to_list() == ["s1", "s2", "s3"]


def test_a_log_without_interleaved_searches_says_so():
    # an A/B log: plain results, no team or rank_<ranker>; its 218 zero-result
    # searches are not reported as an interleaved arm's
    ab_log = ie.online.read_log("data/log")
    with pytest.raises(SchemaError, match="none of its searches was interleaved"):
        ie.online.interleaving_outcomes(ab_log)


def test_explicit_clicks_and_searches_win_over_the_log():
    log = _log()
    clicks = pl.DataFrame({"search_id": ["s1"], "position": [2]})
    out = ie.online.interleaving_outcomes(
        log, clicks, searches=log.searches.select("search_id")
    )
    assert out["n_clicks"].to_list() == [1, 0, 0]
    assert "user_id" not in out.columns


def test_a_log_without_events_or_clicks_is_an_error():
    with pytest.raises(SchemaError, match="no events table"):
        ie.online.interleaving_outcomes(_log(with_events=False))
    _, results, _ = _tables()
    with pytest.raises(SchemaError, match="needs clicks"):
        ie.online.interleaving_outcomes(results)
