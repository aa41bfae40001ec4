"""The benchmark harness runs end to end on a tiny shape (a smoke test, never timed).

``bench/harness.py`` is the tool behind ``docs/benchmarks.md``. Here it runs
on the ``tiny`` shape with one round of everything, in a temporary
directory, with whichever peers are installed (the others are skipped by the
harness itself), and must find every peer in agreement with ireval_df.
Nothing about time or memory is asserted.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _harness():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_harness", BENCH / "harness.py"
        )
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def _tiny_track(tmp_path: Path) -> Path:
    """A folder laid out like trectools' robust03: two gzipped runs and qrels."""
    import gzip

    data = tmp_path / "data" / "tiny"
    subprocess.run(
        [sys.executable, str(BENCH / "generate.py"), "tiny", str(data)],
        capture_output=True,
        check=True,
    )
    track = tmp_path / "track"
    (track / "runs").mkdir(parents=True)
    text = (data / "run.trec").read_text()
    for tag in ("sysa", "sysb"):
        packed = gzip.compress(text.replace(" bm25\n", f" {tag}\n").encode())
        (track / "runs" / f"input.{tag}.gz").write_bytes(packed)
    (track / "qrels.txt").write_text((data / "qrels.trec").read_text())
    return track


@pytest.mark.slow
def test_harness_runs_on_the_tiny_shape(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    track = _tiny_track(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "harness.py"),
            "--shapes",
            "tiny",
            "--rounds",
            "1",
            "--inproc-rounds",
            "1",
            "--import-rounds",
            "1",
            "--stacked",
            "tiny:20",
            "--data",
            str(tmp_path / "data"),
            "--json",
            str(out),
            "--robust03",
            str(track),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| ireval_df |" in done.stdout
    assert "| ireval_df (Parquet) |" in done.stdout
    results = json.loads(out.read_text())
    block = results["shapes"]["tiny"]
    assert set(block["timing"]) >= {"ireval_df", "ireval_df (Parquet)"}
    # the floors read every query of the run, and say so beside the table
    floors = {"text-read", "text-floor"}
    assert floors <= set(block["timing"])
    queries = {block["timing"][t][0]["n_queries"] for t in [*floors, "ireval_df"]}
    assert len(queries) == 1
    assert "text-read: import polars" in done.stdout
    for per_metric in block.get("agreement", {}).get("peers", {}).values():
        assert all(d["unexplained"] == 0 for d in per_metric.values()), per_metric
    assert results["imports"]["pandas"] is False
    assert results["imports"]["scipy"] is False
    assert [st["runs"] for st in results["stacked"]] == [20]
    # the command users run is timed beside the tools
    assert "| ireval-df evaluate -o (command) |" in done.stdout
    assert "ireval-df evaluate -o (command)" in block["timing"]
    # a track of real-looking runs: every tool scores both, keyed run/query
    track_block = results["shapes"]["robust03"]
    assert track_block["shape"]["runs"] == 2
    assert "ireval-df evaluate -o (command)" in track_block["timing"]
    for per_metric in track_block.get("agreement", {}).get("peers", {}).values():
        assert all(d["queries"] == 100 for d in per_metric.values()), per_metric
        assert all(d["unexplained"] == 0 for d in per_metric.values()), per_metric


def test_agreement_flags_a_difference_only_a_tie_rule_explains() -> None:
    harness = _harness()
    ours = {m: {"q1": 0.5, "q2": 1.0} for m in harness.MEASURES}
    theirs = {m: {"q1": 0.5, "q2": 0.25} for m in harness.MEASURES}
    # q2 differs everywhere; only ranx (input-order ties) may differ on a tie query
    for tool in ("pytrec_eval", "ranx"):
        flagged = harness.compare(tool, ours, theirs, ties=set())
        assert all(d["differ"] == 1 and d["unexplained"] == 1 for d in flagged.values())
    explained = harness.compare("ranx", ours, theirs, ties={"q2"})
    assert all(d["unexplained"] == 0 for d in explained.values())
    strict = harness.compare("pytrec_eval", ours, theirs, ties={"q2"})
    assert all(d["unexplained"] == 1 for d in strict.values())
    # a query one side lacks is a difference too
    missing = {m: {"q1": 0.5} for m in harness.MEASURES}
    assert (
        harness.compare("pytrec_eval", ours, missing, ties=set())["AP"]["differ"] == 1
    )
    same = harness.compare("ir_measures", ours, ours, ties=set())
    assert all(d["differ"] == 0 for d in same.values())


@pytest.mark.slow
def test_the_polars_only_tool_gives_the_same_means(tmp_path: Path) -> None:
    # ``ireval_df-polars`` is ireval_df as installed without a C compiler,
    # timed beside it in docs/benchmarks.md
    generate = [sys.executable, str(BENCH / "generate.py"), "tiny", str(tmp_path)]
    subprocess.run(generate, capture_output=True, check=True)
    paths = [str(tmp_path / "run.trec"), str(tmp_path / "qrels.trec")]
    outputs = {}
    for tool in ("ireval_df", "ireval_df-polars"):
        done = subprocess.run(
            [sys.executable, str(BENCH / "tools.py"), tool, *paths],
            capture_output=True,
            text=True,
            check=True,
        )
        outputs[tool] = json.loads(done.stdout)
    assert outputs["ireval_df-polars"]["tool"] == "ireval_df-polars"
    assert outputs["ireval_df-polars"]["means"] == outputs["ireval_df"]["means"]
    assert outputs["ireval_df"]["n_queries"] == 50


def test_the_failures_bench_runs_on_the_tiny_shape(tmp_path: Path) -> None:
    # bench/failures.py times failures(docs=) against evaluate(); only run here
    generate = [sys.executable, str(BENCH / "generate.py"), "tiny", str(tmp_path)]
    subprocess.run(generate, capture_output=True, check=True)
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "failures.py"),
            "--data",
            str(tmp_path),
            "--rounds",
            "1",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| failures, docs + stages |" in done.stdout
    assert "failures(docs) / evaluate(5 metrics)" in done.stdout


