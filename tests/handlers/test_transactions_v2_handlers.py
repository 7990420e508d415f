"""Transactions V2 (KIP-890 part 2) through the handlers and codecs: Produce v12 and TxnOffsetCommit
v5 add their partition to the transaction (no AddPartitionsToTxn, no AddOffsetsToTxn), EndTxn v5
bumps the epoch and answers it, the partitions refuse the previous epoch afterwards, and a cluster
capped below transaction.version 2 keeps V1's answers."""
from __future__ import annotations

import pytest

from kafkaemu.core.placement import partition_for
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.storage.record_batch import InvalidBatch, build_batch
from tests.conftest import call, new_broker
from tests.handlers.test_transaction_handlers import describe, fetch_offset, init, txn_commit

pytestmark = pytest.mark.broker(topics={"t": 2}, group_initial_rebalance_delay_ms=0)


def produce(broker, pid, epoch, seq, values, partition=0, version=12, tid="tx"):
    batch = build_batch([(None, v, (), 1000) for v in values], producer_id=pid, producer_epoch=epoch,
                        base_sequence=seq, transactional=True)
    resp = call(broker, ApiKey.PRODUCE, version, {"transactional_id": tid, "acks": -1, "timeout_ms": 1000,
                                                  "topic_data": [{"name": "t", "partition_data": [
                                                      {"index": partition, "records": batch}]}]})
    return E(resp.responses[0].partition_responses[0].error_code)


