"""``docs/metrics.md``, generated from the registry (``ireval-df metrics --markdown``)."""

from __future__ import annotations

import re

import polars as pl

from ireval_df.measures.registry import REGISTRY, MeasureInfo
from ireval_df.measures.spec import format_value

__all__ = ["list_metrics", "metrics_markdown"]

_HEADER = """# Metrics

Generated from the measure registry by `ireval-df metrics --markdown`; do not
edit by hand (a test checks that this file is current). Three families share the
registry and its grammar: the offline metrics, which `ireval_df.evaluate()`
computes against qrels, the similarity measures, which
`ireval_df.similarity()` computes between a run and a baseline without
judgments ([similarity.md](similarity.md)), and the online metrics, which
`ireval_df.online.metrics()` computes from search logs ([online.md](online.md)).

## Offline metrics

Every metric is written `Name(param=value,...)@k` (ir_measures syntax; defaults
left out). The parser also takes the aliases below, trec_eval names with their
parameter suffix (`P_10`, `ndcg_cut.10`, `iprec_at_recall_0.10`,
`Rprec_mult_0.20`, `set_F.0.5`) and ranx names (`ndcg@10`, `map@100`,
`mrr@10`), case-insensitively (an exact-case spelling wins: `rbp` is trec_eval's
p = 0.9, `RBP` the canonical p = 0.8). A peer's spelling gives that peer's
number, aggregation included (ranx's `hits@10` is `Hits@10`, a mean; trec_eval's
`num_rel_ret` is `NumRelRet`, a sum); each ranx spelling was checked against
ranx 0.3.21 on `data/`, equal but for queries with tied scores, which ranx
orders otherwise. One exception is documented, not hidden: `bpref` is
trec_eval's name and gives trec_eval's number; ranx's own `bpref` differs on
qrels with judged non-relevant documents. Every metric takes `judged_only`
(drop unjudged documents before ranking, trec_eval `-J`); binary metrics take
`rel` (the lowest relevant grade, trec_eval `-l`).

Conventions shared by all: rank is score descending, ties broken by `doc_id`
descending in byte order (trec_eval); a document absent from the qrels, or
with a negative grade, is unjudged and counts as non-relevant; R counts every
judged document with grade >= `rel`, retrieved or not; a query the run did not
answer is an empty ranking (`missing="zero"`).

The preference measures (`NumPrefs*`, `Prefs*`: trec_eval's `prefs_*`) read
preference judgments, not qrels: `ireval_df.evaluate_prefs()` scores them
against a frame of `query_id, jg, jsg, doc_id, relevance`, which
`ireval_df.read_prefs()` reads from trec_eval's `-R prefs` and `-R
qrels_prefs` files; their ranks break score ties by `doc_id` ascending, as
trec_eval's do ([trec_eval.md](trec_eval.md#preference-measures)).
"""


_PARTIAL = (
    "the ranks of judged documents suffice (unless `rel` is below 0 or a gain map "
    "gives level -1 a gain: then every document is ranked)"
)


def _params(info_params: dict[str, object]) -> str:
    shown = {k: v for k, v in info_params.items() if k != "judged_only"}
    return (
        ", ".join(
            f"`{k}={'{}' if k == 'gains' else format_value(v)}`"
            for k, v in shown.items()
        )
        or "-"
    )


def _notes(text: str) -> str:
    """Return the docstring body without its Examples section, as markdown."""
    body = re.split(r"(?:^|\n)\s*Examples\n\s*-+\n", text, maxsplit=1)[0].strip()
    return re.sub(r"``([^`]+)``", r"`\1`", body)


_SIMILARITY = """## Similarity measures

A similarity measure compares a run's ranking of each query with a
baseline's, without judgments (`ireval_df.similarity()`, `ireval-df
similarity`). Rankings follow `evaluate()`'s order; documents with equal
scores form tie groups, which each measure's `ties` parameter treats as it
says. `@k` cuts both rankings at depth k first. Which RBO to report, how
ties count, and where other packages go wrong: [similarity.md](similarity.md).
"""


_ONLINE = """## Online metrics

An online metric is computed from a search log (`ireval_df.online.metrics()`,
[online.md](online.md)). Each sums a numerator and a denominator over the rows
of one grain (searches, displayed results, clicks or sessions) and divides: a
ratio of sums, per arm, per slice or per randomisation unit; the A/B tests
compare arms on the per-unit sums (`ireval_df.online.unit_table()`), which the
table names. `TimeToFirstClick` with `stat=median` is a median instead.
"""


