"""ireval_df.spark.evaluate against local ie.evaluate on one machine: time and memory.

``python bench/spark.py --shape large --data DIR`` generates the shape's
Parquet files (``bench/generate.py``) into ``DIR`` when they are missing,
then, with five metrics (nDCG@10, AP, RR@10, P@10, R@100):

1. local: ``ie.evaluate(run.parquet, qrels.parquet)`` in a fresh process,
   ``--rounds`` times; wall time and the process's peak RSS (``wait4``);
2. Spark, one ``local[2]`` session (``--driver-memory``): the first job
   (Python workers start, polars is imported), then ``--rounds`` warm jobs
   with the default partitions; each job is ``spark.evaluate`` (which
   computes and caches the per-query rows) and a count; the per-query rows
   are checked equal to the local ones once;
3. growth: warm jobs on 1/4, 1/2 and all of the queries (a hash of the
   query id), and with ``--partitions`` groups of queries.

While a Spark job runs, a sampler reads ``/proc`` every 0.1 s: the peak RSS
of the JVM (driver and executor, one process in local mode), of the
largest Python worker, and of all Python workers together.

Prints a markdown table (medians over rounds) and, with ``--json``, writes
every measurement. Nothing here asserts a time. The machine may be shared:
compare only figures of one run of this script.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import polars as pl

HERE = Path(__file__).resolve().parent
METRICS = ["nDCG@10", "AP", "RR@10", "P@10", "R@100"]

LOCAL = """
import sys, time, warnings
import ireval_df as ie
warnings.simplefilter("ignore")
t = time.perf_counter()
out = ie.evaluate(sys.argv[1], sys.argv[2], sys.argv[3].split(","))
print(time.perf_counter() - t, out.height)
"""


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def _descendants(root: int) -> list[tuple[int, str]]:
    """Every process under ``root``, with its command line."""
    children: dict[int, list[int]] = {}
    commands: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as cmd:
                commands[int(entry)] = (
                    cmd.read().replace(b"\0", b" ").decode(errors="replace")
                )
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            out.append((child, commands.get(child, "")))
            todo.append(child)
    return out


class Sampler:
    """Peak RSS of the JVM and of the Python workers while a job runs."""

    def __init__(self) -> None:
        self.jvm = self.worker = self.workers = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            procs = _descendants(os.getpid())
            jvm = sum(_rss_kib(p) for p, c in procs if "java" in c.split(" ")[0])
            workers = [
                _rss_kib(p)
                for p, c in procs
                if "pyspark" in c and "java" not in c.split(" ")[0]
            ]
            self.jvm = max(self.jvm, jvm)
            self.worker = max(self.worker, max(workers, default=0))
            self.workers = max(self.workers, sum(workers))
            self._stop.wait(0.1)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def mib(self) -> dict[str, float]:
        return {
            "jvm_mib": self.jvm / 1024,
            "worker_mib": self.worker / 1024,
            "workers_mib": self.workers / 1024,
        }


def local_round(run: Path, qrels: Path) -> dict[str, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", LOCAL, str(run), str(qrels), ",".join(METRICS)],
        stdout=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    assert status == 0
    assert proc.stdout is not None
    inner = float(proc.stdout.read().split()[0])
    return {"wall_s": wall, "evaluate_s": inner, "peak_mib": usage.ru_maxrss / 1024}


def session(driver_memory: str, shuffle_partitions: int) -> Any:
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("ireval_df-bench")
        .config("spark.driver.memory", driver_memory)
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_job(
    spark: Any, run: Any, qrels: Any, partitions: int | None
) -> dict[str, Any]:
    import warnings

    import ireval_df.spark as isp

    with Sampler() as sampler, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        result = isp.evaluate(run, qrels, METRICS, partitions=partitions)
        rows = result.count()
        wall = time.perf_counter() - start
    spark.catalog.clearCache()
    return {"wall_s": wall, "rows": rows, "partitions": partitions, **sampler.mib()}


def check_equal(
    spark: Any,
    run: Any,
    qrels: Any,
    run_path: Path,
    qrels_path: Path,
    results: dict[str, Any],
) -> None:
    """Record whether Spark's per-query rows equal the local ones (untimed)."""
    import warnings

    import ireval_df as ie
    import ireval_df.spark as isp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = pl.from_arrow(isp.evaluate(run, qrels, METRICS).toArrow())
        want = ie.evaluate(str(run_path), str(qrels_path), METRICS)
    assert isinstance(got, pl.DataFrame)
    same_keys = got.select("run_id", "query_id", "metric").equals(
        want.select("run_id", "query_id", "metric")
    )
    diff = (got["value"] - want["value"]).abs().max()
    results["equal"] = {"keys": same_keys, "max_abs_diff": diff}
    print("equal", results["equal"], file=sys.stderr)
    spark.catalog.clearCache()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="large")
    parser.add_argument("--data", type=Path, default=Path("bench-data"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--partitions", type=int, nargs="*", default=[4, 16, 64])
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument(
        "--shuffle-partitions",
        type=int,
        default=16,
        help="spark.sql.shuffle.partitions: the default partitions of the jobs",
    )
    parser.add_argument(
        "--eighths",
        type=int,
        nargs="*",
        default=[1, 2, 4, 8],
        help="growth: jobs on these eighths of the queries (by a hash)",
    )
    parser.add_argument("--no-local", action="store_true", help="skip the local rounds")
    parser.add_argument(
        "--no-check", action="store_true", help="skip the equality check against local"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    folder = args.data / args.shape
    run_path, qrels_path = folder / "run.parquet", folder / "qrels.parquet"
    if not run_path.exists():
        subprocess.run(
            [sys.executable, str(HERE / "generate.py"), args.shape, str(folder)],
            check=True,
        )
    rows = pl.scan_parquet(run_path).select(pl.len()).collect().item()
    results: dict[str, Any] = {
        "shape": args.shape,
        "run_rows": rows,
        "local": [],
        "spark": {},
    }
    print(f"{args.shape}: {rows:,} run rows", file=sys.stderr)

    if not args.no_local:
        for _ in range(args.rounds):
            results["local"].append(local_round(run_path, qrels_path))
            print("local", results["local"][-1], file=sys.stderr)

    from pyspark.sql import functions as F  # noqa: N812

    start = time.perf_counter()
    spark = session(args.driver_memory, args.shuffle_partitions)
    results["session_s"] = time.perf_counter() - start
    run = spark.read.parquet(str(run_path))
    qrels = spark.read.parquet(str(qrels_path))

    def record(name: str, job: dict[str, Any]) -> None:
        results["spark"].setdefault(name, []).append(job)
        print(name, job, file=sys.stderr)

    record("first", spark_job(spark, run, qrels, None))
    for _ in range(args.rounds):
        record("warm", spark_job(spark, run, qrels, None))

    # equal to the local rows (once, untimed)
    if not args.no_check:
        check_equal(spark, run, qrels, run_path, qrels_path, results)

    # growth with rows: whole queries by a hash, 1/8 to all of them, each
    # share --rounds times, its run rows counted once (untimed)
    for eighths in args.eighths:
        share = F.pmod(F.xxhash64("query_id"), F.lit(8)) < eighths
        part, part_qrels = run.where(share), qrels.where(share)
        n_rows = part.count()
        for _ in range(args.rounds):
            job = spark_job(spark, part, part_qrels, None)
            record(f"queries {eighths}/8", {**job, "run_rows": n_rows})
    for n in args.partitions:
        record(f"partitions {n}", spark_job(spark, run, qrels, n))
    spark.stop()

    results["peak_driver_python_mib"] = (
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    print(markdown(results))
    return 0


def markdown(results: dict[str, Any]) -> str:
    def med(rows: list[dict[str, Any]], key: str) -> float:
        return statistics.median(r[key] for r in rows)

    lines = [
        f"{results['shape']}: {results['run_rows']:,} run rows; medians; Spark session start "
        f"{results['session_s']:.1f} s",
        "",
        "| what | rounds | wall (s) | peak memory (MiB) |",
        "|---|---|---|---|",
    ]
    if results["local"]:
        local = results["local"]
        lines.append(
            f"| local `ie.evaluate` (process) | {len(local)} | {med(local, 'wall_s'):.1f} "
            f"| {med(local, 'peak_mib'):.0f} (process) |"
        )
    for name, jobs in results["spark"].items():
        lines.append(
            f"| Spark {name} | {len(jobs)} | {med(jobs, 'wall_s'):.1f} | JVM "
            f"{med(jobs, 'jvm_mib'):.0f}, largest worker {med(jobs, 'worker_mib'):.0f}, "
            f"workers {med(jobs, 'workers_mib'):.0f} |"
        )
    fit = growth_fit(results)
    if fit:
        lines += ["", fit]
    return "\n".join(lines)


def growth_fit(results: dict[str, Any]) -> str:
    """The least-squares line ``time = a + b * rows`` through the growth jobs.

    Every job of the query shares is a point; with the median of each share,
    the worst relative distance of a median from the line says how straight
    the growth is.
    """
    points = [
        (job["run_rows"], job["wall_s"])
        for name, jobs in results["spark"].items()
        if name.startswith("queries ")
        for job in jobs
    ]
    if len({rows for rows, _ in points}) < 3:
        return ""
    n = len(points)
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / sxx
    fixed = mean_y - slope * mean_x
    medians = {
        x: statistics.median(y for x2, y in points if x2 == x) for x, _ in points
    }
    worst = max(abs(y - (fixed + slope * x)) / y for x, y in medians.items())
    return (
        f"Growth with rows ({n} jobs, {len(medians)} shares of the queries): "
        f"time = {fixed:.1f} s + {slope * 1e6:.2f} s per million run rows; "
        f"the medians are within {worst:.0%} of that line."
    )


if __name__ == "__main__":
    raise SystemExit(main())
