"""trec_eval's preference measures against the trec_eval 10.0 binary.

pytrec_eval-terrier does not expose the ``prefs_*`` measures (its
``supported_measures`` has none; it reads qrels only), so the reference is
NIST trec_eval 10.0 itself, built from its source. ``prefs_cases.py`` makes
80 random cases (see its docstring for what they cover) and stored the
binary's output for each in ``data/prefs_cases.json``, as printed and with
every value printed ``%.17g``. Here:

* ``ireval-df trec_eval`` must print the same bytes and exit the same way;
* :func:`ireval_df.evaluate_prefs` must give the same numbers per query, to
  ``1e-12``;
* with ``IREVAL_TREC_EVAL`` naming a trec_eval binary, 200 more seeds are
  run through both, live.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from typing import TYPE_CHECKING, Any

import pytest
from prefs_cases import DATA, generate, run_trec_eval

import ireval_df as ie
from ireval_df.trec_eval._command import run_command
from ireval_df.trec_eval._measures import _PREFS_METRICS

if TYPE_CHECKING:
    from pathlib import Path

CASES: list[dict[str, Any]] = json.loads(DATA.read_text())
TOL = 1e-12


def _files(case: dict[str, Any], folder: Path) -> tuple[Path, Path]:
    prefs = folder / "prefs.txt"
    run = folder / "run.txt"
    prefs.write_text(case["prefs"])
    run.write_text(case["run"])
    return prefs, run


def _command(case: dict[str, Any], folder: Path) -> tuple[int, str]:
    prefs, run = _files(case, folder)
    result = run_command([*case["options"], str(prefs), str(run)])
    return result.code, result.stdout


def _ids(cases: list[dict[str, Any]]) -> list[str]:
    return [f"seed{c['seed']}" for c in cases]


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_command_prints_what_trec_eval_prints(
    case: dict[str, Any], tmp_path: Path
) -> None:
    assert _command(case, tmp_path) == (case["code"], case["expected"])


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_evaluate_prefs_gives_trec_eval_exact_values(
    case: dict[str, Any], tmp_path: Path
) -> None:
    prefs_path, run_path = _files(case, tmp_path)
    options = case["options"]
    layout = options[options.index("-R") + 1]
    depth = next((int(o[2:]) for o in options if o.startswith("-M")), None)
    prefs = ie.read_prefs(prefs_path, format=layout)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ie.evaluate_prefs(run_path, prefs, list(_PREFS_METRICS), depth=depth)
    name_of = {str(ie.parse_metric(t)): t for t in _PREFS_METRICS}
    values = {
        (name_of[metric], query): value
        for query, metric, value in got.select(
            "query_id", "metric", "value"
        ).iter_rows()
    }
    expected = {}
    for line in case["exact"].splitlines():
        name, query, value = line.split("\t")
        if query != "all" and name.strip() in _PREFS_METRICS:
            expected[(name.strip(), query)] = float(value)
    assert expected
    assert set(values) == set(expected)
    for key, value in expected.items():
        assert math.isclose(values[key], value, rel_tol=TOL, abs_tol=TOL), key


BINARY = os.environ.get("IREVAL_TREC_EVAL")


@pytest.mark.skipif(BINARY is None, reason="set IREVAL_TREC_EVAL to a trec_eval binary")
@pytest.mark.parametrize("seed", range(1000, 1200))
def test_live_against_the_binary(seed: int, tmp_path: Path) -> None:
    assert BINARY is not None
    case = generate(seed)
    assert _command(case, tmp_path) == run_trec_eval(BINARY, case)
