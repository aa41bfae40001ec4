"""Reports: to_wide, to_markdown, to_latex, to_html."""

from __future__ import annotations

import polars as pl
import pytest

from ireval_df._utils import provenance as _provenance
from ireval_df.errors import SchemaError
from ireval_df.report import HtmlTable, to_html, to_latex, to_markdown, to_wide
from ireval_df.stats import compare
from ireval_df.stats.summary import summarize

# Run b beats a on every one of 8 queries (AP), c equals a; Unjudged@10 is lower-is-better.
PER_QUERY = pl.DataFrame(
    {
        "run_id": ["a"] * 8 + ["b"] * 8 + ["c"] * 8,
        "query_id": [str(i) for i in range(8)] * 3,
        "metric": "AP",
        "value": [0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.4]
        + [0.5, 0.6, 0.6, 0.8, 0.6, 0.5, 0.7, 0.9]
        + [0.1, 0.2, 0.3, 0.4, 0.1, 0.2, 0.3, 0.45],
        "cls": ["x", "y"] * 12,
    }
)


def test_to_wide_summary_and_compare():
    summary = summarize(PER_QUERY, by="cls", n_resamples=100)
    wide = to_wide(summary, digits=2)
    assert wide.columns == ["run_id", "cls", "AP"]
    assert wide.rows()[0] == ("a", "x", 0.2)
    result = compare(PER_QUERY, baseline="a")
    assert to_wide(result).columns == ["run_id", "baseline", "AP"]
    assert (
        to_wide(result, "p_adjusted")["AP"].to_list() == result["p_adjusted"].to_list()
    )
    pd = pytest.importorskip("pandas")
    assert isinstance(to_wide(summary.to_pandas()), pd.DataFrame)


def test_markdown_comparison_marks_and_bold():
    result = compare(PER_QUERY, baseline="a", test="sign", correction="bonferroni")
    text = to_markdown(result)
    lines = text.splitlines()
    assert lines[0] == "| run | AP |"
    assert lines[1] == "| --- | ---: |"
    assert lines[2] == "| (a) a | 0.250 |"
    # b beats a on 8 of 8 queries: sign test p = 2/256, x2 (Bonferroni) < 0.05
    assert lines[3] == "| (b) b | **0.650**<sup>a</sup> |"
    assert lines[4] == "| (c) c | 0.256 |"
    assert "sign test, bonferroni correction, alpha = 0.05" in text


def test_significant_loss_marks_the_baseline():
    result = compare(PER_QUERY, baseline="b", correction=None)
    text = to_markdown(result)
    assert "| (a) b | **0.650**<sup>bc</sup> |" in text


def test_lower_is_better_bold_goes_to_the_smallest():
    frame = pl.DataFrame(
        {"run_id": ["a", "b"], "metric": "Unjudged@10", "value": [0.3, 0.2]}
    )
    assert "| b | **0.200** |" in to_markdown(frame)


def test_summary_with_intervals_and_small_slices():
    summary = summarize(PER_QUERY, by="cls", n_resamples=200)
    text = to_markdown(summary, ci=True, digits=2)
    assert text.splitlines()[0] == "| cls | run_id | n | AP |"
    assert "| x | a | 4* | 0.20 [" in text
    assert "*: fewer than 10 queries, unreliable." in text
    assert "Brackets: confidence interval (percentile bootstrap, 95%)." in text


def test_latex_escapes_and_marks():
    frame = PER_QUERY.with_columns(pl.col("run_id").replace({"b": "big_run"}))
    result = compare(frame, baseline="a", test="sign", correction=None)
    text = to_latex(result)
    assert text.startswith("\\begin{tabular}{lr}\n\\toprule\nrun & AP \\\\")
    assert "(b) big\\_run & \\textbf{0.650}$^{\\mathrm{a}}$ \\\\" in text
    assert "{\\footnotesize Superscript letters" in text


def test_html_renders_in_notebooks():
    html = to_html(compare(PER_QUERY, baseline="a", correction=None))
    assert isinstance(html, HtmlTable)
    assert html._repr_html_() == str(html)
    assert '<table class="ireval-df">' in html
    assert '<td class="num"><b>0.650</b><sup>a</sup></td>' in html


def test_per_query_tables_have_no_bold():
    text = to_markdown(PER_QUERY.head(2))
    assert "**" not in text
    assert "One row per run and query." in text


def test_legend_without_provenance():
    result = compare(PER_QUERY, baseline="a")
    copy = result.clone()
    assert _provenance.settings_of(copy) is None
    assert "significantly better than the run with that letter. Bold" in to_markdown(
        copy
    )


def test_errors():
    with pytest.raises(
        SchemaError, match="expected a long ireval_df result with a 'metric'"
    ):
        to_markdown(pl.DataFrame({"a": [1]}))
    with pytest.raises(SchemaError, match=r"values='p' is not a column"):
        to_wide(PER_QUERY, "p")
    with pytest.raises(SchemaError, match="digits must be a whole number"):
        to_latex(PER_QUERY, digits=-1)


def test_letters_follow_the_baselines_given_then_order():
    # the baseline is given first; byte order would letter 'a' first
    result = compare(PER_QUERY, baseline="c", correction=None)
    lines = to_markdown(result).splitlines()
    assert lines[2].startswith("| (a) c |")
    assert lines[3].startswith("| (b) a |")
    assert lines[4].startswith("| (c) b | **0.650**<sup>a</sup> |")
    # several baselines: in the order given, not in byte order
    two = to_markdown(compare(PER_QUERY, baseline=["c", "a"], correction=None))
    assert [line.split(" |")[0] for line in two.splitlines()[2:5]] == [
        "| (a) c",
        "| (b) a",
        "| (c) b",
    ]
    every = compare(PER_QUERY, correction=None)
    chosen = to_markdown(every, order=["b", "c", "a"]).splitlines()
    assert [line.split(" |")[0] for line in chosen[2:5]] == [
        "| (a) b",
        "| (b) c",
        "| (c) a",
    ]
    with pytest.raises(SchemaError, match=r"order= names runs .* \['zzz'\]"):
        to_markdown(every, order=["zzz"])


def test_details_show_p_values_and_paired_queries_per_slice():
    result = compare(PER_QUERY, baseline="a", by="cls", test="t", correction=None)
    text = to_markdown(result, details=True)
    assert text.splitlines()[0] == "| cls | n | run | AP |"
    b_row = next(line for line in text.splitlines() if "(b) b" in line)
    p = result.filter(run_id="b", cls="x")["p_adjusted"].item()
    assert b_row.startswith("| x | 4 | (b) b |")
    assert f"(p={p:.3f} vs a)" in b_row
    assert "n: queries paired in the slice." in text
    latex = to_latex(result, details=True)
    assert f"(p={p:.3f} vs a)" in latex
    # without details, neither
    assert "p=" not in to_markdown(result)
