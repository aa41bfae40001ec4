"""Interleaving the slow, plain way: exact distributions and credits for tiny lists.

An independent reading of the published algorithms, one search at a time
with Python lists and exact fractions, for the tests of the vectorised
``ireval_df.online.interleaving``: every possible interleaved list with its
probability, and each credit rule as written in the papers (probabilistic
interleaving by summing over all ``2^k`` assignments, not by the module's
dynamic programming).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

Lists = list[list[str]]


def team_draft_lists(
    lists: Lists, k: int, *, stop: bool = False, prefix: bool = False
) -> dict[tuple[tuple[str, ...], tuple[int, ...]], Fraction]:
    """Every (list, teams) team draft can show, with its probability.

    Each pick: among the rankers with an unshown document left, those with
    the fewest picks draw lots (uniformly); the winner shows its best
    unshown document. ``stop``: end as soon as any ranker has none left.
    ``prefix``: first the leading documents all lists agree on (team -1).
    """
    out: dict[tuple[tuple[str, ...], tuple[int, ...]], Fraction] = {}
    start_docs: list[str] = []
    if prefix:
        for i in range(min(len(x) for x in lists)):
            if len({x[i] for x in lists}) > 1 or len(start_docs) == k:
                break
            start_docs.append(lists[0][i])

    def walk(docs: list[str], teams: list[int], prob: Fraction) -> None:
        left = [[d for d in x if d not in docs] for x in lists]
        able = [r for r, x in enumerate(left) if x]
        done = len(docs) >= k or not able or (stop and len(able) < len(lists))
        if done:
            key = (tuple(docs), tuple(teams))
            out[key] = out.get(key, Fraction(0)) + prob
            return
        sizes = {r: teams.count(r) for r in able}
        fewest = min(sizes.values())
        lots = [r for r in able if sizes[r] == fewest]
        for r in lots:
            walk([*docs, left[r][0]], [*teams, r], prob / len(lots))

    walk(start_docs, [-1] * len(start_docs), Fraction(1))
    return out


def balanced_lists(
    a: list[str], b: list[str], k: int, *, stop: bool = True
) -> dict[tuple[str, ...], Fraction]:
    """The two lists balanced interleaving can show (A leads, B leads)."""
    out: dict[tuple[str, ...], Fraction] = {}
    for a_first in (True, False):
        shown: list[str] = []
        ka = kb = 0
        while len(shown) < k:
            has_a, has_b = ka < len(a), kb < len(b)
            if not ((has_a and has_b) if stop else (has_a or has_b)):
                break
            if has_a and (not has_b or ka < kb or (ka == kb and a_first)):
                if a[ka] not in shown:
                    shown.append(a[ka])
                ka += 1
            else:
                if b[kb] not in shown:
                    shown.append(b[kb])
                kb += 1
        key = tuple(shown)
        out[key] = out.get(key, Fraction(0)) + Fraction(1, 2)
    return out


def softmax_probabilities(
    lists: Lists, shown: list[str], tau: float = 3.0
) -> list[list[float]]:
    """Per position of ``shown``, each ranker's probability of drawing that document.

    The softmax of a ranker is over its documents not shown above, weight
    ``rank ** -tau`` (rank from 1 in the ranker's full list).
    """
    out = []
    for j, doc in enumerate(shown):
        above = set(shown[:j])
        row = []
        for x in lists:
            mass = sum((i + 1) ** -tau for i, d in enumerate(x) if d not in above)
            row.append((x.index(doc) + 1) ** -tau / mass if doc in x else 0.0)
        out.append(row)
    return out


def probabilistic_lists(
    lists: Lists, k: int, tau: float = 3.0, *, stop: bool = False
) -> dict[tuple[str, ...], float]:
    """Every list probabilistic interleaving can show, with its probability."""
    out: dict[tuple[str, ...], float] = {}

    def walk(docs: list[str], prob: float) -> None:
        left = [[(i, d) for i, d in enumerate(x) if d not in docs] for x in lists]
        able = [r for r, x in enumerate(left) if x]
        if len(docs) >= k or not able or (stop and len(able) < len(lists)):
            out[tuple(docs)] = out.get(tuple(docs), 0.0) + prob
            return
        for r in able:
            mass = sum((i + 1) ** -tau for i, _ in left[r])
            for i, d in left[r]:
                walk([*docs, d], prob / len(able) * (i + 1) ** -tau / mass)

    walk([], 1.0)
    return out


def team_credit(teams: list[int], clicked: set[int], n_rankers: int) -> list[int]:
    """Clicks on each ranker's team (positions 0-based)."""
    return [sum(1 for j in clicked if teams[j] == r) for r in range(n_rankers)]


def balanced_credit(
    a: list[str], b: list[str], shown: list[str], clicked: set[int]
) -> list[int]:
    """Chapelle et al.'s rule: clicked documents within the top k* of each list."""
    if not clicked:
        return [0, 0]
    lowest = shown[max(clicked)]
    ranks = [x.index(lowest) + 1 for x in (a, b) if lowest in x]
    k_star = min(ranks)
    docs = {shown[j] for j in clicked}
    return [len(docs & set(a[:k_star])), len(docs & set(b[:k_star]))]


def probabilistic_credit(
    lists: Lists, shown: list[str], clicked: set[int], tau: float = 3.0
) -> list[float]:
    """P(each ranker gets more clicks), summed over every assignment, normalised."""
    p = softmax_probabilities(lists, shown, tau)
    wins = [0.0, 0.0]
    total = 0.0
    for assignment in itertools.product((0, 1), repeat=len(shown)):
        mass = 1.0
        for j, r in enumerate(assignment):
            mass *= p[j][r]
        if mass == 0.0:
            continue
        total += mass
        got = [sum(1 for j in clicked if assignment[j] == r) for r in (0, 1)]
        if got[0] > got[1]:
            wins[0] += mass
        elif got[1] > got[0]:
            wins[1] += mass
    return [w / total for w in wins]
