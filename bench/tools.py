"""Run one evaluation tool on one run/qrels pair, in its own process.

``python bench/tools.py TOOL RUN QRELS [--per-query OUT.json]`` loads the
files the way a user of ``TOOL`` would, computes the five benchmark measures
(nDCG@10, AP, RR@10, R@100, P@10) and prints one JSON line:
``{"tool", "import_s", "load_s", "eval_s", "means", "n_queries", "note"}``.
The harness (``bench/harness.py``) times the whole process from outside and
reads its peak RSS; ``load_s``/``eval_s`` split the work inside it. With
``--per-query`` the per-query values are also written (stdlib ``json``, after
everything is timed) for the agreement check.

RUN may also be a folder of TREC runs (a track, such as the 17 runs of the
TREC 2003 Robust track): every tool then scores all of them against QRELS
in one process, reading the qrels once, as a user scoring a track's
submissions would; per-query values are keyed ``run/query``, the run named
after its file (``input.uic0301.gz`` -> ``uic0301``), and the means are
those of the first run.

Tools: ``ireval_df`` (TREC text or Parquet), ``ireval_df-polars`` (the same
with its C tokenizer turned off, as installed without a C compiler),
``pytrec_eval``
(pytrec_eval-terrier), ``ir_measures``, ``ranx``. Each library is imported
only by its own function, so a process carries only the tool it measures.

Two more modes serve the harness:

``inproc RUN.parquet QRELS.parquet --rounds N``
    in one process, alternately: ``ireval_df.evaluate()`` straight from the
    Parquet paths, and the floor (read both Parquet files with polars and
    left-join the run on the qrels); medians.
``stacked RUN.parquet QRELS.parquet --runs 20 --rounds N``
    ``evaluate()`` of one run, and of ``--runs`` perturbed copies stacked in
    one frame (told apart by ``run_id``); medians.
``imports --rounds N``
    ``import ireval_df`` in fresh interpreters: median seconds, and whether
    pandas or scipy got imported.
``text-read RUN.trec QRELS.trec``, ``text-floor RUN.trec QRELS.trec``
    what any polars-based tool must do from TREC text at least, timed like a
    tool: import polars and parse the four columns of the run the measures
    need (single-space files, as ``bench/generate.py`` writes them; no
    checks) and the qrels; ``text-floor`` also left-joins the run on the
    qrels (the in-process floor's work, from text). No measures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import warnings
from functools import partial
from pathlib import Path
from typing import Any

#: The benchmark measures, in each tool's spelling.
MEASURES = ("nDCG@10", "AP", "RR@10", "R@100", "P@10")
PYTREC = {"nDCG@10": "ndcg_cut_10", "AP": "map", "R@100": "recall_100", "P@10": "P_10"}
RANX = {
    "nDCG@10": "ndcg@10",
    "AP": "map",
    "RR@10": "mrr@10",
    "R@100": "recall@100",
    "P@10": "precision@10",
}

PerQuery = dict[str, dict[str, float]]  # measure -> query_id -> value


def track(path: str) -> list[Path]:
    """The run files of a track folder, sorted; ``[path]`` for one file."""
    folder = Path(path)
    if not folder.is_dir():
        return [folder]
    return sorted(p for p in folder.iterdir() if p.is_file())


def run_name(path: Path) -> str:
    """A track run's name: its file name without ``input.`` and extensions."""
    name = path.name.removeprefix("input.")
    for suffix in (".gz", ".txt", ".run", ".trec"):
        name = name.removesuffix(suffix)
    return name


def _key(path: Path, qid: str, many: bool) -> str:
    return f"{run_name(path)}/{qid}" if many else qid


def _text(path: Path) -> Any:
    """Open a run for a peer that reads text: gzip is decompressed on the fly."""
    import gzip

    if path.suffix == ".gz":
        return gzip.open(path, "rt")
    return open(path)  # noqa: SIM115 - closed by the caller's with


def _clock() -> float:
    return time.perf_counter()


