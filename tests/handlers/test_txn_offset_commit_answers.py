"""TxnOffsetCommit's answer in KafkaApis.handleTxnOffsetCommitRequest's order (Kafka 4.4): the
topics KafkaApis answers itself (an unknown id, a refused topic, an unknown topic or partition) come
first, one entry per topic (TxnOffsetCommitResponse.Builder), then the coordinator's answer merged
in (Builder.merge); an existing topic named with no partitions is left out."""
from kafkaemu.auth.acl import Acl, AclOperation as Op, AclPermissionType as Perm, PatternType as PT, ResourceType as RT
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.conftest import call, new_broker

UNKNOWN = E.UNKNOWN_TOPIC_OR_PARTITION


def producer(broker, **context):
    return call(broker, ApiKey.INIT_PRODUCER_ID, 5, {"transactional_id": "tx", "transaction_timeout_ms": 60000,
                                                     "producer_id": -1, "producer_epoch": -1}, **context)


def txn_commit(broker, pid, topics, version=5, **context):
    """``topics``: [(name, or id from v6, [partition])]; v5+ adds the group's partition itself."""
    key = "topic_id" if version >= 6 else "name"
    resp = call(broker, ApiKey.TXN_OFFSET_COMMIT, version, {
        "transactional_id": "tx", "group_id": "g", "producer_id": pid.producer_id,
        "producer_epoch": pid.producer_epoch, "generation_id_or_member_epoch": -1, "member_id": "",
        "group_instance_id": None, "topics": [{key: t, "partitions": [
            {"partition_index": p, "committed_offset": 5, "committed_leader_epoch": -1, "committed_metadata": ""}
            for p in parts]} for t, parts in topics]}, **context)
    return [(bytes(t.topic_id) if version >= 6 else t.name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in resp.topics]


def test_the_topics_kafka_apis_answers_come_first_then_the_coordinators_merged_in():
    broker = new_broker(topics={"a": 1, "b": 1})
    pid = producer(broker)
    assert txn_commit(broker, pid, [("a", [0]), ("missing", [0]), ("b", [0, 9])]) == [
        ("missing", [(0, UNKNOWN)]), ("b", [(9, UNKNOWN), (0, 0)]), ("a", [(0, 0)])]
    a, b = broker.store.get("a").topic_id, broker.store.get("b").topic_id
    unknown_id = b"\x07" * 16
    assert txn_commit(broker, pid, [(a, [0]), (unknown_id, [0]), (b, [3, 0])], version=6) == [
        (unknown_id, [(0, E.UNKNOWN_TOPIC_ID)]), (b, [(3, UNKNOWN), (0, 0)]), (a, [(0, 0)])]


def test_a_refused_topic_comes_first():
    broker = new_broker(topics={"a": 1, "denied": 1}, authorizer=True)
    broker.authorizer.create([
        Acl(RT.TRANSACTIONAL_ID, "tx", PT.LITERAL, "User:alice", "*", op, Perm.ALLOW) for op in (Op.WRITE, Op.DESCRIBE)
    ] + [Acl(RT.GROUP, "g", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW),
         Acl(RT.TOPIC, "a", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW)])
    alice = {"principal": "User:alice"}
    pid = producer(broker, **alice)
    assert pid.error_code == 0
    assert txn_commit(broker, pid, [("a", [0]), ("denied", [0])], **alice) == [
        ("denied", [(0, E.TOPIC_AUTHORIZATION_FAILED)]), ("a", [(0, 0)])]


def test_an_existing_topic_with_no_partitions_is_left_out_an_unknown_one_kept():
    broker = new_broker(topics={"a": 1, "b": 1})
    pid = producer(broker)
    assert txn_commit(broker, pid, [("a", [0]), ("b", [])]) == [("a", [(0, 0)])]
    assert txn_commit(broker, pid, [("b", []), ("missing", []), ("a", [0])]) == [("missing", []), ("a", [(0, 0)])]
    assert txn_commit(broker, pid, [("b", [])]) == []


def test_a_topic_named_twice_is_one_entry_only_when_kafka_apis_answered_something():
    """Builder.merge keeps the coordinator's answer as it is when KafkaApis answered nothing itself
    (the topic twice); otherwise each of its topics joins the entry already made for that topic."""
    broker = new_broker(topics={"a": 2})
    pid = producer(broker)
    assert txn_commit(broker, pid, [("a", [0]), ("a", [1])]) == [("a", [(0, 0)]), ("a", [(1, 0)])]
    assert txn_commit(broker, pid, [("a", [0]), ("missing", [0]), ("a", [1])]) == [
        ("missing", [(0, UNKNOWN)]), ("a", [(0, 0), (1, 0)])]
    assert txn_commit(broker, pid, [("a", [0]), ("a", [7]), ("a", [1])]) == [("a", [(7, UNKNOWN), (0, 0), (1, 0)])]
    assert txn_commit(broker, pid, [("missing", [0]), ("missing", [1])]) == [("missing", [(0, UNKNOWN), (1, UNKNOWN)])]
