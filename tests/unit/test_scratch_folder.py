"""A scratch folder is never left behind, even if SIGTERM lands as it is made."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ireval_df._utils import signals


def test_an_interrupt_just_after_the_folder_is_made_does_not_leak_it(
    tmp_path, monkeypatch
):
    # SIGTERM raises Terminated (a KeyboardInterrupt) at the next bytecode:
    # here, the instant the folder exists, before the block starts
    monkeypatch.setattr(signals.tempfile, "tempdir", str(tmp_path))
    made = os.mkdir

    def mkdir_then_interrupt(path, mode=0o777, *args, **kwargs):
        made(path, mode, *args, **kwargs)
        raise signals.Terminated

    monkeypatch.setattr(os, "mkdir", mkdir_then_interrupt)
    with (
        pytest.raises(signals.Terminated),
        signals.scratch_folder("ireval_df-test-"),
    ):
        pass  # never reached
    monkeypatch.undo()
    left = list(tmp_path.iterdir())
    assert len(left) == 1
    assert Path(left[0]) in signals._PENDING  # tracked: removed at exit
    signals._remove_pending()
    assert list(tmp_path.iterdir()) == []
