"""Transactions benchmark: transactional produce throughput (100-byte records, transactions of
1,000 records) beside idempotent produce with the same client settings, and commit latency — from
EndTxn (``commit_transaction()`` after the records are flushed) to a read_committed consumer
parked in a long poll receiving them, i.e. the last stable offset advancing — with confluent-kafka
against kafkaemu as a subprocess on loopback; and the server's own CPU cost of an EndTxn (the
PrepareCommit and CompleteCommit records and the markers) for 1 and 10 partitions. Prints one line
per measurement; ``--json`` prints a JSON document instead.

    .venv/bin/python bench/bench_transactions.py [--records 300000] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from kafkaemu.testing import KafkaEmulator

RECORD_BYTES = 100
TXN_RECORDS = 1000


def _topic(admin, partitions=1):
    name = f"bench-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(10)
    return name


def _producer(bootstrap: str, transactional_id: str | None) -> Producer:
    conf = {"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1_000_000, "acks": "all",
            "queue.buffering.max.kbytes": 1_048_576, "queue.buffering.max.messages": 1_000_000,
            "enable.idempotence": True}
    if transactional_id:
        conf["transactional.id"] = transactional_id
    return Producer(conf)


def _send(producer: Producer, topic: str, value: bytes, n: int) -> None:
    for _ in range(n):
        while True:
            try:
                producer.produce(topic, value=value, partition=0)
                break
            except BufferError:
                producer.poll(0.001)


def idempotent_throughput(bootstrap: str, admin, count: int) -> dict:
    topic = _topic(admin)
    producer = _producer(bootstrap, None)
    value = b"v" * RECORD_BYTES
    _send(producer, topic, value, 1)   # warm up: producer id, metadata, connections
    producer.flush(30)
    start = time.perf_counter()
    _send(producer, topic, value, count)
    if producer.flush(120) != 0:
        raise RuntimeError("producer did not flush")
    seconds = time.perf_counter() - start
    return {"records": count, "records_s": round(count / seconds), "mb_s": round(count * RECORD_BYTES / 1e6 / seconds, 1)}


def transactional_throughput(bootstrap: str, admin, count: int) -> dict:
    topic = _topic(admin)
    producer = _producer(bootstrap, f"bench-{uuid.uuid4().hex[:8]}")
    producer.init_transactions(30)
    value = b"v" * RECORD_BYTES
    producer.begin_transaction()   # warm up: metadata, connections, the coordinator
    _send(producer, topic, value, 1)
    producer.commit_transaction(30)
    transactions = count // TXN_RECORDS
    start = time.perf_counter()
    for _ in range(transactions):
        producer.begin_transaction()
        _send(producer, topic, value, TXN_RECORDS)
        producer.commit_transaction(60)
    seconds = time.perf_counter() - start
    records = transactions * TXN_RECORDS
    return {"records": records, "transactions": transactions, "records_s": round(records / seconds),
            "mb_s": round(records * RECORD_BYTES / 1e6 / seconds, 1),
            "transactions_s": round(transactions / seconds)}


def commit_latency(bootstrap: str, admin, rounds: int = 30) -> dict:
    """EndTxn to a read_committed consumer (parked in a long poll) receiving the transaction's records."""
    topic = _topic(admin)
    producer = _producer(bootstrap, f"bench-{uuid.uuid4().hex[:8]}")
    producer.init_transactions(30)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": topic, "isolation.level": "read_committed",
                         "fetch.wait.max.ms": 5000, "fetch.min.bytes": 1, "fetch.error.backoff.ms": 0,
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    end_txn, visible = [], []
    for i in range(rounds + 1):
        producer.begin_transaction()
        producer.produce(topic, value=b"r%d" % i, partition=0)
        producer.flush(10)
        consumer.poll(0.2)   # let the consumer's next fetch park on the broker
        start = time.perf_counter()
        producer.commit_transaction(30)
        answered = time.perf_counter()
        msg = None
        while msg is None or msg.error() is not None:
            msg = consumer.poll(6.0)
        if i:   # the first round warms the connections up
            end_txn.append((answered - start) * 1000)
            visible.append((time.perf_counter() - start) * 1000)
    consumer.close()
    visible.sort()
    return {"rounds": rounds, "end_txn_median_ms": round(statistics.median(end_txn), 2),
            "visible_median_ms": round(statistics.median(visible), 2),
            "visible_p95_ms": round(visible[int(len(visible) * 0.95) - 1], 2)}


