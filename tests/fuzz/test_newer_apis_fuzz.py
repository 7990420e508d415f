"""Fuzzing the APIs added since Kafka 4.0 as test_wire_fuzz.py fuzzes the older ones: share groups
(heartbeat, fetch, acknowledge, describe, their offsets), streams groups (heartbeat with generated
topologies, describe), the quorum (DescribeQuorum, Add/RemoveRaftVoter), features (UpdateFeatures,
and ApiVersions that reports them) and telemetry (GetTelemetrySubscriptions, PushTelemetry).

Properties, as for the older APIs: no handler raises, every reply decodes as its request's
response, and the broker still answers ApiVersions and Metadata. Besides: a streams topology never
makes the broker create more partitions than one CreateTopics may (10,000), and a principal without
ACLs changes nothing through any of these APIs.

Derandomized like test_wire_fuzz.py; ``KAFKAEMU_FUZZ_EXAMPLES=5000`` searches deeper.
"""
import os

import pytest

pytest.importorskip("hypothesis", reason="the fuzz tests need hypothesis (pip install kafkaemu[test])")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kafkaemu.auth.acl import Acl, AclOperation, AclPermissionType, PatternType, ResourceType
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.wire.framing import frame
from tests.conftest import new_broker

from .harness import T0, Session, advertised, assert_still_serving, check_replies, harvest_replies, seeded_broker
from .strategies import GROUP, TOPIC, TOPIC_ID, Seen, encoded_request, ints

_DEEP = int(os.environ.get("KAFKAEMU_FUZZ_EXAMPLES", "0"))
pytestmark = pytest.mark.timeout(600)


