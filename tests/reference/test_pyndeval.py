"""The diversity measures against TREC's ndeval, through pyndeval and ir_measures.

pyndeval (ndeval 4.5 as a Python extension; what ir_measures' ``pyndeval``
provider runs) is the oracle, per query, ``rtol=1e-9``, on generated
diversity qrels and runs: graded and negative grades, documents judged for
some intents and not others, documents judged for no intent, queries
without a relevant intent, unjudged documents, tied scores, short lists
and cutoffs beyond them, qrels queries the run does not answer.

Conventions pinned here, each documented in ``docs/metrics.md``:

* ties: pyndeval sorts a query's documents by score, then by ``doc_id``
  *ascending*; ndeval's own ``-traditional`` order, and ours, break ties by
  ``doc_id`` descending. The grid therefore hands pyndeval our ranking as
  distinct scores, and :func:`test_pyndeval_breaks_ties_by_ascending_doc_id`
  pins the difference;
* queries: ndeval reports the queries in both the run and the qrels; ours
  are the qrels queries (an unanswered one scores 0, ``missing="zero"``), so
  only the shared ones are compared;
* ``ERR-IA@1`` and ``alpha-DCG@1``: ndeval normalises from the second rank
  on, so at rank 1 it reports ``G(1)`` where the definition gives
  ``G(1) / M`` (:func:`test_ndeval_leaves_rank_one_unnormalised`);
* ir_measures' provider loses its run after the first of several ndeval
  invocations (measures with different ``rel``/``alpha``/``beta``), scoring
  the later ones 0, and fails on ``judged_only=True``; both are pinned
  below with the right values.
"""

from __future__ import annotations

import math
import random
import warnings
from typing import Any

import polars as pl
import pytest

import ireval_df as ie
from ireval_df.errors import IrevalWarning

pyndeval = pytest.importorskip("pyndeval")

#: ours -> ndeval's name, for the grid (ndeval's cutoffs are at most 20)
NDEVAL = {
    "alpha_nDCG": "alpha-nDCG",
    "alpha_DCG": "alpha-DCG",
    "ERR_IA": "ERR-IA",
    "nERR_IA": "nERR-IA",
    "P_IA": "P-IA",
    "StRecall": "strec",
    "NRBP": "NRBP",
    "nNRBP": "nNRBP",
    "AP_IA": "MAP-IA",
}
#: measures without a cutoff, and those with ndeval's beta
NO_CUTOFF = {"NRBP", "nNRBP", "AP_IA"}
WITH_BETA = {"NRBP", "nNRBP"}
CUTOFFS = (1, 2, 3, 5, 10, 20)
#: ndeval leaves rank 1 out of these two's normalisation (pinned apart)
UNNORMALISED_AT_ONE = {"alpha_DCG", "ERR_IA"}


