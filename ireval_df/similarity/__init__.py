"""Run-vs-run similarity: how alike two systems' rankings are, without judgments.

:mod:`.rankings` turns runs into the paired, tie-aware rankings that every
similarity measure reads; :func:`diff` sets each run's top k beside its
baseline's, with each document's share of the change in nDCG and P.
"""

from ireval_df.similarity.diff import diff

__all__ = ["diff"]
