"""Per-query values against pytrec_eval-terrier (trec_eval 9.x), ``rtol=1e-9``.

pytrec_eval-terrier embeds trec_eval 9.x (SPEC.md section 9), so:

* scores are stored as float32: the strategies draw multiples of 0.25;
* a qrels topic missing from the run is skipped: ``missing="skip"``;
* iprec_at_recall / 11pt_avg use ``(long)(p R + 0.9)``: ``compat=9``;
* there is no rbp, rbp_resid or unj (10.0 additions).

pytrec_eval's ``relevance_level`` is our ``rel`` and its
``judged_docs_only_flag`` our ``judged_only``. Every topic keeps a grade >= 0:
trec_eval errors out or segfaults on all-negative topics (SPEC.md 8.9).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from strategies import Case, batches, cases

import ireval_df as ie
from ireval_df.errors import IrevalWarning
from ireval_df.measures.spec import build_metric
from ireval_df.offline.plan import measures_reading

PREFERENCE_MEASURES = measures_reading("preferences")

if TYPE_CHECKING:
    from ireval_df.measures import Metric

pytrec_eval = pytest.importorskip("pytrec_eval")

RTOL = 1e-9
CUTOFFS = (1, 3, 5, 10, 100)
#: Recall levels; 0.7 (R = 3) and 0.2 (R = 7) are where 9.x's +0.9 and
#: 10.0's lround differ, checked here with compat=9.
LEVELS = (0.0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.75, 1.0)
MULTS = (0.2, 0.5, 1.0, 1.5, 2.0)


def _log_floor(value: float) -> float:
    """trec_eval's per-topic gm_map / gm_bpref: log(max(x, 1e-5))."""
    return math.log(max(value, 1e-5))


@dataclass(frozen=True)
class Ref:
    """One reference case: our metric (without rel / judged_only), the
    measure pytrec_eval is asked for, the key it answers under, and the
    transform of our value that should equal it."""

    name: str
    params: tuple[tuple[str, Any], ...]
    k: Any
    request: str
    key: str
    transform: Any = None

    def metric(self, rel: int, judged_only: bool) -> Metric:
        from ireval_df.measures import REGISTRY

        params = dict(self.params, judged_only=judged_only)
        if "rel" in REGISTRY[self.name].params:
            params["rel"] = rel
        return build_metric(self.name, params, self.k)


def _cut(name: str, trec: str) -> list[Ref]:
    request = f"{trec}." + ",".join(str(k) for k in CUTOFFS)
    return [Ref(name, (), k, request, f"{trec}_{k}") for k in CUTOFFS]


def _plain(
    name: str,
    trec: str,
    params: tuple[tuple[str, Any], ...] = (),
    transform: Any = None,
) -> Ref:
    return Ref(name, params, None, trec, trec, transform)


def _references() -> list[Ref]:
    levels = ",".join(str(p) for p in LEVELS)
    mults = ",".join(str(m) for m in MULTS)
    return [
        *_cut("P", "P"),
        *_cut("RelP", "relative_P"),
        *_cut("Success", "success"),
        *_cut("R", "recall"),
        *_cut("AP", "map_cut"),
        *_cut("nDCG", "ndcg_cut"),
        _plain("Rprec", "Rprec"),
        *[
            Ref(
                "Rprec",
                (("mult", m),),
                None,
                f"Rprec_mult.{mults}",
                f"Rprec_mult_{m:.2f}",
            )
            for m in MULTS
        ],
        _plain("AP", "map"),
        _plain("gmAP", "gm_map", transform=_log_floor),
        _plain("infAP", "infAP"),
        _plain("RR", "recip_rank"),
        _plain("Bpref", "bpref"),
        _plain("gmBpref", "gm_bpref", transform=_log_floor),
        _plain("binG", "binG"),
        _plain("nDCG", "ndcg"),
        _plain("nDCGRel", "ndcg_rel"),
        _plain("Rndcg", "Rndcg"),
        _plain("G", "G"),
        *[
            Ref(
                "IPrec",
                (("compat", "9"),),
                p,
                f"iprec_at_recall.{levels}",
                f"iprec_at_recall_{p:.2f}",
            )
            for p in LEVELS
        ],
        _plain("11pt", "11pt_avg", (("compat", "9"),)),
        Ref(
            "11pt",
            (("compat", "9"), ("points", (0.25, 0.5, 0.75))),
            None,
            "11pt_avg.0.25,0.5,0.75",
            "11pt_avg",
        ),
        _plain("NumQ", "num_q"),
        _plain("NumRet", "num_ret"),
        _plain("NumRel", "num_rel"),
        _plain("NumRelRet", "num_rel_ret"),
        _plain("NumNonRelJudgedRet", "num_nonrel_judged_ret"),
        _plain("SetP", "set_P"),
        _plain("SetR", "set_recall"),
        _plain("SetRelP", "set_relative_P"),
        _plain("SetAP", "set_map"),
        _plain("SetF", "set_F"),
        # set_F's parameter is beta squared (SPEC.md 8.12)
        Ref("SetF", (("beta", 0.5),), None, "set_F.0.25", "set_F"),
        Ref("SetF", (("beta", 2.0),), None, "set_F.4", "set_F"),
        _plain("Utility", "utility"),
    ]


