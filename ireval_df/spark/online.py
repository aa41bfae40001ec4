"""``ireval_df.spark.online_metrics``, ``unit_table`` and ``ab_test``: search logs on Spark.

The log's four tables are Spark DataFrames. The plan is that of every
function of :mod:`ireval_df.spark` (:mod:`.jobs`), by user instead of query:

1. on the driver, before any job: the options, the metric names, the
   ``by`` columns and every table's columns and dtypes, by reading an
   empty part of the log with the local reader
   (:func:`~ireval_df.online.log.read_part`), so that the errors are
   :func:`~ireval_df.online.read_log`'s own;
2. the checks no group of users can make, on Spark: null and repeated
   ``search_id``, null ``unit_id`` and repeated units in ``units``
   (the same errors as locally), the unit of epoch times and whether
   sessions are given (:class:`~ireval_df.online.log.Whole`);
3. every row gets a group: a stable hash of its user's *component*. A
   user's searches, sessions and events need each other, so do the users
   of one unit (a unit in two variants is contaminated), the user of an
   event and the user of its search, and the events sharing an
   ``event_id`` (one is kept): such links are joined into components on
   the driver (a union-find of the linked ids only, none in the common
   case of ``unit_id = user_id``). Results and events go with their
   search (a Spark join on ``search_id``); rows of unknown searches with
   their own user, or their ``search_id``, where the local reader drops
   them as it does locally;
4. ``groupBy(group).applyInArrow``: each group's rows are read by the
   local reader and summed per unit by the local code
   (:mod:`.online_kernel`); their issues are added up on the driver into
   the one warning (or error) :func:`~ireval_df.online.read_log` gives;
5. the per-unit sums are added up by Spark over groups (a unit may span
   users), and give :func:`~ireval_df.online.unit_table`'s rows or
   :func:`~ireval_df.online.metrics`' values.

Rules of :func:`~ireval_df.online.read_log` whose scope spans users, and
how they stay exact here: repeated ``search_id`` (a Spark check, step 2),
a unit with two rows in ``units`` (step 2), a unit in more than one variant
(a unit's users are one component, so its group sees all of its searches
and its ``units`` row; the driver joins the groups' lists into the one
message), repeated ``event_id`` (one component), an event whose user is not
its search's (one component), whether any search has a ``session_id`` and
the unit of epoch times (step 2, :class:`~ireval_df.online.log.Whole`), no
usable search left (the groups' counts). Every other rule reads one row,
one search, or one user's timeline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df import errors
from ireval_df.errors import DataError, LogWarning, MetricSpecError, OptionError
from ireval_df.online.derive import named_measures
from ireval_df.online.log import (
    ROW_NUMBER,
    SEARCH_REPEATS_HINT,
    TABLES,
    Issue,
    Whole,
    contamination_issue,
    contamination_message,
    duplicates_message,
    epoch_unit_of,
    nulls_message,
    read_part,
    source_columns,
    unit_repeats_hint,
)
from ireval_df.spark.jobs import (
    BUCKET,
    canonical_id,
    frame_schema,
    large_strings,
    partitions_of,
    require_frame,
    run_job,
    to_polars,
    to_spark,
)
from ireval_df.spark.kernels import spark_ddl, spark_type
from ireval_df.spark.online_kernel import (
    GRID,
    MEDIAN,
    METRIC,
    ROWS,
    SUMS,
    TAG,
    OnlineKernel,
    part_rows,
    prefixed,
    slice_column,
    wire_schema,
)

if TYPE_CHECKING:
    import datetime as dt
    from collections.abc import Mapping, Sequence

    from pyspark.sql import Column, DataFrame

    from ireval_df.online.ab import LogTables
    from ireval_df.online.derive import Named
    from ireval_df.online.log import Table

__all__ = ["ab_test", "online_metrics", "unit_table"]

#: A row's node in the graph of linked users (its group's key).
_NODE = "__ireval_node"

#: The order of read_log's issues (table, start of the problem), and the
#: step of read_log that finds each: with ``invalid="error"`` the first
#: step with an issue raises, listing that step's issues.
_ISSUE_ORDER: tuple[tuple[str, str, int], ...] = (
    ("units", "with no variant", 0),
    ("searches", "with a time (ts) missing", 1),
    ("searches", "with no user_id", 1),
    ("searches", "with no variant", 1),
    ("searches", "with a page missing", 1),
    ("searches", "with no session_id", 1),
    ("searches", "with n_results missing", 1),
    ("searches", "of ", 2),  # of N units seen in more than one variant
    ("results", "with a published_at that is not a time", 3),
    ("results", "with no search_id or position", 4),
    ("results", "with a position below 1", 4),
    ("results", "of searches dropped above", 4),
    ("results", "pointing at unknown searches", 4),
    ("results", "of searches with n_results = 0", 4),
    ("results", "repeating a (search_id, position) slot", 5),
    ("events", "with a time (ts) missing", 6),
    ("events", "with no event_type", 6),
    ("events", "of searches dropped above", 6),
    ("events", "pointing at unknown searches", 6),
    ("events", "with no user_id", 6),
    ("events", "before their search was served", 6),
    ("events", "clicking a position the search did not display", 6),
    ("events", "repeating an event_id", 7),
    ("events", "with a negative dwell_ms", 8),
)
_CONTAMINATION_STEP = 2


def _rank(issue: Issue) -> tuple[int, int]:
    """Return an issue's place in read_log's order, and its step."""
    for i, (table, start, step) in enumerate(_ISSUE_ORDER):
        if issue.table == table and issue.problem.startswith(start):
            return i, step
    return len(_ISSUE_ORDER), len(_ISSUE_ORDER)  # pragma: no cover - listed above


@dataclass(frozen=True)
class _Prepared:
    """One call's job, run: its rows (cached) and what the driver learnt."""

    rows: DataFrame
    cached: DataFrame  # what holds the rows' cache: unpersist() frees it
    named: list[Named]
    by: list[str]
    slices: list[str]  # the by columns, in the caller's order
    units: DataFrame | None  # the units table, canonical (variant not null)
    unit_keys: list[str]  # unit_id, and experiment_id when units has it
    experiments: list[str]  # of the usable searches of the whole log
    int_sums: dict[str, bool]  # per <name>__num and __den: whole numbers
    enums: dict[str, list[str]]  # per enum slice, its categories in order
    schema: dict[str, pl.DataType]  # the kernel's output (slice dtypes)

    def metric_id(self, name: str) -> int:
        """Return a metric's number in the rows' ``METRIC`` column: its place in ``named``."""
        return next(i for i, n in enumerate(self.named) if n.name == name)


