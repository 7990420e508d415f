"""Optional data directory: the log store survives a restart or a kill.

Layout (Kafka's, so its tools can read the logs)::

    <data dir>/topics.json                          topics: name, id, partitions, configs, internal
    <data dir>/recovery-point-offset-checkpoint     per partition, the offset below which the log is known whole
    <data dir>/.kafka_cleanshutdown                 present while stopped cleanly
    <data dir>/<topic>-<partition>/<base offset>.log        a segment: the stored batches, byte for byte
    <data dir>/<topic>-<partition>/<base offset>.index      its sparse offset index (``offset_index``)
    <data dir>/<topic>-<partition>/<base offset>.timeindex  its time index
    <data dir>/<topic>-<partition>/<base offset>.txnindex   aborted transactions whose marker it holds
    <data dir>/<topic>-<partition>/<offset>.snapshot        producer state below that offset (JSON)
    <data dir>/<topic>-<partition>/leader-epoch-checkpoint  leader epochs and their start offsets
    <data dir>/<topic>-<partition>/log-start-offset         the log start offset (and high watermark)

Segments roll at ``segment.bytes`` (``segmented_log``). Appends are written to the active segment
at once (unbuffered, so a killed process loses nothing the broker acknowledged; there is no fsync,
so a power loss can). Reads go to the files; only the indexes stay in memory.

``topics.json`` is written at each change to a topic (``topics_changed``), as Kafka's controller
appends a metadata record at the change; not on a schedule. The changes of one request are one
write (``LogStore.topic_changes``), as the controller appends one request's records as one batch.

Every ``CHECKPOINT_INTERVAL_MS`` (and at a roll, and on a clean shutdown) producer snapshots are
written at each changed partition's log end, then the recovery point checkpoint. On start
(``recovery``) segments below the recovery point are trusted when their indexes are sane, the
rest is recovered as Kafka's LogSegment.recover does: batches are read while they are whole, of a
sane length and magic, pass their CRC and follow the previous batch's offsets; from the first one
that does not (a write cut by a kill, zeros or garbage after a crash, a flipped bit) the log is
truncated, with a warning naming the partition, the first offset lost and the bytes dropped. The
dropped bytes are kept beside the segment (``<segment>.corrupt-<byte position>``). Producer state
is the latest snapshot plus a replay of the batches after it. A data directory written by an older
kafkaemu (one ``00000000000000000000.log`` per partition) loads as one segment whose indexes are
built on first load. A server with a damaged data directory starts.
"""
from __future__ import annotations

import json
import os

from ..logging import get_logger
from . import checkpoint_files, producer_snapshot
from .files import write_atomically
from .producer_state import AbortedTxn
from .record_batch import parse_header
from .recovery import load_segments
from .segmented_log import SegmentedBatchStore
from .topic_config import is_compacted, validate_topic_config, validate_topic_configs
from .tail_cache import TailBudget

log = get_logger("kafkaemu.storage")

META = "topics.json"
SEGMENT = "00000000000000000000.log"     # the first segment (the only one in an older kafkaemu's layout)
LOG_START = "log-start-offset"
EPOCHS = "leader-epoch-checkpoint"
RECOVERY_POINTS = "recovery-point-offset-checkpoint"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
CHECKPOINT_INTERVAL_MS = 5000
TAIL_CACHE_BYTES = 64 << 20          # BrokerConfig.data_dir_tail_cache_bytes' default


