"""validate(): one row per problem, read leniently, never raising on what it reports.

Each test builds the smallest input showing one check; counts are derived by
hand in the comments. The ``ireval-df validate`` command is tested at the end.
"""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stderr, redirect_stdout
from typing import TYPE_CHECKING, Any

import pandas as pd
import polars as pl
import pytest

from ireval_df import evaluate
from ireval_df.cli.main import main
from ireval_df.diagnostics.validation import CHECKS, COLUMNS, validate
from ireval_df.errors import (
    DataError,
    FormatError,
    IrevalError,
    IrevalWarning,
    MetricSpecError,
    SchemaError,
)

if TYPE_CHECKING:
    from pathlib import Path


NAN, INF = float("nan"), float("inf")


def frame(**columns: Any) -> pl.DataFrame:
    return pl.DataFrame(columns)


def by_check(report: pl.DataFrame) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for row in report.iter_rows(named=True):
        out.setdefault(row["check"], []).append(row)
    return out


def one(report: pl.DataFrame, check: str) -> dict[str, Any]:
    rows = by_check(report).get(check, [])
    assert len(rows) == 1, (check, report.select("check", "run_id", "count").rows())
    return rows[0]


# a clean pair: one query, three distinct scores, every document judged
CLEAN_RUN = frame(query_id=["q1"] * 3, doc_id=["a", "b", "c"], score=[3.0, 2.0, 1.0])
CLEAN_QRELS = frame(query_id=["q1"] * 3, doc_id=["a", "b", "c"], relevance=[1, 0, 0])


def test_clean_inputs_have_no_findings() -> None:
    report = validate(CLEAN_RUN, CLEAN_QRELS, k=3)
    assert report.height == 0
    assert dict(report.schema) == COLUMNS


def test_every_check_is_registered_with_a_severity() -> None:
    assert list(COLUMNS) == [
        "check",
        "severity",
        "input",
        "run_id",
        "count",
        "value",
        "example",
        "message",
        "fix",
    ]
    assert {c.severity for c in CHECKS.values()} == {"error", "warning", "info"}
    assert all(name.isidentifier() and name.islower() for name in CHECKS)


# --------------------------------------------------------------------------
# the run


def test_scores_and_duplicates_are_reported_not_raised() -> None:
    run = frame(
        query_id=["q1"] * 6,
        doc_id=["a", "a", "a", "b", "c", "d"],
        score=[1.0, 1.0, 0.5, NAN, INF, None],
    )
    with pytest.raises(DataError):  # evaluate() refuses the same run
        evaluate(run, CLEAN_QRELS, ["AP"])
    found = by_check(validate(run, CLEAN_QRELS, k=3))
    # 'a' three times: 2 rows beyond the first, 1 document
    dup = found["duplicate_docs"][0]
    assert (dup["severity"], dup["count"], dup["example"]) == (
        "error",
        2,
        "query 'q1' doc 'a' x3",
    )
    assert "1 document appears more than once" in dup["message"]
    assert "duplicates='first'" in dup["fix"]
    assert "duplicates='max'" in dup["fix"]
    nan = found["nan_scores"][0]
    assert (nan["severity"], nan["count"]) == ("error", 1)
    assert "1 NaN score;" in nan["message"]
    assert nan["example"] == "query 'q1' doc 'b': NaN"
    assert "is_not_nan()" in nan["fix"]
    # evaluate ranks inf first and -inf last, as trec_eval does: only info
    infinite = found["infinite_scores"][0]
    assert (infinite["severity"], infinite["count"]) == ("info", 1)
    assert "(1 inf, 0 -inf)" in infinite["message"]
    assert found["null_scores"][0]["count"] == 1
    assert found["null_scores"][0]["example"] == "query 'q1' doc 'd'"


