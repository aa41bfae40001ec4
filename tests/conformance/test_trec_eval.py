"""``ireval-df trec_eval`` against NIST trec_eval 10.0's own test outputs.

Every row of ``tests/conformance/trec_eval/manifest.tsv`` is run through
``ireval_df.cli.trec_eval.main`` and its standard output compared with the
expected file byte for byte. Every row, ``-R prefs``, ``-R qrels_prefs``,
``-R qrels_jg`` and ``-Z`` included, must pass.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ireval_df.cli.trec_eval import main

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE = Path(__file__).resolve().parent / "trec_eval"


def _manifest() -> list[tuple[str, list[str], str, str]]:
    path = CONFORMANCE / "manifest.tsv"
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines()[1:]:
        expected, options, rel_info, results = line.split("\t")
        rows.append((expected, options.split(), rel_info, results))
    return rows


def _params() -> list[object]:
    params = []
    for expected, options, rel_info, results in _manifest():
        joined = " ".join(options)
        case_id = f"{expected}[{joined or 'default'}|{rel_info}]"
        params.append(pytest.param(expected, options, rel_info, results, id=case_id))
    return params


def run(argv: list[str], stdin: bytes | None = None) -> tuple[int, bytes, str]:
    """Call the command in-process: exit status, stdout bytes, stderr text."""
    out, err = io.BytesIO(), io.StringIO()
    source = io.BytesIO(stdin) if stdin is not None else None
    code = main(argv, stdin=source, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("expected", "options", "rel_info", "results"), _params())
def test_manifest_row(
    expected: str, options: list[str], rel_info: str, results: str
) -> None:
    argv = [str(CONFORMANCE / a) if a == "zscores_file" else a for a in options] + [
        str(CONFORMANCE / rel_info),
        str(CONFORMANCE / results),
    ]
    code, stdout, stderr = run(argv)
    assert stderr == ""
    assert code == 0
    assert stdout == (CONFORMANCE / expected).read_bytes()


def test_results_from_stdin() -> None:
    data = (CONFORMANCE / "results.test").read_bytes()
    code, stdout, _ = run(
        ["-q", "-m", "all_trec", str(CONFORMANCE / "qrels.test"), "-"], data
    )
    assert code == 0
    assert stdout == (CONFORMANCE / "out.test.aq").read_bytes()


def test_missing_topic_without_c_stops_after_earlier_topics() -> None:
    # 302 is in the qrels but not in results.trunc: trec_eval 10.0 prints 301
    # and exits 4 (its message has the roles of the files backwards)
    code, stdout, stderr = run(
        ["-q", str(CONFORMANCE / "qrels.test"), str(CONFORMANCE / "results.trunc")]
    )
    assert code == 4
    assert stderr == "trec_eval: result qid '302' not found in qrels\n"
    assert {line.split(b"\t")[1] for line in stdout.splitlines()} == {b"301"}


def test_python_function_matches_expected_file() -> None:
    from ireval_df.trec_eval import trec_eval

    text = trec_eval(
        CONFORMANCE / "qrels.test", CONFORMANCE / "results.test", ["-m", "all_trec"]
    )
    assert text.encode() == (CONFORMANCE / "out.test.a").read_bytes()


def test_command_line_subprocess() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPO), env.get("PYTHONPATH")])
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ireval_df",
            "trec_eval",
            "-m",
            "all_trec",
            "-q",
            "-c",
            "-M100",
            "qrels.test",
            "results.trunc",
        ],
        cwd=CONFORMANCE,
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout == (CONFORMANCE / "out.test.aqcM").read_bytes()
