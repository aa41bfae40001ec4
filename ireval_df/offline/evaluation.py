"""``evaluate()``: score runs against qrels, one row per run, query and metric."""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._utils import provenance as _provenance
from ireval_df._utils.memory import choose_buckets, memory_budget
from ireval_df._utils.progress import Progress
from ireval_df._utils.signals import scratch_folder, terminate_as_interrupt
from ireval_df._utils.versions import POLARS_VERSION, TREC_EVAL_REFERENCE, version_of
from ireval_df.errors import (
    AlignmentError,
    DataError,
    OptionError,
    SchemaError,
    warn,
)
from ireval_df.measures import parse_metrics
from ireval_df.offline.conventions import TIE_RULE, UNJUDGED_AT, UNJUDGED_WARN
from ireval_df.offline.doc_slices import (
    DocSlicing,
    SlicePart,
    assemble,
    doc_slicing,
    slice_part,
)
from ireval_df.offline.engine import (
    MISSING,
    EngineOptions,
    Rankings,
    find_rankings,
    may_repeat,
    per_query_wide,
)
from ireval_df.offline.intents import attach
from ireval_df.offline.plan import KEYS, judgment_kind
from ireval_df.schema.coerce import as_queries, as_run
from ireval_df.schema.intents import read_judgments

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from ireval_df.measures import Metric

__all__ = ["evaluate"]

Missing = Literal["zero", "skip", "error"]
Compat = Literal["10", "9"]
Duplicates = Literal["error", "first", "max"]
RankFrom = Literal["score", "column"]

#: Evaluated with every call for the unjudged warning: the share of the top
#: 10 (UNJUDGED_AT) that is unjudged, over 10 (trec_eval's unj_10), is
#: NumRet@10 x (1 - Judged@10) / 10. Unlike Unjudged@10 itself, these two
#: need only the ranks of judged documents, so they never force a full sort.
_HIDDEN = (f"Judged@{UNJUDGED_AT}", f"NumRet@{UNJUDGED_AT}")


def _choice(name: str, value: Any, allowed: tuple[Any, ...]) -> None:
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        msg = f"{name}={value!r} is not one of {options}."
        raise OptionError(msg)


