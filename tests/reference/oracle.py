"""A naive, per-query, pure-Python implementation of every registered metric.

Written from ``tests/conformance/trec_eval/SPEC.md`` (sections 2 and 4) and the
metrics' docstrings, not from the library: plain loops over one ranked list,
no cleverness, so that each function can be checked by reading it.

Conventions (SPEC.md 2.1):

* rank: score descending, ties broken by ``doc_id`` descending in byte order;
* labels: the qrels grade when >= 0, ``NONPOOL`` (-1) when the document is
  not in the topic's qrels, ``UNJUDGED`` (-2) when its grade is negative;
* ``depth`` keeps the top documents (trec_eval ``-M``), then ``judged_only``
  drops negative labels and renumbers (``-J``);
* a qrels topic a run did not answer is an empty ranking, and with
  ``missing="zero"`` a NaN there becomes 0;
* "relevant" means ``label >= rel``; R counts the topic's qrels grades >= rel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from ireval_df.measures import Metric

NONPOOL = -1
UNJUDGED = -2
EPS = 1e-5  # infAP's epsilon


def ranking(docs: Mapping[str, float]) -> list[str]:
    """Document ids by score descending, ties by doc_id descending (bytes)."""
    ordered = sorted(
        docs.items(), key=lambda item: (item[1], item[0].encode()), reverse=True
    )
    return [doc for doc, _ in ordered]


def label(doc: str, judged: Mapping[str, int]) -> int:
    """trec_eval's label of a retrieved document."""
    if doc not in judged:
        return NONPOOL
    grade = judged[doc]
    return UNJUDGED if grade < 0 else grade


@dataclass(frozen=True)
class Topic:
    """What a metric sees of one (run, query) pair."""

    labels: tuple[int, ...]  # labels of the ranked documents, rank 1 first
    grades: tuple[int, ...]  # every qrels grade of the query (negatives included)
    max_grade: int  # the highest label anywhere in the qrels (ERR's default gmax)
    # with intents: each ranked document's {intent: grade} ({} when unjudged),
    # and every judged document's, by doc_id
    ranked_intents: tuple[Mapping[str, int], ...] = ()
    intents: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


def topic(
    docs: Mapping[str, float] | None,
    judged: Mapping[str, int],
    *,
    max_grade: int,
    depth: int | None = None,
    judged_only: bool = False,
    intents: Mapping[str, Mapping[str, int]] | None = None,
) -> Topic:
    """Rank, cut and label one query's retrieved documents."""
    order = ranking(docs or {})
    if depth is not None:
        order = order[:depth]
    if judged_only:
        order = [doc for doc in order if label(doc, judged) >= 0]
    labels = [label(doc, judged) for doc in order]
    split = intents or {}
    ranked = tuple(split.get(doc, {}) for doc in order)
    return Topic(tuple(labels), tuple(judged.values()), max_grade, ranked, split)


# --- shared quantities --------------------------------------------------------


def top(labels: Sequence[int], k: int | float | None) -> Sequence[int]:
    return labels if k is None else labels[: int(k)]


def n_rel(t: Topic, rel: int) -> int:
    return sum(1 for g in t.grades if g >= rel)


def relret(t: Topic, rel: int, k: int | float | None = None) -> int:
    return sum(1 for x in top(t.labels, k) if x >= rel)


def div(a: float, b: float) -> float:
    return a / b if b != 0 else 0.0


def gain(x: int, dcg: str, gains: Mapping[int, float]) -> float:
    """Gain of a label: the map's value, else 0 when unjudged, else the grade
    (``log2``) or ``2^grade - 1`` (``exp-log2``)."""
    if x in gains:
        return float(gains[x])
    if x < 0:
        return 0.0
    return 2.0**x - 1.0 if dcg == "exp-log2" else float(x)


