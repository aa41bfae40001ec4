"""Click models: hand-derived values, brute force over hidden states, recovery, bad input.

* Closed forms (CM, DCM, SDBN) and one PBM EM step are derived by hand in
  the comments.
* Every model's full and conditional click probabilities, and one DBN EM
  step, are checked against a brute-force enumeration of the user's hidden
  coins (examination, attraction, satisfaction, going on) on lists of 3.
* Parameter recovery: logs simulated from known values (tests/
  click_simulation.py), with tolerances from the sample sizes: each
  estimate must lie within ``z`` standard errors of the truth, the standard
  error from the counts the simulation reports (or from the Fisher
  information where the model hides the count), and ``z`` set so that a
  family of P estimates all pass with probability 0.999 when the errors are
  normal (``_z``).
"""

from __future__ import annotations

import itertools
import math
import warnings
from statistics import NormalDist

import numpy as np
import pandas as pd
import polars as pl
import pytest
from click_simulation import simulate

import ireval_df as ie
from ireval_df.errors import (
    DataError,
    IdentificationWarning,
    IrevalWarning,
    OptionError,
    SchemaError,
)
from ireval_df.online import MODELS, ClickModel, fit_click_model

PAIR = ["query_id", "doc_id"]


def log_of(*searches: tuple[str, list[tuple[str, int]]]) -> pl.DataFrame:
    """A click log from (query, [(doc, click), ...]) per search, positions in order."""
    rows = [
        (f"s{i}", query, position, doc, bool(click))
        for i, (query, results) in enumerate(searches)
        for position, (doc, click) in enumerate(results, start=1)
    ]
    return pl.DataFrame(
        rows,
        schema=["search_id", "query_id", "position", "doc_id", "clicked"],
        orient="row",
    )


def fit(frame, model, **options):
    options.setdefault("min_impressions", 0)
    return fit_click_model(frame, model, **options)


def values(frame: pl.DataFrame) -> dict:
    """A parameter frame as a dict: by doc_id (one query), position, or key tuple."""
    if "doc_id" in frame.columns:
        return dict(zip(frame["doc_id"], frame["value"], strict=True))
    keys = [c for c in frame.columns if c != "value"]
    if len(keys) == 1:
        return dict(zip(frame[keys[0]], frame["value"], strict=True))
    return {tuple(row[:-1]): row[-1] for row in frame.select(*keys, "value").rows()}


# --- closed forms by hand -------------------------------------------------------

#: s0: a clicked at 1, b skipped at 2, c clicked at 3
#: s1: b skipped at 1, a clicked at 2, c skipped at 3
#: s2: nothing clicked (a, b, c)
SMALL = log_of(
    ("q", [("a", 1), ("b", 0), ("c", 1)]),
    ("q", [("b", 0), ("a", 1), ("c", 0)]),
    ("q", [("a", 0), ("b", 0), ("c", 0)]),
)


def test_cascade_counts_results_down_to_the_first_click():
    # a: clicked in s0 (1/1), clicked in s1 (1/1), skipped in s2 (0/1) -> 3/5
    # b: below the first click in s0 (not counted), skipped in s1, s2 -> 1/4
    # c: below the first click in s0, s1; skipped in s2 -> 1/3
    cm = fit(SMALL, "CM")
    assert values(cm.attractiveness) == pytest.approx(
        {"a": 3 / 5, "b": 1 / 4, "c": 1 / 3}
    )
    assert cm.examination is None
    assert cm.satisfaction is None
    assert cm.continuation is None
    assert cm.relevance().equals(cm.attractiveness)


def test_sdbn_counts_down_to_the_last_click_and_satisfaction_by_the_last_click():
    # down to the last click: s0 all three, s1 b and a, s2 (no click) all three
    # a: 2 clicks of 3 -> 3/5; b: 0 of 3 -> 1/5; c: 1 of 2 -> 2/4
    # satisfaction: a clicked twice, last in s1 only -> 2/4; c clicked once,
    # last in s0 -> 2/3; b never clicked -> 1/2
    sdbn = fit(SMALL, "SDBN")
    assert values(sdbn.attractiveness) == pytest.approx(
        {"a": 3 / 5, "b": 1 / 5, "c": 1 / 2}
    )
    assert values(sdbn.satisfaction) == pytest.approx(
        {"a": 1 / 2, "b": 1 / 2, "c": 2 / 3}
    )
    relevance = values(sdbn.relevance())
    assert relevance == pytest.approx({"a": 3 / 10, "b": 1 / 10, "c": 1 / 3})


def test_dcm_continuation_by_position():
    # clicks at position 1 (s0: not last -> went on), 3 (s0: last), 2 (s1: last)
    # lambda_1 = (1+1)/(1+2), lambda_2 = (0+1)/(1+2), lambda_3 = (0+1)/(1+2)
    dcm = fit(SMALL, "DCM")
    assert values(dcm.continuation) == pytest.approx({1: 2 / 3, 2: 1 / 3, 3: 1 / 3})
    assert dcm.attractiveness.equals(fit(SMALL, "SDBN").attractiveness)


