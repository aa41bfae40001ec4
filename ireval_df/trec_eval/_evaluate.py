"""Compute trec_eval's per-topic values and summaries with the polars engine.

Every number comes from :func:`ireval_df.offline.engine.per_query_wide`, the engine
behind :func:`ireval_df.evaluate`, and every ranking from the engine's
:func:`~ireval_df.offline.engine.ranked_rows` (score descending, then doc_id
descending in byte order, cut at ``-M``, ``-J`` applied): this module only
decides which topics are evaluated and which stop trec_eval (duplicates,
missing topics), and applies trec_eval's summary rules (sums for counts,
geometric means for ``gm_*``, ``num_q``, ``-c``) and Z-scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl

from ireval_df.offline.engine import (
    MISSING,
    EngineOptions,
    label_qrels,
    per_query_wide,
    ranked_rows,
)
from ireval_df.offline.metrics.shared import full_sort
from ireval_df.offline.plan import build_plan
from ireval_df.offline.prefs import (
    check_prefs,
    needed_columns,
    preference_columns,
    prefs_ranked,
)

if TYPE_CHECKING:
    import numpy as np

    from ireval_df.measures import Metric
    from ireval_df.trec_eval._measures import Output
    from ireval_df.trec_eval._options import Options

__all__ = [
    "MIN_GEO_MEAN",
    "Fatal",
    "Scores",
    "engine_frames",
    "evaluate_prefs_topics",
    "evaluate_topics",
    "summarize",
    "zscores",
]

#: trec_eval's floor for geometric means.
MIN_GEO_MEAN = 1e-5
#: The value trec_eval prints for a Z-score it cannot compute.
MISSING_ZSCORE = -1000000.0
_INT32 = (-(2**31), 2**31 - 1)


@dataclass
class Fatal:
    """A topic trec_eval stops at (exit 4), after printing the topics before it."""

    topic: str
    message: str


def _no_missing() -> np.ndarray:
    """Return an empty mask: no topic is missing."""
    import numpy as np

    return np.zeros(0, dtype=bool)


@dataclass
class Scores:
    """Per-topic values (rows: topics in byte order; columns: ``outputs``)."""

    topics: list[str]
    values: np.ndarray
    relstrings: dict[str, list[str]] = field(default_factory=dict)
    missing: np.ndarray = field(default_factory=_no_missing)
    fatal: Fatal | None = None


def engine_frames(
    run: pl.DataFrame, qrels: pl.DataFrame, *, compat: str = "10"
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.DataFrame | None]:
    """Shape the run and qrels as the engine reads them.

    Scores are rounded to float32 with ``compat="9"`` (trec_eval 9.x stored
    them so; scores closer than float32 precision then tie). The engine ranks
    by score descending, then doc_id descending in byte order: trec_eval's
    rule (polars, like C, orders ``-0.0`` and ``0.0`` as equal).

    With a ``group`` column in ``qrels`` (``-R qrels_jg``) every (topic,
    judgment group) becomes its own query, keyed by an integer, and the run's
    rows are repeated for each group of their topic; the third value maps
    keys back (``key, query_id, group``).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 1 + 1e-9]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})
    >>> run_lf, qrels_lf, keys = engine_frames(run, qrels, compat="9")
    >>> run_lf.collect().rows()
    [('run', 'q', 'a', 1.0), ('run', 'q', 'b', 1.0)]
    """
    score = pl.col("score")
    if compat == "9":
        score = score.cast(pl.Float32).cast(pl.Float64)
    run = run.select("query_id", "doc_id", score.alias("score"))
    judged = qrels.select(
        "query_id",
        "doc_id",
        pl.col("relevance").clip(*_INT32).cast(pl.Int32),
        *(["group"] if "group" in qrels.columns else []),
    )
    keys = None
    if "group" in judged.columns:
        keys = (
            judged.select("query_id", "group")
            .unique()
            .sort("query_id", "group")
            .with_row_index("key")
        )
        run = run.join(keys.select("query_id", "key"), on="query_id").select(
            pl.col("key").alias("query_id"), "doc_id", "score"
        )
        judged = judged.join(keys, on=["query_id", "group"]).select(
            pl.col("key").alias("query_id"), "doc_id", "relevance"
        )
    run_lf = run.lazy().select(pl.lit("run").alias("run_id"), pl.all())
    return run_lf, judged.lazy(), keys


def _repeats(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Select the topics with a doc_id more than once (``query_id``)."""
    extra = frame.group_by("query_id").agg(
        (pl.len() - pl.col("doc_id").n_unique()).alias("n")
    )
    return extra.filter(pl.col("n") > 0).select("query_id")


