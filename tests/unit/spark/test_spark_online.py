"""``ireval_df.spark.online_metrics``, ``unit_table`` and ``ab_test`` equal the local ones.

The oracle is the local code on the same tables: ``ie.online.metrics``,
``unit_table`` and ``ab_test`` of ``ie.online.read_log``, to 1e-12, with
the same warnings (counts and example rows) and the same errors. The random logs put in every case that crosses groups of
users: units shared by users, events whose user is not their search's,
an ``event_id`` repeated across users, unknown searches, clicks at
undisplayed positions, contaminated units, zero-result searches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import DataError, MetricSpecError, OptionError, SchemaError
from tests.online_names import online_names
from tests.spark_helpers import assert_same, caught, collect

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.spark

DATA_LOG = ie.online.example_log  # the hand-made log's reader, for its frames

ALL = online_names(means=True)  # the medians come in tests of their own
RESULT_GRAIN = ["ImpressionCTR", "PositionCTR", "DwellTime", "SatClickRate"]


def example_frames() -> dict[str, pl.DataFrame]:
    """The tables of ``ie.online.example_log()``, as given to read_log."""
    log = ie.online.example_log()
    searches = log.searches.select(
        "search_id", "user_id", "ts", "variant", "query", "n_results", "device"
    )
    assert log.results is not None
    assert log.events is not None
    return {"searches": searches, "results": log.results, "events": log.events}


def bundled_frames() -> dict[str, pl.DataFrame]:
    """The bundled simulated log (``data/log``)."""
    from tests.unit.spark.conftest import DATA

    return {
        t: pl.read_parquet(DATA / "log" / f"{t}.parquet")
        for t in ("searches", "results", "events", "units")
    }


def random_frames(
    seed: int, *, households: bool, units_variant: bool, epoch: bool = False
) -> dict[str, Any]:
    """A small random log with every case that crosses groups of users."""
    rng = np.random.default_rng(seed)
    n_users = 40
    users = [f"u{i:02d}" for i in range(n_users)]
    base = np.datetime64("2024-03-01T08:00:00")
    searches, results, events = [], [], []
    queries = ["red shoes", "Red  Shoes", "boots", "hat", "blue hat", "socks"]
    unit_of = {u: (f"h{i // 3}" if households else u) for i, u in enumerate(users)}
    arm = {unit: ("A" if rng.random() < 0.5 else "B") for unit in set(unit_of.values())}
    sid = 0
    for user in users:
        t = base + np.timedelta64(int(rng.integers(0, 3600)), "s")
        for _ in range(int(rng.integers(0, 7))):
            t = t + np.timedelta64(int(rng.choice([20, 90, 400, 2500])), "s")
            s = f"s{sid:04d}"
            sid += 1
            n = int(rng.choice([0, 1, 3, 5]))
            variant = arm[unit_of[user]]
            searches.append(
                {
                    "search_id": s,
                    "user_id": user,
                    "unit_id": unit_of[user],
                    "ts": str(t),
                    "variant": variant,
                    "query": str(rng.choice(queries)),
                    "n_results": n,
                    "device": str(rng.choice(["mobile", "desktop"])),
                }
            )
            for p in range(1, n + 1):
                results.append(
                    {
                        "search_id": s,
                        "position": p,
                        "doc_id": f"d{int(rng.integers(0, 30))}",
                        "source_type": str(rng.choice(["product", "guide"])),
                    }
                )
            for _ in range(int(rng.integers(0, 4))):
                kind = str(
                    rng.choice(["click", "click", "add_to_cart", "purchase", "scroll"])
                )
                dt = int(rng.integers(-5, 200))
                events.append(
                    {
                        "event_id": f"e{len(events):05d}",
                        "search_id": s,
                        "user_id": user,
                        "ts": str(t + np.timedelta64(dt, "s")),
                        "event_type": kind,
                        "position": int(rng.integers(1, 7))
                        if kind == "click"
                        else None,
                        "value": float(rng.integers(1, 50))
                        if kind == "purchase"
                        else None,
                        "dwell_ms": int(rng.integers(-1000, 90000))
                        if kind == "click"
                        else None,
                    }
                )
    # actions outside search, an event of another user, a repeated event id
    # across users, an unknown search, a null user, a null time
    events.append(
        {
            "event_id": "x1",
            "search_id": None,
            "user_id": "u03",
            "ts": str(base + np.timedelta64(5000, "s")),
            "event_type": "scroll",
            "position": None,
            "value": None,
            "dwell_ms": None,
        }
    )
    events.append(
        {
            "event_id": "x2",
            "search_id": searches[0]["search_id"],
            "user_id": "u39",
            "ts": str(base + np.timedelta64(9000, "s")),
            "event_type": "click",
            "position": 1,
            "value": None,
            "dwell_ms": None,
        }
    )
    events.append(
        dict(events[1], event_id=events[-1]["event_id"], user_id="u20", search_id=None)
    )
    events.append(
        {
            "event_id": "x4",
            "search_id": "nope",
            "user_id": "u05",
            "ts": str(base),
            "event_type": "click",
            "position": 1,
            "value": None,
            "dwell_ms": None,
        }
    )
    results.append(
        {"search_id": "nope", "position": 1, "doc_id": "d1", "source_type": "guide"}
    )
    results.append(dict(results[0]))  # a repeated slot
    results.append(dict(results[0], position=0))
    searches.append(dict(searches[0], search_id="snull", user_id=None))
    searches.append(dict(searches[1], search_id="stime", ts=None))
    # a contaminated unit: one search in the other arm
    other = dict(searches[2], search_id="scross")
    mates = [
        u
        for u in users
        if unit_of[u] == unit_of[other["user_id"]] and u != other["user_id"]
    ]
    if mates:  # by another user of the household: two users, one unit
        other["user_id"] = mates[0]
    other["variant"] = "B" if other["variant"] == "A" else "A"
    searches.append(other)
    frames: dict[str, Any] = {
        "searches": pl.DataFrame(searches),
        "results": pl.DataFrame(results),
        "events": pl.DataFrame(
            events,
            schema_overrides={
                "value": pl.Float64,
                "dwell_ms": pl.Int64,
                "position": pl.Int64,
            },
        ),
    }
    units = sorted(set(unit_of.values())) + ["never1", "never2"]
    frames["units"] = pl.DataFrame(
        {
            "unit_id": units,
            "variant": [arm.get(u, "A") for u in units],
            "pre_clicked_searches": rng.integers(0, 10, len(units)).astype(float),
            "pre_searches_with_results": rng.integers(10, 20, len(units)).astype(float),
        }
    )
    if epoch:  # times as epoch milliseconds, and sessions given (one missing)
        for table in ("searches", "events"):
            frames[table] = frames[table].with_columns(
                pl.col("ts").str.to_datetime().dt.epoch("ms")
            )
        frames["searches"] = frames["searches"].with_columns(
            pl.when(pl.col("search_id") != "s0003")
            .then(pl.col("user_id") + "/" + (pl.col("ts") // 3_600_000).cast(pl.String))
            .alias("session_id")
        )
    if units_variant:
        frames["searches"] = frames["searches"].drop("variant")
    if not households:
        frames["searches"] = frames["searches"].drop("unit_id")
    return frames


def local_and_spark(
    frames: dict[str, Any],
    to_spark: Callable[[pl.DataFrame], Any],
    local: Callable[[Any], Any],
    remote: Callable[[dict[str, Any]], Any],
    **options: Any,
) -> tuple[Any, list[str], Any, list[str]]:
    log, read_warnings = caught(lambda: ie.online.read_log(**frames, **options))
    want = local(log)
    sdfs = {t: to_spark(f) for t, f in frames.items()}
    got, spark_warnings = caught(lambda: remote(sdfs))
    return want, read_warnings, got, spark_warnings


def test_example_log(to_spark):
    frames = example_frames()
    by = ["source_type", "device"]  # a result attribute, then a search one
    metrics = [
        "CTR",
        "PositionCTR",
        "TimeToFirstClick(stat=median)",
        "QueriesPerSession",
    ]
    want, _, got, _ = local_and_spark(
        frames,
        to_spark,
        lambda log: ie.online.metrics(log, metrics, by="device"),
        lambda sdfs: ie.spark.online_metrics(sdfs, metrics, by="device", partitions=3),
    )
    assert_same(collect(got), want)
    want, _, got, _ = local_and_spark(
        frames,
        to_spark,
        lambda log: ie.online.metrics(log, RESULT_GRAIN, by=by),
        lambda sdfs: ie.spark.online_metrics(sdfs, RESULT_GRAIN, by=by),
    )
    assert_same(collect(got), want)
    want, _, got, _ = local_and_spark(
        frames,
        to_spark,
        lambda log: ie.online.unit_table(log, RESULT_GRAIN, by=by),
        lambda sdfs: ie.spark.unit_table(sdfs, RESULT_GRAIN, by=by),
    )
    assert_same(collect(got), want)


def test_bundled_log_every_metric(to_spark):
    frames = bundled_frames()
    metrics = [*ALL, "TimeToFirstClick(stat=median)"]
    want, local_w, got, spark_w = local_and_spark(
        frames,
        to_spark,
        lambda log: ie.online.metrics(log, metrics, by="device"),
        lambda sdfs: ie.spark.online_metrics(sdfs, metrics, by="device", partitions=5),
    )
    assert_same(collect(got), want)
    assert spark_w == local_w
    sdfs = {t: to_spark(f) for t, f in frames.items()}
    log = ie.online.read_log(**frames)
    table = ie.spark.unit_table(sdfs, ALL, partitions=2)
    assert_same(collect(table), ie.online.unit_table(log, ALL))
    # an enum slice (age_bucket, from published_at) comes back as text, in
    # the enum's order; a Boolean one as it is
    by = ["age_bucket", "serp_answer"]
    table = ie.spark.unit_table(sdfs, RESULT_GRAIN, by=by, partitions=3)
    want = ie.online.unit_table(log, RESULT_GRAIN, by=by)
    assert_same(collect(table), want.with_columns(pl.col(pl.Enum).cast(pl.String)))


def test_the_docs_example_runs_on_the_bundled_log(spark):
    """docs/spark.md's online example (which test_docs cannot run), on data/log.

    Its asserts compare ``ireval_df.spark.online_metrics`` and ``ab_test``
    (with CUPED) with the local functions.
    """
    from tests.unit.spark.conftest import DATA

    page = (DATA.parent / "docs" / "spark.md").read_text()
    block = page.split("## Online metrics on Spark")[1].split("```python\n")[1]
    code = block.split("```")[0]
    lake = 'f"s3a://lake/log/{t}/"'
    assert lake in code
    code = code.replace(lake, "str(DATA / 'log' / f'{t}.parquet')")
    exec(code, {"spark": spark, "DATA": DATA})  # noqa: S102 - the page's own code


@pytest.mark.parametrize(
    ("seed", "households", "units_variant", "partitions"),
    [(1, True, False, 3), (2, True, True, 7), (3, False, True, 4)],
)
def test_random_logs(to_spark, seed, households, units_variant, partitions):
    frames = random_frames(
        seed, households=households, units_variant=units_variant, epoch=seed == 3
    )
    options = {"contaminated": "drop"}
    if seed == 1:  # sliced by a search attribute, with a median and a click curve
        metrics = [
            "CTR",
            "PositionCTR",
            "TimeToFirstClick(stat=median)",
            "SessionSuccess",
        ]
        local = lambda log: ie.online.metrics(log, metrics, by="device")  # noqa: E731
        remote = lambda sdfs: ie.spark.online_metrics(  # noqa: E731
            sdfs, metrics, by="device", partitions=partitions, **options
        )
    elif seed == 2:  # every per-unit sum, with the units that never searched
        local = lambda log: ie.online.unit_table(log, ALL)  # noqa: E731
        remote = lambda sdfs: ie.spark.unit_table(  # noqa: E731
            sdfs, ALL, partitions=partitions, **options
        )
    else:  # sliced by a result attribute
        result = ["ImpressionCTR", "PositionCTR", "DwellTime"]
        local = lambda log: ie.online.unit_table(log, result, by="source_type")  # noqa: E731
        remote = lambda sdfs: ie.spark.unit_table(  # noqa: E731
            sdfs, result, by="source_type", partitions=partitions, **options
        )
    want, local_w, got, spark_w = local_and_spark(
        frames, to_spark, local, remote, **options
    )
    assert_same(collect(got), want)
    assert spark_w == local_w
    assert local_w  # the random log has problems to report


def test_errors_as_locally(spark, to_spark):
    frames = random_frames(5, households=True, units_variant=False)
    sdfs = {t: to_spark(f) for t, f in frames.items()}

    def both(error: type[Exception], local: Any, remote: Any) -> None:
        with pytest.raises(error) as want:
            local()
        with pytest.raises(error) as got:
            remote()
        assert str(got.value) == str(want.value)

    # contaminated units: the whole log's list, as locally
    both(
        DataError,
        lambda: ie.online.metrics(ie.online.read_log(**frames), ["CTR"]),
        lambda: ie.spark.online_metrics(sdfs, ["CTR"]),
    )
    # a search_id repeated across users
    repeated = dict(frames)
    s = frames["searches"]
    repeated["searches"] = pl.concat([s, s.head(1).with_columns(user_id=pl.lit("u30"))])
    both(
        DataError,
        lambda: ie.online.read_log(**repeated),
        lambda: ie.spark.online_metrics(
            {t: to_spark(f) for t, f in repeated.items()}, ["CTR"]
        ),
    )
    # a unit with two rows
    twice = dict(frames, units=pl.concat([frames["units"], frames["units"].tail(2)]))
    both(
        DataError,
        lambda: ie.online.read_log(**twice),
        lambda: ie.spark.online_metrics(
            {t: to_spark(f) for t, f in twice.items()}, ["CTR"]
        ),
    )
    # invalid="error": the first step with a problem, counted over all groups
    options = {"invalid": "error", "contaminated": "drop"}
    with pytest.raises(DataError) as want:
        ie.online.read_log(**frames, **options)
    with pytest.raises(DataError) as got:
        ie.spark.online_metrics(sdfs, ["CTR"], **options)
    assert str(got.value) == str(want.value)
    # before any job: metrics, slices, columns, options
    with pytest.raises(MetricSpecError):
        ie.spark.online_metrics(sdfs, ["NoSuchMetric"])
    with pytest.raises(MetricSpecError):
        ie.spark.unit_table(sdfs, ["TimeToFirstClick(stat=median)"])
    with pytest.raises(OptionError):
        ie.spark.online_metrics(sdfs, ["CTR"], by="source_type")
    with pytest.raises(OptionError):
        ie.spark.online_metrics(sdfs, ["CTR"], invalid="ignore")
    with pytest.raises(SchemaError):
        ie.spark.online_metrics({"searches": sdfs["searches"].drop("query")}, ["CTR"])
    with pytest.raises(SchemaError):
        ie.spark.online_metrics({"searches": frames["searches"]}, ["CTR"])
    with pytest.raises(OptionError):
        ie.spark.online_metrics({"clicks": sdfs["events"], **sdfs}, ["CTR"])


def test_spellings_columns_and_integer_ids_as_locally(to_spark):
    """``columns=``, well-known spellings and integer ids route as read_log reads them."""
    frames = example_frames()
    number = {f"s{i}": i for i in range(1, 6)}
    frames["searches"] = frames["searches"].rename(
        {"search_id": "serp_id", "user_id": "visitor"}
    )
    frames["searches"] = frames["searches"].with_columns(
        pl.col("serp_id").replace_strict(number, return_dtype=pl.Int64)
    )
    frames["events"] = frames["events"].rename({"user_id": "visitor"})
    frames["events"] = frames["events"].with_columns(  # integers, as the searches
        pl.col("search_id").replace_strict(number, return_dtype=pl.Int64)
    )
    frames["results"] = frames["results"].with_columns(  # text: "1" is 1
        pl.col("search_id")
        .replace_strict(number, return_dtype=pl.Int64)
        .cast(pl.String)
    )
    options = {"columns": {"visitor": "user_id"}}
    metrics = ["CTR", "ClicksPerSearch", "Reformulation"]
    want, local_w, got, spark_w = local_and_spark(
        frames,
        to_spark,
        lambda log: ie.online.metrics(log, metrics),
        lambda sdfs: ie.spark.online_metrics(sdfs, metrics, partitions=2, **options),
        **options,
    )
    assert_same(collect(got), want)
    assert spark_w == local_w == []  # every result and event found its search


def test_every_problem_of_read_log_has_its_place_in_the_spark_order():
    """The driver orders the groups' issues as read_log does: every rule is listed."""
    import ast
    import inspect

    from ireval_df.online import log as log_module
    from ireval_df.spark.online import _ISSUE_ORDER

    tree = ast.parse(inspect.getsource(log_module))
    problems = [
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "_Rule"
        and isinstance(node.args[0], ast.Constant)
    ]
    assert len(problems) >= 20
    starts = {start for _, start, _ in _ISSUE_ORDER}
    for problem in problems:
        assert any(problem.startswith(start) for start in starts), problem


