"""Group configs (IncrementalAlterConfigs / DescribeConfigs on GROUP resources) and the share-group
offsets APIs (90-92) through the codecs, with their errors; share groups in ListGroups and
DeleteGroups."""
from __future__ import annotations

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E

from .test_share_handlers import FETCH, acquired, batch, fetch_body, join, produce, setup

INCREMENTAL_ALTER, DESCRIBE_CONFIGS, LIST_GROUPS, DELETE_GROUPS = (
    ApiKey.INCREMENTAL_ALTER_CONFIGS, ApiKey.DESCRIBE_CONFIGS, ApiKey.LIST_GROUPS, ApiKey.DELETE_GROUPS)
DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS = (
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, ApiKey.ALTER_SHARE_GROUP_OFFSETS, ApiKey.DELETE_SHARE_GROUP_OFFSETS)
GROUP = 32


def alter(c, group, *configs, validate_only=False):
    return c.call(INCREMENTAL_ALTER, 1, {"resources": [{"resource_type": GROUP, "resource_name": group, "configs": [
        {"name": n, "config_operation": op, "value": v} for n, op, v in configs]}], "validate_only": validate_only})


def test_group_configs_set_checked_and_described():
    broker, topic, c = setup()
    r = alter(c, "g", ("share.auto.offset.reset", 0, "earliest"), ("share.delivery.count.limit", 0, "3"))
    assert r.responses[0].error_code == 0
    spm = broker.shares
    assert spm.config("g", "share.auto.offset.reset") == "earliest" and spm.limits("g").delivery_count_limit == 3
    for name, value in [("share.auto.offset.reset", "sometimes"), ("share.delivery.count.limit", "1"),
                        ("share.record.lock.duration.ms", "100"), ("no.such.config", "1")]:
        assert alter(c, "g", (name, 0, value)).responses[0].error_code == E.INVALID_CONFIG, name
    assert alter(c, "g", ("share.record.lock.duration.ms", 0, "20000"), validate_only=True).responses[0].error_code == 0
    assert spm.limits("g").lock_duration_ms == 30000
    d = c.call(DESCRIBE_CONFIGS, 4, {"resources": [{"resource_type": GROUP, "resource_name": "g",
                                                     "configuration_keys": None}],
                                     "include_synonyms": False, "include_documentation": False})
    entries = {e.name: (e.value, e.config_source == 5) for e in d.results[0].configs}   # 5: DEFAULT_CONFIG
    assert entries["share.auto.offset.reset"] == ("earliest", False)
    assert entries["share.record.lock.duration.ms"] == ("30000", True)
    assert alter(c, "g", ("share.auto.offset.reset", 1, None)).responses[0].error_code == 0
    assert spm.config("g", "share.auto.offset.reset") == "latest"