def fuzz(examples: int):
    return settings(max_examples=_DEEP or examples, derandomize=not _DEEP, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


ADVERTISED = advertised()
SHARE_APIS = {ApiKey.SHARE_GROUP_HEARTBEAT, ApiKey.SHARE_GROUP_DESCRIBE, ApiKey.SHARE_FETCH, ApiKey.SHARE_ACKNOWLEDGE,
              ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, ApiKey.ALTER_SHARE_GROUP_OFFSETS,
              ApiKey.DELETE_SHARE_GROUP_OFFSETS}
STREAMS_APIS = {ApiKey.STREAMS_GROUP_HEARTBEAT, ApiKey.STREAMS_GROUP_DESCRIBE}
QUORUM_APIS = {ApiKey.DESCRIBE_QUORUM, ApiKey.ADD_RAFT_VOTER, ApiKey.REMOVE_RAFT_VOTER}
FEATURE_APIS = {ApiKey.UPDATE_FEATURES, ApiKey.API_VERSIONS}
TELEMETRY_APIS = {ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, ApiKey.PUSH_TELEMETRY}
NEWER = SHARE_APIS | STREAMS_APIS | QUORUM_APIS | FEATURE_APIS | TELEMETRY_APIS
NEWER_VERSIONS = [kv for kv in ADVERTISED if kv[0] in NEWER]
GROUP_TOPIC_APIS = SHARE_APIS | STREAMS_APIS


def test_the_newer_apis_are_all_advertised():
    assert NEWER <= {k for k, _ in ADVERTISED}


def share_ready_broker(**settings):
    """The seeded broker (fuzz-topic, 3 partitions, records in partition 0) whose share group
    ``fuzz-group`` starts at the earliest offset, so fetches acquire records."""
    broker = seeded_broker() if not settings else _seeded(**settings)
    broker.shares.group_configs.set(GROUP, "share.auto.offset.reset", "earliest")
    return broker


def _seeded(**settings):
    broker = new_broker(T0, **settings)
    topic = broker.store.create_topic(TOPIC, 3, {}, topic_id=TOPIC_ID)
    topic.partitions[0].append(build_batch([(b"k", b"v", [], T0 + i) for i in range(3)]), T0)
    return broker


@pytest.mark.parametrize("api_key,version", NEWER_VERSIONS,
                         ids=[f"{ApiKey(k).name}-v{v}" for k, v in NEWER_VERSIONS])
@fuzz(30)
@given(data=st.data())
def test_each_newer_api_alone(api_key, version, data):
    broker = share_ready_broker()
    session = Session(broker)
    session.send(frame(data.draw(encoded_request(api_key, version, correlation_id=1))))
    session.release_parked()
    check_replies(session.replies(), [(1, api_key, version)])
    assert not session.aborted
    assert_still_serving(broker, session)


def _conversation(broker, data, picks, max_steps=10, principal=None):
    """Requests drawn one after another, each offered what the previous replies carried (member
    ids, epochs, topic ids), with time moving between them."""
    session, seen, sent = Session(broker), Seen(), []
    if principal is not None:
        session.conn.principal = principal
    now = T0
    for cid in range(1, data.draw(st.integers(2, max_steps)) + 1):
        api_key, version = data.draw(st.sampled_from(picks))
        session.send(frame(data.draw(encoded_request(api_key, version, correlation_id=cid, seen=seen))), now)
        sent.append((cid, api_key, version))
        if session.violation is not None:
            break
        harvest_replies(session, sent, seen)
        now += data.draw(st.sampled_from([0, 10, 5000, 30_000, 45_000]))
        broker.tick(now)
        session.drain(now)
    session.release_parked()
    check_replies(session.replies(), sent)
    assert not session.aborted
    return session


SHARE_PICKS = [kv for kv in ADVERTISED if kv[0] in SHARE_APIS] * 3 + \
    [kv for kv in ADVERTISED if kv[0] in (ApiKey.PRODUCE, ApiKey.METADATA, ApiKey.DELETE_GROUPS,
                                          ApiKey.LIST_GROUPS, ApiKey.INCREMENTAL_ALTER_CONFIGS)]


@fuzz(150)
@given(st.data())
def test_share_group_conversations(data):
    """Joins, fetches, acknowledgements (piggy-backed and alone), session epochs, offsets altered and
    deleted and the group described, each request reusing what the broker answered."""
    broker = share_ready_broker()
    session = _conversation(broker, data, SHARE_PICKS)
    assert_still_serving(broker, session)


QUORUM_FEATURE_TELEMETRY_PICKS = [kv for kv in ADVERTISED if kv[0] in QUORUM_APIS | FEATURE_APIS | TELEMETRY_APIS] * 3 \
    + [kv for kv in ADVERTISED if kv[0] in (ApiKey.DESCRIBE_CLUSTER, ApiKey.METADATA,
                                            ApiKey.STREAMS_GROUP_HEARTBEAT, ApiKey.SHARE_GROUP_HEARTBEAT)]


@fuzz(150)
@given(st.data())
def test_quorum_feature_and_telemetry_conversations(data):
    """Voters added and removed, features finalized up and down (share.version and streams.version
    included, with share and streams heartbeats after), telemetry subscriptions fetched and pushed
    with the instance ids the broker handed out."""
    broker = seeded_broker(nodes=data.draw(st.sampled_from([1, 3])))
    session = _conversation(broker, data, QUORUM_FEATURE_TELEMETRY_PICKS)
    assert_still_serving(broker, session)


# -- streams topologies ---------------------------------------------------------------------------
_INTERNAL = ["app-a-repartition", "app-b-repartition", "app-store-changelog", "app-other-changelog"]
_TOPIC_NAMES = st.sampled_from([TOPIC, "in-missing", *_INTERNAL, "__consumer_offsets", "bad/name", ""])
_CONFIG_NAMES = st.sampled_from(["cleanup.policy", "retention.ms", "segment.bytes", "min.insync.replicas",
                                 "message.timestamp.type", "no.such.config", ""])
_CONFIG_VALUES = st.sampled_from(["compact", "delete", "-1", "0", "1", "x", "", "9" * 30, "CreateTime"])


@st.composite
def topic_infos(draw, changelog: bool):
    return {"name": draw(st.sampled_from(_INTERNAL) | _TOPIC_NAMES),
            "partitions": 0 if changelog and draw(st.booleans()) else draw(ints("int32")),
            "replication_factor": draw(ints("int16")),
            "topic_configs": draw(st.lists(st.fixed_dictionaries({"key": _CONFIG_NAMES, "value": _CONFIG_VALUES}),
                                           max_size=3))}


@st.composite
def subtopologies(draw, index: int):
    sources = draw(st.lists(_TOPIC_NAMES, max_size=2))
    reps = draw(st.lists(topic_infos(changelog=False), max_size=2))
    return {"subtopology_id": str(index), "source_topics": sources, "source_topic_regex": [],
            "state_changelog_topics": draw(st.lists(topic_infos(changelog=True), max_size=2)),
            "repartition_sink_topics": draw(st.lists(st.sampled_from(_INTERNAL), max_size=2)),
            "repartition_source_topics": reps,
            "copartition_groups": draw(st.lists(st.fixed_dictionaries({
                "source_topics": st.lists(st.integers(-1, 2), max_size=2),
                "repartition_source_topics": st.lists(st.integers(-1, 2), max_size=2)}), max_size=2))}


@st.composite
def topologies(draw):
    count = draw(st.integers(0, 3))
    return {"epoch": draw(ints("int32")), "subtopologies": [draw(subtopologies(i)) for i in range(count)]}


def streams_join(member: str, topology) -> dict:
    return {"group_id": "app", "member_id": member, "member_epoch": 0, "endpoint_information_epoch": 0,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000, "topology": topology,
            "active_tasks": None, "standby_tasks": None, "warmup_tasks": None, "process_id": "p",
            "user_endpoint": None, "client_tags": None, "task_offsets": None, "task_end_offsets": None,
            "shutdown_application": False}


@fuzz(300)
@given(st.lists(topologies(), min_size=1, max_size=3), st.booleans())
def test_streams_topologies_never_break_the_broker_or_exceed_create_topics_limits(topos, heartbeat_again):
    """Generated topologies (any partition counts, replication factors, configs, copartition
    indexes, names) joined by members of one group: every answer decodes, the broker keeps serving,
    and the internal topics it creates hold at most 10,000 partitions per heartbeat."""
    broker = seeded_broker()
    session = Session(broker)
    sent = []
    for cid, topo in enumerate(topos, 1):
        before = sum(len(t.partitions) for t in broker.store.topics.values())
        session.send(envelope.encode_request(ApiKey.STREAMS_GROUP_HEARTBEAT, 0, streams_join(f"m{cid}", topo), cid,
                                             "f"))
        sent.append((cid, ApiKey.STREAMS_GROUP_HEARTBEAT, 0))
        assert sum(len(t.partitions) for t in broker.store.topics.values()) <= before + 10_000
    if heartbeat_again:
        cid = len(topos) + 1
        session.send(envelope.encode_request(ApiKey.STREAMS_GROUP_DESCRIBE, 0, {
            "group_ids": ["app"], "include_authorized_operations": True}, cid, "f"))
        sent.append((cid, ApiKey.STREAMS_GROUP_DESCRIBE, 0))
    session.release_parked()
    check_replies(session.replies(), sent)
    assert not session.aborted and session.violation is None
    assert_still_serving(broker, session)


# -- under the authorizer ---------------------------------------------------------------------------
GUARDED_PICKS = [kv for kv in ADVERTISED if kv[0] in GROUP_TOPIC_APIS]


@fuzz(150)
@given(st.data())
def test_a_principal_without_acls_changes_nothing_through_share_and_streams_apis(data):
    """With the authorizer on and no ACLs, share and streams requests of any shape (reusing what
    was answered) create no group, no topic, no share state and acquire no record."""
    broker = _seeded(authorizer=True)
    broker.shares.group_configs.set(GROUP, "share.auto.offset.reset", "earliest")
    topics_before = sorted(broker.store.topics)
    session = _conversation(broker, data, GUARDED_PICKS, principal="User:mallory")
    assert sorted(broker.store.topics) == topics_before
    assert broker.coordinator.list_groups(broker.now_ms) == []
    assert broker.shares.start_offsets(GROUP) == {}
    # the still-serving check's Metadata asks as User:ANONYMOUS (the fuzzed session is mallory)
    broker.authorizer.create([Acl(ResourceType.TOPIC, TOPIC, PatternType.LITERAL, "User:ANONYMOUS", "*",
                                  AclOperation.DESCRIBE, AclPermissionType.ALLOW)])
    assert_still_serving(broker)
