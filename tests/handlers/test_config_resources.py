"""Config resources as a Kafka 4.3 broker reports them: BROKER configs with Kafka's sources,
read-only flags, hidden sensitive values and synonyms (advertised.listeners among them), the
cluster default resource, dynamic broker configs that become topic defaults, topic config
sources (min.insync.replicas a dynamic default), and BROKER_LOGGER levels."""
from __future__ import annotations

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.conftest import call, new_broker

STATIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT, DEFAULT, TOPIC_SET, LOGGER = 4, 2, 3, 5, 1, 6
TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
SET, DELETE, APPEND = 0, 1, 2


def describe(broker, kind, name, keys=None, synonyms=True, node_id=None):
    body = {"resources": [{"resource_type": kind, "resource_name": name, "configuration_keys": keys}],
            "include_synonyms": synonyms, "include_documentation": False}
    node = {} if node_id is None else {"node_id": node_id}
    [result] = call(broker, ApiKey.DESCRIBE_CONFIGS, 4, body, **node).results
    return result


def configs(result):
    return {c.name: c for c in result.configs}


def alter(broker, kind, name, changes, node_id=None):
    body = {"resources": [{"resource_type": kind, "resource_name": name, "configs": [
        {"name": n, "config_operation": op, "value": v} for n, op, v in changes]}], "validate_only": False}
    [result] = call(broker, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body,
                    **({} if node_id is None else {"node_id": node_id})).responses
    return result


def test_broker_configs_have_kafkas_sources_flags_and_synonyms():
    broker = new_broker(port=9092, extra={"num.partitions": 3}, nodes=2)
    got = configs(describe(broker, BROKER, "1", node_id=1))
    advertised = got["advertised.listeners"]
    assert advertised.value == "PLAINTEXT://127.0.0.1:9093" and advertised.config_source == STATIC
    assert advertised.read_only and not advertised.is_sensitive
    assert got["num.partitions"].value == "3" and got["num.partitions"].config_source == STATIC
    assert [(s.value, s.source) for s in got["num.partitions"].synonyms] == [("3", STATIC), ("1", DEFAULT)]
    assert got["auto.create.topics.enable"].config_source == DEFAULT
    assert got["node.id"].value == "1" and got["process.roles"].value == "broker"
    assert got["offsets.topic.replication.factor"].value == "1"
    assert got["offsets.topic.replication.factor"].config_source == STATIC
    mir = got["min.insync.replicas"]
    assert mir.config_source == DYNAMIC_DEFAULT and not mir.read_only
    assert got["log.retention.ms"].read_only is False and got["num.partitions"].read_only is True
    assert got["ssl.key.password"].is_sensitive and got["ssl.key.password"].value is None
    assert configs(describe(broker, BROKER, "0"))["process.roles"].value == "broker,controller"
    assert configs(describe(broker, BROKER, "1", synonyms=False, node_id=1))["num.partitions"].synonyms == []


def test_the_cluster_default_resource_lists_the_dynamic_defaults():
    broker = new_broker()
    assert [(c.name, c.value, c.config_source) for c in describe(broker, BROKER, "").configs] == \
        [("min.insync.replicas", "1", DYNAMIC_DEFAULT)]


def test_a_dynamic_default_becomes_every_topics_default_and_a_node_config_overrides_it():
    broker = new_broker(topics={"t": 1})
    assert alter(broker, BROKER, "", [("log.retention.ms", SET, "3600000")]).error_code == E.NONE
    retention = configs(describe(broker, TOPIC, "t"))["retention.ms"]
    assert retention.value == "3600000" and retention.config_source == DYNAMIC_DEFAULT
    # ConfigHelper.configSynonyms: by source, log.retention.ms and the configs standing in for it
    assert [(s.name, s.source) for s in retention.synonyms] == [("log.retention.ms", DYNAMIC_DEFAULT),
                                                                ("log.retention.hours", DEFAULT)]
    assert broker.store.get("t").partitions[0].configs["retention.ms"] == "3600000"   # what retention obeys
    assert alter(broker, BROKER, "0", [("log.retention.ms", SET, "7200000")]).error_code == E.NONE
    node = configs(describe(broker, BROKER, "0"))["log.retention.ms"]
    assert (node.value, node.config_source) == ("7200000", DYNAMIC_BROKER)
    assert [s.source for s in node.synonyms] == [DYNAMIC_BROKER, DYNAMIC_DEFAULT, DEFAULT]
    assert broker.store.get("t").partitions[0].configs["retention.ms"] == "7200000"
    alter(broker, BROKER, "0", [("log.retention.ms", DELETE, None)])
    alter(broker, BROKER, "", [("log.retention.ms", DELETE, None)])
    assert configs(describe(broker, TOPIC, "t"))["retention.ms"].config_source == DEFAULT


