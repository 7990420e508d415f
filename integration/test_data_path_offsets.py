"""Offsets lookups and long polls with real clients: beginning/end offsets, offsets_for_times
(first record at or after the time, inside compressed batches), and a consumer parked on an empty
partition woken by a later produce well before its long-poll deadline."""
import asyncio
import threading
import time

from kafkaemu.protocol.api_keys import ApiKey

from .data_path_records import create_topic, unique_topic

BASE_TS = 1_600_000_000_000


def _produce_confluent(emulator, topic, codec="lz4"):
    """Partition p gets 100 records with timestamps BASE_TS + 10*i; partition 2 stays empty."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": emulator.bootstrap_server, "compression.type": codec,
                         "linger.ms": 50})
    for p in (0, 1):
        for i in range(100):
            producer.produce(topic, value=b"v%d" % i, partition=p, timestamp=BASE_TS + 10 * i)
    assert producer.flush(10) == 0


def test_confluent_watermarks_and_offsets_for_times(kafka_emulator):
    from confluent_kafka import Consumer, TopicPartition
    topic = unique_topic("off-ck")
    create_topic(kafka_emulator, topic)
    _produce_confluent(kafka_emulator, topic)
    kafka_emulator.call(lambda b: b.store.get(topic).partitions[1].delete_records(30))
    c = Consumer({"bootstrap.servers": kafka_emulator.bootstrap_server, "group.id": topic})
    try:
        assert c.get_watermark_offsets(TopicPartition(topic, 0), timeout=5) == (0, 100)
        assert c.get_watermark_offsets(TopicPartition(topic, 1), timeout=5) == (30, 100)
        assert c.get_watermark_offsets(TopicPartition(topic, 2), timeout=5) == (0, 0)
        found = c.offsets_for_times([TopicPartition(topic, 0, BASE_TS + 255), TopicPartition(topic, 1, BASE_TS),
                                     TopicPartition(topic, 2, BASE_TS)], timeout=5)
        # 255 lies between records 25 (250) and 26 (260); partition 1's log starts at 30; empty: -1
        assert [f.offset for f in found] == [26, 30, -1]
        late = c.offsets_for_times([TopicPartition(topic, 0, BASE_TS + 10_000)], timeout=5)
        assert late[0].offset == -1
    finally:
        c.close()


def test_kafka_python_beginning_end_offsets_for_times(kafka_emulator):
    from kafka import KafkaConsumer, TopicPartition
    topic = unique_topic("off-kp")
    create_topic(kafka_emulator, topic)
    _produce_confluent(kafka_emulator, topic, codec="gzip")
    c = KafkaConsumer(bootstrap_servers=kafka_emulator.bootstrap_server)
    try:
        tps = [TopicPartition(topic, p) for p in range(3)]
        assert c.beginning_offsets(tps) == {tps[0]: 0, tps[1]: 0, tps[2]: 0}
        assert c.end_offsets(tps) == {tps[0]: 100, tps[1]: 100, tps[2]: 0}
        found = c.offsets_for_times({tps[0]: BASE_TS + 991, tps[1]: BASE_TS + 990, tps[2]: BASE_TS})
        assert found[tps[0]] is None
        assert (found[tps[1]].offset, found[tps[1]].timestamp) == (99, BASE_TS + 990)
        assert found[tps[2]] is None
    finally:
        c.close()


def test_aiokafka_beginning_end_offsets_for_times(kafka_emulator):
    from aiokafka import AIOKafkaConsumer, TopicPartition
    topic = unique_topic("off-aio")
    create_topic(kafka_emulator, topic)
    _produce_confluent(kafka_emulator, topic, codec="zstd")

    async def run():
        c = AIOKafkaConsumer(bootstrap_servers=kafka_emulator.bootstrap_server)
        await c.start()
        try:
            tps = [TopicPartition(topic, p) for p in range(3)]
            return (await c.beginning_offsets(tps), await c.end_offsets(tps),
                    await c.offsets_for_times({tps[0]: BASE_TS + 505, tps[1]: 0}), tps)
        finally:
            await c.stop()

    begin, end, found, tps = asyncio.run(run())
    assert list(begin.values()) == [0, 0, 0] and list(end.values()) == [100, 100, 0]
    assert found[tps[0]].offset == 51 and found[tps[1]].offset == 0


def _produce_later(emulator, topic, delay_s):
    from confluent_kafka import Producer

    def run():
        time.sleep(delay_s)
        producer = Producer({"bootstrap.servers": emulator.bootstrap_server, "linger.ms": 0})
        producer.produce(topic, value=b"late", partition=0)
        producer.flush(10)
        sent.append(time.monotonic())
    sent = []
    t = threading.Thread(target=run)
    t.start()
    return t, sent


def test_confluent_long_poll_is_woken_by_produce(kafka_emulator):
    from confluent_kafka import Consumer, TopicPartition
    topic = unique_topic("lp-ck")
    create_topic(kafka_emulator, topic, partitions=1)
    c = Consumer({"bootstrap.servers": kafka_emulator.bootstrap_server, "group.id": topic,
                  "fetch.wait.max.ms": 10_000, "fetch.min.bytes": 1})
    c.assign([TopicPartition(topic, 0, 0)])
    c.poll(0.5)  # the consumer is now parked in a long poll on the empty partition
    thread, sent = _produce_later(kafka_emulator, topic, 0.5)
    msg = c.poll(8)
    received = time.monotonic()
    thread.join()
    c.close()
    assert msg is not None and msg.value() == b"late"
    # woken by the append, far before the 10 s long-poll deadline
    assert received - sent[0] < 1.0


def test_kafka_python_long_poll_is_woken_by_produce(kafka_emulator):
    from kafka import KafkaConsumer, TopicPartition
    topic = unique_topic("lp-kp")
    create_topic(kafka_emulator, topic, partitions=1)
    c = KafkaConsumer(bootstrap_servers=kafka_emulator.bootstrap_server, fetch_max_wait_ms=10_000,
                      fetch_min_bytes=1)
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek(tp, 0)
    c.poll(timeout_ms=500)
    thread, sent = _produce_later(kafka_emulator, topic, 0.5)
    got = {}
    start = time.monotonic()
    while not got and time.monotonic() - start < 8:
        got = c.poll(timeout_ms=8000)
    received = time.monotonic()
    thread.join()
    c.close()
    assert got[tp][0].value == b"late"
    assert received - sent[0] < 1.0


def test_fetch_min_bytes_waits_then_times_out_at_max_wait(kafka_emulator):
    """A fetch with nothing to read returns at its max_wait deadline (driven by the broker tick)."""
    from kafkaemu.testing import raw_client as raw_kafka
    topic = unique_topic("lp-raw")
    create_topic(kafka_emulator, topic, partitions=1)
    topic_id = kafka_emulator.call(lambda b: b.store.get(topic).topic_id)
    sock = raw_kafka.connect(kafka_emulator)
    try:
        start = time.monotonic()
        resp = raw_kafka.request(sock, ApiKey.FETCH, 13, {
            "max_wait_ms": 300, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1,
            "topics": [{"topic_id": topic_id, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                              "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""})
        elapsed = time.monotonic() - start
    finally:
        sock.close()
    assert 0.25 <= elapsed < 2.0
    part = resp.responses[0].partitions[0]
    assert part.error_code == 0 and part.high_watermark == 0 and not part.records


def test_aiokafka_long_poll_is_woken_by_produce(kafka_emulator):
    from aiokafka import AIOKafkaConsumer, TopicPartition
    topic = unique_topic("lp-aio")
    create_topic(kafka_emulator, topic, partitions=1)

    async def run():
        c = AIOKafkaConsumer(bootstrap_servers=kafka_emulator.bootstrap_server, fetch_max_wait_ms=10_000,
                             fetch_min_bytes=1)
        await c.start()
        try:
            tp = TopicPartition(topic, 0)
            c.assign([tp])
            c.seek(tp, 0)
            await c.getmany(timeout_ms=500)
            thread, sent = _produce_later(kafka_emulator, topic, 0.5)
            got = await c.getmany(tp, timeout_ms=8000)
            received = time.monotonic()
            await asyncio.get_running_loop().run_in_executor(None, thread.join)
            return got[tp][0].value, received - sent[0]
        finally:
            await c.stop()

    value, latency = asyncio.run(run())
    assert value == b"late" and latency < 1.0
