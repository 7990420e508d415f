"""Capturing the broker's data and bringing it back: topics, partition logs (with their producer
state and leader epochs), __consumer_offsets, groups and committed offsets, producer ids and the
time.

A snapshot shares the stored record batches with the live logs (a log never changes a batch it
holds; compaction and retention replace or drop them), so taking and restoring one copies lists of
references, not records. Groups live in __consumer_offsets; a restore builds a new group
coordinator from them, as a Kafka broker does when it takes over a coordinator partition, but
without decoding every offset commit again: the snapshot keeps the latest group records (found by
``GroupRecords``, which reads only what was appended since it last looked) and a copy of the
committed offsets, which are put back directly. The caller closes every client connection first
and (by default) removes the loaded members, so clients reconnect, rejoin and resume from the
restored committed offsets.
"""
import copy
import gc
import struct
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..auth import security_state
from ..storage.log_store import OFFSETS_TOPIC
from ..storage.partition_log import PartitionLog
from ..storage.record_batch import iter_records, parse_header

_I16 = struct.Struct(">h")

# PartitionLog attributes that tie a log to its place rather than hold its data.
_PLACE = frozenset({"topic", "waiters", "persistence", "batch_store"})


@contextmanager
def gc_paused():
    """Copying many small objects would otherwise start full garbage collections over a heap of
    stored batches (tens of ms each); a snapshot or restore creates no reference cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def capture_partition(plog: PartitionLog) -> dict:
    """The partition's data attributes; lists are copied (their items, batches among them, are
    shared), anything else mutable is deep-copied (the producer state). The batches are held in
    memory (read from the segment files with a data directory)."""
    state = {name: _clone(value) for name, value in vars(plog).items() if name not in _PLACE}
    state["batch_store"] = plog.batch_store.capture()
    return state


def apply_partition(plog: PartitionLog, state: dict) -> None:
    for name, value in state.items():
        if name == "batch_store":
            plog.batch_store.replace(value, state["high_watermark"])
        else:
            setattr(plog, name, _clone(value))


def _clone(value):
    if isinstance(value, list):
        return list(value)
    if value is None or isinstance(value, (int, float, str, bytes, bool, tuple, frozenset)):
        return value
    return copy.deepcopy(value)


def is_offset_commit(key: bytes) -> bool:
    """Whether a record key is Kafka's OffsetCommitKey (key versions 0 and 1)."""
    return len(key) >= 2 and _I16.unpack_from(key)[0] in (0, 1)


class GroupRecords:
    """The latest __consumer_offsets records other than offset commits (classic group metadata,
    KIP-848 group records), by key in the order last written. ``refresh`` reads only the records
    appended since the last call."""

    def __init__(self) -> None:
        self.cursors: dict[int, int] = {}            # partition -> next offset to read
        self.latest: dict[bytes, bytes | None] = {}

    def copy(self) -> "GroupRecords":
        other = GroupRecords()
        other.cursors, other.latest = dict(self.cursors), dict(self.latest)
        return other

    def refresh(self, store) -> "GroupRecords":
        topic = store.get(OFFSETS_TOPIC)
        if any(self.cursors.get(p.index, 0) > p.high_watermark for p in topic.partitions):
            self.__init__()   # the log went back (not through a restore that set this cache): read it again
        for plog in topic.partitions:
            cursor = max(self.cursors.get(plog.index, 0), plog.log_start_offset)
            if cursor >= plog.high_watermark:
                continue
            for batch in plog.read(cursor, 1 << 62):
                if parse_header(batch).is_control:
                    continue
                for record in iter_records(batch):
                    if record.offset < cursor or record.key is None:
                        continue
                    if not is_offset_commit(record.key):
                        self.latest.pop(record.key, None)
                        self.latest[record.key] = record.value
            self.cursors[plog.index] = plog.high_watermark
        return self


@dataclass
class TopicImage:
    name: str
    topic_id: bytes
    configs: dict
    internal: bool
    partitions: list[dict]


@dataclass
class Snapshot:
    name: str
    now_ms: int                 # the broker's clock when taken
    taken_at: float             # wall clock (seconds since the epoch)
    topics: list[TopicImage]
    producer_ids: object
    group_records: GroupRecords
    offsets: dict               # group -> topic -> partition -> CommittedOffset (immutable)
    store_schedule: dict = field(default_factory=dict)
    security: dict | None = None   # ACLs, SCRAM credentials, delegation tokens (auth/security_state.py)
    clients: dict | None = None    # client quotas and CLIENT_METRICS subscriptions

    def summary(self) -> dict:
        data = [t for t in self.topics if not t.internal]
        return {"name": self.name, "now_ms": self.now_ms, "taken_at": self.taken_at, "topics": len(data),
                "partitions": sum(len(t.partitions) for t in data),
                "records": sum(p["high_watermark"] - p["log_start_offset"] for t in data for p in t.partitions),
                "bytes": sum(p["batch_store"].size_bytes for t in self.topics for p in t.partitions)}


