"""OffsetCommit's answers when every partition commits are kept per request shape and encoded
once (``OffsetManager.commit``): the kept answer must stay the right one for each request — by
name and by id, with an unknown id or a refused topic beside it, after a topic is made again."""
from kafkaemu.auth.acl import Acl, AclOperation as Op, AclPermissionType as Perm, PatternType as PT, ResourceType as RT
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.conftest import call, new_broker


def commit(broker, version, topics, **context):
    """``topics``: [(name or id, [(partition, offset)])]."""
    key = "topic_id" if version >= 10 else "name"
    body = {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "retention_time_ms": -1, "topics": [{key: t, "partitions": [
                {"partition_index": p, "committed_offset": o, "committed_leader_epoch": -1, "committed_metadata": ""}
                for p, o in parts]} for t, parts in topics]}
    resp = call(broker, ApiKey.OFFSET_COMMIT, version, body, **context)
    return [(t.topic_id if version >= 10 else t.name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in resp.topics]


def fetched(broker, topic, partitions):
    body = {"group_id": "g", "topics": [{"name": topic, "partition_indexes": partitions}], "require_stable": False}
    resp = call(broker, ApiKey.OFFSET_FETCH, 7, body)
    return [p.committed_offset for p in resp.topics[0].partitions]


def test_the_same_commit_again_by_name_and_by_id_answers_each_its_own_shape():
    broker = new_broker(topics={"a": 2, "b": 1})
    a, b = broker.store.get("a").topic_id, broker.store.get("b").topic_id
    for offset in (1, 2):
        assert commit(broker, 9, [("a", [(0, offset), (1, offset)])]) == [("a", [(0, 0), (1, 0)])]
        assert commit(broker, 10, [(a, [(0, offset)]), (b, [(0, offset)])]) == [(a, [(0, 0)]), (b, [(0, 0)])]
        assert commit(broker, 8, [("a", [(0, offset)])]) == [("a", [(0, 0)])]
    unknown = b"\x09" * 16
    assert commit(broker, 10, [(a, [(0, 3)]), (unknown, [(0, 3)])]) == [(unknown, [(0, E.UNKNOWN_TOPIC_ID)]),
                                                                       (a, [(0, 0)])]
    assert commit(broker, 10, [(a, [(0, 4)]), (b, [(0, 4)])]) == [(a, [(0, 0)]), (b, [(0, 0)])]
    assert fetched(broker, "a", [0, 1]) == [4, 2] and fetched(broker, "b", [0]) == [4]


def test_a_partly_failed_commit_then_a_whole_one_of_the_same_shape():
    broker = new_broker(topics={"a": 1}, extra={"offset.metadata.max.bytes": "4"})
    body = {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": "a", "partitions": [
                {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
                 "committed_metadata": "too long"}, {"partition_index": 3, "committed_offset": 5,
                                                    "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
    resp = call(broker, ApiKey.OFFSET_COMMIT, 9, body)
    assert [(p.partition_index, p.error_code) for p in resp.topics[0].partitions] == \
        [(0, E.OFFSET_METADATA_TOO_LARGE), (3, E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert commit(broker, 9, [("a", [(0, 6)])]) == [("a", [(0, 0)])]
    assert commit(broker, 9, [("a", [(0, 7), (3, 7)])]) == [("a", [(0, 0), (3, E.UNKNOWN_TOPIC_OR_PARTITION)])]
    assert fetched(broker, "a", [0]) == [7]


def test_a_topic_made_again_is_answered_by_its_new_id():
    broker = new_broker(topics={"a": 1})
    old = broker.store.get("a").topic_id
    assert commit(broker, 10, [(old, [(0, 1)])]) == [(old, [(0, 0)])]
    broker.topics.delete("a")
    broker.topics.create("a", 1, {})
    new = broker.store.get("a").topic_id
    assert new != old
    assert commit(broker, 10, [(new, [(0, 2)])]) == [(new, [(0, 0)])]
    assert commit(broker, 10, [(old, [(0, 3)])]) == [(old, [(0, E.UNKNOWN_TOPIC_ID)])]


def test_a_refused_topic_beside_a_kept_answer_leaves_it_as_it_was():
    broker = new_broker(topics={"a": 1, "denied": 1}, authorizer=True)
    broker.authorizer.create([Acl(RT.GROUP, "g", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW),
                              Acl(RT.TOPIC, "a", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW)])
    alice = {"principal": "User:alice"}
    assert commit(broker, 9, [("a", [(0, 1)])], **alice) == [("a", [(0, 0)])]
    assert commit(broker, 9, [("a", [(0, 2)]), ("denied", [(0, 2)])], **alice) == [
        ("a", [(0, 0)]), ("denied", [(0, E.TOPIC_AUTHORIZATION_FAILED)])]
    assert commit(broker, 9, [("a", [(0, 3)])], **alice) == [("a", [(0, 0)])]
