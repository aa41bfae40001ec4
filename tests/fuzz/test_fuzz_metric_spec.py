"""Metric strings are parsed by a grammar: random text gives a Metric or a MetricSpecError.

And nothing in the package evaluates or unpickles its input: a source scan
rejects ``eval``, ``exec``, ``compile``, ``pickle`` and friends.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ireval_df.errors import MetricSpecError
from ireval_df.measures import Metric, list_metrics, parse_metric

SCALE = int(os.environ.get("IREVAL_FUZZ_SCALE", "1"))
FUZZ = settings(max_examples=150 * SCALE, suppress_health_check=[HealthCheck.too_slow])

PACKAGE = Path(__file__).resolve().parents[2] / "ireval_df"

NAMES = sorted(
    {
        name
        for row in list_metrics().iter_rows(named=True)
        for name in [row["metric"], *(row["aliases"] or "").split(", ")]
        if name
    }
)
PIECES = st.sampled_from(
    [
        *NAMES,
        "_",
        ".",
        "@",
        "(",
        ")",
        "=",
        ",",
        "{",
        "}",
        "[",
        "]",
        ":",
        "rel",
        "k",
        "p",
        "dcg",
        "gains",
        "judged_only",
        "true",
        "false",
        "exp-log2",
        "0",
        "1",
        "10",
        "-1",
        "0.5",
        "1e3",
        "1e400",
        "nan",
        "inf",
        " ",
        "__import__('os')",
        "\u00e9",
        "\x00",
    ]
)


def check(text: str) -> None:
    try:
        metric = parse_metric(text)
    except MetricSpecError:
        return
    assert isinstance(metric, Metric)
    assert parse_metric(str(metric)) == metric  # the canonical form round-trips


@FUZZ
@given(text=st.text(max_size=40))
@example(text="")
@example(text="eval('1')")
@example(text="P@__import__('os').system('true')")
def test_random_text(text: str) -> None:
    check(text)


@FUZZ
@given(pieces=st.lists(PIECES, max_size=8))
def test_grammar_shaped_text(pieces: list[str]) -> None:
    check("".join(pieces))


@pytest.mark.parametrize(
    "text",
    [
        "set_F_x",
        "set_F_-1",
        "Rprec_mult_x",
        "utility_x",
        "P_x",
        "ndcg_cut_x",
        "iprec_at_recall_x",
    ],
)
def test_bad_trec_eval_suffixes(text: str) -> None:
    with pytest.raises(MetricSpecError):
        parse_metric(text)


@pytest.mark.parametrize(
    "text",
    [
        "P@1e400",
        "P(rel=1e400)@5",
        "nDCG(gains={1e400:1})",
        "P_1e400",
        "RBP(p=1e400)",
        "IPrec@1e400",
        "nDCG(gains={1:1e400})",
    ],
)
def test_huge_numbers_are_spec_errors(text: str) -> None:
    with pytest.raises(MetricSpecError):
        parse_metric(text)


# --------------------------------------------------------------------------
# no eval, no pickle

FORBIDDEN = {
    "eval(": r"(?<![\w.])eval\s*\(",
    "exec(": r"(?<![\w.])exec\s*\(",
    "compile(": r"(?<![\w.])compile\s*\(",
    "__import__": r"__import__",
    "literal_eval": r"literal_eval",
    "pickle": r"\b(?:c?pickle|dill|cloudpickle|joblib|marshal|shelve)\b",
    "read_pickle": r"read_pickle|to_pickle",
    "deserialize": r"\.deserialize\s*\(",  # polars plans may hold pickled UDFs
    "allow_pickle": r"allow_pickle|np\.load\s*\(|numpy\.load\s*\(",
    "yaml.load": r"yaml\.(?:unsafe_)?load\s*\(",
    "torch.load": r"torch\.load\s*\(",
}


def test_the_package_never_evaluates_or_unpickles_input() -> None:
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) > 20
    found = []
    for path in sources:
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            for what, pattern in FORBIDDEN.items():
                if re.search(pattern, line):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {what}")
    assert not found, found


def test_the_scan_would_catch_them() -> None:
    # the patterns match what they are meant to, and not the legitimate uses
    assert re.search(FORBIDDEN["eval("], "x = eval(spec)")
    assert not re.search(FORBIDDEN["eval("], "ie.evaluate(run)")
    assert not re.search(FORBIDDEN["eval("], "pl.col('x').list.eval(pl.element())")
    assert not re.search(FORBIDDEN["compile("], "re.compile(r'x')")
    assert re.search(FORBIDDEN["pickle"], "import pickle")
    assert re.search(FORBIDDEN["deserialize"], "pl.LazyFrame.deserialize(source)")
