"""The only place that checks versions of the libraries ireval_df uses."""

from __future__ import annotations

import importlib.metadata

import polars as pl

__all__ = ["POLARS_VERSION", "TREC_EVAL_REFERENCE", "version_of"]

POLARS_VERSION: str = pl.__version__
#: The trec_eval release whose behaviour ireval_df reproduces.
TREC_EVAL_REFERENCE = "10.0"


def version_of(distribution: str) -> str | None:
    """Return the installed version of ``distribution``, or None when absent.

    Examples
    --------
    >>> version_of("polars") == pl.__version__
    True
    """
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
