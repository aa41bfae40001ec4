"""report.page: one self-contained HTML page of sections, tables and charts."""

from __future__ import annotations

import re

import pytest

from ireval_df.report.page import Chart, Section, Table, Text, html_page

SPEC = {
    "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
    "data": {"values": [{"x": 1, "y": 2}]},
    "mark": "point",
    "encoding": {"x": {"field": "x", "type": "quantitative"}},
}


def test_sections_are_linked_from_the_navigation_and_text_is_escaped() -> None:
    page = html_page(
        "A <title>",
        [
            Section("Summary", [Text("a < b & c")]),
            Section(
                "Failures", [Table("<table><tr><td>1</td></tr></table>", "caption")]
            ),
        ],
        subtitle="two runs",
    )
    assert "<title>A &lt;title&gt;</title>" in page
    assert '<a href="#summary">Summary</a><a href="#failures">Failures</a>' in page
    assert '<h2 id="failures">Failures</h2>' in page
    assert "<p>a &lt; b &amp; c</p>" in page
    assert "<table><tr><td>1</td></tr></table>" in page
    # no chart, no JavaScript
    assert "<script" not in page


def test_charts_share_one_inline_bundle_and_load_nothing_from_the_network() -> None:
    pytest.importorskip("vl_convert", reason="pip install 'ireval-df[plot]'")
    page = html_page(
        "Charts",
        [Section("One", [Chart(SPEC, "first")]), Section("Two", [Chart(SPEC)])],
    )
    assert page.count("window.vegaEmbed=") == 1  # the bundle, once
    assert page.count('window.ireval_draw("#chart-') == 2
    assert 'id="chart-1"' in page
    assert 'id="chart-2"' in page
    # opens offline: no script or stylesheet from elsewhere
    assert not re.search(r"<script[^>]*\ssrc=", page)
    assert not re.search(r"<link[^>]*href=\"?https?:", page)


def test_a_specification_cannot_close_the_script_it_sits_in() -> None:
    pytest.importorskip("vl_convert", reason="pip install 'ireval-df[plot]'")
    spec = {**SPEC, "title": "</script><b>x</b>"}
    page = html_page("t", [Section("s", [Chart(spec)])])
    body = page.split('window.ireval_draw("#chart-1", ', 1)[1].split("</script>", 1)[0]
    assert "<\\/script>" in body


def test_charts_without_vl_convert_name_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from ireval_df.errors import OptionError

    monkeypatch.setitem(sys.modules, "vl_convert", None)
    with pytest.raises(OptionError, match=r"ireval-df\[plot\]"):
        html_page("t", [Section("s", [Chart(SPEC)])])
