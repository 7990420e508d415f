"""The transactions data path of one partition log: commit/abort markers (Kafka's control batch
format), open transactions and the last stable offset, the aborted-transaction index, reads up
to the LSO, producer state after markers, retention and DeleteRecords, compaction around
transactions, read_committed long polls and reload from a data directory. Pure: time is an
argument."""
import struct

import pytest

from kafkaemu.storage.data_dir import DataDir
from kafkaemu.storage.fetch_purgatory import FetchWaiter
from kafkaemu.storage.log_store import LogStore
from kafkaemu.storage.producer_state import AbortedTxn
from kafkaemu.storage.record_batch import (CONTROL_BIT, TRANSACTIONAL_BIT, InvalidBatch, build_batch,
                                           control_record, crc_ok, iter_records, parse_header)

NOW = 1_700_000_000_000


class Producer:
    """Batches of one producer id/epoch with running sequences."""

    def __init__(self, pid, epoch=0, transactional=True):
        self.pid, self.epoch, self.seq, self.transactional = pid, epoch, 0, transactional

    def batch(self, n=2, key=b"k", value=b"v", ts=NOW, transactional=None):
        txn = self.transactional if transactional is None else transactional
        b = build_batch([(key + b"%d" % i, value, [], ts) for i in range(n)], producer_id=self.pid,
                        producer_epoch=self.epoch, base_sequence=self.seq, transactional=txn)
        self.seq += n
        return b


def plain(n=2, key=b"p", ts=NOW):
    return build_batch([(key + b"%d" % i, b"x", [], ts) for i in range(n)])


@pytest.fixture
def store():
    return LogStore()


@pytest.fixture
def log(store):
    return store.create_topic("t", 1).partitions[0]


def ok(result):
    assert result.error == "NONE", result
    return result.base_offset


def test_marker_is_kafkas_control_batch(log):
    a = Producer(7, epoch=3)
    ok(log.append(a.batch(2), NOW))
    offset = log.append_control_batch(7, 3, True, 11, NOW + 5)
    assert offset == 2 and log.high_watermark == 3
    marker = log.batches()[-1]
    h = parse_header(marker)
    assert crc_ok(marker) and h.magic == 2 and h.base_offset == 2 and h.last_offset_delta == 0
    assert h.attributes == CONTROL_BIT | TRANSACTIONAL_BIT   # uncompressed, CreateTime
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.records_count) == (7, 3, -1, 1)
    assert (h.base_timestamp, h.max_timestamp) == (NOW + 5, NOW + 5)
    (rec,) = list(iter_records(marker))
    assert rec.key == struct.pack(">hh", 0, 1)               # version 0, COMMIT
    assert rec.value == struct.pack(">hi", 0, 11)            # EndTransactionMarker v0, coordinator epoch
    assert len(marker) == 78                                 # as MemoryRecords.withEndTransactionMarker
    generic = build_batch([(rec.key, rec.value, [], NOW + 5)], base_offset=2, partition_leader_epoch=0,
                          producer_id=7, producer_epoch=3, transactional=True, control=True)
    assert bytes(marker) == generic                          # byte for byte what the generic builder writes
    log.append(Producer(8).batch(1), NOW)
    log.append_control_batch(8, 0, False, 11, NOW)
    assert control_record(log.batches()[-1]) == (0, 11)      # ABORT


def test_transactions_pin_the_last_stable_offset(log):
    a, b = Producer(1), Producer(2)
    ok(log.append(plain(3), NOW))                             # 0-2
    assert log.last_stable_offset == 3
    assert ok(log.append(a.batch(2), NOW)) == 3               # a: 3-4
    ok(log.append(plain(2), NOW))                             # 5-6
    assert ok(log.append(b.batch(2), NOW)) == 7               # b: 7-8
    ok(log.append(a.batch(1), NOW))                           # a continues: 9
    assert log.high_watermark == 10 and log.last_stable_offset == 3
    assert log.open_transactions() == {1: 3, 2: 7}
    # completing the later transaction first does not move the LSO
    assert log.append_control_batch(2, 0, True, 0, NOW) == 10
    assert log.last_stable_offset == 3 and log.open_transactions() == {1: 3}
    assert log.append_control_batch(1, 0, True, 0, NOW) == 11
    assert log.last_stable_offset == log.high_watermark == 12 and log.open_transactions() == {}
    # a new transaction of the same producer starts at its next transactional batch
    assert ok(log.append(a.batch(1), NOW)) == 12
    assert log.last_stable_offset == 12 and log.open_transactions() == {1: 12}


