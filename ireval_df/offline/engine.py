"""The engine: merge every metric's plan into one lazy polars plan.

Steps (``docs/design.md``, the engine), each once per call whatever the number of
metrics and runs:

1. qrels: label each judged row, compute per-query statistics (``qrels``
   stage) and the ideal-ranking tables (``ideal`` stage);
2. run: find every ranking and count its documents (:func:`find_rankings`,
   cut at ``depth``; the same pass counts each ranking's distinct documents
   for the repeat check, :func:`may_repeat`), give each ranking a unique
   64-bit id (a hash of run_id and query_id, checked for collisions:
   integer keys group and join far faster than two strings) and rank by
   score descending then doc_id descending. Row order never changes a
   result; when each ranking's rows happen to be adjacent and best first
   (as in a TREC file), which the same pass checks, ranks are read off the
   order, with a sort of the tied rows only. Otherwise, only when a
   requested metric is registered ``full_sort`` does every row get a rank
   (a sort of each ranking); else only the documents in the qrels keep a
   row (found by a hash filter, then an exact join), with their true rank,
   found by ranking the scores down to each ranking's last judged document
   and sorting the doc_ids of the few rows tied with a judged one. Then
   labels (NONPOOL -1, pooled-unjudged -2), the ``depth`` cut, and
   optionally the unjudged documents dropped and the rest renumbered
   (``judged_only``);
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

from ireval_df.offline.intents import intent_columns
from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import KEYS, N_RET, RANKING, Def, Needs, build_plan

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ireval_df.measures.spec import Metric
    from ireval_df.offline.plan import Plan

__all__ = [
    "EngineOptions",
    "label_qrels",
    "per_query_wide",
    "Rankings",
    "find_rankings",
    "may_repeat",
    "ranked_rows",
]

MISSING = "__ireval_missing"
PRESENT = "__ireval_present"
_LAST = "__ireval_last"
_RANK = "__ireval_rank"
_TIED, _TIE = "__ireval_tied", "__ireval_tie"
_START, _UNORDERED = "__ireval_start", "__ireval_unordered"
_BLOCK, _DOCS = "__ireval_block", "__ireval_docs"
#: The judged-row filter's bitmap (:func:`_judged`): its bits, and the most
#: labels it takes
_COARSE_BITS = 25
_COARSE_MASK = (1 << _COARSE_BITS) - 1
_COARSE_KEYS = 1 << (_COARSE_BITS - 5)
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
    every: bool = True,
    rankings: Rankings | None = None,
) -> pl.LazyFrame:
    """Rank, cut and label every run row of the qrels topics.

    Returns ``run_id, query_id, doc_id, score, rank (Int64), label (Int32)``.
    Rank is score descending then ``doc_id`` descending (byte order), or the
    input ``rank`` column with ``rank_from="column"``; ``depth`` keeps the top
    ranks; ``judged_only`` then drops unjudged documents and renumbers.

    ``every=False`` keeps only the rows of documents in the qrels, each with
    its true rank in the whole ranking, as :func:`per_query_wide` ranks them
    (read off the row order, or a rank of the scores down to each ranking's
    last judged document): far cheaper than sorting every ranking when only
    the judged documents matter. ``rankings`` is :func:`find_rankings` of the
    same run and options, when already known (``every=False`` only).
    """
    if every:
        topics = labelled_qrels.select("query_id").unique()
        rows = run.join(topics, on="query_id", how="semi")
        return _rank(
            rows, labelled_qrels, options, judged_only=judged_only, every=True, by=KEYS
        )
    if rankings is None:
        rankings = find_rankings(run, options)
    return _rank(
        run,
        labelled_qrels,
        options,
        judged_only=judged_only,
        every=False,
        rankings=rankings,
    ).drop(RANKING)


@dataclass(frozen=True)
class Rankings:
    """Every ranking of a run, and how its rows lie (:func:`find_rankings`)."""

    #: ``run_id, query_id, __ireval_nret, __ireval_ranking``: one row per
    #: ranking of the run, whether or not its topic is in the qrels; the size
    #: is cut at ``depth``
    sizes: pl.DataFrame
    #: computes ``RANKING`` for a run row
    ranking: pl.Expr
    #: ``__ireval_ranking, __ireval_start`` (the ranking's first row number)
    #: when each ranking's rows are adjacent in the run, best first by the
    #: rank key; else None
    starts: pl.DataFrame | None
    #: each ranking's rows are adjacent in the run, in whatever order
    adjacent: bool
    #: some block of adjacent rows holds a ``doc_id`` hash twice (a repeat,
    #: or a collision); None when not counted
    doubled: bool | None = None
    #: when each ranking's rows are adjacent (and their ids were found
    #: without a collision), the rankings in row order: ``run_id, query_id,
    #: __ireval_nret`` (not cut at ``depth``), ``__ireval_start`` (the first
    #: row), ``__ireval_unordered`` (some row is not best first) and
    #: ``__ireval_ranking``; else None
    layout: pl.DataFrame | None = None

    @property
    def in_order(self) -> bool:
        """Tell whether each ranking's rows are adjacent and best first."""
        return self.starts is not None