def _tables(log_sdfs: Any) -> dict[Table, DataFrame]:
    """Check the mapping of tables; return it with the tables in read_log's order."""
    from collections.abc import Mapping

    if not isinstance(log_sdfs, Mapping):
        msg = (
            f"log_sdfs is a {type(log_sdfs).__name__}; it maps table names to "
            f"Spark DataFrames: {{'searches': sdf, 'results': sdf, 'events': "
            f"sdf, 'units': sdf}} (all but searches optional)."
        )
        raise OptionError(msg)
    unknown = [k for k in log_sdfs if k not in TABLES]
    if unknown:
        msg = f"log_sdfs names tables {unknown!r}; the tables are {list(TABLES)!r}."
        raise OptionError(msg)
    if log_sdfs.get("searches") is None:
        msg = (
            "log_sdfs needs a searches table (one row per result page served).\n"
            "  Hint: pass {'searches': spark.read.parquet('searches.parquet'), ...}."
        )
        raise errors.SchemaError(msg)
    return {
        t: require_frame(log_sdfs[t], f"log_sdfs[{t!r}]")
        for t in TABLES
        if log_sdfs.get(t) is not None
    }


def _col(name: str) -> Column:
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    return F.col(f"`{name}`")


def _is_numeric(frame: DataFrame, name: str) -> bool:
    from pyspark.sql.types import NumericType

    return isinstance(frame.schema[name].dataType, NumericType)


def _check_ids(
    frame: DataFrame, keys: dict[str, Column], table: str, hint: str
) -> None:
    """Raise read_log's error for null or repeated ``keys`` (canonical); one Spark job.

    The first key is the one that must not be null; the example of a
    repeat is the repeated key that comes first in the input, as locally.
    """
    from pyspark.sql import functions as F  # noqa: N812

    names = list(keys)
    keyed = frame.select(
        *(col.alias(name) for name, col in keys.items()),
        F.monotonically_increasing_id().alias(ROW_NUMBER),
    )
    counts = keyed.groupBy(*names).agg(
        F.count(F.lit(1)).alias("n"), F.min(ROW_NUMBER).alias("first")
    )
    null = F.col(names[0]).isNull()
    repeated = ~null & (F.col("n") > 1)
    found = counts.agg(
        F.sum(F.when(null, F.col("n"))).alias("nulls"),
        F.sum(F.when(repeated, F.col("n") - 1)).alias("extra"),
        F.min_by(
            F.when(repeated, F.struct(*names)), F.when(repeated, F.col("first"))
        ).alias("example"),
    ).first()
    if found is None:
        return
    if found["nulls"]:
        raise DataError(nulls_message(table, names[0], int(found["nulls"])))
    if found["extra"]:
        example = found["example"].asDict()
        raise DataError(
            duplicates_message(table, names, int(found["extra"]), example, hint)
        )


def _global_checks(
    tables: dict[Table, DataFrame],
    source: dict[Table, dict[str, str]],
    epoch_unit: str | None,
) -> Whole:
    """Run the checks of read_log no group can make; return what the groups must know."""
    from pyspark.sql import functions as F  # noqa: N812

    units = tables.get("units")
    if units is not None:
        src = source["units"]
        keys = {"unit_id": canonical_id(units, src["unit_id"])}
        if "experiment_id" in src:
            keys["experiment_id"] = canonical_id(units, src["experiment_id"])
        _check_ids(units, keys, "units", unit_repeats_hint(list(keys)))
    searches = tables["searches"]
    src = source["searches"]
    sid = canonical_id(searches, src["search_id"])
    _check_ids(searches, {"search_id": sid}, "searches", SEARCH_REPEATS_HINT)
    # what a group would tell from its own rows: from the whole tables
    epoch: dict[str, Any] = {}
    wanted = [
        ("searches", "ts", epoch_unit is None),
        ("events", "ts", epoch_unit is None),
        ("results", "published_at", True),
    ]
    for table, canon, inferred in wanted:
        frame = tables.get(table)  # type: ignore[call-overload]
        name = source.get(table, {}).get(canon)  # type: ignore[call-overload]
        if frame is None or name is None or not inferred:
            continue
        if _is_numeric(frame, name):
            top = frame.agg(F.max(F.abs(_col(name).cast("double")))).first()
            epoch[f"{table}.{canon}"] = epoch_unit_of(None if top is None else top[0])
    given = False
    if "session_id" in src:
        given = searches.where(_col(src["session_id"]).isNotNull()).limit(1).count() > 0
    return Whole(epoch_units=epoch, sessions_given=given)


