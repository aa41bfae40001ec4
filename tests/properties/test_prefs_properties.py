"""Properties of the preference measures, on hypothesis-generated cases.

Each case's qrels are read as preferences (one judgment group, one
sub-group: trec_eval's ``-R qrels_prefs``), optionally split into two
judgment groups. Row order never matters; counts nest; a run in grade order
fulfils every preference, the reverse order none of the retrieved ones.
"""

from __future__ import annotations

import warnings

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import NO_SHRINK, Case, cases, shuffled

import ireval_df as ie
from ireval_df.errors import IrevalWarning
from ireval_df.offline.plan import measures_reading

PREFERENCE_MEASURES = measures_reading("preferences")

ALL = sorted(PREFERENCE_MEASURES)


def _prefs(case: Case, *, split: bool) -> pl.DataFrame:
    qrels = case.qrels_frame()
    jg = (pl.col("doc_id").hash(7) % 2).cast(pl.String) if split else pl.lit("0")
    return qrels.with_columns(jg.alias("jg"))


def _values(run: pl.DataFrame, prefs: pl.DataFrame, metrics: list[str]) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        result = ie.evaluate_prefs(run, prefs, metrics)
    return {
        (r, q, m): v
        for r, q, m, v in result.select(
            "run_id", "query_id", "metric", "value"
        ).iter_rows()
    }


@settings(phases=NO_SHRINK, max_examples=25)
@given(cases(max_queries=4, max_runs=2), st.booleans(), st.integers(0, 1000))
def test_row_order_never_matters(case: Case, split: bool, seed: int) -> None:
    prefs = _prefs(case, split=split)
    run = case.run_frame()
    assert _values(run, prefs, ALL) == _values(
        shuffled(run, seed), shuffled(prefs, seed + 1), ALL
    )


@settings(phases=NO_SHRINK, max_examples=25)
@given(cases(max_queries=4, max_runs=2), st.booleans())
def test_counts_nest(case: Case, split: bool) -> None:
    got = _values(
        case.run_frame(),
        _prefs(case, split=split),
        ["NumPrefsPoss", "NumPrefsFul", "NumPrefsFulRet"],
    )
    keys = {(r, q) for r, q, _ in got}
    for r, q in keys:
        poss = got[(r, q, "NumPrefsPoss")]
        ful = got[(r, q, "NumPrefsFul")]
        assert 0 <= got[(r, q, "NumPrefsFulRet")] <= ful <= poss


@settings(phases=NO_SHRINK, max_examples=25)
@given(cases(max_queries=4, max_runs=1, ties=False))
def test_grade_order_fulfils_every_preference_and_its_reverse_none(case: Case) -> None:
    qrels = case.qrels_frame()
    # every judged document retrieved, best grade first (ties between equal
    # grades hold no preference); then the same documents in reverse
    best = qrels.select(
        pl.lit("ideal").alias("run_id"),
        "query_id",
        "doc_id",
        pl.col("relevance").cast(pl.Float64).alias("score"),
    )
    worst = best.with_columns(-pl.col("score"), pl.lit("reverse").alias("run_id"))
    metrics = ["NumPrefsPoss", "PrefsSimp", "PrefsSimpRet", "PrefsPair", "PrefsAvgJG"]
    got = _values(pl.concat([best, worst]), _prefs(case, split=False), metrics)
    for (run_id, query, metric), value in got.items():
        if metric == "NumPrefsPoss" or got[(run_id, query, "NumPrefsPoss")] == 0:
            continue
        assert value == (1.0 if run_id == "ideal" else 0.0), (run_id, query, metric)
