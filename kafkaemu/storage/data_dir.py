"""Optional data directory: the log store survives a restart or a kill.

Layout (close to Kafka's, so its tools can read the logs)::

    <data dir>/topics.json                               topics: name, id, partitions, configs, internal
    <data dir>/<topic>-<partition>/00000000000000000000.log   the stored batches, byte for byte
    <data dir>/<topic>-<partition>/log-start-offset           the log start offset

Transaction markers are ordinary (control) batches in the segment file; producer and transaction
state (open transactions, the aborted index) is rebuilt on load by replaying the batches.

Appends are written to the partition's file at once (unbuffered, so a killed process loses
nothing the broker acknowledged; there is no fsync, so a power loss can). Moving the log start
(DeleteRecords, retention) and compaction rewrite the partition's files through a temporary
file and a rename. Topic metadata is rewritten on topic creation/deletion/growth and checked at
each store tick (configs change in place).

On load each partition file is recovered as Kafka's LogSegment.recover does: batches are read
while they are whole, of a sane length and magic, pass their CRC and follow the previous batch's
offsets; from the first one that does not (a write cut by a kill, zeros or garbage after a crash, a
flipped bit) the file is truncated, with a warning naming the partition, the first offset lost
and the bytes dropped. The dropped bytes are kept beside the segment (``<segment>.corrupt-<byte
position>``) rather than destroyed. A server with a damaged data directory starts.
"""
from __future__ import annotations

import json
import os
import shutil

import structlog

import struct

from .record_batch import HEADER_SIZE, LOG_OVERHEAD, MAGIC_OFFSET, crc_ok, parse_header

log = structlog.get_logger("kafkaemu.storage")

META = "topics.json"
SEGMENT = "00000000000000000000.log"
LOG_START = "log-start-offset"


def _write_atomically(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


class DataDir:
    def __init__(self, path: str) -> None:
        self.path = path
        os.makedirs(path, exist_ok=True)
        self._files: dict[int, object] = {}   # id(partition log) -> open append handle
        self._meta: bytes = b""

    # -- wiring ---------------------------------------------------------------------------
    def attach(self, store) -> None:
        """Load what the directory holds into ``store`` (which must be empty), then persist every change."""
        self._load(store)
        store.persistence = self
        for topic in store.topics.values():
            for plog in topic.partitions:
                plog.persistence = self
        self.topics_changed(store)

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()

    # -- change notifications (called by LogStore / PartitionLog) --------------------------
    def topics_changed(self, store) -> None:
        meta = json.dumps({"topics": [
            {"name": t.name, "id": t.topic_id.hex(), "partitions": len(t.partitions), "configs": t.configs,
             "internal": t.internal} for t in store.topics.values()]}, sort_keys=True).encode()
        if meta != self._meta:
            _write_atomically(os.path.join(self.path, META), meta)
            self._meta = meta

    def topic_deleted(self, topic) -> None:
        for plog in topic.partitions:
            f = self._files.pop(id(plog), None)
            if f is not None:
                f.close()
            shutil.rmtree(self._dir(topic.name, plog.index), ignore_errors=True)

    def appended(self, plog, batches) -> None:
        f = self._files.get(id(plog))
        if f is None:
            d = self._dir(plog.topic.name, plog.index)
            os.makedirs(d, exist_ok=True)
            f = self._files[id(plog)] = open(os.path.join(d, SEGMENT), "ab", buffering=0)
        for b in batches:
            f.write(b)

    def rewritten(self, plog) -> None:
        """The partition's stored batches or log start changed other than by appending."""
        d = self._dir(plog.topic.name, plog.index)
        os.makedirs(d, exist_ok=True)
        f = self._files.pop(id(plog), None)
        if f is not None:
            f.close()
        _write_atomically(os.path.join(d, SEGMENT), b"".join(plog.batches()))
        _write_atomically(os.path.join(d, LOG_START), b"%d\n%d\n" % (plog.log_start_offset, plog.high_watermark))

    # -- loading --------------------------------------------------------------------------
    def _dir(self, topic: str, index: int) -> str:
        return os.path.join(self.path, f"{topic}-{index}")

    def _load(self, store) -> None:
        meta_path = os.path.join(self.path, META)
        if not os.path.exists(meta_path):
            return
        with open(meta_path, "rb") as f:
            meta = json.load(f)
        for t in meta["topics"]:
            topic = store.create_topic(t["name"], t["partitions"], t["configs"], internal=t["internal"],
                                       topic_id=bytes.fromhex(t["id"]))
            for plog in topic.partitions:
                self._load_partition(plog)
        log.info("data_dir_loaded", path=self.path, topics=len(store.topics))

    def _load_partition(self, plog) -> None:
        d = self._dir(plog.topic.name, plog.index)
        seg = os.path.join(d, SEGMENT)
        data = b""
        if os.path.exists(seg):
            with open(seg, "rb") as f:
                data = f.read()
        batches, end, next_offset, reason = recover(data)
        start, hw = 0, 0
        start_path = os.path.join(d, LOG_START)
        if os.path.exists(start_path):
            with open(start_path, "rb") as f:
                numbers = [int(x) for x in f.read().split()]
            start, hw = numbers[0], numbers[1] if len(numbers) > 1 else 0
        if end != len(data):
            kept = f"{seg}.corrupt-{end}"
            with open(kept, "wb") as f:
                f.write(data[end:])
            with open(seg, "r+b") as f:
                f.truncate(end)
            log.warning("data_dir_truncated", topic=plog.topic.name, partition=plog.index,
                        offset=max(next_offset, start), position=end, dropped_bytes=len(data) - end,
                        reason=reason, kept_in=kept)
            hw = 0   # the log ends where its valid batches do
        if plog.restore(batches, start, hw):
            self.rewritten(plog)   # max timestamps repaired: store them


def recover(data) -> tuple[list, int, int, str]:
    """The valid prefix of a segment file: (batches, bytes valid, offset after the last valid
    batch, why the rest is not valid or "")."""
    batches = []
    pos, end, next_offset = 0, len(data), 0
    while pos < end:
        if end - pos < LOG_OVERHEAD:
            return batches, pos, next_offset, "partial batch"
        (length,) = struct.unpack_from(">i", data, pos + 8)
        size = length + LOG_OVERHEAD
        if size < HEADER_SIZE:
            return batches, pos, next_offset, f"record batch length {length} below the minimum"
        if end - pos < size:
            return batches, pos, next_offset, "partial batch"
        if data[pos + MAGIC_OFFSET] != 2:
            return batches, pos, next_offset, f"magic {data[pos + MAGIC_OFFSET]}"
        batch = data[pos:pos + size]
        if not crc_ok(batch):
            return batches, pos, next_offset, "CRC mismatch"
        h = parse_header(batch)
        if h.base_offset < next_offset or h.last_offset_delta < 0:
            return batches, pos, next_offset, f"offsets [{h.base_offset}, {h.last_offset}] out of order"
        batches.append(batch)
        next_offset = h.last_offset + 1
        pos += size
    return batches, pos, next_offset, ""