def ideal(t: Topic, dcg: str, gains: Mapping[int, float]) -> list[float]:
    """Positive gains of every judged document of the query, best first."""
    qlabels = [UNJUDGED if g < 0 else g for g in t.grades]
    return sorted(
        (g for g in (gain(x, dcg, gains) for x in qlabels) if g > 0), reverse=True
    )


def dcg_of(values: Sequence[float], k: int | None = None) -> float:
    cut = values if k is None else values[:k]
    return sum(g / math.log2(i + 1) for i, g in enumerate(cut, start=1))


def gain_params(m: Metric) -> tuple[str, dict[int, float]]:
    return str(m.param("dcg")), dict(m.param("gains"))


def precision_sum(t: Topic, rel: int, k: int | float | None) -> float:
    """Sum of P@i over the relevant ranks i within the cutoff."""
    total, found = 0.0, 0
    for i, x in enumerate(top(t.labels, k), start=1):
        if x >= rel:
            found += 1
            total += found / i
    return total


def f_beta(hits: int, precision: float, recall: float, beta: float) -> float:
    if hits == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def lround(x: float) -> int:
    """C's lround for x >= 0: halves away from zero (SPEC.md 4.3)."""
    f = math.floor(x)
    return int(f + (1 if x - f >= 0.5 else 0))


def iprec(t: Topic, rel: int, level: float, compat: str) -> float:
    """Interpolated precision at recall ``level`` (SPEC.md 4.3)."""
    x = n_rel(t, rel) * level
    need = lround(x) if compat == "10" else int(x + 0.9)
    if not t.labels and need <= 0:
        return math.nan
    best, found = 0.0, 0
    for i, lab in enumerate(t.labels, start=1):
        found += lab >= rel
        if found >= need:
            best = max(best, found / i)
    return best


# --- the metrics, one function each ---------------------------------------------


def m_p(m: Metric, t: Topic) -> float:
    return relret(t, m.rel, m.k) / m.k


def m_relp(m: Metric, t: Topic) -> float:
    return div(relret(t, m.rel, m.k), min(m.k, n_rel(t, m.rel)))


def m_rprec(m: Metric, t: Topic) -> float:
    k = int(n_rel(t, m.rel) * float(m.param("mult")) + 0.9)
    return div(relret(t, m.rel, k), k)


def m_success(m: Metric, t: Topic) -> float:
    return 1.0 if relret(t, m.rel, m.k) > 0 else 0.0


def m_best(m: Metric, t: Topic) -> float:
    judged = [g for g in t.grades if g >= 0]
    if not judged or max(judged) < m.rel:
        return 0.0
    return 1.0 if max(judged) in top(t.labels, m.k) else 0.0


def m_r(m: Metric, t: Topic) -> float:
    return div(relret(t, m.rel, m.k), n_rel(t, m.rel))


def m_f(m: Metric, t: Topic) -> float:
    hits = relret(t, m.rel, m.k)
    return f_beta(hits, hits / m.k, div(hits, n_rel(t, m.rel)), float(m.param("beta")))


def m_setp(m: Metric, t: Topic) -> float:
    return div(relret(t, m.rel), len(t.labels))


def m_setr(m: Metric, t: Topic) -> float:
    return div(relret(t, m.rel), n_rel(t, m.rel))


def m_setrelp(m: Metric, t: Topic) -> float:
    return div(relret(t, m.rel), min(len(t.labels), n_rel(t, m.rel)))


def m_setap(m: Metric, t: Topic) -> float:
    hits = relret(t, m.rel)
    return div(hits * hits, len(t.labels) * n_rel(t, m.rel))


def m_setf(m: Metric, t: Topic) -> float:
    hits = relret(t, m.rel)
    return f_beta(
        hits,
        div(hits, len(t.labels)),
        div(hits, n_rel(t, m.rel)),
        float(m.param("beta")),
    )


