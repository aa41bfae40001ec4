"""The engine: merge every metric's plan into one lazy polars plan.

Steps (DESIGN.md section 5), each once per call whatever the number of
metrics and runs:

1. qrels: label each judged row, compute per-query statistics (``qrels``
   stage) and the ideal-ranking tables (``ideal`` stage);
2. run: count every ranking's documents (:func:`ranking_sizes`, cut at
   ``depth``), give each ranking a unique 64-bit id (a hash of run_id and
   query_id, checked for collisions: integer keys group and join far faster
   than two strings) and rank by score descending then doc_id descending
   (explicit orders, never row order). Only when a requested metric is
   registered ``full_sort`` does every row get a rank (a sort of each
   ranking); otherwise only the documents in the qrels keep a row (found by
   a hash filter, then an exact join), with their true rank, found by
   ranking the scores down to each ranking's last judged document and
   sorting the doc_ids of the few rows tied with a judged one. Then labels
   (NONPOOL -1, pooled-unjudged -2), the ``depth`` cut, and optionally the
   unjudged documents dropped and the rest renumbered (``judged_only``);
3. row-stage columns, one ``with_columns`` per dependency layer;
4. one ``group_by`` (ranking id) ``.agg`` for all metrics, joined onto the
   rankings' sizes (a ranking without a row is an empty aggregate);
5. a grid of runs x qrels topics fills queries a run did not answer with the
   aggregates of an empty ranking;
6. one ``select`` of the final per-query values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import polars as pl

from ireval_df.metrics import _shared as shared
from ireval_df.metrics._plan import DEFS, KEYS, N_RET, RANKING, Def

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ireval_df.metrics._spec import Metric

__all__ = [
    "EngineOptions",
    "label_qrels",
    "per_query_wide",
    "ranked_rows",
    "ranking_sizes",
]

MISSING = "__ireval_missing"
PRESENT = "__ireval_present"
_LAST = "__ireval_last"
_RANK = "__ireval_rank"
#: Seeds tried for the ranking hash before giving up (each collides with
#: probability ~ n^2 / 2^65 for n rankings).
_SEEDS = 16


def _doc_hash() -> pl.Expr:
    """Hash (query_id, doc_id) to 64 bits, for a cheap first filter."""
    return pl.col("query_id").hash(11) ^ pl.col("doc_id").hash(12)


def _ranking_hash(seed: int) -> pl.Expr:
    """Hash (run_id, query_id) to 64 bits: a one-column key for each ranking."""
    return pl.col("run_id").hash(2 * seed + 13) ^ pl.col("query_id").hash(2 * seed + 14)


def with_ranking_ids(sizes: pl.DataFrame) -> tuple[pl.DataFrame, pl.Expr]:
    """Give every ranking of ``sizes`` a unique 64-bit id (column ``RANKING``).

    Grouping, joining and partitioning by one integer costs a fraction of
    doing it by two strings. The id is a hash, checked on ``sizes`` (one row
    per distinct ranking) to be unique; on a collision the next seed is
    tried, so results never depend on luck. Returns ``sizes`` with the id
    and the expression that computes it for run rows.
    """
    for seed in range(_SEEDS):
        ranking = _ranking_hash(seed)
        if sizes.select(ranking.n_unique()).item() == sizes.height:
            return sizes.with_columns(ranking.alias(RANKING)), ranking
    msg = f"no collision-free ranking hash in {_SEEDS} seeds"  # pragma: no cover
    raise RuntimeError(msg)  # pragma: no cover


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
    """Rank, cut and label every run row of the qrels topics.

    Returns ``run_id, query_id, doc_id, score, rank (Int64), label (Int32)``.
    Rank is score descending then ``doc_id`` descending (byte order), or the
    input ``rank`` column with ``rank_from="column"``; ``depth`` keeps the top
    ranks; ``judged_only`` then drops unjudged documents and renumbers.
    """
    topics = labelled_qrels.select("query_id").unique()
    rows = run.join(topics, on="query_id", how="semi")
    return _rank(
        rows, labelled_qrels, options, judged_only=judged_only, every=True, by=KEYS
    )


def ranking_sizes(run: pl.LazyFrame, options: EngineOptions) -> pl.LazyFrame:
    """Every ranking of the run and its number of documents (at most ``depth``).

    Returns ``run_id, query_id, __ireval_nret``: every ranking the run holds,
    whether or not its topic is in the qrels.
    """
    size = pl.len().cast(pl.Int64)
    if options.depth is not None:
        size = pl.min_horizontal(size, pl.lit(options.depth, pl.Int64))
    return run.group_by(list(KEYS)).agg(size.alias(N_RET))


def _rank(
    run: pl.LazyFrame,
    labelled_qrels: pl.LazyFrame,
    options: EngineOptions,
    *,
    judged_only: bool,
    every: bool,
    by: tuple[str, ...] = (RANKING,),
) -> pl.LazyFrame:
    """Ranked, labelled rows, with the ``by`` columns naming each ranking.

    ``every=True`` ranks every row: one sort of each ranking by the rank key
    and ``doc_id``. Otherwise (``by`` must then be ``RANKING``) only the
    documents in the qrels keep a row, with their true rank: 1 + the number
    of documents with a better key (a rank of the keys alone, over the rows
    down to the ranking's last judged key; the rows below it are only
    counted, in :func:`ranking_sizes`) + the number with the same key and a
    ``doc_id`` that sorts first (one sort of the few rows that share a
    judged document's key).
    """
    name = "score" if options.rank_from == "score" else "rank"
    key, descending = pl.col(name), options.rank_from == "score"
    labels = labelled_qrels.select("query_id", "doc_id", "label")
    doc = ["query_id", "doc_id"]
    part = list(by)
    if every:
        order = pl.int_range(1, pl.len() + 1).over(
            part, order_by=[key, pl.col("doc_id")], descending=descending
        )
        rows = run.join(labels, on=doc, how="left").with_columns(order.alias(_RANK))
    else:
        # the judged rows, found by hash first (a cheap filter over every
        # row; a collision only lets an extra row through to the exact join)
        known = labels.select(_doc_hash().alias("h")).collect()["h"].implode()
        judged_rows = (
            run.filter(_doc_hash().is_in(known))
            .join(labels, on=doc, how="inner")
            .cache()
        )
        # the keys of the judged documents; the last of them in each ranking
        judged = judged_rows.select(RANKING, name).unique().cache()
        last = judged.group_by(RANKING).agg(
            (key.min() if descending else key.max()).alias(_LAST)
        )
        reach = key >= pl.col(_LAST) if descending else key <= pl.col(_LAST)
        better = key.rank("min", descending=descending).over(RANKING)
        # the rows tied on a judged key, sorted by doc_id within it: each
        # row's offset from the first of its key is its doc_id tie-break
        tied = [RANKING, name, "doc_id"]
        index = pl.int_range(pl.len(), dtype=pl.Int64)
        first = (pl.col(RANKING) != pl.col(RANKING).shift()) | (key != key.shift())
        offset = index - pl.when(first.fill_null(value=True)).then(index).forward_fill()
        rows = (
            run.join(last, on=RANKING, how="inner")
            .filter(reach)
            .select(*dict.fromkeys([RANKING, "doc_id", "score", name]))
            .with_columns(better.cast(pl.Int64).alias(_RANK))
            .join(judged, on=[RANKING, name], how="semi")
            .sort(tied, descending=[False, descending, descending])
            .with_columns(pl.col(_RANK) + offset)
            .join(
                judged_rows.select(RANKING, "run_id", "query_id", "doc_id", "label"),
                on=[RANKING, "doc_id"],
            )
        )
    rows = rows.select(
        *(c for c in by if c not in KEYS),
        "run_id",
        "query_id",
        "doc_id",
        "score",
        pl.col(_RANK).cast(pl.Int64).alias("rank"),
        pl.col("label").fill_null(-1).cast(pl.Int32),
    )
    if options.depth is not None:
        rows = rows.filter(pl.col("rank") <= options.depth)
    if judged_only:
        rows = rows.filter(pl.col("label") >= 0).with_columns(
            pl.col("rank").rank("ordinal").over(part).cast(pl.Int64)
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
    *,
    sizes: pl.LazyFrame | None = None,
    run_ids: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """One row per (run, qrels topic), one column per metric (its canonical name).

    Also carries ``__ireval_missing``: the run returned nothing for the topic
    (its values are those of an empty ranking, NaN replaced by 0). With
    ``missing="skip"`` such rows are left out. ``sizes`` is
    :func:`ranking_sizes` of the same run and options, when already known;
    ``run_ids`` (a ``run_id`` column) the runs to score, when ``run`` is one
    part of them (default: the runs in ``run``).
    """
    labelled = label_qrels(qrels)
    known = ranking_sizes(run, options) if sizes is None else sizes
    known_sizes, ranking = with_ranking_ids(known.collect())
    run = run.with_columns(ranking.alias(RANKING))
    sizes = known_sizes.lazy()
    if run_ids is None:
        run_ids = sizes.select("run_id").unique()
    variants: dict[bool, list[Metric]] = {}
    for metric in metrics:
        variants.setdefault(metric.judged_only, []).append(metric)
    frames = [
        _variant(group, run, labelled, sizes, run_ids, options, judged_only=flag)
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
    sizes: pl.LazyFrame,
    run_ids: pl.LazyFrame,
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

    # 2. run side: every row ranked only when a metric needs it
    every = any(shared.full_sort(m) for m in metrics)
    rows = _rank(run, labelled, options, judged_only=judged_only, every=every)
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

    # 3. one aggregation for all metrics, onto every ranking of the run: a
    # ranking without rows (no judged document, or judged_only emptied it)
    # is an empty aggregate; judged_only rankings count their kept rows
    agg_defs, *agg_rest = _layers(stage.get("agg", [])) or [[]]
    agg = rows.group_by(RANKING).agg(
        [pl.len().alias(PRESENT)] + [d.expr.alias(d.name) for d in agg_defs]
    )
    agg = sizes.join(agg, on=RANKING, how="left").drop(RANKING)
    if judged_only:
        agg = agg.with_columns(pl.col(PRESENT).fill_null(0).cast(pl.Int64).alias(N_RET))

    # 4. runs x topics grid: a topic the run did not answer is an empty ranking
    topics = qstats.select("query_id")
    grid = run_ids.join(topics, how="cross")
    how: Literal["left", "inner"] = "inner" if options.missing == "skip" else "left"
    per_query = grid.join(agg, on=list(KEYS), how=how)
    missing = pl.col(N_RET).is_null()
    empty = pl.col(PRESENT).is_null()
    fills = [
        pl.when(empty).then(pl.lit(d.fill)).otherwise(pl.col(d.name)).alias(d.name)
        for d in agg_defs
        if d.fill is not None
    ]
    per_query = per_query.with_columns(
        missing.alias(MISSING), pl.col(N_RET).fill_null(0), *fills
    )
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