def test_null_ids_in_run_and_qrels() -> None:
    run = frame(
        query_id=["q1", None, "q1"], doc_id=["a", "b", None], score=[3.0, 2.0, 1.0]
    )
    qrels = frame(query_id=["q1", "q1"], doc_id=["a", None], relevance=[1, 0])
    found = by_check(validate(run, qrels, k=3))
    in_run, in_qrels = sorted(found["null_ids"], key=lambda r: r["input"])[::-1]
    assert (in_run["input"], in_run["count"]) == ("run", 2)
    assert in_run["example"] == "run_id: 0, query_id: 1, doc_id: 1"
    assert (in_qrels["input"], in_qrels["count"]) == ("qrels", 1)


def test_tied_scores_in_the_top_k() -> None:
    # ranks (score desc, doc_id desc): q1 a, c, b with c and b tied at 1.0;
    # q2 a, b, d, c with d and c tied at 1.0 at ranks 3-4
    run = frame(
        query_id=["q1"] * 3 + ["q2"] * 4,
        doc_id=["a", "b", "c", "a", "b", "c", "d"],
        score=[3.0, 1.0, 1.0, 3.0, 2.0, 1.0, 1.0],
    )
    row = one(validate(run, k=2), "tied_scores")
    # with k=2, q1's top 2 is a (3.0) and c (1.0, tied with b): a tie
    assert (row["count"], row["value"], row["severity"]) == (1, 0.5, "info")
    assert "doc_id descending" in row["message"]
    assert "tied_scores" not in by_check(
        validate(run.filter(pl.col("query_id") == "q2"), k=2)
    )


def test_short_rankings_against_the_deepest_cutoff() -> None:
    run = frame(
        query_id=["q1"] * 5 + ["q2"] * 12,
        doc_id=[f"d{i}" for i in range(17)],
        score=[float(i) for i in range(17)],
    )
    row = one(validate(run), "short_rankings")  # k=10: q1 has 5 documents
    assert (row["count"], row["example"], row["value"]) == (1, "'q1' (5 docs)", 0.5)
    assert "fewer than 10 documents (k=10)" in row["message"]
    row = one(validate(run, metrics=["nDCG@10", "R@100", "AP"]), "short_rankings")
    assert row["count"] == 2
    assert "fewer than 100 documents (the cutoff of R@100)" in row["message"]
    assert "short_rankings" not in by_check(validate(run, depth=5))


def test_rank_column_that_disagrees_with_the_scores() -> None:
    # q1: ranks say b before a, scores say a before b; q2 agrees
    run = frame(
        query_id=["q1", "q1", "q2", "q2"],
        doc_id=["a", "b", "a", "b"],
        score=[2.0, 1.0, 2.0, 1.0],
        rank=[2, 1, 1, 2],
    )
    row = one(validate(run, k=2, depth=2), "rank_column_ignored")
    assert (row["count"], row["example"], row["value"]) == (1, "'q1'", 0.5)
    assert "rank_from='column'" in row["fix"]


def test_ties_ordered_by_a_rank_column_are_only_ties() -> None:
    # all scores equal: trec_eval orders by doc_id descending (c, b, a), the
    # file's ranks say a, b, c: the tie is reported, the rank column is not
    # a different ranking (14 of 17 real TREC 2003 Robust runs look so)
    run = frame(
        query_id=["q"] * 3, doc_id=["a", "b", "c"], score=[1.0] * 3, rank=[1, 2, 3]
    )
    found = by_check(validate(run, k=3, depth=3))
    assert "rank_column_ignored" not in found
    assert found["tied_scores"][0]["count"] == 1