def _online_table(infos: list[MeasureInfo]) -> list[str]:
    lines = [
        "| metric | aliases | grain | cutoff | parameters | aggregate | better "
        "| per unit |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for info in infos:
        aliases = ", ".join(f"`{a.spelling}`" for a in info.aliases) or "-"
        better = "higher" if info.higher_is_better else "lower"
        sums = f"`{info.options['numer']}` / `{info.options['denom']}`"
        lines.append(
            f"| `{info.name}` | {aliases} | {info.unit} | {info.cutoff} | "
            f"{_params(dict(info.params))} | {info.aggregate} | {better} | {sums} |"
        )
    return [*lines, ""]


def _table(infos: list[MeasureInfo], *, trec: bool) -> list[str]:
    head = "| metric | aliases |" + (" trec_eval |" if trec else "")
    lines = [
        head + " cutoff | parameters | summary over queries | better |",
        "|---|---|" + ("---|" if trec else "") + "---|---|---|---|",
    ]
    for info in infos:
        aliases = ", ".join(f"`{a.spelling}`" for a in info.aliases) or "-"
        names = ", ".join(f"`{t}`" for t in (info.trec_eval or "").split("|") if t)
        better = "higher" if info.higher_is_better else "lower"
        lines.append(
            f"| `{info.name}` | {aliases} |"
            + (f" {names or '-'} |" if trec else "")
            + f" {info.cutoff} | {_params(dict(info.params))} | {info.aggregate} |"
            f" {better} |"
        )
    return [*lines, ""]


def _entry(info: MeasureInfo) -> list[str]:
    lines = [f"### {info.name}", "", re.sub(r"``([^`]+)``", r"`\1`", info.summary), ""]
    notes = _notes(info.notes)
    if notes:
        lines += [notes, ""]
    low, high = info.bounds
    reach = ""
    if info.family == "offline":
        full = info.options.get("full_sort", False)
        reach = "; " + (
            "needs the rank of every retrieved document" if full else _PARTIAL
        )
        if info.options.get("doc_slices", False):
            reach += (
                "; restricted to a slice of the documents by "
                "`evaluate(..., by_doc=...)` ([slices.md](slices.md))"
            )
    if info.family == "online":
        reach = (
            f"; grain: {info.unit}; per unit: `{info.options['numer']}` / "
            f"`{info.options['denom']}`"
        )
    lines += [
        f"Range: {'-inf' if low is None else format_value(low)} to "
        f"{'inf' if high is None else format_value(high)}{reach}.",
        "",
    ]
    if info.parameters:
        lines += ["Parameters:", ""]
        for name, param in info.parameters.items():
            choices = f", one of {', '.join(param.choices)}" if param.choices else ""
            default = "{}" if param.kind == "gain map" else format_value(param.default)
            lines.append(
                f"- `{name}` ({param.kind}{choices}; default `{default}`): "
                f"{param.description}."
            )
        lines.append("")
    return lines


def metrics_markdown() -> str:
    """Return the metrics reference page.

    Examples
    --------
    >>> "| `nDCG` |" in metrics_markdown()
    True
    """
    families: dict[str, list[MeasureInfo]] = {}
    for info in REGISTRY.values():
        families.setdefault(info.family, []).append(info)
    lines = [_HEADER, "### Summary", ""]
    lines += _table(families["offline"], trec=True)
    for info in families["offline"]:
        lines += _entry(info)
    lines += [_SIMILARITY, "### Summary", ""]
    lines += _table(families.get("similarity", []), trec=False)
    for info in families.get("similarity", []):
        lines += _entry(info)
    lines += [_ONLINE, "### Summary", ""]
    lines += _online_table(families.get("online", []))
    for info in families.get("online", []):
        lines += _entry(info)
    return "\n".join(lines).rstrip() + "\n"


def list_metrics() -> pl.DataFrame:
    """List every registered measure, one row each.

    Returns
    -------
    polars.DataFrame
        ``metric, family, aliases, trec_eval, cutoff, params, aggregate,
        higher_is_better, description``.

    Examples
    --------
    >>> table = list_metrics()
    >>> table.filter(pl.col("metric") == "AP").select("family", "trec_eval", "aggregate").row(0)
    ('offline', 'map, map_cut_{k}', 'mean')
    """
    rows = []
    for info in REGISTRY.values():
        rows.append(
            {
                "metric": info.name,
                "family": info.family,
                "aliases": ", ".join(a.spelling for a in info.aliases),
                "trec_eval": None
                if info.trec_eval is None
                else info.trec_eval.replace("|", ", "),
                "cutoff": info.cutoff,
                "params": ", ".join(
                    f"{k}={format_value(v)}" for k, v in info.params.items()
                ),
                "aggregate": info.aggregate,
                "higher_is_better": info.higher_is_better,
                "description": info.summary,
            }
        )
    return pl.DataFrame(rows)
