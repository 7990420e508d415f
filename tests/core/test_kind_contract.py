"""A group kind is the contract of core/kind.py and nothing else: a fifth, toy kind written here
from that contract alone is built by the coordinator from its factory, and its heartbeats, records,
loading, session timer and deletion all go through the coordinator's table of kinds and its
runtime, as the four built-in kinds' do."""
from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import Enum
from types import SimpleNamespace

from kafkaemu.core.coordinator import GroupCoordinator
from kafkaemu.core.group_api import Group, GroupError, GroupStateEnum
from kafkaemu.core.runtime import AppendError
from kafkaemu.protocol.errors import ErrorCode as E

from .harness import RecordingLog

SESSION_MS = 5_000


class ToyType(Enum):
    TOY = "toy"


class ToyState(GroupStateEnum):
    EMPTY = "Empty"
    STABLE = "Stable"


class ToyRecords:
    """The toy kind's one record: key version 900 + group id, value = its epoch and members."""
    KEY_VERSIONS = (900,)

    @staticmethod
    def encode_key(group_id: str) -> bytes:
        return struct.pack(">h", 900) + group_id.encode()

    @staticmethod
    def decode_key(key: bytes):
        return SimpleNamespace(group_id=key[2:].decode())

    @staticmethod
    def encode_value(group: "ToyGroup") -> bytes:
        return struct.pack(">i", group.epoch) + ",".join(sorted(group.members)).encode()


class ToyGroup(Group):
    type = ToyType.TOY
    protocol_type = "toy"

    def __init__(self, group_id: str) -> None:
        self.group_id, self.epoch, self.members = group_id, 0, set()

    @property
    def state(self) -> ToyState:
        return ToyState.STABLE if self.members else ToyState.EMPTY

    def is_empty(self) -> bool:
        return not self.members

    def validate_offset_commit(self, member_id, instance_id, generation_or_epoch, api_version,
                               is_transactional=False):
        raise GroupError(E.GROUP_ID_NOT_FOUND)

    def validate_offset_fetch(self, member_id, member_epoch) -> None:
        raise GroupError(E.GROUP_ID_NOT_FOUND)

    def validate_offset_delete(self) -> None:
        raise GroupError(E.GROUP_ID_NOT_FOUND)

    def validate_delete_group(self) -> None:
        if self.members:
            raise GroupError(E.NON_EMPTY_GROUP)

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return False

    def offset_expiration_base(self):
        return None

    def tombstone_records(self):
        return [(ToyRecords.encode_key(self.group_id), None)]

    def snapshot(self):
        return self.epoch, set(self.members)

    def restore(self, snapshot) -> None:
        self.epoch, self.members = snapshot


@dataclass
class ToyHeartbeat:
    group_id: str
    member_id: str
    member_epoch: int = 0


class ToyKind:
    """The contract only: type, records, heartbeat, error_answer, leave_group, delete_group,
    offset_committed, replay, after_load; the shared context is all it is given."""
    type = ToyType.TOY
    records = ToyRecords

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.loaded = 0

    def heartbeat(self, req: ToyHeartbeat) -> dict:
        group = self.ctx.groups.get(req.group_id)
        if group is None:
            group = self.ctx.groups[req.group_id] = ToyGroup(req.group_id)
        if req.member_id not in group.members:
            group.members.add(req.member_id)
            group.epoch += 1
            self._write(group)
        self._schedule_session(req.group_id, req.member_id)
        return {"error_code": 0, "member_epoch": group.epoch}

    def _write(self, group: ToyGroup) -> None:
        self.ctx.append(group.group_id, [(ToyRecords.encode_key(group.group_id), ToyRecords.encode_value(group))])

    def _schedule_session(self, group_id: str, member_id: str) -> None:
        key = ("toy-session", group_id, member_id)
        self.ctx.schedule(key, SESSION_MS, lambda: self.ctx.runtime.timer(
            group_id, key, lambda: self._expire(group_id, member_id)))

    def _expire(self, group_id: str, member_id: str) -> None:
        group = self.ctx.groups.get(group_id)
        if group is not None and member_id in group.members:
            group.members.discard(member_id)
            group.epoch += 1
            self._write(group)

    def error_answer(self, code, message=None) -> dict:
        return {"error_code": int(code), "member_epoch": -1}

    def leave_group(self, req) -> dict:
        return {"error_code": int(E.GROUP_ID_NOT_FOUND), "members": []}

    def delete_group(self, group: ToyGroup) -> None:
        del self.ctx.groups[group.group_id]

    def offset_committed(self, group, member_id) -> None:
        pass

    def replay(self, key: bytes, value: bytes | None) -> None:
        group_id = ToyRecords.decode_key(key).group_id
        if value is None:
            self.ctx.groups.pop(group_id, None)
            return
        group = self.ctx.groups.setdefault(group_id, ToyGroup(group_id))
        group.epoch = struct.unpack(">i", value[:4])[0]
        group.members = set(filter(None, value[4:].decode().split(",")))

    def after_load(self) -> None:
        self.loaded += 1
        for group in list(self.ctx.groups.values()):
            if group.type is ToyType.TOY:
                for member_id in group.members:
                    self._schedule_session(group.group_id, member_id)