def _duplicates(
    frame: pl.DataFrame, what: str, repeats: pl.DataFrame | None = None
) -> dict[str, str]:
    """trec_eval's message for each topic with a doc_id twice (the smallest one).

    ``repeats`` is :func:`_repeats` of ``frame`` when already computed.
    """
    if repeats is None:
        repeats = _repeats(frame.lazy()).collect(engine="in-memory")
    bad = repeats.get_column("query_id")
    if bad.is_empty():
        return {}
    dups = (
        frame.filter(pl.col("query_id").is_in(bad.implode()))
        .filter(pl.struct("query_id", "doc_id").is_duplicated())
        .group_by("query_id")
        .agg(pl.col("doc_id").min())
    )
    return {q: f"trec_eval.{what}: duplicate docs {d}" for q, d in dups.iter_rows()}


def _fatal(
    topics: list[str],
    present: set[str],
    run_dups: dict[str, str],
    qrels_dups: dict[str, str],
    opts: Options,
    first_measure: str | None,
) -> Fatal | None:
    """Find the first topic trec_eval would stop at (exit 4), if any."""
    problems: dict[str, str] = {}
    if opts.compat == "10" and not opts.complete:
        for topic in topics:
            if topic not in present:
                problems[topic] = (
                    f"trec_eval: result qid '{topic}' not found in qrels\n"
                )
                break
    if first_measure is not None:
        cant = f"\ntrec_eval: Can't calculate measure '{first_measure}'\n"
        for topic, message in qrels_dups.items():
            problems.setdefault(topic, message + cant)
        for topic, message in run_dups.items():
            problems[topic] = message + cant
    bad = [t for t in topics if t in problems]
    return Fatal(bad[0], problems[bad[0]]) if bad else None


_CHAR = (
    pl.when(pl.col("label") > 9)
    .then(pl.lit(">"))
    .when(pl.col("label") >= 0)
    .then(pl.col("label").cast(pl.String))
    .when(pl.col("label") == -1)
    .then(pl.lit("-"))
    .when(pl.col("label") == -2)
    .then(pl.lit("."))
    .otherwise(pl.lit("<"))
)


#: Split the metrics into groups (see :func:`_plans`); tests turn it off to
#: compare.
SPLIT = True
#: Full-sort metrics that give the same values on a prefix of the ranking
#: holding every document of the qrels, the first ``k`` documents, and (for
#: the RBP residual) one more document after the last judged one.
_PREFIX_SAFE = ("G", "Rndcg", "Unjudged", "RBPResidual")


def _prefix_safe(metric: Metric) -> bool:
    gains: tuple[tuple[int, float], ...] = (
        metric.param("gains") if "gains" in metric.info.params else ()
    )
    return metric.name in _PREFIX_SAFE and all(level >= 0 for level, _ in gains)


def _prefix(
    run_lf: pl.LazyFrame, qrels_lf: pl.LazyFrame, k: int, *, one_more: bool
) -> pl.LazyFrame:
    """Keep the top of each ranking: the first ``k`` rows and every judged row.

    Ranks are score descending first, so the rows scoring at least a
    threshold are a prefix of the ranking: the threshold is the lower of the
    ``k``-th best score and the lowest score of a document in the qrels
    (ties at the threshold are kept: a longer prefix). With ``one_more`` the
    rows of the ranking's lowest score are kept too: when the prefix is
    shorter than the ranking they follow it, none is in the qrels, and the
    RBP residual (``p^n + (1-p) sum over unjudged p^(i-1)``) is the same
    for the prefix, these rows and the whole ranking.
    """
    judged = run_lf.join(
        qrels_lf.select("query_id", "doc_id"), on=["query_id", "doc_id"], how="semi"
    )
    lowest_judged = judged.group_by("query_id").agg(
        pl.col("score").min().alias("__ireval_low")
    )
    score = pl.col("score")
    bounds = run_lf.group_by("query_id").agg(
        score.top_k(k).min().alias("__ireval_top"), score.min().alias("__ireval_end")
    )
    threshold = bounds.join(lowest_judged, on="query_id", how="left").select(
        "query_id",
        pl.min_horizontal("__ireval_top", "__ireval_low").alias("__ireval_t"),
        "__ireval_end",
    )
    keep = score >= pl.col("__ireval_t")
    if one_more:
        keep = keep | (score == pl.col("__ireval_end"))
    rows = run_lf.join(threshold, on="query_id", how="left")
    return rows.filter(keep).drop("__ireval_t", "__ireval_end")


