"""What runs on the executors for the online metrics: one group of users' log.

Spark hands the kernel every row of one group of users (a hash bucket of
the users' component, :mod:`ireval_df.spark.online`): their searches, the
results and events of those searches, the events of the users outside
search, and the ``units`` rows of their units, as one Arrow table whose
column ``__ireval_table`` says which table each row is from. The kernel
reads them with :func:`~ireval_df.online.log.read_part` (the rules of
:func:`~ireval_df.online.read_log`) and returns, as long rows:

* ``grid`` rows: every (experiment, variant, search slices, unit, result
  slices) the part's log has, so that a group without a row at a grain
  still gets its zeros;
* ``sums`` rows: per metric, unit, slice (and position) the sums of the
  numerator and denominator and the searches counted, which add up over
  groups (a unit's searches may be in several groups);
* ``median`` rows: the per-row values of a median metric.

Notes: the issues of the part's log (one per table and problem), the
units dropped as contaminated, the experiments of its searches and its
number of usable searches, which the driver adds up. Nothing here imports
pyspark.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.online.derive import (
    GROUP,
    N_SEARCHES_OUT,
    UNIT,
    derive,
    group_sums,
    named_measures,
    slice_columns,
)
from ireval_df.online.log import ROW_NUMBER, read_part
from ireval_df.spark.kernels import Note, run_kernel

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import pyarrow as pa

    from ireval_df.online.derive import Named
    from ireval_df.online.log import SearchLog, Table, Whole

__all__ = [
    "GRID",
    "MEDIAN",
    "METRIC",
    "ROWS",
    "SUMS",
    "TAG",
    "OnlineKernel",
    "part_rows",
    "prefixed",
    "slice_column",
]

#: Which table each input row is from, and the prefix of its columns.
TAG = "__ireval_table"
#: The kind of each output row: grid, sums or median values.
ROWS = "__ireval_rows"
GRID, SUMS, MEDIAN = 0, 1, 2
#: The position of the row's metric among those asked for.
METRIC = "__ireval_metric"


def prefixed(table: str, column: str) -> str:
    """Return the name of a table's column in the kernel's one input table."""
    return f"__ireval_{table}__{column}"


def slice_column(name: str) -> str:
    """Return the name of a slice column in the kernel's output (never a clash)."""
    return f"__ireval_by__{name}"


def part_rows(
    log: SearchLog,
    named: Sequence[Named],
    by: Sequence[str],
    reserved: Sequence[str],
) -> pl.DataFrame:
    """Return the grid, sums and median rows of one part's log (see the module docstring)."""
    grains = {n.name: n.measure.grain for n in named}
    by_names, slices = slice_columns(log, list(by), grains, reserved=reserved)
    derived = derive(log, [n.measure for n in named], slices)
    keys = [GROUP, UNIT, *slices.result]
    passes = group_sums(derived, named, keys, medians=False, counts=True)
    index = {n.name: i for i, n in enumerate(named)}
    blank = {
        "num": pl.lit(None, pl.Float64),
        "den": pl.lit(None, pl.Float64),
        "n_searches": pl.lit(None, pl.Int64),
        "value": pl.lit(None, pl.Float64),
    }
    frames: list[pl.LazyFrame] = [
        derived.groups.select(
            *keys,
            pl.lit(GRID, pl.Int32).alias(ROWS),
            pl.lit(None, pl.Int32).alias("position"),
            pl.lit(None, pl.Int32).alias(METRIC),
            *(expr.alias(name) for name, expr in blank.items()),
        )
    ]
    for group, by_position, frame in passes:
        for n in group:
            position = pl.col("position") if by_position else pl.lit(None, pl.Int32)
            frames.append(
                frame.select(
                    *keys,
                    pl.lit(SUMS, pl.Int32).alias(ROWS),
                    position.cast(pl.Int32).alias("position"),
                    pl.lit(index[n.name], pl.Int32).alias(METRIC),
                    pl.col(f"{n.name}__num").cast(pl.Float64).alias("num"),
                    pl.col(f"{n.name}__den").cast(pl.Float64).alias("den"),
                    pl.col(N_SEARCHES_OUT).cast(pl.Int64).alias("n_searches"),
                    blank["value"].alias("value"),
                )
            )
    for n in named:
        if n.measure.median is not None:
            value = n.measure.median.cast(pl.Float64)
            frames.append(
                derived.frames[n.measure.grain]
                .filter(value.is_not_null())
                .select(
                    *keys,
                    pl.lit(MEDIAN, pl.Int32).alias(ROWS),
                    pl.lit(None, pl.Int32).alias("position"),
                    pl.lit(index[n.name], pl.Int32).alias(METRIC),
                    *(blank[c].alias(c) for c in ("num", "den", "n_searches")),
                    value.alias("value"),
                )
            )
    rows = pl.concat(frames, how="vertical_relaxed")
    search_slices = [s for s in by_names if s in slices.search]
    out = rows.join(derived.labels.lazy(), on=GROUP, how="left").join(
        derived.units, on=UNIT, how="left"
    )
    return out.select(
        pl.col(ROWS),
        pl.col("experiment_id").cast(pl.String),
        pl.col("variant").cast(pl.String),
        *(pl.col(s).alias(slice_column(s)) for s in [*search_slices, *slices.result]),
        pl.col("unit_id").cast(pl.String),
        "position",
        METRIC,
        *blank,
    ).collect()