def evaluate(
    run: Any,
    qrels: Any,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    queries: Any = None,
    missing: Missing | None = None,
    depth: int | None = None,
    duplicates: Duplicates = "error",
    rank_from: RankFrom = "score",
    columns: Mapping[str, str] | None = None,
    buckets: int | Literal["auto"] = "auto",
    warn_unjudged: float | None = UNJUDGED_WARN,
    compat: Compat = "10",
    docs: Any = None,
    by_doc: Any = None,
    as_of: Any = None,
) -> Any:
    """Score runs against qrels: one row per run, query and metric.

    Parameters
    ----------
    run : frame, path, dict or list of these
        Columns ``query_id``, ``doc_id``, ``score`` and optionally ``run_id``
        (several runs stacked) and ``rank``; a polars or pandas frame, a
        pyarrow Table, a path (TREC, Parquet, CSV/TSV, JSONL, ``.gz``), a
        ``{qid: {docid: score}}`` dict, or a list of runs.
    qrels : frame, path or dict
        Columns ``query_id``, ``doc_id``, ``relevance`` (int; negative =
        pooled but not judged), in any form ``run`` accepts.
    metrics : str, Metric or list of them
        ``"nDCG@10"``, ``"AP"``, trec_eval or ranx names; see
        :func:`ireval_df.list_metrics`.
    queries : frame or path, optional
        ``query_id`` plus attribute columns, joined onto the result so it can
        be sliced (``summarize(..., by=["query_class"])``).
    missing : {"zero", "skip", "error"}, default "zero" ("skip" with ``compat="9"``)
        A qrels query the run did not answer: scored as an empty ranking (0
        for every measure but counts such as ``NumRel``; trec_eval ``-c``),
        left out (trec_eval 9.x without ``-c``), or an error. Always counted
        in a warning.
    depth : int, optional
        Keep only the top ``depth`` documents of each ranking (trec_eval ``-M``).
    duplicates : {"error", "first", "max"}, default "error"
        A document twice in one ranking: an error (as trec_eval), or keep the
        first row in input order / the highest score, with a warning.
    rank_from : {"score", "column"}, default "score"
        Rank by score (ties by doc_id descending), or by the input ``rank``.
    columns : mapping, optional
        Renames for the run's columns, e.g. ``{"qid": "query_id"}``.
    buckets : int or "auto", default "auto"
        Evaluate the queries in this many groups, one after the other (a
        query's group is a hash of its id), to bound memory: each group reads
        the inputs again but holds only its own queries. A TREC text run is
        then first read window by window into temporary Arrow files (in
        ``TMPDIR``), so it need not fit in memory either. With 1 a lazy run
        (a ``LazyFrame``, a Parquet file) is read into memory once, for every
        pass of the engine. ``"auto"`` estimates the run's rows (Parquet
        metadata, a text file's size over its mean line length, a frame's
        height) and takes the fewest groups whose estimated peak (96 bytes a
        row) fits the smaller of a sixth of the machine's memory and half of
        the memory available now: one for any run of up to tens of millions
        of rows on a machine of 16 GiB. The results never depend on it.
        ``docs/benchmarks.md`` shows the memory a 100-million-row run takes
        with each setting. On a terminal, a bar on stderr shows the groups done.
    compat : {"10", "9"}, default "10"
        ``"9"`` computes as trec_eval 9.x, which pytrec_eval (and so
        ir_measures, PyTerrier) embeds, to reproduce numbers from papers that
        used it: scores are rounded to float32 before ranking (closer scores
        tie, ties go to doc_id descending), ``IPrec``/``11pt`` need
        ``(long)(p R + 0.9)`` relevant documents, and a qrels query the run
        did not answer is left out (``missing="skip"``, unless given). The
        ``metric`` column keeps the names asked for; the settings record it.
        ``ireval-df trec_eval --compat 9`` is the same for the drop-in.
    warn_unjudged : float or None, default 0.5
        Warn when more than this share of the top 10 documents is unjudged on
        average (the metrics count them as non-relevant); None never warns.
        Sparse qrels (MS MARCO, BEIR: often above 0.9) are made that way:
        pass None, or a higher share, to keep the warning for real surprises.
    docs : frame or path, optional
        Document attributes, ``doc_id`` (or ``query_id, doc_id``) and any
        columns (:func:`ireval_df.read_docs`), for ``by_doc``.
    by_doc : str, polars.Expr, or a list of these, optional
        Score each (run, query, slice of the documents): a column of
        ``docs``, several, or an expression over them such as
        :func:`ireval_df.age_buckets` (which reads the query's ``issued_at``
        from ``queries``, or ``as_of``). The result gains the slice columns.
        Only ``P@k``, ``R@k``, ``nDCG@k``, ``Share@k`` and ``RelShare``
        (metrics registered with ``doc_slices``) can be sliced; see Notes.
    as_of : datetime, date or str, optional
        The time of every query that has no ``issued_at`` in ``queries``,
        for ages in ``by_doc``.

    Returns
    -------
    Frame of the same kind as ``run`` (polars, pandas; lazy stays lazy)
        ``run_id, query_id, metric, value`` and the query attributes, sorted
        by run, query (byte order) and the order of ``metrics``. Queries only
        in the run are ignored (with a warning). With ``by_doc``:
        ``run_id, query_id, <slice columns>, metric, value`` and the query
        attributes, sorted by run, query, slice and metric.

    Raises
    ------
    MetricSpecError
        An unknown metric or parameter.
    SchemaError, DataError, FormatError
        Unusable input (missing columns, NaN scores, duplicates, bad files).
    AlignmentError
        Run and qrels share no query, or ``missing="error"`` and a query is
        missing.
    OptionError
        ``by_doc`` without ``docs`` (or the reverse), a metric that cannot be
        sliced by document, ``by_doc`` naming a column ``docs`` lacks.

    Warns
    -----
    IrevalWarning
        Queries on one side only; repeated documents dropped; a mostly
        unjudged top 10; with ``by_doc``, documents absent from ``docs``.

    See Also
    --------
    summarize : means per run (and slice) with confidence intervals.
    read_docs, age_buckets : document attributes and ages for ``by_doc``.

    Notes
    -----
    All metrics and all runs share every pass over the data, none loops over
    queries: one streaming pass finds each ranking, its size and whether its
    rows already come in rank order; a few small collects check the inputs
    (alignment, repeated documents) and build the judged-document filter; then
    one lazy plan per ``judged_only`` setting among the metrics (one, for most
    calls) ranks, joins the qrels once and aggregates every metric in one
    ``group_by``. With ``buckets`` above 1 this runs once per group of
    queries. Rank is derived from the score, ties broken by ``doc_id``
    descending in byte order, exactly as trec_eval; row order never matters.

    Document slices (``by_doc``) keep each document at the rank the whole
    ranking gave it; for a slice S of a query with relevant documents
    ``Rel`` (grade >= ``rel``) and the top k ``Top``:

    - ``P@k = |Top & S & Rel| / k``, so a query's slices add up to ``P@k``;
    - ``R@k = |Top & S & Rel| / |S & Rel|``, no row when ``S & Rel`` is empty;
    - ``nDCG@k``: the DCG of the documents of S in the top k at their
      original ranks, over the ideal DCG of S's judged documents; no row
      when that ideal is 0;
    - ``Share@k = |Top & S| / k``; ``RelShare = |S & Rel| / |Rel|``, no row
      when ``Rel`` is empty.

    Every (run, query) gets a row for every slice seen in the call (in the
    top k of a run, or among the judged documents), so means over queries
    (``summarize(by=...)``) average over the same queries for every run.
    Re-ranking each slice on its own (P@k of the slice's own top k) is the
    other definition in use; ``docs/slices.md`` compares the two.

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [1]})
    >>> evaluate(run, qrels, ["RR", "P@2"]).select("metric", "value").rows()
    [('RR', 0.5), ('P@2', 0.5)]
    """
    missing = check_options(
        missing=missing,
        depth=depth,
        duplicates=duplicates,
        rank_from=rank_from,
        warn_unjudged=warn_unjudged,
        compat=compat,
    )
    specs = parse_metrics(metrics, family="offline")
    refuse_preference_measures(specs)
    attributes = None if queries is None else as_queries(queries).collect()
    slicing = _doc_slicing(docs, by_doc, as_of, specs, attributes)
    if buckets == "auto":
        buckets = choose_buckets(_input_rows(run), memory_budget())
    elif isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
        msg = f"buckets must be a positive whole number or 'auto', found {buckets!r}."
        raise OptionError(msg)
    # several buckets read the run once per bucket: a text run goes to
    # temporary Arrow files first, removed when the evaluation is done
    scratch = nullcontext(None) if buckets == 1 else scratch_folder("ireval_df-")
    with terminate_as_interrupt(only_default=True), scratch as folder:
        long, stats, dropped = _evaluate_buckets(
            run,
            qrels,
            specs,
            buckets,
            folder=None if folder is None else Path(folder),
            missing=missing,
            depth=depth,
            duplicates=duplicates,
            rank_from=rank_from,
            columns=columns,
            warn_unjudged=warn_unjudged,
            compat=compat,
            slicing=slicing,
        )
    if attributes is not None:
        long = long.join(attributes, on="query_id", how="left", maintain_order="left")
    settings = {
        "ties": TIE_RULE,
        "missing": missing,
        "depth": depth,
        "duplicates": duplicates,
        "rank_from": rank_from,
        "metrics": [str(m) for m in specs],
        "queries_missing_from_run": stats["missing"],
        "queries_only_in_run": stats["run_only"],
        "duplicates_dropped": dropped,
        "buckets": buckets,
        "compat": compat,
        "by_doc": None if slicing is None else slicing.names,
        "trec_eval_reference": TREC_EVAL_REFERENCE,
        "ireval_df": version_of("ireval-df"),
        "polars": POLARS_VERSION,
    }
    return _provenance.output(long, run, settings)


