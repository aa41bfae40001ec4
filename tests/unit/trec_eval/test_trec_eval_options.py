"""trec_eval's command line, parsed as getopt_long parses it."""

from __future__ import annotations

import pytest

from ireval_df.trec_eval._options import UsageError, parse_args


def test_clustered_flags_attached_and_separate_arguments() -> None:
    opts = parse_args(["-qcn", "-M100", "-l", "2", "-N1000", "-J", "qrels", "run"])
    assert (opts.query, opts.complete, opts.summary, opts.judged_only) == (
        True,
        True,
        False,
        True,
    )
    assert (opts.max_docs, opts.rel_level, opts.collection) == (100, 2, 1000)
    assert opts.files == ["qrels", "run"]


def test_options_may_follow_the_files_and_dash_is_a_file() -> None:
    opts = parse_args(["qrels", "-", "-q", "-mP.5"])
    assert opts.files == ["qrels", "-"]
    assert opts.query
    assert opts.selection.params == {"P": "5"}


def test_double_dash_ends_the_options() -> None:
    assert parse_args(["--", "-q", "run"]).files == ["-q", "run"]


def test_numbers_go_through_atol() -> None:
    opts = parse_args(["-l2.9", "-Mabc", "-D3.301", "q", "r"])
    assert (opts.rel_level, opts.max_docs, opts.debug_level, opts.debug_query) == (
        2,
        0,
        3,
        "301",
    )


def test_negative_depth_is_read_as_zero() -> None:
    assert parse_args(["-M-5", "q", "r"]).max_docs == 0


def test_long_options_exact_abbreviated_and_with_equals() -> None:
    opts = parse_args(
        ["--query_eval", "--measure=map", "--Max_retrieved_per_topic", "7", "q", "r"]
    )
    assert opts.query
    assert opts.max_docs == 7
    assert "map" in opts.selection.marked()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-x", "q", "r"], "invalid option -- 'x'"),
        (["-m"], "option requires an argument -- 'm'"),
        (["--nosuch", "q", "r"], "unrecognized option '--nosuch'"),
        (["--R", "qrels", "q", "r"], "option '--R' is ambiguous"),
        (["--nosummary=1", "q", "r"], "doesn't allow an argument"),
        (["--compat", "8", "q", "r"], "--compat must be 9 or 10"),
        (["-m", "nosuch", "q", "r"], "illegal measure 'nosuch'"),
        (["-m", "P.", "q", "r"], "improper measure in parameter 'P'"),
        (["q"], "Usage: trec_eval"),
        (["q", "r", "s"], "Usage: trec_eval"),
    ],
)
def test_usage_errors_exit_1(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_args(argv)
    assert info.value.code == 1
    assert message in info.value.message


def test_version_exits_0_at_once() -> None:
    with pytest.raises(UsageError) as info:
        parse_args(["-v", "-m", "nosuch"])
    assert info.value.code == 0
    assert "10.0" in info.value.message


def test_help_needs_no_files() -> None:
    assert parse_args(["-h", "-m", "P"]).help


def test_compat_must_be_spelled_out() -> None:
    assert parse_args(["--compat", "9", "q", "r"]).compat == "9"
    assert parse_args(["--compat=10", "q", "r"]).compat == "10"
    # '--co' stays an abbreviation of trec_eval's --complete_rel_info_wanted
    assert parse_args(["--co", "q", "r"]).complete
