"""The registry's schema work off the broker's loop: a process of its own runs the jobs an
operation's steps yield (jobs.py: parsing, compatibility checks), so a check holds neither the loop
nor the interpreter lock the loop needs, and the loop goes on answering Kafka clients.

Operations are taken one at a time (a registration's steps never interleave with another's), at
most MAX_WAITING wait their turn (past that: Confluent's 50002, as when its registry lock cannot be
taken), and each check is bounded by its work budget (json_diff.WORK_BUDGET), so a queued operation
waits for a bounded time. A worker that dies under a job is answered 50001 and replaced by the next.

The process is ``python -m kafkaemu.schema_registry.worker``, started with the first job; a job
and its answer cross a pipe pickled, each after its length (4 bytes). multiprocessing's ``spawn``
would run the embedding program's ``__main__`` again in the worker (a test script that starts a
``KafkaEmulator`` at module level would start another), and ``fork`` would copy a broker whose other
threads may hold locks; this process imports nothing but the schema libraries."""
from __future__ import annotations

import asyncio
import os
import pickle
import sys
import traceback

from ..logging import get_logger
from . import errors as E

log = get_logger("kafkaemu.schema_registry.worker")

MAX_WAITING = 1024


class JobFailed(Exception):
    """A job raised what the registry does not answer (a bug): its traceback, from the worker."""


class SchemaWorker:
    def __init__(self, max_waiting: int = MAX_WAITING) -> None:
        self.max_waiting = max_waiting
        self._process: asyncio.subprocess.Process | None = None
        self._turn = asyncio.Lock()
        self._waiting = 0

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
                try:
                    job = next(steps)
                    while True:
                        job = steps.send(await self._job(job))
                except StopIteration as done:
                    return done.value
            finally:
                self._turn.release()
        finally:
            steps.close()

    async def _started(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
            self._process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kafkaemu.schema_registry.worker", stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, env=env)
        return self._process

    async def _job(self, job):
        process = await self._started()
        data = pickle.dumps(job)
        try:
            process.stdin.write(len(data).to_bytes(4, "big") + data)
            await process.stdin.drain()
            size = int.from_bytes(await process.stdout.readexactly(4), "big")
            ok, value = pickle.loads(await process.stdout.readexactly(size))
        except (OSError, asyncio.IncompleteReadError) as exc:
            if process.returncode is None:
                process.kill()
            await process.wait()
            self._process = None
            log.warning("schema_worker_stopped", returncode=process.returncode)
            raise E.worker_stopped(f"exit status {process.returncode}") from exc
        if ok:
            return value
        if isinstance(value, E.RegistryError):
            raise value
        raise JobFailed(value)

    async def close(self) -> None:
        """Stops the worker, and a job under way with it."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()


def serve(source, sink) -> None:
    """The worker's side: each job read from ``source`` run, its result (or the RegistryError it
    raised, or the traceback of anything else) written to ``sink``."""
    while True:
        head = source.read(4)
        if len(head) < 4:
            return
        job = pickle.loads(source.read(int.from_bytes(head, "big")))
        try:
            answer = (True, job())
        except E.RegistryError as exc:
            answer = (False, exc)
        except Exception:
            answer = (False, traceback.format_exc())
        data = pickle.dumps(answer)
        sink.write(len(data).to_bytes(4, "big") + data)
        sink.flush()


if __name__ == "__main__":
    answers = sys.stdout.buffer
    sys.stdout = sys.stderr   # what a library prints goes to the server's stderr, never into the answers
    serve(sys.stdin.buffer, answers)
