"""JSON views of the broker's state for the control API: topics with their offsets, groups with
members, decoded assignments, committed offsets and lag.

Everything the control plane reads of the group coordinator goes through this module (its public
``classic.groups``, ``consumer.groups``, ``offsets.store`` and the groups' own attributes), so a
change of the core's shape is answered here.
"""
from __future__ import annotations

import base64
import struct



def kafka_uuid(raw: bytes) -> str:
    """A topic id as Kafka writes it (``Uuid.toString()``: URL-safe base64 without padding)."""
    return base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")


def state_key(name: str) -> str:
    """A group state name in a form where Stable, stable, PREPARING_REBALANCE and
    PreparingRebalance compare equal."""
    return name.replace("_", "").replace("-", "").lower()


# -- topics -----------------------------------------------------------------------------------
def partition_view(broker, plog) -> dict:
    return {"partition": plog.index, "leader": broker.placement.partition_leader(plog),
            "leader_epoch": plog.leader_epoch,
            "log_start_offset": plog.log_start_offset, "high_watermark": plog.high_watermark,
            "last_stable_offset": plog.last_stable_offset, "batches": plog.batch_count,
            "size_bytes": plog.size_bytes}


def topic_view(broker, topic, partitions: bool = True) -> dict:
    view = {"name": topic.name, "topic_id": kafka_uuid(topic.topic_id), "internal": topic.internal,
            "partition_count": len(topic.partitions), "configs": dict(topic.configs)}
    if partitions:
        view["partitions"] = [partition_view(broker, p) for p in topic.partitions]
    return view


def high_watermark(broker, topic: str, partition: int) -> int | None:
    t = broker.store.get(topic)
    if t is None or not 0 <= partition < len(t.partitions):
        return None
    return t.partitions[partition].high_watermark


