"""CreateTopics and CreatePartitions refuse more than 10,000 new partitions per request, as Kafka's
controller does (ReplicationControlManager.validateTotalNumberOfPartitions): every topic of the
request gets POLICY_VIOLATION before anything is validated or allocated."""
import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from tests.conftest import new_broker, wire_call


TOO_MANY = "Excessively large number of partitions per request."
TOO_MANY_MORE = "Excessively large number of additional partitions per request."


def _topic(name, partitions=-1, assignments=0):
    return {"name": name, "num_partitions": partitions, "replication_factor": -1, "configs": [],
            "assignments": [{"partition_index": i, "broker_ids": [0]} for i in range(assignments)]}


def _user_topics(broker):
    return {name: t for name, t in broker.store.topics.items() if not t.internal}


def _create(broker, *topics, validate_only=False, version=7):
    answer = wire_call(broker, ApiKey.CREATE_TOPICS, version,
                       {"topics": list(topics), "timeout_ms": 1000, "validate_only": validate_only})
    return [(t.name, t.error_code, t.error_message) for t in answer.topics]


@pytest.mark.parametrize("count", [10_001, 1_000_000, 2**31 - 1])
def test_create_topics_over_the_limit_is_a_policy_violation(broker, count):
    assert _create(broker, _topic("big", count)) == [("big", ErrorCode.POLICY_VIOLATION, TOO_MANY)]
    assert _create(broker, _topic("big", count), validate_only=True) == [("big", ErrorCode.POLICY_VIOLATION, TOO_MANY)]
    assert _user_topics(broker) == {}


def test_the_limit_is_on_the_whole_request_and_fails_every_topic():
    broker = new_broker(num_partitions=5000)
    answer = _create(broker, _topic("a", 5000), _topic("b"), _topic("c", assignments=1), _topic("bad/name", 0))
    assert answer == [(n, ErrorCode.POLICY_VIOLATION, TOO_MANY) for n in ("a", "b", "c", "bad/name")]
    assert _user_topics(broker) == {}
    # exactly 10,000 is allowed; duplicates (refused as such) and invalid counts do not count
    answer = _create(broker, _topic("a", 4999), _topic("b"), _topic("c", assignments=1),
                     _topic("d", 9000), _topic("d", 9000), _topic("e", -5))
    assert [(n, code) for n, code, _ in answer] == [
        ("a", 0), ("b", 0), ("c", 0), ("d", ErrorCode.INVALID_REQUEST), ("d", ErrorCode.INVALID_REQUEST),
        ("e", ErrorCode.INVALID_PARTITIONS)]
    assert sum(len(t.partitions) for t in _user_topics(broker).values()) == 10_000


def test_old_versions_get_the_same_answer(broker):
    assert [(n, code) for n, code, _ in _create(broker, _topic("big", 2**31 - 1), version=2)] == \
        [("big", ErrorCode.POLICY_VIOLATION)]


def _grow(broker, *topics, validate_only=False):
    answer = wire_call(broker, ApiKey.CREATE_PARTITIONS, 3, {
        "topics": [{"name": n, "count": c, "assignments": None} for n, c in topics],
        "timeout_ms": 1000, "validate_only": validate_only})
    return [(r.name, r.error_code, r.error_message) for r in answer.results]


@pytest.mark.parametrize("count", [10_002, 1_000_000, 2**31 - 1])
def test_create_partitions_over_the_limit_is_a_policy_violation(broker, count):
    broker.topics.create("t", 1, {})
    broker.topics.create("u", 1, {})
    assert _grow(broker, ("t", count), ("u", 2)) == [
        ("t", ErrorCode.POLICY_VIOLATION, TOO_MANY_MORE), ("u", ErrorCode.POLICY_VIOLATION, TOO_MANY_MORE)]
    assert _grow(broker, ("t", count), validate_only=True) == [("t", ErrorCode.POLICY_VIOLATION, TOO_MANY_MORE)]
    assert [len(broker.store.get(n).partitions) for n in ("t", "u")] == [1, 1]


def test_create_partitions_counts_only_what_the_controller_would_add(broker):
    broker.topics.create("t", 5, {})
    answer = _grow(broker, ("t", 10_005), ("nope", 50_000), ("t2", 20_000), ("t2", 20_000))
    assert [(n, code) for n, code, _ in answer] == [
        ("t", 0), ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("t2", ErrorCode.INVALID_REQUEST)]   # a name given twice is answered once, as Kafka 4.4 (differential suite)
    assert len(broker.store.get("t").partitions) == 10_005


def test_create_partitions_messages_are_kafkas(broker):
    broker.topics.create("t", 3, {})
    assert _grow(broker, ("t", 3), ("t", 3)) == [("t", ErrorCode.INVALID_REQUEST, "Duplicate topic name.")]
    assert _grow(broker, ("t", 3)) == [("t", ErrorCode.INVALID_PARTITIONS, "Topic already has 3 partition(s).")]
    assert _grow(broker, ("t", 2)) == [
        ("t", ErrorCode.INVALID_PARTITIONS, "The topic t currently has 3 partition(s); 2 would not be an increase.")]
    assert _grow(broker, ("nope", 2)) == [("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)]