def test_one_pbm_iteration_by_hand():
    # from 0.5 everywhere, a skip's posterior is (1 - 0.5) 0.5 / (1 - 0.25) = 1/3
    # for attractiveness and for examination; a click's is 1.
    # a: clicks 2, skip 1 -> (2 + 1/3 + 1) / (3 + 2) = 2/3
    # b: skips 3 -> (1 + 1) / (3 + 2) = 2/5; c: click 1, skips 2 -> (1 + 2/3 + 1) / 5
    # position 1: click, skip, skip -> (1 + 2/3 + 1) / 5; 2: (1 + 2/3 + 1) / 5;
    # 3: (1 + 2/3 + 1) / 5
    pbm = fit(SMALL, "PBM", iterations=1)
    assert values(pbm.attractiveness) == pytest.approx(
        {"a": 2 / 3, "b": 2 / 5, "c": (8 / 3) / 5}
    )
    assert values(pbm.examination) == pytest.approx({r: (8 / 3) / 5 for r in (1, 2, 3)})
    untrained = fit(SMALL, "PBM", iterations=0)
    assert set(untrained.attractiveness["value"]) == {0.5}


def test_ubm_examination_keys_are_position_and_last_click_above():
    ubm = fit(SMALL, "UBM")
    keys = set(ubm.examination.select("position", "prev_click_position").rows())
    # s0: (1,0) (2,1) (3,1); s1: (1,0) (2,0) (3,2); s2: (1,0) (2,0) (3,0)
    assert keys == {(1, 0), (2, 1), (3, 1), (2, 0), (3, 2), (3, 0)}


def test_prior_and_clip():
    # prior (0, 0) is the plain MLE: c is clicked 1 of 3 times at or above
    # the first click... c: only s2 counts (0 of 1) -> 0, clipped to clip
    cm = fit(SMALL, "CM", prior=(0, 0), clip=1e-3)
    assert values(cm.attractiveness) == pytest.approx(
        {"a": 2 / 3, "b": 0.001, "c": 0.001}
    )
    # Beta(2, 3) pseudo-counts: a (2 + 2) / (3 + 5)
    assert values(fit(SMALL, "CM", prior=(2, 3)).attractiveness)["a"] == pytest.approx(
        4 / 8
    )


def test_a_pair_never_examined_gets_the_prior_mean():
    # b is only ever shown below a click: CM has no evidence about it
    log = log_of(("q", [("a", 1), ("b", 0)]), ("q", [("a", 1), ("b", 0)]))
    assert values(fit(log, "CM").attractiveness)["b"] == 0.5
    assert values(fit(log, "CM", prior=(0, 0), init=0.3).attractiveness)["b"] == 0.3


# --- brute force over the hidden coins ----------------------------------------------


def _coins(model: str) -> int:
    return {"PBM": 2, "UBM": 2, "CM": 1, "DCM": 2, "SDBN": 2, "DBN": 3}[model]


def _enumerate(model: str, params: dict, depth: int):
    """Yield (probability, clicks, attracted, satisfied, examined) of every coin draw.

    Coins per position: attracted (alpha), then PBM/UBM examined, DCM going
    on after a click (lambda), SDBN/DBN satisfied (sigma), DBN going on
    (gamma).
    """
    n = _coins(model)
    for draw in itertools.product([0, 1], repeat=n * depth):
        coins = [draw[r * n : (r + 1) * n] for r in range(depth)]
        p = 1.0
        clicks, attracted, satisfied, examined = [], [], [], []
        e, last = 1, 0
        for r in range(depth):
            a = params["alpha"][r]
            coin = coins[r]
            p *= a if coin[0] else 1 - a
            if model in ("PBM", "UBM"):
                t = params["theta"][r] if model == "PBM" else params["ubm"][r][last]
                p *= t if coin[1] else 1 - t
                e = coin[1]
            c = int(e and coin[0])
            s = 0
            if model == "DCM":
                lam = params["lambda"][r]
                p *= lam if coin[1] else 1 - lam
            if model in ("SDBN", "DBN"):
                sig = params["sigma"][r]
                p *= sig if coin[1] else 1 - sig
                s = int(c and coin[1])
            if model == "DBN":
                g = params["gamma"]
                p *= g if coin[2] else 1 - g
            clicks.append(c)
            attracted.append(coin[0])
            satisfied.append(s)
            examined.append(e)
            if c:
                last = r + 1
            if model == "CM":
                e = int(e and not c)
            elif model == "DCM":
                e = int(e and (not c or coin[1]))
            elif model == "SDBN":
                e = int(e and not s)
            elif model == "DBN":
                e = int(e and not s and coin[2])
        yield p, tuple(clicks), attracted, satisfied, examined


def _random_params(rng, depth):
    return {
        "alpha": rng.uniform(0.1, 0.9, depth),
        "sigma": rng.uniform(0.1, 0.9, depth),
        "theta": rng.uniform(0.2, 1.0, depth),
        "lambda": rng.uniform(0.1, 0.9, depth),
        "gamma": float(rng.uniform(0.3, 0.95)),
        "ubm": rng.uniform(0.2, 1.0, (depth, depth)),
    }


def _model_of(model: str, params: dict, depth: int) -> ClickModel:
    """A ClickModel holding given parameters for one query with docs d1..dK."""
    docs = [f"d{r + 1}" for r in range(depth)]
    attract = pl.DataFrame({"query_id": "q", "doc_id": docs, "value": params["alpha"]})
    sat = pl.DataFrame({"query_id": "q", "doc_id": docs, "value": params["sigma"]})
    positions = list(range(1, depth + 1))
    examination = continuation = satisfaction = None
    if model == "PBM":
        examination = pl.DataFrame({"position": positions, "value": params["theta"]})
    if model == "UBM":
        examination = pl.DataFrame(
            [
                (r, k, float(params["ubm"][r - 1][k]))
                for r in positions
                for k in range(r)
            ],
            schema=["position", "prev_click_position", "value"],
            orient="row",
        )
    if model == "DCM":
        continuation = pl.DataFrame({"position": positions, "value": params["lambda"]})
    if model in ("SDBN", "DBN"):
        satisfaction = sat
    if model == "DBN":
        continuation = pl.DataFrame({"value": [params["gamma"]]})
    return ClickModel(
        model=model,
        attractiveness=attract,
        examination=examination,
        satisfaction=satisfaction,
        continuation=continuation,
        impressions=attract.select(PAIR).with_columns(n_impressions=1, n_clicks=0),
        iterations=0,
        prior=(1.0, 1.0),
        init=0.5,
        clip=1e-9,
    )


