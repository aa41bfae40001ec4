"""``ireval-df online``: search-log metrics, A/B and interleaving tests from a folder of log tables.

``ireval-df online metrics|ab|srm|power|interleaving``: one nested
subcommand per function of :mod:`ireval_df.online`
(:func:`~ireval_df.online.metrics`, ``ab_test``, ``srm``, ``power``, and
``interleaving_outcomes`` then ``interleaving_test``). Each reads the log once with
:func:`~ireval_df.online.read_log` (``--log DIR``: ``searches.*`` and,
optionally, ``results.*``, ``events.*``, ``units.*``), prints a table on
stdout or writes the function's whole frame with ``-o``. Warnings (rows
dropped while reading, a sample-ratio mismatch) go to stderr.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.cli.render import render_table
from ireval_df.errors import OptionError

if TYPE_CHECKING:
    from ireval_df.online import SearchLog

__all__ = ["AB_DEFAULT", "METRICS_DEFAULT", "register"]

#: What ``ireval-df online metrics`` computes when no ``-m`` is given
METRICS_DEFAULT = (
    "CTR",
    "ClickRR",
    "Abandonment",
    "ZeroResultRate",
    "Reformulation",
    "AddToCartRate",
)
#: What ``ireval-df online ab`` tests when no ``-m`` is given
AB_DEFAULT = ("CTR",)
#: The variant ``--control`` defaults to, when the log has one of that name
CONTROL = "control"
_CORRECTIONS = ("holm", "bonferroni", "bh", "by", "none")


def _weight(text: str) -> tuple[str, float]:
    """Parse ``--expected VARIANT=WEIGHT``."""
    variant, sep, weight = text.rpartition("=")
    try:
        value = float(weight)
    except ValueError:
        value = math.nan
    if not sep or not variant or not math.isfinite(value) or value < 0:
        msg = f"expected VARIANT=WEIGHT with a weight of 0 or more, found {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return variant, value


def _add_log(parser: Any, *, required: bool = True) -> None:
    parser.add_argument(
        "--log",
        required=required,
        metavar="DIR",
        help="folder holding searches.* and, optionally, results.*, events.* and "
        "units.* (Parquet, CSV, TSV or JSON Lines)",
    )
    parser.add_argument(
        "--session-gap",
        default="30m",
        metavar="GAP",
        help="inactivity that ends a session when searches have no session_id "
        "(default: 30m)",
    )
    parser.add_argument(
        "--contaminated",
        choices=("error", "drop"),
        default="error",
        help="a unit seen in two variants: an error (default), or drop its rows",
    )


def _add_output(parser: Any) -> None:
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the whole frame (.parquet, .csv, .tsv, .jsonl) instead of a table",
    )


def _add_engine(parser: Any) -> None:
    parser.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="local (default), or spark: read the tables with Spark (any path it "
        "reads) and compute there (ireval_df.spark)",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="with --engine spark: groups of users, one Python call each "
        "(default: spark.sql.shuffle.partitions)",
    )


def _add_expected(parser: Any) -> None:
    parser.add_argument(
        "--expected",
        action="append",
        type=_weight,
        metavar="VARIANT=WEIGHT",
        help="planned weight of a variant, for the sample-ratio test (repeatable; "
        "default: an equal split)",
    )


def register(sub: Any) -> None:
    """Add ``online`` and its subcommands to an argparse subparsers object."""
    parser = sub.add_parser(
        "online",
        help="search-log metrics, A/B and interleaving tests (metrics, ab, srm, "
        "power, interleaving)",
        description="Online evaluation of a search log: metrics per arm and slice, "
        "A/B tests per randomisation unit, the sample-ratio check, the sample "
        "size of the next experiment, and the preference between interleaved "
        "rankers.",
    )
    commands = parser.add_subparsers(
        dest="online_command", metavar="SUBCOMMAND", required=True
    )

    metrics = commands.add_parser(
        "metrics",
        help="online metrics per experiment arm (and slice)",
        description="Compute online metrics per experiment arm and --by slice: one "
        "column per metric, with the arm's units and searches.",
    )
    _add_log(metrics)
    metrics.add_argument(
        "-m",
        "--metric",
        action="append",
        metavar="NAME",
        help=f"online metric (repeatable; default {' '.join(METRICS_DEFAULT)}); "
        "see 'ireval-df metrics'",
    )
    metrics.add_argument(
        "--by",
        action="append",
        metavar="COLUMN",
        help="slice by a column of searches (query_class, device ...) or, for "
        "result- and click-grain metrics, of results (repeatable)",
    )
    _add_output(metrics)
    _add_engine(metrics)
    metrics.set_defaults(handler=_metrics)

    ab = commands.add_parser(
        "ab",
        help="A/B test: every treatment arm against the control, per metric and slice",
        description="Compare every treatment arm with the control per randomisation "
        "unit (ratio metrics by the delta method), with a multiple-testing "
        "correction over every (treatment, slice, metric) row and a sample-ratio "
        "check.",
    )
    _add_log(ab)
    ab.add_argument(
        "-m",
        "--metric",
        action="append",
        metavar="NAME",
        help=f"online metric (repeatable; default {' '.join(AB_DEFAULT)})",
    )
    ab.add_argument(
        "--by",
        action="append",
        metavar="COLUMN",
        help="slice by a column of searches (repeatable)",
    )
    ab.add_argument(
        "--control",
        metavar="VARIANT",
        help=f"the control arm (default: the variant named {CONTROL!r})",
    )
    ab.add_argument(
        "--cuped",
        action="store_true",
        help="variance reduction with the units table's pre-period columns (pre_*)",
    )
    ab.add_argument(
        "--correction",
        choices=_CORRECTIONS,
        default="holm",
        help="multiple-testing correction (default: holm)",
    )
    ab.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="significance level; intervals cover 1 - alpha (default: 0.05)",
    )
    _add_expected(ab)
    _add_output(ab)
    _add_engine(ab)
    ab.set_defaults(handler=_ab)

    srm = commands.add_parser(
        "srm",
        help="sample-ratio mismatch: units per arm against the planned split",
        description="Test whether the units per arm match the planned split "
        "(chi-square), overall or per --by slice. A p-value below 0.001 means "
        "the assignment is broken and the comparison is not trustworthy.",
    )
    _add_log(srm)
    srm.add_argument(
        "--by",
        action="append",
        metavar="COLUMN",
        help="one test per slice of a searches column (repeatable)",
    )
    _add_expected(srm)
    _add_output(srm)
    srm.set_defaults(handler=_srm)

    power = commands.add_parser(
        "power",
        help="units per arm for a minimum detectable effect, or the effect for n",
        description="The units per arm a two-arm test needs to detect --mde, or the "
        "effect it can detect with --n units per arm: from a baseline mean (and "
        "variance; p(1 - p) for a rate by default), or from a log's metric "
        "(--log DIR -m METRIC), its unit-level variance by the delta method.",
    )
    _add_log(power, required=False)
    power.add_argument(
        "-m",
        "--metric",
        action="append",
        metavar="NAME",
        help="with --log: the metric (one)",
    )
    power.add_argument(
        "--variant",
        metavar="VARIANT",
        help="with --log: the arm whose units are the baseline (default: every "
        "unit pooled, right for a pre-period or A/A log; on an A/B test's log "
        "pass the control)",
    )
    power.add_argument(
        "--baseline-mean", type=float, metavar="X", help="the metric's baseline mean"
    )
    power.add_argument(
        "--baseline-var",
        type=float,
        metavar="V",
        help="its unit-level variance (default p(1 - p) for a rate p)",
    )
    power.add_argument(
        "--mde", type=float, metavar="D", help="the minimum detectable effect"
    )
    power.add_argument("--n", type=int, metavar="N", help="units per arm")
    power.add_argument(
        "--relative",
        action="store_true",
        help="--mde is a share of the baseline mean (0.02 for +2%%)",
    )
    power.add_argument(
        "--alpha", type=float, default=0.05, help="significance level (default: 0.05)"
    )
    power.add_argument(
        "--power",
        type=float,
        default=0.8,
        help="the chance of detecting the effect (default: 0.8)",
    )
    _add_output(power)
    power.set_defaults(handler=_power)

    leave = commands.add_parser(
        "interleaving",
        help="interleaving: which ranker users prefer, per ranker pair and slice",
        description="Credit each interleaved search's clicks to the rankers' teams "
        "(the log's results carry team and rank_<ranker>, as interleave() returns "
        "them) and test each pair of rankers: delta_ab > 0 prefers ranker_a. "
        "Searches cluster in --unit (each user one vote with the sign test).",
    )
    _add_log(leave)
    leave.add_argument(
        "--credit",
        choices=("click", "sat_click", "add_to_cart"),
        default="click",
        help="the events that earn credit (default: click)",
    )
    leave.add_argument(
        "--sat-tau",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="dwell that makes a click satisfied, for --credit sat_click (default: 30)",
    )
    leave.add_argument(
        "--by",
        action="append",
        metavar="COLUMN",
        help="slice by a column of searches (repeatable)",
    )
    leave.add_argument(
        "--unit",
        default="user_id",
        metavar="COLUMN",
        help="the column searches cluster in, or 'search' (default: user_id)",
    )
    leave.add_argument(
        "--test",
        choices=("sign", "bootstrap"),
        default="sign",
        help="sign test of the units' votes, or a cluster bootstrap (default: sign)",
    )
    leave.add_argument(
        "--correction",
        choices=_CORRECTIONS,
        default="holm",
        help="multiple-testing correction over every pair and slice (default: holm)",
    )
    leave.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="significance level; intervals cover 1 - alpha (default: 0.05)",
    )
    _add_output(leave)
    leave.set_defaults(handler=_interleaving)


# --------------------------------------------------------------------------
# shared steps


def _read(args: argparse.Namespace) -> SearchLog:
    import ireval_df as ie

    return ie.online.read_log(
        args.log, session_gap=args.session_gap, contaminated=args.contaminated
    )


def _expected(args: argparse.Namespace) -> dict[str, float] | None:
    pairs = args.expected or []
    weights = dict(pairs)
    if len(weights) < len(pairs):
        names = [v for v, _ in pairs]
        twice = sorted({v for v in names if names.count(v) > 1})
        msg = f"--expected names {twice} more than once."
        raise OptionError(msg)
    return weights or None


def _variants(log: SearchLog) -> list[str]:
    return sorted(log.searches["variant"].cast(pl.String).drop_nulls().unique())


def _control(args: argparse.Namespace, log: SearchLog) -> str:
    variants = _variants(log)
    if args.control is not None:
        if args.control not in variants:
            msg = (
                f"--control {args.control!r} is not a variant of the log (the "
                f"variants: {', '.join(variants)})."
            )
            raise OptionError(msg)
        return str(args.control)
    if CONTROL in variants:
        return CONTROL
    msg = (
        f"the log has no variant named {CONTROL!r}; choose the control with "
        f"--control (the variants: {', '.join(variants)})."
    )
    raise OptionError(msg)


def _write_or_print(
    frame: pl.DataFrame, shown: pl.DataFrame, output: str | None
) -> None:
    import ireval_df as ie

    if output:
        ie.write_results(frame, output)
        print(f"wrote {frame.height} rows to {output}", file=sys.stderr)
    else:
        sys.stdout.write(render_table(shown) + "\n")


def _p(value: float | None) -> str:
    """Format a p-value for the terminal: 4 decimals, or scientific below 0.0001."""
    if value is None or math.isnan(value):
        return ""
    return f"{value:.4f}" if value >= 0.0001 else f"{value:.1e}"


def _percent(value: float | None) -> str:
    if value is None or math.isnan(value):
        return ""
    return f"{100 * value:+.1f}%"


# --------------------------------------------------------------------------
# subcommands


def _metrics(args: argparse.Namespace) -> int:
    import ireval_df as ie

    by = list(args.by or [])
    metrics = args.metric or list(METRICS_DEFAULT)
    if args.engine == "spark":
        frame = _on_spark(args, "online_metrics", metrics, by=by)
    else:
        if args.partitions is not None:
            msg = "--partitions is an option of --engine spark."
            raise OptionError(msg)
        log = _read(args)
        frame = ie.online.metrics(log, metrics, by=by)
    _write_or_print(frame, _wide_metrics(frame, by), args.output)
    return 0


def _on_spark(
    args: argparse.Namespace, function: str, metrics: list[str], **options: Any
) -> pl.DataFrame:
    """Run ``ireval_df.spark.<function>`` on the --log folder read by Spark (``--engine spark``)."""
    import ireval_df.spark as isp
    from ireval_df.spark.jobs import to_polars
    from ireval_df.spark.sources import read_log_tables, session

    with warnings.catch_warnings():
        # pyspark's notice about pandas 3: ireval_df exchanges Arrow, not pandas
        warnings.filterwarnings(
            "ignore", "PySpark does not yet fully support pandas", FutureWarning
        )
        spark = session()
        tables = read_log_tables(spark, args.log)
        result = getattr(isp, function)(
            tables,
            metrics,
            session_gap=args.session_gap,
            contaminated=args.contaminated,
            partitions=args.partitions,
            **options,
        )
        return result if isinstance(result, pl.DataFrame) else to_polars(result)


def _wide_metrics(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """One row per arm (and slice), one column per metric (per position)."""
    index = ["experiment_id", "variant", *by]
    if "position" in frame.columns:  # PositionCTR: one column per position
        frame = frame.with_columns(
            pl.when(pl.col("position").is_not_null())
            .then(
                pl.concat_str(
                    pl.col("metric"), pl.lit("["), pl.col("position"), pl.lit("]")
                )
            )
            .otherwise(pl.col("metric"))
            .alias("metric")
        )
    order = frame["metric"].unique(maintain_order=True).to_list()
    wide = frame.pivot(on="metric", index=index, values="value")
    counts = frame.group_by(index, maintain_order=True).agg(
        pl.col("n_units").max(), pl.col("n_searches").max()
    )
    return wide.join(counts, on=index, how="left", nulls_equal=True).select(
        *index, *order, "n_units", "n_searches"
    )


def _ab(args: argparse.Namespace) -> int:
    import ireval_df as ie

    by = list(args.by or [])
    options = {
        "by": by or None,
        "cuped": args.cuped,
        "correction": args.correction,
        "alpha": args.alpha,
        "expected": _expected(args),
    }
    metrics = args.metric or list(AB_DEFAULT)
    if args.engine != "spark" and args.partitions is not None:
        msg = "--partitions is an option of --engine spark."
        raise OptionError(msg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if args.engine == "spark":
            # the control is checked against each experiment's arms by ab_test
            control = args.control if args.control is not None else CONTROL
            frame = _on_spark(args, "ab_test", metrics, control=control, **options)
        else:
            log = _read(args)
            control = _control(args, log)
            frame = ie.online.ab_test(log, metrics, control=control, **options)
    for w in caught:  # on to main's handler, which prints them on stderr
        warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    told = any("sample" in str(w.message).lower() for w in caught)
    if not told and frame["srm_flag"].any():
        print(
            "ireval-df: warning: sample-ratio mismatch (srm_p_value < 0.001): the "
            "arms' unit counts do not match the planned split, so these "
            "comparisons are not trustworthy; see 'ireval-df online srm'.",
            file=sys.stderr,
        )
    _write_or_print(frame, _ab_table(frame, by, args.alpha), args.output)
    return 0


def _ab_table(frame: pl.DataFrame, by: list[str], alpha: float) -> pl.DataFrame:
    """Select what a reader decides on: means, the change and its interval, p."""
    keys = [
        c
        for c in ("experiment_id", "variant")
        if c in frame.columns and (c == "variant" or frame[c].n_unique() > 1)
    ]
    level = f"{100 * (1 - alpha):g}% CI"
    rows = []
    for row in frame.iter_rows(named=True):
        low, high = row["rel_ci_low"], row["rel_ci_high"]
        interval = (
            f"[{_percent(low)}, {_percent(high)}]"
            if low is not None and high is not None
            else ""
        )
        rows.append(
            {
                "change": _percent(row["delta_rel"]),
                level: interval,
                "p_adjusted": _p(row["p_adjusted"]),
                "significant": "yes" if row["significant"] else "no",
            }
        )
    extra = pl.DataFrame(
        rows,
        schema={
            "change": pl.String,
            level: pl.String,
            "p_adjusted": pl.String,
            "significant": pl.String,
        },
    )
    shown = pl.concat(
        [
            frame.select(
                *keys,
                *by,
                "metric",
                pl.col("control_mean").alias("control"),
                pl.col("treatment_mean").alias("treatment"),
                "delta",
            ),
            extra,
        ],
        how="horizontal",
    )
    if "reason" in frame.columns and frame["reason"].null_count() < frame.height:
        shown = shown.with_columns(frame["reason"].fill_null(""))
    return shown


def _srm(args: argparse.Namespace) -> int:
    import ireval_df as ie

    by = list(args.by or [])
    log = _read(args)
    frame = ie.online.srm(log, _expected(args), by=by or None)
    shown = frame.with_columns(
        pl.col("p_value").map_elements(_p, return_dtype=pl.String)
    )
    flagged = frame.filter(pl.col("srm_flag"))
    if not flagged.is_empty():
        where = (
            "; ".join(
                sorted(
                    {
                        ", ".join(f"{c}={r[c]}" for c in by)
                        for r in flagged.iter_rows(named=True)
                    }
                )
            )
            if by
            else "overall"
        )
        print(
            f"ireval-df: warning: sample-ratio mismatch (p < 0.001): {where}. The "
            "units were not split as planned; A/B comparisons there are not "
            "trustworthy.",
            file=sys.stderr,
        )
    _write_or_print(frame, shown, args.output)
    return 0


def _power(args: argparse.Namespace) -> int:
    import ireval_df as ie

    if (args.mde is None) == (args.n is None):
        msg = (
            "power needs exactly one of --mde D (to get the units per arm) and "
            "--n N (to get the minimum detectable effect)."
        )
        raise OptionError(msg)
    options = {
        "mde": args.mde,
        "n": args.n,
        "relative": args.relative,
        "alpha": args.alpha,
        "power": args.power,
    }
    if args.log is None:
        lacking = [
            flag
            for flag, value in (("-m", args.metric), ("--variant", args.variant))
            if value is not None
        ]
        if lacking:
            msg = f"{' and '.join(lacking)} go with --log DIR."
            raise OptionError(msg)
        if args.baseline_mean is None:
            msg = (
                "power needs a baseline: --baseline-mean X [--baseline-var V], or "
                "--log DIR -m METRIC."
            )
            raise OptionError(msg)
        frame = ie.online.power(
            baseline_mean=args.baseline_mean,
            baseline_var=args.baseline_var,
            **options,
        )
    else:
        given = [
            flag
            for flag, value in (
                ("--baseline-mean", args.baseline_mean),
                ("--baseline-var", args.baseline_var),
            )
            if value is not None
        ]
        if given:
            msg = (
                f"{' and '.join(given)} and --log are two ways to give the "
                "baseline: choose one."
            )
            raise OptionError(msg)
        if args.metric is None or len(args.metric) > 1:
            msg = "--log needs one -m METRIC, the metric to plan for."
            raise OptionError(msg)
        log = _read(args)
        variants = _variants(log)
        if args.variant is None and len(variants) > 1:
            print(
                f"ireval-df: note: the baseline pools the units of every variant "
                f"({', '.join(variants)}); on an A/B test's log pass --variant "
                f"with the control.",
                file=sys.stderr,
            )
        frame = ie.online.power(
            log=log, metric=args.metric[0], variant=args.variant, **options
        )
    _write_or_print(frame, frame, args.output)
    return 0


def _interleaving(args: argparse.Namespace) -> int:
    import ireval_df as ie

    by = list(args.by or [])
    log = _read(args)
    outcomes = ie.online.interleaving_outcomes(
        log, credit=args.credit, sat_tau=args.sat_tau
    )
    unknown = [
        c
        for c in [*by, *([] if args.unit == "search" else [args.unit])]
        if c not in log.searches.columns
    ]
    if unknown:
        msg = (
            f"--by/--unit {unknown} are not columns of the searches; they have "
            f"{sorted(log.searches.columns)} (--unit search counts each search)."
        )
        raise OptionError(msg)
    frame = ie.online.interleaving_test(
        outcomes,
        unit=args.unit,
        by=by or None,
        test=args.test,
        correction=args.correction,
        alpha=args.alpha,
    )
    _write_or_print(frame, _interleaving_table(frame, by, args.alpha), args.output)
    return 0


def _interleaving_table(
    frame: pl.DataFrame, by: list[str], alpha: float
) -> pl.DataFrame:
    """Select what a reader decides on: the votes, delta_ab, its interval, p."""
    level = f"{100 * (1 - alpha):g}% CI"
    rows = []
    for row in frame.iter_rows(named=True):
        low, high, delta = row["ci_low"], row["ci_high"], row["delta_ab"]
        rows.append(
            {
                level: (
                    f"[{low:+.3f}, {high:+.3f}]"
                    if low is not None and high is not None
                    else ""
                ),
                "p_adjusted": _p(row["p_adjusted"]),
                "preferred": (
                    ""
                    if not row["significant"] or delta is None or delta == 0
                    else row["ranker_a"]
                    if delta > 0
                    else row["ranker_b"]
                ),
            }
        )
    extra = pl.DataFrame(
        rows, schema={level: pl.String, "p_adjusted": pl.String, "preferred": pl.String}
    )
    return pl.concat(
        [
            frame.select(
                *by,
                "ranker_a",
                "ranker_b",
                "n_units",
                "wins",
                "losses",
                "ties",
                pl.col("delta_ab").round(4),
            ),
            extra,
        ],
        how="horizontal",
    )
