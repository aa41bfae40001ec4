"""Hypothesis strategies: small run/qrels pairs that exercise every rule.

A :class:`Case` holds plain dicts (what the oracle and pytrec_eval read) and
turns them into frames (what ``evaluate`` reads). The generators are built so
that small examples still hit:

* ids whose byte order matters: mixed case (``'a' > 'B' > 'A'``), digit
  strings (``'9' > '100' > '10'``) and a non-ASCII id (UTF-8 sorts above ASCII);
* score ties, from a small set of float32-exact scores (multiples of 0.25),
  so pytrec_eval (which stores scores as float32) sees the same ties;
* graded judgments 0..4, negative grades (pooled but unjudged), retrieved
  documents absent from the qrels, queries without any relevant document;
* queries only in the qrels, queries only in the run, rankings shorter than
  every cutoff, and several runs stacked with ``run_id``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import polars as pl
from hypothesis import Phase
from hypothesis import strategies as st

if TYPE_CHECKING:
    from collections.abc import Mapping

#: Hypothesis phases without shrinking, for tests whose every example runs
#: ``evaluate`` on hundreds of metrics: shrinking would take minutes; such
#: tests print the failing case instead.
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)

Judgments = dict[str, dict[str, int]]
Ranking = dict[str, dict[str, float]]

#: Document ids: case and digit pairs whose byte order differs from the
#: "natural" one, and one non-ASCII id.
DOC_IDS = ("a", "A", "B", "b", "9", "10", "100", "d1", "D1", "x", "Z", "\u00e9")
#: Query ids, same idea ('10' < '100' < '9' < 'A' < 'a' in byte order).
QUERY_IDS = ("1", "10", "100", "9", "A", "a", "B", "q-2")
#: Purely numeric query ids, for references that need them (gdeval).
NUMERIC_QUERY_IDS = ("1", "10", "100", "9", "2", "23")
#: Scores from a small set of float32-exact values: ties are frequent.
TIED_SCORES = (-0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
#: Grades: mostly 0-2, some 3-4, some negative ("in the pool, not judged").
GRADES = (-1, -3, 0, 0, 0, 1, 1, 1, 2, 2, 3, 4)
RUN_IDS = ("r1", "R2", "10")


@dataclass(frozen=True)
class Case:
    """Qrels and stacked runs as plain dicts.

    ``qrels[query][doc] = grade``; ``runs[run_id][query][doc] = score``.
    """

    qrels: Judgments
    runs: dict[str, Ranking] = field(default_factory=dict)

    def run_frame(self, *, with_run_id: bool = True) -> pl.DataFrame:
        """The runs stacked in one frame, rows in generation (not rank) order."""
        rows = [
            (run_id, query, doc, score)
            for run_id, ranking in self.runs.items()
            for query, docs in ranking.items()
            for doc, score in docs.items()
        ]
        frame = pl.DataFrame(
            rows,
            schema={
                "run_id": pl.String,
                "query_id": pl.String,
                "doc_id": pl.String,
                "score": pl.Float64,
            },
            orient="row",
        )
        return frame if with_run_id else frame.drop("run_id")

    def qrels_frame(self) -> pl.DataFrame:
        """The judgments as a qrels frame."""
        rows = [(q, d, g) for q, docs in self.qrels.items() for d, g in docs.items()]
        return pl.DataFrame(
            rows,
            schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int32},
            orient="row",
        )

    def run_ids(self) -> list[str]:
        return list(self.runs)

    def intents(self) -> dict[str, dict[str, dict[str, int]]]:
        """The judgments split by intent: ``intents[query][doc][intent] = grade``.

        Every document is judged for intent ``x`` with its grade, and about
        half of them (by their id) also for ``y``, one grade lower when
        positive: each document's highest grade over its intents is its
        grade in ``qrels``, so every other measure sees the same judgments.
        """
        out: dict[str, dict[str, dict[str, int]]] = {}
        for query, docs in self.qrels.items():
            for doc, grade in docs.items():
                split = {"x": grade}
                if sum(doc.encode()) % 2:
                    split["y"] = grade - 1 if grade > 0 else grade
                out.setdefault(query, {})[doc] = split
        return out

    def intent_qrels_frame(self) -> pl.DataFrame:
        """:meth:`intents` as a qrels frame with an ``intent`` column."""
        rows = [
            (q, d, g, i)
            for q, docs in self.intents().items()
            for d, split in docs.items()
            for i, g in split.items()
        ]
        return pl.DataFrame(
            rows,
            schema={
                "query_id": pl.String,
                "doc_id": pl.String,
                "relevance": pl.Int32,
                "intent": pl.String,
            },
            orient="row",
        )

    def emptied_by_judged_only(self, depth: int | None = None) -> set[tuple[str, str]]:
        """(run, query) pairs whose top ``depth`` judged_only leaves empty.

        Every retrieved document is absent from the qrels or has a negative
        grade: trec_eval -J scores such a ranking with n = 0 (IPrec at c = 0
        is NaN), an edge case worth singling out.
        """
        out = set()
        for run_id, ranking in self.runs.items():
            for query, docs in ranking.items():
                judged = self.qrels.get(query)
                if judged is None:
                    continue
                top = sorted(
                    docs.items(),
                    key=lambda item: (item[1], item[0].encode()),
                    reverse=True,
                )[:depth]
                if all(judged.get(doc, -1) < 0 for doc, _ in top):
                    out.add((run_id, query))
        return out

    def relabel(self, mapping: Mapping[str, str]) -> Case:
        """The same case with query ids renamed through ``mapping``."""
        return Case(
            qrels={mapping[q]: dict(d) for q, d in self.qrels.items()},
            runs={
                r: {mapping[q]: dict(d) for q, d in ranking.items()}
                for r, ranking in self.runs.items()
            },
        )


def shuffled(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    """The rows of ``frame`` in a seeded random order."""
    order = list(range(frame.height))
    random.Random(seed).shuffle(order)
    return frame[order]


@st.composite
def scores(draw: st.DrawFn, n: int, *, ties: bool = True) -> list[float]:
    """``n`` float32-exact scores; with ``ties=False`` all distinct."""
    if ties:
        return draw(st.lists(st.sampled_from(TIED_SCORES), min_size=n, max_size=n))
    quarters = draw(st.lists(st.integers(-40, 40), min_size=n, max_size=n, unique=True))
    return [q / 4 for q in quarters]


@st.composite
def judgments(
    draw: st.DrawFn,
    *,
    max_docs: int = 8,
    negative: bool = True,
    max_grade: int = 4,
    judged_topics: bool = False,
) -> dict[str, int]:
    """One query's qrels: 1..max_docs documents with grades.

    ``judged_topics`` guarantees a grade >= 0 (trec_eval fails, even
    segfaults, on a topic whose grades are all negative: SPEC.md 8.9).
    """
    grades = tuple(g for g in GRADES if (negative or g >= 0) and g <= max_grade)
    docs = draw(
        st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=max_docs, unique=True)
    )
    if draw(st.integers(0, 5)) == 0:  # now and then a query with nothing relevant
        values = draw(
            st.lists(
                st.sampled_from((-1, 0) if negative else (0,)),
                min_size=len(docs),
                max_size=len(docs),
            )
        )
    else:
        values = draw(
            st.lists(st.sampled_from(grades), min_size=len(docs), max_size=len(docs))
        )
    if judged_topics and max(values) < 0:
        values[0] = 0
    return dict(zip(docs, values, strict=True))


@st.composite
def rankings(
    draw: st.DrawFn, *, max_docs: int = 8, ties: bool = True
) -> dict[str, float]:
    """One query's retrieved documents (1..max_docs) with scores."""
    docs = draw(
        st.lists(st.sampled_from(DOC_IDS), min_size=1, max_size=max_docs, unique=True)
    )
    values = draw(scores(len(docs), ties=ties))
    return dict(zip(docs, values, strict=True))


