"""The stderr progress bar: drawn on terminals for large work, silent otherwise."""

from __future__ import annotations

import io

import numpy as np

from ireval_df._utils.progress import LARGE_WORK, Progress
from ireval_df.stats.resampling import bootstrap_means


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_draws_on_a_terminal_and_erases():
    stream = Terminal()
    with Progress(4, "bootstrap", stream=stream) as bar:
        bar.update(2)
        bar.update(2)
    text = stream.getvalue()
    assert "\rbootstrap [" in text
    assert "100%" in text
    assert text.endswith("\r")


def test_quiet_when_not_a_terminal_or_small():
    plain = io.StringIO()
    with Progress(4, "bootstrap", stream=plain) as bar:
        bar.update(4)
    assert plain.getvalue() == ""
    small = Terminal()
    with Progress(4, "bootstrap", work=LARGE_WORK - 1, stream=small) as bar:
        bar.update(4)
    assert small.getvalue() == ""
    assert not bar.enabled


def test_resampling_advances_the_bar():
    stream = Terminal()
    bar = Progress(300, "bootstrap", stream=stream)
    bootstrap_means(np.ones((3, 2)), 300, np.random.default_rng(0), bar)
    assert bar.done == 300
    bar.close()
