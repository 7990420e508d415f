"""The share-partition state machine (Kafka's SharePartition) on a manual clock: acquisition, the
acknowledgement types, lock expiry, the delivery-count limit, partial acknowledgement of acquired
runs, the in-flight cap, and the errors Kafka answers."""
import pytest

from kafkaemu.core.share.partition import Acquired, AckType, PartitionLimits, SharePartition
from kafkaemu.protocol.errors import ErrorCode as E

A, R, X, G, N = AckType.ACCEPT, AckType.RELEASE, AckType.REJECT, AckType.GAP, AckType.RENEW
LIMITS = PartitionLimits(lock_duration_ms=30000, delivery_count_limit=3, max_in_flight=100)


def states(sp):
    return {r["offset"]: (r["state"], r["delivery_count"], r["owner"]) for r in sp.in_flight()}


def fresh(start=0, batches=((0, 4),), limits=LIMITS):
    sp = SharePartition(start, limits)
    got = sp.acquire("m1", 500, list(batches), now_ms=0)
    return sp, got


def test_acquire_takes_whole_batches_and_locks_them():
    sp, got = fresh(batches=[(0, 4), (5, 9)])
    assert got == [Acquired(0, 9, 1)]
    assert sp.start_offset == 0 and sp.end_offset == 10
    assert {r["lock_deadline_ms"] for r in sp.in_flight()} == {30000}
    assert sp.acquire("m2", 500, [], now_ms=1) == []   # nothing available for another member


def test_max_records_stops_at_a_batch_boundary():
    sp = SharePartition(0, LIMITS)
    assert sp.acquire("m1", 3, [(0, 4), (5, 9)], now_ms=0) == [Acquired(0, 4, 1)]
    assert sp.end_offset == 5
    assert sp.acquire("m2", 3, [(5, 9)], now_ms=0) == [Acquired(5, 9, 1)]


@pytest.mark.parametrize(("ack", "state", "start"), [
    (A, "Acknowledged", 5), (X, "Archived", 5), (G, "Archived", 5), (R, "Available", 0),
])
def test_each_acknowledge_type(ack, state, start):
    sp, _ = fresh()
    assert sp.acknowledge("m1", [(0, 4, [int(ack)])], now_ms=10) == E.NONE
    assert sp.start_offset == start
    if start == 0:
        assert {s for s, _, _ in states(sp).values()} == {state}


def test_release_comes_back_with_a_higher_delivery_count_to_any_member():
    sp, _ = fresh()
    sp.acknowledge("m1", [(2, 2, [int(R)])], now_ms=10)
    assert sp.acquire("m2", 500, [], now_ms=20) == [Acquired(2, 2, 2)]
    assert states(sp)[2] == ("Acquired", 2, "m2")


def test_a_partial_acknowledgement_splits_the_run():
    sp, _ = fresh()
    types = [int(A), int(R), int(A), int(X), int(A)]
    assert sp.acknowledge("m1", [(0, 4, types)], now_ms=10) == E.NONE
    assert sp.start_offset == 1   # offset 1 is available again
    assert states(sp) == {1: ("Available", 1, None), 2: ("Acknowledged", 1, None), 3: ("Archived", 1, None),
                          4: ("Acknowledged", 1, None)}
    assert sp.acquire("m1", 500, [], now_ms=11) == [Acquired(1, 1, 2)]
    sp.acknowledge("m1", [(1, 1, [int(A)])], now_ms=12)
    assert sp.start_offset == 5 and sp.in_flight() == []


def test_lock_expiry_makes_records_available_on_the_manual_clock():
    sp, _ = fresh()
    assert sp.next_lock_deadline() == 30000
    assert sp.expire_locks(29999) == 0
    assert sp.expire_locks(30000) == 5
    assert {s for s, _, _ in states(sp).values()} == {"Available"}
    assert sp.acquire("m2", 500, [], now_ms=30001) == [Acquired(0, 4, 2)]


