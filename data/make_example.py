"""Generate the bundled example evaluation data of ireval_df.

Run ``python data/make_example.py``: it rewrites every file in ``data/``
(next to this script) byte-identically on every run. Only numpy and polars
are needed (and ``ireval_df`` for the interleaving log). ``data/README.md``
describes the files and their edge cases.

The data is synthetic. A query has a class, a language and a source; a
document has a latent grade; each system scores documents with a skill that
depends on the query's attributes, so that slicing results by class,
language or source shows real differences:

* ``bm25``   lexical; strong on navigational queries, language-neutral,
             weak on long spoken (voice) queries. Scores are BM25-like
             positive numbers on a 1/64 grid, so ties are common.
* ``dense``  embedding cosine (float32); strong on informational queries,
             English-centric (weaker on de, weaker still on fr).
* ``hybrid`` reciprocal-rank fusion of the two (k = 60, tied scores share a
             rank), best on average.

Every score is exactly representable as float32 (the reference tests store
scores as float32) and is written in its shortest round-trip form.

Then, from a random stream of their own (so that everything above stays
byte-identical), the material of document slices and failure analysis:

* ``issued_at`` of every query, in April to June 2024;
* ``docs.*``: the source type (web, news, forum, docs), language and
  publication time of every document a run retrieves or the qrels judge,
  drawn given how it was judged and how high the runs rank it: news pages
  crowd the top 10 without being relevant, dense pulls English documents
  into German and French queries, and time-sensitive queries want fresh
  documents while older ones rank above them;
* ``rerank``: a second stage that re-scores bm25's top 50 (better than
  bm25, but it over-scores news pages) and keeps bm25's order below;
* ``qrels_intents.tsv``: the qrels with an ``intent`` column, two intents
  for queries with an ambiguous word, some of which rerank serves wrongly.

Last, from random streams of its own again, a simulated search log in
``log/`` (``searches``, ``results``, ``events`` and ``units`` as Parquet):
an A/B test, ``ranker-2024``, whose control serves ``bm25`` and whose
treatment serves ``hybrid`` to 900 users, hashed into the arms. Users type
the bundled queries (now and then misspelt, which finds nothing), read
pages of 10 results top-down in a cascade whose click and satisfaction
chances come from the qrels' grades, dwell, reformulate, go to page 2, add
to the cart and buy; ``units`` holds each user's behaviour in the two weeks
before the experiment, under ``bm25``, for CUPED.

And a second log in ``log_interleaving/``: an interleaving experiment,
``interleaving-2024``, of the same two runs for 600 other users, each list
``ireval_df.online.interleave`` (team draft, k = 10) of ``bm25`` and
``hybrid`` (so this part needs ``ireval_df``), clicked by the same cascade;
a quarter of its searches show the top 3 in random order
(``randomization = "randtop3"``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

if TYPE_CHECKING:
    from collections.abc import Sequence

HERE = Path(__file__).parent
SEED = 20240611

N_QUERIES = 150  # query ids "1".."150" have qrels
RUN_ONLY = ("151", "152")  # in the runs and the queries table, not in the qrels
MISSING_FROM_DENSE = "42"  # in the qrels, bm25 and hybrid, absent from dense
NO_RELEVANT = ("7", "23", "58", "99", "104", "137")  # judged, every grade 0
ALL_RELEVANT_UNRETRIEVED = ("36",)  # no system retrieves any relevant doc
UNRETRIEVED_RELEVANT = ("19", "71", "90", "118", "133")  # 1-2 relevant hidden
NEGATIVE_GRADES = ("8", "15", "31", "42", "77", "113", "129", "146")  # some -1
BM25_TIES = ("3", "10", "17", "64", "100", "120")  # tie block with a relevant doc
# Case-variant duplicates: the mirror "d000123" of "D000123" has the same
# content, hence the same score in every system, and only byte order
# ("d" > "D", so the lowercase id ranks first) breaks the tie.
CASE_PAIRS_UPPER_RELEVANT = ("5", "12", "88", "101")  # D relevant, d judged 0
CASE_PAIRS_LOWER_RELEVANT = ("140",)  # d relevant, D judged 0
CASE_PAIRS_UNJUDGED_MIRROR = ("60",)  # D relevant, d unjudged

DEPTH = 100
COLLECTION_SIZE = 100_000
POOL_SHARED, POOL_OWN = 120, 130  # unjudged candidates per query and system
RRF_K = 60
BM25_GRID = 64  # bm25 scores are multiples of 1/64

CLASSES = ("navigational", "informational", "transactional")
CLASS_P = (0.25, 0.55, 0.20)
LANGUAGES = ("en", "de", "fr")
LANGUAGE_P = (0.6, 0.25, 0.15)
SOURCES = ("web", "app", "voice")
SOURCE_P = (0.55, 0.30, 0.15)

# Space-separated word lists; the non-ASCII words exercise UTF-8 handling.
VOCAB = {
    "en": {
        "brand": (
            "github youtube wikipedia netflix amazon reddit gmail spotify ikea bbc"
        ),
        "site": "login homepage news account app support",
        "question": "how why what does when is",
        "topic": (
            "climate vaccine python history recipe jupiter tax sleep"
            " coffee bridge ocean election"
        ),
        "filler": "work effects causes explained of the best way to change",
        "action": "buy download book order rent compare cheap",
        "product": "laptop flights hotel shoes tickets pizza phone bike insurance",
        "modifier": "online near me 2024 deal sale",
        "voice": "hey please show me can you",
    },
    "de": {
        "brand": "spiegel bahn zalando otto tagesschau sparkasse web.de dm",
        "site": "login fahrplan anmelden startseite konto",
        "question": "wie warum was wann ist",
        "topic": (
            "klimawandel rente steuer schlaf kaffee brücke wetter impfung"
            " küche grundsteuer"
        ),
        "filler": "funktioniert geschichte der die das von ursachen erklärt",
        "action": "kaufen bestellen buchen günstig mieten vergleichen",
        "product": "fahrrad laptop flug hotel schuhe tickets versicherung",
        "modifier": "online in der nähe angebot",
        "voice": "hallo bitte zeig mir kannst du",
    },
    "fr": {
        "brand": "leboncoin sncf ameli orange lemonde fnac doctolib",
        "site": "connexion accueil compte horaires",
        "question": "comment pourquoi qu'est-ce quand quel",
        "topic": "météo impôts retraite sommeil café été vaccin réchauffement élection",
        "filler": "que la le de fonctionne histoire causes expliqué",
        "action": "acheter réserver commander louer comparer",
        "product": "vélo ordinateur billets hôtel chaussures assurance train",
        "modifier": "pas cher en ligne promo",
        "voice": "dis moi montre s'il te plaît",
    },
}

# How relevant a document looks to a system, by grade. Judged non-relevant
# documents were pooled, so they look somewhat relevant; "-1" documents were
# pooled but never judged.
APPEARANCE = {3: 2.4, 2: 1.8, 1: 1.2, 0: 0.6, -1: 0.9}
UNJUDGED_APPEARANCE = 0.0

# System skill = base + effect of the query's class, language and source
# (+ a query difficulty shared by both systems).
SKILL_BASE = {"bm25": 1.2, "dense": 1.2}
SKILL_EFFECT = {
    "bm25": {  # exact matching: navigational yes, spoken paraphrase no
        "navigational": 1.4,
        "informational": -0.3,
        "transactional": 0.2,
        "en": 0.0,
        "de": 0.05,
        "fr": 0.0,
        "web": 0.1,
        "app": 0.0,
        "voice": -0.6,
    },
    "dense": {  # semantic matching, trained mostly on English
        "navigational": -0.1,
        "informational": 0.7,
        "transactional": 0.2,
        "en": 0.35,
        "de": -0.45,
        "fr": -0.8,
        "web": 0.0,
        "app": 0.0,
        "voice": 0.35,
    },
}


def choose(rng: np.random.Generator, options: Sequence[str], p: Sequence[float]) -> str:
    return options[int(rng.choice(len(options), p=np.asarray(p)))]


def pick(rng: np.random.Generator, vocab: str, n: int = 1) -> list[str]:
    words = vocab.split()
    idx = rng.choice(len(words), size=n, replace=n > len(words))
    return [words[int(i)] for i in idx]


def make_text(rng: np.random.Generator, cls: str, lang: str, source: str) -> str:
    v = VOCAB[lang]
    if cls == "navigational":
        words = pick(rng, v["brand"]) + pick(rng, v["site"], int(rng.integers(0, 2)))
    elif cls == "informational":
        words = (
            pick(rng, v["question"])
            + pick(rng, v["topic"])
            + pick(rng, v["filler"], int(rng.integers(1, 5)))
        )
    else:
        words = (
            pick(rng, v["action"])
            + pick(rng, v["product"])
            + pick(rng, v["modifier"], int(rng.integers(0, 3)))
        )
    if source == "voice":
        words = pick(rng, v["voice"], int(rng.integers(1, 3))) + words
    return " ".join(words)


def make_queries(rng: np.random.Generator) -> pl.DataFrame:
    rows = []
    for i in range(1, N_QUERIES + len(RUN_ONLY) + 1):
        cls = choose(rng, CLASSES, CLASS_P)
        lang = choose(rng, LANGUAGES, LANGUAGE_P)
        source = choose(rng, SOURCES, SOURCE_P)
        text = make_text(rng, cls, lang, source)
        rows.append((str(i), text, cls, lang, source, len(text.split())))
    return pl.DataFrame(
        rows,
        schema={
            "query_id": pl.String,
            "text": pl.String,
            "query_class": pl.String,
            "language": pl.String,
            "source": pl.String,
            "length": pl.Int32,
        },
        orient="row",
    )


def make_grades(rng: np.random.Generator, qid: str, cls: str) -> np.ndarray:
    """Grades of the judged documents of one query (order = document order)."""
    if cls == "navigational":
        n = int(rng.integers(10, 21))
        grades = rng.choice([0, 1, 2], size=n, p=[0.80, 0.14, 0.06])
        grades[0] = 3  # the page the user navigates to
    elif cls == "informational":
        n = int(rng.integers(20, 41))
        grades = rng.choice([0, 1, 2, 3], size=n, p=[0.55, 0.28, 0.13, 0.04])
    else:
        n = int(rng.integers(12, 31))
        grades = rng.choice([0, 1, 2, 3], size=n, p=[0.60, 0.25, 0.11, 0.04])
    if qid in NO_RELEVANT:
        grades[:] = 0
    elif (grades <= 0).all():
        grades[int(rng.integers(n))] = 1
    if qid in NEGATIVE_GRADES:
        zeros = np.flatnonzero(grades == 0)
        k = min(len(zeros), int(rng.integers(1, 4)))
        grades[rng.choice(zeros, size=k, replace=False)] = -1
    return grades.astype(np.int32)


def doc_ids(numbers: np.ndarray, prefix: str = "D") -> np.ndarray:
    return np.array([f"{prefix}{n:06d}" for n in numbers], dtype=object)


def order(ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Positions sorted by score descending, then doc id descending (byte order)."""
    keys = sorted(
        range(len(ids)), key=lambda i: (scores[i], str(ids[i]).encode()), reverse=True
    )
    return np.asarray(keys, dtype=np.int64)


