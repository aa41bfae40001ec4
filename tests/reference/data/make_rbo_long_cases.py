"""Write rbo_long_cases.parquet: long rankings, so RBO's depth horizon is exercised.

160 pairs of 40 to 400 tie groups (seed 20261125), ``p`` in {0.3, 0.5, 0.7,
0.8}, so that most rankings run past the kernel's horizon (the depth past
which RBO's remaining weight is below 2**-64: 37 for p = 0.3, 199 for
p = 0.8). Kinds: random, similar (local swaps, other length), prefix_cut
(one ranking a prefix of the other, cut through a tie group), identical and
no_ties. Values are those of Corsi & Urbano's reference code
(``rbo/Python/rbo.py`` of github.com/julian-urbano/sigir2024-rbo, commit
0338fd9, MIT), run unchanged: it needs NumPy < 2 (it calls ``np.in1d``).
Same layout as rbo_cases.parquet (make_rbo_cases.py).

    python make_rbo_long_cases.py PATH/TO/sigir2024-rbo/rbo/Python/rbo.py
"""

import importlib.util
import random
import sys
import warnings
from pathlib import Path

import polars as pl

PS = [0.3, 0.5, 0.7, 0.8]
rng = random.Random(20261125)


def group_up(items: list[str], tie_rate: float, max_group: int = 6) -> list[list[str]]:
    out, i = [], 0
    while i < len(items):
        k = rng.randint(2, max_group) if rng.random() < tie_rate else 1
        out.append(items[i : i + k])
        i += k
    return out


def pair() -> tuple[str, list[list[str]], list[list[str]]]:
    kind = rng.choice(["random", "similar", "prefix_cut", "identical", "no_ties"])
    lx, ly = rng.randint(40, 400), rng.randint(40, 400)
    tie = rng.choice([0.0, 0.2, 0.5, 0.9])
    if kind == "random":
        pool = [f"d{k}" for k in range(max(lx, ly) + rng.randint(0, 100))]
        return (
            kind,
            group_up(rng.sample(pool, lx), tie),
            group_up(rng.sample(pool, ly), tie),
        )
    if kind == "similar":
        pool = [f"d{k}" for k in range(max(lx, ly) + 50)]
        xi = rng.sample(pool, lx)
        yi = list(xi)
        for _ in range(lx // 3):
            a = rng.randrange(len(yi))
            b = min(len(yi) - 1, a + rng.randint(1, 5))
            yi[a], yi[b] = yi[b], yi[a]
        extra = [d for d in pool if d not in set(xi)]
        return kind, group_up(xi, tie), group_up((yi + extra)[:ly], tie)
    if kind == "prefix_cut":
        groups = group_up([f"d{k}" for k in range(lx)], max(tie, 0.5))
        m = rng.randint(1, sum(map(len, groups)))
        prefix, seen = [], 0
        for group in groups:
            if seen >= m:
                break
            prefix.append(list(group[: m - seen]))
            seen += len(prefix[-1])
        return (kind, groups, prefix) if rng.random() < 0.5 else (kind, prefix, groups)
    if kind == "identical":
        groups = group_up([f"d{k}" for k in range(lx)], tie)
        return kind, groups, [list(g) for g in groups]
    pool = [f"d{k}" for k in range(max(lx, ly) + 20)]
    return (
        kind,
        [[i] for i in rng.sample(pool, lx)],
        [[i] for i in rng.sample(pool, ly)],
    )


def main(reference: str) -> None:
    spec = importlib.util.spec_from_file_location("reference_rbo", reference)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def value(
        x: list[list[str]], y: list[list[str]], p: float, ties: str, score: str
    ) -> float:
        if ties == "none":  # every group broken in the order listed
            rx, ry, ties = [i for g in x for i in g], [i for g in y for i in g], "w"
        else:  # an untied item is a string, a tie group a set
            rx = [g[0] if len(g) == 1 else set(g) for g in x]
            ry = [g[0] if len(g) == 1 else set(g) for g in y]
        return float(module.rbo(rx, ry, p, ties=ties, score=(score,))[score])

    rows = []
    for case in range(160):
        kind, x, y = pair()
        p = rng.choice(PS)
        row = {"case_id": case, "kind": kind, "p": p, "x": x, "y": y}
        for ties in ("a", "b", "w", "none"):
            for score in ("ext", "min", "max", "res"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    row[f"{ties}_{score}"] = value(x, y, p, ties, score)
        rows.append(row)
    pl.DataFrame(rows).write_parquet(
        Path(__file__).with_name("rbo_long_cases.parquet"),
        compression="zstd",
        compression_level=19,
    )


if __name__ == "__main__":
    main(sys.argv[1])
