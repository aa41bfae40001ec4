"""The engine's two rankings, and ``evaluate(buckets=...)``, give the same numbers.

Unless a metric of the call is registered ``full_sort``, the engine ranks
only the documents in the qrels (``_engine._rank``, ``every=False``);
adding a ``full_sort`` metric to the call makes it rank every row. Each
metric must come out the same both ways, on ``data/`` (ties broken only by
doc_id byte order, case-variant doc ids, negative grades, a query missing
from one run, queries without relevant documents) under every option that
touches ranks. ``tests/unit/test_engine_trec_values.py`` and
``tests/reference`` pin the values themselves.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from ireval_df import _engine, evaluate
from ireval_df._engine import EngineOptions, per_query_wide
from ireval_df.errors import IrevalError
from ireval_df.metrics import REGISTRY, parse_metric
from ireval_df.metrics import _shared as shared

DATA = Path(__file__).resolve().parents[2] / "data"

#: One spec of every metric that does not force a full sort.
PARTIAL = [
    "P@5",
    "RelP@5",
    "Rprec",
    "Success@3",
    "Best@5",
    "R@20",
    "F@10",
    "AP",
    "AP@10",
    "AP(norm=relret)@10",
    "gmAP",
    "yaap",
    "infAP",
    "RR",
    "RR@5",
    "nDCG",
    "nDCG@10",
    "nDCG(dcg=exp-log2)@5",
    "nDCG(gains={0:0.5,1:1,2:3})@10",
    "CG@10",
    "DCG@10",
    "IDCG@10",
    "nDCGRel",
    "Bpref",
    "gmBpref",
    "binG",
    "ERR@10",
    "RBP",
    "RBP(p=0.5)@10",
    "IPrec@0.3",
    "11pt",
    "Judged@10",
    "NumQ",
    "NumRet",
    "NumRet@10",
    "NumRel",
    "NumRelRet",
    "NumNonRelJudgedRet",
    "SetP",
    "SetR",
    "SetRelP",
    "SetAP",
    "SetF",
    "Utility",
    "P(judged_only=true)@5",
    "AP(judged_only=true)",
    "nDCG(judged_only=true)@10",
]
FULL = "G"  # registered full_sort: its presence makes the engine rank every row


def _frames() -> tuple[pl.LazyFrame, pl.LazyFrame]:
    run = pl.scan_parquet(DATA / "runs.parquet").select(
        "run_id", "query_id", "doc_id", "score"
    )
    qrels = pl.scan_parquet(DATA / "qrels.parquet")
    return run, qrels


def test_every_registered_metric_is_covered() -> None:
    covered = {parse_metric(s).name for s in [*PARTIAL, FULL]}
    full = {name for name, info in REGISTRY.items() if info.full_sort}
    assert covered | full == set(REGISTRY)
    assert all(not shared.full_sort(parse_metric(s)) for s in PARTIAL)
    assert shared.full_sort(parse_metric(FULL))
    # a gain for documents absent from the qrels (level -1) needs every rank
    assert shared.full_sort(parse_metric("nDCG(gains={-1:0.5})@10"))


@pytest.mark.parametrize(
    "options",
    [
        EngineOptions(),
        EngineOptions(depth=7),
        EngineOptions(missing="skip"),
        EngineOptions(depth=30, missing="skip"),
    ],
    ids=["default", "depth", "skip", "depth-skip"],
)
def test_ranking_judged_documents_only_equals_ranking_every_row(
    options: EngineOptions,
) -> None:
    run, qrels = _frames()
    specs = [parse_metric(s) for s in PARTIAL]
    names = [str(m) for m in specs]
    partial = per_query_wide(specs, run, qrels, options).collect()
    full = per_query_wide([*specs, parse_metric(FULL)], run, qrels, options).collect()
    assert partial.height > 400
    full = full.select(partial.columns)
    assert_frame_equal(partial.drop(names), full.drop(names))
    for name in names:  # the same sums, maybe added in another order
        a, b = partial[name], full[name]
        assert a.is_null().equals(b.is_null()), name
        assert a.is_nan().equals(b.is_nan()), name
        close = (a - b).abs() <= 1e-12 * (1 + b.abs())
        assert close.fill_null(value=True).all(), name


def test_rank_column_ties_use_doc_id() -> None:
    run = pl.LazyFrame(
        {
            "run_id": "r",
            "query_id": "q",
            "doc_id": ["a", "b", "c", "d"],
            "score": [0.0, 0.0, 0.0, 0.0],
            "rank": [2, 1, 1, 3],
        },
        schema_overrides={"rank": pl.UInt32},
    )
    qrels = pl.LazyFrame({"query_id": "q", "doc_id": ["a", "c"], "relevance": [1, 1]})
    options = EngineOptions(rank_from="column")
    specs = [parse_metric(s) for s in ["AP", "RR", "P@2"]]
    partial = per_query_wide(specs, run, qrels, options).collect()
    full = per_query_wide([*specs, parse_metric(FULL)], run, qrels, options).collect()
    # input ranks 1, 1 (b, c: doc_id ascending breaks the tie), 2 (a), 3 (d):
    # relevant c at 2 and a at 3; AP = (1/2 + 2/3) / 2
    assert partial["AP"].item() == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert partial["RR"].item() == 0.5
    assert_frame_equal(partial, full.select(partial.columns))


@pytest.mark.parametrize("buckets", [2, 5])
def test_buckets_give_the_same_result(buckets: int) -> None:
    metrics = ["nDCG@10", "AP", "RR@10", "G", "NumRet", "AP(judged_only=true)"]
    run, qrels = DATA / "runs.parquet", DATA / "qrels.parquet"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = evaluate(run, qrels, metrics, depth=50)
        split = evaluate(run, qrels, metrics, depth=50, buckets=buckets)
    assert_frame_equal(one, split)


@pytest.mark.parametrize("buckets", [0, -1, 1.5, True])
def test_buckets_must_be_a_positive_whole_number(buckets: object) -> None:
    with pytest.raises(IrevalError, match="buckets must be a positive whole number"):
        evaluate(DATA / "runs.parquet", DATA / "qrels.parquet", ["AP"], buckets=buckets)  # type: ignore[arg-type]


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_buckets_keep_a_run_that_misses_a_bucket(missing: str) -> None:
    # run "b" answers one query only: most buckets hold none of its rows,
    # yet with missing="zero" it scores 0 on every qrels query
    run = pl.read_parquet(DATA / "runs.parquet").filter(pl.col("run_id") == "bm25")
    lone = run.filter(pl.col("query_id") == "1").with_columns(run_id=pl.lit("b"))
    both = pl.concat([run, lone])
    qrels = pl.read_parquet(DATA / "qrels.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = evaluate(both, qrels, ["AP", "NumRet"], missing=missing)
        split = evaluate(both, qrels, ["AP", "NumRet"], missing=missing, buckets=7)
    assert_frame_equal(one, split)
    rows_b = one.filter(pl.col("run_id") == "b").height
    assert rows_b == (2 if missing == "skip" else 2 * qrels["query_id"].n_unique())


def test_colliding_ranking_ids_are_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    # the engine keys rankings by a 64-bit hash of (run_id, query_id); force
    # every ranking onto one id for the first seeds, as a collision would
    run, qrels = _frames()
    specs = [parse_metric(s) for s in [*PARTIAL, FULL]]
    expected = per_query_wide(specs, run, qrels, EngineOptions()).collect()
    real = _engine._ranking_hash
    seeds: list[int] = []

    def colliding(seed: int) -> pl.Expr:
        seeds.append(seed)
        return pl.lit(0, pl.UInt64) if seed < 3 else real(seed)

    monkeypatch.setattr(_engine, "_ranking_hash", colliding)
    sizes = _engine.ranking_sizes(run, EngineOptions()).collect()
    ids, _ = _engine.with_ranking_ids(sizes)
    assert ids[_engine.RANKING].n_unique() == sizes.height > 1
    assert seeds[:4] == [0, 1, 2, 3]
    got = per_query_wide(specs, run, qrels, EngineOptions()).collect()
    assert_frame_equal(got, expected)
