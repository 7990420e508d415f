"""inject_fault by API and error name, through a real client."""
import pytest


def test_a_fault_given_by_names_reaches_the_client(kafka_emulator):
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import PolicyViolationError
    admin = KafkaAdminClient(bootstrap_servers=kafka_emulator.bootstrap_server)
    try:
        kafka_emulator.inject_fault("CreateTopics", error="POLICY_VIOLATION")
        with pytest.raises(PolicyViolationError):
            admin.create_topics([NewTopic("named-fault-topic", 1, 1)])
    finally:
        admin.close()


def test_unknown_names_are_refused_before_any_rule_is_added(kafka_emulator):
    with pytest.raises(ValueError, match="unknown API 'CreateTopic'"):
        kafka_emulator.inject_fault("CreateTopic", error="POLICY_VIOLATION")
    with pytest.raises(ValueError, match="unknown error 'POLICY'"):
        kafka_emulator.inject_fault("CreateTopics", error="POLICY")
    with pytest.raises(TypeError, match="error or error_code"):
        kafka_emulator.inject_fault(19, error=44, error_code=44)
    assert kafka_emulator.call(lambda broker: list(broker.faults.rules)) == []