def test_aborts_are_indexed_with_the_lso_after_them(log):
    a, b, c = Producer(1), Producer(2), Producer(3)
    ok(log.append(a.batch(2), NOW))                           # a: 0-1
    ok(log.append(b.batch(2), NOW))                           # b: 2-3
    assert log.append_control_batch(1, 0, False, 0, NOW) == 4  # abort a: next open is b at 2
    ok(log.append(c.batch(1), NOW))                           # c: 5
    assert log.append_control_batch(2, 0, False, 0, NOW) == 6  # abort b: next open is c at 5
    assert log.append_control_batch(3, 0, False, 0, NOW) == 7  # abort c: nothing open, marker + 1
    assert log.producers.aborted == [AbortedTxn(1, 0, 4, 2), AbortedTxn(2, 2, 6, 5), AbortedTxn(3, 5, 7, 8)]
    # Kafka's collectAbortedTxns: last offset >= fetch offset, first offset < upper bound
    assert [t.producer_id for t in log.aborted_transactions(0, 8)] == [1, 2, 3]
    assert [t.producer_id for t in log.aborted_transactions(5, 8)] == [2, 3]
    assert [t.producer_id for t in log.aborted_transactions(0, 2)] == [1]
    assert [t.producer_id for t in log.aborted_transactions(7, 8)] == [3]
    assert log.aborted_transactions(8, 9) == []
    # a commit, and a marker for a producer with nothing open, add nothing
    d = Producer(4)
    ok(log.append(d.batch(1), NOW))
    log.append_control_batch(4, 0, True, 0, NOW)
    log.append_control_batch(5, 0, False, 0, NOW)
    assert len(log.producers.aborted) == 3 and log.last_stable_offset == log.high_watermark


def test_reads_stop_at_a_max_offset_in_whole_batches(log):
    a = Producer(1)
    ok(log.append(plain(3), NOW))                             # 0-2
    ok(log.append(plain(2), NOW))                             # 3-4
    ok(log.append(a.batch(2), NOW))                           # 5-6 open
    ok(log.append(plain(2), NOW))                             # 7-8
    lso = log.last_stable_offset
    assert lso == 5
    assert [parse_header(b).base_offset for b in log.read(0, 1 << 20, max_offset=lso)] == [0, 3]
    assert [parse_header(b).base_offset for b in log.read(4, 1 << 20, max_offset=lso)] == [3]
    assert log.read(5, 1 << 20, max_offset=lso) == []
    assert [parse_header(b).base_offset for b in log.read(0, 1 << 20)] == [0, 3, 5, 7]


def test_plain_batch_during_a_transaction_is_invalid_txn_state(log):
    a = Producer(1)
    ok(log.append(a.batch(2), NOW))
    r = log.append(a.batch(1, transactional=False), NOW)
    assert r.error == "INVALID_TXN_STATE" and log.high_watermark == 2
    a.seq -= 1
    ok(log.append(a.batch(1), NOW))                           # the same sequence, transactional: fine
    log.append_control_batch(1, 0, True, 0, NOW)
    ok(log.append(a.batch(1, transactional=False), NOW))      # after the marker: plain is allowed


def test_marker_epochs_fence_zombies_and_nothing_is_half_written(log):
    a = Producer(1, epoch=2)
    ok(log.append(a.batch(2), NOW))
    with pytest.raises(InvalidBatch) as exc:
        log.append_control_batch(1, 1, False, 0, NOW)
    assert exc.value.code_name == "INVALID_PRODUCER_EPOCH"
    assert log.high_watermark == 2 and log.open_transactions() == {1: 0}
    log.append_control_batch(1, 2, True, 5, NOW)
    with pytest.raises(InvalidBatch) as exc:
        log.append_control_batch(1, 2, True, 4, NOW)           # an older coordinator epoch
    assert exc.value.code_name == "TRANSACTION_COORDINATOR_FENCED" and log.high_watermark == 3
    # same epoch: the sequence goes on after the marker
    r = log.append(build_batch([(b"k", b"v", [], NOW)], producer_id=1, producer_epoch=2, base_sequence=0,
                               transactional=True), NOW)
    assert r.error == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    ok(log.append(a.batch(1), NOW))                           # sequence 2: a new transaction at 3
    # the coordinator aborts it with a bumped epoch (timeout): the old epoch is fenced
    log.append_control_batch(1, 3, False, 5, NOW)
    assert log.producers.aborted[-1] == AbortedTxn(1, 3, 4, 5)
    r = log.append(a.batch(1), NOW)
    assert r.error == "INVALID_PRODUCER_EPOCH" and log.high_watermark == 5
    # the new epoch starts at sequence 0
    new = Producer(1, epoch=3)
    new.seq = 1
    assert log.append(new.batch(1), NOW).error == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    new.seq = 0
    assert ok(log.append(new.batch(1), NOW)) == 5