class DataDir:
    def __init__(self, path: str, tail_cache_bytes: int = TAIL_CACHE_BYTES) -> None:
        self.path = path
        self.tail_budget = TailBudget(tail_cache_bytes)   # recent batches kept in memory, over all partitions
        os.makedirs(path, exist_ok=True)
        self._meta_unwritten: bytes | None = None     # topics.json as it should be, when its last write failed
        self._partitions: dict[int, object] = {}       # id(partition log) -> partition log
        self._checkpointed: dict[int, int] = {}        # id(partition log) -> log end at the last checkpoint
        self._next_checkpoint_ms: int | None = None
        self._loading = False
        self._unwritten: set[int] = set()              # id(partition log) whose rewritten() could not write

    # -- wiring ---------------------------------------------------------------------------
    def attach(self, store) -> None:
        """Load what the directory holds into ``store`` (which must be empty), then persist every change."""
        self._load(store)
        store.persistence = self
        for topic in store.topics.values():
            for plog in topic.partitions:
                plog.persistence = self
        self.topics_changed(store)
        try:
            os.unlink(os.path.join(self.path, CLEAN_SHUTDOWN))   # from now on a kill is an unclean shutdown
        except FileNotFoundError:
            pass

    def attach_partition(self, plog) -> None:
        """Keep ``plog``'s batches in segment files (a new, empty partition)."""
        store = SegmentedBatchStore(self._dir(plog.topic.name, plog.index), lambda: plog.configs, self.tail_budget)
        store.on_roll = lambda base: self._rolled(plog, base)
        plog.batch_store = store
        plog.persistence = self
        self._partitions[id(plog)] = plog

    def close(self) -> None:
        """A clean shutdown: producer snapshots and recovery points at the log ends, then the marker."""
        self.checkpoint(force=True)
        for plog in self._partitions.values():
            plog.batch_store.close()
        with open(os.path.join(self.path, CLEAN_SHUTDOWN), "wb"):
            pass

    # -- change notifications (called by LogStore / PartitionLog) --------------------------
    def topics_changed(self, store) -> None:
        """A topic was created or deleted, or its partitions, configs or internal flag changed:
        topics.json is written at once (every such change is made through the LogStore, which
        calls this), so a restart after a kill finds it; one that cannot be written (a full disk)
        is written at the next checkpoint."""
        if self._loading:
            return
        self._write_meta(json.dumps({"topics": [
            {"name": t.name, "id": t.topic_id.hex(), "partitions": len(t.partitions), "configs": t.configs,
             "internal": t.internal} for t in store.topics.values()]}, sort_keys=True).encode())

    def _write_meta(self, meta: bytes) -> None:
        try:
            write_atomically(os.path.join(self.path, META), meta)
        except OSError as exc:
            log.warning("data_dir_write_failed", file=META, error=exc.strerror or str(exc))
            self._meta_unwritten = meta
            return
        self._meta_unwritten = None

    def topic_deleted(self, topic) -> None:
        import shutil
        for plog in topic.partitions:   # its batch stores are closed (LogStore.delete_topic)
            self._partitions.pop(id(plog), None)
            self._checkpointed.pop(id(plog), None)
            shutil.rmtree(self._dir(topic.name, plog.index), ignore_errors=True)

    def aborted(self, plog, txn: AbortedTxn) -> None:
        """An abort marker was appended: index the aborted transaction in the segment holding it."""
        store = plog.batch_store
        seg = store.segments[store._segment_index(txn.last_offset)]
        if not seg.append_aborted(txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset):
            log.warning("txn_index_not_written", topic=plog.topic.name, partition=plog.index,
                        producer_id=txn.producer_id, reason="written later; no producer snapshot goes past it before")

    @staticmethod
    def _aborted_written(plog) -> bool:
        """Every aborted transaction indexed in the files: a producer snapshot past one that is not
        would lose it on a restart (recovery replays only the batches after the snapshot)."""
        return all(seg.flush_aborted() for seg in plog.batch_store.segments if seg.txn_backlog)

    def rewritten(self, plog) -> None:
        """The partition's log start, leader epochs or batches changed other than by appending
        (files that cannot be written now are written at the next checkpoint)."""
        try:
            self._write_partition_state(plog)
            self._unwritten.discard(id(plog))
        except OSError as exc:
            log.warning("data_dir_write_failed", topic=plog.topic.name, partition=plog.index,
                        error=exc.strerror or str(exc))
            self._unwritten.add(id(plog))

    def _write_partition_state(self, plog) -> None:
        d = self._dir(plog.topic.name, plog.index)
        os.makedirs(d, exist_ok=True)
        write_atomically(os.path.join(d, LOG_START), b"%d\n%d\n" % (plog.log_start_offset, plog.high_watermark))
        lines = ["0", str(len(plog.epochs))] + [f"{e} {s}" for e, s in plog.epochs]
        write_atomically(os.path.join(d, EPOCHS), ("\n".join(lines) + "\n").encode())

    def state_replaced(self, plog) -> None:
        """A control snapshot restore: the producer state no longer follows from the old snapshots."""
        self.rewritten(plog)
        d = self._dir(plog.topic.name, plog.index)
        for offset in producer_snapshot.offsets(d):
            producer_snapshot.delete(d, offset)
        producer_snapshot.write(d, plog.producers, plog.high_watermark)
        self._write_recovery_points()

    def _rolled(self, plog, base: int) -> None:
        if not self._aborted_written(plog):
            return
        try:
            producer_snapshot.write(self._dir(plog.topic.name, plog.index), plog.producers, base)
        except OSError as exc:   # a snapshot only shortens the replay on start
            log.warning("producer_snapshot_not_written", topic=plog.topic.name, partition=plog.index,
                        error=exc.strerror or str(exc))

    # -- checkpoints ------------------------------------------------------------------------
    def tick(self, now_ms: int) -> None:
        if self._next_checkpoint_ms is None or now_ms >= self._next_checkpoint_ms:
            self._next_checkpoint_ms = now_ms + CHECKPOINT_INTERVAL_MS
            self.checkpoint()

    def next_deadline_ms(self) -> int | None:
        return self._next_checkpoint_ms

    def checkpoint(self, force: bool = False) -> None:
        """Producer snapshots at the log end of every partition that changed, then the recovery
        points. What cannot be written (a full disk) is logged and tried again at the next one."""
        if self._meta_unwritten is not None:
            self._write_meta(self._meta_unwritten)
        changed = False
        for key in list(self._unwritten):
            if key in self._partitions:
                self.rewritten(self._partitions[key])
            else:
                self._unwritten.discard(key)
        for key, plog in self._partitions.items():
            end = plog.high_watermark
            if self._checkpointed.get(key) != end or force:
                if plog.batch_store.segments:
                    if not self._aborted_written(plog):
                        continue
                    try:
                        producer_snapshot.write(self._dir(plog.topic.name, plog.index), plog.producers, end)
                    except OSError as exc:
                        log.warning("checkpoint_failed", topic=plog.topic.name, partition=plog.index,
                                    error=exc.strerror or str(exc))
                        continue
                self._checkpointed[key] = end
                changed = True
        if changed:
            try:
                self._write_recovery_points()
            except OSError as exc:
                log.warning("checkpoint_failed", file=RECOVERY_POINTS, error=exc.strerror or str(exc))

    def _write_recovery_points(self) -> None:
        lines = [f"{p.topic.name} {p.index} {self._checkpointed.get(k, 0)}" for k, p in self._partitions.items()]
        data = "\n".join(["0", str(len(lines))] + lines) + "\n"
        write_atomically(os.path.join(self.path, RECOVERY_POINTS), data.encode())

    # -- loading --------------------------------------------------------------------------
    def _dir(self, topic: str, index: int) -> str:
        return os.path.join(self.path, f"{topic}-{index}")

    def _load(self, store) -> None:
        topics = checkpoint_files.topics(self.path, META)
        if topics is None:
            return
        clean = os.path.exists(os.path.join(self.path, CLEAN_SHUTDOWN))
        points = checkpoint_files.recovery_points(os.path.join(self.path, RECOVERY_POINTS))
        store.persistence = self     # new partitions get segment stores
        self._loading = True
        for t in topics:
            topic = store.create_topic(t["name"], t["partitions"], _valid_configs(t), internal=t["internal"],
                                       topic_id=bytes.fromhex(t["id"]) if t["id"] else None)
            for plog in topic.partitions:
                point = (1 << 63) if clean else points.get((plog.topic.name, plog.index), 0)
                self._load_partition(plog, point)
        self._loading = False
        log.info("data_dir_loaded", path=self.path, topics=len(store.topics), clean_shutdown=clean)

    def _load_partition(self, plog, recovery_point: int) -> None:
        d = self._dir(plog.topic.name, plog.index)
        store = plog.batch_store
        older = not os.path.exists(os.path.join(d, SEGMENT.replace(".log", ".index")))
        # an older kafkaemu's segment may hold max timestamps of -1: repaired as it is indexed
        truncated = load_segments(store, recovery_point, (lambda pos, b: plog.repair_max_timestamp(b)) if older else None)
        start, hw = checkpoint_files.log_start(os.path.join(d, LOG_START)) or (0, 0)
        if store.segments:   # at least the first segment's base, as Kafka's LogLoader
            start = max(start, store.segments[0].base)
        if truncated is not None:
            log.warning("data_dir_truncated", topic=plog.topic.name, partition=plog.index,
                        offset=max(truncated["offset"], start), position=truncated["position"],
                        dropped_bytes=truncated["dropped_bytes"], reason=truncated["reason"],
                        kept_in=truncated["kept_in"])
            hw = 0   # the log ends where its valid batches do
        if not store.segments:
            store.new_segment(max(start, hw))
        end = store.end_offset()
        if start > end or hw > end:   # a log start past the log end would hide the partition
            log.warning("data_dir_log_start_clamped", topic=plog.topic.name, partition=plog.index, log_start=start,
                        high_watermark=hw, log_end=end)
            start, hw = min(start, end), min(hw, end)
        epochs = checkpoint_files.leader_epochs(os.path.join(d, EPOCHS))
        if epochs:
            plog.epochs = [(e, s) for e, s in epochs if s <= end] or [(epochs[0][0], 0)]
            plog.leader_epoch = plog.epochs[-1][0]
        replay_from = self._load_producer_snapshot(plog, d, end)
        for seg in store.segments:
            if seg.next_offset > replay_from or seg is store.active:
                seg.truncate_aborted(replay_from)
            for producer_id, first, last, lso in seg.read_aborted():
                plog.producers.aborted.append(AbortedTxn(producer_id, first, last, lso))
                plog.producers._aborted_lasts.append(last)
        plog.persistence = self      # replayed abort markers are indexed again
        for batch in store.batches(replay_from):
            h = parse_header(batch)
            if h.last_offset >= replay_from:
                plog.replay(batch, h)
        plog.finish_load(start, hw, end)
        if is_compacted(plog.configs):
            plog.tombstones_due_ms = 0         # the first cleaning finds the tombstones kept and when they go
        self._checkpointed[id(plog)] = -1      # the next checkpoint covers what was loaded

    def _load_producer_snapshot(self, plog, d: str, end: int) -> int:
        """Load the latest producer snapshot at or below the log end (later ones are stale after a
        truncation); returns the offset to replay from."""
        for offset in reversed(producer_snapshot.offsets(d)):
            if offset > end:
                producer_snapshot.delete(d, offset)
                continue
            try:
                with open(os.path.join(d, producer_snapshot.file_name(offset)), "rb") as f:
                    return producer_snapshot.decode(f.read(), plog.producers)
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("producer_snapshot_unreadable", topic=plog.topic.name, partition=plog.index,
                            offset=offset, reason=str(exc))
                plog.producers.__init__()
        return 0


def _valid_configs(topic: dict) -> dict:
    """A stored topic's configs as the broker's one check accepts them: an entry it refuses (an
    older kafkaemu stored configs unchecked) is dropped with a warning, the default applies."""
    configs = topic["configs"] if isinstance(topic["configs"], dict) else {}
    kept = {k: v for k, v in configs.items() if isinstance(v, str) and validate_topic_config(k, v) is None}
    if validate_topic_configs(kept):
        kept = {}
    if kept != configs:
        log.warning("data_dir_topic_configs_dropped", topic=topic["name"],
                    dropped={k: v for k, v in configs.items() if kept.get(k) != v})
    return kept