_SCHEDULE = ("_next_retention_ms", "_next_clean_ms")


def take(name: str, broker, group_records: GroupRecords) -> Snapshot:
    """``group_records``: the caller's cache of the live __consumer_offsets (refreshed here)."""
    store = broker.store
    topics = [TopicImage(t.name, t.topic_id, dict(t.configs), t.internal, [capture_partition(p) for p in t.partitions])
              for t in store.topics.values()]
    return Snapshot(name, broker.now_ms, time.time(), topics, copy.deepcopy(store.producer_ids),
                    group_records.refresh(store).copy(), broker.coordinator.offsets.store.snapshot(),
                    {k: getattr(store, k) for k in _SCHEDULE if hasattr(store, k)}, security_state.capture(broker),
                    _client_state(broker))


def _client_state(broker) -> dict:
    return {"quotas": {e: dict(v) for e, v in broker.quotas.entries.items()},
            "client_metrics": {n: dict(c) for n, c in broker.client_metrics.configs.items()}}


def _apply_client_state(broker, state: dict) -> None:
    """Quotas and subscriptions as they were; rates measured and metrics pushed since are forgotten."""
    broker.quotas.replace(state["quotas"])
    broker.quota_enforcer.managers.reset()
    broker.client_metrics.replace(state["client_metrics"])


def empty(broker) -> Snapshot:
    """What a broker holds when started without data: only its empty internal topics
    (__consumer_offsets, __transaction_state)."""
    from ..storage.producer_ids import ProducerIdManager
    images = []
    for topic in broker.store.topics.values():
        if topic.internal:
            blank = [capture_partition(PartitionLog(topic, i)) for i in range(len(topic.partitions))]
            images.append(TopicImage(topic.name, topic.topic_id, dict(topic.configs), True, blank))
    return Snapshot("(empty)", broker.now_ms, time.time(), images, ProducerIdManager(), GroupRecords(), {},
                    security=security_state.initial(broker), clients={"quotas": {}, "client_metrics": {}})


def current_group_configs(broker):
    """Group configs for the restored coordinators: they are the controller's, not the snapshot's,
    so the current ones stay (in a new holder, which the new coordinators listen to)."""
    configs = broker.new_group_configs()
    configs.restore(broker.group_configs)
    return configs


def load_share_partitions(broker, now_ms: int):
    """A share data plane holding the share partitions of the restored __share_group_state."""
    return broker.new_share_partitions(now_ms, load=True)   # __share_group_state is restored already


def load_groups(snapshot: Snapshot, broker, now_ms: int):
    """A group coordinator holding the snapshot's groups and committed offsets, as loading its
    __consumer_offsets would build it: the group records are replayed, a group known only by its
    offsets becomes a simple group (as the offsets' replay makes one), and the offsets are put
    back as they were. It tells the broker's share data plane (``load_share_partitions``, first)
    of its share groups."""
    coordinator = broker.new_coordinator(now_ms, load=False)
    coordinator.load(list(snapshot.group_records.latest.items()), now_ms)
    store = coordinator.offsets.store
    for group, topics in snapshot.offsets.items():
        if coordinator.group(group) is None:
            coordinator.create_simple_group(group)
        for topic, partitions in topics.items():
            for partition, committed in partitions.items():
                store.put(group, topic, partition, committed)
    return coordinator


def restore(snapshot: Snapshot, broker) -> None:
    """Make the log store hold exactly the snapshot's topics and data (same topic ids). Groups are
    the caller's to reload (``load_groups``). ACLs, SCRAM credentials and tokens come back too, and
    client quotas and CLIENT_METRICS subscriptions."""
    if snapshot.security is not None:
        security_state.apply(broker, snapshot.security)
    if snapshot.clients is not None:
        _apply_client_state(broker, snapshot.clients)
    store = broker.store
    with store.topic_changes():   # the topics deleted and created: one write (configs set in place: below)
        wanted = {t.name: t for t in snapshot.topics}
        for name, topic in list(store.topics.items()):
            image = wanted.get(name)
            if image is None or image.topic_id != topic.topic_id:
                store.delete_topic(name)
        for image in snapshot.topics:
            topic = store.get(image.name)
            if topic is None:
                topic = store.create_topic(image.name, len(image.partitions), image.configs, internal=image.internal,
                                           topic_id=image.topic_id)
            topic.configs = dict(image.configs)
            topic.internal = image.internal
            del topic.partitions[len(image.partitions):]
            if len(topic.partitions) < len(image.partitions):
                store.add_partitions(image.name, len(image.partitions))
            for plog, state in zip(topic.partitions, image.partitions):
                apply_partition(plog, state)
                if store.persistence is not None:
                    store.persistence.state_replaced(plog)
    store.producer_ids = copy.deepcopy(snapshot.producer_ids)
    for key, value in snapshot.store_schedule.items():
        setattr(store, key, value)
    store.fetch_sessions.sessions.clear()
    if store.persistence is not None:
        store.persistence.topics_changed(store)