def run_ireval_df(
    run_path: str,
    qrels_path: str,
    *,
    per_query: bool = False,
    buckets: int | str = "auto",
    native: bool = True,
) -> tuple[dict[str, Any], PerQuery]:
    t0 = _clock()
    import ireval_df as ie

    if not native:  # as installed without a C compiler: polars reads the text
        from ireval_df.io import tokenize

        tokenize._ctrec = None
    t1 = _clock()
    # evaluate() is given the paths and reads the files itself (as the CLI
    # does): it reads only the columns it needs, so the load time is 0 here
    files = track(run_path)
    many = len(files) > 1
    run: Any = [str(f) for f in files] if many else run_path
    qrels = qrels_path
    t2 = _clock()
    with warnings.catch_warnings():
        # msmarco judges only positives: evaluate() warns about unjudged documents
        warnings.simplefilter("ignore")
        result = ie.evaluate(run, qrels, list(MEASURES), buckets=buckets)
    means = ie.summarize(result, ci="t")
    t3 = _clock()
    first = means["run_id"][0]
    values = {
        row[0]: row[1]
        for row in means.filter(run_id=first).select("metric", "value").iter_rows()
    }
    grouped: PerQuery = {m: {} for m in MEASURES}
    if per_query:
        for run_id, qid, metric, value in result.select(
            "run_id", "query_id", "metric", "value"
        ).iter_rows():
            grouped[metric][f"{run_id}/{qid}" if many else qid] = value
    n = int(means["n_queries"].max())
    note = "" if buckets in ("auto", 1) else f"{buckets} buckets"
    name = "ireval_df" if native else "ireval_df-polars"
    return _report(name, t0, t1, t2, t3, values, n, note), grouped


