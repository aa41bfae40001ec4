"""Plans carry their intermediates; merging refuses one name with two meanings."""

from __future__ import annotations

import polars as pl
import pytest

from ireval_df.measures import parse_metric
from ireval_df.offline.plan import Def, Needs, Plan, build_plan, collecting, define


def test_a_plan_carries_every_intermediate_its_builder_declared() -> None:
    # nDCG@10 needs the ideal DCG (qrels stage, over an ideal rank and gain
    # per judged row) and the DCG (agg stage, over a row gain)
    plan = build_plan(parse_metric("nDCG@10"))
    stages = {stage for stage, _ in plan.needs}
    assert {"qrels_row", "qrels", "row", "agg"} <= stages
    referenced = set(plan.value.meta.root_names())
    assert referenced <= {name for _, name in plan.needs}


def test_two_builds_of_one_metric_are_equal_and_independent() -> None:
    first = build_plan(parse_metric("AP"))
    second = build_plan(parse_metric("AP"))
    assert set(first.needs) == set(second.needs)
    assert first.needs is not second.needs


def test_plans_of_different_metrics_merge_sharing_what_they_share() -> None:
    ap = build_plan(parse_metric("AP")).needs
    prec = build_plan(parse_metric("P@10")).needs
    merged = ap | prec
    assert set(merged) == set(ap) | set(prec)
    # both count relevant documents at level 1: one column, defined once
    assert ("qrels", "__ireval_R_1") in ap


def test_one_name_defined_two_ways_raises() -> None:
    a = Needs([Def("__ireval_x", "row", pl.col("label") >= 1)])
    b = Needs([Def("__ireval_x", "row", pl.col("label") >= 2)])
    with pytest.raises(
        ValueError, match=r"'__ireval_x' \(row stage\) is defined two different ways"
    ):
        a | b


def test_one_name_in_two_stages_is_two_definitions() -> None:
    # a metric may use one private name for a row flag and its per-query sum
    plan = Plan(
        value=pl.col("__ireval_t"),
        row={"__ireval_t": pl.col("label") > 0},
        per_query={"__ireval_t": pl.col("__ireval_t").sum()},
    )
    assert sorted(plan.needs) == [("agg", "__ireval_t"), ("row", "__ireval_t")]


def test_define_outside_a_build_raises_and_a_build_leaves_nothing_behind() -> None:
    with pytest.raises(RuntimeError, match=r"outside a metric build"):
        define("__ireval_y", "qrels", pl.len())
    _, needs = collecting(lambda: define("__ireval_y", "qrels", pl.len()))
    assert list(needs) == [("qrels", "__ireval_y")]
    with pytest.raises(RuntimeError, match=r"outside a metric build"):
        define("__ireval_y", "qrels", pl.len())
