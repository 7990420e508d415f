"""The registry's schema work off the broker's loop: a process of its own runs the jobs an
operation's steps yield (jobs.py: parsing, compatibility checks), so a check holds neither the loop
nor the interpreter lock the loop needs, and the loop goes on answering Kafka clients.

Operations are taken one at a time (a registration's steps never interleave with another's), at
most MAX_WAITING wait their turn (past that: Confluent's 50002, as when its registry lock cannot be
taken), and each check is bounded by its work budget (json_diff.WORK_BUDGET), so a queued operation
waits for a bounded time. The process is started (``spawn``: nothing of the broker's state is
copied into it) with the first job; one that dies under a job is answered 50001 and replaced."""
from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..logging import get_logger
from . import errors as E

log = get_logger("kafkaemu.schema_registry.worker")

MAX_WAITING = 1024


class SchemaWorker:
    def __init__(self, max_waiting: int = MAX_WAITING) -> None:
        self.max_waiting = max_waiting
        self._executor: ProcessPoolExecutor | None = None
        self._turn = asyncio.Lock()
        self._waiting = 0

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        return self._executor

    async def run(self, steps):
        """The result of an operation's steps: the steps themselves on the loop, their jobs in the
        worker process."""
        try:
            if self._waiting >= self.max_waiting:
                raise E.busy(self._waiting)
            self._waiting += 1
            try:
                await self._turn.acquire()
            finally:
                self._waiting -= 1
            try:
                loop = asyncio.get_running_loop()
                try:
                    job = next(steps)
                    while True:
                        job = steps.send(await self._job(loop, job))
                except StopIteration as done:
                    return done.value
            finally:
                self._turn.release()
        finally:
            steps.close()

    async def _job(self, loop, job):
        pool = self._pool()
        try:
            return await loop.run_in_executor(pool, job)
        except BrokenProcessPool as exc:
            log.warning("schema_worker_stopped", reason=str(exc))
            if self._executor is pool:
                self._executor = None
                pool.shutdown(wait=False, cancel_futures=True)
            raise E.worker_stopped(str(exc) or type(exc).__name__) from None

    def close(self) -> None:
        """No new jobs; the process ends after the one under way, which ends within its budget."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
