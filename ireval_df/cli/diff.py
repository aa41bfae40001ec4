"""``ireval-df diff``: two systems' top k side by side, for the queries that moved.

Talks to the outside world only (argv, files, stdout/stderr); the rows come
from :func:`ireval_df.diff`, the per-query values from
:func:`ireval_df.evaluate`.
"""

from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING, Any

import polars as pl

if TYPE_CHECKING:
    import argparse

__all__ = ["register", "run"]

#: How many queries are shown when neither --query nor --worst is given
_DEFAULT_WORST = 5
#: Terminal columns the side-by-side view is laid out for
_WIDTH = 100
#: The fixed cells of one side: rank (4), relevance (3), mark (4), three gaps
_FIXED = 4 + 3 + 4 + 3
#: Between the two sides
_GAP = " | "
_MIN_DOC = 6


def register(subparsers: Any) -> None:
    """Add the ``diff`` subcommand to an ``argparse`` subparsers object."""
    parser = subparsers.add_parser(
        "diff",
        help="two runs' top k side by side, for one query or those that dropped most",
        description=(
            "Show the top k of a run beside its baseline's, with each document's "
            "grade ('.' unjudged) and how it moved: '+' entered the top k, '-' left "
            "it, '^3' up 3 ranks, 'v2' down 2, '=' same rank. Prints --query Q, or "
            "the --worst N queries (default 5) whose metric dropped most from the "
            "baseline to the run. With -o, writes the document-level diff "
            "(ireval_df.diff) instead: of the queries chosen with --query or "
            "--worst, else of every query."
        ),
    )
    parser.add_argument(
        "--run",
        action="extend",
        nargs="+",
        required=True,
        metavar="FILE",
        help="run files; at least two runs in all",
    )
    parser.add_argument(
        "--qrels", required=True, metavar="FILE", help="relevance judgments"
    )
    parser.add_argument(
        "-k", type=int, default=10, metavar="K", help="depth compared (default: 10)"
    )
    parser.add_argument(
        "--baseline",
        metavar="RUN_ID",
        help="run the others are compared with (default: the first run)",
    )
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--query", metavar="QUERY_ID", help="show this query")
    chosen.add_argument(
        "--worst",
        type=int,
        metavar="N",
        help=f"show the N queries whose metric dropped most (default: {_DEFAULT_WORST})",
    )
    parser.add_argument(
        "-m",
        "--metric",
        metavar="NAME",
        help="metric that ranks the queries and heads each one (default: nDCG@K)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the diff (.parquet, .csv, .tsv, .jsonl) instead of printing it",
    )
    parser.set_defaults(handler=run, _diff_parser=parser)


