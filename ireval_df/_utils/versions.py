"""The only place that checks versions of the libraries ireval_df uses."""

from __future__ import annotations

import importlib.metadata

import polars as pl

__all__ = [
    "POLARS_FLOOR",
    "POLARS_VERSION",
    "TREC_EVAL_REFERENCE",
    "check_polars",
    "version_of",
]

POLARS_VERSION: str = pl.__version__
#: The oldest polars the test suite passes on (``pyproject.toml`` declares
#: the same; ``.ci/run`` runs the suite on it). polars 2.0.0 panics in a
#: streaming join, and 1.x releases fail in several ways (docs/install.md).
POLARS_FLOOR = (2, 1)
#: The trec_eval release whose behaviour ireval_df reproduces.
TREC_EVAL_REFERENCE = "10.0"


def check_polars(version: str) -> None:
    """Raise ImportError, naming the fix, when polars ``version`` is below the floor.

    pip keeps an older polars out, but an environment assembled otherwise
    (``--no-deps``, another package manager) would fail later with
    tracebacks from inside polars.

    Examples
    --------
    >>> check_polars("2.1.0")
    >>> check_polars("1.44.2")
    Traceback (most recent call last):
    ...
    ImportError: ireval_df needs polars >= 2.1, found 1.44.2. Hint: pip install -U "polars>=2.1"
    """
    parts = []
    for part in version.split(".")[:2]:
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits) if digits else 0)
    if tuple(parts) < POLARS_FLOOR:
        floor = ".".join(map(str, POLARS_FLOOR))
        msg = (
            f"ireval_df needs polars >= {floor}, found {version}. "
            f'Hint: pip install -U "polars>={floor}"'
        )
        raise ImportError(msg)


check_polars(POLARS_VERSION)


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
