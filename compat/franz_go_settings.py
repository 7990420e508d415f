"""The broker settings franz-go's kgo integration tests run their Kafka with, as kafkaemu settings.

franz-go's CI (``.github/workflows/lint-and-test.yml`` of the module, job ``integration-test-kafka``)
starts Apache Kafka's container image from a docker-compose file whose ``environment`` sets the
broker by ``KAFKA_*`` variables, and runs ``go test`` with ``KGO_*`` variables that point the tests
at it. Each variable is either given to kafkaemu (a broker setting by the Kafka name the image maps
it to, as ``kafkaemu serve`` maps ``KAFKA_*`` variables) or says why it does not apply.
``suite_settings_differ`` compares these tables with the workflow the downloaded module ships.
"""
from __future__ import annotations

import re

from kafkaemu.broker_properties import from_environment
from kafkaemu.config import BrokerConfig

_ONE_NODE = "kafkaemu is one combined node: no controller quorum or controller listener to configure"
_LISTENER = ("kafkaemu listens on one PLAINTEXT listener, 127.0.0.1 and a free port; KGO_SEEDS gives it to "
             "the tests")
_SASL = ("the SASL_PLAINTEXT listener on 9094 serves only the SCRAM and OAUTHBEARER tests, which the run "
         "leaves out (KGO_TEST_SCRAM_SEEDS and KGO_TEST_OAUTH_SEEDS unset: they skip themselves)")
GIVEN = "given"

# (variable of the compose file's environment, its value there, GIVEN or why it does not apply)
SUITE_ENVIRONMENT: list[tuple[str, str, str]] = [
    ("KAFKA_NODE_ID", "1", GIVEN),
    ("CLUSTER_ID", "MkU3OEVBNTcwNTJENDM1Tk", "kafkaemu makes its own cluster id; the tests do not read it"),
    ("KAFKA_PROCESS_ROLES", "controller,broker", _ONE_NODE),
    ("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER", _ONE_NODE),
    ("KAFKA_LISTENERS", "PLAINTEXT://:9092,CONTROLLER://:9093,SASL_PLAINTEXT://:9094", _LISTENER),
    ("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP",
     "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT", _LISTENER),
    ("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@localhost:9093", _ONE_NODE),
    ("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9094", _LISTENER),
    ("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1", GIVEN),
    ("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "1", GIVEN),
    ("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1", GIVEN),
    ("KAFKA_GROUP_COORDINATOR_REBALANCE_PROTOCOLS", "classic,consumer,share", GIVEN),
    ("KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR", "1", GIVEN),
    ("KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR", "1", GIVEN),
    ("KAFKA_SHARE_COORDINATOR_STATE_TOPIC_NUM_PARTITIONS", "5", GIVEN),
    ("KAFKA_GROUP_SHARE_DELIVERY_COUNT_LIMIT", "10", GIVEN),
    ("KAFKA_SASL_ENABLED_MECHANISMS", "SCRAM-SHA-256,OAUTHBEARER", _SASL),
    ("KAFKA_LISTENER_NAME_SASL__PLAINTEXT_OAUTHBEARER_SASL_JAAS_CONFIG",
     "'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
     "unsecuredLoginStringClaim_sub=\"admin\";'", _SASL),
    ("KAFKA_OPTS", "\"-Djava.security.auth.login.config=/etc/kafka/jaas.conf\"",
     "the JVM's options (the JAAS file of the SASL listener); kafkaemu is no JVM"),
]

# (variable of the ``go test`` step, its value there, GIVEN or why the run does not set it)
TEST_ENVIRONMENT: list[tuple[str, str, str]] = [
    ("KGO_TEST_RF", "1", GIVEN),
    ("KGO_SEEDS", "127.0.0.1:9092", "kafkaemu's address: 127.0.0.1 and the free port it listens on"),
    ("KGO_TEST_STABLE_FETCH", "true", GIVEN),
    ("KGO_TEST_SCRAM_SEEDS", "127.0.0.1:9094", _SASL),
    ("KGO_TEST_SCRAM", "testuser:testpass", _SASL),
    ("KGO_TEST_OAUTH_SEEDS", "127.0.0.1:9094", _SASL),
]

WORKFLOW = ".github/workflows/lint-and-test.yml"
JOB = "integration-test-kafka"


def kafkaemu_overrides() -> dict[str, str]:
    """The suite's broker settings kafkaemu takes, by the Kafka names the container image maps
    their variables to."""
    return from_environment({var: value for var, value, use in SUITE_ENVIRONMENT if use == GIVEN})


def broker_config() -> BrokerConfig:
    """kafkaemu's configuration for the suite: one node on a free loopback port."""
    return BrokerConfig(host="127.0.0.1", port=0, extra=kafkaemu_overrides()).validate()


def test_environment(seeds: str) -> dict[str, str]:
    """The ``go test`` step's variables the run sets, KGO_SEEDS pointing at kafkaemu."""
    given = {var: value for var, value, use in TEST_ENVIRONMENT if use == GIVEN}
    return {**given, "KGO_SEEDS": seeds}


def _job_text(workflow_text: str) -> str:
    """The lines of the workflow's integration-test-kafka job."""
    match = re.search(rf"^  {re.escape(JOB)}:\n(.*?)(?=^  [A-Za-z0-9_-]+:\n|\Z)", workflow_text, re.M | re.S)
    if match is None:
        raise ValueError(f"{WORKFLOW} has no job {JOB}")
    return match.group(1)


def suite_settings_differ(workflow_text: str) -> list[str]:
    """Where the workflow's integration-test-kafka job differs from SUITE_ENVIRONMENT and
    TEST_ENVIRONMENT: a variable added, removed or given another value."""
    job = _job_text(workflow_text)
    found = dict(re.findall(r"^\s+((?:KAFKA|KGO)_[A-Z0-9_]+|CLUSTER_ID): (.*?)\s*$", job, re.M))
    known = {var: value for var, value, _use in SUITE_ENVIRONMENT + TEST_ENVIRONMENT}
    return ([f"{var}: in franz-go's {WORKFLOW}, not in compat/franz_go_settings.py" for var in sorted(set(found) - set(known))]
            + [f"{var}: in compat/franz_go_settings.py, no longer in franz-go's {WORKFLOW}" for var in sorted(set(known) - set(found))]
            + [f"{var}: {found[var]} in franz-go's {WORKFLOW}, {known[var]} in compat/franz_go_settings.py"
               for var in sorted(set(found) & set(known)) if found[var] != known[var]])
