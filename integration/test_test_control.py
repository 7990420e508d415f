"""Test control: fault injection, the manual clock and the group transition record, driven
through real clients."""
import struct

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.testing import KafkaEmulator

from kafkaemu.testing.raw_client import api_versions_frame, connect, is_closed, read_reply, request


def test_injected_error_code_reaches_the_client_once(kafka_emulator):
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import PolicyViolationError
    admin = KafkaAdminClient(bootstrap_servers=kafka_emulator.bootstrap_server)
    try:
        kafka_emulator.inject_fault(19, error_code=ErrorCode.POLICY_VIOLATION)
        with pytest.raises(PolicyViolationError):
            admin.create_topics([NewTopic("faulted-topic", 1, 1)])
        second = admin.create_topics([NewTopic("faulted-topic-2", 1, 1)])
        assert second["topics"][0]["error_code"] == 0  # the rule fired once
    finally:
        admin.close()


def test_dropped_connection_fault_closes_the_socket_without_a_reply(kafka_emulator):
    kafka_emulator.inject_fault(18, drop_connection=True, client_id="test")
    sock = connect(kafka_emulator)
    try:
        sock.sendall(api_versions_frame(correlation_id=5))
        assert is_closed(sock)
    finally:
        sock.close()
    sock = connect(kafka_emulator)  # the next connection is served normally
    try:
        sock.sendall(api_versions_frame(correlation_id=6))
        assert struct.unpack(">i", read_reply(sock)[:4])[0] == 6
    finally:
        sock.close()


def test_delayed_reply_waits_for_the_manual_clock():
    with KafkaEmulator(manual_clock=True) as emulator:
        emulator.inject_fault(18, delay_ms=60_000)
        sock = connect(emulator)
        try:
            sock.sendall(api_versions_frame(correlation_id=3))
            sock.settimeout(0.3)
            with pytest.raises(TimeoutError):
                sock.recv(1)
            emulator.advance_clock(60_000)
            sock.settimeout(5)
            assert struct.unpack(">i", read_reply(sock)[:4])[0] == 3
        finally:
            sock.close()


def test_advancing_the_manual_clock_expires_a_silent_member_at_once():
    """A virtual-time jump past session.timeout.ms removes the member without real waiting;
    the record of transitions shows the rebalance it caused."""
    from kafka.admin import KafkaAdminClient

    # no initial rebalance delay: the clock stands still, so the first join must complete at once
    with KafkaEmulator(manual_clock=True, group_initial_rebalance_delay_ms=0) as emulator, connect(emulator) as sock:
        join = {"group_id": "clocked", "session_timeout_ms": 10_000, "rebalance_timeout_ms": 10_000,
                "member_id": "", "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": b""}]}
        first = request(sock, ApiKey.JOIN_GROUP, 9, join, 1)
        assert first.error_code == ErrorCode.MEMBER_ID_REQUIRED
        joined = request(sock, ApiKey.JOIN_GROUP, 9, dict(join, member_id=first.member_id), 2)
        assert joined.error_code == 0 and joined.generation_id == 1
        synced = request(sock, ApiKey.SYNC_GROUP, 5, {
            "group_id": "clocked", "generation_id": 1, "member_id": joined.member_id, "protocol_type": "consumer",
            "protocol_name": "range", "assignments": [{"member_id": joined.member_id, "assignment": b"x"}]}, 3)
        assert synced.error_code == 0 and synced.assignment == b"x"

        emulator.advance_clock(9_999)
        states = [t.to_state.value for t in emulator.group_transitions("clocked")]
        assert states[-1] == "Stable"
        emulator.advance_clock(1)  # session.timeout.ms has passed without a heartbeat
        hb = request(sock, ApiKey.HEARTBEAT, 4,
                     {"group_id": "clocked", "generation_id": 1, "member_id": joined.member_id}, 4)
        assert hb.error_code == ErrorCode.UNKNOWN_MEMBER_ID
        states = [t.to_state.value for t in emulator.group_transitions("clocked")]
        assert states[-2:] == ["PreparingRebalance", "Empty"]
        admin = KafkaAdminClient(bootstrap_servers=emulator.bootstrap_server)
        try:
            described = admin.describe_groups(["clocked"])["clocked"]
            assert (described["group_state"], described["members"]) == ("Empty", [])
        finally:
            admin.close()


def test_fetch_long_poll_ends_in_real_time_under_a_manual_clock():
    """Without this, an empty long poll would wait for the test to advance the clock and hold
    back every later reply on its connection."""
    with KafkaEmulator(manual_clock=True) as emulator, connect(emulator) as sock:
        created = request(sock, ApiKey.CREATE_TOPICS, 7,
                          {"topics": [{"name": "quiet", "num_partitions": 1, "replication_factor": 1}]})
        fetch = {"replica_id": -1, "max_wait_ms": 200, "min_bytes": 1, "max_bytes": 1 << 20, "session_epoch": -1,
                 "topics": [{"topic_id": created.topics[0].topic_id,
                             "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]}
        sock.settimeout(3)
        answer = request(sock, ApiKey.FETCH, 13, fetch, 2)  # answered after ~200 ms of real time, clock untouched
        assert answer.responses[0].partitions[0].error_code == 0
        assert not answer.responses[0].partitions[0].records