def test_ranks_that_are_not_counts(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_text("q Q0 a 1 2.0 t\nq Q0 b x 1.0 t\nq Q0 c -1 0.5 t\n")
    row = one(validate(path, k=3, depth=3), "null_ranks")
    assert (row["count"], row["example"], row["severity"]) == (
        2,
        "query 'q' doc 'b'",
        "info",
    )
    assert "rank_from='column'" in row["message"]


def test_several_runs_get_a_row_each() -> None:
    run = frame(
        run_id=["a", "a", "b"],
        query_id=["q1", "q1", "q1"],
        doc_id=["x", "x", "x"],
        score=[1.0, 1.0, 1.0],
    )
    rows = by_check(validate(run, k=1, depth=1))["duplicate_docs"]
    assert [(r["run_id"], r["count"]) for r in rows] == [("a", 1)]


# --------------------------------------------------------------------------
# the qrels


def test_grades() -> None:
    qrels = frame(
        query_id=["q1", "q1", "q1", "q2", "q2", "q3", "q3"],
        doc_id=["a", "b", "c", "a", "a", "a", "b"],
        relevance=[1.5, -1.0, None, 0.0, 2.0, 0.0, -1.0],
    )
    found = by_check(validate(qrels=qrels))
    assert found["non_integer_grades"][0]["count"] == 1
    assert found["non_integer_grades"][0]["example"] == "query 'q1' doc 'a': 1.5"
    assert found["null_grades"][0]["count"] == 1
    # q2/a is judged twice, with different grades
    dup = found["duplicate_judgments"][0]
    assert (dup["count"], dup["example"]) == (1, "query 'q2' doc 'a' x2")
    assert "(1 with different grades)" in dup["message"]
    negative = found["negative_grades"][0]
    assert (negative["severity"], negative["count"], negative["example"]) == (
        "info",
        2,
        "-1 (2)",
    )
    assert "not judged" in negative["message"]
    # q1's best grade is 1.5 (>= 1), q2's is 2, q3's is 0: only q3 lacks one
    none = found["no_relevant"][0]
    assert (none["count"], none["example"], none["value"]) == (1, "'q3'", 1 / 3)
    assert "no grade >= 1" in none["message"]
    assert by_check(validate(qrels=qrels, rel=2))["no_relevant"][0]["count"] == 2


def test_trec_qrels_with_fractional_grades_are_read_leniently(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("1 0 a 1\n1 0 b 1.5\n")
    with pytest.raises(
        FormatError, match=r"line 2: relevance '1\.5' is not a whole number"
    ):
        evaluate(CLEAN_RUN, path, ["AP"])
    row = one(validate(qrels=path), "non_integer_grades")
    assert row["example"] == "query '1' doc 'b': 1.5"
    path.write_text("1 0 a 1\n1 0 b high\n")  # not a number at all: unreadable
    with pytest.raises(FormatError, match=r"line 2: relevance 'high' is not a finite"):
        validate(qrels=path)


# --------------------------------------------------------------------------
# run against qrels


def test_one_sided_queries_per_run() -> None:
    run = frame(
        run_id=["a", "a", "a", "b"],
        query_id=["q1", "q2", "q9", "q1"],
        doc_id=["d"] * 4,
        score=[1.0] * 4,
    )
    qrels = frame(query_id=["q1", "q2", "q3"], doc_id=["d"] * 3, relevance=[1] * 3)
    found = by_check(validate(run, qrels, k=1, depth=1))
    only_qrels = {
        r["run_id"]: (r["count"], r["example"]) for r in found["queries_only_in_qrels"]
    }
    assert only_qrels == {"a": (1, "'q3'"), "b": (2, "'q2', 'q3'")}
    assert "missing='skip'" in found["queries_only_in_qrels"][0]["fix"]
    only_run = found["queries_only_in_run"]
    assert [(r["run_id"], r["count"], r["example"]) for r in only_run] == [
        ("a", 1, "'q9'")
    ]


def test_no_shared_queries() -> None:
    run = frame(query_id=["007"], doc_id=["d"], score=[1.0])
    qrels = frame(query_id=["q1"], doc_id=["d"], relevance=[1])
    found = by_check(validate(run, qrels, k=1, depth=1))
    row = found["no_shared_queries"][0]
    assert (row["severity"], row["example"]) == ("error", "run: '007'; qrels: 'q1'")
    assert "queries_only_in_qrels" not in found  # said once, by the error


def test_ids_that_differ_only_by_padding_case_or_blanks() -> None:
    run = frame(
        query_id=["001", " Q2", "3"],
        doc_id=["D01", "x", "y"],
        score=[1.0, 1.0, 1.0],
    )
    qrels = frame(
        query_id=["1", "1", "q2", "3"],
        doc_id=["d1", "d2", "x", "y"],
        relevance=[1, 1, 1, 1],
    )
    queries = one(validate(run, qrels, k=1, depth=1), "id_format")
    # byte order: ' Q2' < '001'; the documents of the one shared query ('3')
    # are all judged, so no document id is reported
    assert (queries["count"], queries["example"]) == (2, "' Q2' ~ 'q2', '001' ~ '1'")
    assert "count as missing from the run" in queries["message"]
    run = frame(query_id=["1"], doc_id=["D01"], score=[1.0])
    doc = one(validate(run, qrels, k=1, depth=1), "id_format")
    assert (doc["count"], doc["example"]) == (1, "'1/D01' ~ '1/d1'")
    assert "count as unjudged" in doc["message"]


def test_integer_ids_against_string_ids() -> None:
    run = frame(query_id=[1, 2], doc_id=["d", "d"], score=[1.0, 1.0])
    qrels = frame(query_id=["001", "2"], doc_id=["d", "d"], relevance=[1, 1])
    found = by_check(validate(run, qrels, k=1, depth=1))
    dtypes = found["id_dtypes"][0]
    assert dtypes["example"] == "query_id: Int64 (run), String (qrels)"
    assert dtypes["count"] is None
    assert found["id_format"][0]["example"] == "'1' ~ '001'"


def test_unjudged_share_at_k() -> None:
    # top 3 of q1: a (judged), x (absent from the qrels), y (graded -1): 2 of 3
    run = frame(
        query_id=["q1"] * 4, doc_id=["a", "x", "y", "b"], score=[4.0, 3.0, 2.0, 1.0]
    )
    qrels = frame(query_id=["q1"] * 3, doc_id=["a", "y", "b"], relevance=[1, -1, 0])
    row = one(validate(run, qrels, k=3, depth=3), "unjudged_at_k")
    assert (row["severity"], row["count"], row["example"]) == (
        "warning",
        2,
        "'q1' (2 of 3)",
    )
    assert row["value"] == pytest.approx(2 / 3)
    assert "judged_only=true" in row["fix"]
    # top 4: 2 of 4 unjudged, not more than half: information
    row = one(validate(run, qrels, k=4, depth=4), "unjudged_at_k")
    assert (row["severity"], row["value"]) == ("info", 0.5)


# --------------------------------------------------------------------------
# the query table


def test_query_table() -> None:
    queries = frame(query_id=["q1", "q1", None, "q8"], lang=["en", "de", "fr", "en"])
    qrels = frame(query_id=["q1", "q2"], doc_id=["a", "a"], relevance=[1, 1])
    found = by_check(validate(qrels=qrels, queries=queries))
    assert found["duplicate_queries"][0]["count"] == 1
    assert found["null_ids"][0]["input"] == "queries"
    without = found["queries_without_metadata"][0]
    assert (without["count"], without["example"], without["input"]) == (
        1,
        "'q2'",
        "queries+qrels",
    )
    assert found["queries_only_in_metadata"][0]["example"] == "'q8'"
    # without qrels, the run's queries are the ones evaluated
    run = frame(query_id=["q3"], doc_id=["a"], score=[1.0])
    row = one(validate(run, queries=queries, k=1, depth=1), "queries_without_metadata")
    assert (row["example"], row["input"]) == ("'q3'", "queries+run")


# --------------------------------------------------------------------------
# empty inputs, one of each check, options, kinds of frames


def test_empty_inputs() -> None:
    empty_run = CLEAN_RUN.clear()
    found = by_check(
        validate(empty_run, CLEAN_QRELS.clear(), CLEAN_QRELS.select("query_id").clear())
    )
    assert sorted((r["input"], r["severity"]) for r in found["empty_input"]) == [
        ("qrels", "error"),
        ("queries", "warning"),
        ("run", "error"),
    ]
    assert len(found) == 1


def test_one_input_triggers_every_check() -> None:
    run = frame(
        run_id=["a"] * 9 + ["b"],
        query_id=["q1", "q1", "q1", "q1", "q1", None, "002", "q9", "q1", "zz"],
        doc_id=["d1", "d1", "x", "y", "z", "d", "e", "f", "g", "h"],
        score=[5.0, 5.0, NAN, None, 4.0, 1.0, 1.0, 1.0, 4.0, float("-inf")],
        rank=[5, 4, 3, 2, 1, 1, 1, 1, 1, None],
    )
    qrels = frame(
        query_id=[1, 1, 1, 2, 3, 3, 1],
        doc_id=["D1", "X", "y", "e", "a", "b", "g"],
        relevance=[1.0, 1.5, -1.0, 0.0, 1.0, None, 1.0],
    ).with_columns(pl.col("query_id").cast(pl.String).replace({"1": "q1"}))
    qrels = pl.concat([qrels, qrels.head(1)])
    queries = frame(query_id=["q1", "q1", "q7"], lang=["en", "en", "de"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reporting is silent
        report = validate(run, qrels, queries, k=2, metrics=["P@5"])
    integers = frame(query_id=[1], doc_id=["g"], score=[1.0])  # Int64 ids
    dtypes = validate(integers, qrels, k=1)
    checks = set(report["check"]) | set(dtypes["check"]) | {"empty_input"}
    assert checks == set(CHECKS), set(CHECKS) - checks
    severities = report["severity"].to_list()
    order = {"error": 0, "warning": 1, "info": 2}
    assert severities == sorted(severities, key=order.__getitem__)


def test_bad_options() -> None:
    with pytest.raises(IrevalError, match="needs a run, qrels or both"):
        validate()
    for options in ({"k": 0}, {"k": True}, {"depth": 0}, {"depth": 2.5}):
        with pytest.raises(IrevalError, match="must be a positive whole number"):
            validate(CLEAN_RUN, **options)
    with pytest.raises(IrevalError, match="rel must be a whole number"):
        validate(CLEAN_RUN, CLEAN_QRELS, rel=0.5)
    with pytest.raises(MetricSpecError, match="unknown metric 'ndgc@10'"):
        validate(CLEAN_RUN, metrics=["ndgc@10"])


def test_huge_options() -> None:
    found = by_check(
        validate(CLEAN_RUN, CLEAN_QRELS, k=10**30, depth=10**30, rel=2**70)
    )
    assert found["short_rankings"][0]["count"] == 1
    assert found["no_relevant"][0]["count"] == 1


def test_unreadable_inputs_still_raise(tmp_path: Path) -> None:
    with pytest.raises(
        SchemaError, match=r"(?s)missing column 'score'.*Hint: pass columns="
    ):
        validate(frame(qid=["1"], docno=["a"], bm25=[1.0]))
    assert (
        validate(
            frame(qid=["1"], docno=["a"], bm25=[1.0]),
            columns={"bm25": "score"},
            k=1,
            depth=1,
        ).height
        == 0
    )
    path = tmp_path / "bad.run"
    path.write_text("1 Q0 a 1 2.0 t\n1 Q0 b\n")
    with pytest.raises(FormatError, match=r"bad\.run, line 2: expected at least 6"):
        validate(path)
    path.write_text("1 Q0 a 1 nan t\n1 Q0 a 2 1.0 t\n")  # NaN, duplicate: reported
    found = by_check(validate(path, k=2, depth=2))
    assert {"nan_scores", "duplicate_docs"} <= set(found)


def test_a_lazy_plan_that_fails_is_a_schema_error() -> None:
    lazy = CLEAN_RUN.lazy().with_columns(
        pl.col("doc_id").cast(pl.Float64).alias("score")
    )
    with pytest.raises(SchemaError, match="could not read run: "):
        validate(lazy)


def test_pandas_lazy_and_one_sided_inputs() -> None:
    report = validate(CLEAN_RUN.to_pandas(), CLEAN_QRELS, k=2)
    assert isinstance(report, pd.DataFrame)
    assert list(report.columns) == list(COLUMNS)
    lazy = validate(CLEAN_RUN.lazy(), CLEAN_QRELS, k=2)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(validate(CLEAN_RUN, CLEAN_QRELS, k=2))
    assert validate(qrels=CLEAN_QRELS).height == 0
    assert isinstance(validate(None, CLEAN_QRELS.to_pandas()), pd.DataFrame)


def test_a_list_of_runs_and_files(tmp_path: Path) -> None:
    first, second = tmp_path / "bm25.run", tmp_path / "dense.run"
    first.write_text("q1 Q0 a 1 2.0 bm25\nq1 Q0 a 2 1.0 bm25\n")
    second.write_text("q1 Q0 a 1 2.0 dense\n")
    rows = by_check(validate([first, second], CLEAN_QRELS, k=1, depth=1))
    assert [r["run_id"] for r in rows["duplicate_docs"]] == ["bm25"]


def test_validate_never_warns_or_modifies_its_inputs() -> None:
    run = frame(query_id=["q1", "q1"], doc_id=["a", "a"], score=[NAN, 1.0])
    before = run.clone()
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrevalWarning)
        validate(run, CLEAN_QRELS)
    assert run.equals(before, null_equal=True)


# --------------------------------------------------------------------------
# ireval-df validate


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    paths = {
        "clean": ("clean.run", "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 1 t\n"),
        "warn": (
            "warn.run",
            "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 1 t\nq9 Q0 a 1 1 t\n",
        ),
        "dup": ("dup.run", "q1 Q0 a 1 3 t\nq1 Q0 a 2 2 t\nq1 Q0 c 3 1 t\n"),
        "qrels": ("qrels.txt", "q1 0 a 1\nq1 0 b 0\nq1 0 c 0\n"),
        "broken": ("broken.run", "q1 Q0 a 1 3 t\nq1 Q0\n"),
    }
    out = {}
    for key, (name, text) in paths.items():
        (tmp_path / name).write_text(text)
        out[key] = str(tmp_path / name)
    return out


def test_cli_clean_inputs_exit_0(files: dict[str, str]) -> None:
    code, out, err = run_cli(
        [
            "validate",
            "--run",
            files["clean"],
            "--qrels",
            files["qrels"],
            "-k",
            "3",
            "--depth",
            "3",
        ]
    )
    assert (code, out) == (0, "")
    assert err == "ireval-df validate: no problems found\n"


def test_cli_warnings_exit_0_unless_strict(files: dict[str, str]) -> None:
    argv = [
        "validate",
        "--run",
        files["warn"],
        "--qrels",
        files["qrels"],
        "-k",
        "3",
        "--depth",
        "1",
    ]
    code, out, err = run_cli(argv)
    assert code == 0
    header = out.splitlines()[0].split()
    assert header == [
        "severity",
        "check",
        "input",
        "run_id",
        "count",
        "value",
        "example",
    ]
    assert "queries_only_in_run" in out
    assert "1. [warning] queries_only_in_run: run 't' answers 1 query without" in out
    assert "   fix: judge them" in out
    assert err == "ireval-df validate: 0 errors, 1 warning, 0 info\n"
    code, _, _ = run_cli([*argv, "--strict"])
    assert code == 1


def test_cli_errors_exit_1(files: dict[str, str]) -> None:
    code, out, err = run_cli(
        [
            "validate",
            "--run",
            files["dup"],
            "--qrels",
            files["qrels"],
            "-k",
            "3",
            "--depth",
            "3",
        ]
    )
    assert code == 1
    assert "duplicate_docs" in out
    assert err.startswith("ireval-df validate: 1 error")


def test_cli_unreadable_file_exit_1_without_traceback(files: dict[str, str]) -> None:
    code, out, err = run_cli(["validate", "--run", files["broken"]])
    assert (code, out) == (1, "")
    assert err.startswith("ireval-df: error: ")
    assert "broken.run, line 2: expected at least 6" in err
    assert "Traceback" not in err
    with pytest.raises(FormatError):
        main(["--debug", "validate", "--run", files["broken"]])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["validate"], "give --run, --qrels or both"),
        (["validate", "--qrels", "q.txt", "-k", "0"], "-k must be positive"),
        (["validate", "--qrels", "q.txt", "--depth", "-1"], "--depth must be positive"),
        (["validate", "--qrels", "q.txt", "-k", "x"], "invalid int value"),
    ],
)
def test_cli_bad_usage_exit_2(argv: list[str], message: str) -> None:
    code, out, err = run_cli(argv)
    assert (code, out) == (2, "")
    assert message in err


