"""Preference judgments: the counts behind trec_eval's ``prefs_*`` measures.

A preference judgment file (trec_eval ``-R prefs``) gives, per query, rows
``query_id, jg, jsg, doc_id, relevance``: within one judgment sub-group
(``jsg``) of a judgment group (``jg``), a document with a higher
``relevance`` is preferred to one with a lower value (only the order counts,
and whether a value is 0, "non-relevant"). A judgment group with one
sub-group prefers every document of a higher level to every one of a lower
level (counted once per row: a document listed twice counts twice); a group
with several sub-groups is a partial order, closed under transitivity
(``A > B`` in one sub-group and ``B > C`` in another give ``A > C``), each
ordered pair counted once. A qrels file read as preferences (``-R
qrels_prefs``) has one sub-group per judgment group, the qrels' second
field.

Each ranking is ranked as trec_eval ranks it for these measures: score
descending, ties by ``doc_id`` **ascending** (the other measures break ties
by ``doc_id`` descending), cut at ``depth``. A preference ``A > B`` is then

* *retrieved* when both are retrieved: fulfilled when A ranks above B;
* *implied* when one is retrieved: fulfilled when it is A;
* *not retrieved* when neither is (never fulfilled).

:func:`preference_columns` computes, per ``(run_id, query_id)`` of the grid
of runs x preference topics, the counts and per-judgment-group ratios that
the measures of :mod:`ireval_df.offline.metrics.prefs` combine. Everything
is one lazy plan, no loop over queries. A group with one sub-group (every
qrels read as preferences) is counted from its levels, never pair by pair
(:func:`_ec_counts`: rows x levels), so a topic of 1,000 judged documents
costs what its rows cost; the pairs of documents are built only for the
groups with several sub-groups, whose transitive closure repeats a join
until no preference is added (at most the log2 of the longest chain, on the
judgments alone), and for ``PrefsPair`` on topics where a pair may hold
several preferences (several groups, or a document listed twice).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ireval_df._utils import provenance as _provenance
from ireval_df.errors import DataError, FormatError, OptionError, SchemaError
from ireval_df.io.files import line_error
from ireval_df.io.prefs import PrefsLayout, bad_prefs_line, split_prefs
from ireval_df.measures import parse_metrics
from ireval_df.offline.plan import KEYS, build_plan, judgment_kind
from ireval_df.schema.coerce import as_run

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ireval_df.measures import Metric

__all__ = [
    "COLUMNS",
    "PREFS_COLUMNS",
    "evaluate_prefs",
    "needed_columns",
    "raise_on_inconsistent",
    "read_prefs",
    "as_prefs",
    "check_prefs",
    "pref_edges",
    "preference_columns",
    "prefs_ranked",
]

_KEYS = ["run_id", "query_id"]
#: What an unretrieved judged document's position starts at (its docno order
#: follows): after every retrieved rank.
_UNRETRIEVED = 1 << 40
#: The columns of a preference judgment frame, in order.
PREFS_COLUMNS = ("query_id", "jg", "jsg", "doc_id", "relevance")
_SCHEMA = {
    "query_id": pl.String,
    "jg": pl.String,
    "jsg": pl.String,
    "doc_id": pl.String,
    "relevance": pl.Float64,
}
_HINT = (
    "  Hint: preference judgments are rows of query_id, doc_id, relevance "
    "(a number: higher is preferred) and optionally jg and jsg (judgment group "
    "and sub-group, default '0'); read trec_eval files with "
    "ie.read_prefs(path) or ie.read_prefs(path, format='qrels_prefs')."
)


def as_prefs(frame: pl.DataFrame | pl.LazyFrame) -> pl.LazyFrame:
    """Check and shape a preference judgment frame: ``query_id, jg, jsg, doc_id, relevance``.

    ``jg`` and ``jsg`` default to ``"0"`` (one judgment group, one
    sub-group: a graded qrels read as preferences); ids become strings,
    ``relevance`` a Float64.

    Raises
    ------
    SchemaError
        A needed column is missing, or ``relevance`` is not a number.

    Examples
    --------
    >>> frame = pl.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "relevance": [2, 1]})
    >>> as_prefs(frame).collect().rows()
    [('1', '0', '0', 'a', 2.0), ('1', '0', '0', 'b', 1.0)]
    """
    lazy = frame.lazy()
    names = lazy.collect_schema()
    absent = [c for c in ("query_id", "doc_id", "relevance") if c not in names]
    if absent:
        msg = (
            f"preference judgments need the columns query_id, doc_id and relevance; "
            f"missing {absent!r} (found {list(names)!r}).\n{_HINT}"
        )
        raise SchemaError(msg)
    if not names["relevance"].is_numeric():
        msg = (
            f"the relevance column of preference judgments must be numbers, "
            f"found {names['relevance']}.\n{_HINT}"
        )
        raise SchemaError(msg)
    columns = []
    for name, dtype in _SCHEMA.items():
        if name in names:
            columns.append(pl.col(name).cast(dtype))
        else:
            columns.append(pl.lit("0", pl.String).alias(name))
    return lazy.select(columns)


def _groups(prefs: pl.LazyFrame) -> pl.LazyFrame:
    """``query_id, jg, __ireval_pa``: whether a group has several sub-groups."""
    return prefs.group_by("query_id", "jg").agg(
        (pl.col("jsg").n_unique() > 1).alias("__ireval_pa")
    )


def check_prefs(prefs: pl.LazyFrame) -> pl.DataFrame:
    """Find the inconsistent judgment groups trec_eval refuses.

    Returns ``query_id, doc_id, problem`` (one row per offending query, its
    smallest offending document): a document at two levels of a judgment
    group with one sub-group (``"two levels"``), at level 0 and at a level
    above 0 in consecutive sub-groups of a group with several
    (``"zero and non-zero"``), or two documents each preferred to the other
    once the sub-groups are combined (``"conflict"``).

    Examples
    --------
    >>> prefs = as_prefs(pl.DataFrame({"query_id": "q", "doc_id": ["a", "a"], "relevance": [2, 1]}))
    >>> check_prefs(prefs).rows()
    [('q', 'a', 'two levels')]
    """
    groups = _groups(prefs)
    rows = prefs.join(groups, on=["query_id", "jg"])
    two_levels = (
        rows.filter(~pl.col("__ireval_pa"))
        .group_by("query_id", "jg", "doc_id")
        .agg(pl.col("relevance").n_unique().alias("n"))
        .filter(pl.col("n") > 1)
        .select("query_id", "doc_id", pl.lit("two levels").alias("problem"))
    )
    level = pl.col("relevance")
    previous = level.shift(1).over(
        "query_id", "jg", "doc_id", order_by=[pl.col("jsg"), -level]
    )
    flips = (
        rows.filter(pl.col("__ireval_pa"))
        .with_columns(previous.alias("__ireval_prev"))
        .filter(
            ((pl.col("__ireval_prev") > 0) & (level == 0))
            | ((pl.col("__ireval_prev") == 0) & (level > 0))
        )
        .select("query_id", "doc_id", pl.lit("zero and non-zero").alias("problem"))
    )
    closure = _closure(prefs, groups)
    conflicts = (
        closure.join(
            closure,
            left_on=["query_id", "jg", "a", "b"],
            right_on=["query_id", "jg", "b", "a"],
        )
        .select("query_id", pl.col("a").alias("doc_id"))
        .with_columns(pl.lit("conflict").alias("problem"))
    )
    found = pl.concat(
        [two_levels.collect(), flips.collect(), conflicts.collect()],
        how="vertical",
    )
    return (
        found.sort("query_id", "doc_id")
        .unique("query_id", keep="first", maintain_order=True)
        .select("query_id", "doc_id", "problem")
    )


def raise_on_inconsistent(prefs: pl.LazyFrame) -> None:
    """Raise :class:`DataError` naming the first inconsistent query, if any.

    Examples
    --------
    >>> prefs = as_prefs(pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "relevance": [2, 1]}))
    >>> raise_on_inconsistent(prefs)
    """
    problems = check_prefs(prefs)
    if problems.height == 0:
        return
    query, doc, problem = problems.row(0)
    what = {
        "two levels": f"document {doc!r} has two different levels in one judgment "
        "group with a single sub-group",
        "zero and non-zero": f"document {doc!r} has level 0 in one sub-group and a "
        "level above 0 in another of the same judgment group",
        "conflict": f"document {doc!r} is both preferred and not preferred to "
        "another document within one judgment group (its sub-groups contradict "
        "each other)",
    }[problem]
    msg = (
        f"inconsistent preference judgments for query {query!r}: {what} "
        f"({problems.height} queries in all).\n"
        "  Hint: put contradicting judgments in different judgment groups (jg); "
        "a judgment group is one consistent set of preferences."
    )
    raise DataError(msg)


def _closure(prefs: pl.LazyFrame, groups: pl.LazyFrame) -> pl.LazyFrame:
    """Transitive closure of the groups with several sub-groups: ``query_id, jg, a, b``.

    Direct preferences are those within a sub-group; each round joins the
    preferences found so far with themselves, until a round adds none. A
    document preferred to itself (listed twice in a sub-group) is dropped.
    """
    rows = prefs.join(
        groups.filter(pl.col("__ireval_pa")).select("query_id", "jg"),
        on=["query_id", "jg"],
        how="semi",
    ).select("query_id", "jg", "jsg", "doc_id", "relevance")
    direct = (
        rows.join(rows, on=["query_id", "jg", "jsg"], suffix="_b")
        .filter(pl.col("relevance") > pl.col("relevance_b"))
        .select(
            "query_id", "jg", pl.col("doc_id").alias("a"), pl.col("doc_id_b").alias("b")
        )
        .unique()
    )
    edges = direct.collect()
    if edges.height:
        while True:
            step = (
                edges.lazy()
                .join(
                    edges.lazy(),
                    left_on=["query_id", "jg", "b"],
                    right_on=["query_id", "jg", "a"],
                    suffix="_c",
                )
                .select("query_id", "jg", "a", pl.col("b_c").alias("b"))
            )
            grown = pl.concat([edges.lazy(), step]).unique().collect()
            if grown.height == edges.height:
                break
            edges = grown
    return edges.lazy().filter(pl.col("a") != pl.col("b"))


def pref_edges(prefs: pl.LazyFrame) -> pl.LazyFrame:
    """Every preference, one row each: ``query_id, jg, a, b`` (A preferred to B).

    A group with one sub-group gives a row per pair of its rows at different
    levels (a document listed twice counts twice); a group with several
    gives each pair of its transitive closure once.

    Examples
    --------
    >>> prefs = as_prefs(pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 1]}))
    >>> sorted(pref_edges(prefs).select("a", "b").collect().rows())
    [('a', 'b'), ('a', 'c')]
    """
    groups = _groups(prefs)
    rows = prefs.join(
        groups.filter(~pl.col("__ireval_pa")).select("query_id", "jg"),
        on=["query_id", "jg"],
        how="semi",
    )
    single = (
        rows.join(rows, on=["query_id", "jg"], suffix="_b")
        .filter(pl.col("relevance") > pl.col("relevance_b"))
        .select(
            "query_id", "jg", pl.col("doc_id").alias("a"), pl.col("doc_id_b").alias("b")
        )
    )
    return pl.concat([single, _closure(prefs, groups)], how="vertical")


def prefs_ranked(run: pl.LazyFrame, depth: int | None = None) -> pl.LazyFrame:
    """Rank each ranking as trec_eval's preference measures do: ``run_id, query_id, doc_id, rank``.

    Score descending, ties by ``doc_id`` ascending (byte order), ``rank``
    from 1; ``depth`` keeps the top ranks.

    Examples
    --------
    >>> run = pl.LazyFrame({"run_id": "r", "query_id": "q", "doc_id": ["b", "a", "c"], "score": [1.0, 1.0, 2.0]})
    >>> prefs_ranked(run).collect().select("doc_id", "rank").rows()
    [('c', 1), ('a', 2), ('b', 3)]
    """
    ranked = run.sort(
        ["run_id", "query_id", "score", "doc_id"],
        descending=[False, False, True, False],
        maintain_order=True,
    ).with_columns((pl.int_range(pl.len()).over(_KEYS) + 1).alias("rank"))
    if depth is not None:
        ranked = ranked.filter(pl.col("rank") <= depth)
    return ranked.select("run_id", "query_id", "doc_id", "rank")


def _positions(
    prefs: pl.LazyFrame, ranked: pl.LazyFrame, run_ids: pl.LazyFrame
) -> pl.LazyFrame:
    """``run_id, query_id, doc_id, ret, pos`` for every judged document of a topic.

    ``pos`` orders the documents as trec_eval's internal ranks do: retrieved
    ones by rank, then the others by ``doc_id``.
    """
    docs = prefs.select("query_id", "doc_id").unique()
    grid = run_ids.join(docs, how="cross")
    found = grid.join(
        ranked.select("run_id", "query_id", "doc_id", "rank"),
        on=["run_id", "query_id", "doc_id"],
        how="left",
    )
    ret = pl.col("rank").is_not_null()
    order = (
        pl.when(ret)
        .then(pl.lit(None, pl.String))
        .otherwise(pl.col("doc_id"))
        .rank("ordinal")
        .over(_KEYS)
    )
    pos = (
        pl.when(ret)
        .then(pl.col("rank").cast(pl.Int64))
        .otherwise(pl.lit(_UNRETRIEVED, pl.Int64) + order.cast(pl.Int64))
    )
    return found.select(
        "run_id", "query_id", "doc_id", ret.alias("ret"), pos.alias("pos")
    )


def _sum(expr: pl.Expr) -> pl.Expr:
    return expr.cast(pl.Int64).sum()


def _ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """``num / den`` as trec_eval's doubles: 0/0 is NaN."""
    return num.cast(pl.Float64) / den.cast(pl.Float64)


