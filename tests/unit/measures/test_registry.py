"""The registry is complete and the parser reads every documented spelling.

For every registered metric (CONTRIBUTING.md, adding a metric): a docstring example, a
place in the oracle grid (``tests/reference/test_oracle.py``) and an oracle
function, and either a pytrec_eval reference case
(``tests/reference/test_pytrec_eval.py``) or a reasoned ``NO_REFERENCE``
entry. Each check is parametrized by metric, so a failure names it.
"""

from __future__ import annotations

import inspect

import polars as pl
import pytest
from reference import oracle
from reference.test_oracle import GRID_NAMES
from reference.test_pytrec_eval import NO_REFERENCE, REFERENCE_NAMES

import ireval_df as ie
from ireval_df.errors import MetricSpecError
from ireval_df.measures import REGISTRY, Metric, parse_metric
from ireval_df.measures.spec import build_metric
from ireval_df.offline.plan import measures_reading
from ireval_df.trec_eval._measures import _PREFS_METRICS

PREFERENCE_MEASURES = measures_reading("preferences")

#: the offline metrics: the oracle and the pytrec_eval references cover them
NAMES = sorted(n for n, info in REGISTRY.items() if info.family == "offline")
#: those scored over one ranked list and qrels, which the oracle grid covers;
#: the preference measures have trec_eval itself (test_prefs_trec_eval.py)
RANKED = [n for n in NAMES if n not in PREFERENCE_MEASURES]


def _with_cutoff(spelling: str, name: str) -> str:
    info = REGISTRY[name]
    if info.cutoff != "required":
        return spelling
    return spelling + ("@0.5" if info.cutoff_type is float else "@10")


# --- completeness ----------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_metric_has_a_docstring_example(name: str) -> None:
    doc = inspect.getdoc(REGISTRY[name].compute) or ""
    assert ">>>" in doc, f"{name}: the builder's docstring has no example"
    assert REGISTRY[name].summary, f"{name}: no one-line summary"


@pytest.mark.parametrize("name", RANKED)
def test_metric_is_in_the_oracle_grid(name: str) -> None:
    assert name in oracle.ORACLE, (
        f"{name}: no oracle function in tests/reference/oracle.py"
    )
    assert name in GRID_NAMES, (
        f"{name}: not in the oracle grid (tests/reference/test_oracle.py)"
    )


@pytest.mark.parametrize("name", NAMES)
def test_metric_has_a_reference_or_a_reason(name: str) -> None:
    assert name in REFERENCE_NAMES or name in NO_REFERENCE, (
        f"{name}: add a pytrec_eval case to REFERENCES or a reasoned NO_REFERENCE entry "
        "in tests/reference/test_pytrec_eval.py"
    )
    assert not (name in REFERENCE_NAMES and name in NO_REFERENCE), (
        f"{name}: both referenced and in NO_REFERENCE"
    )


def test_oracle_lists_only_registered_metrics() -> None:
    assert set(oracle.ORACLE) == set(RANKED)


def test_every_preference_measure_is_checked_against_trec_eval() -> None:
    assert set(_PREFS_METRICS.values()) == PREFERENCE_MEASURES


def test_no_reference_reasons_are_sentences() -> None:
    for key, reason in NO_REFERENCE.items():
        assert len(reason.split()) >= 4, key


def test_list_metrics_has_one_row_per_entry() -> None:
    table = ie.list_metrics()
    assert table["metric"].to_list() == list(REGISTRY)
    assert {"metric", "aliases", "trec_eval", "cutoff", "params", "aggregate"} <= set(
        table.columns
    )
    ndcg = table.filter(pl.col("metric") == "nDCG")["trec_eval"].item()
    assert "ndcg" in ndcg
    assert "ndcg_cut_{k}" in ndcg


# --- parsing ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_every_alias_parses_to_its_metric(name: str) -> None:
    for alias in (name, *(a.spelling for a in REGISTRY[name].aliases)):
        for spelling in {alias, alias.lower(), alias.upper()}:
            metric = parse_metric(_with_cutoff(spelling, name))
            if alias == name or alias.lower() == name.lower():
                continue
            assert metric.name == name, (spelling, metric)


