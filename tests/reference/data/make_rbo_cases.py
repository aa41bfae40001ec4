"""Write rbo_cases.parquet, the fixture of tests/reference/test_rbo_reference.py.

The values are those of Corsi & Urbano's reference code (``rbo/Python/rbo.py``
of github.com/julian-urbano/sigir2024-rbo, commit 0338fd9, MIT), run
unchanged on our own random cases (seed 20240717): 4,000 pairs of rankings
with tie groups, ``p`` in {0.5, 0.8, 0.9, 0.95, 0.99}, every ``ties`` and
``score``. Only these generated cases are kept; the rows derived from the
repository's ``test.csv`` (CC BY-SA data) are not.

One row per pair: ``case_id, kind, p, x, y`` (tie groups best first, each a
list of doc ids; within a group, position order) and ``<ties>_<score>``, the
reference's value, null where it raises (both rankings empty; ``ext`` with
one empty).

    python tests/reference/data/make_rbo_cases.py ORACLE_CASES.parquet

``ORACLE_CASES.parquet`` is the long table written by running the reference
on the generated pairs, one row per pair, ``score`` and ``ties``: ``case_id,
source, kind, x, y, p, score, ties, value``; only ``source == "random"`` rows
are kept.
"""

import sys
from pathlib import Path

import polars as pl


def main(source_path: str) -> None:
    source = pl.read_parquet(source_path).filter(pl.col("source") == "random")
    wide = (
        source.with_columns(name=pl.col("ties") + "_" + pl.col("score"))
        .pivot(on="name", index=["case_id", "kind", "p", "x", "y"], values="value")
        .sort("case_id")
    )
    order = [
        f"{t}_{s}"
        for t in ("a", "b", "w", "none")
        for s in ("ext", "min", "max", "res")
    ]
    wide = wide.select("case_id", "kind", "p", "x", "y", *order)
    assert wide.height == 4000
    wide.write_parquet(
        Path(__file__).with_name("rbo_cases.parquet"),
        compression="zstd",
        compression_level=19,
    )


if __name__ == "__main__":
    main(sys.argv[1])