def _topic_mean(term: pl.Expr) -> pl.Expr:
    """trec_eval's average over judgment groups: sum / groups, 0 unless the sum is > 0.

    A NaN term (a group with nothing to count) makes the sum NaN, which C's
    ``sum > 0.0`` rejects: the value is then 0.
    """
    total = term.sum()
    good = total.is_not_nan() & (total > 0)
    return pl.when(good).then(total / pl.len()).otherwise(pl.lit(0.0))


def preference_columns(
    prefs: pl.LazyFrame,
    run: pl.LazyFrame,
    run_ids: pl.LazyFrame,
    *,
    depth: int | None = None,
    names: Sequence[str] = (),
) -> pl.LazyFrame:
    """Compute the per-query counts of the preference measures, one row per run x topic.

    ``prefs`` is :func:`as_prefs` output (checked with
    :func:`raise_on_inconsistent`); ``run`` has ``run_id, query_id, doc_id,
    score`` (each document once per ranking); ``run_ids`` the runs to score
    (a ``run_id`` column). Returns ``run_id, query_id`` and the columns
    ``names`` of :data:`COLUMNS` (all of them by default; the pairs of
    documents behind the ``pair`` columns are only built when one is named).

    Examples
    --------
    >>> prefs = as_prefs(pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]}))
    >>> run = pl.LazyFrame({"run_id": "r", "query_id": "q", "doc_id": ["b", "a"], "score": [2.0, 1.0]})
    >>> cols = preference_columns(prefs, run, pl.LazyFrame({"run_id": ["r"]}))
    >>> cols.select("__ireval_pref_ful_ret", "__ireval_pref_ful_imp", "__ireval_pref_notoccur").collect().row(0)
    (0, 2, 0)
    """
    ranked = prefs_ranked(run, depth)
    pos = _positions(prefs, ranked, run_ids)
    groups = _groups(prefs)
    keys = ["run_id", "query_id", "jg"]
    rows = prefs.join(groups, on=["query_id", "jg"]).join(
        pos, on=["query_id", "doc_id"]
    )
    counts = (
        "ful_ret",
        "unful_ret",
        "ful_imp",
        "unful_imp",
        "notoccur",
        "rc_ful",
        "rc_poss",
        "rc_ful_ret",
        "rc_poss_ret",
    )
    # groups with one sub-group: counted from their levels, no pair built;
    # groups with several: from the pairs of their transitive closure
    closure = _closure(prefs, groups)
    per_jg = pl.concat(
        [
            _ec_counts(rows.filter(~pl.col("__ireval_pa"))),
            _pa_counts(closure, pos).join(
                _recalculated(prefs, groups, closure, pos), on=keys, how="left"
            ),
        ],
        how="diagonal",
    )
    # every (run, judgment group), with or without a preference; a group
    # without a pair to recount has 0 of each (0/0: NaN, as in trec_eval)
    jg_grid = run_ids.join(groups, how="cross")
    per_jg = (
        jg_grid.join(per_jg, on=keys, how="left")
        .with_columns(pl.col(c).fill_null(0) for c in counts)
        .join(_rel_counts(prefs, groups, pos), on=keys, how="left")
    )

    ful_ret, ful_imp = pl.col("ful_ret"), pl.col("ful_imp")
    poss_ret = ful_ret + pl.col("unful_ret")
    poss_imp = ful_imp + pl.col("unful_imp")
    poss = poss_ret + poss_imp + pl.col("notoccur")
    ful = ful_ret + ful_imp

    def guarded(num: pl.Expr, den: pl.Expr) -> pl.Expr:
        return pl.when(den > 0).then(_ratio(num, den)).otherwise(pl.lit(0.0))

    rel, nonrel = pl.col("n_rel"), pl.col("n_nonrel")
    rel_ret, nonrel_ret = pl.col("n_rel_ret"), pl.col("n_nonrel_ret")
    rnonrel = (
        pl.when(rel >= nonrel)
        .then(_ratio(ful + rel_ret * (rel - nonrel), poss + rel * (rel - nonrel)))
        .otherwise(_ratio(pl.col("rc_ful"), pl.col("rc_poss")))
    )
    rnonrel_ret = (
        pl.when(rel_ret >= nonrel_ret)
        .then(
            _ratio(
                ful_ret + rel_ret * (rel_ret - nonrel_ret),
                poss_ret + rel * (rel_ret - nonrel_ret),
            )
        )
        .otherwise(_ratio(pl.col("rc_ful_ret"), pl.col("rc_poss_ret")))
    )
    per_topic = per_jg.group_by(_KEYS).agg(
        _sum(ful_ret).alias("__ireval_pref_ful_ret"),
        _sum(pl.col("unful_ret")).alias("__ireval_pref_unful_ret"),
        _sum(ful_imp).alias("__ireval_pref_ful_imp"),
        _sum(pl.col("unful_imp")).alias("__ireval_pref_unful_imp"),
        _sum(pl.col("notoccur")).alias("__ireval_pref_notoccur"),
        _topic_mean(guarded(ful, poss)).alias("__ireval_pref_avgjg"),
        _topic_mean(guarded(ful_ret, poss_ret)).alias("__ireval_pref_avgjg_ret"),
        _topic_mean(guarded(ful, poss_ret + poss_imp)).alias("__ireval_pref_avgjg_imp"),
        _topic_mean(rnonrel).alias("__ireval_pref_avgjg_rnonrel"),
        _topic_mean(rnonrel_ret).alias("__ireval_pref_avgjg_rnonrel_ret"),
    )
    wanted = list(names) or list(COLUMNS)
    if not set(wanted) & set(_PAIR_COLUMNS):
        return per_topic.select(*_KEYS, *wanted)
    result = per_topic.join(
        _pair_columns(prefs, groups, closure, pos), on=_KEYS, how="left"
    )
    # a topic of one group with one sub-group and each document once has one
    # preference per pair of documents: each pair's share is 1 or 0
    simple = pl.col("__ireval_simple")
    ful_ret = pl.col("__ireval_pref_ful_ret")
    ful_imp = pl.col("__ireval_pref_ful_imp")
    poss_ret = ful_ret + pl.col("__ireval_pref_unful_ret")
    poss_imp = poss_ret + ful_imp + pl.col("__ireval_pref_unful_imp")
    by_count = {
        "__ireval_pref_pair_sum_ret": ful_ret.cast(pl.Float64),
        "__ireval_pref_pair_sum_imp": (ful_ret + ful_imp).cast(pl.Float64),
        "__ireval_pref_pairs_ret": poss_ret,
        "__ireval_pref_pairs_imp": poss_imp,
        "__ireval_pref_pairs": poss_imp + pl.col("__ireval_pref_notoccur"),
    }
    result = result.join(_simple_topics(prefs, groups), on="query_id", how="left")
    result = result.with_columns(
        pl.when(simple.fill_null(value=False))
        .then(expr)
        .otherwise(pl.col(name).fill_null(0))
        .alias(name)
        for name, expr in by_count.items()
    )
    return result.select(*_KEYS, *wanted)


