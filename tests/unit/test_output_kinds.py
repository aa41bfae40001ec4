"""A result comes back as the kind of frame that went in (README's promise)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import ireval_df as ie

DATA = Path(__file__).resolve().parents[2] / "data"
RUN = DATA / "runs" / "bm25.run"
QRELS = DATA / "qrels.txt"


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_an_arrow_table_in_gives_tables_out_with_their_settings(tmp_path):
    table = ie.read_run(RUN).to_arrow()
    per_query = ie.evaluate(table, QRELS, ["AP", "nDCG@10"])
    assert isinstance(per_query, pa.Table)
    settings = json.loads(per_query.schema.metadata[b"ireval_df"])
    assert settings["metrics"] == ["AP", "nDCG@10"]
    expected = ie.evaluate(RUN, QRELS, ["AP", "nDCG@10"])
    assert pl.from_arrow(per_query).equals(expected)
    summary = ie.summarize(per_query)
    assert isinstance(summary, pa.Table)
    kept = json.loads(summary.schema.metadata[b"ireval_df"])
    assert kept["metrics"] == ["AP", "nDCG@10"]  # evaluate's settings carried on
    assert kept["ci"] == "percentile bootstrap, 95%"
    two = pa.concat_tables(
        [
            per_query,
            pl.from_arrow(per_query).with_columns(run_id=pl.lit("b")).to_arrow(),
        ]
    )
    assert isinstance(ie.compare(two, baseline="bm25"), pa.Table)
    ie.write_results(summary, tmp_path / "s.parquet")
    stored = pl.read_parquet_metadata(tmp_path / "s.parquet")
    assert json.loads(stored["ireval_df"])["ci"] == "percentile bootstrap, 95%"


def test_kinds_in_and_out():
    frame = ie.read_run(RUN)
    assert isinstance(ie.evaluate(frame, QRELS, ["AP"]), pl.DataFrame)
    assert isinstance(ie.evaluate(frame.lazy(), QRELS, ["AP"]), pl.LazyFrame)
    assert isinstance(ie.evaluate(frame.to_pandas(), QRELS, ["AP"]), pd.DataFrame)
    assert isinstance(ie.evaluate(RUN, QRELS, ["AP"]), pl.DataFrame)
    # a list of runs: its first item decides
    pandas_runs = [
        frame.to_pandas(),
        frame.with_columns(run_id=pl.lit("b")).to_pandas(),
    ]
    assert isinstance(ie.evaluate(pandas_runs, QRELS, ["AP"]), pd.DataFrame)