def test_offsets_described_altered_and_deleted():
    broker, topic, c = setup()
    alter(c, "g", ("share.auto.offset.reset", 0, "earliest"))
    join(c)
    produce(topic, 5)
    c.call(FETCH, 1, fetch_body(topic, 0))
    c.call(FETCH, 1, fetch_body(topic, 1, {0: [batch(0, 1, 1)]}))
    # as Kafka's SharePartition writes the share state before moving its start offset, the start
    # offset described is the one from before the acknowledgement, offsets 0 and 1 counted complete
    d = c.call(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": "g", "topics": None}]})
    part = d.groups[0].topics[0].partitions[0]
    assert (part.start_offset, part.lag) == (0, 3)
    c.call(FETCH, 1, fetch_body(topic, 2, {0: [batch(2, 2, 1)]}))   # the next write carries start offset 2
    d = c.call(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": "g", "topics": None}]})
    part = d.groups[0].topics[0].partitions[0]
    assert (part.start_offset, part.lag) == (2, 2)
    assert c.call(ALTER_OFFSETS, 0, {"group_id": "g", "topics": [{"topic_name": "q", "partitions": [
        {"partition_index": 0, "start_offset": 0}]}]}).error_code == E.NON_EMPTY_GROUP
    assert c.call(DELETE_OFFSETS, 0, {"group_id": "g", "topics": [{"topic_name": "q"}]}).error_code == E.NON_EMPTY_GROUP
    c.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, {"group_id": "g", "member_id": "m1", "member_epoch": -1, "rack_id": None,
                   "subscribed_topic_names": None})
    r = c.call(ALTER_OFFSETS, 0, {"group_id": "g", "topics": [
        {"topic_name": "q", "partitions": [{"partition_index": 0, "start_offset": 1},
                                           {"partition_index": 5, "start_offset": 1}]},
        {"topic_name": "nope", "partitions": [{"partition_index": 0, "start_offset": 0}]}]})
    assert [p.error_code for t in r.responses for p in t.partitions] == [0, E.UNKNOWN_TOPIC_OR_PARTITION,
                                                                         E.UNKNOWN_TOPIC_OR_PARTITION]
    d = c.call(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": "g", "topics": [{"topic_name": "q", "partitions": [0]}]}]})
    assert d.groups[0].topics[0].partitions[0].start_offset == 1
    r = c.call(DELETE_OFFSETS, 0, {"group_id": "g", "topics": [{"topic_name": "q"}, {"topic_name": "nope"}]})
    assert [t.error_code for t in r.responses] == [0, E.UNKNOWN_TOPIC_OR_PARTITION]
    d = c.call(DESCRIBE_OFFSETS, 0, {"groups": [{"group_id": "g", "topics": None}, {"group_id": "x", "topics": None}]})
    assert d.groups[0].topics == [] and (d.groups[1].error_code, d.groups[1].topics) == (0, [])   # no share state
    assert c.call(ALTER_OFFSETS, 0, {"group_id": "x", "topics": []}).error_code == 0   # as Kafka: nothing to set,
    described = c.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, {"group_ids": ["x"], "include_authorized_operations": False})
    assert described.groups[0].error_code == E.GROUP_ID_NOT_FOUND                        # nothing created


def test_altering_the_offsets_of_a_share_group_that_does_not_exist_creates_it():
    """As Kafka's alterShareGroupOffsets (a Go client's test relies on it): the group is created,
    empty at group epoch 1 and assignment epoch 1 (a new ModernGroup's, as Kafka 4.4 describes it),
    with its share partitions starting at the offsets given."""
    broker, topic, c = setup()
    produce(topic, 5)
    r = c.call(ALTER_OFFSETS, 0, {"group_id": "new", "topics": [{"topic_name": "q", "partitions": [
        {"partition_index": 0, "start_offset": 2}]}]})
    assert r.error_code == 0 and [p.error_code for t in r.responses for p in t.partitions] == [0]
    d = c.call(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": "new", "topics": None}]})
    assert d.groups[0].error_code == 0 and d.groups[0].topics[0].partitions[0].start_offset == 2
    described = c.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, {"group_ids": ["new"], "include_authorized_operations": False})
    g = described.groups[0]
    assert (g.error_code, g.group_state, g.group_epoch, g.assignment_epoch) == (0, "Empty", 1, 1)
    join(c, group="new")
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0, group_id="new"))) == [(2, 4, 1)]
    c.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, {"group_id": "cg", "member_id": "m", "member_epoch": 0,
                                                "rebalance_timeout_ms": 1000, "subscribed_topic_names": ["q"],
                                                "topic_partitions": [], "server_assignor": None,
                                                "instance_id": None, "rack_id": None})
    r = c.call(ALTER_OFFSETS, 0, {"group_id": "cg", "topics": [{"topic_name": "q", "partitions": [
        {"partition_index": 0, "start_offset": 0}]}]})
    assert r.error_code == E.GROUP_ID_NOT_FOUND                  # a group of another kind
    r = c.call(ALTER_OFFSETS, 0, {"group_id": "", "topics": []})
    assert (r.error_code, r.error_message) == (E.INVALID_GROUP_ID, "The group id is invalid.")


