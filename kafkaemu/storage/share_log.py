"""What share partitions (core/share/partitions.py) see of the log store: a partition's log start
and readable end by topic id, and waking the ShareFetches parked on a partition when its records
become available again (a lock lapsed, a release) rather than because bytes were appended."""
from __future__ import annotations

from .fetch_purgatory import FetchWaiter


class ShareFetchWaiter(FetchWaiter):
    """A parked ShareFetch: woken by appends like a Fetch, and by ``wake_share_fetches``."""
    __slots__ = ()


def _plog(store, topic_id: bytes, index: int):
    topic = store.by_id(topic_id)
    if topic is None or not 0 <= index < len(topic.partitions):
        return None
    return topic.partitions[index]


def log_offsets(store):
    """``(topic_id, partition, read_committed) -> (log start offset, readable end) or None``: the
    end is the last stable offset under read_committed, else the high watermark."""
    def offsets(topic_id: bytes, index: int, read_committed: bool):
        plog = _plog(store, topic_id, index)
        if plog is None:
            return None
        return plog.log_start_offset, plog.last_stable_offset if read_committed else plog.high_watermark
    return offsets


def offset_for_time(store):
    """``(topic_id, partition, timestamp_ms) -> offset or None``: the first record at or after the
    time (share.auto.offset.reset=by_duration)."""
    def find(topic_id: bytes, index: int, timestamp_ms: int):
        plog = _plog(store, topic_id, index)
        found = plog.offset_for_timestamp(timestamp_ms) if plog is not None else None
        return found[1] if found is not None else None
    return find


def share_waker(store):
    """A SharePartitionManager ``on_available`` listener: the ShareFetches parked on that partition
    read again."""
    def wake(key: tuple) -> None:
        _, topic_id, index = key
        plog = _plog(store, topic_id, index)
        if plog is None:
            return
        for waiter in [w for w in plog.waiters if isinstance(w, ShareFetchWaiter)]:
            store.fetches.complete(waiter)
    return wake
