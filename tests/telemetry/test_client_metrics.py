"""KIP-714 on a manual clock: CLIENT_METRICS subscriptions validated as Kafka's ClientMetricsConfigs,
GetTelemetrySubscriptions / PushTelemetry through their handlers with ClientMetricsManager's
checks, the OTLP payload (compressed or not) decoded into each client's latest values, and the
CLIENT_METRICS resources through DescribeConfigs / IncrementalAlterConfigs."""
import pytest
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.metrics.v1 import metrics_pb2

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage import compression
from kafkaemu.telemetry.subscriptions import TelemetryConfigError, validate
from tests.conftest import T0, call, new_broker

pytestmark = pytest.mark.broker(T0)
ZERO = bytes(16)


@pytest.mark.parametrize("name, configs, code, message", [
    ("", {"metrics": "*"}, "INVALID_REQUEST", "Subscription name can't be empty"),
    ("s", {"nope": "1"}, "INVALID_REQUEST", "Unknown client metrics configuration: nope"),
    ("s", {"interval.ms": "99"}, "INVALID_REQUEST",
     "Invalid value 99 for interval.ms, interval must be between 100 and 3600000 (1 hour)"),
    ("s", {"interval.ms": "soon"}, "INVALID_CONFIG",
     "Invalid value soon for configuration interval.ms: Not a number of type INT"),
    ("s", {"match": "client_colour=red"}, "INVALID_CONFIG", "Illegal client matching pattern: client_colour=red"),
    ("s", {"match": "client_id"}, "INVALID_CONFIG", "Illegal client matching pattern: client_id"),
    ("s", {"metrics": "a,a"}, "INVALID_CONFIG", "Configuration 'metrics' values must not be duplicated."),
])
def test_bad_subscriptions(name, configs, code, message):
    with pytest.raises(TelemetryConfigError) as info:
        validate(name, configs, {})
    assert (info.value.code, info.value.message) == (code, message)


def test_a_bad_regex_is_invalid_config():
    with pytest.raises(TelemetryConfigError) as info:
        validate("s", {"match": "client_id=a("}, {})
    assert info.value.code == "INVALID_CONFIG" and info.value.message.startswith("Client match pattern `client_id=a(`")


def _alter(broker, name, *ops, version=1, validate_only=False, **context):
    return call(broker, ApiKey.INCREMENTAL_ALTER_CONFIGS, version, {"resources": [
        {"resource_type": 16, "resource_name": name, "configs": [
            {"name": k, "config_operation": op, "value": v} for k, op, v in ops]}],
        "validate_only": validate_only}, **context).responses[0]


def _describe(broker, name, **context):
    return call(broker, ApiKey.DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": 16, "resource_name": name, "configuration_keys": None}],
        "include_synonyms": True, "include_documentation": False}, **context).results[0]


def _get(broker, instance_id=ZERO, now_ms=None, client_id="app"):
    return call(broker, ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, {"client_instance_id": instance_id},
                now_ms=now_ms, client_id=client_id)


def _payload(lag: float, latency: float) -> bytes:
    data = metrics_pb2.MetricsData()
    rm = data.resource_metrics.add()
    rm.resource.attributes.add(key="client_rack", value=common_pb2.AnyValue(string_value="r1"))
    sm = rm.scope_metrics.add()
    gauge = sm.metrics.add(name="org.apache.kafka.consumer.fetch.manager.records.lag.max", unit="1")
    point = gauge.gauge.data_points.add(as_double=lag, time_unix_nano=T0 * 1_000_000)
    point.attributes.add(key="topic", value=common_pb2.AnyValue(string_value="t"))
    latency_metric = sm.metrics.add(name="org.apache.kafka.consumer.fetch.manager.fetch.latency.avg", unit="ms")
    latency_metric.gauge.data_points.add(as_double=latency, time_unix_nano=T0 * 1_000_000)
    total = sm.metrics.add(name="org.apache.kafka.consumer.fetch.manager.fetch.total")
    total.sum.data_points.add(as_int=3, time_unix_nano=T0 * 1_000_000)
    return data.SerializeToString()


def _push(broker, instance_id, subscription_id, payload, codec=0, terminating=False, now_ms=None):
    return call(broker, ApiKey.PUSH_TELEMETRY, 0, {
        "client_instance_id": instance_id, "subscription_id": subscription_id, "terminating": terminating,
        "compression_type": codec, "metrics": compression.compress(codec, payload) if 0 < codec <= 4 else payload},
        now_ms=now_ms).error_code