def test_producer_state_for_describe_producers(log):
    a, idem = Producer(1, epoch=4), Producer(2, transactional=False)
    ok(log.append(a.batch(3, ts=NOW + 1), NOW))
    ok(log.append(idem.batch(2, ts=NOW + 2), NOW))
    states = {p["producer_id"]: p for p in log.active_producers()}
    assert states[1] == {"producer_id": 1, "producer_epoch": 4, "last_sequence": 2, "last_timestamp": NOW + 1,
                         "coordinator_epoch": -1, "current_txn_start_offset": 0}
    assert states[2]["current_txn_start_offset"] == -1 and states[2]["last_sequence"] == 1
    log.append_control_batch(1, 4, True, 9, NOW + 7)
    states = {p["producer_id"]: p for p in log.active_producers()}
    assert states[1]["coordinator_epoch"] == 9 and states[1]["current_txn_start_offset"] == -1
    assert states[1]["last_timestamp"] == NOW + 7 and states[1]["last_sequence"] == 2


def test_delete_records_past_an_open_transaction_keeps_it(log):
    a, idem = Producer(1), Producer(2, transactional=False)
    ok(log.append(idem.batch(2), NOW))                        # 0-1, producer 2
    ok(log.append(a.batch(2), NOW))                           # 2-3 open
    ok(log.append(plain(2), NOW))                             # 4-5
    assert log.delete_records(5) == ("NONE", 5)
    # the LSO is never below the log start; the open transaction is remembered
    assert log.last_stable_offset == 5 and log.open_transactions() == {1: 2}
    assert 1 in log.producers.producers and 2 not in log.producers.producers
    log.append_control_batch(1, 0, False, 0, NOW)
    assert log.last_stable_offset == log.high_watermark == 7
    # aborted-index entries wholly below the log start go with the data
    assert len(log.producers.aborted) == 1
    log.delete_records(7)
    assert log.producers.aborted == [] and log.aborted_transactions(7, 8) == []


def test_retention_keeps_open_transactions_consistent(store):
    plog = store.create_topic("r", 1, {"retention.ms": "1000"}).partitions[0]
    a = Producer(1)
    ok(plog.append(a.batch(2, ts=NOW), NOW))                  # 0-1 open, old
    ok(plog.append(plain(2, ts=NOW + 5000), NOW + 5000))      # 2-3
    assert plog.apply_retention(NOW + 5500) == 1
    assert plog.log_start_offset == 2 and plog.last_stable_offset == 2
    assert plog.open_transactions() == {1: 0}
    plog.append_control_batch(1, 0, True, 0, NOW + 5600)
    assert plog.last_stable_offset == plog.high_watermark == 5


def test_coordinator_appends_join_transactions_without_sequences(log):
    """TxnOffsetCommit records are written by the broker with the producer's id/epoch and no
    sequence (Kafka's COORDINATOR origin): only the epoch is checked."""
    batch = build_batch([(b"key", b"offset", [], NOW)], producer_id=9, producer_epoch=1, transactional=True)
    ok(log.append_batch(batch, NOW))
    assert log.open_transactions() == {9: 0} and log.last_stable_offset == 0
    old = build_batch([(b"key", b"offset", [], NOW)], producer_id=9, producer_epoch=0, transactional=True)
    assert log.append_batch(old, NOW).error == "INVALID_PRODUCER_EPOCH"
    log.append_control_batch(9, 1, True, 0, NOW)
    assert log.last_stable_offset == 2


def test_read_committed_long_poll_wakes_on_the_marker_not_the_data(log):
    a = Producer(1)
    woken = []
    committed = FetchWaiter([log], 1, NOW + 500, 0, lambda: woken.append("committed"), committed=True)
    uncommitted = FetchWaiter([log], 1, NOW + 500, 0, lambda: woken.append("uncommitted"))
    LogStore().fetches.park(committed)
    committed._purgatory.park(uncommitted)
    ok(log.append(a.batch(2), NOW))
    assert woken == ["uncommitted"]
    log.append_control_batch(1, 0, True, 0, NOW)
    assert woken == ["uncommitted", "committed"]


