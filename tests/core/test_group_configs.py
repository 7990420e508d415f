"""Per-group configs of every kind, looked up one way (``ctx.group_configs``) with the kinds'
broker settings as defaults and bounds: the group.share.* settings acting on share groups, a
group's own config winning over them, and Kafka 4.4's checks answered in its words."""
from kafkaemu.core.coordinator import CoordinatorSettings, GroupCoordinator
from kafkaemu.core.consumer.settings import ConsumerSettings
from kafkaemu.core.group_configs import GROUP_CONFIGS, GroupConfigs
from kafkaemu.core.modern import TopicMeta
from kafkaemu.core.share.requests import ShareHeartbeat
from kafkaemu.core.share.settings import ShareSettings
from kafkaemu.core.streams.settings import StreamsSettings

from .share.plane import coordinator_with_plane

T1 = b"\x01" * 16
TOPICS = {"a": TopicMeta("a", T1, 1)}
SHORT_LOCKS = ShareSettings(record_lock_duration_ms=1000, min_record_lock_duration_ms=1000)


def share_member(settings: ShareSettings, group: str = "g"):
    """A coordinator and its share data plane (sharing one GroupConfigs), a member of ``group`` on
    topic a (10 records, read from the start), and that member's heartbeat answer."""
    c, shares = coordinator_with_plane(log_offsets=lambda tid, p, committed: (0, 10),
                                       settings=CoordinatorSettings(share=settings))
    c.group_configs.set(group, "share.auto.offset.reset", "earliest")
    return c, shares, c.share_group_heartbeat(0, ShareHeartbeat(group, "m1", 0, subscribed_topic_names=["a"]), TOPICS)


def test_the_brokers_group_share_settings_are_the_share_groups_defaults():
    c, shares, joined = share_member(ShareSettings(
        record_lock_duration_ms=1000, min_record_lock_duration_ms=1000, delivery_count_limit=2,
        heartbeat_interval_ms=7000, partition_max_record_locks=150))
    assert joined["heartbeat_interval_ms"] == 7000
    acquired = shares.acquire(0, "g", "m1", T1, 0, 1000, [(0, 9)])
    assert len(acquired) == 1 and acquired[0].delivery_count == 1
    assert shares.limits("g").max_in_flight == 150
    assert shares.acquire(999, "g", "m1", T1, 0, 1000, [(0, 9)]) == []   # still locked
    again = shares.acquire(1000, "g", "m1", T1, 0, 1000, [(0, 9)])       # the 1 s lock lapsed
    assert again and again[0].delivery_count == 2


def test_a_groups_own_config_wins_over_the_broker_setting_and_reaches_its_share_partitions():
    c, shares, _ = share_member(SHORT_LOCKS)
    shares.partition(0, "g", T1, 0)
    c.group_configs.set("g", "share.record.lock.duration.ms", "20000")
    c.group_configs.set("g", "share.partition.max.record.locks", "300")
    assert shares.limits("g").lock_duration_ms == 20000
    assert shares.existing("g", T1, 0).limits.max_in_flight == 300
    assert shares.group_configs is c.group_configs
    assert c.group_configs.value("other", "share.record.lock.duration.ms") == 1000


def test_every_kind_reads_its_timeouts_through_the_group_configs():
    c = GroupCoordinator(CoordinatorSettings(consumer=ConsumerSettings(session_timeout_ms=50000),
                                             streams=StreamsSettings(num_standby_replicas=1)))
    assert (c.consumer.session_timeout_ms("g"), c.streams.num_standby_replicas("s")) == (50000, 1)
    c.group_configs.set("g", "consumer.session.timeout.ms", "55000")
    c.group_configs.set("s", "streams.num.standby.replicas", "2")
    assert (c.consumer.session_timeout_ms("g"), c.streams.num_standby_replicas("s")) == (55000, 2)
    c.group_configs.set("g", "consumer.session.timeout.ms", None)
    assert c.consumer.session_timeout_ms("g") == 50000 and c.group_configs.groups() == ["s"]


def test_values_are_checked_against_the_brokers_bounds_in_kafkas_words():
    configs = GroupConfigs(CoordinatorSettings())
    assert configs.problem({"share.record.lock.duration.ms": "14000"}) == \
        "share.record.lock.duration.ms must be in the range 15000 to 60000 inclusive."
    assert configs.problem({"share.record.lock.duration.ms": "999"}) == \
        "Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000"
    assert configs.problem({"share.partition.max.record.locks": "5000"}) == \
        "share.partition.max.record.locks must be in the range 100 to 4000 inclusive."
    assert configs.problem({"streams.num.warmup.replicas": "30"}) == \
        "streams.num.warmup.replicas must be less than or equal to 20"
    assert configs.problem({"streams.task.offset.interval.ms": "1000"}) == \
        "streams.task.offset.interval.ms must be greater than or equal to 15000"
    assert configs.problem({"share.renew.acknowledge.enable": "maybe"}) == \
        "Invalid value maybe for configuration share.renew.acknowledge.enable: Expected value to be either true or " \
        "false"
    assert configs.problem({"share.heartbeat.interval.ms": "15000", "share.session.timeout.ms": "45000"}) is None
    assert configs.problem({"no.such": "1"}) == "Unknown group config name: no.such"
    lowered = GroupConfigs(CoordinatorSettings(share=SHORT_LOCKS))
    assert lowered.problem({"share.record.lock.duration.ms": "1000"}) is None


def test_a_heartbeat_interval_not_below_its_session_timeout_is_refused():
    configs = GroupConfigs(CoordinatorSettings(consumer=ConsumerSettings(min_heartbeat_interval_ms=1000,
                                                                         max_heartbeat_interval_ms=60000)))
    assert configs.problem({"consumer.heartbeat.interval.ms": "50000"}) == \
        "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"


def test_overrides_are_persisted_through_the_port_and_described_with_their_defaults():
    saved = []
    configs = GroupConfigs(CoordinatorSettings(), {"g": {"share.auto.offset.reset": "earliest"}}, saved.append)
    configs.replace("g", {"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "3"})
    assert saved[-1] == {"g": {"share.auto.offset.reset": "earliest", "share.delivery.count.limit": "3"}}
    described = {name: (value, set_here, typ) for name, value, set_here, typ in configs.describe("g")}
    assert set(described) == set(GROUP_CONFIGS) and len(described) == 27   # Kafka 4.4's GroupConfig
    assert described["share.delivery.count.limit"] == ("3", True, "INT")
    assert described["consumer.session.timeout.ms"] == ("45000", False, "INT")
    assert described["streams.rack.aware.assignment.tags"] == ("", False, "LIST")
    configs.delete_group("g")
    assert saved[-1] == {} and configs.groups() == []
