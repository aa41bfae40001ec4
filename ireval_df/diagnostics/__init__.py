"""What is wrong, and where: input validation, failure kinds, metric disagreement.

:func:`validate` checks inputs before evaluating, :func:`failures` names why
relevant documents did not reach the top k (and :func:`trace` follows them
through a pipeline's stages), :func:`disagreement` finds where two metrics
rank systems differently. Imported on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ireval_df._utils.lazy import lazy_names

if TYPE_CHECKING:
    from ireval_df.diagnostics.failure_kinds import failures
    from ireval_df.diagnostics.metric_disagreement import disagreement
    from ireval_df.diagnostics.stages import trace
    from ireval_df.diagnostics.validation import validate

__all__ = ["disagreement", "failures", "trace", "validate"]

_MODULES = {
    "disagreement": "ireval_df.diagnostics.metric_disagreement",
    "failures": "ireval_df.diagnostics.failure_kinds",
    "trace": "ireval_df.diagnostics.stages",
    "validate": "ireval_df.diagnostics.validation",
}

__getattr__, __dir__ = lazy_names(__name__, _MODULES, __all__)
