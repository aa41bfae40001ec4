"""A/B tests on a search log: ab_test, srm, power and aa_test (ireval_df.online.ab)."""

from __future__ import annotations

import datetime as dt
import math
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import IrevalWarning, MetricSpecError, OptionError, SchemaError
from ireval_df.stats.experiments import (
    AB_COLUMNS,
    ab_test_units,
    power_units,
    quantile_test,
    ratio,
)
from tests.online_names import online_names

LOG = Path(__file__).resolve().parents[3] / "data" / "log"
NUMBERS = [c for c in AB_COLUMNS if c not in ("significant", "srm_flag", "reason")]


@pytest.fixture(scope="module")
def log() -> ie.online.SearchLog:
    return ie.online.read_log(LOG)


def _hand_log(
    n_control: int,
    n_treatment: int,
    *,
    seed: int = 0,
    units: pl.DataFrame | None = None,
    experiments: int = 1,
) -> ie.online.SearchLog:
    """Each user searches 1-4 times; a search shows 5 results and gets a click at random."""
    rng = np.random.default_rng(seed)
    start = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    searches, events = [], []
    arms = ["control"] * n_control + ["treatment"] * n_treatment
    for e in range(experiments):
        for i, arm in enumerate(arms):
            user = f"e{e}u{i}"
            for j in range(int(rng.integers(1, 5))):
                sid = f"{user}s{j}"
                ts = start + dt.timedelta(hours=j, minutes=i % 60)
                searches.append((sid, user, ts, f"exp{e}", arm, "red shoes", 5))
                if rng.random() < (0.5 if arm == "control" else 0.6):
                    events.append((sid, user, ts + dt.timedelta(seconds=5), "click", 1))
    s = pl.DataFrame(
        searches,
        schema=[
            "search_id",
            "user_id",
            "ts",
            "experiment_id",
            "variant",
            "query",
            "n_results",
        ],
        orient="row",
    )
    ev = pl.DataFrame(
        events,
        schema={
            "search_id": pl.String,
            "user_id": pl.String,
            "ts": pl.Datetime("us", "UTC"),
            "event_type": pl.String,
            "position": pl.Int32,
        },
        orient="row",
    )
    return ie.online.read_log(searches=s, events=ev, units=units)


def _width(frame: pl.DataFrame) -> float:
    return frame["ci_high"].item() - frame["ci_low"].item()


# --- ab_test on a log -------------------------------------------------------


def test_ab_test_on_the_bundled_log_equals_ab_test_units_by_hand(log):
    names = ["CTR", "ZeroResultRate", "SessionSuccess"]
    got = ie.online.ab_test(log, names, control="control")
    table = ie.online.unit_table(log, names)
    specs = {n: ratio(f"{n}__num", f"{n}__den") for n in names}
    want = ab_test_units(table, specs, control="control")
    assert got.columns == ["variant", "metric", *AB_COLUMNS]
    assert got["metric"].to_list() == names
    assert got["variant"].to_list() == ["treatment"] * 3
    for column in NUMBERS:
        np.testing.assert_allclose(
            got[column].to_numpy().astype(float),
            want[column].to_numpy().astype(float),
            rtol=1e-12,
            err_msg=column,
        )
    # the arm's value is the metric's value: sum over units of num / den
    values = ie.online.metrics(log, ["CTR"]).sort("variant")["value"].to_list()
    assert got.row(0, named=True)["control_mean"] == pytest.approx(values[0])
    assert got.row(0, named=True)["treatment_mean"] == pytest.approx(values[1])


def test_ab_test_on_a_hand_made_log_equals_the_unit_table_by_hand():
    log = _hand_log(60, 50, seed=3)
    got = ie.online.ab_test(log, {"ctr": "CTR"}, control="control", by=None)
    table = ie.online.unit_table(log, {"ctr": "CTR"})
    want = ab_test_units(
        table, {"ctr": ratio("ctr__num", "ctr__den")}, control="control"
    )
    for column in NUMBERS:
        assert got[column].item() == pytest.approx(want[column].item(), rel=1e-12)
    assert got["n_control"].item() == 60
    assert got["n_treatment"].item() == 50


