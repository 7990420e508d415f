"""Consumer groups with confluent-kafka (librdkafka) only: commits racing rebalances. The scenarios
every client runs are in test_groups.py."""
import threading
import time

import pytest

from .group_clients import ConsumerThread, append_records, create_topic, unique, wait_until

pytestmark = pytest.mark.timeout(120)


def test_commits_racing_rebalances_never_roll_back(kafka_emulator):
    bs, topic, group = kafka_emulator.bootstrap_server, unique("ck-race"), unique("ck-g")
    create_topic(kafka_emulator, topic, 4)
    append_records(kafka_emulator, topic, 400)

    def poll_and_commit(c):
        out = []
        for m in c.consume(20, 0.05):
            if m.error() is None:
                out.append((m.topic(), m.partition(), m.offset()))
        if out:
            try:
                c.commit(asynchronous=False)
            except Exception:          # refused while rebalancing: the next round commits again
                pass
        return out

    from confluent_kafka import Consumer

    def make(client_id):
        def build():
            c = Consumer({"bootstrap.servers": bs, "group.id": group, "client.id": client_id,
                          "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                          "auto.offset.reset": "earliest", "enable.auto.commit": False})
            c.subscribe([topic])
            return c
        return build

    committer = ConsumerThread(make("A"), poll_and_commit, lambda c: {(t.topic, t.partition) for t in c.assignment()},
                               lambda c: c.close(), "A")
    seen: dict[int, int] = {}
    violations = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            resp = kafka_emulator.call(lambda b: b.coordinator.fetch_offsets(b.now_ms, group, None))
            for t in resp["topics"]:
                for p in t["partitions"]:
                    if p["committed_offset"] < seen.get(p["partition_index"], -1):
                        violations.append((p["partition_index"], seen[p["partition_index"]], p["committed_offset"]))
                    seen[p["partition_index"]] = max(seen.get(p["partition_index"], -1), p["committed_offset"])
            time.sleep(0.01)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        for round_ in range(2):
            joiner = ConsumerThread(make(f"B{round_}"), poll_and_commit,
                                    lambda c: {(t.topic, t.partition) for t in c.assignment()}, lambda c: c.close(), "B")
            wait_until(lambda: joiner.assigned and committer.assigned, what="shared assignment")
            time.sleep(0.3)
            joiner.close()
            wait_until(lambda: len(committer.assigned) == 4, what="committer owns everything again")
        wait_until(lambda: len(seen) == 4 and all(v == 400 for v in seen.values()), timeout=30,
                   what="everything committed")
    finally:
        stop.set()
        watcher.join(5)
        committer.close()
    assert violations == []
