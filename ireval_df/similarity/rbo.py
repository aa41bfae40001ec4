"""Rank-Biased Overlap with ties: Corsi & Urbano (SIGIR 2024), every comparison at once.

The numbers are those of the authors' reference code (``rbo/Python/rbo.py``
of github.com/julian-urbano/sigir2024-rbo, called as
``rbo(x_groups, y_groups, p, ties=..., score=(score,))``), computed without
its item-by-depth matrices: per depth, the expected overlap is a handful of
counts (joins and cumulative sums over the documents), so the cost is linear
in the rankings' lengths.

Notation, per comparison: ``S`` is the ranking with fewer documents and
``L`` the other (equal lengths: ``S`` is the baseline ``y``, ``L`` the run
``x``, as in the reference); ``s <= l`` their lengths; ``d = 1..l`` the
depth. A document ``i`` of a ranking sits in a tie group that starts at
position ``t_i`` and ends at ``b_i`` (size ``g_i``); its share of the
ranking's top ``d`` is ``c(i, d) = 1[d >= t_i]`` for ``ties="w"`` and
``clip((d - t_i + 1) / g_i, 0, 1)`` for ``"a"`` and ``"b"``.

The overlap ``X_d = sum_i c_S(i, d) c_L(i, d)`` over the common documents
is split by where each one stands at depth ``d`` in each ranking: in a group
that ended before ``d`` (``c = 1``), or in the group that covers position
``d`` (the same ``c`` for all its members). So, with ``cS(d)``, ``cL(d)``
the shares of the covering groups::

    X_d = #{both ended} + cS(d) #{in S's covering group, ended in L}
          + cL(d) #{ended in S, in L's covering group}
          + cS(d) cL(d) #{in both covering groups}

Each count is a running sum of events (+1 at the depth where a document
enters that case, -1 where it leaves it), so no row is exploded, not even a
tie group's: rows stay linear in the rankings' length whatever the ties.
The max bound's L-only documents and ext's mean share are closed forms of
the same counts. Every frame below is built from the
:data:`~ireval_df.similarity.rankings.RANKED` columns alone and none of its
columns reaches the result, hence the short column names.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

import polars as pl

from ireval_df.errors import OptionError
from ireval_df.similarity.rankings import KEY, RANKED, without_ties

__all__ = ["RBO_SCORES", "RBO_TIES", "rbo"]

Score = Literal["ext", "min", "max", "res"]
Ties = Literal["a", "b", "w", "none"]
#: The scores :func:`rbo` computes
RBO_SCORES: tuple[Score, ...] = get_args(Score)
#: The treatments of ties :func:`rbo` knows
RBO_TIES: tuple[Ties, ...] = get_args(Ties)


def rbo(
    x: pl.LazyFrame,
    y: pl.LazyFrame,
    keys: pl.DataFrame,
    *,
    p: float,
    score: Score,
    ties: Ties,
) -> pl.DataFrame:
    """Rank-Biased Overlap of each run ranking ``x`` with its baseline ``y``.

    Parameters
    ----------
    x : polars.LazyFrame
        The compared run's rankings: ``key, doc_id, pos, tie_start,
        tie_size`` (:mod:`ireval_df.similarity.rankings`), positions 1..n
        without gaps in each ranking.
    y : polars.LazyFrame
        The baseline's rankings, same columns.
    keys : polars.DataFrame
        Every comparison (column ``key``); a key without rows on a side
        compares with an empty ranking.
    p : float
        Persistence, in (0, 1): the weight of depth ``d`` is proportional
        to ``p ** d``.
    score : {"ext", "min", "max", "res"}
        The extrapolated value, the lower and upper bounds over every way
        the rankings could continue past their ends, and the residual
        ``max - min``.
    ties : {"a", "b", "w", "none"}
        Ties as uncertainty, averaged over their orders (``"a"``), as
        uncertainty with the information they lose taken off (``"b"``), as
        equality (``"w"``), or broken in position order (``"none"``: every
        document its own group, Webber et al.'s RBO).

    Returns
    -------
    polars.DataFrame
        ``key, value`` (Float64), one row per row of ``keys``, in its order.

    Raises
    ------
    OptionError
        ``p`` is not in (0, 1), or ``score`` or ``ties`` is not one of the
        words above.

    Notes
    -----
    Corsi & Urbano's definitions, as their reference code computes them
    (not clamped: a value can pass 1 by a rounding error). Where it gives
    no number, ours:

    - both rankings empty: ``ext = min = max = 1.0``, ``res = 0.0``
      (identical, nothing to disagree on; the reference raises);
    - one ranking empty: ``ext = 0.0`` (the reference raises); ``min``,
      ``max`` and ``res`` are the reference's: ``min = 0.0`` and ``max``
      the bound it gives for the empty ranking becoming the other one
      (1.0 without ties), so ``res = max``.

    Depth runs over the whole of both rankings: to compare at a cutoff,
    :func:`~ireval_df.similarity.rankings.cut` them first. As in the
    reference, a comparison in which neither ranking has a tie uses the
    ``"w"`` formulas, whatever ``ties`` (the three agree there, up to
    rounding). RBO is symmetric: swapping ``x`` and ``y`` changes a value
    by rounding only.

    Examples
    --------
    Identical rankings agree at every depth; ``[a, b, c]`` against
    ``[b, a, c]`` disagrees at depth 1 only, so with ``p = 0.5``:
    ``(1 - p) / p * (0 * p + 1 * p**2 + 1 * p**3 + p**4 / (1 - p)) = 0.5``.

    >>> def side(key, docs, tie_start):
    ...     return pl.LazyFrame({"key": key, "doc_id": docs, "pos": range(1, len(docs) + 1),
    ...                          "tie_start": tie_start,
    ...                          "tie_size": [tie_start.count(t) for t in tie_start]})
    >>> x = pl.concat([side(0, ["a", "b", "c"], [1, 2, 3]), side(1, ["a", "b", "c"], [1, 2, 3])])
    >>> y = pl.concat([side(0, ["a", "b", "c"], [1, 2, 3]), side(1, ["b", "a", "c"], [1, 2, 3])])
    >>> keys = pl.DataFrame({"key": [0, 1, 2]})
    >>> rbo(x, y, keys, p=0.5, score="ext", ties="a").rows()
    [(0, 1.0), (1, 0.5), (2, 1.0)]

    Key 2 has no ranking on either side. A tie at the top of ``x``: with
    ``ties="a"`` it is either order, half the time the right one.

    >>> x = side(0, ["a", "b", "c"], [1, 1, 3])
    >>> y = side(0, ["a", "b", "c"], [1, 2, 3])
    >>> rbo(x, y, keys.head(1), p=0.5, score="ext", ties="a")["value"].round(4).to_list()
    [0.75]
    """
    _check(p, score, ties)
    if ties == "none":
        x, y = without_ties(x), without_ties(y)
        ties = "w"
    values = _per_key(x.select(RANKED), y.select(RANKED), p, ties)
    out = (
        keys.lazy().select(KEY).join(values, on=KEY, how="left", maintain_order="left")
    )
    both_empty = pl.col("s").is_null()
    one_empty = pl.col("s") == 0
    if score == "res":
        value = pl.when(both_empty).then(0.0).otherwise(pl.col("max") - pl.col("min"))
    elif score == "ext":
        value = (
            pl.when(both_empty)
            .then(1.0)
            .when(one_empty)
            .then(0.0)
            .otherwise(pl.col("ext"))
        )
    else:
        value = pl.when(both_empty).then(1.0).otherwise(pl.col(score))
    return out.select(KEY, value.cast(pl.Float64).alias("value")).collect()


def _check(p: float, score: str, ties: str) -> None:
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 < p < 1.0:
        msg = f"RBO's persistence p must be a number in (0, 1), got p={p!r}.\n  Hint: p=0.9 weighs roughly the top 10."
        raise OptionError(msg)
    for name, value, allowed in (
        ("score", score, RBO_SCORES),
        ("ties", ties, RBO_TIES),
    ):
        if value not in allowed:
            options = ", ".join(repr(a) for a in allowed)
            msg = f"RBO's {name}={value!r} is not one of {options}."
            raise OptionError(msg)


def _per_key(x: pl.LazyFrame, y: pl.LazyFrame, p: float, ties: str) -> pl.LazyFrame:
    """``key, s, ext, min, max`` for every key with a document on either side."""
    sides = (
        pl.concat(
            [
                x.with_columns(in_x=pl.lit(1, pl.Int64)),
                y.with_columns(in_x=pl.lit(0, pl.Int64)),
            ]
        )
        .collect()
        .lazy()
    )
    sizes = sides.group_by(KEY).agg(
        nx=pl.col("in_x").sum(),
        ny=(1 - pl.col("in_x")).sum(),
        tied=(pl.col("tie_size") > 1).any(),
    )
    # the longer ranking is L; equal lengths: x (the reference's flatten).
    # The inputs, both sides and their common documents are read by several
    # branches of the query: each is computed once (the streaming engine
    # would run each branch's copy of the plan: the join of the common
    # documents eleven times)
    sides = (
        sides.join(sizes.select(KEY, "nx", "ny"), on=KEY)
        .with_columns(
            long=(pl.col("in_x") == 1) == (pl.col("nx") >= pl.col("ny")),
            b=pl.col("tie_start") + pl.col("tie_size") - 1,
        )
        .collect()
        .lazy()
    )
    short = sides.filter(~pl.col("long")).select(
        KEY, "doc_id", "pos", t_s="tie_start", g_s="tie_size", b_s="b"
    )
    long = sides.filter(pl.col("long")).select(
        KEY, "doc_id", d="pos", t_l="tie_start", g_l="tie_size", b_l="b"
    )
    common = short.join(long, on=[KEY, "doc_id"]).collect().lazy()
    depth = (
        long.drop("doc_id")
        .join(
            sizes.select(
                KEY,
                "tied",
                s=pl.min_horizontal("nx", "ny"),
                l=pl.max_horizontal("nx", "ny"),
            ),
            on=KEY,
        )
        .with_columns(_at(pl.col("d")))
        .join(_events(short, common), on="at", how="left")
        .with_columns(pl.col("^n_.*$").fill_null(0))
        .with_columns(
            pl.col("^n_.*$").cum_sum().over(KEY, order_by="d"),
            # S's covering group, from its start on; S has none past s
            pl.col("t_s", "g_s")
            .forward_fill()
            .over(KEY, order_by="d")
            .fill_null(0)  # a key whose S is empty
            .cast(pl.Float64),
        )
        .with_columns(
            pl.when(pl.col("d") <= pl.col("s")).then(pl.col("t_s", "g_s")),
            b_s=pl.when(pl.col("d") <= pl.col("s")).then(
                pl.col("t_s") + pl.col("g_s") - 1
            ),
        )
    )
    return _scores(depth, p, ties)


def _at(depth: pl.Expr) -> pl.Expr:
    """One Int64 for (key, depth): grouping and joining on it is 2-3 times faster.

    Keys are row numbers and depths ranking positions, both below 2**31.
    """
    return (pl.col(KEY) * 2**32 + depth).alias("at")


def _events(short: pl.LazyFrame, common: pl.LazyFrame) -> pl.LazyFrame:
    """Per key and depth (``at``): what changes there, cumulated later.

    From the common documents: ``n_ended`` (+1 once a document's groups have
    ended in both rankings), ``n_started`` (+1 once its L group has
    started), ``n_ended_l`` (+1 once its L group has ended), and the
    documents in a covering group, +1 on entering, -1 past the group's end:
    ``n_in_s`` (in S's covering group, its L group ended), ``n_in_l`` (the
    converse), ``n_in_both``. From S: ``t_s, g_s`` where each group starts.
    """

    def span(
        name: str, start: pl.Expr, end: pl.Expr | None = None
    ) -> list[pl.LazyFrame]:
        """+1 at ``start``, and -1 at ``end + 1`` when ``start <= end``."""
        if end is None:
            return [common.select(_at(start), **{name: pl.lit(1, pl.Int64)})]
        inside = common.filter(start <= end)
        return [
            inside.select(_at(start), **{name: pl.lit(1, pl.Int64)}),
            inside.select(_at(end + 1), **{name: pl.lit(-1, pl.Int64)}),
        ]

    t_s, b_s, t_l, b_l = pl.col("t_s"), pl.col("b_s"), pl.col("t_l"), pl.col("b_l")
    frames = [
        *span("n_ended", pl.max_horizontal(b_s, b_l) + 1),
        *span("n_started", t_l),
        *span("n_ended_l", b_l + 1),
        *span("n_in_s", pl.max_horizontal(b_l + 1, t_s), b_s),
        *span("n_in_l", pl.max_horizontal(b_s + 1, t_l), b_l),
        *span("n_in_both", pl.max_horizontal(t_s, t_l), pl.min_horizontal(b_s, b_l)),
        short.filter(pl.col("pos") == t_s).select(_at(pl.col("pos")), "t_s", "g_s"),
    ]
    return (
        pl.concat(frames, how="diagonal")
        .group_by("at")
        .agg(pl.col("^n_.*$").sum(), pl.col("t_s", "g_s").max())
    )


def _scores(depth: pl.LazyFrame, p: float, ties: str) -> pl.LazyFrame:
    d = pl.col("d").cast(pl.Float64)
    s = pl.col("s")
    beyond = pl.col("d") > s  # S has run out (its covering columns are null)

    def share(t: str, g: str) -> pl.Expr:
        if ties == "w":
            return pl.lit(1.0)
        return (d - pl.col(t) + 1) / pl.col(g)

    def norm2(t: str, g: str) -> pl.Expr:
        # sum of c(i, d)^2 over a ranking: the groups before, and the covering one
        return (pl.col(t) - 1) + (d - pl.col(t) + 1) ** 2 / pl.col(g)

    c_s, c_l = share("t_s", "g_s"), share("t_l", "g_l")
    overlap = (
        pl.col("n_ended")
        + c_l * pl.col("n_in_l")
        + (c_s * (pl.col("n_in_s") + c_l * pl.col("n_in_both"))).fill_null(0.0)
    )
    # past s, S's unseen documents count as untied: its size and norm are d
    size_s = pl.coalesce("b_s", d)
    norm_s = pl.coalesce(norm2("t_s", "g_s"), d)

    def agreement(num: pl.Expr) -> pl.Expr:
        w = 2 * num / (size_s + pl.col("b_l"))
        if ties == "w":
            return w
        if ties == "a":
            tied = num / d
        else:
            tied = num / norm_s.sqrt() / norm2("t_l", "g_l").sqrt()
        return pl.when(pl.col("tied")).then(tied).otherwise(w)

    past = (d - s).clip(lower_bound=0)
    if ties == "w":
        unseen_max = past
        mean_unseen = pl.lit(1.0)
    else:
        # max: S's positions s+1..d hold u_1..u_{d-s}, the L-only documents
        # in L's order: first the `ended` ones of the groups before d's
        # (share 1), then members of d's covering group (share c_L)
        ended = pl.col("t_l") - 1 - pl.col("n_ended_l")
        unseen_max = pl.min_horizontal(past, ended) + c_l * (past - ended).clip(
            lower_bound=0
        )
        # ext: mean c_L(d) of the L-only documents already started
        mean_unseen = (d - overlap) / (pl.col("b_l") - pl.col("n_started"))

    a_min = agreement(overlap)
    weight = pl.lit(p, pl.Float64) ** d
    depth = depth.with_columns(
        a_min=a_min,
        a_s=pl.when(pl.col("d") == s).then(a_min).max().over(KEY),
        # every common document has started in L by depth l
        xl=pl.col("n_started").max().over(KEY),
        unseen_max=unseen_max,
        mean_unseen=mean_unseen,
        overlap=overlap,
        weight=weight,
    )
    a_s = pl.col("a_s").fill_null(0.0)
    unseen_ext = pl.when(beyond).then(past * a_s * pl.col("mean_unseen")).otherwise(0.0)
    xl, ll = pl.col("xl"), pl.col("l")
    # max's tail l+1..f, f = l + s - X_l: depths l + d for d = 1..s - X_l
    tail_d = ll + d
    tail = pl.when(pl.col("d") <= s - xl).then(
        (2 * tail_d - ll - s + xl) / tail_d * pl.lit(p, pl.Float64) ** tail_d
    )
    per_key = depth.group_by(KEY).agg(
        pl.col("s", "l", "xl", "a_s").first(),
        sum_min=(pl.col("a_min") * pl.col("weight")).sum(),
        sum_max=(
            agreement(pl.col("overlap") + pl.col("unseen_max")) * pl.col("weight")
        ).sum(),
        sum_ext=(agreement(pl.col("overlap") + unseen_ext) * pl.col("weight")).sum(),
        harmonic=(pl.col("weight") / d).sum(),
        tail_max=tail.sum(),
    )
    k = (1 - p) / p
    geometric = 1 / (1 - p)
    xl_f = pl.col("xl").cast(pl.Float64)
    f = pl.col("l") + pl.col("s") - pl.col("xl")
    return per_key.select(
        KEY,
        "s",
        min=k * (pl.col("sum_min") + xl_f * (math.log(geometric) - pl.col("harmonic"))),
        max=k
        * (
            pl.col("sum_max")
            + (pl.col("tail_max") + pl.lit(p, pl.Float64) ** (f + 1) / (1 - p))
        ),
        ext=k
        * (
            pl.col("sum_ext")
            + (xl_f + (pl.col("l") - pl.col("s")) * a_s)
            / pl.col("l")
            * pl.lit(p, pl.Float64) ** (pl.col("l") + 1)
            / (1 - p)
        ),
    )
