"""A streams group survives a restart with a data dir: its StreamsGroup* records in
__consumer_offsets bring back its epochs, topology, members and their tasks before any member
heartbeats again, and a member goes on at its epoch (a real server on loopback, the requests sent as
bytes by kafkaemu's raw client)."""
from __future__ import annotations

import socket

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.testing import KafkaEmulator, raw_client

pytestmark = pytest.mark.timeout(120)
TOPOLOGY = {"epoch": 1, "subtopologies": [{"subtopology_id": "0", "source_topics": ["in"],
                                           "state_changelog_topics": [{"name": "app-log", "partitions": 0,
                                                                       "replication_factor": 0, "topic_configs": []}]}]}


def call(bootstrap: str, api_key, body: dict):
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        return raw_client.request(sock, api_key, 0, body)


def heartbeat(bootstrap: str, member: str, epoch: int, owned=None):
    body = {"group_id": "app", "member_id": member, "member_epoch": epoch, "endpoint_information_epoch": 0,
            "rebalance_timeout_ms": 30000 if epoch == 0 else -1, "topology": TOPOLOGY if epoch == 0 else None,
            "process_id": "p-" + member}
    if owned is not None:
        body.update(active_tasks=[{"subtopology_id": "0", "partitions": owned}] if owned else [],
                    standby_tasks=[], warmup_tasks=[])
    reply = call(bootstrap, ApiKey.STREAMS_GROUP_HEARTBEAT, body)
    assert reply["error_code"] == 0, reply
    return reply


def describe(bootstrap: str) -> dict:
    return call(bootstrap, ApiKey.STREAMS_GROUP_DESCRIBE,
                {"group_ids": ["app"], "include_authorized_operations": False})["groups"][0]


def active(reply) -> list[int]:
    return sorted(p for t in reply["active_tasks"] or [] for p in t["partitions"])


def test_a_streams_group_is_back_after_a_restart(tmp_path):
    with KafkaEmulator(data_dir=str(tmp_path)) as first:
        first.create_topic("in", 2)
        b = first.bootstrap_server
        r = heartbeat(b, "m1", 0)                            # the changelog topic is created
        r = heartbeat(b, "m1", r["member_epoch"], owned=[])
        assert active(r) == [0, 1]
        m2 = heartbeat(b, "m2", 0)
        r = heartbeat(b, "m1", r["member_epoch"], owned=[0, 1])   # asked to give one task up
        before = describe(b)
        assert before["group_state"] == "Reconciling" and len(before["members"]) == 2
    with KafkaEmulator(data_dir=str(tmp_path)) as second:
        b = second.bootstrap_server
        after = describe(b)
        for field in ("group_state", "group_epoch", "assignment_epoch", "topology"):
            assert after[field] == before[field], field
        assert sorted(after["members"], key=lambda m: m["member_id"]) == \
            sorted(before["members"], key=lambda m: m["member_id"])
        r = heartbeat(b, "m1", r["member_epoch"], owned=active(r))
        m2 = heartbeat(b, "m2", m2["member_epoch"], owned=[])
        assert len(active(m2)) == 1 and describe(b)["group_state"] == "Stable"
