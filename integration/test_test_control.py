"""Test control: fault injection, the manual clock and the group transition record, driven
through real clients."""
import struct

import pytest

from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.testing import KafkaEmulator

from .raw_kafka import api_versions_frame, connect, is_closed, read_reply


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