@st.composite
def cases(
    draw: st.DrawFn,
    *,
    min_queries: int = 1,
    max_queries: int = 5,
    max_runs: int = 2,
    max_docs: int = 8,
    ties: bool = True,
    negative: bool = True,
    max_grade: int = 4,
    query_ids: tuple[str, ...] = QUERY_IDS,
    one_sided: bool = True,
    judged_topics: bool = False,
) -> Case:
    """A qrels/runs pair.

    Every run answers the first query (so run and qrels always overlap);
    with ``one_sided`` the other queries are, at random, in both, only in the
    qrels, only in the run, or answered by some runs and not others.
    """
    queries = draw(
        st.lists(
            st.sampled_from(query_ids),
            min_size=min_queries,
            max_size=min(max_queries, len(query_ids)),
            unique=True,
        )
    )
    n_runs = draw(st.integers(1, max_runs))
    run_ids = RUN_IDS[:n_runs]
    qrels: Judgments = {}
    runs: dict[str, Ranking] = {r: {} for r in run_ids}
    for i, query in enumerate(queries):
        side = (
            "both"
            if i == 0 or not one_sided
            else draw(st.sampled_from(("both", "both", "both", "qrels", "run")))
        )
        if side in ("both", "qrels"):
            qrels[query] = draw(
                judgments(
                    max_docs=max_docs,
                    negative=negative,
                    max_grade=max_grade,
                    judged_topics=judged_topics,
                )
            )
        if side in ("both", "run"):
            for run_id in run_ids:
                if i == 0 or not one_sided or draw(st.integers(0, 4)) > 0:
                    ranking = draw(rankings(max_docs=max_docs, ties=ties))
                    if side == "both" and draw(st.booleans()):
                        # retrieve some judged documents, so that the
                        # ranking and the qrels overlap more than by chance
                        extra = draw(
                            st.lists(
                                st.sampled_from(sorted(qrels[query])),
                                max_size=4,
                                unique=True,
                            )
                        )
                        for doc, score in zip(
                            extra, draw(scores(len(extra), ties=ties)), strict=True
                        ):
                            ranking.setdefault(doc, score)
                        if not ties:
                            ranking = _untie(ranking)
                    runs[run_id][query] = ranking
    return Case(qrels=qrels, runs=runs)