def wire_schema(schema: Mapping[str, pl.DataType]) -> dict[str, pl.DataType]:
    """Return the dtypes a kernel sends for ``schema``: Spark has no unsigned integers.

    A time with a zone becomes UTC without one (Spark's ``timestamp_ntz``);
    an enum (``age_bucket``) or a categorical becomes text.
    """
    out: dict[str, pl.DataType] = {}
    wider = {"UInt8": pl.Int16(), "UInt16": pl.Int32(), "UInt32": pl.Int64()}
    for name, dtype in schema.items():
        if str(dtype) in wider:
            out[name] = wider[str(dtype)]
        elif isinstance(dtype, pl.Enum | pl.Categorical):
            out[name] = pl.String()
        elif isinstance(dtype, pl.Datetime):
            out[name] = pl.Datetime("us")
        else:
            out[name] = dtype
    return out


@dataclass(frozen=True)
class OnlineKernel:
    """The rows of :func:`part_rows` for one group of users, and its notes.

    ``tables`` names each table the call has with its columns (as Spark
    gave them); ``metrics`` are the registry specs (or output name ->
    spec); the reading options are :func:`~ireval_df.online.read_log`'s,
    with ``whole`` from the driver. ``schema`` is the output's (without
    the note columns), read on the driver from an empty part.
    """

    tables: tuple[tuple[str, tuple[str, ...]], ...]
    metrics: Any
    by: tuple[str, ...]
    reserved: tuple[str, ...]
    columns: Mapping[str, Any] | None
    session_gap: Any
    epoch_unit: str | None
    whole: Whole
    schema: Mapping[str, pl.DataType]
    large: bool

    def __call__(self, table: pa.Table) -> pa.Table:
        """Read one group's log and return its rows and notes, as Arrow."""
        return run_kernel(
            lambda notes: self._rows(table, notes), self.schema, large=self.large
        )

    def split(self, table: pa.Table) -> dict[Table, pl.DataFrame]:
        """Split the one input table into the log's tables, with their own columns."""
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)  # noqa: S101 - a Table gives a frame
        out: dict[Table, pl.DataFrame] = {}
        for name, columns in self.tables:
            rows = frame.filter(pl.col(TAG) == name)
            out[name] = rows.select(  # type: ignore[index]
                pl.col(prefixed(name, c)).alias(c) for c in columns
            ).sort(ROW_NUMBER)  # the input's order, as read_log sees it
        return out

    def _rows(self, table: pa.Table, notes: Note) -> pl.DataFrame:
        tables = self.split(table)
        log, mixed = read_part(
            tables,
            whole=self.whole,
            columns=self.columns,
            session_gap=self.session_gap,
            epoch_unit=self.epoch_unit,  # type: ignore[arg-type]
        )
        for issue in log.issues:
            notes.add("issue", json.dumps(vars(issue)))
        if mixed is not None:
            notes.add("mixed", json.dumps(mixed.rows()))
        experiments = log.searches["experiment_id"].unique().to_list()
        notes.add("experiments", json.dumps(experiments))
        if log.searches.height == 0:
            return pl.DataFrame(schema=self.schema)
        named = named_measures(self.metrics)
        rows = part_rows(log, named, self.by, self.reserved)
        return rows.select(
            pl.col(name).cast(dtype) for name, dtype in self.schema.items()
        )
