"""Slice helpers: length buckets, quantile bins, position buckets."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

from ireval_df.errors import IrevalError
from ireval_df.stats.slices import (
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
