"""``ireval-df trec_eval -m all_trec`` against pytrec_eval-terrier, from the same files.

``python bench/trec_eval_speed.py [--shape msmarco-dev] [--rounds 5]``
generates the shape's TREC run and qrels (``bench/generate.py``; 6,980
queries x 1,000 documents for ``msmarco-dev``) into a temporary directory,
then, ``--rounds`` times and interleaved (the order alternates), runs each in
a fresh process:

* ``ireval-df``: ``python -m ireval_df trec_eval -m all_trec QRELS RUN`` (the
  whole command: start-up, reading, every all_trec measure, the output);
* ``pytrec_eval``: ``parse_qrel`` and ``parse_run`` on the same files, a
  ``RelevanceEvaluator`` over all its ``supported_measures`` (trec_eval 9.x's
  all_trec: all_trec less rbp, rbp_resid and unj), ``evaluate`` and the mean
  of every measure.

It prints, per tool, the median and best wall-clock seconds and the median
CPU seconds (user + system, all threads), and checks that the two agree on
``map`` and ``P_10`` (measures both versions compute the same way). The
machine's other load counts: compare the two in the same run only.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from generate import generate  # noqa: E402

PYTREC = """
import sys, pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
evaluator = pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures)
per_query = evaluator.evaluate(run)
names = sorted(next(iter(per_query.values())))
for name in names:
    values = [q[name] for q in per_query.values()]
    print(name, pytrec_eval.compute_aggregated_measure(name, values))
"""


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run ``argv``; return wall seconds, CPU seconds of the child, stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def _ours(stdout: str) -> dict[str, float]:
    values = {}
    for line in stdout.splitlines():
        name, qid, value = line.split("\t")
        if qid == "all" and name.strip() != "runid":
            values[name.strip()] = float(value)
    return values


def _theirs(stdout: str) -> dict[str, float]:
    return {
        name: float(value)
        for name, value in (line.split() for line in stdout.splitlines())
    }


def main(argv: list[str] | None = None) -> int:
    """Generate the data, time both tools, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="msmarco-dev")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPO), env.get("PYTHONPATH")])
    )
    tools = {
        "ireval-df trec_eval": [
            sys.executable,
            "-m",
            "ireval_df",
            "trec_eval",
            "-m",
            "all_trec",
        ],
        "pytrec_eval": [sys.executable, "-c", PYTREC],
    }
    with tempfile.TemporaryDirectory() as tmp:
        info = generate(args.shape, tmp)
        qrels, run = str(Path(tmp) / "qrels.trec"), str(Path(tmp) / "run.trec")
        print(
            f"shape {info['shape']}: {info['queries']} queries, {info['run_rows']} run rows, "
            f"{info['qrels_rows']} qrels rows; {os.cpu_count()} CPUs"
        )
        walls: dict[str, list[float]] = {name: [] for name in tools}
        cpus: dict[str, list[float]] = {name: [] for name in tools}
        outputs: dict[str, str] = {}
        for i in range(args.rounds):
            order = list(tools) if i % 2 == 0 else list(reversed(tools))
            for name in order:
                wall, cpu, out = _timed([*tools[name], qrels, run], env)
                walls[name].append(wall)
                cpus[name].append(cpu)
                outputs[name] = out
    ours, theirs = (
        _ours(outputs["ireval-df trec_eval"]),
        _theirs(outputs["pytrec_eval"]),
    )
    for measure in ("map", "P_10"):
        agree = abs(ours[measure] - theirs[measure]) < 5e-5
        print(
            f"{measure}: ireval-df {ours[measure]:.4f}, pytrec_eval {theirs[measure]:.4f}"
            f" ({'agree' if agree else 'DIFFER'})"
        )
    print(
        f"\n| tool | wall median (s) | wall best (s) | CPU median (s) |  ({args.rounds} rounds)"
    )
    print("|---|---|---|---|")
    for name in tools:
        print(
            f"| {name} | {statistics.median(walls[name]):.2f} | {min(walls[name]):.2f} | "
            f"{statistics.median(cpus[name]):.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
