"""DescribeClientQuotas and AlterClientQuotas through their handlers, and quota enforcement through
the sans-IO connection on a manual clock: the throttle in the reply, the connection muted until
the broker's clock passes it, a throttled Fetch answering empty, an old Produce answered late."""
import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.protocol import envelope
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import T0, WireClient, call, new_broker

pytestmark = pytest.mark.broker(T0)


def _alter(broker, entries, version=1, validate_only=False, **context):
    return call(broker, ApiKey.ALTER_CLIENT_QUOTAS, version, {"entries": [
        {"entity": [{"entity_type": t, "entity_name": n} for t, n in entity],
         "ops": [{"key": k, "value": v, "remove": r} for k, v, r in ops]} for entity, ops in entries],
        "validate_only": validate_only}, **context)


def _describe(broker, components, strict=False, version=1, **context):
    return call(broker, ApiKey.DESCRIBE_CLIENT_QUOTAS, version, {"components": [
        {"entity_type": t, "match_type": m, "match": n} for t, m, n in components], "strict": strict}, **context)


@pytest.mark.parametrize("version", [0, 1])
def test_alter_then_describe(broker, version):
    reply = _alter(broker, [([("user", "alice"), ("client-id", None)], [("producer_byte_rate", 1048576.0, False)]),
                            ([("client-id", "c")], [("consumer_byte_rate", 2.5, False)]),
                            ([("user", "bob")], [("request_percentage", 150.0, False)])], version)
    assert [(e.error_code, e.error_message) for e in reply.entries] == [
        (0, None), (ErrorCode.INVALID_REQUEST, "consumer_byte_rate cannot be a fractional value."), (0, None)]
    assert sorted((e.entity_type, e.entity_name) for e in reply.entries[0].entity) == [("client-id", None),
                                                                                       ("user", "alice")]
    reply = _describe(broker, [("user", 2, None)], version=version)
    assert reply.error_code == 0
    found = {tuple((e.entity_type, e.entity_name) for e in entry.entity): {v.key: v.value for v in entry.values}
             for entry in reply.entries}
    assert found == {(("client-id", None), ("user", "alice")): {"producer_byte_rate": 1048576.0},
                     (("user", "bob"),): {"request_percentage": 150.0}}
    reply = _describe(broker, [("user", 2, None)], strict=True, version=version)
    assert [[(e.entity_type, e.entity_name) for e in entry.entity] for entry in reply.entries] == [[("user", "bob")]]


def test_bad_filter_is_the_request_error(broker):
    reply = _describe(broker, [("group", 2, None)])
    assert (reply.error_code, reply.error_message, reply.entries) == (
        ErrorCode.UNSUPPORTED_VERSION, "Custom entity type group not supported", None)
    assert _describe(broker, [("user", 0, None)]).error_code == ErrorCode.UNKNOWN_SERVER_ERROR


def test_validate_only_changes_nothing(broker):
    assert _alter(broker, [([("user", "u")], [("producer_byte_rate", 10.0, False)])],
                  validate_only=True).entries[0].error_code == 0
    assert _describe(broker, []).entries == []


def test_cluster_permissions_are_required():
    broker = new_broker(T0, authorizer=True)
    reply = _alter(broker, [([("user", "u")], [("producer_byte_rate", 10.0, False)])], principal="User:eve")
    assert reply.entries[0].error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert _describe(broker, [], principal="User:eve").error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert broker.quotas.entries == {}


def _produce_frame(client, version, size):
    client.correlation_id += 1
    return envelope.encode_request(ApiKey.PRODUCE, version, {
        "transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [{"name": "t", "partition_data": [
            {"index": 0, "records": build_batch([(None, b"x" * size, [], T0)])}]}]},
        client.correlation_id, client.client_id)


def _replies(client):
    return FrameDecoder(1 << 30).feed(client.conn.take_output())


