"""The registry's schema work off the broker's loop: one thread runs the jobs an operation's steps
yield (parsing, compatibility checks), while the loop goes on answering Kafka clients.

Operations are taken one at a time (a registration's steps never interleave with another's), at most
MAX_WAITING wait their turn (past that: Confluent's 50002, as when its registry lock cannot be
taken), and each check is bounded by its work budget (json_diff.WORK_BUDGET), so a queued
operation waits for a bounded time."""
from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from . import errors as E

MAX_WAITING = 1024


class SchemaWorker:
    def __init__(self, max_waiting: int = MAX_WAITING) -> None:
        self.max_waiting = max_waiting
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kafkaemu-schema-registry")
        self._turn = asyncio.Lock()
        self._waiting = 0

    async def run(self, steps):
        """The result of an operation's steps: the steps themselves on the loop, their jobs on the
        worker thread."""
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
                        job = steps.send(await loop.run_in_executor(self._executor, job))
                except StopIteration as done:
                    return done.value
            finally:
                self._turn.release()
        finally:
            steps.close()

    def close(self) -> None:
        """No new jobs; one under way ends within its budget."""
        self._executor.shutdown(wait=False, cancel_futures=True)
