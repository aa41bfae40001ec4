"""How much memory an evaluation may take, and how many buckets that means.

``evaluate(..., buckets="auto")`` (the default) estimates the peak memory of
evaluating a run in one piece from its number of rows, and splits the
queries into as many buckets as it takes for each to fit a budget. The
budget is the smaller of a sixth of the machine's memory and half of the
memory available when the call starts, so a default call neither takes over
a machine nor fails on one that is already busy; ``buckets=N`` overrides it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

__all__ = [
    "BYTES_PER_ROW",
    "MACHINE_SHARE",
    "MAX_AUTO_BUCKETS",
    "AVAILABLE_SHARE",
    "choose_buckets",
    "memory_budget",
    "system_memory",
]

#: Peak bytes of one evaluation per run row, measured on the benchmark
#: shapes (``docs/benchmarks.md``) with the interpreter: 100 million Parquet
#: rows peaked at 5.4 GiB in one piece (55 bytes a row), 28 million TREC
#: text rows at 2.4 GiB (91 bytes a row, the text read whole); rounded up
#: from the heavier.
BYTES_PER_ROW = 96
#: At most this share of the machine's memory ...
MACHINE_SHARE = 1 / 6
#: ... and of the memory available when the call starts.
AVAILABLE_SHARE = 1 / 2
#: ``"auto"`` never splits into more buckets than this: each bucket reads
#: the input again.
MAX_AUTO_BUCKETS = 64


def system_memory() -> tuple[int, int] | None:
    """Return the machine's total and currently available memory in bytes.

    Read from ``/proc/meminfo`` on Linux (``MemTotal``, ``MemAvailable``),
    elsewhere from ``os.sysconf`` (total and free physical pages); None
    where neither says.

    Examples
    --------
    >>> found = system_memory()
    >>> found is None or 0 < found[1] <= found[0]
    True
    """
    try:
        fields = {}
        for line in Path("/proc/meminfo").read_text().splitlines():
            name, _, rest = line.partition(":")
            fields[name] = int(rest.split()[0]) * 1024
        total, available = fields["MemTotal"], fields["MemAvailable"]
    except (OSError, KeyError, ValueError, IndexError):
        try:
            page = os.sysconf("SC_PAGE_SIZE")
            total = os.sysconf("SC_PHYS_PAGES") * page
            available = os.sysconf("SC_AVPHYS_PAGES") * page
        except (AttributeError, ValueError, OSError):
            return None
    if total <= 0 or available <= 0:
        return None
    return total, min(available, total)


def memory_budget(memory: tuple[int, int] | None = None) -> int | None:
    """Bytes one evaluation may take, or None when the memory is unknown.

    Parameters
    ----------
    memory : (int, int), optional
        Total and available bytes; read with :func:`system_memory` when not
        given.

    Examples
    --------
    >>> memory_budget((24 * 2**30, 20 * 2**30)) / 2**30
    4.0
    >>> memory_budget((24 * 2**30, 2 * 2**30)) / 2**30
    1.0
    """
    memory = system_memory() if memory is None else memory
    if memory is None:
        return None
    total, available = memory
    return int(min(total * MACHINE_SHARE, available * AVAILABLE_SHARE))


def choose_buckets(rows: int, budget: int | None) -> int:
    """Return the fewest buckets whose estimated peak fits ``budget`` bytes.

    Parameters
    ----------
    rows : int
        Run rows to evaluate.
    budget : int or None
        From :func:`memory_budget`; None (memory unknown) means one bucket.

    Examples
    --------
    >>> choose_buckets(10_000_000, 4 * 2**30)
    1
    >>> choose_buckets(100_000_000, 4 * 2**30)
    3
    >>> choose_buckets(100_000_000, 2**30)
    9
    >>> choose_buckets(100_000_000, None)
    1
    """
    if budget is None or budget <= 0:
        return 1
    need = rows * BYTES_PER_ROW / budget
    return max(1, min(MAX_AUTO_BUCKETS, math.ceil(need)))
