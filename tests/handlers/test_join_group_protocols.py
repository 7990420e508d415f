"""A JoinGroup naming one protocol twice: found by the wire fuzzer, it left the group with no
protocol every member supports and crashed the coordinator when the join phase completed."""
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from tests.conftest import new_broker, wire_call



def test_a_protocol_named_twice_counts_once():
    broker = new_broker(group_initial_rebalance_delay_ms=0)
    answer = wire_call(broker, ApiKey.JOIN_GROUP, 2, {"group_id": "g", "session_timeout_ms": 6000,
                                                      "rebalance_timeout_ms": 0, "member_id": "",
                                                      "protocol_type": "consumer",
                                                      "protocols": [{"name": "range", "metadata": b"first"},
                                                                    {"name": "range", "metadata": b"second"}]})
    assert (answer.error_code, answer.protocol_name) == (ErrorCode.NONE, "range")
    assert [(m.member_id, m.metadata) for m in answer.members] == [(answer.member_id, b"first")]