def _components(edges: DataFrame) -> pl.DataFrame | None:
    """Join linked ids into components (union-find); return node -> root, or None."""
    pairs = to_polars(edges.distinct())
    if pairs.height == 0:
        return None
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    for a, b in pairs.iter_rows():
        ra, rb = find(a), find(b)
        if ra != rb:  # the smaller id is the root: the same whatever the order
            lo, hi = (ra, rb) if ra < rb else (rb, ra)
            parent[hi] = lo
    nodes = list(parent)
    return pl.DataFrame(
        {_NODE: nodes, "__ireval_root": [find(n) for n in nodes]},
        schema={_NODE: pl.String, "__ireval_root": pl.String},
    )


def _route(
    tables: dict[Table, DataFrame],
    source: dict[Table, dict[str, str]],
    partitions: int,
) -> DataFrame:
    """Give every row of every table its group; return them as one frame.

    Columns: the group (:data:`~ireval_df.spark.jobs.BUCKET`), the table
    (``__ireval_table``), and each table's columns under
    :func:`~ireval_df.spark.online_kernel.prefixed` names.
    """
    from pyspark.sql import functions as F  # noqa: N812

    spark = tables["searches"].sparkSession
    # each row's number in its table, before any shuffle: the issues' examples
    numbered = {
        t: frame.withColumn(ROW_NUMBER, F.monotonically_increasing_id())
        for t, frame in tables.items()
    }
    s_src = source["searches"]
    searches = numbered["searches"]
    sid = canonical_id(searches, s_src["search_id"])
    user = canonical_id(searches, s_src["user_id"])
    # a search's node: its user; a search without one is dropped with its rows
    s_node = F.coalesce(user, F.concat(F.lit("\x00s"), sid))
    unit = (
        F.coalesce(canonical_id(searches, s_src["unit_id"]), user)
        if "unit_id" in s_src
        else user
    )
    keyed = searches.select(
        "*",
        sid.alias("__ireval_sid"),
        user.alias("__ireval_user"),
        s_node.alias(_NODE),
        unit.alias("__ireval_unit"),
    )
    nodes = keyed.select("__ireval_sid", _NODE)
    edge_parts = [
        keyed.where(
            F.col("__ireval_unit").isNotNull()
            & (F.col("__ireval_unit") != F.col(_NODE))
        ).select(F.col(_NODE).alias("a"), F.col("__ireval_unit").alias("b"))
    ]
    routed: dict[str, DataFrame] = {"searches": keyed}
    for table in ("results", "events"):
        frame = numbered.get(table)
        if frame is None:
            continue
        src = source[table]
        own = (
            canonical_id(frame, src["search_id"])
            if "search_id" in src
            else F.lit(None).cast("string")
        )
        joined = frame.select("*", own.alias("__ireval_rsid")).join(
            nodes.withColumnRenamed(_NODE, "__ireval_snode"),
            F.col("__ireval_rsid") == F.col("__ireval_sid"),
            "left",
        )
        if table == "events":
            euser = (
                canonical_id(frame, src["user_id"])
                if "user_id" in src
                else F.lit(None).cast("string")
            )
            joined = joined.withColumn("__ireval_euser", euser)
            edge_parts.append(
                joined.where(
                    F.col("__ireval_snode").isNotNull()
                    & F.col("__ireval_euser").isNotNull()
                    & (F.col("__ireval_euser") != F.col("__ireval_snode"))
                ).select(
                    F.col("__ireval_euser").alias("a"),
                    F.col("__ireval_snode").alias("b"),
                )
            )
            node = F.coalesce(
                F.col("__ireval_snode"),
                F.col("__ireval_euser"),
                F.concat(F.lit("\x00s"), F.col("__ireval_rsid")),
                F.lit("\x00e"),
            )
            joined = joined.withColumn(_NODE, node)
            if "event_id" in src:  # a repeated event_id: one group keeps one
                eid = canonical_id(frame, src["event_id"])
                joined = joined.withColumn("__ireval_eid", eid)
                first = (
                    joined.where(F.col("__ireval_eid").isNotNull())
                    .groupBy("__ireval_eid")
                    .agg(
                        F.min(_NODE).alias("b"),
                        F.count(F.lit(1)).alias("n"),
                    )
                )
                repeated = first.where(F.col("n") > 1).select("__ireval_eid", "b")
                edge_parts.append(
                    joined.join(repeated, "__ireval_eid")
                    .where(F.col(_NODE) != F.col("b"))
                    .select(F.col(_NODE).alias("a"), "b")
                )
        else:
            node = F.coalesce(
                F.col("__ireval_snode"),
                F.concat(F.lit("\x00s"), F.col("__ireval_rsid")),
                F.lit("\x00r"),
            )
            joined = joined.withColumn(_NODE, node)
        routed[table] = joined
    units = numbered.get("units")
    if units is not None:
        routed["units"] = units.select(
            "*", canonical_id(units, source["units"]["unit_id"]).alias(_NODE)
        )
    edges = edge_parts[0]
    for part in edge_parts[1:]:
        edges = edges.unionByName(part)
    roots = _components(edges)
    out: DataFrame | None = None
    for table, frame in routed.items():
        if roots is not None:
            frame = frame.join(to_spark(spark, roots), _NODE, "left").withColumn(
                _NODE, F.coalesce(F.col("__ireval_root"), F.col(_NODE))
            )
        group = F.pmod(F.xxhash64(F.col(_NODE)), F.lit(partitions)).alias(BUCKET)
        part = frame.select(
            group,
            F.lit(table).alias(TAG),
            *(_col(c).alias(prefixed(table, c)) for c in numbered[table].columns),  # type: ignore[index]
        )
        out = part if out is None else out.unionByName(part, allowMissingColumns=True)
    assert out is not None  # noqa: S101 - searches are always there
    return out