def _usage(args: argparse.Namespace, message: str) -> int:
    parser = getattr(args, "_diff_parser", None)
    if parser is not None:
        parser.print_usage(sys.stderr)
    print(f"ireval-df diff: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    """Handle ``ireval-df diff``: 0 done, 2 bad usage; data errors raise."""
    import ireval_df as ie
    from ireval_df._utils.provenance import metadata_of
    from ireval_df.errors import IrevalWarning

    if args.k < 1:
        return _usage(args, f"-k must be a positive whole number, found {args.k}.")
    if args.worst is not None and args.worst < 1:
        return _usage(args, f"--worst must be positive, found {args.worst}.")
    metric = args.metric or f"nDCG@{args.k}"
    runs = args.run if len(args.run) > 1 else args.run[0]
    with warnings.catch_warnings():
        # a query one run lacks is reported once, by evaluate() below
        warnings.simplefilter("ignore", IrevalWarning)
        frame: pl.DataFrame = ie.diff(
            runs, args.qrels, baseline=args.baseline, k=args.k
        )
    if args.query is not None and args.query not in set(frame["query_id"].to_list()):
        known = sorted(set(frame["query_id"].to_list()))
        return _usage(
            args,
            f"--query {args.query!r} is not ranked by the runs compared; their "
            f"queries are e.g. {known[:5]!r}.",
        )
    per_query: pl.DataFrame = ie.evaluate(
        runs,
        args.qrels,
        metric,
        warn_unjudged=None,  # the view marks them "."
    )
    name = str(per_query["metric"][0]) if per_query.height else metric
    values = _values(frame, per_query)
    if args.query is not None:
        picked = values.filter(pl.col("query_id") == args.query)
    else:
        picked = (
            values.filter(pl.col("delta") < 0)
            .sort("delta", "query_id")
            .group_by("run_id", "baseline", maintain_order=True)
            .head(args.worst or _DEFAULT_WORST)
        )
    if args.output:
        keys = ["run_id", "baseline", "query_id"]
        chosen = args.query is not None or args.worst is not None
        out = frame.join(picked.select(keys), on=keys, how="semi") if chosen else frame
        ie.write_results(out, args.output, metadata=metadata_of(frame))
        print(f"wrote {out.height} rows to {args.output}", file=sys.stderr)
        return 0
    blocks = [
        _block(frame, query, name, args.k)
        for query in picked.sort(
            pl.col("run_id").cast(pl.Enum(_order(frame))),
            pl.col("baseline").cast(pl.Enum(_order(frame))),
            "delta",
            "query_id",
            nulls_last=True,
        ).iter_rows(named=True)
    ]
    if not blocks:
        print(
            f"ireval-df diff: no query's {name} dropped from the baseline to the run.",
            file=sys.stderr,
        )
        return 0
    sys.stdout.write("\n\n".join(blocks) + "\n")
    return 0


def _order(frame: pl.DataFrame) -> list[str]:
    """Run ids in the diff's order: each run, then the baselines."""
    names = pl.concat([frame["run_id"], frame["baseline"]])
    return [str(n) for n in names.unique(maintain_order=True)]


def _values(frame: pl.DataFrame, per_query: pl.DataFrame) -> pl.DataFrame:
    """One row per compared (run, baseline, query): both values and their delta.

    A query the qrels do not judge has null values; one a run does not rank
    has that run's value for an empty ranking (evaluate's ``missing="zero"``).
    """
    value = per_query.select("run_id", "query_id", "value")
    return (
        frame.select("run_id", "baseline", "query_id")
        .unique(maintain_order=True)
        .join(value, on=["run_id", "query_id"], how="left")
        .join(
            value.rename({"run_id": "baseline", "value": "baseline_value"}),
            on=["baseline", "query_id"],
            how="left",
        )
        .with_columns(delta=pl.col("value") - pl.col("baseline_value"))
    )


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _block(frame: pl.DataFrame, query: dict[str, Any], name: str, k: int) -> str:
    """One query of one comparison: a header line, the two top k, a summary line."""
    run_id, base, query_id = query["run_id"], query["baseline"], query["query_id"]
    rows = frame.filter(
        (pl.col("run_id") == run_id)
        & (pl.col("baseline") == base)
        & (pl.col("query_id") == query_id)
    )
    delta = query["delta"]
    header = (
        f"query {query_id}  {name}: {base} {_number(query['baseline_value'])}"
        f" -> {run_id} {_number(query['value'])}  delta {delta:+.4f}"
        if delta is not None
        else f"query {query_id}  not in the qrels: no {name}"
    )
    width = max(
        _MIN_DOC,
        min(
            (_WIDTH - len(_GAP)) // 2 - _FIXED,
            max((len(d) for d in rows["doc_id"].to_list()), default=0),
        ),
    )
    by_run = {r["rank"]: r for r in rows.iter_rows(named=True) if r["rank"] is not None}
    by_base = {
        r["baseline_rank"]: r
        for r in rows.iter_rows(named=True)
        if r["baseline_rank"] is not None
    }
    side = _side_width(width)
    titles = (
        f"{_fit(f'{base} (baseline)', side)}{_GAP}{_fit(run_id, side)}".rstrip(),
        f"{_cells('rank', 'doc_id', 'rel', 'move', width)}{_GAP}"
        f"{_cells('rank', 'doc_id', 'rel', 'move', width)}".rstrip(),
    )
    lines = [header, *titles]
    for position in range(1, k + 1):
        left, right = by_base.get(position), by_run.get(position)
        if left is None and right is None:
            break
        lines.append(
            f"{_entry(left, position, width, baseline=True)}{_GAP}"
            f"{_entry(right, position, width, baseline=False)}".rstrip()
        )
    lines.append(_summary(rows, k))
    return "\n".join(lines)


def _side_width(width: int) -> int:
    return width + _FIXED


def _fit(text: str, width: int) -> str:
    """``text`` in exactly ``width`` columns: padded, or cut with an ellipsis."""
    if len(text) > width:
        return text[: width - 1] + _ellipsis()
    return text.ljust(width)


def _ellipsis() -> str:
    encoding = getattr(sys.stdout, "encoding", None)  # None: a str buffer
    try:
        "\u2026".encode(encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return "~"
    return "\u2026"


def _cells(rank: str, doc: str, rel: str, mark: str, width: int) -> str:
    return f"{rank:>4} {_fit(doc, width)} {rel:>3} {mark:<4}"


def _entry(
    row: dict[str, Any] | None, position: int, width: int, *, baseline: bool
) -> str:
    if row is None:
        return " " * _side_width(width)
    grade = row["relevance"]
    rel = "." if grade is None else str(grade)
    return _cells(
        str(position), row["doc_id"], rel, _mark(row, baseline=baseline), width
    )


def _mark(row: dict[str, Any], *, baseline: bool) -> str:
    """How the document moved, from the baseline to the run."""
    change = row["change"]
    if baseline:  # the run's side shows every other movement
        return "-" if change == "left" else ""
    if change == "entered":
        return "+"
    if change == "same":
        return "="
    steps = abs(int(row["baseline_rank"]) - int(row["rank"]))
    return f"^{steps}" if change == "up" else f"v{steps}"


def _summary(rows: pl.DataFrame, k: int) -> str:
    """Where the change in nDCG@k comes from: entered, left, moved documents."""
    kinds = rows.with_columns(
        pl.col("change").replace({"up": "moved", "down": "moved"}).alias("kind")
    )
    parts = []
    for kind in ("entered", "left", "moved", "same"):
        part = kinds.filter(pl.col("kind") == kind)
        if not part.height:
            continue
        share = (
            part["delta_ndcg"].sum() if part["delta_ndcg"].null_count() == 0 else None
        )
        parts.append(
            f"{part.height} {kind}"
            + ("" if share is None or kind == "same" else f" {share:+.4f}")
        )
    return f"nDCG@{k} by change: " + ", ".join(parts)
