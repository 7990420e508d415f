"""What Kafka 4.4.0 changed that a client sees, request by request: ApiVersions v5 and its answer
(telemetry APIs only with a telemetry reporter, Produce advertised from v0), DeleteGroups v3,
TxnOffsetCommit v6 (topics by id)."""
from __future__ import annotations

import pytest

from kafkaemu.config import CLIENT_TELEMETRY_REPORTER
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.defaults import ZERO_UUID
from kafkaemu.protocol.errors import ErrorCode
from tests.conftest import call, new_broker

SOFTWARE = {"client_software_name": "kafkaemu-test", "client_software_version": "1.0"}
TELEMETRY = {ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, ApiKey.PUSH_TELEMETRY}


def advertised(broker, version=4, **body):
    answer = call(broker, ApiKey.API_VERSIONS, version, {**SOFTWARE, **body})
    return answer, {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}


def test_telemetry_apis_are_advertised_only_with_the_telemetry_reporter():
    _, plain = advertised(new_broker())
    assert not TELEMETRY & set(plain)
    _, on = advertised(new_broker(extra={"metric.reporters": CLIENT_TELEMETRY_REPORTER}))
    assert {k: on[k] for k in TELEMETRY} == {k: (0, 0) for k in TELEMETRY}


def test_telemetry_requests_are_answered_without_the_reporter_as_kafka_does():
    answer = call(new_broker(), ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, {"client_instance_id": ZERO_UUID})
    assert answer.error_code == ErrorCode.NONE and answer.client_instance_id != ZERO_UUID


def test_produce_is_advertised_from_v0_and_the_raised_minimums_are_kafka_4s():
    _, versions = advertised(new_broker())
    assert versions[ApiKey.PRODUCE] == (0, 13)
    assert {k: versions[k][0] for k in (ApiKey.FETCH, ApiKey.LIST_OFFSETS, ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH,
                                        ApiKey.CREATE_TOPICS, ApiKey.DELETE_TOPICS, ApiKey.OFFSET_FOR_LEADER_EPOCH,
                                        ApiKey.WRITE_TXN_MARKERS, ApiKey.DESCRIBE_CONFIGS)} == {
        ApiKey.FETCH: 4, ApiKey.LIST_OFFSETS: 1, ApiKey.OFFSET_COMMIT: 2, ApiKey.OFFSET_FETCH: 1,
        ApiKey.CREATE_TOPICS: 2, ApiKey.DELETE_TOPICS: 1, ApiKey.OFFSET_FOR_LEADER_EPOCH: 2,
        ApiKey.WRITE_TXN_MARKERS: 1, ApiKey.DESCRIBE_CONFIGS: 1}


@pytest.mark.parametrize(("cluster_id", "node_id", "error"), [
    (None, -1, ErrorCode.NONE),                                   # the client knows neither: any broker
    ("kafkaemu-cluster-0000", 0, ErrorCode.NONE),
    ("another-cluster", 0, ErrorCode.REBOOTSTRAP_REQUIRED),
    ("kafkaemu-cluster-0000", 7, ErrorCode.REBOOTSTRAP_REQUIRED),
])
def test_api_versions_v5_checks_the_cluster_and_node_the_client_meant(cluster_id, node_id, error):
    answer, versions = advertised(new_broker(), 5, cluster_id=cluster_id, node_id=node_id)
    assert answer.error_code == error
    assert bool(versions) == (error == ErrorCode.NONE)   # an error answer carries no API keys
    if not error:
        assert versions[ApiKey.API_VERSIONS] == (0, 5)


def test_api_versions_error_answers_carry_no_api_keys():
    answer = call(new_broker(), ApiKey.API_VERSIONS, 3, {"client_software_name": "-bad", "client_software_version": "1"})
    assert answer.error_code == ErrorCode.INVALID_REQUEST and answer.api_keys == []


def test_delete_groups_v3_answers_a_null_message_as_kafkas_coordinator():
    answer = call(new_broker(), ApiKey.DELETE_GROUPS, 3, {"groups_names": ["nope"]})
    assert [(r.group_id, r.error_code, r.error_message) for r in answer.results] == [
        ("nope", ErrorCode.GROUP_ID_NOT_FOUND, None)]


def test_txn_offset_commit_v6_names_topics_by_id():
    broker = new_broker(topics={"t": 1})
    topic_id = broker.store.get("t").topic_id
    pid = call(broker, ApiKey.INIT_PRODUCER_ID, 5, {"transactional_id": "tx", "transaction_timeout_ms": 60000,
                                                    "producer_id": -1, "producer_epoch": -1})
    unknown = b"\x01" * 16
    answer = call(broker, ApiKey.TXN_OFFSET_COMMIT, 6, {
        "transactional_id": "tx", "group_id": "g", "producer_id": pid.producer_id, "producer_epoch": pid.producer_epoch,
        "topics": [{"topic_id": t, "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                   "committed_metadata": ""}]} for t in (topic_id, unknown, ZERO_UUID)]})
    assert sorted((bytes(t.topic_id), t.partitions[0].error_code) for t in answer.topics) == sorted([
        (bytes(topic_id), ErrorCode.NONE), (unknown, ErrorCode.UNKNOWN_TOPIC_ID), (ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_ID)])