def _prepare(
    log_sdfs: Any,
    metrics: Any,
    *,
    by: str | Sequence[str] | None,
    reserved: Sequence[str],
    columns: Mapping[str, Any] | None,
    session_gap: str | dt.timedelta,
    contaminated: str,
    invalid: str,
    epoch_unit: str | None,
    partitions: int | None,
    medians: bool,
) -> _Prepared:
    """Check everything, run the job, report its issues; return its rows."""
    from ireval_df._utils.options import check_choice

    check_choice("contaminated", contaminated, ("error", "drop"))
    check_choice("invalid", invalid, ("drop", "error"))
    if epoch_unit is not None:
        check_choice("epoch_unit", epoch_unit, ("s", "ms", "us", "ns"))
    named = named_measures(metrics)
    if not medians:
        found = [n.name for n in named if n.measure.median is not None]
        if found:
            msg = (
                f"{found!r}: a median has no per-unit sums, so it cannot be "
                f"analysed per unit.\n  Hint: use TimeToFirstClick(stat=mean), a "
                f"ratio of per-unit sums."
            )
            raise MetricSpecError(msg)
    tables = _tables(log_sdfs)
    schemas = {t: frame_schema(f) for t, f in tables.items()}
    empty = {t: pl.DataFrame(schema=s) for t, s in schemas.items()}
    # the local reader on no rows: every column and dtype error, as locally
    probe, _ = read_part(
        empty,
        whole=Whole(),
        columns=columns,
        session_gap=session_gap,
        epoch_unit=epoch_unit,  # type: ignore[arg-type]
    )
    by_list = [by] if isinstance(by, str) else list(by or [])
    shape = part_rows(probe, named, by_list, list(reserved))
    schema = wire_schema(shape.schema)
    # an enum slice (age_bucket) travels as text and sorts in its categories' order
    enums = {
        name.removeprefix(slice_column("")): list(dtype.categories)
        for name, dtype in shape.schema.items()
        if isinstance(dtype, pl.Enum)
    }
    for name, dtype in schema.items():
        if spark_type(dtype) is None:
            shown = name.removeprefix(slice_column(""))
            msg = (
                f"by={shown!r} has dtype {dtype}, which a Spark result cannot "
                f"hold.\n  Hint: cast it to text or a number first."
            )
            raise OptionError(msg)
    slices = [
        c.removeprefix(slice_column(""))
        for c in schema
        if c.startswith(slice_column(""))
    ]
    spark = tables["searches"].sparkSession
    n = partitions_of(spark, partitions)
    source = source_columns({t: list(f.columns) for t, f in tables.items()}, columns)
    whole = _global_checks(tables, source, epoch_unit)
    int_sums = _integer_sums(probe, named)
    kernel = OnlineKernel(
        tables=tuple((t, (*f.columns, ROW_NUMBER)) for t, f in tables.items()),
        metrics=_spec(named),
        by=tuple(by_list),
        reserved=tuple(reserved),
        columns=columns,
        session_gap=session_gap,
        epoch_unit=epoch_unit,
        whole=whole,
        schema=schema,
        large=large_strings(spark),
    )
    from ireval_df.spark.kernels import as_udf1

    routed = _route(tables, source, n)
    out = routed.groupBy(BUCKET).applyInArrow(as_udf1(kernel), spark_ddl(schema))
    notes: list[tuple[str, str]] = []
    rows, cached = run_job(out, notes.extend)
    experiments = _report(
        notes, contaminated=contaminated, invalid=invalid, n_searches=tables["searches"]
    )
    units, unit_keys = _units_table(tables, source)
    return _Prepared(
        rows=rows,
        cached=cached,
        named=named,
        by=by_list,
        slices=slices,
        units=units,
        unit_keys=unit_keys,
        experiments=experiments,
        int_sums=int_sums,
        schema=schema,
        enums=enums,
    )


def _spec(named: Sequence[Named]) -> dict[str, str]:
    """Return the metrics as output name -> canonical spec, for the kernels."""
    return {n.name: str(n.metric) for n in named}


def _first(issue: dict[str, Any]) -> float:
    """Return the input row number of an issue's example (none: last)."""
    row = issue.get("row")
    return float("inf") if row is None else float(row)


def _integer_sums(probe: Any, named: Sequence[Named]) -> dict[str, bool]:
    """Whether each metric's per-unit sums (``<name>__num``, ``__den``) are whole numbers."""
    from ireval_df.online.derive import GROUP, UNIT, derive, group_sums, slice_columns

    grains = {n.name: n.measure.grain for n in named}
    _, slices = slice_columns(probe, None, grains)
    derived = derive(probe, [n.measure for n in named], slices)
    out: dict[str, bool] = {}
    for group, _, frame in group_sums(
        derived, named, [GROUP, UNIT], medians=False, counts=False
    ):
        schema = frame.collect_schema()
        for n in group:
            for part in ("num", "den"):
                out[f"{n.name}__{part}"] = schema[f"{n.name}__{part}"].is_integer()
    return out