def to_bm25(signal: np.ndarray, length: int) -> np.ndarray:
    raw = 3.0 + 2.2 * length + 2.5 * signal
    return np.maximum(np.round(raw * BM25_GRID), 1) / BM25_GRID


def to_dense(signal: np.ndarray) -> np.ndarray:
    raw = 0.5 + 0.49 * np.tanh(0.16 * (signal - 0.2))
    return raw.astype(np.float32).astype(np.float64)


def make_query_data(
    rng: np.random.Generator, q: dict[str, Any]
) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """Qrels and the three rankings (before the depth cut) of one query."""
    qid, cls, lang, source = (
        str(q["query_id"]),
        str(q["query_class"]),
        str(q["language"]),
        str(q["source"]),
    )
    length = int(q["length"])
    in_qrels = qid not in RUN_ONLY

    grades = make_grades(rng, qid, cls) if in_qrels else np.zeros(0, np.int32)
    n_judged = len(grades)
    numbers = rng.choice(
        COLLECTION_SIZE, size=n_judged + POOL_SHARED + 2 * POOL_OWN, replace=False
    )
    judged = doc_ids(numbers[:n_judged])
    pools = doc_ids(numbers[n_judged:])

    # Judged documents and how relevant they look.
    appearance = np.array([APPEARANCE[int(g)] for g in grades])
    reachable = np.ones(n_judged, dtype=bool)
    relevant = np.flatnonzero(grades > 0)
    if qid in ALL_RELEVANT_UNRETRIEVED:
        reachable[relevant] = False
    elif qid in UNRETRIEVED_RELEVANT:
        k = min(len(relevant) - 1, int(rng.integers(1, 3)))
        reachable[rng.choice(relevant, size=k, replace=False)] = False

    qrels_ids = list(judged)
    qrels_grades = list(grades)
    mirror_of: dict[str, str] = {}  # mirror id -> original id (same content)
    case_query = (
        qid in CASE_PAIRS_UPPER_RELEVANT
        or qid in CASE_PAIRS_LOWER_RELEVANT
        or qid in CASE_PAIRS_UNJUDGED_MIRROR
    )
    if case_query:
        # the best-looking relevant document gets a lowercase mirror
        target = int(relevant[np.argmax(appearance[relevant])])
        upper = str(judged[target])
        lower = "d" + upper[1:]
        mirror_of[lower] = upper
        if qid in CASE_PAIRS_UPPER_RELEVANT:
            qrels_ids.append(lower)
            qrels_grades.append(0)
        elif qid in CASE_PAIRS_LOWER_RELEVANT:
            qrels_ids.append(lower)
            qrels_grades.append(grades[target])
            qrels_grades[target] = 0
    qrels = pl.DataFrame(
        {
            "query_id": [qid] * len(qrels_ids),
            "doc_id": qrels_ids,
            "relevance": qrels_grades,
        },
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32},
    ).sort("doc_id")

    # Each system sees the reachable judged docs, a shared unjudged pool and
    # its own unjudged pool; scores share a query-difficulty and a per-document
    # term, so the systems are correlated as real ones are.
    difficulty = rng.normal(0.0, 0.45)
    shared_pool = pools[:POOL_SHARED]
    own_pools = {
        "bm25": pools[POOL_SHARED : POOL_SHARED + POOL_OWN],
        "dense": pools[POOL_SHARED + POOL_OWN :],
    }
    doc_effect_judged = rng.normal(0.0, 0.5, size=n_judged)
    doc_effect_shared = rng.normal(0.0, 0.5, size=POOL_SHARED)
    rankings: dict[str, pl.DataFrame] = {}
    ranks: dict[str, dict[str, int]] = {}
    for system, effect in SKILL_EFFECT.items():
        skill = SKILL_BASE[system] + effect[cls] + effect[lang] + effect[source]
        skill = max(skill + difficulty, 0.1)
        ids = np.concatenate([judged[reachable], shared_pool, own_pools[system]])
        look = np.concatenate(
            [
                appearance[reachable],
                np.full(POOL_SHARED + POOL_OWN, UNJUDGED_APPEARANCE),
            ]
        )
        doc_effect = np.concatenate(
            [
                doc_effect_judged[reachable],
                doc_effect_shared,
                rng.normal(0.0, 0.5, size=POOL_OWN),
            ]
        )
        signal = skill * look + doc_effect + rng.normal(0.0, 1.0, size=len(ids))
        score = to_bm25(signal, length) if system == "bm25" else to_dense(signal)
        for lower, upper in mirror_of.items():  # the mirror has the same content
            ids = np.append(ids, lower)
            score = np.append(score, score[int(np.flatnonzero(ids == upper)[0])])
        if system == "bm25" and qid in BM25_TIES:
            score = make_tie_block(rng, ids, score, qrels)
        pos = order(ids, score)
        ids, score = ids[pos], score[pos]
        # competition ranks ("min"): tied scores share a rank, for the fusion
        first: dict[float, int] = {}
        for r, s in enumerate(score, start=1):
            first.setdefault(float(s), r)
        ranks[system] = {
            str(d): first[float(s)] for d, s in zip(ids, score, strict=True)
        }
        rankings[system] = pl.DataFrame({"doc_id": ids.astype(str), "score": score})

    # hybrid: reciprocal-rank fusion over the union of both full rankings
    if qid == MISSING_FROM_DENSE:
        ranks_dense: dict[str, int] = {}
    else:
        ranks_dense = ranks["dense"]
    union = sorted(set(ranks["bm25"]) | set(ranks_dense))
    fused = np.array(
        [
            sum(1.0 / (RRF_K + r[d]) for r in (ranks["bm25"], ranks_dense) if d in r)
            for d in union
        ]
    )
    fused = fused.astype(np.float32).astype(np.float64)
    ids = np.array(union, dtype=object)
    pos = order(ids, fused)
    rankings["hybrid"] = pl.DataFrame(
        {"doc_id": ids[pos].astype(str), "score": fused[pos]}
    )
    if qid == MISSING_FROM_DENSE:
        del rankings["dense"]
    return qrels, rankings


def make_tie_block(
    rng: np.random.Generator, ids: np.ndarray, score: np.ndarray, qrels: pl.DataFrame
) -> np.ndarray:
    """Give the top-ranked relevant doc and 2-4 neighbours one shared score."""
    rel = dict(zip(qrels["doc_id"], qrels["relevance"], strict=True))
    pos = order(ids, score)
    top_rel = next(i for i, p in enumerate(pos) if rel.get(str(ids[p]), 0) > 0)
    start = max(0, top_rel - int(rng.integers(1, 3)))
    block = pos[start : start + int(rng.integers(3, 6))]
    out = score.copy()
    out[block] = score[pos[top_rel]]
    return out


# ---------------------------------------------------------------------------
# Documents, a re-ranking stage and intents, for document slices and the
# failure kinds of ``failures()``. They are made after the files above, from
# a random stream of their own, so those files stay byte-identical. A
# document's attributes are drawn given how it was judged and how high the
# runs above rank it: this is what gives the slices their story.

PIPELINE_SEED = 20240612
RERANK = "rerank"
RERANK_DEPTH = 50  # rerank re-scores bm25's top 50; the rest keep bm25's order
RERANK_SKILL = 2.4
NEWS_BOOST = 1.3  # rerank over-scores news: its news and web scores differ in scale
TOP = 10  # "in the top 10" of a run, for the document attributes

ISSUED_FROM = dt.datetime(2024, 4, 1)
ISSUED_SPAN_S = 91 * 86_400  # queries are issued from April to June 2024
# Words of time-sensitive queries: their relevant documents are fresh, the
# non-relevant documents judged or ranked high for them are old.
FRESH_WORDS = frozenset(
    "election élection wetter météo 2024 deal sale angebot promo".split()
)
FUTURE_LEAK = "24"  # three retrieved documents published after the query
N_LEAKED = 3

