"""Every event logged while a request is handled carries the connection, client, api, version,
correlation id and the group/member the request names: the connection binds them to structlog's
context variables around the handler, and ``configure_logging`` merges them into each event."""
import io
import json

import structlog

from kafkaemu.handlers import REGISTRY
from kafkaemu.logging import configure_logging, current_request_context, request_context
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.wire.connection import Connection
from tests.conftest import new_broker

JOIN = {"group_id": "orders", "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "m-1",
        "group_instance_id": "i-1", "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b""}],
        "reason": None}


def test_a_request_is_handled_with_its_context_bound():
    broker = new_broker(group_initial_rebalance_delay_ms=0)
    seen = []
    join_group = broker.coordinator.join_group

    def recording(*args, **kwargs):
        seen.append(current_request_context())
        return join_group(*args, **kwargs)
    broker.coordinator.join_group = recording
    conn = Connection(broker, REGISTRY, 42, "127.0.0.1")
    conn.receive(envelope.encode_request(ApiKey.JOIN_GROUP, 9, JOIN, correlation_id=7, client_id="app-1"), 0)
    assert conn.take_output()
    assert seen == [{"conn": 42, "client_id": "app-1", "api": "JoinGroup", "version": 9, "correlation_id": 7,
                     "group": "orders", "member": "m-1"}]
    assert current_request_context() == {}   # nothing stays bound after the request


def test_configured_logging_merges_the_bound_context_into_each_event():
    stream = io.StringIO()
    previous = structlog.get_config()
    configure_logging("json", "info", stream=stream)
    try:
        with request_context(lambda: {"conn": 3, "group": "orders"}):
            structlog.get_logger("kafkaemu.test").info("something_happened")
    finally:
        structlog.configure(**previous)
    (event,) = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert (event["event"], event["conn"], event["group"]) == ("something_happened", 3, "orders")