def test_cli_writes_the_findings(files: dict[str, str], tmp_path: Path) -> None:
    target = tmp_path / "findings.parquet"
    code, out, err = run_cli(
        [
            "validate",
            "--run",
            files["dup"],
            "--qrels",
            files["qrels"],
            "-k",
            "3",
            "-o",
            str(target),
        ]
    )
    assert (code, out) == (1, "")
    assert f"wrote 1 findings to {target}" in err
    written = pl.read_parquet(target)
    assert dict(written.schema) == COLUMNS
    assert written["check"].to_list() == ["duplicate_docs"]


def test_ranks_that_differ_only_inside_ties_are_not_ignored_ranks() -> None:
    # a system lists tied documents in its own order (here doc_id ascending,
    # as Lucene does); trec_eval re-sorts them: the rankings are the same
    tied = frame(
        query_id=["q1"] * 4,
        doc_id=["a", "b", "c", "d"],
        score=[3.0, 2.0, 2.0, 1.0],
        rank=[1, 2, 3, 4],
    )
    assert "rank_column_ignored" not in set(validate(tied)["check"])
    # a rank that puts a lower score above a higher one is a different ranking
    swapped = tied.with_columns(rank=pl.Series([1, 4, 3, 2]))
    found = by_check(validate(swapped))["rank_column_ignored"][0]
    assert found["count"] == 1
    # equal ranks are fine too, whatever their scores
    shared = tied.with_columns(rank=pl.Series([1, 1, 2, 3]))
    assert "rank_column_ignored" not in set(validate(shared)["check"])


