"""``ireval-df gate``: a regression gate for CI, exit 1 when a slice regresses.

Three forms, one per kind of evidence:

- ``--run C --baseline B --qrels Q -m M --margin X``: every candidate run
  against the baseline run, a non-inferiority test per metric and slice
  (:func:`ireval_df.gate`);
- ``--run C --baseline B --min-rbo X``: no qrels, the mean RBO of each
  candidate against the baseline, per slice, must be above X;
- ``--ab FILE --margin X``: an A/B result written by ``ireval-df online ab
  -o FILE``, each row's interval against the margin.

Every row is printed on stdout; a failure lists the failing rows on stderr
and exits 1. A candidate sharing no query with the baseline is an error
(exit 1), never a pass.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.cli.args import add_data_arguments, slices_of
from ireval_df.cli.render import render_table
from ireval_df.errors import AlignmentError, FormatError, OptionError

if TYPE_CHECKING:
    import argparse

__all__ = ["register", "run"]

#: The similarity measure of ``--min-rbo``
RBO = "RBO(ties=b)"


def register(sub: Any) -> None:
    """Add the ``gate`` subcommand to an argparse subparsers object."""
    parser = sub.add_parser(
        "gate",
        help="regression gate: exit 1 when a candidate is worse than the baseline "
        "by more than a margin, per metric and slice",
        description="A non-inferiority test of each candidate run against the "
        "baseline run, per metric and slice, corrected over all of them: exit 0 "
        "when every row shows the candidate is not worse than the baseline by more "
        "than --margin, exit 1 listing the rows that do not. --min-rbo gates the "
        "mean RBO against the baseline instead (no qrels); --ab gates an A/B result.",
    )
    add_data_arguments(
        parser,
        required=False,
        run_help="candidate run file(s)",
        metric_help="metric (repeatable; default nDCG@10), or with --min-rbo the "
        f"similarity measure (default {RBO}); see 'ireval-df metrics'",
        by_help="gate within each value of this query attribute "
        "(repeatable; needs --queries)",
    )
    parser.add_argument(
        "--baseline", metavar="FILE", help="the baseline run file (production)"
    )
    parser.add_argument(
        "--margin",
        type=float,
        metavar="X",
        help="how much worse than the baseline a candidate may be, in the "
        "metric's units (a share of the baseline's mean with --relative)",
    )
    parser.add_argument(
        "--relative",
        action="store_true",
        help="--margin is a share of the baseline's mean (0.01 = 1%%)",
    )
    parser.add_argument(
        "--min-rbo",
        type=float,
        metavar="X",
        help=f"instead of qrels and --margin: the mean {RBO} of each candidate "
        "against the baseline must be above X",
    )
    parser.add_argument(
        "--ab",
        metavar="FILE",
        help="gate an A/B result (ireval-df online ab -o FILE) against --margin",
    )
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="one-sided level (default: 0.05)"
    )
    parser.add_argument(
        "--correction",
        choices=("holm", "bonferroni", "bh", "by", "none"),
        default="holm",
        help="multiple-testing correction over every row (default: holm)",
    )
    parser.add_argument(
        "--missing",
        choices=("zero", "skip", "error"),
        default="zero",
        help="qrels queries a run did not answer (default: zero)",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="also write the table to FILE"
    )
    parser.set_defaults(handler=run)


def _read_table(path: str) -> pl.DataFrame:
    suffix = Path(path).suffix.lower()
    if not Path(path).is_file():
        msg = f"--ab {path!r}: no such file.\n  Hint: write it with 'ireval-df online ab ... -o FILE'."
        raise FormatError(msg)
    if suffix == ".parquet":
        return pl.read_parquet(path)
    if suffix in (".csv", ".tsv"):
        return pl.read_csv(path, separator="\t" if suffix == ".tsv" else ",")
    if suffix in (".jsonl", ".ndjson"):
        return pl.read_ndjson(path)
    msg = (
        f"--ab {path!r}: expected a .parquet, .csv, .tsv or .jsonl file, found "
        f"{suffix or 'no extension'!r}.\n  Hint: 'ireval-df online ab ... -o ab.parquet'."
    )
    raise FormatError(msg)


def _check_usage(args: argparse.Namespace) -> None:
    if args.ab is not None:
        if args.run or args.baseline or args.min_rbo is not None:
            msg = "--ab gates an A/B result; it takes neither --run, --baseline nor --min-rbo."
            raise OptionError(msg)
        if args.margin is None:
            msg = "--ab needs --margin X (how much worse is acceptable)."
            raise OptionError(msg)
        return
    if not args.run or args.baseline is None:
        msg = "gate needs --run FILE (candidates) and --baseline FILE (or --ab FILE)."
        raise OptionError(msg)
    if args.min_rbo is not None:
        if args.margin is not None:
            msg = "--min-rbo is a gate on similarity; it takes no --margin."
            raise OptionError(msg)
        return
    if args.margin is None or args.qrels is None:
        msg = "gate needs --qrels FILE and --margin X (or --min-rbo X without qrels)."
        raise OptionError(msg)
    slices_of(args)


def _overlap(candidates: pl.DataFrame, baseline: pl.DataFrame, base_id: str) -> None:
    """Refuse a candidate that shares no query with the baseline."""
    base_queries = baseline.select("query_id").unique()
    shared = (
        candidates.select("run_id", "query_id")
        .unique()
        .join(base_queries, on="query_id", how="semi")
        .group_by("run_id")
        .len()
    )
    for run_id in candidates["run_id"].unique(maintain_order=True).to_list():
        if run_id not in shared["run_id"].to_list():
            msg = (
                f"candidate {run_id!r} shares no query with the baseline {base_id!r}: "
                "nothing to gate, and a gate without evidence never passes.\n"
                "  Hint: check that both runs answer the same queries (query ids "
                "spelled alike)."
            )
            raise AlignmentError(msg)


def _runs(args: argparse.Namespace) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    import ireval_df as ie

    baseline = ie.read_run(args.baseline)
    ids = baseline["run_id"].unique(maintain_order=True).to_list()
    if len(ids) != 1:
        msg = (
            f"--baseline {args.baseline!r} holds {len(ids)} runs {ids!r}; the "
            "baseline must be one run.\n  Hint: split the file by run tag."
        )
        raise OptionError(msg)
    candidates = ie.read_run(args.run if len(args.run) > 1 else args.run[0])
    clash = [r for r in candidates["run_id"].unique().to_list() if r in ids]
    if clash:
        msg = (
            f"a candidate and the baseline share the run id {clash[0]!r}.\n  Hint: "
            "give them different run tags (the last column of a TREC run) or file names."
        )
        raise OptionError(msg)
    _overlap(candidates, baseline, ids[0])
    return candidates, baseline, ids[0]


def run(args: argparse.Namespace) -> int:
    """Run ``ireval-df gate``; returns the exit code."""
    import ireval_df as ie

    _check_usage(args)
    by = list(args.by or [])
    options = {"alpha": args.alpha, "correction": args.correction}
    if args.ab is not None:
        result = ie.gate(
            _read_table(args.ab), margin=args.margin, relative=args.relative
        )
    else:
        candidates, baseline, base_id = _runs(args)
        if args.min_rbo is not None:
            similar = ie.similarity(
                [baseline, candidates],
                args.metric or [RBO],
                baseline=base_id,
                queries=args.queries,
                missing=args.missing,
            )
            result = ie.gate(similar, minimum=args.min_rbo, by=by or None, **options)
        else:
            per_query = ie.evaluate(
                [baseline, candidates],
                args.qrels,
                args.metric or ["nDCG@10"],
                queries=args.queries,
                missing=args.missing,
            )
            result = ie.gate(
                per_query,
                baseline=base_id,
                margin=args.margin,
                relative=args.relative,
                by=by or None,
                **options,
            )
    sys.stdout.write(render_table(result) + "\n")
    if args.output:
        ie.write_results(result, args.output)
        print(f"wrote {result.height} rows to {args.output}", file=sys.stderr)
    failed = result.filter(~pl.col("passed"))
    if failed.is_empty():
        print(
            f"ireval-df: gate passed: all {result.height} rows shown not worse "
            + (
                f"than the minimum {args.min_rbo:g}"
                if args.min_rbo is not None
                else f"than the baseline by more than the margin {args.margin:g}"
                + (" (relative)" if args.relative else "")
            ),
            file=sys.stderr,
        )
        return 0
    bound = "minimum" if "minimum" in result.columns else "margin"
    estimate = "mean" if "minimum" in result.columns else "delta"
    keys = [
        c
        for c in result.columns
        if result.schema[c] == pl.String and c not in ("verdict",)
    ]
    print(
        f"ireval-df: gate failed: {failed.height} of {result.height} rows are not "
        f"shown within the {bound} ('worse': the whole interval is beyond it; "
        "'not shown': the interval straddles it, too few queries or too much noise):",
        file=sys.stderr,
    )
    shown = failed.select(*keys, estimate, "ci_low", "ci_high", bound, "verdict")
    print(render_table(shown), file=sys.stderr)
    return 1
