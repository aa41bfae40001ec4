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

Each count is a cumulative count of events (the depth at which a document
enters that case), so no row is exploded. Every frame below is built from
the :data:`~ireval_df.similarity.rankings.RANKED` columns alone and none of
its columns reaches the result, hence the short column names.
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
    sides = pl.concat(
        [
            x.with_columns(in_x=pl.lit(1, pl.Int64)),
            y.with_columns(in_x=pl.lit(0, pl.Int64)),
        ]
    )
    sizes = sides.group_by(KEY).agg(
        nx=pl.col("in_x").sum(),
        ny=(1 - pl.col("in_x")).sum(),
        tied=(pl.col("tie_size") > 1).any(),
    )
    # the longer ranking is L; equal lengths: x (the reference's flatten)
    sides = sides.join(sizes, on=KEY).with_columns(
        long=(pl.col("in_x") == 1) == (pl.col("nx") >= pl.col("ny")),
        t=pl.col("tie_start"),
        g=pl.col("tie_size"),
        b=pl.col("tie_start") + pl.col("tie_size") - 1,
    )
    short = sides.filter(~pl.col("long")).select(
        KEY, "doc_id", pl.col("pos").alias("d"), t_s="t", g_s="g", b_s="b"
    )
    long = sides.filter(pl.col("long")).select(
        KEY, "doc_id", "pos", t_l="t", g_l="g", b_l="b"
    )
    # every document of L, with its place in S when S has it
    long = long.join(short.rename({"d": "pos_s"}), on=[KEY, "doc_id"], how="left")
    common = long.filter(pl.col("pos_s").is_not_null())
    sizes = sizes.join(
        common.group_by(KEY).agg(xl=pl.len()), on=KEY, how="left"
    ).select(
        KEY,
        "tied",
        s=pl.min_horizontal("nx", "ny"),
        l=pl.max_horizontal("nx", "ny"),
        xl=pl.col("xl").fill_null(0),
    )

    # the L-only documents u_1, u_2, ... in L's order: those of each L group
    # are a run r_first..r_last of that numbering
    only_l = (
        long.with_columns(
            r=pl.col("pos_s")
            .is_null()
            .cast(pl.Int64)
            .cum_sum()
            .over(KEY, order_by="pos")
        )
        .filter(pl.col("pos_s").is_null())
        .group_by(KEY, "t_l")
        .agg(r_first=pl.col("r").min(), r_last=pl.col("r").max())
    )

    def events(name: str, at: pl.Expr, *by: str) -> pl.LazyFrame:
        return common.group_by(KEY, *by, at.alias("d")).agg(pl.len().alias(name))

    depth = (
        long.select(KEY, pl.col("pos").alias("d"), "t_l", "g_l", "b_l")
        .join(short.drop("doc_id"), on=[KEY, "d"], how="left")
        .join(sizes, on=KEY)
        # documents that ended in both rankings before d
        .join(
            events("n_ended", pl.max_horizontal("b_s", "b_l") + 1),
            on=[KEY, "d"],
            how="left",
        )
        # in S's covering group, ended in L (counted from max(b_l + 1, t_s) on)
        .join(
            events("n_in_s", pl.max_horizontal(pl.col("b_l") + 1, "t_s"), "t_s"),
            on=[KEY, "d", "t_s"],
            how="left",
        )
        # ended in S, in L's covering group
        .join(
            events("n_in_l", pl.max_horizontal(pl.col("b_s") + 1, "t_l"), "t_l"),
            on=[KEY, "d", "t_l"],
            how="left",
        )
        # documents whose L group has started: Ct(d)
        .join(events("n_started", pl.col("t_l")), on=[KEY, "d"], how="left")
        # in both covering groups
        .join(
            common.group_by(KEY, "t_s", "t_l").agg(n_in_both=pl.len()),
            on=[KEY, "t_s", "t_l"],
            how="left",
        )
        .join(only_l, on=[KEY, "t_l"], how="left")
        .with_columns(pl.col("^n_.*$").fill_null(0))
        .with_columns(
            pl.col("n_ended", "n_started").cum_sum().over(KEY, order_by="d"),
            pl.col("n_in_s").cum_sum().over(KEY, "t_s", order_by="d"),
            pl.col("n_in_l").cum_sum().over(KEY, "t_l", order_by="d"),
        )
    )
    return _scores(depth, p, ties)


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
    # max: S's positions s+1..d hold u_1..u_{d-s}; those in L's covering
    # group count c_L(d) each
    if ties == "w":
        unseen_max = past
        mean_unseen = pl.lit(1.0)
    else:
        in_cover = (
            (pl.min_horizontal(pl.col("d") - s, "r_last") - pl.col("r_first") + 1)
            .clip(lower_bound=0)
            .fill_null(0)
        )
        unseen_max = past - (1 - c_l) * in_cover
        # mean c_L(d) of the L-only documents already started
        mean_unseen = (d - overlap) / (pl.col("b_l") - pl.col("n_started"))

    a_min = agreement(overlap)
    weight = pl.lit(p, pl.Float64) ** d
    depth = depth.with_columns(
        a_min=a_min,
        a_s=pl.when(pl.col("d") == s).then(a_min).max().over(KEY),
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
            agreement(pl.col("overlap") + pl.col("unseen_max").fill_null(0.0))
            * pl.col("weight")
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
