"""``ireval-df validate``: check runs, qrels and query tables before evaluating.

Talks to the outside world only (argv, files, stdout/stderr); the findings
come from :func:`ireval_df.validate`.

Exit codes: 0 when no finding is an error (warnings and information are
printed but do not fail), 1 when some finding is an error (``--strict``: a
warning too) or an input cannot be read at all, 2 for bad usage.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    import argparse

from ireval_df.cli.args import add_data_arguments, add_qrels_intents
from ireval_df.offline.conventions import UNJUDGED_AT

__all__ = ["register", "run"]

#: Columns of the printed table; message and fix follow it, one per finding.
_TABLE = ("severity", "check", "input", "run_id", "count", "value", "example")


def register(subparsers: Any) -> None:
    """Add the ``validate`` subcommand to an ``argparse`` subparsers object."""
    parser = subparsers.add_parser(
        "validate",
        help="check runs, qrels and query tables for problems before evaluating",
        description=(
            "Read runs, qrels and a query table leniently and list every problem "
            "found (duplicates, NaN scores, ids that differ only by zero padding, "
            "queries on one side only, unjudged documents, short rankings, ties, "
            "...), one row per finding. Exit 0 when no finding is an error, 1 when "
            "one is (with --strict, also a warning) or a file cannot be read, 2 "
            "for bad usage."
        ),
    )
    add_data_arguments(
        parser,
        required=False,
        metric_help="a metric you mean to compute (repeatable): its cutoff is the "
        "depth rankings are checked against",
        by_help=None,
    )
    parser.add_argument(
        "-k",
        type=int,
        default=UNJUDGED_AT,
        metavar="K",
        help="top of the ranking checked for unjudged documents and ties "
        f"(default: {UNJUDGED_AT})",
    )
    parser.add_argument(
        "--depth",
        type=int,
        metavar="N",
        help="ranking length to expect (default: the deepest -m cutoff, else K)",
    )
    parser.add_argument(
        "--rel",
        type=int,
        default=1,
        metavar="N",
        help="lowest relevant grade (default: 1)",
    )
    add_qrels_intents(parser)
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 on warnings too, not only on errors",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the findings (.parquet, .csv, .tsv, .jsonl) instead of a table",
    )
    parser.set_defaults(handler=run, _validate_parser=parser)


def _usage(args: argparse.Namespace, message: str) -> int:
    parser = getattr(args, "_validate_parser", None)
    if parser is not None:
        parser.print_usage(sys.stderr)
    print(f"ireval-df validate: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Handle ``ireval-df validate``; returns the exit code (see the module)."""
    from ireval_df.cli.render import render_table
    from ireval_df.diagnostics.validation import validate
    from ireval_df.io import write_results

    if not args.run and args.qrels is None:
        return _usage(args, "give --run, --qrels or both.")
    if args.k < 1:
        return _usage(args, f"-k must be positive, found {args.k}.")
    if args.depth is not None and args.depth < 1:
        return _usage(args, f"--depth must be positive, found {args.depth}.")
    runs: Any = None
    if args.run:
        runs = args.run if len(args.run) > 1 else args.run[0]
    found: pl.DataFrame = validate(
        runs,
        args.qrels,
        args.queries,
        metrics=args.metric,
        k=args.k,
        depth=args.depth,
        rel=args.rel,
        intents=args.qrels_intents,
    )
    counts = {s: found.filter(pl.col("severity") == s).height for s in _SEVERITIES}
    if args.output:
        write_results(found, args.output)
        print(f"wrote {found.height} findings to {args.output}", file=sys.stderr)
    elif found.height:
        table = found.select(_TABLE)
        details = [
            f"{i}. [{row['severity']}] {row['check']}: {row['message']}\n"
            f"   fix: {row['fix']}"
            for i, row in enumerate(found.iter_rows(named=True), start=1)
        ]
        sys.stdout.write(render_table(table) + "\n\n" + "\n".join(details) + "\n")
    summary = ", ".join(
        f"{n} {s if n == 1 else _PLURALS[s]}" for s, n in counts.items()
    )
    if not found.height:
        summary = "no problems found"
    print(f"ireval-df validate: {summary}", file=sys.stderr)
    failing = counts["error"] + (counts["warning"] if args.strict else 0)
    return 1 if failing else 0


_SEVERITIES = ("error", "warning", "info")
_PLURALS = {"error": "errors", "warning": "warnings", "info": "info"}
