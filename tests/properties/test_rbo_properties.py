"""Properties of RBO on generated pairs of rankings with ties.

- Symmetry: the reference assigns the roles S and L by length (equal
  lengths: S = y) and, with equal lengths, every formula it uses is
  symmetric in S and L; so RBO(x, y) = RBO(y, x) for every score and ties
  treatment, up to rounding (our edge rules are symmetric too).
- Bounds: 0 <= min <= ext <= max <= 1 (the reference does not clamp, so up
  to rounding), and res = max - min.
"""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.test_rbo_reference import groups_frame

from ireval_df.similarity.rbo import RBO_SCORES, rbo

TOLERANCE = 1e-12
DOCS = [f"d{i}" for i in range(12)]
LISTS = pl.List(pl.List(pl.String))


@st.composite
def rankings(draw: st.DrawFn) -> list[list[str]]:
    """Up to 12 distinct documents, each tied with the one before or not."""
    docs = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=len(DOCS)))
    tied = draw(st.lists(st.booleans(), min_size=len(docs), max_size=len(docs)))
    groups: list[list[str]] = []
    for doc, with_previous in zip(docs, tied, strict=True):
        if with_previous and groups:
            groups[-1].append(doc)
        else:
            groups.append([doc])
    return groups


@settings(max_examples=40, deadline=None)
@given(
    pairs=st.lists(st.tuples(rankings(), rankings()), min_size=1, max_size=8),
    p=st.sampled_from([0.3, 0.5, 0.9, 0.98]),
    ties=st.sampled_from(["a", "b", "w", "none"]),
)
def test_rbo_is_symmetric_and_bounded(
    pairs: list[tuple[list[list[str]], list[list[str]]]], p: float, ties: str
) -> None:
    keys = pl.Series("key", range(len(pairs)))
    x = groups_frame(keys, pl.Series([a for a, _ in pairs], dtype=LISTS))
    y = groups_frame(keys, pl.Series([b for _, b in pairs], dtype=LISTS))
    frame = keys.to_frame()
    values = {}
    for score in RBO_SCORES:
        forward = rbo(x, y, frame, p=p, score=score, ties=ties)  # type: ignore[arg-type]
        backward = rbo(y, x, frame, p=p, score=score, ties=ties)  # type: ignore[arg-type]
        gap = (forward["value"] - backward["value"]).abs().max()
        assert isinstance(gap, float)
        assert gap <= TOLERANCE, (score, pairs)
        values[score] = forward["value"]
    low, ext, high = values["min"], values["ext"], values["max"]
    assert (low >= -TOLERANCE).all(), pairs
    assert (low <= ext + TOLERANCE).all(), pairs
    assert (ext <= high + TOLERANCE).all(), pairs
    assert (high <= 1 + TOLERANCE).all(), pairs
    assert ((values["res"] - (high - low)).abs() <= TOLERANCE).all(), pairs


# similarity() ranks without ordering the documents within a tie group (most
# of the cost of ranking): every measure must read the groups only, or order
# them itself (a cutoff through a group, ties broken). The rows of a run in
# another order rank tied documents in another order.
EVERY_MEASURE = [
    "RBO",
    "RBO(ties=b,score=min)",
    "RBO(ties=w,score=max)",
    "RBO(ties=none)",
    "RBO(p=0.5)@3",
    "RBO(ties=none)@3",
    "Tau",
    "Tau@4",
    "TauAP",
    "TauAP(ties=b,sym=true)@4",
    "Jaccard@3",
    "Overlap@3",
]


@settings(max_examples=40, deadline=None)
@given(
    scores=st.lists(
        st.tuples(
            st.sampled_from(["x", "y"]),
            st.sampled_from(["q1", "q2"]),
            st.sampled_from(DOCS),
            st.sampled_from([0.0, 1.0, 2.0]),
        ),
        min_size=1,
        max_size=40,
        unique_by=lambda row: row[:3],
    ),
    seed=st.integers(0, 2**16),
)
def test_measures_do_not_depend_on_the_row_order_within_ties(
    scores: list[tuple[str, str, str, float]], seed: int
) -> None:
    import warnings

    import ireval_df as ie

    run = pl.DataFrame(
        scores, schema=["run_id", "query_id", "doc_id", "score"], orient="row"
    ).sort("run_id")
    if run["run_id"].n_unique() < 2:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = ie.similarity(run, EVERY_MEASURE, baseline="x")
        got = ie.similarity(
            run.sample(fraction=1.0, shuffle=True, seed=seed),
            EVERY_MEASURE,
            baseline="x",
        )
    assert_same_values(want, got)


