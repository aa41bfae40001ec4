"""evaluate() with every registry measure ir_measures also has, against ir_measures.

``python bench/all_measures.py --data DIR`` reads ``DIR/run.parquet`` and
``DIR/qrels.parquet`` (a shape of ``bench/generate.py``, e.g. msmarco-dev:
6,980 queries x 1,000 documents, one relevant document per query), keeps
the first ``--queries`` queries of the qrels (all with ``--queries 0``), and
times, interleaved for ``--rounds`` rounds in one process:

* ``ireval_df``: one ``ie.evaluate(run, qrels, specs)`` call, every measure
  in the single lazy plan;
* ``ir_measures``: one ``ir_measures.iter_calc(measures, qrels, run)`` over
  the same measures, its default pipeline choosing the providers
  (pytrec_eval, cwl_eval, compat, judged, ...), consumed to the end.

The measure list comes from the registry, so measures added later are
included: each offline metric once, with its defaults (a cutoff of 10
where one is required, 0.5 for recall levels), spelled as ir_measures
spells it, and kept when ir_measures parses that spelling and a provider
of its pipeline supports it; the others are listed as left out. The
qrels get an intent per row (one of three, from a hash of the document),
so that the diversity measures run too: ireval_df reads it as the qrels'
``intent`` column, ir_measures (pyndeval) as their ``iteration``; every
other measure sees the same grades. The preference measures have no
ir_measures spelling (they read preference judgments, not qrels). Both
sides get the frames already in memory (ireval_df a polars frame,
ir_measures a pandas one in our rank order with each document scored by
its rank, so that no provider breaks a tie its own way, converted once,
untimed). After the timing, the
per-query values of the two are compared and the largest difference of
each measure printed: a check on the mapping, not a conformance test
(ties and known differences are explained in docs/metrics.md). Nothing
here asserts a time; on a shared machine the numbers are noisy.
"""

from __future__ import annotations

import argparse
import gc
import logging
import math
import statistics
import time
import warnings
from pathlib import Path
from typing import Any

import polars as pl

import ireval_df as ie
from ireval_df.measures import REGISTRY
from ireval_df.measures.spec import build_metric

#: Our spelling, where the registry default is not what ir_measures computes
#: under the same name: its IPrec is pytrec_eval's (trec_eval 9.x's), its
#: ERR gdeval's (top grade 4, a cutoff), its Success needs a cutoff
OURS = {
    "IPrec": "IPrec(compat=9)@0.5",
    "ERR": "ERR(max_rel=4)@10",
    "Success": "Success@10",
}
#: ir_measures' spelling of one of ours, where the strings differ
THEIRS = {"IPrec(compat=9)@0.5": "IPrec@0.5", "ERR(max_rel=4)@10": "ERR@10"}
#: Our measures that take ir_measures' required max_rel (the qrels' top grade)
MAX_REL = ("BPM", "INSQ", "INST", "NERR8", "NERR9", "NERR10", "NERR11", "SDCG")


def candidates(top_grade: int) -> dict[str, str]:
    """Our spec -> ir_measures spelling, for every offline registry measure."""
    out: dict[str, str] = {}
    for name, info in REGISTRY.items():
        if info.family != "offline":
            continue
        if name in OURS:
            spec = OURS[name]
        else:
            k: Any = None
            if info.cutoff == "required":
                k = 0.5 if info.cutoff_type is float else 10
            spec = str(build_metric(name, {}, k))
        theirs = THEIRS.get(
            spec, spec.replace("=true", "=True").replace("=false", "=False")
        )
        if name == "RBP" and top_grade == 1:
            # one grade: our graded RBP is ir_measures' binary one
            theirs = "RBP(rel=1)"
        if name in MAX_REL:
            head, _, cutoff = theirs.partition("@")
            theirs = f"{head}(max_rel={top_grade})" + (f"@{cutoff}" if cutoff else "")
        out[spec] = theirs
    return out


