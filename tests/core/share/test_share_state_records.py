"""Share-partition state as __share_group_state records (ShareSnapshotKey/Value v0): round trips,
the placement of keys, replay (last record wins, tombstones) and what a restart brings back."""
from kafkaemu.core.share import state_records
from kafkaemu.core.share.partition import AckType, PartitionLimits, SharePartition
from kafkaemu.core.placement import partition_for
from tests.core.share.plane import share_plane

LIMITS = PartitionLimits(30000, 5, 100)
T = b"\x07" * 16


def test_a_snapshot_round_trips_with_acquired_records_coming_back_available():
    sp = SharePartition(0, LIMITS)
    sp.acquire("m", 100, [(0, 9)], now_ms=0)
    sp.acknowledge("m", [(0, 2, [int(AckType.ACCEPT)]), (3, 3, [int(AckType.REJECT)]),
                         (4, 4, [int(AckType.RELEASE)])], now_ms=1)
    # released and acquired records are both written as Available: one run
    assert state_records.state_batches(sp) == [
        {"first_offset": 4, "last_offset": 9, "delivery_state": 0, "delivery_count": 1}]
    back = state_records.decode_value(state_records.encode_value(sp, 3), LIMITS)
    assert (back.start_offset, back.end_offset) == (4, 10)
    assert [(r["offset"], r["state"], r["delivery_count"]) for r in back.in_flight()] == \
        [(o, "Available", 1) for o in range(4, 10)]
    key = state_records.encode_key("g", T, 2)
    assert state_records.decode_key(key) == ("g", T, 2)


def test_done_records_inside_the_window_stay_done():
    sp = SharePartition(0, LIMITS)
    sp.acquire("m", 100, [(0, 4)], now_ms=0)
    sp.acknowledge("m", [(1, 3, [int(AckType.ACCEPT), int(AckType.REJECT), int(AckType.ACCEPT)])], now_ms=1)
    back = state_records.decode_value(state_records.encode_value(sp, 0), LIMITS)
    assert [(r["offset"], r["state"]) for r in back.in_flight()] == [
        (0, "Available"), (1, "Acknowledged"), (2, "Archived"), (3, "Acknowledged"), (4, "Available")]


def test_the_key_is_placed_as_kafkas_coordinator_key():
    key = state_records.coordinator_key("g", T, 2)
    assert key == "g:BwcHBwcHBwcHBwcHBwcHBw:2"
    assert state_records.state_partition("g", T, 2, 50) == partition_for(key, 50)


def test_replay_rebuilds_the_share_partitions():
    written = []
    spm = share_plane(lambda tid, p, committed: (0, 10), sink=lambda partition, records, now: written.extend(records))
    spm.group_configs.set("g", "share.auto.offset.reset", "earliest")
    spm.partition(0, "g", T, 0)
    spm.acquire(0, "g", "m", T, 0, 100, [(0, 9)])
    spm.acknowledge(0, "g", "m", T, 0, [_batch(0, 4, AckType.ACCEPT)])
    spm.partition(0, "g", T, 1)
    spm.offsets_deleted(0, "g", T)
    spm.partition(0, "g", T, 1)
    again = share_plane()
    assert again.load(written) == 1
    assert again.existing("g", T, 0) is None
    sp = again.existing("g", T, 1)
    assert sp is not None and sp.start_offset == 0
    fresh = share_plane()
    assert fresh.load(written[:3]) == 1            # initialized, acquired, acknowledged
    sp0 = fresh.existing("g", T, 0)
    assert sp0.start_offset == 5 and {r["state"] for r in sp0.in_flight()} == {"Available"}


def test_replay_brings_an_uninitialized_share_partition_back_uninitialized():
    written = []
    spm = share_plane(lambda tid, p, committed: (0, 10), sink=lambda partition, records, now: written.extend(records))
    spm.assigned(0, "g", [(T, 0)])
    assert len(written) == 1 and state_records.decode_value(written[0][1], LIMITS).start_offset == -1
    again = share_plane(lambda tid, p, committed: (2, 12))
    assert again.load(written) == 1
    sp = again.existing("g", T, 0)
    assert (sp.start_offset, sp.end_offset, sp.written, sp.in_flight()) == (-1, -1, (-1, 0), [])
    assert again.partition(1, "g", T, 0).start_offset == 12        # latest, resolved at the first fetch


class _batch:
    def __init__(self, first, last, ack):
        self.first_offset, self.last_offset, self.acknowledge_types = first, last, [int(ack)]
