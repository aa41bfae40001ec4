"""The trec_eval command against its two references.

* ``evaluate()`` reaches every trec_eval measure by its trec_eval name and
  gives the numbers the command prints (one engine, no second implementation).
* ``--compat 9`` reproduces pytrec_eval-terrier (trec_eval 9.x) per topic.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.trec_eval._command import run_command
from ireval_df.trec_eval._reader import read_qrels, read_run

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance" / "trec_eval"
#: Printed per topic but not numbers of a registry metric.
NOT_METRICS = {"relstring"}


def _printed(argv: list[str]) -> dict[tuple[str, str], str]:
    result = run_command(argv)
    assert result.code == 0, result.stderr
    out = {}
    for line in result.stdout.splitlines():
        name, qid, value = line.split("\t")
        out[(name.rstrip(), qid)] = value
    return out


def test_every_all_trec_measure_is_reachable_from_evaluate_by_its_name() -> None:
    qrels = read_qrels((CONFORMANCE / "qrels.test").read_bytes(), "utf-8")
    run, _ = read_run((CONFORMANCE / "results.test").read_bytes(), "utf-8")
    printed = _printed(
        [
            "-q",
            "-m",
            "all_trec",
            str(CONFORMANCE / "qrels.test"),
            str(CONFORMANCE / "results.test"),
        ]
    )
    names = sorted({n for n, q in printed if q != "all" and n not in NOT_METRICS})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per_query = ie.evaluate(
            run, qrels.with_columns(pl.col("relevance").cast(pl.Int32)), names
        )
    metric_of = {name: str(ie.parse_metric(name)) for name in names}
    checked = 0
    for qid, metric, value in per_query.select(
        "query_id", "metric", "value"
    ).iter_rows():
        for name in [n for n, m in metric_of.items() if m == metric]:
            expected = printed[(name, qid)]
            got = str(int(value)) if name.startswith("num_") else f"{value:6.4f}"
            assert got == expected, (name, qid)
            checked += 1
    assert checked == len(
        [k for k in printed if k[1] != "all" and k[0] not in NOT_METRICS]
    )


@pytest.mark.parametrize(
    ("qrels", "run", "options"),
    [
        ("qrels.test", "results.test", []),
        ("qrels.rel_level", "results.test", ["-l2"]),
        ("qrels.rel_level", "results.test", ["-J"]),
        ("qrels.comment.test", "results.comment.test", []),
    ],
)
def test_compat_9_matches_pytrec_eval(qrels: str, run: str, options: list[str]) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    with (CONFORMANCE / qrels).open() as f:
        judged = pytrec_eval.parse_qrel(f)
    with (CONFORMANCE / run).open() as f:
        ranked = pytrec_eval.parse_run(f)
    level = int(options[0][2:]) if options and options[0].startswith("-l") else 1
    evaluator = pytrec_eval.RelevanceEvaluator(
        judged,
        pytrec_eval.supported_measures,
        relevance_level=level,
        judged_docs_only_flag="-J" in options,
    )
    reference = evaluator.evaluate(ranked)
    ours = _printed(
        [
            "--compat",
            "9",
            "-q",
            "-m",
            "all_trec",
            *options,
            str(CONFORMANCE / qrels),
            str(CONFORMANCE / run),
        ]
    )
    compared = 0
    for qid, measures in reference.items():
        for name, value in measures.items():
            if (name, qid) not in ours or name in NOT_METRICS:
                continue
            expected = str(int(value)) if name.startswith("num_") else f"{value:6.4f}"
            assert ours[(name, qid)] == expected, (name, qid)
            compared += 1
    assert compared > 80 * len(reference)