def check_options(
    *,
    missing: Missing | None,
    depth: int | None,
    duplicates: Duplicates,
    rank_from: RankFrom,
    warn_unjudged: float | None,
    compat: Compat,
) -> Missing:
    """Check :func:`evaluate`'s options; return ``missing`` with its default chosen.

    Shared with the engines that run :func:`evaluate_queries` elsewhere (Spark),
    so that a bad option is refused with the same message before any work.

    Raises
    ------
    OptionError
        A value the option does not take.

    Examples
    --------
    >>> check_options(missing=None, depth=None, duplicates="error",
    ...               rank_from="score", warn_unjudged=0.5, compat="9")
    'skip'
    """
    _choice("compat", compat, ("10", "9"))
    if missing is None:
        missing = "skip" if compat == "9" else "zero"
    _choice("missing", missing, ("zero", "skip", "error"))
    _choice("duplicates", duplicates, ("error", "first", "max"))
    _choice("rank_from", rank_from, ("score", "column"))
    if warn_unjudged is not None and (
        isinstance(warn_unjudged, bool)
        or not isinstance(warn_unjudged, int | float)
        or not 0 <= warn_unjudged <= 1
    ):
        msg = (
            f"warn_unjudged must be a share between 0 and 1, or None (never warn), "
            f"found {warn_unjudged!r}."
        )
        raise OptionError(msg)
    if depth is not None and (
        isinstance(depth, bool) or not isinstance(depth, int) or depth < 1
    ):
        msg = f"depth must be a positive whole number, found {depth!r}."
        raise OptionError(msg)
    return missing


