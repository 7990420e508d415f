"""DescribeTopicPartitions: paging with cursors, unknown topics and topic ids, through the codecs."""
from __future__ import annotations

import pytest

from kafkaemu.handlers.registry import REGISTRY
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from tests.conftest import call, new_broker


@pytest.fixture
def broker():
    b = new_broker(topics={"alpha": 3, "beta": 5, "gamma": 1})
    for internal in ("__consumer_offsets", "__transaction_state"):
        b.store.delete_topic(internal)   # created at start; these tests page over their own topics
    return b


def describe(broker, topics, limit=2000, cursor=None):
    return call(broker, ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0,
                {"topics": [{"name": t} for t in topics], "response_partition_limit": limit, "cursor": cursor})


def layout(resp):
    return [(t.name, [p.partition_index for p in t.partitions]) for t in resp.topics]


def test_registered_at_version_zero_only():
    handler = REGISTRY.get(ApiKey.DESCRIBE_TOPIC_PARTITIONS)
    assert handler.min_version == 0 and handler.max_version == 0


def test_named_topics_sorted_with_ids_from_the_store(broker):
    resp = describe(broker, ["gamma", "alpha"])
    assert layout(resp) == [("alpha", [0, 1, 2]), ("gamma", [0])]
    assert [t.topic_id for t in resp.topics] == [broker.store.get("alpha").topic_id, broker.store.get("gamma").topic_id]
    assert all(t.error_code == ErrorCode.NONE for t in resp.topics)
    assert resp.next_cursor is None
    p = resp.topics[0].partitions[0]
    assert (p.leader_id, p.replica_nodes, p.isr_nodes, p.eligible_leader_replicas) == (0, [0], [0], [])


def test_empty_list_means_every_topic(broker):
    assert layout(describe(broker, [])) == [("alpha", [0, 1, 2]), ("beta", [0, 1, 2, 3, 4]), ("gamma", [0])]


def test_paging_walks_every_partition_exactly_once(broker):
    seen, cursor, pages = [], None, 0
    while True:
        resp = describe(broker, [], limit=2, cursor=cursor)
        pages += 1
        seen += [(t.name, p.partition_index) for t in resp.topics for p in t.partitions]
        if resp.next_cursor is None:
            break
        cursor = {"topic_name": resp.next_cursor.topic_name, "partition_index": resp.next_cursor.partition_index}
    expected = [(n, i) for n, c in (("alpha", 3), ("beta", 5), ("gamma", 1)) for i in range(c)]
    assert seen == expected
    assert pages == 5


def test_cursor_mid_topic_and_at_a_topic_boundary(broker):
    resp = describe(broker, [], limit=3)
    assert layout(resp) == [("alpha", [0, 1, 2])]
    # the limit ran out exactly at the end of alpha: the cursor points at beta's start
    assert (resp.next_cursor.topic_name, resp.next_cursor.partition_index) == ("beta", 0)
    resp = describe(broker, [], limit=4, cursor={"topic_name": "beta", "partition_index": 2})
    assert layout(resp) == [("beta", [2, 3, 4]), ("gamma", [0])]
    assert resp.next_cursor is None


def test_limit_zero_still_returns_one_partition(broker):
    resp = describe(broker, ["beta"], limit=0)
    assert layout(resp) == [("beta", [0])]
    assert (resp.next_cursor.topic_name, resp.next_cursor.partition_index) == ("beta", 1)


def test_unknown_and_illegal_names(broker):
    resp = describe(broker, ["nope", "bad name!", "alpha"])
    by_name = {t.name: t for t in resp.topics}
    assert by_name["nope"].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert by_name["nope"].topic_id == bytes(16)
    assert by_name["bad name!"].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert by_name["alpha"].error_code == ErrorCode.NONE


def test_cursor_outside_the_requested_topics_is_invalid(broker):
    resp = describe(broker, ["alpha", "gamma"], cursor={"topic_name": "beta", "partition_index": 0})
    assert [(t.name, t.error_code) for t in resp.topics] == [
        ("alpha", ErrorCode.INVALID_REQUEST), ("gamma", ErrorCode.INVALID_REQUEST)]


def test_negative_cursor_partition_is_invalid(broker):
    resp = describe(broker, ["alpha"], cursor={"topic_name": "alpha", "partition_index": -1})
    assert [(t.name, t.error_code) for t in resp.topics] == [("alpha", ErrorCode.INVALID_REQUEST)]


def test_cursor_topics_before_it_are_skipped(broker):
    resp = describe(broker, ["alpha", "beta", "gamma"], cursor={"topic_name": "beta", "partition_index": 4})
    assert layout(resp) == [("beta", [4]), ("gamma", [0])]