def test_a_broker_configs_synonyms_are_the_configs_standing_in_for_it_from_its_own_name_on():
    """ConfigHelper.configSynonyms for a broker config: log.retention.ms unset has no value and no
    synonyms (log.retention.hours, at its default, comes before it and is dropped); set, it is
    followed by log.retention.hours' default."""
    broker = new_broker()
    keys = ["log.retention.ms", "log.retention.minutes", "log.retention.hours"]
    got = configs(describe(broker, BROKER, "0", keys=keys))
    assert [(got[n].value, got[n].config_source, len(got[n].synonyms)) for n in keys] == [
        (None, DEFAULT, 0), (None, DEFAULT, 0), ("168", DEFAULT, 1)]
    assert alter(broker, BROKER, "0", [("log.retention.ms", SET, "7200000")]).error_code == E.NONE
    node = configs(describe(broker, BROKER, "0", keys=keys))["log.retention.ms"]
    assert [(s.name, s.value, s.source) for s in node.synonyms] == [
        ("log.retention.ms", "7200000", DYNAMIC_BROKER), ("log.retention.hours", "168", DEFAULT)]


def test_topic_config_synonyms_are_named_after_the_broker_config():
    """ConfigHelper.createTopicConfigEntry: the broker synonym of ServerTopicConfigSynonyms by its
    own name; none where Kafka has no synonym or it is unset (log.retention.ms has no ConfigDef
    default, and log.retention.hours, at its default, is dropped)."""
    broker = new_broker(topics={"t": 1})
    described = configs(describe(broker, TOPIC, "t"))

    def synonyms(name):
        return [(s.name, s.value, s.source) for s in described[name].synonyms]
    assert synonyms("file.delete.delay.ms") == [("log.segment.delete.delay.ms", "60000", DEFAULT)]
    assert synonyms("min.cleanable.dirty.ratio") == [("log.cleaner.min.cleanable.ratio", "0.5", DEFAULT)]
    for name in ("retention.ms", "flush.ms", "segment.ms", "leader.replication.throttled.replicas"):
        assert synonyms(name) == [] and described[name].config_source == DEFAULT, name
    assert described["retention.ms"].value == "604800000"


def test_topic_config_sources_as_a_4_3_cluster():
    broker = new_broker(topics={"t": 1}, log_retention_bytes=1000)
    alter(broker, TOPIC, "t", [("cleanup.policy", SET, "compact")])
    got = configs(describe(broker, TOPIC, "t"))
    assert got["min.insync.replicas"].config_source == DYNAMIC_DEFAULT
    assert got["cleanup.policy"].config_source == TOPIC_SET
    assert [(s.name, s.value, s.source) for s in got["cleanup.policy"].synonyms][0] == ("cleanup.policy", "compact",
                                                                                        TOPIC_SET)
    assert (got["retention.bytes"].value, got["retention.bytes"].config_source) == ("1000", STATIC)
    assert got["retention.ms"].config_source == DEFAULT
    assert configs(describe(broker, TOPIC, "t", synonyms=False))["retention.ms"].synonyms == []


def test_bad_broker_config_changes_are_invalid_requests():
    broker = new_broker(nodes=2)
    for changes in ([("num.partitions", SET, "3")], [("no.such", SET, "1")], [("log.retention.ms", SET, "soon")],
                    [("log.cleanup.policy", APPEND, "compact")]):
        assert alter(broker, BROKER, "", changes).error_code == E.INVALID_REQUEST
    assert alter(broker, BROKER, "1", [("log.retention.ms", SET, "1")]).error_code == E.INVALID_REQUEST  # reached 0
    assert alter(broker, BROKER, "1", [("log.retention.ms", SET, "1")], node_id=1).error_code == E.NONE


def test_broker_loggers():
    broker = new_broker()
    got = configs(describe(broker, BROKER_LOGGER, "0"))
    assert got["root"].value == "INFO" and got["root"].config_source == LOGGER and not got["root"].read_only
    assert alter(broker, BROKER_LOGGER, "0", [("kafkaemu.wire", SET, "DEBUG")]).error_code == E.NONE
    assert configs(describe(broker, BROKER_LOGGER, "0"))["kafkaemu.wire"].value == "DEBUG"
    assert alter(broker, BROKER_LOGGER, "0", [("kafkaemu.wire", SET, "LOUD")]).error_code == E.INVALID_CONFIG
    assert alter(broker, BROKER_LOGGER, "0", [("no.logger", SET, "INFO")]).error_code == E.INVALID_CONFIG
    assert alter(broker, BROKER_LOGGER, "0", [("root", DELETE, None)]).error_code == E.INVALID_REQUEST
    assert alter(broker, BROKER_LOGGER, "0", [("root", APPEND, "INFO")]).error_code == E.INVALID_REQUEST
    assert alter(broker, BROKER_LOGGER, "0", [("kafkaemu.wire", DELETE, None)]).error_code == E.NONE
    assert configs(describe(broker, BROKER_LOGGER, "0"))["kafkaemu.wire"].value == "INFO"
    assert describe(broker, BROKER_LOGGER, "7").error_code == E.INVALID_REQUEST
    assert describe(broker, BROKER_LOGGER, "").error_code == E.INVALID_REQUEST


