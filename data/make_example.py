"""Generate the bundled example evaluation data of ireval_df.

Run ``python data/make_example.py``: it rewrites every file in ``data/``
(next to this script) byte-identically on every run. Only numpy and polars
are needed. ``data/README.md`` describes the files and their edge cases.

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
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
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


if __name__ == "__main__":
    main()