def _untie(ranking: dict[str, float]) -> dict[str, float]:
    """Make scores distinct again (keeping their order, float32-exact)."""
    seen: set[float] = set()
    out = {}
    for doc, score in ranking.items():
        while score in seen:
            score += 0.25
        seen.add(score)
        out[doc] = score
    return out


def perfect_case(qrels: dict[str, int], query: str = "q") -> Case:
    """A run that returns every judged document in ideal (grade) order."""
    ordered = sorted(qrels.items(), key=lambda item: (-item[1], item[0]))
    n = len(ordered)
    return Case(
        qrels={query: dict(qrels)},
        runs={"r": {query: {doc: float(n - i) for i, (doc, _) in enumerate(ordered)}}},
    )


def merge(parts: list[Case]) -> Case:
    """Several cases as one: query ids prefixed ``c0.``, ``c1.``, ...; run ids shared.

    One ``evaluate`` call then checks many independent cases (its fixed cost
    dominates on small inputs).
    """
    qrels: Judgments = {}
    runs: dict[str, Ranking] = {}
    for i, part in enumerate(parts):
        for query, judged in part.qrels.items():
            qrels[f"c{i}.{query}"] = dict(judged)
        for run_id, ranking in part.runs.items():
            target = runs.setdefault(run_id, {})
            for query, docs in ranking.items():
                target[f"c{i}.{query}"] = dict(docs)
    return Case(qrels=qrels, runs=runs)


def batches(n: int, **options: object) -> st.SearchStrategy[Case]:
    """``n`` independent :func:`cases` merged into one (see :func:`merge`)."""
    return st.lists(cases(**options), min_size=n, max_size=n).map(merge)  # type: ignore[arg-type]


# --- search logs (ireval_df.online) -----------------------------------------------------

#: Queries that reformulate each other (shared terms), differ only in case and
#: spacing (the same normalised query), or share nothing.
LOG_QUERIES = (
    "red shoes",
    "Red  Shoes",
    "red running shoes",
    "running shoes",
    "red boots",
    "boots",
    "Blue Hat",
    "",
)


