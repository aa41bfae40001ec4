"""The engine's rankings, and ``evaluate(buckets=...)``, give the same numbers.

The engine ranks in one of three ways (``_engine._rank``). When each
ranking's rows are adjacent and best first, as ``_engine.find_rankings``
checks, it reads ranks off the row order (sorting only tied rows).
Otherwise, unless a metric of the call is registered ``full_sort``, it
ranks only the documents in the qrels; adding a ``full_sort`` metric makes
it rank every row by one sort of each ranking. Each metric must come out
the same every way, on ``data/`` (ties broken only by doc_id byte order,
case-variant doc ids, negative grades, a query missing from one run,
queries without relevant documents) under every option that touches ranks.
``tests/unit/offline/test_engine_trec_values.py`` and ``tests/reference`` pin the
values themselves.
"""

from __future__ import annotations

import io
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from ireval_df import evaluate
from ireval_df.errors import DataError, IrevalError
from ireval_df.measures import REGISTRY, parse_metric
from ireval_df.offline import engine as _engine
from ireval_df.offline.engine import EngineOptions, per_query_wide
from ireval_df.offline.intents import attach
from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import measures_reading
from ireval_df.schema.intents import read_judgments

PREFERENCE_MEASURES = measures_reading("preferences")

DATA = Path(__file__).resolve().parents[3] / "data"

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
    "Share@5",
    "RelShare",
    "NumRel",
    "NumRelRet",
    "Hits@5",
    "NumNonRelJudgedRet",
    "SetP",
    "SetR",
    "SetRelP",
    "SetAP",
    "SetF",
    "Utility",
    "SDCG@10",
    "INSQ",
    "INST",
    "INST(T=3)",
    "NERR8@5",
    "NERR9@5",
    "NERR10",
    "NERR11",
    "BPM@5",
    "Compat",
    "P(judged_only=true)@5",
    "AP(judged_only=true)",
    "nDCG(judged_only=true)@10",
    # diversity, on the same documents' judgments per intent
    "alpha_nDCG@10",
    "alpha_DCG@5",
    "ERR_IA@10",
    "nERR_IA@20",
    "NRBP",
    "nNRBP",
    "AP_IA",
    "P_IA@10",
    "StRecall@10",
    "nDCG_IA@10",
    "alpha_nDCG(judged_only=true)@10",
]
FULL = "G"  # registered full_sort: its presence makes the engine rank every row


def _frames() -> tuple[pl.LazyFrame, pl.LazyFrame]:
    run = pl.scan_parquet(DATA / "runs.parquet").select(
        "run_id", "query_id", "doc_id", "score"
    )
    # the judgments of qrels.parquet, split by intent (each document's grade
    # is its highest over its intents), for the diversity measures
    judged = read_judgments(DATA / "qrels_intents.tsv")
    return run, attach(judged.qrels, judged.intents)


def test_every_registered_metric_is_covered() -> None:
    covered = {parse_metric(s).name for s in [*PARTIAL, FULL]}
    full = {
        name for name, info in REGISTRY.items() if info.options.get("full_sort", False)
    }
    offline = {name for name, info in REGISTRY.items() if info.family == "offline"}
    # the preference measures rank apart (evaluate_prefs, doc_id ascending)
    assert covered | full == offline - PREFERENCE_MEASURES
    assert all(not shared.full_sort(parse_metric(s)) for s in PARTIAL)
    assert shared.full_sort(parse_metric(FULL))
    # a gain for documents absent from the qrels (level -1) needs every rank
    assert shared.full_sort(parse_metric("nDCG(gains={-1:0.5})@10"))