def _rel_counts(
    prefs: pl.LazyFrame, groups: pl.LazyFrame, pos: pl.LazyFrame
) -> pl.LazyFrame:
    """Relevant and non-relevant judged documents of each group, and how many retrieved.

    One sub-group: every row, relevant when its level is above 0, else
    non-relevant. Several: every document by its last level (sub-groups in
    byte order, the lowest level of the last), relevant above 0,
    non-relevant at exactly 0, neither below.
    """
    rows = prefs.join(groups, on=["query_id", "jg"]).join(
        pos, on=["query_id", "doc_id"]
    )
    level = pl.col("relevance")
    last = (
        rows.filter(pl.col("__ireval_pa"))
        .sort("jsg", "relevance", descending=[False, True], maintain_order=True)
        .group_by("run_id", "query_id", "jg", "doc_id", "ret")
        .agg(level.last())
    )
    single = rows.filter(~pl.col("__ireval_pa")).select(
        "run_id", "query_id", "jg", "doc_id", "ret", "relevance"
    )
    ret = pl.col("ret")
    is_rel = level > 0
    pa = pl.col("__ireval_pa_doc")
    nonrel = pl.when(pa).then(level == 0).otherwise(level <= 0)
    both = pl.concat(
        [
            single.with_columns(pl.lit(value=False).alias("__ireval_pa_doc")),
            last.with_columns(pl.lit(value=True).alias("__ireval_pa_doc")),
        ],
        how="diagonal",
    )
    return both.group_by("run_id", "query_id", "jg").agg(
        _sum(is_rel).alias("n_rel"),
        _sum(nonrel).alias("n_nonrel"),
        _sum(is_rel & ret).alias("n_rel_ret"),
        _sum(nonrel & ret).alias("n_nonrel_ret"),
    )