REFERENCES: list[Ref] = _references()
#: Registry names with at least one pytrec_eval reference case.
REFERENCE_NAMES: frozenset[str] = frozenset(r.name for r in REFERENCES)

#: What pytrec_eval cannot check, and why. Registry names (the whole metric)
#: and, for the record, variants of referenced metrics.
NO_REFERENCE: dict[str, str] = {
    "Best": "no trec_eval measure (highest-grade hit); oracle and unit tests only",
    "F": "trec_eval has only the set version (set_F); F@k is oracle-checked",
    "CG": "no trec_eval measure (undiscounted gain); oracle-checked",
    "DCG": "trec_eval 9.x's dcg is not exposed by pytrec_eval-terrier",
    "IDCG": "trec_eval 9.x's ideal_dcg is not exposed by pytrec_eval-terrier",
    "yaap": "trec_eval's yaap is not exposed by pytrec_eval-terrier",
    "ERR": "no trec_eval measure; checked against gdeval via ir_measures (ERR@k, max_rel=4)",
    "RBP": "rbp is new in trec_eval 10.0 (absent from 9.x); SPEC.md 7 worked example",
    "RBPResidual": "rbp_resid is new in trec_eval 10.0 (absent from 9.x)",
    "Unjudged": "unj is new in trec_eval 10.0 (absent from 9.x)",
    "Judged": "no trec_eval measure; checked against ir_measures' judged provider",
    "Hits": "no trec_eval measure (num_rel_ret sums); ranx's numbers on data/ are pinned",
    "Share": "no trec_eval measure (a document slice's share of the top k); oracle and "
    "hand-derived slice tests",
    "RelShare": "no trec_eval measure (a document slice's share of the relevant "
    "documents); oracle and hand-derived slice tests",
    **dict.fromkeys(
        (
            "alpha_nDCG",
            "alpha_DCG",
            "ERR_IA",
            "nERR_IA",
            "NRBP",
            "nNRBP",
            "AP_IA",
            "P_IA",
            "StRecall",
        ),
        "no trec_eval measure (ndeval's); checked against pyndeval and ir_measures "
        "in test_pyndeval.py",
    ),
    "nDCG_IA": "no trec_eval or ndeval measure (the mean of per-intent nDCG); "
    "oracle-checked, and equal to nDCG with one intent",
    "SDCG": "no trec_eval measure (cwl_eval's NDCG-k); checked against cwl_eval via ir_measures",
    "INSQ": "no trec_eval measure; checked against cwl_eval via ir_measures",
    "INST": "no trec_eval measure; checked against cwl_eval via ir_measures",
    "NERR8": "no trec_eval measure; checked against cwl_eval via ir_measures",
    "NERR9": "no trec_eval measure; checked against cwl_eval via ir_measures",
    "NERR10": "no trec_eval measure; checked against cwl_eval via ir_measures",
    "NERR11": "no trec_eval measure; checked against cwl_eval via ir_measures",
    "BPM": "no trec_eval measure; checked against cwl_eval via ir_measures",
    "Compat": "no trec_eval measure; checked against ir_measures' compat provider",
    # variants of referenced metrics
    "nDCG(dcg=exp-log2)": "trec_eval gains are linear; gdeval via ir_measures checks it",
    "nDCG(gains=...)": "pytrec_eval-terrier rejects gain-map parameters ('1=3,2=9')",
    "AP(norm=min_R_k|relret)": "not trec_eval normalisations (map_cut divides by R)",
    "RR@k, Success, NumRet@k, NumRelRet@k": "trec_eval has no cutoff form of these",
    "IPrec / 11pt (compat=10)": "lround is 10.0; 9.x uses +0.9 (SPEC.md 9)",
    "Utility(params)": "pytrec_eval-terrier splits 'utility.2,-1,0,0' at the commas",
}
NO_REFERENCE.update(
    dict.fromkeys(
        PREFERENCE_MEASURES,
        "pytrec_eval-terrier has no prefs_* measure (it reads qrels only); "
        "checked against the trec_eval 10.0 binary in test_prefs_trec_eval.py",
    )
)


