"""Online metrics against reading the log, and ab_test against tea-tasting.

``python bench/online.py --data DIR`` reads a search log written by
``bench/generate_log.py`` (``log-10m``: 10M searches, ~50M results, ~9M
events, 1M users; ``ab_units.parquet``: 10M units) and measures, in one
process, interleaved for ``--rounds`` rounds (the order reversed every other
round, one untimed warm-up of each call first):

* ``floor``: what any tool computing on these files does at least: read the
  four Parquet files whole (``pl.read_parquet``) and aggregate one column of
  each (sum of ``n_results``, count of result ``position``, count of events,
  sum of ``pre_clicks``);
* ``online.metrics``: ``ie.online.metrics(ie.online.read_log(DIR), [every
  online metric], by=["query_class", "device"])``, from the same files;
* ``lean plan``: a reference point between the two, the least a dataframe
  tool does to reach every grain of those metrics, with no check of the log
  and four aggregates instead of twenty: one polars plan (scans with only
  the columns used, joins of results and clicks to their searches on
  ``search_id``, a sort of the searches for sessions) giving the click rate,
  reciprocal rank and zero-result rate per search, results and clicks per
  position, and searches per session, by arm and the two slices;

then, on ``ab_units.parquet`` read once into memory (one row per unit), each
round:

* ``online.ab_test``: ``ie.online.ab_test(units, {"clicks":
  ie.online.mean("clicks", pre="pre_clicks"), "ctr": ie.online.ratio(
  "clicked_searches", "searches_with_results", pre=(...))}, control=
  "control", cuped=True)``;
* ``tea-tasting``: the same two metrics with tea-tasting 1.14 (``tt.Mean(
  "clicks", covariate="pre_clicks")``, ``tt.RatioOfMeans(...)`` with both
  covariates) on the same file read into a pyarrow table, in its own
  interpreter (``--peer-python``, a venv with tea-tasting: it pins its own
  dependencies), which times ``Experiment.analyze`` after one untimed call;

and last, each body once in a fresh process, for its peak memory (the
process's own ``VmHWM``, which starts afresh at ``exec``: ``wait4``'s
``ru_maxrss`` of a child is at least its parent's peak when it was forked,
so after the timed rounds it reported the parent's 13 GiB for every body;
the peer's is its process, read and analyses included).

It prints the medians, the ratios metrics / floor and ab_test / tea-tasting
(with the range of the rounds' own ratios), and both tools' numbers for the
A/B metrics beside a reference computed in 80-bit floats with two-pass
moments (:func:`exact`), with each tool's largest distance from it. ``ireval_df.online`` is being written: while it cannot be
imported, only the floor (and tea-tasting) run, and the output says so.
Nothing here asserts a time; ``tests/test_bench_smoke.py`` runs it on
``log-tiny``.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import polars as pl

HERE = Path(__file__).resolve().parent
TABLES = ("searches", "results", "events", "units")
BY = ["query_class", "device"]
#: Every metric of the issue, should the registry not list the online family
METRICS = [
    "CTR",
    "CTR@3",
    "ImpressionCTR@10",
    "ClicksPerSearch",
    "ClickRR",
    "PaulScore",
    "TimeToFirstClick",
    "DwellTime",
    "SatClickRate",
    "Abandonment",
    "GoodAbandonment",
    "BadAbandonment",
    "Reformulation",
    "QueriesPerSession",
    "ZeroResultRate",
    "AddToCartRate",
    "ConversionRate",
    "RevenuePerSearch",
    "AOV",
    "SessionSuccess",
    "PositionCTR",
]
#: The A/B metrics: (name, kind, value columns, CUPED covariates)
AB_METRICS = (
    ("clicks", "mean", ("clicks",), ("pre_clicks",)),
    (
        "ctr",
        "ratio",
        ("clicked_searches", "searches_with_results"),
        ("pre_clicked_searches", "pre_searches_with_results"),
    ),
)
CONTROL = "control"

#: Run by --peer-python: tea-tasting on the unit-level frame
PEER = """
import json, sys, time
import pyarrow.parquet as pq
import tea_tasting as tt
path, specs = sys.argv[1], json.loads(sys.argv[2])
start = time.perf_counter()
data = pq.read_table(path)
load = time.perf_counter() - start
metrics = {}
for name, kind, values, pres in specs:
    if kind == "mean":
        metrics[name] = tt.Mean(values[0], covariate=pres[0])
    else:
        metrics[name] = tt.RatioOfMeans(values[0], values[1], pres[0], pres[1])