DOC_SOURCES = ("web", "news", "forum", "docs")
# The chance of each source type (in DOC_SOURCES order) by a document's role
ROLE_SOURCE_P = {
    "relevant": (0.56, 0.06, 0.13, 0.25),
    "relevant_fresh": (0.40, 0.45, 0.05, 0.10),  # of a time-sensitive query
    "top": (0.35, 0.45, 0.12, 0.08),  # not relevant, in a run's top 10
    "judged": (0.45, 0.22, 0.23, 0.10),  # judged not relevant, ranked lower
    "other": (0.50, 0.18, 0.22, 0.10),  # never judged, ranked lower
}
ROLE_PRIORITY = {"relevant": 4, "relevant_fresh": 4, "top": 3, "judged": 2, "other": 1}
# Age in days: news is hours to weeks old, the rest log-uniform in a range
NEWS_MEDIAN_DAYS, NEWS_SIGMA = 2.0, 1.2
AGE_RANGE_DAYS = {"web": (7, 2500), "docs": (60, 3000), "forum": (3, 3500)}
EVERGREEN_RANGE_DAYS = (180, 3000)  # relevant, not news: established pages
FRESH_MEDIAN_DAYS, FRESH_SIGMA = 1.5, 1.0  # relevant, time-sensitive
STALE_RANGE_DAYS = (45, 2000)  # not relevant, time-sensitive
# Document language: a relevant document is in the query's language with
# this chance; dense, trained mostly on English, fills the top 10 of German
# and French queries with English documents that are not relevant.
RELEVANT_SAME_LANGUAGE = 0.92
OTHER_SAME_LANGUAGE = 0.75
DENSE_ENGLISH = 0.6

# Ambiguous words: the query's intents (the first has most relevant documents)
AMBIGUOUS = {
    "python": ("programming", "snake"),
    "jupiter": ("planet", "jupyter"),
    "amazon": ("shop", "river"),
    "orange": ("telecom", "fruit"),
    "bridge": ("structure", "card-game"),
    "brücke": ("bauwerk", "zahnbrücke"),
    "café": ("boisson", "lieu"),
}
SECOND_INTENT_P = 0.3  # a relevant document of an ambiguous query is about the other
# In these, every relevant document rerank puts in its top 10 is about the
# second intent, so rerank fails the query's primary intent.
INTENT_MISSED = ("4", "20", "118")
SINGLE_INTENT = "main"


def canonical(doc_id: pl.Expr) -> pl.Expr:
    """The id of the page: a lowercase twin ``d000123`` is ``D000123``."""
    return pl.concat_str(pl.lit("D"), doc_id.str.slice(1))


def make_issued(rng: np.random.Generator, n: int) -> list[dt.datetime]:
    seconds = rng.integers(0, ISSUED_SPAN_S, size=n)
    return [ISSUED_FROM + dt.timedelta(seconds=int(s)) for s in seconds]


def is_fresh(text: pl.Expr) -> pl.Expr:
    words = text.str.split(" ")
    return words.list.eval(pl.element().is_in(list(FRESH_WORDS))).list.any()


def homes(
    queries: pl.DataFrame, qrels: pl.DataFrame, runs: pl.DataFrame
) -> pl.DataFrame:
    """One row per page: the role that decides its attributes, and its anchor time.

    A page's role in a query is ``relevant`` (or ``relevant_fresh``), ``top``,
    ``judged`` or ``other``; its home is the query of its highest-priority role
    (then the lowest query number). Its anchor is the earliest time a query it
    appears in was issued: it was published before that.
    """
    judged = qrels.group_by("query_id", doc=canonical(pl.col("doc_id"))).agg(
        grade=pl.col("relevance").max()
    )
    ranked = runs.group_by("query_id", doc=canonical(pl.col("doc_id"))).agg(
        top=(pl.col("rank") <= TOP).any(),
        dense_top=((pl.col("run_id") == "dense") & (pl.col("rank") <= TOP)).any(),
    )
    seen = (
        judged.join(ranked, on=["query_id", "doc"], how="full", coalesce=True)
        .with_columns(pl.col("top", "dense_top").fill_null(value=False))
        .join(
            queries.select(
                "query_id",
                "language",
                "issued_at",
                fresh=is_fresh(pl.col("text")),
                number=pl.col("query_id").cast(pl.Int64),
            ),
            on="query_id",
        )
    )
    relevant = pl.col("grade") >= 1
    role = (
        pl.when(relevant & pl.col("fresh"))
        .then(pl.lit("relevant_fresh"))
        .when(relevant)
        .then(pl.lit("relevant"))
        .when(pl.col("top"))
        .then(pl.lit("top"))
        .when(pl.col("grade").is_not_null())
        .then(pl.lit("judged"))
        .otherwise(pl.lit("other"))
    )
    seen = seen.with_columns(role=role).with_columns(
        priority=pl.col("role").replace_strict(ROLE_PRIORITY)
    )
    anchors = seen.group_by("doc").agg(anchor=pl.col("issued_at").min())
    return (
        seen.sort(["doc", "priority", "number"], descending=[False, True, False])
        .group_by("doc", maintain_order=True)
        .first()
        .join(anchors, on="doc")
        .sort("doc")
    )