def m_utility(m: Metric, t: Topic) -> float:
    a = relret(t, m.rel)
    n = len(t.labels)
    big_r = n_rel(t, m.rel)
    b, c, d = n - a, big_r - a, float(m.param("collection")) + a - n - big_r
    p = m.param
    return (
        float(p("rel_ret")) * a
        + float(p("nonrel_ret")) * b
        + float(p("rel_nonret")) * c
        + float(p("nonrel_nonret")) * d
    )


def m_numq(m: Metric, t: Topic) -> float:
    return 1.0


def m_numret(m: Metric, t: Topic) -> float:
    return float(len(top(t.labels, m.k)))


def m_numrel(m: Metric, t: Topic) -> float:
    return float(n_rel(t, m.rel))


def m_numrelret(m: Metric, t: Topic) -> float:
    return float(relret(t, m.rel, m.k))


def m_share(m: Metric, t: Topic) -> float:
    # without a document slice, the slice is every document
    return len(top(t.labels, m.k)) / m.k


def m_relshare(m: Metric, t: Topic) -> float:
    # without a document slice: all of the relevant documents, if any
    return 1.0 if n_rel(t, m.rel) > 0 else 0.0


def m_numnonreljudgedret(m: Metric, t: Topic) -> float:
    return float(sum(1 for x in t.labels if 0 <= x < m.rel))


def m_ap(m: Metric, t: Topic) -> float:
    norm = m.param("norm")
    if norm == "R" or (norm == "min_R_k" and m.k is None):
        denominator = n_rel(t, m.rel)
    elif norm == "min_R_k":
        denominator = min(n_rel(t, m.rel), int(m.k))
    else:  # relret
        denominator = relret(t, m.rel, m.k)
    return div(precision_sum(t, m.rel, m.k), denominator)


def m_gmap(m: Metric, t: Topic) -> float:
    return div(precision_sum(t, m.rel, None), n_rel(t, m.rel))


def m_yaap(m: Metric, t: Topic) -> float:
    s = precision_sum(t, m.rel, None)
    return math.log((1 + s) / (1 + n_rel(t, m.rel) - s))


def m_infap(m: Metric, t: Topic) -> float:
    total = 0.0
    r = nr = u = 0  # relevant, judged non-relevant, pooled-unjudged above
    for i, x in enumerate(t.labels, start=1):
        j = i - 1
        if x >= m.rel:
            if j == 0:
                total += 1.0
            else:
                total += 1 / (j + 1) + (j / (j + 1)) * ((r + nr + u) / j) * (
                    (r + EPS) / (r + nr + 2 * EPS)
                )
            r += 1
        elif x >= 0:
            nr += 1
        elif x == UNJUDGED:
            u += 1
    return div(total, n_rel(t, m.rel))


def m_rr(m: Metric, t: Topic) -> float:
    for i, x in enumerate(top(t.labels, m.k), start=1):
        if x >= m.rel:
            return 1.0 / i
    return 0.0


def m_bpref(m: Metric, t: Topic) -> float:
    big_r = n_rel(t, m.rel)
    big_n = sum(1 for g in t.grades if 0 <= g < m.rel)
    total, nr = 0.0, 0
    for x in t.labels:
        if x < 0:
            continue  # NONPOOL and UNJUDGED are skipped
        if x >= m.rel:
            total += 1.0 if nr == 0 else 1.0 - min(nr, big_r) / min(big_n, big_r)
        else:
            nr += 1
    return div(total, big_r)


def m_bing(m: Metric, t: Topic) -> float:
    total, found = 0.0, 0
    for i, x in enumerate(t.labels, start=1):
        if x >= m.rel:
            found += 1
            total += 1 / math.log2(2 + i - found)
    return div(total, n_rel(t, m.rel))


def m_cg(m: Metric, t: Topic) -> float:
    dcg, gains = gain_params(m)
    return sum(gain(x, dcg, gains) for x in top(t.labels, m.k))


def m_dcg(m: Metric, t: Topic) -> float:
    dcg, gains = gain_params(m)
    return dcg_of([gain(x, dcg, gains) for x in t.labels], m.k)


