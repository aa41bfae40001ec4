"""Settings that produced a result frame, kept beside the frame, not inside it.

Polars frames cannot carry arbitrary metadata, and a subclass would not
survive ordinary frame operations. A result from :func:`ireval_df.evaluate`
or :func:`ireval_df.summarize` is registered here (by weak reference) with
the settings that produced it; :func:`settings_of` looks them up and the
writers put them into Parquet key-value metadata.
"""

from __future__ import annotations

import json
import weakref
from typing import Any

__all__ = ["attach", "metadata_of", "settings_of"]

_SETTINGS: dict[int, tuple[weakref.ref[Any], dict[str, Any]]] = {}


def attach(frame: Any, settings: dict[str, Any]) -> Any:
    """Record ``settings`` for ``frame`` and return ``frame`` unchanged."""
    key = id(frame)
    _SETTINGS[key] = (weakref.ref(frame, lambda _: _SETTINGS.pop(key, None)), settings)
    return frame


def settings_of(frame: Any) -> dict[str, Any] | None:
    """Return the settings recorded for ``frame``, or None.

    Examples
    --------
    >>> df = pl.DataFrame({"a": [1]})
    >>> settings_of(attach(df, {"missing": "zero"}))
    {'missing': 'zero'}
    >>> settings_of(pl.DataFrame({"a": [1]})) is None
    True
    """
    entry = _SETTINGS.get(id(frame))
    if entry is None or entry[0]() is not frame:
        return None
    return entry[1]


def metadata_of(frame: Any) -> dict[str, str]:
    """Return the settings of ``frame`` as Parquet key-value metadata.

    Examples
    --------
    >>> metadata_of(attach(pl.DataFrame({"a": [1]}), {"depth": None}))
    {'ireval_df': '{"depth": null}'}
    """
    settings = settings_of(frame)
    if settings is None:
        return {}
    return {"ireval_df": json.dumps(settings, sort_keys=True, default=str)}
