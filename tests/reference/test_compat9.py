"""``evaluate(compat="9")`` reproduces pytrec_eval-terrier (trec_eval 9.x) exactly.

Three things differ between trec_eval 9.x and 10.0 (docs/trec_eval.md): 9.x
rounds scores to float32 before ranking, needs ``(long)(p R + 0.9)``
relevant documents for an interpolated precision where 10.0 takes
``lround(p R)``, and leaves out a qrels query the run did not answer. The
case below hits all three, so compat="10" differs from pytrec_eval on it.
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import ireval_df as ie

pytrec_eval = pytest.importorskip("pytrec_eval")

# q1: d1 and d2 differ by less than float32 resolves: 9.x ties them, and the
# tie goes to doc_id descending (d2 first), so the relevant d1 drops to rank 2
RUN = {
    "q1": {"d1": 1.0 + 1e-9, "d2": 1.0, "d3": 0.5},
    # q2: R = 7 relevant documents; at recall 0.2, 9.x needs (long)(1.4 + 0.9)
    # = 2 of them, 10.0 lround(1.4) = 1
    "q2": {f"r{i}": 10.0 - i for i in range(7)} | {"n1": 9.5},
}
QRELS = {
    "q1": {"d1": 1, "d2": 0},
    "q2": {f"r{i}": 1 for i in range(7)} | {"n1": 0},
    "q3": {"x": 1},  # not answered: 9.x skips it
}
MEASURES = {
    "map": "AP",
    "recip_rank": "RR",
    "P_1": "P@1",
    "iprec_at_recall_0.20": "IPrec@0.2",
}


def _frames() -> tuple[pl.DataFrame, pl.DataFrame]:
    run = pl.DataFrame(
        [(q, d, s) for q, docs in RUN.items() for d, s in docs.items()],
        schema=["query_id", "doc_id", "score"],
        orient="row",
    )
    qrels = pl.DataFrame(
        [(q, d, r) for q, docs in QRELS.items() for d, r in docs.items()],
        schema=["query_id", "doc_id", "relevance"],
        orient="row",
    )
    return run, qrels


def _ours(compat: str) -> dict[tuple[str, str], float]:
    run, qrels = _frames()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = ie.evaluate(run, qrels, list(MEASURES.values()), compat=compat)
    return {
        (q, m): v for q, m, v in result.select("query_id", "metric", "value").rows()
    }


def test_compat_9_equals_pytrec_eval_and_10_does_not() -> None:
    evaluator = pytrec_eval.RelevanceEvaluator(
        QRELS, {"map", "recip_rank", "P.1", "iprec_at_recall.0.20"}
    )
    theirs = {
        (q, MEASURES[name]): value
        for q, values in evaluator.evaluate(RUN).items()
        for name, value in values.items()
    }
    nine = _ours("9")
    assert nine.keys() == theirs.keys()  # q3 left out, as pytrec_eval does
    for key, value in theirs.items():
        assert nine[key] == pytest.approx(value, abs=1e-12), key
    ten = _ours("10")
    assert ("q3", "AP") in ten  # scored as an empty ranking
    differ = {k for k in theirs if ten[k] != pytest.approx(theirs[k], abs=1e-12)}
    assert {("q1", "AP"), ("q1", "RR"), ("q1", "P@1"), ("q2", "IPrec@0.2")} <= differ


def test_compat_9_on_the_command_line(tmp_path) -> None:
    from ireval_df.cli.main import main

    run, qrels = _frames()
    with (tmp_path / "run.txt").open("w") as fh:
        for q, d, s in run.rows():
            fh.write(f"{q} Q0 {d} 0 {s!r} t\n")
    with (tmp_path / "qrels.txt").open("w") as fh:
        for q, d, r in qrels.rows():
            fh.write(f"{q} 0 {d} {r}\n")
    out = tmp_path / "out.parquet"
    argv = ["evaluate", "--run", str(tmp_path / "run.txt"), "--qrels"]
    argv += [str(tmp_path / "qrels.txt"), "-m", "AP", "--per-query", "-o", str(out)]
    assert main([*argv, "--compat", "9"]) == 0
    values = dict(pl.read_parquet(out).select("query_id", "value").rows())
    assert values == pytest.approx(
        {q: v for (q, m), v in _ours("9").items() if m == "AP"}
    )