@pytest.mark.parametrize("name", NAMES)
def test_canonical_name_round_trips(name: str) -> None:
    spec = _with_cutoff(name, name)
    metric = parse_metric(spec)
    assert str(metric) == spec
    assert parse_metric(str(metric)) == metric
    assert metric.params == ()  # defaults are left out


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("P_10", "P@10"),
        ("P.10", "P@10"),
        ("P_23.4", "P@23"),  # atol, as trec_eval
        ("ndcg_cut.10", "nDCG@10"),
        ("ndcg_cut_5", "nDCG@5"),
        ("ndcg", "nDCG"),
        ("map", "AP"),
        ("map_cut_100", "AP@100"),
        ("gm_map", "gmAP"),
        ("iprec_at_recall_0.10", "IPrec@0.1"),
        ("iprec_at_recall_1.00", "IPrec@1"),
        ("Rprec", "Rprec"),
        ("Rprec_mult_0.20", "Rprec(mult=0.2)"),
        ("set_F", "SetF"),
        ("set_F.0.25", "SetF(beta=0.5)"),
        ("set_F.4", "SetF(beta=2)"),
        ("recip_rank", "RR"),
        ("rbp", "RBP(p=0.9)"),
        ("rbp_resid", "RBPResidual(p=0.9)"),
        ("unj_5", "Unjudged@5"),
        ("success_1", "Success@1"),
        ("recall_5", "R@5"),
        ("relative_P_5", "RelP@5"),
        ("11pt_avg", "11pt"),
        ("bpref", "Bpref"),
        ("gm_bpref", "gmBpref"),
        ("infAP", "infAP"),
        ("num_q", "NumQ"),
        ("num_ret", "NumRet"),
        ("num_rel", "NumRel"),
        ("num_rel_ret", "NumRelRet"),
        ("num_nonrel_judged_ret", "NumNonRelJudgedRet"),
        ("set_P", "SetP"),
        ("set_recall", "SetR"),
        ("set_relative_P", "SetRelP"),
        ("set_map", "SetAP"),
        ("utility", "Utility"),
        ("utility.2,-1,0,0", "Utility(rel_ret=2)"),
        ("binG", "binG"),
        ("G", "G"),
        ("ndcg_rel", "nDCGRel"),
        ("Rndcg", "Rndcg"),
        ("dcg", "DCG"),
        ("ideal_dcg", "IDCG"),
        ("yaap", "yaap"),
    ],
)
def test_trec_eval_spellings(spelling: str, canonical: str) -> None:
    assert str(parse_metric(spelling)) == canonical


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("ndcg@10", "nDCG@10"),
        ("map@100", "AP@100"),
        ("mrr@10", "RR@10"),
        ("precision@10", "P@10"),
        ("recall@100", "R@100"),
        ("hit_rate@10", "Success@10"),
        ("ndcg_burges@10", "nDCG(dcg=exp-log2)@10"),
        ("f1@10", "F@10"),
        ("r-precision", "Rprec"),
        ("NDCG@10", "nDCG@10"),
        ("MAP", "AP"),
    ],
)
def test_ranx_and_case_insensitive_spellings(spelling: str, canonical: str) -> None:
    assert str(parse_metric(spelling)) == canonical


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("P(rel=2)@5", "P(rel=2)@5"),
        ("nDCG(dcg=exp-log2)@10", "nDCG(dcg=exp-log2)@10"),
        ("nDCG(judged_only=true)@10", "nDCG(judged_only=true)@10"),
        ("nDCG(judged_only=True)@10", "nDCG(judged_only=true)@10"),
        ("AP(rel=1)", "AP"),
        ("RBP(p=0.8)", "RBP"),
        ("RBP(p=0.5)", "RBP(p=0.5)"),
        ("nDCG(gains={2:9,1:3})", "nDCG(gains={1:3,2:9})"),
        ("11pt(points=[0.25,0.5])", "11pt(points=[0.25,0.5])"),
        ("AP(rel=2,judged_only=true)@10", "AP(judged_only=true,rel=2)@10"),
        (" AP ", "AP"),
        ("IPrec@0.50", "IPrec@0.5"),
        ("P@10.0", "P@10"),
    ],
)
def test_canonical_form(spelling: str, canonical: str) -> None:
    assert str(parse_metric(spelling)) == canonical
    assert parse_metric(canonical) == parse_metric(spelling)


def test_metric_objects_pass_through() -> None:
    metric = build_metric("P", {"rel": 2}, 5)
    assert parse_metric(metric) is metric
    assert isinstance(metric, Metric)
    assert hash(metric) == hash(parse_metric("P(rel=2)@5"))


@pytest.mark.parametrize(
    ("spelling", "close"),
    [("ndgc@10", "nDCG"), ("mapp", "AP"), ("recip_rnk", "RR"), ("presicion@5", "P")],
)
def test_unknown_names_suggest_the_closest(spelling: str, close: str) -> None:
    with pytest.raises(MetricSpecError, match="Did you mean") as error:
        parse_metric(spelling)
    assert f"'{close}" in str(error.value)
    assert "list_metrics()" in str(error.value)


