"""rank_with_ties' cut at a reach (both ways of selecting a ranking's reach-th value) and its sort of the rankings not best first (by length and padded)."""

from __future__ import annotations

import importlib

import numpy as np
import polars as pl
import pytest

rankings = importlib.import_module("ireval_df.similarity.rankings")


@pytest.mark.parametrize("lengths", [0, 8])
def test_reach_values_by_partition_and_by_top_k_agree(
    lengths: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 60, size=40)
    values = np.round(rng.random(int(sizes.sum())) * 5, 1)
    starts = np.cumsum(sizes) - sizes
    which = np.flatnonzero(sizes > 10)
    monkeypatch.setattr(rankings, "_LENGTHS", lengths)
    got = rankings._reach_values(values, starts, sizes, which, 10)
    want = [np.sort(values[starts[r] : starts[r] + sizes[r]])[-10] for r in which]
    assert got.tolist() == want


@pytest.mark.parametrize("lengths", [0, 100])
def test_order_adjacent_sorts_unordered_rankings_by_length_and_by_padding(
    lengths: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 40 rankings of 1..59 rows, half of them not best first, many ties;
    # _LENGTHS 0 pads every ranking to a power of two, 100 sorts by length
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 60, size=40)
    unordered = rng.random(40) < 0.5
    starts = np.cumsum(sizes) - sizes
    values = np.round(rng.random(int(sizes.sum())) * 5, 1)
    monkeypatch.setattr(rankings, "_LENGTHS", lengths)
    moves = rankings._order_adjacent(values, sizes, unordered)
    assert moves is not None
    to, rows = moves
    placed = values.copy()
    placed[to] = values[rows]
    for r in range(len(sizes)):
        span = slice(starts[r], starts[r] + sizes[r])
        want = np.sort(values[span])[::-1] if unordered[r] else values[span]
        assert placed[span].tolist() == want.tolist()
    # every row of an unordered ranking moves within it, once
    assert sorted(to.tolist()) == sorted(rows.tolist())
    owner = np.repeat(np.arange(len(sizes)), sizes)
    assert (owner[to] == owner[rows]).all()
    assert set(owner[to].tolist()) == set(np.flatnonzero(unordered).tolist())


def test_the_reach_keeps_whole_tie_groups_in_unordered_and_ordered_rankings() -> None:
    # ranking 0 best first, ranking 1 not; reach 2: the group at position 2 is kept whole
    run = pl.LazyFrame(
        {
            "run_id": "r",
            "query_id": ["a"] * 4 + ["b"] * 4,
            "doc_id": list("wxyz") * 2,
            "score": [4.0, 3.0, 3.0, 1.0, 1.0, 3.0, 4.0, 3.0],
        }
    )
    ranked = rankings.rank_with_ties(run, reach=2)
    rows = ranked.rows.join(ranked.rankings, on=rankings.RANKING).sort(
        "query_id", "pos"
    )
    assert rows.select("query_id", "doc_id", "tie_start", "tie_size").rows() == [
        ("a", "w", 1, 1),
        ("a", "y", 2, 2),
        ("a", "x", 2, 2),
        ("b", "y", 1, 1),
        ("b", "z", 2, 2),
        ("b", "x", 2, 2),
    ]


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_parts_cover_every_ranking_once_at_ranking_boundaries(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rankings, "workers", lambda: n)
    sizes = np.array([5, 1, 300, 2, 2, 40, 1])
    parts = rankings._parts(sizes)
    assert 1 <= len(parts) <= n
    ends = np.concatenate([[0], np.cumsum(sizes)])
    assert parts[0][0].start == 0
    assert parts[-1][0].stop == len(sizes)
    for (part, rows), (after, _) in zip(parts, [*parts[1:], (None, None)], strict=True):
        assert part.stop > part.start
        assert (rows.start, rows.stop) == (ends[part.start], ends[part.stop])
        if after is not None:
            assert after.start == part.stop


def test_parts_hold_about_part_rows_each_but_whole_rankings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rankings, "workers", lambda: 2)
    monkeypatch.setattr(rankings, "_PART_ROWS", 50)
    sizes = np.array([5, 1, 300, 2, 2, 40, 1, 30, 30])
    parts = rankings._parts(sizes)
    assert len(parts) >= 3
    for _, rows in parts:
        assert rows.stop - rows.start <= 300 + 50


def test_rank_with_ties_is_the_same_on_one_thread_and_on_several(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 30 rankings, some best first, of uneven lengths with ties, cut at 7
    rng = np.random.default_rng(3)
    frames = []
    for q in range(30):
        n = int(rng.integers(1, 25))
        score = np.round(rng.random(n) * 4, 0)
        if q % 3 == 0:
            score = np.sort(score)[::-1]
        frames.append(
            pl.DataFrame(
                {
                    "run_id": "r",
                    "query_id": f"q{q:02d}",
                    "doc_id": [f"d{i}" for i in range(n)],
                    "score": score,
                }
            )
        )
    run = pl.concat(frames).lazy()

    def ranked(n: int, part_rows: int = 1 << 16) -> pl.DataFrame:
        monkeypatch.setattr(rankings, "workers", lambda: n)
        monkeypatch.setattr(rankings, "_PART_ROWS", part_rows)
        return rankings.rank_with_ties(run, reach=7).rows

    one = ranked(1)
    assert one.height < 30 * 12  # the reach cut something
    for n in (2, 5):
        assert ranked(n).equals(one)
    assert ranked(1, part_rows=20).equals(one)
