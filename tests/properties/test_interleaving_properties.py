"""Properties of interleave() on generated rankings, every method and option.

For every search of every generated frame:

- the list holds distinct documents, each from some ranker's list, at most
  ``k`` of them; with ``on_exhaustion="fill"`` exactly ``min(k, |union|)``;
- ``rank_<ranker>`` is the document's place in that ranker's list (null
  when absent);
- team draft: a ranker's team holds its own documents, in its order, each
  the best of its list not shown above; team sizes differ by at most 1,
  unless the smaller team's ranker has nothing left to show ("fill");
- probabilistic: ``p_<ranker>`` is the ranker's softmax probability of the
  document given the documents above, and positive for the ranker drawn;
- the same search gets the same list whatever the row order and the other
  searches in the frame.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.interleaving_exact import softmax_probabilities

from ireval_df.errors import DataError
from ireval_df.online import interleave

DOCS = [f"d{i}" for i in range(9)]


@st.composite
def searches(draw: st.DrawFn, n_rankers: int) -> dict[str, list[str]]:
    """One search: each ranker's list of up to 7 distinct documents (maybe empty)."""
    return {
        f"r{j}": draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=7))
        for j in range(n_rankers)
    }


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, dict[str, dict[str, list[str]]], dict]:
    method = draw(
        st.sampled_from(
            ["team_draft", "balanced", "probabilistic", "team_draft_multileave"]
        )
    )
    n_rankers = draw(st.integers(3, 4)) if method == "team_draft_multileave" else 2
    by_search = draw(
        st.dictionaries(
            st.text("abcxyz", min_size=1, max_size=4),
            searches(n_rankers),
            min_size=1,
            max_size=5,
        )
    )
    options = {
        "k": draw(st.integers(1, 8)),
        "seed": draw(st.integers(0, 2**40)),
        "on_exhaustion": draw(st.sampled_from(["fill", "stop"])),
        "common_prefix": method.startswith("team_draft") and draw(st.booleans()),
    }
    return method, by_search, options


def frame_of(by_search: dict[str, dict[str, list[str]]], seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed % 2**32)
    rows = []
    for sid, lists in by_search.items():
        for ranker, docs in lists.items():
            ranks = np.sort(rng.choice(1000, size=len(docs), replace=False)) - 500
            rows += [(sid, ranker, d, int(r)) for d, r in zip(docs, ranks, strict=True)]
    return pl.DataFrame(
        rows,
        schema={
            "search_id": pl.String,
            "ranker": pl.String,
            "doc_id": pl.String,
            "rank": pl.Int64,
        },
        orient="row",
    )


@settings(max_examples=150, deadline=None)
@pytest.mark.filterwarnings("ignore::ireval_df.errors.InterleavingWarning")
@given(case=cases())
def test_every_list_is_a_valid_interleaving(case) -> None:
    method, by_search, options = case
    rankings = frame_of(by_search, options["seed"])
    names = sorted(rankings["ranker"].unique().to_list())
    if len(names) < 2:
        with pytest.raises(DataError, match="at least 2 rankers"):
            interleave(rankings, method=method, missing_ranker="empty", **options)
        return
    out = interleave(rankings, method=method, missing_ranker="empty", **options)
    k, fill = options["k"], options["on_exhaustion"] == "fill"
    for sid, lists in by_search.items():
        rows = out.filter(pl.col("search_id") == sid).sort("position")
        shown = rows["doc_id"].to_list()
        union = {d for docs in lists.values() for d in docs}
        assert rows["position"].to_list() == list(range(1, len(shown) + 1))
        assert len(set(shown)) == len(shown) <= k
        assert set(shown) <= union
        if fill:
            assert len(shown) == min(k, len(union))
        lists = {n: lists[n] for n in names}
        for name in names:
            expected = [
                lists[name].index(d) + 1 if d in lists[name] else None for d in shown
            ]
            assert rows[f"rank_{name}"].to_list() == expected
        if method.startswith("team_draft"):
            _check_teams(rows, lists, names, fill=fill)
        elif method == "probabilistic":
            got = rows.select(*(f"p_{n}" for n in names)).rows()
            expected_p = softmax_probabilities([lists[n] for n in names], shown)
            assert np.allclose(got, expected_p, rtol=1e-12, atol=0) if shown else True
            for team, p in zip(rows["team"], got, strict=True):
                assert p[names.index(team)] > 0
        else:
            assert rows["team"].null_count() == len(shown)


def _check_teams(
    rows: pl.DataFrame, lists: dict[str, list[str]], names: list[str], *, fill: bool
) -> None:
    shown = rows["doc_id"].to_list()
    teams = rows["team"].to_list()
    prefix = 0
    while prefix < len(teams) and teams[prefix] is None:
        prefix += 1
    assert all(t is not None for t in teams[prefix:])
    for j, (doc, team) in enumerate(zip(shown, teams, strict=True)):
        if team is None:  # a common prefix: every list has it there
            assert all(len(x) > j and x[j] == doc for x in lists.values())
            continue
        own = lists[team]
        # the ranker's best document not shown above
        assert doc == next(d for d in own if d not in shown[:j])
    sizes = {n: teams.count(n) for n in names}
    if max(sizes.values()) - min(sizes.values()) > 1:
        assert fill
        smallest = min(sizes, key=lambda n: sizes[n])
        assert set(lists[smallest]) <= set(shown)


@settings(max_examples=40, deadline=None)
@pytest.mark.filterwarnings("ignore::ireval_df.errors.InterleavingWarning")
@given(case=cases(), data=st.data())
def test_a_search_gets_its_list_whatever_surrounds_it(case, data) -> None:
    method, by_search, options = case
    rankings = frame_of(by_search, options["seed"])
    if rankings["ranker"].n_unique() < 2:
        return
    out = interleave(rankings, method=method, missing_ranker="empty", **options)
    shuffled = rankings.sample(fraction=1.0, shuffle=True, seed=options["seed"] % 97)
    assert interleave(
        shuffled, method=method, missing_ranker="empty", **options
    ).equals(out)
    keep = data.draw(st.sets(st.sampled_from(sorted(by_search)), min_size=1))
    part = rankings.filter(pl.col("search_id").is_in(sorted(keep)))
    names = sorted(rankings["ranker"].unique().to_list())
    alone = interleave(
        part, method=method, missing_ranker="empty", rankers=names, **options
    )
    assert alone.equals(out.filter(pl.col("search_id").is_in(sorted(keep))))
