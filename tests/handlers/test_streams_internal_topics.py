"""Streams internal topics through CreateTopics' checks, on the sans-IO connection: a topology's
partition counts, replication factors and configs are refused as CreateTopics refuses them, in the
MISSING_INTERNAL_TOPICS status; a negative count is UNKNOWN_SERVER_ERROR and keeps nothing."""
from __future__ import annotations

import pytest

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.handlers.test_streams_handlers import MISSING_INTERNAL, hb, setup, topology

LIMIT = "Excessively large number of partitions per request."


def with_repartition(partitions=0, replication_factor=0):
    t = topology(extra_subtopology=True)
    rep = t["subtopologies"][1]["repartition_source_topics"][0]
    rep.update(partitions=partitions, replication_factor=replication_factor)
    return t


@pytest.mark.parametrize("partitions", [10_001, 2_000_000_000, 2**31 - 1])
def test_more_partitions_than_create_topics_takes_are_the_status_not_an_allocation(partitions):
    broker, c = setup()
    r = hb(c, "m1", 0, topology=with_repartition(partitions))
    assert r.error_code == E.NONE
    assert [(s.status_code, s.status_detail) for s in r.status] == [
        (MISSING_INTERNAL, "Internal topics are missing: app-rep-repartition, app-store-changelog; Creation failed: "
                           f"app-rep-repartition ({LIMIT}), app-store-changelog ({LIMIT}).")]
    assert sorted(broker.store.topics) == ["__consumer_offsets", "__transaction_state", "in"]
    # the next heartbeat finds them missing again and answers the same
    r = hb(c, "m1", r.member_epoch, active=[])
    assert r.error_code == E.NONE and [s.status_code for s in r.status] == [MISSING_INTERNAL]
    assert "app-rep-repartition" not in broker.store.topics


@pytest.mark.parametrize("partitions", [-5, -1, -(2**31)])
def test_a_negative_partition_count_is_unknown_server_error_and_keeps_nothing(partitions):
    broker, c = setup()
    r = hb(c, "m1", 0, topology=with_repartition(partitions))
    assert (r.error_code, r.error_message, r.member_epoch) == (E.UNKNOWN_SERVER_ERROR, None, 0)
    d = c.call(ApiKey.STREAMS_GROUP_DESCRIBE, 0, {"group_ids": ["app"], "include_authorized_operations": False})
    assert d.groups[0].error_code == E.GROUP_ID_NOT_FOUND
    assert "app-rep-repartition" not in broker.store.topics


def test_replication_factor_and_configs_are_checked_per_topic():
    broker, c = setup()
    r = hb(c, "m1", 0, topology=with_repartition(replication_factor=-3))
    (status,) = r.status
    assert status.status_detail.endswith("; Creation failed: app-rep-repartition (Replication factor must be "
                                         "larger than 0, or -1 to use the default value.).")
    assert "app-store-changelog" in broker.store.topics and "app-rep-repartition" not in broker.store.topics
    broker, c = setup()
    t = topology()
    t["subtopologies"][0]["state_changelog_topics"][0]["topic_configs"] = [{"key": "cleanup.policy",
                                                                           "value": "sometimes"}]
    (status,) = hb(c, "m1", 0, topology=t).status
    assert status.status_detail.startswith("Internal topics are missing: app-store-changelog; Creation failed: "
                                           "app-store-changelog (")
    assert "app-store-changelog" not in broker.store.topics