@pytest.mark.parametrize("model", MODELS)
def test_click_probabilities_equal_brute_force(model):
    depth = 3
    rng = np.random.default_rng(sum(map(ord, model)))
    params = _random_params(rng, depth)
    cm = _model_of(model, params, depth)
    joint: dict[tuple[int, ...], float] = {}
    for p, clicks, *_ in _enumerate(model, params, depth):
        joint[clicks] = joint.get(clicks, 0.0) + p
    assert sum(joint.values()) == pytest.approx(1.0)
    patterns = list(itertools.product([0, 1], repeat=depth))
    log = log_of(
        *[
            ("q", [(f"d{r + 1}", c) for r, c in enumerate(pattern)])
            for pattern in patterns
        ]
    )
    full = cm.predict(log)["click_prob"].to_numpy().reshape(len(patterns), depth)
    conditional = (
        cm.predict(log, kind="conditional")["click_prob"]
        .to_numpy()
        .reshape(len(patterns), depth)
    )
    for i, pattern in enumerate(patterns):
        for r in range(depth):
            marginal = sum(p for c, p in joint.items() if c[r] == 1)
            assert full[i, r] == pytest.approx(marginal, abs=1e-12)
            above = sum(p for c, p in joint.items() if c[:r] == pattern[:r])
            clicked = sum(
                p for c, p in joint.items() if c[:r] == pattern[:r] and c[r] == 1
            )
            if above > 0:
                assert conditional[i, r] == pytest.approx(clicked / above, abs=1e-12)
    # the log-likelihood is the mean over searches of the mean log P(c_r | above)
    possible = [i for i, pattern in enumerate(patterns) if joint.get(pattern, 0) > 0]
    expected = np.mean([math.log(joint[patterns[i]]) / depth for i in possible])
    sub = log.filter(pl.col("search_id").is_in([f"s{i}" for i in possible]))
    assert cm.log_likelihood(sub) == pytest.approx(expected, abs=1e-9)


def _dbn_em_by_enumeration(sessions, iterations, depth):
    """DBN EM with expected counts summed over every coin draw (prior (1, 1))."""
    docs = sorted({d for _, results in sessions for d, _ in results})
    alpha = dict.fromkeys(docs, 0.5)
    sigma = dict.fromkeys(docs, 0.5)
    gamma = 0.5
    for _ in range(iterations):
        a_num = dict.fromkeys(docs, 1.0)
        a_den = dict.fromkeys(docs, 2.0)
        s_num = dict.fromkeys(docs, 1.0)
        s_den = dict.fromkeys(docs, 2.0)
        g_num, g_den = 1.0, 2.0
        for _, results in sessions:
            observed = tuple(c for _, c in results)
            params = {
                "alpha": [alpha[d] for d, _ in results],
                "sigma": [sigma[d] for d, _ in results],
                "gamma": gamma,
            }
            draws = [x for x in _enumerate("DBN", params, depth) if x[1] == observed]
            total = sum(x[0] for x in draws)
            for r, (doc, click) in enumerate(results):
                a_num[doc] += sum(p * att[r] for p, _, att, _, _ in draws) / total
                a_den[doc] += 1
                if click:
                    s_num[doc] += sum(p * sat[r] for p, _, _, sat, _ in draws) / total
                    s_den[doc] += 1
                if r + 1 < depth:
                    g_num += sum(p * ex[r + 1] for p, _, _, _, ex in draws) / total
                    g_den += (
                        sum(p * ex[r] * (1 - sat[r]) for p, _, _, sat, ex in draws)
                        / total
                    )
        alpha = {d: a_num[d] / a_den[d] for d in docs}
        sigma = {d: s_num[d] / s_den[d] for d in docs}
        gamma = g_num / g_den
    return alpha, sigma, gamma


@pytest.mark.parametrize("iterations", [1, 2, 5])
def test_dbn_em_equals_brute_force_expected_counts(iterations):
    rng = np.random.default_rng(iterations)
    docs = ["a", "b", "c", "d"]
    sessions = []
    for _ in range(12):
        shown = rng.permutation(docs)[:3]
        clicks = rng.random(3) < 0.4
        sessions.append(
            ("q", [(d, int(c)) for d, c in zip(shown, clicks, strict=True)])
        )
    alpha, sigma, gamma = _dbn_em_by_enumeration(sessions, iterations, 3)
    dbn = fit(log_of(*sessions), "DBN", iterations=iterations)
    assert values(dbn.attractiveness) == pytest.approx(alpha, abs=1e-12)
    assert values(dbn.satisfaction) == pytest.approx(sigma, abs=1e-12)
    assert dbn.continuation["value"].item() == pytest.approx(gamma, abs=1e-12)


