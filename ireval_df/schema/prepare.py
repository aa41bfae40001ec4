"""One source, or a list of runs, to a checked frame with the canonical columns.

:func:`prepare` reads a source (:mod:`ireval_df.schema.sources`), maps its
columns (:mod:`ireval_df.schema.columns`), casts them and counts every value
check (:mod:`ireval_df.schema.checks`) in one aggregate pass; strict and
lenient reading share it. :func:`prepare_runs` does so for each run of a
list and stacks them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import DataError, FormatError, SchemaError
from ireval_df.schema.checks import (
    Check,
    Column,
    cast,
    duplicate_documents,
    duplicate_judgments,
    duplicate_queries,
    single_run,
)
from ireval_df.schema.columns import (
    DEFAULT_RUN_ID,
    QRELS_COLUMNS,
    RUN,
    RUN_COLUMNS,
    resolve,
)
from ireval_df.schema.sources import is_path, label_of, read_source, run_name

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from ireval_df.schema.columns import Spec
    from ireval_df.schema.sources import Raw

__all__ = [
    "Prepared",
    "check_schema",
    "first_line",
    "prepare",
    "prepare_run",
    "prepare_runs",
    "run_id_clash",
]


@dataclass(frozen=True)
class Prepared:
    """A checked frame, the run ids it holds when asked for, the input dtypes.

    Attributes
    ----------
    frame : polars.LazyFrame
        The canonical columns, checked.
    run_ids : frozenset of str
        The run ids it holds, when they were asked for or named by the
        caller; empty otherwise.
    dtypes : mapping of str to polars.DataType
        The dtype each canonical column had in the source, before casting.
    """

    frame: pl.LazyFrame
    run_ids: frozenset[str] = frozenset()
    dtypes: Mapping[str, pl.DataType] = field(default_factory=dict)


@dataclass(frozen=True)
class _RunOptions:
    """How to name a run and whether to keep its rank (see :func:`prepare_run`)."""

    run_id: str | None
    default: str
    want_ids: bool
    rank: bool = True  # False: leave out any rank column


def prepare(
    obj: Any,
    spec: Spec,
    columns: Mapping[str, str] | None,
    label: str,
    run: _RunOptions | None = None,
    *,
    lenient: bool = False,
    in_memory: bool = False,
    scratch: Path | None = None,
) -> Prepared:
    """Turn any single source into a checked canonical frame.

    Parameters
    ----------
    obj : path, dict-of-dicts or table
        One source.
    spec : Spec
        What it should hold.
    columns : mapping of str to str, optional
        Source column name to canonical name.
    label : str
        The source, for messages.
    run : _RunOptions, optional
        For runs: naming the run, and whether to keep the rank.
    lenient : bool, default False
        Keep the values the data checks reject (see
        :func:`ireval_df.schema.lenient.as_lenient`), and grades as Float64.
    in_memory : bool, default False
        Collect a lazy source's canonical columns before the checks, so that
        it is read once for them and for every later pass.
    scratch : pathlib.Path, optional
        A folder to spill a TREC run to (see
        :func:`ireval_df.schema.coerce.as_run`); not used with ``in_memory``.

    Returns
    -------
    Prepared

    Examples
    --------
    >>> from ireval_df.schema.columns import QRELS
    >>> prepare({"q1": {"d1": 1}}, QRELS, None, "qrels").frame.collect().rows()
    [('q1', 'd1', 1)]
    """
    if columns is not None and not isinstance(columns, Mapping):
        msg = (
            f"columns= must map source names to canonical names, e.g. "
            f"{{'qid': 'query_id'}}, found a {type(columns).__name__}"
        )
        raise SchemaError(msg)
    raw = read_source(
        obj,
        spec,
        columns,
        label,
        lenient=lenient,
        rank=run is None or run.rank,
        scratch=None if in_memory else scratch,
    )
    return _check(raw, spec, label, run, lenient=lenient, in_memory=in_memory)


def prepare_run(
    obj: Any,
    columns: Mapping[str, str] | None,
    run_id: str | None,
    default_run_id: str,
    label: str,
    *,
    want_ids: bool = False,
    lenient: bool = False,
    rank: bool = True,
    in_memory: bool = False,
    scratch: Path | None = None,
) -> Prepared:
    """Turn one run into a checked canonical frame (see :func:`prepare`).

    ``run_id`` names it, replacing a single name it has; ``default_run_id``
    names it when it has no ``run_id`` column; ``want_ids`` collects the
    names it holds into :attr:`Prepared.run_ids`.
    """
    run = _RunOptions(
        run_id=run_id, default=default_run_id, want_ids=want_ids, rank=rank
    )
    return prepare(
        obj,
        RUN,
        columns,
        label,
        run,
        lenient=lenient,
        in_memory=in_memory,
        scratch=scratch,
    )


def prepare_runs(
    items: Sequence[Any],
    columns: Mapping[str, str] | None,
    *,
    lenient: bool = False,
    rank: bool = True,
    in_memory: bool = False,
    scratch: Path | None = None,
) -> Prepared:
    """Check every run of a list and stack them, refusing shared run ids.

    A run without a ``run_id`` column is named after its file, else
    ``run1``, ``run2``, ... by position; the rank column is kept only when
    every run has one. The other parameters are :func:`prepare`'s.

    Examples
    --------
    >>> stacked = prepare_runs([{"q1": {"a": 1.0}}, {"q1": {"b": 2.0}}], None)
    >>> sorted(stacked.run_ids)
    ['run1', 'run2']
    """
    if not items:
        msg = "the list of runs is empty; pass at least one run"
        raise SchemaError(msg)
    parts: list[Prepared] = []
    for i, item in enumerate(items, start=1):
        if isinstance(item, list | tuple):
            msg = (
                f"run #{i} of the list is itself a {type(item).__name__}; "
                f"pass one flat list of runs"
            )
            raise SchemaError(msg)
        default = run_name(item, f"run{i}")
        label = label_of(item, "run") if is_path(item) else f"run #{i}"
        parts.append(
            prepare_run(
                item,
                columns,
                None,
                default,
                label,
                want_ids=True,
                lenient=lenient,
                rank=rank,
                in_memory=in_memory,
                scratch=scratch,
            )
        )
    seen: dict[str, int] = {}
    for i, part in enumerate(parts, start=1):
        for name in sorted(part.run_ids):
            if name in seen:
                raise run_id_clash(name, seen[name], i)
            seen[name] = i
    frames = [p.frame for p in parts]
    if not all("rank" in f.collect_schema().names() for f in frames):
        frames = [f.select(RUN_COLUMNS) for f in frames]
    return Prepared(pl.concat(frames, how="vertical"), frozenset(seen), parts[0].dtypes)


def _check(
    raw: Raw,
    spec: Spec,
    label: str,
    run: _RunOptions | None = None,
    *,
    lenient: bool = False,
    in_memory: bool = False,
) -> Prepared:
    """Rename, cast and validate, with one aggregate pass over the data."""
    frame, columns, from_file = raw.frame, raw.columns, raw.from_file
    error = FormatError if from_file else SchemaError
    try:
        names = frame.collect_schema().names()
    except pl.exceptions.PolarsError as exc:  # a LazyFrame whose plan fails
        msg = f"could not read {label}: {first_line(exc)}"
        raise error(msg) from exc
    mapping = resolve(names, spec, columns, label)
    if run is not None and not run.rank:  # not wanted: neither kept nor checked
        mapping = {src: dst for src, dst in mapping.items() if dst != "rank"}
    source = {dst: src for src, dst in mapping.items()}
    kept = [
        pl.col(n).alias(mapping.get(n, n))
        for n in names
        if n in mapping or spec.attributes  # attributes are kept as they are
    ]
    staged = frame.lazy().select(kept)
    schema = staged.collect_schema()

    casts: dict[str, pl.Expr] = {}
    checks: list[Check] = []
    for canon in spec.canonical:
        if canon in schema:
            col = Column(canon, source[canon], schema[canon], label)
            casts[canon] = cast(col, checks, lenient=lenient)
    extra: list[pl.Expr] = []  # aggregates beside the checks
    run_ids: frozenset[str] = frozenset()
    if spec.kind == "queries":
        checks.append(duplicate_queries(label))
        order = ["query_id", *(n for n in schema.names() if n != "query_id")]
    elif spec.kind == "docs":
        checks.append(duplicate_documents(label, source))
        keys = [k for k in ("query_id", "doc_id") if k in schema]
        order = [*keys, *(n for n in schema.names() if n not in keys)]
    elif spec.kind == "qrels":
        checks.append(duplicate_judgments(label, source))
        order = list(QRELS_COLUMNS)
    else:
        run = run or _RunOptions(run_id=None, default=DEFAULT_RUN_ID, want_ids=False)
        order = [*RUN_COLUMNS, *(["rank"] if "rank" in schema else [])]
        if "run_id" not in schema or run.run_id is not None:
            if "run_id" in schema:
                checks.append(single_run(run.run_id or "", label))
            name = run.run_id or run.default
            casts["run_id"] = pl.lit(name, dtype=pl.String)
            run_ids = frozenset({name})
        elif run.want_ids:
            extra.append(casts["run_id"].unique().implode().alias("__ireval_ids"))

    if lenient:
        checks = [c for c in checks if c.level == "schema"]
    aggregates = [c.count.alias(f"__ireval_check_{i}") for i, c in enumerate(checks)]
    aggregates += extra
    if spec.kind == "run" and not lenient:  # an empty run evaluates nothing
        aggregates.append(pl.len().alias("__ireval_rows"))
    eager = in_memory or isinstance(frame, pl.DataFrame)
    try:
        if eager:  # in memory already, or a file read once: collect the staging
            staged = staged.collect().lazy()
        counts: dict[str, Any] = {}
        if aggregates:
            query = staged.select(aggregates).collect(engine="streaming")
            counts = query.row(0, named=True)
    except pl.exceptions.PolarsError as exc:
        msg = f"could not read {label}: {first_line(exc)}"
        raise error(msg) from exc
    if counts.get("__ireval_rows") == 0:
        msg = (
            f"{label} has no rows: there is nothing to evaluate.\n  Hint: a run "
            "lists at least one retrieved document; if a filter emptied it, check "
            "the filter (queries it has no rows for are scored by missing=)."
        )
        raise (FormatError if from_file else DataError)(msg)
    # errors first: a file that is refused is not also warned about
    for i, check in sorted(enumerate(checks), key=lambda c: c[1].level == "warning"):
        n = counts[f"__ireval_check_{i}"]
        if n:
            found = staged.filter(check.bad).head(1).collect()
            if found.height == 0:  # an estimate that was wrong: a hash collision
                continue
            if check.exact is not None:
                n = staged.select(check.exact).collect().item()
            check.report(int(n), found.row(0, named=True))  # raises, or warns
    if "__ireval_ids" in counts:
        run_ids = frozenset(counts["__ireval_ids"])
    result = staged.select([casts.get(c, pl.col(c)).alias(c) for c in order])
    if eager:
        result = result.collect().lazy()
    dtypes = {c: schema[c] for c in spec.canonical if c in schema}
    return Prepared(result, run_ids, dtypes)


def check_schema(
    schema: Mapping[str, pl.DataType],
    spec: Spec,
    columns: Mapping[str, str] | None,
    label: str,
    *,
    rank: bool = True,
) -> dict[str, str]:
    """Check a source's column names and dtypes without reading a row.

    For engines that hold the rows elsewhere (``ireval_df.spark``): the same
    resolution of names (:func:`~ireval_df.schema.columns.resolve`) and the
    same dtype errors as :func:`prepare`, raised before any work starts.
    The values are checked later, where the rows are.

    Returns
    -------
    dict of str to str
        Each source column used and its canonical name (without ``rank``
        when ``rank`` is False).

    Raises
    ------
    SchemaError
        A missing column, a bad ``columns=``, or a dtype that cannot hold
        the column's values.

    Examples
    --------
    >>> from ireval_df.schema.columns import RUN
    >>> check_schema({"qid": pl.Int64, "docno": pl.String, "sim": pl.Float64}, RUN, None, "run")
    {'qid': 'query_id', 'docno': 'doc_id', 'sim': 'score'}
    """
    mapping = resolve(list(schema), spec, columns, label)
    if not rank:
        mapping = {src: dst for src, dst in mapping.items() if dst != "rank"}
    for src, canon in mapping.items():
        if canon in spec.canonical:
            cast(Column(canon, src, schema[src], label), [])
    return mapping


def run_id_clash(name: str, first: int, second: int) -> DataError:
    """Return the error for two runs of a list (numbered from 1) sharing a run_id.

    Examples
    --------
    >>> print(run_id_clash("bm25", 1, 2))
    runs #1 and #2 of the list both have run_id 'bm25'; stacked runs need distinct run_ids.
      Hint: rename one first, e.g. read_run(source).with_columns(run_id=pl.lit('bm25-2')).
    """
    msg = (
        f"runs #{first} and #{second} of the list both have run_id {name!r}; "
        f"stacked runs need distinct run_ids.\n  Hint: rename one first, e.g. "
        f"read_run(source).with_columns(run_id=pl.lit('{name}-2'))."
    )
    return DataError(msg)


def first_line(exc: BaseException) -> str:
    """Return the first line of an error's message, to quote it in ours."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