def _recalculated(
    prefs: pl.LazyFrame,
    groups: pl.LazyFrame,
    closure: pl.LazyFrame,
    pos: pl.LazyFrame,
) -> pl.LazyFrame:
    """trec_eval's recount for ``prefs_avgjg_Rnonrel(_ret)``, groups with several sub-groups.

    Only the first R non-relevant documents (level 0, in position order) are
    kept, R being the group's relevant documents, and the preferences of the
    closure between kept documents counted again; the ``_ret`` variant keeps
    the retrieved documents, cutting the retrieved non-relevant ones at the
    same R (as trec_eval does). Returns ``rc_ful, rc_poss, rc_ful_ret,
    rc_poss_ret`` per ``run_id, query_id, jg``.
    """
    keys = ["run_id", "query_id", "jg"]
    rows = prefs.join(groups.filter(pl.col("__ireval_pa")), on=["query_id", "jg"]).join(
        pos, on=["query_id", "doc_id"]
    )
    counts = _rel_counts(prefs, groups, pos)
    level = pl.col("relevance")
    docs = (
        rows.sort("jsg", "relevance", descending=[False, True], maintain_order=True)
        .group_by("run_id", "query_id", "jg", "doc_id", "ret", "pos")
        .agg(level.last())
        .join(counts.select(*keys, "n_rel"), on=keys)
    )
    zero = level == 0
    nth = pl.when(zero).then(zero.cast(pl.Int64).cum_sum().over(keys, order_by="pos"))
    retrieved_zero = zero & pl.col("ret")
    nth_ret = pl.when(retrieved_zero).then(
        retrieved_zero.cast(pl.Int64).cum_sum().over(keys, order_by="pos")
    )
    docs = docs.with_columns(
        (nth.is_null() | (nth <= pl.col("n_rel"))).alias("kept"),
        (pl.col("ret") & (nth_ret.is_null() | (nth_ret <= pl.col("n_rel")))).alias(
            "kept_ret"
        ),
    ).select(*keys, "doc_id", "ret", "pos", "kept", "kept_ret")
    da = docs.rename(
        {"doc_id": "a", "ret": "ra", "pos": "pa", "kept": "ka", "kept_ret": "kra"}
    )
    db = docs.rename(
        {"doc_id": "b", "ret": "rb", "pos": "pb", "kept": "kb", "kept_ret": "krb"}
    )
    pairs = closure.join(da, on=["query_id", "jg", "a"]).join(
        db, on=["run_id", "query_id", "jg", "b"]
    )
    both = pl.col("ka") & pl.col("kb")
    both_ret = pl.col("kra") & pl.col("krb")
    first_ahead = pl.col("pa") < pl.col("pb")
    return pairs.group_by(keys).agg(
        _sum(both & pl.col("ra") & first_ahead).alias("rc_ful"),
        _sum(both).alias("rc_poss"),
        _sum(both_ret & first_ahead).alias("rc_ful_ret"),
        _sum(both_ret).alias("rc_poss_ret"),
    )