def test_dbn_lists_of_unequal_length():
    # a short list has no transition out of its last result
    sessions = [
        ("q", [("a", 0), ("b", 1)]),
        ("q", [("b", 0), ("a", 0), ("c", 1)]),
        ("q", [("c", 1), ("a", 0), ("b", 0)]),
        ("q", [("a", 1)]),
    ]
    depth_of = {len(r) for _, r in sessions}
    assert depth_of == {1, 2, 3}
    # brute force per list length, then the same sums
    dbn = fit(log_of(*sessions), "DBN", iterations=3)
    docs = ["a", "b", "c"]
    alpha = dict.fromkeys(docs, 0.5)
    sigma = dict.fromkeys(docs, 0.5)
    gamma = 0.5
    for _ in range(3):
        a_num, a_den = dict.fromkeys(docs, 1.0), dict.fromkeys(docs, 2.0)
        s_num, s_den = dict.fromkeys(docs, 1.0), dict.fromkeys(docs, 2.0)
        g_num, g_den = 1.0, 2.0
        for _, results in sessions:
            depth = len(results)
            params = {
                "alpha": [alpha[d] for d, _ in results],
                "sigma": [sigma[d] for d, _ in results],
                "gamma": gamma,
            }
            observed = tuple(c for _, c in results)
            draws = [x for x in _enumerate("DBN", params, depth) if x[1] == observed]
            total = sum(x[0] for x in draws)
            for r, (doc, click) in enumerate(results):
                a_num[doc] += sum(p * att[r] for p, _, att, _, _ in draws) / total
                a_den[doc] += 1
                if click:
                    s_num[doc] += sum(p * sat[r] for p, _, _, sat, _ in draws) / total
                    s_den[doc] += 1
                if r + 1 < depth:
                    g_num += sum(p * ex[r + 1] for p, _, _, _, ex in draws) / total
                    g_den += (
                        sum(p * ex[r] * (1 - sat[r]) for p, _, _, sat, ex in draws)
                        / total
                    )
        alpha = {d: a_num[d] / a_den[d] for d in docs}
        sigma = {d: s_num[d] / s_den[d] for d in docs}
        gamma = g_num / g_den
    assert values(dbn.attractiveness) == pytest.approx(alpha, abs=1e-12)
    assert values(dbn.satisfaction) == pytest.approx(sigma, abs=1e-12)
    assert dbn.continuation["value"].item() == pytest.approx(gamma, abs=1e-12)


# --- parameter recovery -----------------------------------------------------------


def _z(n_estimates: int, miss: float = 1e-3) -> float:
    """Standard errors within which n_estimates normal errors all lie w.p. 1 - miss."""
    return NormalDist().inv_cdf(1 - miss / (2 * n_estimates))


def _check(estimate, truth, se, what):
    estimate, truth, se = (np.asarray(x, dtype=float) for x in (estimate, truth, se))
    z = np.abs(estimate - truth) / se
    limit = _z(len(z))
    assert z.max() <= limit, (
        f"{what}: worst error {z.max():.2f} standard errors (limit {limit:.2f}); "
        f"mean |error| {np.abs(estimate - truth).mean():.4f}"
    )
    return z


def _with_hidden(sim):
    return pl.concat([sim.log, sim.hidden], how="horizontal")


@pytest.mark.parametrize("seed", [1, 2])
def test_cascade_recovers_attractiveness(seed):
    sim = simulate("CM", n_searches=20_000, n_queries=10, docs_per_query=12, seed=seed)
    cm = fit(sim.log, "CM")
    counts = _with_hidden(sim).group_by(PAIR).agg(n=pl.col("examined").sum())
    got = cm.attractiveness.join(sim.attractiveness, on=PAIR, suffix="_true").join(
        counts, on=PAIR
    )
    p = got["value_true"]
    _check(got["value"], p, (p * (1 - p) / got["n"]).sqrt(), "CM attractiveness")


def _pbm_information(log: pl.DataFrame, alpha: pl.DataFrame, theta: np.ndarray):
    """Fisher information of each alpha (theta known) and each theta (alpha known).

    One impression at position r: click ~ Bernoulli(theta_r alpha), so
    I(alpha) += theta_r / (alpha (1 - theta_r alpha)) and I(theta_r) +=
    alpha / (theta_r (1 - theta_r alpha)).
    """
    rows = log.join(alpha.rename({"value": "alpha"}), on=PAIR).with_columns(
        theta=pl.col("position").map_elements(
            lambda r: theta[r - 1], return_dtype=pl.Float64
        )
    )
    p = pl.col("theta") * pl.col("alpha")
    info_alpha = rows.group_by(PAIR).agg(
        info=(pl.col("theta") / (pl.col("alpha") * (1 - p))).sum()
    )
    info_theta = (
        rows.group_by("position")
        .agg(info=(pl.col("alpha") / (pl.col("theta") * (1 - p))).sum())
        .sort("position")
    )
    return info_alpha, info_theta["info"].to_numpy()


@pytest.mark.parametrize("seed", [3, 4])
def test_pbm_recovers_attractiveness_and_examination_up_to_scale(seed):
    # PBM's likelihood only knows alpha * theta: compare theta_r / theta_1 and
    # alpha * theta_1 (the truth has theta_1 = 1)
    sim = simulate("PBM", n_searches=20_000, n_queries=10, docs_per_query=12, seed=seed)
    theta = sim.params["theta"]
    pbm = fit(sim.log, "PBM")
    fitted_theta = pbm.examination.sort("position")["value"].to_numpy()
    scale = fitted_theta[0]
    info_alpha, info_theta = _pbm_information(sim.log, sim.attractiveness, theta)
    se_theta = 1 / np.sqrt(info_theta)
    # the ratio's error also carries theta_1's
    se_ratio = np.sqrt(se_theta**2 + theta**2 * se_theta[0] ** 2)
    _check(fitted_theta[1:] / scale, theta[1:], se_ratio[1:], "PBM theta_r / theta_1")
    got = (
        pbm.attractiveness.join(sim.attractiveness, on=PAIR, suffix="_true")
        .join(info_alpha, on=PAIR)
        .with_columns(scaled=pl.col("value") * scale)
    )
    se = np.sqrt(1 / got["info"] + got["value_true"] ** 2 * se_theta[0] ** 2)
    _check(got["scaled"], got["value_true"], se, "PBM alpha * theta_1")


