"""The differential suite: the same requests to Apache Kafka 4.4.0 (kafka_reference/) and to
kafkaemu, their answers compared field by field (docs/fidelity.md)."""
