"""__transaction_state records in Apache Kafka's byte format (TransactionLog key v0, value v0/v1)."""
import struct

import pytest

from kafkaemu.core.transactions import records
from kafkaemu.core.transactions.metadata import TxnTransit
from kafkaemu.core.transactions.state import TransactionState as S


def transit(state, partitions=frozenset(), start=-1, epoch=3) -> TxnTransit:
    return TxnTransit(1234, -1, -1, epoch, -1, 60000, state, frozenset(partitions), start, 999)


def test_key_is_version_0_with_the_transactional_id():
    assert records.encode_key("tx-1") == b"\x00\x00" + b"\x00\x04tx-1"
    assert records.decode_key(records.encode_key("tx-1")).transactional_id == "tx-1"
    with pytest.raises(ValueError):
        records.decode_key(b"\x00\x01\x00\x01a")


def test_value_v0_bytes_as_kafka_writes_them():
    value = records.encode_value(transit(S.ONGOING, {("b", 1), ("a", 2), ("a", 0)}, start=500))
    expected = struct.pack(">hqhib", 0, 1234, 3, 60000, 1)
    # partitions grouped by topic: [a: [0, 2], b: [1]]
    expected += struct.pack(">i", 2) + struct.pack(">h", 1) + b"a" + struct.pack(">iii", 2, 0, 2)
    expected += struct.pack(">h", 1) + b"b" + struct.pack(">ii", 1, 1)
    expected += struct.pack(">qq", 999, 500)
    assert value == expected


def test_empty_state_writes_null_partitions_and_complete_writes_an_empty_list():
    empty = records.encode_value(transit(S.EMPTY))
    assert empty[2 + 8 + 2 + 4 + 1:][:4] == b"\xff\xff\xff\xff"
    complete = records.encode_value(transit(S.COMPLETE_COMMIT, start=500))
    assert complete[2 + 8 + 2 + 4 + 1:][:4] == b"\x00\x00\x00\x00"
    with pytest.raises(ValueError):
        records.encode_value(transit(S.EMPTY, {("a", 0)}))


def test_values_decode_to_metadata_with_no_last_epoch():
    md = records.decode_value("t", records.encode_value(transit(S.PREPARE_COMMIT, {("a", 0), ("a", 1)}, start=5)))
    assert (md.producer_id, md.producer_epoch, md.last_producer_epoch, md.state, md.partitions,
            md.txn_start_timestamp, md.txn_last_update_timestamp, md.txn_timeout_ms) == \
        (1234, 3, -1, S.PREPARE_COMMIT, {("a", 0), ("a", 1)}, 5, 999, 60000)


def test_a_flexible_v1_value_is_read_with_its_tagged_producer_ids():
    from kafkaemu.protocol.catalog import catalog
    body = catalog().data("TransactionLogValue", 1).encode({
        "producer_id": 77, "previous_producer_id": 76, "producer_epoch": 0, "transaction_timeout_ms": 1000,
        "transaction_status": S.COMPLETE_ABORT.id, "transaction_partitions": [],
        "transaction_last_update_timestamp_ms": 3, "transaction_start_timestamp_ms": 2})
    md = records.decode_value("t", b"\x00\x01" + body)
    assert (md.producer_id, md.previous_producer_id, md.state) == (77, 76, S.COMPLETE_ABORT)
    with pytest.raises(ValueError):
        records.decode_value("t", b"\x00\x02" + body)