def _report(
    notes: list[tuple[str, str]],
    *,
    contaminated: str,
    invalid: str,
    n_searches: DataFrame,
) -> list[str]:
    """Add up the groups' issues and warn or raise as read_log does; return the experiments."""
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    mixed_rows: list[tuple[Any, ...]] = []
    experiments: set[str] = set()
    for kind, text in notes:
        if kind == "issue":
            issue = json.loads(text)
            problem = issue["problem"]
            if problem.endswith("(contaminated='drop')"):
                problem = "of units seen in more than one variant"
            key = (issue["table"], problem, issue["action"])
            seen = merged.get(key)
            if seen is None:
                merged[key] = dict(issue)
            else:
                seen["rows"] += issue["rows"]
                if _first(issue) < _first(seen):  # the first in input order
                    seen["example"], seen["row"] = issue["example"], issue["row"]
        elif kind == "mixed":
            mixed_rows.extend(tuple(r) for r in json.loads(text))
        elif kind == "experiments":
            experiments.update(e for e in json.loads(text) if e is not None)
    mixed = None
    if mixed_rows:
        mixed = pl.DataFrame(
            mixed_rows,
            schema={
                "experiment_id": pl.String,
                "unit_id": pl.String,
                "variant": pl.List(pl.String),
            },
            orient="row",
        ).sort("experiment_id", "unit_id")
    issues: list[Issue] = []
    for (table, problem, action), issue in merged.items():
        if mixed is not None and problem == "of units seen in more than one variant":
            issues.append(contamination_issue(mixed, issue["rows"]))
        else:
            issues.append(
                Issue(table, problem, issue["rows"], action, issue["example"])
            )
    issues.sort(key=lambda i: _rank(i)[0])
    steps = [_rank(i)[1] for i in issues]

    def refuse(first: int, last: int) -> None:
        """Raise for the first step of read_log in [first, last] that found rows."""
        if invalid != "error":
            return
        for step in range(first, last + 1):
            found = [i for i, s in zip(issues, steps, strict=True) if s == step]
            if found:
                lines = "\n".join(f"  - {i}" for i in found)
                msg = (
                    f"read_log found rows it cannot use (invalid='error'):\n{lines}\n"
                    f"  Hint: fix them, or pass invalid='drop' to drop them with a "
                    f"warning."
                )
                raise DataError(msg)

    # in read_log's order: units, searches, contamination, nothing left, the rest
    refuse(0, _CONTAMINATION_STEP - 1)
    if mixed is not None and contaminated == "error":
        raise DataError(contamination_message(mixed))
    if not experiments:  # no usable search in any group
        total = n_searches.count()
        msg = (
            "searches has no usable searches left"
            + (f" ({total} rows, all dropped: see above)" if total else "")
            + "; there is nothing to measure."
        )
        raise DataError(msg)
    refuse(_CONTAMINATION_STEP + 1, len(_ISSUE_ORDER))
    if issues:
        lines = "\n".join(f"  - {i}" for i in issues)
        errors.warn(
            f"read_log dropped or changed rows it could not use:\n{lines}\n"
            f"  Hint: pass invalid='error' to raise instead; log.issues_frame() "
            f"lists them.",
            LogWarning,
        )
    return sorted(experiments)


def _units_table(
    tables: dict[Table, DataFrame], source: dict[Table, dict[str, str]]
) -> tuple[DataFrame | None, list[str]]:
    """Return the units table as read_log reads it: canonical ids, variant not null, pre_* as doubles."""
    from pyspark.sql import functions as F  # noqa: N812

    units = tables.get("units")
    if units is None:
        return None, []
    src = source["units"]
    cols = [canonical_id(units, src["unit_id"]).alias("unit_id")]
    keys = ["unit_id"]
    if "experiment_id" in src:
        cols.append(canonical_id(units, src["experiment_id"]).alias("experiment_id"))
        keys.append("experiment_id")
    if "variant" in src:
        cols.append(_col(src["variant"]).cast("string").alias("variant"))
    for name in units.columns:
        if name.startswith("pre_") and name not in src.values():
            value = _col(name)
            if dict(units.dtypes)[name] == "string":
                value = F.trim(value)
            cols.append(value.cast("double").alias(name))
    frame = units.select(*cols)
    if "variant" in src:
        frame = frame.where(F.col("variant").isNotNull())
    return frame, keys


# --- the public functions ------------------------------------------------------------------