def test_ab_test_by_a_slice(log):
    got = ie.online.ab_test(log, ["CTR"], control="control", by="device")
    table = ie.online.unit_table(log, ["CTR"], by="device")
    want = ab_test_units(
        table, {"CTR": ratio("CTR__num", "CTR__den")}, control="control", by="device"
    )
    assert got.columns == ["variant", "device", "metric", *AB_COLUMNS]
    assert got["device"].to_list() == want["device"].to_list()
    np.testing.assert_allclose(got["p_value"], want["p_value"], rtol=1e-12)
    np.testing.assert_allclose(got["p_adjusted"], want["p_adjusted"], rtol=1e-12)


def test_cuped_narrows_the_interval_on_the_bundled_log(log):
    plain = ie.online.ab_test(log, ["CTR"], control="control")
    adjusted = ie.online.ab_test(log, ["CTR"], control="control", cuped=True)
    assert _width(adjusted) < _width(plain)
    table = ie.online.unit_table(log, ["CTR"])
    spec = ratio(
        "CTR__num",
        "CTR__den",
        pre=("pre_clicked_searches", "pre_searches_with_results"),
    )
    want = ab_test_units(table, {"CTR": spec}, control="control", cuped=True)
    for column in NUMBERS:
        assert adjusted[column].item() == pytest.approx(want[column].item(), rel=1e-12)


def test_cuped_on_every_ratio_metric_of_the_bundled_log(log):
    names = online_names(means=True, by_position=False)
    result = ie.online.ab_test(log, names, control="control", cuped=True)
    assert result["metric"].to_list() == names
    assert result["p_value"].null_count() == 0


def test_cuped_without_the_pre_columns_names_them():
    units = pl.DataFrame(
        {
            "unit_id": [f"e0u{i}" for i in range(20)],
            "variant": ["control"] * 10 + ["treatment"] * 10,
            "pre_searches": [2.0] * 20,
        }
    )
    log = _hand_log(10, 10, units=units)
    with pytest.raises(SchemaError, match="pre_clicked_searches") as caught:
        ie.online.ab_test(log, ["CTR"], control="control", cuped=True)
    message = str(caught.value)
    assert "pre_searches_with_results" in message
    assert "['pre_searches']" in message  # the columns present


def test_a_spec_on_the_unit_table_beside_registry_metrics(log):
    metrics = {"CTR": "CTR", "pre_ctr": ratio("pre_clicked_searches", "pre_searches")}
    result = ie.online.ab_test(log, metrics, control="control")
    assert result["metric"].to_list() == ["CTR", "pre_ctr"]
    # the pre-period: both arms served the control's ranker
    assert result.row(1, named=True)["p_value"] > 0.001


def test_the_median_time_to_first_click_goes_through_the_unit_bootstrap(log):
    got = ie.online.ab_test(
        log, ["TimeToFirstClick", "CTR"], control="control", n_resamples=200
    )
    assert got["metric"].to_list() == ["TimeToFirstClick", "CTR"]
    row = got.row(0, named=True)
    # the inverse of the empirical CDF (the lower median), by hand
    first = (
        log.events.filter(pl.col("event_type") == "click")
        .group_by("search_id")
        .agg(pl.col("ts").min().alias("first"))
    )
    seconds = log.searches.join(first, on="search_id").with_columns(
        value=((pl.col("first") - pl.col("ts")).dt.total_microseconds() / 1e6).clip(
            0.0, 1800.0
        )
    )
    medians = (
        seconds.group_by("variant")
        .agg(pl.col("value").quantile(0.5, "lower"))
        .sort("variant")["value"]
    )
    assert row["control_mean"] == pytest.approx(medians[0])
    assert row["treatment_mean"] == pytest.approx(medians[1])
    assert row["reason"] is None
    # the family: both rows adjusted together (Holm over 2)
    p = sorted(got["p_value"].to_list())
    assert min(got["p_adjusted"].to_list()) == pytest.approx(min(1.0, 2 * p[0]))


def test_the_median_on_a_hand_made_log_equals_quantile_test():
    log = _hand_log(40, 40, seed=5)
    got = ie.online.ab_test(log, ["TTFC"], control="control", n_resamples=100)
    rows = (
        log.searches.join(
            log.events.group_by("search_id").agg(pl.col("ts").min().alias("first")),
            on="search_id",
            how="left",
        )
        .with_columns(
            value=(pl.col("first") - pl.col("ts")).dt.total_microseconds() / 1e6
        )
        .select("unit_id", "variant", "value")
    )
    want = quantile_test(
        rows, value="value", control="control", n_resamples=100, metric="TTFC"
    )
    for column in NUMBERS:
        a, b = got[column].item(), want[column].item()
        assert (a is None and b is None) or a == pytest.approx(b), column


