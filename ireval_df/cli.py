"""``ireval-df``: the command line, over the public API only.

Data goes to stdout or ``-o``, messages to stderr. Exit 0 on success, 1 for
bad data (the same messages as the API), 2 for bad usage. No traceback
unless ``--debug``.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
import warnings
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._cli_args import add_data_arguments
from ireval_df._signals import Terminated, terminate_as_interrupt
from ireval_df.errors import IrevalError, IrevalWarning, OptionError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["DEFAULT_METRICS", "main", "render_table"]

#: What ``ireval-df evaluate`` computes when no ``-m`` is given.
DEFAULT_METRICS = ("nDCG@10", "AP", "RR@10", "P@10", "R@100")

#: Modules that add a subcommand through ``register(subparsers)``.
_PLUGINS = (
    "ireval_df.compare._cli",
    "ireval_df.trec_eval._cli",
    "ireval_df.validate._cli",
)


def render_table(frame: pl.DataFrame, *, digits: int = 4) -> str:
    """Format a frame as an aligned plain-text table, floats rounded.

    Examples
    --------
    >>> print(render_table(pl.DataFrame({"run_id": ["bm25"], "AP": [0.123456]})))
    run_id  AP
    bm25    0.1235
    """
    columns = frame.columns
    cells = [[str(c) for c in columns]]
    for row in frame.iter_rows():
        cells.append(
            [
                ""
                if v is None
                else f"{v:.{digits}f}"
                if isinstance(v, float)
                else str(v)
                for v in row
            ]
        )
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    numeric = [frame.schema[c].is_numeric() for c in columns]
    lines = []
    for row_cells in cells:
        parts = [
            cell.rjust(width)
            if num and i > 0 and row_cells is not cells[0]
            else cell.ljust(width)
            for i, (cell, width, num) in enumerate(
                zip(row_cells, widths, numeric, strict=True)
            )
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _wide(summary: pl.DataFrame, index: list[str]) -> pl.DataFrame:
    order = summary["metric"].unique(maintain_order=True).to_list()
    wide = summary.pivot(on="metric", index=index, values="value")
    return wide.select(*index, *order)


def _evaluate(args: argparse.Namespace) -> int:
    import ireval_df as ie

    out = sys.stdout

    by = args.by or []
    if by and args.queries is None:
        msg = "--by needs --queries FILE (the table holding the slice columns)."
        raise OptionError(msg)
    metrics = args.metric or list(DEFAULT_METRICS)
    runs = args.run if len(args.run) > 1 else args.run[0]
    per_query = ie.evaluate(
        runs,
        args.qrels,
        metrics,
        queries=args.queries,
        missing=args.missing,
        depth=args.depth,
        duplicates=args.duplicates,
        rank_from=args.rank_from,
        buckets=args.buckets,
        warn_unjudged=args.warn_unjudged,
        compat=args.compat,
    )
    # the printed table shows no interval: skip the bootstrap unless writing one
    ci: Literal["auto", "bootstrap", "t"] = args.ci if args.output else "t"
    result = per_query if args.per_query else ie.summarize(per_query, by=by, ci=ci)
    if args.output:
        ie.write_results(result, args.output)
        print(f"wrote {result.height} rows to {args.output}", file=sys.stderr)
        return 0
    if args.per_query:
        table = _wide(
            per_query.select("run_id", "query_id", "metric", "value"),
            ["run_id", "query_id"],
        )
    else:
        table = _wide(result, ["run_id", *by])
        counts = result.select("run_id", *by, "n_queries").unique(maintain_order=True)
        table = table.join(
            counts, on=["run_id", *by], how="left", maintain_order="left"
        )
    out.write(render_table(table) + "\n")
    return 0


def _metrics(args: argparse.Namespace) -> int:
    import ireval_df as ie

    out = sys.stdout
    if args.markdown:
        from ireval_df.metrics._docs import metrics_markdown

        out.write(metrics_markdown())
        return 0
    table = ie.list_metrics().select(
        "metric", "aliases", "trec_eval", "cutoff", "aggregate", "description"
    )
    if args.verbose:
        out.write(render_table(ie.list_metrics()) + "\n")
    else:
        out.write(
            render_table(table.with_columns(pl.col("description").str.slice(0, 70)))
            + "\n"
        )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Build the ``ireval-df`` argument parser, plug-in subcommands included."""
    parser = argparse.ArgumentParser(
        prog="ireval-df",
        description="trec_eval-exact evaluation of search runs, as dataframes.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks on errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    ev = sub.add_parser(
        "evaluate",
        help="score runs against qrels and print (or write) the means",
        description="Score runs against qrels. Files are read by extension: TREC text "
        "(.run, .txt, .qrels, also .gz), .parquet, .csv, .tsv, .jsonl.",
    )
    add_data_arguments(
        ev,
        metric_help=f"metric (repeatable; default {' '.join(DEFAULT_METRICS)}); "
        "see 'ireval-df metrics'",
    )
    ev.add_argument(
        "--per-query", action="store_true", help="one row per query, not means"
    )
    ev.add_argument(
        "--missing",
        choices=("zero", "skip", "error"),
        help="qrels queries a run did not answer (default: zero; skip with --compat 9)",
    )
    ev.add_argument(
        "--depth", type=int, metavar="N", help="keep the top N of each ranking"
    )
    ev.add_argument(
        "--duplicates",
        choices=("error", "first", "max"),
        default="error",
        help="a document twice in one ranking (default: error)",
    )
    ev.add_argument(
        "--rank-from",
        choices=("score", "column"),
        default="score",
        help="rank by score, ties by doc_id as trec_eval (default), or by the "
        "run's rank column",
    )
    ev.add_argument(
        "--buckets",
        type=_buckets,
        metavar="N|auto",
        default="auto",
        help="evaluate the queries in N groups, one after the other, to bound "
        "memory (each group reads the files again); auto (default): as many as "
        "keep the estimated peak within a sixth of the machine's memory",
    )
    ev.add_argument(
        "--compat",
        choices=("10", "9"),
        default="10",
        help="9: compute as trec_eval 9.x, which pytrec_eval embeds (float32 "
        "scores, 9.x's IPrec rounding, unanswered queries skipped), to reproduce "
        "pytrec_eval-based numbers (default: 10)",
    )
    ev.add_argument(
        "--warn-unjudged",
        type=_share,
        metavar="SHARE|never",
        default=0.5,
        help="warn when more than this share of the top 10 is unjudged on average "
        "(default: 0.5); never: do not warn (sparse qrels such as BEIR)",
    )
    ev.add_argument(
        "--ci",
        choices=("auto", "t", "bootstrap"),
        default="auto",
        help="interval of the means written with -o: t, percentile bootstrap, or "
        "auto (default): t for slices of at least 1000 queries, bootstrap below",
    )
    ev.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the result (.parquet, .csv, .tsv, .jsonl) instead of a table",
    )
    ev.set_defaults(handler=_evaluate)

    mt = sub.add_parser(
        "metrics", help="list every metric, its aliases and trec_eval name"
    )
    mt.add_argument("-v", "--verbose", action="store_true", help="all columns")
    mt.add_argument(
        "--markdown", action="store_true", help="the reference page docs/metrics.md"
    )
    mt.set_defaults(handler=_metrics)

    for name in _PLUGINS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and name.startswith(exc.name):
                continue
            raise
        module.register(sub)
    return parser


