"""Run-vs-run similarity: how alike two systems' rankings are, without judgments.

:func:`similarity` compares each run with a baseline, query by query, with
the measures of the ``similarity`` family (:mod:`.measures`): rank-biased
overlap with ties (:mod:`.rbo`), Kendall's tau-b and tau_AP
(:mod:`.correlation`), Jaccard and overlap at k (:mod:`.overlap`).
:mod:`.rankings` turns runs into the paired, tie-aware rankings every
measure reads. :func:`diff` sets each run's top k beside its baseline's,
with each document's share of the change in nDCG and P.
"""

from ireval_df.similarity.compute import similarity
from ireval_df.similarity.diff import diff

__all__ = ["diff", "similarity"]
