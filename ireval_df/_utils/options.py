"""Checks of option values, shared by every layer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ireval_df.errors import OptionError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["check_choice"]


def check_choice(name: str, value: Any, allowed: Sequence[Any]) -> None:
    """Raise an :class:`~ireval_df.errors.OptionError` unless ``value`` is one of ``allowed``.

    Examples
    --------
    >>> check_choice("missing", "drop", ("zero", "skip"))
    Traceback (most recent call last):
    ...
    ireval_df.errors.OptionError: missing='drop' is not one of 'zero', 'skip'.
    """
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        msg = f"{name}={value!r} is not one of {options}."
        raise OptionError(msg)
