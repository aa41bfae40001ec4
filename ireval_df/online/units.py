"""``unit_table()``: per-unit sums of each metric's numerator and denominator.

An A/B test compares arms unit by unit: searches of one user are not
independent, so a per-search rate is analysed as a ratio of two per-unit
sums (the delta method; Kohavi, Tang & Xu 2020, ch. 18). This module gives
those sums, one row per randomisation unit (and slice); summed over an
arm's units they give :func:`~ireval_df.online.metrics`' value exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import MetricSpecError, OptionError
from ireval_df.online.derive import (
    GROUP,
    KEYS,
    UNIT,
    derive,
    group_sums,
    named_measures,
    slice_columns,
)
from ireval_df.online.measures import quantities
from ireval_df.online.metrics import output

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ireval_df.online.log import SearchLog

__all__ = ["UnitColumns", "unit_columns", "unit_table"]


@dataclass(frozen=True)
class UnitColumns:
    """Where one metric's per-unit sums are in a unit table.

    Attributes
    ----------
    name : str
        The output name (``CTR``, or the key of a ``metrics`` dict;
        ``PositionCTR[3]`` for one position of the click curve).
    metric : str
        The canonical registry spelling.
    numer, denom : str
        The columns ``<name>__num`` and ``<name>__den``.
    numer_quantity, denom_quantity : str
        What they count (``clicked_searches``, ``searches_with_results``):
        the ``units`` table's ``pre_<quantity>`` columns are their
        pre-period values, for CUPED.
    higher_is_better : bool
        The metric's direction.
    """

    name: str
    metric: str
    numer: str
    denom: str
    numer_quantity: str
    denom_quantity: str
    higher_is_better: bool


def unit_table(
    log: SearchLog,
    metrics: str | Sequence[str] | dict[str, str],
    *,
    by: str | Sequence[str] | None = None,
) -> Any:
    """Sum each metric's numerator and denominator per randomisation unit.

    Parameters
    ----------
    log : SearchLog
        A log read by :func:`~ireval_df.online.read_log`.
    metrics : str, list of str, or dict of str to str
        Registry names of the ``online`` family, or a dict from output name
        to registry name (the output name prefixes the columns).
    by : str or list of str, optional
        Slice columns, as :func:`~ireval_df.online.metrics` takes them.

    Returns
    -------
    frame
        One row per ``experiment_id, variant, unit_id`` (and slice), then
        for each metric ``<name>__num`` and ``<name>__den`` (0 where the
        unit has no row at the metric's grain), then the ``units`` table's
        ``pre_*`` columns when it has them (null for a unit it lacks).
        ``PositionCTR`` gives a pair per position, named
        ``PositionCTR[1]__num`` ... Without ``by``, a unit of the ``units``
        table (with a variant) that never searched has a row of zeros, so
        that arms are counted as assigned. For every metric and arm,
        ``sum(num) / sum(den)`` is the value ``metrics()`` reports. Same
        frame kind as :func:`~ireval_df.online.metrics` returns.

    Raises
    ------
    MetricSpecError
        A median metric (``TimeToFirstClick`` with ``stat=median``): no
        per-unit sums give a median.

    See Also
    --------
    unit_columns : which columns hold each metric, and their quantities.

    Examples
    --------
    >>> log = ie.online.example_log()
    >>> table = ie.online.unit_table(log, ["CTR"])
    >>> table.rows()
    [('default', 'A', 'u1', 1, 1), ('default', 'A', 'u2', 0, 1), ('default', 'B', 'u3', 1, 2)]
    """
    named = named_measures(metrics)
    medians = [n.name for n in named if n.measure.median is not None]
    if medians:
        msg = (
            f"{medians!r}: a median has no per-unit sums, so it cannot be "
            f"analysed per unit.\n  Hint: use TimeToFirstClick(stat=mean), a "
            f"ratio of per-unit sums."
        )
        raise MetricSpecError(msg)
    grains = {n.name: n.measure.grain for n in named}
    by_names, slices = slice_columns(log, by, grains, reserved=["position"])
    derived = derive(log, [n.measure for n in named], slices)
    keys = [GROUP, UNIT, *slices.result]
    passes = group_sums(derived, named, keys, medians=False, counts=False)
    *collected, groups, units = pl.collect_all(
        [*(frame for _, _, frame in passes), derived.groups, derived.units]
    )
    tables: list[pl.DataFrame] = [groups]
    for (group, by_position, _), frame in zip(passes, collected, strict=True):
        if by_position:
            for n in group:
                tables.append(_positions(frame, n.name, keys))
        else:
            tables.append(frame)
    table = tables[0]
    for other in tables[1:]:
        table = table.join(other, on=keys, how="left", nulls_equal=True)
    sums = [c for c in table.columns if c not in keys]
    table = table.with_columns(pl.col(sums).fill_null(0))
    out_keys = [*KEYS, "unit_id", *by_names]
    table = table.join(derived.labels, on=GROUP, how="left").join(
        units, on=UNIT, how="left"
    )
    if by is None:
        table = _assigned(log, table, out_keys)
        table = table.with_columns(pl.col(sums).fill_null(0))
    ordered = [
        c for n in named for c in sums if c.startswith((f"{n.name}__", f"{n.name}["))
    ]
    table = table.select(*out_keys, *ordered)
    table = _covariates(log, table).sort(out_keys, nulls_last=False)
    settings = {"metrics": [n.name for n in named], "by": by_names}
    return output(table, log, settings)


def _positions(frame: pl.DataFrame, name: str, keys: Sequence[str]) -> pl.DataFrame:
    """One pair of columns per position: ``PositionCTR[3]__num`` ... (one pivot)."""
    num, den = f"{name}__num", f"{name}__den"
    kept = frame.filter(pl.col("position").is_not_null())
    shown = kept.group_by("position").agg(pl.col(den).sum()).filter(pl.col(den) > 0)
    positions = sorted(shown["position"].to_list())
    kept = kept.filter(pl.col("position").is_in(positions))
    wide = kept.pivot(
        on="position", index=list(keys), values=[num, den], aggregate_function=None
    )
    renamed = {
        f"{column}_{p}": f"{name}[{p}]__{column.rsplit('__', 1)[1]}"
        for p in positions
        for column in (num, den)
    }
    wide = wide.rename(renamed)
    pairs = [c for p in positions for c in (f"{name}[{p}]__num", f"{name}[{p}]__den")]
    return wide.select(*keys, *pairs)


def _assigned(log: SearchLog, table: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Add the units of the units table that have a variant but never searched."""
    units = log.units
    if units is None or "variant" not in units.columns:
        return table
    if "experiment_id" in units.columns:
        assigned = units.select("experiment_id", "variant", "unit_id")
    else:
        experiments = log.searches["experiment_id"].unique()
        if experiments.len() != 1:
            return table  # which experiment a unit without searches is in is unknown
        assigned = units.select(
            pl.lit(experiments[0], pl.String).alias("experiment_id"),
            "variant",
            "unit_id",
        )
    missing = assigned.join(table.select(keys), on=list(keys), how="anti")
    return pl.concat([table, missing], how="diagonal_relaxed")


def _covariates(log: SearchLog, table: pl.DataFrame) -> pl.DataFrame:
    """Join the units table's pre-period columns (``pre_*``)."""
    units = log.units
    if units is None:
        return table
    pre = [c for c in units.columns if c.startswith("pre_")]
    if not pre:
        return table
    on = ["unit_id"]
    if "experiment_id" in units.columns:
        on.append("experiment_id")
    clash = [c for c in pre if c in table.columns]
    if clash:
        msg = f"units columns {clash!r} clash with the unit table's sums"
        raise OptionError(msg)
    return table.join(units.select(*on, *pre), on=on, how="left")


def unit_columns(
    metrics: str | Sequence[str] | dict[str, str],
    *,
    positions: Sequence[int] = (),
) -> list[UnitColumns]:
    """Name the unit-table columns of each metric, and the quantities they count.

    Parameters
    ----------
    metrics : str, list of str, or dict of str to str
        As :func:`unit_table` takes them.
    positions : sequence of int, optional
        The positions of ``PositionCTR`` (one entry per position).

    Returns
    -------
    list of UnitColumns

    Examples
    --------
    >>> [(c.numer, c.numer_quantity, c.denom_quantity) for c in unit_columns(["CTR@3"])]
    [('CTR@3__num', 'clicked_searches', 'searches_with_results')]
    """
    out: list[UnitColumns] = []
    for n in named_measures(metrics):
        numer, denom = quantities(n.metric)
        names = (
            [f"{n.name}[{p}]" for p in positions] if n.measure.by_position else [n.name]
        )
        out.extend(
            UnitColumns(
                name,
                str(n.metric),
                f"{name}__num",
                f"{name}__den",
                numer,
                denom,
                n.metric.info.higher_is_better,
            )
            for name in names
        )
    return out
