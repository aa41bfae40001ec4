"""The engine: merge every metric's plan into one lazy polars plan.

Steps (DESIGN.md section 5), each once per call whatever the number of
metrics and runs:

1. qrels: label each judged row, compute per-query statistics (``qrels``
   stage) and the ideal-ranking tables (``ideal`` stage);
2. run: keep the qrels topics, rank by score descending then doc_id
   descending (explicit window order, never row order), cut at ``depth``,
   join labels (NONPOOL -1, pooled-unjudged -2), optionally drop unjudged
   documents and renumber (``judged_only``);
3. row-stage columns, one ``with_columns`` per dependency layer;
4. one ``group_by(run_id, query_id).agg`` for all metrics;
5. a grid of runs x qrels topics fills queries a run did not answer with the
   aggregates of an empty ranking;
6. one ``select`` of the final per-query values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import polars as pl

from ireval_df.metrics._plan import DEFS, KEYS, Def

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ireval_df.metrics._spec import Metric

__all__ = ["EngineOptions", "label_qrels", "per_query_wide", "ranked_rows"]

MISSING = "__ireval_missing"
PRESENT = "__ireval_present"


@dataclass(frozen=True)
class EngineOptions:
    """Settings shared by every metric of one call."""

    depth: int | None = None
    missing: Literal["zero", "skip"] = "zero"
    rank_from: Literal["score", "column"] = "score"


def label_qrels(qrels: pl.LazyFrame) -> pl.LazyFrame:
    """Add ``label``: the grade when >= 0, -2 (pooled, not judged) when negative."""
    relevance = pl.col("relevance")
    return qrels.with_columns(
        label=pl.when(relevance < 0)
        .then(pl.lit(-2))
        .otherwise(relevance)
        .cast(pl.Int32)
    )


def ranked_rows(
    run: pl.LazyFrame,
    labelled_qrels: pl.LazyFrame,
    options: EngineOptions,
    *,
    judged_only: bool = False,
) -> pl.LazyFrame:
    """Rank, cut and label the run rows of the qrels topics.

    Returns ``run_id, query_id, doc_id, score, rank (Int64), label (Int32)``.
    Rank is score descending then ``doc_id`` descending (byte order), or the
    input ``rank`` column with ``rank_from="column"``; ``depth`` keeps the top
    ranks; ``judged_only`` then drops unjudged documents and renumbers.
    """
    topics = labelled_qrels.select("query_id").unique()
    rows = run.join(topics, on="query_id", how="semi")
    if options.rank_from == "column":
        order = pl.int_range(1, pl.len() + 1).over(
            list(KEYS), order_by=[pl.col("rank"), pl.col("doc_id")]
        )
    else:
        order = pl.int_range(1, pl.len() + 1).over(
            list(KEYS), order_by=[pl.col("score"), pl.col("doc_id")], descending=True
        )
    rows = rows.select(
        "run_id", "query_id", "doc_id", "score", order.cast(pl.Int64).alias("rank")
    )
    if options.depth is not None:
        rows = rows.filter(pl.col("rank") <= options.depth)
    labels = labelled_qrels.select("query_id", "doc_id", "label")
    rows = rows.join(labels, on=["query_id", "doc_id"], how="left").with_columns(
        pl.col("label").fill_null(-1).cast(pl.Int32)
    )
    if judged_only:
        rows = rows.filter(pl.col("label") >= 0).with_columns(
            pl.col("rank").rank("ordinal").over(list(KEYS)).cast(pl.Int64)
        )
    return rows


def _roots(expr: pl.Expr) -> list[str]:
    return list(expr.meta.root_names())


def _closure(plans: Iterable[tuple[Sequence[Def], pl.Expr]]) -> list[Def]:
    """Every definition the plans need, shared ones resolved by name.

    A metric may use one private name in two stages (a row flag and its
    per-query sum), so definitions are told apart by (stage, name).
    """
    pool: dict[tuple[str, str], Def] = {}
    known: set[str] = set()
    pending: list[str] = []
    for defs, value in plans:
        for d in defs:
            pool[(d.stage, d.name)] = d
            known.add(d.name)
            pending += _roots(d.expr)
        pending += _roots(value)
    while pending:
        name = pending.pop()
        if name in known or name not in DEFS:
            continue
        known.add(name)
        pool[(DEFS[name].stage, name)] = DEFS[name]
        pending += _roots(DEFS[name].expr)
        if DEFS[name].stage == "ideal":
            key = DEFS[name].table
            pending += [f"__ireval_qgain_{key}", f"__ireval_qirank_{key}"]
    return list(pool.values())


def _layers(defs: list[Def]) -> list[list[Def]]:
    """Group same-stage definitions so each layer only uses earlier ones."""
    by_name = {d.name: d for d in defs}
    depth: dict[str, int] = {}

    def depth_of(d: Def) -> int:
        if d.name not in depth:
            deps = [n for n in _roots(d.expr) if n in by_name and n != d.name]
            depth[d.name] = 1 + max((depth_of(by_name[n]) for n in deps), default=-1)
        return depth[d.name]

    layers: list[list[Def]] = []
    for d in defs:
        level = depth_of(d)
        while len(layers) <= level:
            layers.append([])
        layers[level].append(d)
    return layers


def _with_layers(frame: pl.LazyFrame, defs: list[Def]) -> pl.LazyFrame:
    for layer in _layers(defs):
        frame = frame.with_columns([d.expr.alias(d.name) for d in layer])
    return frame


def per_query_wide(
    metrics: Sequence[Metric],
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    options: EngineOptions,
) -> pl.LazyFrame:
    """One row per (run, qrels topic), one column per metric (its canonical name).

    Also carries ``__ireval_missing``: the run returned nothing for the topic
    (its values are those of an empty ranking, NaN replaced by 0). With
    ``missing="skip"`` such rows are left out.
    """
    labelled = label_qrels(qrels)
    variants: dict[bool, list[Metric]] = {}
    for metric in metrics:
        variants.setdefault(metric.judged_only, []).append(metric)
    frames = [
        _variant(group, run, labelled, options, judged_only=flag)
        for flag, group in variants.items()
    ]
    result = frames[0]
    for frame in frames[1:]:
        result = result.join(frame.drop(MISSING), on=list(KEYS), how="left")
    names = [str(m) for m in metrics]
    return result.select(*KEYS, MISSING, *names).sort(list(KEYS))


def _variant(
    metrics: list[Metric],
    run: pl.LazyFrame,
    labelled: pl.LazyFrame,
    options: EngineOptions,
    *,
    judged_only: bool,
) -> pl.LazyFrame:
    plans = [(m, m.info.build(m)) for m in metrics]
    pool = _closure((p.defs, p.value) for _, p in plans)
    stage: dict[str, list[Def]] = {}
    for d in pool:
        stage.setdefault(d.stage, []).append(d)

    # 1. qrels side
    qrows = _with_layers(labelled, stage.get("qrels_row", []))
    q_first, *q_rest = _layers(stage.get("qrels", [])) or [[]]
    qstats = qrows.group_by("query_id").agg(
        [pl.len().alias("__ireval_qrels_n")] + [d.expr.alias(d.name) for d in q_first]
    )
    for layer in q_rest:
        qstats = qstats.with_columns([d.expr.alias(d.name) for d in layer])
    qstat_names = {d.name for d in stage.get("qrels", [])}

    # 2. run side
    rows = ranked_rows(run, labelled, options, judged_only=judged_only)
    later = stage.get("row", []) + stage.get("agg", []) + stage.get("ideal", [])
    row_needs = sorted({n for d in later for n in _roots(d.expr)} & qstat_names)
    if row_needs:
        rows = rows.join(
            qstats.select("query_id", *row_needs), on="query_id", how="left"
        )
    tables: dict[str, list[Def]] = {}
    for d in stage.get("ideal", []):
        tables.setdefault(d.table or "", []).append(d)
    for key, defs in tables.items():
        ideal = qrows.filter(pl.col(f"__ireval_qgain_{key}") > 0).select(
            "query_id",
            pl.col(f"__ireval_qirank_{key}").alias(f"__ireval_irank_{key}"),
            pl.col(f"__ireval_qgain_{key}").alias(f"__ireval_igain_{key}"),
        )
        ideal = _with_layers(ideal, defs).select(
            "query_id", f"__ireval_irank_{key}", *(d.name for d in defs)
        )
        rows = rows.join(
            ideal,
            left_on=["query_id", "rank"],
            right_on=["query_id", f"__ireval_irank_{key}"],
            how="left",
        )
    rows = _with_layers(rows, stage.get("row", []))

    # 3. one aggregation for all metrics
    agg_defs, *agg_rest = _layers(stage.get("agg", [])) or [[]]
    agg = rows.group_by(list(KEYS)).agg(
        [pl.len().alias(PRESENT)] + [d.expr.alias(d.name) for d in agg_defs]
    )

    # 4. runs x topics grid: a topic the run did not answer is an empty ranking
    run_ids = run.select("run_id").unique()
    topics = qstats.select("query_id")
    grid = run_ids.join(topics, how="cross")
    how: Literal["left", "inner"] = "inner" if options.missing == "skip" else "left"
    per_query = grid.join(agg, on=list(KEYS), how=how)
    missing = pl.col(PRESENT).is_null()
    fills = [
        pl.when(missing).then(pl.lit(d.fill)).otherwise(pl.col(d.name)).alias(d.name)
        for d in agg_defs
        if d.fill is not None
    ]
    per_query = per_query.with_columns(missing.alias(MISSING), *fills)
    per_query = per_query.join(qstats, on="query_id", how="left")
    for layer in agg_rest:
        per_query = per_query.with_columns([d.expr.alias(d.name) for d in layer])

    # 5. final values
    values = []
    for metric, plan in plans:
        value = plan.value.cast(pl.Float64)
        value = pl.when(pl.col(MISSING)).then(value.fill_nan(0.0)).otherwise(value)
        values.append(value.alias(str(metric)))
    return per_query.select(*KEYS, MISSING, *values)
