"""Signals that end a long step, and temporary files that must not outlive it.

Ctrl-C raises ``KeyboardInterrupt`` wherever Python is; SIGTERM, by
default, ends the process on the spot, running no cleanup at all. While a
result is written or a bucketed evaluation runs, :func:`terminate_as_interrupt`
turns SIGTERM into :class:`Terminated` (a ``KeyboardInterrupt``), so the
same cleanup runs for both. :func:`track` remembers a temporary file until
it is removed or renamed into place; whatever a second interrupt keeps the
cleanup from removing is removed when the interpreter exits. Only SIGKILL
(or a crash of the interpreter) can leave one behind.
"""

from __future__ import annotations

import atexit
import secrets
import shutil
import signal
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = [
    "Terminated",
    "remove",
    "scratch_folder",
    "terminate_as_interrupt",
    "track",
    "untrack",
]

#: Temporary files not yet removed or renamed into place, removed at exit.
_PENDING: set[Path] = set()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so that cleanup code runs."""


@contextmanager
def terminate_as_interrupt(*, only_default: bool = False) -> Iterator[None]:
    """Raise :class:`Terminated` on SIGTERM for the duration of the block.

    Parameters
    ----------
    only_default : bool, default False
        Leave a handler the program installed itself in place (a library
        call); False replaces any (the command line owns its process).

    Only the main thread can set a handler; elsewhere nothing changes.
    """

    def terminate(signum: int, frame: Any) -> None:
        raise Terminated

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    current = signal.getsignal(signal.SIGTERM)
    if only_default and current is not signal.SIG_DFL:
        yield
        return
    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, current)


def track(path: Path) -> Path:
    """Remember a temporary file, to be removed at exit unless :func:`untrack` ed."""
    _PENDING.add(path)
    return path


def untrack(path: Path) -> None:
    """Forget a temporary file that was renamed into place."""
    _PENDING.discard(path)


def remove(path: Path) -> None:
    """Remove a temporary file, even if Ctrl-C or SIGTERM arrives meanwhile.

    An interrupt during the removal is held back until the file is gone,
    then raised again. Should one arrive before this is called, the file
    stays tracked and is removed at exit.
    """
    interrupted: BaseException | None = None
    while True:
        try:
            path.unlink(missing_ok=True)
            break
        except KeyboardInterrupt as exc:  # Ctrl-C again, or SIGTERM
            interrupted = exc
        except OSError:
            break  # cannot be removed: nothing more to do here
    _PENDING.discard(path)
    if interrupted is not None:
        raise interrupted


@contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """Give the block a temporary folder, removed after it whatever happens.

    When the block ends by an interrupt, worker threads may still be writing
    into the folder while it is removed: whatever is left then is removed
    at exit, after the interpreter has joined those threads.

    Examples
    --------
    >>> with scratch_folder("ireval_df-doc-") as folder:
    ...     _ = (folder / "part").write_text("x")
    >>> folder.exists()
    False
    """
    folder = _new_folder(prefix)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            untrack(folder)


def _new_folder(prefix: str) -> Path:
    """Make a private temporary folder, tracked before it exists.

    ``tempfile.mkdtemp`` then :func:`track` would leave a window in which
    SIGTERM (or Ctrl-C), arriving once the folder exists but before it is
    tracked, leaks it. The name is drawn first (128 random bits: it names
    no other folder) and tracked, then the folder is made.
    """
    base = Path(tempfile.gettempdir())
    while True:
        path = track(base / f"{prefix}{secrets.token_hex(16)}")
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            untrack(path)
            continue
        return path


@atexit.register
def _remove_pending() -> None:
    for path in list(_PENDING):
        try:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        except OSError:
            pass
    _PENDING.clear()
