"""A share partition's state as a __share_group_state record, in the layout of Apache Kafka's share
coordinator: key ShareSnapshotKey version 0 (group id, topic id, partition), value
ShareSnapshotValue version 0 (start offset and state batches: runs of offsets with one delivery
state, 0 Available, 2 Acknowledged, 4 Archived, and one delivery count). kafkaemu writes a whole
snapshot at every change (Kafka also writes ShareUpdate deltas between snapshots). Acquired records
are written as Available with their delivery count: after a restart they may be acquired again.

The record goes to partition ``abs(hash("group:topicId:partition")) % partitions`` of the topic, as
Kafka's SharePartitionKey.asCoordinatorKey (topic id as Kafka's Uuid.toString).
"""
from __future__ import annotations

import base64

from ...protocol.catalog import catalog
from ..placement import partition_for
from ..record_format import split, versioned
from .partition import InFlight, PartitionLimits, RecordState, SharePartition

KEY_VERSION = 0
VALUE_VERSION = 0
STATE_CODES = {RecordState.AVAILABLE: 0, RecordState.ACQUIRED: 0, RecordState.ACKNOWLEDGED: 2,
               RecordState.ARCHIVED: 4}
STATES = {0: RecordState.AVAILABLE, 2: RecordState.ACKNOWLEDGED, 4: RecordState.ARCHIVED}


def coordinator_key(group_id: str, topic_id: bytes, index: int) -> str:
    return f"{group_id}:{base64.urlsafe_b64encode(bytes(topic_id)).decode().rstrip('=')}:{index}"


def state_partition(group_id: str, topic_id: bytes, index: int, partitions: int) -> int:
    return partition_for(coordinator_key(group_id, topic_id, index), partitions)


def encode_key(group_id: str, topic_id: bytes, index: int) -> bytes:
    body = catalog().data("ShareSnapshotKey", KEY_VERSION).encode(
        {"group_id": group_id, "topic_id": bytes(topic_id), "partition": index})
    return versioned(KEY_VERSION, body)


def decode_key(data: bytes) -> tuple[str, bytes, int]:
    version, body = split(data)
    if version != KEY_VERSION:
        raise ValueError(f"key version {version} is not a share snapshot key")
    k = catalog().data("ShareSnapshotKey", version).decode(body)
    return k.group_id, bytes(k.topic_id), k.partition


def state_batches(sp: SharePartition) -> list[dict]:
    out: list[dict] = []
    for offset in range(sp.start_offset, sp.end_offset):
        rec = sp.records.get(offset)
        if rec is None:
            continue
        code = STATE_CODES[rec.state]
        last = out[-1] if out else None
        if last is not None and last["last_offset"] == offset - 1 and last["delivery_state"] == code \
                and last["delivery_count"] == rec.delivery_count:
            last["last_offset"] = offset
        else:
            out.append({"first_offset": offset, "last_offset": offset, "delivery_state": code,
                        "delivery_count": rec.delivery_count})
    return out


def encode_value(sp: SharePartition, snapshot_epoch: int) -> bytes:
    body = catalog().data("ShareSnapshotValue", VALUE_VERSION).encode({
        "snapshot_epoch": snapshot_epoch & 0xFFFF, "state_epoch": 0, "leader_epoch": 0,
        "start_offset": sp.start_offset, "state_batches": state_batches(sp)})
    return versioned(VALUE_VERSION, body)


def decode_value(data: bytes, limits: PartitionLimits) -> SharePartition:
    version, body = split(data)
    if version != VALUE_VERSION:
        raise ValueError(f"value version {version} is not a share snapshot value")
    v = catalog().data("ShareSnapshotValue", version).decode(body)
    sp = SharePartition(v.start_offset, limits)
    for b in v.state_batches:
        state = STATES.get(b.delivery_state, RecordState.AVAILABLE)
        for offset in range(max(b.first_offset, v.start_offset), b.last_offset + 1):
            sp.records[offset] = InFlight(state, b.delivery_count)
        sp.end_offset = max(sp.end_offset, b.last_offset + 1)
    sp.written = (sp.start_offset, sp.done_count())
    sp.advance_start()
    return sp
