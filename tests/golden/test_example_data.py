"""The bundled data keeps showing every failure kind (data/README.md says where).

``data/make_example.py`` draws the documents table, the ``rerank`` stage and
the intents so that each kind of :func:`ireval_df.failures` occurs; a change
to the script that loses one fails here, not silently in the notebook.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.diagnostics.failure_kinds import FAILURES
from ireval_df.measures import REGISTRY

if TYPE_CHECKING:
    from types import ModuleType

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


LOG = DATA / "log"


def _log() -> dict[str, pl.DataFrame]:
    return {
        name: pl.read_parquet(LOG / f"{name}.parquet")
        for name in ("searches", "results", "events", "units")
    }


def test_the_search_log_has_no_bad_input():
    """Every event has its search, every click a displayed result (data/README.md)."""
    log = _log()
    searches, results, events, units = (
        log[name] for name in ("searches", "results", "events", "units")
    )
    assert searches["search_id"].is_unique().all()
    assert events["event_id"].is_unique().all()
    assert results.select("search_id", "position").is_unique().all()
    joined = events.join(
        searches.select("search_id", search_user="user_id", search_ts="ts"),
        on="search_id",
        how="left",
    )
    assert joined["search_ts"].null_count() == 0
    assert (joined["user_id"] == joined["search_user"]).all()
    assert (joined["ts"] >= joined["search_ts"]).all()
    shown = results.select("search_id", "position", "doc_id")
    assert events.join(
        shown, on=["search_id", "position", "doc_id"], how="anti"
    ).is_empty()
    pages = searches.join(
        results.group_by("search_id").agg(n=pl.len(), first=pl.col("position").min()),
        on="search_id",
        how="left",
    )
    assert (pages["n"].fill_null(0) == pages["n_results"]).all()
    with_results = pages.filter(pl.col("n_results") > 0)
    assert (with_results["first"] == (with_results["page"] - 1) * 10 + 1).all()
    assert results.null_count().sum_horizontal().item() == 0
    arms = searches.group_by("user_id").agg(pl.col("variant").n_unique())
    assert arms["variant"].max() == 1
    assert sorted(units["unit_id"]) == sorted(arms["user_id"])
    assert units.join(
        searches.select("user_id", "variant").unique(),
        left_on=["unit_id", "variant"],
        right_on=["user_id", "variant"],
        how="anti",
    ).is_empty()


def test_the_search_log_sessions_follow_the_30_minute_gap():
    """Deriving sessions by a 30-minute gap gives back ``session_id``."""
    log = _log()
    timeline = pl.concat(
        [
            log["searches"].select("user_id", "session_id", "ts"),
            log["events"]
            .join(log["searches"].select("search_id", "session_id"), on="search_id")
            .select("user_id", "session_id", "ts"),
        ]
    ).sort("user_id", "ts")
    gaps = timeline.with_columns(
        gap=(pl.col("ts") - pl.col("ts").shift(1).over("user_id")).dt.total_seconds(),
        new=pl.col("session_id") != pl.col("session_id").shift(1).over("user_id"),
    ).drop_nulls("gap")
    assert gaps.filter(~pl.col("new"))["gap"].max() < 1800
    assert gaps.filter(pl.col("new"))["gap"].min() > 1800


def test_the_search_log_tells_its_story():
    """hybrid wins on informational queries, not on navigational ones; no SRM."""
    log = _log()
    clicked = log["events"].filter(pl.col("event_type") == "click")["search_id"]
    ctr = (
        log["searches"]
        .filter(pl.col("n_results") > 0)
        .group_by("query_class", "variant")
        .agg(ctr=pl.col("search_id").is_in(clicked.implode()).mean())
    )
    by = {(c, v): x for c, v, x in ctr.iter_rows()}
    assert by["informational", "treatment"] > by["informational", "control"] + 0.05
    assert by["navigational", "treatment"] < by["navigational", "control"]
    n = log["units"]["variant"].value_counts().sort("variant")["count"].to_list()
    assert abs(n[0] - n[1]) < 2 * (sum(n) ** 0.5)  # well within chance of 50/50


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_example", DATA / "make_example.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look the module up
    spec.loader.exec_module(sys.modules[spec.name])
    module = sys.modules[spec.name]
    return module


def test_the_units_table_has_a_pre_column_for_every_per_unit_quantity():
    """CUPED works for every online metric of the registry on the bundled log."""
    quantities = {
        str(info.options[side])
        for info in REGISTRY.values()
        if info.family == "online"
        for side in ("numer", "denom")
    }
    columns = set(_log()["units"].columns)
    assert {f"pre_{q}" for q in quantities} <= columns


def test_the_pre_period_sums_follow_the_metrics_definitions():
    """The generator's per-unit sums, on the experiment's log, are unit_table's."""
    log = _log()
    searches = log["searches"].with_columns(
        search=pl.col("search_id").rank("dense").cast(pl.Int64),
        session=pl.col("session_id").rank("dense").cast(pl.Int64),
        ts=pl.col("ts").dt.epoch("ms"),
    )
    events = (
        log["events"]
        .join(searches.select("search_id", "search"), on="search_id")
        .with_columns(
            event=pl.col("event_id").rank("dense").cast(pl.Int64),
            ts=pl.col("ts").dt.epoch("ms"),
        )
    )
    sums = _generator().pre_covariates(searches, events)
    # PositionCTR counts the same quantities one position at a time
    names = [
        n
        for n, info in sorted(REGISTRY.items())
        if info.family == "online" and info.aggregate == "ratio" and n != "PositionCTR"
    ]
    names.append("TimeToFirstClick(stat=mean)")
    table = ie.online.unit_table(ie.online.read_log(LOG), names).join(
        sums.rename(lambda c: c.replace("pre_", "sum_")),
        left_on="unit_id",
        right_on="user_id",
    )
    checked = 0
    for c in ie.online.unit_columns(names):
        for column, quantity in (
            (c.numer, c.numer_quantity),
            (c.denom, c.denom_quantity),
        ):
            gap = (table[column] - table[f"sum_{quantity}"]).abs().max()
            assert gap < 1e-6, (c.name, quantity, gap)
            checked += 1
    assert checked == 2 * len(names)


