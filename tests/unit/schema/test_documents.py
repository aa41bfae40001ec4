"""as_docs / read_docs: document attributes, and the time columns of both tables."""

from __future__ import annotations

import datetime as dt
import warnings
from contextlib import contextmanager
from typing import TYPE_CHECKING

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import DataError, FormatError, IrevalWarning, SchemaError
from ireval_df.schema import read_docs
from ireval_df.schema.coerce import as_docs, as_queries

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

DOCS = {
    "docno": ["007", "d2"],
    "source_type": ["news", "wiki"],
    "published_at": ["2024-01-31", "2023-06-01T12:00:00Z"],
}
EXPECTED = [
    ("007", "news", dt.datetime(2024, 1, 31)),
    ("d2", "wiki", dt.datetime(2023, 6, 1, 12)),
]


@contextmanager
def no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrevalWarning)
        yield


def test_frames_of_every_kind() -> None:
    frame = pl.DataFrame(DOCS)
    assert read_docs(frame).rows() == EXPECTED
    assert read_docs(frame.lazy()).columns == ["doc_id", "source_type", "published_at"]
    assert ie.read_docs(frame.to_arrow()).rows() == EXPECTED
    pytest.importorskip("pandas")
    assert read_docs(frame.to_pandas()).rows() == EXPECTED


@pytest.mark.parametrize("suffix", ["csv", "tsv", "jsonl", "parquet", "json"])
def test_files_of_every_table_format(tmp_path: Path, suffix: str) -> None:
    frame = pl.DataFrame(DOCS)
    path = tmp_path / f"docs.{suffix}"
    if suffix == "csv":
        frame.write_csv(path)
    elif suffix == "tsv":
        frame.write_csv(path, separator="\t")
    elif suffix == "jsonl":
        frame.write_ndjson(path)
    elif suffix == "parquet":
        frame.write_parquet(path)
    else:
        frame.write_json(path)
    # ids keep their leading zeros; the attribute keeps its dtype
    assert read_docs(path).rows() == EXPECTED


def test_attribute_dtypes_are_kept_and_columns_may_rename_them() -> None:
    frame = pl.DataFrame({"url": ["a"], "kind": ["pdf"], "words": [120]})
    docs = read_docs(frame, columns={"url": "doc_id", "kind": "source_type"})
    assert docs.columns == ["doc_id", "source_type", "words"]
    assert docs.schema["words"] == pl.Int64


def test_documents_per_query_put_query_id_first() -> None:
    frame = pl.DataFrame({"doc": ["a", "a"], "qid": [1, 2], "stance": ["pro", "con"]})
    assert read_docs(frame).rows() == [("1", "a", "pro"), ("2", "a", "con")]


def test_topic_and_query_are_attributes_of_a_document() -> None:
    # a news topic is not a query id: only query_id and qid key per query
    frame = pl.DataFrame({"doc_id": ["a"], "topic": ["sports"], "query": ["x"]})
    assert read_docs(frame).columns == ["doc_id", "topic", "query"]


def test_time_columns_of_every_dtype() -> None:
    aware = pl.Series([dt.datetime(2024, 1, 1, 12)]).dt.replace_time_zone(
        "Europe/Berlin"
    )
    cases = {
        "date": (pl.Series([dt.date(2024, 1, 1)]), dt.datetime(2024, 1, 1)),
        "naive": (
            pl.Series([dt.datetime(2024, 1, 1, 12)]),
            dt.datetime(2024, 1, 1, 12),
        ),
        # 12:00 in Berlin (UTC+1 in winter) is 11:00 UTC
        "aware": (aware, dt.datetime(2024, 1, 1, 11)),
        "null": (pl.Series([None]), None),
    }
    for name, (values, expected) in cases.items():
        frame = pl.DataFrame({"doc_id": ["a"], "published_at": values})
        docs = read_docs(frame)
        assert docs.schema["published_at"] == pl.Datetime("us"), name
        assert docs["published_at"].item() == expected, name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-31", dt.datetime(2024, 1, 31)),
        (" 2024-01-31 ", dt.datetime(2024, 1, 31)),
        ("2024-01-31T12:30", dt.datetime(2024, 1, 31, 12, 30)),
        ("2024-01-31 12:30:15", dt.datetime(2024, 1, 31, 12, 30, 15)),
        ("2024-01-31T12:30:15.25", dt.datetime(2024, 1, 31, 12, 30, 15, 250000)),
        ("2024-01-31T12:00:00Z", dt.datetime(2024, 1, 31, 12)),
        # an offset moves the time to UTC
        ("2024-01-31T12:00:00+02:00", dt.datetime(2024, 1, 31, 10)),
        ("2024-01-31T12:00:00-0130", dt.datetime(2024, 1, 31, 13, 30)),
    ],
)
def test_iso_8601_text(text: str, expected: dt.datetime) -> None:
    with no_warnings():
        docs = read_docs(pl.DataFrame({"doc_id": ["a"], "published_at": [text]}))
    assert docs["published_at"].item() == expected