experiment = tt.Experiment(metrics)
experiment.analyze(data, control="control")  # warm-up, untimed
start = time.perf_counter()
result = experiment.analyze(data, control="control")
analyze = time.perf_counter() - start
out = {name: {field: float(getattr(r, field)) for field in (
    "control", "treatment", "effect_size", "effect_size_ci_lower",
    "effect_size_ci_upper", "pvalue")} for name, r in result.items()}
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
peak = int(hwm[0].split()[1]) / 1024 if hwm else None
print(json.dumps({"load_s": load, "analyze_s": analyze, "result": out, "peak_mib": peak}))
"""


def own_peak() -> float:
    """This process's peak RSS (MiB): ``VmHWM``, else ``ru_maxrss`` (not Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def online_available() -> bool:
    """Whether ``ireval_df.online`` (issue 19, written by others) is importable."""
    try:
        return importlib.util.find_spec("ireval_df.online") is not None
    except ImportError:
        return False


def metric_names() -> list[str]:
    """The online family's registry names (cut-offs at 10), or :data:`METRICS`."""
    from ireval_df.measures.registry import REGISTRY

    names = [
        f"{name}@10" if info.cutoff == "required" else name
        for name, info in REGISTRY.items()
        if info.family == "online"
    ]
    return names or list(METRICS)


def floor(data: Path) -> None:
    """Read the four files whole and aggregate one column of each."""
    pl.read_parquet(data / "searches.parquet").select(pl.col("n_results").sum())
    pl.read_parquet(data / "results.parquet").select(pl.col("position").count())
    pl.read_parquet(data / "events.parquet").select(pl.len())
    pl.read_parquet(data / "units.parquet").select(pl.col("pre_clicks").sum())


def lean(data: Path) -> list[pl.DataFrame]:
    """Four aggregates over every grain, no checks: see the module docstring."""
    keys = ["variant", *BY]
    searches = pl.scan_parquet(data / "searches.parquet").select(
        "search_id", "user_id", "session_id", "ts", "n_results", *keys
    )
    results = pl.scan_parquet(data / "results.parquet").select("search_id", "position")
    clicks = (
        pl.scan_parquet(data / "events.parquet")
        .select("search_id", "event_type", "position")
        .filter(pl.col("event_type") == "click")
    )
    per_search = clicks.group_by("search_id").agg(
        pl.len().alias("clicks"), pl.col("position").min().alias("first")
    )
    rates = (
        searches.join(per_search, on="search_id", how="left")
        .group_by(keys)
        .agg(
            (pl.col("clicks").fill_null(0) > 0).mean().alias("ctr"),
            (1 / pl.col("first")).fill_null(0).mean().alias("rr"),
            (pl.col("n_results") == 0).mean().alias("zero"),
        )
    )
    slices = searches.select("search_id", *keys)
    shown = results.join(slices, on="search_id").group_by(*keys, "position").len()
    clicked = clicks.join(slices, on="search_id").group_by(*keys, "position").len()
    sessions = (
        searches.sort("user_id", "session_id", "ts")
        .group_by("user_id", "session_id", maintain_order=True)
        .agg(pl.col(keys).first(), pl.len().alias("n"))
        .group_by(keys)
        .agg(pl.col("n").mean())
    )
    return pl.collect_all([rates, shown, clicked, sessions])


def metrics_call(data: Path, names: list[str]) -> Any:
    from ireval_df import online

    return online.metrics(online.read_log(data), names, by=BY)


def ab_specs() -> dict[str, Any]:
    from ireval_df import online

    specs: dict[str, Any] = {}
    for name, kind, values, pres in AB_METRICS:
        if kind == "mean":
            specs[name] = online.mean(values[0], pre=pres[0])
        else:
            specs[name] = online.ratio(values[0], values[1], pre=pres)
    return specs