def server_end_txn_cost(partitions: int, rounds: int = 200) -> dict:
    """CPU time the broker takes for an EndTxn commit of a transaction over ``partitions`` partitions
    (through the sans-IO connection: decode, PrepareCommit record, markers, CompleteCommit, answer)."""
    from kafkaemu.broker import Broker
    from kafkaemu.config import BrokerConfig
    from kafkaemu.handlers import REGISTRY
    from kafkaemu.logging import configure_logging
    from kafkaemu.storage.record_batch import build_batch
    from kafkaemu.testing.raw_client import encode_request
    from kafkaemu.wire.connection import Connection
    configure_logging("console", "warning")
    now = int(time.time() * 1000)
    broker = Broker(BrokerConfig(), now)
    broker.topics.create("t", partitions, {})
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1")

    def send(api, version, body):
        conn.receive(encode_request(api, version, body), now)
        return conn.take_output()

    send(22, 4, {"transactional_id": "bench", "transaction_timeout_ms": 60000, "producer_id": -1,
                 "producer_epoch": -1})
    state = broker.txn_hooks.state("bench")
    pid, epoch = state["producer_id"], state["producer_epoch"]
    samples = []
    for r in range(rounds):
        send(24, 3, {"v3_and_below_transactional_id": "bench", "v3_and_below_producer_id": pid,
                     "v3_and_below_producer_epoch": epoch,
                     "v3_and_below_topics": [{"name": "t", "partitions": list(range(partitions))}]})
        for p in range(partitions):
            batch = build_batch([(None, b"x" * RECORD_BYTES, [], now)], producer_id=pid, producer_epoch=epoch,
                                base_sequence=r, transactional=True)
            send(0, 9, {"transactional_id": "bench", "acks": -1, "timeout_ms": 1000, "topic_data": [
                {"name": "t", "partition_data": [{"index": p, "records": batch}]}]})
        start = time.thread_time()
        send(26, 3, {"transactional_id": "bench", "producer_id": pid, "producer_epoch": epoch, "committed": True})
        samples.append(time.thread_time() - start)
    assert broker.txn_hooks.state("bench")["state"] == "CompleteCommit"
    return {"partitions": partitions, "ms_per_end_txn": round(statistics.median(samples) * 1000, 3)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300_000, help="records per throughput run (default 300000)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = {}
    with KafkaEmulator(subprocess_mode=True) as emu:
        admin = AdminClient({"bootstrap.servers": emu.bootstrap_server})
        results["idempotent"] = idempotent_throughput(emu.bootstrap_server, admin, args.records)
        results["transactional"] = transactional_throughput(emu.bootstrap_server, admin, args.records)
        results["commit_latency"] = commit_latency(emu.bootstrap_server, admin)
    results["ratio"] = round(results["transactional"]["records_s"] / results["idempotent"]["records_s"], 2)
    for partitions in (1, 10):
        results[f"server_end_txn_{partitions}"] = server_end_txn_cost(partitions)
    if args.json:
        json.dump(results, sys.stdout, indent=2)
        print()
        return 0
    i, t, c = results["idempotent"], results["transactional"], results["commit_latency"]
    print(f"confluent-kafka {RECORD_BYTES} B records, idempotent: {i['records_s']} rec/s ({i['mb_s']} MB/s)")
    print(f"confluent-kafka {RECORD_BYTES} B records, transactions of {TXN_RECORDS}: {t['records_s']} rec/s "
          f"({t['mb_s']} MB/s, {t['transactions_s']} transactions/s) = {results['ratio']:.0%} of idempotent")
    print(f"commit latency ({c['rounds']} rounds): EndTxn answered in {c['end_txn_median_ms']} ms median; "
          f"visible to a read_committed consumer in {c['visible_median_ms']} ms median, "
          f"p95 {c['visible_p95_ms']} ms")
    for partitions in (1, 10):
        r = results[f"server_end_txn_{partitions}"]
        print(f"server side, EndTxn commit over {partitions} partition(s): {r['ms_per_end_txn']} ms CPU median")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
