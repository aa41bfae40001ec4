"""Each known error of the peer RBO packages, and the value ireval_df gives instead.

The peers' outputs were recorded by running them (PyPI ``rbo`` 0.1.3; the
``rbo.py`` of github.com/dlukes/rbo at 620b84e) on these lists; the right
values are those of Corsi & Urbano's reference implementation
(github.com/julian-urbano/sigir2024-rbo, ``rbo/Python/rbo.py``), which
ireval_df matches (tests/reference/test_rbo_reference.py). docs/similarity.md
has the table.
"""

from __future__ import annotations

import polars as pl
import pytest

import ireval_df as ie


def frame(run_id: str, groups: list[list[str]]) -> pl.DataFrame:
    """A ranking given as tie groups, best first: equal scores within a group."""
    rows = [
        (run_id, "q", doc, float(len(groups) - i))
        for i, group in enumerate(groups)
        for doc in group
    ]
    return pl.DataFrame(
        rows, schema=["run_id", "query_id", "doc_id", "score"], orient="row"
    )


def ours(x: list[list[str]], y: list[list[str]], spec: str) -> float:
    """RBO of ranking x (the run) against y (the baseline)."""
    runs = pl.concat([frame("y", y), frame("x", x)])
    return float(ie.similarity(runs, [spec], baseline="y")["value"].item())


def single(*docs: str) -> list[list[str]]:
    return [[d] for d in docs]


# (peer, its call, its output, our spec, x, y, the reference value)
CASES = [
    ("PyPI rbo", "RankingSimilarity(x, y).rbo()  # p defaults to 1", 0.75,
     "RBO(p=0.9,ties=none)", single(*"abcde"), single(*"bacde"[:3], "e", "d"), 0.881775),
    ("PyPI rbo", "rbo(p=0.9): the prefix sum, no tail", 0.291285,
     "RBO(p=0.9,score=min,ties=none)", single(*"abcde"), single("b", "a", "c", "e", "d"), 0.5537639405522474),
    ("PyPI rbo", "rbo(p=0.9, ext=True) on uneven lists", 0.0,
     "RBO(p=0.9,ties=none)", single(*"abc"), single(*"xyzabc"), 0.339714),
    ("PyPI rbo", "rbo(p=0.9) on uneven lists", 0.0,
     "RBO(p=0.9,score=min,ties=none)", single(*"abc"), single(*"xyzabc"), 0.20195636433134842),
    ("PyPI rbo", "rbo_ext(p=0.9) with a tie broken one way", 0.955,
     "RBO(p=0.9)", [["a"], ["b", "c"], ["d"]], single("a", "c", "b", "d"), 0.9775),
    ("dlukes/rbo", "rbo(x, y, p=0.9)['ext']: above 1", 1.009660557142857,
     "RBO(p=0.9,ties=none)", single("i4", "i2", "i0", "i6", "i1", "i5", "i3"), single("i4"), 1.0),
    ("dlukes/rbo", "rbo(x, y, p=0.9)['ext'] with ties: above 1", 1.0051428571428571,
     "RBO(p=0.9,ties=w)", [["i0", "i3", "i4"], ["i1"], ["i2"]], [["i0", "i3", "i4"]], 1.0),
    ("dlukes/rbo", "min + res (the upper bound): above 1", 1.055,
     "RBO(p=0.9,score=max,ties=none)", single("i0", "i1"), single("i0"), 1.0),
    ("dlukes/rbo", "rbo(x, x)['min'] with a tie: depth counted in groups", 0.5225283643313484,
     "RBO(p=0.9,score=min,ties=w)", [["a"], ["b", "c"], ["d"]], [["a"], ["b", "c"], ["d"]], 0.6063711524417977),
    ("dlukes/rbo", "rbo(x, y, p=0.9)['ext'] on uneven lists", 0.2701465714285714,
     "RBO(p=0.9,ties=none)", single(*"abc"), single(*"xyzabc"), 0.339714),
]  # fmt: skip


@pytest.mark.parametrize(
    ("peer", "call", "peer_value", "spec", "x", "y", "right"),
    CASES,
    ids=[f"{c[0]}: {c[1]}" for c in CASES],
)
def test_we_give_the_reference_value_where_a_peer_errs(
    peer, call, peer_value, spec, x, y, right
) -> None:
    value = ours(x, y, spec)
    assert value == pytest.approx(right, abs=1e-12)
    assert abs(value - peer_value) > 1e-3, (peer, call)


def test_values_never_leave_the_unit_interval_where_dlukes_rbo_does() -> None:
    x, y = single("i4", "i2", "i0", "i6", "i1", "i5", "i3"), single("i4")
    for score in ("ext", "min", "max", "res"):
        assert 0.0 <= ours(x, y, f"RBO(score={score},ties=none)") <= 1.0 + 1e-15