def test_the_click_curve_gives_a_row_per_position(log):
    result = ie.online.ab_test(log, ["PositionCTR@3"], control="control")
    assert result["metric"].to_list() == [
        "PositionCTR@3[1]",
        "PositionCTR@3[2]",
        "PositionCTR@3[3]",
    ]


def test_several_experiments_get_an_experiment_id_column():
    log = _hand_log(20, 20, experiments=2)
    result = ie.online.ab_test(log, ["CTR"], control="control")
    assert result.columns == ["experiment_id", "variant", "metric", *AB_COLUMNS]
    assert result["experiment_id"].to_list() == ["exp0", "exp1"]
    assert result["n_control"].to_list() == [20, 20]


def test_pandas_tables_give_a_pandas_result():
    pytest.importorskip("pandas")
    log = _hand_log(10, 10)
    again = ie.online.read_log(searches=log.searches.to_pandas())
    result = ie.online.ab_test(again, ["ZeroResultRate"], control="control")
    assert type(result).__module__.startswith("pandas")


# --- the unit-level frame -----------------------------------------------------


def test_a_unit_frame_is_ab_test_units():
    rng = np.random.default_rng(0)
    n = 400
    units = pl.DataFrame(
        {
            "unit_id": [f"u{i}" for i in range(n)],
            "variant": rng.choice(["A", "B"], n),
            "searches": rng.poisson(3, n) + 1,
            "revenue": rng.exponential(2.0, n),
            "converted": (rng.random(n) < 0.3).astype(int),
        }
    ).with_columns(clicks=pl.col("searches") // 2, pre_revenue=pl.col("revenue") * 0.5)
    metrics = {
        "ctr": ie.online.ratio("clicks", "searches"),
        "revenue": ie.online.mean("revenue", pre="pre_revenue"),
        "conversion": ie.online.proportion("converted"),
    }
    got = ie.online.ab_test(units, metrics, control="A")
    want = ab_test_units(units, metrics, control="A")
    assert got.columns == want.columns
    assert got["metric"].to_list() == ["ctr", "revenue", "conversion"]
    for column in NUMBERS:
        np.testing.assert_allclose(got[column], want[column], rtol=1e-12)
    with pytest.raises(MetricSpecError, match="read_log"):
        ie.online.ab_test(units, ["CTR"], control="A")


# --- srm ----------------------------------------------------------------------


def test_srm_on_a_log_with_a_known_imbalance():
    log = _hand_log(600, 400)
    result = ie.online.srm(log)
    assert result["n_units"].to_list() == [600, 400]
    assert f"{result['p_value'][0]:.3g}" == "2.54e-10"
    assert result["srm_flag"].all()
    with pytest.warns(IrevalWarning, match="sample ratio mismatch"):
        compared = ie.online.ab_test(log, ["CTR"], control="control")
    assert compared["srm_flag"].all()
    assert f"{compared['srm_p_value'][0]:.3g}" == "2.54e-10"


def test_srm_counts_the_units_table_and_slices(log):
    overall = ie.online.srm(log)
    assigned = log.units["variant"].value_counts().sort("variant")["count"]
    assert overall["n_units"].to_list() == assigned.to_list()
    sliced = ie.online.srm(log, by="device")
    assert sliced.columns[:2] == ["device", "variant"]
    want = (
        log.searches.group_by("device", "variant")
        .agg(pl.col("unit_id").n_unique())
        .sort("device", "variant")
    )
    assert sliced["n_units"].to_list() == want["unit_id"].to_list()
    with pytest.raises(SchemaError, match="not a column"):
        ie.online.srm(log, by="nope")


def test_srm_without_a_units_table_counts_searching_units():
    log = _hand_log(30, 20)
    assert log.units is None
    assert ie.online.srm(log)["n_units"].to_list() == [30, 20]
    weighted = ie.online.srm(log, {"control": 3, "treatment": 2})
    assert weighted["p_value"][0] == pytest.approx(1.0)


def test_srm_of_a_unit_frame():
    units = pl.DataFrame({"variant": ["A"] * 600 + ["B"] * 400})
    assert f"{ie.online.srm(units)['p_value'][0]:.3g}" == "2.54e-10"


# --- power --------------------------------------------------------------------


def test_power_closed_forms():
    assert ie.online.power(baseline_mean=0.10, mde=0.01)["n_per_arm"].item() == 14128
    mde = ie.online.power(baseline_mean=0.10, n=14128)["mde"].item()
    assert mde == pytest.approx(0.01, rel=1e-4)
    with pytest.raises(OptionError, match="baseline_mean"):
        ie.online.power(mde=0.01)


def test_power_from_a_log(log):
    got = ie.online.power(log=log, metric="CTR", mde=0.01, variant="control")
    table = ie.online.unit_table(log, ["CTR"]).filter(pl.col("variant") == "control")
    want = power_units(table, ratio("CTR__num", "CTR__den"), mde=0.01)
    assert got["metric"].item() == "CTR"
    for column in ("n_units", "baseline_mean", "baseline_var", "n_per_arm"):
        assert got[column].item() == pytest.approx(want[column].item())
    pooled = ie.online.power(log=log, metric="CTR", mde=0.01)
    assert pooled["n_units"].item() == log.units.height
    with pytest.raises(OptionError, match="arms are"):
        ie.online.power(log=log, metric="CTR", mde=0.01, variant="nope")
    with pytest.raises(MetricSpecError, match="median"):
        ie.online.power(log=log, metric="TimeToFirstClick", mde=1.0)


# --- A/A ------------------------------------------------------------------------


def test_an_aa_test_on_the_bundled_log_keeps_its_false_positive_rate(log):
    result = ie.online.aa_test(log, ["CTR", "ZeroResultRate"], n_splits=1000)
    assert result["variant"].to_list() == ["control", "control"]
    assert result["n_units"].to_list() == [453, 453]
    for row in result.iter_rows(named=True):
        assert row["fpr_ci_low"] <= 0.05 <= row["fpr_ci_high"], row
        assert row["ks_p_value"] > 0.001, row


def test_aa_test_picks_the_largest_arm_without_a_control():
    log = _hand_log(30, 50)
    renamed = ie.online.read_log(
        searches=log.searches.with_columns(
            pl.col("variant").str.replace("control", "a")
        ),
        events=log.events,
    )
    result = ie.online.aa_test(renamed, n_splits=50)
    assert result["variant"].item() == "treatment"
    assert result["n_units"].item() == 50
    with pytest.raises(OptionError, match="arms are"):
        ie.online.aa_test(renamed, variant="control", n_splits=50)


# --- bad input ----------------------------------------------------------------


def test_a_control_that_is_not_a_variant_lists_the_variants(log):
    with pytest.raises(OptionError, match=r"\['control', 'treatment'\]"):
        ie.online.ab_test(log, ["CTR"], control="A")


def test_a_variant_without_units_is_named_and_its_rows_are_null(log):
    expected = {"control": 1, "treatment": 1, "other": 1}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = ie.online.ab_test(log, ["CTR"], control="control", expected=expected)
    messages = [str(w.message) for w in caught if w.category is IrevalWarning]
    assert any("'other'" in m and "have no units" in m for m in messages)
    assert any("sample ratio mismatch" in m for m in messages)
    other = result.filter(pl.col("variant") == "other").row(0, named=True)
    assert other["reason"] == "no units in treatment"
    assert other["p_value"] is None
    assert result["srm_flag"].all()  # 0 units where a third was planned


def test_unknown_metric_names(log):
    with pytest.raises(MetricSpecError, match="Nope"):
        ie.online.ab_test(log, ["CTR", "Nope"], control="control")
    with pytest.raises(MetricSpecError):
        ie.online.ab_test(log, {"x": 3}, control="control")
    with pytest.raises(MetricSpecError, match="nDCG"):
        ie.online.ab_test(log, ["nDCG@10"], control="control")
    with pytest.raises(OptionError, match="cuped"):
        ie.online.ab_test(log, ["CTR"], control="control", cuped="yes")


def test_no_nan_in_the_numbers(log):
    result = ie.online.ab_test(log, ["CTR", "AOV"], control="control")
    for column in NUMBERS:
        values = result[column].drop_nulls().to_list()
        assert all(not math.isnan(v) for v in values), column