def m_idcg(m: Metric, t: Topic) -> float:
    dcg, gains = gain_params(m)
    return dcg_of(ideal(t, dcg, gains), m.k)


def m_ndcg(m: Metric, t: Topic) -> float:
    dcg, gains = gain_params(m)
    return div(
        dcg_of([gain(x, dcg, gains) for x in t.labels], m.k),
        dcg_of(ideal(t, dcg, gains), m.k),
    )


def m_ndcgrel(m: Metric, t: Topic) -> float:
    dcg, gains = gain_params(m)
    values = [gain(x, dcg, gains) for x in t.labels]
    best = ideal(t, dcg, gains)
    rp = len(best)
    total, found = 0.0, 0
    for i, g in enumerate(values, start=1):
        if g > 0:
            found += 1
            total += div(dcg_of(values, i), dcg_of(best, min(i, rp)))
    total += (rp - found) * div(dcg_of(values), dcg_of(best))
    return div(total, rp) if total > 0 else 0.0


def m_rndcg(m: Metric, t: Topic) -> float:
    if n_rel(t, m.rel) == 0:
        return 0.0
    dcg, gains = gain_params(m)
    values = [gain(x, dcg, gains) for x in t.labels]
    best = ideal(t, dcg, gains)
    rp, n = len(best), len(values)
    terms = [
        div(dcg_of(values, k), dcg_of(best, k))
        for k in range(1, rp + 1)
        if best[k - 1] != (best[k] if k < rp else 0.0)
    ]
    if n > rp + 1:
        terms.append(div(dcg_of(values), dcg_of(best)))
    return sum(terms) / len(terms) if terms else math.nan


def m_g(m: Metric, t: Topic) -> float:
    dcg, gains = gain_params(m)
    best = ideal(t, dcg, gains)
    s = c = total = 0.0
    for i, x in enumerate(t.labels, start=1):
        g = gain(x, dcg, gains)
        s += g
        c += max(best[i - 1] if i <= len(best) else 0.0, 1.0)
        if g != 0:
            total += g / math.log2(2 + c - s)
    return div(total, sum(best))


def m_err(m: Metric, t: Topic) -> float:
    max_rel = int(m.param("max_rel"))
    gmax = max_rel if max_rel > 0 else t.max_grade
    total, reach = 0.0, 1.0
    for r, x in enumerate(top(t.labels, m.k), start=1):
        stop = (2.0 ** min(x, gmax) - 1) / 2.0**gmax if x > 0 else 0.0
        total += reach * stop / r
        reach *= 1 - stop
    return total


def rbp_gains(m: Metric, t: Topic) -> dict[int, float]:
    """trec_eval 10's rbp gain table, rescaled to [0, 1] when it leaves it."""
    user = dict(m.param("gains"))
    judged = [g for g in t.grades if g >= 0]
    table = {
        level: gain(level, "log2", user) for level in range(max(judged, default=-1) + 1)
    }
    table.update(user)
    low, high = min(table.values(), default=0.0), max(table.values(), default=0.0)
    if low < 0 or high > 1:
        table = {lv: div(g - low, high - low) for lv, g in table.items()}
    return table


def m_rbp(m: Metric, t: Topic) -> float:
    p = float(m.param("p"))
    table = rbp_gains(m, t)
    return (1 - p) * sum(
        table.get(x, 0.0) * p ** (i - 1)
        for i, x in enumerate(top(t.labels, m.k), start=1)
    )


def m_rbpresidual(m: Metric, t: Topic) -> float:
    p = float(m.param("p"))
    if not any(x < 0 for x in t.labels):
        return 0.0
    return p ** len(t.labels) + (1 - p) * sum(
        p ** (i - 1) for i, x in enumerate(t.labels, start=1) if x < 0
    )


def m_iprec(m: Metric, t: Topic) -> float:
    return iprec(t, m.rel, float(m.k), str(m.param("compat")))


