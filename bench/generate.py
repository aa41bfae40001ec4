"""Deterministic synthetic runs and qrels for the benchmarks.

``python bench/generate.py SHAPE OUTDIR`` writes, for one shape,

* ``run.parquet``  (``query_id, doc_id, score``) and ``qrels.parquet``
  (``query_id, doc_id, relevance``);
* ``run.trec`` (``qid Q0 docno rank score tag``) and ``qrels.trec``
  (``qid 0 docno rel``), except for ``xl`` (Parquet only);

byte-identically on every call (numpy ``default_rng`` with a fixed seed per
shape and chunk). Only numpy and polars are needed (pyarrow for ``xl``).

Shapes (``SHAPES`` below): ``msmarco-dev`` (6,980 queries x 1,000 documents,
about 1.1 relevant per query, binary, only positives judged), ``msmarco-sys``
(the same data, but each group of tied scores listed by doc_id ascending, as
Lucene and Anserini write them, with the rank column numbering the lines:
trec_eval's order, doc_id descending, differs from the file's inside ties,
as in real submitted runs), ``trec-dl``
(200 x 1,000, about 200 graded judgments per query), ``large`` (100,000 x
100, about 5 graded judgments per query), ``xl`` (1,000,000 x 100, like
``large``), and ``tiny`` (50 x 20, for the smoke test).

``python bench/generate.py log-10m OUTDIR`` (and ``log-tiny``) writes a
search log instead: ``bench/generate_log.py`` says what.

What makes the data realistic enough to benchmark with:

* ids are numeric strings, as in MS MARCO and TREC DL;
* scores are BM25-like: descending from a per-query top score by random
  gaps, rounded to 3 decimals, so about one row in ten ties with the row
  above (ties must be broken by doc_id, as trec_eval does); a 3-decimal
  score keeps its order and ties when stored as float32 (pytrec_eval);
* the file lists each ranking by score, ties in generation order (so a tool
  that breaks ties by input order, such as ranx, differs slightly);
* relevant documents are spread over ranks (log-uniform, so about 9% at
  rank 1), and some are never retrieved;
* graded shapes judge a pool: the top of the ranking, a thinning sample
  deeper down, and documents the run never retrieved.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

__all__ = ["SHAPES", "Shape", "generate", "main"]

COLLECTION = 8_841_823  # MS MARCO passage collection size
#: Query ids are drawn from [0, QUERY_SPACE); doc ids from [0, COLLECTION).
QUERY_SPACE = 10_000_000
SEED = 20_260_611
#: Queries generated (and written) per chunk, to bound memory on ``xl``.
CHUNK_QUERIES = 100_000


@dataclass(frozen=True)
class Shape:
    """One benchmark shape: sizes and the judgment model."""

    name: str
    queries: int
    depth: int
    graded: bool
    #: binary: probability of a 2nd, 3rd ... relevant document (geometric)
    extra_relevant: float = 0.0
    #: graded: every rank up to ``pool_top`` is judged ...
    pool_top: int = 0
    #: ... and rank r > pool_top with probability pool_rate * (pool_top / r) ** 0.5
    pool_rate: float = 0.0
    #: graded: mean number of judged documents the run did not retrieve
    unretrieved_judged: float = 0.0
    trec_text: bool = True
    #: ``"generation"``: tied rows in generation order; ``"ascending"``: by
    #: doc_id ascending (as Lucene breaks ties), ranks renumbered
    tie_order: str = "generation"

    @property
    def rows(self) -> int:
        """Number of run rows."""
        return self.queries * self.depth


SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape(
            "tiny",
            50,
            20,
            graded=True,
            pool_top=3,
            pool_rate=0.3,
            unretrieved_judged=2.0,
        ),
        Shape("msmarco-dev", 6_980, 1_000, graded=False, extra_relevant=0.09),
        # the same seeds (name of the same length, same size): the same data
        Shape(
            "msmarco-sys",
            6_980,
            1_000,
            graded=False,
            extra_relevant=0.09,
            tie_order="ascending",
        ),
        Shape(
            "trec-dl",
            200,
            1_000,
            graded=True,
            pool_top=30,
            pool_rate=0.45,
            unretrieved_judged=40.0,
        ),
        Shape(
            "large",
            100_000,
            100,
            graded=True,
            pool_top=1,
            pool_rate=0.08,
            unretrieved_judged=2.6,
        ),
        Shape(
            "xl",
            1_000_000,
            100,
            graded=True,
            pool_top=1,
            pool_rate=0.08,
            unretrieved_judged=2.6,
            trec_text=False,
        ),
    )
}


def _strides(rng: np.random.Generator, n: int) -> np.ndarray:
    """Per-query strides coprime with the collection size.

    ``(base + j * stride) % COLLECTION`` is then distinct for every
    ``j < COLLECTION``: each ranking and its unretrieved documents are
    distinct documents, without a Python loop.
    """
    stride = rng.integers(1_000, COLLECTION // 2, size=n, dtype=np.int64)
    bad = np.gcd(stride, COLLECTION) != 1
    while bad.any():
        stride[bad] = rng.integers(
            1_000, COLLECTION // 2, size=int(bad.sum()), dtype=np.int64
        )
        bad = np.gcd(stride, COLLECTION) != 1
    return stride


def _doc(base: np.ndarray, stride: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Document number at ``position`` (0-based; >= depth = not retrieved)."""
    return (base + position * stride) % COLLECTION


