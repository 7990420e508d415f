"""Child process for the group tests: one consumer that prints its assignment (a JSON line per
change) until it is killed. Usage: group_member_proc.py CLIENT BOOTSTRAP TOPIC GROUP CLIENT_ID [INSTANCE_ID]"""
import asyncio
import json
import os
import sys

SESSION_MS = 6000
KAFKA_PYTHON_POLL_MS = 100   # as users write it (see docs/groups.md: the initial rebalance delay)
# "sticky" (kafka-python, aiokafka) or "cooperative-sticky" (confluent-kafka); default: the client's
ASSIGNOR = os.environ.get("KAFKAEMU_TEST_ASSIGNOR")


def emit(assigned):
    print(json.dumps({"assigned": sorted(assigned)}), flush=True)


def run_kafka_python(bootstrap, topic, group, client_id, instance):
    from kafka import KafkaConsumer
    extra = {"group_instance_id": instance} if instance else {}
    if ASSIGNOR == "sticky":
        from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
        extra["partition_assignment_strategy"] = (StickyPartitionAssignor,)
    c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
                      session_timeout_ms=SESSION_MS, heartbeat_interval_ms=500, **extra)
    last = None
    while True:
        c.poll(timeout_ms=KAFKA_PYTHON_POLL_MS)
        now = sorted((tp.topic, tp.partition) for tp in c.assignment())
        if now != last:
            emit(now)
            last = now


def run_confluent(bootstrap, topic, group, client_id, instance):
    from confluent_kafka import Consumer
    conf = {"bootstrap.servers": bootstrap, "group.id": group, "client.id": client_id,
            "session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": 500}
    if instance:
        conf["group.instance.id"] = instance
    if ASSIGNOR:
        conf["partition.assignment.strategy"] = ASSIGNOR
    c = Consumer(conf)
    c.subscribe([topic])
    last = None
    while True:
        c.poll(0.1)
        now = sorted((tp.topic, tp.partition) for tp in c.assignment())
        if now != last:
            emit(now)
            last = now


async def run_aiokafka(bootstrap, topic, group, client_id, instance):
    from aiokafka import AIOKafkaConsumer
    extra = {"group_instance_id": instance} if instance else {}
    if ASSIGNOR == "sticky":
        from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
        extra["partition_assignment_strategy"] = (StickyPartitionAssignor,)
    c = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, client_id=client_id,
                         session_timeout_ms=SESSION_MS, heartbeat_interval_ms=500, **extra)
    await c.start()
    last = None
    while True:
        await c.getmany(timeout_ms=100)
        now = sorted((tp.topic, tp.partition) for tp in c.assignment())
        if now != last:
            emit(now)
            last = now


if __name__ == "__main__":
    client, bootstrap, topic, group, client_id = sys.argv[1:6]
    instance = sys.argv[6] if len(sys.argv) > 6 and sys.argv[6] else None
    if client == "kafka-python":
        run_kafka_python(bootstrap, topic, group, client_id, instance)
    elif client == "confluent-kafka":
        run_confluent(bootstrap, topic, group, client_id, instance)
    else:
        asyncio.run(run_aiokafka(bootstrap, topic, group, client_id, instance))
