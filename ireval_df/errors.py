"""Exceptions and warnings raised by ireval_df.

Every error a caller can cause derives from :class:`IrevalError`, itself a
``ValueError``, so ``except ValueError`` keeps working for generic code. Each
message states what was expected, what was found and how to fix it.
"""

from __future__ import annotations

__all__ = [
    "AlignmentError",
    "DataError",
    "FormatError",
    "IrevalError",
    "IrevalWarning",
    "MetricSpecError",
    "OptionError",
    "SchemaError",
]


class IrevalError(ValueError):
    """Base class of every error ireval_df raises for bad input or usage."""


class SchemaError(IrevalError):
    """A frame lacks a needed column, or a column has an unusable dtype."""


class FormatError(IrevalError):
    """A file could not be parsed: names the file, line number and line."""


class DataError(IrevalError):
    """Values are unusable: duplicate rows, NaN scores, bad grades."""


class OptionError(IrevalError):
    """An option has a value it does not take: bad usage, not bad data.

    The command line exits with status 2 for it (1 for every other error).
    """


class MetricSpecError(OptionError):
    """A metric name or parameter could not be parsed or is out of range."""


class AlignmentError(IrevalError):
    """Run and qrels do not fit together (no shared queries, missing queries)."""


class IrevalWarning(UserWarning):
    """A recoverable data issue: counted, reported, and how to turn it off."""
