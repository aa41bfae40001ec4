"""Rankings with their tie groups, paired with a baseline: what every similarity kernel reads.

A similarity measure compares two rankings of one query: a run's (``x``)
and a baseline's (``y``). Both are frames of the same shape, one row per
ranked document:

``key`` (Int64)
    the comparison: one (run_id, baseline, query_id), numbered by
    :func:`pair_rankings`; the same key on both sides;
``doc_id`` (String)
``pos`` (Int64)
    1-based position in the ranking, in :func:`ireval_df.evaluate`'s order
    (score descending, then ``doc_id`` descending, byte order);
``tie_start`` (Int64), ``tie_size`` (Int64)
    the first position and the size of the document's tie group: the
    documents of one ranking with equal scores (with ``rank_from="column"``,
    equal ranks). A document without a tie is its own group of one.

A key may have rows on one side only: the other ranking is empty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import polars as pl

from ireval_df.errors import AlignmentError, DataError, OptionError, warn

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "KEY",
    "RANKED",
    "Pairs",
    "choose_baselines",
    "cut",
    "pair_rankings",
    "rank_with_ties",
    "without_ties",
]

KEY = "key"
#: The columns of one side of a pair (see the module doc)
RANKED = (KEY, "doc_id", "pos", "tie_start", "tie_size")

Missing = Literal["zero", "skip", "error"]


def rank_with_ties(
    run: pl.LazyFrame, *, rank_from: Literal["score", "column"] = "score"
) -> pl.LazyFrame:
    """Give each ranking's documents a position and find their tie groups.

    Parameters
    ----------
    run : polars.LazyFrame
        A checked canonical run (``run_id, query_id, doc_id, score`` and, for
        ``rank_from="column"``, ``rank``), one row per document and ranking.
    rank_from : {"score", "column"}, default "score"
        Order by score descending (ties: equal scores), or by the ``rank``
        column ascending (ties: equal ranks); either way ``doc_id``
        descending orders the documents within a tie group.

    Returns
    -------
    polars.LazyFrame
        ``run_id, query_id, doc_id, pos, tie_start, tie_size``.

    Examples
    --------
    >>> run = pl.LazyFrame({"run_id": "r", "query_id": "q", "doc_id": ["a", "b", "c"],
    ...                     "score": [1.0, 2.0, 1.0]})
    >>> rank_with_ties(run).sort("pos").collect().rows()
    [('r', 'q', 'b', 1, 1, 1), ('r', 'q', 'c', 2, 2, 2), ('r', 'q', 'a', 3, 2, 2)]
    """
    keys = ["run_id", "query_id"]
    # both keys descending: a rank orders ascending, so it is negated
    value = pl.col("score") if rank_from == "score" else -pl.col("rank").cast(pl.Int64)
    pos = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(
        keys, order_by=[pl.col("__ireval_tie_value"), pl.col("doc_id")], descending=True
    )
    group = [*keys, "__ireval_tie_value"]
    return (
        run.select(*keys, "doc_id", value.alias("__ireval_tie_value"))
        .with_columns(pos.alias("pos"))
        .with_columns(
            pl.col("pos").min().over(group).alias("tie_start"),
            pl.len().over(group).cast(pl.Int64).alias("tie_size"),
        )
        .drop("__ireval_tie_value")
    )


def without_ties(ranked: pl.LazyFrame) -> pl.LazyFrame:
    """Break every tie group in position order: each document its own group.

    Examples
    --------
    >>> side = pl.LazyFrame({"key": 0, "doc_id": ["a", "b"], "pos": [1, 2],
    ...                      "tie_start": [1, 1], "tie_size": [2, 2]})
    >>> without_ties(side).collect()["tie_start"].to_list()
    [1, 2]
    """
    return ranked.with_columns(
        pl.col("pos").alias("tie_start"), pl.lit(1, pl.Int64).alias("tie_size")
    )


def cut(ranked: pl.LazyFrame, k: int | None) -> pl.LazyFrame:
    """Keep the top ``k`` positions of each ranking; a tie group cut by ``k`` shrinks.

    The documents kept are those at positions 1..k of the tie-broken order
    (as ``evaluate``'s cutoffs); a tie group that straddles ``k`` keeps its
    first members only, and its size is what is left of it.

    Examples
    --------
    >>> side = pl.LazyFrame({"key": 0, "doc_id": ["a", "b", "c"], "pos": [1, 2, 3],
    ...                      "tie_start": [1, 2, 2], "tie_size": [1, 2, 2]})
    >>> cut(side, 2).collect().select("doc_id", "tie_size").rows()
    [('a', 1), ('b', 1)]
    """
    if k is None:
        return ranked
    kept = ranked.filter(pl.col("pos") <= k)
    return kept.with_columns(
        pl.min_horizontal(pl.col("tie_size"), k - pl.col("tie_start") + 1).alias(
            "tie_size"
        )
    )


@dataclass(frozen=True)
class Pairs:
    """Every comparison of a call: its key, and both sides' rankings."""

    #: ``key, run_id, baseline, query_id``, one row per comparison
    keys: pl.DataFrame
    #: the compared run's rankings (:data:`RANKED` columns)
    x: pl.LazyFrame
    #: the baseline's rankings (:data:`RANKED` columns)
    y: pl.LazyFrame


def choose_baselines(
    baseline: str | Sequence[str] | None, run_ids: Sequence[str]
) -> list[str]:
    """Return the baselines a call names (default: the first run), checked.

    Examples
    --------
    >>> choose_baselines(None, ["bm25", "dense"]), choose_baselines("dense", ["bm25", "dense"])
    (['bm25'], ['dense'])
    """
    if baseline is None:
        return list(run_ids[:1])
    given = [baseline] if isinstance(baseline, str) else list(baseline)
    unknown = [b for b in given if b not in run_ids]
    if unknown or not given:
        msg = (
            f"baseline {unknown or given!r} is not one of the runs {list(run_ids)!r}.\n"
            "  Hint: name one of the runs (a TREC run tag, else the file's name), "
            "or none for the first run."
        )
        raise OptionError(msg)
    return list(dict.fromkeys(given))


def pair_rankings(
    ranked: pl.LazyFrame,
    runs: Sequence[str],
    baselines: Sequence[str],
    *,
    missing: Missing = "zero",
) -> Pairs:
    """Pair each run's rankings with each baseline's, query by query.

    Parameters
    ----------
    ranked : polars.LazyFrame
        :func:`rank_with_ties` of every run.
    runs : sequence of str
        Every run id, in order.
    baselines : sequence of str
        The baselines: every other run is compared with each (a baseline is
        not compared with itself; two baselines are compared once, the later
        against the earlier).
    missing : {"zero", "skip", "error"}, default "zero"
        A query that one run of a pair ranks and the other does not: compared
        with an empty ranking, left out of that pair, or an error. Counted in
        a warning either way.

    Returns
    -------
    Pairs

    Raises
    ------
    AlignmentError
        ``missing="error"`` and a query is ranked by one run of a pair only.
    DataError
        No pair to compare.
    """
    if missing not in ("zero", "skip", "error"):
        msg = f"missing={missing!r} is not one of 'zero', 'skip', 'error'."
        raise OptionError(msg)
    pairs: list[tuple[str, str]] = []
    for base in baselines:
        for run in runs:
            if run != base and (base, run) not in pairs:
                pairs.append((run, base))
    if not pairs:
        msg = (
            f"nothing to compare: the runs are {list(runs)!r} and the baseline "
            f"{list(baselines)!r}.\n  Hint: pass at least two runs."
        )
        raise DataError(msg)
    queries = ranked.select("run_id", "query_id").unique().collect()
    pair_frame = pl.DataFrame(
        {"run_id": [r for r, _ in pairs], "baseline": [b for _, b in pairs]},
        schema={"run_id": pl.String, "baseline": pl.String},
    )
    ranked_by = queries.with_columns(pl.lit(value=True).alias("__ireval_has"))
    both = (
        pl.concat(
            [
                pair_frame.join(queries, on="run_id"),
                pair_frame.join(queries.rename({"run_id": "baseline"}), on="baseline"),
            ]
        )
        .unique()
        .join(
            ranked_by.rename({"__ireval_has": "__ireval_in_run"}),
            on=["run_id", "query_id"],
            how="left",
        )
        .join(
            ranked_by.rename(
                {"run_id": "baseline", "__ireval_has": "__ireval_in_base"}
            ),
            on=["baseline", "query_id"],
            how="left",
        )
    )
    one_sided = both.filter(
        pl.col("__ireval_in_run").is_null() | pl.col("__ireval_in_base").is_null()
    )
    if one_sided.height:
        _report_one_sided(one_sided, missing)
        if missing == "skip":
            both = both.filter(
                pl.col("__ireval_in_run").is_not_null()
                & pl.col("__ireval_in_base").is_not_null()
            )
    keys = (
        both.select("run_id", "baseline", "query_id")
        .sort("run_id", "baseline", "query_id")
        .with_row_index(KEY)
        .with_columns(pl.col(KEY).cast(pl.Int64))
    )
    lazy_keys = keys.lazy()
    x = ranked.join(lazy_keys, on=["run_id", "query_id"]).select(RANKED)
    y = ranked.join(
        lazy_keys.drop("run_id").rename({"baseline": "run_id"}),
        on=["run_id", "query_id"],
    ).select(RANKED)
    return Pairs(keys, x, y)


def _report_one_sided(one_sided: pl.DataFrame, missing: Missing) -> None:
    count = one_sided.height
    example = one_sided.sort("run_id", "baseline", "query_id").row(0, named=True)
    side = (
        example["baseline"]
        if example["__ireval_in_base"] is None
        else example["run_id"]
    )
    what = (
        f"{count} (run, baseline, query) comparisons have a ranking on one side "
        f"only, e.g. query {example['query_id']!r} of run {example['run_id']!r} "
        f"against {example['baseline']!r}, which run {side!r} does not rank"
    )
    if missing == "error":
        msg = f"{what}.\n  Hint: pass missing='zero' (compare with an empty ranking) or 'skip'."
        raise AlignmentError(msg)
    done = (
        "compared with an empty ranking (missing='zero')"
        if missing == "zero"
        else "left out (missing='skip')"
    )
    warn(f"{what}: {done}.")