def find_rankings(
    run: pl.LazyFrame, options: EngineOptions, *, repeats: bool = False
) -> Rankings:
    """Find every ranking of the run: its size, its id, and the rows' layout.

    One pass over the run finds its blocks: the stretches of adjacent rows
    that share ``(run_id, query_id)``. A TREC run file, a Parquet file
    written from one and a frame sorted by query are one block per ranking,
    best first. When the blocks' ids (a hash of run_id and query_id) are all
    distinct, no ranking is split over two blocks (they would share an id)
    and the id has no collision: each ranking's size is its block's length.
    Otherwise the blocks are summed per ranking and the id is found by
    :func:`with_ranking_ids`; the rankings are adjacent still when there are
    as many as blocks. With ``repeats``, the same pass counts each block's
    distinct ``doc_id`` hashes, for :func:`may_repeat`.
    """
    _, key, descending = _key(options)
    new = _boundaries(pl.col("run_id"), pl.col("query_id"))
    worse = key > key.shift() if descending else key < key.shift()
    unordered = ~new & worse
    if options.rank_from == "score":  # NaN is no order; validation rejects it
        unordered = unordered | key.is_nan()
    docs = [pl.col("doc_id").hash(3).alias(_DOCS)] if repeats else []
    counted = [pl.col(_DOCS).n_unique()] if repeats else []
    blocks = (
        run.select(
            new.cum_sum().set_sorted().alias(_BLOCK), unordered.alias(_UNORDERED), *docs
        )
        # the block number is sorted: the groups are slices of the rows, and
        # each block's hash set of documents is small enough to stay in cache
        # (the ids are gathered after: aggregated here too, they slow it 4x)
        .group_by(_BLOCK)
        .agg(
            pl.len().cast(pl.Int64).alias(N_RET),
            pl.col(_UNORDERED).any(),
            *counted,
        )
        .sort(_BLOCK)
        .with_columns((pl.col(N_RET).cum_sum() - pl.col(N_RET)).alias(_START))
        .collect(engine="streaming")
    )
    in_order = blocks.height > 0 and not blocks[_UNORDERED].any()
    doubled = bool((blocks[_DOCS] < blocks[N_RET]).any()) if repeats else None
    # the in-memory engine gathers from the chunks; the streaming one would
    # first copy both id columns whole
    ids = run.select(pl.col(*KEYS).gather(blocks[_START])).collect(engine="in-memory")
    blocks = pl.concat(
        [ids, blocks.select(N_RET, _START, _UNORDERED)], how="horizontal"
    )
    ranking = _ranking_hash(0)
    adjacent = blocks.select(ranking.n_unique()).item() == blocks.height
    layout = None
    if adjacent:
        layout = blocks.with_columns(ranking.alias(RANKING))
        sizes = layout.drop(_UNORDERED)
    else:
        grouped = blocks.group_by(list(KEYS)).agg(
            pl.col(N_RET).sum(), pl.col(_START).first()
        )
        adjacent = grouped.height == blocks.height
        sizes, ranking = with_ranking_ids(grouped)
    starts = sizes.select(RANKING, _START) if in_order and adjacent else None
    sizes = sizes.drop(_START)
    if options.depth is not None:
        sizes = sizes.with_columns(
            pl.min_horizontal(N_RET, pl.lit(options.depth, pl.Int64)).alias(N_RET)
        )
    return Rankings(sizes, ranking, starts, adjacent, doubled, layout)


