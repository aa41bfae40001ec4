"""Preference measures: trec_eval's ``prefs_*``, over preference judgments.

They read no qrels: :func:`ireval_df.evaluate_prefs` scores a run against
preference judgments (``query_id, jg, jsg, doc_id, relevance``; see
:mod:`ireval_df.offline.prefs`), whose counts per query these builders
combine. A preference ``A > B`` of a judgment group is *retrieved* when
both documents are retrieved (fulfilled when A ranks first), *implied* when
one is (fulfilled when it is A), *not retrieved* when neither is (never
fulfilled). The plain measures count all three, ``_ret`` only retrieved
ones, ``_imp`` retrieved and implied ones. Ranks break score ties by
``doc_id`` ascending, as trec_eval does for these measures; ``judged_only``
changes nothing (only the order of judged documents counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.offline.plan import Plan, register

if TYPE_CHECKING:
    from collections.abc import Callable

    from ireval_df.measures.spec import Metric


def _col(name: str) -> pl.Expr:
    """A per-query count of :func:`ireval_df.offline.prefs.preference_columns`."""
    return pl.col(f"__ireval_pref_{name}").cast(pl.Float64)


def _share(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """``num / den``, 0 when ``den`` is 0 (trec_eval leaves the value at 0)."""
    return pl.when(den > 0).then(num / den).otherwise(pl.lit(0.0))


_FUL = _col("ful_ret") + _col("ful_imp")
_POSS_RET = _col("ful_ret") + _col("unful_ret")
_POSS_IMP = _POSS_RET + _col("ful_imp") + _col("unful_imp")
_POSS = _POSS_IMP + _col("notoccur")


def _register(
    name: str, trec_name: str, **declaration: Any
) -> Callable[[Callable[[Metric], Plan]], Callable[[Metric], Plan]]:
    """Register a preference measure under its trec_eval name too."""
    decorate: Callable[[Callable[[Metric], Plan]], Callable[[Metric], Plan]] = register(
        name,
        aliases=(trec_name,),
        trec_eval=trec_name,
        judgments="preferences",
        **declaration,
    )
    return decorate


_COUNT: dict[str, Any] = {"bounds": (0.0, None), "aggregate": "sum"}


@_register("NumPrefsPoss", "prefs_num_prefs_poss", **_COUNT)
def num_prefs_poss(m: Metric) -> Plan:
    """Number of preferences, retrieved or not, summed over queries.

    ``a > b`` and ``a > c`` and ``b > c``: three preferences.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]})
    >>> ie.evaluate_prefs(run, prefs, ["NumPrefsPoss"])["value"].item()
    3.0
    """
    return Plan(value=_POSS)


@_register("NumPrefsFul", "prefs_num_prefs_ful", **_COUNT)
def num_prefs_ful(m: Metric) -> Plan:
    """Number of preferences fulfilled, retrieved or implied, summed over queries.

    ``b`` above ``a`` fails ``a > b``; ``a > c`` and ``b > c`` are implied
    (``c`` is not retrieved): two.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]})
    >>> ie.evaluate_prefs(run, prefs, ["NumPrefsFul"])["value"].item()
    2.0
    """
    return Plan(value=_FUL)


@_register("NumPrefsFulRet", "prefs_num_prefs_ful_ret", **_COUNT)
def num_prefs_ful_ret(m: Metric) -> Plan:
    """Number of preferences fulfilled with both documents retrieved, summed over queries.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "x"], "score": [3.0, 2.0, 1.0]})
    >>> ie.evaluate_prefs(run, prefs, ["NumPrefsFulRet"])["value"].item()
    1.0
    """
    return Plan(value=_col("ful_ret"))


@_register("PrefsSimp", "prefs_simp")
def prefs_simp(m: Metric) -> Plan:
    """Share of the preferences fulfilled: ``fulfilled / possible``, all counted.

    A preference with neither document retrieved counts as failed; a pair
    with conflicting preferences (different judgment groups) counts each,
    so the best ranking may score below 1. 0 without a preference.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]})
    >>> round(ie.evaluate_prefs(run, prefs, ["PrefsSimp"])["value"].item(), 4)
    0.6667
    """
    return Plan(value=_share(_FUL, _POSS))


@_register("PrefsSimpRet", "prefs_simp_ret")
def prefs_simp_ret(m: Metric) -> Plan:
    """Share of the preferences between two retrieved documents that are fulfilled.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]})
    >>> ie.evaluate_prefs(run, prefs, ["PrefsSimpRet"])["value"].item()
    0.0
    """
    return Plan(value=_share(_col("ful_ret"), _POSS_RET))


@_register("PrefsSimpImp", "prefs_simp_imp")
def prefs_simp_imp(m: Metric) -> Plan:
    """Share of the preferences with at least one document retrieved that are fulfilled.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]})
    >>> round(ie.evaluate_prefs(run, prefs, ["PrefsSimpImp"])["value"].item(), 4)
    0.6667
    """
    return Plan(value=_share(_FUL, _POSS_IMP))


@_register("PrefsPair", "prefs_pair")
def prefs_pair(m: Metric) -> Plan:
    """Mean over document pairs with a preference of the share fulfilled for the pair.

    A pair preferred one way by 3 judgment groups and the other way by 2
    scores 3/5 when its first-ranked document is the one the 3 prefer; a
    pair with neither document retrieved scores 0. Equal to ``PrefsSimp``
    when no pair is judged by two groups.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]})
    >>> round(ie.evaluate_prefs(run, prefs, ["PrefsPair"])["value"].item(), 4)
    0.6667
    """
    return Plan(value=_share(_col("pair_sum_imp"), _col("pairs")))


@_register("PrefsPairRet", "prefs_pair_ret")
def prefs_pair_ret(m: Metric) -> Plan:
    """Mean over retrieved document pairs with a preference of the share fulfilled.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "x"], "score": [3.0, 2.0, 1.0]})
    >>> ie.evaluate_prefs(run, prefs, ["PrefsPairRet"])["value"].item()
    1.0
    """
    return Plan(value=_share(_col("pair_sum_ret"), _col("pairs_ret")))


@_register("PrefsPairImp", "prefs_pair_imp")
def prefs_pair_imp(m: Metric) -> Plan:
    """Mean over document pairs with at least one retrieved of the share fulfilled.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]})
    >>> round(ie.evaluate_prefs(run, prefs, ["PrefsPairImp"])["value"].item(), 4)
    0.6667
    """
    return Plan(value=_share(_col("pair_sum_imp"), _col("pairs_imp")))


@_register("PrefsAvgJG", "prefs_avgjg")
def prefs_avgjg(m: Metric) -> Plan:
    """``fulfilled / possible`` within each judgment group, averaged over the groups.

    Every group (a user, say) weighs the same, however many preferences it
    holds; a group without a preference adds 0.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "jg": ["u1", "u1", "u2", "u2"],
    ...                       "doc_id": ["a", "b", "a", "b"], "relevance": [2, 1, 1, 2]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> ie.evaluate_prefs(run, prefs, ["PrefsAvgJG"])["value"].item()
    0.5
    """
    return Plan(value=_col("avgjg"))


@_register("PrefsAvgJGRet", "prefs_avgjg_ret")
def prefs_avgjg_ret(m: Metric) -> Plan:
    """``PrefsAvgJG`` counting only preferences between two retrieved documents.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "x"], "score": [3.0, 2.0, 1.0]})
    >>> ie.evaluate_prefs(run, prefs, ["PrefsAvgJGRet"])["value"].item()
    1.0
    """
    return Plan(value=_col("avgjg_ret"))


@_register("PrefsAvgJGImp", "prefs_avgjg_imp")
def prefs_avgjg_imp(m: Metric) -> Plan:
    """``PrefsAvgJG`` counting only preferences with at least one document retrieved.

    Examples
    --------
    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "x"], "score": [3.0, 2.0, 1.0]})
    >>> ie.evaluate_prefs(run, prefs, ["PrefsAvgJGImp"])["value"].item()
    1.0
    """
    return Plan(value=_col("avgjg_imp"))


@_register("PrefsAvgJGRNonRel", "prefs_avgjg_Rnonrel")
def prefs_avgjg_rnonrel(m: Metric) -> Plan:
    """``PrefsAvgJG`` with each group's non-relevant documents (level 0) set to R, its relevant count.

    With N non-relevant and R relevant judged documents in a group: when
    ``N <= R``, ``R - N`` fulfilled preferences are added for each relevant
    retrieved document (``R - N`` for each relevant one to the possible);
    when ``N > R``, only the first R non-relevant documents (retrieved ones
    by rank, then the others by ``doc_id``) are kept and the group's
    preferences counted again, as trec_eval does (with its quirks: in a
    group with one sub-group, the kept documents are also compared with
    the other documents of the lowest level, themselves included). A group
    with nothing to count (0/0) makes the query's value 0, as in trec_eval.
    Akin to ``Bpref`` for one group of relevant and non-relevant documents.

    Examples
    --------
    Two relevant documents (a, b), one non-relevant (c, not retrieved): 3
    preferences, 2 fulfilled (b above a fails ``a > b``), plus ``R - N = 1``
    for each relevant document: ``(2 + 2) / (3 + 2)``.

    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]})
    >>> ie.evaluate_prefs(run, prefs, ["PrefsAvgJGRNonRel"])["value"].item()
    0.8
    """
    return Plan(value=_col("avgjg_rnonrel"))


@_register("PrefsAvgJGRNonRelRet", "prefs_avgjg_Rnonrel_ret")
def prefs_avgjg_rnonrel_ret(m: Metric) -> Plan:
    """``PrefsAvgJGRNonRel`` over the retrieved documents only (R and N of the retrieved).

    Examples
    --------
    Retrieved: a and b, relevant (R = 2), no non-relevant (N = 0): the
    one retrieved preference fails, ``(0 + 2 * 2) / (1 + 2 * 2)``.

    >>> prefs = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [2, 1, 0]})
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["b", "a", "x"], "score": [3.0, 2.0, 1.0]})
    >>> ie.evaluate_prefs(run, prefs, ["PrefsAvgJGRNonRelRet"])["value"].item()
    0.8
    """
    return Plan(value=_col("avgjg_rnonrel_ret"))
