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

import polars as pl

__all__ = ["attach", "metadata_of", "output", "settings_of"]

_SETTINGS: dict[int, tuple[weakref.ref[Any], dict[str, Any]]] = {}


def attach(frame: Any, settings: dict[str, Any]) -> Any:
    """Record ``settings`` for ``frame`` and return ``frame`` unchanged."""
    key = id(frame)
    _SETTINGS[key] = (weakref.ref(frame, lambda _: _SETTINGS.pop(key, None)), settings)
    return frame


def settings_of(frame: Any) -> dict[str, Any] | None:
    """Return the settings recorded for ``frame``, or None.

    A pyarrow Table carries them in its schema metadata (key ``ireval_df``,
    as in a Parquet file written by :func:`ireval_df.write_results`).

    Examples
    --------
    >>> df = pl.DataFrame({"a": [1]})
    >>> settings_of(attach(df, {"missing": "zero"}))
    {'missing': 'zero'}
    >>> settings_of(pl.DataFrame({"a": [1]})) is None
    True
    """
    from ireval_df._utils.frames import is_pyarrow

    metadata = frame.schema.metadata if is_pyarrow(frame) else None
    if isinstance(metadata, dict) and b"ireval_df" in metadata:
        settings: dict[str, Any] = json.loads(metadata[b"ireval_df"])
        return settings
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


def output(frame: Any, like: Any, settings: dict[str, Any]) -> Any:
    """Return ``frame`` as the kind of frame ``like`` is, with ``settings``.

    pandas in gives pandas out; a pyarrow Table gives a Table whose schema
    metadata holds the settings; a ``LazyFrame`` gives a ``LazyFrame``;
    anything else (polars, paths, dicts) a polars ``DataFrame`` with the
    settings recorded (:func:`settings_of`). For a list of inputs, its first
    item decides.
    """
    from ireval_df._utils.frames import is_pandas, is_pyarrow, to_pandas

    if isinstance(like, list | tuple) and like:
        like = like[0]
    attach(frame, settings)
    if is_pandas(like):
        return to_pandas(frame)
    if is_pyarrow(like):
        return frame.to_arrow().replace_schema_metadata(metadata_of(frame))
    if isinstance(like, pl.LazyFrame):
        return frame.lazy()
    return frame
