"""Progress bars for long loops (resampling, buckets, click-model fitting), by tqdm.

A bar is drawn only when someone is watching: the stream is a terminal, or
the code runs in a Jupyter kernel (a notebook widget when ``ipywidgets`` is
installed, else tqdm's text bar in the cell's output), and the work is
large. Logs, pipes, CI and doctests stay clean. ``TQDM_DISABLE=1`` in the
environment (tqdm's own switch) turns every bar off.

tqdm is imported only when a bar is drawn, so ``import ireval_df`` does not
load it. This is the only module of the library that talks to the terminal.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["LARGE_WORK", "Progress", "in_notebook"]

#: Number of elementary operations (resamples x queries x comparisons)
#: above which a bar is worth drawing.
LARGE_WORK = 50_000_000
#: Seconds between redraws at most (tqdm's ``mininterval``).
_INTERVAL = 0.1


def in_notebook() -> bool:
    """Whether the code runs in a Jupyter kernel (a notebook, JupyterLab, VS Code).

    Examples
    --------
    >>> in_notebook()
    False
    """
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    if get is None:
        return False
    shell = get()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _switched_off() -> bool:
    value = os.environ.get("TQDM_DISABLE", "").strip().lower()
    return value not in ("", "0", "false", "no", "off")


class Progress:
    """Progress of ``total`` steps, drawn by tqdm as ``label: 45%|####  | 45/100``.

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
        ``stream.isatty()`` is true or the code runs in a notebook.

    Examples
    --------
    >>> import io
    >>> with Progress(10, "resampling", stream=io.StringIO()) as bar:
    ...     bar.update(10)
    >>> bar.enabled, bar.done
    (False, 10)
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
        self.done = 0
        self._bar: Any = None
        stream = sys.stderr if stream is None else stream
        isatty = getattr(stream, "isatty", None)
        tty = bool(isatty()) if callable(isatty) else False
        large = work is None or work >= LARGE_WORK
        notebook = not tty and in_notebook()
        self.enabled = large and (tty or notebook) and not _switched_off()
        if self.enabled:
            self._bar = _tqdm(notebook=notebook)(
                total=self.total,
                desc=label,
                file=stream,
                leave=False,
                mininterval=_INTERVAL,
                dynamic_ncols=True,
            )

    def update(self, steps: int = 1) -> None:
        """Advance by ``steps``; tqdm redraws at most ten times a second."""
        steps = min(steps, self.total - self.done)
        self.done += steps
        if self._bar is not None and steps > 0:
            self._bar.update(steps)

    def close(self) -> None:
        """Remove the bar, leaving the terminal line (or the cell) clean."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
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


def _tqdm(*, notebook: bool) -> Any:
    """Return tqdm's bar class: the notebook widget where it can draw, else text.

    ``tqdm.auto`` makes the same choice but warns when a notebook lacks
    ``ipywidgets``; the text bar is the right fallback there, without a warning.
    """
    if notebook and importlib.util.find_spec("ipywidgets") is not None:
        return importlib.import_module("tqdm.notebook").tqdm
    return importlib.import_module("tqdm").tqdm