def _plans(
    metrics: list[Metric],
    run: pl.DataFrame,
    run_lf: pl.LazyFrame,
    qrels: pl.DataFrame,
    qrels_lf: pl.LazyFrame,
    options: EngineOptions,
    lengths: list[int],
    opts: Options,
) -> dict[str, pl.LazyFrame]:
    """Build the lazy frames to compute, in three groups of metrics.

    The engine ranks only the judged documents of a ranking unless a metric
    needs every rank (``full_sort``). Those that do are computed apart: the
    ones that only need the top of the ranking (G, Rndcg, unj, rbp_resid;
    see :func:`_prefix`) on that prefix, any other on the whole run. The
    prefix also gives ``relstring``. Values are the same as from one call
    (``tests/unit/trec_eval``); with ``NaN`` scores or ``-l`` below 0 nothing
    is split.
    """
    plans: dict[str, pl.LazyFrame] = {}
    # NaN scores have no order; with -l below 0 documents absent from the
    # qrels count as relevant, so no metric can do without their rows
    split = SPLIT and opts.rel_level >= 0 and not run.get_column("score").is_nan().any()
    partial = [m for m in metrics if not full_sort(m)]
    prefixed = [m for m in metrics if full_sort(m) and _prefix_safe(m)] if split else []
    whole = [m for m in metrics if full_sort(m) and m not in prefixed]
    if not split:
        partial, whole = metrics, []
    top_lf = run_lf
    if split and (prefixed or (lengths and max(lengths) > 0)):
        cutoffs = [int(m.k) for m in prefixed if m.k is not None]
        judged = qrels.group_by("query_id").len().get_column("len").max()
        k = max([1, *lengths, *cutoffs, (judged if isinstance(judged, int) else 0) + 2])
        one_more = any(m.name == "RBPResidual" for m in prefixed)
        top_lf = (
            _prefix(run_lf, qrels_lf, k, one_more=one_more)
            .collect(engine="in-memory")
            .lazy()
        )
    if partial:
        plans["wide"] = per_query_wide(partial, run_lf, qrels_lf, options)
    if prefixed:
        plans["wide_prefix"] = per_query_wide(prefixed, top_lf, qrels_lf, options)
    if whole:
        plans["wide_full"] = per_query_wide(whole, run_lf, qrels_lf, options)
    if lengths and max(lengths) > 0:
        plans["top"] = (
            ranked_rows(
                top_lf, label_qrels(qrels_lf), options, judged_only=opts.judged_only
            )
            .filter(pl.col("rank") <= max(lengths))
            .select("query_id", "rank", _CHAR.alias("char"))
        )
    return plans


