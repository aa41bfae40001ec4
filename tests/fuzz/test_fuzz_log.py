"""Fuzzing read_log: whatever the tables hold, only IrevalError subclasses escape.

Frames of mixed-up values (nulls, repeats, strings where numbers go, times
that are not times, negative epochs, unknown ids, positions never shown) and
files written from them: read_log either returns a checked log, whose tables
have the canonical dtypes and on which every metric runs, or raises an
IrevalError that says why.
"""

from __future__ import annotations

import os
import warnings

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ireval_df as ie
from ireval_df.errors import IrevalError
from tests.online_names import online_names

SCALE = int(os.environ.get("IREVAL_FUZZ_SCALE", "1"))
FUZZ = settings(max_examples=40 * SCALE, suppress_health_check=[HealthCheck.too_slow])

# mostly good values, now and then a bad one
IDS = st.sampled_from(["s0", "s1", "s2", "s3", "s4", "s5", "s9", "007", None])
USERS = st.sampled_from(["u1", "u2", "u3", "u1", "u2", None])
TIMES = st.sampled_from(
    [
        "2024-05-01T10:00:00",
        "2024-05-01T10:00:30Z",
        "2024-05-01 10:01",
        "2024-05-01T12:00:00+02:00",
        "2024-05-01T10:31:00",
        "2024-05-01",
        "2024-05-01T10:05:00",
        "yesterday",
        "",
        None,
    ]
)
INTS = st.sampled_from([0, 1, 2, 3, 1, 2, 3, -1, None])
TYPES = st.one_of(
    st.none(), st.sampled_from(["click", "add_to_cart", "purchase", "view"])
)

ALL = [*online_names(), "CTR@2"]


@st.composite
def tables(draw):
    n = draw(st.integers(1, 5))
    # unique search ids, unless the draw repeats or blanks one
    ids = [f"s{i}" for i in range(n)]
    if draw(st.integers(0, 9)) == 0:
        ids[-1] = draw(IDS)
    searches = pl.DataFrame(
        {
            "search_id": ids,
            "user_id": draw(st.lists(USERS, min_size=n, max_size=n)),
            "ts": draw(st.lists(TIMES, min_size=n, max_size=n)),
            "variant": draw(
                st.lists(
                    st.sampled_from(["A", "B", "A", "B", None]), min_size=n, max_size=n
                )
            ),
            "query": draw(
                st.lists(
                    st.sampled_from(["red shoes", "Red shoes", "", None]),
                    min_size=n,
                    max_size=n,
                )
            ),
            "n_results": draw(st.lists(INTS, min_size=n, max_size=n)),
            "page": draw(st.lists(INTS, min_size=n, max_size=n)),
        },
        strict=False,
    )
    m = draw(st.integers(0, 6))
    results = pl.DataFrame(
        {
            "search_id": draw(st.lists(IDS, min_size=m, max_size=m)),
            "position": draw(st.lists(INTS, min_size=m, max_size=m)),
            "doc_id": draw(
                st.lists(st.sampled_from(["a", "b", None]), min_size=m, max_size=m)
            ),
            "published_at": draw(st.lists(TIMES, min_size=m, max_size=m)),
        },
        schema={
            "search_id": pl.String,
            "position": pl.Int64,
            "doc_id": pl.String,
            "published_at": pl.String,
        },
    )
    k = draw(st.integers(0, 6))
    events = pl.DataFrame(
        {
            "event_id": draw(
                st.lists(
                    st.sampled_from(["e1", "e2", "e3", None]), min_size=k, max_size=k
                )
            ),
            "search_id": draw(st.lists(IDS, min_size=k, max_size=k)),
            "user_id": draw(st.lists(USERS, min_size=k, max_size=k)),
            "ts": draw(st.lists(TIMES, min_size=k, max_size=k)),
            "event_type": draw(st.lists(TYPES, min_size=k, max_size=k)),
            "position": draw(st.lists(INTS, min_size=k, max_size=k)),
            "value": draw(
                st.lists(
                    st.one_of(st.none(), st.floats(-10, 100)), min_size=k, max_size=k
                )
            ),
            "dwell_ms": draw(
                st.lists(
                    st.one_of(st.none(), st.integers(-1000, 90_000)),
                    min_size=k,
                    max_size=k,
                )
            ),
        },
        schema={
            "event_id": pl.String,
            "search_id": pl.String,
            "user_id": pl.String,
            "ts": pl.String,
            "event_type": pl.String,
            "position": pl.Int64,
            "value": pl.Float64,
            "dwell_ms": pl.Int64,
        },
    )
    return {"searches": searches, "results": results, "events": events}


def check(log) -> None:
    assert log.searches.schema["ts"] == pl.Datetime("us")
    assert log.searches.schema["n_results"] == pl.Int32
    assert log.searches["search_id"].null_count() == 0
    assert log.searches["search_id"].is_unique().all()
    assert log.searches["variant"].null_count() == 0
    if log.events is not None:
        assert log.events.schema["ts"] == pl.Datetime("us")
        assert log.events["ts"].null_count() == 0
    out = ie.online.metrics(log, ALL)
    assert out.height >= len(ALL) - 1  # PositionCTR has no row without results
    ie.online.unit_table(log, [m for m in ALL if m != "TimeToFirstClick"])


@FUZZ
@given(frames=tables(), invalid=st.sampled_from(["drop", "error"]))
def test_frames_read_or_raise_an_ireval_error(frames, invalid):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            log = ie.online.read_log(**frames, invalid=invalid, contaminated="drop")
        except IrevalError:
            return
        check(log)


@settings(max_examples=15 * SCALE, suppress_health_check=[HealthCheck.too_slow])
@given(frames=tables(), fmt=st.sampled_from(["csv", "jsonl", "parquet"]))
def test_files_read_or_raise_an_ireval_error(tmp_path_factory, frames, fmt):
    folder = tmp_path_factory.mktemp("log")
    for name, frame in frames.items():
        path = folder / f"{name}.{fmt}"
        if fmt == "csv":
            frame.write_csv(path)
        elif fmt == "jsonl":
            frame.write_ndjson(path)
        else:
            frame.write_parquet(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            log = ie.online.read_log(folder, contaminated="drop")
        except IrevalError:
            return
        check(log)
