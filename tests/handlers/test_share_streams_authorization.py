"""Share and streams groups under the authorizer, as Kafka 4.4's KafkaApis checks them, through the
sans-IO connection and the codecs: a principal without ACLs gets GROUP_AUTHORIZATION_FAILED from
every share and streams API; with READ (DESCRIBE, DELETE) on the group it gets
TOPIC_AUTHORIZATION_FAILED where a topic is not allowed, per partition or per topic where Kafka
answers so; with the ACLs Kafka asks for, everything works."""
from __future__ import annotations

from kafkaemu.auth.acl import Acl, AclOperation as Op, AclPermissionType as Perm, PatternType as PT, ResourceType as RT
from kafkaemu.broker import Broker
from kafkaemu.config import BrokerConfig
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.handlers.test_share_handlers import ACCEPT, Client, acquired, batch, fetch_body, produce
from tests.handlers.test_streams_handlers import topology

T0 = 1_700_000_000_000
HB, DESCRIBE, FETCH, ACK = (ApiKey.SHARE_GROUP_HEARTBEAT, ApiKey.SHARE_GROUP_DESCRIBE, ApiKey.SHARE_FETCH,
                            ApiKey.SHARE_ACKNOWLEDGE)
DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS = (ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
                                                   ApiKey.ALTER_SHARE_GROUP_OFFSETS,
                                                   ApiKey.DELETE_SHARE_GROUP_OFFSETS)
S_HB, S_DESCRIBE = ApiKey.STREAMS_GROUP_HEARTBEAT, ApiKey.STREAMS_GROUP_DESCRIBE
ALICE = "User:alice"
# GROUP operations as Kafka's AclOperation codes: READ 3, DELETE 6, DESCRIBE 8
READ_DESCRIBE_BITS = (1 << 3) | (1 << 8)


def setup():
    """A broker with the authorizer on, topics q and secret, and a connection as alice (no ACLs)."""
    broker = Broker(BrokerConfig(authorizer=True), T0)
    q = broker.topics.create("q", 1, {})
    secret = broker.topics.create("secret", 1, {})
    c = Client(broker)
    c.conn.principal = ALICE
    return broker, q, secret, c


def allow(broker, rt, name, *ops):
    broker.authorizer.create([Acl(rt, name, PT.LITERAL, ALICE, "*", op, Perm.ALLOW) for op in ops])


def heartbeat(c, topics=("q",), member="m1", epoch=0):
    return c.call(HB, 1, {"group_id": "g", "member_id": member, "member_epoch": epoch, "rack_id": None,
                          "subscribed_topic_names": list(topics)})