def test_ubm_recovers_examination_by_position_and_last_click():
    sim = simulate("UBM", n_searches=30_000, n_queries=10, docs_per_query=12, seed=5)
    table = sim.params["ubm"]
    ubm = fit(sim.log, "UBM")
    scale = (
        ubm.examination.filter(
            (pl.col("position") == 1) & (pl.col("prev_click_position") == 0)
        )["value"].item()
        / table[0, 0]
    )
    # information of each gamma(r, r') given alpha: sum over impressions with
    # that key of alpha / (gamma (1 - gamma alpha))
    rows = (
        sim.log.sort("search_id", "position")
        .with_columns(
            prev=pl.when("clicked")
            .then(pl.col("position"))
            .shift(1)
            .forward_fill()
            .over("search_id")
            .fill_null(0)
        )
        .join(sim.attractiveness.rename({"value": "alpha"}), on=PAIR)
        .with_columns(
            gamma=pl.struct("position", "prev").map_elements(
                lambda s: table[s["position"] - 1, s["prev"]], return_dtype=pl.Float64
            )
        )
    )
    info = rows.group_by(position="position", prev_click_position="prev").agg(
        info=(
            pl.col("alpha")
            / (pl.col("gamma") * (1 - pl.col("gamma") * pl.col("alpha")))
        ).sum(),
        truth=pl.col("gamma").first(),
    )
    got = ubm.examination.join(info, on=["position", "prev_click_position"])
    assert got.height == ubm.examination.height
    se_scale = 1 / math.sqrt(
        info.filter((pl.col("position") == 1) & (pl.col("prev_click_position") == 0))[
            "info"
        ].item()
    )
    se = np.sqrt(1 / got["info"] + (got["truth"] * se_scale / table[0, 0]) ** 2)
    _check(got["value"] / scale, got["truth"], se, "UBM gamma(r, r') up to scale")


def _no_click_below(sim, gamma: float, depth: int = 10) -> np.ndarray:
    """Per row, N_{r+1} = P(no click below r | r + 1 examined), at the true alpha.

    The simulated log holds lists of ``depth`` results, search by search.
    """
    alpha = (
        sim.log.join(sim.attractiveness, on=PAIR, how="left", maintain_order="left")[
            "value"
        ]
        .to_numpy()
        .reshape(-1, depth)
    )
    below = np.ones_like(alpha)
    after = np.ones(len(alpha))
    for r in range(depth - 1, -1, -1):
        below[:, r] = after
        after = (1 - alpha[:, r]) * (1 - gamma + gamma * after)
    return below.ravel()


def _dbn_satisfaction_information(sim, gamma: float) -> pl.DataFrame:
    """Fisher information of each sigma, the other parameters known.

    A click that is not the last says S = 0: 1 / (1 - sigma)^2. The last
    click at l says S = 1, or S = 0 and no click below: with c = P(no click
    below | not satisfied) = 1 - gamma + gamma N_{l+1}, its likelihood is
    sigma + (1 - sigma) c, information (1 - c)^2 / (sigma + (1 - sigma) c)^2.
    Each search has one last click, so these informations do not mix.
    """
    last = pl.col("position") == pl.col("position").filter("clicked").max().over(
        "search_id"
    )
    rows = sim.log.join(
        sim.satisfaction.rename({"value": "sigma"}),
        on=PAIR,
        how="left",
        maintain_order="left",
    ).with_columns(
        c=pl.Series(1 - gamma + gamma * _no_click_below(sim, gamma)),
        last=pl.col("clicked") & last,  # before grouping by pair
    )
    c, sigma = pl.col("c"), pl.col("sigma")
    term = (
        pl.when("last")
        .then((1 - c) ** 2 / (sigma + (1 - sigma) * c) ** 2)
        .when("clicked")
        .then(1 / (1 - sigma) ** 2)
        .otherwise(0.0)
    )
    return rows.group_by(PAIR).agg(info=term.sum(), truth=sigma.first())


def _gamma_spread(gamma: float, n_searches: int, replicates: int = 12) -> float:
    """The standard deviation of DBN's gamma estimate on logs of n_searches.

    gamma is estimated jointly with every alpha and sigma (the last click hides
    whether the user was satisfied or gave up), so its standard error is
    taken from its sampling distribution: fits on ``replicates`` independent
    logs of a quarter of the size, their spread halved (1 / sqrt(n)).
    """
    estimates = [
        fit(
            simulate(
                "DBN",
                n_searches=n_searches // 4,
                n_queries=12,
                docs_per_query=12,
                gamma=gamma,
                seed=1_000 + i,
            ).log,
            "DBN",
        )
        .continuation["value"]
        .item()
        for i in range(replicates)
    ]
    return float(np.std(estimates, ddof=1)) / 2