def ab_call(units: pl.DataFrame, specs: dict[str, Any]) -> pl.DataFrame:
    from ireval_df import online

    return online.ab_test(units, specs, control=CONTROL, cuped=True)


def timed(call) -> float:  # type: ignore[no-untyped-def]
    gc.collect()
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def peer(python: str, path: Path) -> tuple[dict[str, Any], float]:
    """One tea-tasting process: its JSON and its peak RSS (MiB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [python, "-c", PEER, str(path), json.dumps(AB_METRICS)],
            stdout=out,
            stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            msg = err.read().decode(errors="replace")[-3000:]
            raise RuntimeError(f"tea-tasting failed:\n{msg}")
        lines = out.read().decode().strip().splitlines()
    found = json.loads(lines[-1])
    peak = found.get("peak_mib")
    return found, peak if peak is not None else usage.ru_maxrss / 1024


def child_peak(args: list[str]) -> tuple[float, float]:
    """Run ``python bench/online.py --child ...``: wall seconds and peak RSS (MiB).

    The child prints its own peak (:func:`own_peak`) last.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "online.py"), *args],
            stdout=out,
            stderr=err,
        )
        _, status, _ = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            msg = err.read().decode(errors="replace")[-3000:]
            raise RuntimeError(f"{args} failed:\n{msg}")
        out.seek(0)
        lines = out.read().decode().strip().splitlines()
    return wall, float(lines[-1])


