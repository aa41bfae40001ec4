"""Results for people: wide tables, Markdown, LaTeX and HTML with significance marks.

Works on any long frame the library returns (per-query results, summaries,
comparisons); a metric's direction (for "best in bold") comes from the
measure registry or, for a metric it does not know, from the
``higher_is_better=`` argument.
"""

from __future__ import annotations

from ireval_df.report.tables import (
    HtmlTable,
    render,
    to_html,
    to_latex,
    to_markdown,
    to_wide,
)

__all__ = ["HtmlTable", "render", "to_html", "to_latex", "to_markdown", "to_wide"]