@pytest.mark.slow
@pytest.mark.parametrize(("gamma", "seed"), [(0.9, 6), (0.6, 7)])
def test_dbn_recovers_attractiveness_satisfaction_and_continuation(gamma, seed):
    from scipy import stats

    n = 30_000
    sim = simulate(
        "DBN", n_searches=n, n_queries=12, docs_per_query=12, gamma=gamma, seed=seed
    )
    dbn = fit(sim.log, "DBN")
    # gamma: the spread estimated from 12 replicates, so a Student t quantile
    replicates = 12
    spread = _gamma_spread(gamma, n, replicates)
    limit = stats.t.ppf(1 - 1e-3 / 2, replicates - 1) * spread
    error = abs(dbn.continuation["value"].item() - gamma)
    assert error <= limit, f"DBN gamma off by {error:.4f} (limit {limit:.4f})"
    # attractiveness: standard error from the examinations the simulation made
    counts = _with_hidden(sim).group_by(PAIR).agg(n=pl.col("examined").sum())
    got = dbn.attractiveness.join(sim.attractiveness, on=PAIR, suffix="_true").join(
        counts, on=PAIR
    )
    p = got["value_true"]
    _check(got["value"], p, (p * (1 - p) / got["n"]).sqrt(), "DBN attractiveness")
    # satisfaction: the last click hides whether it satisfied (information)
    info = _dbn_satisfaction_information(sim, gamma)
    got = dbn.satisfaction.join(info, on=PAIR)
    _check(got["value"], got["truth"], 1 / got["info"].sqrt(), "DBN satisfaction")


def test_dcm_and_sdbn_closed_forms_are_exact_where_their_assumption_holds():
    # both assume nothing below the last click was examined, as for a cascade
    # user (one click, then stop): attractiveness is then CM's, DCM's
    # continuation is 0 and SDBN's satisfaction is 1, up to the prior
    sim = simulate("CM", n_searches=5_000, n_queries=5, docs_per_query=12, seed=8)
    cm = fit(sim.log, "CM")
    for model in ("DCM", "SDBN"):
        assert fit(sim.log, model).attractiveness.equals(cm.attractiveness)
    assert fit(sim.log, "DCM", prior=(0, 0)).continuation["value"].max() <= 1e-6
    # every click is the last; pairs never clicked keep init (no evidence)
    satisfaction = fit(sim.log, "SDBN", prior=(0, 0)).satisfaction.join(
        cm.impressions, on=PAIR
    )
    clicked = satisfaction.filter(pl.col("n_clicks") > 0)["value"]
    assert (clicked == 1 - 1e-6).all()
    assert (satisfaction.filter(pl.col("n_clicks") == 0)["value"] == 0.5).all()


def test_sdbn_overestimates_for_users_who_go_on_unsatisfied():
    # the documented bias (docs/click_models.md): a DBN user with gamma = 1
    # examines everything below an unsatisfying last click, which SDBN's
    # closed form does not count; DBN's EM does
    sim = simulate("SDBN", n_searches=20_000, n_queries=8, docs_per_query=12, seed=9)
    sdbn = fit(sim.log, "SDBN").satisfaction.join(sim.satisfaction, on=PAIR)
    bias = (sdbn["value"] - sdbn["value_right"]).mean()
    assert bias > 0.01
    dbn = fit(sim.log, "DBN").satisfaction.join(sim.satisfaction, on=PAIR)
    assert abs((dbn["value"] - dbn["value_right"]).mean()) < bias / 3


# --- interface ----------------------------------------------------------------------


def test_model_names_are_case_insensitive_and_listed_when_unknown():
    assert fit(SMALL, "cascade").model == "CM"
    assert fit(SMALL, "pbm").model == "PBM"
    with pytest.raises(
        OptionError,
        match=r"'XYZ' is not a click model; choose one of 'PBM', 'CM', 'UBM', 'DCM', 'SDBN', 'DBN'",
    ):
        fit(SMALL, "XYZ")


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"iterations": -1}, "iterations=-1"),
        ({"iterations": 2.5}, "iterations=2.5"),
        ({"prior": (1,)}, "prior=.*two pseudo-counts"),
        ({"prior": (-1, 1)}, "prior="),
        ({"clip": 0.0}, "clip=0.0"),
        ({"init": 1.0}, "init=1.0"),
        ({"min_impressions": "many"}, "min_impressions='many'"),
    ],
)
def test_bad_options(options, match):
    with pytest.raises(OptionError, match=match):
        fit(SMALL, "PBM", **options)


def test_missing_column_names_what_is_found():
    with pytest.raises(
        SchemaError, match=r"missing column 'clicked' \(found \['search_id'"
    ):
        fit_click_model(SMALL.drop("clicked"), "PBM")
    with pytest.raises(SchemaError, match=r"'position', 'doc_id'"):
        fit_click_model(SMALL.drop("position", "doc_id"), "PBM")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (pl.col("position").cast(pl.Float64), "'position' has dtype Float64"),
        (pl.col("clicked").cast(pl.String), "'clicked' has dtype String"),
        (
            pl.col("doc_id").map_elements(
                lambda d: [d], return_dtype=pl.List(pl.String)
            ),
            "'doc_id' has dtype List",
        ),
    ],
)
def test_bad_dtypes(change, match):
    with pytest.raises(SchemaError, match=match):
        fit_click_model(SMALL.with_columns(change), "PBM")


def test_nulls_are_counted():
    bad = SMALL.with_columns(
        doc_id=pl.when(pl.col("position") == 2).then(None).otherwise("doc_id")
    )
    with pytest.raises(DataError, match="3 null values in column 'doc_id'"):
        fit_click_model(bad, "PBM")


def test_clicks_other_than_zero_and_one():
    assert fit(
        SMALL.with_columns(pl.col("clicked").cast(pl.Int8)), "CM"
    ).attractiveness.equals(fit(SMALL, "CM").attractiveness)
    with pytest.raises(DataError, match="1 value.* other than 0 and 1"):
        fit_click_model(
            SMALL.with_columns(
                clicked=pl.when(pl.col("position") == 1, pl.col("search_id") == "s0")
                .then(2)
                .otherwise(pl.col("clicked").cast(pl.Int64))
            ),
            "CM",
        )


