"""A broker, its Control and sans-IO clients (bytes in, bytes out through the real connection,
codecs and handlers) on a manual clock, for unit tests of the control operations."""
from __future__ import annotations

import asyncio
import struct

from kafkaemu.clock import ManualClock
from kafkaemu.control.operations import Control
from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.wire.connection import Connection
from kafkaemu.wire.framing import FrameDecoder, frame
from tests.conftest import T0, new_broker



def subscription(*topics: str) -> bytes:
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def assignment(parts: dict[str, list[int]]) -> bytes:
    out = struct.pack(">hi", 0, len(parts))
    for t, ps in parts.items():
        out += struct.pack(">h", len(t)) + t.encode() + struct.pack(f">i{len(ps)}i", len(ps), *ps)
    return out + struct.pack(">i", -1)


class Client:
    """One connection: ``send`` queues a request, ``replies`` decodes what came back so far."""

    _ids = iter(range(1, 1 << 30))

    def __init__(self, env: "Env", client_id: str = "c", node_id: int | None = None) -> None:
        self.env = env
        self.client_id = client_id
        self.conn = Connection(env.broker, REGISTRY, next(self._ids), "127.0.0.1", node_id=node_id,
                               on_close=self._closed)
        self.cid = 0
        self.pending: list[tuple[int, int]] = []   # (api key, version) in request order
        self.decoder = FrameDecoder(1 << 30)
        self.aborted = False

    def _closed(self) -> None:
        self.aborted = True

    def send(self, api_key: int, version: int, body: dict) -> None:
        self.cid += 1
        cat = catalog()
        flexible = cat.is_flexible_request(api_key, version)
        header = cat.data("RequestHeader", 2 if flexible else 1).encode(
            {"request_api_key": api_key, "request_api_version": version, "correlation_id": self.cid,
             "client_id": self.client_id})
        self.pending.append((api_key, version))
        self.conn.receive(frame(header, cat.request(api_key, version).encode(body)), self.env.clock.now_ms())

    def replies(self) -> list:
        out = []
        for body in self.decoder.feed(self.conn.take_output()):
            api_key, version = self.pending.pop(0)
            flexible = catalog().is_flexible_request(api_key, version) and api_key != ApiKey.API_VERSIONS
            out.append(catalog().response(api_key, version).decode(body[5 if flexible else 4:]))
        return out

    def call(self, api_key: int, version: int, body: dict):
        self.send(api_key, version, body)
        got = self.replies()
        return got[-1] if got else None

    # -- what clients send -----------------------------------------------------------------
    def produce(self, topic: str, partition: int, values: list[bytes], acks: int = -1, producer: tuple = (-1, -1, -1)):
        pid, epoch, seq = producer
        batch = build_batch([(None, v, [], self.env.clock.now_ms()) for v in values], producer_id=pid,
                            producer_epoch=epoch, base_sequence=seq)
        return self.call(ApiKey.PRODUCE, 9, {"transactional_id": None, "acks": acks, "timeout_ms": 1000, "topic_data": [
            {"name": topic, "partition_data": [{"index": partition, "records": batch}]}]})

    def produce_many(self, topic: str, partitions: list[int]):
        batches = {p: build_batch([(None, b"v%d" % p, [], self.env.clock.now_ms())]) for p in partitions}
        return self.call(ApiKey.PRODUCE, 9, {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
            {"name": topic, "partition_data": [{"index": p, "records": b} for p, b in batches.items()]}]})

    def join(self, group: str, member_id: str = "", topics=("t",), instance: str | None = None,
             session_ms: int = 10000) -> None:
        self.send(ApiKey.JOIN_GROUP, 9, {
            "group_id": group, "session_timeout_ms": session_ms, "rebalance_timeout_ms": 30000, "member_id": member_id,
            "group_instance_id": instance, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": subscription(*topics)}], "reason": None})

    def sync(self, group: str, generation: int, member_id: str, assignments: dict[str, bytes] | None = None,
             instance: str | None = None) -> None:
        self.send(ApiKey.SYNC_GROUP, 5, {
            "group_id": group, "generation_id": generation, "member_id": member_id, "group_instance_id": instance,
            "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": m, "assignment": a} for m, a in (assignments or {}).items()]})

    def heartbeat(self, group: str, generation: int, member_id: str, instance: str | None = None):
        return self.call(ApiKey.HEARTBEAT, 4, {"group_id": group, "generation_id": generation, "member_id": member_id,
                                               "group_instance_id": instance})

    def commit(self, group: str, topic: str, offsets: dict[int, int], generation: int = -1, member_id: str = ""):
        return self.call(ApiKey.OFFSET_COMMIT, 8, {"group_id": group, "generation_id_or_member_epoch": generation,
                                                   "member_id": member_id, "group_instance_id": None, "topics": [
                                         {"name": topic, "partitions": [
                                             {"partition_index": p, "committed_offset": o,
                                              "committed_leader_epoch": -1, "committed_metadata": ""}
                                             for p, o in offsets.items()]}]})

    def fetch(self, topic: str, partition: int, offset: int = 0):
        return self.call(ApiKey.FETCH, 11, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                                            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
                                         {"topic": topic, "partitions": [
                                             {"partition": partition, "current_leader_epoch": -1,
                                              "fetch_offset": offset, "log_start_offset": -1,
                                              "partition_max_bytes": 1 << 20}]}],
                                            "forgotten_topics_data": [], "rack_id": ""})


