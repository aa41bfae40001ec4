"""``ireval-df compare``: evaluate runs and compare them, from the command line.

Talks to the outside world only (argv, files, stdout/stderr); the numbers
come from :func:`ireval_df.evaluate` and :func:`ireval_df.compare`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

from ireval_df.cli.args import add_data_arguments

__all__ = ["register"]

_FALLBACK_METRICS = ("nDCG@10", "AP", "RR@10")
_FORMATS = ("markdown", "latex", "html", "tsv", "csv")


def register(subparsers: Any) -> None:
    """Add the ``compare`` subcommand to an ``argparse`` subparsers object."""
    from ireval_df.stats.comparison import TESTS

    parser = subparsers.add_parser(
        "compare",
        help="compare runs query by query: deltas, tests, corrections",
        description=(
            "Evaluate runs against qrels and compare them with paired tests, one row "
            "per (run, baseline, slice, metric). Files are read by extension: TREC "
            "text (.run, .txt, .qrels, also .gz), .parquet, .csv, .tsv, .jsonl."
        ),
    )
    add_data_arguments(
        parser,
        run_help="run file(s); at least two runs in all",
        metric_help="metric (repeatable; default: as evaluate); see 'ireval-df metrics'",
        by_help="compare within each value of this query attribute "
        "(repeatable; needs --queries)",
    )
    parser.add_argument(
        "--baseline",
        action="append",
        metavar="RUN_ID",
        help="run id to compare against (repeatable); default: all pairs",
    )
    parser.add_argument(
        "--test", choices=TESTS, default="t", help="paired test (default: t)"
    )
    parser.add_argument(
        "--correction",
        choices=("holm", "bonferroni", "bh", "by", "none"),
        default="holm",
        help="multiple-testing correction over all comparisons (default: holm)",
    )
    parser.add_argument(
        "--ci",
        choices=("t", "bootstrap"),
        default=None,
        help="interval of the mean difference "
        "(default: bootstrap for --test bootstrap, else t)",
    )
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="significance level (default: 0.05)"
    )
    parser.add_argument(
        "--n-resamples",
        type=int,
        default=10_000,
        metavar="N",
        help="resamples of the randomization and bootstrap (default: 10000)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="resampling seed (default: 0)"
    )
    parser.add_argument(
        "--missing",
        choices=("zero", "skip", "error"),
        default="zero",
        help="qrels queries a run did not answer (default: zero)",
    )
    parser.add_argument(
        "--digits", type=int, default=3, help="decimals in tables (default: 3)"
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the long result (.parquet, .csv, .tsv, .jsonl) instead of a table",
    )
    out.add_argument(
        "--format",
        choices=_FORMATS,
        default="markdown",
        help="what to print on stdout: a table (markdown, latex, html) or the long "
        "result (tsv, csv); default: markdown",
    )
    parser.set_defaults(handler=run, _compare_parser=parser)


def _usage(args: argparse.Namespace, message: str) -> int:
    parser = getattr(args, "_compare_parser", None)
    if parser is not None:
        parser.print_usage(sys.stderr)
    print(f"ireval-df compare: error: {message}", file=sys.stderr)
    return 2


def _default_metrics() -> list[str]:
    try:
        from ireval_df.cli.args import DEFAULT_METRICS
    except ImportError:  # pragma: no cover - the lead's CLI always has it
        return list(_FALLBACK_METRICS)
    return list(DEFAULT_METRICS)


def run(args: argparse.Namespace) -> int:
    """Handle ``ireval-df compare``: 0 done, 2 bad usage; data errors raise."""
    import ireval_df as ie
    from ireval_df.report import render

    by = list(args.by or [])
    if by and args.queries is None:
        return _usage(
            args, "--by needs --queries FILE (the table holding the slice columns)."
        )
    if not 0.0 < args.alpha < 1.0:
        return _usage(args, f"--alpha must be between 0 and 1, found {args.alpha}.")
    if args.n_resamples < 1:
        return _usage(
            args, f"--n-resamples must be positive, found {args.n_resamples}."
        )
    if args.digits < 0:
        return _usage(args, f"--digits must be >= 0, found {args.digits}.")
    metrics = args.metric or _default_metrics()
    runs = args.run if len(args.run) > 1 else args.run[0]
    per_query = ie.evaluate(
        runs, args.qrels, metrics, queries=args.queries, missing=args.missing
    )
    found = per_query["run_id"].unique(maintain_order=True).to_list()
    if len(found) < 2:
        return _usage(args, f"compare needs at least two runs; found {found!r}.")
    unknown = [b for b in args.baseline or [] if b not in found]
    if unknown:
        return _usage(
            args,
            f"--baseline {unknown[0]!r} is not a run id; the runs are {found!r} "
            "(TREC run tags, else file names).",
        )
    absent = [c for c in by if c not in per_query.columns]
    if absent:
        columns = [
            c
            for c in per_query.columns
            if c not in ("run_id", "query_id", "metric", "value")
        ]
        return _usage(
            args, f"--by {absent[0]!r} is not a column of --queries; found {columns!r}."
        )
    baseline = (
        args.baseline[0] if args.baseline and len(args.baseline) == 1 else args.baseline
    )
    result = ie.compare(
        per_query,
        baseline=baseline,
        test=args.test,
        correction=args.correction,
        by=by or None,
        alpha=args.alpha,
        n_resamples=args.n_resamples,
        seed=args.seed,
        ci=args.ci,
    )
    if args.output:
        ie.write_results(result, args.output)
        print(f"wrote {result.height} rows to {args.output}", file=sys.stderr)
        return 0
    if args.format in ("tsv", "csv"):
        sys.stdout.write(
            result.write_csv(separator="\t" if args.format == "tsv" else ",")
        )
        return 0
    sys.stdout.write(render(result, args.format, digits=args.digits))
    return 0
