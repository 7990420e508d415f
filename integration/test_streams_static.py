"""Static members of a streams group with the real Kafka Streams 4.4 client: two instances of the
word count of integration/java/src/kafkaemu/jvm/WordCountApp.java, each with its own
``group.instance.id`` (Kafka Streams gives its stream thread ``<id>-1``), share the tasks. One is
stopped cleanly: as a static member its client leaves with epoch -2, so kafkaemu keeps it in the
group with its tasks, and the other instance is given none of them. Restarted with the same instance
id and state directory, it joins under a new member id and takes its tasks back at the same group
epoch: no rebalance, the other instance's tasks never change, and the counts come out exact.
"""
from __future__ import annotations

import uuid

import pytest
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from kafkaemu.testing import KafkaEmulator

from .test_streams_app import PARTITIONS, TASKS, CountsReader, Instance, lines, wait_for, word_totals


@pytest.fixture(scope="module")
def server():
    """Sessions of 60 s (the longest a group may have): a stopped instance's restart comes well within it."""
    with KafkaEmulator(group_streams_session_timeout_ms=60000, group_streams_heartbeat_interval_ms=1000,
                       group_streams_min_heartbeat_interval_ms=1000) as emulator:
        yield emulator


def members_by_instance(server, app: str) -> dict[str, dict]:
    return {m["instance_id"]: m for m in server.group(app)["members"]}


def test_a_restarted_static_instance_takes_its_tasks_back_without_a_rebalance(java_classpath, server, tmp_path):
    bootstrap = server.bootstrap_server
    run = uuid.uuid4().hex[:8]
    app, input_topic, output_topic = f"static-wc-{run}", f"lines-{run}", f"counts-{run}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic(input_topic, PARTITIONS, 1), NewTopic(output_topic, PARTITIONS, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    first, second = lines(0, 100), lines(100, 100)

    def start(name: str) -> Instance:
        return Instance(java_classpath, bootstrap, app, input_topic, output_topic, tmp_path / name, instance_id=name)

    a, b = start("a"), start("b")
    restarted = None
    reader = CountsReader(bootstrap, output_topic)
    try:
        wait_for(lambda: a.tasks and b.tasks and a.tasks | b.tasks == TASKS and not a.tasks & b.tasks
                 and server.group(app)["state"] == "Stable", "split of the 8 tasks between the two instances", [a, b])
        members = members_by_instance(server, app)
        assert set(members) == {"a-1", "b-1"}
        epoch, old_member_id = server.group(app)["generation"], members["a-1"]["member_id"]
        tasks_of_a, tasks_of_b, b_reports = set(a.tasks), set(b.tasks), len(b.reported_tasks)
        for i, line in enumerate(first):
            producer.send(input_topic, key=str(i).encode(), value=line.encode())
        producer.flush()
        wait_for(lambda: reader.reached(word_totals(first)), "counts of the first lines", [a, b])

        a.stop()   # SIGTERM: KafkaStreams.close(), a static member's leave with epoch -2
        assert a.proc.returncode is not None
        wait_for(lambda: members_by_instance(server, app).get("a-1", {}).get("member_epoch") == -2,
                 "the stopped instance's member at epoch -2", [b])
        left = members_by_instance(server, app)["a-1"]
        assert left["member_id"] == old_member_id
        assert {f"{s}_{p}" for s, ps in left["tasks"]["active"].items() for p in ps} == tasks_of_a

        restarted = start("a")
        wait_for(lambda: restarted.tasks == tasks_of_a and server.group(app)["state"] == "Stable",
                 "the restarted instance's tasks", [restarted, b])
        members = members_by_instance(server, app)
        assert members["a-1"]["member_id"] != old_member_id and set(members) == {"a-1", "b-1"}
        assert server.group(app)["generation"] == epoch        # no rebalance
        assert b.reported_tasks[b_reports - 1:] == [tasks_of_b]   # the other instance kept its tasks throughout

        for i, line in enumerate(second, start=len(first)):
            producer.send(input_topic, key=str(i).encode(), value=line.encode())
        producer.flush()
        totals = word_totals(first + second)
        wait_for(lambda: reader.reached(totals), "counts of all lines", [restarted, b])
        reader.poll()
        assert {w: reader.counts[w] for w in totals} == {w: list(range(1, n + 1)) for w, n in totals.items()}
    finally:
        producer.close()
        reader.close()
        for instance in (restarted, b, a):
            if instance is not None:
                instance.stop()