def child(which: str, data: Path, names: list[str]) -> None:
    """One body in this (fresh) process, for its peak memory."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if which == "floor":
            floor(data)
        elif which == "metrics":
            metrics_call(data, names)
        else:
            ab_call(pl.read_parquet(data / "ab_units.parquet"), ab_specs())
    print(own_peak())


def table(times: dict[str, list[float]]) -> None:
    print("| call | median (s) | rounds (s) |")
    print("|---|---:|---|")
    for name, values in times.items():
        rounds = ", ".join(f"{v:.2f}" for v in values)
        print(f"| {name} | {statistics.median(values):.3f} | {rounds} |")


def ratio(times: dict[str, list[float]], top: str, bottom: str, rounds: int) -> str:
    per_round = [a / b for a, b in zip(times[top], times[bottom], strict=True)]
    whole = statistics.median(times[top]) / statistics.median(times[bottom])
    return (
        f"**{whole:.2f}x** (medians of {rounds} interleaved rounds; per round "
        f"{min(per_round):.2f}x to {max(per_round):.2f}x)"
    )


def describe(data: Path) -> str:
    counts = {
        name: pl.scan_parquet(data / f"{name}.parquet")
        .select(pl.len())
        .collect()
        .item()
        for name in (*TABLES, "ab_units")
    }
    size = sum((data / f"{n}.parquet").stat().st_size for n in counts) / 2**20
    return (
        f"{data.name}: {counts['searches']:,} searches, {counts['results']:,} results, "
        f"{counts['events']:,} events, {counts['units']:,} users; ab_units "
        f"{counts['ab_units']:,} units; {size:,.1f} MiB of Parquet"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data", type=Path, required=True, help="a bench/generate_log.py folder"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--peer-python", help="an interpreter with tea-tasting 1.14 installed"
    )
    parser.add_argument(
        "--metrics", nargs="+", help="online metrics (default: the registry's)"
    )
    parser.add_argument(
        "--no-memory", action="store_true", help="skip the peak-memory processes"
    )
    parser.add_argument("--child", choices=["floor", "metrics", "ab_test"])
    args = parser.parse_args(argv)
    data: Path = args.data
    has_online = online_available()
    names = args.metrics or (metric_names() if has_online else list(METRICS))
    if args.child:
        child(args.child, data, names)
        return 0

    print(describe(data) + "\n")
    if not has_online:
        print(
            "ireval_df.online is missing (issue 19 not merged yet): only the floor "
            "and tea-tasting are timed.\n"
        )
    else:
        print(f"online.metrics: {len(names)} metrics by {BY}: {', '.join(names)}\n")

    # 1. the online metrics from Parquet against the floor
    calls = {"floor (read 4 files, 1 aggregate each)": lambda: floor(data)}
    if has_online:
        calls["online.metrics, by query_class, device"] = lambda: metrics_call(
            data, names
        )
    calls["lean plan (4 aggregates, no checks)"] = lambda: lean(data)
    times: dict[str, list[float]] = {name: [] for name in calls}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in calls.values():  # warm-up, untimed
            call()
        for i in range(args.rounds):
            order = list(calls) if i % 2 == 0 else list(reversed(calls))
            for name in order:
                times[name].append(timed(calls[name]))
    table(times)
    if has_online:
        metrics_name = "online.metrics, by query_class, device"
        floor_name = next(iter(calls))
        print(
            f"\nonline.metrics / floor: {ratio(times, metrics_name, floor_name, args.rounds)}"
        )
    lean_name = "lean plan (4 aggregates, no checks)"
    print(
        f"lean plan / floor: {ratio(times, lean_name, next(iter(calls)), args.rounds)}"
    )

    # 2. ab_test with CUPED against tea-tasting, on the unit-level frame
    path = data / "ab_units.parquet"
    start = time.perf_counter()
    units = pl.read_parquet(path)
    load_s = time.perf_counter() - start
    print(
        f"\nab_units: {units.height:,} units read in {load_s:.2f} s (not timed below)\n"
    )
    ab_times: dict[str, list[float]] = {}
    ours: pl.DataFrame | None = None
    theirs: dict[str, Any] | None = None
    peer_rss: list[float] = []
    if has_online:
        specs = ab_specs()
        ab_times["online.ab_test, CUPED"] = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = ab_call(units, specs)  # warm-up, untimed
    if args.peer_python:
        ab_times["tea-tasting 1.14, CUPED"] = []
    for i in range(args.rounds if ab_times else 0):
        order = list(ab_times) if i % 2 == 0 else list(reversed(ab_times))
        for name in order:
            if name.startswith("online"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ab_times[name].append(timed(lambda: ab_call(units, specs)))
            else:
                theirs, rss = peer(args.peer_python, path)
                ab_times[name].append(theirs["analyze_s"])
                peer_rss.append(rss)
    if ab_times:
        table(ab_times)
    if len(ab_times) == 2:
        print(
            "\nonline.ab_test / tea-tasting: "
            + ratio(
                ab_times,
                "online.ab_test, CUPED",
                "tea-tasting 1.14, CUPED",
                args.rounds,
            )
        )
    if not args.peer_python:
        print(
            "\nNo --peer-python (an interpreter with tea-tasting 1.14): no peer timing."
        )
    if ours is not None or theirs is not None:
        agreement(ours, theirs, exact(units))

    # 3. peak memory: each body once in a fresh process
    if not args.no_memory:
        print("\n| body (fresh process) | wall (s) | peak RSS (MiB) |")
        print("|---|---:|---:|")
        bodies = ["floor", *(["metrics", "ab_test"] if has_online else [])]
        for which in bodies:
            wall, rss = child_peak(["--child", which, "--data", str(data)])
            print(f"| {which} | {wall:.2f} | {rss:,.0f} |")
        if peer_rss:
            print(f"| tea-tasting (read, 2 analyses) | | {max(peer_rss):,.0f} |")
    return 0


def _linear(units: pl.DataFrame, num: str, den: str | None, rows: Any) -> Any:
    """A ratio of means and each unit's linearised value, in 80-bit floats."""
    import numpy as np

    n = units[num].filter(rows).to_numpy().astype(np.longdouble)
    d = (
        np.ones(len(n), dtype=np.longdouble)
        if den is None
        else units[den].filter(rows).to_numpy().astype(np.longdouble)
    )
    ratio_ = n.sum() / d.sum()
    return ratio_, (n - ratio_ * d) / d.mean()


