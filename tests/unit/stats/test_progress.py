"""Progress bars (tqdm): drawn on terminals and in notebooks for large work, silent otherwise.

Every long loop of the library reports: the bootstrap and randomization
tests, bucketed evaluation, click-model fitting (EM), the interleaving
bootstrap. Each is checked here with the work threshold lowered to 0 and
stderr made a terminal.
"""

from __future__ import annotations

import io
import sys
import warnings
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

import ireval_df as ie
from ireval_df._utils import progress
from ireval_df._utils.progress import LARGE_WORK, Progress
from ireval_df.stats.resampling import bootstrap_means

if TYPE_CHECKING:
    import pytest

DATA = "data"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def watch(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    """Stderr is a terminal, every job is large, TQDM_DISABLE unset.

    Called in the test body: pytest puts its own stderr back between a
    fixture's setup and the test.
    """
    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(progress, "LARGE_WORK", 0)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    return stream


def test_draws_on_a_terminal_and_erases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    stream = Terminal()
    with Progress(4, "bootstrap", stream=stream) as bar:
        assert bar.enabled
        bar.update(2)
        bar.update(2)
    text = stream.getvalue()
    assert "bootstrap" in text
    assert "0/4" in text
    assert text.endswith("\r")  # leave=False: the line is wiped on close
    assert bar.done == 4
    assert not bar.enabled


def test_quiet_when_not_a_terminal_or_small(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    plain = io.StringIO()
    with Progress(4, "bootstrap", stream=plain) as bar:
        bar.update(4)
    assert plain.getvalue() == ""
    small = Terminal()
    with Progress(4, "bootstrap", work=LARGE_WORK - 1, stream=small) as bar:
        bar.update(4)
    assert small.getvalue() == ""
    assert not bar.enabled


def test_tqdm_disable_turns_every_bar_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    stream = Terminal()
    with Progress(4, "bootstrap", stream=stream) as bar:
        bar.update(4)
    assert stream.getvalue() == ""
    assert not bar.enabled
    monkeypatch.setenv("TQDM_DISABLE", "0")
    assert Progress(4, "bootstrap", stream=stream).enabled


def test_a_notebook_gets_a_bar_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # in a Jupyter kernel stderr is no terminal; the bar is drawn there all
    # the same (tqdm's widget with ipywidgets, its text bar without)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.setattr(progress, "in_notebook", lambda: True)
    chosen: list[bool] = []
    real = progress._tqdm

    def spy(*, notebook: bool) -> object:
        chosen.append(notebook)
        return real(notebook=False)

    monkeypatch.setattr(progress, "_tqdm", spy)
    stream = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "IProgress not found" warning
        with Progress(4, "bootstrap", stream=stream) as bar:
            bar.update(4)
    assert chosen == [True]
    assert "bootstrap" in stream.getvalue()


def test_not_a_notebook_here() -> None:
    assert not progress.in_notebook()


def test_resampling_advances_the_bar() -> None:
    stream = Terminal()
    bar = Progress(300, "bootstrap", stream=stream)
    bootstrap_means(np.ones((3, 2)), 300, np.random.default_rng(0), bar)
    assert bar.done == 300
    bar.close()


def per_query() -> pl.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ie.evaluate(
            [f"{DATA}/runs/bm25.run", f"{DATA}/runs/hybrid.run"],
            f"{DATA}/qrels.txt",
            ["nDCG@10"],
        )


def test_compare_reports_bootstrap_and_randomization(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watched = watch(monkeypatch)
    frame = per_query()
    ie.compare(frame, baseline="bm25", test="bootstrap", n_resamples=200)
    assert "bootstrap" in watched.getvalue()
    ie.compare(frame, baseline="bm25", test="randomization", n_resamples=200)
    assert "randomization test" in watched.getvalue()


def test_bucketed_evaluation_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    watched = watch(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ie.evaluate(f"{DATA}/runs/bm25.run", f"{DATA}/qrels.txt", ["AP"], buckets=2)
    assert "evaluating buckets" in watched.getvalue()


def test_click_model_fitting_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    watched = watch(monkeypatch)
    from ireval_df.online import fit_click_model

    rng = np.random.default_rng(0)
    n, depth = 200, 5
    log = pl.DataFrame(
        {
            "search_id": np.repeat(np.arange(n), depth),
            "query_id": "q",
            "position": np.tile(np.arange(1, depth + 1), n),
            "doc_id": np.tile(np.arange(depth), n).astype(str),
            "clicked": rng.random(n * depth) < 0.2,
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one ranking: PBM is not identified
        fit_click_model(log, "PBM", iterations=3)
    assert "fitting the click model (EM)" in watched.getvalue()
    fit_click_model(log, "DBN", iterations=3)
    assert "fitting DBN (EM)" in watched.getvalue()
