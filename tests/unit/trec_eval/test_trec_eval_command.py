"""Whole invocations: topic rules, errors, summaries, output, and the bug decisions.

Each test writes a tiny qrels/run pair and checks what trec_eval 10.0 prints
(values hand-derived or from SPEC.md) or the choice docs/trec_eval.md records
where trec_eval is undefined or crashes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest

from ireval_df.trec_eval._command import run_command

if TYPE_CHECKING:
    from pathlib import Path

# SPEC.md section 7: topic 1's qrels and run
EXAMPLE_QRELS = "1 0 a 2\n1 0 b 0\n1 0 c -1\n1 0 d 1\n1 0 e -5\n1 0 f 3\n"
EXAMPLE_RUN = "".join(
    f"1 Q0 {d} {i} {s} r\n"
    for i, (d, s) in enumerate(zip("zcaebd", (10, 9, 8, 7, 6, 5), strict=True))
)


def files(tmp_path: Path, qrels: str | bytes, run: str | bytes) -> list[str]:
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_bytes(qrels if isinstance(qrels, bytes) else qrels.encode())
    r.write_bytes(run if isinstance(run, bytes) else run.encode())
    return [str(q), str(r)]


def values(stdout: str) -> dict[tuple[str, str], str]:
    out = {}
    for line in stdout.splitlines():
        name, qid, value = line.split("\t")
        out[(name.rstrip(), qid)] = value
    return out


MEASURES = [
    "-m",
    "num_ret",
    "-m",
    "num_rel",
    "-m",
    "map",
    "-m",
    "bpref",
    "-m",
    "infAP",
    "-m",
    "ndcg",
    "-m",
    "ndcg_cut.3",
    "-m",
    "P.2",
    "-m",
    "unj.4",
    "-m",
    "rbp",
    "-m",
    "rbp_resid",
    "-m",
    "relstring",
]


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (
            [],
            "6 3 0.2222 0.3333 0.3333 0.2848 0.2100 0.0000 0.7500 0.0737 0.7943 '-.2.01'",
        ),
        (
            ["-J"],
            "3 3 0.5556 0.3333 0.5556 0.5250 0.5250 0.5000 0.0000 0.0937 0.0000 '201'",
        ),
        (
            ["-l2"],
            "6 2 0.1667 0.5000 0.2500 0.2848 0.2100 0.0000 0.7500 0.0737 0.7943 '-.2.01'",
        ),
        (
            ["-M3"],
            "3 3 0.1111 0.3333 0.1667 0.2100 0.2100 0.0000 0.5000 0.0540 0.9190 '-.2'",
        ),
    ],
)
def test_spec_worked_example(tmp_path: Path, option: list[str], expected: str) -> None:
    result = run_command(
        [*option, "-q", "-n", *MEASURES, *files(tmp_path, EXAMPLE_QRELS, EXAMPLE_RUN)]
    )
    got = values(result.stdout)
    order = [
        "num_ret",
        "num_rel",
        "map",
        "bpref",
        "infAP",
        "ndcg",
        "ndcg_cut_3",
        "P_2",
        "unj_4",
        "rbp",
        "rbp_resid",
        "relstring",
    ]
    assert " ".join(got[(name, "1")] for name in order) == expected


def test_ties_are_broken_by_docno_descending_and_rank_is_ignored(
    tmp_path: Path,
) -> None:
    run = "1 Q0 A 1 1.0 r\n1 Q0 a 2 1.0 r\n1 Q0 B 3 1.0 r\n"
    result = run_command(
        ["-q", "-m", "relstring", *files(tmp_path, "1 0 a 1\n1 0 B 0\n", run)]
    )
    assert values(result.stdout)[("relstring", "1")] == "'10-'"  # a, B, A


def test_summary_rules_sums_means_geometric_means(tmp_path: Path) -> None:
    qrels = "1 0 a 1\n2 0 b 1\n2 0 c 1\n"
    run = "1 Q0 a 1 1 r\n2 Q0 x 1 2 r\n2 Q0 b 2 1 r\n"
    got = values(run_command(["-m", "official", *files(tmp_path, qrels, run)]).stdout)
    assert got[("num_q", "all")] == "2"
    assert got[("num_ret", "all")] == "3"
    assert got[("num_rel", "all")] == "3"
    assert got[("map", "all")] == f"{(1 + 0.25) / 2:6.4f}"
    gm = math.exp((math.log(1) + math.log(0.25)) / 2)
    assert got[("gm_map", "all")] == f"{gm:6.4f}"
    assert got[("runid", "all")] == "r"


def test_output_format_is_printf_byte_for_byte(tmp_path: Path) -> None:
    result = run_command(
        [
            "-q",
            "-m",
            "num_ret",
            "-m",
            "P.5",
            *files(tmp_path, "x 0 a 1\n", "x Q0 a 1 1 run\n"),
        ]
    )
    assert result.stdout == (
        "num_ret               \tx\t1\nP_5                   \tx\t0.2000\n"
        "num_ret               \tall\t1\nP_5                   \tall\t0.2000\n"
    )


def test_topics_are_printed_in_byte_order(tmp_path: Path) -> None:
    qrels = "".join(f"{q} 0 d 1\n" for q in ("9", "10", "B", "a", "100"))
    run = "".join(f"{q} Q0 d 1 1 r\n" for q in ("9", "10", "B", "a", "100"))
    out = run_command(
        ["-q", "-n", "-m", "num_ret", *files(tmp_path, qrels, run)]
    ).stdout
    assert [line.split("\t")[1] for line in out.splitlines()] == [
        "10",
        "100",
        "9",
        "B",
        "a",
    ]


def test_run_topics_missing_from_qrels_are_ignored_runid_from_last_line(
    tmp_path: Path,
) -> None:
    run = "1 Q0 a 1 1 first\n2 Q0 b 1 1 last\n"
    got = values(
        run_command(["-m", "official", *files(tmp_path, "1 0 a 1\n", run)]).stdout
    )
    assert got[("num_q", "all")] == "1"
    assert got[("runid", "all")] == "last"


def test_complete_flag_scores_missing_topics_as_empty(tmp_path: Path) -> None:
    qrels = "1 0 a 1\n2 0 b 1\n2 0 c 1\n"
    run = "1 Q0 a 1 1 r\n"
    argv = [
        "-c",
        "-q",
        "-m",
        "num_rel",
        "-m",
        "map",
        "-m",
        "utility.1,-1,-1,0",
        "-m",
        "yaap",
        "-m",
        "relstring",
        *files(tmp_path, qrels, run),
    ]
    got = values(run_command(argv).stdout)
    assert got[("num_rel", "2")] == "2"
    assert got[("utility_1,-1,-1,0", "2")] == "0.0000"  # reset, as trec_eval does
    assert got[("relstring", "2")] == "''"
    assert got[("yaap", "2")] == f"{math.log(1 / 3):6.4f}"  # not reset
    assert got[("map", "all")] == "0.5000"


def test_missing_topic_without_complete_flag_is_fatal(tmp_path: Path) -> None:
    result = run_command(
        [
            "-q",
            "-m",
            "num_ret",
            *files(tmp_path, "1 0 a 1\n2 0 b 1\n", "1 Q0 a 1 1 r\n"),
        ]
    )
    assert result.code == 4
    assert result.stdout == "num_ret               \t1\t1\n"
    assert "qid '2' not found" in result.stderr


def test_duplicate_docs(tmp_path: Path) -> None:
    qrels = "1 0 a 1\n2 0 a 1\n"
    run = "1 Q0 a 1 3 r\n2 Q0 a 1 3 r\n2 Q0 b 1 2 r\n2 Q0 a 2 1 r\n"
    result = run_command(["-q", "-m", "num_ret", *files(tmp_path, qrels, run)])
    assert (result.code, result.stdout) == (4, "num_ret               \t1\t1\n")
    assert result.stderr.startswith("trec_eval.form_res_qrels: duplicate docs a")
    # a duplicate that -M cuts off is not seen
    result = run_command(["-M2", "-m", "num_ret", *files(tmp_path, qrels, run)])
    assert result.code == 0
    result = run_command(
        ["-m", "num_ret", *files(tmp_path, "1 0 a 1\n1 1 a 0\n", "1 Q0 a 1 1 r\n")]
    )
    assert result.code == 4
    assert "form_res_rels: duplicate docs a" in result.stderr


def test_num_rel_summary_with_complete_flag_ignores_the_level(tmp_path: Path) -> None:
    # trec_eval 10.0 bug, kept: with -c the summary counts qrels lines with rel > 0
    qrels = "1 0 a 1\n1 0 b 2\n1 0 c 0\n"
    got = values(
        run_command(
            [
                "-c",
                "-q",
                "-l2",
                "-m",
                "num_rel",
                *files(tmp_path, qrels, "1 Q0 a 1 1 r\n"),
            ]
        ).stdout
    )
    assert (got[("num_rel", "1")], got[("num_rel", "all")]) == ("1", "2")
    got = values(
        run_command(
            ["-q", "-l2", "-m", "num_rel", *files(tmp_path, qrels, "1 Q0 a 1 1 r\n")]
        ).stdout
    )
    assert got[("num_rel", "all")] == "1"


def test_nan_after_judged_only_prints_like_c(tmp_path: Path) -> None:
    # nothing judged retrieved: 0/0 at recall 0, as trec_eval 10.0 prints it
    result = run_command(
        [
            "-J",
            "-q",
            "-m",
            "iprec_at_recall.0",
            *files(tmp_path, "1 0 a 1\n", "1 Q0 x 1 1 r\n"),
        ]
    )
    assert result.stdout.splitlines() == [
        "iprec_at_recall_0.00  \t1\t  -nan",
        "iprec_at_recall_0.00  \tall\t  -nan",
    ]


def test_gain_map_gains_closer_than_one_are_ordered_correctly(tmp_path: Path) -> None:
    # trec_eval sorts gains with (int)(g1 - g2) and gives 1.0 here; the ideal
    # ranking (2 before 1) gives (1 + 1.5/log2(3)) ... see docs/trec_eval.md
    qrels = "1 0 a 1\n1 0 b 2\n1 0 c 0\n"
    run = "1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n"
    got = values(
        run_command(
            ["-q", "-n", "-m", "ndcg.2=1.5", *files(tmp_path, qrels, run)]
        ).stdout
    )
    dcg = 1 + 1.5 / math.log2(3)
    ideal = 1.5 + 1 / math.log2(3)
    assert got[("ndcg_2=1.5", "1")] == f"{dcg / ideal:6.4f}"


def test_unsorted_11pt_points_average_the_same(tmp_path: Path) -> None:
    args = files(tmp_path, EXAMPLE_QRELS, EXAMPLE_RUN)
    a = values(run_command(["-q", "-n", "-m", "11pt_avg.1,0.5,0", *args]).stdout)
    b = values(run_command(["-q", "-n", "-m", "11pt_avg.0,0.5,1", *args]).stdout)
    assert a[("11pt_avg_1,0.5,0", "1")] == b[("11pt_avg_0,0.5,1", "1")]


def test_topic_judged_only_negatively_is_scored_with_no_relevant(
    tmp_path: Path,
) -> None:
    # trec_eval exits 4 (first topic) or crashes (rel <= -2); scored as R = 0
    qrels = "1 0 a -1\n1 0 b -3\n2 0 c 1\n"
    run = "1 Q0 a 1 1 r\n2 Q0 c 1 1 r\n"
    result = run_command(
        ["-q", "-m", "num_rel", "-m", "ndcg", "-m", "rbp", *files(tmp_path, qrels, run)]
    )
    assert result.code == 0
    got = values(result.stdout)
    assert (got[("num_rel", "1")], got[("ndcg", "1")], got[("rbp", "1")]) == (
        "0",
        "0.0000",
        "0.0000",
    )


def test_relstring_characters(tmp_path: Path) -> None:
    qrels = "1 0 a 12\n1 0 b -1\n1 0 c 3\n"
    run = "1 Q0 a 1 4 r\n1 Q0 b 2 3 r\n1 Q0 x 3 2 r\n1 Q0 c 4 1 r\n"
    got = values(
        run_command(["-q", "-m", "relstring.3", *files(tmp_path, qrels, run)]).stdout
    )
    assert got[("relstring_3", "1")] == "'>.-'"


def test_collection_size_feeds_utility(tmp_path: Path) -> None:
    args = files(tmp_path, "1 0 a 1\n1 0 b 1\n", "1 Q0 a 1 2 r\n1 Q0 x 2 1 r\n")
    got = values(
        run_command(["-N100", "-q", "-n", "-m", "utility.0,0,0,1", *args]).stdout
    )
    assert (
        got[("utility_0,0,0,1", "1")] == "97.0000"
    )  # d = N + a - n - R = 100 + 1 - 2 - 2


def test_zscores(tmp_path: Path) -> None:
    z = tmp_path / "z"
    z.write_text("1 map 0.25 0.5\n1 num_ret 1 0\n")
    args = files(tmp_path, "1 0 a 1\n", "1 Q0 x 1 2 r\n1 Q0 a 2 1 r\n")
    out = run_command(
        ["-Z", str(z), "-q", "-m", "map", "-m", "num_ret", "-m", "P.1", *args]
    ).stdout
    assert out.splitlines() == [
        "Znum_ret               \t1\t-1000000.0000",  # stddev 0 and value != mean
        "Zmap                   \t1\t0.5000",  # (0.5 - 0.25) / 0.5
        "ZP_1                   \t1\t-1000000.0000",  # not in the file
        "Znum_ret               \tall\t-1000000.0000",
        "Zmap                   \tall\t0.5000",
        "ZP_1                   \tall\t-1000000.0000",
    ]


def test_debug_query_evaluates_one_topic(tmp_path: Path) -> None:
    args = files(tmp_path, "1 0 a 1\n2 0 b 1\n", "1 Q0 a 1 1 r\n2 Q0 x 1 1 r\n")
    got = values(run_command(["-D0.2", "-m", "official", *args]).stdout)
    assert got[("num_q", "all")] == "1"
    assert got[("map", "all")] == "0.0000"
    assert run_command(["-D0.9", *args]).code == 7


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["-R", "qrels_jg", "-m", "map"], 4, "Can't calculate measure 'map'"),
        (["-R", "nosuch"], 2, "Illegal rel_format 'nosuch'"),
        (["-T", "nosuch"], 2, "Illegal retrieval results format 'nosuch'"),
        (["-m", "P.3,3"], 2, "Cannot initialize measure 'P'"),
    ],
)
def test_errors(tmp_path: Path, argv: list[str], code: int, message: str) -> None:
    result = run_command([*argv, *files(tmp_path, "1 0 a 1\n", "1 Q0 a 1 1 r\n")])
    assert (result.code, result.stdout) == (code, "")
    assert message in result.stderr


@pytest.mark.parametrize("run", [b"", b"1 Q0 a 1 1 r\x00\n", b"# nothing\n"])
def test_unusable_run_files_are_input_errors(tmp_path: Path, run: bytes) -> None:
    result = run_command(files(tmp_path, "1 0 a 1\n", run))
    assert result.code == 2
    assert "trec_eval: Quit in file" in result.stderr


def test_missing_files(tmp_path: Path) -> None:
    result = run_command([str(tmp_path / "nope"), str(tmp_path / "nope2")])
    assert result.code == 2
    assert "Cannot read qrels file" in result.stderr


def test_latin1_input_gives_latin1_output(tmp_path: Path) -> None:
    args = files(tmp_path, b"t\xe9 0 a 1\n", b"t\xe9 Q0 a 1 1 r\xfan\n")
    result = run_command(["-q", "-m", "num_ret", "-m", "runid", *args])
    assert result.encoding == "latin-1"
    assert result.stdout.encode("latin-1") == (
        b"num_ret               \tt\xe9\t1\nrunid                 \tall\tr\xfan\nnum_ret               \tall\t1\n"
    )


def test_no_summary(tmp_path: Path) -> None:
    result = run_command(["-n", *files(tmp_path, "1 0 a 1\n", "1 Q0 a 1 1 r\n")])
    assert (result.code, result.stdout) == (0, "")


class TestCompat9:
    """``--compat 9``: trec_eval 9.x semantics (what pytrec_eval computes)."""

    def test_recall_cutoffs_use_the_old_rounding(self, tmp_path: Path) -> None:
        # R = 7, p = 0.2: lround(1.4) = 1 relevant needed (10.0); 9.x: (long)(1.4 + 0.9) = 2
        qrels = "".join(f"1 0 r{i} 1\n" for i in range(7))
        run = "1 Q0 r0 1 9 r\n1 Q0 x 2 8 r\n1 Q0 r1 3 7 r\n"
        args = ["-q", "-n", "-m", "iprec_at_recall.0.2", *files(tmp_path, qrels, run)]
        assert (
            values(run_command(args).stdout)[("iprec_at_recall_0.20", "1")] == "1.0000"
        )
        got = values(run_command(["--compat", "9", *args]).stdout)
        assert got[("iprec_at_recall_0.20", "1")] == "0.6667"

    def test_scores_are_float32(self, tmp_path: Path) -> None:
        run = "1 Q0 a 1 1.00000001 r\n1 Q0 b 2 1.0 r\n"
        args = ["-q", "-n", "-m", "relstring", *files(tmp_path, "1 0 a 1\n", run)]
        assert values(run_command(args).stdout)[("relstring", "1")] == "'1-'"
        got = values(run_command(["--compat", "9", *args]).stdout)
        assert got[("relstring", "1")] == "'-1'"  # tie: b before a

    def test_missing_topics(self, tmp_path: Path) -> None:
        args = files(tmp_path, "1 0 a 1\n2 0 b 1\n", "1 Q0 a 1 1 r\n")
        got = values(
            run_command(
                ["--compat", "9", "-q", "-m", "map", "-m", "num_q", *args]
            ).stdout
        )
        assert (got[("map", "all")], got[("num_q", "all")]) == ("1.0000", "1")
        assert ("map", "2") not in got
        got = values(
            run_command(
                ["--compat", "9", "-c", "-q", "-m", "map", "-m", "num_q", *args]
            ).stdout
        )
        assert (got[("map", "all")], got[("num_q", "all")]) == ("0.5000", "2")
        assert ("map", "2") not in got

    def test_all_trec_without_the_new_measures(self, tmp_path: Path) -> None:
        out = run_command(
            [
                "--compat",
                "9",
                "-m",
                "all_trec",
                *files(tmp_path, "1 0 a 1\n", "1 Q0 a 1 1 r\n"),
            ]
        )
        names = {line.split("\t")[0].strip() for line in out.stdout.splitlines()}
        assert not {"rbp", "rbp_resid", "unj_5"} & names
        assert {"map", "ndcg", "set_F"} <= names
