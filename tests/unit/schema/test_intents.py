"""Qrels judged per intent: TREC diversity qrels and tables with an intent column."""

from __future__ import annotations

import gzip
from typing import TYPE_CHECKING

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import FormatError, OptionError, SchemaError
from ireval_df.io.trec import read_trec_qrels

if TYPE_CHECKING:
    from pathlib import Path

DIVERSITY = "51 1 a 1\n51 2 a 0\n51 2 b 2\n# a comment\n52 1 c 1\n"
ROWS = [
    ("51", "a", 1, "1"),
    ("51", "a", 0, "2"),
    ("51", "b", 2, "2"),
    ("52", "c", 1, "1"),
]


@pytest.mark.parametrize(
    "text",
    [
        DIVERSITY,  # single blanks: the fast readers
        DIVERSITY.replace(" ", "  \t"),  # runs of blanks: the careful reader
    ],
)
def test_trec_diversity_qrels_keep_the_second_field_as_intent(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    assert read_trec_qrels(path, intents=True).rows() == ROWS
    assert ie.read_qrels(path, intents=True).rows() == ROWS
    # trec_eval's reading ignores the field
    assert read_trec_qrels(path).columns == ["query_id", "doc_id", "relevance"]


def test_compressed_diversity_qrels(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt.gz"
    path.write_bytes(gzip.compress(DIVERSITY.encode()))
    assert ie.read_qrels(path, intents=True).rows() == ROWS


def test_a_malformed_diversity_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("51 1 a 1\n51 2 a\n")
    with pytest.raises(FormatError, match=r"line 2.*qid subtopic docno relevance"):
        ie.read_qrels(path, intents=True)


def test_a_table_with_a_subtopic_column() -> None:
    table = pl.DataFrame(
        {"qid": [51, 51], "subtopic": [1, 2], "docno": ["a", "a"], "rel": [1, 0]}
    )
    assert ie.read_qrels(table, intents=True).rows() == [
        ("51", "a", 1, "1"),
        ("51", "a", 0, "2"),
    ]


def test_intents_need_an_intent_column() -> None:
    table = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(SchemaError, match=r"no intent column.*\n  Hint: add one"):
        ie.read_qrels(table, intents=True)


def test_intents_take_no_column_map() -> None:
    table = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "grade": [1], "intent": 1})
    with pytest.raises(OptionError, match="takes no columns="):
        ie.read_qrels(table, intents=True, columns={"grade": "relevance"})


def test_a_document_judged_twice_for_one_intent_is_an_error() -> None:
    table = pl.DataFrame(
        {"query_id": "q", "doc_id": ["a", "a"], "relevance": [1, 0], "intent": "x"}
    )
    with pytest.raises(ie.errors.DataError, match="same intent"):
        ie.read_qrels(table, intents=True)
