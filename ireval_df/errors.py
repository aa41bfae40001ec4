"""Exceptions and warnings raised by ireval_df.

Every error a caller can cause derives from :class:`IrevalError`, itself a
``ValueError``, so ``except ValueError`` keeps working for generic code. Each
message states what was expected, what was found and how to fix it.
"""

from __future__ import annotations

import sys
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType

__all__ = [
    "AlignmentError",
    "DataError",
    "FormatError",
    "IdentificationWarning",
    "InterleavingWarning",
    "IrevalError",
    "IrevalWarning",
    "LogWarning",
    "MetricSpecError",
    "OptionError",
    "SchemaError",
    "warn",
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


class LogWarning(IrevalWarning):
    """Rows of a search log that reading dropped or changed, counted by problem."""


class IdentificationWarning(IrevalWarning):
    """The data say little about some parameters of a model being fitted.

    For example (query, document) pairs with too few impressions for a click
    model to tell their attractiveness from its prior.
    """


def warn(message: str, category: type[IrevalWarning] = IrevalWarning) -> None:
    """Issue an :class:`IrevalWarning` that points at the caller's own line.

    ``category`` is :class:`IrevalWarning` or one of its subclasses, so that
    callers can filter one kind of warning apart.

    The warning is attributed to the first frame outside the ``ireval_df``
    package, wherever inside it the problem was found, so the file and line
    ``warnings`` prints (and filters on) are the user's, not the library's.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn("3 queries are in the run only")
    >>> caught[0].message.args[0], caught[0].category.__name__
    ('3 queries are in the run only', 'IrevalWarning')
    """
    level = 2  # the caller of warn()
    frame = sys._getframe(1)
    while frame.f_back is not None and _inside(frame):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def _inside(frame: FrameType) -> bool:
    name = str(frame.f_globals.get("__name__", ""))
    return name == "ireval_df" or name.startswith("ireval_df.")


class InterleavingWarning(IrevalWarning):
    """Interleaving input that was left out or read another way, counted by problem."""