def coordinator(log: RecordingLog, now_ms: int = 0) -> GroupCoordinator:
    return GroupCoordinator(sink=log, now_ms=now_ms, kinds=[ToyKind])


def test_a_toy_kind_heartbeats_through_the_coordinator_and_writes_its_records():
    log = RecordingLog()
    c = coordinator(log)
    assert c.kind_heartbeat(0, ToyType.TOY, ToyHeartbeat("g", "m1")) == {"error_code": 0, "member_epoch": 1}
    assert c.kind_heartbeat(10, ToyType.TOY, ToyHeartbeat("g", "m2")) == {"error_code": 0, "member_epoch": 2}
    assert [k[:2] for k, _ in log.records] == [struct.pack(">h", 900)] * 2
    assert c.group("g").type is ToyType.TOY and c.group("g").members == {"m1", "m2"}
    assert c.list_groups(20) == [{"group_id": "g", "protocol_type": "toy", "group_state": "Stable",
                                  "group_type": "toy"}]


def test_a_failed_write_of_a_toy_heartbeat_is_reverted_and_answered_by_the_kind():
    log = RecordingLog()
    c = coordinator(log)
    c.kind_heartbeat(0, ToyType.TOY, ToyHeartbeat("g", "m1"))
    log.fail = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    assert c.kind_heartbeat(10, ToyType.TOY, ToyHeartbeat("g", "m2")) == {"error_code": int(E.NOT_COORDINATOR),
                                                                         "member_epoch": -1}
    assert c.group("g").members == {"m1"} and c.group("g").epoch == 1


def test_the_toy_kind_replays_its_records_and_its_timers_restart_on_load():
    log = RecordingLog()
    c = coordinator(log)
    c.kind_heartbeat(0, ToyType.TOY, ToyHeartbeat("g", "m1"))
    c.kind_heartbeat(0, ToyType.TOY, ToyHeartbeat("g", "m2"))
    loaded = coordinator(RecordingLog(), now_ms=1_000)
    loaded.load(list(log.records), 1_000)
    toy = loaded.kinds[ToyType.TOY]
    assert toy.loaded == 1
    assert loaded.group("g").members == {"m1", "m2"} and loaded.group("g").epoch == 2
    # the sessions restarted at load: both expire one session later, each as a write of its own
    loaded.tick(1_000 + SESSION_MS)
    assert loaded.group("g").members == set() and loaded.group("g").epoch == 4


def test_deleting_a_toy_group_goes_through_its_kind():
    log = RecordingLog()
    c = coordinator(log)
    c.kind_heartbeat(0, ToyType.TOY, ToyHeartbeat("g", "m1"))
    assert c.delete_groups(0, ["g"]) == [{"group_id": "g", "error_code": int(E.NON_EMPTY_GROUP)}]
    c.tick(SESSION_MS)
    assert c.delete_groups(SESSION_MS, ["g"]) == [{"group_id": "g", "error_code": 0}]
    assert c.group("g") is None
    assert log.records[-1] == (ToyRecords.encode_key("g"), None)
