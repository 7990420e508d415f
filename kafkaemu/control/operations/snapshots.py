"""Snapshots of the whole broker (topics, logs, producer state, groups, offsets, the clock) taken
and brought back, and the reset to an empty broker."""
from __future__ import annotations

import time

from .. import snapshots as snaps
from ..params import ControlError, boolean, text
from ..table import Cli, P, Py, op
from ..views import GroupSnapshot, group_ids
from .base import ControlBase, log

NAME = P(text, required=True, help="the snapshot's name")


class SnapshotOps(ControlBase):
    @op("GET", "/api/snapshots", py=Py("snapshots", lambda: {}, result="snapshots"), cli=Cli("snapshot list"))
    def snapshot_list(self) -> dict:
        """The snapshots taken, with their size."""
        return {"snapshots": [s.summary() for s in self.snapshots.values()]}

    @op("PUT", "/api/snapshots/{name}", name=NAME,
        py=Py("snapshot", lambda name: {"name": name}, doc="Capture the whole broker state under ``name``."),
        cli=Cli("snapshot save", "name"))
    def snapshot_save(self, name: str) -> dict:
        """Capture topics, logs, producer state, groups and offsets (in __consumer_offsets) and the
        clock under ``name`` (replacing a snapshot of that name)."""
        started = time.perf_counter()
        try:
            with snaps.gc_paused():
                snapshot = snaps.take(name, self.broker, self.group_records)
        except MemoryError:
            raise self._too_large(name) from None
        self.snapshots[name] = snapshot
        return {**snapshot.summary(), "took_ms": round((time.perf_counter() - started) * 1000, 3)}

    def _too_large(self, name: str) -> ControlError:
        held = sum(p.batch_store.size_bytes for t in self.broker.store.topics.values() for p in t.partitions)
        log.warning("snapshot_too_large", name=name, log_bytes=held)
        return ControlError(507, f"snapshot {name!r} does not fit in memory: a snapshot holds every partition's "
                                 f"batches in memory ({held} bytes of logs, read from the data directory when "
                                 f"there is one); delete snapshots, delete or retain less data, or give the "
                                 f"emulator more memory", log_bytes=held, snapshots=list(self.snapshots))

    @op("POST", "/api/snapshots/{name}/restore", name=NAME,
        keep_members=P(boolean, default=False,
                       help="load the groups' members too, as a coordinator failover does (default: they rejoin)"),
        py=Py("restore", lambda name, *, keep_members=False: {"name": name, "keep_members": keep_members},
              doc="Bring a snapshot back (client connections are closed; clients reconnect)."),
        cli=Cli("snapshot restore", "name"))
    def snapshot_restore(self, name: str, keep_members: bool) -> dict:
        """Bring a snapshot back: client connections are closed, the data replaced, groups and
        committed offsets reloaded; with a manual clock, the clock returns to the snapshot's time.
        Members of the snapshot's groups are removed (clients rejoin and resume from the restored
        committed offsets) unless ``keep_members``."""
        snapshot = self.snapshots.get(name)
        if snapshot is None:
            raise ControlError(404, f"no snapshot {name!r}", snapshots=list(self.snapshots))
        return self._restore(snapshot, keep_members=keep_members)

    def _restore(self, snapshot: snaps.Snapshot, clock: bool = True, keep_members: bool = False) -> dict:
        started = time.perf_counter()
        closed = self.server.close_connections() if self.server is not None else 0
        if clock and self.clock.manual:
            self.clock.set(snapshot.now_ms)
        now = self._now()
        self.broker.now_ms = now
        with snaps.gc_paused():
            snaps.restore(snapshot, self.broker)
            self.broker.group_configs = snaps.current_group_configs(self.broker)
            self.broker.shares = snaps.load_share_partitions(self.broker, now)
            self.broker.coordinator = snaps.load_groups(snapshot, self.broker, now)
            self.broker.txn_coordinator = self.broker.new_transaction_coordinator(now)
        self.group_records = snapshot.group_records.copy()
        self.group_journal.watch(self.broker.coordinator)
        if not keep_members:
            self._remove_members(now)
        log.info("snapshot_restored", name=snapshot.name, connections_closed=closed)
        return {"name": snapshot.name, "connections_closed": closed, "now_ms": now,
                "took_ms": round((time.perf_counter() - started) * 1000, 3)}

    def _remove_members(self, now: int) -> None:
        """Every member leaves its group (the coordinator's LeaveGroup path), so that no member of
        the snapshot's time waits out a session the restored clients will not continue."""
        from ...core.classic.requests import LeaveGroup, LeavingMember
        coordinator = self.broker.coordinator
        for group_id in group_ids(self.broker):
            members = GroupSnapshot(self.broker, group_id).members()
            if members:
                coordinator.leave_group(now, LeaveGroup(group_id, [
                    LeavingMember(m["member_id"], m["instance_id"], "restored by kafkaemu control") for m in members]))
        for group_id in list(coordinator.share.groups):   # share and streams groups have no LeaveGroup
            coordinator.remove_share_members(now, group_id)
        for group_id in list(coordinator.streams.groups):
            coordinator.remove_streams_members(now, group_id)

    @op("DELETE", "/api/snapshots/{name}", name=NAME, py=Py("delete_snapshot", lambda name: {"name": name}),
        cli=Cli("snapshot delete", "name"))
    def snapshot_delete(self, name: str) -> dict:
        """Forget a snapshot."""
        snapshot = self.snapshots.pop(name, None)
        if snapshot is None:
            raise ControlError(404, f"no snapshot {name!r}", snapshots=list(self.snapshots))
        return snapshot.summary()

    @op("POST", "/api/reset", py=Py("reset", lambda: {}, doc="Back to an empty broker: no topics, groups, offsets, "
                                                             "faults or caps (snapshots stay)."),
        cli=Cli("reset"))
    async def reset(self) -> dict:
        """Back to an empty broker as started: no topics, groups, offsets or producer state, no
        fault rules, version caps or logged requests, every node running and registered with its own
        partitions, the metadata quorum the first node alone.
        The clock, the request log's settings and the snapshots stay."""
        started = time.perf_counter()
        for node in sorted(self.broker.placement.stopped_nodes):
            await self.node_start(node, restore_leaders=False)
        self._moved_by_stop.clear()
        self._offline_by_stop.clear()
        for node in sorted(self.broker.placement.unregistered):
            self.broker.placement.register(node)
        self.broker.quorum.reset()
        self.broker.placement.clear_moved_leaders()
        self.broker.broker_configs.reset()
        self.broker.group_configs.clear()
        self.broker.faults.clear()
        self.broker.interceptor.version_caps.clear()
        self.broker.interceptor.log.clear()
        self.journal.clear()
        result = self._restore(snaps.empty(self.broker), clock=False)
        return {"connections_closed": result["connections_closed"],
                "took_ms": round((time.perf_counter() - started) * 1000, 3)}
