"""Canonical column names and dtypes, their spellings, and recognising them.

The one place that knows which columns a run, qrels or query table has,
what they are called in the wild (``qid``, ``docno``, ``label`` ...), and
how a source's names map onto them; when a needed column is missing, the
message proposes a ``columns=`` mapping.

Canonical columns:

========= ============================================================
frame     columns
========= ============================================================
run       ``run_id`` (String), ``query_id`` (String), ``doc_id`` (String),
          ``score`` (Float64), ``rank`` (UInt32, only when the input has it)
qrels     ``query_id`` (String), ``doc_id`` (String), ``relevance`` (Int32)
queries   ``query_id`` (String), then the attribute columns as they are;
          ``issued_at`` (Datetime, when present)
docs      ``query_id`` (String, only when the documents are per query),
          ``doc_id`` (String), then the attribute columns as they are;
          ``published_at`` (Datetime, when present)
========= ============================================================
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from ireval_df.errors import SchemaError

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from ireval_df._utils.typing import Kind

__all__ = [
    "DEFAULT_RUN_ID",
    "DOCS",
    "DTYPES",
    "ID_COLUMNS",
    "QRELS",
    "QRELS_COLUMNS",
    "QUERIES",
    "RUN",
    "TIME_COLUMNS",
    "RUN_COLUMNS",
    "SPECS",
    "Spec",
    "recognise",
    "resolve",
]

_log = logging.getLogger("ireval_df")

#: Run columns in canonical order; ``rank`` follows when the input has one.
RUN_COLUMNS = ("run_id", "query_id", "doc_id", "score")
#: Qrels columns in canonical order.
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
#: The dtype of every canonical column.
DTYPES: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "query_id": pl.String(),
    "doc_id": pl.String(),
    "score": pl.Float64(),
    "rank": pl.UInt32(),
    "relevance": pl.Int32(),
    "published_at": pl.Datetime("us"),
    "issued_at": pl.Datetime("us"),
}
#: The time columns: parsed to naive UTC ``Datetime("us")``, values that do not
#: parse are left null and counted in one warning.
TIME_COLUMNS = ("published_at", "issued_at")
#: The run_id of a single run that names none.
DEFAULT_RUN_ID = "run"
#: The columns that hold ids (strings; a file's are read as written).
ID_COLUMNS = ("query_id", "doc_id", "run_id")

# Well-known spellings, best first, compared after lower-casing and turning
# '-' and ' ' into '_'. The canonical name itself comes first.
_QUERY_ID = ("query_id", "qid", "queryid", "topic", "topic_id", "topicid", "query")
_DOC_ID = (
    "doc_id",
    "docno",
    "docid",
    "doc",
    "document_id",
    "pid",
    "passage_id",
    "corpus_id",
)
_RELEVANCE = ("relevance", "label", "rel", "grade", "judgment", "judgement")
_RUN_ID = ("run_id", "tag", "system", "run", "runid", "run_name")


@dataclass(frozen=True)
class Spec:
    """What one kind of frame needs.

    Attributes
    ----------
    kind : {"run", "qrels", "queries", "docs"}
        The kind of frame.
    required : tuple of str
        The canonical columns it must have.
    optional : tuple of str
        The canonical columns it may have.
    aliases : mapping of str to tuple of str
        Each canonical column's well-known spellings, best first.
    attributes : bool
        Whether every other column is kept, as it is, after the canonical
        ones (query and document tables); otherwise only canonical columns
        are kept and ``columns=`` may map only to them.
    """

    kind: Kind
    required: tuple[str, ...]
    optional: tuple[str, ...]
    aliases: Mapping[str, tuple[str, ...]]
    attributes: bool = False

    @property
    def canonical(self) -> tuple[str, ...]:
        """The required columns, then the optional ones."""
        return self.required + self.optional


RUN = Spec(
    "run",
    ("query_id", "doc_id", "score"),
    ("run_id", "rank"),
    {
        "query_id": _QUERY_ID,
        "doc_id": _DOC_ID,
        "score": ("score", "sim", "similarity"),
        "run_id": _RUN_ID,
        "rank": ("rank",),
    },
)
QRELS = Spec(
    "qrels",
    ("query_id", "doc_id", "relevance"),
    (),
    {
        "query_id": _QUERY_ID,
        "doc_id": _DOC_ID,
        "relevance": (*_RELEVANCE, "score"),  # BEIR: query-id corpus-id score
    },
)
QUERIES = Spec(
    "queries",
    ("query_id",),
    ("issued_at",),
    {"query_id": (*_QUERY_ID, "id"), "issued_at": ("issued_at",)},
    attributes=True,
)
# A document table's query_id (documents per query) is recognised under its
# two unambiguous spellings only: "topic" or "query" may well be an attribute
# of a document.
DOCS = Spec(
    "docs",
    ("doc_id",),
    ("query_id", "published_at"),
    {
        "doc_id": (*_DOC_ID, "id"),
        "query_id": ("query_id", "qid"),
        "published_at": ("published_at",),
    },
    attributes=True,
)
#: The spec of each kind.
SPECS: Mapping[str, Spec] = {
    "run": RUN,
    "qrels": QRELS,
    "queries": QUERIES,
    "docs": DOCS,
}


def _norm(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def recognise(
    names: Sequence[str], spec: Spec, columns: Mapping[str, str] | None
) -> Collection[str] | None:
    """Return the id columns of a file header, or None if some are missing.

    Parameters
    ----------
    names : sequence of str
        The header.
    spec : Spec
        What the file should hold.
    columns : mapping of str to str, optional
        The caller's source -> canonical mapping.

    Returns
    -------
    collection of str or None
        The source names of the id columns (to be read as strings), or None
        when a required column is neither mapped nor recognised.

    Examples
    --------
    >>> recognise(["qid", "docno", "sim"], RUN, None)
    ['qid', 'docno']
    >>> recognise(["q", "d", "s"], RUN, None) is None
    True
    """
    mapping, _ = _match(names, spec, columns)
    if not set(spec.required) <= set(mapping.values()):
        return None
    return [src for src, dst in mapping.items() if dst in ID_COLUMNS]


def _match(
    names: Sequence[str], spec: Spec, columns: Mapping[str, str] | None
) -> tuple[dict[str, str], dict[str, str]]:
    """Map source names to canonical ones: explicit first, then well-known.

    Returns the whole mapping and the automatically recognised part.
    """
    present = set(names)
    mapping = {s: d for s, d in (columns or {}).items() if s in present}
    auto: dict[str, str] = {}
    for canon in spec.canonical:
        if canon in mapping.values():
            continue
        if canon in present and canon not in mapping:
            mapping[canon] = canon
            continue
        for alias in spec.aliases[canon]:
            found = next(
                (n for n in names if _norm(n) == alias and n not in mapping), None
            )
            if found is not None:
                mapping[found] = auto[found] = canon
                break
    return mapping, auto


def resolve(
    names: Sequence[str], spec: Spec, columns: Mapping[str, str] | None, label: str
) -> dict[str, str]:
    """Check ``columns=`` and return the full source -> canonical mapping.

    Parameters
    ----------
    names : sequence of str
        The source's column names.
    spec : Spec
        What the source should hold.
    columns : mapping of str to str, optional
        The caller's source -> canonical mapping.
    label : str
        The source, for messages (``run`` or ``run file 'bm25.run'``).

    Returns
    -------
    dict of str to str
        Every mapped source name and its canonical name. Recognised
        spellings are reported at INFO level on the ``"ireval_df"`` logger.

    Raises
    ------
    SchemaError
        ``columns=`` names a column the source lacks, maps to a name that is
        not canonical or already taken, or maps two columns to one; or a
        required column is missing (the message proposes ``columns=``).

    Examples
    --------
    >>> resolve(["qid", "docno", "label"], QRELS, None, "qrels")
    {'qid': 'query_id', 'docno': 'doc_id', 'label': 'relevance'}
    """
    present = set(names)
    for src, dst in (columns or {}).items():
        if src not in present:
            close = difflib.get_close_matches(src, names, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            msg = (
                f"columns= maps {src!r}, but {label} has no column {src!r} "
                f"(found {list(names)!r}).{hint}"
            )
            raise SchemaError(msg)
        if not spec.attributes and dst not in spec.canonical:
            msg = (
                f"columns= maps {src!r} to {dst!r}, which is not a {spec.kind} "
                f"column; {spec.kind} columns are {list(spec.canonical)!r}"
            )
            raise SchemaError(msg)
        if dst in present and dst != src and dst not in (columns or {}):
            msg = (
                f"columns= maps {src!r} to {dst!r}, but {label} already has a "
                f"column {dst!r}.\n  Hint: drop one of them first, or map "
                f"{dst!r} elsewhere too."
            )
            raise SchemaError(msg)
    targets = list((columns or {}).values())
    duplicated = sorted({t for t in targets if targets.count(t) > 1})
    if duplicated:
        msg = f"columns= maps several columns to {duplicated[0]!r}; map one only"
        raise SchemaError(msg)
    mapping, auto = _match(names, spec, columns)
    missing = [c for c in spec.required if c not in mapping.values()]
    if missing:
        raise SchemaError(_missing_message(names, spec, mapping, missing, label))
    if auto:
        _log.info(
            "%s: using %s; pass columns= to choose others",
            label,
            ", ".join(f"column {s!r} as {d!r}" for s, d in auto.items()),
        )
    return mapping


def _missing_message(
    names: Sequence[str],
    spec: Spec,
    mapping: Mapping[str, str],
    missing: Sequence[str],
    label: str,
) -> str:
    """``run is missing column 'score' (found [...]).`` plus a columns= hint."""
    what = "column" if len(missing) == 1 else "columns"
    listed = ", ".join(repr(m) for m in missing)
    proposal = {s: d for s, d in mapping.items() if s != d}
    unused = [n for n in names if n not in mapping]
    for canon in missing:
        guess = _guess(canon, spec, unused, single=len(missing) == 1)
        if guess is not None:
            unused.remove(guess)
        proposal[guess or f"<{canon} column>"] = canon
    msg = (
        f"{label} is missing {what} {listed} (found {list(names)!r}).\n"
        f"  Hint: pass columns={proposal!r}."
    )
    if "score" in missing and "rank" in mapping.values():
        msg += (
            "\n  A run with ranks but no scores can use them: "
            "run.with_columns(score=-pl.col('rank'))."
        )
    return msg


def _guess(canon: str, spec: Spec, unused: list[str], *, single: bool) -> str | None:
    """Return the unused column most likely meant as ``canon``, if any."""
    words = (canon, *spec.aliases.get(canon, ()))
    for name in unused:
        if any(w in _norm(name) for w in words if len(w) > 2):
            return name
    close = difflib.get_close_matches(canon, unused, n=1, cutoff=0.6)
    if close:
        return close[0]
    return unused[0] if single and len(unused) == 1 else None
