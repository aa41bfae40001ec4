"""Click models against PyClick, from values stored by data/make_click_model_cases.py.

PyClick (github.com/markovi/PyClick, GPL) is not installed here: its answers
on simulated logs are stored in ``data/click_model_pyclick.parquet``. The
parameters of PBM, CM, UBM, DCM and SDBN, the full click probabilities, the
perplexity and (where PyClick computes it right) the conditional click
probabilities and the log-likelihood must equal PyClick's within 1e-6; they
agree to about 1e-15 (sums in another order). DBN is checked by parameter
recovery instead (tests/unit/online/test_click_models.py): PyClick's DBN
is not a trustworthy oracle (docs/click_models.md).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

from ireval_df.online import fit_click_model

DATA = Path(__file__).resolve().parent / "data"
LOGS = pl.read_parquet(DATA / "click_model_logs.parquet")
EXPECTED = pl.read_parquet(DATA / "click_model_pyclick.parquet")
TOLERANCE = 1e-6
#: the sparse case's test searches show pairs the training searches never did
#: (PyClick gives them 0.5, as we do, and we say so in a warning)
pytestmark = pytest.mark.filterwarnings(
    "ignore:of .* rows, .* not fitted on:ireval_df.errors.IrevalWarning"
)
RUNS = EXPECTED.select("case", "model", "iterations").unique().sort(pl.all()).rows()
KEYS = {
    "attractiveness": ["query_id", "doc_id"],
    "satisfaction": ["query_id", "doc_id"],
    "examination": ["position"],
    "continuation": ["position"],
}


def _split(case: str, split: str) -> pl.DataFrame:
    return LOGS.filter((pl.col("case") == case) & (pl.col("split") == split)).drop(
        "case", "split"
    )


def _fit(case: str, model: str, iterations: int):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the sparse case warns, on purpose
        return fit_click_model(
            _split(case, "train"), model, iterations=iterations or 50
        )


def _expected(case: str, model: str, iterations: int, kind: str) -> pl.DataFrame:
    return EXPECTED.filter(
        (pl.col("case") == case)
        & (pl.col("model") == model)
        & (pl.col("iterations") == iterations)
        & (pl.col("kind") == kind)
    )


def _max_difference(ours: pl.DataFrame, theirs: pl.DataFrame, on: list[str]) -> float:
    joined = ours.join(theirs, on=on, how="full", suffix="_pyclick", coalesce=True)
    assert joined["value"].null_count() == 0, "a key only PyClick has"
    assert joined["value_pyclick"].null_count() == 0, "a key only ireval_df has"
    return float((joined["value"] - joined["value_pyclick"]).abs().max())


@pytest.mark.parametrize(("case", "model", "iterations"), RUNS)
def test_parameters_equal_pyclicks(case, model, iterations):
    fitted = _fit(case, model, iterations)
    expected = _expected(case, model, iterations, "param")
    params = expected["param"].unique().to_list()
    assert params
    for param in params:
        theirs = expected.filter(pl.col("param") == param)
        ours = getattr(fitted, param)
        on = KEYS[param]
        if model == "UBM" and param == "examination":
            on = ["position", "prev_click_position"]
        # PyClick keeps a starting value (0.5) for keys the log never shows
        theirs = theirs.select(*on, "value").join(ours.select(on), on=on, how="semi")
        assert _max_difference(ours, theirs, on) <= TOLERANCE, (case, model, param)


@pytest.mark.parametrize(("case", "model", "iterations"), RUNS)
def test_full_click_probabilities_equal_pyclicks(case, model, iterations):
    fitted = _fit(case, model, iterations)
    test = _split(case, "test")
    ours = fitted.predict(test).select(
        "search_id", "position", value=pl.col("click_prob")
    )
    theirs = _expected(case, model, iterations, "full").select(
        "search_id", "position", "value"
    )
    assert _max_difference(ours, theirs, ["search_id", "position"]) <= TOLERANCE


@pytest.mark.parametrize(("case", "model", "iterations"), RUNS)
def test_conditional_click_probabilities_equal_pyclicks(case, model, iterations):
    """PyClick gives P(what happened | clicks above); ours P(click | clicks above).

    PyClick's CM gives the full probability (not conditioned on the skips
    above) down to the first click and 1e-6 below it, for a click or a
    skip: only position 1 is comparable, where both are the attractiveness.
    """
    fitted = _fit(case, model, iterations)
    test = _split(case, "test")
    ours = fitted.predict(test, kind="conditional").select(
        "search_id",
        "position",
        value=pl.when("clicked")
        .then(pl.col("click_prob"))
        .otherwise(1 - pl.col("click_prob")),
    )
    theirs = _expected(case, model, iterations, "conditional").select(
        "search_id", "position", "value"
    )
    if model == "CM":
        ours = ours.filter(pl.col("position") == 1)
        theirs = theirs.filter(pl.col("position") == 1)
    assert _max_difference(ours, theirs, ["search_id", "position"]) <= TOLERANCE


@pytest.mark.parametrize(("case", "model", "iterations"), RUNS)
def test_log_likelihood_and_perplexity_equal_pyclicks(case, model, iterations):
    fitted = _fit(case, model, iterations)
    test = _split(case, "test")
    metrics = _expected(case, model, iterations, "metric")
    if model != "CM":  # PyClick's CM conditional probabilities (above)
        ll = metrics.filter(pl.col("param") == "log_likelihood")["value"].item()
        assert fitted.log_likelihood(test) == pytest.approx(ll, abs=TOLERANCE)
    if case == "short_lists":
        return  # PyClick divides by every search at every rank, shown there or not
    perplexity = fitted.perplexity(test)
    theirs = metrics.filter(pl.col("param") == "perplexity").select("position", "value")
    assert perplexity.height == theirs.height
    joined = perplexity.join(theirs, on="position", nulls_equal=True)
    assert joined.height == theirs.height
    assert (joined["value"] - joined["value_right"]).abs().max() <= TOLERANCE


def test_every_case_and_model_is_covered():
    cases = set(LOGS["case"].unique())
    assert cases == {
        "pbm_multi",
        "dbn_user",
        "sparse",
        "rare_clicks",
        "ubm_user",
        "short_lists",
    }
    models = {(c, m) for c, m, _ in RUNS}
    for case in cases:
        expected = {"PBM", "CM", "DCM", "SDBN"} | (
            set() if case == "short_lists" else {"UBM"}
        )
        assert {m for c, m in models if c == case} == expected
    # the logs hold what the cases promise
    train = LOGS.filter(pl.col("split") == "train")
    per_search = train.group_by("case", "search_id").agg(
        clicks=pl.col("clicked").sum(), n=pl.len()
    )
    multi = per_search.group_by("case").agg(
        multi=(pl.col("clicks") > 1).mean(), none=(pl.col("clicks") == 0).mean()
    )
    shares = {case: (m, n) for case, m, n in multi.iter_rows()}
    assert shares["pbm_multi"][0] > 0.2  # multi-click searches
    assert shares["rare_clicks"][1] > 0.3  # searches without a click
    pairs = (
        train.filter(pl.col("case") == "sparse").group_by("query_id", "doc_id").len()
    )
    assert (pairs["len"] <= 2).mean() > 0.5  # most pairs seen once or twice
    assert per_search.filter(pl.col("case") == "short_lists")["n"].min() == 3
