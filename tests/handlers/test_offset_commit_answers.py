"""OffsetCommit's answers when every partition commits are kept per request shape and encoded
once (``OffsetManager.commit``): the kept answer must stay the right one for each request — by
name and by id, with an unknown id or a refused topic beside it, after a topic is made again."""
from kafkaemu.auth.acl import Acl, AclOperation as Op, AclPermissionType as Perm, PatternType as PT, ResourceType as RT
from kafkaemu.core.runtime import AppendError
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


def fetched(broker, topic, partitions, **context):
    body = {"group_id": "g", "topics": [{"name": topic, "partition_indexes": partitions}], "require_stable": False}
    resp = call(broker, ApiKey.OFFSET_FETCH, 7, body, **context)
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
        [(3, E.UNKNOWN_TOPIC_OR_PARTITION), (0, E.OFFSET_METADATA_TOO_LARGE)]   # KafkaApis's answers first
    assert commit(broker, 9, [("a", [(0, 6)])]) == [("a", [(0, 0)])]
    assert commit(broker, 9, [("a", [(0, 7), (3, 7)])]) == [("a", [(3, E.UNKNOWN_TOPIC_OR_PARTITION), (0, 0)])]
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
        ("denied", [(0, E.TOPIC_AUTHORIZATION_FAILED)]), ("a", [(0, 0)])]
    assert commit(broker, 9, [("a", [(0, 3)])], **alice) == [("a", [(0, 0)])]


def test_kafkaapis_answers_come_first_in_request_order_then_the_coordinators_for_every_version():
    """KafkaApis.handleOffsetCommitRequest: unknown ids, refused topics and unknown partitions are
    put in OffsetCommitResponse.Builder in request order; the coordinator's answer is merged after
    them (a topic already there gets its committed partitions after its unknown ones)."""
    broker = new_broker(topics={"a": 1, "b": 2, "c": 1, "denied": 1}, authorizer=True)
    broker.authorizer.create([Acl(RT.GROUP, "g", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW)]
                             + [Acl(RT.TOPIC, t, PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW)
                                for t in ("a", "b", "c", "nope")])
    alice = {"principal": "User:alice"}
    for version in (2, 7, 8, 9):
        assert commit(broker, version, [("a", [(0, version)]), ("denied", [(0, 1)]), ("b", [(0, 1), (5, 1), (1, 1)]),
                                        ("nope", [(0, 1)]), ("c", [(0, 1)])], **alice) == [
            ("denied", [(0, E.TOPIC_AUTHORIZATION_FAILED)]),
            ("b", [(5, E.UNKNOWN_TOPIC_OR_PARTITION), (0, 0), (1, 0)]),
            ("nope", [(0, E.UNKNOWN_TOPIC_OR_PARTITION)]),
            ("a", [(0, 0)]), ("c", [(0, 0)])], version
    a, b, c, denied = (broker.store.get(t).topic_id for t in ("a", "b", "c", "denied"))
    unknown = b"\x09" * 16
    assert commit(broker, 10, [(a, [(0, 10)]), (b, [(3, 1), (0, 1)]), (unknown, [(0, 1)]), (denied, [(0, 1)]),
                               (c, [(0, 1)])], **alice) == [
        (b, [(3, E.UNKNOWN_TOPIC_OR_PARTITION), (0, 0)]), (unknown, [(0, E.UNKNOWN_TOPIC_ID)]),
        (denied, [(0, E.TOPIC_AUTHORIZATION_FAILED)]), (a, [(0, 0)]), (c, [(0, 0)])]
    assert fetched(broker, "a", [0], **alice) == [10] and fetched(broker, "b", [0, 1], **alice) == [1, 1]


def test_a_refused_topic_is_answered_before_not_coordinator():
    """KafkaApis authorizes the topics before the coordinator is asked: on a node that is not the
    group's coordinator a refused topic is TOPIC_AUTHORIZATION_FAILED (first), the rest NOT_COORDINATOR."""
    broker = new_broker(nodes=3, topics={"a": 1, "denied": 1}, authorizer=True)
    node = broker.placement.group_coordinator("g")
    other = next(n for n in broker.placement.node_ids if n != node)
    broker.authorizer.create([Acl(RT.GROUP, "g", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW),
                              Acl(RT.TOPIC, "a", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW)])
    alice = {"principal": "User:alice", "node_id": other}
    for version in (8, 9):
        assert commit(broker, version, [("a", [(0, 1)]), ("denied", [(0, 1)])], **alice) == [
            ("denied", [(0, E.TOPIC_AUTHORIZATION_FAILED)]), ("a", [(0, E.NOT_COORDINATOR)])]
        assert commit(broker, version, [("denied", [(0, 1)])], **alice) == [
            ("denied", [(0, E.TOPIC_AUTHORIZATION_FAILED)])]
    a, denied = broker.store.get("a").topic_id, broker.store.get("denied").topic_id
    assert commit(broker, 10, [(a, [(0, 1)]), (denied, [(0, 1)])], **alice) == [
        (denied, [(0, E.TOPIC_AUTHORIZATION_FAILED)]), (a, [(0, E.NOT_COORDINATOR)])]


