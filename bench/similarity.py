"""RBO between two runs against evaluate() on the same runs, and against PyPI ``rbo``.

``python bench/similarity.py --data DIR`` reads ``DIR/run.parquet`` and
``DIR/qrels.parquet`` (a shape of ``bench/generate.py``, e.g. msmarco-dev:
6,980 queries x 1,000 documents) and makes a second run from it, as a
migrated engine would: every score moved by a little noise and rounded to 2
decimals, so that the two rankings share most documents, differ in order
and hold many ties. Then, interleaved for ``--rounds`` rounds, in one
process:

* ``similarity``: ``ie.similarity(both, ["RBO@1000"])`` (p = 0.9, ext,
  ties a: Corsi & Urbano's expected RBO over the ties);
* ``evaluate``: ``ie.evaluate(both, qrels, five metrics)`` on the same
  stacked frame (nDCG@10, AP, RR@10, R@100, P@10);

and once, PyPI ``rbo`` (``RankingSimilarity(a, b).rbo_ext(p=0.9)``, no tie
support, the common choice) looped over ``--sample`` queries, scaled to all
queries (said so in the output). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import polars as pl

import ireval_df as ie

FIVE = ["nDCG@10", "AP", "RR@10", "R@100", "P@10"]


def runs_of(data: Path, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The shape's run as "old" and a noisy, tie-rich copy of it as "new"."""
    old = ie.read_run(data / "run.parquet").with_columns(run_id=pl.lit("old"))
    noise = pl.Series(
        "noise",
        pl.select(pl.int_range(0, old.height).shuffle(seed=seed)).to_series()
        / old.height,
    )
    new = old.with_columns(
        run_id=pl.lit("new"),
        score=((pl.col("score") + (noise - 0.5) * 0.1) * 100).round() / 100,
    )
    return pl.concat([old.select(new.columns), new]), ie.read_qrels(
        data / "qrels.parquet"
    )


def timed(call) -> float:  # type: ignore[no-untyped-def]
    gc.collect()
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


#: Run by --peer-python: PyPI rbo's rbo_ext over the sampled rankings
PEER = """
import json, sys, time
from rbo import RankingSimilarity
pairs = json.load(open(sys.argv[1]))
start = time.perf_counter()
for new, old in pairs:
    RankingSimilarity(new, old).rbo_ext(p=0.9)
print(json.dumps((time.perf_counter() - start) / len(pairs)))
"""


def pypi_rbo(both: pl.DataFrame, sample: int, python: str) -> tuple[float, int, int]:
    """Seconds per query of PyPI rbo's rbo_ext over ``sample`` queries.

    PyPI rbo pins an old numpy, so it runs in its own interpreter
    (``--peer-python``), on the same rankings written to a JSON file.
    """
    ranked = both.sort(
        ["run_id", "query_id", "score", "doc_id"], descending=[False, False, True, True]
    )
    queries = ranked["query_id"].unique(maintain_order=True).head(sample).to_list()
    lists = (
        ranked.filter(pl.col("query_id").is_in(queries))
        .group_by("run_id", "query_id", maintain_order=True)
        .agg("doc_id")
    )
    by = {(r, q): docs for r, q, docs in lists.iter_rows()}
    pairs = [[by[("new", q)], by[("old", q)]] for q in queries]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pairs.json"
        path.write_text(json.dumps(pairs))
        done = subprocess.run(
            [python, "-c", PEER, str(path)], capture_output=True, text=True, check=True
        )
    per_query = float(json.loads(done.stdout.strip().splitlines()[-1]))
    return per_query, len(queries), both["query_id"].n_unique()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="a bench/generate.py shape folder"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sample", type=int, default=200, help="queries for PyPI rbo")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--peer-python",
        help="an interpreter with PyPI rbo installed (it pins numpy < 2)",
    )
    args = parser.parse_args()
    both, qrels = runs_of(args.data, args.seed)
    n_queries = both["query_id"].n_unique()
    tied = (
        both.filter(pl.col("run_id") == "new")
        .select((pl.col("score").is_duplicated().over("query_id")).mean())
        .item()
    )
    print(
        f"{args.data.name}: 2 runs x {n_queries:,} queries, {both.height:,} rows; "
        f"{tied:.0%} of the new run's rows tie with another\n"
    )
    calls = {
        "similarity RBO@1000": lambda: ie.similarity(both, ["RBO@1000"]),
        "evaluate, 5 metrics": lambda: ie.evaluate(both, qrels, FIVE),
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
    rbo_s = statistics.median(times["similarity RBO@1000"])
    eval_s = statistics.median(times["evaluate, 5 metrics"])
    print("| call | median (s) | rounds (s) |")
    print("|---|---:|---|")
    for name, values in times.items():
        print(
            f"| {name} | {statistics.median(values):.2f} | {', '.join(f'{v:.2f}' for v in values)} |"
        )
    per_round = [
        a / b
        for a, b in zip(
            times["similarity RBO@1000"], times["evaluate, 5 metrics"], strict=True
        )
    ]
    print(
        f"\nRBO@1000 / evaluate(5 metrics): **{rbo_s / eval_s:.2f}x** (medians of "
        f"{args.rounds} interleaved rounds; per round {min(per_round):.2f}x to "
        f"{max(per_round):.2f}x, median {statistics.median(per_round):.2f}x)"
    )
    if args.peer_python is None:
        print("\nNo --peer-python (an interpreter with PyPI rbo): no peer timing.")
        return
    per_query, sampled, total = pypi_rbo(both, args.sample, args.peer_python)
    print(
        f"\nPyPI rbo (rbo_ext, p = 0.9, no tie support), looped over {sampled} queries: "
        f"{per_query * 1000:.1f} ms a query, so {per_query * total:.1f} s for all {total:,} "
        f"(scaled from the sample): **{per_query * total / rbo_s:.1f}x** ireval_df's RBO@1000."
    )


if __name__ == "__main__":
    main()