def _pa_counts(closure: pl.LazyFrame, pos: pl.LazyFrame) -> pl.LazyFrame:
    """Count the preferences of each group with several sub-groups, from its closure."""
    pos_a = pos.rename({"doc_id": "a", "ret": "ret_a", "pos": "pos_a"})
    pos_b = pos.rename({"doc_id": "b", "ret": "ret_b", "pos": "pos_b"})
    pairs = closure.join(pos_a, on=["query_id", "a"]).join(
        pos_b, on=["run_id", "query_id", "b"]
    )
    ret_a, ret_b = pl.col("ret_a"), pl.col("ret_b")
    before = pl.col("pos_a") < pl.col("pos_b")
    return pairs.group_by("run_id", "query_id", "jg").agg(
        _sum(ret_a & ret_b & before).alias("ful_ret"),
        _sum(ret_a & ret_b & ~before).alias("unful_ret"),
        _sum(ret_a & ~ret_b).alias("ful_imp"),
        _sum(~ret_a & ret_b).alias("unful_imp"),
        _sum(~ret_a & ~ret_b).alias("notoccur"),
    )


def _ec_counts(rows: pl.LazyFrame) -> pl.LazyFrame:
    """Count the preferences of each group with one sub-group from its levels, no pair built.

    ``rows``: the group's rows (a document listed twice is two rows) with
    ``ret`` and ``pos``. Every pair of rows at two levels is a preference.
    Per level ``v``, with ``n_ret(v)``/``n_un(v)`` its retrieved/unretrieved
    rows and ``below``/``above`` the rows at lower/higher levels:

    * ``ful_imp = sum n_ret(v) below_un(v)``, ``unful_imp = sum n_un(v)
      below_ret(v)``, ``notoccur = sum n_un(v) below_un(v)``;
    * retrieved pairs ``sum n_ret(v) below_ret(v)``, of which ``ful_ret``
      have the higher level ranked first: for each retrieved row, the
      retrieved rows of each higher level ranked before it (an as-of join on
      the position, per level above: rows x levels, not rows x rows).

    trec_eval's ``prefs_avgjg_Rnonrel`` recount (N > R) follows from the
    same sums: the pairs whose lower row is not at the lowest level, and
    every row against the first R rows of the lowest level (itself
    included), fulfilled when the first is retrieved and ranked before.
    Returns ``run_id, query_id, jg`` and ``ful_ret, unful_ret, ful_imp,
    unful_imp, notoccur, rc_ful, rc_poss, rc_ful_ret, rc_poss_ret``.
    """
    keys = ["run_id", "query_id", "jg"]
    level = pl.col("relevance")
    rows = rows.select(*keys, "relevance", "ret", "pos").with_columns(
        level.min().over(keys).alias("lowest")
    )
    ret = pl.col("ret")
    levels = rows.group_by(*keys, "relevance", "lowest").agg(
        _sum(ret).alias("n_ret"), _sum(~ret).alias("n_un")
    )
    n_ret, n_un = pl.col("n_ret"), pl.col("n_un")
    below_ret = n_ret.cum_sum().over(keys, order_by="relevance") - n_ret
    below_un = n_un.cum_sum().over(keys, order_by="relevance") - n_un
    above_ret = n_ret.sum().over(keys) - below_ret - n_ret
    above_un = n_un.sum().over(keys) - below_un - n_un
    upper = level != pl.col("lowest")
    per_level = levels.with_columns(
        (n_ret * below_un).alias("ful_imp"),
        (n_un * below_ret).alias("unful_imp"),
        (n_un * below_un).alias("notoccur"),
        (n_ret * below_ret).alias("pairs_ret"),
        # recount, first loop: pairs whose lower row is above the lowest level
        pl.when(upper)
        .then((n_ret + n_un) * (above_ret + above_un))
        .otherwise(0)
        .alias("l1_poss"),
        pl.when(upper).then(n_un * above_ret).otherwise(0).alias("l1_ful_imp"),
        pl.when(upper).then(n_ret * above_ret).otherwise(0).alias("l1_poss_ret"),
        (n_ret + n_un).alias("n_rows"),
        (level > 0).alias("relevant"),
    )
    sums = per_level.group_by(keys).agg(
        pl.col("ful_imp", "unful_imp", "notoccur", "pairs_ret").sum(),
        pl.col("l1_poss", "l1_ful_imp", "l1_poss_ret", "n_rows").sum(),
        n_ret.sum().alias("n_ret_rows"),
        (n_ret + n_un).filter(pl.col("relevant")).sum().alias("n_rel"),
        n_ret.filter(pl.col("relevant")).sum().alias("n_rel_ret"),
    )

    # ful_ret: per retrieved row, the retrieved rows of higher levels before it
    retrieved = rows.filter(ret).select(*keys, "relevance", "lowest", "pos")
    counted = retrieved.with_columns(
        (pl.int_range(pl.len()).over(*keys, "relevance", order_by="pos") + 1).alias("k")
    ).select(*keys, pl.col("relevance").alias("higher"), "pos", "k")
    higher = retrieved.select(*keys, pl.col("relevance").alias("higher")).unique()
    wanted = (
        retrieved.join(higher, on=keys)
        .filter(pl.col("higher") > level)
        .select(*keys, "higher", "pos", (level != pl.col("lowest")).alias("upper"))
    )
    found = wanted.sort("pos").join_asof(
        counted.sort("pos"),
        on="pos",
        by=[*keys, "higher"],
        strategy="backward",
        allow_exact_matches=False,
        check_sortedness=False,  # sorted by pos above, hence within each group
    )
    k = pl.col("k").fill_null(0)
    ahead = found.group_by(keys).agg(
        k.sum().alias("ful_ret"), k.filter(pl.col("upper")).sum().alias("l1_ful_ret")
    )

    # recount, second loop: every row against the first R rows of the lowest
    # level (by position); fulfilled when the first is retrieved and before
    before_ret = (
        pl.when(ret)
        .then(pl.col("pos").rank("min").over(*keys, "ret") - 1)
        .otherwise(pl.col("n_ret_rows"))
    )
    lowest = (
        rows.join(sums.select(*keys, "n_ret_rows", "n_rel", "n_rel_ret"), on=keys)
        .with_columns(before_ret.cast(pl.Int64).alias("before_ret"))
        .filter(level == pl.col("lowest"))
        .with_columns(
            (pl.int_range(pl.len()).over(keys, order_by="pos") + 1).alias("k")
        )
    )
    kept = pl.col("k") <= pl.col("n_rel")
    kept_ret = ret & (pl.col("k") <= pl.col("n_rel_ret"))
    second = lowest.group_by(keys).agg(
        _sum(kept).alias("l2_n"),
        pl.col("before_ret").filter(kept).sum().alias("l2_ful"),
        _sum(kept_ret).alias("l2_n_ret"),
        pl.col("before_ret").filter(kept_ret).sum().alias("l2_ful_ret"),
    )

    out = sums.join(ahead, on=keys, how="left").join(second, on=keys, how="left")
    out = out.with_columns(
        pl.col("ful_ret", "l1_ful_ret", "l2_n", "l2_ful", "l2_n_ret", "l2_ful_ret")
        .fill_null(0)
        .cast(pl.Int64)
    )
    c = pl.col
    return out.select(
        *keys,
        c("ful_ret"),
        (c("pairs_ret") - c("ful_ret")).alias("unful_ret"),
        c("ful_imp").cast(pl.Int64),
        c("unful_imp").cast(pl.Int64),
        c("notoccur").cast(pl.Int64),
        (c("l1_ful_ret") + c("l1_ful_imp") + c("l2_ful")).alias("rc_ful"),
        (c("l1_poss") + c("n_rows") * c("l2_n")).alias("rc_poss"),
        (c("l1_ful_ret") + c("l2_ful_ret")).alias("rc_ful_ret"),
        (c("l1_poss_ret") + c("n_ret_rows") * c("l2_n_ret")).alias("rc_poss_ret"),
    )


