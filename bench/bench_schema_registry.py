"""Schema registry numbers for BENCHMARKS.md (``make bench``), against an in-process kafkaemu with
its registry (the client in this process too, as a test suite runs it):

1. Registrations/s: distinct Avro schemas, one keep-alive HTTP connection, one at a time; and 1,000
   with 50 in flight (aiohttp).
2. Lookups/s: ``GET /schemas/ids/{id}`` and ``POST /subjects/{s}`` (the uncached calls a client's
   first message makes), one keep-alive connection.
3. Serializer throughput with the registry in the loop: confluent-kafka's AvroSerializer producing
   20,000 records (auto-registration on the first), then AvroDeserializer reading them back with a
   client that has to fetch the writer's schema.
"""
from __future__ import annotations

import asyncio
import http.client
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkaemu.testing import KafkaEmulator  # noqa: E402

RECORDS = 20_000


def schema(i: int) -> str:
    return json.dumps({"type": "record", "name": f"R{i}", "fields": [{"name": "f", "type": "int"}]})


def post(conn, path: str, body) -> dict:
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/vnd.schemaregistry.v1+json"})
    response = conn.getresponse()
    data = json.loads(response.read())
    assert response.status == 200, data
    return data


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:,.0f}/s ({seconds * 1000 / n:.2f} ms each, n={n})"


def registrations(url: str) -> None:
    host, port = url.split("//")[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port))
    prefix = uuid.uuid4().hex[:6]
    t0 = time.perf_counter()
    for i in range(2000):
        post(conn, f"/subjects/{prefix}-{i}/versions", {"schema": schema(i)})
    print(f"registrations, one connection: {rate(2000, time.perf_counter() - t0)}")

    async def concurrent():
        import aiohttp
        async with aiohttp.ClientSession() as session:
            sem = asyncio.Semaphore(50)

            async def one(i):
                async with sem, session.post(f"{url}/subjects/c{prefix}-{i}/versions",
                                             json={"schema": schema(10_000 + i)}) as r:
                    assert r.status == 200
            t0 = time.perf_counter()
            await asyncio.gather(*(one(i) for i in range(1000)))
            return time.perf_counter() - t0
    print(f"registrations, 50 in flight: {rate(1000, asyncio.run(concurrent()))}")

    for label, method, path, body in (("GET /schemas/ids/{id}", "GET", "/schemas/ids/{i}", None),
                                      ("POST /subjects/{s} (lookup)", "POST", f"/subjects/{prefix}-{{i}}", True)):
        times = []
        for i in range(1, 2001):
            t = time.perf_counter()
            if body:
                post(conn, path.format(i=i - 1), {"schema": schema(i - 1)})
            else:
                conn.request(method, path.format(i=i))
                response = conn.getresponse()
                response.read()
                assert response.status == 200
            times.append((time.perf_counter() - t) * 1000)
        print(f"{label}: {1000 / statistics.mean(times):,.0f}/s, median {statistics.median(times):.3f} ms")


def serializers(kafka) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    user = json.dumps({"type": "record", "name": "User", "fields": [
        {"name": "name", "type": "string"}, {"name": "age", "type": "int"}]})
    topic = f"bench-avro-{uuid.uuid4().hex[:6]}"
    ctx = SerializationContext(topic, MessageField.VALUE)
    serializer = AvroSerializer(SchemaRegistryClient({"url": kafka.get_schema_registry_url()}), user)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_server, "linger.ms": 5})
    t0 = time.perf_counter()
    for i in range(RECORDS):
        producer.produce(topic, value=serializer({"name": f"user-{i}", "age": i % 100}, ctx))
        producer.poll(0)
    assert producer.flush(60) == 0
    print(f"AvroSerializer + produce: {rate(RECORDS, time.perf_counter() - t0)}")
    deserializer = AvroDeserializer(SchemaRegistryClient({"url": kafka.get_schema_registry_url()}))
    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_server, "group.id": topic})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = 0
    t0 = time.perf_counter()
    while got < RECORDS:
        for m in consumer.consume(1000, 1.0):
            deserializer(m.value(), ctx)
            got += 1
    print(f"consume + AvroDeserializer: {rate(RECORDS, time.perf_counter() - t0)}")
    consumer.close()


def main() -> None:
    with KafkaEmulator(schema_registry=True) as kafka:
        registrations(kafka.get_schema_registry_url())
        serializers(kafka)


if __name__ == "__main__":
    main()
