"""ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69) through the codecs, and the classic
group APIs (OffsetFetch v9, ListGroups v5) answering for a KIP-848 group."""
from __future__ import annotations

import pytest

from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.conftest import call, new_broker

pytestmark = pytest.mark.broker(topics={"t": 4}, extra={"group.consumer.heartbeat.interval.ms": 750,
                                                                    "group.consumer.min.heartbeat.interval.ms": 750})


def join_body(member_id="m1", **over):
    body = {"group_id": "g", "member_id": member_id, "member_epoch": 0, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": []}
    body.update(over)
    return body


def test_registered_and_advertised():
    heartbeat = REGISTRY.get(ApiKey.CONSUMER_GROUP_HEARTBEAT)
    assert heartbeat.min_version == 0 and heartbeat.max_version == 1
    assert REGISTRY.get(ApiKey.CONSUMER_GROUP_DESCRIBE).max_version == 1
    keys = {k for k, _, _ in REGISTRY.versions()}
    assert {ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE} <= keys


@pytest.mark.parametrize("version", [0, 1])
def test_join_through_the_codec(broker, version):
    r = call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, version, join_body())
    assert r.error_code == 0 and r.member_id == "m1" and r.member_epoch == 2
    assert r.heartbeat_interval_ms == 750
    [tp] = r.assignment.topic_partitions
    assert bytes(tp.topic_id) == broker.store.get("t").topic_id and list(tp.partitions) == [0, 1, 2, 3]
    r = call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, version,
             join_body(member_epoch=2, rebalance_timeout_ms=-1, subscribed_topic_names=None, topic_partitions=None))
    assert r.error_code == 0 and r.member_epoch == 2 and r.assignment is None


def test_v1_regex_and_v1_needs_a_member_id(broker):
    broker.topics.create("orders", 1, {})
    r = call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1,
             join_body(subscribed_topic_names=None, subscribed_topic_regex="ord.*"))
    [tp] = r.assignment.topic_partitions
    assert bytes(tp.topic_id) == broker.store.get("orders").topic_id
    r = call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join_body(member_id="", group_id="g2"))
    assert r.error_code == E.INVALID_REQUEST and r.error_message == "MemberId can't be empty."
    r = call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, join_body(member_id="", group_id="g2"))
    assert r.error_code == 0 and r.member_id


def test_not_coordinator_with_several_nodes():
    b = new_broker(nodes=3)   # __consumer_offsets' partitions spread over the nodes
    node = b.placement.group_coordinator("g")
    other = next(n for n in b.placement.node_ids if n != node)
    assert call(b, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join_body(), node_id=other).error_code == E.NOT_COORDINATOR
    [d] = call(b, ApiKey.CONSUMER_GROUP_DESCRIBE, 0, {"group_ids": ["g"], "include_authorized_operations": False},
               node_id=other).groups
    assert d.error_code == E.NOT_COORDINATOR


def test_describe_through_the_codec(broker):
    call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join_body(), client_id="C1")
    r = call(broker, ApiKey.CONSUMER_GROUP_DESCRIBE, 0,
             {"group_ids": ["g", "nope"], "include_authorized_operations": True})
    g, nope = r.groups
    assert g.error_code == 0 and g.group_state == "Stable" and g.group_epoch == 2 and g.assignor_name == "uniform"
    [m] = g.members
    assert m.member_id == "m1" and m.client_id == "C1" and m.client_host == "/127.0.0.1"
    assert [tp.topic_name for tp in m.assignment.topic_partitions] == ["t"]
    assert list(m.target_assignment.topic_partitions[0].partitions) == [0, 1, 2, 3]
    assert nope.error_code == E.GROUP_ID_NOT_FOUND


def test_offset_fetch_v9_checks_the_member_epoch(broker):
    call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join_body())

    def fetch(member_id, epoch):
        return call(broker, ApiKey.OFFSET_FETCH, 9, {
            "groups": [{"group_id": "g", "member_id": member_id, "member_epoch": epoch, "topics": None}],
            "require_stable": False}).groups[0].error_code

    assert fetch("m1", 2) == 0
    assert fetch("m1", 7) == E.STALE_MEMBER_EPOCH
    assert fetch("zz", 2) == E.UNKNOWN_MEMBER_ID
    assert fetch(None, -1) == 0


def test_list_groups_v5_reports_the_consumer_type(broker):
    call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join_body())
    r = call(broker, ApiKey.LIST_GROUPS, 5, {"states_filter": [], "types_filter": ["consumer"]})
    assert [(g.group_id, g.group_type, g.protocol_type, g.group_state) for g in r.groups] == [
        ("g", "consumer", "consumer", "Stable")]


class _TopicsNotToWalk(dict):
    """The store's topics, refusing to be walked (a name subscription needs only its own)."""

    def _walk(self, *args):
        raise AssertionError("walked every topic")
    items = keys = values = __iter__ = _walk


def test_a_heartbeat_subscribing_by_name_reads_only_its_topics(broker):
    for i in range(20):
        broker.topics.create(f"other-{i}", 1, {})
    broker.store.topics = _TopicsNotToWalk(broker.store.topics)
    r = call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join_body())
    assert r.error_code == 0 and r.member_epoch == 2
    (owned,) = r.assignment.topic_partitions
    assert owned.topic_id == broker.store.get("t").topic_id and sorted(owned.partitions) == [0, 1, 2, 3]


def test_a_regex_subscription_matches_existing_topics_internal_ones_included(broker):
    """Kafka's TopicRegexResolver matches every topic name of the metadata image: a regex that
    names __consumer_offsets gets it assigned (franz-go's Test848RegexBrokerResolves relies on it)."""
    broker.topics.create("t2", 2, {})
    broker.topics.create("u", 1, {})
    offsets = broker.store.get("__consumer_offsets")
    assert offsets is not None and offsets.internal
    r = call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1,
             join_body(subscribed_topic_names=[], subscribed_topic_regex="t.*|__consumer_offsets"))
    assert r.error_code == 0
    assigned = {tp.topic_id: sorted(tp.partitions) for tp in r.assignment.topic_partitions}
    assert assigned == {broker.store.get("t").topic_id: [0, 1, 2, 3], broker.store.get("t2").topic_id: [0, 1],
                        offsets.topic_id: list(range(len(offsets.partitions)))}


def test_a_name_subscription_to_an_internal_topic_is_assigned(broker):
    offsets = broker.store.get("__consumer_offsets")
    r = call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join_body(subscribed_topic_names=["__consumer_offsets"]))
    assert r.error_code == 0
    (owned,) = r.assignment.topic_partitions
    assert owned.topic_id == offsets.topic_id and sorted(owned.partitions) == list(range(len(offsets.partitions)))


def test_a_session_timeout_fences_with_the_topics_as_they_are(broker):
    r = call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, join_body())
    assert r.error_code == 0
    broker.topics.create("late", 1, {})   # after the member's last heartbeat
    broker.tick(60_000)                   # its session (45 s) expires: the member is fenced
    group = broker.coordinator.consumer.groups["g"]
    assert not group.members and group.subscription_metadata == {}