def may_repeat(run: pl.LazyFrame, rankings: Rankings) -> bool:
    """Tell whether a document may be twice in one ranking; False proves it is not.

    Equal rows hash equally, so as many distinct hashes as rows proves that
    no document repeats; True may also be a hash collision, for an exact
    count to settle. When each ranking's rows are adjacent, a repeat lies
    within one block, and ``rankings`` (:func:`find_rankings` of ``run``
    with ``repeats``) has counted the distinct hashes block by block:
    thousands of small hash sets, which stay in cache, cost a fraction of
    one set of the whole run, counted here otherwise.
    """
    if rankings.adjacent and rankings.doubled is not None:
        return rankings.doubled
    hashed = (
        pl.col("run_id").hash(1) ^ pl.col("query_id").hash(2) ^ pl.col("doc_id").hash(3)
    )
    # the hashes first, then their distinct count: faster than one plan for
    # both, or than the streaming engine
    hashes = run.select(hashed).collect(engine="in-memory").to_series()
    return hashes.n_unique() < hashes.len()


def _boundaries(*columns: pl.Expr) -> pl.Expr:
    """Flag the first row, and each row where any of ``columns`` differs from the row above."""
    changed = pl.any_horizontal(c != c.shift() for c in columns)
    return changed.fill_null(value=True)


def _at_key_start(values: pl.Expr, key: pl.Expr) -> pl.Expr:
    """Carry ``values`` down from the first row of each run of one ranking and key."""
    return pl.when(_boundaries(pl.col(RANKING), key)).then(values).forward_fill()


def _key(options: EngineOptions) -> tuple[str, pl.Expr, bool]:
    """Return the rank key's column, its expression, and whether higher ranks first."""
    name = "score" if options.rank_from == "score" else "rank"
    return name, pl.col(name), options.rank_from == "score"


def _rank(
    run: pl.LazyFrame,
    labelled_qrels: pl.LazyFrame,
    options: EngineOptions,
    *,
    judged_only: bool,
    every: bool,
    by: tuple[str, ...] = (RANKING,),
    rankings: Rankings | None = None,
) -> pl.LazyFrame:
    """Ranked, labelled rows, with the ``by`` columns naming each ranking.

    ``every=True`` keeps every row; otherwise only the documents in the
    qrels keep a row, with their true rank (the rest are only counted, in
    :func:`find_rankings`). ``rankings`` (:func:`find_rankings` of ``run``;
    ``by`` must then be ``RANKING``) give each row its ranking's id. When
    they say each ranking's rows are adjacent and best first, ranks are read
    off the row order (:func:`_rank_in_order`). Otherwise every row is
    ranked by one sort of each ranking (``every``), or only the judged ones
    are (:func:`_rank_judged`).
    """
    _, key, descending = _key(options)
    labels = labelled_qrels.select("query_id", "doc_id", "label")
    starts = None if rankings is None else rankings.starts
    if rankings is not None and starts is None:  # the sorts group by the ids
        run = run.with_columns(rankings.ranking.alias(RANKING))
    if rankings is not None and starts is not None:
        rows = _rank_in_order(
            run, labels, options, rankings.ranking, starts, every=every
        )
    elif every:
        order = pl.int_range(1, pl.len() + 1).over(
            list(by), order_by=[key, pl.col("doc_id")], descending=descending
        )
        rows = run.join(labels, on=["query_id", "doc_id"], how="left").with_columns(
            order.alias(_RANK)
        )
    else:
        rows = _rank_judged(run, labels, options)
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
            pl.col("rank").rank("ordinal").over(list(by)).cast(pl.Int64)
        )
    return rows


def _judged(labels: pl.LazyFrame) -> pl.Expr:
    """Flag the run rows whose (query_id, doc_id) may be in ``labels``.

    A cheap hash filter over every row; a collision only lets an extra row
    through to the exact join that follows it. Up to ``_COARSE_KEYS``
    labels, only the low ``_COARSE_BITS`` bits of the hash are tested:
    polars tests integers of so small a range against a bitmap, twice as
    fast as against a set of 64-bit hashes (10 million rows: 0.035 s
    against 0.07 s), and at most about 3 % of the other rows pass.
    """
    known = labels.select(_doc_hash().alias("h")).collect()["h"]
    if known.len() > _COARSE_KEYS:
        return _doc_hash().is_in(known.implode())
    low = (known & _COARSE_MASK).cast(pl.UInt32).unique().implode()
    return (_doc_hash() & _COARSE_MASK).cast(pl.UInt32).is_in(low)


