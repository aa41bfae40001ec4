"""interleave, interleaving_outcomes and interleaving_test on hand-made and simulated logs.

The exact distributions and credits come from ``tests/reference/
interleaving_exact.py``, a plain one-search-at-a-time reading of the papers.
Simulations use tolerances from the binomial (4.5 standard errors: with the
fixed seeds they pass or fail deterministically, and a correct
implementation fails one comparison in about 150,000).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from reference.interleaving_exact import (
    balanced_credit,
    balanced_lists,
    probabilistic_credit,
    probabilistic_lists,
    softmax_probabilities,
    team_credit,
    team_draft_lists,
)

from ireval_df.errors import (
    DataError,
    InterleavingWarning,
    OptionError,
    SchemaError,
)
from ireval_df.online import interleave, interleaving_outcomes, interleaving_test
from ireval_df.online.interleaving import (
    METHODS,
    _local_ids,
    search_keys,
    uniform_draws,
)
from ireval_df.stats.corrections import adjust

Z = 4.5


def rankings_of(lists: dict[str, list[str]], searches: int = 1) -> pl.DataFrame:
    """The same rankings for ``searches`` searches s00000, s00001, ..."""
    one = pl.DataFrame(
        {
            "ranker": [r for r, docs in lists.items() for _ in docs],
            "doc_id": [d for docs in lists.values() for d in docs],
            "rank": [i + 1 for docs in lists.values() for i in range(len(docs))],
        }
    )
    ids = pl.DataFrame({"search_id": [f"s{i:05d}" for i in range(searches)]})
    return ids.join(one, how="cross")


def shown_lists(results: pl.DataFrame) -> pl.DataFrame:
    """One row per search: its documents and teams joined in position order."""
    return results.group_by("search_id").agg(
        pl.col("doc_id").sort_by("position").str.join(",").alias("docs"),
        pl.col("team").sort_by("position").fill_null("-").str.join(",").alias("teams"),
    )


def close(observed: float, expected: float, n: int) -> bool:
    se = math.sqrt(max(expected * (1 - expected), 1e-12) / n)
    return abs(observed - expected) <= Z * se


# --- interleave: the lists ----------------------------------------------------------


def test_columns_dtypes_and_order() -> None:
    lists = {"A": ["a", "b", "c"], "B": ["b", "c", "d"]}
    rankings = rankings_of(lists, 3).sample(fraction=1.0, shuffle=True, seed=3)
    for method in ("team_draft", "balanced", "team_draft_multileave"):
        out = interleave(rankings, method=method, k=3)
        assert out.schema == pl.Schema(
            {
                "search_id": pl.String,
                "position": pl.Int32,
                "doc_id": pl.String,
                "team": pl.String,
                "rank_A": pl.UInt32,
                "rank_B": pl.UInt32,
            }
        )
        assert out.equals(out.sort("search_id", "position"))
        assert out.get_column("position").to_list() == [1, 2, 3] * 3
    prob = interleave(rankings, method="probabilistic", k=3)
    assert prob.columns[-2:] == ["p_A", "p_B"]
    assert prob.schema["p_A"] == pl.Float64


def test_team_draft_hand_derived() -> None:
    # A = (a, b), B = (b, c), k = 3 (mpkato's vector): A first shows a, B
    # then its best unshown b, then A has nothing left and B fills with c;
    # B first shows b, then A shows a, then B's c
    rankings = rankings_of({"A": ["a", "b"], "B": ["b", "c"]}, 200)
    seen = set(shown_lists(interleave(rankings, k=3)).select("docs", "teams").rows())
    assert seen == {("a,b,c", "A,B,B"), ("b,a,c", "B,A,B")}
    stopped = interleave(rankings, k=3, on_exhaustion="stop")
    seen = set(shown_lists(stopped).select("docs", "teams").rows())
    assert seen == {("a,b", "A,B"), ("b,a", "B,A")}


def test_rank_columns_are_each_rankers_rank_with_gaps_closed() -> None:
    rankings = pl.DataFrame(
        {
            "search_id": "q",
            "ranker": ["A", "A", "A", "B", "B"],
            "doc_id": ["x", "y", "z", "z", "w"],
            "rank": [1, 5, 9, 10, 20],  # ranks order the list; gaps are closed
        }
    )
    out = interleave(rankings, k=4)
    got = {d: (a, b) for d, a, b in out.select("doc_id", "rank_A", "rank_B").rows()}
    assert got == {"x": (1, None), "y": (2, None), "z": (3, 1), "w": (None, 2)}
    # ranks too far apart for one 64-bit sort key take a three-column sort
    wide = rankings.with_columns(pl.col("rank") * 2**58)
    assert interleave(wide, k=4).equals(out)
    repeated = pl.concat([wide, wide.head(1).with_columns(pl.lit("v").alias("doc_id"))])
    with pytest.raises(DataError, match=r"repeated \(search_id, ranker, rank\)"):
        interleave(repeated)


def test_ranks_below_k_are_reported_and_checked() -> None:
    # only the top k of each list is drafted from, but a shown document's rank
    # in another list may be deeper, and a repeat deep down is still an error
    rankings = pl.DataFrame(
        {
            "search_id": "s",
            "ranker": ["A"] * 4 + ["B"],
            "doc_id": ["a", "b", "c", "x", "x"],
            "rank": [1, 2, 3, 4, 1],
        }
    )
    for method in ("team_draft", "balanced"):
        out = interleave(rankings, method=method, k=2)
        ranks = dict(out.select("doc_id", "rank_A").rows())
        assert ranks == {"a": 1, "x": 4}
    deep = pl.concat(
        [
            rankings,
            pl.DataFrame({"search_id": "s", "ranker": "A", "doc_id": "a", "rank": 9}),
        ]
    )
    with pytest.raises(DataError, match="document twice .*doc_id='a'"):
        interleave(deep, k=2)


@pytest.mark.parametrize(
    ("method", "lists", "k", "stop", "prefix"),
    [
        ("team_draft", {"A": ["1", "2", "3"], "B": ["2", "3", "1"]}, 3, False, False),
        (
            "team_draft",
            {"A": ["a", "b", "c", "d"], "B": ["b", "e", "a"]},
            4,
            False,
            False,
        ),
        ("team_draft", {"A": ["a", "b"], "B": ["b", "c", "d", "e"]}, 5, True, False),
        (
            "team_draft",
            {"A": ["x", "y", "a", "b"], "B": ["x", "y", "b", "c"]},
            4,
            False,
            True,
        ),
        (
            "team_draft_multileave",
            {"A": ["a", "b", "c"], "B": ["b", "c", "d"], "C": ["d", "a", "e"]},
            4,
            False,
            False,
        ),
        ("balanced", {"A": ["1", "2", "3"], "B": ["2", "3", "1"]}, 3, True, False),
        ("balanced", {"A": ["a", "b"], "B": ["c", "b", "d", "e"]}, 5, False, False),
        (
            "probabilistic",
            {"A": ["a", "b", "c"], "B": ["c", "a", "d"]},
            3,
            False,
            False,
        ),
        ("probabilistic", {"A": ["a", "b"], "B": ["b", "c", "d"]}, 3, True, False),
    ],
)
def test_lists_as_often_as_the_algorithm_says(
    method: str, lists: dict[str, list[str]], k: int, stop: bool, prefix: bool
) -> None:
    n = 20_000
    out = interleave(
        rankings_of(lists, n),
        method=method,
        k=k,
        on_exhaustion="stop" if stop else "fill",
        common_prefix=prefix,
    )
    names = list(lists)
    if method.startswith("team_draft"):
        exact = {
            (",".join(d), ",".join(names[t] if t >= 0 else "-" for t in teams)): p
            for (d, teams), p in team_draft_lists(
                list(lists.values()), k, stop=stop, prefix=prefix
            ).items()
        }
        counts = dict(
            shown_lists(out)
            .group_by("docs", "teams")
            .len()
            .select(pl.concat_str("docs", pl.lit("|"), "teams"), "len")
            .rows()
        )
        exact = {f"{d}|{t}": p for (d, t), p in exact.items()}
    else:
        if method == "balanced":
            exact = balanced_lists(lists["A"], lists["B"], k, stop=stop)
        else:
            exact = probabilistic_lists(list(lists.values()), k, stop=stop)
        exact = {",".join(d): p for d, p in exact.items()}
        counts = dict(shown_lists(out).group_by("docs").len().rows())
    likely = {key for key, p in exact.items() if float(p) * n > 30}
    assert set(counts) <= set(exact)
    assert likely <= set(counts)
    for key, p in exact.items():
        assert close(counts.get(key, 0) / n, float(p), n), (key, p)


def test_probabilistic_keeps_each_rankers_softmax_probability() -> None:
    lists = {"A": ["a", "b", "c", "d"], "B": ["c", "e", "a"]}
    out = interleave(rankings_of(lists, 300), method="probabilistic", k=4)
    for _, group in out.group_by("search_id"):
        group = group.sort("position")
        shown = group.get_column("doc_id").to_list()
        expected = softmax_probabilities(list(lists.values()), shown)
        got = group.select("p_A", "p_B").rows()
        assert np.allclose(got, expected, rtol=1e-12, atol=0)
        # the ranker that drew a document had a positive probability of it
        for team, (pa, pb) in zip(group["team"], got, strict=True):
            assert (pa if team == "A" else pb) > 0


def test_common_prefix_is_shown_first_and_credited_to_no_one() -> None:
    lists = {"A": ["x", "y", "a", "b"], "B": ["x", "y", "b", "c"]}
    out = interleave(rankings_of(lists, 50), k=4, common_prefix=True)
    first = out.filter(pl.col("position") <= 2)
    assert first["doc_id"].to_list() == ["x", "y"] * 50
    assert first["team"].null_count() == 100
    rest = out.filter(pl.col("position") > 2)
    assert set(rest["team"].unique().to_list()) == {"A", "B"}
    clicks = pl.DataFrame({"search_id": ["s00000", "s00000"], "position": [1, 2]})
    outcome = interleaving_outcomes(out, clicks).row(0, named=True)
    assert (outcome["n_clicks"], outcome["credit_A"], outcome["winner"]) == (
        0,
        0.0,
        None,
    )


def test_k_beyond_every_list_shows_each_document_once() -> None:
    lists = {"A": ["a", "b"], "B": ["b", "c"]}
    for method in METHODS:
        out = interleave(rankings_of(lists, 20), method=method, k=10)
        assert set(out.group_by("search_id").len()["len"].to_list()) == {3}


# --- determinism -----------------------------------------------------------------


def _random_rankings(searches: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(searches):
        pool = [f"d{j}" for j in range(12)]
        for ranker in ("A", "B"):
            docs = rng.permutation(pool)[: rng.integers(3, 10)]
            rows += [(f"q{s}", ranker, str(d), i + 1) for i, d in enumerate(docs)]
    return pl.DataFrame(
        rows, schema=["search_id", "ranker", "doc_id", "rank"], orient="row"
    )


@pytest.mark.parametrize("method", ["team_draft", "balanced", "probabilistic"])
def test_same_search_same_list_whatever_the_rows_around_it(method: str) -> None:
    rankings = _random_rankings(300, seed=1)
    full = interleave(rankings, method=method, k=6, seed=11)
    again = interleave(rankings, method=method, k=6, seed=11)
    assert full.equals(again)
    shuffled = rankings.sample(fraction=1.0, shuffle=True, seed=2)
    assert interleave(shuffled, method=method, k=6, seed=11).equals(full)
    some = [f"q{s}" for s in range(0, 300, 7)]
    subset = interleave(
        rankings.filter(pl.col("search_id").is_in(some)), method=method, k=6, seed=11
    )
    assert subset.equals(full.filter(pl.col("search_id").is_in(some)))
    other = interleave(rankings, method=method, k=6, seed=12)
    assert not other.equals(full)


def test_integer_ids_are_their_decimal_strings() -> None:
    rankings = pl.DataFrame(
        {
            "search_id": [7] * 4,
            "ranker": ["A", "A", "B", "B"],
            "doc_id": [1, 2, 2, 3],
            "rank": [1, 2, 1, 2],
        }
    )
    as_text = rankings.with_columns(pl.col("search_id", "doc_id").cast(pl.String))
    assert interleave(rankings).equals(interleave(as_text))


def test_search_keys_are_blake2b_of_seed_and_id() -> None:
    keys = search_keys(["s1", "é"], seed=42)
    for key, text in zip(keys.tolist(), ["s1", "é"], strict=True):
        digest = hashlib.blake2b(
            text.encode(), digest_size=8, key=b"ireval_df.interleave:42"
        ).digest()
        assert key == int.from_bytes(digest, "little")


def test_uniform_draws_are_splitmix64() -> None:
    def splitmix(state: int, i: int) -> int:
        z = (state + (i + 1) * 0x9E3779B97F4A7C15) % 2**64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
        return z ^ (z >> 31)

    keys = np.array([0, 1, 2**63 + 5, 2**64 - 1], dtype=np.uint64)
    for i in (0, 1, 17):
        draws = uniform_draws(keys, i)
        expected = [(splitmix(int(k), i) >> 11) / 2**53 for k in keys.tolist()]
        assert draws.tolist() == expected


def test_documents_told_apart_when_first_hashes_collide() -> None:
    # two documents with the same first hash but different second hashes
    h1 = np.array([[5, 5, 5, 9]], dtype=np.uint64)
    h2 = np.array([[1, 2, 1, 3]], dtype=np.uint64)
    valid = np.ones((1, 4), dtype=bool)
    local, duplicate = _local_ids(h1, h2, valid, depth=2)
    assert duplicate is None
    ids = local[0].tolist()
    assert ids[0] == ids[2]
    assert len({ids[0], ids[1], ids[3]}) == 3


# --- interleave: bad input -------------------------------------------------------------


def test_bad_rankings_are_errors_that_say_what_to_do() -> None:
    good = rankings_of({"A": ["a", "b"], "B": ["b", "c"]})
    with pytest.raises(SchemaError, match=r"missing column\(s\) \['rank'\]"):
        interleave(good.drop("rank"))
    with pytest.raises(DataError, match="nulls"):
        interleave(
            good.with_columns(
                pl.when(pl.col("rank") == 2)
                .then(None)
                .otherwise(pl.col("doc_id"))
                .alias("doc_id")
            )
        )
    twice = pl.concat(
        [good, good.head(1).with_columns(pl.lit(9, dtype=pl.Int64).alias("rank"))]
    )
    with pytest.raises(DataError, match=r"document twice .*doc_id='a'"):
        interleave(twice)
    same_rank = pl.concat(
        [good, good.head(1).with_columns(pl.lit("z").alias("doc_id"))]
    )
    with pytest.raises(DataError, match=r"repeated \(search_id, ranker, rank\)"):
        interleave(same_rank)
    with pytest.raises(DataError, match="at least 2 rankers"):
        interleave(good.filter(pl.col("ranker") == "A"))
    three = pl.concat(
        [
            good,
            good.filter(pl.col("ranker") == "A").with_columns(
                pl.lit("C").alias("ranker")
            ),
        ]
    )
    with pytest.raises(OptionError, match="team_draft_multileave"):
        interleave(three, method="balanced")
    assert interleave(three, method="team_draft_multileave").height == 3
    assert interleave(three, rankers=["A", "C"]).columns[-2:] == ["rank_A", "rank_C"]
    with pytest.raises(DataError, match=r"rankers \['D'\] have no rows"):
        interleave(good, rankers=["A", "D"])
    with pytest.raises(
        OptionError,
        match="unknown method 'optimized'; the methods are 'team_draft', 'balanced'",
    ):
        interleave(good, method="optimized")  # type: ignore[arg-type]
    for option in (
        {"k": 0},
        {"k": 2.5},
        {"tau": -1.0},
        {"seed": "x"},
        {"on_exhaustion": "wrap"},
    ):
        with pytest.raises(OptionError):
            interleave(good, **option)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="team-draft methods"):
        interleave(good, method="balanced", common_prefix=True)
    with pytest.raises(SchemaError, match="whole numbers"):
        interleave(good.with_columns(pl.col("rank") + 0.5))
    with pytest.raises(SchemaError, match="polars or pandas"):
        interleave([1, 2])


def test_a_ranker_missing_for_a_search() -> None:
    both = rankings_of({"A": ["a", "b"], "B": ["b", "c"]}, 3)
    rankings = both.filter(
        ~((pl.col("search_id") == "s00001") & (pl.col("ranker") == "B"))
    )
    with pytest.raises(
        DataError,
        match=r"(?s)1 search\(es\) lack a ranker, e.g. search_id=.s00001.*missing_ranker=",
    ):
        interleave(rankings)
    with pytest.warns(
        InterleavingWarning, match=r"1 search\(es\) lack a ranker .* left out"
    ):
        skipped = interleave(rankings, missing_ranker="skip")
    assert skipped["search_id"].unique().sort().to_list() == ["s00000", "s00002"]
    with pytest.warns(InterleavingWarning, match="empty ranking"):
        empty = interleave(rankings, missing_ranker="empty", k=3)
    alone = empty.filter(pl.col("search_id") == "s00001")
    assert alone["doc_id"].to_list() == ["a", "b"]
    assert alone["team"].to_list() == ["A", "A"]


def test_pandas_in_pandas_out() -> None:
    pd = pytest.importorskip("pandas")
    rankings = rankings_of({"A": ["a", "b"], "B": ["b", "c"]}, 2)
    out = interleave(rankings.to_pandas())
    assert isinstance(out, pd.DataFrame)
    back = pl.from_pandas(out).with_columns(pl.col("rank_A", "rank_B").cast(pl.UInt32))
    assert back.equals(interleave(rankings))
    clicks = pd.DataFrame({"search_id": ["s00000"], "position": [1]})
    outcomes = interleaving_outcomes(out, clicks, method="team_draft")
    assert isinstance(outcomes, pd.DataFrame)
    assert isinstance(interleaving_test(outcomes), pd.DataFrame)


# --- outcomes -----------------------------------------------------------------------


def _team_results() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "search_id": ["s1"] * 4 + ["s2"] * 2,
            "position": [1, 2, 3, 4, 1, 2],
            "doc_id": ["a", "b", "c", "d", "x", "y"],
            "team": ["A", "B", "A", "B", "B", "A"],
            "rank_A": [1, 2, 3, None, 1, 2],
            "rank_B": [None, 1, 2, 3, 1, 2],
        }
    )


def test_team_draft_credit_counts_clicked_positions_per_team() -> None:
    clicks = pl.DataFrame(
        {
            "search_id": ["s1", "s1", "s1", "s2"],
            "position": [2, 2, 4, 1],  # position 2 twice counts once
        }
    )
    out = interleaving_outcomes(_team_results(), clicks)
    assert out.rows() == [("s1", 0.0, 2.0, 2, "B"), ("s2", 0.0, 1.0, 1, "B")]
    none = interleaving_outcomes(_team_results(), clicks.head(0))
    assert none.rows() == [("s1", 0.0, 0.0, 0, None), ("s2", 0.0, 0.0, 0, None)]


def test_multileave_winner_is_the_strictly_largest_credit() -> None:
    results = pl.DataFrame(
        {
            "search_id": ["s"] * 3 + ["t"] * 3,
            "position": [1, 2, 3] * 2,
            "team": ["A", "B", "C"] * 2,
            "rank_A": [1] * 6,
            "rank_B": [1] * 6,
            "rank_C": [1] * 6,
        }
    )
    clicks = pl.DataFrame({"search_id": ["s", "t", "t"], "position": [3, 1, 2]})
    out = interleaving_outcomes(results, clicks)
    assert out.select("search_id", "winner").rows() == [("s", "C"), ("t", None)]


def test_balanced_credit_uses_chapelles_k_star() -> None:
    # A = (a, b, c), B = (b, d, a); shown (a, b, d, c). A click on d (B's
    # rank 2, not in A): k* = 2, A's top 2 = {a, b}, B's top 2 = {b, d}.
    results = pl.DataFrame(
        {
            "search_id": "s",
            "position": [1, 2, 3, 4],
            "doc_id": ["a", "b", "d", "c"],
            "team": pl.Series([None] * 4, dtype=pl.String),
            "rank_A": [1, 2, None, 3],
            "rank_B": [3, 1, 2, None],
        }
    )

    def credit(positions: list[int]) -> tuple:
        clicks = pl.DataFrame(
            {"search_id": ["s"] * len(positions), "position": positions}
        )
        row = interleaving_outcomes(results, clicks, method="balanced").row(0)
        return row[1:]

    assert credit([3]) == (0.0, 1.0, 1, "B")  # d only in B's top 2
    assert credit([1, 3]) == (1.0, 1.0, 2, None)  # a in A's top 2 only
    assert credit([4]) == (1.0, 0.0, 1, "A")  # c: A's rank 3, k* = 3; B lacks c
    assert credit([2, 4]) == (2.0, 1.0, 2, "A")


def test_probabilistic_credit_equals_the_sum_over_all_assignments() -> None:
    rng = np.random.default_rng(5)
    rows, clicks, expected = [], [], {}
    for case in range(60):
        pool = [f"d{j}" for j in range(8)]
        lists = [list(rng.permutation(pool)[: rng.integers(2, 7)]) for _ in range(2)]
        shown = list(dict.fromkeys(lists[0][:3] + lists[1][:3]))[: rng.integers(1, 7)]
        clicked = {j for j in range(len(shown)) if rng.random() < 0.5}
        probs = softmax_probabilities(lists, shown)
        sid = f"c{case:02d}"
        for j, doc in enumerate(shown):
            rows.append(
                {
                    "search_id": sid,
                    "position": j + 1,
                    "doc_id": doc,
                    "p_A": probs[j][0],
                    "p_B": probs[j][1],
                    "rank_A": None,
                    "rank_B": None,
                }
            )
        clicks += [{"search_id": sid, "position": j + 1} for j in clicked]
        expected[sid] = probabilistic_credit(lists, shown, clicked)
    results = pl.DataFrame(
        rows, schema_overrides={"rank_A": pl.Int64, "rank_B": pl.Int64}
    )
    out = interleaving_outcomes(results, pl.DataFrame(clicks))
    for sid, a, b, _, winner in out.rows():
        assert [a, b] == pytest.approx(expected[sid], rel=1e-12, abs=1e-15)
        if abs(a - b) > 1e-9:
            assert winner == ("A" if a > b else "B")


def test_credited_events_click_sat_click_add_to_cart() -> None:
    events = pl.DataFrame(
        {
            "search_id": ["s1", "s1", "s1", "s2", "s2"],
            "position": [1, 2, None, 1, 2],
            "doc_id": [None, None, "d", None, None],
            "event_type": ["click", "click", "add_to_cart", "purchase", "add_to_cart"],
            "dwell_ms": [40_000, 5_000, None, None, None],
        }
    )
    clicks = interleaving_outcomes(_team_results(), events)
    assert clicks.select("credit_A", "credit_B").rows() == [(1.0, 1.0), (0.0, 0.0)]
    sat = interleaving_outcomes(_team_results(), events, credit="sat_click")
    assert sat.select("credit_A", "credit_B").rows() == [(1.0, 0.0), (0.0, 0.0)]
    longer = interleaving_outcomes(
        _team_results(), events, credit="sat_click", sat_tau=50
    )
    assert longer["n_clicks"].to_list() == [0, 0]
    # an add-to-cart logged with its document, not its position, finds it
    carts = interleaving_outcomes(_team_results(), events, credit="add_to_cart")
    assert carts.select("credit_A", "credit_B").rows() == [(0.0, 1.0), (1.0, 0.0)]
    with pytest.raises(SchemaError, match="dwell_ms"):
        interleaving_outcomes(
            _team_results(), events.drop("dwell_ms"), credit="sat_click"
        )
    with pytest.raises(SchemaError, match="milliseconds as numbers"):
        interleaving_outcomes(
            _team_results(),
            events.with_columns(pl.col("dwell_ms").cast(pl.String)),
            credit="sat_click",
        )
    with pytest.raises(SchemaError, match="event_type"):
        interleaving_outcomes(
            _team_results(), events.drop("event_type"), credit="add_to_cart"
        )
    with pytest.raises(OptionError, match="credit='purchase'"):
        interleaving_outcomes(_team_results(), events, credit="purchase")  # type: ignore[arg-type]


def test_clicks_on_positions_not_shown_are_counted() -> None:
    clicks = pl.DataFrame(
        {"search_id": ["s1", "s1", "s9", None], "position": [1, 7, 1, 1]}
    )
    with pytest.warns(
        InterleavingWarning,
        match=r"3 click event\(s\) are not on a shown result \(2 on .*search_id='s1' position=7.*1 without a search_id.*unmatched='error'",
    ):
        out = interleaving_outcomes(_team_results(), clicks)
    assert out["n_clicks"].to_list() == [1, 0]
    with pytest.raises(DataError, match="unmatched='warn'"):
        interleaving_outcomes(_team_results(), clicks, unmatched="error")


def test_method_is_read_from_results() -> None:
    rankings = rankings_of({"A": ["a", "b", "c"], "B": ["c", "b", "a"]}, 20)
    clicks = pl.DataFrame(
        {"search_id": [f"s{i:05d}" for i in range(20)], "position": 1}
    )
    for method in ("team_draft", "balanced", "probabilistic"):
        results = interleave(rankings, method=method, k=3)
        recorded = interleaving_outcomes(results, clicks)
        from_columns = interleaving_outcomes(results.clone(), clicks)  # no settings
        given = interleaving_outcomes(results.clone(), clicks, method=method)
        assert recorded.equals(from_columns)
        assert recorded.equals(given)
    with pytest.raises(OptionError, match="unknown method"):
        interleaving_outcomes(results, clicks, method="optimized")  # type: ignore[arg-type]


def test_bad_results_are_errors() -> None:
    clicks = pl.DataFrame({"search_id": ["s1"], "position": [1]})
    with pytest.raises(SchemaError, match="rank_<ranker>"):
        interleaving_outcomes(_team_results().drop("rank_A", "rank_B"), clicks)
    with pytest.raises(SchemaError, match=r"\['team'\]"):
        interleaving_outcomes(_team_results().drop("team"), clicks, method="team_draft")
    with pytest.raises(SchemaError, match=r"\['p_A', 'p_B'\]"):
        interleaving_outcomes(_team_results(), clicks, method="probabilistic")
    strange = _team_results().with_columns(pl.lit("Z").alias("team"))
    with pytest.raises(DataError, match="not one of the rankers"):
        interleaving_outcomes(strange, clicks)
    doubled = pl.concat([_team_results(), _team_results().head(1)])
    with pytest.raises(DataError, match=r"repeated \(search_id, position\)"):
        interleaving_outcomes(doubled, clicks)
    three = _team_results().with_columns(pl.col("rank_A").alias("rank_C"))
    with pytest.raises(OptionError, match="two rankers"):
        interleaving_outcomes(three, clicks, method="balanced")


def test_searches_bring_users_and_slices() -> None:
    searches = pl.DataFrame(
        {
            "search_id": ["s1", "s2"],
            "user_id": ["u1", "u1"],
            "device": ["mobile", "desktop"],
        }
    )
    clicks = pl.DataFrame({"search_id": ["s1"], "position": [1]})
    out = interleaving_outcomes(_team_results(), clicks, searches=searches)
    assert out.columns[-2:] == ["user_id", "device"]
    with pytest.raises(DataError, match="repeated search_ids"):
        interleaving_outcomes(
            _team_results(), clicks, searches=pl.concat([searches, searches])
        )
    with pytest.raises(SchemaError, match="already hold"):
        interleaving_outcomes(
            _team_results(),
            clicks,
            searches=searches.with_columns(pl.lit(1).alias("winner")),
        )


# --- bias and fidelity --------------------------------------------------------------


def _results_from(
    lists: dict[str, list[str]],
    shown: tuple[str, ...],
    teams: tuple[int, ...] | None,
    sid: str,
) -> list[dict]:
    names = list(lists)
    rows = []
    for j, doc in enumerate(shown):
        row: dict = {"search_id": sid, "position": j + 1, "doc_id": doc}
        row["team"] = names[teams[j]] if teams is not None and teams[j] >= 0 else None
        for name, docs in lists.items():
            row[f"rank_{name}"] = docs.index(doc) + 1 if doc in docs else None
        rows.append(row)
    return rows


def test_one_random_click_exactly_by_enumeration() -> None:
    # A = (1, 2, 3), B = (2, 3, 1), one click at a uniformly random position:
    # team draft gives each ranker exactly half the wins; balanced gives B 2/3
    lists = {"A": ["1", "2", "3"], "B": ["2", "3", "1"]}
    for method, support in (
        ("team_draft", team_draft_lists(list(lists.values()), 3)),
        (
            "balanced",
            {
                (d, None): p
                for d, p in balanced_lists(lists["A"], lists["B"], 3).items()
            },
        ),
    ):
        rows, clicks, weight = [], [], {}
        for n, ((shown, teams), p) in enumerate(support.items()):
            for click in range(len(shown)):
                sid = f"{n}-{click}"
                rows += _results_from(lists, shown, teams, sid)
                clicks.append({"search_id": sid, "position": click + 1})
                weight[sid] = p * Fraction(1, len(shown))
        results = pl.DataFrame(rows, schema_overrides={"team": pl.String})
        out = interleaving_outcomes(results, pl.DataFrame(clicks), method=method)
        wins = {"A": Fraction(0), "B": Fraction(0)}
        for sid, winner in out.select("search_id", "winner").rows():
            wins[winner] += weight[sid]
        expected = {"A": Fraction(1, 2), "B": Fraction(1, 2)}
        if method == "balanced":
            expected = {"A": Fraction(1, 3), "B": Fraction(2, 3)}
        assert wins == expected


def _one_random_click(results: pl.DataFrame, seed: int) -> pl.DataFrame:
    sizes = results.group_by("search_id").len().sort("search_id")
    rng = np.random.default_rng(seed)
    positions = rng.integers(1, sizes["len"].to_numpy() + 1)
    return pl.DataFrame({"search_id": sizes["search_id"], "position": positions})


def test_one_random_click_by_simulation() -> None:
    n = 30_000
    rankings = rankings_of({"A": ["1", "2", "3"], "B": ["2", "3", "1"]}, n)
    for method, b_wins in (("team_draft", 0.5), ("balanced", 2 / 3)):
        results = interleave(rankings, method=method, k=3, seed=4)
        out = interleaving_outcomes(results, _one_random_click(results, seed=9))
        share = (out["winner"] == "B").mean()
        assert out["winner"].null_count() == 0
        assert close(share, b_wins, n), (method, share)


@pytest.mark.parametrize("stop", [False, True])
def test_team_draft_random_clicker_gives_each_ranker_half(stop: bool) -> None:
    # many different ranking pairs, long enough that "fill" never runs dry
    # (or short ones with "stop"), and a clicker that ignores the documents
    searches = 20_000
    rng = np.random.default_rng(17)
    pool = np.array([f"d{j}" for j in range(15)])
    length = 4 if stop else 8
    a = np.argsort(rng.random((searches, 15)), axis=1)[:, :length]
    b = np.argsort(rng.random((searches, 15)), axis=1)[:, :length]
    ids = np.repeat([f"q{i:05d}" for i in range(searches)], length)
    rankings = pl.concat(
        [
            pl.DataFrame(
                {
                    "search_id": ids,
                    "ranker": name,
                    "doc_id": pool[m].ravel(),
                    "rank": np.tile(np.arange(1, length + 1), searches),
                }
            )
            for name, m in (("A", a), ("B", b))
        ]
    )
    results = interleave(rankings, k=6, on_exhaustion="stop" if stop else "fill")
    clicked = results.filter(pl.Series(rng.random(results.height) < 0.3))
    out = interleaving_outcomes(results, clicked.select("search_id", "position"))
    credit_a, credit_b = out["credit_A"].sum(), out["credit_B"].sum()
    total = credit_a + credit_b
    # per search the credits are not independent: compare wins with losses
    wins, losses = (out["winner"] == "A").sum(), (out["winner"] == "B").sum()
    assert close(wins / (wins + losses), 0.5, wins + losses)
    assert abs(credit_a / total - 0.5) < 0.02


def test_fill_favours_the_longer_list_under_random_clicks() -> None:
    # documented: when one list runs out, "fill" lets the other take the rest
    # of the page, so a clicker that ignores the documents favours it
    lists = [["a", "b"], ["b", "c", "d", "e"]]
    expected = [Fraction(0), Fraction(0)]
    for (shown, teams), p in team_draft_lists(lists, 4).items():
        for r in (0, 1):
            expected[r] += p * Fraction(teams.count(r), len(shown))
    assert expected == [Fraction(1, 4), Fraction(3, 4)]
    for _shown, teams in team_draft_lists(lists, 4, stop=True):
        assert teams.count(0) == teams.count(1)


def _pbm_clicks(results: pl.DataFrame, relevant: set[str], seed: int) -> pl.DataFrame:
    exam = {1: 1.0, 2: 0.7, 3: 0.5, 4: 0.35, 5: 0.25}
    p = results.select(
        pl.col("position").replace_strict(exam, return_dtype=pl.Float64)
        * pl.when(pl.col("doc_id").is_in(list(relevant))).then(0.8).otherwise(0.2)
    ).to_series()
    rng = np.random.default_rng(seed)
    return results.filter(pl.Series(rng.random(results.height) < p.to_numpy())).select(
        "search_id", "position"
    )


def _pbm_expectation(
    support: dict, relevant: set[str], credit
) -> tuple[float, float, float]:
    """Exact P(A wins), P(B wins) and E[credit_A - credit_B] under the click model."""
    exam = [1.0, 0.7, 0.5, 0.35, 0.25]
    win_a = win_b = mean = 0.0
    for key, p_list in support.items():
        shown = key[0]
        probs = [exam[j] * (0.8 if d in relevant else 0.2) for j, d in enumerate(shown)]
        for pattern in itertools.product((0, 1), repeat=len(shown)):
            p_click = math.prod(
                q if c else 1 - q for q, c in zip(probs, pattern, strict=True)
            )
            clicked = {j for j, c in enumerate(pattern) if c}
            a, b = credit(key, clicked)
            weight = float(p_list) * p_click
            mean += weight * (a - b)
            if a - b > 1e-12:
                win_a += weight
            elif b - a > 1e-12:
                win_b += weight
    return win_a, win_b, mean


def test_a_user_who_prefers_the_better_ranker_makes_it_win_at_the_implied_rate() -> (
    None
):
    # A puts the relevant documents r1, r2 first; B buries them. Clicks follow
    # a position-based model: examination 1, .7, .5, .35 by position, click
    # on an examined document .8 if relevant, .2 if not
    lists = {"A": ["r1", "r2", "n1", "n2", "n3"], "B": ["n1", "n2", "r1", "n3", "r2"]}
    relevant = {"r1", "r2"}
    k, n = 4, 20_000
    rankings = rankings_of(lists, n)
    a, b = lists["A"], lists["B"]
    cases = {
        "team_draft": (
            team_draft_lists([a, b], k),
            lambda key, c: team_credit(list(key[1]), c, 2),
        ),
        "balanced": (
            {(d,): p for d, p in balanced_lists(a, b, k, stop=False).items()},
            lambda key, c: balanced_credit(a, b, list(key[0]), c),
        ),
        "probabilistic": (
            {(d,): p for d, p in probabilistic_lists([a, b], k).items()},
            lambda key, c: probabilistic_credit([a, b], list(key[0]), c),
        ),
    }
    for method, (support, credit) in cases.items():
        win_a, win_b, mean = _pbm_expectation(support, relevant, credit)
        assert win_a > win_b
        results = interleave(rankings, method=method, k=k, seed=3)
        out = interleaving_outcomes(results, _pbm_clicks(results, relevant, seed=8))
        assert close(out["winner"].eq_missing("A").mean(), win_a, n), method
        assert close(out["winner"].eq_missing("B").mean(), win_b, n), method
        diff = (out["credit_A"] - out["credit_B"]).to_numpy()
        assert abs(diff.mean() - mean) <= Z * diff.std() / math.sqrt(n), method


# --- interleaving_test --------------------------------------------------------------


def _outcomes(wins: int, losses: int, ties: int, no_click: int = 0) -> pl.DataFrame:
    a = [1.0] * wins + [0.0] * losses + [1.0] * ties + [0.0] * no_click
    b = [0.0] * wins + [1.0] * losses + [1.0] * ties + [0.0] * no_click
    clicks = [1] * wins + [1] * losses + [2] * ties + [0] * no_click
    return pl.DataFrame(
        {
            "search_id": [f"s{i:04d}" for i in range(len(a))],
            "credit_A": a,
            "credit_B": b,
            "n_clicks": clicks,
        }
    )


def test_sign_test_delta_and_interval() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    result = interleaving_test(_outcomes(30, 18, 7, no_click=5))
    counts = ["n_units", "n_searches", "n_no_click", "wins", "losses", "ties"]
    stats = ["delta_ab", "ci_low", "ci_high", "p_value", "p_adjusted"]
    assert result.schema == pl.Schema(
        {"ranker_a": pl.String, "ranker_b": pl.String, "unit": pl.String}
        | dict.fromkeys(counts, pl.Int64)
        | dict.fromkeys(stats, pl.Float64)
        | {"significant": pl.Boolean}
    )
    row = result.row(0, named=True)
    assert (row["wins"], row["losses"], row["ties"], row["n_no_click"]) == (
        30,
        18,
        7,
        5,
    )
    assert (row["n_units"], row["n_searches"], row["unit"]) == (55, 55, "search")
    # Chapelle et al.: (wins + ties / 2) / n - 1/2 = (wins - losses) / (2 n)
    assert row["delta_ab"] == pytest.approx((30 + 7 / 2) / 55 - 0.5)
    assert row["delta_ab"] == pytest.approx((30 - 18) / (2 * 55))
    test = scipy_stats.binomtest(30, 48, 0.5)
    assert row["p_value"] == pytest.approx(test.pvalue, rel=1e-12)
    ci = test.proportion_ci(0.95, method="exact")
    assert row["ci_low"] == pytest.approx(48 / 55 * (ci.low - 0.5))
    assert row["ci_high"] == pytest.approx(48 / 55 * (ci.high - 0.5))
    assert row["ci_low"] < row["delta_ab"] < row["ci_high"]
    ties = interleaving_test(_outcomes(0, 0, 4)).row(0, named=True)
    assert (ties["delta_ab"], ties["p_value"], ties["ci_low"], ties["ci_high"]) == (
        0.0,
        1.0,
        0.0,
        0.0,
    )
    nothing = interleaving_test(_outcomes(0, 0, 0, no_click=3)).row(0, named=True)
    assert nothing["delta_ab"] is None
    assert nothing["p_value"] is None
    assert nothing["p_adjusted"] is None


def test_users_vote_once_in_the_sign_test() -> None:
    outcomes = pl.DataFrame(
        {
            "search_id": [f"s{i}" for i in range(8)],
            "user_id": ["u1", "u1", "u1", "u2", "u3", "u3", "u4", "u5"],
            "credit_A": [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0],
            "credit_B": [0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0],
            "n_clicks": [1, 1, 1, 1, 1, 1, 0, 3],
        }
    )
    # u1: +1 +1 -1 -> win; u2: -1 -> loss; u3: +1 -1 -> tie; u4: no click; u5: win
    row = interleaving_test(outcomes).row(0, named=True)  # user_id is the default unit
    assert row["unit"] == "user_id"
    assert (row["wins"], row["losses"], row["ties"]) == (2, 1, 1)
    assert (row["n_units"], row["n_searches"], row["n_no_click"]) == (4, 7, 1)
    assert row["delta_ab"] == pytest.approx(1 / 8)
    by_search = interleaving_test(outcomes, unit="search").row(0, named=True)
    assert (by_search["wins"], by_search["losses"], by_search["ties"]) == (4, 3, 0)
    with pytest.warns(
        InterleavingWarning, match=r"1 search\(es\) have a null 'user_id'"
    ):
        interleaving_test(
            outcomes.with_columns(
                pl.when(pl.col("search_id") == "s7")
                .then(None)
                .otherwise(pl.col("user_id"))
                .alias("user_id")
            )
        )


def test_cluster_bootstrap_resamples_users_with_their_searches() -> None:
    # 30 users, each with 20 searches that all go the same way: the searches
    # are not independent, and only the cluster bootstrap sees it
    rng = np.random.default_rng(2)
    votes = np.where(rng.random(30) < 0.65, 1.0, -1.0)
    users = np.repeat([f"u{i:02d}" for i in range(30)], 20)
    outcome = np.repeat(votes, 20)
    outcomes = pl.DataFrame(
        {
            "search_id": [f"s{i:03d}" for i in range(600)],
            "user_id": users,
            "credit_A": (outcome > 0).astype(float),
            "credit_B": (outcome < 0).astype(float),
            "n_clicks": 1,
        }
    )
    clustered = interleaving_test(
        outcomes, test="bootstrap", n_resamples=2000, seed=5
    ).row(0, named=True)
    naive = interleaving_test(
        outcomes, unit="search", test="bootstrap", n_resamples=2000, seed=5
    ).row(0, named=True)
    assert clustered["delta_ab"] == pytest.approx(votes.mean() / 2)
    assert clustered["delta_ab"] == naive["delta_ab"]
    width_c = clustered["ci_high"] - clustered["ci_low"]
    width_n = naive["ci_high"] - naive["ci_low"]
    assert width_c > 3 * width_n
    assert clustered["p_value"] > naive["p_value"]
    # the same draws, by hand: resample users, delta = sum / (2 x searches)
    hand_rng = np.random.default_rng(5)
    picks = hand_rng.integers(0, 30, size=(2000, 30))
    sums = votes * 20
    deltas = sums[picks].sum(axis=1) / (2 * 20 * 30)
    assert clustered["ci_low"] == pytest.approx(np.quantile(deltas, 0.025))
    assert clustered["ci_high"] == pytest.approx(np.quantile(deltas, 0.975))
    again = interleaving_test(outcomes, test="bootstrap", n_resamples=2000, seed=5)
    assert again.row(0, named=True) == clustered


def test_multileave_pairs_slices_and_the_correction_family() -> None:
    rng = np.random.default_rng(8)
    n = 400
    credits = rng.poisson([0.9, 0.6, 0.5], size=(n, 3)).astype(float)
    outcomes = pl.DataFrame(
        {
            "search_id": [f"s{i:03d}" for i in range(n)],
            "credit_A": credits[:, 0],
            "credit_B": credits[:, 1],
            "credit_C": credits[:, 2],
            "n_clicks": credits.sum(axis=1).astype(int),
            "device": rng.choice(["mobile", "desktop"], n),
        }
    )
    out = interleaving_test(outcomes, by="device")
    assert out.select("ranker_a", "ranker_b", "device").rows() == [
        ("A", "B", "desktop"),
        ("A", "B", "mobile"),
        ("A", "C", "desktop"),
        ("A", "C", "mobile"),
        ("B", "C", "desktop"),
        ("B", "C", "mobile"),
    ]
    p = out["p_value"].to_numpy()
    assert np.allclose(out["p_adjusted"].to_numpy(), adjust(p, "holm"))
    none = interleaving_test(outcomes, by="device", correction="none")
    assert np.allclose(none["p_adjusted"].to_numpy(), p)
    first = out.row(0, named=True)
    sub = outcomes.filter(pl.col("device") == "desktop")
    has = sub.filter(pl.col("n_clicks") > 0)
    wins = (has["credit_A"] > has["credit_B"]).sum()
    losses = (has["credit_A"] < has["credit_B"]).sum()
    assert (first["wins"], first["losses"]) == (wins, losses)
    assert (first["significant"]) == (first["p_adjusted"] <= 0.05)


def test_bad_options_and_columns() -> None:
    outcomes = _outcomes(3, 1, 1)
    with pytest.raises(SchemaError, match="user_id"):
        interleaving_test(outcomes, unit="user_id")
    with pytest.raises(SchemaError, match="device"):
        interleaving_test(outcomes, by="device")
    with pytest.raises(OptionError, match="test='t'"):
        interleaving_test(outcomes, test="t")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="alpha"):
        interleaving_test(outcomes, alpha=1.5)
    with pytest.raises(OptionError, match="correction"):
        interleaving_test(outcomes, correction="sidak")  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="ranker"):
        interleaving_test(outcomes.drop("credit_B"))
    # a missing credit was read as a tie
    with pytest.raises(DataError, match="null or NaN credit"):
        interleaving_test(
            outcomes.with_columns(
                credit_A=pl.when(pl.int_range(pl.len()) == 0)
                .then(float("nan"))
                .otherwise("credit_A")
            )
        )
    with pytest.raises(DataError, match="null or NaN credit"):
        interleaving_test(outcomes.with_columns(credit_B=pl.lit(None, pl.Float64)))


def test_end_to_end_on_a_simulated_log() -> None:
    # users who prefer A: interleave, click, outcomes, test
    lists = {"A": ["r1", "r2", "n1", "n2", "n3"], "B": ["n1", "n2", "r1", "n3", "r2"]}
    results = interleave(rankings_of(lists, 3000), k=4, seed=1)
    clicks = _pbm_clicks(results, {"r1", "r2"}, seed=2)
    users = pl.DataFrame(
        {
            "search_id": [f"s{i:05d}" for i in range(3000)],
            "user_id": [f"u{i % 300}" for i in range(3000)],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outcomes = interleaving_outcomes(results, clicks, searches=users)
    for test in ("sign", "bootstrap"):
        row = interleaving_test(outcomes, test=test, n_resamples=500).row(0, named=True)
        assert row["delta_ab"] > 0.1
        assert row["p_value"] < 0.01
        assert row["significant"]
