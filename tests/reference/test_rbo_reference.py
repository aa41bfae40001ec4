"""RBO against Corsi & Urbano's reference code, on 4,000 generated pairs.

``data/rbo_cases.parquet`` (made by ``data/make_rbo_cases.py``) holds, per
pair of rankings, the reference's value for every ``ties`` and ``score``:
uneven lengths 0..30, disjoint, identical, prefix (also cut through a tie
group), reversed, one big group, no ties, ``p`` from 0.5 to 0.99. Where the
reference raises, the kernel follows the edge rules of its docstring.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ireval_df.similarity.rbo import RBO_SCORES, RBO_TIES, horizon, rbo

CASES = Path(__file__).with_name("data") / "rbo_cases.parquet"
#: 160 pairs of 40 to 400 tie groups with p in {0.3, 0.5, 0.7, 0.8}: long
#: enough that the kernel's horizon (the depth past which the weight left is
#: below 2**-64) cuts them (data/make_rbo_long_cases.py)
LONG_CASES = Path(__file__).with_name("data") / "rbo_long_cases.parquet"
TOLERANCE = 1e-12


def groups_frame(keys: pl.Series, rankings: pl.Series) -> pl.LazyFrame:
    """One side of a pair (``key, doc_id, pos, tie_start, tie_size``) from
    rankings written as lists of tie groups, best first."""
    return (
        pl.DataFrame({"key": keys, "group": rankings})
        .explode("group")
        .drop_nulls("group")  # an empty ranking
        .with_columns(
            group_index=pl.int_range(pl.len()).over("key"),
            tie_size=pl.col("group").list.len().cast(pl.Int64),
        )
        .explode("group")
        .with_columns(pos=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("key"))
        .with_columns(tie_start=pl.col("pos").min().over("key", "group_index"))
        .select("key", pl.col("group").alias("doc_id"), "pos", "tie_start", "tie_size")
        .lazy()
    )


@pytest.fixture(scope="module")
def cases() -> pl.DataFrame:
    return pl.read_parquet(CASES).with_columns(
        both_empty=(pl.col("x").list.len() == 0) & (pl.col("y").list.len() == 0),
        one_empty=(pl.col("x").list.len() == 0) != (pl.col("y").list.len() == 0),
    )


def expected(cases: pl.DataFrame, ties: str, score: str) -> pl.Expr:
    """The reference's value; our edge rules where it raises."""
    value = pl.col(f"{ties}_{score}")
    both = pl.col("both_empty")
    if score == "res":
        return pl.when(both).then(0.0).otherwise(value)
    if score == "ext":
        return (
            pl.when(both).then(1.0).when(pl.col("one_empty")).then(0.0).otherwise(value)
        )
    return pl.when(both).then(1.0).otherwise(value)


def test_fixture_covers_every_kind(cases: pl.DataFrame) -> None:
    assert cases.height == 4000
    assert set(cases["kind"]) >= {
        "random",
        "disjoint",
        "identical",
        "prefix_groups",
        "prefix_cut",
        "reversed",
        "same_items_other_ties",
        "no_ties",
        "one_group",
        "single",
        "one_empty",
        "both_empty",
    }
    assert sorted(cases["p"].unique()) == [0.5, 0.8, 0.9, 0.95, 0.99]
    # the reference raises exactly where our edge rules apply
    errors = cases.filter(pl.col("a_ext").is_null())
    assert errors["kind"].unique().sort().to_list() == ["both_empty", "one_empty"]


@pytest.mark.parametrize("ties", RBO_TIES)
@pytest.mark.parametrize("score", RBO_SCORES)
def test_rbo_matches_reference(cases: pl.DataFrame, score: str, ties: str) -> None:
    for (p,), part in cases.group_by("p"):
        x = groups_frame(part["case_id"], part["x"])
        y = groups_frame(part["case_id"], part["y"])
        keys = part.select(key="case_id")
        got = rbo(x, y, keys, p=p, score=score, ties=ties)  # type: ignore[arg-type]
        assert got["key"].to_list() == keys["key"].to_list()
        compared = part.select(
            "case_id", "kind", want=expected(part, ties, score), got=got["value"]
        ).with_columns(diff=(pl.col("got") - pl.col("want")).abs())
        assert compared["got"].null_count() == 0
        worst = compared.sort("diff", descending=True).row(0, named=True)
        assert worst["diff"] <= TOLERANCE, (p, worst)


@pytest.mark.parametrize("ties", RBO_TIES)
@pytest.mark.parametrize("score", RBO_SCORES)
def test_rbo_matches_reference_past_the_horizon(score: str, ties: str) -> None:
    cases = pl.read_parquet(LONG_CASES).with_columns(
        both_empty=pl.lit(value=False), one_empty=pl.lit(value=False)
    )
    longest = cases.select(
        pl.max_horizontal(
            pl.col("x", "y").list.eval(pl.element().list.len()).list.sum()
        )
    ).to_series()
    depth = cases["p"].map_elements(horizon, return_dtype=pl.Int64)
    assert (longest > depth).sum() >= 100  # most cases are cut
    test_rbo_matches_reference(cases, score, ties)
