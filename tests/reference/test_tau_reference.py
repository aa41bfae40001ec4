"""tau_AP and Kendall's tau-b against ircor and scipy.

``data/tauap_cases.json`` holds 600 random case inputs made for ireval_df,
with the values ircor (R, unchanged) and scipy computed for them, and the
30 values printed in ircor's tests and README (see its ``about``). In the
fixture ``x`` is the reference, ircor's first argument: our baseline ``y``;
the fixture's ``y`` is the ranking whose positions weight tau_AP: our run
``x``. All cases go through one call, one key each, as the kernels are
meant to run.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ireval_df.offline.plan import RANKING
from ireval_df.similarity.correlation import tau, tau_ap
from ireval_df.similarity.rankings import rank_with_ties, without_ties

scipy_stats = pytest.importorskip("scipy.stats")

DATA = json.loads(
    (Path(__file__).parent / "data" / "tauap_cases.json").read_text(encoding="utf-8")
)
CASES = DATA["cases"]
SCHEMA = {
    "key": pl.Int64,
    "doc_id": pl.String,
    "pos": pl.Int64,
    "tie_start": pl.Int64,
    "tie_size": pl.Int64,
}
TOL = 1e-12


def parse(ordering: str) -> list[list[str]]:
    """``"a (b c) d"`` -> ``[["a"], ["b", "c"], ["d"]]`` (rbo.py's from_string)."""
    groups: list[list[str]] = []
    current: list[str] | None = None
    for token in ordering.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            current = []
        elif token == ")":
            assert current is not None
            groups.append(current)
            current = None
        elif current is not None:
            current.append(token)
        else:
            groups.append([token])
    return groups


def side(orderings: list[str]) -> pl.LazyFrame:
    """One key per ordering; positions in the listed order, groups as listed."""
    rows = []
    for key, ordering in enumerate(orderings):
        pos = 0
        for group in parse(ordering):
            start = pos + 1
            for doc in group:
                pos += 1
                rows.append((key, doc, pos, start, len(group)))
    return pl.LazyFrame(rows, schema=SCHEMA, orient="row")


def tie_free(ordering: str) -> bool:
    return "(" not in ordering


@pytest.fixture(scope="module")
def sides() -> tuple[pl.LazyFrame, pl.LazyFrame, pl.DataFrame]:
    run = side([c["y"] for c in CASES])
    base = side([c["x"] for c in CASES])
    return run, base, pl.DataFrame({"key": range(len(CASES))}, schema={"key": pl.Int64})


def values(frame: pl.LazyFrame) -> list[float]:
    result = frame.collect()
    assert result["key"].to_list() == list(range(result.height))
    return result["value"].to_list()


def check(got: list[float], want: list[float | None]) -> None:
    """``None`` (ircor: NaN) must be NaN; every value within TOL."""
    diffs = []
    for case, g, w in zip(CASES, got, want, strict=True):
        if w is None:
            assert math.isnan(g), case["case_id"]
        else:
            diffs.append(abs(g - w))
            assert abs(g - w) <= TOL, (case["case_id"], g, w)
    assert diffs  # the comparison compared something


def test_tau_b_is_scipy(sides):
    run, base, keys = sides
    check(values(tau(run, base, keys)), [c["kendall_tau_b_scipy"] for c in CASES])


def test_tau_b_is_symmetric(sides):
    run, base, keys = sides
    assert np.allclose(
        values(tau(run, base, keys)),
        values(tau(base, run, keys)),
        rtol=0,
        atol=TOL,
        equal_nan=True,
    )


def test_tau_ap_a_is_ircor(sides):
    # ircor stops when the reference ties (the next tests cover those cases)
    run, base, keys = sides
    got = values(tau_ap(run, base, keys))
    n = 0
    for case, g in zip(CASES, got, strict=True):
        if tie_free(case["x"]):
            n += 1
            if case["tauAP_a"] is None:  # ircor: NaN (one document)
                assert math.isnan(g), case["case_id"]
            else:
                assert abs(g - case["tauAP_a"]) <= TOL, case["case_id"]
    assert n > 250


def test_tau_ap_a_without_ties_is_yilmaz(sides):
    run, base, keys = sides
    got = values(tau_ap(run, base, keys))
    n = 0
    for case, g in zip(CASES, got, strict=True):
        if case["tauAP"] is not None:
            n += 1
            assert abs(g - case["tauAP"]) <= TOL, case["case_id"]
    assert n > 50


def test_tau_ap_a_breaks_baseline_ties_in_position_order(sides):
    run, base, keys = sides
    assert np.allclose(
        values(tau_ap(run, base, keys)),
        values(tau_ap(run, without_ties(base), keys)),
        rtol=0,
        atol=TOL,
        equal_nan=True,
    )


def test_tau_ap_a_sym_is_ircor(sides):
    run, base, keys = sides
    got = values(tau_ap(run, base, keys, sym=True))
    n = 0
    for case, g in zip(CASES, got, strict=True):
        if tie_free(case["x"]) and tie_free(case["y"]):
            n += 1
            if case["tauAP_a_sym"] is None:
                assert math.isnan(g)
            else:
                assert abs(g - case["tauAP_a_sym"]) <= TOL, case["case_id"]
    assert n > 50
    # with ties, each direction breaks its reference's ties
    broken = values(tau_ap(without_ties(run), without_ties(base), keys, sym=True))
    one_way = values(tau_ap(run, without_ties(base), keys))
    other_way = values(tau_ap(base, without_ties(run), keys))
    assert np.allclose(
        got, (np.array(one_way) + other_way) / 2, rtol=0, atol=TOL, equal_nan=True
    )
    assert not np.allclose(got, broken, equal_nan=True)


@pytest.mark.parametrize("sym", [False, True])
def test_tau_ap_b_is_ircor(sides, sym):
    run, base, keys = sides
    check(
        values(tau_ap(run, base, keys, ties="b", sym=sym)),
        [c["tauAP_b"] for c in CASES],
    )


def test_tau_ap_b_is_symmetric(sides):
    run, base, keys = sides
    assert np.allclose(
        values(tau_ap(run, base, keys, ties="b")),
        values(tau_ap(base, run, keys, ties="b")),
        rtol=0,
        atol=TOL,
        equal_nan=True,
    )


# ircor's functions and ours: tau and tau_b (Kendall's tau-b, which is tau
# without ties); tau_a is Kendall's tau-a, which ireval_df does not offer
DOCUMENTED = {
    "tauAP": lambda x, y, k: tau_ap(x, y, k),
    "tauAP_a": lambda x, y, k: tau_ap(x, y, k),
    "tauAP_b": lambda x, y, k: tau_ap(x, y, k, ties="b"),
    "tau": tau,
    "tau_b": tau,
}


@pytest.mark.parametrize("function", sorted(DOCUMENTED))
def test_documented_values(function):
    cases = [c for c in DATA["documented"] if c["function"] == function]
    assert cases
    keys = pl.DataFrame({"key": range(len(cases))}, schema={"key": pl.Int64})
    got = values(
        DOCUMENTED[function](
            side([c["y"] for c in cases]), side([c["x"] for c in cases]), keys
        )
    )
    for case, g in zip(cases, got, strict=True):
        assert abs(g - case["ircor_exact"]) <= TOL, case
        assert abs(g - case["documented"]) <= 5e-5, case


def test_documented_fixture_is_complete():
    assert len(DATA["documented"]) == 30
    assert {c["function"] for c in DATA["documented"]} == {*DOCUMENTED, "tau_a"}
    assert len(CASES) == 600


# Kendall's tau-b against scipy on rankings made by rank_with_ties: tied
# scores, partly different documents, several queries per call.
DOCS = [f"d{k}" for k in range(10)]
ranking = st.dictionaries(
    st.sampled_from(DOCS), st.sampled_from([0.0, 0.5, 1.0, 2.0]), max_size=len(DOCS)
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(ranking, ranking), min_size=1, max_size=4))
def test_tau_b_is_scipy_with_ties_and_different_documents(pairs):
    rows = [
        (run, f"q{q}", doc, score)
        for q, pair in enumerate(pairs)
        for run, scores in zip(("x", "y"), pair, strict=True)
        for doc, score in scores.items()
    ]
    run = pl.LazyFrame(
        rows,
        schema={
            "run_id": pl.String,
            "query_id": pl.String,
            "doc_id": pl.String,
            "score": pl.Float64,
        },
        orient="row",
    )
    # ties in any order within a group, as similarity() ranks them
    made = rank_with_ties(run, tie_order=False)
    ranked = (
        made.rows.lazy()
        .join(made.rankings.lazy(), on=RANKING)
        .with_columns(pl.col("query_id").str.slice(1).cast(pl.Int64).alias("key"))
        .drop(RANKING)
    )
    x = ranked.filter(pl.col("run_id") == "x").drop("run_id", "query_id")
    y = ranked.filter(pl.col("run_id") == "y").drop("run_id", "query_id")
    keys = pl.DataFrame({"key": range(len(pairs))}, schema={"key": pl.Int64})
    got = values(tau(x, y, keys))
    for (sx, sy), g in zip(pairs, got, strict=True):
        common = sorted(set(sx) & set(sy))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = scipy_stats.kendalltau(
                [sx[d] for d in common], [sy[d] for d in common]
            ).statistic
        if math.isnan(want):
            assert math.isnan(g)
        else:
            assert abs(g - want) <= TOL
