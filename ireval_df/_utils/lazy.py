"""Public names imported on first use (PEP 562), for the package's ``__init__`` files."""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = ["lazy_names"]

_MODULE = "module:"


def lazy_names(
    package: str, sources: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Return a module ``__getattr__`` and ``__dir__`` for names imported on use.

    Parameters
    ----------
    package : str
        The module's ``__name__``.
    sources : mapping of str to str
        Each lazy name and the module it is imported from; a source
        written ``"module:<module>"`` makes the name that module itself.
    public : sequence of str
        The module's ``__all__``, listed by ``dir()`` before first use.

    Returns
    -------
    tuple of callables
        ``(__getattr__, __dir__)``; the first keeps each value in the
        module's namespace, so that the import runs once.

    Examples
    --------
    >>> getattr_, dir_ = lazy_names("ireval_df", {"to_wide": "ireval_df.report"}, [])
    >>> getattr_("to_wide").__name__
    'to_wide'
    >>> getattr_, _ = lazy_names("ireval_df", {"online": "module:ireval_df.online"}, [])
    >>> getattr_("online").__name__
    'ireval_df.online'
    """

    def __getattr__(name: str) -> Any:
        source = sources.get(name)
        if source is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        whole = source.startswith(_MODULE)
        module = importlib.import_module(source.removeprefix(_MODULE))
        value = module if whole else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return __getattr__, __dir__
