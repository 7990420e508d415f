"""What every group of operations shares: the broker, its clock and server, and calling an
operation by name (checked parameters, then the method)."""
from __future__ import annotations

import asyncio
from collections import deque

from ...logging import get_logger
from .. import snapshots as snaps
from ..journal import GroupJournal
from ..params import ControlError, parse_params
from ..table import OPS

log = get_logger("kafkaemu.control")


class ControlBase:
    """The control plane of one broker. ``server`` (a KafkaServer) is needed only by what touches
    sockets: stopping and starting nodes, closing connections on restore; without one (unit tests
    of the core) those parts are skipped."""

    def __init__(self, broker, clock, server=None, journal: GroupJournal | None = None) -> None:
        self.broker = broker
        self.clock = clock
        self.server = server
        self.snapshots: dict[str, snaps.Snapshot] = {}
        self.group_records = snaps.GroupRecords()   # what snapshots copy of __consumer_offsets
        # the server's (recording since the broker started), else one of our own
        self.group_journal = journal if journal is not None else GroupJournal(broker)
        self._moved_by_stop: dict[int, list[tuple[str, int, int]]] = {}
        self._offline_by_stop: dict[int, list[tuple[str, int]]] = {}
        self._waiters: list = []
        self._poll_handle: asyncio.TimerHandle | None = None
        self._poke_scheduled = False

    # -- calling --------------------------------------------------------------------------
    def run(self, name: str, params: dict):
        """Check ``params`` and run operation ``name``: its result, or for an async one a coroutine."""
        spec = OPS.get(name)
        if spec is None:
            raise ControlError(404, f"no control operation {name!r}")
        args = parse_params(name, spec.params, params)
        return getattr(self, name)(**args)

    async def call(self, name: str, params: dict):
        result = self.run(name, params)
        if asyncio.iscoroutine(result):
            result = await result
        self._after_change()
        return result

    def _after_change(self) -> None:
        if self.server is not None:
            self.server.schedule_tick()
        self._poke()

    def _now(self) -> int:
        return self.clock.now_ms()

    def _tick(self) -> None:
        if self.server is not None:
            self.server.tick()
        else:
            self.broker.tick(self._now())

    def _topic(self, topic: str):
        t = self.broker.store.get(topic)
        if t is None:
            raise ControlError(404, f"no topic {topic!r}")
        return t

    def _node(self, node: int) -> int:
        if node not in self.broker.placement.listeners:
            raise ControlError(404, f"no node {node} (nodes: {sorted(self.broker.placement.listeners)})")
        return node

    def _live_target(self, node: int) -> int:
        self._node(node)
        if node in self.broker.placement.stopped_nodes:
            raise ControlError(409, f"node {node} is stopped; start it first")
        return node

    @property
    def journal(self) -> deque[dict]:
        return self.group_journal.entries

    @property
    def journal_next_seq(self) -> int:
        return self.group_journal.next_seq

    # overridden by the awaits' operations
    def _poke(self) -> None:
        pass
