"""A streams topology configured against the topics that exist (Kafka's InternalTopicManager):
internal topics' partition counts, copartitioning, and the statuses of what cannot be configured."""
from __future__ import annotations

import pytest

from kafkaemu.core.group_api import GroupError
from kafkaemu.core.streams import topology as t
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.protocol.catalog import catalog


def info(name, partitions=0, configs=()):
    return t.TopicInfo(name, partitions, 0, tuple(configs))


def sub(sid, sources=(), sinks=(), logs=(), reps=(), groups=()):
    return t.Subtopology(sid, tuple(sources), tuple(sinks), tuple(logs), tuple(reps), tuple(groups))


def configure(subs, topics):
    return t.configure(t.StreamsTopology(1, tuple(subs)), topics.get)


def test_changelogs_take_the_task_count_and_are_to_be_created_with_their_configs():
    c = configure([sub("0", ["in"], logs=[info("app-changelog", configs=[("cleanup.policy", "compact")])])], {"in": 3})
    assert c.subtopologies["0"].num_tasks == 3 and c.subtopologies["0"].stateful
    assert c.to_create == {"app-changelog": t.InternalTopic("app-changelog", 3, -1, (("cleanup.policy", "compact"),))}
    assert c.status == (t.MISSING_INTERNAL_TOPICS, "Internal topics are missing: app-changelog") and not c.ready
    ready = configure([sub("0", ["in"], logs=[info("app-changelog")])], {"in": 3, "app-changelog": 3})
    assert ready.ready and ready.to_create == {}


def test_a_repartition_topic_takes_the_largest_input_of_its_writers_through_chains():
    subs = [sub("0", ["a", "b"], sinks=["r1"]), sub("1", reps=[info("r1")], sinks=["r2"]), sub("2", reps=[info("r2")])]
    c = configure(subs, {"a": 2, "b": 5})
    assert {n: x.partitions for n, x in c.to_create.items()} == {"r1": 5, "r2": 5}
    assert [c.subtopologies[s].num_tasks for s in "012"] == [5, 5, 5]


def test_a_fixed_repartition_count_is_kept():
    c = configure([sub("0", ["a"], sinks=["r"]), sub("1", reps=[info("r", 7)])], {"a": 2})
    assert c.to_create["r"].partitions == 7


def test_missing_source_topics_are_a_status_without_subtopologies():
    c = configure([sub("0", ["b", "a"])], {})
    assert c.subtopologies is None and c.status == (t.MISSING_SOURCE_TOPICS, "Source topics a, b are missing.")


def test_a_repartition_topic_nobody_writes_cannot_be_counted():
    c = configure([sub("0", reps=[info("r")])], {})
    assert c.status[0] == t.MISSING_SOURCE_TOPICS and "Failed to compute number of partitions" in c.status[1]


def test_copartitioned_sources_must_agree_and_their_repartition_topics_follow():
    bad = configure([sub("0", ["a", "b"], groups=[((0, 1), ())])], {"a": 2, "b": 3})
    assert bad.status == (t.INCORRECTLY_PARTITIONED_TOPICS, "Topics not co-partitioned: [{a=2, b=3}]")
    subs = [sub("0", ["x"], sinks=["r"]), sub("1", ["a"], reps=[info("r")], groups=[((0,), (0,))])]
    good = configure(subs, {"x": 8, "a": 4})
    assert good.to_create["r"].partitions == 4


def test_an_existing_internal_topic_with_other_partitions_is_incorrectly_partitioned():
    c = configure([sub("0", ["in"], logs=[info("log")])], {"in": 3, "log": 1})
    assert c.status == (t.INCORRECTLY_PARTITIONED_TOPICS,
                        "Existing topic log has different number of partitions: expected 3, found 1")


def _request_topology(subtopologies):
    codec = catalog().request(88, 0)
    body = {"group_id": "g", "member_id": "m", "member_epoch": 0, "endpoint_information_epoch": 0,
            "topology": {"epoch": 2, "subtopologies": subtopologies}}
    return codec.decode(codec.encode(body)).topology


def test_from_request_refuses_what_kafka_refuses():
    ok = t.from_request(_request_topology([{"subtopology_id": "1", "source_topics": ["a"]},
                                           {"subtopology_id": "0", "source_topics": ["b"]}]))
    assert ok.epoch == 2 and [s.subtopology_id for s in ok.subtopologies] == ["0", "1"]
    with pytest.raises(GroupError) as exc:
        t.from_request(_request_topology([{"subtopology_id": "0", "source_topics": ["a"],
                                           "copartition_groups": [{"source_topics": [3]}]}]))
    assert exc.value.code == E.STREAMS_INVALID_TOPOLOGY
