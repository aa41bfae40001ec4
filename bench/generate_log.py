"""Deterministic synthetic search logs for the online benchmarks.

``python bench/generate_log.py SHAPE OUTDIR`` (or ``python bench/generate.py
SHAPE OUTDIR``) writes, for one shape, the four tables of a search log as
``data/log/`` has them (``data/README.md``, section "The search log"):

* ``searches.parquet``: ``search_id, session_id, user_id, experiment_id,
  variant, ts, query, query_id, query_class, language, device, page,
  n_results, serp_answer``;
* ``results.parquet``: ``search_id, position, doc_id, source_type,
  published_at``;
* ``events.parquet``: ``event_id, search_id, user_id, ts, event_type,
  position, doc_id, value, dwell_ms`` (clicks, adds to cart, purchases);
* ``units.parquet``: ``unit_id, experiment_id, variant`` and the pre-period
  covariates ``pre_searches, pre_searches_with_results,
  pre_clicked_searches, pre_clicks, pre_sessions, pre_add_to_carts,
  pre_purchases, pre_revenue`` of every user in the log, and
  ``pre_<quantity>`` for every other per-unit quantity an online metric
  declares (``PRE_EXTRA``: ``pre_click_reciprocal_ranks`` ...
  ``pre_impressions``, drawn consistently with those totals), so that
  CUPED runs for every metric, as on ``data/log/``;

and, for the A/B statistics on their own, ``ab_units.parquet``: a unit-level
frame (one row per unit, already aggregated, as teams whose logs are
aggregated have it) of ``unit_id, variant`` and the same quantities in the
experiment (``searches, searches_with_results, clicked_searches, clicks,
sessions, add_to_carts, purchases, revenue``) with their ``pre_`` twins.

Shapes (``LOG_SHAPES``): ``log-10m`` (10,000,000 searches by 1,000,000
users, about 50M results and 10M events; ``ab_units`` 10,000,000 units) and
``log-tiny`` (3,000 searches, for the smoke test). Each table is written in
chunks with pyarrow's ``ParquetWriter``: a chunk holds a slice of the users
and all their searches (or a slice of ``ab_units``), drawn with numpy
``default_rng([SEED, ..., chunk])`` and no Python loop over rows, so memory
stays bounded by a chunk and every run writes the same bytes.

The model, vectorised (no qrels: a result's relevance grade is drawn):

* users: activity ``Gamma(0.8)`` (searches are spread over users by it), a
  device, a click propensity (log-normal) and a shopper flag; the arm is a
  stable integer hash (splitmix64) of the user number, so about 50/50;
* searches of a user, in time order: the first starts a session; each next
  one is page 2 of the one before (if that showed 10 results), a
  reformulation (another variant of the same topic: the query shares its
  topic word, within a few seconds to minutes; after a zero-result search,
  the same query typed correctly), a new task in the session, or a new
  session (more than 30 minutes after the last action);
* queries: a pool of topics (Zipf popularity) with 4 variants each, a class
  (navigational, informational, transactional) and a language per topic;
* results: 0 (4%: a misspelt query, its last letter doubled), a full page of
  10 (27%) or 1 to 9 (``1 + Binomial(8, 0.32)``) per page, about 5.2 on
  average (so 10M searches show about 50M results); a grade per result whose chance falls with the
  position and depends on the class and the arm: the treatment is better on
  informational queries, the same on transactional, a little worse on
  navigational ones;
* events: a click on a result with chance examination(position, device) x
  attractiveness(grade) x the user's propensity; dwell log-normal by grade
  (capped at 10 minutes), the clicks of a search one after the other; on
  transactional queries an add to cart at the end of some long relevant
  visits and then some purchases, with a price drawn from the document id.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

__all__ = ["LOG_SHAPES", "LogShape", "generate_log", "main"]

SEED = 20_260_619
EXPERIMENT = "ranker-2024"
ARMS = ("control", "treatment")
PERIOD_START = dt.datetime(2024, 7, 1, tzinfo=dt.UTC)
FIRST_VISIT_DAYS = 14  # a user's first search falls in the first two weeks
PAGE_SIZE = 10
N_DOCS = 20_000_000
VARIANTS_PER_TOPIC = 4

CLASSES = ("navigational", "informational", "transactional")
CLASS_P = (0.25, 0.5, 0.25)
LANGUAGES = ("en", "de", "fr")
LANGUAGE_P = (0.6, 0.25, 0.15)
DEVICES = ("mobile", "desktop", "tablet")
DEVICE_P = (0.55, 0.35, 0.10)
SOURCES = ("web", "news", "forum", "docs", "product")
SOURCE_P = (0.45, 0.2, 0.1, 0.1, 0.15)

# searches
ZERO_P = 0.04  # a page-1 search finds nothing (a misspelt query)
FULL_P = 0.27  # a full page of 10 results; else 1 + Binomial(8, PARTIAL_P)
PARTIAL_P = 0.32
PAGE2_P = 0.12  # the next search is page 2 of a full page
REFORMULATE_P = 0.2  # ... a reformulation
RESPELL_P = 0.7  # after a zero-result search, the query typed correctly
NEW_SESSION_P = 0.5  # a new task starts a new session
ANSWER_P = 0.3  # a navigational first page shows an answer card
# seconds: (median, sigma) of a log-normal
THINK = {"page": (3.0, 0.4), "reformulate": (15.0, 0.8), "task": (60.0, 1.0)}
TASK_GAP_CAP_S = 20 * 60
SESSION_GAP_S = 30 * 60
SESSION_EXTRA_DAYS = 1.5  # mean of the exponential added to a session gap

# relevance and clicks
P_RELEVANT = {  # chance a result at position 1 is relevant, by class and arm
    ("navigational", "control"): 0.75,
    ("navigational", "treatment"): 0.70,
    ("informational", "control"): 0.50,
    ("informational", "treatment"): 0.60,
    ("transactional", "control"): 0.55,
    ("transactional", "treatment"): 0.55,
}
RELEVANT_DECAY = 0.85  # per position further down
GRADE_P = (0.5, 0.3, 0.2)  # grades 1, 2, 3 of a relevant result
ATTRACT = (0.06, 0.33, 0.55, 0.8)  # by grade 0..3
EXAMINE = 0.9  # examination falls by this per slot of the page ...
DEVICE_EXAMINE = {"mobile": 0.95, "desktop": 1.0, "tablet": 0.97}  # ... times this
CLICKINESS_SIGMA = 0.35
DWELL = ((8.0, 0.9), (25.0, 0.8), (60.0, 0.7), (90.0, 0.6))  # by grade
DWELL_CAP_S = 600
SCAN_S = (2.0, 1.0)  # first look, then per slot
ADD_TO_CART_P = 0.3  # transactional, grade >= 2, dwell >= 30 s
SHOPPER_P, SHOPPER_FACTOR, OTHER_FACTOR = 0.3, 1.6, 0.7
PURCHASE_P = 0.4
CHECKOUT = (120.0, 0.6)
PRICE_MEDIAN, PRICE_SIGMA = 45.0, 0.8

SEARCH_HEAD = ("search_id", "session_id", "user_id", "experiment_id")
PRE_COLUMNS = (
    "searches",
    "searches_with_results",
    "clicked_searches",
    "clicks",
    "sessions",
    "add_to_carts",
    "purchases",
    "revenue",
)


@dataclass(frozen=True)
class LogShape:
    """One log shape: sizes and how many chunks they are written in."""

    name: str
    searches: int
    users: int
    chunks: int
    #: rows of ``ab_units.parquet`` and its chunks
    units: int
    unit_chunks: int
    topics: int


LOG_SHAPES: dict[str, LogShape] = {
    s.name: s
    for s in (
        LogShape("log-tiny", 3_000, 300, 3, 6_000, 2, topics=300),
        LogShape("log-10m", 10_000_000, 1_000_000, 20, 10_000_000, 10, topics=200_000),
    )
}


def splitmix64(x: np.ndarray) -> np.ndarray:
    """A stable 64-bit integer hash (splitmix64's finaliser), elementwise."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _unit_float(x: np.ndarray) -> np.ndarray:
    """A hash turned into a uniform number in (0, 1)."""
    return ((splitmix64(x) >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53


def _arm(number: np.ndarray, salt: int) -> np.ndarray:
    """0 (control) or 1 (treatment): a stable hash of the unit's number."""
    return (
        splitmix64(number.astype(np.uint64) ^ np.uint64(salt)) & np.uint64(1)
    ).astype(np.int64)


def _lognormal(rng: np.random.Generator, median_sigma: tuple[float, float], n: int):
    median, sigma = median_sigma
    return median * np.exp(sigma * rng.normal(size=n))


def _normal(x: np.ndarray, salt: int) -> np.ndarray:
    """A standard normal number from a hash of ``x`` (Box-Muller), elementwise."""
    x = x.astype(np.uint64)
    u1 = _unit_float(x ^ np.uint64(salt))
    u2 = _unit_float(x ^ np.uint64(salt + 1))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def _price(doc: np.ndarray) -> np.ndarray:
    """A document's price: log-normal, the same for the same document."""
    return np.round(PRICE_MEDIAN * np.exp(PRICE_SIGMA * _normal(doc, 0x5EED)), 2)


def _segment_start(starts: np.ndarray) -> np.ndarray:
    """For each row, the index of the latest row where ``starts`` is true."""
    index = np.where(starts, np.arange(starts.size), 0)
    return np.maximum.accumulate(index)


def _pool(shape: LogShape) -> pl.DataFrame:
    """Query texts: topics x variants, with class and language per topic."""
    rng = np.random.default_rng([SEED, len(shape.name), shape.topics])
    syllables = np.array(
        "ka lo mi ra tes no vel dor pa si qua ber lin ta go ne fi mo za rek".split()
    )
    n_words = shape.topics * 2
    parts = rng.integers(0, syllables.size, size=(n_words, 3))
    length = rng.integers(2, 4, size=n_words)
    words = [
        "".join(syllables[p[:k]]) for p, k in zip(parts, length.tolist(), strict=True)
    ]
    heads = [f"{w}{i % 97}" if i >= 400 else w for i, w in enumerate(words)]
    mods = words[shape.topics :]
    m = rng.integers(0, len(mods), size=(shape.topics, 3))
    texts = []
    for t in range(shape.topics):
        head, a, b, c = heads[t], mods[m[t, 0]], mods[m[t, 1]], mods[m[t, 2]]
        texts += [head, f"{head} {a}", f"{head} {b} {c}", f"{c} {head}"]
    cls = rng.choice(len(CLASSES), size=shape.topics, p=CLASS_P)
    lang = rng.choice(len(LANGUAGES), size=shape.topics, p=LANGUAGE_P)
    return pl.DataFrame(
        {
            "query": texts,
            "query_class": np.repeat(np.array(CLASSES)[cls], VARIANTS_PER_TOPIC),
            "language": np.repeat(np.array(LANGUAGES)[lang], VARIANTS_PER_TOPIC),
        }
    ).with_row_index("query_number")


def _ids(prefix: str, numbers: np.ndarray, width: int) -> pl.Series:
    return pl.select(
        pl.concat_str(
            pl.lit(prefix),
            pl.lit(pl.Series(numbers)).cast(pl.String).str.zfill(width),
        )
    ).to_series()


def _labels(options: tuple[str, ...], index: np.ndarray) -> pl.Series:
    """``options[index]`` as a polars string column (no numpy strings)."""
    return pl.Series(options, dtype=pl.String).gather(index)


def _utc(ms: np.ndarray) -> pl.Series:
    return pl.Series(ms * 1000).cast(pl.Datetime("us", "UTC"))


def _log_chunk(
    shape: LogShape, index: int, pool: pl.DataFrame
) -> dict[str, pl.DataFrame]:
    """The users of chunk ``index`` with all their searches, results and events."""
    rng = np.random.default_rng([SEED, len(shape.name), shape.searches, index])
    u0 = index * shape.users // shape.chunks
    u1 = (index + 1) * shape.users // shape.chunks
    n = (
        index + 1
    ) * shape.searches // shape.chunks - index * shape.searches // shape.chunks
    first_search = index * shape.searches // shape.chunks
    n_users = u1 - u0

    # users
    number = np.arange(u0, u1, dtype=np.int64)
    activity = rng.gamma(0.8, 1.0, size=n_users)
    clickiness = np.exp(CLICKINESS_SIGMA * rng.normal(size=n_users))
    device = rng.choice(len(DEVICES), size=n_users, p=DEVICE_P)
    shopper = rng.random(n_users) < SHOPPER_P
    arm = _arm(number, 0xAB2024)
    counts = rng.multinomial(n, activity / activity.sum())
    user = np.repeat(np.arange(n_users), counts)  # searches, sorted by user
    first = np.r_[True, user[1:] != user[:-1]][:n]

    # what each search is: page 2, reformulation, new task or new session
    u = rng.random(n)
    raw = np.where(
        u < ZERO_P,
        0,
        np.where(
            u < ZERO_P + FULL_P, PAGE_SIZE, 1 + rng.binomial(8, PARTIAL_P, size=n)
        ),
    )
    prev = np.r_[-1, raw[:-1]]
    page2 = (prev == PAGE_SIZE) & (rng.random(n) < PAGE2_P)
    u = rng.random(n)
    reform = np.where(prev == 0, u < RESPELL_P, ~page2 & (u < REFORMULATE_P))
    page2 &= ~first
    reform &= ~first
    task_start = ~page2 & ~reform
    new_session = first | (task_start & (rng.random(n) < NEW_SESSION_P))
    group = _segment_start(~page2)
    page = (np.arange(n) - group + 1).astype(np.int32)
    n_results = np.where(page2, np.maximum(raw, 1), raw).astype(np.int32)

    # queries: a topic per task, the next variant at each reformulation
    task = np.cumsum(task_start) - 1
    n_tasks = int(task_start.sum())
    zipf = 1.0 / (np.arange(shape.topics) + 10.0)
    topic = rng.choice(shape.topics, size=n_tasks, p=zipf / zipf.sum())
    start_variant = rng.integers(0, VARIANTS_PER_TOPIC, size=n_tasks)
    step = (reform & (prev != 0)).astype(np.int64)  # a re-typed query: same variant
    steps = np.cumsum(step)
    k = steps - steps[_segment_start(task_start)]
    variant_of = (start_variant[task] + k) % VARIANTS_PER_TOPIC
    query_number = topic[task] * VARIANTS_PER_TOPIC + variant_of
    queries = pool[query_number]
    class_index = (
        queries["query_class"].replace_strict(
            {c: i for i, c in enumerate(CLASSES)}, return_dtype=pl.Int64
        )
    ).to_numpy()
    misspelt = n_results == 0
    answer = (
        (class_index == 0)
        & (page == 1)
        & (n_results > 0)
        & (_unit_float(query_number.astype(np.uint64)) < ANSWER_P)
    )

    # results
    r_search = np.repeat(np.arange(n), n_results)
    offsets = np.cumsum(n_results) - n_results
    slot = np.arange(r_search.size) - offsets[r_search]
    position = ((page[r_search] - 1) * PAGE_SIZE + slot + 1).astype(np.int32)
    s_arm = arm[user]
    r_arm = s_arm[r_search]
    key = query_number[r_search].astype(np.uint64) * np.uint64(64) + np.where(
        r_arm == 1, position ^ 1, position
    ).astype(np.uint64)  # the treatment swaps neighbours and draws new documents
    key = np.where(
        (r_arm == 1) & (_unit_float(key ^ np.uint64(0x7E57)) < 0.3),
        key ^ np.uint64(1 << 40),
        key,
    )
    doc = splitmix64(key) % np.uint64(N_DOCS)
    p_top = np.array([[P_RELEVANT[c, a] for a in ARMS] for c in CLASSES])[
        class_index[r_search], r_arm
    ]
    relevant = rng.random(r_search.size) < p_top * RELEVANT_DECAY ** (position - 1)
    grade = np.where(relevant, 1 + rng.choice(3, size=r_search.size, p=GRADE_P), 0)
    device_factor = np.array([DEVICE_EXAMINE[d] for d in DEVICES])[device[user]]
    p_click = (
        EXAMINE**slot
        * device_factor[r_search]
        * np.asarray(ATTRACT)[grade]
        * clickiness[user][r_search]
    )
    clicked = rng.random(r_search.size) < np.minimum(p_click, 0.95)

    # clicks, one after the other; carts and purchases on transactional pages
    c_row = np.flatnonzero(clicked)
    c_search = r_search[c_row]
    c_grade = grade[c_row]
    medians = np.array([d[0] for d in DWELL])[c_grade]
    sigmas = np.array([d[1] for d in DWELL])[c_grade]
    dwell = np.minimum(
        np.round(1000 * medians * np.exp(sigmas * rng.normal(size=c_row.size))),
        DWELL_CAP_S * 1000,
    ).astype(np.int64)
    before = np.cumsum(dwell) - dwell
    c_first = np.r_[True, c_search[1:] != c_search[:-1]][: c_row.size]
    before -= before[_segment_start(c_first)]
    c_offset = (
        round(SCAN_S[0] * 1000) + slot[c_row] * round(SCAN_S[1] * 1000) + before
    ).astype(np.int64)
    shop = np.where(shopper[user][c_search], SHOPPER_FACTOR, OTHER_FACTOR)
    cart = (
        (class_index[c_search] == 2)
        & (c_grade >= 2)
        & (dwell >= 30_000)
        & (rng.random(c_row.size) < ADD_TO_CART_P * shop)
    )
    buy = cart & (rng.random(c_row.size) < PURCHASE_P)
    checkout = np.round(1000 * _lognormal(rng, CHECKOUT, c_row.size)).astype(np.int64)
    cart_offset = c_offset + dwell
    buy_offset = cart_offset + checkout

    # busy time of each search: until its last logged action
    busy = np.full(n, round(SCAN_S[0] * 1000) + 3000, dtype=np.int64)
    end = np.where(buy, buy_offset, np.where(cart, cart_offset, c_offset + dwell))
    np.maximum.at(busy, c_search, end)

    # times: each search after the one before has ended, plus a think time
    think = np.zeros(n, dtype=np.int64)
    for kind, mask in (("page", page2), ("reformulate", reform), ("task", task_start)):
        think = np.where(
            mask,
            np.round(1000 * _lognormal(rng, THINK[kind], n)).astype(np.int64),
            think,
        )
    think = np.where(task_start, np.minimum(think, TASK_GAP_CAP_S * 1000), think)
    session_gap = (
        SESSION_GAP_S * 1000
        + 60_000
        + np.round(rng.exponential(SESSION_EXTRA_DAYS * 86_400_000, size=n)).astype(
            np.int64
        )
    )
    think = np.where(new_session, session_gap, think)
    gap = np.r_[0, busy[:-1]] + think
    gap[first] = 0
    elapsed = np.cumsum(gap)
    elapsed -= elapsed[_segment_start(first)]
    begin = round(PERIOD_START.timestamp() * 1000)
    start = begin + rng.integers(0, FIRST_VISIT_DAYS * 86_400_000, size=n_users)
    ts = start[user] + elapsed
    session_no = np.cumsum(new_session)
    session_no -= session_no[_segment_start(first)]

    user_ids = _ids("u", number, 8)
    search_numbers = np.arange(first_search, first_search + n)
    search_ids = _ids("s", search_numbers, 9)
    searches = pl.DataFrame(
        {
            "search_id": search_ids,
            "session_id": pl.select(
                pl.concat_str(
                    pl.lit(user_ids[user]),
                    pl.lit("-"),
                    pl.lit(pl.Series(session_no)).cast(pl.String),
                )
            ).to_series(),
            "user_id": user_ids[user],
            "variant": _labels(ARMS, s_arm),
            "ts": _utc(ts),
            "query": queries["query"],
            "query_id": queries["query_number"].cast(pl.String),
            "query_class": queries["query_class"],
            "language": queries["language"],
            "device": _labels(DEVICES, device[user]),
            "page": page,
            "n_results": n_results,
            "serp_answer": answer,
        }
    ).with_columns(
        experiment_id=pl.lit(EXPERIMENT),
        query=pl.when(pl.Series(misspelt))
        .then(pl.concat_str("query", pl.col("query").str.slice(-1)))
        .otherwise("query"),
    )
    searches = searches.select(
        "search_id",
        "session_id",
        "user_id",
        "experiment_id",
        *[c for c in searches.columns if c not in SEARCH_HEAD],
    )

    # a document's source and age (before the period) come from its id
    age_days = np.clip(np.exp(np.log(120.0) + 1.5 * _normal(doc, 0xA9E)), 0.01, 5000)
    source = np.searchsorted(
        np.cumsum(SOURCE_P), _unit_float(doc ^ np.uint64(0x50C)), side="right"
    ).clip(max=len(SOURCES) - 1)
    results = pl.DataFrame(
        {
            "search_id": search_ids.gather(r_search),
            "position": position,
            "doc_id": _ids("d", doc.astype(np.int64), 8),
            "source_type": _labels(SOURCES, source),
            "published_at": _utc(
                begin - np.round(age_days * 86_400_000).astype(np.int64)
            ),
        }
    )

    # events: clicks, then carts and purchases, in time order per search
    kinds = np.concatenate(
        [
            np.zeros(c_row.size, np.int8),
            np.ones(int(cart.sum()), np.int8),
            np.full(int(buy.sum()), 2, np.int8),
        ]
    )
    e_click = np.concatenate(
        [np.arange(c_row.size), np.flatnonzero(cart), np.flatnonzero(buy)]
    )
    e_offset = np.concatenate([c_offset, cart_offset[cart], buy_offset[buy]])
    order = np.lexsort((e_offset, c_search[e_click]))
    kinds, e_click, e_offset = kinds[order], e_click[order], e_offset[order]
    e_search = c_search[e_click]
    e_doc = doc[c_row[e_click]]
    value = np.where(kinds == 2, _price(e_doc), np.nan)
    events = pl.DataFrame(
        {
            "event_id": _ids(f"e{index:03d}", np.arange(e_click.size), 9),
            "search_id": search_ids.gather(e_search),
            "user_id": user_ids[user[e_search]],
            "ts": _utc(ts[e_search] + e_offset),
            "event_type": _labels(("click", "add_to_cart", "purchase"), kinds),
            "position": position[c_row[e_click]],
            "doc_id": _ids("d", e_doc.astype(np.int64), 8),
            "value": value,
            "dwell_ms": np.where(kinds == 0, dwell[e_click], -1),
        }
    ).with_columns(
        value=pl.col("value").fill_nan(None),
        dwell_ms=pl.when(pl.col("dwell_ms") >= 0).then("dwell_ms"),
    )

    # units: the users in the log, with pre-period covariates from the same
    # activity, propensity and shopper flag
    seen = counts > 0
    mean_searches = n / shape.users * activity / 0.8
    units = (
        _pre_period(rng, mean_searches, clickiness, shopper)
        .with_columns(
            unit_id=user_ids,
            experiment_id=pl.lit(EXPERIMENT),
            variant=_labels(ARMS, arm),
        )
        .filter(pl.Series(seen))
    )
    units = units.select(
        "unit_id", "experiment_id", "variant", *[f"pre_{c}" for c in PRE_COLUMNS]
    )
    # the other per-unit quantities of the online metrics, from a stream of
    # their own (so that the columns above keep their values)
    extra = np.random.default_rng([SEED, len(shape.name), shape.searches, index, 2])
    units = pl.concat([units, _pre_extra(extra, units)], how="horizontal")
    return {"searches": searches, "results": results, "events": events, "units": units}


#: The per-unit quantities of the online metrics that ``PRE_COLUMNS`` lacks
PRE_EXTRA = (
    "click_reciprocal_ranks",
    "paul_scores",
    "first_click_seconds",
    "dwell_seconds",
    "clicks_with_dwell",
    "sat_clicks",
    "abandoned_searches",
    "good_abandoned_searches",
    "bad_abandoned_searches",
    "reformulated_searches",
    "zero_result_searches",
    "searches_with_add_to_cart",
    "searches_with_purchase",
    "queries",
    "successful_sessions",
    "clicked_results",
    "impressions",
)


def _pre_extra(rng: np.random.Generator, units: pl.DataFrame) -> pl.DataFrame:
    """Draw the other per-unit pre-period sums, consistent with the unit's totals.

    Every online metric's ``pre_<numer>`` and ``pre_<denom>`` (the registry
    options) is then in ``units``, so CUPED runs for any of them; the draws
    follow the rates of the log's model (top click at position 1 about half
    the time, 64% of clicks of 30 s or more, 10% of pages a page 2).
    """

    def column(name: str) -> np.ndarray:
        return units[f"pre_{name}"].to_numpy().astype(np.int64)

    searches, with_results = column("searches"), column("searches_with_results")
    clicked, clicks = column("clicked_searches"), column("clicks")
    sessions, carts = column("sessions"), column("add_to_carts")
    purchases = column("purchases")
    top = rng.binomial(clicked, 0.55)
    first = rng.binomial(clicks, 0.55)
    abandoned = np.maximum(with_results - clicked, 0)
    good = rng.binomial(abandoned, 0.1)
    values = {
        "click_reciprocal_ranks": top + 0.35 * (clicked - top),
        "paul_scores": first + 0.3 * (clicks - first),
        "first_click_seconds": np.where(
            clicked > 0, rng.gamma(np.maximum(clicked, 1), 8.0), 0.0
        ),
        "dwell_seconds": np.where(
            clicks > 0, rng.gamma(np.maximum(clicks, 1) * 0.8, 75.0), 0.0
        ),
        "clicks_with_dwell": clicks,
        "sat_clicks": rng.binomial(clicks, 0.64),
        "abandoned_searches": abandoned,
        "good_abandoned_searches": good,
        "bad_abandoned_searches": rng.binomial(abandoned - good, 0.3),
        "reformulated_searches": rng.binomial(searches, 0.15),
        "zero_result_searches": searches - with_results,
        "searches_with_add_to_cart": np.minimum(carts, searches),
        "searches_with_purchase": np.minimum(purchases, searches),
        "queries": searches - rng.binomial(searches, 0.1),
        "successful_sessions": rng.binomial(sessions, 0.5),
        "clicked_results": clicks,
        "impressions": 10 * with_results,
    }
    return pl.DataFrame(
        {f"pre_{name}": np.asarray(values[name], np.float64) for name in PRE_EXTRA}
    )


def _pre_period(
    rng: np.random.Generator,
    mean_searches: np.ndarray,
    clickiness: np.ndarray,
    shopper: np.ndarray,
    *,
    prefix: str = "pre_",
    new_p: float = 0.15,
    effect: np.ndarray | None = None,
) -> pl.DataFrame:
    """Per-unit totals of a period, drawn from the unit's activity and propensities.

    Used for the pre-period of ``units`` and for both periods of ``ab_units``
    (``prefix=""``, ``effect``: a factor on the click rate, the treatment's).
    """
    n = mean_searches.size
    searches = rng.poisson(mean_searches)
    searches = np.where(rng.random(n) < new_p, 0, searches)
    with_results = rng.binomial(searches, 1.0 - ZERO_P)
    ctr = np.clip(0.5 * clickiness * (1.0 if effect is None else effect), 0.0, 0.95)
    clicked = rng.binomial(with_results, ctr)
    clicks = clicked + rng.poisson(0.35 * clicked)
    sessions = np.where(
        searches > 0, 1 + rng.binomial(np.maximum(searches - 1, 0), NEW_SESSION_P), 0
    )
    shop = np.where(shopper, SHOPPER_FACTOR, OTHER_FACTOR)
    carts = rng.binomial(clicks, np.clip(0.02 * shop, 0.0, 1.0))
    purchases = rng.binomial(carts, PURCHASE_P)
    revenue = np.round(
        purchases * PRICE_MEDIAN * np.exp(PRICE_SIGMA * rng.normal(size=n)), 2
    )
    values = (
        searches,
        with_results,
        clicked,
        clicks,
        sessions,
        carts,
        purchases,
        revenue,
    )
    return pl.DataFrame(
        {
            f"{prefix}{name}": value.astype(np.float64) if prefix else value
            for name, value in zip(PRE_COLUMNS, values, strict=True)
        }
    )


def _units_chunk(shape: LogShape, index: int) -> pl.DataFrame:
    """Rows of ``ab_units.parquet``: one per unit, both periods summed."""
    rng = np.random.default_rng([SEED, len(shape.name), shape.units, index, 1])
    a = index * shape.units // shape.unit_chunks
    b = (index + 1) * shape.units // shape.unit_chunks
    number = np.arange(a, b, dtype=np.int64)
    n = number.size
    activity = rng.gamma(0.8, 1.25, size=n)
    clickiness = np.exp(CLICKINESS_SIGMA * rng.normal(size=n))
    shopper = rng.random(n) < SHOPPER_P
    arm = _arm(number, 0xAB2024)
    mean = 9.0 * activity
    now = _pre_period(
        rng,
        mean,
        clickiness,
        shopper,
        prefix="",
        new_p=0.0,
        effect=np.where(arm == 1, 1.02, 1.0),
    ).with_columns(  # a unit is in the experiment from its first search
        searches=pl.col("searches").clip(lower_bound=1),
        sessions=pl.col("sessions").clip(lower_bound=1),
    )
    before = _pre_period(rng, mean, clickiness, shopper)
    return pl.concat([now, before], how="horizontal").select(
        [
            _ids("u", number, 9).alias("unit_id"),
            _labels(ARMS, arm).alias("variant"),
            *now.columns,
            *before.columns,
        ]
    )


def _write(parts: Any, out: Path, names: tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Write each chunk's tables with one ``ParquetWriter`` per table."""
    import pyarrow.parquet as pq

    writers: dict[str, Any] = {}
    rows = dict.fromkeys(names, 0)
    try:
        for tables in parts:
            for name in names:
                table = tables[name].to_arrow()
                if name not in writers:
                    writers[name] = pq.ParquetWriter(
                        out / f"{name}.parquet", table.schema, compression="zstd"
                    )
                writers[name].write_table(table)
                rows[name] += table.num_rows
            del tables
    finally:
        for writer in writers.values():
            writer.close()
    return {
        name: {"rows": rows[name], "bytes": (out / f"{name}.parquet").stat().st_size}
        for name in names
    }


def generate_log(shape_name: str, outdir: str | Path) -> dict[str, Any]:
    """Write the log of one shape into ``outdir``; return rows and bytes per file.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     info = generate_log("log-tiny", tmp)
    >>> info["searches"]["rows"], info["ab_units"]["rows"]
    (3000, 6000)
    """
    shape = LOG_SHAPES[shape_name]
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    pool = _pool(shape)
    info: dict[str, Any] = {"shape": shape.name}
    info |= _write(
        (_log_chunk(shape, i, pool) for i in range(shape.chunks)),
        out,
        ("searches", "results", "events", "units"),
    )
    info |= _write(
        ({"ab_units": _units_chunk(shape, i)} for i in range(shape.unit_chunks)),
        out,
        ("ab_units",),
    )
    return info


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python bench/generate_log.py SHAPE OUTDIR``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", choices=sorted(LOG_SHAPES))
    parser.add_argument("outdir")
    args = parser.parse_args(argv)
    info = generate_log(args.shape, args.outdir)
    print(
        " ".join(
            f"{k}={v['rows']}rows/{v['bytes']}B" if isinstance(v, dict) else f"{k}={v}"
            for k, v in info.items()
        ),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
