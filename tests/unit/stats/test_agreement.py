"""Offline-online agreement: hand-made comparison frames, tau_AP by hand, the bundled data."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import DataError, MetricSpecError, SchemaError
from ireval_df.stats import tau_ap


def _offline() -> pl.DataFrame:
    # three systems, all pairs, as ie.compare gives them
    return pl.DataFrame(
        {
            "run_id": ["b", "c", "c"],
            "baseline": ["a", "a", "b"],
            "metric": "nDCG@10",
            "delta": [0.05, 0.10, 0.05],
            "p_adjusted": [0.01, 0.001, 0.2],
            "significant": [True, True, False],
        }
    )


def _interleaving() -> pl.DataFrame:
    # users: c beats a, but a beats b significantly (an opposite verdict)
    return pl.DataFrame(
        {
            "ranker_a": ["a", "a", "b"],
            "ranker_b": ["b", "c", "c"],
            "delta_ab": [0.04, -0.06, -0.01],
            "p_adjusted": [0.001, 0.001, 0.5],
            "significant": [True, True, False],
        }
    )


def test_sign_agreement_opposite_pairs_and_orderings():
    got = ie.agreement(_offline(), _interleaving())
    assert got.height == 1
    row = got.row(0, named=True)
    assert row["offline_metric"] == "nDCG@10"
    assert row["online_metric"] == "interleaving"
    assert row["n_pairs"] == 3
    # (a,b): offline b>a, online a>b: disagree; (a,c): both c; (b,c): both c
    assert row["sign_agreement"] == pytest.approx(2 / 3)
    assert row["n_both_significant"] == 2
    assert row["significant_agreement"] == pytest.approx(1 / 2)
    assert row["n_opposite"] == 1
    assert row["opposite_pairs"] == ["a vs b"]
    # offline order c > b > a; online scores: a = 0.04 - 0.06 = -0.02,
    # b = -0.04 - 0.01 = -0.05, c = 0.07: c > a > b
    assert row["n_systems"] == 3
    assert row["kendall_tau"] == pytest.approx(1 / 3)
    assert row["tau_ap"] == pytest.approx(
        tau_ap([-0.02, -0.05, 0.07], [-0.15, 0.0, 0.15])
    )
    assert row["offline_significant_share"] == pytest.approx(2 / 3)
    assert row["online_significant_share"] == pytest.approx(2 / 3)


def test_tau_ap_by_hand():
    # truth a > b > c > d; estimate b > a > c > d: C(2)=0 -> 0/1, C(3)=2/2, C(4)=3/3
    assert tau_ap([4, 3, 2, 1], [3, 4, 2, 1]) == pytest.approx(2 / 3 * (0 + 1 + 1) - 1)
    assert tau_ap([1, 2, 3, 4], [1, 2, 3, 4]) == 1.0


def test_ab_frame_with_system_mapping_and_slices():
    offline = pl.concat(
        [
            _offline().filter(pl.col("baseline") == "a").with_columns(cls=pl.lit(c))
            for c in ("x", "y")
        ]
    )
    ab = pl.DataFrame(
        {
            "variant": ["t1", "t2", "t1", "t2"],
            "cls": ["x", "x", "y", "y"],
            "metric": "CTR",
            "delta": [0.01, 0.02, -0.01, 0.03],
            "p_adjusted": [0.01, 0.01, 0.01, 0.01],
        }
    )
    got = ie.agreement(
        offline, ab, by="cls", systems={"a": "ctl", "b": "t1", "c": "t2"}, control="ctl"
    ).sort("cls")
    assert got["cls"].to_list() == ["x", "y"]
    assert got["sign_agreement"].to_list() == [1.0, 0.5]
    assert got["n_opposite"].to_list() == [0, 1]
    assert got["opposite_pairs"].to_list() == [[], ["ctl vs t1"]]
    assert got["kendall_tau"][0] == pytest.approx(1.0)


def test_lower_is_better_metrics_are_turned_round():
    # offline: b is better than a on nDCG@10 (+0.05). Online, b's users abandon
    # less (Abandonment -0.02, lower is better): the two agree, and a rise in
    # abandonment would be the disagreement.
    offline = _offline().filter(pl.col("baseline") == "a")
    ab = pl.DataFrame(
        {
            "variant": ["b", "c"],
            "metric": "Abandonment",
            "delta": [-0.02, -0.03],
            "significant": [True, True],
        }
    )
    row = ie.agreement(offline, ab, control="a").row(0, named=True)
    assert row["sign_agreement"] == 1.0
    assert row["n_opposite"] == 0
    # ordering: offline c > b > a; online c abandons least: c > b > a
    assert row["kendall_tau"] == pytest.approx(1.0)
    assert row["tau_ap"] == pytest.approx(1.0)
    worse = ab.with_columns(delta=-pl.col("delta"))
    row = ie.agreement(offline, worse, control="a").row(0, named=True)
    assert row["sign_agreement"] == 0.0
    assert row["opposite_pairs"] == ["a vs b", "a vs c"]
    assert row["kendall_tau"] == pytest.approx(-1.0)


def test_own_metric_names_need_a_direction():
    offline = _offline().filter(pl.col("baseline") == "a")
    ab = pl.DataFrame(
        {"variant": ["b", "c"], "metric": "latency_ms", "delta": [5.0, -3.0]}
    )
    with pytest.raises(MetricSpecError, match="higher_is_better="):
        ie.agreement(offline, ab, control="a")
    # lower latency is better: b (+5 ms) disagrees with nDCG, c (-3 ms) agrees
    row = ie.agreement(
        offline, ab, control="a", higher_is_better={"latency_ms": False}
    ).row(0, named=True)
    assert row["sign_agreement"] == 0.5
    # an A/B test's per-position rows take the direction of their registry name
    per_position = ab.with_columns(metric=pl.lit("PositionCTR@3[1]"))
    row = ie.agreement(offline, per_position, control="a").row(0, named=True)
    assert row["sign_agreement"] == 0.5  # CTR: higher is better, b +5 agrees


def test_bad_input():
    with pytest.raises(DataError, match="systems="):
        ie.agreement(_offline(), _interleaving().with_columns(ranker_a=pl.lit("z")))
    with pytest.raises(SchemaError, match="control="):
        ie.agreement(
            _offline(), pl.DataFrame({"variant": ["t"], "metric": "m", "delta": [1.0]})
        )
    with pytest.raises(SchemaError, match="comparisons"):
        ie.agreement(_offline(), pl.DataFrame({"x": [1]}))
    with pytest.raises(SchemaError, match="by="):
        ie.agreement(_offline(), _interleaving(), by="cls")
    with pytest.raises(SchemaError, match="without a metric name"):
        ie.agreement(
            _offline().with_columns(metric=pl.lit(None, pl.String)), _interleaving()
        )


def test_bundled_data_offline_against_itself():
    runs = pl.read_parquet("data/runs.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per_query = ie.evaluate(
            runs, ie.read_qrels("data/qrels.txt"), ["nDCG@10", "P@10"]
        )
    offline = ie.compare(per_query)
    got = ie.agreement(offline.filter(pl.col("metric") == "nDCG@10"), offline)
    same = got.filter(pl.col("online_metric") == "nDCG@10").row(0, named=True)
    assert same["sign_agreement"] == 1.0
    assert same["kendall_tau"] == 1.0
    assert same["tau_ap"] == 1.0
    assert got.height == 2


def test_without_scipy_the_error_names_the_extra(monkeypatch):
    import sys

    from ireval_df.errors import IrevalError

    monkeypatch.setitem(sys.modules, "scipy.stats", None)
    with pytest.raises(IrevalError, match=r"ireval-df\[stats\]"):
        ie.agreement(_offline(), _interleaving())