def test_the_offsets_apis_answer_an_empty_group_id_with_kafkas_message():
    """GroupCoordinatorService answers INVALID_GROUP_ID through the requests' error builders, which
    default the message to Errors.INVALID_GROUP_ID.message (measured against Kafka 4.4)."""
    broker, topic, c = setup()
    r = c.call(DELETE_OFFSETS, 0, {"group_id": "", "topics": [{"topic_name": "q"}]})
    assert (r.error_code, r.error_message, r.responses) == (E.INVALID_GROUP_ID, "The group id is invalid.", [])


def test_list_and_delete_share_groups():
    broker, topic, c = setup()
    join(c)
    listed = c.call(LIST_GROUPS, 5, {"states_filter": [], "types_filter": ["share"]})
    assert [(g.group_id, g.group_type, g.group_state, g.protocol_type) for g in listed.groups] == \
        [("g", "share", "Stable", "share")]
    assert c.call(DELETE_GROUPS, 2, {"groups_names": ["g"]}).results[0].error_code == E.NON_EMPTY_GROUP
    c.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, {"group_id": "g", "member_id": "m1", "member_epoch": -1, "rack_id": None,
                   "subscribed_topic_names": None})
    assert c.call(DELETE_GROUPS, 2, {"groups_names": ["g"]}).results[0].error_code == 0
    assert c.call(LIST_GROUPS, 5, {"states_filter": [], "types_filter": ["share"]}).groups == []


def test_share_version_is_finalized_in_api_versions():
    broker, topic, c = setup()
    r = c.call(ApiKey.API_VERSIONS, 4, {"client_software_name": "t", "client_software_version": "1"})
    assert ("share.version", 2, 2) in [(f.name, f.min_version_level, f.max_version_level) for f in r.finalized_features]
    assert ("share.version", 0, 2) in [(f.name, f.min_version, f.max_version) for f in r.supported_features]
    assert {k.api_key for k in r.api_keys} >= {76, 77, 78, 79, 90, 91, 92}


def test_offsets_of_a_group_without_share_state_are_described_as_kafka_does():
    """GroupCoordinatorService.describeShareGroupOffsets reads the share state summary without looking
    the group up: no GROUP_ID_NOT_FOUND; what has no state answers start offset -1, lag -1."""
    broker, topic, c = setup()
    d = c.call(DESCRIBE_OFFSETS, 1, {"groups": [
        {"group_id": "none", "topics": [{"topic_name": "q", "partitions": [0, 7]}, {"topic_name": "nope",
                                                                                   "partitions": [0]}]},
        {"group_id": "none", "topics": None}]})
    asked, every = d.groups
    assert (asked.error_code, every.error_code, every.topics) == (0, 0, [])
    assert [(t.topic_name, t.topic_id == bytes(16), [(p.partition_index, p.start_offset, p.leader_epoch, p.lag,
                                                      p.error_code) for p in t.partitions]) for t in asked.topics] == [
        ("q", False, [(0, -1, 0, -1, 0), (7, -1, 0, -1, 0)]), ("nope", True, [(0, -1, 0, -1, 0)])]


def test_the_offsets_apis_see_the_share_state_at_the_requests_time():
    """Time reaches the core with each request (no handler moves a clock): a lock that lapsed at the
    delivery limit by the time DescribeShareGroupOffsets arrives has archived its record, written as
    complete (no lag; the start offset written is the one from before it moved), though the broker's
    timer loop has not run."""
    from .test_share_handlers import T0
    broker, topic, c = setup()
    broker.shares.group_configs.set("g", "share.delivery.count.limit", "2")
    join(c)
    produce(topic, 1)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0))) == [(0, 0, 1)]
    r = c.call(FETCH, 1, fetch_body(topic, 1, {0: [batch(0, 0, 2)]}))   # RELEASE, and fetched again
    assert acquired(r) == [(0, 0, 2)]   # the last delivery the limit allows
    d = c.call(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": "g", "topics": None}]})
    part = d.groups[0].topics[0].partitions[0]
    assert (part.start_offset, part.lag) == (0, 1)
    d = c.call(DESCRIBE_OFFSETS, 1, {"groups": [{"group_id": "g", "topics": None}]}, now=T0 + 30_001)
    part = d.groups[0].topics[0].partitions[0]
    assert (part.start_offset, part.lag) == (0, 0)
