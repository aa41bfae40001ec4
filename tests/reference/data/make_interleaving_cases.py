"""Make ``interleaving_mpkato.json``: mpkato/interleaving's answers on small cases.

mpkato's ``interleaving`` package (GitHub ``mpkato/interleaving``, MIT, last
commit 7907f7d, 2018; not on PyPI) is the oracle: run this script with an
interpreter that can import it (numpy, scipy and pulp installed)::

    python make_interleaving_cases.py PATH/TO/mpkato-interleaving

The JSON holds, for the test without the oracle:

``distributions``
    the test vectors of mpkato's ``tests/test_{team_draft,balanced}.py``
    and random small cases: lists, ``k``, and the counts of each
    interleaved list (with its team of every position for team draft) in
    ``n`` samples of mpkato's ``interleave()`` (``np.random.seed`` fixed).
    Team draft and probabilistic fill from the other lists when one runs
    out (our ``on_exhaustion="fill"``); balanced stops (``"stop"``).
``scores``
    lists, an interleaved list mpkato made, a set of clicked positions
    (0-based, as mpkato takes them), and mpkato's ``compute_scores`` and
    ``evaluate`` (pairs of ranker indices, winner first); for
    probabilistic the unnormalised masses of ranker 0 and 1 winning
    (``Probabilistic.compute_scores``, two-ranker branch, tau = 3).
"""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

SAMPLES = 20_000
OUT = Path(__file__).with_name("interleaving_mpkato.json")


def main(source: str) -> None:
    sys.path.insert(0, source)
    import interleaving as il

    np.random.seed(20)
    rng = np.random.default_rng(20)

    def random_lists(n_lists: int, lo: int, hi: int) -> list[list[int]]:
        pool = int(rng.integers(hi, 2 * hi + 1))
        return [
            [int(d) for d in rng.permutation(pool)[: int(rng.integers(lo, hi + 1))]]
            for _ in range(n_lists)
        ]

    fixed = {
        "team_draft": [
            ([[1, 2], [2, 3]], 2),
            ([[1, 2], [2, 3]], 3),
            ([[1, 2], [2, 3]], 4),
            ([[1, 2], [3, 4]], 2),
            ([[1, 2], [3, 4]], 3),
            ([[1, 2, 3], [2, 3, 1]], 3),
        ],
        "team_draft_multileave": [
            ([[1, 2], [2, 3], [3, 4]], 2),
            ([[1, 2], [3, 4], [5, 6]], 2),
        ],
        "balanced": [
            ([[1, 2], [2, 3]], 2),
            ([[1, 2], [3, 4]], 2),
            ([[1, 2], [2, 3]], 3),
            ([[1, 2], [3, 4]], 3),
            ([[1, 2, 3], [2, 3, 1]], 3),
        ],
        "probabilistic": [
            ([[0, 1, 2], [0, 1, 2]], 1),
            ([[0, 1], [1, 2]], 1),
            ([[1, 2, 3], [2, 3, 1]], 3),
            ([[0, 1], [0, 1, 2]], 3),
        ],
    }
    classes = {
        "team_draft": il.TeamDraft,
        "team_draft_multileave": il.TeamDraft,
        "balanced": il.Balanced,
        "probabilistic": il.Probabilistic,
    }
    cases = {m: list(v) for m, v in fixed.items()}
    for _ in range(6):
        cases["team_draft"].append((random_lists(2, 2, 5), int(rng.integers(2, 7))))
        cases["balanced"].append((random_lists(2, 2, 5), int(rng.integers(2, 7))))
        cases["probabilistic"].append((random_lists(2, 2, 4), int(rng.integers(2, 5))))
    for _ in range(3):
        cases["team_draft_multileave"].append(
            (random_lists(3, 2, 4), int(rng.integers(2, 6)))
        )

    distributions = []
    for method, items in cases.items():
        for lists, k in items:
            maker = classes[method](lists, max_length=k)
            counts: Counter[str] = Counter()
            for _ in range(SAMPLES):
                ranking = maker.interleave()
                key = ",".join(str(d) for d in ranking)
                if method.startswith("team_draft"):
                    team_of = {d: t for t, docs in ranking.teams.items() for d in docs}
                    key += "|" + ",".join(str(team_of[d]) for d in ranking)
                counts[key] += 1
            distributions.append(
                {
                    "method": method,
                    "lists": lists,
                    "k": k,
                    "n": SAMPLES,
                    "counts": dict(sorted(counts.items())),
                }
            )

    scores = []
    for method in ("team_draft", "team_draft_multileave", "balanced", "probabilistic"):
        for i in range(40):
            n_lists = 3 if method == "team_draft_multileave" else 2
            first = [[1, 2], [2, 3], [3, 4]][:n_lists]
            lists = random_lists(n_lists, 1, 5) if i else first
            k = int(rng.integers(1, 7))
            ranking = classes[method](lists, max_length=k).interleave()
            positions = list(range(len(ranking)))
            subsets = [
                list(c)
                for r in range(len(positions) + 1)
                for c in itertools.combinations(positions, r)
            ]
            for clicks in subsets[:16]:
                case = {
                    "method": method,
                    "lists": lists,
                    "k": k,
                    "ranking": list(ranking),
                    "clicks": clicks,
                    "winners": sorted(
                        list(p) for p in classes[method].evaluate(ranking, clicks)
                    ),
                }
                if method.startswith("team_draft"):
                    team_of = {d: t for t, docs in ranking.teams.items() for d in docs}
                    case["teams"] = [team_of[d] for d in ranking]
                result = classes[method].compute_scores(ranking, clicks)
                case["scores"] = [float(result[j]) for j in range(n_lists)]
                scores.append(case)

    OUT.write_text(
        json.dumps(
            {
                "about": (
                    "mpkato/interleaving (GitHub, commit 7907f7d) run by "
                    "make_interleaving_cases.py; see its docstring"
                ),
                "distributions": distributions,
                "scores": scores,
            },
            separators=(",", ":"),
        )
        + "\n"
    )


if __name__ == "__main__":
    main(sys.argv[1])
