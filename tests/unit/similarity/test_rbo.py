"""Rank-Biased Overlap on small rankings worked by hand.

Notation of ireval_df/similarity/rbo.py: S the shorter ranking (equal
lengths: the baseline y), L the longer, s <= l their lengths, X_d the
overlap at depth d, A_d the agreement. With p = 0.5 the factor (1 - p) / p
is 1, so a value is sum_{d <= l} A_d p^d plus the tail past l:

- min: X_l * (ln 2 - sum_{d <= l} p^d / d);
- max: sum_{d = l+1}^{f} (2d - l - s + X_l) / d p^d + p^(f+1) / (1 - p),
  f = l + s - X_l;
- ext: (X_l + (l - s) A_s) / l * p^(l+1) / (1 - p).

For l = 3: sum_{d <= 3} p^d / d = 0.5 + 0.125 + 0.125 / 3 = 2/3 and
p^4 / (1 - p) = 1/8. Every value was also checked against the reference
code (tests/reference/test_rbo_reference.py covers 4,000 more pairs).
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from reference.test_rbo_reference import groups_frame

from ireval_df.errors import OptionError
from ireval_df.similarity.rbo import RBO_SCORES, rbo

LN2 = math.log(2)


def compare(
    x: list[list[str]], y: list[list[str]], *, score: str, ties: str, p: float = 0.5
) -> float:
    keys = pl.Series([0])
    got = rbo(
        groups_frame(keys, pl.Series([x], dtype=pl.List(pl.List(pl.String)))),
        groups_frame(keys, pl.Series([y], dtype=pl.List(pl.List(pl.String)))),
        pl.DataFrame({"key": keys}),
        p=p,
        score=score,  # type: ignore[arg-type]
        ties=ties,  # type: ignore[arg-type]
    )
    return float(got["value"].item())


ABC = [["a"], ["b"], ["c"]]


@pytest.mark.parametrize("ties", ["a", "b", "w", "none"])
def test_identical_lists(ties: str) -> None:
    # A_d = 1 everywhere: ext = max = p + p^2 + p^3 + p^4/(1-p) = 1;
    # min = 7/8 + 3 (ln 2 - 2/3), the tail counting X_l / d = 3 / d only
    for score in ("ext", "max"):
        assert compare(ABC, ABC, score=score, ties=ties) == pytest.approx(
            1.0, abs=1e-15
        )
    # the same tie on both sides: b and w see identical lists (1.0), but a
    # averages over independent orders of the two ties: at depth 1 each of
    # a, b is on top with probability 1/2 on each side, X_1 = 2 * 1/4 = 1/2,
    # so ext = 1/2 * 1/2 + 1/4 + 1/8 + 1/8 = 3/4
    tied = [["a", "b"], ["c"]]
    want = 0.75 if ties == "a" else 1.0
    assert compare(tied, tied, score="ext", ties=ties) == pytest.approx(want, abs=1e-15)
    assert compare(ABC, ABC, score="min", ties=ties) == pytest.approx(
        7 / 8 + 3 * (LN2 - 2 / 3), abs=1e-15
    )


@pytest.mark.parametrize("ties", ["a", "b", "w", "none"])
def test_disjoint_lists(ties: str) -> None:
    # X = 0 at every depth: ext = min = 0; max lets both continue with the
    # other's documents: f = 4, tail (2*3 - 4)/3 p^3 + (2*4 - 4)/4 p^4 + p^5/(1-p)
    x, y = [["a"], ["b", "c"]], [["d", "e"], ["f"]]
    assert compare(x, y, score="ext", ties=ties) == 0.0
    assert compare(x, y, score="min", ties=ties) == 0.0
    # no overlap: ties only change A_d = 0, so max is the same for all
    x, y = [["a"], ["b"]], [["c"], ["d"]]
    assert compare(x, y, score="max", ties=ties) == pytest.approx(
        2 / 3 / 8 + 1 / 16 + 1 / 16, abs=1e-15
    )


def test_uneven_lengths_are_symmetric() -> None:
    # L = [a, b, c], S = [b] (s = 1, l = 3), no ties.
    # d = 1: X = 0, A = 0.  d = 2, 3: b seen, X = 1.
    # min: A_d = 2X / (d + d) = 1/2, 1/3; tail X_l (ln 2 - 2/3)
    #      -> 1/8 + 1/24 + ln 2 - 2/3 = ln 2 - 1/2
    # ext: A_s = A_1 = 0, so A_d as min; tail (1 + 2*0)/3 * 1/8
    #      -> 1/8 + 1/24 + 1/24 = 5/24
    # max: S's positions 2, 3 take L's a, c: X = 2, 3, A = 1; f = 3, tail 1/8
    #      -> 1/4 + 1/8 + 1/8 = 1/2
    want = {"min": LN2 - 0.5, "ext": 5 / 24, "max": 0.5, "res": 1 - LN2}
    for score, value in want.items():
        assert compare(ABC, [["b"]], score=score, ties="w") == pytest.approx(
            value, abs=1e-15
        )
        assert compare([["b"]], ABC, score=score, ties="w") == pytest.approx(
            value, abs=1e-15
        )


def test_prefix() -> None:
    # S = [a], a prefix of L = [a, b, c]: A_1 = 1, then min A_d = 1/d, so
    # min = sum_d p^d / d = ln 2; ext and max continue S with b, c: 1
    assert compare(ABC, [["a"]], score="min", ties="w") == pytest.approx(LN2, abs=1e-15)
    assert compare(ABC, [["a"]], score="ext", ties="w") == pytest.approx(1.0, abs=1e-15)
    assert compare(ABC, [["a"]], score="max", ties="w") == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize(
    ("ties", "ext"),
    [
        # x = [(a b), c] against y = [a, b, c]; equal lengths, S = y.
        # a: c_x(a, 1) = c_x(b, 1) = 1/2, so X_1 = 1/2, A_1 = X_1 / 1;
        #    X_2 = 2, X_3 = 3, A = 1  ->  1/4 + 1/4 + 1/8 + 1/8 = 3/4
        ("a", 0.75),
        # b: A_1 = X_1 / sqrt(1) / sqrt(0 + 1^2 / 2) = sqrt(1/2)
        ("b", math.sqrt(0.5) / 2 + 0.5),
        # w: a and b are both seen at 1: A_1 = 2 * 1 / (1 + 2) = 2/3
        ("w", 2 / 3 / 2 + 0.5),
        # none: x becomes [a, b, c], identical to y
        ("none", 1.0),
    ],
)
def test_tie_at_the_top(ties: str, ext: float) -> None:
    x, y = [["a", "b"], ["c"]], ABC
    assert compare(x, y, score="ext", ties=ties) == pytest.approx(ext, abs=1e-15)
    # s = l = X_l = 3: the three scores share A_1..A_3 and differ in the
    # tail only, max's p^4 / (1 - p) = 1/8 (= ext's) against min's
    # 3 (ln 2 - 2/3), so max = ext and res = 1/8 - 3 (ln 2 - 2/3) for all
    res = compare(x, y, score="res", ties=ties)
    assert res == pytest.approx(1 / 8 - 3 * (LN2 - 2 / 3), abs=1e-15)
    assert compare(x, y, score="max", ties=ties) == pytest.approx(ext, abs=1e-15)


def test_tie_group_longer_than_the_other_ranking() -> None:
    # L = [(a b c)], S = [c], ties a: c_L(i, d) = d/3 for every i.
    # d = 1: X = 1/3, A_1 = 1/3 (= A_s).
    # d = 2: X = 2/3. min A = 1/3. ext: the L-only a, b have mean share 2/3:
    #        X = 2/3 + 1 * 1/3 * 2/3 = 8/9, A = 4/9. max: u_1 adds 2/3, A = 2/3.
    # d = 3: X = 1. min 1/3; ext X = 1 + 2 * 1/3 = 5/3, A = 5/9; max X = 3, A = 1.
    # tails: min ln 2 - 2/3; ext (1 + 2/3)/3 * 1/8 = 5/72; max f = 3: 1/8.
    x, y = [["a", "b", "c"]], [["c"]]
    want = {
        "ext": 1 / 6 + 4 / 9 / 4 + 5 / 9 / 8 + 5 / 72,  # 5/12
        "min": 1 / 6 + 1 / 12 + 1 / 24 + LN2 - 2 / 3,  # ln 2 - 3/8
        "max": 1 / 6 + 2 / 3 / 4 + 1 / 8 + 1 / 8,  # 7/12
    }
    for score, value in want.items():
        assert compare(x, y, score=score, ties="a") == pytest.approx(value, abs=1e-15)


def test_empty_rankings_follow_the_edge_rules() -> None:
    # key 0: both empty; key 1: x empty, y = [a, b]; key 2: y empty
    keys = pl.Series([0, 1, 2])
    lists = pl.List(pl.List(pl.String))
    x = groups_frame(keys, pl.Series([[], [], [["a"], ["b"]]], dtype=lists))
    y = groups_frame(keys, pl.Series([[], [["a"], ["b"]], []], dtype=lists))
    frame = pl.DataFrame({"key": [2, 1, 0], "other": "kept out"})

    def values(score: str) -> list[float]:
        got = rbo(x, y, frame, p=0.5, score=score, ties="a")  # type: ignore[arg-type]
        assert got.columns == ["key", "value"]
        assert got["key"].to_list() == [2, 1, 0]
        return got["value"].to_list()

    assert values("ext") == [0.0, 0.0, 1.0]
    assert values("min") == [0.0, 0.0, 1.0]
    # max: the empty ranking may become the other, A_d = 1: the reference's 1.0
    assert values("max") == pytest.approx([1.0, 1.0, 1.0], abs=1e-15)
    assert values("res") == pytest.approx([1.0, 1.0, 0.0], abs=1e-15)


@pytest.mark.parametrize("p", [0, 1, 1.5, -0.1, float("nan"), True, "0.9"])
def test_p_outside_the_unit_interval(p: object) -> None:
    with pytest.raises(OptionError, match=r"p must be a number in \(0, 1\), got p="):
        compare(ABC, ABC, score="ext", ties="a", p=p)  # type: ignore[arg-type]


def test_unknown_words() -> None:
    with pytest.raises(OptionError, match=r"score='avg' is not one of 'ext'"):
        compare(ABC, ABC, score="avg", ties="a")
    with pytest.raises(
        OptionError, match=r"ties='z' is not one of 'a', 'b', 'w', 'none'"
    ):
        compare(ABC, ABC, score="ext", ties="z")
    assert RBO_SCORES == ("ext", "min", "max", "res")