def _simple_topics(prefs: pl.LazyFrame, groups: pl.LazyFrame) -> pl.LazyFrame:
    """``query_id, __ireval_simple``: one group, one sub-group, each document once."""
    return (
        prefs.join(groups, on=["query_id", "jg"])
        .group_by("query_id")
        .agg(
            (
                (pl.col("jg").n_unique() == 1)
                & ~pl.col("__ireval_pa").any()
                & (pl.col("doc_id").n_unique() == pl.len())
            ).alias("__ireval_simple")
        )
    )


_PAIR_COLUMNS = (
    "__ireval_pref_pair_sum_ret",
    "__ireval_pref_pair_sum_imp",
    "__ireval_pref_pairs_ret",
    "__ireval_pref_pairs_imp",
    "__ireval_pref_pairs",
)


def _pair_columns(
    prefs: pl.LazyFrame,
    groups: pl.LazyFrame,
    closure: pl.LazyFrame,
    pos: pl.LazyFrame,
) -> pl.LazyFrame:
    """Per query: the pairs of documents with a preference, and their ratios.

    A pair's ratio is the share of its preferences (over every judgment
    group) that prefer the document ranked first; pairs with both documents
    retrieved, with one, and with none (ratio 0) are counted apart. Only the
    topics that are not simple (:func:`_simple_topics`) build their pairs:
    a simple topic's columns follow from its counts.
    """
    complex_topics = (
        _simple_topics(prefs, groups)
        .filter(~pl.col("__ireval_simple"))
        .select("query_id")
    )
    edges = pref_edges(prefs.join(complex_topics, on="query_id", how="semi"))
    pos_a = pos.rename({"doc_id": "a", "ret": "ret_a", "pos": "pos_a"})
    pos_b = pos.rename({"doc_id": "b", "ret": "ret_b", "pos": "pos_b"})
    pairs = edges.join(pos_a, on=["query_id", "a"]).join(
        pos_b, on=["run_id", "query_id", "b"]
    )
    first = pl.min_horizontal("a", "b")
    second = pl.max_horizontal("a", "b")
    by_pair = pairs.group_by(
        "run_id", "query_id", first.alias("d1"), second.alias("d2")
    ).agg(
        _sum(pl.col("pos_a") < pl.col("pos_b")).alias("ahead"),
        pl.len().alias("n"),
        (pl.col("ret_a").cast(pl.Int8) + pl.col("ret_b").cast(pl.Int8))
        .first()
        .alias("n_ret"),
    )
    share = pl.col("ahead").cast(pl.Float64) / pl.col("n").cast(pl.Float64)
    n_ret = pl.col("n_ret")
    return (
        by_pair.sort("run_id", "query_id", "d1", "d2")
        .group_by(_KEYS)
        .agg(
            share.filter(n_ret == 2).sum().alias("__ireval_pref_pair_sum_ret"),
            share.filter(n_ret >= 1).sum().alias("__ireval_pref_pair_sum_imp"),
            _sum(n_ret == 2).alias("__ireval_pref_pairs_ret"),
            _sum(n_ret >= 1).alias("__ireval_pref_pairs_imp"),
            pl.len().cast(pl.Int64).alias("__ireval_pref_pairs"),
        )
    )


