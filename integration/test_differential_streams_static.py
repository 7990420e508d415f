"""Static members of a streams group, sent to Apache Kafka 4.4.0 and to kafkaemu and compared field by
field (integration/differential/): an instance id held by a live member (UNRELEASED_INSTANCE_ID),
another member id beating or leaving with it (FENCED_INSTANCE_ID), an unknown instance id
(UNKNOWN_MEMBER_ID), a leave with epoch -2 without an instance id (INVALID_REQUEST), the member that
left with -2 kept, and its instance rejoining under a new member id with its tasks."""
from __future__ import annotations

import time

from kafkaemu.protocol.api_keys import ApiKey as K

from .differential import prepare as p

VERSION = 1   # StreamsGroupHeartbeat v1, Kafka 4.4's newest


def _topology(topic):
    return {"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topics": [topic], "source_topic_regex": [],
                                           "state_changelog_topics": [], "repartition_sink_topics": [],
                                           "repartition_source_topics": [], "copartition_groups": []}]}


def _heartbeat(group, member, epoch, instance, topology=None, active=None):
    """A heartbeat as Kafka Streams sends it: the topology and empty task lists when joining, the
    active tasks it holds otherwise (``active``: partitions of subtopology 0, None: not reported)."""
    joining = epoch == 0
    owned = [] if joining else None if active is None else [{"subtopology_id": "0", "partitions": sorted(active)}]
    return {"group_id": group, "member_id": member, "member_epoch": epoch, "endpoint_information_epoch": 0,
            "instance_id": instance, "rebalance_timeout_ms": 30000 if joining else -1, "topology": topology,
            "process_id": "process-1" if joining else None, "client_tags": [] if joining else None,
            "active_tasks": owned, "standby_tasks": None if owned is None else [],
            "warmup_tasks": None if owned is None else []}


def _settled(peer, group, member, instance, answer, timeout_s=30):
    """Heartbeat (unrecorded) as the member, reporting the tasks it was given, until it holds tasks
    and is told nothing new (Kafka 4.4 assigns after group.streams.initial.rebalance.delay.ms);
    its epoch and tasks."""
    epoch, held = answer.member_epoch, set()
    deadline = time.monotonic() + timeout_s
    while True:
        if answer.active_tasks is not None:
            held = {t for ids in answer.active_tasks for t in ids.partitions}
        answer = peer.send(K.STREAMS_GROUP_HEARTBEAT, VERSION, _heartbeat(group, member, epoch, instance, active=held))
        assert answer.error_code == 0, answer
        if held and answer.active_tasks is None and answer.member_epoch == epoch:
            return epoch, held
        assert time.monotonic() < deadline, f"{member} never settled: {answer}"
        epoch = answer.member_epoch
        time.sleep(0.2)


def test_streams_static_members(differential):
    def scenario(peer):
        topic, group = peer.name("t"), peer.name("g")
        a, b, c = peer.name("member-a"), peer.name("member-b"), peer.name("member-c")
        p.create_topic(peer, topic, 2)
        p.find_coordinator(peer, group)
        joined = peer.until(K.STREAMS_GROUP_HEARTBEAT, VERSION, _heartbeat(group, a, 0, "i1", _topology(topic)),
                            lambda x: x.error_code not in p.LOADING)
        epoch, held = _settled(peer, group, a, "i1", joined)
        call = lambda label, body: peer.call(label, K.STREAMS_GROUP_HEARTBEAT, VERSION, body)  # noqa: E731
        call("another member joins with the held instance id", _heartbeat(group, b, 0, "i1", _topology(topic)))
        call("another member beats with the instance id", _heartbeat(group, b, epoch, "i1", active=set()))
        call("an unknown instance id", _heartbeat(group, b, epoch, "i9", active=set()))
        call("another member leaves with the instance id", _heartbeat(group, b, -2, "i1"))
        call("a leave with -2 needs an instance id", _heartbeat(group, a, -2, None))
        call("the member's own heartbeat", _heartbeat(group, a, epoch, "i1", active=held))
        call("the member leaves for now", _heartbeat(group, a, -2, "i1"))
        call("its instance rejoins under a new member id", _heartbeat(group, c, 0, "i1", _topology(topic)))
        call("the member it replaced is fenced", _heartbeat(group, a, epoch, "i1", active=held))
        call("the new member leaves", _heartbeat(group, c, -1, "i1"))
        call("the instance id is unknown once it left", _heartbeat(group, c, epoch, "i1", active=set()))
    differential.check(scenario, "streams-static-members")


def test_streams_missing_client_tags(differential):
    """Kafka 4.4: with streams.rack.aware.assignment.tags set on the group, a v1 member without one of
    those client tags is answered the status MISSING_CLIENT_TAGS."""
    def scenario(peer):
        topic, group, member = peer.name("t"), peer.name("g"), peer.name("member")
        p.create_topic(peer, topic, 2)
        p.find_coordinator(peer, group)
        peer.call("set the group's rack-aware tags", K.INCREMENTAL_ALTER_CONFIGS, 1, {
            "validate_only": False, "resources": [{"resource_type": 32, "resource_name": group, "configs": [
                {"name": "streams.rack.aware.assignment.tags", "config_operation": 0, "value": "zone,rack"}]}]})
        body = _heartbeat(group, member, 0, None, _topology(topic))
        body["client_tags"] = [{"key": "rack", "value": "r1"}]
        joined = peer.until(K.STREAMS_GROUP_HEARTBEAT, VERSION, body, lambda x: x.error_code not in p.LOADING)
        epoch, held = _settled(peer, group, member, None, joined)
        peer.call("a member without the zone tag", K.STREAMS_GROUP_HEARTBEAT, VERSION,
                  _heartbeat(group, member, epoch, None, active=held))
    differential.check(scenario, "streams-missing-client-tags")


def test_streams_group_named_by_leave_group(differential):
    """A classic LeaveGroup naming a streams group (or no group): Kafka's classicGroupLeave finds no
    classic or consumer group and answers each member UNKNOWN_MEMBER_ID."""
    def scenario(peer):
        topic, group, member = peer.name("t"), peer.name("g"), peer.name("member")
        p.create_topic(peer, topic, 2)
        p.find_coordinator(peer, group)
        peer.until(K.STREAMS_GROUP_HEARTBEAT, VERSION, _heartbeat(group, member, 0, "i1", _topology(topic)),
                   lambda x: x.error_code not in p.LOADING)
        leaving = [{"member_id": member, "group_instance_id": None, "reason": None},
                   {"member_id": "", "group_instance_id": "i1", "reason": None}]
        for name in (group, peer.name("nobody")):
            what = "a streams group" if name == group else "no group"
            peer.call(f"v5 naming {what}", K.LEAVE_GROUP, 5, {"group_id": name, "members": leaving})
            peer.call(f"v2 naming {what}", K.LEAVE_GROUP, 2, {"group_id": name, "member_id": member})
        peer.call("the streams member is still there", K.STREAMS_GROUP_HEARTBEAT, VERSION,
                  _heartbeat(group, member, -1, "i1"))
    differential.check(scenario, "streams-leave-group")