def evaluate_topics(
    qrels: pl.DataFrame,
    run: pl.DataFrame,
    outputs: list[Output],
    opts: Options,
) -> Scores:
    """Evaluate every topic trec_eval would.

    ``qrels``: ``query_id, doc_id, relevance`` (and ``group`` for
    ``qrels_jg``); ``run``: ``query_id, doc_id, score``. Returns per-topic
    values in ``outputs`` order (``gm_*`` as logs; NaN for ``runid``), the
    missing-topic mask and the relstrings; with a :class:`Fatal`, only the
    topics before it.

    One :func:`polars.collect_all` computes the engine's per-topic values
    (see :func:`_plans`), the top of each ranking for ``relstring`` and, with
    ``-M``, the documents kept (for the duplicate check).
    """
    import numpy as np

    topics = qrels.get_column("query_id").unique().sort().to_list()
    if opts.debug_query is not None:
        topics = [t for t in topics if t == opts.debug_query]
    run_topics = set(run.get_column("query_id").unique().to_list())
    present = run_topics.intersection(topics)
    if present != run_topics:  # run topics not in the qrels are ignored
        run = run.filter(pl.col("query_id").is_in(topics))
    if opts.debug_query is not None:
        qrels = qrels.filter(pl.col("query_id").is_in(topics))
    skip = opts.compat == "9"

    run_lf, qrels_lf, keys = engine_frames(run, qrels, compat=opts.compat)
    options = EngineOptions(depth=opts.max_docs, missing="skip" if skip else "zero")
    metrics: list[Metric] = []
    for o in outputs:
        if o.metric is not None and o.metric not in metrics:
            metrics.append(o.metric)
    wanted = [o for o in outputs if o.column.startswith("relstring:")]
    lengths = [max(0, int(o.param)) for o in wanted]

    plans = _plans(metrics, run, run_lf, qrels, qrels_lf, options, lengths, opts)
    if opts.max_docs is not None:
        plans["kept"] = ranked_rows(run_lf, label_qrels(qrels_lf), options).select(
            "query_id", "doc_id"
        )

    done = dict(
        zip(
            plans, pl.collect_all(list(plans.values()), engine="in-memory"), strict=True
        )
    )

    if "kept" in done:
        kept = done["kept"]
        if keys is not None:
            kept = (
                kept.join(keys, left_on="query_id", right_on="key")
                .select(pl.col("query_id_right").alias("query_id"), "doc_id")
                .unique()
            )
        run_dups = _duplicates(kept, "form_res_qrels")
    else:
        run_dups = _duplicates(run, "form_res_qrels")
    qrels_dups = {}
    if keys is None:  # qrels_jg duplicates are rejected while reading
        qrels_dups = _duplicates(qrels.select("query_id", "doc_id"), "form_res_rels")
    uses_ranking = [o for o in outputs if o.measure.name not in ("runid", "num_q")]
    first_measure = uses_ranking[0].measure.name if uses_ranking else None
    fatal = _fatal(topics, present, run_dups, qrels_dups, opts, first_measure)
    if fatal is not None:
        topics = topics[: topics.index(fatal.topic)]
    evaluated = [t for t in topics if t in present] if skip else topics
    missing = np.array([t not in present for t in evaluated], dtype=bool)
    order = pl.DataFrame({"query_id": evaluated}, schema={"query_id": pl.String})

    values = np.full((len(evaluated), len(outputs)), np.nan)
    parts = [
        done[name] for name in ("wide", "wide_prefix", "wide_full") if name in done
    ]
    if parts:
        wide = parts[0]
        for part in parts[1:]:
            wide = wide.join(part.drop("run_id", MISSING), on="query_id", how="left")
        if keys is not None:
            wide = _mean_over_groups(wide, keys, [str(m) for m in metrics])
        wide = order.join(wide, on="query_id", how="left", maintain_order="left")
        for j, o in enumerate(outputs):
            if o.metric is not None:
                values[:, j] = wide.get_column(o.column).to_numpy()
    for j, o in enumerate(outputs):
        if o.measure.name == "num_q":
            values[:, j] = 1.0
        elif o.measure.name == "utility" and not skip:
            values[missing, j] = 0.0  # trec_eval resets utility on -c topics
        elif o.measure.summary == "gm":
            values[:, j] = np.log(np.maximum(values[:, j], MIN_GEO_MEAN))

    relstrings: dict[str, list[str]] = {}
    top = done.get("top")
    for o, n in zip(wanted, lengths, strict=True):
        if top is None or n == 0:
            relstrings[o.column] = [""] * len(evaluated)
            continue
        texts = (
            top.filter(pl.col("rank") <= n)
            .sort("query_id", "rank")
            .group_by("query_id", maintain_order=True)
            .agg(pl.col("char").str.join("").alias("text"))
        )
        joined = order.with_columns(pl.Series("missing", missing)).join(
            texts, on="query_id", how="left", maintain_order="left"
        )
        text = joined.select(
            pl.when(pl.col("missing"))
            .then(pl.lit(""))
            .otherwise(pl.col("text").fill_null(""))
        ).to_series()
        relstrings[o.column] = text.to_list()

    return Scores(evaluated, values, relstrings, missing, fatal)