@pytest.mark.parametrize("by", [None, "device"])
def test_ab_test_with_a_median_and_cuped_as_locally(to_spark, by):
    """A median (a bootstrap of per-search rows) beside ratios, in one job."""
    frames = bundled_frames()
    metrics = {
        "CTR": "CTR",
        "ttfc": "TimeToFirstClick(stat=median)",
        "ClickRR": "ClickRR",
        "clicks": ie.online.mean("CTR__num", pre="pre_clicked_searches"),
    }
    options = {"control": "control", "by": by, "cuped": True}
    log, read_w = caught(lambda: ie.online.read_log(**frames))
    want, local_w = caught(lambda: ie.online.ab_test(log, metrics, **options))
    sdfs = {t: to_spark(f) for t, f in frames.items()}
    got, spark_w = caught(
        lambda: ie.spark.ab_test(sdfs, metrics, partitions=3, **options)
    )
    assert want.filter(pl.col("metric") == "ttfc").height >= 1
    assert want["p_value"].is_not_null().all()
    assert_same(got, want)
    assert spark_w == read_w + local_w  # the log's warnings once, then the test's


def test_ab_test_of_a_median_beside_a_unit_level_spec_as_locally(to_spark):
    """No registry sums: the unit table is read for its pre-period columns only."""
    frames = bundled_frames()
    metrics = {
        "ttfc": "TimeToFirstClick(stat=median)",
        "pre": ie.online.mean("pre_clicked_searches"),
    }
    log, _ = caught(lambda: ie.online.read_log(**frames))
    want, _ = caught(lambda: ie.online.ab_test(log, metrics, control="control"))
    sdfs = {t: to_spark(f) for t, f in frames.items()}
    got, _ = caught(lambda: ie.spark.ab_test(sdfs, metrics, control="control"))
    assert want["metric"].to_list() == ["ttfc", "pre"]
    assert_same(got, want)


