"""Display: pivot long results wide, render Markdown, LaTeX and HTML tables.

:func:`ireval_df.summarize` and :func:`ireval_df.compare` return
numbers in long frames; this module rounds, pivots, marks significance and
highlights the best value per column. It computes nothing new.

Tables of comparisons show each run's mean per metric; a superscript letter
marks a significant improvement over the run carrying that letter, so one
table holds every pairwise result (one baseline, several, or all pairs).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._utils import provenance as _provenance
from ireval_df._utils.frames import is_pandas
from ireval_df.errors import SchemaError
from ireval_df.measures import properties

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ireval_df.measures.properties import Direction

__all__ = ["HtmlTable", "to_html", "to_latex", "to_markdown", "to_wide"]

#: Columns that hold statistics, not keys, in ireval_df's long results.
STATISTICS = frozenset(
    {
        "value",
        "n_queries",
        "ci_low",
        "ci_high",
        "small_slice",
        "mean",
        "baseline_mean",
        "delta",
        "delta_rel",
        "p_value",
        "p_adjusted",
        "significant",
        "wins",
        "ties",
        "losses",
        "effect_size",
        "n_missing",
    }
)
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


class HtmlTable(str):
    """An HTML table string that Jupyter renders as HTML."""

    __slots__ = ()

    def _repr_html_(self) -> str:
        return str(self)


def _polars(frame: Any) -> pl.DataFrame:
    if is_pandas(frame):
        from ireval_df._utils.frames import to_polars

        frame = to_polars(frame)
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    if not isinstance(frame, pl.DataFrame) or "metric" not in frame.columns:
        found = (
            frame.columns if isinstance(frame, pl.DataFrame) else type(frame).__name__
        )
        msg = (
            "expected a long ireval_df result with a 'metric' column, found "
            f"{found!r}.\n"
            "  Hint: pass the output of evaluate(), summarize() or compare()."
        )
        raise SchemaError(msg)
    return frame


def _value_column(frame: pl.DataFrame, values: str | None) -> str:
    if values is None:
        for candidate in ("value", "delta", "mean"):
            if candidate in frame.columns:
                return candidate
        values = "value"
    if values not in frame.columns:
        msg = (
            f"values={values!r} is not a column of the frame (found "
            f"{frame.columns!r}).\n  Hint: choose a statistic column such as "
            "'value', 'delta' or 'p_adjusted'."
        )
        raise SchemaError(msg)
    return values


def _keys(frame: pl.DataFrame) -> list[str]:
    return [c for c in frame.columns if c not in STATISTICS and c != "metric"]


def to_wide(frame: Any, values: str | None = None, *, digits: int | None = None) -> Any:
    """Pivot a long result: one column per metric, for display.

    Parameters
    ----------
    frame : polars or pandas DataFrame
        A result of ``evaluate``, ``summarize``, ``compare`` (any frame with a
        ``metric`` column).
    values : str, optional
        The statistic to show; default ``value`` (evaluate, summarize) or
        ``delta`` (compare).
    digits : int, optional
        Round floats to this many decimals.

    Returns
    -------
    Frame of the same kind as ``frame``
        The key columns (run, baseline, slices, query, ...: every column
        that is not a statistic), then one column per metric in order of
        first appearance.

    Raises
    ------
    SchemaError
        No ``metric`` column, or ``values`` is not a column.

    Examples
    --------
    >>> import polars as pl
    >>> summary = pl.DataFrame({"run_id": ["a", "a"], "metric": ["AP", "RR"],
    ...                         "value": [0.25, 0.5], "n_queries": [3, 3]})
    >>> to_wide(summary).rows()
    [('a', 0.25, 0.5)]
    """
    long = _polars(frame)
    column = _value_column(long, values)
    keys = _keys(long)
    order = [str(m) for m in long["metric"].unique(maintain_order=True).to_list()]
    wide = long.pivot(on="metric", index=keys, values=column, aggregate_function=None)
    wide = wide.select(*keys, *order)
    if digits is not None:
        wide = wide.with_columns(pl.col(pl.Float64, pl.Float32).round(digits))
    if is_pandas(frame):
        from ireval_df._utils.frames import to_pandas

        return to_pandas(wide)
    return wide


# --------------------------------------------------------------------------
# a format-neutral table


@dataclass
class _Cell:
    text: str
    bold: bool = False
    marks: str = ""
    numeric: bool = False


@dataclass
class _Table:
    header: list[str]
    rows: list[list[_Cell]] = field(default_factory=list)
    legend: list[str] = field(default_factory=list)


def _directions(long: pl.DataFrame, frame: Any, given: Direction) -> dict[str, bool]:
    """Each metric's direction: the registry's, else ``given``, else the recorded one.

    A frame from ``summarize``/``compare`` records the directions its caller
    declared for metrics the registry does not know.
    """
    if given is None:
        given = (_provenance.settings_of(frame) or {}).get("higher_is_better")
    metrics = [str(m) for m in long["metric"].unique(maintain_order=True).to_list()]
    return {
        p.metric: p.higher_is_better
        for p in properties(metrics, higher_is_better=given)
    }


def _number(value: Any, digits: int) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _best(values: dict[Any, float | None], *, higher: bool) -> set[Any]:
    present = {k: v for k, v in values.items() if v is not None}
    if len(present) < 2:
        return set()
    top = max(present.values()) if higher else min(present.values())
    return {k for k, v in present.items() if v == top}


def _describe(settings: dict[str, Any]) -> str:
    test = settings.get("test")
    names = {
        "t": "paired t-test",
        "wilcoxon": "Wilcoxon signed-rank test",
        "sign": "sign test",
        "randomization": "randomization test",
        "bootstrap": "paired bootstrap test",
        "tukey_hsd": "Tukey's HSD",
    }
    parts = []
    if test in names:
        parts.append(names[test])
    correction = settings.get("correction")
    if test != "tukey_hsd" and "correction" in settings:
        parts.append(f"{correction} correction" if correction else "no correction")
    if "alpha" in settings:
        parts.append(f"alpha = {settings['alpha']}")
    return f" ({', '.join(parts)})" if parts else ""


def _run_order(frame: pl.DataFrame, order: Sequence[str] | None) -> list[str]:
    """Order the runs for their letters: ``order``, else the baselines as given first.

    The baselines come in the order ``compare(baseline=...)`` was given them
    (recorded in its settings), the other runs as the comparison lists them.
    """
    seen: list[str] = []
    for run, base in frame.select("run_id", "baseline").iter_rows():
        for name in (base, run):
            if name not in seen:
                seen.append(name)
    if order is not None:
        if isinstance(order, str) or not all(isinstance(o, str) for o in order):
            msg = f"order= takes a list of run ids, found {order!r}."
            raise SchemaError(msg)
        unknown = [o for o in order if o not in seen]
        if unknown:
            msg = (
                f"order= names runs the comparison does not hold: {unknown!r}; "
                f"its runs are {seen!r}."
            )
            raise SchemaError(msg)
        first = list(dict.fromkeys(order))
    else:
        baseline = (_provenance.settings_of(frame) or {}).get("baseline")
        given = [baseline] if isinstance(baseline, str) else list(baseline or [])
        first = [b for b in given if b in seen]
    return [*first, *(r for r in seen if r not in first)]


def _comparison_table(
    frame: pl.DataFrame,
    digits: int,
    *,
    details: bool = False,
    order: Sequence[str] | None = None,
    direction: dict[str, bool],
) -> _Table:
    slices = [c for c in _keys(frame) if c not in ("run_id", "baseline")]
    metrics = [str(m) for m in frame["metric"].unique(maintain_order=True).to_list()]
    runs = _run_order(frame, order)
    letter = {r: _LETTERS[i % 26] * (1 + i // 26) for i, r in enumerate(runs)}
    table = _Table(
        header=[*slices, *(["n"] if details and slices else []), "run", *metrics]
    )
    groups = frame.select(slices).unique(maintain_order=True).rows() if slices else [()]
    for group in groups:
        part = frame
        for column, value in zip(slices, group, strict=True):
            part = part.filter(
                pl.col(column).is_null() if value is None else pl.col(column) == value
            )
        means: dict[tuple[str, str], float | None] = {}
        marks: dict[tuple[str, str], str] = {}
        # (run, metric) -> "p = 0.012 vs (a)" for each baseline it was tested against
        p_text: dict[tuple[str, str], list[str]] = {}
        paired = max(
            (
                int(r["wins"] + r["ties"] + r["losses"])
                for r in part.iter_rows(named=True)
                if r.get("wins") is not None
            ),
            default=0,
        )
        for row in part.iter_rows(named=True):
            metric = row["metric"]
            means.setdefault((row["run_id"], metric), row["mean"])
            means.setdefault((row["baseline"], metric), row["baseline_mean"])
            if details and row.get("p_adjusted") is not None:
                p_text.setdefault((row["run_id"], metric), []).append(
                    f"p{_p(row['p_adjusted'])} vs {letter[row['baseline']]}"
                )
            if (
                row.get("significant")
                and row["delta"] is not None
                and row["delta"] != 0
            ):
                better = (row["delta"] > 0) == direction[metric]
                winner, loser = (
                    (row["run_id"], row["baseline"])
                    if better
                    else (row["baseline"], row["run_id"])
                )
                marks[(winner, metric)] = (
                    marks.get((winner, metric), "") + "," + letter[loser]
                )
        present = [r for r in runs if any((r, m) in means for m in metrics)]
        best = {
            m: _best({r: means.get((r, m)) for r in present}, higher=direction[m])
            for m in metrics
        }
        for run in present:
            cells = [_Cell(_number(v, digits)) for v in group]
            if details and slices:
                cells.append(_Cell(str(paired), numeric=True))
            cells.append(_Cell(f"({letter[run]}) {run}"))
            for m in metrics:
                rank = {name: i for i, name in enumerate(runs)}
                found = marks.get((run, m), "")
                winners = sorted(
                    (name for name in runs if letter[name] in found.split(",")),
                    key=rank.__getitem__,
                )
                text = _number(means.get((run, m)), digits)
                if p_text.get((run, m)):
                    by_letter = sorted(p_text[(run, m)], key=lambda t: t.split()[-1])
                    text += " (" + "; ".join(by_letter) + ")"
                cells.append(
                    _Cell(
                        text,
                        run in best[m],
                        "".join(letter[w] for w in winners),
                        numeric=True,
                    )
                )
            table.rows.append(cells)
    settings = _provenance.settings_of(frame) or {}
    legend = (
        "Superscript letters: significantly better than the run with that letter"
        f"{_describe(settings)}. Bold: best in column."
    )
    if details:
        legend += (
            " In brackets: the p-value (after the correction) against each run "
            "it was compared with."
        )
        if slices:
            legend += " n: queries paired in the slice."
    table.legend.append(legend)
    return table


def _p(value: float) -> str:
    """Format a p-value for a table: ``=0.012``, or ``<0.001`` below that."""
    return "<0.001" if value < 0.001 else f"={value:.3f}"


def _summary_table(
    frame: pl.DataFrame,
    values: str,
    digits: int,
    *,
    ci: bool,
    direction: dict[str, bool],
) -> _Table:
    keys = _keys(frame)
    per_query = "query_id" in keys
    slices = [] if per_query else [c for c in keys if c != "run_id"]
    keys = [*slices, *(c for c in keys if c not in slices)]
    metrics = [str(m) for m in frame["metric"].unique(maintain_order=True).to_list()]
    has_n = "n_queries" in frame.columns
    table = _Table(header=[*keys, *(["n"] if has_n else []), *metrics])
    with_ci = ci and "ci_low" in frame.columns and values == "value"
    small_any = False
    groups = frame.select(slices).unique(maintain_order=True).rows() if slices else [()]
    for group in groups:
        part = frame
        for column, value in zip(slices, group, strict=True):
            part = part.filter(
                pl.col(column).is_null() if value is None else pl.col(column) == value
            )
        cells: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
        others = [c for c in keys if c not in slices]
        for row in part.iter_rows(named=True):
            key = tuple(row[c] for c in others)
            cells.setdefault(key, {})[row["metric"]] = row
        best = {
            m: set()
            if per_query
            else _best(
                {k: (v[m][values] if m in v else None) for k, v in cells.items()},
                higher=direction[m],
            )
            for m in metrics
        }
        for key, by_metric in cells.items():
            first = next(iter(by_metric.values()))
            out = [_Cell(_number(first[c], digits)) for c in keys]
            if has_n:
                n = max(int(r["n_queries"]) for r in by_metric.values())
                small = any(bool(r.get("small_slice")) for r in by_metric.values())
                small_any |= small
                out.append(_Cell(f"{n}{'*' if small else ''}", numeric=True))
            for m in metrics:
                entry = by_metric.get(m)
                text = _number(None if entry is None else entry[values], digits)
                if with_ci and entry is not None and entry["ci_low"] is not None:
                    text += f" [{entry['ci_low']:.{digits}f}, {entry['ci_high']:.{digits}f}]"
                out.append(_Cell(text, key in best[m], numeric=True))
            table.rows.append(out)
    legend = "Bold: best in column" + (" within each slice." if slices else ".")
    if per_query:
        legend = "One row per run and query."
    settings = _provenance.settings_of(frame) or {}
    if with_ci:
        how = settings.get("ci")
        legend += f" Brackets: confidence interval{f' ({how})' if how else ''}."
    if small_any:
        limit = settings.get("min_queries")
        legend += (
            f" *: fewer than {limit} queries" if limit else " *: few queries"
        ) + ", unreliable."
    table.legend.append(legend)
    return table


def _table(
    frame: Any,
    values: str | None,
    digits: int,
    *,
    ci: bool,
    details: bool = False,
    order: Sequence[str] | None = None,
    higher_is_better: Direction = None,
) -> _Table:
    long = _polars(frame)
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        msg = f"digits must be a whole number >= 0, found {digits!r}."
        raise SchemaError(msg)
    comparison = {"baseline", "mean", "baseline_mean", "significant"} <= set(
        long.columns
    )
    if "metric" not in long.columns:
        msg = (
            f"expected a long result with a 'metric' column (found {long.columns!r}).\n"
            "  Hint: pass the output of evaluate(), summarize() or compare()."
        )
        raise SchemaError(msg)
    direction = _directions(long, frame, higher_is_better)
    if comparison and values is None:
        return _comparison_table(
            long, digits, details=details, order=order, direction=direction
        )
    return _summary_table(
        long, _value_column(long, values), digits, ci=ci, direction=direction
    )


# --------------------------------------------------------------------------
# renderers


def _render(
    table: _Table,
    cell: Callable[[_Cell], str],
    escape: Callable[[str], str],
) -> tuple[list[str], list[list[str]]]:
    header = [escape(h) for h in table.header]
    rows = [[cell(c) for c in row] for row in table.rows]
    return header, rows


def to_markdown(
    frame: Any,
    *,
    values: str | None = None,
    digits: int = 3,
    ci: bool = False,
    details: bool = False,
    order: Sequence[str] | None = None,
    higher_is_better: Direction = None,
) -> str:
    """Render a result as a Markdown table (GitHub flavour) with a legend.

    Parameters
    ----------
    frame : polars or pandas DataFrame
        A result of ``compare``/``tukey_hsd`` (means per run, superscript
        letters for significant improvements), or of ``summarize``/
        ``evaluate`` (one column per metric).
    values : str, optional
        Show this statistic instead (a plain pivot, as :func:`to_wide`).
    digits : int, default 3
        Decimals shown.
    ci : bool, default False
        Add ``[low, high]`` intervals to a summary's values.
    details : bool, default False
        In a comparison, add each run's p-value (after the correction)
        against every run it was compared with, and the number of paired
        queries per slice (column ``n``).
    order : list of str, optional
        In a comparison, the runs in the order their letters and rows
        should follow; by default the baselines as ``compare`` was given
        them, then the other runs.

    higher_is_better : bool or mapping of str to bool, optional
        The direction (for "best" and "better") of metrics the registry does
        not know; default: what ``summarize``/``compare`` recorded for them.

    Returns
    -------
    str
        The table, a blank line, and the legend. The best value of each
        column (per slice) is bold, following the metric's direction.

    Raises
    ------
    SchemaError
        Not a long result (no ``metric`` column), or an unknown ``values``.

    Examples
    --------
    >>> import polars as pl
    >>> summary = pl.DataFrame({"run_id": ["a", "b"], "metric": "AP",
    ...                         "value": [0.25, 0.5], "n_queries": [30, 30]})
    >>> print(to_markdown(summary))
    | run_id | n | AP |
    | --- | ---: | ---: |
    | a | 30 | 0.250 |
    | b | 30 | **0.500** |
    <BLANKLINE>
    Bold: best in column.
    """
    table = _table(
        frame,
        values,
        digits,
        ci=ci,
        details=details,
        order=order,
        higher_is_better=higher_is_better,
    )

    def escape(text: str) -> str:
        return text.replace("|", "\\|")

    def cell(c: _Cell) -> str:
        text = escape(c.text)
        if c.bold:
            text = f"**{text}**"
        if c.marks:
            text += f"<sup>{c.marks}</sup>"
        return text

    header, rows = _render(table, cell, escape)
    numeric = [any(r[i].numeric for r in table.rows) for i in range(len(header))]
    lines = [
        "| " + " | ".join(header) + " |",
        "| " + " | ".join("---:" if n else "---" for n in numeric) + " |",
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
    return "\n".join(lines) + "\n\n" + "\n".join(table.legend) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text).replace("–", "--")


def to_latex(
    frame: Any,
    *,
    values: str | None = None,
    digits: int = 3,
    ci: bool = False,
    details: bool = False,
    order: Sequence[str] | None = None,
    higher_is_better: Direction = None,
) -> str:
    r"""Render a result as a LaTeX ``tabular`` (booktabs) with a legend.

    Parameters
    ----------
    frame : polars or pandas DataFrame
        As :func:`to_markdown`.
    values : str, optional
        Show this statistic instead (a plain pivot).
    digits : int, default 3
        Decimals shown.
    ci : bool, default False
        Add ``[low, high]`` intervals to a summary's values.
    details : bool, default False
        In a comparison, add each run's p-value (after the correction)
        against every run it was compared with, and the number of paired
        queries per slice (column ``n``).
    order : list of str, optional
        In a comparison, the runs in the order their letters and rows
        should follow; by default the baselines as ``compare`` was given
        them, then the other runs.

    higher_is_better : bool or mapping of str to bool, optional
        The direction (for "best" and "better") of metrics the registry does
        not know; default: what ``summarize``/``compare`` recorded for them.

    Returns
    -------
    str
        ``\begin{tabular}...\end{tabular}`` (needs ``\usepackage{booktabs}``)
        followed by the legend in ``\footnotesize``. Best values are
        ``\textbf``, significance letters ``$^{\mathrm{ab}}$``.

    Raises
    ------
    SchemaError
        Not a long result, or an unknown ``values``.

    Examples
    --------
    >>> import polars as pl
    >>> summary = pl.DataFrame({"run_id": ["bm_25"], "metric": "AP", "value": [0.25]})
    >>> print(to_latex(summary))
    \begin{tabular}{lr}
    \toprule
    run\_id & AP \\
    \midrule
    bm\_25 & 0.250 \\
    \bottomrule
    \end{tabular}
    <BLANKLINE>
    \smallskip
    {\footnotesize Bold: best in column.}
    """
    table = _table(
        frame,
        values,
        digits,
        ci=ci,
        details=details,
        order=order,
        higher_is_better=higher_is_better,
    )

    def cell(c: _Cell) -> str:
        text = _latex_escape(c.text)
        if c.bold:
            text = f"\\textbf{{{text}}}"
        if c.marks:
            text += f"$^{{\\mathrm{{{c.marks}}}}}$"
        return text

    header, rows = _render(table, cell, _latex_escape)
    numeric = [any(r[i].numeric for r in table.rows) for i in range(len(header))]
    spec = "".join("r" if n else "l" for n in numeric)
    lines = [
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(header) + " \\\\",
        "\\midrule",
        *(" & ".join(r) + " \\\\" for r in rows),
        "\\bottomrule",
        "\\end{tabular}",
        "",
        "\\smallskip",
        *(f"{{\\footnotesize {_latex_escape(line)}}}" for line in table.legend),
    ]
    return "\n".join(lines) + "\n"


_STYLE = (
    "<style>"
    "table.ireval-df{border-collapse:collapse;font-size:0.9em}"
    "table.ireval-df th,table.ireval-df td{padding:0.25em 0.7em;"
    "border-bottom:1px solid #ddd}"
    "table.ireval-df thead th{border-bottom:2px solid #555;text-align:left}"
    "table.ireval-df td.num,table.ireval-df th.num{text-align:right;"
    "font-variant-numeric:tabular-nums}"
    "table.ireval-df sup{color:#1a7f37;font-weight:bold;margin-left:0.1em}"
    "p.ireval-df-legend{font-size:0.8em;color:#555}"
    "</style>"
)


def to_html(
    frame: Any,
    *,
    values: str | None = None,
    digits: int = 3,
    ci: bool = False,
    details: bool = False,
    order: Sequence[str] | None = None,
    higher_is_better: Direction = None,
) -> HtmlTable:
    """Render a result as a styled HTML table, shown as a table in notebooks.

    Parameters
    ----------
    frame : polars or pandas DataFrame
        As :func:`to_markdown`.
    values : str, optional
        Show this statistic instead (a plain pivot).
    digits : int, default 3
        Decimals shown.
    ci : bool, default False
        Add ``[low, high]`` intervals to a summary's values.
    details : bool, default False
        In a comparison, add each run's p-value (after the correction)
        against every run it was compared with, and the number of paired
        queries per slice (column ``n``).
    order : list of str, optional
        In a comparison, the runs in the order their letters and rows
        should follow; by default the baselines as ``compare`` was given
        them, then the other runs.

    higher_is_better : bool or mapping of str to bool, optional
        The direction (for "best" and "better") of metrics the registry does
        not know; default: what ``summarize``/``compare`` recorded for them.

    Returns
    -------
    HtmlTable
        A ``str`` holding a scoped ``<style>``, the ``<table
        class="ireval-df">`` and a legend paragraph; Jupyter renders it
        through ``_repr_html_``.

    Raises
    ------
    SchemaError
        Not a long result, or an unknown ``values``.

    Examples
    --------
    >>> import polars as pl
    >>> summary = pl.DataFrame({"run_id": ["a", "b"], "metric": "AP",
    ...                         "value": [0.25, 0.5]})
    >>> '<td class="num"><b>0.500</b></td>' in to_html(summary)
    True
    """
    table = _table(
        frame,
        values,
        digits,
        ci=ci,
        details=details,
        order=order,
        higher_is_better=higher_is_better,
    )

    def cell(c: _Cell) -> str:
        text = html.escape(c.text)
        if c.bold:
            text = f"<b>{text}</b>"
        if c.marks:
            text += f"<sup>{html.escape(c.marks)}</sup>"
        klass = ' class="num"' if c.numeric else ""
        return f"<td{klass}>{text}</td>"

    header, rows = _render(table, cell, html.escape)
    numeric = [any(r[i].numeric for r in table.rows) for i in range(len(header))]
    num = ' class="num"'
    head = "".join(
        f"<th{num if n else ''}>{h}</th>" for h, n in zip(header, numeric, strict=True)
    )
    body = "".join("<tr>" + "".join(r) + "</tr>" for r in rows)
    legend = "".join(
        f'<p class="ireval-df-legend">{html.escape(line)}</p>' for line in table.legend
    )
    return HtmlTable(
        f'{_STYLE}<table class="ireval-df"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>{legend}"
    )


Format = Literal["markdown", "latex", "html"]


def render(
    frame: Any,
    fmt: Format,
    *,
    values: str | None = None,
    digits: int = 3,
    ci: bool = False,
    details: bool = False,
    order: Sequence[str] | None = None,
) -> str:
    """Render with the renderer named by ``fmt`` (the CLI's ``--format``)."""
    renderers: dict[str, Callable[..., str]] = {
        "markdown": to_markdown,
        "latex": to_latex,
        "html": to_html,
    }
    return str(
        renderers[fmt](
            frame, values=values, digits=digits, ci=ci, details=details, order=order
        )
    )
