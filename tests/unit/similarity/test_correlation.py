"""tau and tau_ap on hand-worked rankings (derivations in the comments).

A ranking is written best first, a tie group in parentheses: ``(a b) c``
ties a and b at the top. ``x`` is the compared run, ``y`` the baseline.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from reference.test_tau_reference import parse as groups

from ireval_df.errors import OptionError
from ireval_df.similarity.correlation import tau, tau_ap

SCHEMA = {
    "key": pl.Int64,
    "doc_id": pl.String,
    "pos": pl.Int64,
    "tie_start": pl.Int64,
    "tie_size": pl.Int64,
}


def side(*orderings: str) -> pl.LazyFrame:
    """One key per ordering, numbered from 0; ``""`` is an empty ranking."""
    rows = []
    for key, ordering in enumerate(orderings):
        pos = 0
        for group in groups(ordering):
            start = pos + 1
            for doc in group:
                pos += 1
                rows.append((key, doc, pos, start, len(group)))
    return pl.LazyFrame(rows, schema=SCHEMA, orient="row")


def keys(n: int) -> pl.DataFrame:
    return pl.DataFrame({"key": range(n)}, schema={"key": pl.Int64})


def one(frame: pl.LazyFrame) -> float:
    return frame.collect()["value"].item()


# --- Kendall's tau-b ---------------------------------------------------------


def test_tau_counts_a_pair_tied_in_one_ranking_as_neither():
    # x = a b c d, y = (a b) c d. Pairs: ab tied in y (neither); ac ad bc bd
    # cd concordant: n_c = 5, n_d = 0. n0 = 6, n_x = 0, n_y = 1:
    # 5 / sqrt(6 * 5).
    value = one(tau(side("a b c d"), side("(a b) c d"), keys(1)))
    assert value == pytest.approx(5 / math.sqrt(30), abs=1e-15)


def test_tau_compares_the_documents_of_both_rankings():
    # common documents a b c: x orders them a b c, y c b a: every pair
    # discordant, -1. e and f are in one ranking each and do not count.
    assert one(tau(side("a b e c"), side("c f b a"), keys(1))) == -1.0


def test_tau_is_nan_without_two_common_documents_or_with_one_group():
    # key 0: one common document; key 1: x ties all three (n0 - n_x = 0);
    # key 2: both empty; key 3 has no row at all
    x = side("a b", "(a b c)", "")
    y = side("b c", "a b c", "")
    result = tau(x, y, keys(4)).collect()
    assert result["key"].to_list() == [0, 1, 2, 3]
    assert all(math.isnan(v) for v in result["value"])


# --- tau_AP, ties="a" ----------------------------------------------------------


def test_tau_ap_weights_swaps_near_the_top_of_the_run():
    # y = a b c d.  tau_AP = 2/(n-1) Σ_{i>=2} C(i)/(i-1) - 1, C(i) = documents
    # above i in x that y also ranks above i.
    # x = b a c d: a: C=0 -> 0; c: C=2 -> 2/2; d: C=3 -> 3/3. Σ = 2,
    #   2/3 * 2 - 1 = 1/3.
    # x = a b d c: b: 1/1; d: 2/2; c: {a, b} of {a, b, d} -> 2/3. Σ = 8/3,
    #   2/3 * 8/3 - 1 = 7/9.  (Kendall's tau is 2/3 for both.)
    result = tau_ap(side("b a c d", "a b d c"), side("a b c d", "a b c d"), keys(2))
    assert result.collect()["value"].to_list() == pytest.approx(
        [1 / 3, 7 / 9], abs=1e-15
    )


def test_tau_ap_a_is_the_mean_over_the_orders_of_a_run_tie():
    # y = a b c, x = (a b) c. Orders of the tie: a b c -> 1; b a c -> a: 0,
    # c: 2/2, 2/2 * 1 - 1 = 0. Mean 0.5. By the formula: c (p=3, t=1) has
    # C = 2 and weight 1/(3-1): 1; a and b (p=1, t=2) each add
    # 1/(2*2) * 1/1 = 1/4. Σ = 1.5, 2/2 * 1.5 - 1 = 0.5.
    assert one(tau_ap(side("(a b) c"), side("a b c"), keys(1))) == pytest.approx(0.5)


def test_tau_ap_a_run_all_tied_is_zero():
    # x = (a b c): no term I; each document adds 1/(2*3) (1/1 + 2/2) = 1/3.
    # Σ = 1, 2/2 * 1 - 1 = 0: a random order, on average.
    assert one(tau_ap(side("(a b c)"), side("a b c"), keys(1))) == pytest.approx(0.0)


def test_tau_ap_a_breaks_a_baseline_tie_in_position_order():
    # y = (a b) c, listed a before b: the truth is a b c. x = b a c -> 0
    # (as above); against b a c it would be 1.
    assert one(tau_ap(side("b a c"), side("(a b) c"), keys(1))) == pytest.approx(0.0)
    assert one(tau_ap(side("b a c"), side("(b a) c"), keys(1))) == pytest.approx(1.0)


def test_tau_ap_a_sym_averages_both_directions():
    # x = b c a, y = a b c.
    # run's positions, truth y: c: b above c in y -> 1/1; a: b, c below a in
    #   y -> 0. Σ = 1, 2/2 * 1 - 1 = 0.
    # baseline's positions, truth x: b: a is below b in x -> 0; c: of a, b
    #   only b is above c in x -> 1/2. Σ = 1/2, 2/2 * 1/2 - 1 = -1/2.
    # mean -1/4.
    x, y = side("b c a"), side("a b c")
    assert one(tau_ap(x, y, keys(1))) == pytest.approx(0.0)
    assert one(tau_ap(y, x, keys(1))) == pytest.approx(-0.5)
    assert one(tau_ap(x, y, keys(1), sym=True)) == pytest.approx(-0.25)


def test_tau_ap_recomputes_positions_within_the_common_documents():
    # common a b c: x = b a c, y = a b c -> 0 (as above). With z counted at
    # x's position 2, a would sit at 3 and the value would differ.
    value = one(tau_ap(side("b z a c"), side("a b c w"), keys(1)))
    assert value == pytest.approx(0.0)


# --- tau_AP, ties="b" ----------------------------------------------------------


def test_tau_ap_b_ties_on_both_sides():
    # x = a (b c) d, y = (a b) c d.  One way: 2/|T| Σ_{i∈T} C(i)/(p_i-1) - 1,
    # T = documents outside the top group, C(i) = documents of higher groups
    # strictly above i in the other ranking.
    # positions from x (p: a 1, b 2, c 2, d 4), truth y: b: a is tied with b
    #   in y -> 0; c: a above c -> 1/1; d: a, b, c above d -> 3/3.
    #   Σ = 2, |T| = 3: 2/3 * 2 - 1 = 1/3.
    # positions from y (p: a 1, b 1, c 3, d 4), truth x: c: a above c, b tied
    #   -> 1/2; d: a, b, c above d -> 3/3. Σ = 3/2, |T| = 2: 3/2 - 1 = 1/2.
    # mean 5/12, whatever sym says, and the same with x and y swapped.
    x, y = side("a (b c) d"), side("(a b) c d")
    for sym in (False, True):
        assert one(tau_ap(x, y, keys(1), ties="b", sym=sym)) == pytest.approx(5 / 12)
    assert one(tau_ap(y, x, keys(1), ties="b")) == pytest.approx(5 / 12)


def test_tau_ap_b_is_nan_when_a_ranking_ties_everything():
    # x = (a b c): no document outside the top group of x, T is empty
    assert math.isnan(one(tau_ap(side("(a b c)"), side("a b c"), keys(1), ties="b")))


def test_tau_ap_is_nan_without_two_common_documents():
    x, y = side("a b", "", "a"), side("b c", "a", "a")
    for ties in ("a", "b"):
        result = tau_ap(x, y, keys(4), ties=ties).collect()
        assert result["key"].to_list() == [0, 1, 2, 3]
        assert all(math.isnan(v) for v in result["value"])


def test_tau_ap_rejects_an_unknown_ties_option():
    with pytest.raises(OptionError, match=r"ties='c' is not one of 'a', 'b'"):
        tau_ap(side("a b"), side("a b"), keys(1), ties="c")  # type: ignore[arg-type]