class Env:
    def __init__(self, manual: bool = True, **settings) -> None:
        from kafkaemu.clock import SystemClock
        self.clock = ManualClock(T0) if manual else SystemClock()
        settings.setdefault("group_initial_rebalance_delay_ms", 0)  # joins complete without advancing the clock
        self.broker = new_broker(self.clock.now_ms(), **settings)
        for i, n in enumerate(self.broker.placement.node_ids):
            self.broker.placement.listeners[n] = ("127.0.0.1", 19092 + i)
        self.control = Control(self.broker, self.clock)

    def client(self, client_id: str = "c", node_id: int | None = None) -> Client:
        return Client(self, client_id, node_id)

    def op(self, name: str, /, **params):
        """Run an operation as the HTTP API and KafkaEmulator do (async ones on a fresh loop)."""
        result = self.control.run(name, params)
        if asyncio.iscoroutine(result):
            result = asyncio.run(result)
        return result

    def two_member_group(self, group: str = "g", topic: str = "t", partitions: int = 4):
        """A Stable group of members A (client id "a", leader) and B (client id "b") holding
        halves of ``topic``; returns (client a, member a, client b, member b, generation)."""
        if self.broker.store.get(topic) is None:
            self.broker.topics.create(topic, partitions, {})
        node = self.broker.placement.group_coordinator(group)
        a, b = self.client("a", node), self.client("b", node)
        a.join(group)
        mid_a = a.replies()[-1].member_id
        a.join(group, mid_a)
        assert a.replies()[-1].generation_id == 1
        b.join(group)
        mid_b = b.replies()[-1].member_id
        b.join(group, mid_b)            # parked: the group rebalances
        assert a.heartbeat(group, 1, mid_a).error_code == 27   # REBALANCE_IN_PROGRESS
        a.join(group, mid_a)            # everyone joined: generation 2
        gen = a.replies()[-1].generation_id
        assert b.replies()[-1].generation_id == gen == 2
        half = partitions // 2
        a.sync(group, gen, mid_a, {mid_a: assignment({topic: list(range(half))}),
                                   mid_b: assignment({topic: list(range(half, partitions))})})
        assert a.replies()[-1].error_code == 0
        b.sync(group, gen, mid_b)
        assert b.replies()[-1].error_code == 0
        return a, mid_a, b, mid_b, gen