@dataclass
class LogCase:
    """A clean search log as rows (what the oracle reads) and frames."""

    searches: list[dict]
    results: list[dict]
    events: list[dict]

    def frames(self) -> dict[str, pl.DataFrame]:
        searches = pl.DataFrame(
            self.searches,
            schema={
                "search_id": pl.String,
                "user_id": pl.String,
                "ts": pl.Datetime("us"),
                "variant": pl.String,
                "query": pl.String,
                "n_results": pl.Int32,
                "page": pl.Int32,
                "device": pl.String,
                **(
                    {"serp_answer": pl.Boolean}
                    if "serp_answer" in self.searches[0]
                    else {}
                ),
            },
        )
        results = pl.DataFrame(
            self.results,
            schema={
                "search_id": pl.String,
                "position": pl.Int32,
                "doc_id": pl.String,
                "source_type": pl.String,
            },
        )
        events = pl.DataFrame(
            self.events,
            schema={
                "event_id": pl.String,
                "search_id": pl.String,
                "user_id": pl.String,
                "ts": pl.Datetime("us"),
                "event_type": pl.String,
                "position": pl.Int32,
                "value": pl.Float64,
                "dwell_ms": pl.Int64,
            },
        )
        return {"searches": searches, "results": results, "events": events}


@st.composite
def search_logs(draw: st.DrawFn, *, max_users: int = 4) -> LogCase:
    """A clean log: every action of a user at its own time, events after their search.

    Gaps between a user's actions run from one second to two hours, so
    sessions split; searches may find nothing, be the next page of the
    previous query, or reformulate it; clicks repeat, some events carry
    ``dwell_ms``, some are outside search.
    """
    import datetime as dt

    start = dt.datetime(2024, 5, 1, 8)
    answer = draw(st.booleans())
    searches: list[dict] = []
    results: list[dict] = []
    events: list[dict] = []
    gaps = st.sampled_from([1, 5, 20, 29, 31, 45, 60, 90, 120, 400, 1700, 1900, 7200])
    for u in range(draw(st.integers(1, max_users))):
        user = f"u{u}"
        variant = draw(st.sampled_from(["A", "B"]))
        device = draw(st.sampled_from(["mobile", "desktop"]))
        now = start + dt.timedelta(seconds=draw(st.integers(0, 100)))
        previous = None
        for _ in range(draw(st.integers(1, 5))):
            now += dt.timedelta(seconds=draw(gaps))
            sid = f"s{len(searches)}"
            paged = previous is not None and draw(st.booleans())
            query = previous["query"] if paged else draw(st.sampled_from(LOG_QUERIES))
            n = draw(st.integers(0, 3))
            row = {
                "search_id": sid,
                "user_id": user,
                "ts": now,
                "variant": variant,
                "query": query,
                "n_results": n,
                "page": previous["page"] + 1 if paged else 1,
                "device": device,
            }
            if answer:
                row["serp_answer"] = draw(st.booleans())
            searches.append(row)
            previous = row
            for p in range(1, n + 1):
                results.append(
                    {
                        "search_id": sid,
                        "position": p,
                        "doc_id": f"d{draw(st.integers(0, 5))}",
                        "source_type": draw(st.sampled_from(["news", "web"])),
                    }
                )
            for _ in range(draw(st.integers(0, 3))):
                now += dt.timedelta(seconds=draw(gaps))
                kinds = ["click", "click", "add_to_cart", "purchase", "view"]
                kind = draw(st.sampled_from(kinds))
                if kind == "click" and n == 0:
                    kind = "view"
                event = {
                    "event_id": f"e{len(events)}",
                    # a page view outside search is attributed to none
                    "search_id": None if kind == "view" else sid,
                    "user_id": user,
                    "ts": now,
                    "event_type": kind,
                    "position": draw(st.integers(1, n)) if kind == "click" else None,
                    "value": float(draw(st.integers(1, 50)))
                    if kind == "purchase"
                    else None,
                    "dwell_ms": (
                        draw(st.sampled_from([None, None, 500, 45_000]))
                        if kind == "click"
                        else None
                    ),
                }
                events.append(event)
    return LogCase(searches, results, events)