def _tiny_log(folder: Path) -> Path:
    generate = [sys.executable, str(BENCH / "generate.py"), "log-tiny", str(folder)]
    subprocess.run(generate, capture_output=True, check=True)
    return folder


def test_the_log_generator_is_deterministic_and_has_no_bad_input(tmp_path: Path):
    # bench/generate_log.py writes the log-10m shape in chunks; log-tiny has 3
    import polars as pl

    first = _tiny_log(tmp_path / "a")
    again = _tiny_log(tmp_path / "b")
    names = ["searches", "results", "events", "units", "ab_units"]
    for name in names:
        path = f"{name}.parquet"
        assert (first / path).read_bytes() == (again / path).read_bytes(), name
    searches, results, events, units, ab_units = (
        pl.read_parquet(first / f"{name}.parquet") for name in names
    )
    assert searches.height == 3_000
    assert ab_units.height == 6_000
    assert searches["search_id"].is_unique().all()
    assert events["event_id"].is_unique().all()
    assert events.join(searches, on="search_id", how="anti").is_empty()
    shown = results.select("search_id", "position", "doc_id")
    assert events.join(
        shown, on=["search_id", "position", "doc_id"], how="anti"
    ).is_empty()
    per_search = searches.join(
        results.group_by("search_id").len(), on="search_id", how="left"
    )
    assert (per_search["len"].fill_null(0) == per_search["n_results"]).all()
    assert (searches["n_results"] == 0).any()
    assert (searches["page"] > 1).any()
    assert set(events["event_type"]) == {"click", "add_to_cart", "purchase"}
    assert sorted(units["unit_id"]) == sorted(searches["user_id"].unique())
    base = {f"pre_{c}" for c in ("searches", "clicks", "sessions", "revenue")}
    assert base <= set(ab_units.columns)
    # a pre_ column for every per-unit quantity of the online metrics (CUPED)
    from ireval_df.measures import REGISTRY

    quantities = {
        str(info.options[side])
        for info in REGISTRY.values()
        if info.family == "online"
        for side in ("numer", "denom")
    }
    assert {f"pre_{q}" for q in quantities} <= set(units.columns)


def test_the_online_bench_runs_on_the_tiny_log(tmp_path: Path):
    # bench/online.py times online.metrics against its floor and ab_test against
    # tea-tasting; here once, with tea-tasting if this interpreter has it
    data = _tiny_log(tmp_path / "log")
    argv = [sys.executable, str(BENCH / "online.py"), "--data", str(data)]
    argv += ["--rounds", "1"]
    if importlib.util.find_spec("tea_tasting") is not None:
        argv += ["--peer-python", sys.executable]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| floor (read 4 files, 1 aggregate each) |" in done.stdout
    assert "| floor | " in done.stdout  # its peak memory
    if "ireval_df.online is missing" not in done.stdout:  # issue 19 merged
        assert "online.metrics / floor:" in done.stdout
        assert "lean plan / floor:" in done.stdout
        assert "| clicks | ireval_df |" in done.stdout
        assert "| ab_test | " in done.stdout


def test_the_all_measures_bench_runs_on_the_tiny_shape(tmp_path: Path) -> None:
    # bench/all_measures.py times evaluate() against ir_measures on every
    # registry measure both have; only run here, on 20 queries
    pytest.importorskip("ir_measures")
    generate = [sys.executable, str(BENCH / "generate.py"), "tiny", str(tmp_path)]
    subprocess.run(generate, capture_output=True, check=True)
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "all_measures.py"),
            "--data",
            str(tmp_path),
            "--rounds",
            "1",
            "--queries",
            "20",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ir_measures / ireval_df: median" in done.stdout
    assert "| nDCG | nDCG |" in done.stdout