def test_compaction_drops_aborted_records_and_never_reads_past_the_lso(store):
    plog = store.create_topic("c", 1, {"cleanup.policy": "compact"}).partitions[0]
    a, b = Producer(1), Producer(2)
    ok(plog.append(build_batch([(b"x0", b"committed", [], NOW)]), NOW))                 # 0
    ok(plog.append(a.batch(1, key=b"x", value=b"aborted"), NOW))                        # 1: key x0
    plog.append_control_batch(1, 0, False, 0, NOW)                                      # 2
    ok(plog.append(build_batch([(b"w", b"kept", [], NOW)]), NOW))                       # 3
    ok(plog.append(b.batch(1, key=b"y", value=b"open"), NOW))                            # 4: y0, open
    ok(plog.append(build_batch([(b"y0", b"later", [], NOW)]), NOW))                     # 5
    ok(plog.append(build_batch([(b"z", b"last", [], NOW)]), NOW))                       # 6
    plog.compact(force=True)
    kept = {r.offset: r.value for batch in plog.batches() for r in iter_records(batch)
            if not parse_header(batch).is_control}
    # the aborted record is gone and did not supersede x0's committed value; the open
    # transaction's record and everything from the LSO on are untouched (y0 at 5 does not
    # supersede the open y0 at 4)
    assert kept == {0: b"committed", 3: b"kept", 4: b"open", 5: b"later", 6: b"last"}
    assert any(parse_header(batch).is_control for batch in plog.batches())   # markers are kept


def test_transactions_survive_a_restart(tmp_path):
    def open_store():
        s = LogStore()
        DataDir(str(tmp_path)).attach(s)
        return s

    store = open_store()
    plog = store.create_topic("t", 1).partitions[0]
    a, b, c = Producer(1), Producer(2), Producer(3)
    ok(plog.append(a.batch(2), NOW))                          # 0-1
    ok(plog.append(b.batch(2), NOW))                          # 2-3
    plog.append_control_batch(1, 0, False, 4, NOW)            # 4
    ok(plog.append(c.batch(1), NOW))                          # 5
    plog.append_control_batch(3, 0, True, 4, NOW)             # 6
    before = (plog.last_stable_offset, plog.open_transactions(), list(plog.producers.aborted),
              sorted(map(str, plog.active_producers())))
    assert before[0] == 2 and before[1] == {2: 2}

    again = open_store().get("t").partitions[0]
    assert (again.last_stable_offset, again.open_transactions(), list(again.producers.aborted),
            sorted(map(str, again.active_producers()))) == before
    # the reloaded state goes on as the live one would
    with pytest.raises(InvalidBatch):
        again.append_control_batch(1, 0, True, 3, NOW)        # coordinator epoch 4 was seen
    again.append_control_batch(2, 0, False, 4, NOW)
    assert again.last_stable_offset == again.high_watermark == 8
    assert [t.producer_id for t in again.aborted_transactions(0, 8)] == [1, 2]


def test_a_restart_after_delete_records_rebuilds_what_the_live_log_had(tmp_path):
    def open_store():
        s = LogStore()
        DataDir(str(tmp_path)).attach(s)
        return s

    plog = open_store().create_topic("t", 1).partitions[0]
    a, b, idem = Producer(1), Producer(2), Producer(3, transactional=False)
    ok(plog.append(idem.batch(2), NOW))                       # 0-1
    ok(plog.append(b.batch(1), NOW))                          # 2
    plog.append_control_batch(2, 0, False, 0, NOW)            # 3: aborted, wholly below the new start
    ok(plog.append(a.batch(3), NOW))                          # 4-6 open
    plog.delete_records(5)                                    # into the open transaction's batch
    live = (plog.log_start_offset, plog.last_stable_offset, plog.open_transactions(),
            sorted(plog.producers.producers), list(plog.producers.aborted))
    assert live == (5, 5, {1: 4}, [1], [])
    again = open_store().get("t").partitions[0]
    assert (again.log_start_offset, again.last_stable_offset, again.open_transactions(),
            sorted(again.producers.producers), list(again.producers.aborted)) == live
