"""Differential test: the same raw requests against kafkaemu and against Apache Kafka.

`observe()` sends a fixed script of requests (topic admin, group protocol, offsets, data path)
and records the answers that do not depend on the broker's identity (error codes, generations,
offsets). The kafkaemu run always executes and must match ANSWERS, the answers of a real Kafka
broker; where a Docker engine is reachable, the same script runs against a real Kafka started by
testcontainers and must give ANSWERS too.
"""
import socket
import time
import uuid

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.testing import KafkaEmulator
from kafkaemu.testing.raw_client import request

KAFKA_IMAGE = "confluentinc/cp-kafka:7.6.0"
LOADING = {E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR}

ANSWERS = {
    "create": E.NONE, "create again": E.TOPIC_ALREADY_EXISTS, "create rf 3": E.INVALID_REPLICATION_FACTOR,
    "create 0 partitions": E.INVALID_PARTITIONS, "create bad name": E.INVALID_TOPIC_EXCEPTION,
    "create unknown config": E.INVALID_CONFIG, "shrink partitions": E.INVALID_PARTITIONS,
    "delete unknown topic": E.UNKNOWN_TOPIC_OR_PARTITION, "metadata unknown topic": E.UNKNOWN_TOPIC_OR_PARTITION,
    "join short session": E.INVALID_SESSION_TIMEOUT, "join without id": E.MEMBER_ID_REQUIRED,
    "join": (E.NONE, 1, True), "sync": (E.NONE, b"assignment-bytes"),
    "heartbeat wrong generation": E.ILLEGAL_GENERATION, "heartbeat unknown member": E.UNKNOWN_MEMBER_ID,
    "commit": [E.NONE], "commit stale generation": [E.ILLEGAL_GENERATION],
    "commit unknown topic": [E.UNKNOWN_TOPIC_OR_PARTITION],
    "fetch offsets": [(0, 42, "meta"), (1, -1, "")],
    "delete non-empty group": E.NON_EMPTY_GROUP, "leave": (E.NONE, [E.NONE]),
    "delete empty group": E.NONE, "delete deleted group": E.GROUP_ID_NOT_FOUND,
    "list offsets earliest/latest": [(E.NONE, 0), (E.NONE, 0)], "fetch out of range": E.OFFSET_OUT_OF_RANGE,
}