def test_the_delivery_count_limit_archives_for_good():
    sp, _ = fresh()
    now = 0
    for delivery in (2, 3):
        now += 30000
        sp.expire_locks(now)
        assert sp.acquire("m1", 500, [], now_ms=now) == [Acquired(0, 4, delivery)]
    now += 30000
    sp.expire_locks(now)                      # the third delivery lapsed: limit 3 reached
    assert sp.in_flight() == [] and sp.start_offset == 5
    assert sp.acquire("m1", 500, [], now_ms=now) == []


def test_release_at_the_limit_archives():
    sp, _ = fresh(limits=PartitionLimits(30000, 1, 100))
    sp.acknowledge("m1", [(0, 4, [int(R)])], now_ms=1)
    assert sp.start_offset == 5


def test_renew_extends_the_lock():
    sp, _ = fresh()
    assert sp.acknowledge("m1", [(0, 4, [int(N)])], now_ms=20000) == E.NONE
    assert sp.expire_locks(30000) == 0
    assert sp.next_lock_deadline() == 50000


@pytest.mark.parametrize(("member", "batches"), [
    ("m2", [(0, 0, [1])]),                    # another member's record
    ("m1", [(5, 5, [1])]),                    # never acquired
    ("m1", [(3, 6, [1])]),                    # runs past the acquired records
])
def test_acknowledging_what_the_member_does_not_hold_is_invalid_record_state(member, batches):
    sp, _ = fresh()
    before = states(sp)
    assert sp.acknowledge(member, batches, now_ms=1) == E.INVALID_RECORD_STATE
    assert states(sp) == before   # nothing applied


def test_acknowledging_twice_is_invalid_record_state():
    sp, _ = fresh()
    assert sp.acknowledge("m1", [(0, 1, [1])], now_ms=1) == E.NONE
    assert sp.acknowledge("m1", [(2, 2, [1]), (1, 1, [1])], now_ms=2) == E.INVALID_RECORD_STATE
    assert states(sp)[2] == ("Acquired", 1, "m1")   # all or nothing


def test_the_in_flight_cap_stops_new_acquisitions():
    sp = SharePartition(0, PartitionLimits(30000, 5, 10))
    assert sp.acquire("m1", 500, [(0, 9), (10, 19)], now_ms=0) == [Acquired(0, 9, 1)]
    assert sp.acquire("m2", 500, [(10, 19)], now_ms=0) == []
    sp.acknowledge("m1", [(0, 9, [1])], now_ms=1)
    assert sp.acquire("m2", 500, [(10, 19)], now_ms=2) == [Acquired(10, 19, 1)]


def test_a_leaving_member_releases_its_records():
    sp, _ = fresh()
    assert sp.release_member("m1") == 5
    assert sp.acquire("m2", 500, [], now_ms=1) == [Acquired(0, 4, 2)]


def test_redeliveries_come_before_new_records():
    sp, _ = fresh()
    sp.acknowledge("m1", [(0, 4, [int(A), int(A), int(R), int(A), int(A)])], now_ms=1)
    assert sp.acquire("m2", 500, [(5, 6)], now_ms=2) == [Acquired(2, 2, 2), Acquired(5, 6, 1)]


def test_the_state_written_carries_the_start_offset_from_before_the_write_moved_it():
    """As Kafka's SharePartition.writeShareGroupState runs before maybeUpdateCachedStateAndOffsets:
    what DescribeShareGroupOffsets reads lags one write behind the start offset; acquiring, and
    renewing a lock, write nothing."""
    sp, _ = fresh(batches=[(0, 4), (5, 9)])
    assert sp.written == (0, 0)
    assert sp.acknowledge("m1", [(0, 0, [int(N)])], now_ms=10) == E.NONE
    assert sp.written == (0, 0)
    assert sp.acknowledge("m1", [(0, 3, [int(A)])], now_ms=10) == E.NONE
    assert (sp.start_offset, sp.written) == (4, (0, 4))
    assert sp.acknowledge("m1", [(4, 4, [int(X)])], now_ms=10) == E.NONE
    assert (sp.start_offset, sp.written) == (5, (4, 1))
    assert sp.expire_locks(now_ms=30000) == 5   # 5-9 released: a write, the start offset stays
    assert sp.written == (5, 0)
    sp.reset(2)
    assert sp.written == (2, 0)