def m_11pt(m: Metric, t: Topic) -> float:
    points = m.param("points")
    values = [iprec(t, m.rel, p, str(m.param("compat"))) for p in points]
    return sum(values) / len(values) if values else 0.0


def m_judged(m: Metric, t: Topic) -> float:
    shown = top(t.labels, m.k)
    return div(sum(1 for x in shown if x >= 0), len(shown))


def m_unjudged(m: Metric, t: Topic) -> float:
    return sum(1 for x in top(t.labels, m.k) if x < 0) / m.k


# --- C/W/L user models (cwl_eval) and compatibility --------------------------

CWL_DEPTH = 1000  # cwl_eval's max_n: rankings cut and padded to it


def cwl_gains(m: Metric, t: Topic) -> list[float]:
    """Grades scaled to [0, 1] by min_rel and max_rel, padded with 0 to CWL_DEPTH."""
    low = int(m.param("min_rel"))
    high = int(m.param("max_rel")) or t.max_grade
    gains = [
        0.0 if x < 0 or high <= low else (min(max(x, low), high) - low) / (high - low)
        for x in t.labels[:CWL_DEPTH]
    ]
    return gains + [0.0] * (CWL_DEPTH - len(gains))


def cwl_value(gains: Sequence[float], cont: Sequence[float]) -> float:
    """Expected gain per document: weights prod_{j<i} C(j), normalised."""
    weights, reach = [], 1.0
    for c in cont:
        weights.append(reach)
        reach *= c
    return sum(w * g for w, g in zip(weights, gains, strict=True)) / sum(weights)


def running(gains: Sequence[float]) -> list[float]:
    total, out = 0.0, []
    for g in gains:
        total += g
        out.append(total)
    return out


def m_sdcg(m: Metric, t: Topic) -> float:
    gains = cwl_gains(m, t)
    cont = [
        math.log2(i + 1) / math.log2(i + 2) if i < m.k else 0.0
        for i in range(1, CWL_DEPTH + 1)
    ]
    return cwl_value(gains, cont)


def m_insq(m: Metric, t: Topic) -> float:
    tt = float(m.param("T"))
    cont = [((i + 2 * tt - 1) / (i + 2 * tt)) ** 2 for i in range(1, CWL_DEPTH + 1)]
    return cwl_value(cwl_gains(m, t), cont)


def m_inst(m: Metric, t: Topic) -> float:
    tt = float(m.param("T"))
    gains = cwl_gains(m, t)
    cont = []
    for i, cg in enumerate(running(gains), start=1):
        left = tt - cg
        cont.append(((i + tt + left - 1) / (i + tt + left)) ** 2)
    return cwl_value(gains, cont)


def m_nerr8(m: Metric, t: Topic) -> float:
    gains = cwl_gains(m, t)
    cont = [1 - g if i < m.k else 0.0 for i, g in enumerate(gains, start=1)]
    return cwl_value(gains, cont)


def m_nerr9(m: Metric, t: Topic) -> float:
    gains = cwl_gains(m, t)
    cont = [
        i / (i + 1) * (1 - g) if i < m.k else 0.0 for i, g in enumerate(gains, start=1)
    ]
    return cwl_value(gains, cont)


def m_nerr10(m: Metric, t: Topic) -> float:
    gains = cwl_gains(m, t)
    p = float(m.param("p"))
    return cwl_value(gains, [p * (1 - g) for g in gains])


def m_nerr11(m: Metric, t: Topic) -> float:
    tt = float(m.param("T"))
    gains = cwl_gains(m, t)
    cont = [
        ((i + 2 * tt - 1) / (i + 2 * tt)) ** 2 * (1 - g)
        for i, g in enumerate(gains, start=1)
    ]
    return cwl_value(gains, cont)