def _doc_slicing(
    docs: Any,
    by_doc: Any,
    as_of: Any,
    specs: list[Metric],
    attributes: pl.DataFrame | None,
) -> DocSlicing | None:
    """Check the document-slice options together; None without ``by_doc``."""
    if by_doc is None:
        unused = "docs=" if docs is not None else "as_of=" if as_of is not None else ""
        if unused:
            msg = (
                f"{unused} is used only with by_doc=, which is not given.\n"
                f"  Hint: pass by_doc= a column of docs (e.g. by_doc='source_type') "
                f"or an expression such as ie.age_buckets()."
            )
            raise OptionError(msg)
        return None
    if docs is None:
        msg = (
            f"by_doc={by_doc!r} slices by document attributes, but docs= is not "
            f"given.\n  Hint: pass docs= a table or file with doc_id and the "
            f"attribute columns (see ie.read_docs)."
        )
        raise OptionError(msg)
    names = [] if attributes is None else attributes.columns[1:]
    return doc_slicing(
        docs, by_doc, specs, queries=attributes, as_of=as_of, attributes=names
    )


def _input_rows(run: Any) -> int:
    """Estimate the rows of a run before reading it, for ``buckets="auto"``.

    Anything it cannot size counts 0 (one bucket); the readers then report
    what is wrong with it.
    """
    if isinstance(run, list | tuple):
        return sum(_input_rows(item) for item in run)
    if isinstance(run, str | os.PathLike):
        from ireval_df.io.spill import estimate_rows

        return estimate_rows(run)
    if isinstance(run, pl.DataFrame):
        return run.height
    if isinstance(run, pl.LazyFrame):  # a scan: the metadata says
        try:
            return int(run.select(pl.len()).collect().item())
        except pl.exceptions.PolarsError:
            return 0
    if isinstance(run, Mapping):
        return sum(len(v) for v in run.values() if isinstance(v, Mapping))
    try:
        return len(run)
    except TypeError:
        return 0


def _evaluate_buckets(
    run: Any,
    qrels: Any,
    specs: list[Metric],
    buckets: int,
    *,
    folder: Path | None,
    missing: Missing,
    depth: int | None,
    duplicates: Duplicates,
    rank_from: RankFrom,
    columns: Mapping[str, str] | None,
    warn_unjudged: float | None,
    compat: Compat,
    slicing: DocSlicing | None = None,
) -> tuple[pl.DataFrame, dict[str, int], int]:
    """Read the inputs and evaluate them bucket by bucket: the long frame, counts, rows dropped."""
    # one bucket: read a lazy input (Parquet) into memory once, not per pass
    one = buckets == 1
    run_lf = as_run(
        run,
        columns=columns,
        rank=rank_from == "column",
        in_memory=one,
        scratch=folder,
    )
    qrels_lf = judged_qrels(qrels, in_memory=one)
    computed = specs
    if compat == "9":  # trec_eval 9.x stored scores as float32
        run_lf = run_lf.with_columns(pl.col("score").cast(pl.Float32).cast(pl.Float64))
        computed = [_as_trec_eval_9(m) for m in specs]
    if buckets > 1 and needs_top_grade(computed):
        top = qrels_lf.select(pl.col("relevance").max()).collect().item()
        computed = with_top_grade(computed, top)
    if rank_from == "column":
        check_ranks(run_lf)
    options = EngineOptions(
        depth=depth,
        missing="skip" if missing == "skip" else "zero",
        rank_from=rank_from,
    )
    hidden = [m for m in parse_metrics(list(_HIDDEN)) if m not in computed]
    stats: dict[str, int] = {}
    run_ids = None
    if buckets > 1:  # check alignment before any bucket is evaluated
        pairs = run_lf.select("run_id", "query_id").unique().collect(engine="streaming")
        stats = check_alignment(pairs, qrels_lf, missing)
        run_ids = pairs.select("run_id").unique().lazy()  # a run may miss a bucket
    wides, dropped = [], 0
    parts: list[SlicePart] = []
    # a bar on a terminal, for buckets (each a pass over the files)
    bar = Progress(buckets, "evaluating buckets", work=None if buckets > 1 else 0)
    with bar:
        for part_run, part_qrels in _buckets(run_lf, qrels_lf, buckets):
            wide, stats, extra = _evaluate_part(
                part_run,
                part_qrels,
                [*computed, *hidden],
                options,
                missing,
                duplicates,
                stats,
                run_ids,
                slicing,
                parts,
            )
            wides.append(wide)
            dropped += extra
            bar.update()
    report_dropped(dropped, duplicates)
    wide = (
        pl.concat(wides)
        if buckets == 1
        else pl.concat(wides).sort(["run_id", "query_id"])
    )
    if warn_unjudged is not None:
        shares = unjudged_shares(wide)["share"]
        report_unjudged(shares.mean() if shares.len() else None, warn_unjudged)
    if slicing is not None:
        return assemble(slicing, parts, wide.select(*KEYS)), stats, dropped
    return _long(wide, specs, computed), stats, dropped