def test_qrels_with_intents_repeat_a_document_once_per_intent(tmp_path: Path):
    # diversity qrels: 'a' judged for two intents of q1 is no repeat; judged
    # twice for intent x of q2 it is, and the checks against the run see
    # each document's highest grade (q1's 'a' relevant, as evaluate reads it)
    qrels = frame(
        query_id=["q1", "q1", "q1", "q2", "q2"],
        intent=["x", "y", "x", "x", "x"],
        doc_id=["a", "a", "b", "a", "a"],
        relevance=[0, 2, 0, 1, 1],
    )
    run = frame(query_id=["q1", "q2"], doc_id=["a", "a"], score=[1.0, 1.0])
    found = by_check(validate(run, qrels, k=1, depth=1))
    dup = found["duplicate_judgments"][0]
    assert (dup["input"], dup["count"]) == ("qrels", 1)
    assert dup["example"] == "query 'q2' intent 'x' doc 'a' x2"
    assert "same intent of a query" in dup["message"]
    assert "no_relevant" not in found  # q1's 'a' has grade 2 for intent y
    clean = qrels.head(3)
    assert "duplicate_judgments" not in by_check(validate(run, clean, k=1, depth=1))

    # TREC text, the intent in the second field: read with intents=True
    text = tmp_path / "div.qrels"
    text.write_text("".join(f"{q} {i} {d} {r}\n" for q, i, d, r in clean.iter_rows()))
    plain = by_check(validate(qrels=str(text)))
    assert "--qrels-intents" in plain["duplicate_judgments"][0]["fix"]
    assert "duplicate_judgments" not in by_check(
        validate(qrels=str(text), intents=True)
    )
    code, out, _ = run_cli(["validate", "--qrels", str(text), "--qrels-intents"])
    assert code == 0
    assert "duplicate_judgments" not in out
    code, out, _ = run_cli(["validate", "--qrels", str(text)])
    assert code == 1
    assert "duplicate_judgments" in out