def m_bpm(m: Metric, t: Topic) -> float:
    tt = float(m.param("T"))
    gains = cwl_gains(m, t)
    cont = [
        1.0 if cg < tt and i < m.k else 0.0
        for i, cg in enumerate(running(gains), start=1)
    ]
    return cwl_value(gains, cont)


def rbo(a: Sequence[object], b: Sequence[object], p: float, depth: int) -> float:
    """Rank-biased overlap of two lists to ``depth``, normalised by its weights."""
    seen_a: set[object] = set()
    seen_b: set[object] = set()
    score = norm = 0.0
    weight = 1.0
    for d in range(depth):
        if d < len(a):
            seen_a.add(a[d])
        if d < len(b):
            seen_b.add(b[d])
        score += weight * len(seen_a & seen_b) / (d + 1)
        norm += weight
        weight *= p
    return score / norm if norm else 0.0


def m_compat(m: Metric, t: Topic) -> float:
    """RBO with the ideal ranking: grade descending, within a grade the
    retrieved documents first in rank order (the most compatible ideal)."""
    p = float(m.param("p"))
    ranking = [("ranked", i) for i in range(len(t.labels))]
    ideal: list[object] = []
    for g in sorted({x for x in t.grades if x > 0}, reverse=True):
        found = [("ranked", i) for i, x in enumerate(t.labels) if x == g]
        unfound = sum(1 for x in t.grades if x == g) - len(found)
        ideal += found + [("unranked", g, j) for j in range(unfound)]
    depth = max(len(ranking), len(ideal))
    score = rbo(ranking, ideal, p, depth)
    best = rbo(ideal, ideal, p, depth)
    return score / best if m.param("normalize") and best > 0 else score


# --- diversity (ndeval; Clarke et al. 2008, 2009; Agrawal et al. 2009) -----------


def relevant_intents(t: Topic, rel: int) -> set[str]:
    """The query's intents with a document graded at least ``rel``: M of them."""
    return {i for grades in t.intents.values() for i, g in grades.items() if g >= rel}


def novelty_gains(
    ranked: Sequence[Mapping[str, int]], rel: int, alpha: float
) -> list[float]:
    """G(r) = sum_i J(d_r, i) (1 - alpha)^(relevant to i above r), rank by rank."""
    seen: dict[str, int] = {}
    out = []
    for grades in ranked:
        gain = 0.0
        for intent in sorted(grades):
            if grades[intent] >= rel:
                gain += (1.0 - alpha) ** seen.get(intent, 0)
                seen[intent] = seen.get(intent, 0) + 1
        out.append(gain)
    return out


def greedy_gains(t: Topic, rel: int, alpha: float, k: int) -> list[float]:
    """ndeval's ideal: at each rank the document of highest novelty gain
    (ties: highest doc_id in bytes), until none relevant is left."""
    left = {
        doc: sorted(i for i, g in grades.items() if g >= rel)
        for doc, grades in t.intents.items()
    }
    left = {doc: found for doc, found in left.items() if found}
    seen: dict[str, int] = {}
    out: list[float] = []
    while left and len(out) < k:

        def gain(doc: str) -> float:
            return sum((1.0 - alpha) ** seen.get(i, 0) for i in left[doc])

        best = max(left, key=lambda doc: (gain(doc), doc.encode()))
        out.append(gain(best))
        for intent in left.pop(best):
            seen[intent] = seen.get(intent, 0) + 1
    return out


def discounted(gains: Sequence[float], k: int, by: str) -> float:
    return sum(
        g / (math.log2(r + 1) if by == "log2" else r)
        for r, g in enumerate(gains[:k], start=1)
    )


def _diversity(m: Metric) -> tuple[int, float, int]:
    assert m.k is not None
    return m.rel, float(m.param("alpha")), int(m.k)


def m_alpha_ndcg(m: Metric, t: Topic) -> float:
    rel, alpha, k = _diversity(m)
    gains = novelty_gains(t.ranked_intents, rel, alpha)
    return div(
        discounted(gains, k, "log2"),
        discounted(greedy_gains(t, rel, alpha, k), k, "log2"),
    )