def generate(seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Diversity qrels (query_id, intent, doc_id, relevance) and a run."""
    rnd = random.Random(seed)
    qrels: list[tuple[str, str, str, int]] = []
    run: list[tuple[str, str, float]] = []
    for q in range(rnd.randint(1, 8)):
        qid = f"q{q}"
        docs = [f"d{i:02d}" for i in range(rnd.randint(1, 14))]
        intents = [str(i) for i in range(rnd.randint(1, 5))]
        density = rnd.choice([0.0, 0.2, 0.5, 0.9])
        for doc in docs:
            judged = [i for i in intents if rnd.random() < 0.7] or [intents[0]]
            for intent in judged:
                relevant = rnd.random() < density
                grade = rnd.choice([1, 2, 3]) if relevant else rnd.choice([0, 0, -1])
                qrels.append((qid, intent, doc, grade))
        if rnd.random() < 0.15:  # a query the run does not answer
            continue
        pool = docs + [f"u{i}" for i in range(rnd.randint(0, 8))]
        chosen = rnd.sample(pool, rnd.randint(1, len(pool)))
        levels = rnd.choice([2, 4, 1000])  # few levels: many ties
        run += [(qid, doc, float(rnd.randrange(levels))) for doc in chosen]
    return (
        pl.DataFrame(
            qrels, schema=["query_id", "intent", "doc_id", "relevance"], orient="row"
        ),
        pl.DataFrame(run, schema=["query_id", "doc_id", "score"], orient="row"),
    )


def as_ranked_scores(run: pl.DataFrame) -> list[tuple[str, str, float]]:
    """The run as (query, doc, -rank) in our order: distinct scores for pyndeval."""
    ranked = run.sort(
        ["query_id", "score", "doc_id"], descending=[False, True, True]
    ).with_columns(pl.int_range(1, pl.len() + 1).over("query_id").alias("rank"))
    return [(q, d, -float(r)) for q, d, _, r in ranked.rows()]


def ndeval_values(
    qrels: pl.DataFrame,
    run: list[tuple[str, str, float]],
    names: list[str],
    **options: Any,
) -> dict[str, dict[str, float]]:
    evaluator = pyndeval.RelevanceEvaluator(
        [(q, i, d, r) for q, i, d, r in qrels.rows()], names, **options
    )
    return evaluator.evaluate(run)


def ours(
    qrels: pl.DataFrame, run: pl.DataFrame, metrics: list[str]
) -> dict[tuple[str, str], float]:
    with warnings.catch_warnings():  # unanswered queries are part of the cases
        warnings.simplefilter("ignore", IrevalWarning)
        frame = ie.evaluate(run, qrels, metrics, warn_unjudged=None, missing="zero")
    return {(q, m): v for _, q, m, v in frame.rows()}


def grid(rel: int, alpha: float, beta: float) -> list[tuple[str, str]]:
    """(our spec, ndeval name) for one ndeval invocation."""
    params: list[str] = []
    if rel != 1:
        params.append(f"rel={rel}")
    out = []
    for name, theirs in NDEVAL.items():
        own = list(params)
        if (
            name in ("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", *WITH_BETA)
            and alpha != 0.5
        ):
            own.append(f"alpha={alpha}")
        if name in WITH_BETA and beta != 0.5:
            own.append(f"beta={beta}")
        spec = name + (f"({','.join(sorted(own))})" if own else "")
        if name in NO_CUTOFF:
            out.append((spec, theirs))
            continue
        for k in CUTOFFS:
            if k == 1 and name in UNNORMALISED_AT_ONE:
                continue
            out.append((f"{spec}@{k}", f"{theirs}@{k}"))
    return out


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


SETTINGS = [(1, 0.5, 0.5), (2, 0.5, 0.5), (1, 0.3, 0.8), (1, 1.0, 0.5)]


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize(("rel", "alpha", "beta"), SETTINGS)
def test_matches_ndeval_per_query(
    seed: int, rel: int, alpha: float, beta: float
) -> None:
    qrels, run = generate(seed)
    pairs = grid(rel, alpha, beta)
    got = ours(qrels, run, [spec for spec, _ in pairs])
    want = ndeval_values(
        qrels,
        as_ranked_scores(run),
        [name for _, name in pairs],
        relevance_level=rel,
        alpha=alpha,
        beta=beta,
    )
    assert want, "no query in common"
    m = n_intents(qrels, rel)
    for query, values in want.items():
        for spec, name in pairs:
            mine = got[(query, str(ie.parse_metric(spec)))]
            if name == "nNRBP" and m.get(query, 0) == 0:
                # ndeval divides the run's NRBP, 0, by the ideal's, 0: NaN
                assert math.isnan(values[name]), (seed, query)
                assert mine == 0.0, (seed, query)
                continue
            assert close(mine, values[name]), (seed, query, spec, mine, values[name])


def n_intents(qrels: pl.DataFrame, rel: int) -> dict[str, int]:
    """M per query: its intents with a document graded at least ``rel``."""
    relevant = qrels.filter(pl.col("relevance") >= rel)
    return dict(relevant.group_by("query_id").agg(pl.col("intent").n_unique()).rows())


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize(
    ("rel", "alpha", "beta"), [(1, 0.5, 1.0), (1, 0.0, 0.9), (2, 0.7, 0.0)]
)
def test_nnrbp_at_extreme_patience_matches_ndeval(
    seed: int, rel: int, alpha: float, beta: float
) -> None:
    # beta = 1: every rank counts fully (the whole ideal ranking matters);
    # beta = 0: only rank 1; alpha = 0: no redundancy penalty
    qrels, run = generate(seed)
    params = f"alpha={alpha},beta={beta},rel={rel}"
    specs = [f"nNRBP({params})", f"NRBP({params})"]
    got = ours(qrels, run, specs)
    want = ndeval_values(
        qrels,
        as_ranked_scores(run),
        ["nNRBP", "NRBP"],
        relevance_level=rel,
        alpha=alpha,
        beta=beta,
    )
    m = n_intents(qrels, rel)
    for query, values in want.items():
        for spec, name in zip(specs, ["nNRBP", "NRBP"], strict=True):
            mine = got[(query, str(ie.parse_metric(spec)))]
            if name == "nNRBP" and m.get(query, 0) == 0:
                assert math.isnan(values[name])
                assert mine == 0.0
                continue
            assert close(mine, values[name]), (seed, query, spec, mine, values[name])


def test_nnrbp_without_alpha_and_beta_is_the_share_of_hits_found() -> None:
    # alpha = 0, beta = 1: ndeval's factor 1 - (1 - alpha) beta is 0, so its
    # NRBP is 0 and its nNRBP 0/0. Ours is the ratio of the sums: the run's
    # (document, intent) hits over the qrels'. a: x, y; b: x; c: y (grade 0
    # for x). The run finds a and c: 3 of the 4 hits (c's x is not one).
    qrels = pl.DataFrame(
        {
            "query_id": "q",
            "intent": ["x", "y", "x", "y", "x"],
            "doc_id": ["a", "a", "b", "c", "c"],
            "relevance": [1, 1, 1, 1, 0],
        }
    )
    run = pl.DataFrame(
        {"query_id": "q", "doc_id": ["u", "c", "a"], "score": [3.0, 2.0, 1.0]}
    )
    spec = str(ie.parse_metric("nNRBP(alpha=0,beta=1)"))
    assert ours(qrels, run, [spec])[("q", spec)] == 0.75
    want = ndeval_values(
        qrels, as_ranked_scores(run), ["nNRBP", "NRBP"], alpha=0.0, beta=1.0
    )
    assert want["q"]["NRBP"] == 0.0
    assert math.isnan(want["q"]["nNRBP"])


def test_a_ranking_can_beat_the_greedy_ideal() -> None:
    # a covers intents 0 and 2, b 1 and 3, c 2 and 3. The greedy ideal takes
    # c first (all three gain 2; ties to the highest doc_id), then b and a
    # (one new intent each). The run a, b, c gains 2, 2, then only repeats:
    # it beats the ideal, above 1 in ndeval as here. alpha = 1, beta = 0.9:
    # (2 + 2 * 0.9) / (2 + 0.9 + 0.81) = 1.0243; alpha_nDCG@3 alike.
    qrels = pl.DataFrame(
        {
            "query_id": "q",
            "intent": ["0", "2", "1", "3", "2", "3"],
            "doc_id": ["a", "a", "b", "b", "c", "c"],
            "relevance": 1,
        }
    )
    run = pl.DataFrame(
        {"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]}
    )
    spec = str(ie.parse_metric("nNRBP(alpha=1,beta=0.9)"))
    got = ours(qrels, run, [spec, "alpha_nDCG@3"])
    assert got[("q", spec)] == pytest.approx(3.8 / 3.71, rel=1e-12)
    want = ndeval_values(qrels, as_ranked_scores(run), ["nNRBP"], alpha=1.0, beta=0.9)
    assert close(got[("q", spec)], want["q"]["nNRBP"])
    nd = ndeval_values(qrels, as_ranked_scores(run), ["alpha-nDCG@3"])
    assert got[("q", "alpha_nDCG@3")] > 1
    assert close(got[("q", "alpha_nDCG@3")], nd["q"]["alpha-nDCG@3"])


def test_ndeval_leaves_rank_one_unnormalised() -> None:
    # one query, intents x, y, z relevant to a, a, b: M = 3; the run puts a
    # first, G(1) = 2. The definition: alpha-DCG@1 = ERR-IA@1 = G(1) / M = 2/3
    # (the ideal ideal of rank 1 is M); ndeval reports G(1) = 2 for both.
    qrels = pl.DataFrame(
        {
            "query_id": "q",
            "intent": ["x", "y", "z"],
            "doc_id": ["a", "a", "b"],
            "relevance": 1,
        }
    )
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [2.0, 1.0]})
    got = ours(qrels, run, ["alpha_DCG@1", "ERR_IA@1"])
    assert got[("q", "alpha_DCG@1")] == pytest.approx(2 / 3)
    assert got[("q", "ERR_IA@1")] == pytest.approx(2 / 3)
    want = ndeval_values(qrels, as_ranked_scores(run), ["alpha-DCG@1", "ERR-IA@1"])
    assert want["q"] == {"alpha-DCG@1": 2.0, "ERR-IA@1": 2.0}  # ndeval's value


@pytest.mark.parametrize("seed", range(10))
def test_rank_one_differs_from_ndeval_by_m_only(seed: int) -> None:
    # everywhere else the two agree: ndeval's rank-1 value is ours times M
    qrels, run = generate(seed)
    got = ours(qrels, run, ["alpha_DCG@1", "ERR_IA@1"])
    want = ndeval_values(qrels, as_ranked_scores(run), ["alpha-DCG@1", "ERR-IA@1"])
    relevant = qrels.filter(pl.col("relevance") >= 1)
    m = dict(relevant.group_by("query_id").agg(pl.col("intent").n_unique()).rows())
    for query, values in want.items():
        for spec, name in (("alpha_DCG@1", "alpha-DCG@1"), ("ERR_IA@1", "ERR-IA@1")):
            assert close(got[(query, spec)] * m.get(query, 0), values[name])


def test_pyndeval_breaks_ties_by_ascending_doc_id() -> None:
    # a and b tie; b is relevant to both intents, a to one. Ours (and
    # ndeval -traditional, and trec_eval) rank b first; pyndeval ranks a first.
    qrels = pl.DataFrame(
        {
            "query_id": "q",
            "intent": ["x", "x", "y"],
            "doc_id": ["a", "b", "b"],
            "relevance": 1,
        }
    )
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 1.0]})
    got = ours(qrels, run, ["alpha_nDCG@1"])
    assert got[("q", "alpha_nDCG@1")] == 1.0  # b first: the ideal's first pick
    tied = ndeval_values(qrels, [("q", "a", 1.0), ("q", "b", 1.0)], ["alpha-nDCG@1"])
    assert tied["q"]["alpha-nDCG@1"] == 0.5  # a first
    assert ndeval_values(qrels, as_ranked_scores(run), ["alpha-nDCG@1"])["q"] == {
        "alpha-nDCG@1": 1.0
    }


# --- through ir_measures -----------------------------------------------------

irm = pytest.importorskip("ir_measures")


def ir_measures_values(
    qrels: pl.DataFrame, run: pl.DataFrame, specs: list[str]
) -> dict[tuple[str, str], float]:
    """One ir_measures call; its qrels carry the intent as ``iteration``."""
    frame = qrels.rename({"intent": "iteration"}).to_pandas()
    scored = pl.DataFrame(
        as_ranked_scores(run), schema=["query_id", "doc_id", "score"], orient="row"
    )
    measures = [irm.parse_measure(s) for s in specs]
    by_name = {str(m): s for m, s in zip(measures, specs, strict=True)}
    return {
        (r.query_id, by_name[str(r.measure)]): r.value
        for r in irm.iter_calc(measures, frame, scored.to_pandas())
    }


@pytest.mark.parametrize("seed", range(12))
def test_matches_ir_measures_names_and_values(seed: int) -> None:
    # our canonical names are ir_measures' (one ndeval invocation per call)
    specs = [
        "alpha_nDCG@10",
        "alpha_DCG@5",
        "ERR_IA@20",
        "nERR_IA@5",
        "NRBP",
        "nNRBP",
        "AP_IA",
        "P_IA@10",
        "StRecall@5",
    ]
    qrels, run = generate(seed)
    got = ours(qrels, run, specs)
    want = ir_measures_values(qrels, run, specs)
    answered = set(run["query_id"])
    m = n_intents(qrels, 1)
    for (query, spec), value in want.items():
        if query not in answered:
            continue
        if spec == "nNRBP" and m.get(query, 0) == 0:  # ndeval's 0/0, as above
            assert math.isnan(value)
            assert got[(query, spec)] == 0.0
            continue
        assert close(got[(query, spec)], value), (seed, query, spec)


def test_ir_measures_scores_a_second_ndeval_invocation_zero() -> None:
    # ir_measures' pyndeval provider turns the run into one iterator and
    # hands it to each ndeval invocation in turn (one per rel/alpha/beta):
    # the second finds it spent (0.3.1 to 0.4.3 alike). The right alpha_nDCG@2 here is 0.8406...
    # (docs/metrics.md: alpha_nDCG's example).
    qrels = pl.DataFrame(
        {
            "query_id": "q",
            "intent": ["x", "y", "x"],
            "doc_id": ["a", "a", "b"],
            "relevance": 1,
        }
    )
    run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    right = ours(qrels, run, ["alpha_nDCG@2", "alpha_nDCG(alpha=0.3)@2"])
    alone = ir_measures_values(qrels, run, ["alpha_nDCG@2"])
    both = ir_measures_values(qrels, run, ["alpha_nDCG(alpha=0.3)@2", "alpha_nDCG@2"])
    assert close(alone[("q", "alpha_nDCG@2")], right[("q", "alpha_nDCG@2")])
    assert right[("q", "alpha_nDCG@2")] == pytest.approx(0.840606, abs=1e-6)
    # whichever invocation runs second finds the run spent
    specs = ["alpha_nDCG@2", "alpha_nDCG(alpha=0.3)@2"]
    spent = [s for s in specs if both.get(("q", s), 0.0) == 0.0]  # 0 or absent
    assert len(spent) == 1
    (fine,) = set(specs) - set(spent)
    assert close(both[("q", fine)], right[("q", fine)])
    assert right[("q", spent[0])] > 0.8


def test_ir_measures_fails_on_judged_only() -> None:
    # the provider indexes the run iterator as a dict: a TypeError. Ours drops
    # the unjudged documents before ranking, as every judged_only measure.
    qrels = pl.DataFrame(
        {"query_id": "q", "intent": ["x", "y"], "doc_id": ["a", "b"], "relevance": 1}
    )
    run = pl.DataFrame(
        {"query_id": "q", "doc_id": ["u", "a", "b"], "score": [3.0, 2.0, 1.0]}
    )
    with pytest.raises(TypeError):
        ir_measures_values(qrels, run, ["alpha_nDCG(judged_only=True)@1"])
    got = ours(qrels, run, ["StRecall(judged_only=true)@1", "StRecall@1"])
    assert got[("q", "StRecall(judged_only=true)@1")] == 0.5
    assert got[("q", "StRecall@1")] == 0.0
