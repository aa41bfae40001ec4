"""Preference measures: hand-worked cases and every error path.

The worked examples are those of trec_eval's ``get_prefs.c`` comment (how
many preferences a file expresses); the values are derived in the comments.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import DataError, FormatError, OptionError, SchemaError

if TYPE_CHECKING:
    from pathlib import Path


def prefs(rows: list[tuple[str, str, str, str, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema=["query_id", "jg", "jsg", "doc_id", "relevance"], orient="row"
    )


def values(run: pl.DataFrame, judged: pl.DataFrame, metrics: list[str]) -> dict:
    result = ie.evaluate_prefs(run, judged, metrics)
    return {
        (q, m): v
        for q, m, v in result.select("query_id", "metric", "value").iter_rows()
    }


RUN = pl.DataFrame(
    {
        "query_id": "q",
        "doc_id": [f"d{i}" for i in range(1, 7)],
        "score": [6.0, 5, 4, 3, 2, 1],
    }
)


def test_one_sub_group_prefers_every_higher_level() -> None:
    # levels 3, 2, 0, 6, 0, 2: 13 preferences (5 with d4 preferred, 4 with
    # d1, 2 each with d2 and d6); ranking d1..d6 fulfils those where the
    # preferred document comes first: d1 over d2 d3 d5 d6 (4), d2 over d3 d5
    # (2), d4 over d5 d6 (2), d6 over nothing after it: 8 of 13
    judged = prefs(
        [("q", "u", "s", f"d{i}", lv) for i, lv in enumerate([3, 2, 0, 6, 0, 2], 1)]
    )
    got = values(RUN, judged, ["NumPrefsPoss", "NumPrefsFulRet", "PrefsSimp"])
    assert got[("q", "NumPrefsPoss")] == 13
    assert got[("q", "NumPrefsFulRet")] == 8
    assert got[("q", "PrefsSimp")] == pytest.approx(8 / 13)


def test_sub_groups_are_closed_under_transitivity() -> None:
    # s1: d1 > d2 > d3; s2: d2 > d4: 1>2, 1>3, 2>3, 2>4 and, by transitivity,
    # 1>4: 5 preferences, none twice
    judged = prefs(
        [
            ("q", "u", "s1", "d1", 3.0),
            ("q", "u", "s1", "d2", 2.0),
            ("q", "u", "s1", "d3", 1.0),
            ("q", "u", "s2", "d2", 5.0),
            ("q", "u", "s2", "d4", 4.0),
        ]
    )
    assert values(RUN, judged, ["NumPrefsPoss"])[("q", "NumPrefsPoss")] == 5


def test_repeated_preference_counts_once_within_a_group() -> None:
    # s1: 1>2, 1>3, 2>3; s2: 4>1, 4>2, 1>2 again; and 4>3 by transitivity
    # (4>1>3): 6 preferences. get_prefs.c's comment says 5, leaving out the
    # transitive one, but trec_eval 10.0 counts 6 (checked with the binary)
    judged = prefs(
        [
            ("q", "u", "s1", "d1", 3.0),
            ("q", "u", "s1", "d2", 2.0),
            ("q", "u", "s1", "d3", 1.0),
            ("q", "u", "s2", "d1", 2.0),
            ("q", "u", "s2", "d2", 1.0),
            ("q", "u", "s2", "d4", 3.0),
        ]
    )
    assert values(RUN, judged, ["NumPrefsPoss"])[("q", "NumPrefsPoss")] == 6


def test_groups_may_disagree() -> None:
    # u1 prefers d1 to d2, u2 the reverse: PrefsSimp 1/2 for either order,
    # PrefsPair 1/2 (one pair, half its preferences met), PrefsAvgJG 1/2
    judged = prefs(
        [
            ("q", "u1", "s", "d1", 2.0),
            ("q", "u1", "s", "d2", 1.0),
            ("q", "u2", "s", "d1", 1.0),
            ("q", "u2", "s", "d2", 2.0),
        ]
    )
    got = values(RUN, judged, ["PrefsSimp", "PrefsPair", "PrefsAvgJG"])
    assert set(got.values()) == {0.5}


def test_implied_and_unretrieved_preferences() -> None:
    # d1 > d7 > d8, only d1 retrieved: d1>d7 and d1>d8 are implied and met,
    # d7>d8 is not retrieved: simp 2/3, simp_imp 2/2, simp_ret 0 (none)
    judged = prefs(
        [
            ("q", "u", "s", "d1", 3.0),
            ("q", "u", "s", "d7", 2.0),
            ("q", "u", "s", "d8", 1.0),
        ]
    )
    got = values(
        RUN, judged, ["PrefsSimp", "PrefsSimpImp", "PrefsSimpRet", "PrefsPair"]
    )
    assert got[("q", "PrefsSimp")] == pytest.approx(2 / 3)
    assert got[("q", "PrefsSimpImp")] == 1.0
    assert got[("q", "PrefsSimpRet")] == 0.0
    # pairs: (d1,d7) 1, (d1,d8) 1, (d7,d8) 0 -> 2/3
    assert got[("q", "PrefsPair")] == pytest.approx(2 / 3)


def test_score_ties_go_to_doc_id_ascending() -> None:
    # d1 and d2 tie: trec_eval's preference ranking puts d1 first (the
    # other measures put d2 first), so d1 > d2 is fulfilled
    run = pl.DataFrame({"query_id": "q", "doc_id": ["d2", "d1"], "score": [1.0, 1.0]})
    judged = prefs([("q", "u", "s", "d1", 1.0), ("q", "u", "s", "d2", 0.0)])
    assert values(run, judged, ["PrefsSimpRet"])[("q", "PrefsSimpRet")] == 1.0


def test_a_query_the_run_missed_is_an_empty_ranking_or_skipped() -> None:
    judged = prefs([("r", "u", "s", "a", 1.0), ("r", "u", "s", "b", 0.0)])
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    full = ie.evaluate_prefs(
        run,
        pl.concat([judged, judged.with_columns(query_id=pl.lit("q"))]),
        "NumPrefsPoss",
    )
    assert full["query_id"].to_list() == ["q", "r"]
    skipped = ie.evaluate_prefs(
        run,
        pl.concat([judged, judged.with_columns(query_id=pl.lit("q"))]),
        "NumPrefsPoss",
        missing="skip",
    )
    assert skipped["query_id"].to_list() == ["q"]


def test_depth_cuts_the_ranking() -> None:
    judged = prefs([("q", "u", "s", "d1", 0.0), ("q", "u", "s", "d2", 1.0)])
    # d1 ranked above d2 fails d2 > d1; cut at 1, d2 is not retrieved and
    # the preference is implied-failed: 0 either way, but not retrieved
    result = ie.evaluate_prefs(RUN, judged, ["PrefsSimpRet", "PrefsSimpImp"], depth=1)
    assert result["value"].to_list() == [0.0, 0.0]


def test_the_kind_of_frame_comes_back() -> None:
    pd = pytest.importorskip("pandas")
    judged = prefs([("q", "u", "s", "d1", 1.0), ("q", "u", "s", "d2", 0.0)])
    result = ie.evaluate_prefs(RUN.to_pandas(), judged.to_pandas(), "PrefsSimp")
    assert isinstance(result, pd.DataFrame)
    assert result["value"].tolist() == [1.0]


# --- bad input ---------------------------------------------------------------------------


def test_evaluate_refuses_preference_measures() -> None:
    qrels = pl.DataFrame({"query_id": "q", "doc_id": ["d1"], "relevance": [1]})
    with pytest.raises(
        OptionError, match=r"(?s)need preference judgments.*evaluate_prefs"
    ):
        ie.evaluate(RUN, qrels, ["AP", "prefs_simp"])


def test_evaluate_prefs_refuses_qrels_measures() -> None:
    judged = prefs([("q", "u", "s", "d1", 1.0)])
    with pytest.raises(OptionError, match=r"preference measures only, not \['AP'\]"):
        ie.evaluate_prefs(RUN, judged, ["AP"])


@pytest.mark.parametrize(
    ("option", "message"),
    [({"depth": 0}, "depth must be"), ({"missing": "error"}, "missing must be")],
)
def test_bad_options(option: dict, message: str) -> None:
    judged = prefs([("q", "u", "s", "d1", 1.0)])
    with pytest.raises(OptionError, match=message):
        ie.evaluate_prefs(RUN, judged, "PrefsSimp", **option)


def test_missing_column_is_named() -> None:
    judged = pl.DataFrame({"query_id": "q", "doc_id": ["d1"]})
    with pytest.raises(SchemaError, match=r"(?s)missing \['relevance'\].*read_prefs"):
        ie.evaluate_prefs(RUN, judged, "PrefsSimp")


def test_levels_must_be_numbers() -> None:
    judged = pl.DataFrame({"query_id": "q", "doc_id": ["d1"], "relevance": ["high"]})
    with pytest.raises(SchemaError, match="must be numbers"):
        ie.evaluate_prefs(RUN, judged, "PrefsSimp")


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [("q", "u", "s", "d1", 2.0), ("q", "u", "s", "d1", 1.0)],
            "'d1' has two different levels",
        ),
        (
            [
                ("q", "u", "s1", "d1", 1.0),
                ("q", "u", "s2", "d1", 0.0),
                ("q", "u", "s2", "d2", 0.0),
            ],
            "'d1' has level 0 in one sub-group",
        ),
        (
            [
                ("q", "u", "s1", "d1", 2.0),
                ("q", "u", "s1", "d2", 1.0),
                ("q", "u", "s2", "d1", 1.0),
                ("q", "u", "s2", "d2", 2.0),
            ],
            "both preferred and not preferred",
        ),
    ],
)
def test_inconsistent_judgment_groups_are_refused(rows: list, message: str) -> None:
    with pytest.raises(DataError, match=message):
        ie.evaluate_prefs(RUN, prefs(rows), "PrefsSimp")


def test_a_document_twice_in_a_ranking_is_refused() -> None:
    run = pl.DataFrame({"query_id": "q", "doc_id": ["d1", "d1"], "score": [2.0, 1.0]})
    judged = prefs([("q", "u", "s", "d1", 1.0)])
    with pytest.raises(DataError, match="retrieves a document twice"):
        ie.evaluate_prefs(run, judged, "PrefsSimp")


# --- read_prefs --------------------------------------------------------------------------


def test_read_prefs_both_layouts(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("# judged by u1\nq u1 s1 d1 2\nq u1 s1 d2 0.5\n")
    assert ie.read_prefs(path).rows() == [
        ("q", "u1", "s1", "d1", 2.0),
        ("q", "u1", "s1", "d2", 0.5),
    ]
    path.write_text("q 0 d1 2\nq 0 d2 0\n")
    assert ie.read_prefs(path, format="qrels_prefs").rows() == [
        ("q", "0", "0", "d1", 2.0),
        ("q", "0", "0", "d2", 0.0),
    ]


@pytest.mark.parametrize(
    ("text", "layout", "message"),
    [
        ("q u s d1 2\n\nq u s d2 1\n", "prefs", r"p.txt, line 2: expected 5 fields"),
        (
            "# c\nq u s d1\n",
            "prefs",
            r"p.txt, line 2: expected 5 fields \(qid jg jsg docno",
        ),
        ("q 0 d1 1 extra\n", "qrels_prefs", r"line 1: expected 4 fields"),
        (
            "q u s d1 high\n",
            "prefs",
            r"line 1: the level \(last field\) is not a number",
        ),
    ],
)
def test_read_prefs_names_the_bad_line(
    tmp_path: Path, text: str, layout: str, message: str
) -> None:
    path = tmp_path / "p.txt"
    path.write_text(text)
    with pytest.raises(FormatError, match=message):
        ie.read_prefs(path, format=layout)  # type: ignore[arg-type]


def test_read_prefs_unreadable_file_and_bad_format(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="cannot read the preference file"):
        ie.read_prefs(tmp_path / "absent.txt")
    with pytest.raises(OptionError, match="format must be one of"):
        ie.read_prefs(tmp_path / "absent.txt", format="qrels")  # type: ignore[arg-type]


def test_no_warning_on_a_clean_call() -> None:
    judged = prefs([("q", "u", "s", "d1", 1.0), ("q", "u", "s", "d2", 0.0)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ie.evaluate_prefs(RUN, judged, "PrefsSimp")


def test_prefs_may_be_a_path_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "prefs.txt"
    path.write_text("q u s d1 1\nq u s d2 0\n")
    assert ie.evaluate_prefs(RUN, path, "PrefsSimp")["value"].to_list() == [1.0]
    assert ie.evaluate_prefs(RUN, str(path), "PrefsSimp")["value"].to_list() == [1.0]
    with pytest.raises(SchemaError, match=r"(?s)expected prefs as .*read_prefs"):
        ie.evaluate_prefs(RUN, 3, "PrefsSimp")


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (
            pl.DataFrame(
                {"query_id": ["q", None], "doc_id": ["d1", "d2"], "relevance": [1, 0]}
            ),
            r"nulls in \['query_id'\]",
        ),
        (
            pl.DataFrame(
                {
                    "query_id": "q",
                    "doc_id": ["d1", "d2"],
                    "relevance": [1.0, float("nan")],
                }
            ),
            "1 NaN levels",
        ),
    ],
)
def test_incomplete_judgments_are_refused(frame: pl.DataFrame, message: str) -> None:
    with pytest.raises(DataError, match=message):
        ie.evaluate_prefs(RUN, frame, "PrefsSimp")
