"""Kafka 4.4's additions to streams groups, request by request on a manual clock: StreamsGroupHeartbeat
v1 (the int64 acceptable recovery lag, topology_description_required), StreamsGroupDescribe v1 (the
assignor's name, the topology description's status) and StreamsGroupTopologyDescriptionUpdate (93)
as a Kafka 4.4 broker without a topology description plugin answers them."""
from __future__ import annotations

import pytest

from kafkaemu.broker import Broker
from kafkaemu.config import BrokerConfig
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from tests.handlers.test_share_handlers import Client
from tests.handlers.test_streams_handlers import DESCRIBE, HB, T0, hb, setup

UPDATE = ApiKey.STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE


def joined(version):
    broker, c = setup()
    first = hb(c, "m1", 0)
    body = {"group_id": "app", "member_id": "m1", "member_epoch": first.member_epoch, "endpoint_information_epoch": 0,
            "active_tasks": [], "standby_tasks": [], "warmup_tasks": [], "shutdown_application": False}
    return broker, c, c.call(HB, version, body)


@pytest.mark.parametrize("version", [0, 1])
def test_heartbeat_answers_kafka_4_4s_task_offset_interval_and_recovery_lag(version):
    _, _, r = joined(version)
    assert r.error_code == E.NONE and r.task_offset_interval_ms == 60000
    if version == 0:
        assert r.acceptable_recovery_lag_legacy == 0          # deprecated: Kafka 4.4 leaves it 0
    else:
        assert r.acceptable_recovery_lag == 10000 and r.topology_description_required is False


@pytest.mark.parametrize(("include", "status"), [(False, 0), (True, 1)])
def test_describe_v1_names_the_assignor_and_the_description_status(include, status):
    _, c, _ = joined(1)
    groups = c.call(DESCRIBE, 1, {"group_ids": ["app", "nope"], "include_authorized_operations": False,
                                  "include_topology_description": include}).groups
    app, nope = groups
    assert (app.error_code, app.assignor_name, app.topology_description_status, app.topology_description) == \
        (E.NONE, "sticky", status, None)
    assert (nope.error_code, nope.assignor_name, nope.topology_description_status) == (E.GROUP_ID_NOT_FOUND, None, 0)


def update_body(group="app", member="m1"):
    node = {"name": "KSTREAM-SOURCE-0000000000", "node_type": 1, "source_topics": ["in"], "sink_topic": None,
            "stores": [], "successors": []}
    return {"group_id": group, "member_id": member, "topology_epoch": 1,
            "topology_description": {"subtopologies": [{"subtopology_id": "0", "nodes": [node]}], "global_stores": []}}


def test_a_topology_description_push_is_refused_without_a_plugin_as_kafka_4_4():
    _, c, _ = joined(1)
    r = c.call(UPDATE, 0, update_body())
    assert (r.error_code, r.error_message) == (E.UNSUPPORTED_VERSION,
                                               "The broker has no streams group topology description plugin configured.")


def test_a_topology_description_push_with_streams_groups_off_is_unsupported():
    c = Client(Broker(BrokerConfig(finalized_features=("streams.version=0",)), T0))
    r = c.call(UPDATE, 0, update_body())
    assert (r.error_code, r.error_message) == (E.UNSUPPORTED_VERSION, None)