def _rank_judged(
    run: pl.LazyFrame, labels: pl.LazyFrame, options: EngineOptions
) -> pl.LazyFrame:
    """Rank the judged rows of any run.

    A judged document's rank is 1 + the number of documents with a better
    key (a rank of the keys alone, over the rows down to the ranking's last
    judged key) + the number with the same key and a ``doc_id`` that sorts
    first (:func:`_tie_ranks` of the few rows that share a judged document's
    key).
    """
    name, key, descending = _key(options)
    judged_rows = (
        run.filter(_judged(labels))
        .join(labels, on=["query_id", "doc_id"], how="inner")
        .cache()
    )
    # the keys of the judged documents; the last of them in each ranking
    judged = judged_rows.select(RANKING, name).unique().cache()
    last = judged.group_by(RANKING).agg(
        (key.min() if descending else key.max()).alias(_LAST)
    )
    reach = key >= pl.col(_LAST) if descending else key <= pl.col(_LAST)
    better = key.rank("min", descending=descending).over(RANKING)
    ranked = (
        run.join(last, on=RANKING, how="inner")
        .filter(reach)
        .select(*dict.fromkeys([RANKING, "doc_id", "score", name]))
        .with_columns(better.cast(pl.Int64).alias(_RANK))
        .join(judged, on=[RANKING, name], how="semi")
    )
    return _tie_ranks(ranked, options).join(
        judged_rows.select(RANKING, "run_id", "query_id", "doc_id", "label"),
        on=[RANKING, "doc_id"],
    )


def _rank_in_order(
    run: pl.LazyFrame,
    labels: pl.LazyFrame,
    options: EngineOptions,
    ranking: pl.Expr,
    starts: pl.DataFrame,
    *,
    every: bool,
) -> pl.LazyFrame:
    """Rank the rows of a run whose rankings are each adjacent and best first.

    A row's rank is then read off the order: the position in its ranking
    (``starts``: each ranking's first row, by the id ``ranking`` computes)
    of the first row with the same key, plus, for a key shared by several
    rows, the number of those whose ``doc_id`` sorts first
    (:func:`_tie_ranks`, of the tied rows only: few, and only those sharing
    a judged key unless ``every``). One pass over the run flags the tied
    rows, and unless ``every`` keeps only them and the judged ones; the
    rest, ranking ids included, is computed on what is kept.
    """
    name, key, _ = _key(options)
    # rows are tied when their keys are equal: a tie across the end of a
    # ranking only keeps a row more, whose rank its ranking's id sets right
    group = _boundaries(key)
    tied = ~group | ~group.shift(-1).fill_null(value=True)
    kept = run.with_columns(
        pl.int_range(pl.len(), dtype=pl.Int64).alias(_RANK), tied.alias(_TIED)
    )
    if not every:
        kept = kept.filter(pl.col(_TIED) | _judged(labels))
    # every row of a tied key is kept, in order: its first row is the first
    # kept row of the key (a forward fill, before any join reorders rows)
    first = _at_key_start(pl.col(_RANK), key)
    ranked = (
        kept.with_columns(ranking.alias(RANKING))
        .with_columns(first.alias(_RANK))
        .join(starts.lazy(), on=RANKING)
        .with_columns(pl.col(_RANK) - pl.col(_START) + 1)
        .drop(_START)
    )
    doc = ["query_id", "doc_id"]
    if every:
        rows = ranked.join(labels, on=doc, how="left").cache()
        ties = _tie_ranks(rows.filter(_TIED), options)
        return pl.concat([rows.filter(~pl.col(_TIED)), ties])
    ranked = ranked.cache()
    rows = ranked.join(labels, on=doc, how="inner").cache()
    keys = rows.filter(_TIED).select(RANKING, name).unique()
    ties = _tie_ranks(
        ranked.filter(_TIED).join(keys, on=[RANKING, name], how="semi"), options
    ).select(RANKING, "doc_id", pl.col(_RANK).alias(_TIE))
    return rows.join(ties, on=[RANKING, "doc_id"], how="left").with_columns(
        pl.coalesce(_TIE, _RANK).alias(_RANK)
    )


