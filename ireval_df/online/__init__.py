"""Online evaluation: interleaving of rankings and its per-search outcomes and tests."""

from ireval_df.online.interleaving import (
    interleave,
    interleaving_outcomes,
    interleaving_test,
)

__all__ = ["interleave", "interleaving_outcomes", "interleaving_test"]