def _long(
    wide: pl.DataFrame, specs: list[Metric], computed: list[Metric]
) -> pl.DataFrame:
    """Turn the engine's wide frame (a column per metric) into the long result."""
    names = [str(m) for m in specs]
    # wide is sorted by run and query: one list per row, exploded, keeps that
    # order and the order of ``metrics`` without another sort
    return wide.select(
        "run_id",
        "query_id",
        metric=pl.lit(pl.Series([names], dtype=pl.List(pl.String))).first(),
        value=pl.concat_list([str(m) for m in computed]),
    ).explode("metric", "value")


def evaluate_queries(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    specs: list[Metric],
    *,
    run_ids: Iterable[str],
    missing: Missing,
    depth: int | None,
    duplicates: Duplicates,
    rank_from: RankFrom,
    compat: Compat,
    top_grade: int | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, int]:
    """Evaluate a part of the data that holds whole queries, as :func:`evaluate` does.

    For engines that split the queries themselves (``ireval_df.spark``):
    ``run`` and ``qrels`` are canonical (:func:`~ireval_df.schema.coerce.as_run`),
    hold every row of their queries and may be empty; the options were
    checked (:func:`check_options`) and the alignment of the whole data
    reported (:func:`check_alignment`) by the caller. ``run_ids`` are the
    runs of the whole data: with ``missing="zero"`` each of them is scored
    on this part's qrels queries, even one that has no row here.
    ``top_grade`` is the highest grade of all the qrels (not this part's),
    for the measures that scale by it (:func:`with_top_grade`).

    Returns
    -------
    tuple
        The long result (``run_id, query_id, metric, value``, sorted as
        :func:`evaluate` sorts), the unjudged share of the top 10 of each
        answered (run, query) (:func:`unjudged_shares`) and the rows
        dropped by ``duplicates``.
    """
    computed = specs
    if compat == "9":  # trec_eval 9.x stored scores as float32
        run = run.with_columns(pl.col("score").cast(pl.Float32).cast(pl.Float64))
        computed = [_as_trec_eval_9(m) for m in specs]
    computed = with_top_grade(computed, top_grade)
    if rank_from == "column":
        check_ranks(run)
    options = EngineOptions(
        depth=depth,
        missing="skip" if missing == "skip" else "zero",
        rank_from=rank_from,
    )
    hidden = [m for m in parse_metrics(list(_HIDDEN)) if m not in computed]
    ids = pl.LazyFrame({"run_id": sorted(set(run_ids))}, schema={"run_id": pl.String})
    known = {"missing": 0, "run_only": 0}  # reported by the caller: not again
    wide, _, dropped = _evaluate_part(
        run, qrels, [*computed, *hidden], options, missing, duplicates, known, ids
    )
    wide = wide.sort(["run_id", "query_id"])
    return _long(wide, specs, computed), unjudged_shares(wide), dropped


