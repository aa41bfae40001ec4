"""failures() with document attributes against evaluate() on the same run.

``python bench/failures.py --data DIR`` reads ``DIR/run.parquet`` and
``DIR/qrels.parquet`` (a shape of ``bench/generate.py``, e.g. ``large``:
100,000 queries x 100 documents, about 5 graded judgments a query) and makes
from them, deterministically:

* a documents table: every document of the run and of the qrels, with a
  ``source_type`` (one of three) and a ``published_at`` (a day within ten
  years), both drawn from a hash of the id;
* a second stage, ``rerank``: the run's top ``--rerank-depth`` (default 20)
  of each query re-scored with a little noise, as a reranker would.

Then, interleaved for ``--rounds`` rounds in one process (order reversed
every other round, one untimed warm-up of each call first):

* ``evaluate, 5 metrics``: ``ie.evaluate(run, qrels, [nDCG@10, AP, RR@10,
  R@100, P@10])``;
* ``failures, docs``: ``ie.failures(run, qrels, docs=docs)``: every kind but
  dropped and intents, with calibration and freshness pairs;
* ``failures, docs + stages``: ``ie.failures`` of both runs with
  ``stages=["bm25", "rerank"]``, against ``evaluate`` of both.

It prints the medians and the ratios failures / evaluate. Nothing here
asserts a time.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import warnings
from pathlib import Path

import polars as pl

import ireval_df as ie

FIVE = ["nDCG@10", "AP", "RR@10", "R@100", "P@10"]
SOURCES = ["web", "news", "forum"]
DAYS = 3650


def inputs(
    data: Path, depth: int, seed: int
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The run (as bm25), the qrels, both stages stacked, and a documents table."""
    run = ie.read_run(data / "run.parquet").with_columns(run_id=pl.lit("bm25"))
    qrels = ie.read_qrels(data / "qrels.parquet")
    order = pl.col("score").rank("ordinal", descending=True).over("query_id")
    noise = pl.col("doc_id").hash(seed) % 1000 / 1000.0
    rerank = run.filter(order <= depth).with_columns(
        run_id=pl.lit("rerank"), score=pl.col("score") + noise
    )
    ids = pl.concat([run.select("doc_id"), qrels.select("doc_id")]).unique()
    hashed = pl.col("doc_id").hash(seed + 1)
    docs = ids.with_columns(
        source_type=pl.lit(pl.Series(SOURCES)).get(hashed % len(SOURCES)),
        published_at=pl.date(2015, 1, 1) + pl.duration(days=hashed % DAYS),
    )
    return run, qrels, pl.concat([run, rerank.select(run.columns)]), docs


def timed(call) -> float:  # type: ignore[no-untyped-def]
    gc.collect()
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="a bench/generate.py shape folder"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rerank-depth", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    run, qrels, both, docs = inputs(args.data, args.rerank_depth, args.seed)
    print(
        f"{args.data.name}: {run['query_id'].n_unique():,} queries, {run.height:,} "
        f"run rows, {qrels.height:,} judgments, {docs.height:,} documents; rerank "
        f"stage: top {args.rerank_depth} ({both.height - run.height:,} rows)\n"
    )
    stages = ["bm25", "rerank"]
    calls = {
        "evaluate, 5 metrics": lambda: ie.evaluate(run, qrels, FIVE),
        "failures, docs": lambda: ie.failures(run, qrels, docs=docs),
        "evaluate, 5 metrics, both stages": lambda: ie.evaluate(both, qrels, FIVE),
        "failures, docs + stages": lambda: ie.failures(
            both, qrels, docs=docs, stages=stages
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in calls}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in calls.values():  # warm-up, untimed
            call()
        for i in range(args.rounds):
            order = list(calls) if i % 2 == 0 else list(reversed(calls))
            for name in order:
                times[name].append(timed(calls[name]))
    median = {name: statistics.median(values) for name, values in times.items()}
    print("| call | median (s) | rounds (s) |")
    print("|---|---:|---|")
    for name, values in times.items():
        rounds = ", ".join(f"{v:.2f}" for v in values)
        print(f"| {name} | {median[name]:.2f} | {rounds} |")
    one = median["failures, docs"] / median["evaluate, 5 metrics"]
    two = median["failures, docs + stages"] / median["evaluate, 5 metrics, both stages"]
    print(
        f"\nfailures(docs) / evaluate(5 metrics): **{one:.2f}x**; with two stages: "
        f"**{two:.2f}x** (medians of {args.rounds} interleaved rounds)"
    )


if __name__ == "__main__":
    main()
