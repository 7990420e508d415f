"""Streams groups (KIP-1071): Kafka Streams applications' groups, whose members get tasks."""
