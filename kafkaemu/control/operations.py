"""Every test control, implemented once: the HTTP API (control/http.py) and ``KafkaEmulator``
in-process call these same operations, on the broker's loop.

An operation is a ``Control`` method registered with ``@op(METHOD, PATH, **params)``: OPS maps
its name to the route, the parameters (kafkaemu.control.params checks them the same way for JSON
bodies, query strings and Python calls) and whether it is a coroutine (awaits, node start/stop).
Results are JSON values. A refused call raises ControlError with its HTTP status; nothing is
changed by a call that is refused.
"""
from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

import structlog

from ..faults import FaultRule
from ..protocol.catalog import catalog
from ..storage.log_store import OFFSETS_TOPIC
from ..storage.transaction_state_topic import TRANSACTION_STATE_TOPIC
from . import snapshots as snaps
from .intercept import error_name
from .params import (AwaitTimeout, ControlError, Param, api_key, bad, boolean, choice, duration_ms, error_code, integer,
                     parse_params, text, timestamp_ms)
from .views import GroupSnapshot, group_ids, high_watermark, member_names, state_key, topic_view

log = structlog.get_logger("kafkaemu.control")

MAX_AWAIT_MS = 3_600_000
POLL_INTERVAL_S = 0.01   # how often pending awaits re-check besides after every reply
GROUP_STATES = ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead",  # classic
                "Assigning", "Reconciling")                                                # consumer (KIP-848)


@dataclass(frozen=True)
class Op:
    name: str
    method: str
    path: str
    params: dict[str, Param]
    is_async: bool
    doc: str

    @property
    def path_params(self) -> list[str]:
        return [seg[1:-1] for seg in self.path.split("/") if seg.startswith("{")]

    def describe(self) -> dict:
        return {"op": self.name, "method": self.method, "path": self.path, "doc": self.doc,
                "params": {n: {"required": p.required, "default": p.default, "help": p.help}
                           for n, p in self.params.items()}}


OPS: dict[str, Op] = {}


def op(method: str, path: str, **params: Param):
    def register(fn: Callable) -> Callable:
        OPS[fn.__name__] = Op(fn.__name__, method, path, params, asyncio.iscoroutinefunction(fn),
                              (fn.__doc__ or "").strip().split("\n\n")[0].replace("\n", " "))
        return fn
    return register


def P(parse, required: bool = False, default=None, help: str = "") -> Param:  # noqa: N802 (reads as a type)
    return Param(parse, required, default, help)


def _group_state(name: str, value) -> str:
    if not isinstance(value, str) or state_key(value) not in {state_key(s) for s in GROUP_STATES}:
        raise bad(f"{name} must be a group state ({', '.join(GROUP_STATES)}), got {value!r}")
    return next(s for s in GROUP_STATES if state_key(s) == state_key(value))


def _configs(name: str, value) -> dict:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise bad(f"{name} must be an object of topic configs, got {value!r}")
    return {k: str(v) for k, v in value.items()}


def _timeout(name: str, value) -> int:
    ms = duration_ms(name, value)
    if ms > MAX_AWAIT_MS:
        raise bad(f"{name} must be at most {MAX_AWAIT_MS} ms, got {ms}")
    return ms


TIMEOUT = P(_timeout, required=True, help="how long to wait (ms, or 30s, 2m, ...); required")


