"""Splitting the metrics into engine calls never changes what is printed.

The trec_eval command computes the metrics that need every rank on a prefix
of each ranking and the others with the engine's judged-rows path
(``_evaluate._plans``); this compares its output with one engine call over
every row, on random runs with ties, graded and negative judgments, unjudged
and unretrieved documents and topics missing from the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from ireval_df.trec_eval import _evaluate
from ireval_df.trec_eval._command import run_command

if TYPE_CHECKING:
    from pathlib import Path


def _random_files(tmp_path: Path, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for topic in range(12):
        docs = rng.choice(2000, size=int(rng.integers(1, 300)), replace=False)
        scores = np.round(rng.random(len(docs)) * 4, 1)  # many ties
        if topic != 5:  # topic 5 is only in the qrels
            run += [
                f"t{topic} Q0 d{d} 0 {s} r\n" for d, s in zip(docs, scores, strict=True)
            ]
        judged = rng.choice(
            np.r_[docs[:60], 2000 + np.arange(20)],
            size=int(rng.integers(1, 12)),
            replace=False,
        )
        grades = rng.choice([-1, 0, 0, 1, 2, 3], size=len(judged))
        qrels += [f"t{topic} 0 d{d} {g}\n" for d, g in zip(judged, grades, strict=True)]
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(run))
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


MEASURES = ["-m", "all_trec", "-m", "relstring.15", "-m", "unj.3,12", "-m", "dcg"]


@pytest.mark.parametrize(
    "options",
    [
        ["-c"],
        ["-c", "-J"],
        ["-c", "-M7"],
        ["-c", "-l2"],
        ["-c", "-l0", "-m", "ndcg.1=2,3=0.5", "-m", "G.2=5", "-m", "Rndcg.3=1"],
        ["-c", "-m", "rbp.p=0.5,-1=1", "-m", "ndcg.-1=0.5"],
        ["--compat", "9"],
    ],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_split_gives_the_same_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: list[str], seed: int
) -> None:
    argv = ["-q", *options, *MEASURES, *_random_files(tmp_path, seed)]
    split = run_command(argv)
    monkeypatch.setattr(_evaluate, "SPLIT", False)
    whole = run_command(argv)
    assert split.code == whole.code == 0, split.stderr
    assert split.stdout == whole.stdout
