"""Propensities and counterfactual click metrics: recovery on simulated logs, bad input.

Tolerances come from the sample sizes: an estimate of theta_k / theta_1 is a
ratio of two click-through rates, whose relative standard error is about
sqrt(1 / C_k + 1 / C_1), C the clicks the estimate rests on; every estimate
must lie within Z of those standard errors (Z = 4.5: a family of 10-20
estimates passes with probability > 0.999 when the errors are normal).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from click_simulation import simulate

import ireval_df as ie
from ireval_df.errors import DataError, MetricSpecError, OptionError, SchemaError
from ireval_df.online import (
    click_frame,
    counterfactual,
    example_log,
    fit_click_model,
    propensities,
    read_log,
)

Z = 4.5
THETA = 1.0 / np.arange(1, 11) ** 0.8


def _tolerance(log: pl.DataFrame, theta: np.ndarray, factor: float = 1.0) -> np.ndarray:
    clicks = (
        log.filter(pl.col("clicked"))
        .group_by("position")
        .len()
        .sort("position")["len"]
        .to_numpy()
        .astype(float)
    )
    depth = len(theta)
    clicks = clicks[:depth]
    rel = np.sqrt(1.0 / clicks + 1.0 / clicks[0])
    return Z * factor * theta / theta[0] * rel


def _production(
    n_searches: int,
    *,
    seed: int,
    flag: str | None = None,
    share: float = 1.0,
    depth: int = 10,
    n_queries: int = 30,
    docs: int = 15,
) -> tuple[pl.DataFrame, np.ndarray]:
    """A PBM user on a fixed production ranking (docs by attractiveness).

    ``flag``: ``"randtop<n>"`` shuffles the top n of a ``share`` of the
    searches; ``"swap"`` swaps position 1 with a uniform k in 1..depth
    (``swap1``: unchanged, a control). Returns the log and the
    attractiveness by (query, pool index).
    """
    rng = np.random.default_rng(seed)
    alpha = np.sort(rng.uniform(0.05, 0.9, (n_queries, docs)), axis=1)[:, ::-1]
    query = rng.integers(0, n_queries, n_searches)
    order = np.tile(np.arange(depth), (n_searches, 1))
    flags = np.full(n_searches, None, dtype=object)
    chosen = rng.random(n_searches) < share
    if flag is not None and flag.startswith("randtop"):
        n = int(flag[len("randtop") :])
        for i in np.flatnonzero(chosen):
            order[i, :n] = rng.permutation(n)
        flags[chosen] = flag
    elif flag == "swap":
        ks = rng.integers(1, depth + 1, n_searches)
        for i in np.flatnonzero(chosen):
            k = ks[i]
            order[i, 0], order[i, k - 1] = order[i, k - 1], order[i, 0]
            flags[i] = f"swap{k}"
    a = alpha[query[:, None], order]
    clicked = rng.random((n_searches, depth)) < THETA[None, :depth] * a
    frame = pl.DataFrame(
        {
            "search_id": np.repeat(np.arange(n_searches), depth),
            "query_id": [f"q{q}" for q in np.repeat(query, depth)],
            "position": np.tile(np.arange(1, depth + 1), n_searches),
            "doc_id": [
                f"q{q}-d{d}"
                for q, d in zip(np.repeat(query, depth), order.ravel(), strict=True)
            ],
            "clicked": clicked.ravel(),
            "randomization": np.repeat(flags, depth).tolist(),
        },
        schema_overrides={"randomization": pl.String},
    )
    return frame, alpha


# --- the flat frame ---------------------------------------------------------------------------


def test_click_frame_of_a_log():
    flat = click_frame(example_log())
    assert flat.columns == ["search_id", "query_id", "position", "doc_id", "clicked"]
    assert flat.height == 16
    assert flat.filter(pl.col("clicked")).select("search_id", "position").rows() == [
        ("s1", 2),
        ("s4", 1),
    ]
    assert flat.filter(pl.col("search_id") == "s2")["query_id"].unique().to_list() == [
        "blue hat"
    ]


def test_click_frame_counts_clicks_it_cannot_place():
    base = example_log()
    events = base.events.drop(
        [c for c in base.events.columns if c.startswith("__ireval")]
    ).filter(pl.col("event_type") == "click")
    unplaced = events.head(1).with_columns(
        event_id=pl.lit("e9"), position=pl.lit(None, dtype=events["position"].dtype)
    )
    log = read_log(
        searches=base.searches.select("search_id", "user_id", "ts", "variant", "query"),
        results=base.results.select("search_id", "position", "doc_id"),
        events=pl.concat([events, unplaced]),
    )
    with pytest.warns(ie.errors.LogWarning, match="1 click"):
        flat = click_frame(log)
    assert flat["clicked"].sum() == 2


def test_fit_click_model_takes_a_search_log():
    log = read_log("data/log")
    with pytest.warns(ie.errors.LogWarning, match="later results page"):
        model = fit_click_model(log, "PBM", min_impressions=0)
    with pytest.warns(ie.errors.LogWarning):
        flat = click_frame(log, first_page=True)
    direct = fit_click_model(flat, "PBM", min_impressions=0)
    assert model.examination is not None
    assert direct.examination is not None
    assert model.examination.equals(direct.examination)


# --- recovery ----------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["pbm", "pivot", "adjacent_chain", "all_pairs"])
def test_recovery_on_shuffled_logs(method):
    sim = simulate("PBM", n_searches=20_000, seed=3)
    theta = sim.params["theta"]
    got = propensities(sim.log, method, n_bootstrap=0)
    assert got["position"].to_list() == list(range(1, 11))
    assert got["propensity"][0] == 1.0
    factor = (
        1.0 if method != "adjacent_chain" else math.sqrt(9)
    )  # errors add up the chain
    tol = _tolerance(sim.log, theta, factor)
    err = np.abs(got["propensity"].to_numpy() - theta / theta[0])
    assert (err <= tol).all(), (err, tol)
    assert got["n_impressions"].to_list() == [20_000] * 10


def test_chain_breaks_where_no_pair_links_neighbours():
    """A second ranker (10% of traffic) swaps neighbours (1,2), (3,4), ...: no (2,3) pairs."""
    frame, _ = _production(5_000, seed=5)
    second = np.random.default_rng(5).random(5_000) < 0.1
    ranker = pl.DataFrame({"search_id": np.arange(5_000), "second": second})
    swapped = (
        frame.join(ranker, on="search_id")
        .with_columns(
            position=pl.when("second")
            .then(pl.col("position") + 1 - 2 * ((pl.col("position") + 1) % 2))
            .otherwise(pl.col("position"))
        )
        .drop("second")
    )
    with pytest.warns(ie.errors.IrevalWarning, match="no interventions"):
        chain = propensities(swapped, "adjacent_chain", n_bootstrap=0)
    with pytest.warns(ie.errors.IrevalWarning, match="no interventions"):
        pivot = propensities(swapped, "pivot", n_bootstrap=0)
    assert chain["propensity"][1] is not None
    assert chain["propensity"][2:].is_null().all()
    assert pivot["propensity"][2:].is_null().all()
    pairs = propensities(swapped, "all_pairs", n_bootstrap=0, k=2)
    assert pairs["propensity"].is_not_null().all()


def _two_rankers() -> pl.DataFrame:
    """q1: ranker A shows (a, b) 4 times, a clicked each time; B shows (b, a)
    twice, a clicked once. q2: A shows (c, d) once, c clicked; B (d, c) once."""
    lists = [("q1", "A", ["a", "b"], "a")] * 4 + [
        ("q1", "B", ["b", "a"], "a"),
        ("q1", "B", ["b", "a"], None),
        ("q2", "A", ["c", "d"], "c"),
        ("q2", "B", ["d", "c"], None),
    ]
    rows = [
        (s, q, pos, d, d == hit, r)
        for s, (q, r, docs, hit) in enumerate(lists)
        for pos, d in enumerate(docs, start=1)
    ]
    return pl.DataFrame(
        rows,
        schema=["search_id", "query_id", "position", "doc_id", "clicked", "ranker"],
        orient="row",
    )


@pytest.mark.parametrize(
    ("weighting", "ranker", "expected"),
    [
        # Agarwal et al.: a click at k counts 1 / w(q, d, k), w the traffic of
        # the rankers that put d at k (n_A = 5 searches, n_B = 3):
        # ca = 4/5 (a at 1) + 1/5 (c at 1) = 1, cb = 1/3 (a at 2) + 0 (c at 2)
        ("traffic", "ranker", 1 / 3),
        # without the ranker: click-through rates weighted by the query's
        # searches, n_q1 = 6, n_q2 = 2: ca = 6 * 1 + 2 * 1, cb = 6 * 1/2 + 0
        ("traffic", None, 3 / 8),
        # every pair alike: ca = 1 + 1, cb = 1/2 + 0
        ("uniform", "ranker", 1 / 4),
        # n_1 n_2 / (n_1 + n_2): a 4 * 2 / 6 = 4/3, c 1/2:
        # ca = 4/3 + 1/2 = 11/6, cb = 4/3 * 1/2 = 2/3
        ("harmonic", "ranker", 4 / 11),
    ],
)
def test_harvesting_weights_by_hand(weighting, ranker, expected):
    got = propensities(
        _two_rankers(), "pivot", n_bootstrap=0, weighting=weighting, ranker=ranker
    )
    assert got["propensity"].to_list() == pytest.approx([1.0, expected])


def test_harvesting_ranker_column_from_a_log_and_bad_rankers():
    log = example_log()
    # the example log's searches have no ranker column: n_q weights, as ranker=None
    flat = click_frame(log)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert propensities(flat, "pivot", n_bootstrap=0).equals(
            propensities(flat, "pivot", n_bootstrap=0, ranker=None)
        )
    frame = _two_rankers()
    with pytest.raises(DataError, match="ranker=None"):
        propensities(
            frame.with_columns(
                ranker=pl.when(pl.col("search_id") == 0).then(None).otherwise("ranker")
            ),
            "pivot",
            n_bootstrap=0,
        )
    # only weighting='traffic' reads the ranker column
    nulls = frame.with_columns(ranker=pl.lit(None, pl.String))
    assert propensities(nulls, "pivot", n_bootstrap=0, weighting="uniform")[
        "propensity"
    ].to_list() == pytest.approx([1.0, 1 / 4])
    with pytest.raises(DataError, match="more than one ranker"):
        propensities(
            frame.with_columns(ranker=pl.format("{}{}", "ranker", "position")),
            "pivot",
            n_bootstrap=0,
        )
    with pytest.raises(OptionError, match="weighting"):
        propensities(frame, "pivot", weighting="paper")


def test_bootstrap_interval_covers_truth():
    sim = simulate("PBM", n_searches=8_000, seed=11)
    theta = sim.params["theta"] / sim.params["theta"][0]
    got = propensities(sim.log, "pivot", n_bootstrap=100, seed=1)
    low, high = got["ci_low"].to_numpy(), got["ci_high"].to_numpy()
    assert (low <= got["propensity"].to_numpy() + 1e-12).all()
    assert (got["propensity"].to_numpy() <= high + 1e-12).all()
    covered = ((low <= theta) & (theta <= high)).sum()
    assert covered >= 8  # 95% intervals: 10 positions, at least 8 cover
    again = propensities(sim.log, "pivot", n_bootstrap=100, seed=1)
    np.testing.assert_allclose(again["ci_low"].to_numpy(), low)
    by_query = propensities(sim.log, "pivot", n_bootstrap=50, cluster="query_id")
    assert by_query["ci_low"][1] is not None


def test_randtop_recovers_theta_where_naive_ctr_does_not():
    frame, _ = _production(40_000, seed=7, flag="randtop5", share=0.3)
    got = propensities(frame, "randtop", n_bootstrap=20)
    assert got["position"].to_list() == [1, 2, 3, 4, 5]
    used = frame.filter(pl.col("randomization") == "randtop5")
    tol = _tolerance(used, THETA[:5])
    err = np.abs(got["propensity"].to_numpy() - THETA[:5] / THETA[0])
    assert (err <= tol).all(), (err, tol)
    assert got["n_impressions"].to_list() == [used["search_id"].n_unique()] * 5
    # the production ranking's own CTR curve mixes examination with relevance
    naive = frame.group_by("position").agg(pl.col("clicked").mean()).sort("position")
    ratio = naive["clicked"][4] / naive["clicked"][0]
    assert ratio < THETA[4] / THETA[0] * 0.9


def test_swap_recovers_theta():
    frame, _ = _production(60_000, seed=9, flag="swap")
    got = propensities(frame, "swap", n_bootstrap=0)
    assert got["position"].to_list() == list(range(1, 11))
    # each k uses ~1/10 of the searches: clicks at k in swap<k>, at 1 elsewhere
    at_k = (
        frame.filter(
            pl.col("clicked")
            & (pl.col("randomization") == pl.format("swap{}", pl.col("position")))
        )
        .group_by("position")
        .len()
        .sort("position")["len"]
        .to_numpy()
    )
    at_1 = frame.filter(
        pl.col("clicked")
        & (pl.col("position") == 1)
        & (pl.col("randomization") == "swap1")
    ).height
    rel = THETA / THETA[0]
    tol = Z * rel[1:] * np.sqrt(1 / at_k[1:] + 1 / at_1)
    err = np.abs(got["propensity"].to_numpy()[1:] - rel[1:])
    assert (err <= tol).all(), (err, tol)


# --- counterfactual ----------------------------------------------------------------------------


def _logged_run(frame: pl.DataFrame) -> pl.DataFrame:
    """The production ranking itself: the unswapped order, as a run."""
    return (
        frame.filter(
            pl.col("randomization").is_null() | (pl.col("randomization") == "swap1")
        )
        .select("query_id", "doc_id", "position")
        .unique(["query_id", "doc_id"])
        .select("query_id", "doc_id", score=-pl.col("position").cast(pl.Float64))
    )


def test_ips_of_the_logged_ranking_is_unbiased_for_true_relevance():
    frame, alpha = _production(30_000, seed=13)
    run = _logged_run(frame)
    truth_props = {r: THETA[r - 1] / THETA[0] for r in range(1, 11)}
    got = counterfactual(
        frame, run, ["CTR@5", "DCG@10"], propensities=truth_props
    ).sort("metric")
    # true relevance: the expected clicks had every result been examined like
    # position 1, i.e. theta_1 * sum of alpha over the top k
    queries = frame.filter(pl.col("position") == 1)["query_id"]
    q = queries.str.slice(1).cast(pl.Int64).to_numpy()
    disc = 1 / np.log2(np.arange(2, 12))
    truth = {
        "CTR@5": THETA[0] * alpha[q, :5].sum(axis=1).mean(),
        "DCG@10": THETA[0] * (alpha[q, :10] * disc).sum(axis=1).mean(),
    }
    for row in got.iter_rows(named=True):
        se = (row["ci_high"] - row["ci_low"]) / (2 * 1.959964)
        assert abs(row["value"] - truth[row["metric"]]) <= Z * se, (row, truth)
        assert row["n_searches"] == 30_000
        assert row["clipped_share"] == 0.0
        assert row["unseen_share"] == 0.0
    # without the correction the estimate is far too low
    naive = counterfactual(
        frame, run, "CTR@5", propensities={r: 1.0 for r in range(1, 11)}
    )
    assert naive["value"][0] < truth["CTR@5"] * 0.8


def test_counterfactual_with_estimated_propensities_and_snips():
    frame, alpha = _production(30_000, seed=17, flag="swap")
    props = propensities(frame, "swap", n_bootstrap=0)
    run = _logged_run(frame)
    got = counterfactual(frame, run, "CTR@3", propensities=props)
    clipped = counterfactual(frame, run, "CTR@3", propensities=props, clip=0.6)
    snips = counterfactual(
        frame, run, "CTR@3", propensities=props, clip=0.6, estimator="snips"
    )
    assert clipped["clipped_share"][0] > 0
    assert clipped["value"][0] < got["value"][0]
    assert clipped["value"][0] < snips["value"][0]
    plain_snips = counterfactual(
        frame, run, "CTR@3", propensities=props, estimator="snips"
    )
    assert plain_snips["value"][0] == pytest.approx(got["value"][0])
    assert got.columns == [
        "metric",
        "estimator",
        "value",
        "ci_low",
        "ci_high",
        "n_searches",
        "clipped_share",
        "unseen_share",
    ]


def test_positivity_is_reported():
    frame, _ = _production(2_000, seed=19)
    run = pl.concat(
        [
            _logged_run(frame),
            pl.DataFrame(
                {"query_id": ["q0"], "doc_id": ["never-shown"], "score": [100.0]}
            ),
        ]
    )
    props = {r: 1.0 for r in range(1, 11)}
    with pytest.warns(ie.errors.IrevalWarning, match="never shown"):
        got, unseen = counterfactual(
            frame, run, "CTR@10", propensities=props, unseen=True
        )
    assert unseen.rows() == [
        (
            "q0",
            "never-shown",
            1,
            frame.filter(pl.col("position") == 1)
            .filter(pl.col("query_id") == "q0")
            .height,
        )
    ]
    assert 0 < got["unseen_share"][0] < 0.1


def test_ties_follow_evaluate():
    frame = pl.DataFrame(
        {
            "search_id": [1, 1],
            "query_id": ["q", "q"],
            "position": [1, 2],
            "doc_id": ["a", "b"],
            "clicked": [False, True],
        }
    )
    run = pl.DataFrame(
        {"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 1.0]}
    )
    # tie: doc_id descending puts b first, so the click on b is in the top 1
    got = counterfactual(frame, run, "CTR@1", propensities={1: 1.0, 2: 0.5})
    assert got["value"][0] == pytest.approx(2.0)


def test_on_the_bundled_log():
    log = read_log("data/log")
    flat = click_frame(log).filter(pl.col("position") <= 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        props = propensities(log, "pbm", n_bootstrap=0, k=10)
        harvested = propensities(flat, "all_pairs", n_bootstrap=0)
        run = ie.read_run("data/runs/hybrid.run")
        got = counterfactual(flat, run, ["CTR@10", "DCG@10"], propensities=props)
    assert harvested.height == 10
    assert props["propensity"].is_not_null().all()
    assert got["value"].is_not_null().all()
    assert (got["n_searches"] > 4000).all()


# --- bad input ---------------------------------------------------------------------------------


def test_randomisation_column_missing_or_empty():
    sim = simulate("PBM", n_searches=200, seed=1)
    with pytest.raises(SchemaError, match="'randomization'"):
        propensities(sim.log, "randtop")
    flagged = sim.log.with_columns(randomization=pl.lit("swap3"))
    with pytest.raises(DataError, match="randtop<n>"):
        propensities(flagged, "randtop")


def test_positions_without_interventions_warn():
    frame, _ = _production(2_000, seed=2)  # one fixed ranking: no document moves
    with pytest.warns(ie.errors.IrevalWarning, match="no interventions"):
        got = propensities(frame, "pivot", n_bootstrap=0)
    assert got["propensity"][1:].is_null().all()


def test_zero_propensity():
    frame = pl.DataFrame(
        {
            "search_id": [1, 1, 2, 2],
            "query_id": "q",
            "position": [1, 2, 1, 2],
            "doc_id": ["a", "b", "b", "a"],
            "clicked": [True, False, True, False],
        }
    )
    with pytest.warns(ie.errors.IrevalWarning, match="propensity of zero"):
        got = propensities(frame, "pivot", n_bootstrap=0)
    assert got["propensity"].to_list() == [1.0, 0.0]
    clicks_at_2 = frame.with_columns(clicked=pl.col("position") == 2)
    with pytest.raises(DataError, match="clip="):
        counterfactual(clicks_at_2, frame, "CTR@2", propensities=got)
    run = pl.DataFrame(
        {"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [2.0, 1.0]}
    )
    fine = counterfactual(clicks_at_2, run, "CTR@2", propensities=got, clip=0.1)
    assert fine["value"][0] == pytest.approx(10.0)
    assert fine["clipped_share"][0] == 1.0
    # clicks at both positions: the one at propensity zero still has an
    # infinite unclipped weight, so all of it is clipped (the share was -10)
    both = frame.with_columns(clicked=pl.lit(value=True))
    mixed = counterfactual(both, run, "CTR@2", propensities=got, clip=0.1)
    assert mixed["value"][0] == pytest.approx((1 + 10 + 1 + 10) / 2)
    assert mixed["clipped_share"][0] == 1.0


def test_null_propensity_says_where_it_comes_from():
    frame = pl.DataFrame(
        {
            "search_id": [1, 1],
            "query_id": "q",
            "position": [1, 2],
            "doc_id": ["a", "b"],
            "clicked": [True, False],
        }
    )
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(DataError, match=r"(?s)null, NaN.*Hint: drop those positions"):
        counterfactual(frame, run, propensities={1: 1.0, 2: None})
    with pytest.raises(DataError, match="whole-number positions"):
        counterfactual(frame, run, propensities={"top": 1.0})


def test_flat_frames_are_checked_as_the_click_models_check_them():
    frame = pl.DataFrame(
        {
            "search_id": [1, 1, 2, 2],
            "query_id": "q",
            "position": [1, 2, 1, 2],
            "doc_id": ["a", "b", "b", "a"],
            "clicked": [True, False, False, True],
        }
    )
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    props = {1: 1.0, 2: 0.5}
    text_clicks = frame.with_columns(clicked=pl.Series(["yes", "no", "no", "yes"]))
    with pytest.raises(SchemaError, match="'clicked' has dtype String"):
        propensities(text_clicks, "pivot", n_bootstrap=0)  # was a polars error
    with pytest.raises(DataError, match="other than 0 and 1"):
        counterfactual(
            frame.with_columns(clicked=pl.Series([2, 0, 0, 1])), run, propensities=props
        )
    twice = frame.with_columns(position=pl.Series([1, 1, 1, 2]))
    with pytest.raises(DataError, match="slot"):  # was accepted by harvesting
        propensities(twice, "pivot", n_bootstrap=0)
    with pytest.raises(DataError, match="slot"):
        counterfactual(twice, run, propensities=props)


def test_bad_options():
    sim = simulate("PBM", n_searches=100, seed=1)
    with pytest.raises(OptionError, match="method="):
        propensities(sim.log, "em")
    with pytest.raises(OptionError, match="pbm"):
        propensities(sim.log, "pivot", iterations=3)
    with pytest.raises(MetricSpecError, match="CTR@k"):
        counterfactual(sim.log, sim.log, "nDCG@10", propensities={1: 1.0})
    with pytest.raises(SchemaError, match="clicked"):
        propensities(sim.log.drop("clicked"))
    with pytest.raises(DataError, match="no propensity"):
        counterfactual(
            sim.log,
            sim.log.select("query_id", "doc_id", score=-pl.col("position")).unique(
                ["query_id", "doc_id"]
            ),
            "CTR@3",
            propensities={1: 1.0},
        )


def test_ips_is_unbiased_over_replications():
    """The mean of 30 IPS estimates is within Z standard errors of the truth; naive is not."""
    values, naive, truths = [], [], []
    props = {r: THETA[r - 1] / THETA[0] for r in range(1, 11)}
    ones = {r: 1.0 for r in range(1, 11)}
    for seed in range(30):
        frame, alpha = _production(2_000, seed=100 + seed)
        run = _logged_run(frame)
        q = (
            frame.filter(pl.col("position") == 1)["query_id"]
            .str.slice(1)
            .cast(pl.Int64)
        )
        truths.append(THETA[0] * alpha[q.to_numpy(), :3].sum(axis=1).mean())
        values.append(
            counterfactual(frame, run, "CTR@3", propensities=props)["value"][0]
        )
        naive.append(counterfactual(frame, run, "CTR@3", propensities=ones)["value"][0])
    err = np.array(values) - np.array(truths)
    se = err.std(ddof=1) / math.sqrt(len(err))
    assert abs(err.mean()) <= Z * se
    naive_err = np.array(naive) - np.array(truths)
    assert naive_err.mean() < -10 * se
