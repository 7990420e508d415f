"""DescribeTopicPartitions: paging with cursors, unknown topics and topic ids, through the codecs."""
from __future__ import annotations

import pytest

from kafkaemu.broker import Broker
from kafkaemu.config import BrokerConfig
from kafkaemu.handlers.describe_topic_partitions import describe_topic_partitions
from kafkaemu.handlers.registry import REGISTRY
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.errors import ErrorCode

API = 75


@pytest.fixture
def broker():
    b = Broker(BrokerConfig(), now_ms=0)
    for internal in ("__consumer_offsets", "__transaction_state"):
        b.store.delete_topic(internal)   # created at start; these tests page over their own topics
    b.topics.create("alpha", 3, {})
    b.topics.create("beta", 5, {})
    b.topics.create("gamma", 1, {})
    return b


def call(broker, topics, limit=2000, cursor=None):
    """Encode the request as a client would, run the handler, decode the encoded response."""
    body = catalog().request(API, 0).encode({
        "topics": [{"name": t} for t in topics],
        "response_partition_limit": limit,
        "cursor": cursor,
    })
    req = catalog().request(API, 0).decode(body)
    ctx = broker.context(API, 0, client_id="t", now_ms=0)
    resp = describe_topic_partitions(ctx, req)
    return catalog().response(API, 0).decode(catalog().response(API, 0).encode(resp))


def layout(resp):
    return [(t.name, [p.partition_index for p in t.partitions]) for t in resp.topics]


def test_registered_at_version_zero_only():
    assert REGISTRY.get(API).min_version == 0 and REGISTRY.get(API).max_version == 0


def test_named_topics_sorted_with_ids_from_the_store(broker):
    resp = call(broker, ["gamma", "alpha"])
    assert layout(resp) == [("alpha", [0, 1, 2]), ("gamma", [0])]
    assert [t.topic_id for t in resp.topics] == [broker.store.get("alpha").topic_id, broker.store.get("gamma").topic_id]
    assert all(t.error_code == ErrorCode.NONE for t in resp.topics)
    assert resp.next_cursor is None
    p = resp.topics[0].partitions[0]
    assert (p.leader_id, p.replica_nodes, p.isr_nodes, p.eligible_leader_replicas) == (0, [0], [0], [])


def test_empty_list_means_every_topic(broker):
    assert layout(call(broker, [])) == [("alpha", [0, 1, 2]), ("beta", [0, 1, 2, 3, 4]), ("gamma", [0])]


def test_paging_walks_every_partition_exactly_once(broker):
    seen, cursor, pages = [], None, 0
    while True:
        resp = call(broker, [], limit=2, cursor=cursor)
        pages += 1
        seen += [(t.name, p.partition_index) for t in resp.topics for p in t.partitions]
        if resp.next_cursor is None:
            break
        cursor = {"topic_name": resp.next_cursor.topic_name, "partition_index": resp.next_cursor.partition_index}
    expected = [(n, i) for n, c in (("alpha", 3), ("beta", 5), ("gamma", 1)) for i in range(c)]
    assert seen == expected
    assert pages == 5


def test_cursor_mid_topic_and_at_a_topic_boundary(broker):
    resp = call(broker, [], limit=3)
    assert layout(resp) == [("alpha", [0, 1, 2])]
    # the limit ran out exactly at the end of alpha: the cursor points at beta's start
    assert (resp.next_cursor.topic_name, resp.next_cursor.partition_index) == ("beta", 0)
    resp = call(broker, [], limit=4, cursor={"topic_name": "beta", "partition_index": 2})
    assert layout(resp) == [("beta", [2, 3, 4]), ("gamma", [0])]
    assert resp.next_cursor is None


def test_limit_zero_still_returns_one_partition(broker):
    resp = call(broker, ["beta"], limit=0)
    assert layout(resp) == [("beta", [0])]
    assert (resp.next_cursor.topic_name, resp.next_cursor.partition_index) == ("beta", 1)


def test_unknown_and_illegal_names(broker):
    resp = call(broker, ["nope", "bad name!", "alpha"])
    by_name = {t.name: t for t in resp.topics}
    assert by_name["nope"].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert by_name["nope"].topic_id == bytes(16)
    assert by_name["bad name!"].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert by_name["alpha"].error_code == ErrorCode.NONE


def test_cursor_outside_the_requested_topics_is_invalid(broker):
    resp = call(broker, ["alpha", "gamma"], cursor={"topic_name": "beta", "partition_index": 0})
    assert [(t.name, t.error_code) for t in resp.topics] == [
        ("alpha", ErrorCode.INVALID_REQUEST), ("gamma", ErrorCode.INVALID_REQUEST)]


def test_negative_cursor_partition_is_invalid(broker):
    resp = call(broker, ["alpha"], cursor={"topic_name": "alpha", "partition_index": -1})
    assert [(t.name, t.error_code) for t in resp.topics] == [("alpha", ErrorCode.INVALID_REQUEST)]


def test_cursor_topics_before_it_are_skipped(broker):
    resp = call(broker, ["alpha", "beta", "gamma"], cursor={"topic_name": "beta", "partition_index": 4})
    assert layout(resp) == [("beta", [4]), ("gamma", [0])]
