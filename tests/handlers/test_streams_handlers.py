"""StreamsGroupHeartbeat and StreamsGroupDescribe through the sans-IO connection and the codecs, on
a manual clock: a topology's internal topics created by the broker, tasks shared, revoked before
they move, taken over when a member leaves or falls silent, the statuses and Kafka's errors."""
from __future__ import annotations

from kafkaemu.broker import Broker
from kafkaemu.config import BrokerConfig
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.handlers.test_share_handlers import Client

T0 = 1_700_000_000_000
HB, DESCRIBE = ApiKey.STREAMS_GROUP_HEARTBEAT, ApiKey.STREAMS_GROUP_DESCRIBE
MISSING_SOURCE, MISSING_INTERNAL, STALE = 1, 3, 0


def topology(epoch=1, source="in", changelog="app-store-changelog", extra_subtopology=False):
    subs = [{"subtopology_id": "0", "source_topics": [source], "source_topic_regex": [],
             "state_changelog_topics": [{"name": changelog, "partitions": 0, "replication_factor": 0,
                                         "topic_configs": [{"key": "cleanup.policy", "value": "compact"}]}],
             "repartition_sink_topics": [], "repartition_source_topics": [], "copartition_groups": []}]
    if extra_subtopology:
        subs[0]["repartition_sink_topics"] = ["app-rep-repartition"]
        subs.append({"subtopology_id": "1", "source_topics": [], "source_topic_regex": [],
                     "state_changelog_topics": [], "repartition_sink_topics": [],
                     "repartition_source_topics": [{"name": "app-rep-repartition", "partitions": 0,
                                                    "replication_factor": 0, "topic_configs": []}],
                     "copartition_groups": []})
    return {"epoch": epoch, "subtopologies": subs}


def hb(client, member, epoch, active=None, standby=None, warmup=None, **over):
    body = {"group_id": "app", "member_id": member, "member_epoch": epoch, "endpoint_information_epoch": 0,
            "rebalance_timeout_ms": 30000 if epoch == 0 else -1,
            "topology": topology() if epoch == 0 else None,
            "active_tasks": active, "standby_tasks": standby if active is not None else None,
            "warmup_tasks": warmup if active is not None else None, "process_id": f"p-{member}",
            "user_endpoint": None, "client_tags": None, "task_offsets": None, "task_end_offsets": None,
            "shutdown_application": False}
    if active is not None:
        body["standby_tasks"] = standby or []
        body["warmup_tasks"] = warmup or []
    body.update(over)
    return client.call(HB, 0, body)


def tasks(reply):
    return {t.subtopology_id: sorted(t.partitions) for t in reply.active_tasks or []}


def owned(parts, sub="0"):
    return [{"subtopology_id": sub, "partitions": parts}] if parts else []


def setup(partitions=2, **extra):
    broker = Broker(BrokerConfig(extra=extra), T0)
    broker.topics.create("in", partitions, {})
    return broker, Client(broker)


def statuses(reply):
    return [s.status_code for s in reply.status or []]


def test_first_member_gets_internal_topics_created_then_every_task():
    broker, c = setup()
    r = hb(c, "m1", 0)
    assert r.error_code == 0 and r.member_epoch >= 1 and tasks(r) == {}
    assert statuses(r) == [MISSING_INTERNAL]
    changelog = broker.store.topics["app-store-changelog"]
    assert len(changelog.partitions) == 2
    r = hb(c, "m1", r.member_epoch, active=[])
    assert r.error_code == 0 and statuses(r) == [] and tasks(r) == {"0": [0, 1]}
    d = c.call(DESCRIBE, 0, {"group_ids": ["app"], "include_authorized_operations": False}).groups[0]
    assert d.error_code == 0 and d.group_state == "Stable"
    assert [s.subtopology_id for s in d.topology.subtopologies] == ["0"]
    assert d.topology.subtopologies[0].state_changelog_topics[0].partitions == 2
    (m,) = d.members
    assert m.member_id == "m1" and m.process_id == "p-m1" and m.member_epoch == r.member_epoch
    assert [(t.subtopology_id, list(t.partitions)) for t in m.assignment.active_tasks] == [("0", [0, 1])]


def test_repartition_topic_takes_its_writers_partition_count():
    broker, c = setup(partitions=3)
    r = hb(c, "m1", 0, topology=topology(extra_subtopology=True))
    assert statuses(r) == [MISSING_INTERNAL]
    assert len(broker.store.topics["app-rep-repartition"].partitions) == 3
    r = hb(c, "m1", r.member_epoch, active=[])
    assert tasks(r) == {"0": [0, 1, 2], "1": [0, 1, 2]}


def test_missing_source_topic_is_a_status_and_the_group_not_ready():
    _, c = setup()
    r = hb(c, "m1", 0, topology=topology(source="nope"))
    assert r.error_code == 0 and statuses(r) == [MISSING_SOURCE] and tasks(r) == {}
    assert "nope" in r.status[0].status_detail
    d = c.call(DESCRIBE, 0, {"group_ids": ["app"], "include_authorized_operations": False}).groups[0]
    assert d.group_state == "NotReady" and [s.source_topics for s in d.topology.subtopologies] == [["nope"]]


