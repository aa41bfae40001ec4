"""Intermediates reused by several metrics, each computed once per call.

Every function returns ``pl.col(name)`` for a column whose name encodes its
parameters, and declares how to compute it (:func:`define`). Labels follow
trec_eval: ``label`` is the qrels grade when judged (>= 0), ``-1`` for a
document absent from the qrels (NONPOOL) and ``-2`` for a document whose
qrels grade is negative (pooled, not judged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.offline.plan import N_RET, define, ordered_sum, per_ranking

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric

__all__ = [
    "NONPOOL",
    "UNJUDGED",
    "dcg_at",
    "full_sort",
    "gain_key",
    "ideal_col",
    "idcg",
    "is_rel",
    "max_level",
    "n_judged_nonrel",
    "n_positive_gain",
    "n_rel",
    "n_ret",
    "rank",
    "relret",
    "relret_cum",
    "row_gain",
    "safe_div",
]

NONPOOL = -1
UNJUDGED = -2

LABEL = pl.col("label")


def rank() -> pl.Expr:
    """The 1-based rank as a float (for divisions)."""
    return pl.col("rank").cast(pl.Float64)


def safe_div(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """``numerator / denominator``, 0 where the denominator is 0.

    Examples
    --------
    >>> pl.select(safe_div(pl.lit(1.0), pl.lit(0))).item()
    0.0
    """
    return (
        pl.when(denominator != 0)
        .then(numerator.cast(pl.Float64) / denominator)
        .otherwise(pl.lit(0.0))
    )


def full_sort(metric: Metric) -> bool:
    """Whether ``metric`` needs the rank of every retrieved document.

    Its registry entry says so, its gain map gives documents absent from
    the qrels (level -1, NONPOOL) a gain, or its relevance level is below 0
    (trec_eval -l-1: documents absent from the qrels then count as relevant).

    Examples
    --------
    >>> from ireval_df.measures import parse_metric
    >>> [full_sort(parse_metric(s)) for s in ["AP", "G", "nDCG(gains={-1:0.5})@10"]]
    [False, True, True]
    """
    gains = dict(metric.params).get("gains", ())
    nonpool = isinstance(gains, tuple) and any(
        isinstance(item, tuple) and item[0] == NONPOOL for item in gains
    )
    below_zero = "rel" in metric.info.params and metric.rel < 0
    return metric.info.options.get("full_sort", False) or nonpool or below_zero


# --- qrels side -------------------------------------------------------------


def n_rel(rel: int) -> pl.Expr:
    """R: the number of qrels documents with grade >= ``rel``."""
    return define(f"__ireval_R_{rel}", "qrels", (LABEL >= rel).sum().cast(pl.Int64))


def n_judged_nonrel(rel: int) -> pl.Expr:
    """The number of qrels documents judged below ``rel`` (grade 0..rel-1)."""
    expr = ((LABEL >= 0) & (LABEL < rel)).sum().cast(pl.Int64)
    return define(f"__ireval_N_{rel}", "qrels", expr)


def max_level() -> pl.Expr:
    """The topic's highest judged grade (-1 when nothing is judged)."""
    expr = LABEL.filter(LABEL >= 0).max().fill_null(-1).cast(pl.Int64)
    return define("__ireval_maxlevel", "qrels", expr)


# --- gains -----------------------------------------------------------------


def gain_key(dcg: str, gains: tuple[tuple[int, float], ...]) -> str:
    """A short name for a gain function, used in column names.

    Examples
    --------
    >>> gain_key("log2", ()), gain_key("exp-log2", ((1, 3.0),))
    ('lin', 'exp_1_3p0')
    """
    base = "exp" if dcg == "exp-log2" else "lin"
    for level, value in gains:
        base += f"_{level}_{value}".replace("-", "m").replace(".", "p")
    return base


def gain_of(label: pl.Expr, dcg: str, gains: tuple[tuple[int, float], ...]) -> pl.Expr:
    """Gain of a label: the grade (linear) or 2^grade - 1; 0 when unjudged.

    A gain map replaces the gain of the levels it names (negative levels
    included: -1 is NONPOOL, -2 pooled-unjudged, as in trec_eval).
    """
    base = label.cast(pl.Float64)
    default = (pl.lit(2.0).pow(base) - 1.0) if dcg == "exp-log2" else base
    expr: pl.Expr = pl.when(label < 0).then(pl.lit(0.0)).otherwise(default)
    for level, value in gains:
        expr = pl.when(label == level).then(pl.lit(float(value))).otherwise(expr)
    return expr.cast(pl.Float64)


def row_gain(dcg: str, gains: tuple[tuple[int, float], ...]) -> pl.Expr:
    """The gain of each ranked document."""
    key = gain_key(dcg, gains)
    return define(f"__ireval_rgain_{key}", "row", gain_of(LABEL, dcg, gains))


