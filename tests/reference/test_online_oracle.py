"""Every online metric equals a plain-Python oracle on random small logs.

The oracle (``online_oracle.py``) is written from the definitions in
docs/online.md, one row at a time; the logs (``strategies.search_logs``)
have sessions that split, pagination, reformulations, zero-result searches,
repeated clicks, client dwell times, purchases and actions outside search.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from online_oracle import oracle, spellings
from strategies import NO_SHRINK, search_logs

import ireval_df as ie

PARAMS = [
    {},
    {"tau": 10.0, "window": 60.0, "f": 0.9, "cap": 100.0, "k": 1},
]


def compare(case, params):
    names = spellings(**params)
    log = ie.online.read_log(**case.frames())
    got = ie.online.metrics(log, {n: n for n in names})
    want = oracle(case.searches, case.results, case.events, **params)
    for name in names:
        rows = got.filter(pl.col("metric") == name)
        for v in sorted({s["variant"] for s in case.searches}):
            expected = want[v, name]
            mine = rows.filter(pl.col("variant") == v)
            if name == "PositionCTR":
                curve = dict(mine.select("position", "value").rows())
                assert curve.keys() == expected.keys(), (name, v, curve, expected)
                for p, value in expected.items():
                    assert math.isclose(curve[p], value, rel_tol=1e-9), (name, v, p)
                continue
            (value,) = mine["value"].to_list()
            if expected is None:
                assert value is None, (name, v, value)
            else:
                assert value is not None, (name, v, expected)
                assert math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-12), (
                    name,
                    v,
                    value,
                    expected,
                )


@pytest.mark.parametrize("params", PARAMS, ids=["defaults", "other-params"])
@settings(max_examples=60, phases=NO_SHRINK)
@given(case=search_logs())
def test_every_metric_equals_the_oracle(case, params):
    compare(case, params)