def run_pytrec_eval(
    run_path: str, qrels_path: str, *, per_query: bool = False
) -> tuple[dict[str, Any], PerQuery]:
    t0 = _clock()
    import pytrec_eval

    t1 = _clock()
    with open(qrels_path) as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    files = track(run_path)
    many = len(files) > 1
    runs = []
    for path in files:
        with _text(path) as fh:
            runs.append(pytrec_eval.parse_run(fh))
    t2 = _clock()
    names = {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.10"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, names)
    per_query: PerQuery = {m: {} for m in MEASURES}
    first: PerQuery = {m: {} for m in MEASURES}
    for path, run in zip(files, runs, strict=True):
        results = evaluator.evaluate(run)
        for qid, row in results.items():
            key = _key(path, qid, many)
            for ours, theirs in PYTREC.items():
                per_query[ours][key] = row[theirs]
            # trec_eval has no cut-off RR; RR@10 = RR when the first relevant
            # document is in the top 10, i.e. when RR >= 1/10, else 0 (exact).
            rr = row["recip_rank"] if row["recip_rank"] >= 0.1 else 0.0
            per_query["RR@10"][key] = rr
            if path == files[0]:
                for ours in MEASURES:
                    first[ours][qid] = per_query[ours][key]
    means = {m: statistics.fmean(v.values()) for m, v in first.items()}
    t3 = _clock()
    results = first["AP"]
    note = "RR@10 from recip_rank (kept when >= 0.1)"
    return _report("pytrec_eval", t0, t1, t2, t3, means, len(results), note), per_query


def run_ir_measures(
    run_path: str, qrels_path: str, *, per_query: bool = False
) -> tuple[dict[str, Any], PerQuery]:
    t0 = _clock()
    import ir_measures
    from ir_measures import AP, RR, P, R, nDCG

    t1 = _clock()
    qrels = list(ir_measures.read_trec_qrels(qrels_path))
    files = track(run_path)
    many = len(files) > 1
    runs = []
    for path in files:
        with _text(path) as fh:
            runs.append(list(ir_measures.read_trec_run(fh)))
    t2 = _clock()
    measures = [nDCG @ 10, AP, RR @ 10, R @ 100, P @ 10]
    names = dict(zip(measures, MEASURES, strict=True))
    per_query: PerQuery = {m: {} for m in MEASURES}
    first: PerQuery = {m: {} for m in MEASURES}
    for path, run in zip(files, runs, strict=True):
        for metric in ir_measures.iter_calc(measures, qrels, run):
            key = _key(path, metric.query_id, many)
            per_query[names[metric.measure]][key] = metric.value
            if path == files[0]:
                first[names[metric.measure]][metric.query_id] = metric.value
    means = {m: statistics.fmean(v.values()) for m, v in first.items()}
    t3 = _clock()
    n = len(first["AP"])
    return _report("ir_measures", t0, t1, t2, t3, means, n), per_query


def run_ranx(
    run_path: str, qrels_path: str, *, per_query: bool = False
) -> tuple[dict[str, Any], PerQuery]:
    t0 = _clock()
    from ranx import Qrels, Run, evaluate

    t1 = _clock()
    qrels = Qrels.from_file(qrels_path, kind="trec")
    files = track(run_path)  # ranx reads plain text: the harness unpacks .gz
    many = len(files) > 1
    runs = [Run.from_file(str(path), kind="trec") for path in files]
    t2 = _clock()
    grouped: PerQuery = {ours: {} for ours in RANX}
    values: dict[str, float] = {}
    for path, run in zip(files, runs, strict=True):
        means = evaluate(qrels, run, list(RANX.values()), make_comparable=True)
        if path == files[0]:
            values = {ours: float(means[theirs]) for ours, theirs in RANX.items()}  # type: ignore[index]
        if per_query:
            for ours, theirs in RANX.items():
                for qid, v in run.scores[theirs].items():
                    grouped[ours][_key(path, qid, many)] = float(v)
    t3 = _clock()
    n = len(runs[0].scores["map"])
    note = "ties broken by input order"
    return _report("ranx", t0, t1, t2, t3, values, n, note), grouped


def run_text_read(
    run_path: str, qrels_path: str, *, per_query: bool = False, join: bool = False
) -> tuple[dict[str, Any], PerQuery]:
    t0 = _clock()
    import polars as pl

    t1 = _clock()
    text = {"separator": " ", "has_header": False, "quote_char": None}
    fields = ("query_id", "iter", "doc_id", "rank", "score", "run_id")
    types = {"score": pl.Float64, "relevance": pl.Int64}
    run = (
        pl.scan_csv(
            run_path, schema={f: types.get(f, pl.String) for f in fields}, **text
        )
        .select("query_id", "doc_id", "score", "run_id")
        .collect()
    )
    fields = ("query_id", "iter", "doc_id", "relevance")
    qrels = pl.read_csv(
        qrels_path, schema={f: types.get(f, pl.String) for f in fields}, **text
    )
    t2 = _clock()
    if join:
        run = run.join(qrels, on=["query_id", "doc_id"], how="left")
    t3 = _clock()
    # no more work on the run than the floor's: the judged queries, counted
    # on the (small) qrels, are what the tools report too
    n = qrels["query_id"].n_unique()
    name = "text-floor" if join else "text-read"
    note = "read + left join, no measures" if join else "read only, no measures"
    return _report(name, t0, t1, t2, t3, {}, n, note), {}


TOOLS = {
    "ireval_df": run_ireval_df,
    "ireval_df-polars": partial(run_ireval_df, native=False),
    "pytrec_eval": run_pytrec_eval,
    "ir_measures": run_ir_measures,
    "ranx": run_ranx,
    "text-read": run_text_read,
    "text-floor": partial(run_text_read, join=True),
}


def _report(
    tool: str,
    t0: float,
    t1: float,
    t2: float,
    t3: float,
    means: dict[str, float],
    n_queries: int,
    note: str = "",
) -> dict[str, Any]:
    return {
        "tool": tool,
        "import_s": t1 - t0,
        "load_s": t2 - t1,
        "eval_s": t3 - t2,
        "means": {m: means[m] for m in MEASURES if m in means},
        "n_queries": n_queries,
        "note": note,
    }


# --- harness helpers run in their own process --------------------------------


def inproc(run_path: str, qrels_path: str, rounds: int) -> dict[str, Any]:
    """Median ``evaluate()`` from Parquet vs the floor, interleaved in one process."""
    import polars as pl

    import ireval_df as ie

    def floor() -> None:
        run = pl.read_parquet(run_path)
        qrels = pl.read_parquet(qrels_path)
        run.join(qrels, on=["query_id", "doc_id"], how="left")

    def evaluate() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ie.evaluate(run_path, qrels_path, list(MEASURES))

    times: dict[str, list[float]] = {"floor": [], "evaluate": []}
    floor()  # warm the page cache and the thread pool
    evaluate()
    for i in range(rounds):
        order = [("floor", floor), ("evaluate", evaluate)]
        for name, fn in order if i % 2 == 0 else order[::-1]:
            start = _clock()
            fn()
            times[name].append(_clock() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def stacked(
    run_path: str, qrels_path: str, runs: int, rounds: int, queries: int | None = None
) -> dict[str, Any]:
    """Median ``evaluate()`` of one run and of ``runs`` copies stacked in one frame.

    The copies' scores get Gaussian noise (sd 0.5, rounded to 3 decimals);
    ``queries`` keeps only the first (smallest-id) queries.
    """
    import numpy as np
    import polars as pl

    import ireval_df as ie

    one = pl.read_parquet(run_path).with_columns(run_id=pl.lit("r00"))
    qrels = pl.read_parquet(qrels_path)
    if queries is not None:
        kept = one.select(pl.col("query_id").unique().sort().head(queries))
        one = one.join(kept, on="query_id", how="semi")
        qrels = qrels.join(kept, on="query_id", how="semi")
    rng = np.random.default_rng(7)
    copies = [one]
    for i in range(1, runs):
        noise = np.round(rng.normal(0.0, 0.5, one.height), 3)
        copies.append(
            one.with_columns(
                run_id=pl.lit(f"r{i:02d}"), score=(pl.col("score") + noise).round(3)
            )
        )
    many = pl.concat(copies)
    del copies

    def evaluate(frame: pl.DataFrame) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ie.evaluate(frame, qrels, list(MEASURES))

    times: dict[str, list[float]] = {"one": [], "stacked": []}
    evaluate(one)
    for _ in range(rounds):
        for name, frame in (("one", one), ("stacked", many)):
            start = _clock()
            evaluate(frame)
            times[name].append(_clock() - start)
    result = {name: statistics.median(values) for name, values in times.items()}
    result.update(
        runs=runs,
        queries=one["query_id"].n_unique(),
        rows_one=one.height,
        rows_stacked=many.height,
    )
    return result


def imports(rounds: int) -> dict[str, Any]:
    """``import ireval_df`` in fresh interpreters."""
    code = (
        "import sys, time; t = time.perf_counter(); import ireval_df; "
        "d = time.perf_counter() - t; import json; "
        "print(json.dumps([d, 'pandas' in sys.modules, 'scipy' in sys.modules]))"
    )
    results = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", code], check=True, capture_output=True, text=True
            ).stdout
        )
        for _ in range(rounds)
    ]
    return {
        "import_s": statistics.median(r[0] for r in results),
        "pandas": any(r[1] for r in results),
        "scipy": any(r[2] for r in results),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tool", choices=[*TOOLS, "inproc", "stacked", "imports"])
    parser.add_argument("run", nargs="?")
    parser.add_argument("qrels", nargs="?")
    parser.add_argument("--per-query", help="write per-query values (JSON) here")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--buckets",
        default="auto",
        type=lambda text: text if text == "auto" else int(text),
        help="ireval_df: evaluate(buckets=), auto (the default, as users get) or N",
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--queries", type=int, help="stacked: keep the first N queries")
    args = parser.parse_args(argv)
    if args.tool == "imports":
        out: dict[str, Any] = imports(args.rounds)
    elif args.tool == "inproc":
        out = inproc(args.run, args.qrels, args.rounds)
    elif args.tool == "stacked":
        out = stacked(args.run, args.qrels, args.runs, args.rounds, args.queries)
    else:
        extra = {"buckets": args.buckets} if args.tool == "ireval_df" else {}
        out, per_query = TOOLS[args.tool](
            args.run, args.qrels, per_query=bool(args.per_query), **extra
        )
        if args.per_query:
            Path(args.per_query).write_text(json.dumps(per_query))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