def ack_body(topic, epoch, *batches, member="m1"):
    return {"group_id": "g", "member_id": member, "share_session_epoch": epoch, "topics": [
        {"topic_id": topic.topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": list(batches)}]}]}


def streams_hb(c, group="app", **over):
    body = {"group_id": group, "member_id": "s1", "member_epoch": 0, "endpoint_information_epoch": 0,
            "rebalance_timeout_ms": 30000, "topology": topology(source="q"), "active_tasks": None,
            "standby_tasks": None, "warmup_tasks": None, "process_id": "p", "user_endpoint": None,
            "client_tags": None, "task_offsets": None, "task_end_offsets": None, "shutdown_application": False}
    body.update(over)
    return c.call(S_HB, 0, body)


def test_without_acls_every_share_and_streams_api_is_group_authorization_failed():
    broker, q, _, c = setup()
    assert heartbeat(c).error_code == E.GROUP_AUTHORIZATION_FAILED
    assert c.call(FETCH, 1, fetch_body(q, 0)).error_code == E.GROUP_AUTHORIZATION_FAILED
    assert c.call(ACK, 1, ack_body(q, 1, batch(0, 0, ACCEPT))).error_code == E.GROUP_AUTHORIZATION_FAILED
    described = c.call(DESCRIBE, 1, {"group_ids": ["g"], "include_authorized_operations": True}).groups
    assert [(d.group_id, d.error_code) for d in described] == [("g", E.GROUP_AUTHORIZATION_FAILED)]
    offsets = c.call(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": "g", "topics": None}]}).groups
    assert [(d.group_id, d.error_code) for d in offsets] == [("g", E.GROUP_AUTHORIZATION_FAILED)]
    altered = c.call(ALTER_OFFSETS, 0, {"group_id": "g", "topics": [
        {"topic_name": "q", "partitions": [{"partition_index": 0, "start_offset": 0}]}]})
    assert (altered.error_code, altered.error_message, altered.responses) == \
        (E.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.", [])
    deleted = c.call(DELETE_OFFSETS, 0, {"group_id": "g", "topics": [{"topic_name": "q"}]})
    assert (deleted.error_code, deleted.error_message, deleted.responses) == \
        (E.GROUP_AUTHORIZATION_FAILED, "Group authorization failed.", [])
    r = streams_hb(c)
    assert (r.error_code, r.error_message) == (E.GROUP_AUTHORIZATION_FAILED, None)   # KafkaApis: no message
    described = c.call(S_DESCRIBE, 0, {"group_ids": ["app"], "include_authorized_operations": False}).groups
    assert [(d.group_id, d.error_code) for d in described] == [("app", E.GROUP_AUTHORIZATION_FAILED)]
    assert broker.coordinator.group("g") is None and broker.coordinator.group("app") is None
    denied = {(d["operation"], d["resource_type"], d["resource_name"], d["api"]) for d in broker.authorizer.denials}
    assert ("READ", "GROUP", "g", "SHARE_FETCH") in denied and ("DELETE", "GROUP", "g", "DELETE_SHARE_GROUP_OFFSETS") \
        in denied and ("DESCRIBE", "GROUP", "g", "SHARE_GROUP_DESCRIBE") in denied


def test_share_heartbeat_needs_describe_on_every_subscribed_topic():
    broker, q, _, c = setup()
    allow(broker, RT.GROUP, "g", Op.READ)
    assert heartbeat(c, ("q",)).error_code == E.TOPIC_AUTHORIZATION_FAILED
    allow(broker, RT.TOPIC, "q", Op.DESCRIBE)
    assert heartbeat(c, ("q", "secret")).error_code == E.TOPIC_AUTHORIZATION_FAILED
    assert broker.coordinator.group("g") is None
    r = heartbeat(c, ("q",))
    assert r.error_code == E.NONE and r.member_epoch >= 1


def test_share_fetch_and_acknowledge_need_read_on_each_topic_per_partition():
    broker, q, secret, c = setup()
    allow(broker, RT.GROUP, "g", Op.READ)
    allow(broker, RT.TOPIC, "q", Op.READ)
    allow(broker, RT.TOPIC, "secret", Op.DESCRIBE)   # enough to subscribe, not to fetch
    assert heartbeat(c, ("q", "secret")).error_code == E.NONE
    broker.shares.group_configs.set("g", "share.auto.offset.reset", "earliest")
    produce(q, 2)
    produce(secret, 2)
    body = fetch_body(q, 0)
    body["topics"].append({"topic_id": secret.topic_id, "partitions": [{"partition_index": 0,
                                                                        "acknowledgement_batches": []}]})
    r = c.call(FETCH, 1, body)
    assert r.error_code == E.NONE
    by_topic = {t.topic_id: t.partitions[0] for t in r.responses}
    assert by_topic[secret.topic_id].error_code == E.TOPIC_AUTHORIZATION_FAILED
    assert not by_topic[secret.topic_id].acquired_records and not by_topic[secret.topic_id].records
    assert by_topic[q.topic_id].error_code == E.NONE and acquired(r) == [(0, 1, 1)]
    # acknowledgements of a topic the principal may not read are refused, not applied
    r = c.call(ACK, 1, ack_body(secret, 1, batch(0, 1, ACCEPT)))
    assert r.error_code == E.NONE and r.responses[0].partitions[0].error_code == E.TOPIC_AUTHORIZATION_FAILED
    r = c.call(FETCH, 1, fetch_body(secret, 2, {0: [batch(0, 1, ACCEPT)]}, max_wait=0))
    ack_codes = {t.topic_id: t.partitions[0].acknowledge_error_code for t in r.responses}
    assert ack_codes[secret.topic_id] == E.TOPIC_AUTHORIZATION_FAILED
    assert broker.shares.start_offsets("g")[(secret.topic_id, 0)] == -1   # assigned, never fetched
    r = c.call(ACK, 1, ack_body(q, 3, batch(0, 1, ACCEPT)))
    assert r.responses[0].partitions[0].error_code == E.NONE
    assert broker.shares.start_offsets("g")[(q.topic_id, 0)] == 2


def test_share_fetch_checks_read_on_the_group_before_the_member_id():
    broker, q, _, c = setup()
    assert heartbeat(c, member="").error_code == E.GROUP_AUTHORIZATION_FAILED
    allow(broker, RT.GROUP, "g", Op.READ)
    allow(broker, RT.TOPIC, "q", Op.DESCRIBE)
    for member in ("", "m" * 37):   # KafkaApis.isMemberIdValid, before the coordinator: no message
        r = heartbeat(c, member=member)
        assert (r.error_code, r.error_message) == (E.INVALID_REQUEST, None)
    assert heartbeat(c, member="m" * 36).error_code == E.NONE
    broker, q, _, c = setup()
    assert c.call(FETCH, 1, fetch_body(q, 0, member="")).error_code == E.GROUP_AUTHORIZATION_FAILED
    assert c.call(FETCH, 1, fetch_body(q, 0, group_id=None)).error_code == E.INVALID_REQUEST
    allow(broker, RT.GROUP, "g", Op.READ)
    assert c.call(FETCH, 1, fetch_body(q, 0, member="")).error_code == E.INVALID_REQUEST
    assert c.call(FETCH, 1, fetch_body(q, 0, member="m" * 37)).error_code == E.INVALID_REQUEST
    assert c.call(ACK, 1, ack_body(q, 1, batch(0, 0, ACCEPT), member="m" * 37)).error_code == E.INVALID_REQUEST


def test_share_group_describe_hides_groups_assigned_topics_the_principal_may_not_describe():
    broker, q, secret, c = setup()
    allow(broker, RT.GROUP, "g", Op.READ)
    allow(broker, RT.TOPIC, "q", Op.DESCRIBE)
    allow(broker, RT.TOPIC, "secret", Op.DESCRIBE)
    assert heartbeat(c, ("q", "secret")).error_code == E.NONE
    (d,) = c.call(DESCRIBE, 1, {"group_ids": ["g"], "include_authorized_operations": True}).groups
    assert d.error_code == E.NONE and d.authorized_operations == READ_DESCRIBE_BITS
    assert {tp.topic_name for m in d.members for tp in m.assignment.topic_partitions} == {"q", "secret"}
    broker.authorizer.create([Acl(RT.TOPIC, "secret", PT.LITERAL, ALICE, "*", Op.DESCRIBE, Perm.DENY)])
    (d,) = c.call(DESCRIBE, 1, {"group_ids": ["g"], "include_authorized_operations": True}).groups
    assert d.error_code == E.TOPIC_AUTHORIZATION_FAILED and d.members == []
    assert d.error_message == "The group has described topic(s) that the client is not authorized to describe."


def test_share_offsets_apis_check_the_group_then_each_topic():
    broker, q, secret, c = setup()
    allow(broker, RT.GROUP, "g", Op.READ)
    allow(broker, RT.TOPIC, "q", Op.READ)
    allow(broker, RT.TOPIC, "secret", Op.DESCRIBE)
    assert heartbeat(c, ("q", "secret")).error_code == E.NONE
    broker.shares.group_configs.set("g", "share.auto.offset.reset", "earliest")
    produce(q, 3)
    produce(secret, 3)
    body = fetch_body(q, 0)
    c.call(FETCH, 1, body)
    heartbeat(c, epoch=-1)
    # READ on the group is DESCRIBE on it; alter needs READ on each topic
    d = c.call(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": "g", "topics": [
        {"topic_name": "secret", "partitions": [0]}, {"topic_name": "q", "partitions": [0]}]}]}).groups[0]
    assert d.error_code == E.NONE
    # secret never fetched, q fetched with nothing acknowledged: neither state written since it was
    # initialized at -1 (Kafka's SharePartition writes nothing when a fetch resolves the start offset)
    assert [(t.topic_name, [(p.error_code, p.start_offset, p.lag) for p in t.partitions]) for t in d.topics] == \
        [("secret", [(E.NONE, -1, -1)]), ("q", [(E.NONE, -1, -1)])]
    r = c.call(ALTER_OFFSETS, 0, {"group_id": "g", "topics": [
        {"topic_name": "q", "partitions": [{"partition_index": 0, "start_offset": 1}]},
        {"topic_name": "secret", "partitions": [{"partition_index": 0, "start_offset": 1}]}]})
    assert r.error_code == E.NONE
    assert {t.topic_name: [p.error_code for p in t.partitions] for t in r.responses} == \
        {"q": [E.NONE], "secret": [E.TOPIC_AUTHORIZATION_FAILED]}
    assert broker.shares.start_offsets("g") == {(q.topic_id, 0): 1, (secret.topic_id, 0): -1}
    # DESCRIBE on a topic is needed to see its offsets: without it, named topics answer 29, all-topics hides them
    broker.authorizer.create([Acl(RT.TOPIC, "q", PT.LITERAL, ALICE, "*", Op.DESCRIBE, Perm.DENY)])
    d = c.call(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": "g", "topics": [
        {"topic_name": "q", "partitions": [0]}]}]}).groups[0]
    assert [(t.topic_name, t.topic_id, [(p.error_code, p.start_offset, p.lag) for p in t.partitions])
            for t in d.topics] == [("q", bytes(16), [(E.TOPIC_AUTHORIZATION_FAILED, -1, -1)])]
    d = c.call(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": "g", "topics": None}]}).groups[0]
    assert d.error_code == E.NONE and [t.topic_name for t in d.topics] == ["secret"]
    # DELETE on the group, READ on each topic
    r = c.call(DELETE_OFFSETS, 0, {"group_id": "g", "topics": [{"topic_name": "q"}]})
    assert r.error_code == E.GROUP_AUTHORIZATION_FAILED
    allow(broker, RT.GROUP, "g", Op.DELETE)
    r = c.call(DELETE_OFFSETS, 0, {"group_id": "g", "topics": [{"topic_name": "secret"}, {"topic_name": "q"}]})
    assert r.error_code == E.NONE
    assert [(t.topic_name, t.error_code) for t in r.responses] == [("secret", E.TOPIC_AUTHORIZATION_FAILED),
                                                                   ("q", E.NONE)]
    assert broker.shares.start_offsets("g") == {(secret.topic_id, 0): -1}


def test_share_groups_work_with_the_acls_kafka_asks_for():
    broker, q, _, c = setup()
    allow(broker, RT.GROUP, "g", Op.READ)
    allow(broker, RT.TOPIC, "q", Op.READ)
    assert heartbeat(c).error_code == E.NONE
    broker.shares.group_configs.set("g", "share.auto.offset.reset", "earliest")
    produce(q, 2)
    assert acquired(c.call(FETCH, 1, fetch_body(q, 0))) == [(0, 1, 1)]
    assert c.call(ACK, 1, ack_body(q, 1, batch(0, 1, ACCEPT))).responses[0].partitions[0].error_code == E.NONE


def test_streams_heartbeat_and_describe_as_kafka():
    broker, q, _, c = setup()
    broker.topics.create("app-store-changelog", 1, {})
    allow(broker, RT.GROUP, "app", Op.READ)
    r = streams_hb(c)
    assert (r.error_code, r.error_message) == (E.TOPIC_AUTHORIZATION_FAILED, None)   # KafkaApis: no message
    allow(broker, RT.TOPIC, "q", Op.DESCRIBE)
    allow(broker, RT.TOPIC, "app-store-changelog", Op.DESCRIBE)
    r = streams_hb(c)
    assert r.error_code == E.NONE and r.member_epoch >= 1
    (d,) = c.call(S_DESCRIBE, 0, {"group_ids": ["app"], "include_authorized_operations": True}).groups
    assert d.error_code == E.NONE and d.authorized_operations == READ_DESCRIBE_BITS
    broker.authorizer.create([Acl(RT.TOPIC, "q", PT.LITERAL, ALICE, "*", Op.DESCRIBE, Perm.DENY)])
    (d,) = c.call(S_DESCRIBE, 0, {"group_ids": ["app"], "include_authorized_operations": True}).groups
    assert d.error_code == E.TOPIC_AUTHORIZATION_FAILED and d.members == []


def test_streams_internal_topics_need_create_and_the_status_says_so():
    """KafkaApis: internal topics the principal may not CREATE are not created, and the
    MISSING_INTERNAL_TOPICS status says "Unauthorized to CREATE on topics ...". """
    broker, q, _, c = setup()
    allow(broker, RT.GROUP, "app", Op.READ)
    allow(broker, RT.TOPIC, "q", Op.DESCRIBE)
    allow(broker, RT.TOPIC, "app-store-changelog", Op.DESCRIBE)
    r = streams_hb(c)
    assert r.error_code == E.NONE
    assert [(s.status_code, s.status_detail) for s in r.status] == [
        (3, "Internal topics are missing: app-store-changelog; Unauthorized to CREATE on topics app-store-changelog.")]
    assert broker.store.get("app-store-changelog") is None
    allow(broker, RT.TOPIC, "app-store-changelog", Op.CREATE)
    r = streams_hb(c, member_epoch=r.member_epoch, topology=None, rebalance_timeout_ms=-1, active_tasks=[],
                   standby_tasks=[], warmup_tasks=[])
    assert r.error_code == E.NONE and len(broker.store.get("app-store-changelog").partitions) == 1
