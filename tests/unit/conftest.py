"""Generated per-query frames for the statistics tests."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest


def make_per_query(
    seed: int = 7,
    runs: tuple[str, ...] = ("base", "alt", "new"),
    metrics: tuple[str, ...] = ("AP", "nDCG@10"),
    sizes: dict[str, int] | None = None,
) -> pl.DataFrame:
    """Per-query values for several runs, metrics and two slices.

    Values sit on a 1/20 grid so that ties (zero differences) occur, and the
    runs differ by small shifts so that p-values spread over (0, 1).
    """
    rng = np.random.default_rng(seed)
    sizes = sizes or {"short": 14, "long": 33}
    rows = []
    for slice_name, n in sizes.items():
        qids = [f"{slice_name}-{i:03d}" for i in range(n)]
        difficulty = rng.uniform(0.1, 0.8, n)
        for r, run in enumerate(runs):
            for m, metric in enumerate(metrics):
                noise = rng.normal(0.0, 0.15, n)
                value = np.clip(difficulty + 0.04 * r + 0.02 * m + noise, 0.0, 1.0)
                value = np.round(value * 20) / 20
                rows.extend(
                    {
                        "run_id": run,
                        "query_id": q,
                        "metric": metric,
                        "value": float(v),
                        "slice": slice_name,
                    }
                    for q, v in zip(qids, value, strict=True)
                )
    return pl.DataFrame(rows)


@pytest.fixture
def per_query() -> pl.DataFrame:
    return make_per_query()


def paired_arrays(
    frame: pl.DataFrame,
    run: str,
    baseline: str,
    metric: str,
    slice_name: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The (run, baseline) values of one metric (and slice), paired by query id."""
    part = frame.filter(pl.col("metric") == metric)
    if slice_name is not None:
        part = part.filter(pl.col("slice") == slice_name)
    wide = part.pivot(on="run_id", index="query_id", values="value").sort("query_id")
    return wide[run].to_numpy(), wide[baseline].to_numpy()


@pytest.fixture
def make():
    """The generator itself, for tests that need other shapes."""
    return make_per_query


@pytest.fixture
def paired():
    """Pair a run's values with its baseline's, by query id."""
    return paired_arrays
