"""The differential suite's first scenarios: ApiVersions at every version, and a script of topic
admin, classic group protocol, offsets and data path requests with its bad inputs, sent to Apache
Kafka 4.4.0 and to kafkaemu and compared field by field (integration/differential/)."""
from __future__ import annotations

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E

LOADING = {E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR}


def test_api_versions_at_every_version(differential):
    versions = differential.versions(ApiKey.API_VERSIONS)
    assert len(versions) >= 4

    def scenario(peer):
        for v in versions:
            peer.call(f"v{v}", ApiKey.API_VERSIONS, v, {"client_software_name": "differential",
                                                        "client_software_version": "1.0"})
    differential.check(scenario, "api-versions")


def test_topic_admin_classic_group_and_offsets(differential):
    def scenario(peer):
        topic, group = peer.name("topic"), peer.name("group")

        def create(label, name, partitions=3, rf=1, configs=()):
            return peer.call(label, ApiKey.CREATE_TOPICS, 7, {"timeout_ms": 30000, "topics": [{
                "name": name, "num_partitions": partitions, "replication_factor": rf, "assignments": [],
                "configs": [{"name": k, "value": v} for k, v in configs]}]})

        create("create", topic)
        create("create again", topic)
        create("create rf 3", topic + "-rf", rf=3)
        create("create 0 partitions", topic + "-zero", partitions=0)
        create("create bad name", "bad/name")
        create("create unknown config", topic + "-cfg", configs=[("no.such.config", "1")])
        peer.call("shrink partitions", ApiKey.CREATE_PARTITIONS, 3, {
            "topics": [{"name": topic, "count": 2, "assignments": None}], "timeout_ms": 5000})
        peer.call("delete unknown topic", ApiKey.DELETE_TOPICS, 6, {"topics": [{"name": topic + "-nope"}],
                                                                    "timeout_ms": 5000})
        peer.call("metadata unknown topic", ApiKey.METADATA, 12, {
            "topics": [{"name": topic + "-nope"}], "allow_auto_topic_creation": False})
        peer.until(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]},
                   lambda a: a.coordinators[0].error_code == E.NONE, label="find coordinator")

        join = {"group_id": group, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
                "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b"sub"}]}

        def join_group(label, body):
            return peer.until(ApiKey.JOIN_GROUP, 9, body, lambda a: a.error_code not in LOADING, label=label)

        join_group("join short session", dict(join, session_timeout_ms=1000))
        member = join_group("join without id", join).member_id
        join_group("join", dict(join, member_id=member))
        peer.call("sync", ApiKey.SYNC_GROUP, 5, {
            "group_id": group, "generation_id": 1, "member_id": member, "protocol_type": "consumer",
            "protocol_name": "range", "assignments": [{"member_id": member, "assignment": b"assignment-bytes"}]})
        peer.call("heartbeat wrong generation", ApiKey.HEARTBEAT, 4,
                  {"group_id": group, "generation_id": 2, "member_id": member})
        peer.call("heartbeat unknown member", ApiKey.HEARTBEAT, 4,
                  {"group_id": group, "generation_id": 1, "member_id": "nobody"})

        def commit(label, generation, topic_name):
            peer.call(label, ApiKey.OFFSET_COMMIT, 8, {
                "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
                "topics": [{"name": topic_name, "partitions": [
                    {"partition_index": 0, "committed_offset": 42, "committed_metadata": "meta"}]}]})

        commit("commit", 1, topic)
        commit("commit stale generation", 7, topic)
        commit("commit unknown topic", 1, topic + "-nope")
        peer.call("fetch offsets", ApiKey.OFFSET_FETCH, 8, {
            "groups": [{"group_id": group, "topics": [{"name": topic, "partition_indexes": [0, 1]}]}]})
        peer.call("delete non-empty group", ApiKey.DELETE_GROUPS, 2, {"groups_names": [group]})
        peer.call("leave", ApiKey.LEAVE_GROUP, 5,
                  {"group_id": group, "members": [{"member_id": member, "group_instance_id": None}]})
        peer.call("delete empty group", ApiKey.DELETE_GROUPS, 2, {"groups_names": [group]})
        peer.call("delete deleted group", ApiKey.DELETE_GROUPS, 2, {"groups_names": [group]})
        peer.call("list offsets earliest/latest", ApiKey.LIST_OFFSETS, 7, {
            "replica_id": -1, "isolation_level": 0, "topics": [{"name": topic, "partitions": [
                {"partition_index": 0, "timestamp": -2}, {"partition_index": 1, "timestamp": -1}]}]})
        peer.call("fetch out of range", ApiKey.FETCH, 11, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [
                {"partition": 0, "fetch_offset": 100, "partition_max_bytes": 1 << 20}]}]})
    differential.check(scenario, "classic-basics")