def _mean_over_groups(
    wide: pl.DataFrame, keys: pl.DataFrame, names: list[str]
) -> pl.DataFrame:
    """Average each topic's judgment groups (summed in group order, as trec_eval)."""
    return (
        wide.join(keys, left_on="query_id", right_on="key")
        .drop("query_id")
        .rename({"query_id_right": "query_id"})
        .sort("query_id", "group")
        .group_by("query_id", maintain_order=True)
        .agg([pl.col(n).sum() / pl.len() for n in names])
    )


def zscores(scores: Scores, outputs: list[Output], table: pl.DataFrame) -> None:
    """Replace per-topic values by Z-scores in place (``-Z``).

    ``(value - mean) / stddev`` from ``table`` (``query_id, measure, mean,
    stddev``; the first line of a repeated pair wins), looked up by topic and
    printed measure name; a missing entry, or a zero stddev with a value
    other than the mean, gives -1000000 (``relstring`` and ``runid`` have no
    value to convert).
    """
    import numpy as np

    if not scores.topics:
        return
    entries = table.unique(["query_id", "measure"], keep="first", maintain_order=True)
    order = pl.DataFrame({"query_id": scores.topics}, schema={"query_id": pl.String})
    for j, o in enumerate(outputs):
        if o.metric is None and o.measure.name != "num_q":
            continue
        found = order.join(
            entries.filter(pl.col("measure") == o.label),
            on="query_id",
            how="left",
            maintain_order="left",
        )
        mean = found.get_column("mean").to_numpy().astype(float)
        sd = found.get_column("stddev").to_numpy().astype(float)
        value = scores.values[:, j]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(
                sd != 0,
                (value - mean) / sd,
                np.where(value == mean, 0.0, MISSING_ZSCORE),
            )
        absent = found.get_column("measure").is_null().to_numpy()
        scores.values[:, j] = np.where(absent, MISSING_ZSCORE, z)


def summarize(
    scores: Scores,
    outputs: list[Output],
    opts: Options,
    *,
    n_qrels_topics: int,
    positive_judgments: int,
) -> np.ndarray:
    """Compute the summary value of every output (trec_eval's ``calc_avg`` rules).

    Sums run topic by topic in order (as trec_eval accumulates); means divide
    by the number of topics (with ``-c`` under ``--compat 9``, by the number
    of qrels topics); ``gm_*`` values are already logs here.
    """
    import numpy as np

    n_eval = len(scores.topics)
    if n_eval:
        sums = np.cumsum(scores.values, axis=0)[-1]
    else:
        sums = np.zeros(len(outputs))
    n = n_eval
    extra = 0
    if opts.complete and opts.compat == "9":
        n = n_qrels_topics if opts.debug_query is None else max(n_eval, 1)
        extra = n - n_eval
    summary = np.empty(len(outputs))
    for j, o in enumerate(outputs):
        rule = o.measure.summary
        if rule == "sum":
            summary[j] = sums[j]
        elif rule == "gm":
            total = sums[j] + extra * math.log(MIN_GEO_MEAN)
            summary[j] = math.exp(total / n) if n else 0.0
        elif rule == "num_q":
            summary[j] = n
        else:
            summary[j] = sums[j] / n if n else 0.0
        if o.measure.name == "num_rel" and opts.complete:
            summary[j] = positive_judgments
    return summary


