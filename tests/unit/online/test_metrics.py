"""Every online metric by hand on tiny logs; slices, unit tables, the registry entries."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import MetricSpecError, OptionError
from ireval_df.measures import REGISTRY, parse_metric

T = "2024-05-01T10:"

# The example log (ie.online.example_log()), by hand:
#   A: u1 s1 "red shoes" 4 results 10:00:00; click pos 2 at :10; add to cart 10:01:00;
#      purchase 20 at 10:02:00.  u2 s2 "Blue Hat" 4 results 10:00:00, nothing.
#   B: u3 s3 "red shoes" 10:00:00 (4 results, nothing), s4 "red running shoes" 10:01:00
#      (4 results), click pos 1 at 10:01:30, s5 "boots" 10:02:10 (0 results).
EXPECTED = {
    # searches with a click / searches with results: A 1/2, B 1/2 (s4 of s3, s4)
    "CTR": (0.5, 0.5),
    # a click at position 1: A none (pos 2), B s4
    "CTR@1": (0.0, 0.5),
    "ClicksPerSearch": (0.5, 0.5),
    # A (1/2 + 0) / 2; B (0 + 1/1) / 2
    "ClickRR": (0.25, 0.5),
    # A 0.5^(2-1) / 2; B 0.5^0 / 2
    "PaulScore": (0.25, 0.5),
    # A 10 s; B 30 s (10:01:00 -> 10:01:30)
    "TimeToFirstClick": (10.0, 30.0),
    "TimeToFirstClick(stat=mean)": (10.0, 30.0),
    "TimeToFirstClick(cap=20)": (10.0, 20.0),
    # to the next action: A the add-to-cart 50 s later, B the search s5 40 s later
    "DwellTime": (50.0, 40.0),
    "DwellTime(cap=45)": (45.0, 40.0),
    # both at least 30 s, and both the last clicks of their sessions
    "SatClickRate": (1.0, 1.0),
    "SatClickRate(tau=60)": (1.0, 1.0),  # not 50 s, but the session's last click
    # A s2 of s1, s2; B s3 of s3, s4 (s5 shows nothing)
    "Abandonment": (0.5, 0.5),
    # A s2: no reformulation, and no serp_answer column: good; B s3 reformulated
    "GoodAbandonment": (0.5, 0.0),
    "BadAbandonment": (0.0, 0.5),
    "BadAbandonment(window=30)": (0.0, 0.0),  # s3 -> s4 took 60 s
    # B s3 -> s4 shares "red", "shoes"; s4 -> s5 "boots" shares nothing
    "Reformulation": (0.0, 1 / 3),
    "ZeroResultRate": (0.0, 1 / 3),
    "AddToCartRate": (0.5, 0.0),
    "ConversionRate": (0.5, 0.0),
    "RevenuePerSearch": (10.0, 0.0),
    "AOV": (20.0, None),  # B has no purchase
    # A two sessions of one query; B one session of three
    "QueriesPerSession": (1.0, 3.0),
    # A u1 SAT click, last search clicked: success; u2 nothing.
    # B SAT click, but the last search (s5) found nothing
    "SessionSuccess": (0.5, 0.0),
    # displayed at positions 1, 2: A clicked s1#2 of 4; B s4#1 of 4
    "ImpressionCTR@2": (0.25, 0.25),
    "ImpressionCTR": (1 / 8, 1 / 8),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_metric_by_hand_on_the_example_log(name):
    out = ie.online.metrics(ie.online.example_log(), [name])
    assert out["variant"].to_list() == ["A", "B"]
    got = out["value"].to_list()
    for value, expected in zip(got, EXPECTED[name], strict=True):
        if expected is None:
            assert value is None
        else:
            assert value == pytest.approx(expected, rel=1e-12)


def test_the_click_curve_has_a_row_per_displayed_position():
    out = ie.online.metrics(ie.online.example_log(), ["PositionCTR", "CTR"])
    curve = out.filter(pl.col("metric") == "PositionCTR")
    assert curve.select("variant", "position", "value").rows() == [
        ("A", 1, 0.0),
        ("A", 2, 0.5),
        ("A", 3, 0.0),
        ("A", 4, 0.0),
        ("B", 1, 0.5),
        ("B", 2, 0.0),
        ("B", 3, 0.0),
        ("B", 4, 0.0),
    ]
    assert out.filter(pl.col("metric") == "CTR")["position"].to_list() == [None, None]
    assert out.columns == [
        "experiment_id",
        "variant",
        "metric",
        "position",
        "value",
        "n_units",
        "n_searches",
    ]


def test_counts_are_units_and_searches_at_the_grain():
    out = ie.online.metrics(
        ie.online.example_log(), ["CTR", "DwellTime", "QueriesPerSession"]
    )
    assert out.select("variant", "metric", "n_units", "n_searches").rows() == [
        ("A", "CTR", 2, 2),
        ("A", "DwellTime", 1, 1),  # one click, one search
        ("A", "QueriesPerSession", 2, 2),
        ("B", "CTR", 1, 3),
        ("B", "DwellTime", 1, 1),
        ("B", "QueriesPerSession", 1, 3),
    ]


# --- dwell, SAT clicks, ties --------------------------------------------------------------


def log_of(searches, events, results=None):
    searches = pl.DataFrame(searches)
    if results is None:
        shown = searches.filter(pl.col("n_results") > 0)
        results = shown.select("search_id").join(
            pl.DataFrame({"position": [1, 2, 3]}), how="cross"
        )
    return ie.online.read_log(
        searches=searches, results=results, events=pl.DataFrame(events, strict=False)
    )


def one_user(ts, queries=None, pages=None, n_results=None):
    n = len(ts)
    return {
        "search_id": [f"s{i}" for i in range(n)],
        "user_id": ["u"] * n,
        "ts": ts,
        "variant": ["A"] * n,
        "query": queries or ["q"] * n,
        "page": pages or [1] * n,
        "n_results": n_results or [3] * n,
    }


def test_an_explicit_dwell_wins_over_the_timeline():
    log = log_of(
        one_user([T + "00:00", T + "10:00"]),
        {
            "search_id": ["s0", "s0"],
            "user_id": ["u", "u"],
            "ts": [T + "00:05", T + "00:20"],
            "event_type": ["click", "click"],
            "position": [1, 2],
            "dwell_ms": [12_000, None],
        },
    )
    # 12 s given; the second click's next action is s1, 9 min 40 s later
    assert ie.online.metrics(log, "DwellTime")["value"].item() == pytest.approx(
        (12 + 580) / 2
    )
    # 12 s < 30 s; the second is the session's last click: SAT
    assert ie.online.metrics(log, "SatClickRate")["value"].item() == 0.5


def test_the_last_action_of_a_session_has_no_dwell():
    log = log_of(
        one_user([T + "00:00"]),
        {
            "search_id": ["s0"],
            "user_id": ["u"],
            "ts": [T + "00:05"],
            "event_type": ["click"],
            "position": [1],
        },
    )
    out = ie.online.metrics(log, ["DwellTime", "SatClickRate", "SessionSuccess"])
    assert out["value"].to_list() == [None, 1.0, 1.0]


def test_a_result_page_at_the_same_instant_as_an_event_comes_first():
    # the click at 10:05:00 and the search s1 at 10:05:00: the search comes
    # first, so the click's dwell runs to the add-to-cart 20 s later
    log = log_of(
        one_user([T + "00:00", T + "05:00"]),
        {
            "search_id": ["s0", None],
            "user_id": ["u", "u"],
            "ts": [T + "05:00", T + "05:20"],
            "event_type": ["click", "view"],
            "position": [1, None],
        },
    )
    assert ie.online.metrics(log, "DwellTime")["value"].item() == 20.0


def test_a_dwell_never_crosses_a_session_boundary():
    log = log_of(
        one_user([T + "00:00", "2024-05-01T11:00:00"]),
        {
            "search_id": ["s0"],
            "user_id": ["u"],
            "ts": [T + "00:10"],
            "event_type": ["click"],
            "position": [1],
        },
    )
    assert ie.online.metrics(log, "DwellTime")["value"].item() is None


# --- reformulation and pagination -----------------------------------------------------------


def test_pagination_is_not_a_reformulation():
    # "shoes" p1 -> "Shoes" p2 (the same query) -> "red shoes" -> "boots"
    log = log_of(
        one_user(
            [T + "00:00", T + "01:00", T + "02:00", T + "03:00"],
            queries=["shoes", "Shoes", "red shoes", "boots"],
            pages=[1, 2, 1, 1],
        ),
        {"search_id": [], "user_id": [], "ts": [], "event_type": []},
    )
    # only page 2 is followed by a reformulation
    assert ie.online.metrics(log, "Reformulation")["value"].item() == 0.25
    assert ie.online.metrics(log, "QueriesPerSession")["value"].item() == 3.0
    # all four are abandoned; page 2 was reformulated; the others are "good"
    out = ie.online.metrics(log, ["BadAbandonment", "GoodAbandonment"])
    assert out["value"].to_list() == [0.25, 0.75]


@pytest.mark.parametrize(("gap", "expected"), [("05:00", 1.0), ("05:01", 0.0)])
def test_the_reformulation_window_includes_its_end(gap, expected):
    log = log_of(
        one_user([T + "00:00", T + gap], queries=["red shoes", "red boots"]),
        {"search_id": [], "user_id": [], "ts": [], "event_type": []},
    )
    out = ie.online.metrics(log, {"r": "Reformulation(window=300)"})
    assert out["value"].item() == expected / 2


def test_good_abandonment_reads_serp_answer_when_present():
    searches = one_user([T + "00:00", T + "10:00"], queries=["weather", "time"])
    searches["serp_answer"] = [True, False]
    log = log_of(searches, {"search_id": [], "user_id": [], "ts": [], "event_type": []})
    out = ie.online.metrics(log, ["Abandonment", "GoodAbandonment", "BadAbandonment"])
    # both abandoned; only the first showed an answer; neither reformulated
    assert out["value"].to_list() == [1.0, 0.5, 0.0]


def test_commerce_is_attributed_by_search_id():
    log = log_of(
        one_user([T + "00:00", T + "01:00"]),
        {
            "search_id": ["s0", "s0", None, "s1"],
            "user_id": ["u"] * 4,
            "ts": [T + "00:30", T + "00:40", T + "00:50", T + "02:00"],
            "event_type": ["add_to_cart", "purchase", "purchase", "purchase"],
            "value": [None, 30.0, 99.0, None],
        },
    )
    out = ie.online.metrics(
        log,
        ["AddToCartRate", "ConversionRate", "RevenuePerSearch", "AOV", "Abandonment"],
    )
    # the unattributed purchase counts nowhere; s1's purchase has no value (0)
    assert out["value"].to_list() == [0.5, 1.0, 15.0, 15.0, 0.0]


# --- slices -------------------------------------------------------------------------------


def test_slices_by_a_search_attribute():
    out = ie.online.metrics(ie.online.example_log(), ["CTR", "DwellTime"], by="device")
    assert out.select("variant", "device", "metric", "value").rows() == [
        ("A", "desktop", "CTR", 0.0),
        ("A", "desktop", "DwellTime", None),
        ("A", "mobile", "CTR", 1.0),
        ("A", "mobile", "DwellTime", 50.0),
        ("B", "mobile", "CTR", 0.5),
        ("B", "mobile", "DwellTime", 40.0),
    ]


def test_slices_by_a_result_attribute_for_result_and_click_metrics():
    out = ie.online.metrics(
        ie.online.example_log(), ["ImpressionCTR", "DwellTime"], by="source_type"
    )
    # odd positions are products, even ones guides; A clicked a guide, B a product
    assert out.select("variant", "source_type", "metric", "value").rows() == [
        ("A", "guide", "ImpressionCTR", 0.25),
        ("A", "guide", "DwellTime", 50.0),
        ("A", "product", "ImpressionCTR", 0.0),
        ("A", "product", "DwellTime", None),
        ("B", "guide", "ImpressionCTR", 0.0),
        ("B", "guide", "DwellTime", None),
        ("B", "product", "ImpressionCTR", 0.25),
        ("B", "product", "DwellTime", 40.0),
    ]


def test_a_search_metric_by_a_result_attribute_is_an_error():
    with pytest.raises(
        OptionError, match=r"(?s)\['CTR'\] is a per-search.*selection bias"
    ):
        ie.online.metrics(
            ie.online.example_log(), ["CTR", "ImpressionCTR"], by="source_type"
        )
    with pytest.raises(OptionError, match="SessionSuccess"):
        ie.online.unit_table(
            ie.online.example_log(), ["SessionSuccess"], by="source_type"
        )


def test_slice_columns_are_checked():
    log = ie.online.example_log()
    with pytest.raises(OptionError, match="not a column of searches or results"):
        ie.online.metrics(log, "CTR", by="language")
    with pytest.raises(OptionError, match="age_bucket needs a published_at"):
        ie.online.metrics(log, "ImpressionCTR", by="age_bucket")
    with pytest.raises(OptionError, match="is a column of the result already"):
        ie.online.metrics(log, "CTR", by="variant")
    with pytest.raises(OptionError, match="position"):
        ie.online.metrics(log, "PositionCTR", by="position")


def test_an_attribute_of_both_tables_is_ambiguous():
    searches = one_user([T + "00:00"])
    searches["source_type"] = ["web"]
    log = log_of(
        searches,
        {"search_id": [], "user_id": [], "ts": [], "event_type": []},
        results=pl.DataFrame(
            {"search_id": ["s0"], "position": [1], "source_type": ["news"]}
        ),
    )
    with pytest.raises(OptionError, match="ambiguous"):
        ie.online.metrics(log, "ImpressionCTR", by="source_type")


def test_age_buckets_slice_results_by_freshness():
    searches = one_user([T + "00:00"], n_results=[2])
    results = pl.DataFrame(
        {
            "search_id": ["s0", "s0"],
            "position": [1, 2],
            "published_at": ["2024-04-30T12:00:00", "2023-01-01"],
        }
    )
    log = log_of(
        searches,
        {
            "search_id": ["s0"],
            "user_id": ["u"],
            "ts": [T + "00:05"],
            "event_type": ["click"],
            "position": [2],
        },
        results=results,
    )
    out = ie.online.metrics(log, "ImpressionCTR", by="age_bucket")
    assert out.select("age_bucket", "value").rows() == [("<1d", 0.0), (">=365d", 1.0)]


# --- unit tables --------------------------------------------------------------------------


def test_unit_table_names_the_sums_and_joins_the_covariates():
    base = ie.online.example_log()
    units = pl.DataFrame(
        {
            "unit_id": ["u1", "u2", "u3", "u4"],
            "variant": ["A", "A", "B", "B"],
            "pre_clicked_searches": [2, 0, 1, 5],
        }
    )
    log = ie.online.read_log(
        searches=base.searches.drop("session_id", "query_norm"),
        results=base.results,
        events=base.events,
        units=units,
    )
    table = ie.online.unit_table(log, {"ctr": "CTR", "zrr": "ZRR"})
    assert table.columns == [
        "experiment_id",
        "variant",
        "unit_id",
        "ctr__num",
        "ctr__den",
        "zrr__num",
        "zrr__den",
        "pre_clicked_searches",
    ]
    # u4 was assigned to B and never searched: zeros, so arms count as assigned
    assert table.select("unit_id", "ctr__num", "ctr__den", "zrr__den").rows() == [
        ("u1", 1, 1, 1),
        ("u2", 0, 1, 1),
        ("u3", 1, 2, 3),
        ("u4", 0, 0, 0),
    ]
    assert table["pre_clicked_searches"].to_list() == [2.0, 0.0, 1.0, 5.0]


def test_unit_table_gives_the_click_curve_a_pair_per_position():
    table = ie.online.unit_table(ie.online.example_log(), ["PositionCTR@2"])
    assert table.columns[3:] == [
        "PositionCTR@2[1]__num",
        "PositionCTR@2[1]__den",
        "PositionCTR@2[2]__num",
        "PositionCTR@2[2]__den",
    ]


def test_a_median_has_no_per_unit_sums():
    with pytest.raises(MetricSpecError, match="stat=mean"):
        ie.online.unit_table(ie.online.example_log(), ["TimeToFirstClick"])
    table = ie.online.unit_table(
        ie.online.example_log(), ["TimeToFirstClick(stat=mean)"]
    )
    assert table.height == 3


def test_unit_columns_name_the_quantities():
    (ctr, curve) = ie.online.unit_columns(["CTR", "PositionCTR"], positions=[1])
    assert (ctr.numer, ctr.denom, ctr.numer_quantity, ctr.denom_quantity) == (
        "CTR__num",
        "CTR__den",
        "clicked_searches",
        "searches_with_results",
    )
    assert curve.name == "PositionCTR[1]"


def test_pandas_in_pandas_out():
    log = ie.online.example_log()
    frames = {
        "searches": log.searches.to_pandas(),
        "results": log.results.to_pandas(),
        "events": log.events.to_pandas(),
    }
    again = ie.online.read_log(**frames)
    out = ie.online.metrics(again, ["CTR"])
    assert type(out).__module__.startswith("pandas")
    assert type(ie.online.unit_table(again, ["CTR"])).__module__.startswith("pandas")


# --- the registry -------------------------------------------------------------------------

ONLINE = sorted(n for n, info in REGISTRY.items() if info.family == "online")


def test_the_online_family_is_complete():
    assert ONLINE == sorted(
        [
            "AOV",
            "Abandonment",
            "AddToCartRate",
            "BadAbandonment",
            "CTR",
            "ClickRR",
            "ClicksPerSearch",
            "ConversionRate",
            "DwellTime",
            "GoodAbandonment",
            "ImpressionCTR",
            "PaulScore",
            "PositionCTR",
            "QueriesPerSession",
            "Reformulation",
            "RevenuePerSearch",
            "SatClickRate",
            "SessionSuccess",
            "TimeToFirstClick",
            "ZeroResultRate",
        ]
    )


@pytest.mark.parametrize("name", ONLINE)
def test_each_entry_declares_its_grain_and_per_unit_sums(name):
    info = REGISTRY[name]
    assert info.unit in ("search", "result", "click", "session")
    assert info.aggregate in ("ratio", "median")
    assert isinstance(info.options["numer"], str)
    assert isinstance(info.options["denom"], str)
    assert info.summary
    assert str(parse_metric(name)) == name
    measure = info.compute(parse_metric(name))
    assert measure.grain == info.unit


def test_online_metrics_are_refused_by_other_families_and_the_statistics():
    with pytest.raises(MetricSpecError, match="ireval_df.online.metrics"):
        ie.evaluate(
            pl.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]}),
            {"q": {"d": 1}},
            ["CTR"],
        )
    with pytest.raises(MetricSpecError, match="offline measure"):
        ie.online.metrics(ie.online.example_log(), ["AP"])
    per_unit = pl.DataFrame(
        {"run_id": ["a"], "query_id": ["q"], "metric": ["CTR"], "value": [1.0]}
    )
    with pytest.raises(OptionError, match="ratio of sums"):
        ie.summarize(per_unit)
    with pytest.raises(OptionError, match="median"):
        ie.summarize(per_unit.with_columns(metric=pl.lit("TimeToFirstClick")))


def test_parameters_are_checked():
    for spec, match in [
        ("PaulScore(f=1.5)", "f must be in"),
        ("SatClickRate(tau=0)", "tau must be positive"),
        ("Reformulation(window=-1)", "window must be positive"),
        ("CTR@0", "must be positive"),
        ("TimeToFirstClick(stat=max)", "stat"),
    ]:
        with pytest.raises(MetricSpecError, match=match):
            parse_metric(spec)
    assert str(parse_metric("ttfc(stat=mean)")) == "TimeToFirstClick(stat=mean)"
    assert str(parse_metric("zrr")) == "ZeroResultRate"


def test_times_are_seconds():
    assert dt.timedelta(seconds=REGISTRY["DwellTime"].params["cap"]) == dt.timedelta(
        minutes=30
    )