def test_tasks_are_revoked_before_they_move_and_a_leaver_hands_them_over():
    _, c = setup(partitions=4)
    r1 = hb(c, "m1", 0)
    r1 = hb(c, "m1", r1.member_epoch, active=[])
    assert tasks(r1) == {"0": [0, 1, 2, 3]}
    r2 = hb(c, "m2", 0)
    assert tasks(r2) == {}     # its tasks are still m1's
    epoch1 = r1.member_epoch
    r1 = hb(c, "m1", epoch1, active=owned([0, 1, 2, 3]))
    kept = tasks(r1)["0"]
    assert r1.member_epoch == epoch1 and len(kept) == 2      # revoking, at its epoch
    r2b = hb(c, "m2", r2.member_epoch, active=[])
    assert tasks(r2b) in ({}, None) or not tasks(r2b)
    r1 = hb(c, "m1", epoch1, active=owned(kept))
    assert r1.member_epoch > epoch1
    r2b = hb(c, "m2", r2.member_epoch, active=[])
    assert sorted(kept + tasks(r2b)["0"]) == [0, 1, 2, 3]
    left = hb(c, "m2", -1)
    assert left.error_code == 0 and left.member_epoch == -1
    r1 = hb(c, "m1", r1.member_epoch, active=owned(kept))
    assert tasks(r1) == {"0": [0, 1, 2, 3]}


def test_a_silent_member_is_removed_after_its_session_timeout():
    broker, c = setup()
    r = hb(c, "m1", 0)
    broker.tick(T0 + 45000)
    r = hb(c, "m1", r.member_epoch, active=[])
    assert r.error_code == E.UNKNOWN_MEMBER_ID


def test_errors_as_kafka():
    broker, c = setup()
    assert hb(c, "", 0).error_code == E.INVALID_REQUEST
    assert hb(c, "m1", 0, rebalance_timeout_ms=-1).error_message == "RebalanceTimeoutMs must be provided in first request."
    assert hb(c, "m1", 0, topology=None).error_code == E.INVALID_REQUEST
    assert hb(c, "m1", 3, active=[]).error_code == E.GROUP_ID_NOT_FOUND
    assert hb(c, "m1", -3).error_code == E.INVALID_REQUEST
    bad = topology()
    bad["subtopologies"][0]["state_changelog_topics"][0]["partitions"] = 3
    assert hb(c, "m1", 0, topology=bad).error_code == E.STREAMS_INVALID_TOPOLOGY
    assert hb(c, "m1", 0, topology=topology(source="__consumer_offsets")).error_code == E.STREAMS_INVALID_TOPOLOGY
    r = hb(c, "m1", 0)
    assert hb(c, "m1", r.member_epoch + 5, active=[]).error_code == E.FENCED_MEMBER_EPOCH
    assert hb(c, "m9", r.member_epoch, active=[]).error_code == E.UNKNOWN_MEMBER_ID
    assert hb(c, "m1", r.member_epoch, topology=topology()).error_code == E.INVALID_REQUEST
    changed = topology(source="in")
    changed["subtopologies"][0]["source_topics"] = ["in", "other"]
    assert hb(c, "m2", 0, topology=changed).error_message == "Topology updates are not supported yet."
    d = c.call(DESCRIBE, 0, {"group_ids": ["", "nope"], "include_authorized_operations": False}).groups
    assert [g.error_code for g in d] == [E.INVALID_GROUP_ID, E.GROUP_ID_NOT_FOUND]


def test_streams_version_zero_turns_streams_groups_off():
    broker = Broker(BrokerConfig(finalized_features=("streams.version=0",)), T0)
    c = Client(broker)
    assert hb(c, "m1", 0).error_code == E.UNSUPPORTED_VERSION


def test_the_other_group_apis_on_a_streams_group():
    _, c = setup()
    hb(c, "m1", 0)
    d = c.call(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, {"group_ids": ["app"], "include_authorized_operations": False})
    assert (d.groups[0].error_code, d.groups[0].error_message) == (E.GROUP_ID_NOT_FOUND,
                                                                   "Group app is not a consumer group.")
    d = c.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, {"group_ids": ["app"], "include_authorized_operations": False})
    assert d.groups[0].error_code == E.GROUP_ID_NOT_FOUND
    join = c.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, {"group_id": "app", "member_id": "c1", "member_epoch": 0,
                                                       "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["in"],
                                                       "topic_partitions": []})
    assert join.error_code == E.GROUP_ID_NOT_FOUND
    listed = c.call(ApiKey.LIST_GROUPS, 5, {"states_filter": [], "types_filter": ["streams"]}).groups
    assert [(g.group_id, g.protocol_type, g.group_type, g.group_state) for g in listed] == \
        [("app", "streams", "streams", "NotReady")]      # its changelog topic was just created
    d = c.call(ApiKey.DESCRIBE_GROUPS, 6, {"groups": ["app"], "include_authorized_operations": False})
    assert d.groups[0].error_code == E.GROUP_ID_NOT_FOUND