@pytest.mark.parametrize(
    ("spelling", "message"),
    [
        ("P", "needs a cutoff"),
        ("AP@0", "must be positive"),
        ("P_0", "must be positive"),
        ("AP@1.5", "whole number"),
        ("IPrec@1.5", r"recall level in \[0, 1\]"),
        ("iprec_at_recall_1.5", r"recall level in \[0, 1\]"),
        ("NumQ@5", "takes no cutoff"),
        ("RR(foo=1)", "unknown parameter 'foo'.*Valid parameters: judged_only, rel"),
        ("nDCG(dcg=exp)", "not one of 'log2', 'exp-log2'"),
        ("AP(norm=foo)", "not one of 'R', 'min_R_k', 'relret'"),
        ("P(rel=x)@5", "parameter rel='x'"),
        ("P(rel=1.5)@5", "parameter rel"),
        ("P(judged_only=maybe)@5", "parameter judged_only"),
        ("P(rel)@5", "name=value"),
        ("nDCG(gains={1:a})", "expected a number"),
        ("nDCG(gains={1})", "level:gain"),
        ("RBP(p=1.5)", r"p must be in \(0, 1\)"),
        ("RBP(p=0)", r"p must be in \(0, 1\)"),
        ("F(beta=0)@5", "beta must be positive"),
        ("SetF(beta=-1)", "beta must be positive"),
        ("Rprec(mult=0)", "mult must be positive"),
        ("ERR(max_rel=-1)", "max_rel"),
        ("11pt(points=[0.5,2])", r"recall levels must be in \[0, 1\]"),
        ("P_x", "whole-number cutoff"),
        ("", "unknown metric"),
    ],
)
def test_bad_specs_say_what_is_wrong(spelling: str, message: str) -> None:
    with pytest.raises(MetricSpecError, match=message):
        parse_metric(spelling)


def test_non_strings_are_rejected() -> None:
    with pytest.raises(MetricSpecError, match="must be a string"):
        parse_metric(42)  # type: ignore[arg-type]
    with pytest.raises(MetricSpecError, match="no metrics given"):
        ie.evaluate(
            pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]}),
            pl.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [1]}),
            [],
        )


@pytest.mark.parametrize("spelling", ["set_F.x", "Rprec_mult_x"])
def test_bad_trec_eval_float_suffix_is_a_spec_error(spelling: str) -> None:
    with pytest.raises(MetricSpecError, match=spelling):
        parse_metric(spelling)


@pytest.mark.parametrize("spelling", ["P(rel=1@5", "P@10@5"])
def test_malformed_spec_hint_does_not_repeat_the_input(spelling: str) -> None:
    with pytest.raises(MetricSpecError) as error:
        parse_metric(spelling)
    assert f"Did you mean '{spelling}'" not in str(error.value)
    assert "malformed metric" in str(error.value)


def test_ranx_hits_is_a_mean_as_ranx_reports_it() -> None:
    # ranx 0.3.21 on data/ (negative grades clipped to 0; runs sorted in
    # trec_eval's order so that ranx's tie rule agrees): hits@10 means
    import warnings
    from pathlib import Path

    data = Path(__file__).resolve().parents[3] / "data"
    ranx_hits_at_10 = {"bm25": 2.966667, "dense": 4.346667, "hybrid": 4.700000}
    runs = [data / "runs" / f"{name}.run" for name in ranx_hits_at_10]
    qrels = ie.read_qrels(data / "qrels.txt").with_columns(
        pl.col("relevance").clip(lower_bound=0)
    )
    assert str(parse_metric("hits@10")) == "Hits@10"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs_only_judged = ie.read_run(runs).filter(
            pl.col("query_id").is_in(qrels["query_id"].implode())
        )
        per_query = ie.evaluate(runs_only_judged, qrels, ["hits@10"])
    means = dict(ie.summarize(per_query, ci="t").select("run_id", "value").rows())
    for run, value in ranx_hits_at_10.items():
        assert means[run] == pytest.approx(value, abs=1e-6)


@pytest.mark.parametrize("name", RANKED)
def test_declared_intent_judgments_are_the_ones_the_plan_reads(name: str) -> None:
    # judgments="intents" in the registry is what evaluate() reads to ask for
    # qrels with intents: it must be exactly the metrics whose plan has an
    # intent stage
    from ireval_df.offline.intents import STAGES
    from ireval_df.offline.plan import build_plan, judgment_kind

    metric = parse_metric(_with_cutoff(name, name))
    staged = any(stage in STAGES for stage, _ in build_plan(metric).needs)
    assert (judgment_kind(metric) == "intents") == staged


def test_the_judgments_an_offline_metric_reads_are_declared_once() -> None:
    from ireval_df.offline.plan import judgment_kind

    intents = measures_reading("intents")
    assert {"alpha_nDCG", "ERR_IA", "StRecall"} <= intents
    assert not intents & PREFERENCE_MEASURES
    assert judgment_kind("prefs_simp") == "preferences"  # an alias
    assert judgment_kind("nDCG") == "grades"
