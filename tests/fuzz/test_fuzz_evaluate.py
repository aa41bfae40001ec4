"""Fuzzing evaluate() and validate() with random frames.

* On valid inputs (``strategies.cases``: ties, unjudged and negative grades,
  one-sided queries, empty-ish rankings), every metric of the registry is a
  finite number within its registered bounds: never NaN where it is defined.
  The one place trec_eval itself divides 0 by 0, IPrec at recall 0 of a
  ranking ``judged_only`` empties (SPEC.md 8.3), is the only NaN allowed.
* On random frames (NaN, infinite and huge scores, null ids, repeated rows,
  fractional, huge and negative grades, odd options), evaluate either raises
  an IrevalError or returns such numbers.
* validate() never raises on those frames (it reports instead), and whenever
  evaluate rejects an input, validate has an error finding for it.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import Case, cases

from ireval_df import evaluate
from ireval_df.diagnostics.validation import COLUMNS, validate
from ireval_df.errors import IrevalError, IrevalWarning
from ireval_df.measures import list_metrics, parse_metric
from ireval_df.measures.registry import REGISTRY
from ireval_df.offline.plan import measures_reading

PREFERENCE_MEASURES = measures_reading("preferences")

SCALE = int(os.environ.get("IREVAL_FUZZ_SCALE", "1"))
FUZZ = settings(max_examples=25 * SCALE, suppress_health_check=[HealthCheck.too_slow])


def every_metric() -> list[str]:
    """Each offline metric once, with a cutoff where it takes one, and variants."""
    out = []
    for row in list_metrics().filter(family="offline").iter_rows(named=True):
        name, cutoff = row["metric"], row["cutoff"]
        if name in PREFERENCE_MEASURES:  # scored by evaluate_prefs, not evaluate
            continue
        info = REGISTRY[name]
        k = "0.5" if info.cutoff_type is float else "3"
        if cutoff in ("none", "optional"):
            out.append(name)
        if cutoff in ("optional", "required"):
            out.append(f"{name}@{k}")
    out += [
        "nDCG(dcg=exp-log2)@5",
        "P(rel=2)@3",
        "R(rel=3)@5",
        "nDCG(judged_only=true)@5",
        "AP(judged_only=true)",
        "IPrec(judged_only=true)@0",
        "IPrec@0",
        "IPrec@1",
        "RBP(p=0.5)",
        "ERR@5",
        "Rprec(mult=2)",
        "SetF(beta=0.5)",
    ]
    return [str(parse_metric(m)) for m in out]


METRICS = every_metric()
SMALL = ["nDCG@10", "AP", "P@5", "RR", "R@100", "Judged@10"]


def check_values(result: pl.DataFrame, case: Case | None = None) -> None:
    """Every value finite and within the metric's registered bounds."""
    emptied = case.emptied_by_judged_only() if case is not None else set()
    for run_id, query_id, metric, value in result.select(
        "run_id", "query_id", "metric", "value"
    ).iter_rows():
        where = (run_id, query_id, metric, value)
        assert value is not None, where
        if math.isnan(value):
            # trec_eval -J: 0/0 for IPrec at recall 0 on an emptied ranking
            assert metric.startswith("IPrec(judged_only=true)@0"), where
            assert case is None or (run_id, query_id) in emptied, where
            continue
        assert math.isfinite(value), where
        low, high = parse_metric(metric).info.bounds
        assert low is None or value >= low - 1e-12, where
        assert high is None or value <= high + 1e-12, where


@FUZZ
@given(case=cases(max_queries=4, max_runs=2, max_docs=6))
def test_every_metric_is_finite_and_bounded_on_valid_inputs(case: Case) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        result = evaluate(case.run_frame(), case.intent_qrels_frame(), METRICS)
    check_values(result, case)
    assert set(result["metric"]) == set(METRICS)


# --------------------------------------------------------------------------
# random frames

IDS = st.sampled_from(["1", "01", "2", "q", "Q", " q", "d", "é", ""])
SCORES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 1.0, 2.5, -1e308, 1e308, 5e-324, 1e-300]),
    st.floats(allow_nan=True, allow_infinity=True),
)
GRADES = st.one_of(
    st.sampled_from([0, 1, 2, 3, -1, -2, 2**31 - 1, -(2**31)]),
    st.floats(-3, 5),
)


@st.composite
def run_frames(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(0, 12))
    frame = pl.DataFrame(
        {
            "run_id": draw(
                st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n)
            ),
            "query_id": draw(
                st.lists(st.one_of(IDS, st.none()), min_size=n, max_size=n)
            ),
            "doc_id": draw(st.lists(st.one_of(IDS, st.none()), min_size=n, max_size=n)),
            "score": draw(
                st.lists(st.one_of(SCORES, st.none()), min_size=n, max_size=n)
            ),
            "rank": draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)),
        },
        schema={
            "run_id": pl.String,
            "query_id": pl.String,
            "doc_id": pl.String,
            "score": pl.Float64,
            "rank": pl.Int64,
        },
    )
    if draw(st.booleans()):
        frame = frame.drop("run_id")
    return frame


@st.composite
def qrels_frames(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(0, 10))
    grades = draw(st.lists(st.one_of(GRADES, st.none()), min_size=n, max_size=n))
    whole = all(g is None or float(g) == int(g) for g in grades)
    return pl.DataFrame(
        {
            "query_id": draw(st.lists(IDS, min_size=n, max_size=n)),
            "doc_id": draw(st.lists(st.one_of(IDS, st.none()), min_size=n, max_size=n)),
            "relevance": pl.Series(
                grades, dtype=pl.Int64 if whole else pl.Float64, strict=False
            ),
        }
    )


OPTIONS = st.fixed_dictionaries(
    {
        "missing": st.sampled_from(["zero", "skip", "error"]),
        "duplicates": st.sampled_from(["error", "first", "max"]),
        "depth": st.one_of(st.none(), st.integers(1, 5)),
        "rank_from": st.sampled_from(["score", "score", "column"]),
    }
)


def attempt(
    run: pl.DataFrame, qrels: pl.DataFrame, metrics: list[str], **options: Any
) -> pl.DataFrame | IrevalError:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        try:
            return evaluate(run, qrels, metrics, **options)
        except IrevalError as exc:
            return exc


@FUZZ
@given(run=run_frames(), qrels=qrels_frames(), options=OPTIONS)
def test_random_frames_give_numbers_or_an_ireval_error(
    run: pl.DataFrame, qrels: pl.DataFrame, options: dict[str, Any]
) -> None:
    outcome = attempt(run, qrels, METRICS, **options)
    if isinstance(outcome, pl.DataFrame):
        check_values(outcome)


@FUZZ
@given(run=run_frames(), qrels=qrels_frames(), k=st.integers(1, 4), lazy=st.booleans())
def test_validate_reports_what_evaluate_rejects(
    run: pl.DataFrame, qrels: pl.DataFrame, k: int, lazy: bool
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrevalWarning)  # validate never warns
        report = validate(run.lazy() if lazy else run, qrels, metrics=SMALL, k=k)
    if lazy:
        report = report.collect()
    assert dict(report.schema) == COLUMNS
    assert report["message"].null_count() == 0
    assert report["severity"].is_in(["error", "warning", "info"]).all()
    outcome = attempt(run, qrels, SMALL)
    errors = report.filter(pl.col("severity") == "error")
    if isinstance(outcome, IrevalError):
        assert errors.height > 0, (outcome, report.select("check", "count").rows())
    else:
        check_values(outcome)
