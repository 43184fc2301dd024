"""The engines' worker threads (``backends/sql/workers.py``): the rules of the hand-off."""

from __future__ import annotations

import asyncio
import threading

import pytest

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


async def test_a_job_whose_caller_stopped_waiting_before_it_started_does_not_run() -> None:
    workers = Workers("T", size=1)
    entered, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def first() -> None:
        entered.set()
        release.wait()

    try:
        busy = asyncio.ensure_future(workers.run(first))
        await asyncio.get_running_loop().run_in_executor(None, entered.wait)
        waiting = asyncio.ensure_future(workers.run(ran.append, "second"))
        await asyncio.sleep(0)
        waiting.cancel()
        release.set()
        await busy
        assert await workers.run(ran.append, "third") is None
        assert ran == ["third"]
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
