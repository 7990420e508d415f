"""Producer state snapshots (Kafka's ``<offset>.snapshot`` files, here JSON): the idempotent
producers' epochs and last batches and the open transactions of a partition below an offset, so
a restart replays only the batches after the latest snapshot. Aborted transactions are not in
it: they live in the segments' ``.txnindex`` files."""
from __future__ import annotations

import json
import os
import re

from .files import write_atomically
from .producer_state import BatchMetadata, ProducerEntry, ProducerStateTable

_NAME = re.compile(r"^(\d{20})\.snapshot$")
KEEP = 2


def file_name(offset: int) -> str:
    return f"{offset:020d}.snapshot"


def encode(table: ProducerStateTable, offset: int) -> bytes:
    producers = [[pid, e.epoch, e.coordinator_epoch, e.last_timestamp, e.txn_first_offset, e.last_offset,
                  [[b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp] for b in e.batches]]
                 for pid, e in table.producers.items()]
    return json.dumps({"version": 1, "offset": offset, "producers": producers}).encode()


def decode(data: bytes, table: ProducerStateTable) -> int:
    """Fill ``table`` (empty) from a snapshot; returns the snapshot's offset."""
    doc = json.loads(data)
    ongoing = []
    for pid, epoch, coordinator_epoch, last_ts, txn_first, last_offset, batches in doc["producers"]:
        entry = ProducerEntry(epoch, coordinator_epoch=coordinator_epoch, last_timestamp=last_ts,
                              txn_first_offset=txn_first, last_offset=last_offset)
        for b in batches:
            entry.batches.append(BatchMetadata(*b))
        table.producers[pid] = entry
        if txn_first >= 0:
            ongoing.append((txn_first, pid))
    for first, pid in sorted(ongoing):
        table.ongoing[pid] = first
    return doc["offset"]


def offsets(directory: str) -> list[int]:
    """The offsets of the snapshots in ``directory``, ascending."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for m in map(_NAME.match, names) if m)


def write(directory: str, table: ProducerStateTable, offset: int) -> None:
    write_atomically(os.path.join(directory, file_name(offset)), encode(table, offset))
    for old in offsets(directory)[:-KEEP]:
        delete(directory, old)


def delete(directory: str, offset: int) -> None:
    try:
        os.unlink(os.path.join(directory, file_name(offset)))
    except FileNotFoundError:
        pass
