"""Slice helpers: length buckets, quantile bins, position buckets."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

from ireval_df.errors import IrevalError
from ireval_df.stats.slices import (
    age_buckets,
    age_labels,
    bucket_labels,
    length_buckets,
    position_buckets,
    quantile_bins,
)


def test_length_buckets_words_chars_values():
    queries = pl.DataFrame(
        {
            "text": ["", "a", "a b", "a  b c", "one two three four five", "x " * 9],
            "length": [0, 1, 2, 3, 5, 9],
        }
    )
    words = queries.select(length_buckets())["length_bucket"]
    assert words.to_list() == ["<1", "1", "2", "3", "4-5", "6+"]
    assert words.dtype == pl.Enum(["<1", "1", "2", "3", "4-5", "6+"])
    assert queries.select(length_buckets("length", unit="value"))[
        "length_bucket"
    ].to_list() == (words.to_list())
    chars = queries.select(length_buckets(unit="chars", edges=(1, 5, 10), name="n"))[
        "n"
    ]
    assert chars.to_list() == ["<1", "1-4", "1-4", "5-9", "10+", "10+"]


def test_enum_labels_sort_in_natural_order():
    ranks = pl.DataFrame({"rank": [120, 1, 15, 3, 60, 7, 30]})
    out = ranks.with_columns(position_buckets()).sort("position_bucket")
    assert out["position_bucket"].to_list() == [
        "1",
        "2-3",
        "4-10",
        "11-20",
        "21-50",
        "51-100",
        "101+",
    ]


def test_quantile_bins_match_the_empirical_quantiles():
    rng = np.random.default_rng(1)
    values = rng.normal(size=203)
    frame = pl.DataFrame({"pop": values})
    bins = frame.select(quantile_bins("pop", 4))["pop_bin"].to_list()
    edges = np.quantile(values, [0.25, 0.5, 0.75], method="inverted_cdf")
    expected = [f"Q{int(np.searchsorted(edges, v, side='left')) + 1}" for v in values]
    assert bins == expected
    counts = pl.Series(bins).value_counts().sort("")["count"].to_list()
    assert max(counts) - min(counts) <= 1


def test_quantile_bins_ties_nulls_dates_labels():
    frame = pl.DataFrame(
        {
            "clicks": [1, 1, 1, 1, 5, 6, None, 8],
            "fresh": [dt.date(2024, 1, d) for d in (1, 2, 3, 4, 5, 6, 7, 8)],
        }
    )
    out = frame.select(
        quantile_bins("clicks", 2),
        quantile_bins("fresh", 2, labels=["old", "new"], name="age"),
    )
    assert out["clicks_bin"].to_list() == ["Q1"] * 4 + ["Q2", "Q2", None, "Q2"]
    assert out["age"].to_list() == ["old"] * 4 + ["new"] * 4


def test_bucket_labels():
    assert bucket_labels([1, 2, 4, 11]) == ["<1", "1", "2-3", "4-10", "11+"]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: bucket_labels([3, 2]),
            r"edges must be increasing whole numbers, found \(3, 2\)",
        ),
        (lambda: position_buckets(edges=()), "edges must be increasing"),
        (lambda: length_buckets(edges=(1.5, 3)), "edges must be increasing"),
        (lambda: length_buckets(unit="tokens"), r"unit='tokens' is not one of"),
        (lambda: quantile_bins("x", 1), "q must be a whole number of bins >= 2"),
        (
            lambda: quantile_bins("x", 3, labels=["a", "b"]),
            r"labels must name the 3 bins",
        ),
    ],
)
def test_errors(call, match):
    with pytest.raises(IrevalError, match=match):
        call()


# --------------------------------------------------------------------------
# age buckets

ISSUED = dt.datetime(2024, 3, 10, 12)


def test_age_buckets_include_their_lower_edge() -> None:
    # ages 0, 1d - 1s, 1d, 7d, 29d, 30d, 365d, -1s
    ages = [
        dt.timedelta(0),
        dt.timedelta(days=1, seconds=-1),
        dt.timedelta(days=1),
        dt.timedelta(days=7),
        dt.timedelta(days=29),
        dt.timedelta(days=30),
        dt.timedelta(days=365),
        dt.timedelta(seconds=-1),
    ]
    frame = pl.DataFrame(
        {"issued_at": ISSUED, "published_at": [ISSUED - a for a in ages]}
    )
    buckets = frame.select(age_buckets())["age_bucket"]
    assert buckets.to_list() == [
        "<1d",
        "<1d",
        "1d-7d",
        "7d-30d",
        "7d-30d",
        "30d-365d",
        ">=365d",
        "future",
    ]
    assert buckets.dtype == pl.Enum(age_labels())


def test_age_buckets_unknown_when_either_time_is_null() -> None:
    frame = pl.DataFrame(
        {
            "issued_at": [ISSUED, None, ISSUED],
            "published_at": [None, ISSUED, ISSUED],
        },
        schema={"issued_at": pl.Datetime("us"), "published_at": pl.Datetime("us")},
    )
    assert frame.select(age_buckets())["age_bucket"].to_list() == [
        "unknown",
        "unknown",
        "<1d",
    ]


def test_age_buckets_as_of_replaces_the_query_time() -> None:
    # no issued_at column is read with as_of; a date is read as its midnight
    frame = pl.DataFrame({"pub": [dt.date(2024, 3, 1), dt.date(2024, 3, 9)]})
    expr = age_buckets("pub", as_of="2024-03-10T00:00:00+01:00", name="age")
    # as_of is 2024-03-09 23:00 UTC: 8 days 23 h and 23 h after
    assert frame.select(expr)["age"].to_list() == ["7d-30d", "<1d"]
    expr = age_buckets("pub", as_of=dt.date(2024, 3, 10), edges=("1d", "2w"))
    assert frame.select(expr)["age_bucket"].to_list() == ["1d-2w", "1d-2w"]


def test_age_labels_and_edges() -> None:
    assert age_labels(["12h", dt.timedelta(hours=36), "2w"]) == [
        "future",
        "<12h",
        "12h-36h",
        "36h-2w",
        ">=2w",
        "unknown",
    ]
    assert age_labels("30d") == ["future", "<30d", ">=30d", "unknown"]


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        (("7d", "1d"), "must be increasing"),
        (("7d", "1w"), "must be increasing"),
        ((), "must be increasing"),
        (("0d",), "positive durations"),
        (("1mo",), "write a year as '365d'"),
        ((dt.timedelta(days=-1),), "positive durations"),
        ((7,), "positive durations"),
    ],
)
def test_bad_age_edges(edges: tuple[object, ...], message: str) -> None:
    with pytest.raises(IrevalError, match=message):
        age_buckets(edges=edges)  # type: ignore[arg-type]


def test_bad_as_of() -> None:
    with pytest.raises(IrevalError, match=r"as_of='last week' is not a point in time"):
        age_buckets(as_of="last week")
