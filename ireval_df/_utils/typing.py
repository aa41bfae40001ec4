"""Type aliases for the frames and sources that ireval_df accepts.

Only names are defined here; pandas and pyarrow are imported for type checking
only, so importing this module loads neither.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import polars as pl

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "DocsLike",
    "FrameLike",
    "Kind",
    "PathLike",
    "PolarsFrame",
    "QrelsDict",
    "QrelsLike",
    "QueriesLike",
    "RunDict",
    "RunLike",
    "SingleRunLike",
]

#: A file name: ``str`` or ``pathlib.Path`` (any ``os.PathLike[str]``).
PathLike: TypeAlias = str | os.PathLike[str]

#: A polars frame, eager or lazy.
PolarsFrame: TypeAlias = pl.DataFrame | pl.LazyFrame

#: Any in-memory table ireval_df converts at the boundary.
FrameLike: TypeAlias = "pl.DataFrame | pl.LazyFrame | pd.DataFrame | pa.Table"

#: ``{query_id: {doc_id: score}}`` (pytrec_eval, ranx and ir_measures style).
RunDict: TypeAlias = Mapping[Any, Mapping[Any, float]]

#: ``{query_id: {doc_id: relevance}}``.
QrelsDict: TypeAlias = Mapping[Any, Mapping[Any, int]]

#: One run: a frame, a file, or a dict-of-dicts.
SingleRunLike: TypeAlias = "FrameLike | PathLike | RunDict"

#: One run, or several to stack (a list or tuple of single runs).
RunLike: TypeAlias = "SingleRunLike | list[SingleRunLike] | tuple[SingleRunLike, ...]"

#: Relevance judgements: a frame, a file, or a dict-of-dicts.
QrelsLike: TypeAlias = "FrameLike | PathLike | QrelsDict"

#: Query metadata: a frame or a file.
QueriesLike: TypeAlias = "FrameLike | PathLike"

#: Document attributes: a frame or a file.
DocsLike: TypeAlias = "FrameLike | PathLike"

#: The kinds of input frames: the four of offline evaluation, then the four
#: tables of a search log (:func:`ireval_df.online.read_log`).
Kind: TypeAlias = Literal[
    "run", "qrels", "queries", "docs", "searches", "results", "events", "units"
]
