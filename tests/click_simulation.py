"""Simulated click logs with known parameters: users who follow a click model.

:func:`simulate` draws rankings (each search shows ``depth`` documents of its
query's pool, in random order, so that documents move between positions) and
lets a simulated user click on them, vectorised over searches with numpy:

* ``PBM``: click at r when examined (``theta[r]``) and attracted (``alpha``);
* ``CM``: scan down, click the first attractive result, stop;
* ``DCM``: scan down, click what attracts; after a click at r go on with
  ``lambdas[r]``;
* ``DBN``: scan down, click what attracts; after a click stop satisfied
  with ``sigma``; go on past any result not satisfied with ``gamma``;
* ``SDBN``: ``DBN`` with ``gamma = 1``;
* ``UBM``: click at r when attracted and examined with ``ubm[r, r']``, r' the
  last click above (0: none).

The truth comes back beside the log, so tests can check that a model fitted
on a log recovers the parameters that made it. Used by the unit, property
and reference tests, ``docs/click_models.md`` and ``bench/click_models.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

USERS = ("PBM", "CM", "DCM", "DBN", "SDBN", "UBM")


def default_theta(depth: int) -> np.ndarray:
    """Examination by position: 1 / r ** 0.7 (the shape seen in web logs)."""
    return 1.0 / np.arange(1, depth + 1) ** 0.7


def default_lambdas(depth: int) -> np.ndarray:
    """DCM's chance of going on after a click, falling with the position."""
    return np.linspace(0.7, 0.3, depth)


def default_ubm(depth: int) -> np.ndarray:
    """UBM's examination ``[r - 1, r']``: falls with the distance to the last click."""
    table = np.zeros((depth, depth))
    for r in range(1, depth + 1):
        for prev in range(r):
            distance = r - prev if prev else r
            table[r - 1, prev] = 0.95 / (1.0 + 0.3 * (distance - 1)) ** 0.8
    return table


@dataclass(frozen=True)
class Simulated:
    """A simulated log, the parameters that made it and the user's hidden states.

    ``hidden`` has one row per row of ``log`` (same order): ``examined``,
    ``satisfied`` (after a click), ``open`` (examined, not satisfied and not
    the last result: a chance to go on) and ``went_on`` (the next result was
    examined). Tests derive their tolerances from these counts: how many
    times each parameter was really put to the test.
    """

    log: pl.DataFrame
    attractiveness: pl.DataFrame  # query_id, doc_id, value
    satisfaction: pl.DataFrame  # query_id, doc_id, value
    params: dict[str, Any] = field(default_factory=dict)
    hidden: pl.DataFrame = field(default_factory=pl.DataFrame)