def end_v5(broker, pid, epoch, commit=True, tid="tx"):
    resp = call(broker, ApiKey.END_TXN, 5, {"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                                            "committed": commit})
    return E(resp.error_code), resp.producer_id, resp.producer_epoch


def partitions_of(broker, tid="tx"):
    return [(t.topic, sorted(t.partitions)) for t in describe(broker, tid).topics]


def test_produce_v12_adds_its_partitions_to_the_transaction(broker):
    r = init(broker)
    pid, epoch = r.producer_id, r.producer_epoch
    assert produce(broker, pid, epoch, 0, [b"a"], partition=0) == E.NONE
    assert describe(broker).transaction_state == "Ongoing"
    assert produce(broker, pid, epoch, 0, [b"b"], partition=1) == E.NONE
    assert produce(broker, pid, epoch, 1, [b"c"], partition=0) == E.NONE
    assert partitions_of(broker) == [("t", [0, 1])]
    plog = broker.store.get("t").partitions[0]
    assert plog.last_stable_offset == 0 and plog.high_watermark == 2


def test_produce_v11_still_needs_add_partitions(broker):
    r = init(broker)
    assert produce(broker, r.producer_id, r.producer_epoch, 0, [b"a"], version=11) == E.TRANSACTION_ABORTABLE
    assert broker.store.get("t").partitions[0].high_watermark == 0


@pytest.mark.broker(topics={"t": 2}, transaction_partition_verification_enable=False)
def test_produce_v12_adds_even_with_verification_off(broker):
    r = init(broker)
    assert produce(broker, r.producer_id, r.producer_epoch, 0, [b"a"]) == E.NONE
    assert partitions_of(broker) == [("t", [0])]


def test_produce_v12_of_a_fenced_or_unknown_producer_adds_nothing(broker):
    r = init(broker)
    init(broker)   # another instance: the first is fenced
    assert produce(broker, r.producer_id, r.producer_epoch, 0, [b"a"]) == E.INVALID_PRODUCER_EPOCH
    assert produce(broker, r.producer_id + 100, 0, 0, [b"a"]) == E.INVALID_PRODUCER_ID_MAPPING
    assert produce(broker, r.producer_id, r.producer_epoch + 1, 0, [b"a"], tid="other") == \
        E.INVALID_PRODUCER_ID_MAPPING
    assert broker.store.get("t").partitions[0].high_watermark == 0
    assert partitions_of(broker) == []


def test_end_txn_v5_bumps_the_epoch_and_the_next_transaction_uses_it(broker):
    r = init(broker)
    pid, epoch = r.producer_id, r.producer_epoch
    assert produce(broker, pid, epoch, 0, [b"a", b"b"]) == E.NONE
    assert end_v5(broker, pid, epoch) == (E.NONE, pid, epoch + 1)
    plog = broker.store.get("t").partitions[0]
    assert plog.last_stable_offset == plog.high_watermark == 3   # two records and the marker
    assert describe(broker).producer_epoch == epoch + 1
    # a late write of the finished transaction is refused: the marker moved the partition's epoch
    assert produce(broker, pid, epoch, 2, [b"late"]) == E.INVALID_PRODUCER_EPOCH
    # the next transaction starts at sequence 0 with the bumped epoch
    assert produce(broker, pid, epoch + 1, 0, [b"c"]) == E.NONE
    assert end_v5(broker, pid, epoch + 1, commit=False) == (E.NONE, pid, epoch + 2)
    # a retry of that EndTxn (its answer lost) answers the same
    assert end_v5(broker, pid, epoch + 1, commit=False) == (E.NONE, pid, epoch + 2)
    assert end_v5(broker, pid, epoch + 1, commit=True)[0] == E.INVALID_TXN_STATE


def test_end_txn_v5_aborts_a_transaction_that_added_nothing(broker):
    r = init(broker)
    assert end_v5(broker, r.producer_id, r.producer_epoch, commit=False) == \
        (E.NONE, r.producer_id, r.producer_epoch + 1)
    assert end_v5(broker, r.producer_id, r.producer_epoch + 1, commit=True) == (E.INVALID_TXN_STATE, -1, -1)


def test_end_txn_v4_keeps_the_epoch(broker):
    r = init(broker)
    assert produce(broker, r.producer_id, r.producer_epoch, 0, [b"a"]) == E.NONE
    resp = call(broker, ApiKey.END_TXN, 4, {"transactional_id": "tx", "producer_id": r.producer_id,
                                            "producer_epoch": r.producer_epoch, "committed": True})
    assert resp.error_code == 0 and describe(broker).producer_epoch == r.producer_epoch


def test_txn_offset_commit_v5_adds_the_groups_partition(broker):
    r = init(broker)
    pid, epoch = r.producer_id, r.producer_epoch
    assert txn_commit(broker, pid, epoch, 7, version=4) == E.TRANSACTION_ABORTABLE   # V1 needs AddOffsetsToTxn
    assert txn_commit(broker, pid, epoch, 7, version=5) == E.NONE
    assert partitions_of(broker) == [("__consumer_offsets", [partition_for("g", 50)])]
    assert fetch_offset(broker, require_stable=True) == (-1, E.UNSTABLE_OFFSET_COMMIT)
    assert end_v5(broker, pid, epoch) == (E.NONE, pid, epoch + 1)
    assert fetch_offset(broker, require_stable=True) == (7, E.NONE)


def test_a_capped_cluster_writes_version_0_records_and_its_timeouts_bump_once():
    broker = new_broker(transaction_version=0, topics={"t": 1})
    r = init(broker)
    assert produce(broker, r.producer_id, r.producer_epoch, 0, [b"a"]) == E.NONE   # a V2 client still works
    assert broker.txn_hooks.abort("tx") == "NONE"
    assert describe(broker).producer_epoch == r.producer_epoch + 1


def test_a_v2_marker_must_be_newer_than_the_partitions_epoch_unless_it_repeats_one(broker):
    r = init(broker)
    pid, epoch = r.producer_id, r.producer_epoch
    assert produce(broker, pid, epoch, 0, [b"a"]) == E.NONE
    plog = broker.store.get("t").partitions[0]
    with pytest.raises(InvalidBatch) as refused:   # the transaction's own epoch: a stale V2 marker
        plog.append_control_batch(pid, epoch, True, 0, 0, transaction_version=2)
    assert refused.value.code_name == "INVALID_PRODUCER_EPOCH" and plog.high_watermark == 1
    plog.append_control_batch(pid, epoch + 1, True, 0, 0, transaction_version=2)
    assert plog.last_stable_offset == 2
    # the same marker again (a retry after its answer was lost): written, nothing open to complete
    plog.append_control_batch(pid, epoch + 1, True, 0, 0, transaction_version=2)
    with pytest.raises(InvalidBatch):
        plog.append_control_batch(pid, epoch, True, 0, 0, transaction_version=2)


def test_the_transaction_state_hook_names_the_clients_transaction_version(broker):
    r = init(broker)
    assert broker.txn_hooks.state("tx")["transaction_version"] == 0
    assert produce(broker, r.producer_id, r.producer_epoch, 0, [b"a"]) == E.NONE
    assert broker.txn_hooks.state("tx")["transaction_version"] == 2


def _set_transaction_version(broker, level, kind):
    body = {"timeout_ms": 1000, "validate_only": False, "feature_updates": [
        {"feature": "transaction.version", "max_version_level": level, "upgrade_type": kind}]}
    assert call(broker, ApiKey.UPDATE_FEATURES, 2, body).error_code == E.NONE


def _last_state_value_version(broker) -> int:
    import struct

    from kafkaemu.storage import transaction_state_topic
    *_, (_, value) = transaction_state_topic.read_records(broker.store)
    return struct.unpack_from(">h", value)[0]


def test_the_coordinator_follows_transaction_version_as_update_features_changes_it(broker):
    """Kafka's TransactionStateManager reads the finalized transaction.version at each use: the
    coordinator's own aborts (timeouts, fencing) and its records' version follow an UpdateFeatures
    made while running, down to V1 and back up to V2."""
    r = init(broker)
    pid, epoch = r.producer_id, r.producer_epoch
    assert produce(broker, pid, epoch, 0, [b"a"]) == E.NONE      # a V2 producer's transaction
    assert end_v5(broker, pid, epoch) == (E.NONE, pid, epoch + 1)
    epoch += 1
    assert _last_state_value_version(broker) == 1
    _set_transaction_version(broker, 1, 2)                          # downgraded while running
    assert produce(broker, pid, epoch, 0, [b"b"]) == E.NONE
    assert broker.txn_hooks.time_out("tx") == "NONE"
    # V1's timeout: the epoch fenced once, the abort keeps it (V2 would bump it twice)
    assert describe(broker).producer_epoch == epoch + 1
    assert broker.txn_hooks.state("tx")["state"] == "CompleteAbort"
    epoch += 1
    _set_transaction_version(broker, 0, 2)                          # records back to version 0
    r = init(broker, pid=pid, epoch=epoch)
    assert r.error_code == E.NONE
    pid, epoch = r.producer_id, r.producer_epoch
    assert _last_state_value_version(broker) == 0
    _set_transaction_version(broker, 2, 1)                          # and up again: V2's abort
    assert produce(broker, pid, epoch, 0, [b"c"]) == E.NONE
    assert broker.txn_hooks.time_out("tx") == "NONE"
    assert describe(broker).producer_epoch == epoch + 2
    assert _last_state_value_version(broker) == 1
