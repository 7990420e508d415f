"""Replaying __transaction_state: every transactional id comes back as written; a transaction caught
mid-commit completes on load; an open one keeps its start time and times out."""
from kafkaemu.core.transactions.settings import TransactionSettings
from kafkaemu.core.transactions.coordinator import TransactionCoordinator
from kafkaemu.core.transactions.records import encode_key
from kafkaemu.protocol.errors import ErrorCode as E

from .harness import TxnHarness


def reload(h: TxnHarness, **settings) -> tuple[TransactionCoordinator, list, list]:
    records, markers = [], []
    fresh = TransactionCoordinator(TransactionSettings(**settings),
                                   sink=lambda p, recs, now: records.append((p, list(recs))),
                                   markers=markers.append, now_ms=h.now)
    fresh.load(h.all_records(), h.now)
    return fresh, records, markers


def comparable(c, tid):
    s = dict(c.state(tid))
    s.pop("last_producer_epoch")   # not written by Kafka
    return s


def test_every_transactional_id_comes_back_as_written():
    h = TxnHarness()
    h.init_ok("empty")
    h.ongoing("open", ("a", 0), ("b", 3))
    pid, epoch = h.ongoing("done", ("a", 1))
    h.end(pid, epoch, commit=False)
    fresh, records, markers = reload(h)
    for tid in ("empty", "open", "done"):
        assert comparable(fresh, tid) == comparable(h.c, tid)
    assert records == [] and markers == []


def test_a_transaction_caught_in_prepare_commit_completes_on_load():
    h = TxnHarness()
    pid, epoch = h.ongoing("t", ("a", 0), ("__consumer_offsets", 7))
    h.c.hold("t")
    assert h.end(pid, epoch, commit=True) == E.NONE   # PrepareCommit written, markers withheld: a crash here
    fresh, records, markers = reload(h)
    [marker] = markers
    assert (marker.producer_id, marker.producer_epoch, marker.commit, marker.partitions) == \
        (pid, epoch, True, (("__consumer_offsets", 7), ("a", 0)))
    assert fresh.state("t")["state"] == "CompleteCommit"
    assert [p for p, _ in records] == [fresh.partition_for("t")]   # the CompleteCommit record


def test_a_transaction_caught_in_prepare_abort_completes_as_an_abort():
    h = TxnHarness()
    pid, epoch = h.ongoing()
    h.c.hold("t")
    h.end(pid, epoch, commit=False)
    fresh, _, markers = reload(h)
    assert markers[0].commit is False and fresh.state("t")["state"] == "CompleteAbort"


def test_an_open_transaction_survives_and_times_out_from_its_original_start():
    h = TxnHarness()
    pid, epoch = h.init_ok(timeout=20000)
    h.add(pid, epoch)
    start = h.now
    h.advance(15000)
    fresh, _, markers = reload(h, abort_timed_out_transactions_interval_ms=1000)
    assert fresh.state("t")["state"] == "Ongoing" and fresh.state("t")["start_ms"] == start
    # the producer carries on after the restart
    from kafkaemu.core.transactions.requests import AddPartitions
    assert fresh.add_partitions(h.now, AddPartitions("t", pid, epoch, [("a", 1)])) == E.NONE
    fresh.tick(start + 21000)
    assert fresh.state("t")["state"] == "CompleteAbort" and markers[-1].partitions == (("a", 0), ("a", 1))


def test_tombstones_remove_and_unknown_or_broken_records_are_skipped():
    h = TxnHarness(transactional_id_expiration_ms=1000, remove_expired_transactional_ids_interval_ms=1000)
    h.init_ok("gone")
    h.advance(2000)
    assert h.c.state("gone") is None
    extra = [(b"\x00\x07junk", b"x"), (encode_key("broken"), b"\x00\x00\x01")]
    fresh = TransactionCoordinator()
    fresh.load(h.all_records() + extra, h.now)
    assert fresh.state("gone") is None and fresh.state("broken") is None


def test_max_producer_id_lets_the_broker_continue_above_loaded_ids():
    h = TxnHarness()
    pid, _ = h.init_ok("a")
    fresh, _, _ = reload(h)
    assert fresh.max_producer_id() == pid