def observe(bootstrap: str) -> dict:
    host, port = bootstrap.rsplit(":", 1)
    topic, group = f"diff-{uuid.uuid4().hex[:8]}", f"diff-group-{uuid.uuid4().hex[:8]}"
    seen = {}
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        ids = iter(range(1, 1000))

        def call(api, version, body):
            return request(sock, api, version, body, next(ids))

        def create(name, partitions=3, rf=1, configs=()):
            return call(ApiKey.CREATE_TOPICS, 7, {"topics": [{
                "name": name, "num_partitions": partitions, "replication_factor": rf,
                "configs": [{"name": k, "value": v} for k, v in configs]}]}).topics[0].error_code

        seen["create"] = create(topic)
        seen["create again"] = create(topic)
        seen["create rf 3"] = create(topic + "-rf", rf=3)
        seen["create 0 partitions"] = create(topic + "-zero", partitions=0)
        seen["create bad name"] = create("bad/name")
        seen["create unknown config"] = create(topic + "-cfg", configs=[("no.such.config", "1")])
        seen["shrink partitions"] = call(ApiKey.CREATE_PARTITIONS, 3, {
            "topics": [{"name": topic, "count": 2, "assignments": None}], "timeout_ms": 5000}).results[0].error_code
        seen["delete unknown topic"] = call(ApiKey.DELETE_TOPICS, 6, {"topics": [{"name": topic + "-nope"}],
                                                                      "timeout_ms": 5000}).responses[0].error_code
        seen["metadata unknown topic"] = call(ApiKey.METADATA, 12, {
            "topics": [{"name": topic + "-nope"}], "allow_auto_topic_creation": False}).topics[0].error_code

        deadline = time.time() + 60
        find = {"key_type": 0, "coordinator_keys": [group]}
        while call(ApiKey.FIND_COORDINATOR, 4, find).coordinators[0].error_code != E.NONE:
            assert time.time() < deadline, "coordinator never became available"
            time.sleep(0.5)

        join = {"group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
                "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b"sub"}]}

        def join_group(body):
            while True:  # a real coordinator may still be loading its partition
                answer = call(ApiKey.JOIN_GROUP, 9, body)
                if answer.error_code not in LOADING or time.time() > deadline:
                    return answer
                time.sleep(0.5)

        seen["join short session"] = join_group(dict(join, session_timeout_ms=1000)).error_code
        first = join_group(join)
        seen["join without id"] = first.error_code
        member = first.member_id
        joined = join_group(dict(join, member_id=member))
        seen["join"] = (joined.error_code, joined.generation_id, joined.leader == member)
        synced = call(ApiKey.SYNC_GROUP, 5, {"group_id": group, "generation_id": 1, "member_id": member,
                                             "protocol_type": "consumer", "protocol_name": "range",
                                             "assignments": [{"member_id": member, "assignment": b"assignment-bytes"}]})
        seen["sync"] = (synced.error_code, synced.assignment)
        seen["heartbeat wrong generation"] = call(ApiKey.HEARTBEAT, 4, {"group_id": group, "generation_id": 2,
                                                                        "member_id": member}).error_code
        seen["heartbeat unknown member"] = call(ApiKey.HEARTBEAT, 4, {"group_id": group, "generation_id": 1,
                                                                      "member_id": "nobody"}).error_code

        def commit(generation, topic_name):
            answer = call(ApiKey.OFFSET_COMMIT, 8, {
                "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
                "topics": [{"name": topic_name, "partitions": [
                    {"partition_index": 0, "committed_offset": 42, "committed_metadata": "meta"}]}]})
            return [p.error_code for t in answer.topics for p in t.partitions]

        seen["commit"] = commit(1, topic)
        seen["commit stale generation"] = commit(7, topic)
        seen["commit unknown topic"] = commit(1, topic + "-nope")
        fetched = call(ApiKey.OFFSET_FETCH, 8, {
            "groups": [{"group_id": group, "topics": [{"name": topic, "partition_indexes": [0, 1]}]}]})
        seen["fetch offsets"] = [(p.partition_index, p.committed_offset, p.metadata or "")
                                 for t in fetched.groups[0].topics for p in t.partitions]
        seen["delete non-empty group"] = call(ApiKey.DELETE_GROUPS, 2, {"groups_names": [group]}).results[0].error_code
        left = call(ApiKey.LEAVE_GROUP, 5,
                    {"group_id": group, "members": [{"member_id": member, "group_instance_id": None}]})
        seen["leave"] = (left.error_code, [m.error_code for m in left.members])
        seen["delete empty group"] = call(ApiKey.DELETE_GROUPS, 2, {"groups_names": [group]}).results[0].error_code
        seen["delete deleted group"] = call(ApiKey.DELETE_GROUPS, 2, {"groups_names": [group]}).results[0].error_code

        listed = call(ApiKey.LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -2},
                                           {"partition_index": 1, "timestamp": -1}]}]})
        seen["list offsets earliest/latest"] = [(p.error_code, p.offset) for p in listed.topics[0].partitions]
        fetch = call(ApiKey.FETCH, 11, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
                                        "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
                                 {"partition": 0, "fetch_offset": 100, "partition_max_bytes": 1 << 20}]}]})
        seen["fetch out of range"] = fetch.responses[0].partitions[0].error_code
    return seen


def test_kafkaemu_gives_apache_kafkas_answers():
    with KafkaEmulator() as emulator:
        assert observe(emulator.bootstrap_server) == ANSWERS


@pytest.fixture(scope="module")
def real_kafka():
    docker = pytest.importorskip("docker", reason="the docker package (testcontainers) is not installed")
    try:
        docker.from_env().ping()
    except Exception as exc:  # no engine here: the differential half cannot run
        pytest.skip(f"Docker engine not reachable ({type(exc).__name__}); testcontainers needs it for a real Kafka")
    from testcontainers.kafka import KafkaContainer
    with KafkaContainer(KAFKA_IMAGE).with_kraft() as kafka:
        yield kafka.get_bootstrap_server()


def test_real_kafka_gives_the_same_answers(real_kafka):
    assert observe(real_kafka) == ANSWERS