#: Every column :func:`preference_columns` computes.
COLUMNS = (
    "__ireval_pref_ful_ret",
    "__ireval_pref_unful_ret",
    "__ireval_pref_ful_imp",
    "__ireval_pref_unful_imp",
    "__ireval_pref_notoccur",
    "__ireval_pref_avgjg",
    "__ireval_pref_avgjg_ret",
    "__ireval_pref_avgjg_imp",
    "__ireval_pref_avgjg_rnonrel",
    "__ireval_pref_avgjg_rnonrel_ret",
    *_PAIR_COLUMNS,
)


def _refuse_missing_values(prefs: pl.DataFrame) -> None:
    """Raise :class:`DataError` for a null in any column, or a NaN level."""
    nulls = prefs.null_count().row(0, named=True)
    bad = [name for name, n in nulls.items() if n]
    nan = int(prefs.get_column("relevance").is_nan().sum())
    if bad or nan:
        what = f"nulls in {bad!r}" if bad else f"{nan} NaN levels"
        msg = (
            f"preference judgments must be complete: found {what}.\n"
            "  Hint: drop or fill those rows; a level is any number, higher "
            "preferred."
        )
        raise DataError(msg)


def needed_columns(metrics: Iterable[Metric]) -> list[str]:
    """Return the columns of :func:`preference_columns` that the metrics' values read.

    Examples
    --------
    >>> from ireval_df.measures import parse_metric
    >>> needed_columns([parse_metric("PrefsSimpRet")])
    ['__ireval_pref_ful_ret', '__ireval_pref_unful_ret']
    """
    roots = {r for m in metrics for r in build_plan(m).value.meta.root_names()}
    return [c for c in COLUMNS if c in roots]