def _moments(units: pl.DataFrame, values: Any, pres: Any, rows: Any) -> tuple[Any, ...]:
    """Value, pre-period value, their variances and covariance (two-pass)."""
    import numpy as np

    value, lin = _linear(units, values[0], values[1] if len(values) > 1 else None, rows)
    pre, lin_pre = _linear(units, pres[0], pres[1] if len(pres) > 1 else None, rows)
    k = np.longdouble(len(lin) - 1)
    lin, lin_pre = lin - lin.mean(), lin_pre - lin_pre.mean()
    return (
        value,
        pre,
        (lin * lin).sum() / k,
        (lin_pre * lin_pre).sum() / k,
        (lin * lin_pre).sum() / k,
    )


def exact(units: pl.DataFrame) -> dict[str, dict[str, float]]:
    """Each A/B metric's estimates in 80-bit floats with two-pass moments.

    A reference for both tools, independent of either: every ratio (a mean
    is a ratio over 1) is linearised per unit, ``(num - R den) / mean(den)``,
    whose sample variances and covariances are the delta-method ones; the
    CUPED coefficient comes from the two arms pooled, as both tools define
    it; the interval is Welch's with Welch-Satterthwaite degrees of freedom.
    At millions of units, sums of float64 lose digits that these keep.
    """
    import numpy as np
    from scipy import stats

    out: dict[str, dict[str, float]] = {}
    control = units["variant"] == CONTROL
    everyone = pl.Series([True] * units.height)
    for name, _kind, values, pres in AB_METRICS:
        _, centre, _, pooled_pre_var, pooled_cov = _moments(
            units, values, pres, everyone
        )
        theta = pooled_cov / pooled_pre_var
        arm = {}
        for label, rows in (("control", control), ("treatment", ~control)):
            value, pre, var, pre_var, cov = _moments(units, values, pres, rows)
            count = np.longdouble(int(rows.sum()))
            arm[label] = (
                value - theta * (pre - centre),
                (var + theta * theta * pre_var - 2 * theta * cov) / count,
                count,
            )
        (mc, vc, nc), (mt, vt, nt) = arm["control"], arm["treatment"]
        se = np.sqrt(vc + vt)
        df = (vc + vt) ** 2 / (vc * vc / (nc - 1) + vt * vt / (nt - 1))
        q = np.longdouble(stats.t.ppf(0.975, float(df)))
        delta = mt - mc
        out[name] = {
            "control": float(mc),
            "treatment": float(mt),
            "delta": float(delta),
            "ci_low": float(delta - q * se),
            "ci_high": float(delta + q * se),
        }
    return out


def agreement(
    ours: pl.DataFrame | None,
    theirs: dict[str, Any] | None,
    reference: dict[str, dict[str, float]],
) -> None:
    """Both tools' estimates for each A/B metric, and their distance from ``reference``."""
    print(
        "\n| metric | tool | control | treatment | delta | ci_low | ci_high | p "
        "| largest difference from the 80-bit reference |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    fields = ("control", "treatment", "delta", "ci_low", "ci_high")
    for name, *_ in AB_METRICS:
        want = [reference[name][f] for f in fields]
        rows = []
        if ours is not None:
            row = ours.filter(pl.col("metric") == name).row(0, named=True)
            cells = [row[c] for c in ("control_mean", "treatment_mean", "delta")]
            rows.append(
                ("ireval_df", [*cells, row["ci_low"], row["ci_high"]], row["p_value"])
            )
        if theirs is not None:
            r = theirs["result"][name]
            cells = [r[c] for c in ("control", "treatment", "effect_size")]
            cells += [r["effect_size_ci_lower"], r["effect_size_ci_upper"]]
            rows.append(("tea-tasting", cells, r["pvalue"]))
        for tool, cells, p in rows:
            gap = max(abs(c - w) for c, w in zip(cells, want, strict=True))
            print(
                f"| {name} | {tool} | "
                + " | ".join(f"{c:.10g}" for c in cells)
                + f" | {p:.3g} | {gap:.1e} |"
            )
        print(
            f"| {name} | 80-bit reference | "
            + " | ".join(f"{c:.10g}" for c in want)
            + " | | |"
        )


if __name__ == "__main__":
    raise SystemExit(main())