def draw_rows(u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Index of the category each uniform ``u`` falls in, given rows of chances ``p``."""
    return (u[:, None] > np.cumsum(p, axis=1)[:, :-1]).sum(axis=1)


def make_docs(
    rng: np.random.Generator,
    queries: pl.DataFrame,
    qrels: pl.DataFrame,
    runs: pl.DataFrame,
) -> pl.DataFrame:
    """Source type, language and publication time of every document seen."""
    home = homes(queries, qrels, runs)
    n = home.height
    u_source, u_language, u_age = rng.random(n), rng.random(n), rng.random(n)
    z_age = rng.normal(size=n)

    roles = home["role"].to_numpy()
    p_source = np.array([ROLE_SOURCE_P[r] for r in roles])
    sources = np.array(DOC_SOURCES)[draw_rows(u_source, p_source)]

    p_language = np.empty((n, len(LANGUAGES)))
    for i, (lang, role, dense_top) in enumerate(
        home.select("language", "role", "dense_top").iter_rows()
    ):
        relevant = role.startswith("relevant")
        same = RELEVANT_SAME_LANGUAGE if relevant else OTHER_SAME_LANGUAGE
        p = np.full(len(LANGUAGES), (1 - same) / (len(LANGUAGES) - 1))
        p[LANGUAGES.index(lang)] = same
        if dense_top and not relevant and lang != "en":
            p = np.full(len(LANGUAGES), 0.0)
            p[LANGUAGES.index("en")] = DENSE_ENGLISH
            p[LANGUAGES.index(lang)] = 1 - DENSE_ENGLISH
        p_language[i] = p
    languages = np.array(LANGUAGES)[draw_rows(u_language, p_language)]

    def log_uniform(lo: float, hi: float) -> np.ndarray:
        return np.exp(np.log(lo) + u_age * (np.log(hi) - np.log(lo)))

    fresh = home["fresh"].to_numpy()
    age = np.zeros(n)
    for source, (lo, hi) in AGE_RANGE_DAYS.items():
        age = np.where(sources == source, log_uniform(lo, hi), age)
    news = np.exp(np.log(NEWS_MEDIAN_DAYS) + NEWS_SIGMA * z_age)
    age = np.where(sources == "news", news, age)
    evergreen = (roles == "relevant") & (sources != "news")
    age = np.where(evergreen, log_uniform(*EVERGREEN_RANGE_DAYS), age)
    fresh_relevant = np.exp(np.log(FRESH_MEDIAN_DAYS) + FRESH_SIGMA * z_age)
    age = np.where(roles == "relevant_fresh", fresh_relevant, age)
    age = np.where(
        fresh & (roles != "relevant_fresh"), log_uniform(*STALE_RANGE_DAYS), age
    )

    published = [
        a - dt.timedelta(seconds=round(float(d) * 86_400))
        for a, d in zip(home["anchor"], age, strict=True)
    ]
    docs = pl.DataFrame(
        {
            "doc_id": home["doc"],
            "source_type": sources,
            "language": languages,
            "published_at": pl.Series(published, dtype=pl.Datetime("us")),
        }
    )
    docs = leak(rng, docs, queries, qrels, runs)
    # a lowercase twin is the same page as its uppercase id
    twins = (
        pl.concat([qrels.select("doc_id"), runs.select("doc_id")])
        .unique()
        .filter(pl.col("doc_id").str.starts_with("d"))
        .with_columns(doc=canonical(pl.col("doc_id")))
        .join(docs.rename({"doc_id": "doc"}), on="doc")
        .drop("doc")
    )
    return pl.concat([docs, twins]).sort("doc_id")


def leak(
    rng: np.random.Generator,
    docs: pl.DataFrame,
    queries: pl.DataFrame,
    qrels: pl.DataFrame,
    runs: pl.DataFrame,
) -> pl.DataFrame:
    """Publish a few documents of ``FUTURE_LEAK`` after the query.

    They are in its bm25 top 10, and neither judged nor retrieved for
    any other query.
    """
    elsewhere = pl.concat(
        [
            runs.filter(pl.col("query_id") != FUTURE_LEAK).select("doc_id"),
            qrels.select("doc_id"),
        ]
    )["doc_id"].implode()
    candidates = (
        runs.filter(
            (pl.col("run_id") == "bm25")
            & (pl.col("query_id") == FUTURE_LEAK)
            & (pl.col("rank") <= TOP)
            & ~pl.col("doc_id").is_in(elsewhere)
        )
        .sort("rank")["doc_id"]
        .to_list()
    )
    chosen = sorted(rng.choice(candidates, size=N_LEAKED, replace=False).tolist())
    issued = queries.filter(pl.col("query_id") == FUTURE_LEAK)["issued_at"].item()
    later = {
        d: issued + dt.timedelta(seconds=int(s))
        for d, s in zip(chosen, rng.integers(3_600, 3 * 86_400, N_LEAKED), strict=True)
    }
    return docs.with_columns(
        published_at=pl.col("doc_id")
        .replace_strict(later, default=None, return_dtype=pl.Datetime("us"))
        .fill_null(pl.col("published_at"))
    )


def make_rerank(
    rng: np.random.Generator,
    queries: pl.DataFrame,
    qrels: pl.DataFrame,
    runs: pl.DataFrame,
    docs: pl.DataFrame,
) -> pl.DataFrame:
    """Re-score bm25's top ``RERANK_DEPTH``; the rest follow in bm25's order.

    A cross-encoder: more skilled than bm25 everywhere, but it scores news
    pages higher than their relevance (``NEWS_BOOST``). Re-ranked documents
    score in (0, 1); the tail is scored minus its bm25 rank, below them.
    """
    grade = dict(
        zip(
            zip(qrels["query_id"], qrels["doc_id"], strict=True),
            qrels["relevance"],
            strict=True,
        )
    )
    news = set(docs.filter(pl.col("source_type") == "news")["doc_id"])
    bm25 = runs.filter(pl.col("run_id") == "bm25")
    parts = []
    for (qid,) in queries.select("query_id").iter_rows():
        ranking = bm25.filter(pl.col("query_id") == qid).sort("rank")
        head = ranking.head(RERANK_DEPTH)["doc_id"].to_list()
        tail = ranking.slice(RERANK_DEPTH)
        skill = max(RERANK_SKILL + rng.normal(0.0, 0.5), 0.3)
        pages = list(dict.fromkeys("D" + d[1:] for d in head))  # twins: one page
        effect = dict(zip(pages, rng.normal(0.0, 0.5, len(pages)), strict=True))
        noise = dict(zip(pages, rng.normal(0.0, 1.0, len(pages)), strict=True))
        look = {}
        for d in head:  # a page looks as relevant as its best-judged id
            g = grade.get((qid, d))
            a = UNJUDGED_APPEARANCE if g is None else APPEARANCE[int(g)]
            look["D" + d[1:]] = max(look.get("D" + d[1:], a), a)
        signal = np.array(
            [
                skill * look[p] + effect[p] + noise[p] + NEWS_BOOST * (p in news)
                for p in ("D" + d[1:] for d in head)
            ]
        )
        score = (1.0 / (1.0 + np.exp(-(signal - 2.5) / 2.0))).astype(np.float32)
        ids = np.array(head, dtype=object)
        pos = order(ids, score.astype(np.float64))
        reranked = pl.DataFrame(
            {"doc_id": ids[pos].astype(str), "score": score.astype(np.float64)[pos]}
        )
        rest = tail.select("doc_id", score=-pl.col("rank").cast(pl.Float64))
        parts.append(
            pl.concat([reranked, rest]).with_columns(
                run_id=pl.lit(RERANK),
                query_id=pl.lit(qid),
                rank=pl.int_range(1, pl.len() + 1, dtype=pl.UInt32),
            )
        )
    return pl.concat(parts).select("run_id", "query_id", "doc_id", "score", "rank")


def make_intents(
    rng: np.random.Generator,
    queries: pl.DataFrame,
    qrels: pl.DataFrame,
    rerank: pl.DataFrame,
) -> pl.DataFrame:
    """Qrels with an ``intent`` column: two intents for queries with an ambiguous word.

    A relevant document of an ambiguous query is about its second intent
    with chance ``SECOND_INTENT_P`` (a navigational query's target page is
    about the first), and judged for each intent: its grade for its own,
    0 for the other. Every other query has one intent, ``"main"``. A
    document's highest grade is its grade in ``qrels.txt``.
    """
    texts = dict(queries.select("query_id", "text").iter_rows())
    classes = dict(queries.select("query_id", "query_class").iter_rows())
    parts = []
    for (qid,), judged in qrels.group_by("query_id", maintain_order=True):
        words = [w for w in str(texts[qid]).split() if w in AMBIGUOUS]
        if not words:
            parts.append(judged.with_columns(intent=pl.lit(SINGLE_INTENT)))
            continue
        first, second = AMBIGUOUS[words[0]]
        relevant = judged.filter(pl.col("relevance") >= 1)["doc_id"].to_list()
        u = rng.random(len(relevant))
        about = {
            d: second if x < SECOND_INTENT_P else first
            for d, x in zip(relevant, u, strict=True)
        }
        if classes[qid] == "navigational":
            target = judged.filter(pl.col("relevance") == 3)["doc_id"].to_list()
            about.update(dict.fromkeys(target, first))
        if qid in INTENT_MISSED:
            shown = set(
                rerank.filter((pl.col("query_id") == qid) & (pl.col("rank") <= TOP))[
                    "doc_id"
                ]
            )
            about = {d: second if d in shown else first for d in relevant}
            n_second = sum(i == second for i in about.values())
            if not 0 < n_second < len(about) - n_second:
                raise ValueError(f"query {qid}: cannot miss its primary intent")
        for intent in (first, second):
            parts.append(
                judged.with_columns(
                    intent=pl.lit(intent),
                    relevance=pl.when(
                        pl.col("doc_id").replace_strict(about, default=intent) == intent
                    )
                    .then(pl.col("relevance"))
                    .otherwise(0),
                )
            )
    return (
        pl.concat(parts)
        .select("query_id", "intent", "doc_id", "relevance")
        .sort(pl.col("query_id").cast(pl.Int64), "doc_id", "intent")
    )


# ---------------------------------------------------------------------------
# A simulated search log: an A/B test of two of the runs above, for the
# online metrics (``ie.online``). It is made last, from random streams of its
# own, so every file above stays byte-identical. ``data/README.md`` (section
# "The search log") documents the model and every parameter below.

LOG_SEED = 20240613
LOG_DIR = "log"
EXPERIMENT = "ranker-2024"
ARMS = {"control": "bm25", "treatment": "hybrid"}  # variant -> the run it serves
N_USERS = 900
PERIOD_START = dt.datetime(2024, 7, 8, tzinfo=dt.UTC)  # the experiment: two weeks
PRE_START = dt.datetime(2024, 6, 24, tzinfo=dt.UTC)  # the two weeks before it
PERIOD_DAYS = 14
SESSION_GAP_S = 30 * 60  # sessions of a user are more than 30 minutes apart
PAGE_SIZE = 10

# Users
USER_LANGUAGES = ("en", "de", "fr")
USER_LANGUAGE_P = (0.55, 0.27, 0.18)
DEVICES = ("mobile", "desktop", "tablet")
DEVICE_P = (0.5, 0.4, 0.1)
OTHER_DEVICE_P = 0.15  # a session on another device than the user's usual one
# Sessions in two weeks: 1 + Poisson(activity) in the experiment (a user is
# in it from the first visit), Poisson(activity) in the pre-period;
# activity ~ Gamma(shape, scale), the same for both periods.
ACTIVITY_SHAPE, ACTIVITY_SCALE = 0.6, 2.5
NEW_USER_P = 0.15  # not seen in the pre-period
CLICKINESS_SIGMA = 0.4  # a user's factor on attractiveness, log-normal, median 1
SHOPPER_P = 0.3
SHOPPER_TRANSACTIONAL = 3.0  # shoppers draw transactional queries 3x as often
SHOPPER_ATC = 1.6  # ... and add to the cart 1.6x as often (others 0.6x)
OTHER_ATC = 0.6
# The hour (UTC) a session starts: relative weights, 0h to 23h
HOUR_WEIGHTS = (
    1.0, 0.6, 0.4, 0.3, 0.3, 0.5, 1.0, 2.0, 3.0, 3.5, 3.5, 3.5,
    4.0, 3.5, 3.5, 3.5, 3.5, 4.0, 4.5, 5.0, 5.0, 4.5, 3.0, 2.0,
)  # fmt: skip

# Queries: the bundled queries, one id per distinct text (the lowest)
POPULARITY_SIGMA = 1.0  # a query's weight is log-normal, median 1 ...
NAVIGATIONAL_WEIGHT = 2.0  # ... times 2 for navigational queries
CAPITALISED_P = 0.08  # "Github login": the same query once normalised
EXTRA_SPACE_P = 0.03  # "github  login", "github "
MISSPELL_LONG_P = 0.15  # longest word of 8+ letters: typed misspelt this often
MISSPELL_P = 0.02  # longest word of 5-7 letters (shorter: never)
# Words a reformulation shares with the query it follows (not fillers)
CONTENT_WORDS = ("brand", "site", "topic", "action", "product", "modifier")

# Click model (cascade with several clicks). Grades from qrels.txt; -1 and
# unjudged documents count as 0.
ATTRACT = {0: 0.05, 1: 0.25, 2: 0.50, 3: 0.75}  # P(click | examined, grade)
SATISFY = {0: 0.03, 1: 0.35, 2: 0.65, 3: 0.85}  # P(satisfied | click, grade)
CONTINUE = {"desktop": 0.90, "tablet": 0.87, "mobile": 0.83}  # after a skip
CONTINUE_AFTER_CLICK = 0.6  # after an unsatisfying click
PAGE2_P = {"desktop": 0.35, "tablet": 0.25, "mobile": 0.20}  # after all 10 seen
ANSWER_P = 0.4  # an answer card satisfies without a click
REFORMULATE_P = 0.55  # after an unsatisfied search, if a related query exists
MAX_SEARCHES_PER_TASK = 4  # first pages, zero-result ones included
ANOTHER_TASK_P = 0.3  # after a task, another one in the same session
TASK_GAP_CAP_S = 20 * 60
# Times in seconds: (median, sigma) of a log-normal
FIRST_LOOK = (2.0, 0.4)  # results page shown -> first result examined
SCAN = (0.9, 0.5)  # per further result examined
DWELL_SAT = {0: (40.0, 0.6), 1: (50.0, 0.6), 2: (80.0, 0.6), 3: (110.0, 0.6)}
DWELL_UNSAT = (10.0, 0.8)
BACK = (2.0, 0.5)  # back on the results page after an unsatisfying click
ANSWER_READ = (8.0, 0.5)  # reading an answer card
PAGE2_GAP = (1.5, 0.3)
RESPELL_GAP = (6.0, 0.5)  # zero results -> the query typed again, correctly
REFORMULATE_GAP = (15.0, 0.8)
TASK_GAP = (60.0, 1.0)
CHECKOUT = (120.0, 0.6)  # add to cart -> purchase
# Commerce: transactional queries, after a satisfied click on a relevant page
ADD_TO_CART = {1: 0.20, 2: 0.35, 3: 0.50}
PURCHASE_P = 0.45  # after an add to cart
PRICE_MEDIAN, PRICE_SIGMA = 45.0, 0.8  # per document, log-normal, from its id


@dataclass(frozen=True)
class LogQuery:
    query_id: str
    text: str
    query_class: str
    language: str
    voice: bool
    misspelt: str
    misspell_p: float
    answer: bool
    related: tuple[str, ...]


@dataclass(frozen=True)
class LogUser:
    user_id: str
    variant: str
    language: str
    device: str
    activity: float
    clickiness: float
    shopper: bool
    new: bool


def assign(user_id: str) -> str:
    """The arm of a user: a stable hash of the experiment and the user id."""
    digest = hashlib.sha256(f"{EXPERIMENT}:{user_id}".encode()).digest()
    return tuple(ARMS)[int.from_bytes(digest[:8], "big") % len(ARMS)]


def price(doc_id: str) -> float:
    """A document's price: log-normal, from a hash of its id (the same every time)."""
    digest = hashlib.sha256(f"price:{doc_id}".encode()).digest()
    u = (int.from_bytes(digest[:8], "big") + 0.5) / 2**64
    z = NormalDist().inv_cdf(u)
    return round(PRICE_MEDIAN * math.exp(PRICE_SIGMA * z), 2)


def misspell(rng: np.random.Generator, text: str) -> tuple[str, float]:
    """A misspelt variant (two letters of the longest word swapped), and how often."""
    words = text.split()
    i = max(range(len(words)), key=lambda j: (len(words[j]), -j))
    word = words[i]
    if len(word) < 5:
        return text, 0.0
    j = int(rng.integers(1, len(word) - 2))
    while word[j] == word[j + 1]:
        j = j % (len(word) - 3) + 1
    words[i] = word[:j] + word[j + 1] + word[j] + word[j + 2 :]
    return " ".join(words), MISSPELL_LONG_P if len(word) >= 8 else MISSPELL_P


def log_queries(rng: np.random.Generator, queries: pl.DataFrame) -> list[LogQuery]:
    """The queries users type: one per distinct text, with variants and relations."""
    content: dict[str, set[str]] = {}
    site: set[str] = set()
    for lang, vocab in VOCAB.items():
        content[lang] = {w for kind in CONTENT_WORDS for w in vocab[kind].split()}
        site |= set(vocab["site"].split())
    rows = queries.unique("text", keep="first", maintain_order=True).rows(named=True)
    out = []
    for q in rows:
        words = q["text"].split()
        misspelt, p = misspell(rng, q["text"])
        shared = set(words) & content[q["language"]]
        related = tuple(
            r["query_id"]
            for r in rows
            if r["query_id"] != q["query_id"]
            and r["language"] == q["language"]
            and shared & set(r["text"].split())
        )
        out.append(
            LogQuery(
                query_id=q["query_id"],
                text=q["text"],
                query_class=q["query_class"],
                language=q["language"],
                voice=q["source"] == "voice",
                misspelt=misspelt,
                misspell_p=p,
                answer=q["query_class"] == "navigational" and bool(site & set(words)),
                related=related,
            )
        )
    return out


def log_users(
    rng: np.random.Generator,
    n: int = N_USERS,
    first: int = 1,
    variant: str | None = None,
) -> list[LogUser]:
    """Users ``u<first>`` on; each in ``variant``, else in the arm ``assign`` picks."""
    ids = [f"u{i:04d}" for i in range(first, first + n)]
    language = rng.choice(len(USER_LANGUAGES), size=n, p=USER_LANGUAGE_P)
    device = rng.choice(len(DEVICES), size=n, p=DEVICE_P)
    activity = rng.gamma(ACTIVITY_SHAPE, ACTIVITY_SCALE, size=n)
    clickiness = np.exp(CLICKINESS_SIGMA * rng.normal(size=n))
    shopper = rng.random(n) < SHOPPER_P
    new = rng.random(n) < NEW_USER_P
    return [
        LogUser(
            user_id=ids[i],
            variant=assign(ids[i]) if variant is None else variant,
            language=USER_LANGUAGES[int(language[i])],
            device=DEVICES[int(device[i])],
            activity=float(activity[i]),
            clickiness=float(clickiness[i]),
            shopper=bool(shopper[i]),
            new=bool(new[i]),
        )
        for i in range(n)
    ]


@dataclass(frozen=True)
class Visit:
    """Who searches, in which session, on which device, served by which run."""

    user: LogUser
    session: int
    device: str
    ranker: str


class LogSimulator:
    """The sessions of users in one period; rows are collected in plain lists."""

    def __init__(
        self,
        rng: np.random.Generator,
        queries: list[LogQuery],
        popularity: np.ndarray,
        rankings: dict[tuple[str, str], list[tuple[str, int]]],
    ) -> None:
        self.rng = rng
        self.queries = queries
        self.by_id = {q.query_id: q for q in queries}
        self.popularity = popularity
        self.rankings = rankings
        self.weights: dict[tuple[str, str, bool], np.ndarray] = {}
        # (user_id, session, ts_ms, query, query_id, page, n_results, serp_answer,
        #  device, ranker)
        self.searches: list[tuple[Any, ...]] = []
        # (search index, user_id, ts_ms, event_type, position, doc_id, value, dwell_ms)
        self.events: list[tuple[Any, ...]] = []
        self.n_sessions = 0
        self.last = 0  # time of the last search or event logged

    def event(self, row: tuple[Any, ...]) -> None:
        self.events.append(row)
        self.last = row[2]

    def ms(self, median_sigma: tuple[float, float]) -> int:
        """A log-normal duration in milliseconds (at least 1)."""
        median, sigma = median_sigma
        return max(1, round(1000 * median * math.exp(sigma * self.rng.normal())))

    def user(
        self, user: LogUser, start: dt.datetime, n_sessions: int, ranker: str
    ) -> None:
        """``n_sessions`` sessions at random times of the two weeks from ``start``."""
        rng = self.rng
        hours = np.asarray(HOUR_WEIGHTS)
        day = rng.integers(0, PERIOD_DAYS, size=n_sessions)
        hour = rng.choice(24, size=n_sessions, p=hours / hours.sum())
        second = rng.integers(0, 3600, size=n_sessions)
        begin = round(start.timestamp() * 1000)
        starts = np.sort(begin + ((day * 24 + hour) * 3600 + second) * 1000)
        end: int | None = None
        for first in starts.tolist():
            t = int(first)
            if end is not None:  # keep sessions apart by the inactivity gap
                t = max(t, end + SESSION_GAP_S * 1000 + self.ms((300.0, 1.0)))
            device = user.device
            if rng.random() < OTHER_DEVICE_P:
                others = [d for d in DEVICES if d != user.device]
                device = others[int(rng.integers(len(others)))]
            end = self.session(Visit(user, self.n_sessions, device, ranker), t)
            self.n_sessions += 1

    def session(self, visit: Visit, t: int) -> int:
        """Tasks until the user leaves; the time of the last action."""
        while True:
            t = self.task(visit, t, self.draw(visit))
            if self.rng.random() >= ANOTHER_TASK_P:
                return t
            t += min(self.ms(TASK_GAP), TASK_GAP_CAP_S * 1000)
            # the session goes on: within 30 minutes of the last logged action
            t = min(t, self.last + (SESSION_GAP_S - 60) * 1000)

    def draw(self, visit: Visit) -> LogQuery:
        """A query in the user's language (voice queries only on mobile)."""
        user = visit.user
        key = (user.language, visit.device, user.shopper)
        if key not in self.weights:
            shop = SHOPPER_TRANSACTIONAL if user.shopper else 1.0
            w = np.array(
                [
                    p
                    * (q.language == user.language)
                    * (visit.device == "mobile" or not q.voice)
                    * (shop if q.query_class == "transactional" else 1.0)
                    for q, p in zip(self.queries, self.popularity, strict=True)
                ]
            )
            self.weights[key] = w / w.sum()
        return self.queries[
            int(self.rng.choice(len(self.queries), p=self.weights[key]))
        ]

    def search(
        self, visit: Visit, t: int, text: str, q: LogQuery, page: int, n_results: int
    ) -> int:
        answer = q.answer and page == 1 and n_results > 0
        self.searches.append(
            (visit.user.user_id, visit.session, t, text, q.query_id, page)
            + (n_results, answer, visit.device, visit.ranker)
        )
        self.last = t
        return len(self.searches) - 1

    def ranking(self, visit: Visit, index: int, q: LogQuery) -> list[tuple[str, int]]:
        """The documents (and grades) search ``index`` shows, pages 1 and 2."""
        return self.rankings[(visit.ranker, q.query_id)]

    def page2_p(self, visit: Visit) -> float:
        """How often a user who saw all of page 1 goes on to page 2."""
        return PAGE2_P[visit.device]

    def surface(self, text: str) -> str:
        """The query as typed: now and then capitalised or with an extra space."""
        if self.rng.random() < CAPITALISED_P:
            text = text[0].upper() + text[1:]
        if self.rng.random() < EXTRA_SPACE_P:
            text = text.replace(" ", "  ", 1) if " " in text else text + " "
        return text

    def task(self, visit: Visit, t: int, q: LogQuery) -> int:
        """One information need: a query, maybe page 2, maybe reformulations."""
        rng = self.rng
        for attempt in range(MAX_SEARCHES_PER_TASK):
            if attempt == 0 and rng.random() < q.misspell_p:
                self.search(visit, t, q.misspelt, q, 1, 0)  # no results
                t += self.ms(RESPELL_GAP)
                continue
            text = self.surface(q.text)
            index = self.search(visit, t, text, q, 1, PAGE_SIZE)
            if q.answer and rng.random() < ANSWER_P:
                return t + self.ms(ANSWER_READ)  # answered on the page
            t, outcome = self.cascade(visit, index, t, q, 1)
            if outcome == "exhausted" and rng.random() < self.page2_p(visit):
                t += self.ms(PAGE2_GAP)
                index = self.search(visit, t, text, q, 2, PAGE_SIZE)
                t, outcome = self.cascade(visit, index, t, q, 2)
            if outcome == "satisfied" or not q.related:
                return t
            if rng.random() >= REFORMULATE_P:
                return t
            q = self.by_id[q.related[int(rng.integers(len(q.related)))]]
            t += self.ms(REFORMULATE_GAP)
        return t

    def cascade(
        self, visit: Visit, index: int, t: int, q: LogQuery, page: int
    ) -> tuple[int, str]:
        """Examine one page top-down; the time after it and how it ended."""
        rng = self.rng
        user = visit.user
        ranking = self.ranking(visit, index, q)
        t += self.ms(FIRST_LOOK)
        first = (page - 1) * PAGE_SIZE
        for position in range(first + 1, first + PAGE_SIZE + 1):
            if position > first + 1:
                t += self.ms(SCAN)
            doc, grade = ranking[position - 1]
            if rng.random() < min(ATTRACT[grade] * user.clickiness, 0.95):
                satisfied = rng.random() < SATISFY[grade]
                dwell = self.ms(DWELL_SAT[grade] if satisfied else DWELL_UNSAT)
                self.event(
                    (index, user.user_id, t, "click", position, doc, None, dwell)
                )
                t += dwell
                if satisfied:
                    return self.commerce(index, t, q, user, position, doc, grade), (
                        "satisfied"
                    )
                t += self.ms(BACK)
                if rng.random() >= CONTINUE_AFTER_CLICK:
                    return t, "stopped"
            elif rng.random() >= CONTINUE[visit.device]:
                return t, "stopped"
        return t, "exhausted"

    def commerce(
        self,
        index: int,
        t: int,
        q: LogQuery,
        user: LogUser,
        position: int,
        doc: str,
        grade: int,
    ) -> int:
        """Add to cart at the end of a satisfied visit, maybe buy; the time after."""
        if q.query_class != "transactional" or grade < 1:
            return t
        factor = SHOPPER_ATC if user.shopper else OTHER_ATC
        if self.rng.random() >= ADD_TO_CART[grade] * factor:
            return t
        self.event((index, user.user_id, t, "add_to_cart", position, doc, None, None))
        if self.rng.random() < PURCHASE_P:
            t += self.ms(CHECKOUT)
            self.event(
                (index, user.user_id, t, "purchase", position, doc, price(doc), None)
            )
        return t


def log_rankings(
    qrels: pl.DataFrame, runs: pl.DataFrame
) -> dict[tuple[str, str], list[tuple[str, int]]]:
    """The first two pages of each arm's run, with the grade of every document."""
    grades = qrels.select(
        "query_id", "doc_id", grade=pl.col("relevance").clip(lower_bound=0)
    )
    top = (
        runs.filter(
            pl.col("run_id").is_in(list(ARMS.values())) & (pl.col("rank") <= 20)
        )
        .join(grades, on=["query_id", "doc_id"], how="left")
        .with_columns(pl.col("grade").fill_null(0))
        .sort("run_id", "query_id", "rank")
    )
    out: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for run_id, qid, doc, grade in top.select(
        "run_id", "query_id", "doc_id", "grade"
    ).iter_rows():
        out.setdefault((run_id, qid), []).append((doc, int(grade)))
    return out


SEARCH_COLUMNS = {
    "user_id": pl.String,
    "session": pl.Int64,
    "ts": pl.Int64,
    "query": pl.String,
    "query_id": pl.String,
    "page": pl.Int32,
    "n_results": pl.Int32,
    "serp_answer": pl.Boolean,
    "device": pl.String,
    "ranker": pl.String,
}
EVENT_COLUMNS = {
    "search": pl.Int64,
    "user_id": pl.String,
    "ts": pl.Int64,
    "event_type": pl.String,
    "position": pl.Int32,
    "doc_id": pl.String,
    "value": pl.Float64,
    "dwell_ms": pl.Int64,
}


def utc(ms: pl.Expr) -> pl.Expr:
    return (ms * 1000).cast(pl.Datetime("us", "UTC"))


def ids(prefix: str, width: int) -> pl.Expr:
    number = pl.int_range(1, pl.len() + 1).cast(pl.String).str.zfill(width)
    return pl.concat_str(pl.lit(prefix), number)


def log_frames(
    sim: LogSimulator, pool: list[LogQuery]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Searches and events of one period, ids in time order."""
    searches = (
        pl.DataFrame(sim.searches, schema=SEARCH_COLUMNS, orient="row")
        .with_row_index("search")
        .sort("ts", "search")
        .with_columns(search_id=ids("s", 5))
    )
    sessions = (
        searches.group_by("session")
        .agg(pl.col("ts", "search").min())
        .sort("ts", "search")
        .select("session", session_id=ids("ses", 4))
    )
    classes = pl.DataFrame(
        {
            "query_id": [q.query_id for q in pool],
            "query_class": [q.query_class for q in pool],
            "language": [q.language for q in pool],
        }
    )
    searches = searches.join(sessions, on="session").join(classes, on="query_id")
    events = (
        pl.DataFrame(sim.events, schema=EVENT_COLUMNS, orient="row")
        .with_row_index("event")
        .sort("ts", "event")
        .with_columns(event_id=ids("e", 5))
        .join(searches.select("search", "search_id"), on="search")
    )
    return searches, events


#: The pre-period covariates of ``units``: one per per-unit quantity that an
#: online metric declares (its registry options ``numer`` and ``denom``), with
#: the metrics' default parameters, plus ``pre_add_to_carts``.
PRE_COLUMNS = [
    "pre_searches",
    "pre_clicked_searches",
    "pre_searches_with_results",
    "pre_clicks",
    "pre_sessions",
    "pre_add_to_carts",
    "pre_purchases",
    "pre_revenue",
    "pre_click_reciprocal_ranks",
    "pre_paul_scores",
    "pre_first_click_seconds",
    "pre_dwell_seconds",
    "pre_clicks_with_dwell",
    "pre_sat_clicks",
    "pre_abandoned_searches",
    "pre_good_abandoned_searches",
    "pre_bad_abandoned_searches",
    "pre_reformulated_searches",
    "pre_zero_result_searches",
    "pre_searches_with_add_to_cart",
    "pre_searches_with_purchase",
    "pre_queries",
    "pre_successful_sessions",
    "pre_clicked_results",
    "pre_impressions",
]
CAP_SECONDS = 1800.0  # DwellTime and TimeToFirstClick cap
SAT_SECONDS = 30.0  # SatClickRate and SessionSuccess tau
REFORMULATION_SECONDS = 300.0  # Reformulation and Good/BadAbandonment window
PAUL_F = 0.5  # PaulScore f


def pre_covariates(searches: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Sum each online metric's per-unit quantities over a user's pre-period.

    The definitions of ``docs/online.md`` at the metrics' default
    parameters, on the simulated log (every click has its ``dwell_ms``):
    a search's outcomes from its events, the session's last click counts as
    satisfied, a reformulation is the session's next search within 300 s
    whose normalised query differs but shares a word.
    """
    kind = pl.col("event_type")
    click_rows = (
        events.filter(kind == "click")
        .join(searches.select("search", "session"), on="search", how="left")
        .sort("session", "ts", "event")
        .with_columns(
            last=pl.int_range(pl.len()).over("session") == pl.len().over("session") - 1,
            dwell=pl.col("dwell_ms") / 1000.0,
        )
    )
    per_click = click_rows.group_by("search").agg(
        n_clicks=pl.len(),
        top=pl.col("position").min(),
        first=pl.col("ts").min(),
        paul=pl.lit(PAUL_F).pow(pl.col("position").cast(pl.Float64) - 1.0).sum(),
        dwell=pl.col("dwell").clip(0.0, CAP_SECONDS).sum(),
        with_dwell=pl.col("dwell").is_not_null().sum(),
        sat=(
            (pl.col("dwell") >= SAT_SECONDS).fill_null(value=False) | pl.col("last")
        ).sum(),
        positions=pl.col("position").n_unique(),
    )
    per_commerce = events.group_by("search").agg(
        n_cart=(kind == "add_to_cart").sum(),
        n_buy=(kind == "purchase").sum(),
    )
    norm = (
        pl.col("query")
        .str.normalize("NFKC")
        .str.to_lowercase()
        .str.replace_all(r"\s+", " ")
        .str.strip_chars()
    )
    frame = (
        searches.with_columns(norm=norm)
        .join(per_click, on="search", how="left")
        .join(per_commerce, on="search", how="left")
        .with_columns(
            pl.col(
                "n_clicks", "n_cart", "n_buy", "with_dwell", "sat", "positions"
            ).fill_null(0),
            pl.col("paul", "dwell").fill_null(0.0),
        )
        .sort("session", "ts", "search")
        .with_columns(
            next_norm=pl.col("norm").shift(-1).over("session"),
            next_ts=pl.col("ts").shift(-1).over("session"),
        )
    )
    shown = pl.col("n_results") > 0
    abandoned = (
        shown
        & (pl.col("n_clicks") == 0)
        & (pl.col("n_cart") == 0)
        & (pl.col("n_buy") == 0)
    )
    shared = (
        pl.col("norm")
        .str.split(" ")
        .list.set_intersection(pl.col("next_norm").str.split(" "))
        .list.len()
        > 0
    )
    reformulated = (
        pl.col("next_norm").is_not_null()
        & ((pl.col("next_ts") - pl.col("ts")) / 1000.0 <= REFORMULATION_SECONDS)
        & (pl.col("next_norm") != pl.col("norm"))
        & (pl.col("norm") != "")
        & (pl.col("next_norm") != "")
        & shared
    ).fill_null(value=False)
    frame = frame.with_columns(abandoned=abandoned, reformulated=reformulated)
    failed = pl.col("next_ts").is_null() & (~shown | pl.col("abandoned"))
    sessions = frame.group_by("user_id", "session").agg(
        success=((pl.col("sat").sum() > 0) | (pl.col("n_buy").sum() > 0))
        & ~failed.any()
    )
    seconds = ((pl.col("first") - pl.col("ts")) / 1000.0).clip(0.0, CAP_SECONDS)
    per_user = frame.group_by("user_id").agg(
        pre_searches=pl.len(),
        pre_clicked_searches=(shown & (pl.col("n_clicks") > 0)).sum(),
        pre_searches_with_results=shown.sum(),
        pre_clicks=pl.col("n_clicks").sum(),
        pre_sessions=pl.col("session").n_unique(),
        pre_click_reciprocal_ranks=(1.0 / pl.col("top").cast(pl.Float64))
        .fill_null(0.0)
        .filter(shown)
        .sum(),
        pre_paul_scores=pl.col("paul").filter(shown).sum(),
        pre_first_click_seconds=seconds.fill_null(0.0).sum(),
        pre_dwell_seconds=pl.col("dwell").sum(),
        pre_clicks_with_dwell=pl.col("with_dwell").sum(),
        pre_sat_clicks=pl.col("sat").sum(),
        pre_abandoned_searches=pl.col("abandoned").sum(),
        pre_good_abandoned_searches=(
            pl.col("abandoned") & pl.col("serp_answer") & ~pl.col("reformulated")
        ).sum(),
        pre_bad_abandoned_searches=(pl.col("abandoned") & pl.col("reformulated")).sum(),
        pre_reformulated_searches=pl.col("reformulated").sum(),
        pre_zero_result_searches=(~shown).sum(),
        pre_searches_with_add_to_cart=(pl.col("n_cart") > 0).sum(),
        pre_searches_with_purchase=(pl.col("n_buy") > 0).sum(),
        pre_queries=(pl.col("page") == 1).sum(),
        pre_clicked_results=pl.col("positions").sum(),
        pre_impressions=pl.col("n_results").sum(),
    )
    commerce = events.group_by("user_id").agg(
        pre_add_to_carts=(kind == "add_to_cart").sum(),
        pre_purchases=(kind == "purchase").sum(),
        pre_revenue=pl.col("value").sum(),
    )
    success = sessions.group_by("user_id").agg(
        pre_successful_sessions=pl.col("success").sum()
    )
    return (
        per_user.join(commerce, on="user_id", how="left")
        .join(success, on="user_id", how="left")
        .select("user_id", *PRE_COLUMNS)
    )


def make_log(
    queries: pl.DataFrame, qrels: pl.DataFrame, runs: pl.DataFrame, docs: pl.DataFrame
) -> dict[str, pl.DataFrame]:
    """The four tables of ``data/log/``: searches, results, events and units."""
    setup, pool, popularity = log_pool(queries)
    users = log_users(setup)
    rankings = log_rankings(qrels, runs)

    now = LogSimulator(np.random.default_rng([LOG_SEED, 1]), pool, popularity, rankings)
    for user in users:
        n = 1 + int(now.rng.poisson(user.activity))
        now.user(user, PERIOD_START, n, ARMS[user.variant])
    before = LogSimulator(
        np.random.default_rng([LOG_SEED, 2]), pool, popularity, rankings
    )
    for user in users:  # the pre-period: every user on the control's run
        n = 0 if user.new else int(before.rng.poisson(user.activity))
        before.user(user, PRE_START, n, ARMS["control"])

    arms = pl.DataFrame(
        {"user_id": [u.user_id for u in users], "variant": [u.variant for u in users]}
    )
    searches, events = log_frames(now, pool)
    searches = searches.join(arms, on="user_id")
    results = pl.DataFrame(
        [
            (search_id, position, rankings[(ranker, qid)][position - 1][0])
            for search_id, ranker, qid, page, n in searches.select(
                "search_id", "ranker", "query_id", "page", "n_results"
            ).iter_rows()
            for position in range(
                (page - 1) * PAGE_SIZE + 1, (page - 1) * PAGE_SIZE + n + 1
            )
        ],
        schema={"search_id": pl.String, "position": pl.Int32, "doc_id": pl.String},
        orient="row",
    )
    tables = log_tables(searches, results, events, docs, EXPERIMENT, "variant")

    pre_searches, pre_events = log_frames(before, pool)
    units = arms.join(
        pre_covariates(pre_searches, pre_events), on="user_id", how="left"
    )
    units = units.select(
        unit_id="user_id",
        experiment_id=pl.lit(EXPERIMENT),
        variant="variant",
        **{c: pl.col(c).cast(pl.Float64).fill_null(0.0) for c in PRE_COLUMNS},
    ).sort("unit_id")
    return {**tables, "units": units}


# ---------------------------------------------------------------------------
# A second simulated log, in ``log_interleaving/``: an interleaving experiment
# of the same two runs, with a randomised top 3 on a share of its searches.
# Its own users, random streams and ids, so ``log/`` stays byte-identical.
# ``data/README.md`` (section "The interleaving log") documents it.

INTERLEAVING_DIR = "log_interleaving"
INTERLEAVING_EXPERIMENT = "interleaving-2024"
INTERLEAVING_VARIANT = "interleaved"
INTERLEAVED = ("bm25", "hybrid")  # the rankers, team draft, k = PAGE_SIZE
INTERLEAVING_SEED = 0  # interleave(..., seed=)
N_INTERLEAVING_USERS = 600  # u0901 ... u1500, none of them in ranker-2024
RANDTOP_N = 3  # randomization "randtop3": the top 3 shown in random order
RANDTOP_SHARE = 0.25  # of the searches with results


class InterleavedSimulator(LogSimulator):
    """Every search shows the team-draft interleaving of ``INTERLEAVED``.

    Search ``i`` (in the order searches are made) has the id
    ``i<i + 1, 5 digits>``, known when it is made, so its list is
    ``interleave`` of the two runs' top 20 for that id; a share of the
    searches shows the list's top 3 shuffled. One page only: the
    interleaved list has 10 documents.
    """

    def __init__(
        self,
        rng: np.random.Generator,
        queries: list[LogQuery],
        popularity: np.ndarray,
        rankings: dict[tuple[str, str], list[tuple[str, int]]],
    ) -> None:
        super().__init__(rng, queries, popularity, rankings)
        # search index -> [(doc_id, grade, team, rank_bm25, rank_hybrid)], flag
        self.shown: dict[int, list[tuple[Any, ...]]] = {}
        self.flags: dict[int, str | None] = {}

    def search(
        self, visit: Visit, t: int, text: str, q: LogQuery, page: int, n_results: int
    ) -> int:
        index = super().search(visit, t, text, q, page, n_results)
        if n_results == 0:
            self.flags[index] = None
            return index
        from ireval_df.online import interleave

        grades: dict[str, int] = {}
        rows = []
        for ranker in INTERLEAVED:
            for rank, (doc, grade) in enumerate(self.rankings[(ranker, q.query_id)]):
                grades[doc] = grade
                rows.append((search_id(index), ranker, doc, rank + 1))
        frame = pl.DataFrame(
            rows,
            schema={
                "search_id": pl.String,
                "ranker": pl.String,
                "doc_id": pl.String,
                "rank": pl.Int64,
            },
            orient="row",
        )
        merged = interleave(
            frame, method="team_draft", k=PAGE_SIZE, seed=INTERLEAVING_SEED
        ).sort("position")
        shown = [
            (doc, grades[doc], team, *ranks)
            for doc, team, *ranks in merged.select(
                "doc_id", "team", *(f"rank_{r}" for r in INTERLEAVED)
            ).iter_rows()
        ]
        flag = None
        if self.rng.random() < RANDTOP_SHARE:
            flag = f"randtop{RANDTOP_N}"
            order = self.rng.permutation(RANDTOP_N).tolist()
            shown = [shown[i] for i in order] + shown[RANDTOP_N:]
        self.shown[index] = shown
        self.flags[index] = flag
        return index

    def ranking(self, visit: Visit, index: int, q: LogQuery) -> list[tuple[str, int]]:
        return [(doc, grade) for doc, grade, *_ in self.shown[index]]

    def page2_p(self, visit: Visit) -> float:
        return 0.0


def search_id(index: int) -> str:
    """The id of the interleaving log's search number ``index`` (from 0)."""
    return f"i{index + 1:05d}"


def make_interleaving_log(
    queries: pl.DataFrame, qrels: pl.DataFrame, runs: pl.DataFrame, docs: pl.DataFrame
) -> dict[str, pl.DataFrame]:
    """The tables of ``data/log_interleaving/``: searches, results and events."""
    _, pool, popularity = log_pool(queries)  # the same as log/'s
    users = log_users(
        np.random.default_rng([LOG_SEED, 3]),
        N_INTERLEAVING_USERS,
        first=N_USERS + 1,
        variant=INTERLEAVING_VARIANT,
    )
    rankings = log_rankings(qrels, runs)
    sim = InterleavedSimulator(
        np.random.default_rng([LOG_SEED, 4]), pool, popularity, rankings
    )
    for user in users:
        n = 1 + int(sim.rng.poisson(user.activity))
        sim.user(user, PERIOD_START, n, INTERLEAVING_VARIANT)

    classes = pl.DataFrame(
        {
            "query_id": [q.query_id for q in pool],
            "query_class": [q.query_class for q in pool],
            "language": [q.language for q in pool],
        }
    )
    searches = (
        pl.DataFrame(sim.searches, schema=SEARCH_COLUMNS, orient="row")
        .with_row_index("search")
        .with_columns(
            search_id=pl.concat_str(
                pl.lit("i"), (pl.col("search") + 1).cast(pl.String).str.zfill(5)
            ),
            randomization=pl.Series(
                [sim.flags[i] for i in range(len(sim.searches))], dtype=pl.String
            ),
        )
    )
    sessions = (
        searches.group_by("session")
        .agg(pl.col("ts", "search").min())
        .sort("ts", "search")
        .select("session", session_id=ids("is", 4))
    )
    searches = searches.join(sessions, on="session").join(classes, on="query_id")
    events = (
        pl.DataFrame(sim.events, schema=EVENT_COLUMNS, orient="row")
        .with_row_index("event")
        .sort("ts", "event")
        .with_columns(event_id=ids("ie", 5))
        .join(searches.select("search", "search_id"), on="search")
    )
    results = pl.DataFrame(
        [
            (search_id(index), position, *row)
            for index, shown in sorted(sim.shown.items())
            for position, row in enumerate(shown, start=1)
        ],
        schema={
            "search_id": pl.String,
            "position": pl.Int32,
            "doc_id": pl.String,
            "grade": pl.Int64,
            "team": pl.String,
            **{f"rank_{r}": pl.UInt32 for r in INTERLEAVED},
        },
        orient="row",
    ).drop("grade")
    return log_tables(
        searches,
        results,
        events,
        docs,
        INTERLEAVING_EXPERIMENT,
        "ranker",
        extra=("randomization",),
    )


def log_pool(
    queries: pl.DataFrame,
) -> tuple[np.random.Generator, list[Any], np.ndarray]:
    """The logs' query pool and popularity, and the random stream that drew them."""
    setup = np.random.default_rng([LOG_SEED, 0])
    pool = log_queries(setup, queries)
    popularity = np.exp(POPULARITY_SIGMA * setup.normal(size=len(pool))) * np.array(
        [NAVIGATIONAL_WEIGHT if q.query_class == "navigational" else 1.0 for q in pool]
    )
    return setup, pool, popularity


def log_tables(
    searches: pl.DataFrame,
    results: pl.DataFrame,
    events: pl.DataFrame,
    docs: pl.DataFrame,
    experiment: str,
    variant: str,
    *,
    extra: tuple[str, ...] = (),
) -> dict[str, pl.DataFrame]:
    """A simulated log's searches, results and events in the canonical columns and order."""
    results = results.join(
        docs.select(
            "doc_id",
            "source_type",
            pl.col("published_at").dt.replace_time_zone("UTC"),
        ),
        on="doc_id",
        how="left",
    )
    searches_out = searches.sort("search_id").select(
        "search_id",
        "session_id",
        "user_id",
        experiment_id=pl.lit(experiment),
        variant=variant,
        ts=utc(pl.col("ts")),
        query="query",
        query_id="query_id",
        query_class="query_class",
        language="language",
        device="device",
        page="page",
        n_results="n_results",
        serp_answer="serp_answer",
        **{name: name for name in extra},
    )
    events_out = events.sort("event_id").select(
        "event_id",
        "search_id",
        "user_id",
        ts=utc(pl.col("ts")),
        event_type="event_type",
        position="position",
        doc_id="doc_id",
        value="value",
        dwell_ms="dwell_ms",
    )
    return {
        "searches": searches_out,
        "results": results.sort("search_id", "position"),
        "events": events_out,
    }


def fmt(x: float) -> str:
    """Shortest text that reads back as exactly ``x`` (which float32 holds)."""
    if float(np.float32(x)) != x:
        raise ValueError(f"score {x!r} is not exactly representable as float32")
    return repr(float(x))


def text(value: object) -> str:
    """A cell of a TSV file: times in ISO-8601 UTC with a ``Z``."""
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def write_tsv(df: pl.DataFrame, path: Path) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as f:
        f.write("\t".join(df.columns) + "\n")
        f.writelines("\t".join(map(text, row)) + "\n" for row in df.iter_rows())


def write_parquet(df: pl.DataFrame, path: Path) -> None:
    df.write_parquet(path, compression="zstd", compression_level=9, statistics=True)


def main() -> None:
    rng = np.random.default_rng(SEED)
    queries = make_queries(rng)
    qrels_parts: list[pl.DataFrame] = []
    run_parts: list[pl.DataFrame] = []
    for q in queries.iter_rows(named=True):
        qrels, rankings = make_query_data(rng, q)
        qrels_parts.append(qrels)
        for run_id, ranking in rankings.items():
            run_parts.append(
                ranking.head(DEPTH).with_columns(
                    run_id=pl.lit(run_id),
                    query_id=pl.lit(q["query_id"]),
                    rank=pl.int_range(1, pl.len() + 1, dtype=pl.UInt32),
                )
            )
    qrels = pl.concat(qrels_parts)
    runs = (
        pl.concat(run_parts)
        .select("run_id", "query_id", "doc_id", "score", "rank")
        .sort("run_id", maintain_order=True)  # bm25, dense, hybrid; queries 1..152
    )
    extra = np.random.default_rng(PIPELINE_SEED)
    queries = queries.with_columns(
        issued_at=pl.Series(make_issued(extra, queries.height), dtype=pl.Datetime("us"))
    )
    docs = make_docs(extra, queries, qrels, runs)
    rerank = make_rerank(extra, queries, qrels, runs, docs)
    intents = make_intents(extra, queries, qrels, rerank)

    (HERE / "runs").mkdir(exist_ok=True)
    with (HERE / "qrels.txt").open("w", encoding="utf-8", newline="\n") as f:
        f.writelines(f"{q} 0 {d} {r}\n" for q, d, r in qrels.iter_rows())
    for (run_id,), run in pl.concat([runs, rerank]).group_by(
        "run_id", maintain_order=True
    ):
        with (HERE / "runs" / f"{run_id}.run").open(
            "w", encoding="utf-8", newline="\n"
        ) as f:
            f.writelines(
                f"{q} Q0 {d} {k} {fmt(s)} {r}\n" for r, q, d, s, k in run.iter_rows()
            )
    write_tsv(queries, HERE / "queries.tsv")
    write_tsv(docs, HERE / "docs.tsv")
    write_tsv(intents, HERE / "qrels_intents.tsv")
    write_parquet(qrels, HERE / "qrels.parquet")
    write_parquet(runs, HERE / "runs.parquet")  # bm25, dense and hybrid only
    write_parquet(queries, HERE / "queries.parquet")
    write_parquet(docs, HERE / "docs.parquet")

    log = make_log(queries, qrels, runs, docs)
    (HERE / LOG_DIR).mkdir(exist_ok=True)
    for name, frame in log.items():
        write_parquet(frame, HERE / LOG_DIR / f"{name}.parquet")
    interleaved = make_interleaving_log(queries, qrels, runs, docs)
    (HERE / INTERLEAVING_DIR).mkdir(exist_ok=True)
    for name, frame in interleaved.items():
        write_parquet(frame, HERE / INTERLEAVING_DIR / f"{name}.parquet")


if __name__ == "__main__":
    main()