def _tie_ranks(rows: pl.LazyFrame, options: EngineOptions) -> pl.LazyFrame:
    """Add the ``doc_id`` tie-break to ``_RANK``, the rank of each row's key.

    ``rows`` hold, for each of their keys, every row of the ranking with that
    key. Sorted by ranking, key and ``doc_id``, each row's offset from the
    first row of its key is the number of tied rows ranked above it.
    """
    name, key, descending = _key(options)
    index = pl.int_range(pl.len(), dtype=pl.Int64)
    offset = index - _at_key_start(index, key)
    return rows.sort(
        [RANKING, name, "doc_id"], descending=[False, descending, descending]
    ).with_columns(pl.col(_RANK) + offset)


def _roots(expr: pl.Expr) -> list[str]:
    return list(expr.meta.root_names())


def _pool(plans: Iterable[Plan]) -> list[Def]:
    """Every definition the plans need, merged (a name defined two ways raises).

    A metric may use one private name in two stages (a row flag and its
    per-query sum), so definitions are told apart by (stage, name).
    """
    merged = Needs()
    for plan in plans:
        merged = merged | plan.needs
    return list(merged.values())


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
    rankings: Rankings | None = None,
    run_ids: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """One row per (run, qrels topic), one column per metric (its canonical name).

    Also carries ``__ireval_missing``: the run returned nothing for the topic
    (its values are those of an empty ranking, NaN replaced by 0). With
    ``missing="skip"`` such rows are left out. ``rankings`` is
    :func:`find_rankings` of the same run and options, when already known;
    ``run_ids`` (a ``run_id`` column) the runs to score, when ``run`` is one
    part of them (default: the runs in ``run``).
    """
    labelled = label_qrels(qrels)
    if rankings is None:
        rankings = find_rankings(run, options)
    if run_ids is None:
        run_ids = rankings.sizes.lazy().select("run_id").unique()
    variants: dict[bool, list[Metric]] = {}
    for metric in metrics:
        variants.setdefault(metric.judged_only, []).append(metric)
    frames = [
        _variant(group, run, labelled, rankings, run_ids, options, judged_only=flag)
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
    rankings: Rankings,
    run_ids: pl.LazyFrame,
    options: EngineOptions,
    *,
    judged_only: bool,
) -> pl.LazyFrame:
    sizes = rankings.sizes.lazy()
    plans = [(m, build_plan(m)) for m in metrics]
    pool = _pool(p for _, p in plans)
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
    rows = _rank(
        run, labelled, options, judged_only=judged_only, every=every, rankings=rankings
    )
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
    # qrels judged per intent (diversity measures): per-query and per-ranking
    # columns of their own stages (ireval_df.offline.intents)
    intents = intent_columns(labelled, rows, stage, metrics, _with_layers, _layers)
    if intents.topics is not None:
        topic_defs = stage.get("intent_topic", []) + stage.get("intent_ideal", [])
        qstats = qstats.join(intents.topics, on="query_id", how="left").with_columns(
            pl.col(d.name).fill_null(d.fill) for d in topic_defs if d.fill is not None
        )
    intent_aggs = stage.get("intent_agg", [])

    # 3. one aggregation for all metrics, onto every ranking of the run: a
    # ranking without rows (no judged document, or judged_only emptied it)
    # is an empty aggregate; judged_only rankings count their kept rows
    agg_defs, *agg_rest = _layers(stage.get("agg", [])) or [[]]
    agg = rows.group_by(RANKING).agg(
        [pl.len().alias(PRESENT)] + [d.expr.alias(d.name) for d in agg_defs]
    )
    if intents.rankings is not None:
        agg = agg.join(intents.rankings, on=RANKING, how="left").with_columns(
            pl.col(d.name).fill_null(d.fill) for d in intent_aggs if d.fill is not None
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
        for d in [*agg_defs, *intent_aggs]
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
