"""ireval_df.spark.online_metrics against local online.metrics on one machine.

``python bench/spark_online.py --data DIR`` takes a search log folder
written by ``bench/generate_log.py`` (``python bench/generate.py log-1m
DIR``: 1M searches, ~5M results, ~1M events) and, with every registered
online metric by ``query_class`` and ``device`` (the same call as
``bench/online.py``):

1. local: ``ie.online.metrics(ie.online.read_log(DIR), ...)`` in a fresh
   process, ``--rounds`` times; wall time and the process's peak RSS;
2. Spark, one ``local[2]`` session: the first ``online_metrics`` job of
   the session, then ``--rounds`` warm jobs; each job collects the result
   (a few hundred rows); the rows are checked equal to the local ones once;
3. growth: warm jobs on a half and a quarter of the users (a hash of
   ``user_id`` on every table, the results through their searches).

While a Spark job runs, ``bench/spark.py``'s sampler reads ``/proc`` every
0.1 s for the peak RSS of the JVM and the Python workers. Prints a markdown
table of medians; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from online import BY, metric_names  # noqa: E402 - bench/online.py, the same call
from spark import Sampler, session  # noqa: E402 - bench/spark.py, beside this file

TABLES = ("searches", "results", "events", "units")

LOCAL = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import ireval_df as ie
t = time.perf_counter()
log = ie.online.read_log(sys.argv[1])
out = ie.online.metrics(log, json.loads(sys.argv[2]), by=json.loads(sys.argv[3]))
print(time.perf_counter() - t, out.height)
"""


def local_round(data: Path) -> dict[str, float]:
    start = time.perf_counter()
    argv = [str(data), json.dumps(metric_names()), json.dumps(BY)]
    proc = subprocess.Popen(
        [sys.executable, "-c", LOCAL, *argv], stdout=subprocess.PIPE, text=True
    )
    _, status, usage = os.wait4(proc.pid, 0)
    assert status == 0
    assert proc.stdout is not None
    inner = float(proc.stdout.read().split()[0])
    return {
        "wall_s": time.perf_counter() - start,
        "metrics_s": inner,
        "peak_mib": usage.ru_maxrss / 1024,
    }


def spark_job(tables: dict[str, Any], partitions: int | None) -> dict[str, Any]:
    import ireval_df.spark as isp

    with Sampler() as sampler, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        rows = len(
            isp.online_metrics(
                tables, metric_names(), by=BY, partitions=partitions
            ).collect()
        )
        wall = time.perf_counter() - start
    return {"wall_s": wall, "rows": rows, **sampler.mib()}


def share(tables: dict[str, Any], quarters: int) -> dict[str, Any]:
    """The tables of the users whose hash falls in ``quarters`` of four."""
    from pyspark.sql import functions as F  # noqa: N812

    keep = F.pmod(F.xxhash64("user_id"), F.lit(4)) < quarters
    searches = tables["searches"].where(keep)
    out = {"searches": searches}
    ids = searches.select("search_id")
    out["results"] = tables["results"].join(ids, "search_id", "left_semi")
    out["events"] = tables["events"].where(keep)
    if "units" in tables:
        out["units"] = tables["units"].join(
            searches.select(F.col("user_id").alias("unit_id")).distinct(),
            "unit_id",
            "left_semi",
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=None)
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--shuffle-partitions", type=int, default=16)
    args = parser.parse_args(argv)

    results: dict[str, list[dict[str, Any]]] = {}

    def record(name: str, job: dict[str, Any]) -> None:
        results.setdefault(name, []).append(job)
        print(name, job, file=sys.stderr)

    for _ in range(args.rounds):
        record("local `online.metrics` (a fresh process)", local_round(args.data))

    start = time.perf_counter()
    spark = session(args.driver_memory, args.shuffle_partitions)
    started = time.perf_counter() - start
    tables = {
        t: spark.read.parquet(str(args.data / f"{t}.parquet"))
        for t in TABLES
        if (args.data / f"{t}.parquet").exists()
    }
    record("Spark, first job", spark_job(tables, args.partitions))
    for _ in range(args.rounds):
        record("Spark, warm", spark_job(tables, args.partitions))

    # equal to the local rows (once, untimed)
    import polars as pl

    import ireval_df as ie
    import ireval_df.spark as isp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = pl.from_arrow(isp.online_metrics(tables, metric_names(), by=BY).toArrow())
        want = ie.online.metrics(ie.online.read_log(args.data), metric_names(), by=BY)
    assert isinstance(got, pl.DataFrame)
    keys = [c for c in want.columns if c != "value"]
    same = got.select(keys).equals(want.select(keys))
    gap = (got["value"] - want["value"]).abs().max()
    print(f"equal keys: {same}, largest value difference: {gap}", file=sys.stderr)

    for quarters in (1, 2):
        part = share(tables, quarters)
        for _ in range(args.rounds):
            record(
                f"Spark, {quarters}/4 of the users", spark_job(part, args.partitions)
            )
    spark.stop()

    print(f"{args.data.name}: Spark session start {started:.1f} s; medians\n")
    print("| what | rounds | wall (s) | peak memory (MiB) |")
    print("|---|---|---|---|")
    for name, jobs in results.items():
        wall = statistics.median(j["wall_s"] for j in jobs)
        if "peak_mib" in jobs[0]:
            memory = f"{statistics.median(j['peak_mib'] for j in jobs):,.0f} (process)"
        else:
            memory = (
                f"JVM {statistics.median(j['jvm_mib'] for j in jobs):,.0f}, largest "
                f"worker {statistics.median(j['worker_mib'] for j in jobs):,.0f}, "
                f"workers {statistics.median(j['workers_mib'] for j in jobs):,.0f}"
            )
        print(f"| {name} | {len(jobs)} | {wall:.1f} | {memory} |")
    print(f"\nSpark rows equal to the local ones: keys {same}, values within {gap:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
