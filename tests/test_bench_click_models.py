"""bench/click_models.py runs end to end on a small log (a smoke test, never timed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_the_click_model_bench_runs_on_a_small_log(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "click_models.py"),
            "--data",
            str(tmp_path),
            "--searches",
            "300",
            "--rounds",
            "1",
            "--iterations",
            "3",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "300 searches x 10 results = 3,000 rows" in done.stdout
    assert "| PBM, 3 iterations |" in done.stdout
    assert "| DBN, 1 iteration |" in done.stdout
    assert "DBN: one iteration costs" in done.stdout
    assert (tmp_path / "clicklog-300x10.parquet").exists()