# -- assignments ------------------------------------------------------------------------------
def decode_assignment(data: bytes) -> dict[str, list[int]] | None:
    """The topics and partitions of a ConsumerProtocolAssignment (every version starts with v0's
    layout), or None when the bytes are not one."""
    try:
        pos = 2
        (count,) = struct.unpack_from(">i", data, pos)
        pos += 4
        out: dict[str, list[int]] = {}
        for _ in range(max(count, 0)):
            (n,) = struct.unpack_from(">h", data, pos)
            pos += 2
            if n < 0 or pos + n > len(data):
                return None
            topic = bytes(data[pos:pos + n]).decode("utf-8")
            pos += n
            (m,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if m < 0 or pos + 4 * m > len(data):
                return None
            out.setdefault(topic, []).extend(struct.unpack_from(f">{m}i", data, pos))
            pos += 4 * m
        return out
    except (struct.error, UnicodeDecodeError):
        return None


def _subscription(metadata: bytes) -> list[str] | None:
    from ..core.classic.subscription import subscription_topics
    try:
        return subscription_topics(metadata)
    except ValueError:
        return None


def _assignment_list(by_topic: dict[str, list[int]]) -> list[dict]:
    return [{"topic": t, "partitions": sorted(ps)} for t, ps in sorted(by_topic.items()) if ps]


# -- groups -----------------------------------------------------------------------------------
class GroupSnapshot:
    """What the control plane knows of one group at this moment (classic, consumer or offsets only)."""

    def __init__(self, broker, group_id: str) -> None:
        coordinator = broker.coordinator
        self.broker = broker
        self.group_id = group_id
        self.classic = coordinator.classic.groups.get(group_id)
        self.consumer = coordinator.consumer.groups.get(group_id)
        self.streams = coordinator.streams.groups.get(group_id)
        self.offsets = coordinator.offsets.store.group(group_id)

    @property
    def exists(self) -> bool:
        return self.classic is not None or self.consumer is not None or self.streams is not None or bool(self.offsets)

    @property
    def type(self) -> str:
        return "consumer" if self.consumer is not None else "streams" if self.streams is not None else "classic"

    @property
    def state(self) -> str:
        if self.consumer is not None:
            return self.consumer.state.value
        if self.streams is not None:
            return self.streams.state.value
        if self.classic is not None:
            return self.classic.state.value
        return "Empty"

    @property
    def generation(self) -> int:
        if self.consumer is not None:
            return self.consumer.group_epoch
        if self.streams is not None:
            return self.streams.group_epoch
        return self.classic.generation_id if self.classic is not None else 0

    @property
    def member_count(self) -> int:
        group = self.consumer or self.streams or self.classic
        return len(group.members) if group is not None else 0

    def members(self) -> list[dict]:
        if self.consumer is not None:
            return [self._consumer_member(m) for m in self.consumer.members.values()]
        if self.streams is not None:
            return [self._streams_member(m) for m in self.streams.members.values()]
        if self.classic is None:
            return []
        return [self._classic_member(m) for m in self.classic.members.values()]

    def _classic_member(self, m) -> dict:
        group = self.classic
        view = {"member_id": m.member_id, "instance_id": m.group_instance_id, "client_id": m.client_id,
                "client_host": m.client_host, "session_timeout_ms": m.session_timeout_ms,
                "rebalance_timeout_ms": m.rebalance_timeout_ms, "leader": m.member_id == group.leader_id}
        subscription = None
        if group.protocol_name is not None and group.protocol_type == "consumer":
            try:
                subscription = _subscription(m.metadata(group.protocol_name))
            except KeyError:
                pass
        view["subscription"] = subscription
        decoded = decode_assignment(m.assignment) if m.assignment and group.protocol_type == "consumer" else None
        if decoded is not None:
            view["assignment"] = _assignment_list(decoded)
        elif m.assignment:
            view["assignment_bytes"] = base64.b64encode(bytes(m.assignment)).decode()
            view["assignment"] = None
        else:
            view["assignment"] = []
        return view

    def _consumer_member(self, m) -> dict:
        store = self.broker.store

        def named(assignment) -> list[dict]:
            by_topic = {}
            for topic_id, parts in assignment.items():
                topic = store.by_id(topic_id)
                by_topic[topic.name if topic is not None else kafka_uuid(topic_id)] = sorted(parts)
            return _assignment_list(by_topic)
        return {"member_id": m.member_id, "instance_id": m.instance_id, "client_id": m.client_id,
                "client_host": m.client_host, "member_epoch": m.member_epoch, "member_state": m.state.value,
                "subscription": list(m.subscribed_topic_names), "subscription_regex": m.subscribed_topic_regex,
                "assignment": named(m.assigned),
                "target_assignment": named(self.consumer.target.get(m.member_id, {}))}

    def _streams_member(self, m) -> dict:
        """A streams member: its tasks, and as its assignment the source partitions its active tasks read."""
        from ..core.streams.describe import task_partitions
        group = self.streams

        def tasks(t) -> dict:
            return {kind: {s: sorted(ps) for s, ps in sorted(getattr(t, kind).items())}
                    for kind in ("active", "standby", "warmup")}
        partitions_of = self.broker.coordinator.streams.partitions_of
        return {"member_id": m.member_id, "instance_id": m.instance_id, "client_id": m.client_id,
                "client_host": m.client_host, "member_epoch": m.member_epoch, "member_state": m.state.name,
                "process_id": m.process_id, "subscription": sorted(group.source_topics()),
                "assignment": [{"topic": p["topic"], "partitions": p["partitions"]}
                               for p in task_partitions(group, m.assigned.active, partitions_of)],
                "tasks": tasks(m.assigned), "target_tasks": tasks(group.target.get(m.member_id, m.assigned))}

    def assigned_partitions(self) -> dict[str, set[int]] | None:
        """topic -> partitions held by some member (None when an assignment cannot be decoded)."""
        held: dict[str, set[int]] = {}
        for member in self.members():
            if member["assignment"] is None:
                return None
            for a in member["assignment"]:
                held.setdefault(a["topic"], set()).update(a["partitions"])
        return held

    def subscribed_topics(self) -> set[str] | None:
        topics: set[str] = set()
        for member in self.members():
            if member["subscription"] is None:
                return None
            topics.update(member["subscription"])
        return topics

    def fully_assigned(self) -> bool:
        """Stable, and every partition of every subscribed topic is held by a member (for
        consumer groups: every member at its target assignment, which Stable means)."""
        if state_key(self.state) != "stable" or self.member_count == 0:
            return False
        held = self.assigned_partitions()
        subscribed = self.subscribed_topics()
        if held is None or subscribed is None:
            return self.classic is not None and not self.classic.pending_sync_members
        for topic in subscribed:
            t = self.broker.store.get(topic)
            if t is not None and held.get(topic, set()) != set(range(len(t.partitions))):
                return False
        return True

    def offsets_view(self) -> list[dict]:
        """Committed offsets with the lag of each, plus assigned partitions without a commit."""
        rows = {}
        for topic, parts in self.offsets.items():
            for partition, committed in parts.items():
                rows[(topic, partition)] = committed
        held = self.assigned_partitions() or {}
        for topic, parts in held.items():
            for partition in parts:
                rows.setdefault((topic, partition), None)
        out = []
        for (topic, partition), committed in sorted(rows.items()):
            hw = high_watermark(self.broker, topic, partition)
            offset = committed.offset if committed is not None else None
            out.append({"topic": topic, "partition": partition, "committed_offset": offset,
                        "metadata": committed.metadata if committed is not None else None,
                        "high_watermark": hw, "lag": self._lag(topic, partition, offset, hw)})
        return out

    def _lag(self, topic: str, partition: int, offset: int | None, hw: int | None) -> int | None:
        if hw is None:
            return None
        if offset is None:  # nothing committed: everything still in the log is behind
            plog = self.broker.store.get(topic).partitions[partition]
            return hw - plog.log_start_offset
        return max(0, hw - offset)

    def lag(self, topic: str | None = None) -> int | None:
        """Total lag over the partitions the group committed or holds (of ``topic``: over all of its
        partitions); None when there is none to count."""
        if topic is not None:
            t = self.broker.store.get(topic)
            if t is None:
                return None
            total = 0
            for plog in t.partitions:
                committed = self.offsets.get(topic, {}).get(plog.index)
                total += self._lag(topic, plog.index, committed.offset if committed else None, plog.high_watermark)
            return total
        rows = self.offsets_view()
        if not rows:
            return None
        return sum(r["lag"] for r in rows if r["lag"] is not None)

    def coordinator(self) -> int:
        return self.broker.placement.group_coordinator(self.group_id)

    def summary(self) -> dict:
        view = {"group_id": self.group_id, "type": self.type, "state": self.state, "generation": self.generation,
                "members": self.member_count, "coordinator": self.coordinator(), "lag": self.lag()}
        if self.classic is not None:
            view["protocol_type"] = self.classic.protocol_type
            view["protocol"] = self.classic.protocol_name
        elif self.streams is not None:
            view["protocol_type"] = "streams"
            view["protocol"] = "sticky"
        elif self.consumer is not None:
            from ..core.consumer.target_assignment import assignor_name
            view["protocol_type"] = "consumer"
            view["protocol"] = assignor_name(self.consumer, list(self.broker.coordinator.consumer.settings.assignors))
        return view

    def detail(self) -> dict:
        view = self.summary()
        view["members"] = self.members()
        view["member_count"] = self.member_count
        view["offsets"] = self.offsets_view()
        view["fully_assigned"] = self.fully_assigned()
        if self.classic is not None:
            view["leader"] = self.classic.leader_id
        if self.consumer is not None:
            view["assignment_epoch"] = self.consumer.assignment_epoch
        if self.streams is not None:
            view["assignment_epoch"] = self.streams.assignment_epoch
        return view


def member_names(broker, group_id: str) -> list[dict]:
    """The members of a group as the journal records them at each transition: member id, client
    id and group.instance.id (cheap: nothing decoded)."""
    coordinator = broker.coordinator
    modern = coordinator.consumer.groups.get(group_id) or coordinator.streams.groups.get(group_id)
    if modern is not None:
        return [{"member_id": m.member_id, "client_id": m.client_id, "instance_id": m.instance_id}
                for m in modern.members.values()]
    classic = coordinator.classic.groups.get(group_id)
    if classic is None:
        return []
    return [{"member_id": m.member_id, "client_id": m.client_id, "instance_id": m.group_instance_id}
            for m in classic.members.values()]


def group_ids(broker) -> list[str]:
    coordinator = broker.coordinator
    ids = set(coordinator.classic.groups) | set(coordinator.consumer.groups) | set(coordinator.streams.groups) \
        | set(coordinator.offsets.store.groups())
    return sorted(ids)
