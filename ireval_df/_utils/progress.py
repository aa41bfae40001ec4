"""A one-line progress bar on stderr for long loops (resampling, buckets).

It draws only when the stream is a terminal and the work is large, so logs,
pipes, CI and doctests stay clean. It is the only place in the library that
talks to the terminal.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["LARGE_WORK", "Progress"]

#: Number of elementary operations (resamples x queries x comparisons)
#: above which a bar is worth drawing.
LARGE_WORK = 50_000_000
_WIDTH = 30
_INTERVAL = 0.1


class Progress:
    """Progress of ``total`` steps, drawn as ``label [#####.....]  45%``.

    Parameters
    ----------
    total : int
        Number of steps (for example resamples).
    label : str
        Text shown before the bar.
    work : int, optional
        Size of the job in elementary operations; below :data:`LARGE_WORK`
        nothing is drawn. None means "large".
    stream : file-like, optional
        Where to draw; ``sys.stderr`` by default. Nothing is drawn unless
        ``stream.isatty()`` is true.

    Examples
    --------
    >>> import io
    >>> with Progress(10, "resampling", stream=io.StringIO()) as bar:
    ...     bar.update(10)
    >>> bar.enabled
    False
    """

    def __init__(
        self,
        total: int,
        label: str,
        *,
        work: int | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.total = max(int(total), 1)
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", None)
        tty = bool(isatty()) if callable(isatty) else False
        self.enabled = tty and (work is None or work >= LARGE_WORK)
        self.done = 0
        self._last = 0.0

    def update(self, steps: int = 1) -> None:
        """Advance by ``steps`` and redraw at most ten times a second."""
        self.done = min(self.total, self.done + steps)
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < _INTERVAL and self.done < self.total:
            return
        self._last = now
        filled = round(_WIDTH * self.done / self.total)
        bar = "#" * filled + "." * (_WIDTH - filled)
        share = 100 * self.done // self.total
        self.stream.write(f"\r{self.label} [{bar}] {share:3d}%")
        self.stream.flush()

    def close(self) -> None:
        """Erase the bar, leaving the terminal line clean."""
        if self.enabled:
            width = len(self.label) + _WIDTH + 8
            self.stream.write("\r" + " " * width + "\r")
            self.stream.flush()
            self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