def judged_qrels(qrels: Any, *, in_memory: bool) -> pl.LazyFrame:
    """Read the qrels: one grade per document, and its intent judgments if any.

    Qrels with an intent column (diversity qrels) give each document its
    highest grade over its intents, for every measure, and keep its
    ``{intent, relevance}`` judgments beside it, for the diversity measures
    (:func:`ireval_df.offline.intents.attach`). Spark's kernels read each
    group's qrels through it too.
    """
    judged = read_judgments(qrels, in_memory=in_memory)
    return attach(judged.qrels, judged.intents)


def _scaled_by_top_grade(metric: Metric) -> bool:
    return "max_rel" in metric.info.params and int(metric.param("max_rel")) == 0


def needs_top_grade(specs: list[Metric]) -> bool:
    """Whether a measure of ``specs`` scales by the qrels' highest grade (``max_rel=0``)."""
    return any(_scaled_by_top_grade(m) for m in specs)


def with_top_grade(specs: list[Metric], top: int | None) -> list[Metric]:
    """Give ``max_rel=0`` (the qrels' highest grade) its value ``top``.

    A measure scaled by the highest grade of the qrels (ERR and the C/W/L
    user models by default) must see the grade of all the qrels in every
    group of queries, not its group's own: the caller reads it once, from
    all of them, before the queries are split (``buckets``, Spark). Without
    a positive grade every gain is 0 whatever the split: ``top`` of None or
    below 1 changes nothing.

    Examples
    --------
    >>> from ireval_df.measures import parse_metric
    >>> [str(m) for m in with_top_grade([parse_metric("ERR@10"), parse_metric("AP")], 3)]
    ['ERR(max_rel=3)@10', 'AP']
    """
    if top is None or top < 1:
        return specs
    from ireval_df.measures.spec import build_metric

    return [
        build_metric(m.name, {**dict(m.params), "max_rel": int(top)}, m.k)
        if _scaled_by_top_grade(m)
        else m
        for m in specs
    ]


def _as_trec_eval_9(metric: Metric) -> Metric:
    """Return the spec computed for ``metric`` under ``compat="9"`` (its 9.x variant)."""
    from ireval_df.measures.spec import build_metric

    if "compat" not in metric.info.params or "compat" in dict(metric.params):
        return metric
    return build_metric(metric.name, {**dict(metric.params), "compat": "9"}, metric.k)


def _buckets(
    run: pl.LazyFrame, qrels: pl.LazyFrame, buckets: int
) -> Iterator[tuple[pl.LazyFrame, pl.LazyFrame]]:
    """Run and qrels in ``buckets`` groups of whole queries, one at a time.

    A group of several is collected first, so that its checks and the engine
    read the files once per group, not once per pass.
    """
    if buckets == 1:
        yield run, qrels
        return
    group = pl.col("query_id").hash(seed=7) % buckets
    for b in range(buckets):
        parts = run.filter(group == b), qrels.filter(group == b)
        # streamed: the input is read in batches, only this bucket is held
        yield (
            parts[0].collect(engine="streaming").lazy(),
            parts[1].collect(engine="streaming").lazy(),
        )


#: How to score preference measures, from Python (the command line has its own)
PREFERENCE_HINT = (
    "ie.evaluate_prefs(run, prefs, metrics), with prefs a frame of those "
    "columns or ie.read_prefs('file') (trec_eval -R prefs; "
    "format='qrels_prefs' reads a qrels file as preferences)."
)


def refuse_preference_measures(
    specs: list[Metric], hint: str = PREFERENCE_HINT
) -> None:
    """Raise :class:`OptionError` for a preference measure: qrels cannot give it.

    Called by :func:`evaluate`, by ``ireval_df.spark.evaluate`` and by
    ``ireval-df evaluate`` (with its own ``hint``), before any work.
    """
    wanted = [str(m) for m in specs if judgment_kind(m) == "preferences"]
    if wanted:
        msg = (
            f"{wanted!r} need preference judgments (query_id, jg, jsg, doc_id, "
            f"relevance), which qrels do not hold.\n  Hint: {hint}"
        )
        raise OptionError(msg)


