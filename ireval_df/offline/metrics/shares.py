"""Shares of a document slice: of the top k (Share), of the relevant documents (RelShare).

Both describe which documents a slice holds rather than how good a ranking
is; they are meant for ``evaluate(..., docs=..., by_doc=...)``
(``docs/slices.md``), which computes them per slice of the documents, next
to the slice-restricted ``P``, ``R`` and ``nDCG``. Without ``by_doc`` the
slice is every document, and they take the values below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from ireval_df.offline.metrics import shared
from ireval_df.offline.plan import Plan, register

if TYPE_CHECKING:
    from ireval_df.measures.spec import Metric


@register("Share", cutoff="required", empty=None, doc_slices="top")
def share(m: Metric) -> Plan:
    """Share of the top k from a document slice: its documents in the top k, over k.

    With ``evaluate(..., by_doc=...)`` the shares of a ranking's slices add
    up to ``min(k, retrieved) / k``. Without, the slice is every document:
    ``NumRet@k / k``. It does not depend on relevance; its direction is
    nominal (``compare`` counts an increase as a win).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["b"], "relevance": [1]})
    >>> ie.evaluate(run, qrels, ["Share@2", "Share@4"])["value"].to_list()
    [1.0, 0.75]
    >>> docs = pl.DataFrame({"doc_id": ["a", "b", "c"], "kind": ["news", "wiki", "news"]})
    >>> ie.evaluate(run, qrels, "Share@2", docs=docs, by_doc="kind").select("kind", "value").rows()
    [('news', 0.5), ('wiki', 0.5)]
    """
    assert m.k is not None
    return Plan(value=shared.n_ret(int(m.k)) / float(m.k))


@register("RelShare", params={"rel": 1}, doc_slices="qrels")
def relevant_share(m: Metric) -> Plan:
    """Share of the query's relevant documents that belong to a document slice.

    ``R_slice / R``, from the qrels alone: the same for every run, the
    baseline to read ``Share@k`` against (a slice holding 30 % of the
    relevant documents and 60 % of the top 10 is over-represented). With
    ``evaluate(..., by_doc=...)`` the shares of a query's slices add up to
    1, and a query without a relevant document has no row. Without, the
    slice is every document: 1, or 0 when R = 0 (as ``R`` is then 0).

    Examples
    --------
    >>> run = pl.DataFrame({"query_id": "q", "doc_id": ["a"], "score": [1.0]})
    >>> qrels = pl.DataFrame({"query_id": "q", "doc_id": ["a", "b", "c"], "relevance": [1, 2, 0]})
    >>> ie.evaluate(run, qrels, ["RelShare"])["value"].item()
    1.0
    >>> docs = pl.DataFrame({"doc_id": ["a", "b", "c"], "kind": ["news", "wiki", "wiki"]})
    >>> ie.evaluate(run, qrels, "RelShare", docs=docs, by_doc="kind").select("kind", "value").rows()
    [('news', 0.5), ('wiki', 0.5)]
    """
    return Plan(value=pl.when(shared.n_rel(m.rel) > 0).then(1.0).otherwise(0.0))
