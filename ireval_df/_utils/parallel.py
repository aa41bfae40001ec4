"""Independent numpy passes run side by side, on as many threads as polars uses.

numpy releases the GIL inside its loops over large arrays (arithmetic,
``cumsum``, ``bincount``, gathers and scatters), so passes that read and
write separate arrays, or separate parts of one, run at once on threads.
The number of threads is polars' (``POLARS_MAX_THREADS``, by default the
machine's cores): a call takes no more of the machine than its polars
passes already do, and with one thread everything runs in order, in this
thread.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, TypeVar

import polars as pl

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["run_all", "workers"]

T = TypeVar("T")

#: Never more threads than this, whatever polars uses: numpy's passes are
#: bound by memory bandwidth well before
MAX_WORKERS = 8

_POOL: ThreadPoolExecutor | None = None
#: The pool's threads' names start with this
_PREFIX = "ireval_df-parallel"


def workers() -> int:
    """Return how many threads :func:`run_all` uses: polars' count, at most :data:`MAX_WORKERS`.

    >>> 1 <= workers() <= MAX_WORKERS
    True
    """
    return max(1, min(pl.thread_pool_size(), MAX_WORKERS))


def run_all(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Call every one of ``calls`` and return their results, in order.

    On :func:`workers` threads when there are two or more of each; in this
    thread, one after the other, otherwise. The calls must not depend on
    each other; an exception in one is raised here once all have ended.

    >>> run_all([lambda: 1, lambda: 2])
    [1, 2]
    """
    n = workers()
    # a call on one of the pool's threads runs its own calls in order: its
    # siblings may hold every thread, and it would wait on them for ever
    nested = threading.current_thread().name.startswith(_PREFIX)
    if n < 2 or len(calls) < 2 or nested:
        return [call() for call in calls]
    global _POOL  # one pool for the process, made on first use
    if _POOL is None:
        _POOL = ThreadPoolExecutor(n, thread_name_prefix=_PREFIX)
    futures = [_POOL.submit(call) for call in calls]
    wait(futures)
    return [future.result() for future in futures]