def supported(specs: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Our spec -> ir_measures measure for those its pipeline computes; the rest."""
    import ir_measures

    providers = [p for p in ir_measures.DefaultPipeline.providers if p.is_available()]
    kept: dict[str, Any] = {}
    left: list[str] = []
    for ours, theirs in specs.items():
        try:
            measure = ir_measures.parse_measure(theirs)
        except (ValueError, NameError, SyntaxError, TypeError, AttributeError):
            left.append(ours)
            continue
        try:
            ok = measure.validate_params() is None and any(
                p.supports(measure) for p in providers
            )
        except AssertionError:  # ir_measures validates parameters by assert
            ok = False
        if ok:
            kept[ours] = measure
        else:
            left.append(ours)
    return kept, left


def load(data: Path, queries: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    qrels = ie.read_qrels(data / "qrels.parquet")
    # one intent per judgment, for the diversity measures (see the docstring)
    intent = (pl.col("doc_id").hash(1) % 3 + 1).cast(pl.String)
    qrels = qrels.with_columns(intent.alias("intent"))
    run = ie.read_run(data / "run.parquet")
    if queries:
        keep = qrels["query_id"].unique(maintain_order=True).head(queries)
        qrels = qrels.filter(pl.col("query_id").is_in(keep.implode()))
        run = run.filter(pl.col("query_id").is_in(keep.implode()))
    return run, qrels


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
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--queries", type=int, default=1000, help="first N qrels queries (0: all)"
    )
    args = parser.parse_args()
    import ir_measures

    # its cwl provider warns when min_rel is below every grade (msmarco: 1)
    logging.getLogger("ir_measures.cwl_eval").setLevel(logging.ERROR)
    run, qrels = load(args.data, args.queries)
    top = int(qrels["relevance"].max() or 1)
    measures, left = supported(candidates(top))
    specs = list(measures)
    # in our rank order, ties broken: each document scored by its rank, so
    # that every provider ranks as ireval_df does (pyndeval and compat break
    # ties by doc_id ascending, cwl_eval keeps input order; ireval_df and
    # trec_eval by doc_id descending) and the values can be compared;
    # positive, since the compat provider ranks an unretrieved document as
    # if scored 0 (docs/metrics.md, Compat)
    run_pd = (
        run.select("query_id", "doc_id", "score")
        .sort(["query_id", "score", "doc_id"], descending=[False, True, True])
        .with_columns(
            score=(pl.len() - pl.int_range(pl.len())).over("query_id").cast(pl.Float64)
        )
        .to_pandas()
    )
    qrels_pd = qrels.select(
        "query_id", "doc_id", "relevance", pl.col("intent").alias("iteration")
    ).to_pandas()
    print(
        f"{args.data.name}: {run['query_id'].n_unique():,} queries, {run.height:,} "
        f"run rows, {qrels.height:,} judgments; {len(specs)} measures in both, "
        f"{len(left)} ireval_df only\n"
    )
    print("measures:", ", ".join(specs))
    print("ireval_df only (no ir_measures spelling or provider):", ", ".join(left))
    print()

    def ours() -> pl.DataFrame:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ie.evaluate(run, qrels, specs)

    def theirs() -> list[Any]:
        return list(ir_measures.iter_calc(list(measures.values()), qrels_pd, run_pd))

    calls = {"ireval_df": ours, "ir_measures": theirs}
    times: dict[str, list[float]] = {name: [] for name in calls}
    ours()  # warm-up, untimed (ir_measures' first round includes its imports)
    for i in range(args.rounds):
        order = list(calls) if i % 2 == 0 else list(reversed(calls))
        for name in order:
            times[name].append(timed(calls[name]))
    print("| call | median (s) | rounds (s) |")
    print("|---|---:|---|")
    for name, values in times.items():
        rounds = ", ".join(f"{v:.2f}" for v in values)
        print(f"| {name} | {statistics.median(values):.2f} | {rounds} |")
    ratios = [
        b / a for a, b in zip(times["ireval_df"], times["ir_measures"], strict=True)
    ]
    print(
        f"\nir_measures / ireval_df: median {statistics.median(ratios):.1f}x "
        f"(rounds {', '.join(f'{r:.1f}' for r in ratios)})\n"
    )

    got = {(q, m): v for _, q, m, v in ours().iter_rows()}
    names = {measure: spec for spec, measure in measures.items()}
    worst: dict[str, float] = dict.fromkeys(specs, 0.0)
    for row in theirs():
        key = (row.query_id, names[row.measure])
        if key in got:
            diff = abs(got[key] - row.value)
            if not math.isnan(diff):
                worst[key[1]] = max(worst[key[1]], diff)
    print("| measure | ir_measures spelling | max abs per-query difference |")
    print("|---|---|---:|")
    for spec in specs:
        print(f"| {spec} | {measures[spec]} | {worst[spec]:.1e} |")


if __name__ == "__main__":
    main()
