"""Files with named columns: CSV, TSV, Parquet, JSON Lines, JSON."""

from __future__ import annotations

import gzip
import logging
from typing import TYPE_CHECKING

import polars as pl
import pytest

from ireval_df.errors import FormatError, SchemaError
from ireval_df.schema import read_qrels, read_queries, read_run, scan_qrels, scan_run

if TYPE_CHECKING:
    from pathlib import Path

RUN = pl.DataFrame(
    {
        "run_id": ["bm25", "bm25", "dense"],
        "query_id": ["007", "007", "12"],
        "doc_id": ["d1", "0042", "d1"],
        "score": [2.5, 1.0, 0.125],
    }
)


def write(path: Path, data: str | bytes) -> Path:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# --------------------------------------------------------------------------
# round trips: what polars writes, read_run reads back unchanged


@pytest.mark.parametrize("name", ["r.csv", "r.tsv", "r.csv.gz", "r.tsv.gz"])
def test_csv_and_tsv_round_trip_keep_leading_zeros(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    text = RUN.write_csv(separator="\t" if ".tsv" in name else ",")
    write(path, gzip.compress(text.encode()) if name.endswith(".gz") else text)
    assert read_run(path).equals(RUN)


@pytest.mark.parametrize("name", ["r.parquet", "r.pq"])
def test_parquet_round_trip_and_laziness(tmp_path: Path, name: str) -> None:
    RUN.with_columns(rank=pl.Series([1, 2, 1], dtype=pl.Int64)).write_parquet(
        tmp_path / name
    )
    lazy = scan_run(tmp_path / name)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect_schema()["rank"] == pl.UInt32
    assert lazy.collect().drop("rank").equals(RUN)


@pytest.mark.parametrize("name", ["r.jsonl", "r.ndjson", "r.jsonl.gz", "r.json"])
def test_json_lines_round_trip(tmp_path: Path, name: str) -> None:
    text = RUN.write_ndjson()
    path = tmp_path / name
    write(path, gzip.compress(text.encode()) if name.endswith(".gz") else text)
    assert read_run(path).equals(RUN)


def test_json_array_of_records_and_dict_of_dicts(tmp_path: Path) -> None:
    records = write(tmp_path / "r.json", '[{"qid": 1, "docno": "d1", "sim": 2}]')
    assert read_run(records).rows() == [("r", "1", "d1", 2.0)]  # the file names it
    nested = write(tmp_path / "q.json", '{"q1": {"d1": 1, "d2": 0}}')
    assert read_qrels(nested).rows() == [("q1", "d1", 1), ("q1", "d2", 0)]


def test_int_ids_in_parquet_and_jsonl_become_strings(tmp_path: Path) -> None:
    frame = pl.DataFrame({"qid": [1, 2], "docid": [10, 20], "label": [1, 0]})
    frame.write_parquet(tmp_path / "q.parquet")
    write(tmp_path / "q.jsonl", frame.write_ndjson())
    expected = [("1", "10", 1), ("2", "20", 0)]
    assert read_qrels(tmp_path / "q.parquet").rows() == expected
    assert read_qrels(tmp_path / "q.jsonl").rows() == expected


# --------------------------------------------------------------------------
# well-known layouts


def test_beir_qrels_tsv(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = write(tmp_path / "test.tsv", "query-id\tcorpus-id\tscore\n1\tdoc7\t2\n")
    with caplog.at_level(logging.INFO, logger="ireval_df"):
        assert read_qrels(path).rows() == [("1", "doc7", 2)]
    assert "'corpus-id' as 'doc_id'" in caplog.text
    assert "'score' as 'relevance'" in caplog.text


def test_headerless_msmarco_files(tmp_path: Path) -> None:
    qrels = write(tmp_path / "qrels.dev.tsv", "1102432\t0\t2026790\t1\n2\t0\t7\t1\n")
    assert read_qrels(qrels).rows() == [("1102432", "2026790", 1), ("2", "7", 1)]
    queries = write(tmp_path / "queries.tsv", '1048585\twhat is "x"\n2\tfoo\n')
    assert read_queries(queries).rows() == [("1048585", 'what is "x"'), ("2", "foo")]
    run = write(tmp_path / "run.tsv", "1\tQ0\td1\t1\t2.5\ttag\n")
    assert read_run(run).rows() == [("tag", "1", "d1", 2.5, 1)]


def test_queries_attributes_keep_their_types(tmp_path: Path) -> None:
    path = write(tmp_path / "q.csv", "qid,lang,length\n0042,de,3\n0043,en,5\n")
    queries = read_queries(path)
    assert queries.rows() == [("0042", "de", 3), ("0043", "en", 5)]
    assert queries.schema["length"] == pl.Int64


def test_string_numbers_in_text_formats(tmp_path: Path) -> None:
    path = write(tmp_path / "q.csv", "qid,docno,rel\nq1,d1, 2\nq1,d2,1.0\n")
    assert scan_qrels(path).collect().rows() == [("q1", "d1", 2), ("q1", "d2", 1)]


# --------------------------------------------------------------------------
# errors


def test_csv_missing_column_names_file_and_fix(tmp_path: Path) -> None:
    path = write(tmp_path / "run.csv", "qid,docno,bm25\n1,d1,1.5\n")
    expected = (
        f"run file '{path}' is missing column 'score' "
        "(found ['qid', 'docno', 'bm25']).\n"
        "  Hint: pass columns={'qid': 'query_id', 'docno': 'doc_id', 'bm25': 'score'}."
    )
    with pytest.raises(SchemaError) as info:
        read_run(path)
    assert str(info.value) == expected
    assert read_run(path, columns={"bm25": "score"})["score"].to_list() == [1.5]


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("e.csv", b"", r"e\.csv is empty"),
        ("r.csv", b"qid,docno,score\n1,d1\xff,2\n", r"line 2: not valid UTF-8"),
        ("r.csv", b"qid,docno,score\n1,d1,2,9\n", r"r\.csv, line 2: 4 fields where"),
        ("r.jsonl", b'{"qid": "1"}\n{"qid": 2,\n', r"r\.jsonl, line 2: invalid JSON"),
        ("r.jsonl", b'{"qid": "1"}\n[1, 2]\n', r"line 2: expected one JSON object"),
        ("r.json", b'{"q1": {"d1": 1}', r"r\.json, line 1: invalid JSON"),
        ("r.json", b"[1, 2]", r"expected an array of records or an object"),
        ("r.parquet", b"qid,docno\n", r"r\.parquet is not a Parquet file"),
        ("r.parquet", b"PAR1 broken", r"r\.parquet is not a valid Parquet file"),
        ("r.parquet.gz", b"", r"Parquet files .* cannot be compressed again"),
    ],
    ids=[
        "empty-csv",
        "csv-utf8",
        "csv-ragged",
        "jsonl-syntax",
        "jsonl-array",
        "json-syntax",
        "json-shape",
        "parquet-magic",
        "parquet-broken",
        "parquet-gz",
    ],
)
def test_unreadable_tables(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    with pytest.raises(FormatError, match=message):
        read_run(write(tmp_path / name, data))


def test_missing_tabular_files(tmp_path: Path) -> None:
    for name in ["x.csv", "x.tsv", "x.parquet", "x.jsonl", "x.json"]:
        with pytest.raises(FormatError, match=r"cannot read .*: no such file"):
            read_run(tmp_path / name)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("q.csv", "qid,docno,label\r\n1,a,2\r\n"),
        ("q.tsv", "query-id\tcorpus-id\tscore\r\n1\ta\t2\r\n"),
        ("q.jsonl", '{"qid": "1", "docno": "a", "label": 2}\r\n'),
    ],
)
def test_bom_and_crlf_in_tables(tmp_path: Path, name: str, text: str) -> None:
    path = write(tmp_path / name, b"\xef\xbb\xbf" + text.encode())
    assert read_qrels(path).rows() == [("1", "a", 2)]
