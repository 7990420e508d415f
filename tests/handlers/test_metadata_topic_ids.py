"""Metadata with topic ids and null names, as KafkaApis.handleTopicMetadataRequest answers them:
v10-v11 refuse null names and ids with INVALID_REQUEST, v12 looks up by id when any id is given,
and a v12 null name without an id is Kafka's UNKNOWN_SERVER_ERROR. Never a dropped connection."""
import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from tests.conftest import wire_call


ZERO = bytes(16)
UNKNOWN_ID = bytes(range(16))


pytestmark = pytest.mark.broker(topics={"known": 2})


def _answer(resp):
    return [(t.error_code, t.name, t.topic_id, len(t.partitions)) for t in resp.topics]


@pytest.mark.parametrize("version", [10, 11])
def test_v10_and_v11_refuse_a_null_name_with_invalid_request(broker, version):
    resp = wire_call(broker, ApiKey.METADATA, version,
                     {"topics": [{"name": None, "topic_id": ZERO}, {"name": "known", "topic_id": ZERO}]})
    assert _answer(resp) == [(ErrorCode.INVALID_REQUEST, "", ZERO, 0), (ErrorCode.INVALID_REQUEST, "known", ZERO, 0)]
    assert resp.brokers == [] and resp.controller_id == -1  # Kafka's MetadataRequest.getErrorResponse


@pytest.mark.parametrize("version", [10, 11])
def test_v10_and_v11_refuse_topic_ids_with_invalid_request(broker, version):
    topic_id = broker.store.get("known").topic_id
    resp = wire_call(broker, ApiKey.METADATA, version, {"topics": [{"name": "known", "topic_id": topic_id}]})
    assert _answer(resp) == [(ErrorCode.INVALID_REQUEST, "known", topic_id, 0)]


def test_v12_null_name_without_an_id_is_kafkas_unknown_server_error(broker):
    resp = wire_call(broker, ApiKey.METADATA, 12, {"topics": [{"name": None, "topic_id": ZERO}]})
    assert _answer(resp) == [(ErrorCode.UNKNOWN_SERVER_ERROR, "", ZERO, 0)]


def test_v12_looks_up_by_id_only_when_any_id_is_given(broker):
    topic_id = broker.store.get("known").topic_id
    resp = wire_call(broker, ApiKey.METADATA, 12, {"topics": [
        {"name": None, "topic_id": topic_id}, {"name": None, "topic_id": UNKNOWN_ID},
        {"name": "ignored", "topic_id": ZERO}, {"name": None, "topic_id": topic_id}]})
    assert _answer(resp) == [(0, "known", topic_id, 2), (ErrorCode.UNKNOWN_TOPIC_ID, None, UNKNOWN_ID, 0)]
    assert broker.store.get("ignored") is None  # a name beside ids is neither answered nor auto-created


def test_names_asked_twice_are_answered_once(broker):
    resp = wire_call(broker, ApiKey.METADATA, 12,
                     {"topics": [{"name": "known"}, {"name": "known"}], "allow_auto_topic_creation": False})
    assert [(t.name, t.error_code) for t in resp.topics] == [("known", 0)]


@pytest.mark.parametrize("auto_create", [True, False])
def test_an_illegal_name_is_invalid_topic_whether_or_not_it_could_be_created(broker, auto_create):
    resp = wire_call(broker, ApiKey.METADATA, 12,
                     {"topics": [{"name": "bad/name"}, {"name": ""}], "allow_auto_topic_creation": auto_create})
    assert [(t.name, t.error_code) for t in resp.topics] == [
        ("bad/name", ErrorCode.INVALID_TOPIC_EXCEPTION), ("", ErrorCode.INVALID_TOPIC_EXCEPTION)]