def m_nerr_ia(m: Metric, t: Topic) -> float:
    rel, alpha, k = _diversity(m)
    gains = novelty_gains(t.ranked_intents, rel, alpha)
    return div(
        discounted(gains, k, "rank"),
        discounted(greedy_gains(t, rel, alpha, k), k, "rank"),
    )


def _ideal_ideal(alpha: float, k: int, by: str) -> float:
    return discounted([(1.0 - alpha) ** r for r in range(k)], k, by)


def m_alpha_dcg(m: Metric, t: Topic) -> float:
    rel, alpha, k = _diversity(m)
    n = len(relevant_intents(t, rel))
    gains = novelty_gains(t.ranked_intents, rel, alpha)
    return div(discounted(gains, k, "log2"), n * _ideal_ideal(alpha, k, "log2"))


def m_err_ia(m: Metric, t: Topic) -> float:
    rel, alpha, k = _diversity(m)
    n = len(relevant_intents(t, rel))
    gains = novelty_gains(t.ranked_intents, rel, alpha)
    return div(discounted(gains, k, "rank"), n * _ideal_ideal(alpha, k, "rank"))


def m_nrbp(m: Metric, t: Topic) -> float:
    rel, alpha, beta = m.rel, float(m.param("alpha")), float(m.param("beta"))
    n = len(relevant_intents(t, rel))
    gains = novelty_gains(t.ranked_intents, rel, alpha)
    total = sum(g * beta ** (r - 1) for r, g in enumerate(gains, start=1))
    return div(total * (1.0 - (1.0 - alpha) * beta), n)


def m_nnrbp(m: Metric, t: Topic) -> float:
    rel, alpha, beta = m.rel, float(m.param("alpha")), float(m.param("beta"))
    gains = novelty_gains(t.ranked_intents, rel, alpha)
    ideal = greedy_gains(t, rel, alpha, len(t.intents))  # the whole ideal
    return div(
        sum(g * beta ** (r - 1) for r, g in enumerate(gains, start=1)),
        sum(g * beta ** (r - 1) for r, g in enumerate(ideal, start=1)),
    )


def m_ap_ia(m: Metric, t: Topic) -> float:
    rel = m.rel
    found = relevant_intents(t, rel)
    total = 0.0
    for intent in found:
        n_rel_i = sum(1 for g in t.intents.values() if g.get(intent, -9) >= rel)
        hits, ap = 0, 0.0
        for r, grades in enumerate(t.ranked_intents, start=1):
            if grades.get(intent, -9) >= rel:
                hits += 1
                ap += hits / r
        total += ap / n_rel_i
    return div(total, len(found))


def m_p_ia(m: Metric, t: Topic) -> float:
    assert m.k is not None
    rel, k = m.rel, int(m.k)
    hits = sum(
        1 for grades in t.ranked_intents[:k] for g in grades.values() if g >= rel
    )
    return div(hits, k * len(relevant_intents(t, rel)))


def m_strecall(m: Metric, t: Topic) -> float:
    assert m.k is not None
    rel, k = m.rel, int(m.k)
    covered = {
        i for grades in t.ranked_intents[:k] for i, g in grades.items() if g >= rel
    }
    return div(len(covered), len(relevant_intents(t, rel)))


def m_ndcg_ia(m: Metric, t: Topic) -> float:
    assert m.k is not None
    k = int(m.k)
    graded = relevant_intents(t, 1)
    total = 0.0
    for intent in graded:
        gains = [max(g.get(intent, 0), 0) for g in t.ranked_intents]
        ideal = sorted(
            (max(g.get(intent, 0), 0) for g in t.intents.values()), reverse=True
        )
        total += div(dcg_of(gains, k), dcg_of(ideal, k))
    return div(total, len(graded))