GROUP = 32


def heartbeat(broker, group, member="m1"):
    body = {"group_id": group, "member_id": member, "member_epoch": 0, "instance_id": None, "rack_id": None,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": []}
    return call(broker, ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, body)


def test_a_groups_consumer_configs_take_effect_on_that_group_only():
    broker = new_broker(topics={"t": 1})
    changes = [("consumer.session.timeout.ms", SET, "60000"), ("consumer.heartbeat.interval.ms", SET, "7000")]
    assert alter(broker, GROUP, "slow", changes).error_code == E.NONE
    assert heartbeat(broker, "slow").heartbeat_interval_ms == 7000
    assert heartbeat(broker, "plain").heartbeat_interval_ms == 5000
    got = configs(describe(broker, GROUP, "slow"))
    assert (got["consumer.session.timeout.ms"].value, got["consumer.session.timeout.ms"].config_source) == ("60000", 8)
    broker.tick(50_000)    # past the default 45 s session, within the group's 60 s
    assert list(broker.coordinator.consumer.groups["slow"].members) == ["m1"]
    assert not broker.coordinator.consumer.groups["plain"].members
    broker.tick(61_000)
    assert not broker.coordinator.consumer.groups["slow"].members


def test_bad_group_configs_are_invalid_config():
    broker = new_broker()
    for changes in ([("consumer.session.timeout.ms", SET, "1000")], [("consumer.nope", SET, "1")],
                    [("streams.num.standby.replicas", SET, "9")]):
        assert alter(broker, GROUP, "g", changes).error_code == E.INVALID_CONFIG, changes
    ok = [("streams.num.standby.replicas", SET, "1"), ("consumer.heartbeat.interval.ms", SET, "15000"),
          ("consumer.session.timeout.ms", SET, "50000")]
    assert alter(broker, GROUP, "g", ok).error_code == E.NONE


def test_a_groups_streams_configs_are_bounded_by_the_brokers_group_streams_min_and_max_settings():
    broker = new_broker(extra={"group.streams.min.session.timeout.ms": 10000, "group.streams.max.standby.replicas": 3,
                               "group.streams.min.heartbeat.interval.ms": 1000})
    for name, value, code in (("streams.session.timeout.ms", "20000", E.NONE),       # below the default 45000
                              ("streams.session.timeout.ms", "9999", E.INVALID_CONFIG),
                              ("streams.num.standby.replicas", "3", E.NONE),
                              ("streams.num.standby.replicas", "4", E.INVALID_CONFIG),
                              ("streams.heartbeat.interval.ms", "2000", E.NONE),
                              ("streams.heartbeat.interval.ms", "16000", E.INVALID_CONFIG)):
        result = alter(broker, GROUP, "app", [(name, SET, value)])
        assert result.error_code == code, (name, value)
    assert "streams.session.timeout.ms must be in the range 10000 to 60000 inclusive." in \
        alter(broker, GROUP, "app", [("streams.session.timeout.ms", SET, "1")]).error_message


def test_an_unset_streams_assignor_name_is_described_as_the_first_registered_assignor():
    """GroupConfig: unset, a streams group uses the first of group.streams.assignors; Kafka 4.4
    describes that as the config's value."""
    broker = new_broker()
    assignor = configs(describe(broker, GROUP, "app"))["streams.assignor.name"]
    assert (assignor.value, assignor.config_source) == ("sticky", DEFAULT)


def test_internal_group_configs_are_described_only_where_set_on_the_group():
    """Kafka 4.4's GroupConfig defines the assignor offload switches, streams.acceptable.recovery.lag,
    streams.num.warmup.replicas and streams.task.offset.interval.ms as internal: DescribeConfigs
    lists them only among the group's own configs."""
    broker = new_broker()
    internal = {"consumer.assignor.offload.enable", "share.assignor.offload.enable", "streams.assignor.offload.enable",
                "streams.acceptable.recovery.lag", "streams.num.warmup.replicas", "streams.task.offset.interval.ms"}
    described = configs(describe(broker, GROUP, "app"))
    assert internal.isdisjoint(described) and "streams.num.standby.replicas" in described
    assert alter(broker, GROUP, "app", [("streams.num.warmup.replicas", SET, "1")]).error_code == E.NONE
    warmup = configs(describe(broker, GROUP, "app"))["streams.num.warmup.replicas"]
    assert warmup.value == "1" and warmup.config_source == 8   # DYNAMIC_GROUP_CONFIG
