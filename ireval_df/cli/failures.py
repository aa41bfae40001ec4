"""``ireval-df failures``: why relevant documents miss the top k; the slices to work on.

Talks to the outside world only (argv, files, stdout/stderr); the counts
come from :func:`ireval_df.failures`, the headroom from
:func:`ireval_df.headroom` over :func:`ireval_df.evaluate`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from ireval_df.cli.args import add_data_arguments
from ireval_df.cli.render import render_table

if TYPE_CHECKING:
    import argparse

    import polars as pl

__all__ = ["register", "run"]

#: Columns of the printed summary, each shown unless it is null throughout
_SUMMARY = (
    "n_queries",
    "n_relevant",
    "n_top_k",
    "candidate_rate",
    "scoring_rate",
    "dropped_rate",
    "inverted_rate",
    "calibration_rate",
    "freshness_rate",
    "intent_failure_rate",
)
#: Columns of the printed per-query rows, the same way
_PER_QUERY = (
    "n_relevant",
    "n_top_k",
    "n_candidate",
    "n_scoring",
    "n_dropped",
    "n_inverted_pairs",
    "n_calibration_pairs",
    "n_freshness_pairs",
    "intent_failure",
    "failure",
)


def register(sub: Any) -> None:
    """Add the ``failures`` subcommand to an argparse subparsers object."""
    parser = sub.add_parser(
        "failures",
        help="why relevant documents miss the top k, per run and slice; headroom",
        description="Count, per run (and --by slice), the relevant documents lost "
        "because no stage retrieved them (candidate), the ranker put them below k "
        "(scoring) or a later stage of a pipeline dropped them (--stages), the "
        "judged pairs of the top k in the wrong order (with --docs: across source "
        "types, or an older document above a newer one) and intent failures (qrels "
        "with an intent column). With --headroom, print instead how much each "
        "slice would lift the mean of each -m metric if it closed its gap.",
    )
    add_data_arguments(
        parser,
        metric_help="with --headroom: metric (repeatable; default nDCG@K)",
        by_help="slice by this query attribute (needs --queries) or document "
        "attribute (needs --docs); repeatable",
    )
    parser.add_argument(
        "-k", type=int, default=10, metavar="K", help="the cutoff (default: 10)"
    )
    parser.add_argument(
        "--rel", type=int, default=1, metavar="N", help="lowest relevant grade"
    )
    parser.add_argument(
        "--docs",
        metavar="FILE",
        help="document attributes (doc_id, source_type, published_at, ...)",
    )
    parser.add_argument(
        "--stages",
        nargs="+",
        metavar="RUN_ID",
        help="the run ids of one pipeline's stages, earliest first, e.g. bm25 rerank",
    )
    parser.add_argument(
        "--stage-depth",
        type=int,
        metavar="N",
        help="how deep each earlier stage's ranking is handed on (default: all)",
    )
    parser.add_argument(
        "--intents",
        metavar="FILE",
        help="intent weights (query_id, intent, weight) for qrels with intents",
    )
    parser.add_argument(
        "--duplicates",
        choices=("error", "first", "max"),
        default="error",
        help="a document twice in one ranking (default: error)",
    )
    parser.add_argument(
        "--per-query", action="store_true", help="one row per run and query"
    )
    parser.add_argument(
        "--headroom",
        action="store_true",
        help="print each --by slice's share, mean, gap and gain for the -m metrics",
    )
    parser.add_argument(
        "--against",
        default="best",
        metavar="best|perfect|RUN_ID",
        help="with --headroom: the reference (default: best, the best run on "
        "each slice)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the result (.parquet, .csv, .tsv, .jsonl) instead of a table",
    )
    parser.set_defaults(handler=run, _failures_parser=parser)


def _usage(args: argparse.Namespace, message: str) -> int:
    parser = getattr(args, "_failures_parser", None)
    if parser is not None:
        parser.print_usage(sys.stderr)
    print(f"ireval-df failures: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Handle ``ireval-df failures``: 0 done, 2 bad usage; data errors raise."""
    import ireval_df as ie

    by = list(args.by or [])
    runs = args.run if len(args.run) > 1 else args.run[0]
    if args.headroom:
        unused = [
            flag
            for flag, value in (
                ("--docs", args.docs),
                ("--stages", args.stages),
                ("--stage-depth", args.stage_depth),
                ("--intents", args.intents),
                ("--per-query", args.per_query or None),
            )
            if value is not None
        ]
        if unused:
            return _usage(
                args,
                f"--headroom slices the -m metrics by query attributes; it takes "
                f"no {', '.join(unused)}.",
            )
        if by and args.queries is None:
            return _usage(args, "--by needs --queries FILE with --headroom.")
        per_query = ie.evaluate(
            runs, args.qrels, args.metric or [f"nDCG@{args.k}"], queries=args.queries
        )
        result = ie.headroom(per_query, by=by, against=args.against)
        shown = result
    elif args.metric or args.against != "best":
        return _usage(args, "-m and --against go with --headroom.")
    elif args.per_query and by:
        return _usage(
            args, "--per-query shows every query, --by sums per slice: choose one."
        )
    else:
        result = ie.failures(
            runs,
            args.qrels,
            k=args.k,
            rel=args.rel,
            queries=args.queries,
            by=None if args.per_query else by,
            docs=args.docs,
            stages=args.stages,
            stage_depth=args.stage_depth,
            intents=args.intents,
            duplicates=args.duplicates,
        )
        keys = ["run_id", "query_id"] if args.per_query else ["run_id", *by]
        columns = _PER_QUERY if args.per_query else _SUMMARY
        shown = _shown(result, keys, columns, stages=args.stages is not None)
    if args.output:
        ie.write_results(result, args.output)
        print(f"wrote {result.height} rows to {args.output}", file=sys.stderr)
        return 0
    sys.stdout.write(render_table(shown) + "\n")
    return 0


def _shown(
    frame: pl.DataFrame, keys: list[str], columns: tuple[str, ...], *, stages: bool
) -> pl.DataFrame:
    """Select the keys and the ``columns`` that were asked for.

    A column null throughout was not (no --docs, no intents), nor are the
    dropped counts without --stages.
    """
    kept = [
        c
        for c in columns
        if frame[c].null_count() < frame.height
        and (stages or c not in ("n_dropped", "dropped_rate"))
    ]
    return frame.select(*keys, *kept)
