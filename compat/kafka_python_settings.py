"""The broker settings kafka-python's integration suite runs its brokers with, as kafkaemu settings.

kafka-python's KafkaFixture renders ``servers/resources/default/kafka.properties`` of its repository
(the same from release 3.0.11 to its main branch; the sdist does not ship ``servers/``) for a Kafka
>= 4.0 broker over PLAINTEXT with ``partitions=4``, ``replicas=1``, ``broker_id=0`` and its ACL
block. Each property is either given to kafkaemu by its Kafka name (the ``--override`` names of
kafkaemu/config.py) or says why it does not apply to kafkaemu. Check this table again when the pin
of kafka-python moves: ``suite_properties_differ`` compares it with the file when an sdist ships it.
"""
from __future__ import annotations

import re

from kafkaemu.config import BrokerConfig

_ONE_NODE = "kafkaemu is one combined node: no controller quorum or controller listener to configure"
_ONE_REPLICA = "kafkaemu keeps one replica of every partition: there are no followers or ISR to tune"
_ONE_LISTENER = "kafkaemu has one PLAINTEXT listener per node"

# (name, value as the suite's fixture renders it, what kafkaemu does with it: {Kafka name: value}
# given to kafkaemu, or why it does not apply)
SUITE_PROPERTIES: list[tuple[str, str, dict[str, str] | str]] = [
    ("process.roles", "broker,controller", _ONE_NODE),
    ("node.id", "0", {"node.id": "0"}),
    ("controller.quorum.bootstrap.servers", "{host}:{controller_port}", _ONE_NODE),
    ("listeners", "PLAINTEXT://{host}:{port},CONTROLLER://{host}:{controller_port}",
     "kafkaemu listens on 127.0.0.1 on a free port; KAFKA_URI gives it to the suite"),
    ("inter.broker.listener.name", "PLAINTEXT", _ONE_LISTENER),
    ("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
     {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer"}),
    ("allow.everyone.if.no.acl.found", "true", {"allow.everyone.if.no.acl.found": "true"}),
    ("advertised.listeners", "PLAINTEXT://{host}:{port},CONTROLLER://{host}:{controller_port}",
     "kafkaemu advertises the host and port it listens on"),
    ("controller.listener.names", "CONTROLLER", _ONE_NODE),
    ("listener.security.protocol.map",
     "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", _ONE_LISTENER),
    ("num.network.threads", "3", "kafkaemu serves every connection on one event loop"),
    ("num.io.threads", "8", "kafkaemu serves every connection on one event loop"),
    ("socket.send.buffer.bytes", "102400", "kafkaemu leaves its sockets' buffers at the OS's sizes"),
    ("socket.receive.buffer.bytes", "102400", "kafkaemu leaves its sockets' buffers at the OS's sizes"),
    ("socket.request.max.bytes", "104857600", {"socket.request.max.bytes": "104857600"}),
    ("log.dirs", "{tmp_dir}/kraft-combined-logs",
     "kafkaemu keeps the logs in memory, thrown away at the end as the suite's temporary directory is"),
    ("num.partitions", "4", {"num.partitions": "4"}),
    ("default.replication.factor", "1", {"default.replication.factor": "1"}),
    ("replica.lag.time.max.ms", "1000", _ONE_REPLICA),
    ("replica.socket.timeout.ms", "1000", _ONE_REPLICA),
    ("num.recovery.threads.per.data.dir", "1", "kafkaemu's logs are in memory: nothing to recover at start"),
    ("offsets.topic.replication.factor", "1", _ONE_REPLICA),
    ("share.coordinator.state.topic.replication.factor", "1", _ONE_REPLICA),
    ("share.coordinator.state.topic.min.isr", "1", _ONE_REPLICA),
    ("transaction.state.log.replication.factor", "1", _ONE_REPLICA),
    ("transaction.state.log.min.isr", "1", _ONE_REPLICA),
    ("log.retention.hours", "168", {"log.retention.ms": str(168 * 3600 * 1000)}),
    ("log.segment.bytes", "1073741824", {"log.segment.bytes": "1073741824"}),
    ("log.retention.check.interval.ms", "300000", {"log.retention.check.interval.ms": "300000"}),
    ("log.cleaner.enable", "false",
     "kafkaemu's cleaner compacts only topics with cleanup.policy=compact, and the suite creates none"),
    ("offsets.commit.timeout.ms", "500",
     "kafkaemu writes a commit to __consumer_offsets at once, with no replicas to wait for"),
    ("offsets.topic.num.partitions", "2", {"offsets.topic.num.partitions": "2"}),
    ("group.min.session.timeout.ms", "1000", {"group.min.session.timeout.ms": "1000"}),
    ("group.initial.rebalance.delay.ms", "0", {"group.initial.rebalance.delay.ms": "0"}),
]


def kafkaemu_overrides() -> dict[str, str]:
    """The suite's settings kafkaemu takes, by their Kafka names."""
    out: dict[str, str] = {}
    for _name, _value, applied in SUITE_PROPERTIES:
        if isinstance(applied, dict):
            out.update(applied)
    return out


def broker_config() -> BrokerConfig:
    """kafkaemu's configuration for the suite: one node on a free loopback port."""
    return BrokerConfig(host="127.0.0.1", port=0, extra=kafkaemu_overrides()).validate()


def suite_properties_differ(properties_text: str) -> list[str]:
    """What a kafka.properties template names that SUITE_PROPERTIES does not, and the reverse: its
    non-comment ``name=value`` lines (the ``{sasl_config}``-style blocks are empty over PLAINTEXT;
    the ACL block is SUITE_PROPERTIES' authorizer lines)."""
    named = {line.split("=", 1)[0].strip() for line in properties_text.splitlines()
             if re.match(r"\s*[a-z][a-z0-9.]*\s*=", line)}
    named |= {"authorizer.class.name", "allow.everyone.if.no.acl.found"}
    known = {name for name, _value, _applied in SUITE_PROPERTIES}
    return ([f"{name}: in the suite's kafka.properties, not in compat/kafka_python_settings.py"
             for name in sorted(named - known)]
            + [f"{name}: in compat/kafka_python_settings.py, no longer in the suite's kafka.properties"
               for name in sorted(known - named)])
