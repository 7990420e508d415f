"""Metadata answers kept and answered again (handlers/metadata.py, "Answers reused"): one client asks
the same Metadata over one connection while the cluster changes through the wire APIs; each change
shows in its very next answer, as a fresh answer would give it."""
import pytest

from kafkaemu.auth.acl import Acl, AclOperation as Op, AclPermissionType as Perm, PatternType as PT, ResourceType as RT
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from tests.conftest import WireClient, new_broker

ZERO = bytes(16)


def ask(client, *names, version=12, auto_create=False):
    answer = client.call(ApiKey.METADATA, version, {"topics": [{"name": n, "topic_id": ZERO} for n in names],
                                                    "allow_auto_topic_creation": auto_create})
    return [(t.name, t.error_code, t.topic_id, [(p.partition_index, p.leader_epoch) for p in t.partitions])
            for t in answer.topics], [(b.node_id, b.host, b.port) for b in answer.brokers]


def create(client, name, partitions):
    answer = client.call(ApiKey.CREATE_TOPICS, 7, {"topics": [
        {"name": name, "num_partitions": partitions, "replication_factor": -1, "configs": [], "assignments": []}],
        "timeout_ms": 1000, "validate_only": False})
    assert answer.topics[0].error_code == ErrorCode.NONE
    return answer.topics[0].topic_id


@pytest.fixture
def client():
    return WireClient(new_broker())


@pytest.mark.parametrize("version", [4, 9, 12, 13])
def test_the_same_question_is_answered_the_same_and_kept(client, version):
    create(client, "t", 2)
    first = ask(client, "t", "missing", version=version)
    assert client.broker.services.metadata_answers   # kept
    assert ask(client, "t", "missing", version=version) == first
    assert [(name, code) for name, code, _, _ in first[0]] == [("t", 0), ("missing", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]


def test_a_created_topic_shows_in_the_next_answer(client):
    assert ask(client, "t")[0] == [("t", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ZERO, [])]
    assert ask(client, "t")[0] == [("t", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ZERO, [])]
    topic_id = create(client, "t", 2)
    assert ask(client, "t")[0] == [("t", 0, topic_id, [(0, 0), (1, 0)])]


def test_a_deleted_topic_and_its_recreation_show_in_the_next_answers(client):
    old_id = create(client, "t", 1)
    assert ask(client, "t")[0] == [("t", 0, old_id, [(0, 0)])]
    answer = client.call(ApiKey.DELETE_TOPICS, 6, {"timeout_ms": 1000, "topics": [{"name": "t", "topic_id": ZERO}]})
    assert answer.responses[0].error_code == ErrorCode.NONE
    assert ask(client, "t")[0] == [("t", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ZERO, [])]
    new_id = create(client, "t", 3)
    assert new_id != old_id
    assert ask(client, "t")[0] == [("t", 0, new_id, [(0, 0), (1, 0), (2, 0)])]


def test_a_new_partition_shows_in_the_next_answer(client):
    topic_id = create(client, "t", 1)
    assert ask(client, "t")[0] == [("t", 0, topic_id, [(0, 0)])]
    answer = client.call(ApiKey.CREATE_PARTITIONS, 3, {"topics": [{"name": "t", "count": 3, "assignments": None}],
                                                       "timeout_ms": 1000, "validate_only": False})
    assert answer.results[0].error_code == ErrorCode.NONE
    assert ask(client, "t")[0] == [("t", 0, topic_id, [(0, 0), (1, 0), (2, 0)])]


def test_a_new_leader_epoch_and_a_moved_listener_show_in_the_next_answer(client):
    topic_id = create(client, "t", 2)
    _, brokers = ask(client, "t")
    client.broker.store.get("t").partitions[1].bump_leader_epoch()   # a leader change
    assert ask(client, "t")[0] == [("t", 0, topic_id, [(0, 0), (1, 1)])]
    placement = client.broker.placement
    (node, host, port), = brokers
    placement.listeners[node] = (host, port + 1)   # the node's listener started again on another port
    assert ask(client, "t")[1] == [(node, host, port + 1)]


def test_an_auto_created_topic_is_answered_and_then_kept(client):
    [(name, code, topic_id, partitions)], _ = ask(client, "auto", auto_create=True)
    assert (name, code, len(partitions)) == ("auto", 0, 1) and topic_id == client.broker.store.get("auto").topic_id
    assert ask(client, "auto", auto_create=True)[0] == [(name, code, topic_id, partitions)]


def test_several_nodes_are_answered_afresh_each_time():
    client = WireClient(new_broker(nodes=3))
    create(client, "t", 3)
    ask(client, "t")
    assert not client.broker.services.metadata_answers


def test_an_acl_change_shows_in_the_next_answer():
    client = WireClient(new_broker(authorizer=True))
    client.conn.principal = "User:alice"
    client.broker.topics.create("t", 1, {})
    assert ask(client, "t")[0] == [("t", ErrorCode.TOPIC_AUTHORIZATION_FAILED, ZERO, [])]
    acl = Acl(RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.DESCRIBE, Perm.ALLOW)
    client.broker.authorizer.create([acl])
    topic_id = client.broker.store.get("t").topic_id
    assert ask(client, "t")[0] == [("t", 0, topic_id, [(0, 0)])]
    client.broker.authorizer.create([Acl(RT.TOPIC, "t", PT.LITERAL, "User:alice", "*", Op.DESCRIBE, Perm.DENY)])
    assert ask(client, "t")[0] == [("t", ErrorCode.TOPIC_AUTHORIZATION_FAILED, ZERO, [])]