def test_mixed_formats_in_one_column() -> None:
    # polars' own inference takes the first value's format for all; not here
    texts = ["2024-01-31", "2024-01-31T06:00:00Z", "2024-01-31 07:00"]
    frame = pl.DataFrame({"doc_id": ["a", "b", "c"], "published_at": texts})
    assert read_docs(frame)["published_at"].dt.hour().to_list() == [0, 6, 7]


def test_unparseable_times_are_counted_in_one_warning_and_left_null(
    tmp_path: Path,
) -> None:
    path = tmp_path / "docs.csv"
    path.write_text(
        "doc_id,published_at\na,2024-01-31\nb,yesterday\nc,2024-13-01\nd,\n"
    )
    with pytest.warns(IrevalWarning) as caught:
        docs = read_docs(path)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "docs file" in message
    assert "docs.csv" in message
    assert "column 'published_at' has 2 values that are not a date or time" in message
    assert "e.g. 'yesterday' (doc_id='b')" in message
    assert "left null" in message
    assert "Hint:" in message
    # no row is dropped; the empty field was null already, and is not counted
    assert docs["doc_id"].to_list() == ["a", "b", "c", "d"]
    assert docs["published_at"].null_count() == 3


def test_a_time_column_of_numbers_is_a_schema_error() -> None:
    frame = pl.DataFrame({"doc_id": ["a"], "published_at": [1706659200]})
    with pytest.raises(
        SchemaError, match=r"(?s)'published_at' has dtype Int64.*from_epoch"
    ):
        read_docs(frame)


def test_queries_issued_at_is_parsed_the_same_way() -> None:
    meta = pl.DataFrame(
        {"qid": [1, 2], "issued_at": ["2024-02-01T00:00:00+01:00", "soon"]}
    )
    with pytest.warns(IrevalWarning, match=r"queries column 'issued_at' has 1 value"):
        queries = as_queries(meta).collect()
    assert queries.schema["issued_at"] == pl.Datetime("us")
    assert queries["issued_at"].to_list() == [dt.datetime(2024, 1, 31, 23), None]


def test_duplicate_documents_name_the_file_and_the_document(tmp_path: Path) -> None:
    path = tmp_path / "docs.tsv"
    path.write_text("doc_id\tsource_type\na\tnews\nb\twiki\na\tblog\n")
    with pytest.raises(
        DataError,
        match=r"docs file '.*docs\.tsv' has more than one row for a document "
        r"\(1 extra row\), e.g. doc_id='a'.*\n  Hint: .*unique\(\['doc_id'\]",
    ):
        read_docs(path)


def test_duplicate_documents_per_query() -> None:
    frame = pl.DataFrame({"qid": ["q1", "q2", "q1"], "doc_id": ["a", "a", "a"]})
    with pytest.raises(
        DataError, match=r"e.g. query_id='q1', doc_id='a'; each \(query_id, doc_id\)"
    ):
        as_docs(frame)
    # the same document for two queries is not a duplicate
    assert as_docs(frame.head(2)).collect().height == 2


def test_errors_are_raised_before_the_warning() -> None:
    frame = pl.DataFrame({"doc_id": ["a", "a"], "published_at": ["?", "?"]})
    with no_warnings(), pytest.raises(DataError, match="more than one row"):
        as_docs(frame)


def test_bad_inputs() -> None:
    with pytest.raises(SchemaError, match=r"docs is missing column 'doc_id'"):
        read_docs(pl.DataFrame({"title": ["x"]}))
    with pytest.raises(DataError, match=r"docs has 1 null value in column 'doc_id'"):
        read_docs(pl.DataFrame({"doc_id": ["a", None]}))
    with pytest.raises(
        SchemaError, match=r"docs must be a frame or a file, found a dict"
    ):
        read_docs({"a": {"b": 1}})  # type: ignore[arg-type]


def test_a_file_without_a_table_extension_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "docs.txt"
    path.write_text("a news\n")
    with pytest.raises(FormatError, match=r"docs\.txt: a documents table is read from"):
        read_docs(path)