def _evaluate_part(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    metrics: list[Metric],
    options: EngineOptions,
    missing: Missing,
    duplicates: Duplicates,
    stats: dict[str, int],
    run_ids: pl.LazyFrame | None,
    slicing: DocSlicing | None = None,
    parts: list[SlicePart] | None = None,
) -> tuple[pl.DataFrame, dict[str, int], int]:
    """Evaluate one part: its wide frame, the alignment counts, the rows dropped.

    Repeated documents are rejected or dropped (``duplicates``) first.
    ``stats`` are the counts already known (from every bucket at once), or
    empty: then this part's rankings give them, and the alignment problems
    are reported before the metrics are computed. With ``slicing``, the
    part's document slices are scored too and appended to ``parts``.
    """
    run, rankings, dropped = unique_rankings(run, options, duplicates)
    if not stats:
        stats = check_alignment(rankings.sizes, qrels, missing)
    wide_lf = per_query_wide(
        metrics, run, qrels, options, rankings=rankings, run_ids=run_ids
    )
    if slicing is not None and parts is not None:
        ids = run_ids if run_ids is not None else rankings.sizes.lazy()
        parts.append(
            slice_part(slicing, run, qrels, options, ids.select("run_id").unique())
        )
    return wide_lf.collect(), stats, dropped


def unique_rankings(
    run: pl.LazyFrame, options: EngineOptions, duplicates: Duplicates
) -> tuple[pl.LazyFrame, Rankings, int]:
    """Find every ranking of a run, a document twice in one refused or dropped.

    Returns the run (without the dropped rows), its rankings
    (:func:`~ireval_df.offline.engine.find_rankings`) and the number of rows
    dropped. ``duplicates="error"`` raises :class:`~ireval_df.errors.DataError`
    on a repeat; ``"first"`` and ``"max"`` keep one row of each.
    """
    rankings = find_rankings(run, options, repeats=True)
    counts = _repeats(run, rankings)
    if counts is None:
        return run, rankings, 0
    run, dropped = deduplicate(run, counts, duplicates)
    return run, find_rankings(run, options), dropped


def repeated_documents(
    run: pl.LazyFrame, options: EngineOptions
) -> pl.DataFrame | None:
    """Every document twice in one ranking of ``run``, with its count ``n``; None if none.

    Sorted by run, query and document, as :func:`repeats_error` quotes them.
    """
    return _repeats(run, find_rankings(run, options, repeats=True))


def repeats_error(documents: int, extra: int, example: Mapping[str, Any]) -> DataError:
    """Return the error for ``documents`` repeated in one ranking, ``extra`` rows more.

    ``example`` is the first of them (``run_id, query_id, doc_id, n``).
    """
    msg = (
        f"the run has {documents} documents that appear more than once in the same "
        f"ranking ({extra} extra rows), e.g. run {example['run_id']!r}, query "
        f"{example['query_id']!r}, doc {example['doc_id']!r} x{example['n']}. trec_eval "
        "rejects such runs.\n  Hint: pass duplicates='first' (keep the first row) or "
        "duplicates='max' (keep the highest score)."
    )
    return DataError(msg)


def _repeats(run: pl.LazyFrame, rankings: Rankings) -> pl.DataFrame | None:
    """Repeated (run, query, doc) rows with their counts, or None when there are none.

    A check of hashes (:func:`may_repeat`) costs a fraction of the exact
    count, which runs only when it fails (a repeat, or a hash collision).
    """
    key = ["run_id", "query_id", "doc_id"]
    if not may_repeat(run, rankings):
        return None
    counts = (
        run.group_by(key)
        .agg(pl.len().alias("n"))
        .filter(pl.col("n") > 1)
        .sort(key)
        .collect()
    )
    return counts if counts.height else None


def check_ranks(run: pl.LazyFrame) -> None:
    """Raise unless every row of ``run`` has a rank (for ``rank_from="column"``)."""
    if "rank" not in run.collect_schema().names():
        msg = "rank_from='column' needs a 'rank' column in the run; none was found."
        raise SchemaError(msg)
    unranked = run.select(pl.col("rank").null_count()).collect().item()
    if unranked:
        msg = (
            f"rank_from='column': {unranked} run rows have no usable rank (a rank "
            "that is not a whole number >= 0 reads as null), so they could not be "
            "placed in their ranking.\n  Hint: fix the rank column, or rank by "
            "score with rank_from='score' (the default)."
        )
        raise DataError(msg)


def deduplicate(
    run: pl.LazyFrame, counts: pl.DataFrame, policy: Duplicates
) -> tuple[pl.LazyFrame, int]:
    """Reject, or keep one of, the repeated rows ``counts`` lists; count the extra rows."""
    key = ["run_id", "query_id", "doc_id"]
    extra = int(counts["n"].sum()) - counts.height
    if policy == "error":
        raise repeats_error(counts.height, extra, counts.row(0, named=True))
    if policy == "max":
        kept = run.sort("score", descending=True, maintain_order=True)
        return kept.unique(subset=key, keep="first", maintain_order=True), extra
    return run.unique(subset=key, keep="first", maintain_order=True), extra


