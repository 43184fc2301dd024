"""The engines' worker threads (``backends/sql/workers.py``): the rules of the hand-off, and no thread outlives
its pool."""

from __future__ import annotations

import asyncio
import gc
import threading
from pathlib import Path

import pytest

from memstone.backends import open_store
from memstone.backends.sql.workers import Workers


async def test_a_job_runs_off_the_loop_and_its_result_or_error_comes_back() -> None:
    workers = Workers("T", size=2, serial=False)
    try:
        loop_thread = threading.current_thread()
        assert await workers.run(lambda a, b: (a + b, threading.current_thread() is loop_thread), 2, 3) == (5, False)

        def fail() -> None:
            raise KeyError("boom")

        with pytest.raises(KeyError, match="boom"):
            await workers.run(fail)
    finally:
        workers.shutdown()


async def test_jobs_run_side_by_side_up_to_the_size_and_queue_after_it() -> None:
    workers = Workers("T", size=2, serial=False)
    started, release = threading.Semaphore(0), threading.Event()
    names: list[str] = []

    def hold() -> None:
        names.append(threading.current_thread().name)
        started.release()
        release.wait()

    try:
        jobs = [asyncio.ensure_future(workers.run(hold)) for _ in range(3)]
        await asyncio.sleep(0)
        for _ in range(2):  # two threads take a job each while the other two wait
            await asyncio.get_running_loop().run_in_executor(None, started.acquire)
        assert len(set(names)) == 2 and not started.acquire(blocking=False)
        release.set()
        await asyncio.gather(*jobs)
        assert len(names) == 3 and len(set(names)) == 2
    finally:
        release.set()
        workers.shutdown()


async def test_shutdown_lets_the_queued_jobs_finish_and_refuses_new_ones() -> None:
    workers = Workers("T", size=1)
    done: list[int] = []
    jobs = [asyncio.ensure_future(workers.run(done.append, i)) for i in range(5)]
    await asyncio.sleep(0)
    await asyncio.get_running_loop().run_in_executor(None, workers.shutdown)
    await asyncio.gather(*jobs)
    assert done == [0, 1, 2, 3, 4]
    with pytest.raises(RuntimeError):
        await workers.run(done.append, 5)


async def test_a_store_its_caller_forgot_to_close_leaves_no_worker_thread_behind(tmp_path: Path) -> None:
    # Stop 38: a hand-off whose threads held their Workers kept a thread and its open store alive for every store
    # left unclosed (CI's test process had 30 idle engine threads); an unreferenced pool must let its threads go.
    def engine_threads() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("SQLiteEngine")}

    before = engine_threads()
    for i in range(3):
        bundle = await open_store(f"sqlite:///{tmp_path / f'm{i}.db'}")
        await bundle.memory.daemon_health()
        del bundle
    gc.collect()
    for thread in engine_threads() - before:
        thread.join(timeout=30)
    assert engine_threads() - before == set()