#: Registry name -> oracle function.
ORACLE: dict[str, Callable[[Any, Topic], float]] = {
    "P": m_p,
    "RelP": m_relp,
    "Rprec": m_rprec,
    "Success": m_success,
    "Best": m_best,
    "R": m_r,
    "F": m_f,
    "SetP": m_setp,
    "SetR": m_setr,
    "SetRelP": m_setrelp,
    "SetAP": m_setap,
    "SetF": m_setf,
    "Utility": m_utility,
    "NumQ": m_numq,
    "NumRet": m_numret,
    "Share": m_share,
    "RelShare": m_relshare,
    "NumRel": m_numrel,
    "NumRelRet": m_numrelret,
    "Hits": m_numrelret,
    "NumNonRelJudgedRet": m_numnonreljudgedret,
    "AP": m_ap,
    "gmAP": m_gmap,
    "yaap": m_yaap,
    "infAP": m_infap,
    "RR": m_rr,
    "Bpref": m_bpref,
    "gmBpref": m_bpref,
    "binG": m_bing,
    "CG": m_cg,
    "DCG": m_dcg,
    "IDCG": m_idcg,
    "nDCG": m_ndcg,
    "nDCGRel": m_ndcgrel,
    "Rndcg": m_rndcg,
    "G": m_g,
    "ERR": m_err,
    "RBP": m_rbp,
    "RBPResidual": m_rbpresidual,
    "IPrec": m_iprec,
    "11pt": m_11pt,
    "Judged": m_judged,
    "Unjudged": m_unjudged,
    "alpha_nDCG": m_alpha_ndcg,
    "alpha_DCG": m_alpha_dcg,
    "ERR_IA": m_err_ia,
    "nERR_IA": m_nerr_ia,
    "NRBP": m_nrbp,
    "nNRBP": m_nnrbp,
    "AP_IA": m_ap_ia,
    "P_IA": m_p_ia,
    "StRecall": m_strecall,
    "nDCG_IA": m_ndcg_ia,
    "SDCG": m_sdcg,
    "INSQ": m_insq,
    "INST": m_inst,
    "NERR8": m_nerr8,
    "NERR9": m_nerr9,
    "NERR10": m_nerr10,
    "NERR11": m_nerr11,
    "BPM": m_bpm,
    "Compat": m_compat,
}


def value(m: Metric, t: Topic) -> float:
    """The oracle's value of metric ``m`` on topic ``t``."""
    return ORACLE[m.name](m, t)


def evaluate(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, Mapping[str, Mapping[str, float]]],
    metrics: Sequence[Metric],
    *,
    depth: int | None = None,
    missing: str = "zero",
    intents: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None,
) -> dict[tuple[str, str, str], float]:
    """Every (run_id, query_id, metric) value, as ``evaluate`` should give it.

    ``intents[query][doc][intent]`` are the judgments per intent the
    diversity measures read (each document's grade in ``qrels`` is its
    highest over them).

    ``missing="zero"``: every run x every qrels query, a query the run did not
    answer scored as an empty ranking with NaN turned into 0. ``"skip"``:
    only the queries the run answered. Run queries without qrels are ignored.
    """
    max_grade = max(
        (UNJUDGED if g < 0 else g for d in qrels.values() for g in d.values()),
        default=UNJUDGED,
    )
    out: dict[tuple[str, str, str], float] = {}
    for run_id, answered in runs.items():
        for query, judged in qrels.items():
            absent = query not in answered
            if absent and missing == "skip":
                continue
            topics = {
                flag: topic(
                    answered.get(query),
                    judged,
                    max_grade=max_grade,
                    depth=depth,
                    judged_only=flag,
                    intents=(intents or {}).get(query),
                )
                for flag in (False, True)
            }
            for m in metrics:
                v = value(m, topics[m.judged_only])
                if absent and math.isnan(v):
                    v = 0.0
                out[(run_id, query, str(m))] = v
    return out