class Control:
    """The control plane of one broker. ``server`` (a KafkaServer) is needed only by what touches
    sockets: stopping and starting nodes, closing connections on restore; without one (unit tests
    of the core) those parts are skipped."""

    def __init__(self, broker, clock, server=None) -> None:
        self.broker = broker
        self.clock = clock
        self.server = server
        self.snapshots: dict[str, snaps.Snapshot] = {}
        self.group_records = snaps.GroupRecords()   # what snapshots copy of __consumer_offsets
        self.journal: deque[dict] = deque(maxlen=100_000)
        self.journal_next_seq = 1
        self._moved_by_stop: dict[int, list[tuple[str, int, int]]] = {}
        self._offline_by_stop: dict[int, list[tuple[str, int]]] = {}
        self._waiters: list[tuple[Callable[[], Any], asyncio.Future]] = []
        self._poll_handle: asyncio.TimerHandle | None = None
        self._poke_scheduled = False
        self._watch(broker.coordinator)

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

    # -- overview -------------------------------------------------------------------------
    @op("GET", "/api")
    def routes(self) -> dict:
        """Every operation with its route and parameters."""
        return {"routes": [o.describe() for o in OPS.values()]}

    @op("GET", "/api/state", internal=P(boolean, default=False, help="include __consumer_offsets"))
    def state(self, internal: bool) -> dict:
        """Everything at once (what a dashboard polls): clock, nodes, topics, groups, faults,
        version caps, request log status, snapshots and the journal's next sequence number."""
        return {"clock": self.clock_get(), "nodes": self.nodes()["nodes"],
                "topics": self.topics(internal)["topics"], "groups": self.groups()["groups"],
                "faults": self.faults()["faults"], "api_version_caps": self.api_version_caps()["caps"],
                "request_log": self.broker.interceptor.log.status(), "snapshots": self.snapshot_list()["snapshots"],
                "journal_next_seq": self.journal_next_seq}

    # -- clock ----------------------------------------------------------------------------
    @op("GET", "/api/clock")
    def clock_get(self) -> dict:
        """The broker's time and whether it is the manual clock."""
        now = self._now()
        return {"now_ms": now, "manual": bool(self.clock.manual),
                "iso": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now / 1000)) + f".{now % 1000:03d}Z"}

    def _manual_clock(self):
        if not self.clock.manual:
            raise ControlError(409, "the emulator runs on the system clock; start it with --manual-clock "
                                    "(KafkaEmulator(manual_clock=True)) to move time")
        return self.clock

    @op("POST", "/api/clock/advance", ms=P(duration_ms, required=True, help="how far (ms, or 30s, 5m, ...)"))
    def clock_advance(self, ms: int) -> dict:
        """Move the manual clock forward; every timer due by then fires (session timeouts, delays...)."""
        self._manual_clock().advance(ms)
        self._tick()
        log.info("clock_advanced", ms=ms)
        return self.clock_get()

    @op("POST", "/api/clock/set", now_ms=P(timestamp_ms, required=True,
                                            help="ms since the epoch or an ISO 8601 time, not before now"))
    def clock_set(self, now_ms: int) -> dict:
        """Set the manual clock to a later time (time never runs backwards for the broker)."""
        clock = self._manual_clock()
        if now_ms < clock.now_ms():
            raise ControlError(409, f"now_ms {now_ms} is before the clock's {clock.now_ms()}; time only moves forward "
                                    f"(restore a snapshot to go back)")
        clock.set(now_ms)
        self._tick()
        return self.clock_get()

    # -- member-scoped time ---------------------------------------------------------------
    @op("POST", "/api/groups/{group}/expire", group=P(text, required=True),
        member_id=P(text), instance_id=P(text), client_id=P(text))
    def expire_member(self, group: str, member_id: str | None, instance_id: str | None,
                      client_id: str | None) -> dict:
        """Expire members' sessions now, as if they had stopped heartbeating (chosen by member id,
        group.instance.id or client id); the rest of the group and the clock are untouched."""
        chosen = [v for v in (member_id, instance_id, client_id) if v is not None]
        if len(chosen) != 1:
            raise bad("expire_member: give exactly one of member_id, instance_id, client_id")
        snapshot = GroupSnapshot(self.broker, group)
        if snapshot.classic is None and snapshot.consumer is None:
            raise ControlError(404, f"no group {group!r} with members")
        members = snapshot.members()
        pending = sorted(snapshot.classic.pending_join_members) if snapshot.classic is not None else []
        if member_id is not None:
            victims = [m for m in members if m["member_id"] == member_id]
            if not victims and member_id in pending:
                victims = [{"member_id": member_id, "instance_id": None}]
        elif instance_id is not None:
            victims = [m for m in members if m["instance_id"] == instance_id]
        else:
            victims = [m for m in members if m["client_id"] == client_id]
        if not victims:
            raise ControlError(404, f"group {group!r} has no member with "
                                    f"{'member id' if member_id else 'instance id' if instance_id else 'client id'} "
                                    f"{chosen[0]!r}", members=[m["member_id"] for m in members])
        from ..core.classic.requests import LeaveGroup, LeavingMember  # the coordinator's public LeaveGroup path
        leaving = [LeavingMember(v["member_id"], v["instance_id"], "session expired by kafkaemu control")
                   for v in victims]
        result = self.broker.coordinator.leave_group(self._now(), LeaveGroup(group, leaving))
        failed = {r["member_id"]: error_name(r["error_code"]) for r in result.get("members", []) if r["error_code"]}
        for v in victims:
            log.info("member_expired", group=group, member=v["member_id"])
        after = GroupSnapshot(self.broker, group)
        return {"group": group, "expired": [v["member_id"] for v in victims if v["member_id"] not in failed],
                "failed": failed, "state": after.state, "generation": after.generation}

    # -- faults ---------------------------------------------------------------------------
    @staticmethod
    def _fault_view(rule: FaultRule) -> dict:
        return {"id": rule.id, "api": catalog().api_name(rule.api_key), "api_key": rule.api_key,
                "error": error_name(rule.error_code) if rule.error_code is not None else None,
                "error_code": rule.error_code, "delay_ms": rule.delay_ms, "drop_connection": rule.drop_connection,
                "black_hole": rule.black_hole, "client_id": rule.client_id, "min_version": rule.min_version,
                "max_version": rule.max_version, "node": rule.node_id, "topic": rule.topic,
                "partition": rule.partition, "count": rule.times, "fired": rule.fired, "active": rule.active}

    @op("GET", "/api/faults")
    def faults(self) -> dict:
        """Every rule (spent ones too) with how often it fired."""
        return {"faults": [self._fault_view(r) for r in self.broker.faults.all()]}

    @op("POST", "/api/faults",
        api=P(api_key, required=True, help="API name (Heartbeat) or key (12)"),
        error=P(error_code, help="error name (NOT_COORDINATOR) or code"),
        delay_ms=P(duration_ms, default=0, help="answer this much later (broker clock)"),
        drop_connection=P(boolean, default=False, help="handle, then close the connection without answering"),
        black_hole=P(boolean, default=False, help="never handle nor answer the request"),
        count=P(integer(min=1), default=1, help="how many requests it fails (default 1)"),
        until_removed=P(boolean, default=False, help="fire until removed instead of count times"),
        client_id=P(text), min_version=P(integer(min=0, max=32767)), max_version=P(integer(min=0, max=32767)),
        node=P(integer(min=0)), topic=P(text), partition=P(integer(min=0)))
    def fault_add(self, api: int, error: int | None, delay_ms: int, drop_connection: bool, black_hole: bool,
                  count: int, until_removed: bool, client_id: str | None, min_version: int | None,
                  max_version: int | None, node: int | None, topic: str | None, partition: int | None) -> dict:
        """Add a fault rule; the answer is the rule with its id."""
        if error is None and not delay_ms and not drop_connection and not black_hole:
            raise bad("fault_add: give an error, a delay_ms, drop_connection or black_hole")
        if black_hole and (error is not None or delay_ms or drop_connection):
            raise bad("fault_add: black_hole never answers, so it takes no error, delay_ms or drop_connection")
        if partition is not None and topic is None:
            raise bad("fault_add: partition needs topic")
        if min_version is not None and max_version is not None and min_version > max_version:
            raise bad(f"fault_add: min_version {min_version} is above max_version {max_version}")
        if node is not None and node not in self.broker.listeners:
            raise bad(f"fault_add: no node {node} (nodes: {sorted(self.broker.listeners)})")
        rule = self.broker.faults.add(FaultRule(
            api, error_code=error, delay_ms=delay_ms, drop_connection=drop_connection, black_hole=black_hole,
            client_id=client_id, times=None if until_removed else count, min_version=min_version,
            max_version=max_version, node_id=node, topic=topic, partition=partition))
        log.info("fault_added", rule=rule.id, api=catalog().api_name(api))
        return self._fault_view(rule)

    @op("DELETE", "/api/faults/{id}", id=P(integer(min=1), required=True))
    def fault_remove(self, id: int) -> dict:  # noqa: A002 (the route's name)
        """Remove one rule; the answer is the rule as it was (with how often it fired)."""
        rule = self.broker.faults.remove(id)
        if rule is None:
            raise ControlError(404, f"no fault rule {id}")
        return self._fault_view(rule)

    @op("DELETE", "/api/faults")
    def faults_clear(self) -> dict:
        """Remove every rule."""
        removed = [self._fault_view(r) for r in self.broker.faults.all()]
        self.broker.faults.clear()
        return {"removed": removed}

    # -- topology -------------------------------------------------------------------------
    @op("GET", "/api/nodes")
    def nodes(self) -> dict:
        """Every node with its address and whether it runs."""
        broker = self.broker
        offsets = broker.store.get(OFFSETS_TOPIC)
        leading: dict[int, int] = {}
        for topic in broker.store.topics.values():
            for p in topic.partitions:
                leader = broker.partition_leader(p)
                leading[leader] = leading.get(leader, 0) + 1
        coordinating = {n: sum(1 for p in offsets.partitions if broker.partition_leader(p) == n)
                        for n in broker.listeners}
        return {"nodes": [{"node_id": n, "host": host, "port": port, "running": n not in broker.stopped_nodes,
                           "leader_of": leading.get(n, 0), "offsets_partitions": coordinating[n]}
                          for n, (host, port) in sorted(broker.listeners.items())]}

    def _node(self, node: int) -> int:
        if node not in self.broker.listeners:
            raise ControlError(404, f"no node {node} (nodes: {sorted(self.broker.listeners)})")
        return node

    def _running_nodes(self, excluding: int | None = None) -> list[int]:
        return [n for n in self.broker.node_ids if n not in self.broker.stopped_nodes and n != excluding]

    @op("POST", "/api/nodes/{node}/stop", node=P(integer(min=0), required=True),
        leaders=P(choice("move", "offline"), default="move",
                  help="move: its partitions and coordinators go to running nodes; offline: they have no leader"))
    async def node_stop(self, node: int, leaders: str) -> dict:
        """Stop a node: its listener closes and its connections drop; the partitions it leads (and
        the groups it coordinates) move to the running nodes or go offline."""
        broker = self.broker
        self._node(node)
        if node in broker.stopped_nodes:
            raise ControlError(409, f"node {node} is already stopped")
        others = self._running_nodes(excluding=node)
        if leaders == "move" and not others:
            raise ControlError(409, f"no other node runs to take over node {node}'s partitions; "
                                    f"stop it with leaders=offline")
        moved, offline = [], []
        led = [p for t in broker.store.topics.values() for p in t.partitions if broker.partition_leader(p) == node]
        for i, p in enumerate(led):
            if leaders == "move":
                target = others[i % len(others)]
                broker.move_leader(p.topic.name, p.index, target)
                moved.append((p.topic.name, p.index, target))
            else:
                p.bump_leader_epoch()
                offline.append((p.topic.name, p.index))
        broker.stopped_nodes.add(node)
        self._moved_by_stop[node] = moved
        self._offline_by_stop[node] = offline
        if self.server is not None:
            await self.server.stop_listener(node)
        log.info("node_stopped", node_id=node, moved=len(moved), offline=len(offline))
        return {"node": node, "running": False,
                "moved": [{"topic": t, "partition": p, "leader": n} for t, p, n in moved],
                "offline": [{"topic": t, "partition": p} for t, p in offline]}

    @op("POST", "/api/nodes/{node}/start", node=P(integer(min=0), required=True),
        restore_leaders=P(boolean, default=True, help="move the partitions its stop moved away back to it"))
    async def node_start(self, node: int, restore_leaders: bool) -> dict:
        """Start a stopped node on its port of before; its offline partitions get it back as
        leader, and (by default) those its stop moved away return to it."""
        broker = self.broker
        self._node(node)
        if node not in broker.stopped_nodes:
            raise ControlError(409, f"node {node} is running")
        if self.server is not None:
            try:
                await self.server.start_listener(node)
            except OSError as exc:
                raise ControlError(409, f"node {node} cannot listen on its port again: {exc}") from None
        broker.stopped_nodes.discard(node)
        back = []
        for t, index in self._offline_by_stop.pop(node, []):
            topic = broker.store.get(t)
            if topic is not None and index < len(topic.partitions):
                topic.partitions[index].bump_leader_epoch()  # the offline partition elects its leader again
        for t, index, target in self._moved_by_stop.pop(node, []) if restore_leaders else []:
            topic = broker.store.get(t)
            if topic is not None and index < len(topic.partitions) \
                    and broker.partition_leader(topic.partitions[index]) == target:
                broker.move_leader(t, index, node)
                back.append({"topic": t, "partition": index, "leader": node})
        log.info("node_started", node_id=node, leaders_back=len(back))
        return {"node": node, "running": True, "returned": back}

    def _partition(self, topic: str, partition: int):
        t = self.broker.store.get(topic)
        if t is None:
            raise ControlError(404, f"no topic {topic!r}")
        if partition >= len(t.partitions):
            raise ControlError(404, f"topic {topic!r} has {len(t.partitions)} partitions, no partition {partition}")
        return t.partitions[partition]

    def _live_target(self, node: int) -> int:
        self._node(node)
        if node in self.broker.stopped_nodes:
            raise ControlError(409, f"node {node} is stopped; start it first")
        return node

    @op("POST", "/api/topics/{topic}/partitions/{partition}/leader", topic=P(text, required=True),
        partition=P(integer(min=0), required=True), node=P(integer(min=0), required=True))
    def leader_move(self, topic: str, partition: int, node: int) -> dict:
        """Elect ``node`` leader of a partition (a new leader epoch); clients get
        NOT_LEADER_OR_FOLLOWER from the old leader and follow Metadata."""
        plog = self._partition(topic, partition)
        self._live_target(node)
        epoch = self.broker.move_leader(topic, partition, node)
        return {"topic": topic, "partition": plog.index, "leader": node, "leader_epoch": epoch}

    @op("POST", "/api/groups/{group}/coordinator", group=P(text, required=True),
        node=P(integer(min=0), required=True))
    def coordinator_move(self, group: str, node: int) -> dict:
        """Move a group's coordinator: its __consumer_offsets partition gets a new leader (so do
        the other groups on that partition, listed in the answer)."""
        self._live_target(node)
        index = self.broker.coordinator.partition_for(group)
        epoch = self.broker.move_leader(OFFSETS_TOPIC, index, node)
        sharing = [g for g in group_ids(self.broker) if self.broker.coordinator.partition_for(g) == index]
        return {"group": group, "coordinator": node, "offsets_partition": index, "leader_epoch": epoch,
                "groups_on_partition": sharing}

    @op("POST", "/api/transactions/{transactional_id}/coordinator", transactional_id=P(text, required=True),
        node=P(integer(min=0), required=True))
    def txn_coordinator_move(self, transactional_id: str, node: int) -> dict:
        """Move a transactional id's coordinator: its __transaction_state partition gets a new
        leader; producers get NOT_COORDINATOR from the old node and find the new one."""
        self._live_target(node)
        index = self.broker.txn_coordinator.partition_for(transactional_id)
        epoch = self.broker.move_leader(TRANSACTION_STATE_TOPIC, index, node)
        return {"transactional_id": transactional_id, "coordinator": node, "state_partition": index,
                "leader_epoch": epoch}

    # -- transactions -----------------------------------------------------------------------
    def _transaction(self, transactional_id: str) -> dict:
        state = self.broker.transaction_state(transactional_id)
        if state is None:
            raise ControlError(404, f"no transactional id {transactional_id!r}")
        return _json_transaction(state)

    @op("GET", "/api/transactions/{transactional_id}", transactional_id=P(text, required=True))
    def transaction(self, transactional_id: str) -> dict:
        """A transactional id's state (Kafka's names), pending state, producer id and epoch,
        partitions, timeout, whether its markers are held."""
        return self._transaction(transactional_id)

    @op("POST", "/api/transactions/{transactional_id}/hold", transactional_id=P(text, required=True))
    def transaction_hold(self, transactional_id: str) -> dict:
        """Withhold the id's commit/abort markers until released: EndTxn is answered, the transaction
        stays in PrepareCommit/PrepareAbort and the last stable offset of its partitions stays pinned."""
        self._transaction(transactional_id)
        self.broker.hold_transaction(transactional_id)
        return self._transaction(transactional_id)

    @op("POST", "/api/transactions/{transactional_id}/release", transactional_id=P(text, required=True))
    def transaction_release(self, transactional_id: str) -> dict:
        """Write the markers withheld by hold; ``completed`` says whether a transaction completed."""
        self._transaction(transactional_id)
        completed = self.broker.release_transaction(transactional_id, self._now())
        self._tick()
        return {"completed": completed, **self._transaction(transactional_id)}

    @op("POST", "/api/transactions/{transactional_id}/abort", transactional_id=P(text, required=True))
    def transaction_abort(self, transactional_id: str) -> dict:
        """Abort the id's open transaction as the coordinator does on its own (fencing the epoch)."""
        self._transaction(transactional_id)
        error = self.broker.abort_transaction(transactional_id, self._now())
        self._tick()
        return self._transaction_result(transactional_id, error)

    @op("POST", "/api/transactions/{transactional_id}/time-out", transactional_id=P(text, required=True))
    def transaction_time_out(self, transactional_id: str) -> dict:
        """Make the id's open transaction time out now, whatever the clock."""
        self._transaction(transactional_id)
        error = self.broker.time_out_transaction(transactional_id, self._now())
        self._tick()
        return self._transaction_result(transactional_id, error)

    @op("POST", "/api/transactions/{transactional_id}/fence", transactional_id=P(text, required=True))
    def transaction_fence(self, transactional_id: str) -> dict:
        """Bump the id's epoch as a new producer instance would: the running producer is fenced."""
        self._transaction(transactional_id)
        result = self.broker.fence_producer(transactional_id, self._now())
        self._tick()
        return {"error": error_name(result["error_code"]), **self._transaction(transactional_id)}

    def _transaction_result(self, transactional_id: str, error: str) -> dict:
        if error != "NONE":
            raise ControlError(409, f"transactional id {transactional_id!r}: {error}", txn_error=error,
                               current=self._transaction(transactional_id))
        return {"error": error, **self._transaction(transactional_id)}

    # -- API version caps -----------------------------------------------------------------
    @op("GET", "/api/api-versions")
    def api_version_caps(self) -> dict:
        """The caps set on what ApiVersions advertises, and every API's implemented range."""
        from ..handlers import REGISTRY
        caps = self.broker.interceptor.version_caps
        return {"caps": [{"api": catalog().api_name(k), "api_key": k, "max_version": v}
                         for k, v in sorted(caps.items())],
                "apis": [{"api": catalog().api_name(k), "api_key": k, "min_version": lo, "max_version": hi,
                          "advertised_max": min(hi, caps.get(k, hi))} for k, lo, hi in REGISTRY.versions()]}

    @op("PUT", "/api/api-versions/{api}", api=P(api_key, required=True),
        max_version=P(integer(min=-1, max=32767), required=True,
                      help="highest version advertised; below the lowest implemented, the API is not advertised"))
    def api_version_cap(self, api: int, max_version: int) -> dict:
        """Advertise at most ``max_version`` of an API in ApiVersions (client fallback tests)."""
        self.broker.interceptor.version_caps[api] = max_version
        return {"api": catalog().api_name(api), "api_key": api, "max_version": max_version}

    @op("DELETE", "/api/api-versions/{api}", api=P(api_key, required=True))
    def api_version_uncap(self, api: int) -> dict:
        """Advertise an API's whole range again."""
        if self.broker.interceptor.version_caps.pop(api, None) is None:
            raise ControlError(404, f"{catalog().api_name(api)} has no version cap")
        return {"api": catalog().api_name(api), "api_key": api}

    @op("DELETE", "/api/api-versions")
    def api_version_caps_clear(self) -> dict:
        """Remove every cap."""
        removed = self.api_version_caps()["caps"]
        self.broker.interceptor.version_caps.clear()
        return {"removed": removed}

    # -- request log ----------------------------------------------------------------------
    @op("PUT", "/api/requests/config", enabled=P(boolean), bodies=P(boolean, help="keep decoded request and response"),
        capacity=P(integer(min=1, max=1_000_000), help="entries kept (oldest dropped first)"))
    def request_log_config(self, enabled: bool | None, bodies: bool | None, capacity: int | None) -> dict:
        """Switch the request log on or off, with or without the decoded bodies."""
        self.broker.interceptor.log.configure(enabled, bodies, capacity)
        return self.broker.interceptor.log.status()

    @op("GET", "/api/requests", after=P(integer(min=0), default=0, help="entries with seq above this"),
        limit=P(integer(min=1, max=100_000), default=1000), last=P(integer(min=1, max=100_000),
                                                                   help="only the newest N matching entries"),
        api=P(api_key), client_id=P(text), node=P(integer(min=0)), connection=P(integer(min=0)),
        errors=P(boolean, default=False, help="only entries whose reply holds an error"))
    def requests(self, after: int, limit: int, last: int | None, api: int | None, client_id: str | None,
                 node: int | None, connection: int | None, errors: bool) -> dict:
        """Log entries (oldest first) after a sequence number, optionally filtered; ``next_seq`` is
        what to pass as ``after`` next time."""
        rlog = self.broker.interceptor.log
        found = [e for e in rlog.entries
                 if e["seq"] > after and (api is None or e["api_key"] == api)
                 and (client_id is None or e["client_id"] == client_id) and (node is None or e["node"] == node)
                 and (connection is None or e["connection"] == connection) and (not errors or e["error_codes"])]
        found = found[-last:] if last is not None else found[:limit]
        return {**rlog.status(), "entries": found}

    @op("DELETE", "/api/requests")
    def requests_clear(self) -> dict:
        """Forget the logged entries (the log stays on or off)."""
        self.broker.interceptor.log.clear()
        return self.broker.interceptor.log.status()

    # -- state ----------------------------------------------------------------------------
    @op("GET", "/api/topics", internal=P(boolean, default=False, help="include __consumer_offsets"))
    def topics(self, internal: bool) -> dict:
        """Topics with each partition's leader, log start, high watermark and LSO."""
        return {"topics": [topic_view(self.broker, t) for t in self.broker.store.topics.values()
                           if internal or not t.internal]}

    @op("GET", "/api/topics/{topic}", topic=P(text, required=True))
    def topic(self, topic: str) -> dict:
        """One topic with its partitions and configs."""
        t = self.broker.store.get(topic)
        if t is None:
            raise ControlError(404, f"no topic {topic!r}")
        return topic_view(self.broker, t)

    @op("POST", "/api/topics", name=P(text, required=True), partitions=P(integer(min=1, max=100_000), default=1),
        configs=P(_configs, default=None, help="topic configs as {name: value}"))
    def topic_create(self, name: str, partitions: int, configs: dict | None) -> dict:
        """Create a topic (as CreateTopics would, without a client)."""
        from ..storage.log_store import TopicError
        try:
            topic = self.broker.create_topic(name, partitions, configs or {})
        except TopicError as exc:
            if exc.code.name == "TOPIC_ALREADY_EXISTS":
                raise ControlError(409, str(exc)) from None
            raise bad(str(exc)) from None
        return topic_view(self.broker, topic)

    @op("DELETE", "/api/topics/{topic}", topic=P(text, required=True))
    def topic_delete(self, topic: str) -> dict:
        """Delete a topic (its committed offsets go, as with DeleteTopics)."""
        t = self.broker.store.get(topic)
        if t is None:
            raise ControlError(404, f"no topic {topic!r}")
        if t.internal:
            raise ControlError(409, f"{topic} is internal")
        view = topic_view(self.broker, t)
        self.broker.delete_topic(topic)
        return view

    @op("GET", "/api/groups")
    def groups(self) -> dict:
        """Every group: type, state, generation, member count, coordinator and total lag."""
        return {"groups": [GroupSnapshot(self.broker, g).summary() for g in group_ids(self.broker)]}

    @op("GET", "/api/groups/{group}", group=P(text, required=True))
    def group(self, group: str) -> dict:
        """One group with its members, decoded assignments, committed offsets and lag."""
        snapshot = GroupSnapshot(self.broker, group)
        if not snapshot.exists:
            raise ControlError(404, f"no group {group!r}")
        return snapshot.detail()

    def _watch(self, coordinator) -> None:
        coordinator.transition_listeners.append(self._record_transition)

    def _record_transition(self, t) -> None:
        self.journal.append({"seq": self.journal_next_seq, "at_ms": t.at_ms, "group": t.group_id,
                             "from": t.from_state.value, "to": t.to_state.value, "generation": t.generation_id,
                             "members": member_names(self.broker, t.group_id)})
        self.journal_next_seq += 1

    @op("GET", "/api/journal", group=P(text), after=P(integer(min=0), default=0),
        limit=P(integer(min=1, max=100_000), default=1000))
    def journal_get(self, group: str | None, after: int, limit: int) -> dict:
        """Group state transitions, oldest first (generation is the group epoch for consumer groups),
        each with the group's members at that moment."""
        found = [e for e in self.journal if e["seq"] > after and (group is None or e["group"] == group)][:limit]
        return {"next_seq": self.journal_next_seq, "entries": found}

    # -- awaits ---------------------------------------------------------------------------
    async def _await(self, check: Callable[[], tuple[bool, Any]], timeout_ms: int, what: str) -> dict:
        """Answer as soon as ``check()`` holds (re-checked after every reply the broker sends, after
        every control call, and every 10 ms), or 408 after ``timeout_ms``. ``check`` returns
        (holds, view), the view possibly a callable rendering it."""
        started = time.perf_counter()
        ok, view = check()
        view = view() if callable(view) else view
        if not ok:
            loop = asyncio.get_running_loop()
            future = loop.create_future()
            entry = (check, future)
            self._waiters.append(entry)
            self.broker.interceptor.on_reply = self._poke
            self._schedule_poll()
            try:
                view = await asyncio.wait_for(asyncio.shield(future), timeout_ms / 1000)
            except asyncio.TimeoutError:
                _, view = check()
                view = view() if callable(view) else view
                raise AwaitTimeout(f"timed out after {timeout_ms} ms waiting for {what}",
                                   waited_ms=round((time.perf_counter() - started) * 1000, 1), current=view) from None
            finally:
                if entry in self._waiters:
                    self._waiters.remove(entry)
                if not self._waiters:
                    self.broker.interceptor.on_reply = None
        return {"satisfied": True, "waited_ms": round((time.perf_counter() - started) * 1000, 1), "current": view}

    def _poke(self) -> None:
        """Re-check pending awaits once the current request is done."""
        if self._waiters and not self._poke_scheduled:
            self._poke_scheduled = True
            asyncio.get_running_loop().call_soon(self._check_waiters)

    def _schedule_poll(self) -> None:
        if self._poll_handle is None and self._waiters:
            self._poll_handle = asyncio.get_running_loop().call_later(POLL_INTERVAL_S, self._poll)

    def _poll(self) -> None:
        self._poll_handle = None
        self._check_waiters()
        self._schedule_poll()

    def _check_waiters(self) -> None:
        self._poke_scheduled = False
        for check, future in list(self._waiters):
            if future.done():
                continue
            try:
                ok, view = check()
            except Exception as exc:  # a check must never take the loop down
                log.exception("await_check_failed")
                future.set_exception(ControlError(500, f"await failed: {exc}"))
                continue
            if ok:
                future.set_result(view() if callable(view) else view)

    @op("POST", "/api/await/group", group=P(text, required=True), state=P(_group_state),
        generation=P(integer(min=0), help="at least this generation (group epoch)"),
        members=P(integer(min=0), help="exactly this many members"),
        assigned=P(boolean, default=False, help="Stable with every subscribed partition assigned"),
        timeout_ms=TIMEOUT)
    async def await_group(self, group: str, state: str | None, generation: int | None, members: int | None,
                          assigned: bool, timeout_ms: int) -> dict:
        """Wait until a group is in a state, reaches a generation, has a member count and/or a
        complete assignment (all that are given). A group that does not exist yet is waited for."""
        if state is None and generation is None and members is None and not assigned:
            raise bad("await_group: give state, generation, members and/or assigned")
        wanted = [f"state {state}" if state else "", f"generation >= {generation}" if generation is not None else "",
                  f"{members} members" if members is not None else "", "a complete assignment" if assigned else ""]

        def check():
            g = GroupSnapshot(self.broker, group)
            if not g.exists:
                return False, {"group_id": group, "exists": False}
            ok = ((state is None or state_key(g.state) == state_key(state))
                  and (generation is None or g.generation >= generation)
                  and (members is None or g.member_count == members)
                  and (not assigned or g.fully_assigned()))
            return ok, g.detail   # rendered only when answering
        return await self._await(check, timeout_ms, f"group {group!r}: {', '.join(w for w in wanted if w)}")

    @op("POST", "/api/await/lag", group=P(text, required=True),
        lag=P(integer(min=0), default=0, help="at most this total lag"),
        topic=P(text, help="count every partition of this topic (default: those committed or assigned)"),
        timeout_ms=TIMEOUT)
    async def await_lag(self, group: str, lag: int, topic: str | None, timeout_ms: int) -> dict:
        """Wait until a group's total lag is at most ``lag`` (default 0: it has consumed and
        committed everything)."""
        def check():
            g = GroupSnapshot(self.broker, group)
            current = g.lag(topic)
            return current is not None and current <= lag, {"group_id": group, "lag": current,
                                                             "offsets": g.offsets_view()}
        return await self._await(check, timeout_ms, f"group {group!r} to lag at most {lag}"
                                                    + (f" on {topic}" if topic else ""))

    @op("POST", "/api/await/offset", topic=P(text, required=True), partition=P(integer(min=0), required=True),
        offset=P(integer(min=0), required=True),
        group=P(text, help="wait for this group's committed offset instead of the high watermark"),
        timeout_ms=TIMEOUT)
    async def await_offset(self, topic: str, partition: int, offset: int, group: str | None,
                           timeout_ms: int) -> dict:
        """Wait until a partition's high watermark (or a group's committed offset) reaches ``offset``."""
        def check():
            if group is None:
                current = high_watermark(self.broker, topic, partition)
            else:
                committed = self.broker.coordinator.offsets.store.get(group, topic, partition)
                current = committed.offset if committed is not None else None
            return current is not None and current >= offset, {"topic": topic, "partition": partition,
                                                               "group": group, "offset": current}
        what = f"{topic}-{partition} to reach offset {offset}" + (f" committed by {group!r}" if group else "")
        return await self._await(check, timeout_ms, what)

    # -- snapshots ------------------------------------------------------------------------
    @op("GET", "/api/snapshots")
    def snapshot_list(self) -> dict:
        """The snapshots taken, with their size."""
        return {"snapshots": [s.summary() for s in self.snapshots.values()]}

    @op("PUT", "/api/snapshots/{name}", name=P(text, required=True))
    def snapshot_save(self, name: str) -> dict:
        """Capture topics, logs, producer state, groups and offsets (in __consumer_offsets) and the
        clock under ``name`` (replacing a snapshot of that name)."""
        started = time.perf_counter()
        with snaps.gc_paused():
            snapshot = snaps.take(name, self.broker, self.group_records)
        self.snapshots[name] = snapshot
        return {**snapshot.summary(), "took_ms": round((time.perf_counter() - started) * 1000, 3)}

    @op("POST", "/api/snapshots/{name}/restore", name=P(text, required=True),
        keep_members=P(boolean, default=False,
                       help="load the groups' members too, as a coordinator failover does (default: they rejoin)"))
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
            self.broker.coordinator = snaps.load_groups(snapshot, self.broker, now)
            self.broker.txn_coordinator = self.broker.new_transaction_coordinator(now)
        self.group_records = snapshot.group_records.copy()
        self._watch(self.broker.coordinator)
        if not keep_members:
            self._remove_members(now)
        log.info("snapshot_restored", name=snapshot.name, connections_closed=closed)
        return {"name": snapshot.name, "connections_closed": closed, "now_ms": now,
                "took_ms": round((time.perf_counter() - started) * 1000, 3)}

    def _remove_members(self, now: int) -> None:
        """Every member leaves its group (the coordinator's LeaveGroup path), so that no member of
        the snapshot's time waits out a session the restored clients will not continue."""
        from ..core.classic.requests import LeaveGroup, LeavingMember
        coordinator = self.broker.coordinator
        for group_id in group_ids(self.broker):
            members = GroupSnapshot(self.broker, group_id).members()
            if members:
                coordinator.leave_group(now, LeaveGroup(group_id, [
                    LeavingMember(m["member_id"], m["instance_id"], "restored by kafkaemu control") for m in members]))

    @op("DELETE", "/api/snapshots/{name}", name=P(text, required=True))
    def snapshot_delete(self, name: str) -> dict:
        """Forget a snapshot."""
        snapshot = self.snapshots.pop(name, None)
        if snapshot is None:
            raise ControlError(404, f"no snapshot {name!r}", snapshots=list(self.snapshots))
        return snapshot.summary()

    @op("POST", "/api/reset")
    async def reset(self) -> dict:
        """Back to an empty broker as started: no topics, groups, offsets or producer state, no
        fault rules, version caps or logged requests, every node running with its own partitions.
        The clock, the request log's settings and the snapshots stay."""
        started = time.perf_counter()
        for node in sorted(self.broker.stopped_nodes):
            await self.node_start(node, restore_leaders=False)
        self._moved_by_stop.clear()
        self._offline_by_stop.clear()
        self.broker.clear_moved_leaders()
        self.broker.faults.clear()
        self.broker.interceptor.version_caps.clear()
        self.broker.interceptor.log.clear()
        self.journal.clear()
        result = self._restore(snaps.empty(self.broker), clock=False)
        return {"connections_closed": result["connections_closed"],
                "took_ms": round((time.perf_counter() - started) * 1000, 3)}


def _json_transaction(state: dict) -> dict:
    return {**state, "partitions": [{"topic": t, "partition": p} for t, p in state["partitions"]]}