INTERLEAVING = DATA / "log_interleaving"


def test_the_interleaving_log_shows_team_draft_lists():
    """Every list is interleave(bm25, hybrid) for its search; randtop3 shuffles the top 3."""
    log = ie.online.read_log(INTERLEAVING)
    assert log.issues == ()
    searches, results = log.searches, log.results
    assert results is not None
    assert set(searches["experiment_id"]) == {"interleaving-2024"}
    assert set(searches["user_id"]).isdisjoint(set(_log()["searches"]["user_id"]))
    shown = searches.filter(pl.col("n_results") > 0)
    runs = pl.read_parquet(DATA / "runs.parquet").filter(
        pl.col("run_id").is_in(["bm25", "hybrid"]) & (pl.col("rank") <= 20)
    )
    rankings = shown.select("search_id", "query_id").join(
        runs.select("query_id", ranker="run_id", doc_id="doc_id", rank="rank"),
        on="query_id",
    )
    merged = ie.online.interleave(
        rankings.drop("query_id"), method="team_draft", k=10, seed=0
    )
    columns = ["search_id", "position", "doc_id", "team", "rank_bm25", "rank_hybrid"]
    flag = shown.select("search_id", "randomization")
    expected = merged.join(flag, on="search_id").sort("search_id", "position")
    got = results.join(flag, on="search_id").sort("search_id", "position")
    plain = pl.col("randomization").is_null()
    assert (
        got.filter(plain).select(columns).equals(expected.filter(plain).select(columns))
    )
    # randtop3: the same documents, the top 3 in some order, the rest in place
    shuffled = ~plain
    below = pl.col("position") > 3
    assert (
        got.filter(shuffled & below)
        .select(columns)
        .equals(expected.filter(shuffled & below).select(columns))
    )
    tops = [
        frame.filter(shuffled & ~below)
        .sort("search_id", "doc_id")
        .select("search_id", "doc_id", "team")
        for frame in (got, expected)
    ]
    assert tops[0].equals(tops[1])
    moved = got.filter(shuffled & ~below).join(
        expected.select("search_id", "position", e_doc="doc_id"),
        on=["search_id", "position"],
    )
    assert (moved["doc_id"] != moved["e_doc"]).any()


def test_the_interleaving_log_tells_its_story():
    """hybrid wins the interleaving overall and on informational queries; bm25 on navigational."""
    log = ie.online.read_log(INTERLEAVING)
    # 122 misspelt searches found nothing (data/README.md): counted, no outcome
    with pytest.warns(ie.errors.InterleavingWarning, match=r"^122 search\(es\)"):
        outcomes = ie.online.interleaving_outcomes(log)
    assert outcomes.height == log.searches.height - 122
    test = ie.online.interleaving_test(outcomes, unit="user_id", by="query_class")
    delta = dict(zip(test["query_class"], test["delta_ab"], strict=True))
    # delta_ab > 0: ranker_a (bm25) preferred
    assert delta["informational"] < 0
    assert delta["navigational"] > 0
    overall = ie.online.interleaving_test(outcomes, unit="user_id")
    assert overall["delta_ab"].item() < 0
    assert overall["significant"].item()
    props = ie.online.propensities(log, method="randtop", k=3)
    values = props.sort("position")["propensity"].to_list()
    assert values[0] == 1.0
    assert values[0] > values[1] > values[2] > 0


def test_both_logs_together_give_the_interleaving_outcomes_alone():
    """Stacked with the A/B log, the A/B searches (no team) are left out."""
    tables = ("searches", "results", "events")
    both = {
        name: pl.concat(
            [pl.read_parquet(d / f"{name}.parquet") for d in (LOG, INTERLEAVING)],
            how="diagonal_relaxed",
        )
        for name in tables
    }
    # the A/B log's own zero-result searches are of another arm: not counted
    with pytest.warns(ie.errors.InterleavingWarning, match=r"^122 search\(es\)"):
        stacked = ie.online.interleaving_outcomes(ie.online.read_log(**both))
    with pytest.warns(ie.errors.InterleavingWarning, match=r"^122 search\(es\)"):
        alone = ie.online.interleaving_outcomes(ie.online.read_log(INTERLEAVING))
    keep = ["search_id", "credit_bm25", "credit_hybrid", "n_clicks", "winner"]
    assert stacked.select(keep).equals(alone.select(keep))
