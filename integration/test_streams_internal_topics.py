"""Streams internal topics within Kafka's limits, with raw StreamsGroupHeartbeat frames against a
``kafkaemu serve`` process while another connection keeps asking ApiVersions: a topology asking for
a repartition topic of 2,000,000,000 partitions is answered with the MISSING_INTERNAL_TOPICS status
saying why the topics were not created (CreateTopics' limit of 10,000 partitions per request), one
asking for -5 partitions is UNKNOWN_SERVER_ERROR (Kafka's ConfiguredInternalTopic refuses it), a
bad replication factor or config is the status's creation failure; the connection stays open and
the broker never allocates the partitions."""
from __future__ import annotations

import threading

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.testing import KafkaEmulator, raw_client

pytestmark = pytest.mark.timeout(120)
MISSING_INTERNAL_TOPICS = 3


def topology(app, repartition_partitions=0, replication_factor=0, configs=()):
    """Subtopology 0 reads ``in`` and writes ``{app}-rep-repartition``; subtopology 1 reads it and
    keeps a store (its changelog has as many partitions as the repartition topic)."""
    return {"epoch": 1, "subtopologies": [
        {"subtopology_id": "0", "source_topics": ["in"], "source_topic_regex": [], "state_changelog_topics": [],
         "repartition_sink_topics": [f"{app}-rep-repartition"], "repartition_source_topics": [],
         "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [], "repartition_sink_topics": [],
         "repartition_source_topics": [{"name": f"{app}-rep-repartition", "partitions": repartition_partitions,
                                        "replication_factor": replication_factor, "topic_configs": []}],
         "state_changelog_topics": [{"name": f"{app}-store-changelog", "partitions": 0, "replication_factor": 0,
                                     "topic_configs": [{"key": k, "value": v} for k, v in configs]}],
         "copartition_groups": []}]}


def join(sock, group, topo, correlation_id):
    return raw_client.request(sock, ApiKey.STREAMS_GROUP_HEARTBEAT, 0, {
        "group_id": group, "member_id": "m1", "member_epoch": 0, "endpoint_information_epoch": 0,
        "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000, "topology": topo,
        "active_tasks": None, "standby_tasks": None, "warmup_tasks": None, "process_id": "p1",
        "user_endpoint": None, "client_tags": None, "task_offsets": None, "task_end_offsets": None,
        "shutdown_application": False}, correlation_id)


def topic_names(sock, correlation_id) -> set[str]:
    reply = raw_client.request(sock, ApiKey.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                                           "include_topic_authorized_operations": False},
                               correlation_id)
    return {t.name for t in reply.topics}


class Watcher(threading.Thread):
    """Another client asking ApiVersions on its own connection until stopped; every one answered."""

    def __init__(self, emulator) -> None:
        super().__init__(daemon=True)
        self.sock = raw_client.connect(emulator, timeout=30)
        self.stopping = threading.Event()
        self.answered = 0
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                self.answered += 1
                reply = raw_client.request(self.sock, ApiKey.API_VERSIONS, 3, {"client_software_name": "w",
                                                                                "client_software_version": "1"},
                                           self.answered)
                assert reply.error_code == 0
        except BaseException as exc:   # reported by the test
            self.failure = exc

    def stop(self) -> None:
        self.stopping.set()
        self.join(60)
        self.sock.close()
        assert not self.is_alive() and self.failure is None, self.failure


@pytest.fixture(scope="module")
def served():
    emulator = KafkaEmulator(subprocess_mode=True).start()
    with raw_client.connect(emulator, timeout=30) as sock:
        created = raw_client.request(sock, ApiKey.CREATE_TOPICS, 7, {"topics": [
            {"name": "in", "num_partitions": 2, "replication_factor": -1, "assignments": [], "configs": []}],
            "timeout_ms": 5000, "validate_only": False})
        assert created.topics[0].error_code == 0
    try:
        yield emulator
    finally:
        emulator.stop()


def status(reply) -> list[tuple[int, str]]:
    return [(s.status_code, s.status_detail) for s in reply.status or []]


def test_two_billion_partitions_are_refused_as_create_topics_refuses_them(served):
    watcher = Watcher(served)
    watcher.start()
    try:
        with raw_client.connect(served, timeout=30) as sock:
            reply = join(sock, "huge", topology("huge", repartition_partitions=2_000_000_000), 1)
            assert reply.error_code == ErrorCode.NONE and reply.member_epoch == 2
            limit = "Excessively large number of partitions per request."
            assert status(reply) == [(MISSING_INTERNAL_TOPICS,
                                      f"Internal topics are missing: huge-rep-repartition, huge-store-changelog; "
                                      f"Creation failed: huge-rep-repartition ({limit}), "
                                      f"huge-store-changelog ({limit}).")]
            assert not {"huge-rep-repartition", "huge-store-changelog"} & topic_names(sock, 2)
    finally:
        watcher.stop()
    assert watcher.answered > 0


def test_negative_partitions_are_an_error_answer_not_a_dropped_connection(served):
    watcher = Watcher(served)
    watcher.start()
    try:
        with raw_client.connect(served, timeout=30) as sock:
            reply = join(sock, "negative", topology("negative", repartition_partitions=-5), 1)
            assert (reply.error_code, reply.error_message, reply.member_epoch) == \
                (ErrorCode.UNKNOWN_SERVER_ERROR, None, 0)
            described = raw_client.request(sock, ApiKey.STREAMS_GROUP_DESCRIBE, 0, {
                "group_ids": ["negative"], "include_authorized_operations": False}, 2)
            assert described.groups[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND   # nothing was kept
            assert not {"negative-rep-repartition", "negative-store-changelog"} & topic_names(sock, 3)
    finally:
        watcher.stop()


@pytest.mark.parametrize("app,replication_factor,reason", [
    ("rfneg", -5, "Replication factor must be larger than 0, or -1 to use the default value."),
    ("rf3", 3, "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached "
               "because only 1 broker(s) are registered."),
])
def test_a_bad_replication_factor_is_the_status_creation_failure(served, app, replication_factor, reason):
    with raw_client.connect(served, timeout=30) as sock:
        reply = join(sock, app, topology(app, replication_factor=replication_factor), 1)
        assert reply.error_code == ErrorCode.NONE
        assert status(reply) == [(MISSING_INTERNAL_TOPICS,
                                  f"Internal topics are missing: {app}-rep-repartition, {app}-store-changelog; "
                                  f"Creation failed: {app}-rep-repartition ({reason}).")]
        assert f"{app}-rep-repartition" not in topic_names(sock, 2)


def test_a_bad_config_is_the_status_creation_failure(served):
    with raw_client.connect(served, timeout=30) as sock:
        reply = join(sock, "cfg", topology("cfg", repartition_partitions=2, configs=[("retention.ms", "soon")]), 1)
        ((code, detail),) = status(reply)
        assert code == MISSING_INTERNAL_TOPICS
        assert detail.startswith("Internal topics are missing: cfg-rep-repartition, cfg-store-changelog; "
                                 "Creation failed: cfg-store-changelog (")
        names = topic_names(sock, 2)
        assert "cfg-store-changelog" not in names and "cfg-rep-repartition" in names   # each topic on its own
