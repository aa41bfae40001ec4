"""Private helpers every layer may use: frames, typing, versions, progress, signals.

Nothing here knows about runs, qrels, metrics or statistics; the modules
import only the standard library, polars and :mod:`ireval_df.errors`.
"""
