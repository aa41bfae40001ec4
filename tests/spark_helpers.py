"""Helpers of the Spark tests (tests/unit/spark): collecting, comparing, warnings."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from collections.abc import Callable


def skip_without_spark() -> None:
    """Skip the calling test, saying why, without pyspark or without Java."""
    import pytest

    pytest.importorskip(
        "pyspark", reason="pyspark is not installed (pip install 'ireval-df[spark]')"
    )
    home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (
        home and Path(home, "bin", "java").exists()
    ):
        pytest.skip(
            "Spark needs Java 17 and no java is on PATH (Debian: apt-get install "
            "default-jre-headless)"
        )


def run_spark_python(
    argv: list[str], cwd: Path, *, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    """Run this interpreter with ``argv`` as a Spark driver; return the finished run.

    Its Python workers are this interpreter too; the run must succeed. It
    gets no ``SPARK_CONF_DIR`` or ``PYSPARK_SUBMIT_ARGS`` of this
    machine's, so unless the Spark home has a configuration, it runs as
    ireval_df configures Spark.
    """
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    for name in ("SPARK_CONF_DIR", "PYSPARK_SUBMIT_ARGS"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    return done


def collect(frame: Any) -> pl.DataFrame:
    """A Spark result as polars, in its row order."""
    out = pl.from_arrow(frame.toArrow())
    assert isinstance(out, pl.DataFrame)
    return out


def assert_same(got: pl.DataFrame, want: pl.DataFrame, *, tol: float = 1e-12) -> None:
    """Same columns, same rows in the same order; floats equal to ``tol`` (NaN = NaN)."""
    assert got.schema == want.schema
    assert got.height == want.height
    floats = [c for c, t in want.schema.items() if t.is_float()]
    others = [c for c in want.columns if c not in floats]
    assert (
        got.select(others).cast(want.select(others).schema).equals(want.select(others))
    )
    for name in floats:
        for a, b in zip(got[name].to_list(), want[name].to_list(), strict=True):
            if a is None or b is None:
                assert a is b, (name, a, b)
            elif math.isnan(b):
                assert math.isnan(a), (name, a, b)
            else:
                assert abs(a - b) <= tol, (name, a, b)


def caught(call: Callable[[], Any]) -> tuple[Any, list[str]]:
    """Run ``call``; return its result and the messages of the ireval_df warnings it gave."""
    from ireval_df.errors import IrevalWarning

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = call()
    return result, [
        str(w.message) for w in seen if issubclass(w.category, IrevalWarning)
    ]


def random_case(
    seed: int,
    *,
    queries: int = 60,
    runs: int = 3,
    repeats: bool = False,
    intents: bool = False,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A stacked run and qrels: ties, graded and negative grades, one-sided queries.

    Query ``q000`` of the qrels is answered by no run; ``x00``.. only by the
    runs; the last run answers only the first half of the queries (so it has
    no row in some groups); with ``repeats`` a few documents appear twice.
    With ``intents`` the qrels are judged per intent (an ``intent`` column):
    every document for one of three intents at its grade, a third of them
    for a second intent at a grade no higher, so that its grade, the
    highest over its intents, is what the other measures see.
    """
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(queries):
        qid = f"q{q:03d}"
        docs = [
            f"d{d:02d}"
            for d in rng.choice(40, size=int(rng.integers(1, 15)), replace=False)
        ]
        grades = rng.choice([-1, 0, 0, 1, 1, 2, 3], size=len(docs))
        qrels_rows += [(qid, d, int(g)) for d, g in zip(docs, grades, strict=True)]
        if q == 0:
            continue
        for r in range(runs):
            if r == runs - 1 and q > queries // 2:
                continue
            n = int(rng.integers(1, 25))
            ranked = [f"d{d:02d}" for d in rng.choice(40, size=n, replace=False)]
            scores = rng.integers(0, 6, size=n) / 2.0  # many ties
            run_rows += [
                (f"r{r}", qid, d, float(s)) for d, s in zip(ranked, scores, strict=True)
            ]
            if repeats and q % 7 == 1:
                run_rows.append((f"r{r}", qid, ranked[0], float(scores[0]) - 1.0))
    for x in range(3):
        run_rows.append(("r0", f"x{x:02d}", "d00", 1.0))
    run = pl.DataFrame(
        run_rows, schema=["run_id", "query_id", "doc_id", "score"], orient="row"
    )
    qrels = pl.DataFrame(
        qrels_rows, schema=["query_id", "doc_id", "relevance"], orient="row"
    )
    if intents:
        first = rng.integers(0, 3, size=qrels.height)
        second = qrels.with_columns(
            intent=pl.Series((first + 1) % 3).cast(pl.String),
            relevance=pl.min_horizontal(
                "relevance", pl.Series(rng.integers(-1, 4, size=qrels.height))
            ),
        ).filter(pl.Series(rng.random(qrels.height) < 1 / 3))
        qrels = pl.concat(
            [qrels.with_columns(intent=pl.Series(first).cast(pl.String)), second]
        )
    order = rng.permutation(run.height)
    return run[order], qrels
