"""Apache Kafka 4.4.0 itself, as the reference kafkaemu is measured against (docs/fidelity.md)."""
from .broker import KAFKA_VERSION, SASL_USERS, KafkaCluster, KafkaUnavailable, fetch_jars, missing

__all__ = ["KAFKA_VERSION", "SASL_USERS", "KafkaCluster", "KafkaUnavailable", "fetch_jars", "missing"]