def online_metrics(
    log_sdfs: Mapping[str, Any],
    metrics: str | Sequence[str] | dict[str, str],
    *,
    by: str | Sequence[str] | None = None,
    columns: Mapping[str, Any] | None = None,
    session_gap: str | dt.timedelta = "30m",
    contaminated: str = "error",
    invalid: str = "drop",
    epoch_unit: str | None = None,
    partitions: int | None = None,
) -> DataFrame:
    """Compute online metrics of a log held in Spark: :func:`ireval_df.online.metrics`, on a cluster.

    The result has exactly the rows, columns and values of
    ``ie.online.metrics(ie.online.read_log(...), metrics, by=by)`` on the
    same tables (values equal to 1e-12), and :func:`~ireval_df.online.read_log`'s
    warning (the same lines, counts and example rows, the rows numbered in
    the order Spark reads them) or error.

    Parameters
    ----------
    log_sdfs : mapping of str to pyspark.sql.DataFrame
        ``{"searches": sdf, "results": sdf, "events": sdf, "units": sdf}``;
        all but ``searches`` optional, each as
        :func:`~ireval_df.online.read_log` takes it.
    metrics, by
        As :func:`ireval_df.online.metrics`.
    columns, session_gap, contaminated, invalid, epoch_unit
        As :func:`ireval_df.online.read_log`.
    partitions : int, optional
        How many groups of users (Python calls) to split the log into;
        default ``spark.sql.shuffle.partitions``. The numbers never
        depend on it.

    Returns
    -------
    pyspark.sql.DataFrame
        ``experiment_id, variant, [by...], metric, [position], value,
        n_units, n_searches``, sorted as :func:`ireval_df.online.metrics`
        sorts; computed (and cached) before this function returns.
        ``pl.from_arrow(result.toArrow())`` gives the polars frame.

    Raises
    ------
    MetricSpecError, OptionError, SchemaError
        Before any job, as locally.
    DataError
        As :func:`~ireval_df.online.read_log`: repeated or null search
        ids, repeated units, contaminated units, rows it cannot use with
        ``invalid="error"``.

    See Also
    --------
    ireval_df.online.metrics : the same on one machine.

    Examples
    --------
    >>> # out = ireval_df.spark.online_metrics(
    >>> #     {"searches": spark.read.parquet("log/searches.parquet"),
    >>> #      "events": spark.read.parquet("log/events.parquet")}, ["CTR"])
    """
    from pyspark.sql import functions as F  # noqa: N812

    named = named_measures(metrics)
    positional = any(n.measure.by_position for n in named)
    run = _prepare(
        log_sdfs,
        metrics,
        by=by,
        reserved=["position"] if positional else [],
        columns=columns,
        session_gap=session_gap,
        contaminated=contaminated,
        invalid=invalid,
        epoch_unit=epoch_unit,
        partitions=partitions,
        medians=True,
    )
    rows = run.rows
    slice_cols = [slice_column(s) for s in run.slices]
    keys = ["experiment_id", "variant", *slice_cols]
    # per unit first: a unit's rows may come from several groups
    per_unit = (
        rows.where(F.col(ROWS) == SUMS)
        .groupBy(*keys, "unit_id", "position", METRIC)
        .agg(
            F.sum("num").alias("num"),
            F.sum("den").alias("den"),
            F.sum("n_searches").alias("n_searches"),
        )
    )
    summed = per_unit.groupBy(*keys, "position", METRIC).agg(
        F.sum("num").alias("num"),
        F.sum("den").alias("den"),
        F.count(F.lit(1)).cast("bigint").alias("n_units"),
        F.sum("n_searches").cast("bigint").alias("n_searches"),
    )
    grid = rows.where(F.col(ROWS) == GRID).select(*keys).distinct()
    medians = (
        rows.where(F.col(ROWS) == MEDIAN)
        .groupBy(*keys, METRIC)
        .agg(F.median("value").alias("__ireval_median"))
    )
    index = {n.name: i for i, n in enumerate(run.named)}
    median_ids = [index[n.name] for n in run.named if n.measure.median is not None]
    position_ids = [index[n.name] for n in run.named if n.measure.by_position]
    other_ids = [i for i in index.values() if i not in position_ids]
    spark = rows.sparkSession
    ids = spark.createDataFrame([(i,) for i in other_ids], f"`{METRIC}` int")
    flat = _null_safe_left(
        grid.crossJoin(ids),
        summed.where(F.col("position").isNull()).drop("position"),
        [*keys, METRIC],
    )
    flat = flat.withColumn("position", F.lit(None).cast("int")).fillna(
        0, subset=["n_units", "n_searches"]
    )
    positions = (
        summed.where(F.col(METRIC).isin(position_ids) & (F.col("den") != 0))
        if position_ids
        else None
    )
    table = flat if positions is None else flat.unionByName(positions)
    if median_ids:
        table = _null_safe_left(table, medians, [*keys, METRIC])
        ratio = F.when(F.col("den") != 0, F.col("num") / F.col("den"))
        value = F.when(
            F.col(METRIC).isin(median_ids), F.col("__ireval_median")
        ).otherwise(ratio)
    else:
        value = F.when(F.col("den") != 0, F.col("num") / F.col("den"))
    names = spark.createDataFrame(
        [(i, n.name) for i, n in enumerate(run.named)], f"`{METRIC}` int, metric string"
    )
    table = table.withColumn("value", value.cast("double")).join(
        F.broadcast(names), METRIC
    )
    by_cols = [slice_column(s) for s in run.by]
    ordered = table.orderBy(
        *(_sort_key(run, k) for k in ["experiment_id", "variant", *by_cols]),
        F.col(METRIC),
        F.col("position").asc_nulls_first(),
    )
    out_cols = [
        F.col("experiment_id"),
        F.col("variant"),
        *(_col(slice_column(s)).alias(s) for s in run.by),
        F.col("metric"),
        *([F.col("position")] if positional else []),
        F.col("value"),
        F.col("n_units"),
        F.col("n_searches"),
    ]
    result = ordered.select(*out_cols).cache()
    result.count()
    run.cached.unpersist()  # the groups' rows: summed into the cached result
    return result


def _sort_key(run: _Prepared, name: str) -> Column:
    """Return the ascending sort key of a column, nulls first, as polars sorts it.

    An enum slice sorts by the position of its value among the categories.
    """
    from pyspark.sql import functions as F  # noqa: N812

    categories = run.enums.get(name.removeprefix(slice_column("")))
    if categories is None:
        return _col(name).asc_nulls_first()
    order = F.array(*(F.lit(c) for c in categories))
    return F.array_position(order, _col(name)).asc_nulls_first()


