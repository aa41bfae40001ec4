"""Frames the library returns on the bundled data, for the charts to draw.

altair and vl-convert are in the dev extra: without them these tests fail
rather than skip.
"""

from __future__ import annotations

import warnings

import pytest
from plot_helpers import DATA, QRELS, QUERIES, RUNS

import ireval_df as ie

METRICS = ["nDCG@10", "AP", "P@10"]


@pytest.fixture(scope="session")
def per_query():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # data/ has a missing query, on purpose
        return ie.evaluate(RUNS, QRELS, METRICS, queries=QUERIES)


@pytest.fixture(scope="session")
def log():
    return ie.online.read_log(DATA / "log")


@pytest.fixture(scope="session")
def interleaving_log():
    return ie.online.read_log(DATA / "log_interleaving")


@pytest.fixture(scope="session")
def rbo():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dense has no ranking for query 42
        return ie.similarity(RUNS, "RBO", baseline="bm25", queries=QUERIES)