def check_alignment(
    pairs: pl.DataFrame, qrels: pl.LazyFrame, missing: Missing
) -> dict[str, int]:
    """Count (and report) queries on one side only; reject disjoint inputs.

    ``pairs`` holds every (run_id, query_id) of the run, once.
    """
    qids = qrels.select("query_id").unique().collect()["query_id"]
    run_qids = pairs["query_id"].unique()
    if qids.len() == 0:
        msg = "the qrels hold no judgments: nothing to evaluate against."
        raise AlignmentError(msg)
    shared = run_qids.is_in(qids.implode()).sum()
    if run_qids.len() > 0 and shared == 0:
        msg = (
            "run and qrels share no query id. Run ids look like "
            f"{sorted(run_qids.to_list())[:3]!r}, qrels ids like {sorted(qids.to_list())[:3]!r}.\n"
            "  Hint: check the query id column of each side (columns=...), and "
            "zero-padding or prefixes in the ids."
        )
        raise AlignmentError(msg)
    run_ids = pairs["run_id"].unique().sort()
    grid = pl.DataFrame({"run_id": run_ids}).join(
        pl.DataFrame({"query_id": qids}), how="cross"
    )
    absent = grid.join(pairs, on=["run_id", "query_id"], how="anti").sort(
        ["run_id", "query_id"]
    )
    run_only = run_qids.filter(~run_qids.is_in(qids.implode())).sort()
    if absent.height:
        example = absent.row(0, named=True)
        what = {
            "zero": "scored as empty rankings (0)",
            "skip": "left out of the results",
            "error": "an error",
        }[missing]
        text = (
            f"{absent.height} (run, query) pairs are in the qrels but not in the run, e.g. "
            f"run {example['run_id']!r} query {example['query_id']!r}: {what} (missing={missing!r})."
        )
        if missing == "error":
            msg = (
                text + "\n  Hint: pass missing='zero' (trec_eval -c) or missing='skip'."
            )
            raise AlignmentError(msg)
        warn(text + " Pass missing='error' to reject, or 'skip'/'zero' to choose.")
    if run_only.len():
        warn(
            f"{run_only.len()} queries are in the run but not in the qrels and are ignored, "
            f"e.g. {run_only.to_list()[:3]!r}. If they should count, their judgments are "
            "missing (see ireval_df.validate(run, qrels)); to drop them first: "
            "run.filter(pl.col('query_id').is_in(qrels['query_id']))."
        )
    return {"missing": absent.height, "run_only": run_only.len()}


def unjudged_shares(wide: pl.DataFrame) -> pl.DataFrame:
    """Return the unjudged share of the top 10 of each answered (run, query), ``share``.

    ``wide`` is the engine's frame with the hidden ``Judged@10`` and
    ``NumRet@10`` columns; their mean is what :func:`report_unjudged` reads.
    """
    judged, retrieved = _HIDDEN
    unjudged = pl.col(retrieved) * (1.0 - pl.col(judged)) / float(UNJUDGED_AT)
    return wide.filter(~pl.col(MISSING)).select(unjudged.alias("share"))


def report_dropped(dropped: int, duplicates: Duplicates) -> None:
    """Warn that ``dropped`` repeated rows were dropped (nothing when none were)."""
    if dropped:
        warn(
            f"dropped {dropped} repeated (query, doc) rows from the run "
            f"(duplicates={duplicates!r}); pass duplicates='error' to reject such runs."
        )


def report_unjudged(share: Any, threshold: float) -> None:
    """Warn when ``share``, the mean unjudged share of the top 10, exceeds ``threshold``.

    ``share`` is None when no query was answered (nothing to warn about).
    """
    if isinstance(share, float) and share > threshold:
        warn(
            f"{share:.0%} of the top {UNJUDGED_AT} documents are unjudged on average; metrics count them "
            f"as non-relevant. Check Judged@{UNJUDGED_AT}, or use Bpref, infAP or judged_only=true. "
            f"Where the qrels are sparse by design (MS MARCO, BEIR), pass "
            f"warn_unjudged=None (--warn-unjudged never) to silence this, or a share "
            f"above {share:.2f}."
        )