def test_positions_must_start_at_one():
    with pytest.raises(
        DataError,
        match=r"3 row\(s\) with a position below 1, e.g. search_id='s0', position=0",
    ):
        fit_click_model(SMALL.with_columns(pl.col("position") - 1), "PBM")


def test_positions_with_gaps():
    # s1 shows 2, 3, 4: does not start at 1
    shifted = SMALL.with_columns(
        position=pl.when(pl.col("search_id") == "s1")
        .then(pl.col("position") + 1)
        .otherwise("position")
    )
    with pytest.raises(
        DataError,
        match=r"1 search whose positions do not run 1, 2, ..., n without gaps, e.g. search_id='s1' with positions \[2, 3, 4\]",
    ):
        fit_click_model(shifted, "PBM")
    holes = SMALL.filter(~((pl.col("position") == 2) & (pl.col("search_id") != "s1")))
    with pytest.raises(DataError, match=r"2 searches whose positions.*\[1, 3\]"):
        fit_click_model(holes, "PBM")


def test_a_slot_shown_twice():
    doubled = pl.concat(
        [SMALL, SMALL.filter(pl.col("search_id") == "s2", pl.col("position") == 3)]
    )
    with pytest.raises(
        DataError,
        match=r"1 \(search_id, position\) slot more than once, e.g. search_id='s2' at position 3 \(2 rows\)",
    ):
        fit_click_model(doubled, "PBM")


def test_a_search_with_two_queries():
    mixed = SMALL.with_columns(
        query_id=pl.when(pl.col("search_id") == "s1", pl.col("position") == 3)
        .then(pl.lit("other"))
        .otherwise("query_id")
    )
    with pytest.raises(
        DataError,
        match=r"1 search whose rows disagree on query_id, e.g. search_id='s1' with query_id 'q', 'other'",
    ):
        fit_click_model(mixed, "PBM")


def test_an_empty_log():
    with pytest.raises(DataError, match="no rows"):
        fit_click_model(SMALL.clear(), "PBM")


def test_searches_of_very_unequal_length():
    # a grid of 3 searches x 20M positions, from one search of depth 20M
    deep = pl.concat(
        [
            SMALL,
            pl.DataFrame(
                {
                    "search_id": "deep",
                    "query_id": "q",
                    "position": [1, 2],
                    "doc_id": ["a", "b"],
                    "clicked": False,
                }
            ),
        ]
    ).with_columns(
        position=pl.when(pl.col("search_id") == "deep", pl.col("position") == 2)
        .then(20_000_000)
        .otherwise("position")
    )
    with pytest.raises(
        DataError, match="very unequal length.*longest shows 20000000 results"
    ):
        fit_click_model(deep, "PBM")


def test_sparse_pairs_are_counted_in_a_warning_naming_the_option():
    with pytest.warns(
        IdentificationWarning,
        match=r"3 of 3 \(query_id, doc_id\) pairs \(9 of 9 rows\) are shown fewer than min_impressions=10 times.*min_impressions=0",
    ):
        fit_click_model(SMALL, "CM")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit_click_model(SMALL, "CM", min_impressions=3)
        fit_click_model(SMALL, "CM", min_impressions=0)


