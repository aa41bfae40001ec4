"""The engine against trec_eval 10.0's expected per-topic values.

Reads the upstream expected outputs in ``tests/conformance/trec_eval`` and
checks every per-topic value (``%6.4f`` as trec_eval prints it) of every
measure the registry reaches by its trec_eval name, computed by
``_engine.per_query_wide`` directly. Byte-for-byte output is the trec_eval
command's job (tests/conformance); this pins the numbers.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ireval_df.measures import parse_metric
from ireval_df.measures.spec import build_metric
from ireval_df.offline.engine import EngineOptions, per_query_wide

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance" / "trec_eval"


def _qrels(name: str) -> pl.LazyFrame:
    rows = [
        line.split()
        for line in (CONFORMANCE / name).read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return pl.LazyFrame(
        {
            "query_id": [r[0] for r in rows],
            "doc_id": [r[2] for r in rows],
            "relevance": [int(r[3]) for r in rows],
        },
        schema_overrides={"relevance": pl.Int32},
    )


def _run(name: str) -> pl.LazyFrame:
    rows = [
        line.split()
        for line in (CONFORMANCE / name).read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    return pl.LazyFrame(
        {
            "run_id": "r",
            "query_id": [r[0] for r in rows],
            "doc_id": [r[2] for r in rows],
            "score": [float(r[4]) for r in rows],
        }
    )


CASES = [
    ("out.test.aq", "qrels.test", "results.test", 1, None),
    ("out.test.aqc", "qrels.test", "results.trunc", 1, None),
    ("out.test.aqcM", "qrels.test", "results.trunc", 1, 100),
    ("out.test.aql", "qrels.rel_level", "results.test", 2, None),
]


@pytest.mark.parametrize(("expected", "qrels", "run", "rel", "depth"), CASES)
def test_per_topic_values_match_trec_eval(expected, qrels, run, rel, depth):
    want: dict[str, dict[str, str]] = {}
    for line in (CONFORMANCE / expected).read_text().splitlines():
        name, qid, value = (part.strip() for part in line.split("\t"))
        if qid != "all" and name not in ("relstring", "runid", "relstring_20"):
            want.setdefault(name, {})[qid] = value
    specs = {}
    for name in want:
        metric = parse_metric(name)
        if "rel" in metric.info.params and rel != 1:
            metric = build_metric(
                metric.name, {**dict(metric.params), "rel": rel}, metric.k
            )
        specs[name] = metric
    assert len(specs) > 60  # every all_trec measure family is exercised
    wide = per_query_wide(
        list(dict.fromkeys(specs.values())),
        _run(run),
        _qrels(qrels),
        EngineOptions(depth=depth),
    ).collect()
    got_rows = {row["query_id"]: row for row in wide.iter_rows(named=True)}
    diffs = []
    for name, per_topic in want.items():
        for qid, value in per_topic.items():
            got = got_rows[qid][str(specs[name])]
            text = str(int(got)) if name.startswith("num_") else f"{got:6.4f}"
            if text.strip() != value:
                diffs.append((name, qid, value, text))
    assert diffs == []
