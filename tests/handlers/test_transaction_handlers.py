"""Transaction API handlers through the codecs at every version: the answers Kafka gives per version,
coordinator placement with several nodes, bad input answered with nothing half-applied, and the
whole path from InitProducerId to markers, offsets and a restart with a data directory."""
from __future__ import annotations

import pytest

from kafkaemu.core.placement import partition_for
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.storage.record_batch import build_batch, parse_header
from tests.conftest import call, new_broker

TIMEOUT = 60000
pytestmark = pytest.mark.broker(topics={"t": 2}, group_initial_rebalance_delay_ms=0)


def init(broker, tid="tx", version=5, pid=-1, epoch=-1, timeout=TIMEOUT, node_id=0):
    return call(broker, ApiKey.INIT_PRODUCER_ID, version, {"transactional_id": tid, "transaction_timeout_ms": timeout,
                                                           "producer_id": pid, "producer_epoch": epoch},
                node_id=node_id)


def add(broker, pid, epoch, partitions=(("t", 0),), tid="tx", version=3, node_id=0):
    topics = {}
    for topic, p in partitions:
        topics.setdefault(topic, []).append(p)
    resp = call(broker, ApiKey.ADD_PARTITIONS_TO_TXN, version, {
        "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid, "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": t, "partitions": ps} for t, ps in topics.items()]}, node_id=node_id)
    return {(t.name, r.partition_index): E(r.partition_error_code)
            for t in resp.results_by_topic_v3_and_below for r in t.results_by_partition}


def end(broker, pid, epoch, commit=True, tid="tx", version=4, node_id=0):
    return E(call(broker, ApiKey.END_TXN, version, {"transactional_id": tid, "producer_id": pid,
                                                    "producer_epoch": epoch, "committed": commit},
                  node_id=node_id).error_code)


def produce(broker, pid, epoch, seq, values, topic="t", partition=0, tid="tx"):
    batch = build_batch([(None, v, (), 1000) for v in values], producer_id=pid, producer_epoch=epoch,
                        base_sequence=seq, transactional=tid is not None)
    resp = call(broker, ApiKey.PRODUCE, 9, {"transactional_id": tid, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": topic, "partition_data": [{"index": partition, "records": batch}]}]})
    return E(resp.responses[0].partition_responses[0].error_code)


def describe(broker, tid="tx", node_id=0):
    resp = call(broker, ApiKey.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [tid]}, node_id=node_id)
    return resp.transaction_states[0]


def started(broker, tid="tx", partitions=(("t", 0),)):
    r = init(broker, tid)
    assert r.error_code == 0
    assert set(add(broker, r.producer_id, r.producer_epoch, partitions, tid=tid).values()) == {E.NONE}
    return r.producer_id, r.producer_epoch


# ------------------------------------------------------------------ advertised versions
def test_api_versions_advertise_the_transaction_apis_and_transaction_version_2(broker):
    resp = call(broker, ApiKey.API_VERSIONS, 4, {"client_software_name": "x", "client_software_version": "1"})
    versions = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    transaction_apis = {ApiKey.INIT_PRODUCER_ID: (0, 5), ApiKey.ADD_PARTITIONS_TO_TXN: (0, 5),
                        ApiKey.ADD_OFFSETS_TO_TXN: (0, 4), ApiKey.END_TXN: (0, 5), ApiKey.TXN_OFFSET_COMMIT: (0, 6),
                        ApiKey.DESCRIBE_TRANSACTIONS: (0, 0), ApiKey.LIST_TRANSACTIONS: (0, 2)}
    assert {k: versions[k] for k in transaction_apis} == transaction_apis
    assert versions[ApiKey.PRODUCE][1] >= 12
    # a new Kafka 4.x cluster finalizes transaction.version 2: clients use transactions V2
    assert {(f.name, f.min_version_level, f.max_version_level) for f in resp.finalized_features
            if f.name == "transaction.version"} == {("transaction.version", 2, 2)}
    assert ("transaction.version", 0, 2) in {(f.name, f.min_version, f.max_version) for f in resp.supported_features}


@pytest.mark.parametrize("level", [0, 1])
def test_a_capped_transaction_version_keeps_clients_on_v1(level):
    broker = new_broker(transaction_version=level)
    resp = call(broker, ApiKey.API_VERSIONS, 3, {"client_software_name": "x", "client_software_version": "1"})
    finalized = {f.name: f.max_version_level for f in resp.finalized_features}
    assert finalized.get("transaction.version") == (level or None)   # level 0 is not listed, as Kafka


# ------------------------------------------------------------------ InitProducerId
@pytest.mark.parametrize("version,code", [(3, E.INVALID_PRODUCER_EPOCH), (4, E.PRODUCER_FENCED),
                                          (5, E.PRODUCER_FENCED)])
def test_a_stale_kip360_epoch_is_fenced_in_each_versions_words(broker, version, code):
    first = init(broker)
    init(broker)
    assert E(init(broker, version=version, pid=first.producer_id, epoch=first.producer_epoch).error_code) == code


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4, 5])
def test_init_producer_id_every_version_bumps_the_epoch(broker, version):
    a = init(broker, version=version)
    b = init(broker, version=version)
    assert (a.error_code, b.error_code, b.producer_id, b.producer_epoch) == (0, 0, a.producer_id, a.producer_epoch + 1)


def test_transaction_state_is_an_internal_50_partition_topic_written_by_init(broker):
    topic = broker.store.get("__transaction_state")
    assert topic.internal and len(topic.partitions) == 50
    assert topic.configs["cleanup.policy"] == "compact"
    init(broker, "my-txn")
    written = [p.index for p in topic.partitions if p.log_end_offset]
    assert written == [partition_for("my-txn", 50)]


# ------------------------------------------------------------------ AddPartitionsToTxn
def test_unknown_or_internal_partitions_fail_the_whole_transaction_and_add_nothing(broker):
    r = init(broker)
    codes = add(broker, r.producer_id, r.producer_epoch, (("t", 0), ("t", 9), ("nope", 0)))
    assert codes == {("t", 0): E.OPERATION_NOT_ATTEMPTED, ("t", 9): E.UNKNOWN_TOPIC_OR_PARTITION,
                     ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    codes = add(broker, r.producer_id, r.producer_epoch, (("t", 0), ("__consumer_offsets", 0)))
    assert codes == {("t", 0): E.OPERATION_NOT_ATTEMPTED, ("__consumer_offsets", 0): E.TOPIC_AUTHORIZATION_FAILED}
    assert describe(broker).transaction_state == "Empty" and describe(broker).topics == []


@pytest.mark.parametrize("version,code", [(0, E.INVALID_PRODUCER_EPOCH), (1, E.INVALID_PRODUCER_EPOCH),
                                          (2, E.PRODUCER_FENCED), (3, E.PRODUCER_FENCED)])
def test_add_partitions_with_a_stale_epoch_per_version(broker, version, code):
    r = init(broker)
    init(broker)
    assert set(add(broker, r.producer_id, r.producer_epoch, version=version).values()) == {code}


def test_add_partitions_for_an_unknown_transactional_id(broker):
    assert set(add(broker, 5, 0, tid="never").values()) == {E.INVALID_PRODUCER_ID_MAPPING}


def test_v4_batches_transactions_and_verifies_without_adding(broker):
    pid, epoch = started(broker, "a", (("t", 0),))
    other = init(broker, "b")
    resp = call(broker, ApiKey.ADD_PARTITIONS_TO_TXN, 5, {"transactions": [
        {"transactional_id": "a", "producer_id": pid, "producer_epoch": epoch, "verify_only": True,
         "topics": [{"name": "t", "partitions": [0, 1]}]},
        {"transactional_id": "b", "producer_id": other.producer_id, "producer_epoch": other.producer_epoch,
         "verify_only": False, "topics": [{"name": "t", "partitions": [1]}]}]})
    assert resp.error_code == 0
    by_txn = {r.transactional_id: {(t.name, p.partition_index): E(p.partition_error_code)
                                   for t in r.topic_results for p in t.results_by_partition}
              for r in resp.results_by_transaction}
    assert by_txn == {"a": {("t", 0): E.NONE, ("t", 1): E.TRANSACTION_ABORTABLE}, "b": {("t", 1): E.NONE}}
    assert [t.partitions for t in describe(broker, "a").topics] == [[0]]
    assert [t.partitions for t in describe(broker, "b").topics] == [[1]]


# ------------------------------------------------------------------ EndTxn
@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_end_txn_without_a_transaction_is_invalid_txn_state(broker, version):
    r = init(broker)
    assert end(broker, r.producer_id, r.producer_epoch, version=version) == E.INVALID_TXN_STATE


@pytest.mark.parametrize("version,code", [(1, E.INVALID_PRODUCER_EPOCH), (2, E.PRODUCER_FENCED)])
def test_end_txn_with_a_stale_epoch_leaves_the_transaction_open(broker, version, code):
    pid, epoch = started(broker)
    assert end(broker, pid, epoch + 1, version=version) == code
    assert describe(broker).transaction_state == "Ongoing"


def test_commit_writes_a_marker_to_each_partition_and_advances_the_last_stable_offset(broker):
    pid, epoch = started(broker, partitions=(("t", 0), ("t", 1)))
    assert produce(broker, pid, epoch, 0, [b"a", b"b"]) == E.NONE
    plog = broker.store.get("t").partitions[0]
    assert plog.last_stable_offset == 0 and plog.high_watermark == 2
    assert end(broker, pid, epoch) == E.NONE
    assert describe(broker).transaction_state == "CompleteCommit"
    for p in broker.store.get("t").partitions:
        control = [parse_header(b) for b in p.batches() if parse_header(b).is_control]
        assert [(h.producer_id, h.producer_epoch) for h in control] == [(pid, epoch)]
    assert plog.last_stable_offset == plog.high_watermark == 3


def test_a_transactional_produce_to_a_partition_not_added_is_refused(broker):
    pid, epoch = started(broker, partitions=(("t", 0),))
    assert produce(broker, pid, epoch, 0, [b"x"], partition=1) == E.INVALID_TXN_STATE
    assert broker.store.get("t").partitions[1].high_watermark == 0


# ------------------------------------------------------------------ offsets in a transaction
def txn_commit(broker, pid, epoch, offset, group="g", version=4, generation=-1, member=""):
    resp = call(broker, ApiKey.TXN_OFFSET_COMMIT, version, {
        "transactional_id": "tx", "group_id": group, "producer_id": pid, "producer_epoch": epoch,
        "generation_id_or_member_epoch": generation, "member_id": member, "group_instance_id": None,
        "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                 "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    return E(resp.topics[0].partitions[0].error_code)


def fetch_offset(broker, group="g", require_stable=False, version=7):
    resp = call(broker, ApiKey.OFFSET_FETCH, version, {"group_id": group, "require_stable": require_stable,
                                                  "topics": [{"name": "t", "partition_indexes": [0]}]})
    p = resp.topics[0].partitions[0]
    return p.committed_offset, E(p.error_code)


def add_offsets(broker, pid, epoch, group="g", version=3):
    return E(call(broker, ApiKey.ADD_OFFSETS_TO_TXN, version, {"transactional_id": "tx", "producer_id": pid,
                                                               "producer_epoch": epoch, "group_id": group}).error_code)


@pytest.mark.parametrize("version,code", [(3, E.INVALID_TXN_STATE), (4, E.TRANSACTION_ABORTABLE)])
def test_txn_offset_commit_before_add_offsets_is_refused_per_version(broker, version, code):
    pid, epoch = started(broker)
    assert txn_commit(broker, pid, epoch, 5, version=version) == code
    assert fetch_offset(broker, require_stable=True) == (-1, E.NONE)


def test_offsets_sent_in_a_transaction_become_visible_on_commit_only(broker):
    pid, epoch = started(broker)
    assert add_offsets(broker, pid, epoch) == E.NONE
    offsets_partition = ("__consumer_offsets", partition_for("g", 50))
    assert [(t.topic, t.partitions) for t in describe(broker).topics] == [
        (offsets_partition[0], [offsets_partition[1]]), ("t", [0])]
    assert txn_commit(broker, pid, epoch, 5) == E.NONE
    assert fetch_offset(broker) == (-1, E.NONE)
    assert fetch_offset(broker, require_stable=True) == (-1, E.UNSTABLE_OFFSET_COMMIT)
    assert end(broker, pid, epoch, commit=True) == E.NONE
    assert fetch_offset(broker, require_stable=True) == (5, E.NONE)


def test_offsets_sent_in_an_aborted_transaction_never_become_visible(broker):
    pid, epoch = started(broker)
    add_offsets(broker, pid, epoch)
    txn_commit(broker, pid, epoch, 9)
    assert end(broker, pid, epoch, commit=False) == E.NONE
    assert fetch_offset(broker, require_stable=True) == (-1, E.NONE)


def test_txn_offset_commit_for_the_wrong_generation(broker):
    join = {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": 20000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b"m"}], "reason": None}
    member = call(broker, ApiKey.JOIN_GROUP, 9, join).member_id               # MEMBER_ID_REQUIRED gives the id
    assert call(broker, ApiKey.JOIN_GROUP, 9, dict(join, member_id=member)).error_code == 0
    group = broker.coordinator.group("g")
    pid, epoch = started(broker)
    add_offsets(broker, pid, epoch)
    assert txn_commit(broker, pid, epoch, 3, generation=group.generation_id + 5, member=member) == \
        E.ILLEGAL_GENERATION
    assert txn_commit(broker, pid, epoch, 3, generation=group.generation_id, member=member) == E.NONE


def test_txn_offset_commit_with_a_fenced_producer(broker):
    pid, epoch = started(broker)
    init(broker)   # a new instance aborts the transaction
    assert txn_commit(broker, pid, epoch, 3) == E.INVALID_PRODUCER_EPOCH


# ------------------------------------------------------------------ several nodes
@pytest.fixture
def cluster():
    return new_broker(topics={"t": 2}, nodes=3)   # node n listens on port 9092 + n


def test_find_coordinator_names_the_leader_of_the_ids_partition_and_others_answer_not_coordinator(cluster):
    tid = "placed"
    node = partition_for(tid, 50) % 3
    resp = call(cluster, ApiKey.FIND_COORDINATOR, 4, {"key_type": 1, "coordinator_keys": [tid, "other"]})
    assert resp.coordinators[0].node_id == node and resp.coordinators[0].port == 9092 + node
    wrong = (node + 1) % 3
    assert E(init(cluster, tid, node_id=wrong).error_code) == E.NOT_COORDINATOR
    r = init(cluster, tid, node_id=node)
    assert r.error_code == 0
    assert set(add(cluster, r.producer_id, r.producer_epoch, tid=tid, node_id=wrong).values()) == {E.NOT_COORDINATOR}
    assert end(cluster, r.producer_id, r.producer_epoch, tid=tid, node_id=wrong) == E.NOT_COORDINATOR
    assert E(describe(cluster, tid, node_id=wrong).error_code) == E.NOT_COORDINATOR
    body = {"state_filters": [], "producer_id_filters": [], "duration_filter": -1}
    lists = {n: [s.transactional_id for s in call(cluster, ApiKey.LIST_TRANSACTIONS, 1, body, node_id=n)
                 .transaction_states] for n in cluster.placement.node_ids}
    assert lists[node] == [tid] and lists[wrong] == []


def test_moving_the_transaction_state_partition_moves_the_coordinator(cluster):
    tid = "moving"
    node = partition_for(tid, 50) % 3
    r = init(cluster, tid, node_id=node)
    assert set(add(cluster, r.producer_id, r.producer_epoch, tid=tid, node_id=node).values()) == {E.NONE}
    new = (node + 1) % 3
    cluster.placement.move_leader("__transaction_state", partition_for(tid, 50), new)
    assert end(cluster, r.producer_id, r.producer_epoch, tid=tid, node_id=node) == E.NOT_COORDINATOR
    assert end(cluster, r.producer_id, r.producer_epoch, tid=tid, node_id=new) == E.NONE


# ------------------------------------------------------------------ restart with a data dir
def test_a_transaction_caught_mid_commit_completes_after_a_restart(tmp_path):
    b = new_broker(topics={"t": 1}, data_dir=str(tmp_path))
    pid, epoch = started(b)
    assert produce(b, pid, epoch, 0, [b"a"]) == E.NONE
    b.txn_hooks.hold("tx")
    assert end(b, pid, epoch) == E.NONE
    assert b.store.get("t").partitions[0].last_stable_offset == 0   # markers withheld: still pinned
    restarted = new_broker(10, data_dir=str(tmp_path))
    assert restarted.txn_hooks.state("tx")["state"] == "CompleteCommit"
    plog = restarted.store.get("t").partitions[0]
    assert plog.last_stable_offset == plog.high_watermark == 2
    # producer ids continue above the loaded ones
    assert init(restarted, "new").producer_id > pid


def test_offsets_of_a_transaction_caught_mid_commit_apply_after_a_restart(tmp_path):
    b = new_broker(topics={"t": 1}, data_dir=str(tmp_path))
    pid, epoch = started(b)
    add_offsets(b, pid, epoch)
    assert txn_commit(b, pid, epoch, 17) == E.NONE
    b.txn_hooks.hold("tx")
    assert end(b, pid, epoch) == E.NONE
    assert fetch_offset(b, require_stable=True) == (-1, E.UNSTABLE_OFFSET_COMMIT)
    restarted = new_broker(10, data_dir=str(tmp_path))
    assert fetch_offset(restarted, require_stable=True) == (17, E.NONE)
    again = new_broker(20, data_dir=str(tmp_path))   # the marker is in __consumer_offsets now: replayed as such
    assert fetch_offset(again, require_stable=True) == (17, E.NONE)


# ------------------------------------------------------------------ WriteTxnMarkers (Admin.abortTransaction)
def write_markers(broker, pid, epoch, partitions, commit=False, coordinator_epoch=0, version=1, node_id=0):
    topics = {}
    for topic, p in partitions:
        topics.setdefault(topic, []).append(p)
    resp = call(broker, ApiKey.WRITE_TXN_MARKERS, version, {"markers": [{
        "producer_id": pid, "producer_epoch": epoch, "transaction_result": commit, "coordinator_epoch": coordinator_epoch,
        "topics": [{"name": t, "partition_indexes": ps} for t, ps in topics.items()]}]}, node_id=node_id)
    return {(t.name, p.partition_index): E(p.error_code) for m in resp.markers for t in m.topics for p in t.partitions}


@pytest.mark.parametrize("version", [1, 2])
def test_write_txn_markers_ends_a_hanging_transaction_on_a_partition(broker, version):
    init(broker)
    pid, epoch = started(broker, partitions=(("t", 0),))   # epoch 1
    assert produce(broker, pid, epoch, 0, [b"a", b"b"]) == E.NONE
    plog = broker.store.get("t").partitions[0]
    assert plog.last_stable_offset == 0
    codes = write_markers(broker, pid, epoch, [("t", 0), ("t", 7), ("nope", 0)], version=version)
    assert codes == {("t", 0): E.NONE, ("t", 7): E.UNKNOWN_TOPIC_OR_PARTITION, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert plog.last_stable_offset == plog.high_watermark == 3
    assert describe(broker).transaction_state == "Ongoing"   # the coordinator is not told, as in Kafka
    assert write_markers(broker, pid, epoch - 1, [("t", 0)]) == {("t", 0): E.INVALID_PRODUCER_EPOCH}


def test_write_txn_markers_to_consumer_offsets_completes_pending_offsets(broker):
    pid, epoch = started(broker)
    add_offsets(broker, pid, epoch)
    txn_commit(broker, pid, epoch, 11)
    assert write_markers(broker, pid, epoch, [("__consumer_offsets", partition_for("g", 50))], commit=True) == \
        {("__consumer_offsets", partition_for("g", 50)): E.NONE}
    assert fetch_offset(broker, require_stable=True) == (11, E.NONE)


def test_write_txn_markers_to_a_partition_led_elsewhere(cluster):
    leader = cluster.placement.partition_leader(cluster.store.get("t").partitions[0])
    other = (leader + 1) % 3
    assert write_markers(cluster, 1000, 0, [("t", 0)], node_id=other) == {("t", 0): E.NOT_LEADER_OR_FOLLOWER}


@pytest.mark.parametrize("version,code", [(0, E.INVALID_PRODUCER_EPOCH), (1, E.INVALID_PRODUCER_EPOCH),
                                          (2, E.PRODUCER_FENCED), (4, E.PRODUCER_FENCED)])
def test_add_offsets_with_a_stale_epoch_per_version(broker, version, code):
    r = init(broker)
    init(broker)
    assert add_offsets(broker, r.producer_id, r.producer_epoch, version=version) == code
    assert describe(broker).topics == []


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_txn_offset_commit_every_version_commits_on_end_txn(broker, version):
    pid, epoch = started(broker)
    add_offsets(broker, pid, epoch)
    assert txn_commit(broker, pid, epoch, 8, version=version) == E.NONE
    assert end(broker, pid, epoch) == E.NONE
    assert fetch_offset(broker, require_stable=True) == (8, E.NONE)


def test_txn_offset_commit_errors_before_the_group_is_looked_at(broker):
    pid, epoch = started(broker)
    assert txn_commit(broker, pid, epoch, 1, group="") == E.INVALID_GROUP_ID
    resp = call(broker, ApiKey.TXN_OFFSET_COMMIT, 3, {
        "transactional_id": "tx", "group_id": "g", "producer_id": pid, "producer_epoch": epoch,
        "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"name": "gone", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                    "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    assert E(resp.topics[0].partitions[0].error_code) == E.UNKNOWN_TOPIC_OR_PARTITION
