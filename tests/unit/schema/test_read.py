"""read_run / read_qrels / read_queries over every kind of source."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from ireval_df.errors import DataError, SchemaError
from ireval_df.schema import read_qrels, read_queries, read_run, scan_qrels, scan_run

EXPECTED = [("run", "1", "a", 2.0), ("run", "1", "b", 1.0), ("run", "2", "c", 0.5)]
DATA = {"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "score": [2.0, 1.0, 0.5]}


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --------------------------------------------------------------------------
# in-memory sources


def test_polars_eager_and_lazy() -> None:
    assert read_run(pl.DataFrame(DATA)).rows() == EXPECTED
    lazy = scan_run(pl.LazyFrame(DATA))
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().rows() == EXPECTED


def test_pandas_string_object_categorical_and_arrow_dtypes() -> None:
    pd = pytest.importorskip("pandas")
    frames = {
        "str": pd.DataFrame(DATA),
        "object": pd.DataFrame(DATA).astype({"qid": object, "docno": object}),
        "categorical": pd.DataFrame(DATA).astype({"qid": "category"}),
        "pyarrow": pd.DataFrame(DATA).astype(
            {"qid": "string[pyarrow]", "score": "double[pyarrow]"}
        ),
    }
    for kind, frame in frames.items():
        assert read_run(frame).rows() == EXPECTED, kind


def test_pandas_int_ids_and_named_index() -> None:
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"query_id": [1, 2], "doc_id": [10, 20], "relevance": [1, 0]})
    assert read_qrels(qrels).rows() == [("1", "10", 1), ("2", "20", 0)]
    meta = pd.DataFrame({"qid": ["1", "2"], "lang": ["en", "de"]}).set_index("qid")
    assert read_queries(meta).rows() == [("1", "en"), ("2", "de")]


def test_pandas_mixed_object_column_names_the_column() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"qid": ["1", 2], "docno": ["a", "b"], "score": [1.0, 0.5]})
    with pytest.raises(SchemaError, match=r"pandas column 'qid' mixes value types"):
        read_run(frame)


def test_pandas_input_is_not_modified() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(DATA)
    before = frame.copy()
    read_run(frame, run_id="x")
    pd.testing.assert_frame_equal(frame, before)


def test_pyarrow_table() -> None:
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"query_id": [1, 2], "doc_id": ["a", "b"], "relevance": [2, 0]})
    assert read_qrels(table).rows() == [("1", "a", 2), ("2", "b", 0)]


def test_dict_of_dicts() -> None:
    run = {"q1": {"a": 2, "b": 1.5}, 7: {8: 0.5}, "q3": {}}
    assert read_run(run).rows() == [
        ("run", "q1", "a", 2.0),
        ("run", "q1", "b", 1.5),
        ("run", "7", "8", 0.5),
    ]
    assert scan_qrels({"q1": {"a": 1, "b": 0.0}}).collect().rows() == [
        ("q1", "a", 1),
        ("q1", "b", 0),
    ]


def test_dict_with_non_dict_values() -> None:
    with pytest.raises(
        SchemaError, match=r"under key 'bm25' found a DataFrame.*\n.*pass a list"
    ):
        read_run({"bm25": pl.DataFrame(DATA)})
    with pytest.raises(
        SchemaError, match=r"must be \{query_id: \{doc_id: relevance\}\}"
    ):
        read_qrels({"q1": [1, 2]})


def test_unsupported_sources() -> None:
    with pytest.raises(
        SchemaError, match=r"run must be a frame, a file path, .*found int"
    ):
        read_run(42)
    with pytest.raises(
        SchemaError, match=r"qrels must be one table, file or dict, found a list"
    ):
        read_qrels([{"q": {"d": 1}}])
    with pytest.raises(
        SchemaError, match=r"queries must be a frame or a file, found a dict"
    ):
        read_queries({"q": {"d": 1}})


# --------------------------------------------------------------------------
# run ids


def test_run_id_argument_default_and_override(tmp_path: Path) -> None:
    assert read_run(pl.DataFrame(DATA))["run_id"].unique().to_list() == ["run"]
    assert read_run(pl.DataFrame(DATA), run_id="bm25")["run_id"][0] == "bm25"
    trec = write(tmp_path / "a.run", "1 Q0 a 1 2 tagged\n")
    assert read_run(trec, run_id="renamed")["run_id"].to_list() == ["renamed"]


def test_run_id_would_merge_runs() -> None:
    frame = pl.DataFrame({**DATA, "tag": ["x", "x", "y"]})
    with pytest.raises(DataError, match=r"holds 2 runs .*run_id='z' would merge them"):
        read_run(frame, run_id="z")


def test_list_of_runs_gets_ids_from_column_tag_stem_or_position(tmp_path: Path) -> None:
    trec = write(tmp_path / "bm25.run", "1 Q0 a 1 2.0 BM25\n")
    csv = write(tmp_path / "dense.csv", "qid,docno,score\n1,a,0.5\n")
    framed = pl.DataFrame({**DATA, "run_id": ["own"] * 3})
    stacked = read_run([trec, csv, framed, {"1": {"a": 1.0}}, pl.DataFrame(DATA)])
    assert stacked["run_id"].unique(maintain_order=True).to_list() == [
        "BM25",
        "dense",
        "own",
        "run4",
        "run5",
    ]
    assert stacked.columns == ["run_id", "query_id", "doc_id", "score"]
    both_ranked = read_run((trec, write(tmp_path / "b.run", "1 Q0 a 1 2.0 B\n")))
    assert both_ranked.columns[-1] == "rank"


def test_list_of_runs_errors(tmp_path: Path) -> None:
    trec = write(tmp_path / "a.run", "1 Q0 a 1 2.0 same\n")
    copy = write(tmp_path / "b.run", "1 Q0 a 1 2.0 same\n")
    with pytest.raises(
        DataError, match=r"runs #1 and #2 of the list both have run_id 'same'"
    ):
        read_run([trec, copy])
    with pytest.raises(SchemaError, match=r"run_id= names one run, but a list"):
        read_run([trec], run_id="x")
    with pytest.raises(SchemaError, match="the list of runs is empty"):
        read_run([])
    with pytest.raises(SchemaError, match=r"run #2 of the list is itself a list"):
        read_run([trec, [copy]])


# --------------------------------------------------------------------------
# optional dependencies stay unloaded


def test_polars_only_reading_loads_neither_pandas_nor_pyarrow(tmp_path: Path) -> None:
    path = write(tmp_path / "a.run", "1 Q0 a 1 2.0 t\n")
    code = (
        "import sys, polars as pl\n"
        "from ireval_df.schema import read_run\nfrom ireval_df.io import write_results\n"
        f"run = read_run({str(path)!r})\n"
        "read_run(pl.DataFrame({'qid': ['1'], 'docno': ['a'], 'sim': [1.0]}))\n"
        f"write_results(run, {str(tmp_path / 'out.parquet')!r})\n"
        "print('pandas' in sys.modules, 'pyarrow' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parents[3]  # the repository
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    assert result.stdout.split() == ["False", "False"]


# --------------------------------------------------------------------------
# compression, recognised by its magic bytes


def _compressors():
    import bz2
    import gzip
    import lzma

    import zstandard

    return {
        "gzip": (gzip.compress, ".gz"),
        "bzip2": (bz2.compress, ".bz2"),
        "xz": (lzma.compress, ".xz"),
        "zstd": (zstandard.ZstdCompressor().compress, ".zst"),
    }


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz", "zstd"])
def test_every_compression_is_read_by_its_magic_bytes(kind: str, tmp_path: Path):
    compress, suffix = _compressors()[kind]
    repo = Path(__file__).resolve().parents[3]
    trec_run = (repo / "data" / "runs" / "bm25.run").read_bytes()
    trec_qrels = (repo / "data" / "qrels.txt").read_bytes()
    csv_run = b"qid,docno,score\n1,a,2.0\n1,b,1.0\n2,c,0.5\n"
    jsonl_qrels = b'{"qid": "1", "docid": "a", "label": 1}\n'
    cases = [
        (read_run, trec_run, "bm25.run"),
        (read_qrels, trec_qrels, "qrels.txt"),
        (read_run, csv_run, "run.csv"),
        (read_qrels, jsonl_qrels, "qrels.jsonl"),
    ]
    for reader, raw, name in cases:
        plain = write_bytes(tmp_path / name, raw)
        expected = reader(plain)
        named = write_bytes(tmp_path / f"packed-{name}{suffix}", compress(raw))
        # with its suffix, and under the plain name (recognised by content)
        unnamed = write_bytes(tmp_path / f"unnamed-{name}", compress(raw))
        for path in (named, unnamed):
            got = reader(path)
            if "run_id" in got.columns and name == "run.csv":
                got = got.drop("run_id")
                expected_cmp = expected.drop("run_id")
            else:
                expected_cmp = expected
            assert got.equals(expected_cmp), (kind, path.name)


def write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_zstd_without_a_decompressor_names_the_fix(tmp_path: Path, monkeypatch):
    import importlib

    import zstandard

    from ireval_df.errors import FormatError

    path = write_bytes(
        tmp_path / "run.zst",
        zstandard.ZstdCompressor().compress(b"1 Q0 a 1 2.0 t\n"),
    )
    real = importlib.import_module

    def missing(name, *args, **kwargs):
        if "zstd" in name or name == "zstandard":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", missing)
    with pytest.raises(FormatError, match=r"(?s)zstd-compressed.*pip install"):
        read_run(path)


def test_a_corrupt_compressed_file_is_named(tmp_path: Path) -> None:
    import lzma

    from ireval_df.errors import FormatError

    path = write_bytes(tmp_path / "run.xz", lzma.compress(b"1 Q0 a 1 2.0 t\n")[:-8])
    with pytest.raises(FormatError, match=r"run\.xz: not a valid xz file"):
        read_run(path)


# --------------------------------------------------------------------------
# grades written as floats


def test_whole_number_float_grades_read_alike_from_every_format(tmp_path: Path):
    from ireval_df.errors import FormatError

    text = write(tmp_path / "qrels.txt", "1 0 a 1.0\n1 0 b 2.00\n1 0 c 0\n2 0 d -1.0\n")
    table = pl.DataFrame(
        {
            "query_id": ["1", "1", "1", "2"],
            "doc_id": ["a", "b", "c", "d"],
            "relevance": [1.0, 2.0, 0.0, -1.0],
        }
    )
    table.write_parquet(tmp_path / "qrels.parquet")
    table.write_csv(tmp_path / "qrels.csv")
    expected = [("1", "a", 1), ("1", "b", 2), ("1", "c", 0), ("2", "d", -1)]
    for source in (text, tmp_path / "qrels.parquet", tmp_path / "qrels.csv", table):
        assert read_qrels(source).rows() == expected
    half = write(tmp_path / "half.txt", "1 0 a 1\n1 0 b 1.5\n")
    with pytest.raises(FormatError, match=r"half\.txt, line 2: relevance '1\.5'"):
        read_qrels(half)
    with pytest.raises(DataError, match="not a whole number, e.g. 1.5"):
        read_qrels(table.with_columns(relevance=pl.lit(1.5)))


def test_a_file_without_run_ids_is_named_after_the_file_alone_or_in_a_list(
    tmp_path: Path,
) -> None:
    csv = write(tmp_path / "my-system.csv", "qid,docno,score\n1,a,2.0\n")
    pl.DataFrame(DATA).write_parquet(tmp_path / "other.parquet")
    assert read_run(csv)["run_id"].to_list() == ["my-system"]
    assert read_run(tmp_path / "other.parquet")["run_id"].unique().to_list() == [
        "other"
    ]
    stacked = read_run([csv, tmp_path / "other.parquet"])
    assert stacked["run_id"].unique(maintain_order=True).to_list() == [
        "my-system",
        "other",
    ]
    # run_id= still names it, and a frame without one is "run"
    assert read_run(csv, run_id="bm25")["run_id"].to_list() == ["bm25"]


def test_a_query_title_holding_a_tab_is_read_or_its_line_named(tmp_path: Path):
    from ireval_df.errors import FormatError

    # Anserini's Robust04 topics: id, tab, title; one title holds a tab
    topics = write(
        tmp_path / "topics.robust04.tsv",
        "301\tInternational Organized Crime\n302\tPoliomyelitis\tand Post-Polio\n",
    )
    assert read_queries(topics).rows() == [
        ("301", "International Organized Crime"),
        ("302", "Poliomyelitis\tand Post-Polio"),
    ]
    headed = write(
        tmp_path / "headed.tsv", "query_id\ttext\n301\tcrime\n302\tpolio\tpost\n"
    )
    with pytest.raises(FormatError, match=r"headed\.tsv, line 3: 3 fields where the"):
        read_queries(headed)
