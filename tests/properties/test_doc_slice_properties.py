"""Document slices (evaluate(..., docs=, by_doc=)) on hypothesis-generated inputs.

Against a naive per-(run, query, slice) loop written from the definitions
in docs/slices.md, and the identities the definitions promise: a query's
slices add up to P@k, to min(k, retrieved) / k in Share@k and to 1 in
RelShare; one slice holding every document gives the unsliced values.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import oracle
from strategies import DOC_IDS, NO_SHRINK, Case, cases

import ireval_df as ie
from ireval_df.errors import IrevalWarning

SLICES = ("x", "y", "z")
K = (1, 3, 10)
METRICS = [
    *(f"{m}@{k}" for k in K for m in ("P", "R", "nDCG", "Share")),
    "RelShare",
    "P(rel=2)@3",
    "R(rel=2)@3",
    "RelShare(rel=2)",
]


@st.composite
def slice_maps(draw: st.DrawFn) -> dict[str, str]:
    """A slice for some of the documents; the others are not in docs."""
    docs = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=len(DOC_IDS)))
    return {d: draw(st.sampled_from(SLICES)) for d in docs}


def sliced(case: Case, slice_of: dict[str, str], metrics: list[str]) -> pl.DataFrame:
    docs = pl.DataFrame(
        {"doc_id": list(slice_of), "kind": list(slice_of.values())},
        schema={"doc_id": pl.String, "kind": pl.String},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        return ie.evaluate(
            case.run_frame(), case.qrels_frame(), metrics, docs=docs, by_doc="kind"
        )


def unsliced(case: Case, metrics: list[str]) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        return ie.evaluate(case.run_frame(), case.qrels_frame(), metrics)


def naive(case: Case, slice_of: dict[str, str]) -> dict[tuple[Any, ...], float]:
    """Every value of METRICS, by plain loops over each ranked list."""
    top_k = max(K)
    seen: set[str | None] = set()
    for query, judged in case.qrels.items():
        seen |= {slice_of.get(d) for d in judged}
        for ranking in case.runs.values():
            order = oracle.ranking(ranking.get(query, {}))[:top_k]
            seen |= {slice_of.get(d) for d in order}
    out: dict[tuple[Any, ...], float] = {}
    for run_id, ranking in case.runs.items():
        for query, judged in case.qrels.items():  # missing="zero": every topic
            order = oracle.ranking(ranking.get(query, {}))
            for s in seen:
                mine = {d: g for d, g in judged.items() if slice_of.get(d) == s}
                grade = [
                    judged.get(d, -1) if slice_of.get(d) == s else None for d in order
                ]
                key = (run_id, query, s)
                for rel in (1, 2):
                    n_rel = sum(1 for g in judged.values() if g >= rel)
                    n_rel_s = sum(1 for g in mine.values() if g >= rel)
                    suffix = "" if rel == 1 else "(rel=2)"
                    if n_rel:
                        out[(*key, f"RelShare{suffix}")] = n_rel_s / n_rel
                    for k in K if rel == 1 else (3,):
                        hits = sum(1 for g in grade[:k] if g is not None and g >= rel)
                        out[(*key, f"P{suffix}@{k}")] = hits / k
                        if n_rel_s:
                            out[(*key, f"R{suffix}@{k}")] = hits / n_rel_s
                for k in K:
                    out[(*key, f"Share@{k}")] = (
                        sum(g is not None for g in grade[:k]) / k
                    )
                    dcg = sum(
                        max(g, 0) / math.log2(i + 1)
                        for i, g in enumerate(grade[:k], start=1)
                        if g is not None
                    )
                    best = sorted((g for g in mine.values() if g > 0), reverse=True)
                    ideal = sum(g / math.log2(i + 1) for i, g in enumerate(best[:k], 1))
                    if ideal > 0:
                        out[(*key, f"nDCG@{k}")] = dcg / ideal
    return out


@settings(phases=NO_SHRINK, max_examples=40, deadline=None)
@given(cases(max_queries=4, max_runs=2), slice_maps())
def test_every_value_equals_the_naive_loop(
    case: Case, slice_of: dict[str, str]
) -> None:
    got = {
        (r["run_id"], r["query_id"], r["kind"], r["metric"]): r["value"]
        for r in sliced(case, slice_of, METRICS).iter_rows(named=True)
    }
    want = naive(case, slice_of)
    assert got.keys() == want.keys(), sorted(got.keys() ^ want.keys(), key=str)[:5]
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key


@settings(phases=NO_SHRINK, max_examples=25, deadline=None)
@given(cases(max_queries=4, max_runs=2), slice_maps())
def test_slices_add_up(case: Case, slice_of: dict[str, str]) -> None:
    out = sliced(case, slice_of, ["P@3", "Share@3", "RelShare"])
    totals = out.group_by("run_id", "query_id", "metric").agg(pl.col("value").sum())
    whole = unsliced(case, ["P@3", "NumRet@3", "NumRel"]).pivot(
        "metric", index=["run_id", "query_id"], values="value"
    )
    joined = totals.join(whole, on=["run_id", "query_id"])
    assert joined.height == totals.height
    for row in joined.iter_rows(named=True):
        if row["metric"] == "P@3":
            assert row["value"] == pytest.approx(row["P@3"]), row
        elif row["metric"] == "Share@3":
            # min(k, retrieved) / k
            assert row["value"] == pytest.approx(row["NumRet@3"] / 3), row
        else:
            assert row["NumRel"] > 0
            assert row["value"] == pytest.approx(1.0), row


@settings(phases=NO_SHRINK, max_examples=25, deadline=None)
@given(cases(max_queries=4, max_runs=2))
def test_one_slice_of_every_document_is_the_unsliced_evaluation(case: Case) -> None:
    every = {d for judged in case.qrels.values() for d in judged}
    every |= {d for run in case.runs.values() for docs in run.values() for d in docs}
    metrics = ["P@3", "R@3", "nDCG@3", "nDCG@10"]
    out = sliced(case, dict.fromkeys(every, "x"), metrics)
    whole = unsliced(case, metrics)
    key = ["run_id", "query_id", "metric"]
    joined = whole.join(out, on=key, how="left", suffix="_sliced")
    for row in joined.iter_rows(named=True):
        if row["value_sliced"] is None:  # R and nDCG without a relevant document
            assert row["metric"] != "P@3"
            assert row["value"] == 0.0
        else:
            assert row["value_sliced"] == pytest.approx(row["value"], abs=1e-12), row


@settings(phases=NO_SHRINK, max_examples=15, deadline=None)
@given(cases(max_queries=5, max_runs=2), slice_maps(), st.integers(2, 5))
def test_buckets_and_row_order_change_nothing(
    case: Case, slice_of: dict[str, str], buckets: int
) -> None:
    docs = pl.DataFrame(
        {"doc_id": list(slice_of), "kind": list(slice_of.values())},
        schema={"doc_id": pl.String, "kind": pl.String},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        one = ie.evaluate(
            case.run_frame(), case.qrels_frame(), METRICS, docs=docs, by_doc="kind"
        )
        many = ie.evaluate(
            case.run_frame().reverse(),
            case.qrels_frame().reverse(),
            METRICS,
            docs=docs.reverse(),
            by_doc="kind",
            buckets=buckets,
        )
    assert one.equals(many)