def evaluate_prefs(
    run: object,
    prefs: object,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    depth: int | None = None,
    missing: str = "zero",
) -> object:
    """Score runs against preference judgments: one row per run, query and metric.

    Parameters
    ----------
    run : frame, path, dict or list of these
        As for :func:`ireval_df.evaluate`: ``query_id``, ``doc_id``,
        ``score`` and optionally ``run_id``.
    prefs : frame (polars, lazy, pandas, pyarrow) or path
        Preference judgments: ``query_id``, ``doc_id``, ``relevance`` (a
        number; within a judgment sub-group a higher value is preferred, 0
        means non-relevant) and optionally ``jg`` and ``jsg``, the judgment
        group and sub-group (default ``"0"``). A path is read by
        :func:`read_prefs` (trec_eval's ``-R prefs`` layout; call it with
        ``format="qrels_prefs"`` to read a qrels file as preferences).
    metrics : str, Metric or list of them
        Preference measures (``PrefsSimp``, ``prefs_pair``, ...; see
        ``docs/metrics.md``).
    depth : int, optional
        Keep only the top ``depth`` documents of each ranking (trec_eval ``-M``).
    missing : {"zero", "skip"}, default "zero"
        A query of ``prefs`` the run did not answer: scored as an empty
        ranking (trec_eval ``-c``), or left out.

    Returns
    -------
    Frame of the same kind as ``run``
        ``run_id, query_id, metric, value``, sorted by run, query (byte
        order) and the order of ``metrics``. Queries only in the run are
        ignored.

    Raises
    ------
    MetricSpecError
        An unknown metric, or one that is not a preference measure.
    SchemaError
        ``prefs`` lacks a column, or its relevance is not a number.
    DataError
        Inconsistent judgments within one judgment group (see
        :func:`check_prefs`), a null or a NaN level in the judgments, or a
        document twice in one ranking.
    OptionError
        A bad ``depth`` or ``missing``.

    Notes
    -----
    Ranks break score ties by ``doc_id`` ascending (as trec_eval does for
    these measures). Only the relative order of the judged documents
    counts. One lazy plan computes every metric for every run and query.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a", "c"], "score": [3.0, 2.0, 1.0]})
    >>> evaluate_prefs(run, prefs, ["PrefsSimp", "prefs_num_prefs_poss"]).select("metric", "value").rows()
    [('PrefsSimp', 0.6666666666666666), ('NumPrefsPoss', 3.0)]
    """
    if missing not in ("zero", "skip"):
        msg = f"missing must be one of ('zero', 'skip'), found {missing!r}."
        raise OptionError(msg)
    if depth is not None and (
        isinstance(depth, bool) or not isinstance(depth, int) or depth < 1
    ):
        msg = f"depth must be a positive whole number, found {depth!r}."
        raise OptionError(msg)
    specs = parse_metrics(metrics, family="offline")
    others = [str(m) for m in specs if judgment_kind(m) != "preferences"]
    if others:
        msg = (
            f"evaluate_prefs computes preference measures only, not {others!r}.\n"
            "  Hint: score qrels measures with ie.evaluate(run, qrels, ...)."
        )
        raise OptionError(msg)
    if isinstance(prefs, str | Path):
        prefs = read_prefs(prefs)
    elif not isinstance(prefs, pl.DataFrame | pl.LazyFrame):
        from ireval_df._utils.frames import eager

        prefs = eager(prefs, "prefs", _HINT.strip().removeprefix("Hint: "))
    collected = as_prefs(prefs).collect()
    _refuse_missing_values(collected)
    judgments = collected.lazy()
    raise_on_inconsistent(judgments)
    run_lf = as_run(run, rank=False).select("run_id", "query_id", "doc_id", "score")
    ranked = prefs_ranked(run_lf, depth)
    repeated = (
        ranked.group_by(KEYS)
        .agg((pl.len() - pl.col("doc_id").n_unique()).alias("n"))
        .filter(pl.col("n") > 0)
        .collect()
    )
    if repeated.height:
        run_id, query_id, _ = repeated.row(0)
        msg = (
            f"run {run_id!r} retrieves a document twice for query {query_id!r} "
            f"({repeated.height} rankings in all).\n"
            "  Hint: drop the repeats first (ie.evaluate's duplicates='first' "
            "does it for qrels measures)."
        )
        raise DataError(msg)
    run_ids = run_lf.select("run_id").unique()
    plans = [(m, build_plan(m)) for m in specs]
    columns = preference_columns(
        judgments, run_lf, run_ids, depth=depth, names=needed_columns(specs)
    )
    if missing == "skip":
        answered = run_lf.select(KEYS).unique()
        columns = columns.join(answered, on=list(KEYS), how="semi")
    values = [plan.value.cast(pl.Float64).alias(str(m)) for m, plan in plans]
    wide = columns.select(*KEYS, *values).sort(list(KEYS)).collect()
    names = [str(m) for m in specs]
    long = wide.unpivot(
        index=list(KEYS), on=names, variable_name="metric", value_name="value"
    )
    order = pl.DataFrame({"metric": names}).with_row_index("__ireval_order")
    long = (
        long.join(order, on="metric")
        .sort("run_id", "query_id", "__ireval_order")
        .drop("__ireval_order")
    )
    settings = {"metrics": names, "depth": depth, "missing": missing}
    return _provenance.output(long, run, settings)


def read_prefs(path: str | Path, *, format: PrefsLayout = "prefs") -> pl.DataFrame:  # noqa: A002
    r"""Read a trec_eval preference file: ``query_id, jg, jsg, doc_id, relevance``.

    Parameters
    ----------
    path : str or Path
        The file.
    format : {"prefs", "qrels_prefs"}, default "prefs"
        ``prefs`` (trec_eval ``-R prefs``): ``qid jg jsg docno rel_level``
        lines; ``qrels_prefs`` (``-R qrels_prefs``): a qrels file, ``qid jg
        docno rel_level``, each judgment group (the second field) one
        sub-group ``"0"``. Lines starting with ``#`` are comments.

    Returns
    -------
    polars.DataFrame
        ``query_id, jg, jsg, doc_id`` (String), ``relevance`` (Float64), in
        file order; the input of :func:`evaluate_prefs`.

    Raises
    ------
    FormatError
        The file cannot be read, a line has the wrong number of fields, or a
        level is not a number (the file and line are named).
    OptionError
        An unknown ``format``.

    Examples
    --------
    >>> path = getfixture("tmp_path") / "prefs.txt"
    >>> _ = path.write_text("q1 u1 s1 d1 2\nq1 u1 s1 d2 0\n")
    >>> read_prefs(path).rows()
    [('q1', 'u1', 's1', 'd1', 2.0), ('q1', 'u1', 's1', 'd2', 0.0)]
    """
    if format not in ("prefs", "qrels_prefs"):
        msg = f"format must be one of ('prefs', 'qrels_prefs'), found {format!r}."
        raise OptionError(msg)
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        msg = f"{name}: cannot read the preference file ({exc.strerror}).\n{_HINT}"
        raise FormatError(msg) from None
    try:
        frame, counts = split_prefs(raw, format)
    except UnicodeDecodeError:
        frame, counts = split_prefs(raw, format, encoding="latin-1")
    bad = bad_prefs_line(counts, format)
    expected = 5 if format == "prefs" else 4
    if bad is not None:
        line = int(frame.get_column("line")[bad - 1])
        text = raw.decode("utf-8", "replace").splitlines()[line - 1]
        layout = (
            "qid jg jsg docno rel_level"
            if format == "prefs"
            else ("qid jg docno rel_level")
        )
        problem = f"expected {expected} fields ({layout}), found {int(counts[bad - 1])}"
        raise line_error(name, line, text, problem)
    level = pl.col("relevance").cast(pl.Float64, strict=False)
    frame = frame.with_columns(level.alias("__ireval_level"))
    wrong = frame.filter(pl.col("__ireval_level").is_null())
    if wrong.height:
        line = int(wrong.get_column("line")[0])
        text = raw.decode("utf-8", "replace").splitlines()[line - 1]
        raise line_error(name, line, text, "the level (last field) is not a number")
    return frame.select(
        "query_id", "jg", "jsg", "doc_id", pl.col("__ireval_level").alias("relevance")
    )
