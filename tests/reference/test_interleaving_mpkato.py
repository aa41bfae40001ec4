"""Interleaving against mpkato/interleaving, run once as an oracle.

``data/interleaving_mpkato.json`` holds what mpkato's package (GitHub
``mpkato/interleaving``, not on PyPI) answered on its own test vectors and on
random small cases (``data/make_interleaving_cases.py`` made it):

* distributions: how often each interleaved list (and team assignment) came
  out of 20,000 of its draws; ours, over 20,000 searches holding the same
  lists, must show the same lists with frequencies within 5 standard errors
  of a two-sample comparison;
* scores: its credits and winners for an interleaved list and a set of
  clicks; ours must be equal (probabilistic: equal after scaling by the sum
  of assignment masses, which mpkato's two-ranker branch does not divide by).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from reference.interleaving_exact import softmax_probabilities

from ireval_df.online import interleave, interleaving_outcomes

DATA = json.loads(
    (Path(__file__).parent / "data" / "interleaving_mpkato.json").read_text("utf-8")
)
SEARCHES = 20_000
Z_MAX = 5.0


def _names(n: int) -> list[str]:
    return [f"r{j}" for j in range(n)]


def _rankings(lists: list[list[int]], searches: int) -> pl.DataFrame:
    names = _names(len(lists))
    one = pl.DataFrame(
        {
            "ranker": [names[j] for j, x in enumerate(lists) for _ in x],
            "doc_id": [str(d) for x in lists for d in x],
            "rank": [i + 1 for x in lists for i in range(len(x))],
        }
    )
    ids = pl.DataFrame({"search_id": [f"s{i:05d}" for i in range(searches)]})
    return ids.join(one, how="cross")


def _keys(results: pl.DataFrame, *, teams: bool) -> dict[str, int]:
    lists = results.group_by("search_id").agg(
        pl.col("doc_id").sort_by("position").str.join(","),
        pl.col("team").sort_by("position").str.slice(1).str.join(","),
    )
    key = (
        pl.concat_str("doc_id", pl.lit("|"), "team") if teams else pl.col("doc_id")
    ).alias("key")
    return dict(lists.select(key).to_series().value_counts().rows())


@pytest.mark.parametrize(
    "case",
    DATA["distributions"],
    ids=lambda c: f"{c['method']}-{c['lists']}-k{c['k']}",
)
def test_same_lists_as_often_as_mpkato(case: dict) -> None:
    method = case["method"]
    results = interleave(
        _rankings(case["lists"], SEARCHES),
        method=method,
        k=case["k"],
        on_exhaustion="stop" if method == "balanced" else "fill",
    )
    ours = _keys(results, teams=method.startswith("team_draft"))
    theirs = case["counts"]
    assert set(ours) == set(theirs)
    for key in theirs:
        p1, p2 = ours[key] / SEARCHES, theirs[key] / case["n"]
        pooled = (p1 + p2) / 2
        se = math.sqrt(pooled * (1 - pooled) * (1 / SEARCHES + 1 / case["n"]))
        assert abs(p1 - p2) <= Z_MAX * se + 1e-12, (key, p1, p2)


def _results_of(cases: list[dict], method: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    names = _names(len(cases[0]["lists"]))
    rows, clicks = [], []
    for i, case in enumerate(cases):
        lists = case["lists"]
        shown = case["ranking"]
        probs = softmax_probabilities(
            [[str(d) for d in x] for x in lists], [str(d) for d in shown]
        )
        for j, doc in enumerate(shown):
            row = {
                "search_id": f"c{i:04d}",
                "position": j + 1,
                "doc_id": str(doc),
                "team": names[case["teams"][j]] if "teams" in case else None,
            }
            for r, x in enumerate(lists):
                row[f"rank_{names[r]}"] = x.index(doc) + 1 if doc in x else None
                if method == "probabilistic":
                    row[f"p_{names[r]}"] = probs[j][r]
            rows.append(row)
        clicks += [
            {"search_id": f"c{i:04d}", "position": p + 1} for p in case["clicks"]
        ]
    results = pl.DataFrame(rows, schema_overrides={"team": pl.String})
    events = pl.DataFrame(clicks, schema={"search_id": pl.String, "position": pl.Int64})
    return results, events


@pytest.mark.parametrize(
    "method", ["team_draft", "team_draft_multileave", "balanced", "probabilistic"]
)
def test_same_credits_and_winners_as_mpkato(method: str) -> None:
    cases = [c for c in DATA["scores"] if c["method"] == method]
    assert len(cases) > 100
    results, events = _results_of(cases, method)
    outcomes = interleaving_outcomes(results, events, method=method)
    names = _names(len(cases[0]["lists"]))
    by_search = {r["search_id"]: r for r in outcomes.iter_rows(named=True)}
    noisy = 0
    for i, case in enumerate(cases):
        row = by_search[f"c{i:04d}"]
        credits = [row[f"credit_{n}"] for n in names]
        if method == "probabilistic":
            # mpkato's two-ranker scores are masses, not probabilities: scale
            # ours by the total mass of all assignments, prod_j (p_0j + p_1j)
            probs = softmax_probabilities(
                [[str(d) for d in x] for x in case["lists"]],
                [str(d) for d in case["ranking"]],
            )
            credits = [c * float(np.prod([sum(p) for p in probs])) for c in credits]
        assert credits == pytest.approx(case["scores"], rel=1e-9, abs=1e-12), case
        pairs = sorted(
            [a, b]
            for a in range(len(names))
            for b in range(len(names))
            if credits[a] - credits[b] > 1e-12
        )
        scores = case["scores"]
        tied = max(scores) - min(scores) < 1e-12 < max(scores)
        if method == "probabilistic" and tied and case["winners"]:
            # equal masses summed in a different order: mpkato's evaluate()
            # names a winner by float noise, ours calls it a tie
            noisy += 1
            assert pairs == []
            continue
        assert pairs == case["winners"], case
        winner = row["winner"]
        if len(names) == 2:
            expected = None if not pairs else names[pairs[0][0]]
            assert winner == expected
    assert noisy <= 2