def test_a_producer_over_its_quota_is_throttled_and_muted(broker):
    broker.topics.create("t", 1, {})
    _alter(broker, [([("client-id", "slow")], [("producer_byte_rate", 1000.0, False)])])
    client = WireClient(broker, client_id="slow")
    # 10 s of samples at 1,000 B/s: the first ~10 KB pass, the next request is over the quota
    client.conn.receive(_produce_frame(client, 9, 9000), T0)
    [reply] = _replies(client)
    assert envelope.decode_response(ApiKey.PRODUCE, 9, reply)[1].throttle_time_ms == 0
    client.conn.receive(_produce_frame(client, 9, 9000), T0)
    [reply] = _replies(client)
    throttle = envelope.decode_response(ApiKey.PRODUCE, 9, reply)[1].throttle_time_ms
    assert 7000 < throttle < 10000        # (18 KB / 10 s - 1 KB/s) / 1 KB/s * 10 s
    assert client.conn.throttled and not client.conn.wants_input
    # a request sent while muted waits until the broker's clock passes the throttle
    client.conn.receive(_produce_frame(client, 9, 10), T0 + 1)
    assert _replies(client) == []
    broker.tick(T0 + throttle - 1)
    assert client.conn.throttled
    broker.tick(T0 + throttle)
    assert not client.conn.throttled
    client.conn.process(T0 + throttle)
    assert len(_replies(client)) == 1
    # the same client on another node is measured there, as by another Kafka broker
    elsewhere = WireClient(broker, client_id="slow", node_id=1)
    elsewhere.conn.receive(_produce_frame(elsewhere, 9, 5000), T0 + throttle)
    assert envelope.decode_response(ApiKey.PRODUCE, 9, _replies(elsewhere)[0])[1].throttle_time_ms == 0
    assert {s["node"] for s in broker.quota_enforcer.managers.produce.rates(T0)} == {0, 1}
    # another client is not throttled
    other = WireClient(broker, client_id="fast")
    other.conn.receive(_produce_frame(other, 9, 50000), T0 + throttle)
    assert envelope.decode_response(ApiKey.PRODUCE, 9, _replies(other)[0])[1].throttle_time_ms == 0
    assert broker.store.get("t").partitions[0].high_watermark == 4


def test_pre_kip_219_produce_gets_its_reply_when_the_throttle_ends(broker):
    broker.topics.create("t", 1, {})
    _alter(broker, [([("user", None)], [("producer_byte_rate", 1000.0, False)])])
    client = WireClient(broker, client_id="old")
    client.conn.receive(_produce_frame(client, 5, 30000), T0)
    assert _replies(client) == []
    broker.tick(T0 + 100_000)
    [reply] = _replies(client)
    assert envelope.decode_response(ApiKey.PRODUCE, 5, reply)[1].throttle_time_ms > 0


def test_a_throttled_fetch_answers_empty_and_takes_its_bytes_back(broker):
    topic = broker.topics.create("t", 1, {})
    for _ in range(3):
        topic.partitions[0].append(build_batch([(None, b"y" * 8000, [], T0)]), T0)
    _alter(broker, [([("client-id", "reader")], [("consumer_byte_rate", 1000.0, False)])])
    client = WireClient(broker, client_id="reader")
    body = {"max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0,
            "session_epoch": -1, "forgotten_topics_data": [], "rack_id": "", "replica_id": -1,
            "topics": [{"topic": "t", "topic_id": topic.topic_id, "partitions": [
                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]}
    # max_bytes is capped at the quota's window (10 s x 1,000 B/s): one batch of the three
    reply = client.call(ApiKey.FETCH, 13, body)
    assert reply.throttle_time_ms == 0
    [batch] = reply.responses[0].partitions[0].records if isinstance(reply.responses[0].partitions[0].records, list) \
        else [reply.responses[0].partitions[0].records]
    assert 8000 < len(batch) < 10000
    body["topics"][0]["partitions"][0]["fetch_offset"] = 1
    reply = client.call(ApiKey.FETCH, 13, body)
    assert reply.throttle_time_ms > 0 and reply.responses == []
    assert client.conn.throttled
    [sensor] = broker.quota_enforcer.managers.fetch.rates(T0)
    assert sensor["rate"] == len(batch) / 10 and sensor["throttled_responses"] == 1


def test_no_quota_no_throttle(broker, client):
    broker.topics.create("t", 1, {})
    client.conn.receive(_produce_frame(client, 9, 500_000), T0)
    assert envelope.decode_response(ApiKey.PRODUCE, 9, _replies(client)[0])[1].throttle_time_ms == 0
    assert not broker.quota_enforcer.managers.produce.sensors


def test_quotas_survive_a_restart_with_a_data_dir(tmp_path):
    broker = new_broker(T0, data_dir=str(tmp_path))
    _alter(broker, [([("user", "u"), ("client-id", "c")], [("producer_byte_rate", 4096.0, False)])])
    broker.close()
    again = new_broker(T0, data_dir=str(tmp_path))
    assert again.quotas.quota_for("producer_byte_rate", "u", "c") == (4096.0, ("u", "c"))
    assert again.quota_entries
