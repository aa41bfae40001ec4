"""bench/interleaving.py runs end to end on a few searches (a smoke test, never timed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_the_interleaving_bench_runs_small() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH / "interleaving.py"),
            "--searches",
            "500",
            "--rounds",
            "1",
            "--methods",
            "team_draft",
            "probabilistic",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "500 searches x 2 rankers x 10 documents: 10,000 rows" in done.stdout
    assert "| interleave, probabilistic |" in done.stdout
    assert "interleave(team_draft) / sort:" in done.stdout
