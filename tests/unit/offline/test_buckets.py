"""``buckets="auto"`` (the default) and text runs read window by window.

``evaluate()`` splits the queries into buckets when the run's estimated peak
memory exceeds the budget (``ireval_df._utils.memory``), and a bucketed TREC text
run is first read window by window into Arrow IPC files
(``ireval_df.io.spill``), so that no step holds the whole run. The results
never depend on either; ``docs/benchmarks.md`` measures the memory.
"""

from __future__ import annotations

import gzip
import importlib
import shutil
import warnings
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from ireval_df import evaluate
from ireval_df._utils import memory as _memory
from ireval_df._utils import provenance as _provenance
from ireval_df.errors import FormatError
from ireval_df.io import spill
from ireval_df.io.load import load, read_header
from ireval_df.io.trec import read_trec_run

# the module, not the function of the same name that the package exports
evaluate_module = importlib.import_module("ireval_df.offline.evaluation")
DATA = Path(__file__).resolve().parents[3] / "data"
RUNS = [DATA / "runs" / f"{name}.run" for name in ("bm25", "dense", "hybrid")]
QRELS = DATA / "qrels.txt"
METRICS = ["nDCG@10", "AP", "RR@10", "R@100", "NumRet"]


def _evaluate(run: object, **options: object) -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(run, QRELS, METRICS, **options)  # type: ignore[arg-type]


def test_auto_is_the_default_and_one_bucket_for_a_small_run() -> None:
    out = _evaluate(RUNS)
    assert _provenance.settings_of(out)["buckets"] == 1


def test_auto_splits_a_run_larger_than_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one = _evaluate(RUNS, buckets=1)
    # 45,500 rows at 96 bytes each against a 1 MB budget: 5 buckets
    monkeypatch.setattr(evaluate_module, "memory_budget", lambda: 1_000_000)
    for run in (RUNS, DATA / "runs.parquet"):
        out = _evaluate(run)
        assert _provenance.settings_of(out)["buckets"] == 5
        expected = one if run == RUNS else _evaluate(run, buckets=1)
        assert_frame_equal(out, expected)


def test_choose_buckets_follows_the_budget() -> None:
    assert _memory.choose_buckets(0, 10) == 1
    assert _memory.choose_buckets(1000, None) == 1
    assert _memory.choose_buckets(1000, 96_000) == 1
    assert _memory.choose_buckets(1001, 96_000) == 2
    assert _memory.choose_buckets(10**12, 1) == _memory.MAX_AUTO_BUCKETS
    # a sixth of the machine, or half of what is free, whichever is smaller
    assert _memory.memory_budget((6_000, 6_000)) == 1_000
    assert _memory.memory_budget((6_000, 1_000)) == 500


def test_row_estimates_of_inputs(tmp_path: Path) -> None:
    lines = RUNS[0].read_bytes()
    rows = lines.count(b"\n")
    assert spill.estimate_rows(RUNS[0]) == pytest.approx(rows, rel=0.02)
    packed = tmp_path / "bm25.run.gz"
    packed.write_bytes(gzip.compress(lines * 20))
    assert spill.estimate_rows(packed) == pytest.approx(20 * rows, rel=0.05)
    assert (
        spill.estimate_rows(DATA / "runs.parquet")
        == pl.read_parquet(DATA / "runs.parquet").height
    )
    assert spill.estimate_rows(tmp_path / "absent.run") == 0
    assert (
        evaluate_module._input_rows(
            [pl.DataFrame({"a": [1, 2]}), {"q": {"d": 1.0, "e": 2.0}}]
        )
        == 4
    )


@pytest.mark.parametrize("window", [10_000, spill.WINDOW])
def test_a_text_run_read_in_windows_equals_the_whole_file(
    tmp_path: Path, window: int
) -> None:
    packed = tmp_path / "dense.run.gz"
    packed.write_bytes(gzip.compress(RUNS[1].read_bytes()))
    unended = tmp_path / "unended.run"
    unended.write_bytes(RUNS[2].read_bytes().rstrip(b"\n"))
    for path in (RUNS[0], packed, unended):
        for rank in (True, False):
            lazy = spill.spill_trec_run(path, tmp_path, rank=rank, window=window)
            assert lazy is not None
            assert_frame_equal(lazy.collect(), read_trec_run(path, rank=rank))


def test_the_loader_spills_a_text_run_only_with_a_scratch_folder(
    tmp_path: Path,
) -> None:
    header = read_header(RUNS[0])
    eager = load(header, "run").data
    assert isinstance(eager, pl.DataFrame)
    lazy = load(header, "run", scratch=tmp_path).data
    assert isinstance(lazy, pl.LazyFrame)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".arrow"]
    assert_frame_equal(lazy.collect(), eager)


def test_bucketed_text_runs_give_the_same_result_and_leave_no_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spill, "WINDOW", 50_000)  # several windows a file
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    one = _evaluate(RUNS, buckets=1)
    split = _evaluate(RUNS, buckets=3)
    assert_frame_equal(one, split)
    assert list(tmp_path.iterdir()) == []  # the scratch folder is gone


def test_text_the_window_readers_refuse_is_read_whole(tmp_path: Path) -> None:
    # a non-ASCII id and fields split by a tab and blanks: neither fast
    # reader vouches for the window, so the careful reader reads the file
    # whole, as without buckets
    spaced = tmp_path / "spaced.run"
    text = RUNS[0].read_text().replace(" Q0 ", "\tQ0  ")
    spaced.write_text(text.replace(" D0", " D\u00e90", 1), encoding="utf-8")
    assert spill.spill_trec_run(spaced, tmp_path) is None
    plain = tmp_path / "plain.run"
    plain.write_text(text.replace(" D0", " D\u00e90", 1).replace("\tQ0  ", " Q0 "))
    assert_frame_equal(_evaluate(spaced, buckets=2), _evaluate(plain, buckets=1))
    # and a malformed line is reported with its number either way
    broken = tmp_path / "broken.run"
    lines = RUNS[0].read_text().splitlines()
    lines[6] = "1 Q0 d7 7 not-a-number bm25"
    broken.write_text("\n".join(lines) + "\n")
    for buckets in (1, 2):
        with pytest.raises(FormatError, match="line 7"):
            _evaluate(broken, buckets=buckets)


def test_a_bom_or_an_empty_file_is_left_to_the_whole_file_reader(
    tmp_path: Path,
) -> None:
    bom = tmp_path / "bom.run"
    bom.write_bytes(b"\xef\xbb\xbf" + RUNS[0].read_bytes())
    assert spill.spill_trec_run(bom, tmp_path) is None
    empty = tmp_path / "empty.run"
    empty.write_bytes(b"")
    assert spill.spill_trec_run(empty, tmp_path) is None
    blank = tmp_path / "blank.run"
    shutil.copy(empty, blank)
    blank.write_bytes(b"\n\n")
    assert spill.spill_trec_run(blank, tmp_path) is None


def test_measures_scaled_by_the_top_grade_see_all_the_qrels_in_every_bucket() -> None:
    # max_rel=0 is the highest grade of all the qrels; a bucket of a few
    # queries may hold none of that grade, and must not scale by its own
    run = DATA / "runs" / "bm25.run"
    qrels = DATA / "qrels.txt"
    metrics = ["ERR", "ERR@5", "INST", "SDCG@10", "NERR10", "BPM@10", "AP"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = evaluate(run, qrels, metrics, buckets=1)
        many = evaluate(run, qrels, metrics, buckets=100)
    assert_frame_equal(many, one)
    assert one["metric"].unique(maintain_order=True).to_list() == metrics
