"""_utils.parallel: independent passes on threads, in order, and never nested."""

from __future__ import annotations

import threading

import pytest

from ireval_df._utils import parallel


def test_run_all_returns_results_in_order_on_the_pools_threads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    names = parallel.run_all(
        [lambda i=i: (i, threading.current_thread().name) for i in range(5)]
    )
    assert [i for i, _ in names] == list(range(5))
    assert all(name.startswith("ireval_df-parallel") for _, name in names)


def test_one_worker_runs_every_call_in_this_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parallel, "workers", lambda: 1)
    here = threading.current_thread().name
    assert parallel.run_all([lambda: threading.current_thread().name] * 3) == [here] * 3


def test_a_call_on_a_pool_thread_runs_its_own_calls_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # two workers, each running run_all of two more calls: nested submission
    # to a full pool would wait for ever; nested calls run in their thread
    monkeypatch.setattr(parallel, "workers", lambda: 2)

    def outer() -> list[str]:
        inner = threading.current_thread().name
        return [
            name
            for name in parallel.run_all([lambda: threading.current_thread().name] * 2)
            if name == inner
        ]

    results = parallel.run_all([outer, outer])
    assert [len(r) for r in results] == [2, 2]


def test_an_exception_is_raised_once_every_call_has_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    done: list[int] = []

    def fails() -> None:
        msg = "boom"
        raise ValueError(msg)

    def slow() -> None:
        threading.Event().wait(0.05)
        done.append(1)

    with pytest.raises(ValueError, match="boom"):
        parallel.run_all([fails, slow])
    assert done == [1]