def pytrec_values(
    case: Case, rel: int, judged_only: bool
) -> dict[tuple[str, str, str], float]:
    """(run, query, request|key) -> value from pytrec_eval, one evaluator per request
    (several requests answer under the same key, e.g. set_F and set_F.0.25)."""
    out: dict[tuple[str, str, str], float] = {}
    for request in sorted({r.request for r in REFERENCES}):
        evaluator = pytrec_eval.RelevanceEvaluator(
            case.qrels,
            {request},
            relevance_level=rel,
            judged_docs_only_flag=judged_only,
        )
        for run_id, run in case.runs.items():
            for query, values in evaluator.evaluate(run).items():
                for key, v in values.items():
                    out[(run_id, query, f"{request}|{key}")] = v
    return out


def close(ours: float, theirs: float) -> bool:
    if math.isnan(ours) or math.isnan(theirs):
        return math.isnan(ours) and math.isnan(theirs)
    return math.isclose(ours, theirs, rel_tol=RTOL, abs_tol=1e-12)


def compare(case: Case, rel: int, judged_only: bool) -> None:
    refs = {ref.metric(rel, judged_only): ref for ref in REFERENCES}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrevalWarning)
        result = ie.evaluate(
            case.run_frame(), case.qrels_frame(), list(refs), missing="skip"
        )
    theirs = pytrec_values(case, rel, judged_only)
    ours_queries = {(r, q) for r, q in result.select("run_id", "query_id").iter_rows()}
    their_queries = {(r, q) for r, q, _ in theirs}
    assert ours_queries == their_queries, "evaluated queries differ"
    by_name = {str(m): ref for m, ref in refs.items()}
    bad = []
    for run_id, query, name, value in result.iter_rows():
        ref = by_name[name]
        ours = ref.transform(value) if ref.transform else value
        want = theirs[(run_id, query, f"{ref.request}|{ref.key}")]
        if not close(ours, want):
            bad.append(
                f"{run_id} {query} {name} ({ref.key}): ours {ours!r}, pytrec_eval {want!r}"
            )
    assert not bad, (
        f"{len(bad)} differences (rel={rel}, judged_only={judged_only}):\n"
        + "\n".join(bad[:15])
        + f"\n{case!r}"
    )


@settings(max_examples=8)
@given(batches(3, max_queries=5, max_runs=2, judged_topics=True))
@pytest.mark.parametrize(
    ("rel", "judged_only"), [(1, False), (2, False), (1, True), (2, True)]
)
def test_matches_pytrec_eval(rel: int, judged_only: bool, case: Case) -> None:
    compare(case, rel, judged_only)


@settings(max_examples=15)
@given(cases(max_queries=3, max_runs=1, max_docs=6, judged_topics=True))
def test_matches_pytrec_eval_small(case: Case) -> None:
    # single small cases: here a failure shrinks to a readable example
    compare(case, 1, judged_only=False)


def test_reference_keys_are_the_registry_templates() -> None:
    # the registry's trec_eval template names the key pytrec_eval answers under
    for ref in REFERENCES:
        template = ref.metric(1, judged_only=False).info.trec_eval
        assert template is not None, ref.name
        if ref.name in ("Rprec", "SetF", "11pt") and ref.params:
            continue  # parameter suffixes: Rprec_mult_0.20, set_F.0.25, 11pt_avg.0.25,...
        forms = template.split("|")
        form = forms[-1] if ref.k is not None else forms[0]
        assert form.format(k=ref.k) == ref.key, (template, ref)