def _number_or(
    word: str,
    meaning: Any,
    convert: Callable[[str], float],
    valid: Callable[[float], bool],
    expected: str,
) -> Callable[[str], Any]:
    """Make an argparse type: ``word`` (standing for ``meaning``) or a valid number."""

    def parse(text: str) -> Any:
        if text == word:
            return meaning
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not valid(value):
            msg = f"expected {expected} or {word!r}, found {text!r}"
            raise argparse.ArgumentTypeError(msg)
        return value

    return parse


#: ``--buckets``: ``auto`` or a positive whole number.
_buckets = _number_or("auto", "auto", int, lambda n: n >= 1, "a positive whole number")
#: ``--warn-unjudged``: a share from 0 to 1, or ``never`` (None: do not warn).
_share = _number_or("never", None, float, lambda x: 0 <= x <= 1, "a share from 0 to 1")


def _show_warning(message: Any, category: Any, *_: Any, **__: Any) -> None:
    label = "warning" if issubclass(category, IrevalWarning) else category.__name__
    print(f"ireval-df: {label}: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    warnings.showwarning = _show_warning
    try:
        with terminate_as_interrupt():
            return int(args.handler(args))
    except IrevalError as exc:
        if args.debug:
            raise
        print(f"ireval-df: error: {exc}", file=sys.stderr)
        # a metric name or option value is bad usage, like argparse's own errors
        return 2 if isinstance(exc, OptionError) else 1
    except Terminated:
        print("ireval-df: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print("ireval-df: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
