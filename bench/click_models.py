"""Click models: PBM and DBN fits against a group_by pass, and against PyClick.

``python bench/click_models.py --data DIR`` generates (once, into ``DIR``) a
click log of ``--searches`` searches (default 1,000,000) x ``--depth``
results (default 10): 100,000 queries of Zipf-like popularity, each with a
pool of 30 documents shown in one of 1,000 random orders (so documents move
between positions), clicked by a DBN user (attractiveness and satisfaction
uniform per pair, gamma = 0.9). Ids are numeric strings, as in real logs.

Then, interleaved for ``--rounds`` rounds in one process (the order
rotating each round, one untimed warm-up of each call first):

* ``group_by``: ``frame.group_by("query_id", "doc_id").agg(clicked mean,
  len)``, one pass over the same frame;
* ``fit_click_model(frame, "PBM" | "DBN", iterations=1 | 50)``.

It prints the medians, one iteration's marginal cost ((50 iterations - 1
iteration) / 49), the ratios to the group_by pass, and, with
``--peer-python`` (an interpreter that runs PyClick) and ``--pyclick-path``
(the checkout holding its ``pyclick`` package; GPL, run apart, never
imported here), PyClick's ``train`` on the first ``--peer-sample`` (default
1%) of the searches with ``--peer-iterations`` EM iterations (PBM 50, DBN 5
by default: each PyClick iteration is the same full pass, so its time scales
linearly), scaled to the whole log and to 50 iterations, saying so. Nothing
here asserts a time; tests/test_bench_click_models.py runs it on a small log.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

from ireval_df.online import fit_click_model

N_QUERIES = 100_000
POOL = 30
N_ORDERS = 1_000
GAMMA = 0.9
CHUNK = 100_000


def generate(n_searches: int, depth: int, seed: int = 7) -> pl.DataFrame:
    """The click log: ``search_id`` (Int64), ``query_id``, ``position``, ``doc_id``, ``clicked``."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, N_QUERIES + 1) ** 0.8
    weights /= weights.sum()
    alpha = rng.uniform(0.05, 0.8, (N_QUERIES, POOL))
    sigma = rng.uniform(0.2, 0.9, (N_QUERIES, POOL))
    orders = np.argsort(rng.random((N_ORDERS, POOL)), axis=1)[:, :depth]
    parts = []
    for start in range(0, n_searches, CHUNK):
        n = min(CHUNK, n_searches - start)
        query = rng.choice(N_QUERIES, size=n, p=weights)
        shown = orders[rng.integers(0, N_ORDERS, n)]
        a = alpha[query[:, None], shown]
        s = sigma[query[:, None], shown]
        clicks = np.zeros((n, depth), dtype=bool)
        examining = np.ones(n, dtype=bool)
        for r in range(depth):
            clicks[:, r] = examining & (rng.random(n) < a[:, r])
            satisfied = clicks[:, r] & (rng.random(n) < s[:, r])
            examining &= ~satisfied & (rng.random(n) < GAMMA)
        parts.append(
            pl.DataFrame(
                {
                    "search_id": np.repeat(np.arange(start, start + n), depth),
                    "query_id": np.repeat(query, depth),
                    "position": np.tile(np.arange(1, depth + 1), n),
                    "doc_id": (query[:, None] * POOL + shown).ravel(),
                    "clicked": clicks.ravel(),
                }
            )
        )
    return pl.concat(parts).with_columns(pl.col("query_id", "doc_id").cast(pl.String))


def load(data: Path, n_searches: int, depth: int) -> pl.DataFrame:
    path = data / f"clicklog-{n_searches}x{depth}.parquet"
    if not path.exists():
        data.mkdir(parents=True, exist_ok=True)
        print(f"generating {path} ...", flush=True)
        generate(n_searches, depth).write_parquet(path)
    return pl.read_parquet(path)


def timed(call) -> float:  # type: ignore[no-untyped-def]
    gc.collect()
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


#: Run by --peer-python with PYTHONPATH = --pyclick-path: PyClick's train()
PEER = """
import json, sys, time
from pyclick.click_models.PBM import PBM
from pyclick.click_models.DBN import DBN
from pyclick.click_models.Inference import EMInference
from pyclick.search_session.SearchSession import SearchSession
from pyclick.search_session.SearchResult import SearchResult
job = json.load(open(sys.argv[1]))
sessions = []
for query, results in job["sessions"]:
    s = SearchSession(query)
    s.web_results = [SearchResult(d, c) for d, c in results]
    sessions.append(s)
out = {}
for name, iterations in job["runs"]:
    model = {"PBM": PBM, "DBN": DBN}[name]()
    model._inference = EMInference(iterations)
    start = time.perf_counter()
    model.train(sessions)
    out[name] = time.perf_counter() - start
print(json.dumps(out))
"""