# similarity() ranks only the documents within every measure's reach (RBO:
# its cutoff, or the depth past which its weight is below 2**-64; 37 for
# p = 0.3): the values must be those of the whole rankings.
DEEP_DOCS = [f"d{i:02d}" for i in range(60)]
SHALLOW = [
    "RBO(p=0.3)",
    "RBO(p=0.3,ties=w,score=max)",
    "RBO(p=0.3,ties=b,score=res)",
    "RBO(p=0.3,ties=none)",
    "RBO@5",
    "Overlap@5",
    "Jaccard@7",
    "TauAP@6",
]


@settings(max_examples=30, deadline=None)
@given(
    scores=st.lists(
        st.tuples(
            st.sampled_from(["x", "y"]),
            st.sampled_from(["q1", "q2"]),
            st.sampled_from(DEEP_DOCS),
            st.integers(0, 6).map(float),
        ),
        # rankings of about 50 documents: most run past the reach (37)
        min_size=160,
        max_size=220,
        unique_by=lambda row: row[:3],
    ),
    best_first=st.booleans(),
)
def test_measures_read_no_deeper_than_their_reach(
    scores: list[tuple[str, str, str, float]],
    best_first: bool,  # noqa: FBT001
) -> None:
    import importlib
    import warnings
    from unittest import mock

    import ireval_df as ie

    run = pl.DataFrame(
        scores, schema=["run_id", "query_id", "doc_id", "score"], orient="row"
    )
    run = run.sort(["run_id", "query_id", "score"], descending=[False, False, True])
    if not best_first:  # each ranking's rows together, in no order
        run = run.sample(fraction=1.0, shuffle=True, seed=0).sort(
            ["run_id", "query_id"], maintain_order=True
        )
    if run["run_id"].n_unique() < 2:
        return
    compute = importlib.import_module("ireval_df.similarity.compute")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ie.similarity(run, SHALLOW, baseline="x")
        with mock.patch.object(compute, "reach", return_value=None):
            want = ie.similarity(run, SHALLOW, baseline="x")
    assert_same_values(want, got)


def assert_same_values(want: pl.DataFrame, got: pl.DataFrame) -> None:
    """Two similarity() results hold the same rows and values (NaN equal to NaN)."""
    joined = want.join(got, on=["run_id", "baseline", "query_id", "metric"])
    assert joined.height == want.height == got.height
    same = joined.select(
        ((pl.col("value") - pl.col("value_right")).abs() <= TOLERANCE)
        | (pl.col("value").is_nan() & pl.col("value_right").is_nan())
    ).to_series()
    assert same.all(), joined.filter(~same)


# rbo's kernel takes the keys a batch of about _BATCH_DEPTHS depths at a
# time when both sides' rows come in key order, and all at once otherwise:
# batches of a few depths (many keys cut across) must give the same values.
@settings(max_examples=30, deadline=None)
@given(
    pairs=st.lists(st.tuples(rankings(), rankings()), min_size=1, max_size=12),
    batch=st.sampled_from([1, 3, 10]),
    ties=st.sampled_from(["a", "b", "w"]),
    score=st.sampled_from(RBO_SCORES),
    shuffle=st.booleans(),
)
def test_rbo_is_the_same_in_batches_of_keys_and_in_one(
    pairs: list[tuple[list[list[str]], list[list[str]]]],
    batch: int,
    ties: str,
    score: str,
    shuffle: bool,  # noqa: FBT001 - hypothesis draws it
) -> None:
    import pytest

    from ireval_df.similarity import rbo as kernel

    keys = pl.Series("key", range(len(pairs)))
    x = groups_frame(keys, pl.Series([a for a, _ in pairs], dtype=LISTS))
    y = groups_frame(keys, pl.Series([b for _, b in pairs], dtype=LISTS))
    if shuffle:  # the baseline's rows out of key order: one batch
        y = y.collect().sample(fraction=1.0, shuffle=True, seed=1).lazy()
    frame = keys.to_frame()
    whole = rbo(x, y, frame, p=0.8, score=score, ties=ties)  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernel, "_BATCH_DEPTHS", batch)
        batched = rbo(x, y, frame, p=0.8, score=score, ties=ties)  # type: ignore[arg-type]
    assert batched["key"].to_list() == whole["key"].to_list()
    gap = (batched["value"] - whole["value"]).abs().max()
    assert gap is None or gap <= TOLERANCE, (pairs, batch)
