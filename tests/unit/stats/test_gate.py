"""``gate()``: non-inferiority per metric and slice, a minimum, an A/B interval."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

import ireval_df as ie
from ireval_df.errors import AlignmentError, MetricSpecError, OptionError, SchemaError
from ireval_df.stats.corrections import adjust

BASE = [0.50, 0.40, 0.60, 0.30, 0.70, 0.20, 0.55, 0.45]


def frame(
    candidate: list[float], metric: str = "AP", **extra: list[str]
) -> pl.DataFrame:
    n = len(BASE)
    return pl.DataFrame(
        {
            "run_id": ["prod"] * n + ["new"] * n,
            "query_id": [str(i) for i in range(n)] * 2,
            "metric": metric,
            "value": BASE + candidate,
            **{k: v * 2 for k, v in extra.items()},
        }
    )


def one(result: pl.DataFrame) -> dict[str, object]:
    assert result.height == 1
    return result.row(0, named=True)


# differences new - prod for each case (8 queries)
BETTER = [0.10, 0.12, 0.08, 0.11, 0.09, 0.10, 0.13, 0.07]
WITHIN = [-0.004, 0.003, -0.002, 0.001, -0.003, 0.002, -0.001, 0.0]
WORSE = [-0.20, -0.22, -0.18, -0.21, -0.19, -0.20, -0.23, -0.17]


def shifted(d: list[float]) -> list[float]:
    return [b + x for b, x in zip(BASE, d, strict=True)]


def test_clearly_better_passes() -> None:
    row = one(ie.gate(frame(shifted(BETTER)), baseline="prod", margin=0.01))
    assert row["run_id"] == "new"
    assert row["baseline"] == "prod"
    assert row["delta"] == pytest.approx(np.mean(BETTER))
    assert row["passed"] is True
    assert row["verdict"] == "passed"


def test_equal_passes_with_a_margin_and_not_without() -> None:
    # d = 0 everywhere: with margin 0.01 the shifted differences are a constant
    # 0.01 > 0 (p = 0); with margin 0 nothing is shown (p = 1)
    same = frame(list(BASE))
    assert one(ie.gate(same, baseline="prod", margin=0.01))["verdict"] == "passed"
    row = one(ie.gate(same, baseline="prod", margin=0.0))
    assert (row["p_value"], row["verdict"], row["passed"]) == (1.0, "not shown", False)


def test_slightly_worse_within_the_margin_passes() -> None:
    row = one(ie.gate(frame(shifted(WITHIN)), baseline="prod", margin=0.02))
    assert row["delta"] < 0
    assert row["ci_low"] > -0.02
    assert row["verdict"] == "passed"


def test_clearly_worse_is_worse() -> None:
    row = one(ie.gate(frame(shifted(WORSE)), baseline="prod", margin=0.01))
    assert row["passed"] is False
    assert row["verdict"] == "worse"
    assert row["ci_high"] < -0.01


def test_straddling_the_margin_is_not_shown() -> None:
    # mean difference -0.01 with spread: the interval holds -0.01
    noisy = [-0.01 + x for x in (0.1, -0.1, 0.05, -0.05, 0.08, -0.08, 0.02, -0.02)]
    row = one(ie.gate(frame(shifted(noisy)), baseline="prod", margin=0.01))
    assert row["ci_low"] < -0.01 < row["ci_high"]
    assert row["verdict"] == "not shown"


def test_p_value_is_scipy_one_sided_t_on_the_shifted_differences() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(-0.005, 0.03, len(BASE))
    margin = 0.01
    row = one(ie.gate(frame(shifted(d.tolist())), baseline="prod", margin=margin))
    expected = stats.ttest_1samp(d + margin, 0.0, alternative="greater")
    assert row["p_value"] == pytest.approx(expected.pvalue, rel=1e-9)
    # the interval is the two-sided 90% t interval of the mean difference
    half = stats.t.ppf(0.95, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    assert row["ci_low"] == pytest.approx(d.mean() - half, rel=1e-9)
    assert row["ci_high"] == pytest.approx(d.mean() + half, rel=1e-9)


def test_lower_is_better_mirrors_the_test() -> None:
    # a latency 5 ms higher everywhere (worse); the margin 10 ms allows it,
    # 1 ms does not
    lat = frame([b * 100 + 5 for b in BASE], metric="latency_ms").with_columns(
        pl.when(pl.col("run_id") == "prod")
        .then(pl.col("value") * 100)
        .otherwise(pl.col("value"))
        .alias("value")
    )
    hib = {"latency_ms": False}
    loose = one(ie.gate(lat, baseline="prod", margin=10.0, higher_is_better=hib))
    tight = one(ie.gate(lat, baseline="prod", margin=1.0, higher_is_better=hib))
    assert loose["delta"] == pytest.approx(5.0)
    assert loose["verdict"] == "passed"
    assert tight["verdict"] == "worse"
    # the registry knows the direction of its own measures (NumRet is a sum)
    d = np.array([0.5, -0.2, 0.1, 0.3, -0.1, 0.2, 0.0, 0.4])
    expected = stats.ttest_1samp(-d + 1.0, 0.0, alternative="greater").pvalue
    row = one(
        ie.gate(
            frame(shifted(d.tolist()), metric="cost"),
            baseline="prod",
            margin=1.0,
            higher_is_better=False,
        )
    )
    assert row["p_value"] == pytest.approx(expected, rel=1e-9)


def test_relative_margin_is_a_share_of_the_baseline_mean() -> None:
    row = one(
        ie.gate(frame(shifted(WITHIN)), baseline="prod", margin=0.1, relative=True)
    )
    assert row["margin"] == pytest.approx(0.1 * np.mean(BASE))


def test_slices_where_one_fails_and_the_family_correction() -> None:
    cls = ["a"] * 4 + ["b"] * 4
    d = BETTER[:4] + WORSE[4:]
    result = ie.gate(
        frame(shifted(d), query_class=cls),
        baseline="prod",
        margin=0.01,
        by="query_class",
    )
    assert result.columns == [
        "run_id",
        "baseline",
        "query_class",
        "metric",
        "n_queries",
        "baseline_mean",
        "candidate_mean",
        "delta",
        "ci_low",
        "ci_high",
        "margin",
        "p_value",
        "p_adjusted",
        "passed",
        "verdict",
    ]
    assert result["query_class"].to_list() == ["a", "b"]
    assert result["verdict"].to_list() == ["passed", "worse"]
    assert result["n_queries"].to_list() == [4, 4]
    p = result["p_value"].to_numpy()
    assert result["p_adjusted"].to_numpy() == pytest.approx(adjust(p, "holm"))
    bonf = ie.gate(
        frame(shifted(d), query_class=cls),
        baseline="prod",
        margin=0.01,
        by="query_class",
        correction="bonferroni",
    )
    assert bonf["p_adjusted"].to_numpy() == pytest.approx(np.minimum(2 * p, 1.0))
    raw = ie.gate(
        frame(shifted(d), query_class=cls),
        baseline="prod",
        margin=0.01,
        by="query_class",
        correction="none",
    )
    assert raw["p_adjusted"].to_list() == raw["p_value"].to_list()


def test_correction_can_turn_a_pass_into_not_shown() -> None:
    # one metric barely passing alone, among many metrics: holm lifts its p
    rng = np.random.default_rng(0)
    metrics = [f"m{i}" for i in range(6)]
    rows = []
    for m in metrics:
        d = rng.normal(0.0, 0.01, 8) + (0.0 if m != "m0" else 0.004)
        rows.append(frame(shifted(d.tolist()), metric=m))
    per_query = pl.concat(rows)
    result = ie.gate(per_query, baseline="prod", margin=0.01, higher_is_better=True)
    alone = ie.gate(
        per_query, baseline="prod", margin=0.01, higher_is_better=True, correction=None
    )
    assert (result["p_adjusted"] >= alone["p_adjusted"]).all()
    assert result["p_adjusted"].to_numpy() == pytest.approx(
        adjust(alone["p_value"].to_numpy(), "holm")
    )


def test_a_single_query_is_not_shown() -> None:
    tiny = frame(shifted(BETTER)).filter(pl.col("query_id") == "0")
    row = one(ie.gate(tiny, baseline="prod", margin=0.01))
    assert row["n_queries"] == 1
    assert row["p_value"] is None
    assert row["verdict"] == "not shown"


def test_minimum_is_a_one_sample_test() -> None:
    rbo = np.array([0.98, 0.95, 1.0, 0.97, 0.99, 0.96, 0.94, 1.0])
    sim = pl.DataFrame(
        {
            "run_id": "new",
            "baseline": "prod",
            "query_id": [str(i) for i in range(8)],
            "metric": "RBO(ties=b)",
            "value": rbo,
        }
    )
    row = one(ie.gate(sim, minimum=0.95))
    assert row["baseline"] == "prod"
    assert row["mean"] == pytest.approx(rbo.mean())
    expected = stats.ttest_1samp(rbo, 0.95, alternative="greater").pvalue
    assert row["p_value"] == pytest.approx(expected, rel=1e-9)
    assert row["verdict"] == "passed"
    assert one(ie.gate(sim, minimum=0.999))["verdict"] == "worse"
    identical = sim.with_columns(value=pl.lit(1.0))
    assert one(ie.gate(identical, minimum=0.99))["verdict"] == "passed"


def test_minimum_on_the_bundled_runs() -> None:
    sim = ie.similarity(
        ["data/runs/bm25.run", "data/runs/hybrid.run"],
        ["RBO(ties=b)"],
        baseline="bm25",
        queries="data/queries.tsv",
    )
    result = ie.gate(sim, minimum=0.5, by="query_class")
    assert result["query_class"].to_list() == [
        "informational",
        "navigational",
        "transactional",
    ]
    assert set(result["verdict"]) <= {"passed", "not shown", "worse"}
    assert not result["passed"].all()


def ab_result(
    delta: float, low: float, high: float, metric: str = "CTR"
) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "variant": ["B"],
            "metric": [metric],
            "control_mean": [0.5],
            "treatment_mean": [0.5 + delta],
            "delta": [delta],
            "delta_rel": [delta / 0.5],
            "ci_low": [low],
            "ci_high": [high],
            "rel_ci_low": [low / 0.5],
            "rel_ci_high": [high / 0.5],
            "p_value": [0.5],
            "n_control": [100],
            "n_treatment": [100],
            "reason": pl.Series([None], dtype=pl.String),
        }
    )


def test_ab_results_are_gated_by_their_interval() -> None:
    hib = {"CTR": True}
    assert one(ie.gate(ab_result(0.0, -0.005, 0.005), margin=0.01))["verdict"] == (
        "passed"
    )
    row = one(ie.gate(ab_result(-0.01, -0.02, 0.0), margin=0.01, higher_is_better=hib))
    assert row["verdict"] == "not shown"
    assert one(ie.gate(ab_result(-0.05, -0.07, -0.03), margin=0.01))["verdict"] == (
        "worse"
    )
    # relative: the interval of delta_rel against a share
    assert (
        one(ie.gate(ab_result(-0.004, -0.008, 0.0), margin=0.02, relative=True))[
            "verdict"
        ]
        == "passed"
    )
    untested = ab_result(0.0, -0.001, 0.001).with_columns(reason=pl.lit("one unit"))
    assert one(ie.gate(untested, margin=0.01))["verdict"] == "not shown"


def test_ab_lower_is_better_uses_the_upper_end() -> None:
    # time to first click up by 0.02 s at most: within a margin of 0.05 s
    row = one(
        ie.gate(
            ab_result(0.01, 0.0, 0.02, metric="ttfc"),
            margin=0.05,
            higher_is_better={"ttfc": False},
        )
    )
    assert row["verdict"] == "passed"
    row = one(
        ie.gate(
            ab_result(0.1, 0.08, 0.12, metric="ttfc"),
            margin=0.05,
            higher_is_better={"ttfc": False},
        )
    )
    assert row["verdict"] == "worse"


def test_no_overlapping_queries_is_an_error() -> None:
    apart = frame(shifted(BETTER)).with_columns(
        pl.when(pl.col("run_id") == "new")
        .then(pl.lit("x") + pl.col("query_id"))
        .otherwise(pl.col("query_id"))
        .alias("query_id")
    )
    with pytest.raises(AlignmentError, match="share no query"):
        ie.gate(apart, baseline="prod", margin=0.01)


def test_bad_input() -> None:
    per_query = frame(shifted(BETTER))
    with pytest.raises(OptionError, match="baseline 'nope' is not a run"):
        ie.gate(per_query, baseline="nope", margin=0.01)
    with pytest.raises(OptionError, match="margin must be a number at least 0"):
        ie.gate(per_query, baseline="prod", margin=-0.01)
    with pytest.raises(OptionError, match="needs baseline= and margin="):
        ie.gate(per_query, baseline="prod")
    with pytest.raises(OptionError, match="alpha must be"):
        ie.gate(per_query, baseline="prod", margin=0.01, alpha=1.5)
    with pytest.raises(OptionError, match="takes neither margin"):
        ie.gate(per_query, baseline="prod", margin=0.01, minimum=0.5)
    with pytest.raises(MetricSpecError, match="mystery"):
        ie.gate(frame(shifted(BETTER), metric="mystery"), baseline="prod", margin=0.01)
    with pytest.raises(SchemaError, match="query_class"):
        ie.gate(per_query, baseline="prod", margin=0.01, by="query_class")
    with pytest.raises(OptionError, match="gate compares means"):
        ie.gate(frame(shifted(BETTER), metric="NumRet"), baseline="prod", margin=1.0)
    with pytest.raises(OptionError, match="lower-is-better"):
        ie.gate(
            frame(shifted(BETTER), metric="cost"),
            minimum=0.5,
            higher_is_better=False,
        )
    with pytest.raises(OptionError, match="needs margin="):
        ie.gate(ab_result(0.0, -0.01, 0.01))
    with pytest.raises(AlignmentError, match="no row"):
        ie.gate(ab_result(0.0, -0.01, 0.01).clear(), margin=0.01)
    with pytest.raises(AlignmentError, match="no per-query value"):
        ie.gate(per_query.clear(), minimum=0.5, higher_is_better=True)
