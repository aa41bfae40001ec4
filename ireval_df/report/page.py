"""One self-contained HTML page of sections: headings, prose, tables and charts.

The page embeds everything it shows: its styles, the tables' HTML, each
chart's Vega-Lite specification (data included) and, once, the JavaScript
that draws them (Vega, Vega-Lite and vega-embed, as vl-convert bundles
them), so it opens with no network. It reads no family: the caller hands
it frames already computed and charts as Vega-Lite dictionaries
(``chart.to_dict()`` of an :mod:`ireval_df.plot` chart), which keeps the
report layer free of the families (``docs/design.md``).
"""

from __future__ import annotations

import datetime as dt
import html
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ireval_df.errors import OptionError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["Chart", "Section", "Table", "Text", "html_page"]


@dataclass(frozen=True)
class Text:
    """A paragraph; ``html`` is already escaped markup (or plain text when ``escape``)."""

    content: str
    escape: bool = True

    def render(self) -> str:
        """Return the paragraph's HTML."""
        body = html.escape(self.content) if self.escape else self.content
        return f"<p>{body}</p>"


@dataclass(frozen=True)
class Table:
    """A table's HTML (``ie.to_html(...)``'s, or any ``<table>``), with a caption."""

    markup: str
    caption: str = ""

    def render(self) -> str:
        """Return the table, scrollable sideways when wide."""
        caption = (
            f'<p class="caption">{html.escape(self.caption)}</p>'
            if self.caption
            else ""
        )
        return f'<div class="table">{caption}{self.markup}</div>'


@dataclass(frozen=True)
class Chart:
    """A chart's Vega-Lite specification (``chart.to_dict()``), drawn by vega-embed."""

    spec: Mapping[str, Any]
    caption: str = ""

    def render(self, number: int) -> str:
        """Return the chart's container and the script that draws it."""
        spec = json.dumps(self.spec, default=str).replace("</", "<\\/")
        caption = (
            f'<p class="caption">{html.escape(self.caption)}</p>'
            if self.caption
            else ""
        )
        return (
            f'<figure class="chart">{caption}<div id="chart-{number}" '
            f'class="vega" data-chart="{number}"></div></figure>'
            f'<script type="module">window.ireval_draw("#chart-{number}", {spec});</script>'
        )


@dataclass(frozen=True)
class Section:
    """A heading and its blocks, in order."""

    title: str
    blocks: Sequence[Text | Table | Chart] = field(default_factory=list)
    anchor: str = ""


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;
color:#1f2328;background:#fff;line-height:1.45}
header{background:#24292f;color:#fff;padding:1.2em 2em}
header h1{margin:0;font-size:1.6em}header p{margin:.3em 0 0;color:#d0d7de}
nav{padding:.6em 2em;border-bottom:1px solid #d0d7de;background:#f6f8fa;
position:sticky;top:0;z-index:2}
nav a{margin-right:1.2em;color:#0969da;text-decoration:none;font-size:.95em}
main{padding:0 2em 3em;max-width:1200px}
section{margin-top:2em}h2{border-bottom:1px solid #d0d7de;padding-bottom:.3em}
.caption{color:#57606a;font-size:.9em;margin:.8em 0 .3em}
.table{overflow-x:auto;margin:.5em 0}
figure.chart{margin:1em 0}
.vega{min-height:60px}
.error{color:#cf222e}
footer{color:#57606a;font-size:.85em;padding:1em 2em;border-top:1px solid #d0d7de}
"""

#: Draws a chart, and writes any failure on the page and to the console
_DRAW = """
window.ireval_draw = function (target, spec) {
  window.vegaEmbed(target, spec, {actions: {export: true, source: false,
    compiled: false, editor: false}, renderer: "svg"})
    .then(function () { document.querySelector(target).dataset.drawn = "yes"; })
    .catch(function (error) {
      document.querySelector(target).innerHTML =
        '<p class="error">This chart could not be drawn: ' + error + "</p>";
      console.error(error);
    });
};
"""


def _javascript() -> str:
    """Return Vega, Vega-Lite and vega-embed in one script (vl-convert's bundle)."""
    try:
        import vl_convert
    except ImportError as error:
        msg = (
            "an HTML report with charts needs vl-convert-python, which bundles "
            'the JavaScript that draws them.\n  Hint: pip install "ireval-df[plot]"'
        )
        raise OptionError(msg) from error
    # the snippet runs inside the bundle, where the three libraries are in scope
    bundle: str = vl_convert.javascript_bundle(
        "window.vegaEmbed = vegaEmbed; window.vegaLite = vegaLite; window.vega = vega;"
    )
    return bundle.replace("</script", "<\\/script")


def html_page(
    title: str,
    sections: Sequence[Section],
    *,
    subtitle: str = "",
    footer: str = "",
) -> str:
    """Return one self-contained HTML page of ``sections``.

    Parameters
    ----------
    title : str
        The page's title and heading.
    sections : sequence of Section
        Headings with their paragraphs, tables and charts, in order; a
        navigation bar links to each.
    subtitle : str, optional
        A line under the heading (what was evaluated, when).
    footer : str, optional
        A line at the foot of the page.

    Returns
    -------
    str
        The page. With a chart it embeds the JavaScript that draws it
        (about 1 MB), so it opens with no network.

    Raises
    ------
    OptionError
        Charts without vl-convert-python installed.

    Examples
    --------
    >>> page = html_page("Runs", [Section("Summary", [Text("Two runs & a baseline.")])])
    >>> '<h2 id="summary">Summary</h2>' in page, "Two runs &amp; a baseline." in page
    (True, True)
    """
    charts = 0
    parts: list[str] = []
    links: list[str] = []
    for index, section in enumerate(sections):
        anchor = section.anchor or _anchor(section.title, index)
        links.append(f'<a href="#{anchor}">{html.escape(section.title)}</a>')
        body = []
        for block in section.blocks:
            if isinstance(block, Chart):
                charts += 1
                body.append(block.render(charts))
            else:
                body.append(block.render())
        parts.append(
            f'<section><h2 id="{anchor}">{html.escape(section.title)}</h2>'
            f"{''.join(body)}</section>"
        )
    script = ""
    if charts:
        script = (
            f'<script type="module">{_javascript()}</script>'
            f'<script type="module">{_DRAW}</script>'
        )
    made = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style>{script}</head>"
        f"<body><header><h1>{html.escape(title)}</h1>"
        f"<p>{html.escape(subtitle)}</p></header>"
        f"<nav>{''.join(links)}</nav><main>{''.join(parts)}</main>"
        f"<footer>{html.escape(footer or 'Made by ireval_df')} · {made}</footer>"
        "</body></html>"
    )


def _anchor(title: str, index: int) -> str:
    word = "".join(c if c.isalnum() else "-" for c in title.lower()).strip("-")
    return word or f"section-{index + 1}"