def _prefs_problems(
    prefs: pl.DataFrame, run: pl.DataFrame, depth: int | None, first: str | None
) -> dict[str, str]:
    """trec_eval's exit-4 message for each topic it cannot evaluate with preferences.

    A document twice in the top ``depth`` of a topic's ranking (the
    smallest such doc_id, as trec_eval reports it), or judgments
    :func:`~ireval_df.offline.prefs.check_prefs` finds inconsistent.
    """
    if first is None:
        return {}
    cant = f"trec_eval: Can't calculate measure '{first}'\n"
    problems: dict[str, str] = {}
    for query, doc, problem in check_prefs(prefs.lazy()).iter_rows():
        if problem == "zero and non-zero":
            text = f"doc '{doc}' has both 0 and non-0 rel_level assigned\n"
        elif problem == "two levels":
            text = f"doc '{doc}' occurs with different rel_level in same jsg\n"
        else:
            text = f"Pref inconsistency found for doc '{doc}'\n"
        problems[query] = f"trec_eval.form_prefs_counts: {text}{cant}"
    ranked = prefs_ranked(
        run.lazy().select(pl.lit("run").alias("run_id"), pl.all()), depth
    )
    dups = (
        ranked.filter(pl.struct("query_id", "doc_id").is_duplicated())
        .group_by("query_id")
        .agg(pl.col("doc_id").min())
        .collect()
    )
    for query, doc in dups.iter_rows():
        problems[query] = f"trec_eval.form_prefs_counts: duplicate docs {doc}{cant}"
    return problems


def evaluate_prefs_topics(
    prefs: pl.DataFrame, run: pl.DataFrame, outputs: list[Output], opts: Options
) -> Scores:
    """Evaluate every topic of a preference file (``-R prefs``, ``-R qrels_prefs``).

    ``prefs``: ``query_id, jg, jsg, doc_id, relevance``; ``run``:
    ``query_id, doc_id, score``. The values come from
    :func:`ireval_df.offline.prefs.preference_columns` and the registry's
    preference measures, in one lazy plan; topics are those of ``prefs``
    in byte order, with trec_eval's stops (a topic missing from the run
    without ``-c``, a duplicate document, inconsistent judgments).
    """
    import numpy as np

    topics = prefs.get_column("query_id").unique().sort().to_list()
    if opts.debug_query is not None:
        topics = [t for t in topics if t == opts.debug_query]
        prefs = prefs.filter(pl.col("query_id").is_in(topics))
    run = run.filter(pl.col("query_id").is_in(topics))
    present = set(run.get_column("query_id").unique().to_list())
    skip = opts.compat == "9"
    if skip:
        run = run.with_columns(pl.col("score").cast(pl.Float32).cast(pl.Float64))

    uses_ranking = [o for o in outputs if o.metric is not None]
    first = uses_ranking[0].measure.name if uses_ranking else None
    problems = _prefs_problems(prefs, run, opts.max_docs, first)
    if opts.compat == "10" and not opts.complete:
        for topic in topics:
            if topic not in present:
                problems[topic] = (
                    f"trec_eval: result qid '{topic}' not found in qrels\n"
                )
                break
    bad = [t for t in topics if t in problems]
    fatal = Fatal(bad[0], problems[bad[0]]) if bad else None
    if fatal is not None:
        topics = topics[: topics.index(fatal.topic)]
    evaluated = [t for t in topics if t in present] if skip else topics
    missing = np.array([t not in present for t in evaluated], dtype=bool)
    values = np.full((len(evaluated), len(outputs)), np.nan)

    metrics: list[Metric] = []
    for o in outputs:
        if o.metric is not None and o.metric not in metrics:
            metrics.append(o.metric)
    if metrics and evaluated:
        judged = prefs.filter(pl.col("query_id").is_in(evaluated)).lazy()
        run_lf = run.lazy().select(pl.lit("run").alias("run_id"), pl.all())
        columns = preference_columns(
            judged,
            run_lf,
            pl.LazyFrame({"run_id": ["run"]}),
            depth=opts.max_docs,
            names=needed_columns(metrics),
        )
        wide = columns.select(
            "query_id",
            *(build_plan(m).value.cast(pl.Float64).alias(str(m)) for m in metrics),
        ).collect()
        order = pl.DataFrame({"query_id": evaluated}, schema={"query_id": pl.String})
        wide = order.join(wide, on="query_id", how="left", maintain_order="left")
        for j, o in enumerate(outputs):
            if o.metric is not None:
                values[:, j] = wide.get_column(o.column).to_numpy()
    for j, o in enumerate(outputs):
        if o.measure.name == "num_q":
            values[:, j] = 1.0
    return Scores(evaluated, values, {}, missing, fatal)