def _null_safe_left(
    left: DataFrame, right: DataFrame, keys: Sequence[str]
) -> DataFrame:
    """``left`` joined with ``right`` on ``keys``, nulls equal (polars' ``nulls_equal``)."""
    renamed = right.select(
        *(_col(k).alias(f"__ireval_r_{k}") for k in keys),
        *(_col(c) for c in right.columns if c not in keys),
    )
    condition = None
    for k in keys:
        term = _col(k).eqNullSafe(_col(f"__ireval_r_{k}"))
        condition = term if condition is None else condition & term
    joined = left.join(renamed, condition, "left")
    return joined.drop(*(f"__ireval_r_{k}" for k in keys))


def unit_table(
    log_sdfs: Mapping[str, Any],
    metrics: str | Sequence[str] | dict[str, str],
    *,
    by: str | Sequence[str] | None = None,
    columns: Mapping[str, Any] | None = None,
    session_gap: str | dt.timedelta = "30m",
    contaminated: str = "error",
    invalid: str = "drop",
    epoch_unit: str | None = None,
    partitions: int | None = None,
) -> DataFrame:
    """Sum each metric's numerator and denominator per unit, on Spark: :func:`ireval_df.online.unit_table`.

    The result has exactly the rows, columns and values of
    ``ie.online.unit_table(ie.online.read_log(...), metrics, by=by)`` on
    the same tables: one row per experiment, variant, unit (and slice),
    ``<name>__num`` and ``<name>__den`` per metric (one pair per position
    for ``PositionCTR``), the units table's ``pre_*`` columns, and
    without ``by`` a row of zeros for each unit the units table assigns
    that never searched. A unit's sums are added up over every group of
    users its searches are in.

    Parameters
    ----------
    log_sdfs, columns, session_gap, contaminated, invalid, epoch_unit, partitions
        As :func:`online_metrics`.
    metrics, by
        As :func:`ireval_df.online.unit_table`.

    Returns
    -------
    pyspark.sql.DataFrame
        Sorted by experiment, variant, unit and slices; computed (and
        cached) before this function returns. It is small (one row per
        unit): ``pl.from_arrow(result.toArrow())`` is the local frame
        :func:`ireval_df.online.ab_test` takes with
        :func:`~ireval_df.online.ratio` specs.

    Raises
    ------
    MetricSpecError
        A median metric (no per-unit sums give a median), before any job.
    OptionError, SchemaError, DataError
        As :func:`online_metrics`.

    Examples
    --------
    >>> # table = ireval_df.spark.unit_table(log_sdfs, ["CTR"])
    >>> # ie.online.ab_test(pl.from_arrow(table.toArrow()),
    >>> #                   {"CTR": ie.online.ratio("CTR__num", "CTR__den")},
    >>> #                   control="A")
    """
    run = _prepare(
        log_sdfs,
        metrics,
        by=by,
        reserved=["position"],
        columns=columns,
        session_gap=session_gap,
        contaminated=contaminated,
        invalid=invalid,
        epoch_unit=epoch_unit,
        partitions=partitions,
        medians=False,
    )
    try:
        return _unit_rows(run, run.named)
    finally:
        run.cached.unpersist()  # the groups' rows: summed into the cached result


def _unit_rows(run: _Prepared, named: Sequence[Named]) -> DataFrame:
    """Return the unit table of ``named`` (metrics of ``run`` with sums), cached and counted."""
    from pyspark.sql import functions as F  # noqa: N812

    rows = run.rows.where(F.col(ROWS).isin(GRID, SUMS))
    slice_cols = [slice_column(s) for s in run.slices]
    keys = ["experiment_id", "variant", "unit_id", *slice_cols]
    sums: list[Column] = []
    names: list[tuple[str, bool]] = []

    def pair(name: str, metric: str, cond: Column) -> None:
        for part in ("num", "den"):
            sums.append(F.sum(F.when(cond, F.col(part))).alias(f"{name}__{part}"))
            names.append((f"{name}__{part}", run.int_sums[f"{metric}__{part}"]))

    for n in named:
        metric = (F.col(ROWS) == SUMS) & (F.col(METRIC) == run.metric_id(n.name))
        if n.measure.by_position:
            shown = (
                rows.where(metric & F.col("position").isNotNull())
                .groupBy("position")
                .agg(F.sum("den").alias("den"))
                .where(F.col("den") > 0)
                .select("position")
                .collect()
            )
            for p in sorted(int(r[0]) for r in shown):
                pair(f"{n.name}[{p}]", n.name, metric & (F.col("position") == p))
        else:
            pair(n.name, n.name, metric & F.col("position").isNull())
    table = rows.groupBy(*keys).agg(*sums)
    out_keys = [
        "experiment_id",
        "variant",
        "unit_id",
        *(slice_column(s) for s in run.by),
    ]
    if not run.by:
        table = _assigned(run, table)
    table = table.select(
        *out_keys,
        *(
            F.coalesce(_col(name), F.lit(0.0))
            .cast("bigint" if whole else "double")
            .alias(name)
            for name, whole in names
        ),
    )
    table = _covariates(run, table, [name for name, _ in names])
    ordered = table.orderBy(*(_sort_key(run, k) for k in out_keys))
    result = ordered.select(
        *(_col(k).alias(k.removeprefix(slice_column(""))) for k in out_keys),
        *(_col(c) for c in ordered.columns if c not in out_keys),
    ).cache()
    result.count()
    return result