def test_pbm_on_a_log_where_no_document_moves():
    fixed = log_of(
        ("q", [("a", 1), ("b", 0)]),
        ("q", [("a", 0), ("b", 1)]),
        ("q", [("a", 1), ("b", 1)]),
    )
    with pytest.warns(
        IdentificationWarning, match="cannot tell examination from attractiveness"
    ):
        fit_click_model(fixed, "PBM", min_impressions=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit_click_model(fixed, "CM", min_impressions=1)  # CM has no examination


def test_predict_warns_about_pairs_and_positions_not_fitted():
    pbm = fit(SMALL, "PBM")
    new = log_of(("q", [("a", 0), ("z", 0), ("b", 0), ("c", 1)]))
    with pytest.warns(
        IrevalWarning,
        match=r"of 4 rows, 1 have a \(query_id, doc_id\) pair the model was not fitted on and 1 a position below the deepest",
    ):
        out = pbm.predict(new)
    prior = 0.5
    theta = values(pbm.examination)
    alpha = values(pbm.attractiveness)
    assert out["click_prob"].to_list() == pytest.approx(
        [
            alpha["a"] * theta[1],
            prior * theta[2],
            alpha["b"] * theta[3],
            alpha["c"] * prior,
        ]
    )


def test_ubm_conditional_predictions_count_keys_not_fitted():
    # drop the key (3, 2) from a fitted UBM: a search clicking at 2 needs it at 3
    ubm = fit(SMALL, "UBM")
    fitted = set(ubm.examination.select("position", "prev_click_position").rows())
    assert (3, 2) in fitted
    assert (2, 1) in fitted
    drop = ubm.examination.filter(
        ~((pl.col("position") == 3) & (pl.col("prev_click_position") == 2))
    )
    partial = ClickModel(**{**ubm.__dict__, "examination": drop})
    new = log_of(("q", [("b", 0), ("a", 1), ("c", 0)]))
    with pytest.warns(
        IrevalWarning, match=r"1 have a \(position, prev_click_position\)"
    ):
        out = partial.predict(new, kind="conditional")
    assert out["click_prob"][2] == pytest.approx(values(ubm.attractiveness)["c"] * 0.5)


def test_predict_keeps_rows_columns_and_kind():
    dbn = fit(SMALL, "DBN")
    shuffled = SMALL.with_columns(extra=pl.int_range(pl.len())).sample(
        fraction=1.0, shuffle=True, seed=1
    )
    out = dbn.predict(shuffled)
    assert out.columns == [*shuffled.columns, "click_prob"]
    assert out.drop("click_prob").equals(shuffled)
    by_row = dict(zip(out["extra"], out["click_prob"], strict=True))
    again = dbn.predict(SMALL.with_columns(extra=pl.int_range(pl.len())))
    assert dict(zip(again["extra"], again["click_prob"], strict=True)) == pytest.approx(
        by_row
    )
    as_pandas = dbn.predict(SMALL.to_pandas())
    assert isinstance(as_pandas, pd.DataFrame)
    assert as_pandas["click_prob"].tolist() == pytest.approx(
        dbn.predict(SMALL)["click_prob"].to_list()
    )
    lazy = dbn.predict(SMALL.lazy())
    assert isinstance(lazy, pl.LazyFrame)
    # full probabilities need no clicks
    assert dbn.predict(SMALL.drop("clicked")).height == SMALL.height
    with pytest.raises(SchemaError, match="missing column 'clicked'"):
        dbn.predict(SMALL.drop("clicked"), kind="conditional")
    with pytest.raises(OptionError, match="kind='joint'"):
        dbn.predict(SMALL, kind="joint")


def test_inputs_of_every_kind_give_the_same_model():
    ref = fit(SMALL, "DBN")
    for frame in (SMALL.lazy(), SMALL.to_pandas(), SMALL.to_arrow()):
        assert fit(frame, "DBN").attractiveness.equals(ref.attractiveness)
    # integer and categorical ids are ids: parameters keyed by their decimal text
    ints = SMALL.with_columns(
        search_id=pl.col("search_id").str.slice(1).cast(pl.Int64),
        doc_id=pl.col("doc_id")
        .replace({"a": "10", "b": "2", "c": "33"})
        .cast(pl.Int32),
    )
    by_int = fit(ints, "DBN").attractiveness
    assert by_int["doc_id"].to_list() == ["10", "2", "33"]
    assert by_int["value"].to_list() == pytest.approx(
        ref.attractiveness["value"].to_list()
    )
    cat = SMALL.with_columns(pl.col("query_id", "doc_id").cast(pl.Categorical))
    assert fit(cat, "DBN").attractiveness.equals(ref.attractiveness)


def test_perplexity_frame():
    sim = simulate("DBN", n_searches=2_000, n_queries=5, docs_per_query=12, seed=10)
    train = sim.log.filter(pl.col("search_id").str.slice(1).cast(pl.Int64) < 1_500)
    test = sim.log.filter(pl.col("search_id").str.slice(1).cast(pl.Int64) >= 1_500)
    for model in MODELS:
        p = fit(train, model).perplexity(test)
        assert p.columns == ["position", "value", "n_searches"]
        assert p["position"].to_list() == [*range(1, 11), None]
        assert p["n_searches"].to_list() == [500] * 11
        assert (p["value"] >= 1).all()
        assert p["value"][-1] == pytest.approx(p["value"][:-1].mean())
    # a model that knows the users beats one that does not, position by position
    dbn = fit(train, "DBN").perplexity(test)["value"]
    cm = fit(train, "CM").perplexity(test)["value"]
    assert dbn[-1] < cm[-1]


def test_to_qrels_grades_and_evaluate_reads_them():
    sim = simulate("DBN", n_searches=3_000, n_queries=5, docs_per_query=12, seed=11)
    dbn = fit(sim.log, "DBN")
    qrels = dbn.to_qrels()
    assert qrels.schema == pl.Schema(
        {"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32}
    )
    relevance = dbn.relevance()
    assert qrels.height == relevance.height
    joined = qrels.join(relevance, on=PAIR)
    assert ((joined["value"] >= 0.5) == (joined["relevance"] == 1)).all()
    graded = dbn.to_qrels(levels=[0.1, 0.3, 0.6]).join(relevance, on=PAIR)
    expected = (
        (graded["value"] >= 0.1).cast(pl.Int32)
        + (graded["value"] >= 0.3).cast(pl.Int32)
        + (graded["value"] >= 0.6).cast(pl.Int32)
    )
    assert graded["relevance"].to_list() == expected.to_list()
    four = dbn.to_qrels(levels=4).join(relevance, on=PAIR)
    assert four["relevance"].to_list() == [min(int(v * 4), 3) for v in four["value"]]
    few = dbn.to_qrels(min_impressions=10**9)
    assert few.height == 0
    # a run ranking each query's documents by true attractiveness
    run = sim.attractiveness.rename({"value": "score"})
    per_query = ie.evaluate(run, qrels, ["nDCG@10"])
    assert per_query["value"].is_between(0, 1).all()
    with pytest.raises(OptionError, match="levels=1"):
        dbn.to_qrels(levels=1)
    with pytest.raises(OptionError, match="increasing"):
        dbn.to_qrels(levels=[0.5, 0.2])
    with pytest.raises(OptionError, match="levels=2.0"):
        dbn.to_qrels(levels=2.0)


def test_parameter_frames_and_settings():
    for model in MODELS:
        m = fit(SMALL, model, iterations=7)
        assert m.attractiveness.columns == ["query_id", "doc_id", "value"]
        assert m.attractiveness.height == 3
        assert m.iterations == (7 if model in ("PBM", "UBM", "DBN") else 0)
        for frame in (m.examination, m.satisfaction, m.continuation):
            if frame is not None:
                assert frame.columns[-1] == "value"
                assert frame["value"].is_between(1e-6, 1 - 1e-6).all()
        assert m.impressions["n_impressions"].to_list() == [3, 3, 3]
        assert m.impressions["n_clicks"].to_list() == [2, 0, 1]
        assert model in str(m)
    dbn = fit(SMALL, "DBN")
    assert dbn.continuation.shape == (1, 1)