def qrels_gain(dcg: str, gains: tuple[tuple[int, float], ...]) -> pl.Expr:
    """The gain of each judged document (qrels rows; 0 for negative grades).

    Documents with a negative grade are pooled but not judged: a gain map
    entry for level -2 gives them a gain in a ranking, never a place in the
    ideal ranking (trec_eval builds the ideal from grades >= 0).
    """
    key = gain_key(dcg, gains)
    gain = pl.when(LABEL < 0).then(pl.lit(0.0)).otherwise(gain_of(LABEL, dcg, gains))
    return define(f"__ireval_qgain_{key}", "qrels_row", gain)


def ideal_rank(dcg: str, gains: tuple[tuple[int, float], ...]) -> pl.Expr:
    """Position of a judged document in the ideal ranking (gain descending)."""
    key = gain_key(dcg, gains)
    gain = qrels_gain(dcg, gains)
    expr = gain.rank("ordinal", descending=True).over("query_id").cast(pl.Int64)
    return define(f"__ireval_qirank_{key}", "qrels_row", expr)


def n_positive_gain(dcg: str, gains: tuple[tuple[int, float], ...]) -> pl.Expr:
    """Rp: the number of judged documents with a positive gain."""
    key = gain_key(dcg, gains)
    gain = qrels_gain(dcg, gains)
    return define(f"__ireval_Rp_{key}", "qrels", (gain > 0).sum().cast(pl.Int64))


def idcg(dcg: str, gains: tuple[tuple[int, float], ...], k: int | None) -> pl.Expr:
    """Ideal DCG at ``k`` (None: all positive-gain judged documents)."""
    key = gain_key(dcg, gains)
    gain = qrels_gain(dcg, gains)
    irank = ideal_rank(dcg, gains)
    keep = gain > 0
    if k is not None:
        keep = keep & (irank <= k)
    term = gain / (irank.cast(pl.Float64) + 1.0).log(2)
    total = ordered_sum(term, where=keep, by=irank)
    return define(f"__ireval_idcg_{key}_{k}", "qrels", total)


def ideal_col(dcg: str, gains: tuple[tuple[int, float], ...], what: str) -> pl.Expr:
    """A column of the ideal table joined onto ranked rows by position.

    ``what`` is ``"gain"`` (I_rank, null past Rp) or ``"cumdcg"`` (IDCG at
    min(rank, Rp), null past Rp).
    """
    key = gain_key(dcg, gains)
    name = f"__ireval_ideal_{what}_{key}"
    igain = pl.col(f"__ireval_igain_{key}")
    irank = pl.col(f"__ireval_irank_{key}")
    if what == "gain":
        expr = igain
    elif what == "cumdcg":
        expr = (
            (igain / (irank.cast(pl.Float64) + 1.0).log(2))
            .cum_sum()
            .over("query_id", order_by=irank)
        )
    else:  # pragma: no cover - programming error
        msg = f"unknown ideal column {what!r}"
        raise ValueError(msg)
    qrels_gain(dcg, gains)
    ideal_rank(dcg, gains)
    return define(name, "ideal", expr, table=key)


# --- run side ---------------------------------------------------------------


def is_rel(rel: int) -> pl.Expr:
    """Whether the ranked document is relevant at level ``rel``."""
    return define(f"__ireval_isrel_{rel}", "row", LABEL >= rel)


def relret_cum(rel: int) -> pl.Expr:
    """Relevant documents at ranks 1..i (inclusive), per row."""
    expr = per_ranking(is_rel(rel).cast(pl.Int64).cum_sum())
    return define(f"__ireval_relcum_{rel}", "row", expr)


def n_ret(k: int | None = None) -> pl.Expr:
    """Documents retrieved (in the top ``k``): a per-query value.

    The engine counts every ranking's documents (``N_RET``), so that this
    holds whether or not every row is ranked.
    """
    n = pl.col(N_RET)
    return n if k is None else pl.min_horizontal(n, pl.lit(k, pl.Int64))


def relret(rel: int, k: int | None = None) -> pl.Expr:
    """Relevant documents retrieved (in the top ``k``)."""
    hit = is_rel(rel)
    if k is not None:
        hit = hit & (pl.col("rank") <= k)
    return define(f"__ireval_relret_{rel}_{k}", "agg", hit.sum().cast(pl.Int64))


def dcg_at(dcg: str, gains: tuple[tuple[int, float], ...], k: int | None) -> pl.Expr:
    """DCG of the ranking at ``k`` (None: the whole ranking)."""
    key = gain_key(dcg, gains)
    term = row_gain(dcg, gains) / (rank() + 1.0).log(2)
    keep = None if k is None else pl.col("rank") <= k
    return define(f"__ireval_dcg_{key}_{k}", "agg", ordered_sum(term, where=keep))
