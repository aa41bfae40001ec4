"""Properties of the online metrics on random small logs.

Row order never matters; every value is within its registry bounds; the
per-unit sums of ``unit_table`` reproduce ``metrics()`` exactly, sliced or
not; slicing by a column that holds one value changes nothing; lazy,
pandas and Arrow tables give the same numbers.
"""

from __future__ import annotations

import math

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from strategies import NO_SHRINK, search_logs, shuffled

import ireval_df as ie
from ireval_df.measures import REGISTRY, parse_metric

ALL = [
    "CTR",
    "CTR@1",
    "ClicksPerSearch",
    "ClickRR",
    "PaulScore(f=0.9)",
    "TimeToFirstClick",
    "TimeToFirstClick(stat=mean,cap=60)",
    "DwellTime(cap=60)",
    "SatClickRate",
    "Abandonment",
    "GoodAbandonment",
    "BadAbandonment(window=60)",
    "Reformulation",
    "ZeroResultRate",
    "AddToCartRate",
    "ConversionRate",
    "RevenuePerSearch",
    "AOV",
    "QueriesPerSession",
    "SessionSuccess",
    "ImpressionCTR",
    "ImpressionCTR@2",
    "PositionCTR",
]
#: every metric a unit table takes (a median has no per-unit sums)
RATIOS = [m for m in ALL if parse_metric(m).info.aggregate == "ratio"]
#: the metrics a result attribute may slice
FINE = [m for m in RATIOS if parse_metric(m).info.unit in ("result", "click")]


def read(case, **kinds):
    return ie.online.read_log(**case.frames(), **kinds)


@settings(max_examples=40, phases=NO_SHRINK)
@given(case=search_logs(), seed=st.integers(0, 2**16))
def test_row_order_never_matters(case, seed):
    log = read(case)
    frames = {
        k: shuffled(v, seed + i) for i, (k, v) in enumerate(case.frames().items())
    }
    again = ie.online.read_log(**frames)
    # float sums in another order may differ in the last bits
    same = {"rel_tol": 1e-12, "abs_tol": 1e-12}
    assert_frame_equal(
        ie.online.metrics(log, ALL), ie.online.metrics(again, ALL), **same
    )
    assert_frame_equal(
        ie.online.unit_table(log, RATIOS, by="device"),
        ie.online.unit_table(again, RATIOS, by="device"),
        **same,
    )
    assert log.searches.sort("search_id").equals(again.searches.sort("search_id"))


@settings(max_examples=40, phases=NO_SHRINK)
@given(case=search_logs())
def test_values_are_within_their_bounds(case):
    out = ie.online.metrics(read(case), ALL)
    for name, value in out.select("metric", "value").rows():
        if value is None:
            continue
        low, high = REGISTRY[parse_metric(name).name].bounds
        assert low is None or value >= low - 1e-12, (name, value)
        assert high is None or value <= high + 1e-12, (name, value)


def _check_sums(log, metrics, by):
    out = ie.online.metrics(log, metrics, by=by)
    table = ie.online.unit_table(log, metrics, by=by)
    keys = ["experiment_id", "variant", *([by] if by else [])]
    summed = table.group_by(keys).agg(pl.exclude("unit_id").sum())
    for row in out.iter_rows(named=True):
        name = row["metric"]
        if row.get("position") is not None:
            name = f"{name}[{row['position']}]"
        match = summed
        for k in keys:
            match = match.filter(pl.col(k).eq_missing(row[k]))
        if match.height == 0:
            assert row["value"] is None, row
            assert row["n_units"] == 0, row
            continue
        num, den = match[f"{name}__num"].item(), match[f"{name}__den"].item()
        if den == 0:
            assert row["value"] is None, row
        else:
            assert math.isclose(num / den, row["value"], rel_tol=1e-12), (row, num, den)


@settings(max_examples=40, phases=NO_SHRINK)
@given(case=search_logs())
def test_per_unit_sums_reproduce_the_metrics(case):
    log = read(case)
    _check_sums(log, RATIOS, None)
    _check_sums(log, RATIOS, "device")
    _check_sums(log, FINE, "source_type")


@settings(max_examples=30, phases=NO_SHRINK)
@given(case=search_logs())
def test_a_slice_of_one_value_is_the_whole(case):
    frames = case.frames()
    frames["searches"] = frames["searches"].with_columns(market=pl.lit("de"))
    frames["results"] = frames["results"].with_columns(kind=pl.lit("organic"))
    log = ie.online.read_log(**frames)
    whole = ie.online.metrics(log, ALL)
    for column, metrics in (("market", ALL), ("kind", FINE)):
        sliced = ie.online.metrics(log, metrics, by=column)
        assert sliced[column].drop_nulls().unique().to_list() in (
            [],
            ["de" if column == "market" else "organic"],
        )
        names = [str(parse_metric(m)) for m in metrics]
        expected = whole.filter(pl.col("metric").is_in(names))
        if column == "kind":  # an arm that showed no result has no result slice
            shown = frames["searches"].join(frames["results"], on="search_id")
            expected = expected.filter(
                pl.col("variant").is_in(shown["variant"].implode())
            )
        assert_frame_equal(sliced.drop(column), expected, rel_tol=1e-12, abs_tol=1e-12)


@settings(max_examples=15, phases=NO_SHRINK)
@given(case=search_logs())
def test_lazy_pandas_and_arrow_tables_give_the_same_numbers(case):
    # a parallel sum may add in another order: equal to the last bits only
    same = {"rel_tol": 1e-12, "abs_tol": 1e-12}
    frames = case.frames()
    expected = ie.online.metrics(ie.online.read_log(**frames), ALL)
    lazy = ie.online.read_log(**{k: v.lazy() for k, v in frames.items()})
    got = ie.online.metrics(lazy, ALL)
    assert isinstance(got, pl.LazyFrame)
    assert_frame_equal(got.collect(), expected, **same)
    pandas = ie.online.read_log(**{k: v.to_pandas() for k, v in frames.items()})
    as_pandas = ie.online.metrics(pandas, ALL)
    assert type(as_pandas).__module__.startswith("pandas")
    assert_frame_equal(pl.from_pandas(as_pandas), expected, check_dtypes=False, **same)
    arrow = ie.online.read_log(**{k: v.to_arrow() for k, v in frames.items()})
    assert_frame_equal(pl.from_arrow(ie.online.metrics(arrow, ALL)), expected, **same)
