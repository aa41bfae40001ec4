"""Properties of the click models on generated click logs.

- Row order and the spelling of search ids do not matter: parameters equal
  up to rounding (sums in another order).
- Every parameter lies in [clip, 1 - clip]; every full and conditional click
  probability in [0, 1]; perplexity is at least 1 and the log-likelihood at
  most 0.
- The conditional click probabilities multiply to the probability of the
  whole click pattern, so that the full probability at position 1 (nothing
  above) equals the conditional one.
- A model fitted on a log simulated from itself recovers its parameters
  (here the cascade model, whose estimate is an exact binomial proportion:
  within z standard errors, z for a family of that size; the other models
  are in tests/unit/online/test_click_models.py).
"""

from __future__ import annotations

import warnings
from statistics import NormalDist

import numpy as np
import polars as pl
from click_simulation import simulate
from hypothesis import given, settings
from hypothesis import strategies as st

from ireval_df.online import MODELS, fit_click_model

TOLERANCE = 1e-12
PAIR = ["query_id", "doc_id"]


@st.composite
def click_logs(draw: st.DrawFn) -> pl.DataFrame:
    """Up to 12 searches of 1 to 5 results over 3 queries and 5 documents each."""
    n = draw(st.integers(1, 12))
    rows = []
    for s in range(n):
        query = draw(st.sampled_from(["q1", "q2", "q3"]))
        depth = draw(st.integers(1, 5))
        docs = draw(st.permutations([f"{query}-d{i}" for i in range(5)]))[:depth]
        clicks = draw(st.lists(st.booleans(), min_size=depth, max_size=depth))
        for position, (doc, click) in enumerate(zip(docs, clicks, strict=True), 1):
            rows.append((f"s{s}", query, position, doc, click))
    return pl.DataFrame(
        rows,
        schema=["search_id", "query_id", "position", "doc_id", "clicked"],
        orient="row",
    )


def _fit(log: pl.DataFrame, model: str, **options):
    options.setdefault("min_impressions", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. PBM on a log where nothing moves
        return fit_click_model(log, model, **options)


def _frames(fitted) -> dict[str, pl.DataFrame]:
    names = ("attractiveness", "examination", "satisfaction", "continuation")
    return {n: getattr(fitted, n) for n in names if getattr(fitted, n) is not None}


@settings(max_examples=30, deadline=None)
@given(log=click_logs(), model=st.sampled_from(MODELS), seed=st.integers(0, 2**16))
def test_row_order_and_search_ids_do_not_matter(log, model, seed):
    shuffled = log.sample(fraction=1.0, shuffle=True, seed=seed).with_columns(
        search_id=pl.col("search_id").str.replace("s", "search-")
    )
    a, b = _frames(_fit(log, model)), _frames(_fit(shuffled, model))
    assert a.keys() == b.keys()
    for name, frame in a.items():
        other = b[name]
        assert frame.drop("value").equals(other.drop("value")), name
        gap = (frame["value"] - other["value"]).abs().max()
        assert gap <= TOLERANCE, (name, gap)


@settings(max_examples=30, deadline=None)
@given(log=click_logs(), model=st.sampled_from(MODELS))
def test_probabilities_are_probabilities(log, model):
    fitted = _fit(log, model, iterations=5)
    for frame in _frames(fitted).values():
        assert frame["value"].is_between(1e-6, 1 - 1e-6).all()
    full = fitted.predict(log)["click_prob"]
    conditional = fitted.predict(log, kind="conditional")
    assert full.is_between(0.0, 1.0).all()
    assert conditional["click_prob"].is_between(0.0, 1.0).all()
    top = conditional.with_columns(full=full).filter(pl.col("position") == 1)
    assert (top["full"] - top["click_prob"]).abs().max() <= TOLERANCE
    assert (fitted.perplexity(log)["value"] >= 1.0 - TOLERANCE).all()
    assert fitted.log_likelihood(log) <= 0.0


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    low=st.floats(0.02, 0.4),
    width=st.floats(0.1, 0.55),
)
def test_cascade_fitted_on_cascade_users_recovers_attractiveness(seed, low, width):
    sim = simulate(
        "CM",
        n_searches=4_000,
        n_queries=4,
        docs_per_query=12,
        seed=seed,
        alpha_range=(low, low + width),
    )
    fitted = _fit(sim.log, "CM", prior=(0, 0))
    examined = (
        pl.concat([sim.log, sim.hidden], how="horizontal")
        .group_by(PAIR)
        .agg(n=pl.col("examined").sum())
    )
    got = (
        fitted.attractiveness.join(sim.attractiveness, on=PAIR, suffix="_true")
        .join(examined, on=PAIR)
        .filter(pl.col("n") > 0)
    )
    p = got["value_true"].to_numpy()
    se = np.sqrt(p * (1 - p) / got["n"].to_numpy())
    z = np.abs(got["value"].to_numpy() - p) / se
    limit = NormalDist().inv_cdf(1 - 1e-3 / (2 * len(z)))
    assert z.max() <= limit, (z.max(), limit)