def pyclick(
    frame: pl.DataFrame,
    share: float,
    runs: list[tuple[str, int]],
    python: str,
    path: str,
) -> tuple[dict[str, float], int]:
    """Seconds of PyClick's train() per model on the first ``share`` of the searches."""
    n = max(1, round(frame["search_id"].n_unique() * share))
    sample = frame.filter(pl.col("search_id") < n).sort("search_id", "position")
    grouped = sample.group_by("search_id", maintain_order=True).agg(
        pl.col("query_id").first(), "doc_id", "clicked"
    )
    sessions = [
        [q, [[d, int(c)] for d, c in zip(docs, clicks, strict=True)]]
        for _, q, docs, clicks in grouped.iter_rows()
    ]
    with tempfile.TemporaryDirectory() as folder:
        job = Path(folder) / "job.json"
        job.write_text(json.dumps({"sessions": sessions, "runs": runs}))
        done = subprocess.run(
            [python, "-c", PEER, str(job)],
            capture_output=True,
            text=True,
            check=True,
            env=dict(os.environ, PYTHONPATH=path),
        )
    seconds: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return seconds, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="where the log lives")
    parser.add_argument("--searches", type=int, default=1_000_000)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--peer-python", help="an interpreter that runs PyClick")
    parser.add_argument("--pyclick-path", help="the checkout holding pyclick/")
    parser.add_argument("--peer-sample", type=float, default=0.01)
    parser.add_argument(
        "--peer-iterations",
        default="PBM=50,DBN=5",
        help="PyClick's EM iterations per model, scaled to --iterations",
    )
    args = parser.parse_args()
    frame = load(args.data, args.searches, args.depth)
    n_searches = frame["search_id"].n_unique()
    print(
        f"click log: {n_searches:,} searches x {args.depth} results = "
        f"{frame.height:,} rows, {frame.select('query_id', 'doc_id').n_unique():,} "
        f"(query, document) pairs, {frame['clicked'].mean():.1%} clicked\n"
    )
    many = args.iterations

    def fit(model: str, iterations: int) -> None:
        fit_click_model(frame, model, iterations=iterations, min_impressions=0)

    calls = {
        "group_by (query_id, doc_id)": lambda: frame.group_by("query_id", "doc_id").agg(
            pl.col("clicked").mean(), pl.len()
        ),
        "PBM, 1 iteration": lambda: fit("PBM", 1),
        f"PBM, {many} iterations": lambda: fit("PBM", many),
        "DBN, 1 iteration": lambda: fit("DBN", 1),
        f"DBN, {many} iterations": lambda: fit("DBN", many),
    }
    times: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in calls.values():  # warm-up, untimed
            call()
        for i in range(args.rounds):
            for name in names[i % len(names) :] + names[: i % len(names)]:
                times[name].append(timed(calls[name]))
    median = {name: statistics.median(values) for name, values in times.items()}
    print("| call | median (s) | rounds (s) |")
    print("|---|---:|---|")
    for name, values in times.items():
        rounds = ", ".join(f"{v:.2f}" for v in values)
        print(f"| {name} | {median[name]:.3f} | {rounds} |")
    group_by = median["group_by (query_id, doc_id)"]
    print()
    for model in ("PBM", "DBN"):
        one, all_ = (
            median[f"{model}, 1 iteration"],
            median[f"{model}, {many} iterations"],
        )
        per = (all_ - one) / max(many - 1, 1)
        print(
            f"{model}: one iteration costs {per:.3f} s ({per / group_by:.2f}x the "
            f"group_by pass; (fit of {many} - fit of 1) / {many - 1}); a whole fit "
            f"with 1 iteration (coding the ids, checks, one iteration) "
            f"{one / group_by:.2f}x the group_by pass"
        )
    if not (args.peer_python and args.pyclick_path):
        print("\nNo --peer-python / --pyclick-path: no PyClick timing.")
        return
    peer_iterations = {
        name: int(n)
        for name, n in (part.split("=") for part in args.peer_iterations.split(","))
    }
    seconds, sampled = pyclick(
        frame,
        args.peer_sample,
        list(peer_iterations.items()),
        args.peer_python,
        args.pyclick_path,
    )
    print()
    for model, spent in seconds.items():
        iterations = peer_iterations[model]
        scaled = spent * (n_searches / sampled) * (many / iterations)
        ours = median[f"{model}, {many} iterations"]
        print(
            f"PyClick {model}: {spent:.1f} s for {iterations} iterations on the first "
            f"{sampled:,} searches ({args.peer_sample:.0%} of the log); scaled to all "
            f"{n_searches:,} searches and {many} iterations: {scaled:,.0f} s, "
            f"**{scaled / ours:,.0f}x** ireval_df's {ours:.2f} s (scaled from the "
            f"sample, not measured on the whole log)"
        )


if __name__ == "__main__":
    main()