def _log_uniform_rank(rng: np.random.Generator, n: int, high: int) -> np.ndarray:
    """Ranks 1..high, log-uniform: P(rank <= r) = log(r + 1) / log(high + 1)."""
    return np.floor(np.exp(rng.random(n) * np.log(high + 1.0))).astype(np.int64)


def _chunk(
    shape: Shape, index: int, first_query: int, n: int, query_ids: np.ndarray
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Run and qrels rows of queries ``first_query .. first_query + n - 1``."""
    rng = np.random.default_rng([SEED, len(shape.name), shape.queries, index])
    depth = shape.depth
    qid = query_ids[first_query : first_query + n]
    base = rng.integers(0, COLLECTION, size=n, dtype=np.int64)
    stride = _strides(rng, n)

    # Run: scores descend from a per-query top by exponential gaps; rounding
    # to 3 decimals turns the smallest gaps into ties.
    top = rng.uniform(12.0, 40.0, size=n)
    gaps = rng.exponential(scale=(top * 0.6 / depth)[:, None], size=(n, depth))
    gaps[:, 0] = 0.0
    score = np.round(top[:, None] - np.cumsum(gaps, axis=1), 3)
    position = np.broadcast_to(np.arange(depth, dtype=np.int64), (n, depth))
    docs = _doc(base[:, None], stride[:, None], position)
    run = pl.DataFrame(
        {
            "query_id": np.repeat(qid, depth),
            "doc_id": docs.ravel(),
            "score": score.ravel(),
            "rank": np.tile(np.arange(1, depth + 1, dtype=np.int32), n),
        }
    )

    if not shape.graded:
        # 1 + geometric extra relevant documents; each at a log-uniform rank
        # in 1..2*depth, ranks beyond ``depth`` never retrieved.
        count = rng.geometric(1.0 - shape.extra_relevant, size=n)
        owner = np.repeat(np.arange(n), count)
        rank = _log_uniform_rank(rng, owner.size, 2 * depth)
        rank = _dedupe_ranks(owner, rank, 2 * depth)
        qrels = pl.DataFrame(
            {
                "query_id": qid[owner],
                "doc_id": _doc(base[owner], stride[owner], rank - 1),
                "relevance": np.ones(owner.size, dtype=np.int32),
            }
        )
    else:
        # Pool: the top ``pool_top`` ranks, a thinning sample below, and
        # documents the run never retrieved. Grades fall with rank.
        ranks = np.arange(1, depth + 1, dtype=np.float64)
        p_judge = np.where(
            ranks <= shape.pool_top,
            1.0,
            shape.pool_rate * np.sqrt(shape.pool_top / ranks),
        )
        judged = rng.random((n, depth)) < p_judge[None, :]
        q_idx, pos = np.nonzero(judged)
        p_rel = 0.15 + 0.55 / np.sqrt(pos + 1.0)
        grade = _grades(rng, p_rel)
        extra = rng.poisson(shape.unretrieved_judged, size=n)
        owner = np.repeat(np.arange(n), extra)
        hidden = _dedupe_ranks(
            owner, depth + rng.integers(0, 50 * depth, size=owner.size), 51 * depth
        )
        hidden_grade = _grades(rng, np.full(owner.size, 0.2))
        all_q = np.concatenate([q_idx, owner])
        all_pos = np.concatenate([pos, hidden])
        qrels = pl.DataFrame(
            {
                "query_id": qid[all_q],
                "doc_id": _doc(base[all_q], stride[all_q], all_pos),
                "relevance": np.concatenate([grade, hidden_grade]).astype(np.int32),
            }
        )
    as_text = [pl.col("query_id").cast(pl.String), pl.col("doc_id").cast(pl.String)]
    run = run.with_columns(as_text)
    if shape.tie_order == "ascending":  # ties by doc_id ascending, ranks renumbered
        run = (
            run.with_columns(__q=pl.int_range(pl.len()) // depth)
            .sort(["__q", "score", "doc_id"], descending=[False, True, False])
            .with_columns(rank=pl.int_range(1, pl.len() + 1).over("__q").cast(pl.Int32))
            .drop("__q")
        )
    return run, qrels.with_columns(as_text).sort("query_id", "doc_id")


def _grades(rng: np.random.Generator, p_rel: np.ndarray) -> np.ndarray:
    """0 with probability 1 - p_rel, else 1, 2 or 3 (weights 5:3:2)."""
    relevant = rng.random(p_rel.size) < p_rel
    level = rng.choice(np.array([1, 2, 3]), size=p_rel.size, p=[0.5, 0.3, 0.2])
    return np.where(relevant, level, 0)


def _dedupe_ranks(owner: np.ndarray, rank: np.ndarray, high: int) -> np.ndarray:
    """Make (owner, rank) pairs distinct by bumping repeats (vectorised)."""
    rank = rank.copy()
    while True:
        key = owner * (high + 10 * owner.size + 1) + rank
        order = np.argsort(key, kind="stable")
        repeat = np.zeros(key.size, dtype=bool)
        repeat[order[1:]] = key[order[1:]] == key[order[:-1]]
        if not repeat.any():
            return rank
        rank[repeat] += 1


def _query_ids(shape: Shape) -> np.ndarray:
    rng = np.random.default_rng([SEED, shape.queries])
    ids = rng.choice(QUERY_SPACE, size=shape.queries, replace=False)
    return np.sort(ids)


def _trec_run(run: pl.DataFrame, tag: str) -> pl.DataFrame:
    return run.select(
        "query_id",
        pl.lit("Q0").alias("q0"),
        "doc_id",
        "rank",
        pl.col("score").map_batches(_format_score, return_dtype=pl.String),
        pl.lit(tag).alias("tag"),
    )


def _format_score(score: pl.Series) -> pl.Series:
    # 3 decimals, written exactly as rounded (no float noise), as a ranker prints.
    return score.round(3).cast(pl.Decimal(scale=3, precision=18)).cast(pl.String)


def _trec_qrels(qrels: pl.DataFrame) -> pl.DataFrame:
    return qrels.select("query_id", pl.lit("0").alias("iter"), "doc_id", "relevance")


def generate(
    shape_name: str, outdir: str | Path, *, tag: str = "bm25"
) -> dict[str, Any]:
    """Write the files of one shape into ``outdir``; return a summary.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     info = generate("tiny", tmp)
    >>> info["run_rows"], info["queries"]
    (1000, 50)
    """
    shape = SHAPES[shape_name]
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    query_ids = _query_ids(shape)
    run_rows = qrels_rows = relevant = 0
    chunks = range(0, shape.queries, CHUNK_QUERIES)
    if shape.trec_text:
        runs, qrels_parts = [], []
        for i, first in enumerate(chunks):
            n = min(CHUNK_QUERIES, shape.queries - first)
            run, qrels = _chunk(shape, i, first, n, query_ids)
            runs.append(run)
            qrels_parts.append(qrels)
        run = pl.concat(runs)
        qrels = pl.concat(qrels_parts)
        run.drop("rank").write_parquet(out / "run.parquet", statistics=False)
        qrels.write_parquet(out / "qrels.parquet", statistics=False)
        _trec_run(run, tag).write_csv(
            out / "run.trec", separator=" ", include_header=False
        )
        _trec_qrels(qrels).write_csv(
            out / "qrels.trec", separator=" ", include_header=False
        )
        run_rows, qrels_rows = run.height, qrels.height
        relevant = int((qrels["relevance"] > 0).sum())
    else:
        import pyarrow.parquet as pq

        run_writer = qrels_writer = None
        try:
            for i, first in enumerate(chunks):
                n = min(CHUNK_QUERIES, shape.queries - first)
                run, qrels = _chunk(shape, i, first, n, query_ids)
                run_table = run.drop("rank").to_arrow()
                qrels_table = qrels.to_arrow()
                if run_writer is None:
                    run_writer = pq.ParquetWriter(out / "run.parquet", run_table.schema)
                    qrels_writer = pq.ParquetWriter(
                        out / "qrels.parquet", qrels_table.schema
                    )
                run_writer.write_table(run_table)
                qrels_writer.write_table(qrels_table)  # type: ignore[union-attr]
                run_rows += run.height
                qrels_rows += qrels.height
                relevant += int((qrels["relevance"] > 0).sum())
                del run, qrels, run_table, qrels_table
        finally:
            for writer in (run_writer, qrels_writer):
                if writer is not None:
                    writer.close()
    return {
        "shape": shape.name,
        "queries": shape.queries,
        "run_rows": run_rows,
        "qrels_rows": qrels_rows,
        "relevant_per_query": round(relevant / shape.queries, 3),
        "judged_per_query": round(qrels_rows / shape.queries, 3),
        "trec_text": shape.trec_text,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python bench/generate.py SHAPE OUTDIR``.

    The search-log shapes (``log-tiny``, ``log-10m``) are made by
    ``bench/generate_log.py``.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from generate_log import LOG_SHAPES, generate_log

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", choices=sorted(SHAPES) + sorted(LOG_SHAPES))
    parser.add_argument("outdir")
    args = parser.parse_args(argv)
    if args.shape in LOG_SHAPES:
        info = generate_log(args.shape, args.outdir)
        print(" ".join(f"{k}={v}" for k, v in info.items()), file=sys.stderr)
        return 0
    info = generate(args.shape, args.outdir)
    print(" ".join(f"{k}={v}" for k, v in info.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
