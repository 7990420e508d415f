"""The share data plane's writes to __share_group_state go through the coordinator runtime: an append
that fails leaves the share partition, its lock timer and the parked fetches as they were, and the
request gets the append's error; a lock timer whose write fails is retried."""
from __future__ import annotations

import pytest

from kafkaemu.core.runtime import TIMER_RETRY_BACKOFF_MS, AppendError
from kafkaemu.core.share.partition import AckType
from kafkaemu.core.share.partitions import ShareStateNotWritten
from kafkaemu.protocol.errors import ErrorCode as E
from tests.core.harness import RecordingLog
from tests.core.share.plane import share_plane

T = b"\x07" * 16


class _Ack:
    def __init__(self, first, last, ack=AckType.ACCEPT):
        self.first_offset, self.last_offset, self.acknowledge_types = first, last, [int(ack)]


def plane(log: RecordingLog):
    spm = share_plane(lambda tid, p, committed: (0, 10), sink=log)
    spm.group_configs.set("g", "share.auto.offset.reset", "earliest")
    return spm


def state(spm) -> list:
    return [(r["offset"], r["state"], r["owner"]) for r in spm.existing("g", T, 0).in_flight()]


def test_an_acknowledgement_whose_state_is_not_written_changes_nothing_and_answers_the_error():
    log = RecordingLog()
    spm = plane(log)
    spm.partition(0, "g", T, 0)
    spm.acquire(0, "g", "m", T, 0, 100, [(0, 4)])
    before, written, deadline = state(spm), len(log.records), spm.next_deadline_ms()
    log.fail = AppendError(E.NOT_LEADER_OR_FOLLOWER)
    assert spm.acknowledge(1, "g", "m", T, 0, [_Ack(0, 4)]) == E.NOT_COORDINATOR
    assert state(spm) == before and len(log.records) == written and spm.next_deadline_ms() == deadline
    assert spm.ports.wake == []
    log.fail = None
    assert spm.acknowledge(2, "g", "m", T, 0, [_Ack(0, 4)]) == E.NONE
    assert spm.existing("g", T, 0).start_offset == 5 and spm.next_deadline_ms() is None
    assert spm.ports.wake == [("g", T, 0)]       # woken once the state is written


def test_records_whose_acquisition_is_not_written_are_not_delivered():
    log = RecordingLog()
    spm = plane(log)
    spm.partition(0, "g", T, 0)
    log.fail = AppendError(E.NOT_ENOUGH_REPLICAS)
    assert spm.acquire(0, "g", "m", T, 0, 100, [(0, 4)]) == []
    assert state(spm) == [] and spm.existing("g", T, 0).end_offset == 0 and spm.next_deadline_ms() is None
    log.fail = None
    assert [(a.first_offset, a.last_offset, a.delivery_count) for a in spm.acquire(1, "g", "m", T, 0, 100, [(0, 4)])] \
        == [(0, 4, 1)]


def test_a_share_partition_whose_first_state_is_not_written_does_not_start():
    log = RecordingLog()
    spm = plane(log)
    log.fail = AppendError(E.NOT_ENOUGH_REPLICAS)
    with pytest.raises(ShareStateNotWritten) as raised:
        spm.partition(0, "g", T, 0)
    assert raised.value.error == E.COORDINATOR_NOT_AVAILABLE and spm.existing("g", T, 0) is None
    with pytest.raises(ShareStateNotWritten):    # the group keeps the partition initializing, to retry
        spm.assigned(0, "g", [(T, 0)])
    log.fail = None
    spm.assigned(1, "g", [(T, 0)])
    assert spm.existing("g", T, 0).start_offset == -1      # uninitialized until its first fetch
    assert spm.partition(2, "g", T, 0).start_offset == 0


def test_an_uninitialized_partition_that_cannot_be_written_is_not_recorded():
    log = RecordingLog()
    spm = plane(log)
    log.fail = AppendError(E.NOT_ENOUGH_REPLICAS)
    with pytest.raises(ShareStateNotWritten):
        spm.assigned(0, "g", [(T, 0)])
    assert spm.existing("g", T, 0) is None and log.records == []


def test_a_lapsed_lock_whose_release_is_not_written_is_retried():
    log = RecordingLog()
    spm = plane(log)
    spm.partition(0, "g", T, 0)
    spm.acquire(0, "g", "m", T, 0, 100, [(0, 1)])
    lock_ms = int(spm.config("g", "share.record.lock.duration.ms"))
    log.fail = AppendError(E.NOT_ENOUGH_REPLICAS)
    spm.tick(lock_ms)
    assert {s for _, s, _ in state(spm)} == {"Acquired"} and spm.ports.wake == []
    assert spm.next_deadline_ms() == lock_ms + TIMER_RETRY_BACKOFF_MS
    log.fail = None
    spm.tick(lock_ms + TIMER_RETRY_BACKOFF_MS)
    assert {s for _, s, _ in state(spm)} == {"Available"} and spm.ports.wake == [("g", T, 0)]
