"""``ireval-df report``: one self-contained HTML page about a set of runs.

With judgments: the summary with intervals, each run against the baseline
with significance (table and forest plot), the same per slice, the
per-query wins and losses, the precision-recall curves, where metrics
disagree, and the failure taxonomy. Always: how alike the rankings are
(RBO and overlap against the baseline). Last, the settings and versions
that produced it. The page embeds its data and the JavaScript that draws
its charts: it opens with no network.

:func:`html_report` assembles it; it sits on the command line's layer
because it calls the families (``evaluate``, ``failures``, ``similarity``)
and the charts, which the report layer itself never imports.
"""

from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.cli.args import DEFAULT_METRICS, add_data_arguments, slices_of
from ireval_df.errors import OptionError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from ireval_df.report.page import Section

__all__ = ["html_report", "register", "run"]

#: What the report measures when no ``-m`` is given (the first is the headline)
DEFAULT = DEFAULT_METRICS[:4]
#: The similarity measures of the report
SIMILARITY = ("RBO(p=0.9)@100", "Overlap@10")


def register(sub: Any) -> None:
    """Add the ``report`` subcommand to an argparse subparsers object."""
    parser = sub.add_parser(
        "report",
        help="write one self-contained HTML page: summary, comparison, slices, "
        "failures, similarity and charts",
        description="Evaluate runs and write one HTML file that opens in a browser "
        "with no network: the summary, each run against the baseline with "
        "significance, the slices, per-query wins and losses, precision-recall "
        "curves, metric disagreement, the failure taxonomy and how alike the "
        "rankings are; with --log, a search log's online metrics and A/B test. "
        "Without --qrels, the similarity and online parts only.",
    )
    add_data_arguments(
        parser,
        qrels=False,
        metric_help="metric (repeatable; default: " + ", ".join(DEFAULT) + ")",
    )
    parser.add_argument(
        "--qrels",
        metavar="FILE",
        help="relevance judgments (optional: without "
        "them the report shows how alike the runs are)",
    )
    parser.add_argument(
        "--baseline",
        metavar="RUN",
        help="the run the others are compared with (default: the first)",
    )
    parser.add_argument(
        "--log",
        metavar="DIR",
        help="a search log (ireval-df online's tables): adds its online metrics per "
        "arm, the click curve by position and, with two arms or more, the A/B test",
    )
    parser.add_argument(
        "--control", metavar="ARM", help="the log's control arm (default: the first)"
    )
    parser.add_argument("--title", default="Evaluation report", help="the page's title")
    parser.add_argument(
        "-o", "--output", metavar="FILE", required=True, help="the HTML file to write"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run ``ireval-df report``; returns the exit code."""
    from ireval_df.io import write_text

    by = slices_of(args)
    if not str(args.output).lower().endswith((".html", ".htm")):
        msg = f"-o {args.output!r}: the report is an HTML file; name it report.html."
        raise OptionError(msg)
    page = html_report(
        args.run,
        args.qrels,
        metrics=args.metric or list(DEFAULT),
        queries=args.queries,
        by=by,
        baseline=args.baseline,
        log=args.log,
        control=args.control,
        title=args.title,
        command=" ".join(["ireval-df", *sys.argv[1:]]),
    )
    write_text(page, args.output)
    print(f"wrote {args.output} ({len(page) / 1e6:.1f} MB)", file=sys.stderr)
    return 0


def html_report(
    runs: Any,
    qrels: Any = None,
    *,
    metrics: Sequence[str] = DEFAULT,
    queries: Any = None,
    by: str | Sequence[str] | None = None,
    baseline: str | None = None,
    log: Any = None,
    control: str | None = None,
    title: str = "Evaluation report",
    command: str = "",
) -> str:
    """Evaluate runs and return one self-contained HTML report, as ``ireval-df report`` writes it.

    ``ie.html_report(...)`` returns the page as a string; write it with
    ``pathlib.Path("report.html").write_text(page)``, or display it in a
    notebook with ``IPython.display.HTML(page)``.

    Parameters
    ----------
    runs : frame, path, dict or list of these
        Two or more runs, as :func:`ireval_df.evaluate` takes them (one run
        gives a report without comparisons).
    qrels : frame or path, optional
        Judgments. Without them the report holds how alike the runs are.
    metrics : sequence of str
        Offline metrics; the first is the one the per-query chart shows.
    queries : frame or path, optional
        Query attributes, for ``by``.
    by : str or list of str, optional
        Query attributes to slice by.
    baseline : str, optional
        The run the others are compared with (default: the first).
    log : SearchLog or path, optional
        A search log (:func:`ireval_df.online.read_log` or its folder): adds
        its online metrics per arm (and slice, where the searches hold the
        ``by`` columns), the click curve by position and, with two arms or
        more, the A/B test of each against ``control``.
    control : str, optional
        The log's control arm (default: the first in the log).
    title : str
        The page's title.
    command : str
        The command line that made it, shown under the settings.

    Returns
    -------
    str
        The page.
    """
    from ireval_df.report.page import Section, Text, html_page
    from ireval_df.schema import read_run

    slices = [by] if isinstance(by, str) else list(by or [])
    run = read_run(runs)
    names = run["run_id"].unique(maintain_order=True).to_list()
    if baseline is not None and baseline not in names:
        msg = f"--baseline {baseline!r} is not one of the runs {names!r}."
        raise OptionError(msg)
    base = baseline or names[0]
    sections: list[Section] = []
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if qrels is not None:
            sections += _offline(
                run, qrels, list(metrics), queries, slices, base, names
            )
        else:
            shows = "how alike the runs are" + (
                " and the search log's online metrics" if log is not None else ""
            )
            notes.append(f"No judgments were given: the report shows {shows}.")
        if len(names) > 1:
            sections += _similarity(run, queries, slices, base)
        if log is not None:
            sections += _online(log, slices, control)
    said = list(dict.fromkeys(str(w.message) for w in caught))
    sections.append(_settings(names, base, qrels, metrics, slices, command, said))
    subtitle = f"{len(names)} run(s): {', '.join(names)}; baseline {base}"
    if notes:
        sections.insert(0, Section("About", [Text(note) for note in notes]))
    if not sections:
        sections.append(Section("About", [Text("Nothing to report.")]))
    return html_page(title, sections, subtitle=subtitle)


def _offline(
    run: pl.DataFrame,
    qrels: Any,
    metrics: list[str],
    queries: Any,
    slices: list[str],
    base: str,
    names: list[str],
) -> list[Section]:
    import ireval_df as ie
    from ireval_df.report.page import Chart, Section, Table, Text

    per_query = ie.evaluate(run, qrels, metrics, queries=queries)
    summary = ie.summarize(per_query)
    out = [
        Section(
            "Summary",
            [
                Text(
                    "The mean of each metric over the queries, with its 95% "
                    "interval (Student's t or a bootstrap, as ie.summarize "
                    "chooses by the number of queries)."
                ),
                Table(str(ie.to_html(summary, ci=True))),
                Chart(
                    ie.plot.slices(summary).to_dict(), "Each run's mean and interval"
                ),
            ],
        )
    ]
    others = [n for n in names if n != base]
    if others:
        compared = ie.compare(per_query, baseline=base)
        blocks: list[Any] = [
            Text(
                f"Each run against {base}: the mean difference over the queries "
                "both rank, its 95% interval and a paired t-test, Holm-corrected "
                "over every comparison on this page's table. Letters mark the "
                "runs a row is significantly better than."
            ),
            Table(str(ie.to_html(compared, details=True))),
            Chart(ie.plot.deltas(compared).to_dict(), f"Differences from {base}"),
        ]
        for other in others:
            blocks.append(
                Chart(
                    ie.plot.per_query(per_query, other, base, metrics[0]).to_dict(),
                    f"{other} against {base}, query by query ({metrics[0]})",
                )
            )
        out.append(Section("Comparison", blocks))
    if slices:
        sliced = ie.summarize(per_query, by=slices)
        blocks = [
            Text(f"The same, per {', '.join(slices)}; small slices are flagged."),
            Table(str(ie.to_html(sliced, ci=True))),
            Chart(ie.plot.slices(sliced).to_dict(), "Means per slice"),
        ]
        if others:
            compared = ie.compare(per_query, baseline=base, by=slices)
            blocks += [
                Table(str(ie.to_html(compared))),
                Chart(ie.plot.deltas(compared).to_dict(), "Differences per slice"),
            ]
        out.append(Section("Slices", blocks))
    curves = ie.plot.pr_curve(run, qrels, by=slices or None, queries=queries)
    out.append(
        Section(
            "Precision and recall",
            [
                Text(
                    "The 11-point interpolated precision-recall curve of each "
                    "run (trec_eval's iprec_at_recall), averaged over queries."
                ),
                Chart(curves.to_dict()),
            ],
        )
    )
    if others and len(metrics) > 1:
        disagree = ie.disagreement(per_query, by=slices or None)
        out.append(
            Section(
                "Where metrics disagree",
                [
                    Text(
                        "For each pair of metrics, the share of queries on which "
                        "both prefer the same run; a cell marked ≠ is a pair "
                        "that ranks the runs differently overall."
                    ),
                    Chart(ie.plot.disagreement(disagree).to_dict()),
                ],
            )
        )
    out.append(_failures(run, qrels, queries, slices))
    return out


def _failures(
    run: pl.DataFrame, qrels: Any, queries: Any, slices: list[str]
) -> Section:
    import ireval_df as ie
    from ireval_df.report.page import Section, Table, Text

    frame = _frame(ie.failures(run, qrels, queries=queries, by=slices or None))
    return Section(
        "Failures",
        [
            Text(
                "Why relevant documents miss the top 10, per run: never retrieved "
                "(candidate), retrieved below the top 10 (scoring), ranked below a "
                "less relevant document (inverted pairs), and each query's "
                "dominant kind (docs/failures.md defines them)."
            ),
            Table(_plain_table(frame)),
        ],
    )


def _similarity(
    run: pl.DataFrame, queries: Any, slices: list[str], base: str
) -> list[Section]:
    import ireval_df as ie
    from ireval_df.report.page import Chart, Section, Table, Text

    sim = ie.similarity(run, list(SIMILARITY), baseline=base, queries=queries)
    summary = ie.summarize(sim, by=slices or None, ci="t")
    return [
        Section(
            "How alike the rankings are",
            [
                Text(
                    f"Each run against {base} without judgments: rank-biased "
                    "overlap (p = 0.9, ties as Corsi & Urbano's 'a', extrapolated) "
                    "of the top 100, and the share of the top 10 in common; 1 is "
                    "the same ranking."
                ),
                Table(str(ie.to_html(summary, ci=True))),
                Chart(ie.plot.similarity(sim, by=slices or None).to_dict()),
            ],
        )
    ]


#: The online metrics of the report
ONLINE = ("CTR", "ClickRR", "ZeroResultRate", "Abandonment", "Reformulation")


def _online(log: Any, slices: list[str], control: str | None) -> list[Section]:
    import ireval_df as ie
    from ireval_df.report.page import Chart, Section, Table, Text

    searches = log if isinstance(log, ie.online.SearchLog) else ie.online.read_log(log)
    by = [c for c in slices if c in searches.searches.columns]
    values = ie.online.metrics(searches, list(ONLINE), by=by or None)
    blocks: list[Any] = [
        Text(
            "Online metrics of the search log per arm"
            + (f" and {', '.join(by)}" if by else "")
            + ": each a ratio of sums over the arm's searches (docs/online.md)."
        ),
        Table(_plain_table(_wide_online(_frame(values), by))),
        Chart(ie.plot.position_ctr(searches).to_dict(), "Clicks by position"),
    ]
    arms = sorted(str(a) for a in searches.searches["variant"].drop_nulls().unique())
    if len(arms) > 1:
        # an arm called control, else the first by name
        first = control or ("control" if "control" in arms else arms[0])
        tested = ie.online.ab_test(searches, list(ONLINE), control=first)
        blocks += [
            Text(
                f"Each arm against {first}, per randomisation unit (delta method "
                "for ratios, Welch's t), Holm-corrected; the sample-ratio check's "
                "p-value is in every row."
            ),
            Table(_plain_table(_frame(tested))),
            Chart(ie.plot.ab(tested).to_dict(), f"Relative change against {first}"),
        ]
    return [Section("Online", blocks)]


def _wide_online(values: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Return online metrics one row per arm (and slice), a column per metric."""
    keys = ["experiment_id", "variant", *by]
    wide = values.pivot(on="metric", index=keys, values="value")
    counts = values.group_by(keys, maintain_order=True).agg(
        pl.col("n_units").max().alias("units"),
        pl.col("n_searches").max().alias("searches"),
    )
    return wide.join(counts, on=keys, how="left", maintain_order="left")


def _frame(frame: Any) -> pl.DataFrame:
    """Return a result as a polars DataFrame, whatever kind it came as."""
    from ireval_df._utils.frames import eager

    return eager(frame, "a result", "pass a frame ireval_df returned.")


def _settings(
    names: list[str],
    base: str,
    qrels: Any,
    metrics: Sequence[str],
    slices: list[str],
    command: str,
    said: list[str],
) -> Section:
    from importlib.metadata import PackageNotFoundError, version

    from ireval_df.report.page import Section, Table, Text

    def installed(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"

    rows = {
        "runs": ", ".join(names),
        "baseline": base,
        "qrels": str(qrels)
        if isinstance(qrels, str)
        else "given"
        if qrels is not None
        else "none",
        "metrics": ", ".join(metrics) if qrels is not None else "none (no judgments)",
        "slices": ", ".join(slices) or "none",
        "command": command or "(Python)",
        "python": sys.version.split()[0],
        **{
            package: installed(package)
            for package in ("ireval-df", "polars", "altair", "vl-convert-python")
        },
    }
    table = pl.DataFrame({"setting": list(rows), "value": list(rows.values())})
    blocks: list[Any] = [Table(_plain_table(table))]
    if said:
        blocks.append(Text("Warnings while building it:"))
        blocks += [Text(message) for message in said]
    return Section("Settings and versions", blocks)


def _plain_table(frame: pl.DataFrame) -> str:
    """Return a frame as a plain HTML table (every column, numbers to 3 decimals)."""
    import html

    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = []
    for row in frame.iter_rows():
        cells = []
        for value in row:
            text = (
                f"{value:.3f}"
                if isinstance(value, float)
                else ""
                if value is None
                else str(value)
            )
            cells.append(f"<td>{html.escape(text)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        '<table class="ireval-df"><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )
