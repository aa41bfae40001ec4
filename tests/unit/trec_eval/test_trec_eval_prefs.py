"""``ireval-df trec_eval -R prefs / -R qrels_prefs``: stops and messages.

Every expected stderr and exit status here is trec_eval 10.0's, run on the
same files (the numbers are in ``tests/reference/test_prefs_trec_eval.py``),
except where docs/trec_eval.md records a difference (the internal document
number of one message, and an inconsistency 10.0 aborts on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from ireval_df.trec_eval._command import run_command

if TYPE_CHECKING:
    from pathlib import Path

PREFS = "1 g s a 2\n1 g s b 1\n2 g s a 1\n2 g s c 0\n"
RUN = "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n2 Q0 a 1 1 r\n"


def files(tmp_path: Path, prefs: str, run: str) -> list[str]:
    p, r = tmp_path / "prefs", tmp_path / "run"
    p.write_text(prefs)
    r.write_text(run)
    return [str(p), str(r)]


def test_prefs_nickname_is_its_eight_measures(tmp_path: Path) -> None:
    result = run_command(["-m", "prefs", "-R", "prefs", *files(tmp_path, PREFS, RUN)])
    assert result.code == 0
    names = [line.split("\t")[0].rstrip() for line in result.stdout.splitlines()]
    assert names == [
        "runid",
        "num_q",
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
        "prefs_simp",
        "prefs_pair",
        "prefs_avgjg",
    ]


def test_counts_are_summed_and_printed_as_integers(tmp_path: Path) -> None:
    argv = ["-q", "-m", "prefs_num_prefs_poss", "-R", "prefs"]
    result = run_command([*argv, *files(tmp_path, PREFS, RUN)])
    assert result.stdout.splitlines() == [
        "prefs_num_prefs_poss  \t1\t1",
        "prefs_num_prefs_poss  \t2\t1",
        "prefs_num_prefs_poss  \tall\t2",
    ]


@pytest.mark.parametrize(
    ("argv", "prefs", "run", "code", "stdout", "stderr"),
    [
        # a document twice in the ranking: no newline before the second line
        (
            ["-q", "-m", "all_prefs", "-R", "prefs"],
            PREFS,
            RUN + "1 Q0 b 3 1 r\n",
            4,
            "",
            "trec_eval.form_prefs_counts: duplicate docs b"
            "trec_eval: Can't calculate measure 'prefs_num_prefs_poss'\n",
        ),
        # topic 2 missing without -c: topic 1 is printed first
        (
            ["-q", "-m", "prefs_simp", "-R", "prefs"],
            PREFS,
            "1 Q0 a 1 3 r\n",
            4,
            "prefs_simp            \t1\t1.0000\n",
            "trec_eval: result qid '2' not found in qrels\n",
        ),
        (
            ["-m", "map", "-R", "prefs"],
            PREFS,
            RUN,
            4,
            "",
            "trec_eval.form_res_qrels: rel_info format not qrels or results format "
            "not trec_results\ntrec_eval: Can't calculate measure 'map'\n",
        ),
        (
            ["-m", "prefs_simp"],
            "1 0 a 1\n",
            RUN,
            4,
            "",
            "trec_eval.form_prefs_info: prefs_info format not (prefs or qrels_prefs) "
            "or results format not trec_results\n"
            "trec_eval: Can't calculate measure 'prefs_simp'\n",
        ),
        (
            ["-m", "prefs_simp", "-R", "prefs"],
            "1 g s1 a 1\n1 g s2 a 0\n1 g s2 b 0\n",
            RUN,
            4,
            "",
            "trec_eval.form_prefs_counts: doc 'a' has both 0 and non-0 rel_level "
            "assigned\ntrec_eval: Can't calculate measure 'prefs_simp'\n",
        ),
        # 10.0 names the document by its internal number ("Internal docid 0")
        (
            ["-m", "prefs_simp", "-R", "prefs"],
            "1 g s1 a 1\n1 g s1 a 2\n",
            RUN,
            4,
            "",
            "trec_eval.form_prefs_counts: doc 'a' occurs with different rel_level "
            "in same jsg\ntrec_eval: Can't calculate measure 'prefs_simp'\n",
        ),
        # 10.0 aborts (SIGABRT) on contradicting sub-groups
        (
            ["-m", "prefs_simp", "-R", "prefs"],
            "1 g s1 a 2\n1 g s1 b 1\n1 g s2 a 1\n1 g s2 b 2\n",
            RUN,
            4,
            "",
            "trec_eval.form_prefs_counts: Pref inconsistency found for doc 'a'\n"
            "trec_eval: Can't calculate measure 'prefs_simp'\n",
        ),
        (
            ["-m", "all_prefs", "-R", "prefs"],
            "1 g s a 2\n1 g s\n",
            RUN,
            2,
            "",
            "trec_eval.get_prefs: Malformed line 2\ntrec_eval: Quit in file '{prefs}'\n",
        ),
        (
            ["-m", "all_prefs", "-R", "qrels_prefs"],
            "# a comment\n1 0 a\n",
            RUN,
            2,
            "",
            "trec_eval.get_qrels_prefs: Malformed line 1\n"
            "trec_eval: Quit in file '{prefs}'\n",
        ),
    ],
)
def test_stops_as_trec_eval_does(
    tmp_path: Path,
    argv: list[str],
    prefs: str,
    run: str,
    code: int,
    stdout: str,
    stderr: str,
) -> None:
    paths = files(tmp_path, prefs, run)
    result = run_command([*argv, *paths])
    assert (result.code, result.stdout, result.stderr) == (
        code,
        stdout,
        stderr.format(prefs=paths[0]),
    )


def test_unreadable_prefs_file(tmp_path: Path) -> None:
    result = run_command(
        ["-R", "prefs", "-m", "prefs_simp", str(tmp_path / "none"), str(tmp_path / "r")]
    )
    assert result.code == 2
    assert result.stderr.startswith("trec_eval.get_prefs: Cannot read prefs file")