def test_ab_test_of_a_median_alone_counts_units_without_a_click(spark, to_spark):
    """Units whose searches have no click count in the sample-ratio check, as locally."""
    from scipy.stats import chisquare

    frames = random_frames(2, households=True, units_variant=True)
    metric = ["TimeToFirstClick(stat=median)"]
    options = {"contaminated": "drop"}
    log, _ = caught(lambda: ie.online.read_log(**frames, **options))
    want, _ = caught(lambda: ie.online.ab_test(log, metric, control="A"))
    sdfs = {t: to_spark(f) for t, f in frames.items()}
    cached = spark.sparkContext._jsc.getPersistentRDDs().size()
    got, _ = caught(
        lambda: ie.spark.ab_test(sdfs, metric, control="A", partitions=4, **options)
    )
    assert_same(got, want)
    # the job's rows were cached for the two reads of them, and freed
    assert spark.sparkContext._jsc.getPersistentRDDs().size() == cached
    searched = log.searches.group_by("variant").agg(pl.col("unit_id").n_unique())
    n = dict(searched.iter_rows())
    assert want["srm_p_value"].item() == pytest.approx(
        chisquare([n["A"], n["B"]]).pvalue, rel=1e-12
    )
    assert want["n_control"].item() < n["A"]  # the test itself: units with a click
