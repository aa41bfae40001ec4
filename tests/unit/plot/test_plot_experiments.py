"""Charts of the online frames: CTR by position, propensities, A/B, interleaving."""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from plot_helpers import assert_png, fields, rows

import ireval_df as ie
from ireval_df.errors import SchemaError


def test_position_ctr_of_a_log_or_its_metrics(log, tmp_path):
    frame = ie.online.metrics(log, "PositionCTR")
    chart = ie.plot.position_ctr(frame)
    drawn = pl.DataFrame(rows(chart))
    assert (
        drawn.select("arm", "position", "value").rows()
        == frame.select("variant", "position", "value").rows()
    )
    assert rows(ie.plot.position_ctr(log)) == rows(chart)
    assert fields(chart, "x") == {"position"}
    assert fields(chart, "y") == {"value"}
    assert fields(chart, "color") == {"arm"}
    assert_png(chart, tmp_path / "ctr.png")


def test_position_ctr_needs_position_rows(log):
    ctr = ie.online.metrics(log, "CTR")
    with pytest.raises(SchemaError, match=r"\['position'\]"):
        ie.plot.position_ctr(ctr)
    with pytest.raises(SchemaError, match=r"no PositionCTR row"):
        ie.plot.position_ctr(ctr.with_columns(position=pl.lit(None, pl.Int32)))


def test_propensities_with_their_intervals(interleaving_log, tmp_path):
    frame = ie.online.propensities(interleaving_log, method="randtop", k=3)
    chart = ie.plot.propensities(frame)
    drawn = pl.DataFrame(rows(chart))
    assert drawn.select("position", "propensity", "ci_low", "ci_high").rows() == (
        frame.select("position", "propensity", "ci_low", "ci_high").rows()
    )
    assert fields(chart, "x") == {"position"}
    assert fields(chart, "y") == {"ci_low", "propensity"}
    assert_png(chart, tmp_path / "propensities.png")
    with pytest.raises(SchemaError, match=r"ie.online.propensities"):
        ie.plot.propensities(frame.drop("ci_low"))


@pytest.fixture(scope="module")
def ab_frame(log):
    metrics = ["CTR", "ClickRR", "ZeroResultRate"]
    return ie.online.ab_test(log, metrics, control="control", by="query_class")


def test_ab_forest_relative_and_absolute(ab_frame, tmp_path):
    chart = ie.plot.ab(ab_frame)
    drawn = pl.DataFrame(rows(chart))
    assert drawn["effect"].to_list() == ab_frame["delta_rel"].to_list()
    assert drawn["low"].to_list() == ab_frame["rel_ci_low"].to_list()
    # ZeroResultRate: lower is better, so a significant rise would be red
    zero = drawn.filter(pl.col("metric") == "ZeroResultRate")
    assert (
        set(zero["outcome"]) <= {"not significant", "worse (significant)"}
        or (
            zero.filter(pl.col("outcome") == "better (significant)")["effect"] < 0
        ).all()
    )
    informational = drawn.filter(
        (pl.col("slice") == "informational") & (pl.col("metric") == "CTR")
    )
    assert informational["outcome"].item() == "better (significant)"
    assert fields(chart, "x") == {"low", "effect"}
    assert fields(chart, "y") == {"metric"}
    assert fields(chart, "color") == {"outcome"}
    assert chart.to_dict()["facet"]["row"]["field"] == "slice"
    assert_png(chart, tmp_path / "ab.png")
    absolute = pl.DataFrame(rows(ie.plot.ab(ab_frame, relative=False)))
    assert absolute["effect"].to_list() == ab_frame["delta"].to_list()


def test_ab_names_the_columns_it_lacks(ab_frame):
    with pytest.raises(SchemaError, match=r"(?s)\['rel_ci_low'\].*ie.online.ab_test"):
        ie.plot.ab(ab_frame.drop("rel_ci_low"))


def test_interleaving_forest(interleaving_log, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # newer versions count no-result searches
        outcomes = ie.online.interleaving_outcomes(interleaving_log)
    frame = ie.online.interleaving_test(outcomes, unit="user_id", by="query_class")
    chart = ie.plot.interleaving(frame)
    drawn = pl.DataFrame(rows(chart))
    assert drawn["delta_ab"].to_list() == frame["delta_ab"].to_list()
    assert drawn["row"].to_list() == frame["query_class"].to_list()
    # bm25 is ranker_a: navigational prefers it, informational prefers hybrid
    winner = dict(zip(drawn["row"], drawn["winner"], strict=True))
    assert winner["navigational"] == "bm25"
    assert winner["informational"] == "hybrid"
    assert fields(chart, "x") == {"ci_low", "delta_ab"}
    assert fields(chart, "y") == {"row"}
    assert fields(chart, "color") == {"winner"}
    assert_png(chart, tmp_path / "interleaving.png")
    with pytest.raises(SchemaError, match=r"ie.online.interleaving_test"):
        ie.plot.interleaving(outcomes)


def test_altair_missing_names_the_extra(monkeypatch):
    import importlib

    real = importlib.import_module

    def refuse(name, *args):
        if name == "altair":
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", refuse)
    with pytest.raises(ie.errors.IrevalError, match=r'pip install "ireval-df\[plot\]"'):
        ie.plot.propensities(pl.DataFrame())


def test_a_chart_saves_as_svg_and_html_too(tmp_path):
    frame = pl.DataFrame(
        {
            "position": [1, 2],
            "propensity": [1.0, 0.5],
            "ci_low": [1.0, 0.4],
            "ci_high": [1.0, 0.6],
        }
    )
    chart = ie.plot.propensities(frame)
    chart.save(str(tmp_path / "p.svg"))
    chart.save(str(tmp_path / "p.html"))
    assert (tmp_path / "p.svg").read_text().lstrip().startswith("<svg")
    html = (tmp_path / "p.html").read_text()
    assert "vegaEmbed" in html
    assert '"propensity": 0.5' in html or '"propensity":0.5' in html


def test_position_ctr_by_slice_makes_a_panel_per_slice(log):
    frame = ie.online.metrics(log, "PositionCTR@10", by="device")
    chart = ie.plot.position_ctr(frame)
    drawn = pl.DataFrame(rows(chart))
    assert set(drawn["slice"]) == {"desktop", "mobile", "tablet"}
    assert drawn["value"].to_list() == frame["value"].to_list()
    assert chart.to_dict()["facet"]["column"]["field"] == "slice"
