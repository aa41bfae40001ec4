"""The boundary: canonical names, dtypes and order, and every data check."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import polars as pl
import pytest

from ireval_df._utils.frames import is_pandas
from ireval_df.errors import DataError, IrevalError, SchemaError
from ireval_df.schema.coerce import as_qrels, as_queries, as_run

RUN = {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]}
QRELS = {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 0]}


# --------------------------------------------------------------------------
# canonical output


def test_run_columns_dtypes_and_order() -> None:
    frame = pl.DataFrame({"rank": [1, 2], "score": [2, 1], **RUN, "extra": [0, 0]})
    lazy = as_run(frame.drop("score").with_columns(score=pl.Series([2, 1])))
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect_schema() == pl.Schema(
        {
            "run_id": pl.String,
            "query_id": pl.String,
            "doc_id": pl.String,
            "score": pl.Float64,
            "rank": pl.UInt32,
        }
    )


def test_qrels_and_queries_columns() -> None:
    qrels = as_qrels(pl.DataFrame({"relevance": [1], "doc_id": ["a"], "query_id": [1]}))
    assert qrels.collect().rows() == [("1", "a", 1)]
    assert qrels.collect_schema()["relevance"] == pl.Int32
    meta = pl.DataFrame({"lang": ["en"], "query_id": [7], "len": [3.5]})
    queries = as_queries(meta)
    assert queries.collect_schema().names() == ["query_id", "lang", "len"]
    assert queries.collect().rows() == [("7", "en", 3.5)]


def test_integer_and_whole_float_ids_become_decimal_strings() -> None:
    frame = pl.DataFrame(
        {
            "query_id": [1.0, 2.0],
            "doc_id": pl.Series([3, 4], dtype=pl.UInt8),
            "score": [1, 2],
        }
    )
    assert as_run(frame).collect()["query_id"].to_list() == ["1", "2"]
    assert as_run(frame).collect()["doc_id"].to_list() == ["3", "4"]
    cats = frame.with_columns(pl.col("doc_id").cast(pl.String).cast(pl.Categorical))
    assert as_run(cats).collect()["doc_id"].to_list() == ["3", "4"]


def test_fractional_float_ids_are_a_schema_error() -> None:
    frame = pl.DataFrame(
        {"query_id": [1.0, 2.5, 3.25], "doc_id": ["a"] * 3, "score": [1.0] * 3}
    )
    with pytest.raises(
        SchemaError,
        match=r"column 'query_id' holds floats, and 2 of them are not whole.*2\.5",
    ):
        as_run(frame)


def test_inputs_are_not_modified() -> None:
    frame = pl.DataFrame({"qid": [1], "docno": ["a"], "sim": [1]})
    before = frame.clone()
    as_run(frame, run_id="x").collect()
    assert frame.equals(before)
    assert frame.columns == ["qid", "docno", "sim"]


def test_empty_qrels_keep_the_schema_and_an_empty_run_is_refused() -> None:
    assert as_qrels({}).collect().schema["relevance"] == pl.Int32
    with pytest.raises(DataError, match="run has no rows: there is nothing to"):
        as_run(pl.DataFrame({"query_id": [], "doc_id": [], "score": []}))


# --------------------------------------------------------------------------
# column names


@pytest.mark.parametrize(
    ("names", "kind"),
    [
        (["qid", "docno", "sim"], "run"),
        (["query", "docid", "similarity"], "run"),
        (["topic", "doc", "score"], "run"),
        (["QID", "PID", "Score"], "run"),
        (["query-id", "corpus-id", "score"], "qrels"),
        (["qid", "passage_id", "label"], "qrels"),
        (["topic_id", "doc_id", "grade"], "qrels"),
        (["qid", "docno", "judgment"], "qrels"),
        (["Query ID", "docno", "rel"], "qrels"),
    ],
)
def test_well_known_spellings(names: list[str], kind: str) -> None:
    frame = pl.DataFrame(dict(zip(names, [["q1"], ["d1"], [1]], strict=True)))
    result = (as_run if kind == "run" else as_qrels)(frame).collect()
    assert result["query_id"].to_list() == ["q1"]
    assert result["doc_id"].to_list() == ["d1"]


def test_run_id_spellings() -> None:
    for name in ["tag", "system", "run", "run_id"]:
        frame = pl.DataFrame({**RUN, name: ["sys1", "sys1"]})
        assert as_run(frame).collect()["run_id"].to_list() == ["sys1", "sys1"]


def test_priorities_pyterrier_frames() -> None:
    # PyTerrier: qid + query text, docid (internal int) + docno (the id)
    res = pl.DataFrame(
        {"qid": ["1"], "docid": [5], "docno": ["d5"], "score": [1.0], "query": ["x"]}
    )
    assert as_run(res).collect().rows() == [("run", "1", "d5", 1.0)]
    topics = pl.DataFrame({"qid": ["1"], "query": ["hello world"]})
    assert as_queries(topics).collect().rows() == [("1", "hello world")]


def test_qrels_score_is_relevance_only_without_a_relevance_column() -> None:
    both = pl.DataFrame({**QRELS, "score": [9, 9]})
    assert as_qrels(both).collect()["relevance"].to_list() == [1, 0]


def test_automatic_mapping_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    frame = pl.DataFrame({"qid": ["q1"], "docno": ["a"], "sim": [1.0]})
    with caplog.at_level(logging.INFO, logger="ireval_df"):
        as_run(frame)
    records = [r for r in caplog.records if r.name == "ireval_df"]
    assert len(records) == 1
    assert records[0].getMessage() == (
        "run: using column 'qid' as 'query_id', column 'docno' as 'doc_id', "
        "column 'sim' as 'score'; pass columns= to choose others"
    )


def test_explicit_columns_come_first(caplog: pytest.LogCaptureFixture) -> None:
    frame = pl.DataFrame({"qid": ["q1"], "topic": ["t1"], "d": ["a"], "s": [1.0]})
    with caplog.at_level(logging.INFO, logger="ireval_df"):
        result = as_run(
            frame, columns={"topic": "query_id", "d": "doc_id", "s": "score"}
        )
    assert result.collect()["query_id"].to_list() == ["t1"]
    assert caplog.records == []


def test_missing_column_message() -> None:
    frame = pl.DataFrame({"qid": ["1"], "docno": ["a"], "bm25": [1.0]})
    with pytest.raises(SchemaError) as info:
        as_run(frame)
    assert str(info.value) == (
        "run is missing column 'score' (found ['qid', 'docno', 'bm25']).\n"
        "  Hint: pass columns={'qid': 'query_id', 'docno': 'doc_id', 'bm25': 'score'}."
    )


def test_missing_columns_without_guesses() -> None:
    frame = pl.DataFrame({"x": ["1"], "y": ["a"], "z": [1.0], "w": [1]})
    with pytest.raises(
        SchemaError,
        match=r"qrels is missing columns 'query_id', 'doc_id', 'relevance' .*\n"
        r"  Hint: pass columns=\{'<query_id column>': 'query_id'",
    ):
        as_qrels(frame)


def test_rank_without_score_gets_a_hint() -> None:
    frame = pl.DataFrame({"qid": ["1"], "pid": ["a"], "rank": [1]})
    with pytest.raises(SchemaError, match=r"score=-pl.col\('rank'\)"):
        as_run(frame)


def test_queries_need_a_query_id() -> None:
    with pytest.raises(SchemaError, match=r"queries is missing column 'query_id'"):
        as_queries(pl.DataFrame({"lang": ["en"]}))


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (
            {"qidd": "query_id"},
            r"columns= maps 'qidd', but run has no column .*Did you mean 'qid'\?",
        ),
        ({"qid": "query"}, r"maps 'qid' to 'query', which is not a run column"),
        ({"sim": "score", "other": "score"}, r"maps several columns to 'score'"),
        ({"other": "query_id"}, r"run already has a column 'query_id'"),
    ],
)
def test_bad_columns_argument(columns: dict[str, str], message: str) -> None:
    frame = pl.DataFrame(
        {"qid": ["1"], "query_id": ["1"], "docno": ["a"], "sim": [1.0], "other": [1.0]}
    )
    with pytest.raises(SchemaError, match=message):
        as_run(frame.drop("query_id") if "qidd" in columns else frame, columns=columns)


def test_columns_must_be_a_mapping() -> None:
    with pytest.raises(SchemaError, match="columns= must map source names"):
        as_run(pl.DataFrame(RUN), columns=[("a", "b")])  # type: ignore[arg-type]


def test_unusable_dtypes() -> None:
    nested = pl.DataFrame({**RUN, "query_id": [["q"], ["q"]]})
    with pytest.raises(
        SchemaError, match=r"column 'query_id' has dtype List\(String\)"
    ):
        as_run(nested)
    flags = pl.DataFrame({**RUN, "score": [True, False]})
    with pytest.raises(
        SchemaError, match=r"column 'score' has dtype Boolean; expected numbers"
    ):
        as_run(flags)


# --------------------------------------------------------------------------
# values


def test_nan_scores_are_refused_and_infinite_ones_kept() -> None:
    frame = pl.DataFrame(
        {
            "qid": ["q1"] * 4,
            "docno": ["a", "b", "c", "d"],
            "sim": [1.0, float("nan"), float("inf"), float("-inf")],
        }
    )
    with pytest.raises(DataError) as info:
        as_run(frame)
    assert str(info.value) == (
        "run has 1 score that is NaN, e.g. query_id='q1', doc_id='b', score=nan: "
        "a NaN score has no place in a ranking.\n  Hint: drop or fill them before "
        "evaluating, e.g. run.filter(pl.col('sim').is_not_nan())."
    )
    kept = as_run(frame.filter(pl.col("sim").is_not_nan())).collect()
    assert kept["score"].to_list() == [1.0, float("inf"), float("-inf")]


def test_infinite_scores_rank_first_and_last_as_in_the_trec_eval_drop_in(
    tmp_path: Path,
) -> None:
    from ireval_df import evaluate
    from ireval_df.trec_eval import trec_eval

    run = tmp_path / "inf.run"
    run.write_text(
        "1 Q0 a 1 inf x\n1 Q0 b 2 5 x\n1 Q0 c 3 -inf x\n"
        "1 Q0 d 4 inf x\n1 Q0 e 5 -inf x\n"
    )
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 1\n1 0 c 1\n1 0 e 2\n")
    # d, a (inf, ties by doc_id descending), b, e, c (-inf): relevant at 2, 4, 5
    ap = evaluate(run, qrels, ["AP"])["value"].item()
    assert ap == pytest.approx((1 / 2 + 2 / 4 + 3 / 5) / 3, abs=1e-12)
    out = trec_eval(qrels, run, ["-m", "map"])
    assert out.split()[-1] == f"{ap:.4f}"
    # the same from a frame
    inf = float("inf")
    frame = pl.DataFrame(
        {
            "query_id": ["1"] * 5,
            "doc_id": ["a", "b", "c", "d", "e"],
            "score": [inf, 5.0, -inf, inf, -inf],
        }
    )
    assert evaluate(frame, qrels, ["AP"])["value"].item() == ap


def test_lazy_input_is_checked_now() -> None:
    lazy = pl.LazyFrame({**RUN, "score": [1.0, float("nan")]})
    with pytest.raises(DataError, match="1 score that is NaN"):
        as_run(lazy)


@pytest.mark.parametrize("column", ["query_id", "doc_id", "score"])
def test_null_values(column: str) -> None:
    frame = pl.DataFrame(RUN).with_columns(pl.lit(None).alias(column))
    with pytest.raises(DataError, match=rf"run has 2 null values in column '{column}'"):
        as_run(frame)


def test_string_scores() -> None:
    frame = pl.DataFrame({**RUN, "score": ["1.5", " 2e-1 "]})
    assert as_run(frame).collect()["score"].to_list() == [1.5, 0.2]
    bad = pl.DataFrame({**RUN, "score": ["1.5", "high"]})
    with pytest.raises(
        DataError, match=r"column 'score' has 1 value that is not a number, e.g. 'high'"
    ):
        as_run(bad)


def test_relevance_values() -> None:
    whole = pl.DataFrame({**QRELS, "relevance": [2.0, -1.0]})
    assert as_qrels(whole).collect()["relevance"].to_list() == [2, -1]
    flags = pl.DataFrame({**QRELS, "relevance": [True, False]})
    assert as_qrels(flags).collect()["relevance"].to_list() == [1, 0]
    words = pl.DataFrame({**QRELS, "relevance": ["3", "0"]})
    assert as_qrels(words).collect()["relevance"].to_list() == [3, 0]


def test_fractional_grades() -> None:
    frame = pl.DataFrame(
        {"qid": ["q1"] * 3, "doc": ["a", "b", "c"], "grade": [1.0, 0.5, 2.5]}
    )
    with pytest.raises(DataError) as info:
        as_qrels(frame)
    message = str(info.value)
    assert (
        "column 'relevance' (from 'grade') has 2 grades that are not a whole" in message
    )
    assert "e.g. 0.5 (query_id='q1', doc_id='b')" in message
    assert "pl.col('grade').round().cast(pl.Int32)" in message


def test_grades_out_of_range_and_null() -> None:
    big = pl.DataFrame({**QRELS, "relevance": [1, 2**40]})
    with pytest.raises(DataError, match=r"1 grade that is outside the Int32 range"):
        as_qrels(big)
    missing = pl.DataFrame({**QRELS, "relevance": [1, None]})
    with pytest.raises(DataError, match=r"1 null value in column 'relevance'"):
        as_qrels(missing)


def test_rank_values_that_are_not_counts_become_null() -> None:
    frame = pl.DataFrame({**RUN, "rank": [1.0, 1.5]})
    assert as_run(frame).collect()["rank"].to_list() == [1, None]
    text = pl.DataFrame({**RUN, "rank": ["3", "x"]})
    assert as_run(text).collect()["rank"].to_list() == [3, None]


def test_duplicate_and_null_query_ids_in_queries() -> None:
    with pytest.raises(DataError, match=r"2 rows with a repeated query_id, e.g. 'q1'"):
        as_queries(pl.DataFrame({"query_id": ["q1", "q1", "q2"], "x": [1, 2, 3]}))
    with pytest.raises(DataError, match=r"1 null value in column 'query_id'"):
        as_queries(pl.DataFrame({"query_id": ["q1", None]}))


# --------------------------------------------------------------------------
# pandas detection


def test_is_pandas_without_pandas_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "pandas", raising=False)
    assert is_pandas(pl.DataFrame()) is False
    assert "pandas" not in sys.modules


def test_is_pandas_with_pandas() -> None:
    pd = pytest.importorskip("pandas")
    assert is_pandas(pd.DataFrame({"a": [1]}))
    assert not is_pandas(pl.DataFrame({"a": [1]}))


def test_lazy_plan_that_fails_is_a_schema_error() -> None:
    broken = pl.LazyFrame(RUN).select(pl.col("no_such_column"))
    with pytest.raises(SchemaError, match="could not read run: "):
        as_run(broken)


def test_queries_keep_attribute_order_and_renames() -> None:
    meta = pl.DataFrame({"src": ["web"], "qid": ["1"], "cls": ["nav"], "n": [2]})
    queries = as_queries(meta, columns={"cls": "query_class"}).collect()
    assert queries.columns == ["query_id", "src", "query_class", "n"]
    assert queries.rows() == [("1", "web", "nav", 2)]


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_in_memory_reads_a_parquet_file_once(tmp_path, kind: str) -> None:
    # the file is gone after as_run/as_qrels: only an in-memory frame still
    # collects; a lazy one reads the file again and fails
    frame = pl.DataFrame(
        {"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0], "relevance": [1]}
    ).drop("relevance" if kind == "run" else "score")
    prepare = as_run if kind == "run" else as_qrels
    path = tmp_path / f"{kind}.parquet"
    frame.write_parquet(path)
    kept = prepare(path, in_memory=True)
    lazy = prepare(path)
    path.unlink()
    assert kept.collect().height == 1
    with pytest.raises((OSError, pl.exceptions.PolarsError)):
        lazy.collect()


def _empty_runs(tmp_path):
    import pandas as pd
    import pyarrow as pa

    frame = pl.DataFrame(
        schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}
    )
    frame.write_parquet(tmp_path / "empty.parquet")
    frame.write_csv(tmp_path / "empty.csv")
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "empty.run").write_text("")
    (tmp_path / "comments.run").write_text("# nothing\n\n")
    return {
        "DataFrame": frame,
        "LazyFrame": frame.lazy(),
        "pandas": pd.DataFrame({"query_id": [], "doc_id": [], "score": []}),
        "Arrow": pa.table({"query_id": [], "doc_id": [], "score": []}),
        "dict": {},
        "Parquet": tmp_path / "empty.parquet",
        "CSV": tmp_path / "empty.csv",
        "JSONL": tmp_path / "empty.jsonl",
        "TREC": tmp_path / "empty.run",
        "TREC comments": tmp_path / "comments.run",
        "one of a list": [tmp_path / "empty.parquet", "data/runs/bm25.run"],
    }


@pytest.mark.parametrize(
    "kind",
    [
        "DataFrame",
        "LazyFrame",
        "pandas",
        "Arrow",
        "dict",
        "Parquet",
        "CSV",
        "JSONL",
        "TREC",
        "TREC comments",
        "one of a list",
    ],
)
def test_an_empty_run_is_an_error_from_every_input_kind(kind, tmp_path, monkeypatch):
    from ireval_df import evaluate

    monkeypatch.chdir(Path(__file__).resolve().parents[3])
    run = _empty_runs(tmp_path)[kind]
    with pytest.raises(IrevalError, match=r"no rows|is empty|no data lines"):
        evaluate(run, "data/qrels.txt", ["AP"])
