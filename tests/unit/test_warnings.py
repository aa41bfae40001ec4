"""Warnings point at the caller's line, and the unjudged one can be tuned."""

from __future__ import annotations

import warnings
from pathlib import Path

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import IrevalWarning, OptionError

DATA = Path(__file__).resolve().parents[2] / "data"
RUNS = [DATA / "runs" / "bm25.run", DATA / "runs" / "dense.run"]
QRELS = DATA / "qrels.txt"


@pytest.mark.parametrize("buckets", [1, 2])
def test_every_warning_points_at_the_callers_line(buckets: int, tmp_path: Path):
    run = ie.read_run(RUNS[1])
    repeated = pl.concat([run, run.head(3)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = ie.evaluate(
            repeated,
            QRELS,
            ["AP"],
            duplicates="first",
            buckets=buckets,
            warn_unjudged=0.0,  # any unjudged document in the top 10 warns
        )
        ie.write_results(result, tmp_path / "out.csv", metadata={"a": "b"})
    texts = [str(w.message) for w in caught]
    assert any("missing" in t or "not in the run" in t for t in texts)
    assert any("in the run but not in the qrels" in t for t in texts)
    assert any("unjudged" in t for t in texts)
    assert any("dropped 3 repeated" in t for t in texts)
    assert any("metadata=" in t for t in texts)
    for w in caught:
        assert w.category is IrevalWarning
        assert w.filename == __file__, (str(w.message), w.filename)


def test_the_unjudged_warning_names_its_option_and_obeys_it():
    def unjudged(**options: object) -> list[str]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ie.evaluate(RUNS[0], QRELS, ["AP"], **options)  # type: ignore[arg-type]
        return [str(w.message) for w in caught if "unjudged" in str(w.message)]

    (text,) = unjudged()  # 56% of bm25's top 10 is unjudged
    assert text.startswith("56% of the top 10 documents are unjudged")
    assert "warn_unjudged=None (--warn-unjudged never)" in text
    assert unjudged(warn_unjudged=None) == []
    assert unjudged(warn_unjudged=0.6) == []
    assert len(unjudged(warn_unjudged=0.5)) == 1
    for bad in (1.5, -0.1, True, "never"):
        with pytest.raises(OptionError, match="warn_unjudged must be a share"):
            ie.evaluate(RUNS[0], QRELS, ["AP"], warn_unjudged=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("buckets", [1, 2])
def test_document_slice_warnings_point_at_the_callers_line(buckets: int) -> None:
    run = ie.read_run(RUNS[0])
    docs = (
        run.select("doc_id")
        .unique()
        .sort("doc_id")
        .with_row_index()
        .filter(pl.col("index") % 5 > 0)  # a fifth of the documents is missing
        .select(
            "doc_id",
            published_at=pl.when(pl.col("index") % 7 == 0)
            .then(pl.lit("not a date"))
            .otherwise(pl.lit("2024-01-01")),
        )
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ie.evaluate(
            run,
            QRELS,
            ["P@10", "Share@10"],
            docs=docs,
            by_doc=ie.age_buckets(as_of="2024-06-01"),
            buckets=buckets,
            warn_unjudged=None,
        )
    texts = [str(w.message) for w in caught]
    assert (
        sum("is not a date or time" in t or "are not a date" in t for t in texts) == 1
    )
    assert sum("have no row in docs" in t for t in texts) == 1
    for w in caught:
        assert w.category is IrevalWarning
        assert w.filename == __file__, (str(w.message), w.filename)
