"""Producers of each Python client library behind one small interface, and the settings that
choose a sticky assignor or auto-commit, for the control API scenarios (test_control_clients.py)."""
from __future__ import annotations

import asyncio

STICKY = {"kafka-python": "sticky", "aiokafka": "sticky", "confluent-kafka": "cooperative-sticky"}


def committing_consumer(client: str, bootstrap: str, topic: str, group: str, client_id: str):
    """A consumer (group_clients.ConsumerThread) that commits what it consumed every 100 ms."""
    from .group_clients import ConsumerThread, LoopConsumer, _assigned, _records, confluent_consumer
    if client == "confluent-kafka":
        return confluent_consumer(bootstrap, [topic], group, client_id,
                                  **{"enable.auto.commit": True, "auto.commit.interval.ms": 100})
    settings = dict(bootstrap_servers=bootstrap, group_id=group, client_id=client_id, session_timeout_ms=6000,
                    heartbeat_interval_ms=500, auto_offset_reset="earliest", enable_auto_commit=True,
                    auto_commit_interval_ms=100)
    if client == "kafka-python":
        from kafka import KafkaConsumer
        return ConsumerThread(lambda: KafkaConsumer(topic, **settings), lambda c: _records(c.poll(timeout_ms=200)),
                              _assigned, lambda c: c.close(), client_id)
    from aiokafka import AIOKafkaConsumer
    return ConsumerThread(lambda: LoopConsumer(lambda: AIOKafkaConsumer(topic, **settings)),
                          lambda lc: _records(lc.run(lc.consumer.getmany(timeout_ms=100))),
                          lambda lc: _assigned(lc.consumer), lambda lc: lc.stop(), client_id)


class Producer:
    """send(topic, value, partition) then flush(): every record acknowledged, or an error raised."""

    def __init__(self, client: str, bootstrap: str, client_id: str, linger_ms: int = 0) -> None:
        self.client = client
        self.errors: list = []
        if client == "kafka-python":
            from kafka import KafkaProducer
            self.p = KafkaProducer(bootstrap_servers=bootstrap, client_id=client_id, acks="all", retries=20,
                                   retry_backoff_ms=50, linger_ms=linger_ms, request_timeout_ms=10000)
            self.futures: list = []
        elif client == "confluent-kafka":
            from confluent_kafka import Producer as CProducer
            self.p = CProducer({"bootstrap.servers": bootstrap, "client.id": client_id, "acks": "all",
                                "linger.ms": linger_ms, "retry.backoff.ms": 50,
                                "topic.metadata.refresh.interval.ms": 1000})
        else:
            from aiokafka import AIOKafkaProducer
            self.loop = asyncio.new_event_loop()

            async def start():
                producer = AIOKafkaProducer(bootstrap_servers=bootstrap, client_id=client_id, acks="all",
                                            linger_ms=linger_ms, retry_backoff_ms=50, request_timeout_ms=10000)
                await producer.start()
                return producer
            self.p = self.loop.run_until_complete(start())
            self.futures = []

    def send(self, topic: str, value: bytes, partition: int) -> None:
        if self.client == "kafka-python":
            self.futures.append(self.p.send(topic, value=value, partition=partition))
        elif self.client == "confluent-kafka":
            self.p.produce(topic, value=value, partition=partition,
                           on_delivery=lambda err, msg: err is not None and self.errors.append(err))
            self.p.poll(0)
        else:
            self.futures.append(self.loop.run_until_complete(self.p.send(topic, value=value, partition=partition)))

    def flush(self, timeout: float = 60) -> None:
        if self.client == "kafka-python":
            self.p.flush(timeout)
            for f in self.futures:
                f.get(timeout)
            self.futures.clear()
        elif self.client == "confluent-kafka":
            assert self.p.flush(timeout) == 0, "records left unsent"
            assert not self.errors, self.errors
        else:
            self.loop.run_until_complete(asyncio.wait_for(asyncio.gather(*self.futures), timeout))
            self.futures.clear()

    def close(self) -> None:
        if self.client == "kafka-python":
            self.p.close(5)
        elif self.client == "confluent-kafka":
            self.p.flush(5)
        else:
            self.loop.run_until_complete(self.p.stop())
            self.loop.close()


def read_all(bootstrap: str, topic: str, partitions: int) -> dict[int, list[bytes]]:
    """Every record value of a topic by partition, read from the beginning (kafka-python, no group)."""
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=2000)
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        end = consumer.end_offsets(tps)
        out: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
        while any(consumer.position(tp) < end[tp] for tp in tps):
            for tp, msgs in consumer.poll(timeout_ms=1000).items():
                out[tp.partition] += [m.value for m in msgs]
        return out
    finally:
        consumer.close()