def test_a_failed_commit_answers_unknown_partitions_first_and_the_coordinators_error_after():
    """The coordinator's error (a refused group, a write that fails) covers only the partitions it
    was given: KafkaApis has answered the unknown ones, which come first."""
    broker = new_broker(topics={"a": 1})

    def body(generation):
        return {"group_id": "g", "generation_id_or_member_epoch": generation, "member_id": "", "group_instance_id": None,
                "topics": [{"name": t, "partitions": [{"partition_index": p, "committed_offset": 1,
                                                       "committed_leader_epoch": -1, "committed_metadata": ""}
                                                      for p in parts]} for t, parts in (("a", (0, 7)), ("x", (0,)))]}

    def answered(resp):
        return [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in resp.topics]
    assert answered(call(broker, ApiKey.OFFSET_COMMIT, 9, body(3))) == [   # no such group
        ("a", [(7, E.UNKNOWN_TOPIC_OR_PARTITION), (0, E.GROUP_ID_NOT_FOUND)]), ("x", [(0, E.UNKNOWN_TOPIC_OR_PARTITION)])]

    def refusing_sink(partition, records, now_ms, **kw):
        raise AppendError(E.NOT_LEADER_OR_FOLLOWER, "refused")
    broker.coordinator.ctx.sink = refusing_sink
    assert answered(call(broker, ApiKey.OFFSET_COMMIT, 9, body(-1))) == [
        ("a", [(7, E.UNKNOWN_TOPIC_OR_PARTITION), (0, E.NOT_COORDINATOR)]), ("x", [(0, E.UNKNOWN_TOPIC_OR_PARTITION)])]


def test_an_existing_topic_with_no_partitions_is_left_out_an_unknown_one_kept():
    """KafkaApis passes no topic without partitions to the coordinator; an unknown topic is answered
    by OffsetCommitResponse.Builder.addPartitions, which makes its entry even with none."""
    broker = new_broker(topics={"a": 1, "b": 1})
    a, b = broker.store.get("a").topic_id, broker.store.get("b").topic_id
    for _ in range(2):   # the second answer from what was kept, if anything was
        assert commit(broker, 9, [("a", [(0, 1)]), ("b", [])]) == [("a", [(0, 0)])]
        assert commit(broker, 9, [("b", []), ("missing", []), ("a", [(0, 1)])]) == [("missing", []), ("a", [(0, 0)])]
        assert commit(broker, 9, [("b", [])]) == []
        assert commit(broker, 10, [(a, [(0, 1)]), (b, [])]) == [(a, [(0, 0)])]
    unknown = b"\x09" * 16
    assert commit(broker, 10, [(a, [(0, 1)]), (unknown, [])]) == [(unknown, []), (a, [(0, 0)])]
    broker.topics.delete("b")   # a topic gone is answered again
    assert commit(broker, 9, [("a", [(0, 1)]), ("b", [])]) == [("b", []), ("a", [(0, 0)])]


def test_a_topic_named_twice_is_one_entry_only_when_kafka_apis_answered_something():
    """Builder.merge keeps the coordinator's answer as it is when KafkaApis answered nothing itself
    (the topic twice); otherwise each of its topics joins the entry already made for that topic."""
    broker = new_broker(topics={"a": 2}, authorizer=True)
    broker.authorizer.create([Acl(RT.GROUP, "g", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW)] + [
        Acl(RT.TOPIC, t, PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW) for t in ("a", "missing")])
    alice = {"principal": "User:alice"}
    a = broker.store.get("a").topic_id
    for _ in range(2):
        assert commit(broker, 9, [("a", [(0, 1)]), ("a", [(1, 1)])], **alice) == [("a", [(0, 0)]), ("a", [(1, 0)])]
        assert commit(broker, 9, [("a", [(0, 1)]), ("missing", [(0, 1)]), ("a", [(1, 1)])], **alice) == [
            ("missing", [(0, E.UNKNOWN_TOPIC_OR_PARTITION)]), ("a", [(0, 0), (1, 0)])]
        assert commit(broker, 9, [("a", [(0, 1)]), ("a", [(7, 1)]), ("a", [(1, 1)])], **alice) == [
            ("a", [(7, E.UNKNOWN_TOPIC_OR_PARTITION), (0, 0), (1, 0)])]
        assert commit(broker, 9, [("a", [(0, 1)]), ("denied", [(0, 1)]), ("a", [(1, 1)]), ("denied", [(1, 1)])],
                      **alice) == [("denied", [(0, E.TOPIC_AUTHORIZATION_FAILED), (1, E.TOPIC_AUTHORIZATION_FAILED)]),
                                   ("a", [(0, 0), (1, 0)])]
        unknown = b"\x09" * 16
        assert commit(broker, 10, [(a, [(0, 1)]), (unknown, [(0, 1)]), (a, [(1, 1)]), (unknown, [(1, 1)])],
                      **alice) == [(unknown, [(0, E.UNKNOWN_TOPIC_ID), (1, E.UNKNOWN_TOPIC_ID)]), (a, [(0, 0), (1, 0)])]
