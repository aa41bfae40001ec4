"""``ireval-df similarity``: how alike runs are, without judgments; a no-change gate.

Compares every run with a baseline query by query (RBO by default) and
prints the mean of each measure per run (and slice). With ``--fail-below``
it is a gate for migrations and optimisations that must not change the
results: exit 1, listing the queries whose value falls below the
threshold.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.cli.args import add_data_arguments, slices_of
from ireval_df.cli.render import render_table, wide

if TYPE_CHECKING:
    import argparse

__all__ = ["register", "run"]

#: What ``ireval-df similarity`` computes when no ``-m`` is given
DEFAULT = ("RBO(ties=b)",)
#: Queries listed under a failed gate, at most
SHOWN = 20


def register(sub: Any) -> None:
    """Add the ``similarity`` subcommand to an argparse subparsers object."""
    parser = sub.add_parser(
        "similarity",
        help="compare runs with a baseline without judgments (RBO, tau, overlap)",
        description="Compare each run with a baseline, query by query, without "
        "judgments. With --fail-below, exit 1 when any query's value is below the "
        "threshold (a no-change gate).",
    )
    add_data_arguments(
        parser,
        qrels=False,
        metric_help="similarity measure (repeatable; default RBO(ties=b): a "
        "ranking has RBO 1 with itself, as a no-change gate needs), e.g. "
        "'RBO(p=0.9)@100', 'Tau', 'TauAP', 'Jaccard@10', 'Overlap@10'",
    )
    parser.add_argument(
        "--baseline",
        metavar="RUN",
        help="the run the others are compared with (default: the first)",
    )
    parser.add_argument(
        "--missing",
        choices=("zero", "skip", "error"),
        default="zero",
        help="a query one run ranks and the other does not: compared with an empty "
        "ranking (default), left out, or an error",
    )
    parser.add_argument(
        "--per-query", action="store_true", help="one row per query, not means"
    )
    parser.add_argument(
        "--fail-below",
        type=float,
        metavar="VALUE",
        help="exit 1 and list the queries whose value is below VALUE",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the per-query values to FILE"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run ``ireval-df similarity``; returns the exit code."""
    import ireval_df as ie

    by = slices_of(args)
    per_query = ie.similarity(
        args.run,
        args.metric or list(DEFAULT),
        baseline=args.baseline,
        queries=args.queries,
        missing=args.missing,
    )
    if args.output:
        ie.write_results(per_query, args.output)
        print(f"wrote {per_query.height} rows to {args.output}", file=sys.stderr)
    elif args.per_query:
        table = wide(per_query, ["run_id", "baseline", "query_id"])
        sys.stdout.write(render_table(table) + "\n")
    else:
        summary = ie.summarize(per_query, by=by, ci="t")
        table = wide(summary, ["run_id", "baseline", *by])
        counts = summary.select("run_id", "baseline", *by, "n_queries").unique(
            maintain_order=True
        )
        table = table.join(
            counts, on=["run_id", "baseline", *by], how="left", maintain_order="left"
        )
        sys.stdout.write(render_table(table) + "\n")
    if args.fail_below is None:
        return 0
    below = per_query.filter(pl.col("value") < args.fail_below).sort("value")
    if below.is_empty():
        print(
            f"ireval-df: every query is at or above {args.fail_below:g}",
            file=sys.stderr,
        )
        return 0
    print(
        f"ireval-df: {below.height} of {per_query.height} (run, query, measure) values "
        f"are below {args.fail_below:g}; the lowest {min(below.height, SHOWN)}:",
        file=sys.stderr,
    )
    shown = below.head(SHOWN).select(
        "run_id", "baseline", "query_id", "metric", "value"
    )
    print(render_table(shown), file=sys.stderr)
    return 1
