"""failures() on hypothesis-generated runs: an oracle of plain loops, and invariants.

The oracle ranks each ranking as trec_eval does (score descending, then
doc_id descending in byte order) and classifies each relevant document and
each pair of judged top-k documents by the definitions of docs/failures.md,
one ranking at a time; failures() does it vectorised over all of them.
"""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import NO_SHRINK, Case, cases, judgments, perfect_case

import ireval_df as ie
from ireval_df.errors import IrevalWarning

KINDS = ("n_relevant", "n_top_k", "n_candidate", "n_scoring", "n_dropped")


def ranks(docs: dict[str, float]) -> dict[str, int]:
    """Rank by score descending, then doc_id descending (byte order)."""
    order = sorted(docs.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)
    return {doc: i for i, (doc, _) in enumerate(order, start=1)}


def oracle(
    case: Case, k: int, rel: int, stages: list[str] | None, depth: int | None
) -> dict[tuple[str, str], dict[str, Any]]:
    """(run, query) -> the counts and the dominant kind, loop by loop."""
    out = {}
    for query, judged in case.qrels.items():
        relevant = {d for d, g in judged.items() if g >= rel}
        kept: set[str] = set()
        for stage in (stages or [])[:-1]:
            stage_ranks = ranks(case.runs[stage].get(query, {}))
            for doc in relevant:
                if doc in stage_ranks and (depth is None or stage_ranks[doc] <= depth):
                    kept.add(doc)
        for run_id, ranking in case.runs.items():
            rk = ranks(ranking.get(query, {}))
            last = stages is not None and run_id == stages[-1]
            counts = dict.fromkeys(KINDS[1:], 0)
            for doc in relevant:
                if doc in rk and rk[doc] <= k:
                    counts["n_top_k"] += 1
                elif last and doc in kept:
                    counts["n_dropped"] += 1
                elif doc in rk:
                    counts["n_scoring"] += 1
                else:
                    counts["n_candidate"] += 1
            top = [
                (rk[d], g)
                for d, g in judged.items()
                if g >= 0 and rk.get(d, k + 1) <= k
            ]
            pairs = sum(1 for ra, ga in top for rb, gb in top if ra < rb and ga < gb)
            lost = {n: counts[f"n_{n}"] for n in ("candidate", "dropped", "scoring")}
            most = max(lost.values())
            if not relevant:
                failure = "no_relevant"
            elif most > 0:
                failure = next(n for n, v in lost.items() if v == most)
            else:
                failure = "inverted" if pairs else "none"
            out[(run_id, query)] = {
                "n_relevant": len(relevant),
                **counts,
                "n_inverted_pairs": pairs,
                "failure": failure,
            }
    return out


def found(case: Case, **options: Any) -> dict[tuple[str, str], dict[str, Any]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        frame = ie.failures(case.run_frame(), case.qrels_frame(), **options)
    return {(r["run_id"], r["query_id"]): r for r in frame.iter_rows(named=True)}


@settings(phases=NO_SHRINK, max_examples=60)
@given(
    cases(max_queries=5, max_runs=3, one_sided=True),
    st.integers(1, 10),
    st.integers(1, 2),
    st.one_of(st.none(), st.integers(1, 6)),
)
def test_every_kind_matches_the_oracle(
    case: Case, k: int, rel: int, depth: int | None
) -> None:
    stages = case.run_ids() if len(case.runs) > 1 else None
    got = found(
        case, k=k, rel=rel, stages=stages, stage_depth=None if stages is None else depth
    )
    want = oracle(case, k, rel, stages, depth if stages is not None else None)
    assert set(got) == set(want), case
    for key, expected in want.items():
        row = got[key]
        assert {c: row[c] for c in expected} == expected, (key, case)
        # every relevant document is in exactly one of the four kinds
        assert row["n_relevant"] == sum(row[c] for c in KINDS[1:]), (key, case)
        assert stages is None or key[0] == stages[-1] or row["n_dropped"] == 0


@settings(phases=NO_SHRINK, max_examples=30)
@given(cases(max_queries=4, max_runs=3), st.integers(1, 5), st.integers(1, 4))
def test_dropped_is_what_trace_says_a_later_stage_lost(
    case: Case, k: int, depth: int
) -> None:
    stages = case.run_ids()
    if len(stages) < 2:
        return
    counted = found(case, k=k, stages=stages, stage_depth=depth)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        traced = ie.trace(
            case.run_frame(), case.qrels_frame(), stages=stages, k=k, stage_depth=depth
        )
    later = traced.filter(
        pl.col("lost_at").is_not_null() & (pl.col("lost_at") != stages[0])
    )
    per_query = later.group_by("query_id").len()
    dropped = dict(zip(per_query["query_id"], per_query["len"], strict=True))
    for (run_id, query), row in counted.items():
        if run_id == stages[-1]:
            assert row["n_dropped"] == dropped.get(query, 0), (query, case)
    # trace's last column is the last stage's rank: within k exactly when found
    found_in_trace = (
        traced.filter(pl.col("lost_at").is_null()).group_by("query_id").len()
    )
    top = dict(zip(found_in_trace["query_id"], found_in_trace["len"], strict=True))
    for (run_id, query), row in counted.items():
        if run_id == stages[-1]:
            assert row["n_top_k"] == top.get(query, 0)


@settings(phases=NO_SHRINK, max_examples=40)
@given(
    qrels=judgments(max_docs=8),
    intents=st.lists(st.sampled_from(("x", "y", "z")), min_size=8, max_size=8),
    as_stages=st.booleans(),
)
def test_a_perfect_run_has_no_failure_of_any_kind(
    qrels: dict[str, int], intents: list[str], *, as_stages: bool
) -> None:
    case = perfect_case(qrels)
    run = case.run_frame()
    if as_stages:  # the same perfect ranking at both stages of a pipeline
        run = pl.concat([run, run.with_columns(run_id=pl.lit("r2"))])
    judged = case.qrels_frame().with_columns(
        intent=pl.Series(intents[: len(qrels)], dtype=pl.String)
    )
    docs = pl.DataFrame(
        {
            "doc_id": list(qrels),
            "source_type": [intents[i % len(intents)] for i in range(len(qrels))],
            "published_at": [f"20{10 + i}-01-01" for i in range(len(qrels))],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        out = ie.failures(
            run,
            judged,
            k=10,
            docs=docs,
            stages=["r", "r2"] if as_stages else None,
        )
    for row in out.iter_rows(named=True):
        assert row["n_top_k"] == row["n_relevant"]
        assert row["n_candidate"] == row["n_scoring"] == row["n_dropped"] == 0
        assert row["n_inverted_pairs"] == 0
        assert row["n_calibration_pairs"] == row["n_freshness_pairs"] == 0
        assert row["intent_failure"] is not True
        assert row["failure"] in ("none", "no_relevant")
