"""The intent stages of the engine: qrels judged per intent, for diversity measures.

Qrels with intents (TREC diversity qrels, ``ireval_df.read_qrels(...,
intents=True)``, or a table with an ``intent`` column) reach the engine as
the canonical qrels (one grade per document, its highest over its intents)
with one more column, :data:`~ireval_df.offline.plan.INTENTS`: the
document's ``{intent, relevance}`` judgments. The stages a diversity
measure declares (``intent_*``, see :mod:`ireval_df.offline.plan`) run
here, once per call for every metric:

1. the judgments, one row per (query, document, intent), with the
   ``intent_qrels_row`` columns; their ``intent_qrels`` aggregation per
   (query, intent), then ``intent_topic`` per query;
2. the greedy ideal rankings (:func:`greedy_ideal`) the ``intent_ideal``
   columns read, aggregated per query;
3. the ranked rows of the run joined to the judgments (each judged document
   of a ranking once per intent it is judged for, with its rank in the
   whole ranking), the ``intent_row`` columns, and one aggregation per
   ranking (``intent_agg``).

Queries and rankings without a judgment for any intent get each column's
``fill``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import SchemaError
from ireval_df.offline.plan import INTENTS, RANKING, judgment_kind

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from ireval_df.measures.spec import Metric
    from ireval_df.offline.plan import Def

__all__ = [
    "GAIN",
    "IDEAL_RANK",
    "STAGES",
    "IntentColumns",
    "attach",
    "greedy_ideal",
    "ideal_key",
    "intent_columns",
    "judgments",
    "uses_intents",
]

#: The engine stages this module runs
STAGES = (
    "intent_qrels_row",
    "intent_qrels",
    "intent_topic",
    "intent_ideal",
    "intent_row",
    "intent_agg",
)
#: Columns of a greedy ideal table: the position, and the novelty gain there
IDEAL_RANK = "__ireval_grank"
GAIN = "__ireval_ggain"
_JUDGMENT = ("query_id", "doc_id", "intent", "relevance")


def ideal_key(rel: int, alpha: float, depth: int | None) -> str:
    """Name the greedy ideal table of ``rel`` and ``alpha``, needed to ``depth``.

    ``depth=None`` asks for the whole ideal ranking, down to the last
    relevant document (a measure without a cutoff, such as ``nNRBP``).

    Examples
    --------
    >>> ideal_key(1, 0.5, 20), ideal_key(1, 0.5, None)
    ('1:0.5:20', '1:0.5:all')
    """
    return f"{rel}:{alpha!r}:{'all' if depth is None else depth}"


def attach(qrels: pl.LazyFrame, intents: pl.LazyFrame | None) -> pl.LazyFrame:
    """Give the canonical qrels their documents' intent judgments (:data:`INTENTS`).

    ``intents`` are ``query_id, intent, doc_id, relevance`` rows
    (:class:`ireval_df.schema.intents.Judgments`); None leaves ``qrels`` as
    they are.

    Examples
    --------
    >>> qrels = pl.LazyFrame({"query_id": "q", "doc_id": ["a"], "relevance": [2]})
    >>> rows = pl.LazyFrame({"query_id": "q", "intent": ["x", "y"], "doc_id": "a",
    ...                      "relevance": [2, 0]})
    >>> attach(qrels, rows).collect().row(0)
    ('q', 'a', 2, [{'intent': 'x', 'relevance': 2}, {'intent': 'y', 'relevance': 0}])
    """
    if intents is None:
        return qrels
    per_doc = intents.group_by("query_id", "doc_id", maintain_order=True).agg(
        pl.struct("intent", "relevance").alias(INTENTS)
    )
    return qrels.join(per_doc, on=["query_id", "doc_id"], how="left")


def judgments(qrels: pl.LazyFrame) -> pl.LazyFrame:
    """One row per (query, document, intent) judgment of qrels with intents."""
    return (
        qrels.select("query_id", "doc_id", INTENTS)
        .explode(INTENTS)
        .filter(pl.col(INTENTS).is_not_null())
        .select(
            "query_id",
            "doc_id",
            pl.col(INTENTS).struct.field("intent"),
            pl.col(INTENTS).struct.field("relevance"),
        )
    )


def greedy_ideal(
    judged: pl.DataFrame, rel: int, alpha: float, depth: int
) -> pl.DataFrame:
    """Rank each query's documents greedily to ``depth``, as ndeval builds its ideal.

    Finding the ranking of highest alpha-DCG is NP-hard; ndeval (Clarke et
    al. 2008) takes at each rank the document of highest novelty gain
    ``sum_i J(d, i) (1 - alpha)^c_i``, where ``c_i`` counts the documents
    already placed that are relevant to intent ``i`` and ``J(d, i)`` is 1
    when ``d``'s grade for ``i`` is at least ``rel``; ties go to the highest
    ``doc_id`` (byte order), as in ndeval. Documents without a relevant
    judgment add nothing and are left out.

    Each step is one pass (numpy, on integer codes) over every query's
    remaining judgments: a Python loop over the ranks 1..``depth``, never
    over queries. A document's gain is summed in intent order, so that the
    same gains always tie.

    Parameters
    ----------
    judged : polars.DataFrame
        ``query_id, doc_id, intent, relevance``.
    rel : int
        Lowest relevant grade.
    alpha : float
        Redundancy penalty.
    depth : int
        Ranks to fill.

    Returns
    -------
    polars.DataFrame
        ``query_id``, ``__ireval_grank`` (Int64), ``__ireval_ggain``
        (Float64), one row per filled rank.

    Examples
    --------
    Document ``a`` covers intents x and y, ``b`` and ``c`` only x: ``a``
    first (gain 2), then ``c`` and ``b`` (0.5 each; ``c`` wins the tie).

    >>> judged = pl.DataFrame({"query_id": "q", "doc_id": ["a", "a", "b", "c"],
    ...                        "intent": ["x", "y", "x", "x"], "relevance": 1})
    >>> greedy_ideal(judged, 1, 0.5, 5).rows()
    [('q', 1, 2.0), ('q', 2, 0.5), ('q', 3, 0.25)]
    """
    import numpy as np  # only here: importing the package loads no numpy

    hits = (
        judged.filter(pl.col("relevance") >= rel)
        .select("query_id", "doc_id", "intent")
        .sort("query_id", "doc_id", "intent")
    )
    empty = pl.DataFrame(
        schema={"query_id": pl.String, IDEAL_RANK: pl.Int64, GAIN: pl.Float64}
    )
    if hits.height == 0 or depth < 1:
        return empty
    # integer codes, in (query, doc_id) byte order: a document's code is
    # higher than every code of its query's lower doc_ids
    codes = hits.select(
        pl.col("query_id").rle_id().alias("q"),
        pl.struct("query_id", "doc_id").rle_id().alias("d"),
        pl.struct("query_id", "intent").rank("dense").cast(pl.Int64).alias("i") - 1,
    )
    doc = codes["d"].to_numpy()
    intent = codes["i"].to_numpy()
    n_docs = int(doc[-1]) + 1
    query_of_doc = np.zeros(n_docs, dtype=np.int64)
    query_of_doc[doc] = codes["q"].to_numpy()
    starts = np.flatnonzero(np.r_[True, np.diff(query_of_doc) != 0])
    queries = hits["query_id"].unique(maintain_order=True)
    seen = np.zeros(int(intent.max()) + 1, dtype=np.int64)
    left = np.ones(n_docs, dtype=bool)
    positions = np.arange(n_docs)
    keep = 1.0 - alpha
    steps: list[pl.DataFrame] = []
    for step in range(1, depth + 1):
        # each row's share of its document's gain, summed in (doc, intent)
        # order; placed documents drop out
        share = np.where(left[doc], keep ** seen[intent], 0.0)
        gain = np.where(left, np.bincount(doc, weights=share, minlength=n_docs), -1.0)
        best_gain = np.maximum.reduceat(gain, starts)
        tied = gain == best_gain[query_of_doc]  # query codes number the segments
        best = np.maximum.reduceat(np.where(tied, positions, -1), starts)
        found = best_gain >= 0.0
        if not found.any():
            break
        best, best_gain = best[found], best_gain[found]
        steps.append(
            pl.DataFrame(
                {
                    "query_id": queries.gather(np.flatnonzero(found)),
                    IDEAL_RANK: np.full(best.size, step, dtype=np.int64),
                    GAIN: best_gain,
                }
            )
        )
        left[best] = False
        placed = np.zeros(n_docs, dtype=bool)
        placed[best] = True
        seen[intent[placed[doc]]] += 1  # one document a query: no repeat
    if not steps:
        return empty
    return pl.concat(steps).sort("query_id", IDEAL_RANK)


@dataclass(frozen=True)
class IntentColumns:
    """What the intent stages add: per-query columns, and per-ranking ones."""

    #: ``query_id`` and the ``intent_topic`` and ``intent_ideal`` columns
    topics: pl.LazyFrame | None
    #: ``RANKING`` and the ``intent_agg`` columns
    rankings: pl.LazyFrame | None


def _missing(metrics: Sequence[Metric]) -> SchemaError:
    names = ", ".join(repr(str(m)) for m in metrics)
    msg = (
        f"{names}: diversity measures need judgments per intent (subtopic), but "
        "the qrels have no 'intent' column.\n  Hint: read TREC diversity qrels (qid subtopic docno "
        "relevance) with ireval_df.read_qrels(path, intents=True) (on the command "
        "line: --qrels-intents), or give a qrels table an 'intent' (or "
        "'subtopic') column, one row per document and intent."
    )
    return SchemaError(msg)


def intent_columns(
    qrels: pl.LazyFrame,
    rows: pl.LazyFrame,
    stage: Mapping[str, list[Def]],
    metrics: Sequence[Metric],
    with_layers: Callable[[pl.LazyFrame, list[Def]], pl.LazyFrame],
    layers: Callable[[list[Def]], list[list[Def]]],
) -> IntentColumns:
    """Run the intent stages of one plan (see the module doc).

    ``qrels`` are the labelled qrels, ``rows`` the ranked run rows (with
    ``RANKING``); ``stage`` the plan's definitions by stage; ``metrics``
    the metrics of the plan, named in the error when the qrels have no
    intents. ``with_layers`` and ``layers`` are the engine's: they add
    columns layer by layer, and split definitions into such layers.
    """
    if not any(stage.get(s) for s in STAGES):
        return IntentColumns(None, None)
    if INTENTS not in qrels.collect_schema().names():
        users = [m for m in metrics if uses_intents(m)]
        raise _missing(users or metrics)
    judged = with_layers(judgments(qrels), stage.get("intent_qrels_row", []))
    per_intent = _aggregate(
        judged, ["query_id", "intent"], stage.get("intent_qrels", []), layers
    )
    topics: pl.LazyFrame | None = None
    if stage.get("intent_topic"):
        topics = _filled(
            _aggregate(per_intent, ["query_id"], stage["intent_topic"], layers),
            stage["intent_topic"],
        )
    ideal = stage.get("intent_ideal", [])
    if ideal:
        tables = _ideal_tables(judged.select(_JUDGMENT).collect(), ideal)
        for defs, table in tables:
            part = _filled(_aggregate(table.lazy(), ["query_id"], defs, layers), defs)
            topics = (
                part
                if topics is None
                else topics.join(part, on="query_id", how="full", coalesce=True)
            )
    rankings: pl.LazyFrame | None = None
    if stage.get("intent_agg"):
        ranked = rows.select(RANKING, "query_id", "doc_id", "rank").join(
            judged, on=["query_id", "doc_id"], how="inner"
        )
        if stage.get("intent_qrels"):
            ranked = ranked.join(per_intent, on=["query_id", "intent"], how="left")
        ranked = with_layers(ranked, stage.get("intent_row", []))
        rankings = _aggregate(ranked, [RANKING], stage["intent_agg"], layers)
    return IntentColumns(topics, rankings)


def uses_intents(metric: Metric) -> bool:
    """Tell whether ``metric`` reads judgments per intent (a diversity measure).

    Examples
    --------
    >>> from ireval_df.measures import parse_metric
    >>> uses_intents(parse_metric("alpha_nDCG@10")), uses_intents(parse_metric("AP"))
    (True, False)
    """
    return judgment_kind(metric) == "intents"


def _aggregate(
    frame: pl.LazyFrame,
    by: list[str],
    defs: list[Def],
    layers: Callable[[list[Def]], list[list[Def]]],
) -> pl.LazyFrame:
    """One ``group_by(by).agg`` of the first layer of ``defs``, the rest after."""
    first, *rest = layers(defs) or [[]]
    out = frame.group_by(by).agg(
        [pl.len().alias("__ireval_n")] + [d.expr.alias(d.name) for d in first]
    )
    for layer in rest:
        out = out.with_columns([d.expr.alias(d.name) for d in layer])
    return out.drop("__ireval_n")


def _filled(frame: pl.LazyFrame, defs: list[Def]) -> pl.LazyFrame:
    """Fill the nulls of ``defs``' columns (an empty aggregation) with their fill."""
    return frame.with_columns(
        pl.col(d.name).fill_null(d.fill) for d in defs if d.fill is not None
    )


def _ideal_tables(
    judged: pl.DataFrame, defs: list[Def]
) -> list[tuple[list[Def], pl.DataFrame]]:
    """Each (rel, alpha)'s greedy ideal, to the deepest rank its columns need.

    The whole ideal (``ideal_key(..., None)``) is at most as deep as there
    are judgments: the greedy stops once every relevant document is placed.
    """
    groups: dict[tuple[int, float], list[Def]] = {}
    depth: dict[tuple[int, float], int] = {}
    for d in defs:
        rel, alpha, k = (d.table or "").split(":")
        key = (int(rel), float(alpha))
        groups.setdefault(key, []).append(d)
        needed = judged.height if k == "all" else int(k)
        depth[key] = max(depth.get(key, 0), needed)
    return [
        (group, greedy_ideal(judged, rel, alpha, depth[(rel, alpha)]))
        for (rel, alpha), group in groups.items()
    ]
