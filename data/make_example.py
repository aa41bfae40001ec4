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
"""

from __future__ import annotations

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


def fmt(x: float) -> str:
    """Shortest text that reads back as exactly ``x`` (which float32 holds)."""
    if float(np.float32(x)) != x:
        raise ValueError(f"score {x!r} is not exactly representable as float32")
    return repr(float(x))


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

    (HERE / "runs").mkdir(exist_ok=True)
    with (HERE / "qrels.txt").open("w", encoding="utf-8", newline="\n") as f:
        f.writelines(f"{q} 0 {d} {r}\n" for q, d, r in qrels.iter_rows())
    for (run_id,), run in runs.group_by("run_id", maintain_order=True):
        with (HERE / "runs" / f"{run_id}.run").open(
            "w", encoding="utf-8", newline="\n"
        ) as f:
            f.writelines(
                f"{q} Q0 {d} {k} {fmt(s)} {r}\n" for r, q, d, s, k in run.iter_rows()
            )
    with (HERE / "queries.tsv").open("w", encoding="utf-8", newline="\n") as f:
        f.write("\t".join(queries.columns) + "\n")
        f.writelines("\t".join(map(str, row)) + "\n" for row in queries.iter_rows())
    write_parquet(qrels, HERE / "qrels.parquet")
    write_parquet(runs, HERE / "runs.parquet")
    write_parquet(queries, HERE / "queries.parquet")


if __name__ == "__main__":
    main()
