"""``ireval-df metrics``: every measure, its aliases and trec_eval name."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.cli.render import render_table

if TYPE_CHECKING:
    import argparse

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``metrics`` subcommand to an argparse subparsers object."""
    mt = sub.add_parser(
        "metrics", help="list every metric, its aliases and trec_eval name"
    )
    mt.add_argument("-v", "--verbose", action="store_true", help="all columns")
    mt.add_argument(
        "--markdown", action="store_true", help="the reference page docs/metrics.md"
    )
    mt.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run ``ireval-df metrics``; returns the exit code."""
    import ireval_df as ie

    out = sys.stdout
    if args.markdown:
        from ireval_df.measures.docs import metrics_markdown

        out.write(metrics_markdown())
        return 0
    table = ie.list_metrics().select(
        "metric", "family", "aliases", "trec_eval", "cutoff", "aggregate", "description"
    )
    if args.verbose:
        out.write(render_table(ie.list_metrics()) + "\n")
    else:
        out.write(
            render_table(table.with_columns(pl.col("description").str.slice(0, 70)))
            + "\n"
        )
    return 0
