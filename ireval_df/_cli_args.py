"""Arguments every data subcommand of ``ireval-df`` shares, defined once."""

from __future__ import annotations

from typing import Any

__all__ = ["add_data_arguments"]


def add_data_arguments(
    parser: Any,
    *,
    required: bool = True,
    run_help: str = "run file(s); several runs may follow one --run",
    metric_help: str = "metric (repeatable); see 'ireval-df metrics'",
    by_help: str | None = "slice by this query attribute (repeatable; needs --queries)",
) -> None:
    """Add ``--run``, ``--qrels``, ``-m``, ``--queries`` (and ``--by``) to ``parser``.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> add_data_arguments(parser)
    >>> args = parser.parse_args(["--run", "a.run", "b.run", "--qrels", "q.txt", "-m", "AP"])
    >>> args.run, args.qrels, args.metric, args.by
    (['a.run', 'b.run'], 'q.txt', ['AP'], None)
    """
    parser.add_argument(
        "--run",
        action="extend",
        nargs="+",
        required=required,
        metavar="FILE",
        help=run_help,
    )
    parser.add_argument(
        "--qrels", required=required, metavar="FILE", help="relevance judgments"
    )
    parser.add_argument(
        "-m", "--metric", action="append", metavar="NAME", help=metric_help
    )
    parser.add_argument(
        "--queries", metavar="FILE", help="query attributes (query_id + columns)"
    )
    if by_help is not None:
        parser.add_argument("--by", action="append", metavar="COLUMN", help=by_help)