def rankings(
    rng: np.random.Generator,
    n_searches: int,
    n_queries: int,
    docs_per_query: int,
    depth: int,
    *,
    zipf: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Query per search and the pool index of the document at each position.

    ``zipf`` > 0 draws queries with weights 1 / rank ** zipf (a head and a
    long tail); 0 draws them uniformly.
    """
    if docs_per_query < depth:
        raise ValueError("docs_per_query must be at least depth")
    weights = 1.0 / np.arange(1, n_queries + 1) ** zipf
    query = rng.choice(n_queries, size=n_searches, p=weights / weights.sum())
    shown = np.argsort(rng.random((n_searches, docs_per_query)), axis=1)[:, :depth]
    return query, shown


def clicks_of(
    user: str,
    rng: np.random.Generator,
    alpha: np.ndarray,
    sigma: np.ndarray,
    valid: np.ndarray,
    params: dict[str, Any],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clicks, examinations and satisfactions (searches x depth) of a simulated user."""
    n, depth = alpha.shape
    attracted = rng.random((n, depth)) < alpha
    satisfied = np.zeros((n, depth), dtype=bool)
    if user == "PBM":
        examined = valid & (rng.random((n, depth)) < params["theta"][None, :])
        return examined & attracted, examined, satisfied
    clicks = np.zeros((n, depth), dtype=bool)
    examined = np.zeros((n, depth), dtype=bool)
    if user == "UBM":
        last = np.zeros(n, dtype=np.int64)
        for r in range(depth):
            examined[:, r] = valid[:, r] & (rng.random(n) < params["ubm"][r, last])
            clicks[:, r] = examined[:, r] & attracted[:, r]
            last = np.where(clicks[:, r], r + 1, last)
        return clicks, examined, satisfied
    examining = np.ones(n, dtype=bool)
    for r in range(depth):
        examined[:, r] = examining & valid[:, r]
        click = examined[:, r] & attracted[:, r]
        clicks[:, r] = click
        if user == "CM":
            examining &= ~click
        elif user == "DCM":
            goes_on = rng.random(n) < params["lambdas"][r]
            examining &= ~click | goes_on
        else:  # DBN, SDBN
            satisfied[:, r] = click & (rng.random(n) < sigma[:, r])
            goes_on = rng.random(n) < params["gamma"]
            examining &= ~satisfied[:, r] & goes_on
    return clicks, examined, satisfied


def simulate(
    user: str,
    *,
    n_searches: int,
    n_queries: int = 20,
    docs_per_query: int = 15,
    depth: int = 10,
    seed: int = 0,
    min_length: int | None = None,
    alpha_range: tuple[float, float] = (0.05, 0.9),
    sigma_range: tuple[float, float] = (0.1, 0.9),
    gamma: float = 0.9,
    theta: np.ndarray | None = None,
    lambdas: np.ndarray | None = None,
    ubm: np.ndarray | None = None,
    zipf: float = 0.0,
    string_ids: bool = True,
) -> Simulated:
    """A click log of ``n_searches`` searches by a user following ``user``'s model.

    ``min_length``: each search shows between ``min_length`` and ``depth``
    results (uniformly); None: all show ``depth``. Attractiveness and
    satisfaction of each (query, document) pair are uniform in their ranges.
    ``string_ids``: ids as strings (``s12``, ``q3``, ``q3-d7``), else integers.
    """
    if user not in USERS:
        raise ValueError(f"user must be one of {USERS}")
    rng = np.random.default_rng(seed)
    query, shown = rankings(
        rng, n_searches, n_queries, docs_per_query, depth, zipf=zipf
    )
    alpha_pool = rng.uniform(*alpha_range, (n_queries, docs_per_query))
    sigma_pool = rng.uniform(*sigma_range, (n_queries, docs_per_query))
    alpha = alpha_pool[query[:, None], shown]
    sigma = sigma_pool[query[:, None], shown]
    if min_length is None:
        lengths = np.full(n_searches, depth)
    else:
        lengths = rng.integers(min_length, depth + 1, n_searches)
    valid = np.arange(depth)[None, :] < lengths[:, None]
    params: dict[str, Any] = {
        "theta": default_theta(depth) if theta is None else np.asarray(theta),
        "lambdas": default_lambdas(depth) if lambdas is None else np.asarray(lambdas),
        "ubm": default_ubm(depth) if ubm is None else np.asarray(ubm),
        "gamma": 1.0 if user == "SDBN" else gamma,
    }
    clicks, examined, satisfied = clicks_of(user, rng, alpha, sigma, valid, params)
    has_next = np.zeros_like(valid)
    has_next[:, :-1] = valid[:, 1:]
    went_on = np.zeros_like(valid)
    went_on[:, :-1] = examined[:, 1:]
    hidden = pl.DataFrame(
        {
            "examined": examined[valid],
            "satisfied": satisfied[valid],
            "open": (examined & ~satisfied & has_next)[valid],
            "went_on": (went_on & has_next)[valid],
        }
    )
    search = np.repeat(np.arange(n_searches), depth).reshape(n_searches, depth)
    position = np.tile(np.arange(1, depth + 1), (n_searches, 1))
    doc = query[:, None] * docs_per_query + shown
    log = pl.DataFrame(
        {
            "search_id": search[valid],
            "query_id": np.repeat(query[:, None], depth, axis=1)[valid],
            "position": position[valid],
            "doc_id": doc[valid],
            "clicked": clicks[valid],
        },
        schema={
            "search_id": pl.Int64,
            "query_id": pl.Int64,
            "position": pl.Int64,
            "doc_id": pl.Int64,
            "clicked": pl.Boolean,
        },
    )
    pool_q = np.repeat(np.arange(n_queries), docs_per_query)
    pool_d = np.arange(n_queries * docs_per_query)
    truth = pl.DataFrame({"query_id": pool_q, "doc_id": pool_d})
    if string_ids:
        log = log.with_columns(
            search_id=pl.format("s{}", "search_id"),
            query_id=pl.format("q{}", "query_id"),
            doc_id=pl.format(
                "q{}-d{}",
                pl.col("doc_id") // docs_per_query,
                pl.col("doc_id") % docs_per_query,
            ),
        )
        truth = truth.with_columns(
            query_id=pl.format("q{}", "query_id"),
            doc_id=pl.format(
                "q{}-d{}",
                pl.col("doc_id") // docs_per_query,
                pl.col("doc_id") % docs_per_query,
            ),
        )
    return Simulated(
        log=log,
        attractiveness=truth.with_columns(value=pl.Series(alpha_pool.ravel())),
        satisfaction=truth.with_columns(value=pl.Series(sigma_pool.ravel())),
        params=params,
        hidden=hidden,
    )