def _layouts(run: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
    """The same rows in rank order (ties against the tie rule), and shuffled."""
    frame = run.collect()
    order = ["run_id", "query_id", "score", "doc_id"]
    return {
        "in order": frame.sort(order, descending=[False, False, True, False]).lazy(),
        "shuffled": frame.sample(fraction=1.0, shuffle=True, seed=7).lazy(),
    }


def test_layouts_take_their_ranking_paths() -> None:
    layouts = _layouts(_frames()[0])
    assert _engine.find_rankings(layouts["in order"], EngineOptions()).in_order
    assert not _engine.find_rankings(layouts["shuffled"], EngineOptions()).in_order


def _found(run: pl.LazyFrame, **options: object) -> tuple[dict[str, int], bool]:
    found = _engine.find_rankings(run, EngineOptions(**options))  # type: ignore[arg-type]
    sizes = found.sizes.select("query_id", _engine.N_RET).iter_rows()
    return dict(sizes), found.in_order


def test_find_rankings_reads_sizes_and_order_off_the_blocks() -> None:
    queries = ["a", "a", "b", "b", "b", "a"]
    run = pl.LazyFrame(
        {
            "run_id": "r",
            "query_id": queries,
            "doc_id": [str(i) for i in range(6)],
            "score": [3.0, 2.0, 5.0, 4.0, 4.0, 1.0],
        }
    )
    # a ranking split over two blocks: its blocks are summed, not in order
    assert _found(run) == ({"a": 3, "b": 3}, False)
    assert _found(run.head(5)) == ({"a": 2, "b": 3}, True)
    assert _found(run.head(5), depth=2) == ({"a": 2, "b": 2}, True)
    # one ranking not best first; the same ranks told by a rank column
    worse = run.head(5).with_columns(score=pl.Series([3.0, 2.0, 4.0, 5.0, 4.0]))
    assert _found(worse) == ({"a": 2, "b": 3}, False)
    ranked = worse.with_columns(rank=pl.Series([1, 2, 1, 1, 2]))
    assert _found(ranked, rank_from="column") == ({"a": 2, "b": 3}, True)
    # two runs with the same query ids are two rankings each
    two = pl.concat([run.head(5), run.head(5).with_columns(run_id=pl.lit("s"))])
    found = _engine.find_rankings(two, EngineOptions())
    assert found.in_order
    assert found.sizes.height == found.sizes[_engine.RANKING].n_unique() == 4
    assert _found(run.head(0)) == ({}, False)


@pytest.mark.parametrize("first", ["q1", "q2"])
def test_a_score_shared_across_two_rankings_is_no_tie(first: str) -> None:
    # every score is 1.0: each ranking is one tie, broken by doc_id
    # descending, and the last row of one ranking sits right above the first
    # of the other, with the same score; either ranking first
    blocks = {"q1": ["a", "b", "c"], "q2": ["d", "e", "f"]}
    order = [first, *(q for q in blocks if q != first)]
    run = pl.LazyFrame(
        {
            "run_id": "r",
            "query_id": [q for q in order for _ in blocks[q]],
            "doc_id": [d for q in order for d in blocks[q]],
            "score": 1.0,
        }
    )
    qrels = pl.LazyFrame(
        {"query_id": ["q1", "q2", "q2"], "doc_id": ["a", "d", "f"], "relevance": 1}
    )
    assert _engine.find_rankings(run, EngineOptions()).in_order
    specs = [parse_metric(s) for s in ["RR", "AP", "P@2"]]
    for metrics in (specs, [*specs, parse_metric(FULL)]):
        got = per_query_wide(metrics, run, qrels, EngineOptions()).collect()
        # q1: c, b, a (a at 3); q2: f, e, d (f at 1, d at 3)
        assert got.select("query_id", "RR", "AP", "P@2").rows() == [
            ("q1", 1 / 3, 1 / 3, 0.0),
            ("q2", 1.0, (1 + 2 / 3) / 2, 0.5),
        ]


@pytest.mark.parametrize(
    ("runs", "queries", "docs", "adjacent", "repeat"),
    [
        ("rrrr", "aabb", "1212", True, False),  # one document in two rankings
        ("rrss", "aaaa", "1212", True, False),  # ... and in two runs
        ("rrrr", "aabb", "1233", True, True),  # twice in one block
        ("rrrr", "aba", "121", False, True),  # in both blocks of a split ranking
        ("rrrr", "aba", "123", False, False),
        ("rsr", "aaa", "111", False, True),  # a run split around another
    ],
)
def test_may_repeat_sees_every_repeat(
    runs: str, queries: str, docs: str, *, adjacent: bool, repeat: bool
) -> None:
    n = len(queries)
    run = pl.LazyFrame(
        {
            "run_id": list(runs[:n]),
            "query_id": list(queries),
            "doc_id": list(docs),
            "score": [float(n - i) for i in range(n)],
        }
    )
    found = _engine.find_rankings(run, EngineOptions(), repeats=True)
    assert found.adjacent is adjacent
    assert _engine.may_repeat(run, found) is repeat
    # uncounted, the whole run's hashes are counted
    assert (
        _engine.may_repeat(run, _engine.find_rankings(run, EngineOptions())) is repeat
    )


@pytest.mark.parametrize("layout", ["in order", "shuffled"])
def test_a_repeat_deep_in_a_large_run_is_refused(layout: str) -> None:
    # a row repeated in the middle of one ranking of a run in many chunks:
    # the per-block check spans chunk boundaries
    rows = _layouts(_frames()[0])[layout].collect()
    middle = rows.height // 2
    pieces = [rows[i : i + 97] for i in range(0, middle, 97)]
    pieces += [rows[middle : middle + 1], rows[middle:]]
    run = pl.concat(pieces, rechunk=False)
    assert run.n_chunks() > 10
    found = _engine.find_rankings(run.lazy(), EngineOptions(), repeats=True)
    assert found.adjacent is (layout == "in order")
    assert _engine.may_repeat(run.lazy(), found)
    clean = _engine.find_rankings(rows.lazy(), EngineOptions(), repeats=True)
    assert not _engine.may_repeat(rows.lazy(), clean)
    qrels = _frames()[1]
    with pytest.raises(DataError, match="appear more than once in the same ranking"):
        evaluate(run, qrels, ["AP"])


@pytest.mark.parametrize(
    ("layout", "every"),
    [("in order", False), ("in order", True), ("shuffled", False)],
    ids=["in-order", "in-order-every", "judged"],
)
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
def test_every_ranking_path_gives_the_same_values(
    options: EngineOptions, layout: str, *, every: bool
) -> None:
    # against every row of the shuffled run ranked by one sort per ranking
    run, qrels = _frames()
    layouts = _layouts(run)
    specs = [parse_metric(s) for s in PARTIAL]
    names = [str(m) for m in specs]
    full = [*specs, parse_metric(FULL)]
    want = per_query_wide(full, layouts["shuffled"], qrels, options).collect()
    got = per_query_wide(full if every else specs, layouts[layout], qrels, options)
    got = got.collect()
    assert got.height > 400
    want = want.select(got.columns)
    assert_frame_equal(got.drop(names), want.drop(names))
    for name in names:  # the same sums, maybe added in another order
        a, b = got[name], want[name]
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
    # the same rows in rank order (b, c tied at 1 against the tie rule) are
    # ranked off their order, with the same result
    ordered = run.sort("rank", "doc_id")
    assert _engine.find_rankings(ordered, options).in_order
    assert not _engine.find_rankings(run, options).in_order
    for metrics in (specs, [*specs, parse_metric(FULL)]):
        got = per_query_wide(metrics, ordered, qrels, options).collect()
        assert_frame_equal(partial, got.select(partial.columns))


@pytest.mark.parametrize("buckets", [2, 5])
def test_buckets_give_the_same_result(buckets: int) -> None:
    metrics = ["nDCG@10", "AP", "RR@10", "G", "NumRet", "AP(judged_only=true)"]
    run, qrels = DATA / "runs.parquet", DATA / "qrels.parquet"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = evaluate(run, qrels, metrics, depth=50)
        split = evaluate(run, qrels, metrics, depth=50, buckets=buckets)
    assert_frame_equal(one, split)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("buckets", [1, 3])
def test_buckets_draw_a_bar_on_a_terminal(
    buckets: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluate(DATA / "runs.parquet", DATA / "qrels.parquet", ["AP"], buckets=buckets)
    drawn = terminal.getvalue()
    if buckets == 1:  # one pass: nothing to show
        assert drawn == ""
    else:
        assert "evaluating buckets:" in drawn  # tqdm's bar
        assert "0/3" in drawn
        assert drawn.endswith("\r")  # erased when done


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
    found = _engine.find_rankings(run, EngineOptions())
    assert found.sizes[_engine.RANKING].n_unique() == found.sizes.height > 1
    assert seeds[-4:] == [0, 1, 2, 3]
    got = per_query_wide(specs, run, qrels, EngineOptions()).collect()
    assert_frame_equal(got, expected)


@pytest.mark.parametrize(
    ("mask", "keys"),
    [(0, 1 << 20), (_engine._COARSE_MASK, 0)],
    ids=["every-row-passes-the-bitmap", "hash-set"],
)
@pytest.mark.parametrize("layout", ["in order", "shuffled"])
def test_the_judged_row_filter_only_narrows(
    monkeypatch: pytest.MonkeyPatch, layout: str, mask: int, keys: int
) -> None:
    # the filter may let any row through to the exact join, as a bitmap of no
    # bits does; with more labels than the bitmap takes it tests full hashes
    run = _layouts(_frames()[0])[layout]
    qrels = _frames()[1]
    specs = [parse_metric(s) for s in PARTIAL]
    expected = per_query_wide(specs, run, qrels, EngineOptions()).collect()
    monkeypatch.setattr(_engine, "_COARSE_MASK", mask)
    monkeypatch.setattr(_engine, "_COARSE_KEYS", keys)
    labels = _engine.label_qrels(qrels)
    passed = run.filter(_engine._judged(labels)).collect().height
    judged = run.join(qrels, on=["query_id", "doc_id"], how="semi").collect().height
    total = run.collect().height
    assert passed == (total if mask == 0 else judged) > 0
    got = per_query_wide(specs, run, qrels, EngineOptions()).collect()
    assert_frame_equal(got, expected)


@pytest.mark.parametrize("layout", ["in order", "shuffled"])
@pytest.mark.parametrize(
    ("options", "judged_only"),
    [(EngineOptions(), False), (EngineOptions(depth=7), True)],
    ids=["default", "depth-judged-only"],
)
def test_ranked_rows_of_judged_documents_keep_their_true_rank(
    layout: str, options: EngineOptions, *, judged_only: bool
) -> None:
    # every=False ranks only the documents in the qrels (as evaluate() does
    # without a full_sort metric): the same rows, ranks and labels as the
    # full sort gives them
    run = _layouts(_frames()[0])[layout]
    labels = _engine.label_qrels(_frames()[1])
    keys = ["run_id", "query_id", "doc_id"]
    every = _engine.ranked_rows(run, labels, options, judged_only=judged_only)
    want = every.filter(pl.col("label") != -1).sort(keys).collect()
    got = _engine.ranked_rows(
        run, labels, options, judged_only=judged_only, every=False
    )
    got = got.sort(keys).collect()
    assert got.height > 100
    assert_frame_equal(got, want)
