"""``ireval-df evaluate``: score runs against qrels, print or write the means."""

from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING, Any, Literal

from ireval_df.cli.args import (
    DEFAULT_METRICS,
    add_data_arguments,
    add_qrels_intents,
    buckets,
    share,
    slices_of,
)
from ireval_df.cli.render import render_table, wide
from ireval_df.errors import OptionError
from ireval_df.offline.conventions import UNJUDGED_AT, UNJUDGED_WARN

if TYPE_CHECKING:
    import argparse

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add the ``evaluate`` subcommand to an argparse subparsers object."""
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
    add_qrels_intents(ev)
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
        type=buckets,
        metavar="N|auto",
        default="auto",
        help="evaluate the queries in N groups, one after the other, to bound "
        "memory (each group reads the files again); auto (default): as many as "
        "keep the estimated peak within a sixth of the machine's memory",
    )
    ev.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="local (default): this process; spark: the runs and qrels are read "
        "and evaluated by Spark (any Spark-readable path: s3a://, hdfs://, a "
        "Parquet or Delta folder ...), with the active Spark configuration; the "
        "per-query rows come back here for the means",
    )
    ev.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="with --engine spark: groups of queries, one Python call each "
        "(default: spark.sql.shuffle.partitions)",
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
        type=share,
        metavar="SHARE|never",
        default=UNJUDGED_WARN,
        help=f"warn when more than this share of the top {UNJUDGED_AT} is unjudged "
        f"on average (default: {UNJUDGED_WARN}); never: do not warn (sparse qrels "
        "such as BEIR)",
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
    ev.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run ``ireval-df evaluate``; returns the exit code."""
    import ireval_df as ie

    out = sys.stdout

    by = slices_of(args)
    metrics = args.metric or list(DEFAULT_METRICS)
    _refuse_preference_measures(metrics)
    options: dict[str, Any] = {
        "queries": args.queries,
        "missing": args.missing,
        "depth": args.depth,
        "duplicates": args.duplicates,
        "rank_from": args.rank_from,
        "warn_unjudged": args.warn_unjudged,
        "compat": args.compat,
    }
    if args.engine == "spark":
        per_query = _on_spark(args, metrics, options)
    else:
        if args.partitions is not None:
            msg = "--partitions is an option of --engine spark; use --buckets locally."
            raise OptionError(msg)
        runs = args.run if len(args.run) > 1 else args.run[0]
        qrels = (
            ie.read_qrels(args.qrels, intents=True)
            if args.qrels_intents
            else args.qrels
        )
        per_query = ie.evaluate(runs, qrels, metrics, buckets=args.buckets, **options)
    # the printed table shows no interval: skip the bootstrap unless writing one
    ci: Literal["auto", "bootstrap", "t"] = args.ci if args.output else "t"
    result = per_query if args.per_query else ie.summarize(per_query, by=by, ci=ci)
    if args.output:
        ie.write_results(result, args.output)
        print(f"wrote {result.height} rows to {args.output}", file=sys.stderr)
        return 0
    if args.per_query:
        table = wide(
            per_query.select("run_id", "query_id", "metric", "value"),
            ["run_id", "query_id"],
        )
    else:
        table = wide(result, ["run_id", *by])
        counts = result.select("run_id", *by, "n_queries").unique(maintain_order=True)
        table = table.join(
            counts, on=["run_id", *by], how="left", maintain_order="left"
        )
    out.write(render_table(table) + "\n")
    return 0


def _refuse_preference_measures(metrics: list[str]) -> None:
    """Point a preference measure to the command that scores it."""
    from ireval_df.measures import parse_metrics
    from ireval_df.offline.evaluation import refuse_preference_measures

    refuse_preference_measures(
        parse_metrics(metrics),
        hint="ireval-df trec_eval -q -m all_prefs -R prefs PREFS_FILE RUN_FILE "
        "(or -R qrels_prefs QRELS_FILE RUN_FILE to read qrels as preferences); "
        "in Python, ie.evaluate_prefs().",
    )


def _on_spark(
    args: argparse.Namespace, metrics: list[str], options: dict[str, Any]
) -> Any:
    """Evaluate on Spark (``--engine spark``); the per-query rows, collected here."""
    from ireval_df.spark import evaluate
    from ireval_df.spark.jobs import to_polars
    from ireval_df.spark.sources import read_qrels, read_run, session, stack_runs

    with warnings.catch_warnings():
        # pyspark's notice about pandas 3: ireval_df exchanges Arrow, not pandas
        warnings.filterwarnings(
            "ignore", "PySpark does not yet fully support pandas", FutureWarning
        )
        spark = session()
        run = stack_runs([read_run(spark, path) for path in args.run])
        qrels = read_qrels(spark, args.qrels, intents=args.qrels_intents)
        result = evaluate(run, qrels, metrics, partitions=args.partitions, **options)
        return to_polars(result)