def _median_rows(run: _Prepared, named: Named) -> tuple[pl.DataFrame, list[str]]:
    """Return a median metric's rows as :func:`ireval_df.online.ab_test` reads them.

    One row per search with a value, and one with a null value per unit
    and slice (the grid): the test compares the units with a value, and
    its sample-ratio check counts every unit that searched, as locally.
    """
    from pyspark.sql import functions as F  # noqa: N812

    values = (F.col(ROWS) == MEDIAN) & (F.col(METRIC) == run.metric_id(named.name))
    rows = run.rows.where((F.col(ROWS) == GRID) | values).select(
        "experiment_id",
        "variant",
        "unit_id",
        *(_col(slice_column(s)).alias(s) for s in run.by),
        F.col("value").alias("__value"),
    )
    return to_polars(rows), list(run.by)


def _assigned(run: _Prepared, table: DataFrame) -> DataFrame:
    """Add the units of the units table that have a variant but never searched."""
    from pyspark.sql import functions as F  # noqa: N812

    units = run.units
    if units is None or "variant" not in units.columns:
        return table
    if "experiment_id" in units.columns:
        assigned = units.select("experiment_id", "variant", "unit_id")
    else:
        if len(run.experiments) != 1:
            return table  # which experiment a unit without searches is in is unknown
        assigned = units.select(
            F.lit(run.experiments[0]).cast("string").alias("experiment_id"),
            "variant",
            "unit_id",
        )
    keys = ["experiment_id", "variant", "unit_id"]
    missing = assigned.join(table.select(*keys), keys, "left_anti")
    return table.unionByName(missing, allowMissingColumns=True)


def _covariates(run: _Prepared, table: DataFrame, sums: Sequence[str]) -> DataFrame:
    """Join the units table's pre-period columns (``pre_*``)."""
    units = run.units
    if units is None:
        return table
    pre = [c for c in units.columns if c.startswith("pre_")]
    if not pre:
        return table
    clash = [c for c in pre if c in sums]
    if clash:
        msg = f"units columns {clash!r} clash with the unit table's sums"
        raise OptionError(msg)
    on = run.unit_keys
    return table.join(units.select(*on, *pre), on, "left")


def ab_test(
    log_sdfs: Mapping[str, Any],
    metrics: Any,
    *,
    control: Any,
    by: str | Sequence[str] | None = None,
    cuped: bool = False,
    correction: str | None = "holm",
    alpha: float = 0.05,
    expected: Mapping[str, float] | None = None,
    columns: Mapping[str, Any] | None = None,
    session_gap: str | dt.timedelta = "30m",
    contaminated: str = "error",
    invalid: str = "drop",
    epoch_unit: str | None = None,
    partitions: int | None = None,
    n_resamples: int = 1000,
    seed: int | None = 0,
) -> pl.DataFrame:
    """Compare the arms of an experiment logged in Spark: :func:`ireval_df.online.ab_test`.

    The unit table (:func:`unit_table`'s rows: one per unit and slice) is
    built on Spark, collected to the driver, and analysed by the local
    :func:`ireval_df.online.ab_test` code: the result is the local one on
    the same log (the same rows, values equal to 1e-12). A median metric
    (``TimeToFirstClick(stat=median)``) is compared by a bootstrap over
    units of its per-search values: the same job gives those (one row per
    clicked search, and per unit and slice), and they are collected too,
    so the driver needs room for them.

    Parameters
    ----------
    log_sdfs, columns, session_gap, contaminated, invalid, epoch_unit, partitions
        As :func:`online_metrics`.
    metrics, control, by, cuped, correction, alpha, expected
        As :func:`ireval_df.online.ab_test` on a log: registry names, or
        output name -> registry name or a spec on the unit table's columns.
    n_resamples, seed
        As :func:`ireval_df.online.ab_test`: the median metrics' bootstrap.

    Returns
    -------
    polars.DataFrame
        :func:`ireval_df.online.ab_test`'s columns.

    Raises
    ------
    OptionError, SchemaError, DataError
        As :func:`ireval_df.online.ab_test` and :func:`online_metrics`.

    Examples
    --------
    >>> # ireval_df.spark.ab_test(log_sdfs, ["CTR"], control="control", cuped=True)
    """
    from ireval_df._utils.provenance import attach
    from ireval_df.online.ab import ab_test_on

    def tables(sums: dict[str, str], medians: Sequence[Named]) -> LogTables:
        # one job for the per-unit sums and the medians' per-search rows
        run = _prepare(
            log_sdfs,
            {**sums, **{n.name: str(n.metric) for n in medians}},
            by=by,
            reserved=["position"],
            columns=columns,
            session_gap=session_gap,
            contaminated=contaminated,
            invalid=invalid,
            epoch_unit=epoch_unit,
            partitions=partitions,
            medians=True,
        )
        try:
            table = None
            if sums:
                cached = _unit_rows(run, [n for n in run.named if n.name in sums])
                try:
                    table = to_polars(cached)
                finally:
                    cached.unpersist()
            return table, {n.name: _median_rows(run, n) for n in medians}
        finally:
            run.cached.unpersist()

    result, settings = ab_test_on(
        tables,
        metrics,
        control=control,
        by=by,
        cuped=cuped,
        correction=correction,
        alpha=alpha,
        expected=expected,
        n_resamples=n_resamples,
        seed=seed,
    )
    attach(result, settings)
    return result
