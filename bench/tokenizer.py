"""The C tokenizer against polars alone, reading TREC runs, in one run.

``python bench/tokenizer.py DATA --shapes msmarco-dev large --rounds 5``
reads ``DATA/SHAPE/run.trec`` (``bench/generate.py SHAPE DATA/SHAPE``
writes it) in fresh processes, alternately with the C tokenizer and without
it (``ireval_df.io.tokenize._ctrec`` set to None, as installed without a C
compiler: then polars' CSV reader reads these single-space files), the order
rotating each round. Each process imports ireval_df, then times one
``read_trec_run(path, rank=False)`` (what ``evaluate()`` reads) and reads its
peak RSS (``read_peak_mib``), drops the frame and times the ``trec_eval``
run reader (``ireval_df.trec_eval._reader.read_run`` on the mapped file);
the parent records each process's wall time and peak RSS (``peak_rss_mib``).
It prints, per shape and path, the medians and the ratio polars / C.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

PATHS = ("c", "polars")


def high_water_mib() -> float:
    """This process's peak RSS so far (``VmHWM``), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def child(path: str, which: str) -> None:
    start = time.perf_counter()
    from ireval_df.io import tokenize
    from ireval_df.io.trec import read_trec_run
    from ireval_df.trec_eval import _reader

    if which == "polars":
        tokenize._ctrec = None
    imported = time.perf_counter()
    import_peak = high_water_mib()
    frame = read_trec_run(path, rank=False)
    read = time.perf_counter()
    read_peak = high_water_mib()
    del frame
    raw = _reader.read_source(path)
    run, _ = _reader.read_run(raw, "utf-8", path)
    trec_eval = time.perf_counter()
    assert run.height > 0
    print(
        json.dumps(
            {
                "import_s": imported - start,
                "read_s": read - imported,
                "trec_eval_read_s": trec_eval - read,
                "import_peak_mib": import_peak,
                "read_peak_mib": read_peak,
            }
        )
    )


def measure(path: Path, which: str) -> dict[str, float]:
    """Run one child and read its peak RSS with wait4."""
    before = time.perf_counter()
    child_proc = subprocess.Popen(
        [sys.executable, __file__, "--child", which, str(path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    stdout = child_proc.stdout.read() if child_proc.stdout else ""
    _, status, usage = os.wait4(child_proc.pid, 0)
    wall = time.perf_counter() - before
    child_proc.returncode = os.waitstatus_to_exitcode(status)
    if child_proc.returncode:
        raise SystemExit(f"child failed ({which}, {path})")
    out: dict[str, float] = json.loads(stdout.strip().splitlines()[-1])
    out["wall_s"] = wall
    out["peak_rss_mib"] = usage.ru_maxrss / 1024  # KiB on Linux
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", type=Path)
    parser.add_argument("--shapes", nargs="+", default=["msmarco-dev", "large"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", choices=PATHS)
    args = parser.parse_args(argv)
    if args.child:
        child(str(args.data), args.child)
        return 0
    if args.data is None:
        parser.error("DATA is required")
    results: dict[str, dict[str, list[dict[str, float]]]] = {}
    for r in range(args.rounds):
        for shape in args.shapes:
            order = PATHS if r % 2 == 0 else PATHS[::-1]
            for which in order:
                run = args.data / shape / "run.trec"
                got = measure(run, which)
                results.setdefault(shape, {}).setdefault(which, []).append(got)
                print(f"round {r + 1} {shape} {which}: {got}", file=sys.stderr)
    keys = ("read_s", "trec_eval_read_s", "wall_s", "read_peak_mib", "peak_rss_mib")
    print(f"| shape | path | {' | '.join(keys)} |")
    print("|---|---|" + "---:|" * len(keys))
    for shape, by_path in results.items():
        medians = {
            which: {k: statistics.median(m[k] for m in runs) for k in keys}
            for which, runs in by_path.items()
        }
        for which in PATHS:
            cells = " | ".join(f"{medians[which][k]:.3f}" for k in keys)
            print(f"| {shape} | {which} | {cells} |")
        ratio = " | ".join(
            f"{medians['polars'][k] / medians['c'][k]:.2f}x" for k in keys
        )
        print(f"| {shape} | polars / C | {ratio} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
