"""What :func:`~ireval_df.evaluate` assumes and warns about, in one place.

:func:`ireval_df.validate` reports on the same conventions before an
evaluation (its ``unjudged_at_k`` and ``tied_scores`` checks), so it imports
them from here rather than keeping copies that could drift apart.
"""

from __future__ import annotations

__all__ = ["TIE_BREAK", "TIE_RULE", "UNJUDGED_AT", "UNJUDGED_WARN"]

#: How tied scores are ordered within a ranking.
TIE_BREAK = "doc_id descending (byte order)"
#: The whole ranking rule, as the provenance of a result states it.
TIE_RULE = f"score descending, then {TIE_BREAK}, as trec_eval"
#: The top of the ranking the unjudged warning looks at (trec_eval's unj_10).
UNJUDGED_AT = 10
#: Share of unjudged documents in the top :data:`UNJUDGED_AT` above which
#: evaluate() warns (and validate()'s ``unjudged_at_k`` is a warning).
UNJUDGED_WARN = 0.5
