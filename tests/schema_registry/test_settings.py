"""The registry's settings: off by default, its own port, refused before start-up when wrong."""
from __future__ import annotations

from kafkaemu.config import BrokerConfig


def test_off_by_default():
    assert BrokerConfig().schema_registry_port == -1
    assert "--schema-registry-port" not in " ".join(BrokerConfig().to_argv())


def test_a_port_of_a_listener_or_the_control_api_is_refused():
    for config in (BrokerConfig(port=9092, nodes=3, schema_registry_port=9094),
                   BrokerConfig(port=9092, control_port=8080, schema_registry_port=8080)):
        problems = config.errors()
        assert any("schema_registry_port" in p and "its own" in p for p in problems), problems
    assert BrokerConfig(port=9092, schema_registry_port=8081).errors() == []
    assert any("schema_registry_port" in p for p in BrokerConfig(schema_registry_port=70000).errors())


def test_subprocess_arguments():
    argv = BrokerConfig(schema_registry_port=0, schema_registry_host="0.0.0.0").to_argv()
    assert "--schema-registry-port=0" in argv and "--schema-registry-host=0.0.0.0" in argv
