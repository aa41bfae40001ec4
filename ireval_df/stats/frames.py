"""Input checks and output conventions shared by the statistics functions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df._utils import provenance as _provenance
from ireval_df._utils.frames import eager
from ireval_df._utils.options import check_choice
from ireval_df.errors import DataError, OptionError, SchemaError
from ireval_df.measures import properties

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ireval_df.measures.properties import AggregateOption, Direction

__all__ = [
    "pair_names",
    "check_choice",
    "check_unique",
    "reference_slice",
    "declared",
    "metric_table",
    "output",
    "run_order",
    "run_pairs",
    "slice_columns",
    "to_frame",
]


def slice_columns(by: str | Sequence[str] | None) -> list[str]:
    """``by`` as a list of column names."""
    return [by] if isinstance(by, str) else list(by or [])


def to_frame(per_query: Any, needed: Sequence[str]) -> pl.DataFrame:
    """Return a per-query result as an eager polars frame with ``needed`` columns."""
    frame = eager(per_query, "per-query results", "pass the output of evaluate().")
    absent = [c for c in needed if c not in frame.columns]
    if absent:
        msg = (
            f"per-query results are missing column(s) {absent!r} "
            f"(found {frame.columns!r}).\n"
            "  Hint: pass the output of evaluate(); slice columns come from "
            "evaluate(..., queries=...)."
        )
        raise SchemaError(msg)
    return frame


def reference_slice(
    frame: pl.DataFrame, slices: list[str], name: str = "baseline"
) -> tuple[pl.DataFrame, list[str]]:
    """Make a similarity frame's ``baseline`` column a slice, named ``name``.

    A similarity result (:func:`ireval_df.similarity`) holds one value per
    run, baseline and query; its statistics are per baseline, as a slice.
    ``compare`` names that slice ``reference``, since its own output has a
    ``baseline`` column (the run compared against).

    Examples
    --------
    >>> frame = pl.DataFrame({"run_id": ["b"], "baseline": ["a"], "query_id": ["1"]})
    >>> reference_slice(frame, ["language"], "reference")[1]
    ['reference', 'language']
    """
    if "baseline" not in frame.columns:
        return frame, slices
    if name != "baseline":
        frame = frame.rename({"baseline": name})
    return frame, [name, *(s for s in slices if s != name)]


def check_unique(frame: pl.DataFrame, keys: Sequence[str]) -> None:
    """Raise when a (run, query, metric) appears more than once."""
    repeated = frame.group_by(keys).len().filter(pl.col("len") > 1)
    if repeated.height:
        example = repeated.sort(keys).row(0, named=True)
        shown = ", ".join(f"{k}={example[k]!r}" for k in keys)
        msg = (
            f"per-query results hold {repeated.height} repeated {tuple(keys)!r} keys, "
            f"e.g. {shown} x{example['len']}; each must appear once.\n"
            "  Hint: if several evaluations were stacked, give each its own run_id; "
            "a result sliced by document (evaluate(..., by_doc=...)) has a row "
            "per slice: pass its slice columns as by=."
        )
        raise DataError(msg)


def metric_table(
    metrics: Sequence[str],
    *,
    higher_is_better: Direction = None,
    aggregate: AggregateOption = None,
) -> pl.DataFrame:
    """``metric, __m (order), __sign (+1 higher is better, -1 lower), __kind``.

    Direction and aggregation come from the registry, or, for a name it does
    not know, from ``higher_is_better`` and ``aggregate``
    (:func:`ireval_df.measures.properties`).
    """
    infos = properties(metrics, higher_is_better=higher_is_better, aggregate=aggregate)
    ratio = [p.metric for p in infos if p.aggregate == "ratio"]
    if ratio:
        msg = (
            f"metric(s) {ratio!r} aggregate as a ratio of sums, which needs their "
            "numerator and denominator, not one value per unit.\n"
            "  Hint: summarize and compare the numerator and denominator metrics."
        )
        raise OptionError(msg)
    median = [p.metric for p in infos if p.aggregate == "median"]
    if median:
        msg = (
            f"metric(s) {median!r} aggregate as a median of all events, which no "
            "mean of per-unit values gives.\n"
            "  Hint: compare their mean form (e.g. TimeToFirstClick(stat=mean)) "
            "from per-unit sums with ireval_df.online."
        )
        raise OptionError(msg)
    return pl.DataFrame(
        {
            "metric": list(metrics),
            "__m": list(range(len(metrics))),
            "__sign": [1.0 if info.higher_is_better else -1.0 for info in infos],
            "__kind": [info.aggregate for info in infos],
        },
        schema={
            "metric": pl.String,
            "__m": pl.Int64,
            "__sign": pl.Float64,
            "__kind": pl.String,
        },
    )


def declared(
    metrics: Sequence[str], higher_is_better: Direction, aggregate: AggregateOption
) -> dict[str, Any]:
    """Return settings that record the caller's declarations of non-registry metrics.

    ``to_markdown`` and the other renderers read them back, so a result of
    a user's own metric renders without declaring it twice.
    """
    found = [
        p
        for p in properties(
            metrics, higher_is_better=higher_is_better, aggregate=aggregate
        )
        if not p.registered
    ]
    if not found:
        return {}
    return {
        "higher_is_better": {p.metric: p.higher_is_better for p in found},
        "aggregate": {p.metric: p.aggregate for p in found},
    }


def run_order(frame: pl.DataFrame) -> list[str]:
    """Run ids in order of first appearance."""
    return [str(r) for r in frame["run_id"].unique(maintain_order=True).to_list()]


def run_pairs(
    runs: Sequence[str], baseline: str | Sequence[str] | None
) -> list[tuple[str, str]]:
    """(run, baseline) pairs: all pairs, or every run against each baseline.

    With several baselines a pair already compared (``b`` against ``a``) is
    not repeated the other way round.

    Examples
    --------
    >>> run_pairs(["a", "b", "c"], None)
    [('b', 'a'), ('c', 'a'), ('c', 'b')]
    >>> run_pairs(["a", "b", "c"], ["a", "b"])
    [('b', 'a'), ('c', 'a'), ('c', 'b')]
    >>> run_pairs(["a", "b", "c"], "c")
    [('a', 'c'), ('b', 'c')]
    """
    if len(runs) < 2:
        msg = (
            f"comparing runs needs at least two runs, found {list(runs)!r}.\n"
            "  Hint: evaluate several runs at once (a list of runs, or a frame "
            "with run_id)."
        )
        raise DataError(msg)
    if baseline is None:
        return [
            (runs[j], runs[i])
            for i in range(len(runs))
            for j in range(i + 1, len(runs))
        ]
    baselines = [baseline] if isinstance(baseline, str) else list(baseline)
    unknown = [b for b in baselines if b not in runs]
    if unknown or not baselines:
        msg = (
            f"baseline {unknown or baselines!r} is not a run of these results; "
            f"the runs are {list(runs)!r}.\n  Hint: pass one of the run ids, a list "
            "of them, or baseline=None for all pairs."
        )
        raise OptionError(msg)
    pairs: list[tuple[str, str]] = []
    seen: set[frozenset[str]] = set()
    for b in dict.fromkeys(baselines):
        for r in runs:
            key = frozenset((r, b))
            if r != b and key not in seen:
                seen.add(key)
                pairs.append((r, b))
    return pairs


def pair_names(pairs: Sequence[tuple[str, str]]) -> pl.DataFrame:
    """Return the (run, baseline) of each pair, keyed by its position ``__pair``.

    Examples
    --------
    >>> pair_names([("b", "a")]).rows()
    [(0, 'b', 'a')]
    """
    return pl.DataFrame(
        {
            "__pair": list(range(len(pairs))),
            "run_id": [r for r, _ in pairs],
            "baseline": [b for _, b in pairs],
        },
        schema={"__pair": pl.Int64, "run_id": pl.String, "baseline": pl.String},
    )


def output(frame: pl.DataFrame, like: Any, settings: dict[str, Any]) -> Any:
    """Return ``frame`` as the kind ``like`` is, with ``like``'s settings and these."""
    merged = dict(_provenance.settings_of(like) or {})
    merged.update(settings)
    if isinstance(like, pl.LazyFrame):  # summaries are eager whatever came in
        like = None
    return _provenance.output(frame, like, merged)