def test_subscription_configs_through_the_config_apis(broker):
    assert _alter(broker, "lag", ("metrics", 0, "org.apache.kafka.consumer."), ("interval.ms", 0, "1000"),
                  ("match", 0, "client_id=app.*")).error_code == 0
    assert _alter(broker, "lag", ("metrics", 2, "org.apache.kafka.producer.")).error_code == 0
    described = _describe(broker, "lag")
    assert described.error_code == 0
    assert {(c.name, c.value, c.config_source, c.read_only) for c in described.configs} == {
        ("metrics", "org.apache.kafka.consumer.,org.apache.kafka.producer.", 7, False),
        ("interval.ms", "1000", 7, False),
        ("match", "client_id=app.*", 7, False)}
    assert _describe(broker, "missing").configs == []
    assert _describe(broker, "").error_code == ErrorCode.INVALID_REQUEST
    reply = _alter(broker, "lag", ("interval.ms", 0, "50"))
    assert (reply.error_code, reply.error_message) == (ErrorCode.INVALID_REQUEST, "Invalid value 50 for interval.ms, "
                                                       "interval must be between 100 and 3600000 (1 hour)")
    assert _alter(broker, "lag", ("interval.ms", 2, "5")).error_code == ErrorCode.INVALID_CONFIG
    assert broker.client_metrics.names() == ["lag"]
    listed = call(broker, ApiKey.LIST_CONFIG_RESOURCES, 0, {})
    assert [r.resource_name for r in listed.config_resources] == ["lag"]
    for key in ("metrics", "interval.ms", "match"):
        assert _alter(broker, "lag", (key, 1, None)).error_code == 0
    assert broker.client_metrics.names() == []


def test_cluster_permissions_are_required():
    broker = new_broker(T0, authorizer=True)
    assert _alter(broker, "s", ("metrics", 0, "*"), principal="User:eve").error_code == \
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert _describe(broker, "s", principal="User:eve").error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_no_subscription_no_metrics(broker):
    reply = _get(broker)
    assert reply.error_code == 0 and reply.client_instance_id != ZERO
    assert (reply.requested_metrics, reply.push_interval_ms, reply.delta_temporality, reply.telemetry_max_bytes) == (
        [], 300000, True, 1048576)
    assert reply.accepted_compression_types == [4, 3, 1, 2]


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_subscribe_push_and_read_the_metrics(broker, codec):
    _alter(broker, "all", ("metrics", 0, "*"), ("interval.ms", 0, "1000"))
    _alter(broker, "other", ("metrics", 0, "org.apache.kafka.producer."), ("match", 0, "client_id=nobody"))
    reply = _get(broker)
    assert (reply.requested_metrics, reply.push_interval_ms) == (["*"], 1000)
    instance, subscription = reply.client_instance_id, reply.subscription_id
    # the first push right after the subscription is accepted; the next one waits for the interval
    assert _push(broker, instance, subscription, _payload(42, 7.5), codec) == 0
    assert _push(broker, instance, subscription, _payload(43, 7.5), codec, now_ms=T0 + 10) == \
        ErrorCode.THROTTLING_QUOTA_EXCEEDED
    assert _push(broker, instance, subscription, _payload(40, 6.0), codec, now_ms=T0 + 1000) == 0
    [client] = broker.client_metrics.clients()
    assert (client["client_id"], client["pushes"], client["resource"]) == ("app", 2, {"client_rack": "r1"})
    values = {m["name"]: m for m in client["metrics"]}
    lag = values["org.apache.kafka.consumer.fetch.manager.records.lag.max"]
    assert (lag["value"], lag["attributes"]) == (40.0, {"topic": "t"})
    assert values["org.apache.kafka.consumer.fetch.manager.fetch.latency.avg"]["value"] == 6.0
    assert values["org.apache.kafka.consumer.fetch.manager.fetch.total"]["total"] == 6   # deltas add up


def test_push_errors(broker):
    _alter(broker, "all", ("metrics", 0, "*"), ("interval.ms", 0, "1000"))
    reply = _get(broker)
    instance, subscription = reply.client_instance_id, reply.subscription_id
    assert _get(broker, instance, now_ms=T0 + 1).error_code == ErrorCode.THROTTLING_QUOTA_EXCEEDED
    assert _push(broker, ZERO, subscription, b"") == ErrorCode.INVALID_REQUEST
    assert _push(broker, instance, subscription + 1, b"") == ErrorCode.UNKNOWN_SUBSCRIPTION_ID
    assert _push(broker, instance, subscription, b"x" * 10, codec=9, now_ms=T0 + 2000) == \
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert _push(broker, instance, subscription, b"\xff\xff", now_ms=T0 + 4000) == ErrorCode.INVALID_RECORD
    assert _push(broker, instance, subscription, b"x" * ((1 << 20) + 1), now_ms=T0 + 6000) == \
        ErrorCode.TELEMETRY_TOO_LARGE
    # a changed subscription gives the client a new subscription id at once
    _alter(broker, "all", ("interval.ms", 0, "2000"))
    again = _get(broker, instance, now_ms=T0 + 6001)
    assert again.error_code == 0 and again.subscription_id != subscription and again.push_interval_ms == 2000
    assert _push(broker, instance, again.subscription_id, _payload(1, 1), terminating=True, now_ms=T0 + 6002) == 0
    assert _push(broker, instance, again.subscription_id, b"", now_ms=T0 + 60000) == ErrorCode.INVALID_REQUEST


def test_match_selects_clients(broker):
    _alter(broker, "apps", ("metrics", 0, "org.apache.kafka.consumer."), ("match", 0, "client_id=app-.*"))
    assert _get(broker, client_id="app-1").requested_metrics == ["org.apache.kafka.consumer."]
    assert _get(broker, client_id="other").requested_metrics == []


def test_subscriptions_survive_a_restart_with_a_data_dir(tmp_path):
    broker = new_broker(T0, data_dir=str(tmp_path))
    _alter(broker, "all", ("metrics", 0, "*"))
    broker.close()
    assert new_broker(T0, data_dir=str(tmp_path)).client_metrics.configs == {"all": {"metrics": "*"}}
