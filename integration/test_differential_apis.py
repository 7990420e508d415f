"""Every API kafkaemu implements, at every version both it and Apache Kafka 4.4.0 advertise, sent to
both and compared field by field (integration/differential/). An API only one of them advertises is
sent at that broker's versions to both, so what a client sees from the other is compared too.

Each scenario sets up unrecorded (``Peer.send``), then records the API at each version; names are
suffixed with the version where a call changes state."""
from __future__ import annotations

import uuid

import pytest

from kafkaemu.handlers.index import HANDLERS
from kafkaemu.protocol.api_keys import ApiKey as K
from kafkaemu.protocol.envelope import api_name

from .differential import prepare as p
from .differential.prepare import heartbeat_848 as _heartbeat_848, share_heartbeat as _share_heartbeat
from .differential.prepare import streams_heartbeat as _streams_heartbeat, topology as _topology

SCENARIOS = {}


def api(key):
    def register(fn):
        SCENARIOS[key] = fn
        return fn
    return register


def at_each(peer, versions, key, body):
    for v in versions:
        peer.call(f"v{v}", key, v, body(v) if callable(body) else body)


@api(K.API_VERSIONS)
def _api_versions(peer, versions):
    at_each(peer, versions, K.API_VERSIONS, {"client_software_name": "differential", "client_software_version": "1"})


@api(K.PRODUCE)
def _produce(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic, 2)
    tid = p.topic_id(peer, topic)
    for v in versions:  # v0-v2 to partition 1: Kafka 4.4 refuses them, which must not move partition 0's offsets
        for label, partition in (("", 0 if v >= 3 else 1), (" unknown partition", 7)):
            peer.call(f"v{v}{label}", K.PRODUCE, v, {"acks": -1, "timeout_ms": 30000, "topic_data": [{
                "name": topic, "topic_id": tid, "partition_data": [{"index": partition, "records": p.batch(2)}]}]})
    peer.call("unknown topic", K.PRODUCE, 9, {"acks": -1, "timeout_ms": 30000, "topic_data": [{
        "name": peer.name("nope"), "partition_data": [{"index": 0, "records": p.batch(1)}]}]})


@api(K.FETCH)
def _fetch(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    p.produce(peer, topic, count=4)
    tid = p.topic_id(peer, topic)
    for v in versions:
        for label, offset in (("", 1), (" at end", 4), (" out of range", 40)):
            peer.call(f"v{v}{label}", K.FETCH, v, {
                "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0,
                "session_epoch": -1, "topics": [{"topic": topic, "topic_id": tid, "partitions": [
                    {"partition": 0, "fetch_offset": offset, "partition_max_bytes": 1 << 20}]}],
                "forgotten_topics_data": [], "rack_id": ""})


@api(K.LIST_OFFSETS)
def _list_offsets(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic, 3)
    for partition in range(3):
        p.produce(peer, topic, partition, count=3)
    for v in versions:  # earliest, latest, by time: one partition each (Kafka answers a partition once)
        peer.call(f"v{v}", K.LIST_OFFSETS, v, {"replica_id": -1, "isolation_level": 0, "timeout_ms": 5000, "topics": [
            {"name": topic, "partitions": [{"partition_index": i, "timestamp": ts} for i, ts in
                                           enumerate((-2, -1, p.TIMESTAMP + 1) if v > 0 else (-1,))]}]})
    peer.call("unknown partition", K.LIST_OFFSETS, 7, {"replica_id": -1, "topics": [
        {"name": topic, "partitions": [{"partition_index": 5, "timestamp": -1}]}]})


@api(K.METADATA)
def _metadata(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic, 2)
    for v in versions:
        peer.call(f"v{v}", K.METADATA, v, {"topics": [{"name": topic}, {"name": peer.name("nope")}],
                                           "allow_auto_topic_creation": False,
                                           "include_topic_authorized_operations": True})


@api(K.OFFSET_COMMIT)
def _offset_commit(peer, versions):
    topic, group = peer.name("t"), peer.name("g")
    p.create_topic(peer, topic)
    tid = p.topic_id(peer, topic)
    member, generation = p.classic_member(peer, group)
    for v in versions:
        peer.call(f"v{v}", K.OFFSET_COMMIT, v, {
            "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member,
            "topics": [{"name": topic, "topic_id": tid, "partitions": [
                {"partition_index": 0, "committed_offset": v, "committed_metadata": f"m{v}"}]}]})


@api(K.OFFSET_FETCH)
def _offset_fetch(peer, versions):
    topic, group = peer.name("t"), peer.name("g")
    p.create_topic(peer, topic, 2)
    tid = p.topic_id(peer, topic)
    p.commit(peer, group, topic, 5)
    for v in versions:
        peer.call(f"v{v}", K.OFFSET_FETCH, v, {
            "group_id": group, "topics": [{"name": topic, "partition_indexes": [0, 1]}],
            "groups": [{"group_id": group, "topics": [{"name": topic, "topic_id": tid, "partition_indexes": [0, 1]}]},
                       {"group_id": peer.name("nope"), "topics": None}],
            "require_stable": True})


@api(K.FIND_COORDINATOR)
def _find_coordinator(peer, versions):
    for v in versions:
        peer.call(f"v{v}", K.FIND_COORDINATOR, v, {"key": peer.name("g"), "key_type": 0,
                                                   "coordinator_keys": [peer.name("g"), peer.name("h")]})
        if v >= 1:
            peer.call(f"v{v} txn", K.FIND_COORDINATOR, v, {"key": peer.name("x"), "key_type": 1,
                                                           "coordinator_keys": [peer.name("x")]})


def _join(group, member="", protocol_type="consumer"):
    return {"group_id": group, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": member,
            "protocol_type": protocol_type, "protocols": [{"name": "range", "metadata": b"meta"}], "reason": "test"}


@api(K.JOIN_GROUP)
def _join_group(peer, versions):
    for v in versions:
        group = peer.name(f"g{v}")
        p.find_coordinator(peer, group)
        first = peer.until(K.JOIN_GROUP, v, _join(group), lambda a: a.error_code not in p.LOADING, label=f"v{v}")
        if v >= 4:  # MEMBER_ID_REQUIRED: join again with the id
            peer.until(K.JOIN_GROUP, v, _join(group, first.member_id), lambda a: a.error_code not in p.LOADING,
                       label=f"v{v} with id")


@api(K.HEARTBEAT)
def _heartbeat(peer, versions):
    group = peer.name("g")
    member, generation = p.classic_member(peer, group)
    for v in versions:
        peer.call(f"v{v}", K.HEARTBEAT, v, {"group_id": group, "generation_id": generation, "member_id": member})
        peer.call(f"v{v} unknown member", K.HEARTBEAT, v, {"group_id": group, "generation_id": generation,
                                                            "member_id": "nobody"})


@api(K.LEAVE_GROUP)
def _leave_group(peer, versions):
    for v in versions:
        group = peer.name(f"g{v}")
        member, _ = p.classic_member(peer, group)
        peer.call(f"v{v}", K.LEAVE_GROUP, v, {"group_id": group, "member_id": member,
                                              "members": [{"member_id": member}, {"member_id": "nobody"}]})


@api(K.SYNC_GROUP)
def _sync_group(peer, versions):
    for v in versions:
        group = peer.name(f"g{v}")
        p.find_coordinator(peer, group)
        first = peer.until(K.JOIN_GROUP, 9, _join(group), lambda a: a.error_code not in p.LOADING)
        joined = peer.send(K.JOIN_GROUP, 9, _join(group, first.member_id))
        peer.call(f"v{v}", K.SYNC_GROUP, v, {
            "group_id": group, "generation_id": joined.generation_id, "member_id": joined.member_id,
            "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": joined.member_id, "assignment": b"assigned"}]})


@api(K.DESCRIBE_GROUPS)
def _describe_groups(peer, versions):
    group = peer.name("g")
    p.classic_member(peer, group)
    p.create_topic(peer, peer.name("t"))
    p.commit(peer, peer.name("empty"), peer.name("t"))
    for v in versions:
        peer.call(f"v{v}", K.DESCRIBE_GROUPS, v, {"groups": [group, peer.name("empty"), peer.name("nope")],
                                                  "include_authorized_operations": True})


@api(K.LIST_GROUPS)
def _list_groups(peer, versions):
    group = peer.name("g")
    p.classic_member(peer, group)
    for v in versions:
        # filtered to this scenario's group: other scenarios' groups come and go
        answer = peer.send(K.LIST_GROUPS, v, {"states_filter": [], "types_filter": []})
        answer["groups"] = [g for g in answer["groups"] if g["group_id"] == group]
        peer.exchanges.append(type(peer.exchanges[0])(f"v{v}", K.LIST_GROUPS, v, answer)
                              if peer.exchanges else _exchange(f"v{v}", K.LIST_GROUPS, v, answer))
        if v >= 4:
            peer.call(f"v{v} states", K.LIST_GROUPS, v, {"states_filter": ["Dead"], "types_filter": []})
        if v >= 5:
            peer.call(f"v{v} types", K.LIST_GROUPS, v, {"states_filter": [], "types_filter": ["streams-nope"]})


def _exchange(label, key, version, answer):
    from .differential.peer import Exchange
    return Exchange(label, key, version, answer)


@api(K.SASL_HANDSHAKE)
def _sasl_handshake(peer, versions):
    for v in versions:
        peer.call(f"v{v}", K.SASL_HANDSHAKE, v, {"mechanism": "PLAIN"}, sock=peer.connect())


@api(K.SASL_AUTHENTICATE)
def _sasl_authenticate(peer, versions):
    for v in versions:
        peer.call(f"v{v}", K.SASL_AUTHENTICATE, v, {"auth_bytes": b"\0user\0pass"}, sock=peer.connect())


@api(K.CREATE_TOPICS)
def _create_topics(peer, versions):
    for v in versions:
        peer.call(f"v{v}", K.CREATE_TOPICS, v, {"timeout_ms": 30000, "validate_only": False, "topics": [
            {"name": peer.name(f"t{v}"), "num_partitions": 2, "replication_factor": 1, "assignments": [],
             "configs": [{"name": "retention.ms", "value": "100000"}]},
            {"name": peer.name(f"d{v}"), "num_partitions": -1, "replication_factor": -1, "assignments": [],
             "configs": []}]})
        if v >= 1:
            peer.call(f"v{v} validate only", K.CREATE_TOPICS, v, {"timeout_ms": 30000, "validate_only": True, "topics": [
                {"name": peer.name(f"v{v}"), "num_partitions": 1, "replication_factor": 1, "assignments": [],
                 "configs": [{"name": "cleanup.policy", "value": "compact"}]}]})


@api(K.DELETE_TOPICS)
def _delete_topics(peer, versions):
    for v in versions:
        topic = peer.name(f"t{v}")
        p.create_topic(peer, topic)
        tid = p.topic_id(peer, topic)
        peer.call(f"v{v}", K.DELETE_TOPICS, v, {"timeout_ms": 30000, "topic_names": [topic, peer.name("nope")],
                                                "topics": [{"name": None, "topic_id": tid},
                                                           {"name": peer.name("nope")}]})


@api(K.DELETE_RECORDS)
def _delete_records(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    p.produce(peer, topic, count=9)
    for v in versions:
        peer.call(f"v{v}", K.DELETE_RECORDS, v, {"timeout_ms": 30000, "topics": [{"name": topic, "partitions": [
            {"partition_index": 0, "offset": v + 1}, {"partition_index": 3, "offset": 1}]}]})
    peer.call("beyond the end", K.DELETE_RECORDS, 2, {"timeout_ms": 30000, "topics": [{"name": topic, "partitions": [
        {"partition_index": 0, "offset": 99}]}]})


@api(K.INIT_PRODUCER_ID)
def _init_producer_id(peer, versions):
    for v in versions:
        tid = peer.name(f"x{v}")
        p.find_coordinator(peer, tid, key_type=1)
        peer.until(K.INIT_PRODUCER_ID, v, {"transactional_id": tid, "transaction_timeout_ms": 60000},
                   lambda a: a.error_code not in p.LOADING, label=f"v{v}")
        peer.call(f"v{v} idempotent", K.INIT_PRODUCER_ID, v, {"transactional_id": None,
                                                               "transaction_timeout_ms": 60000})


@api(K.OFFSET_FOR_LEADER_EPOCH)
def _offset_for_leader_epoch(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    p.produce(peer, topic)
    for v in versions:
        peer.call(f"v{v}", K.OFFSET_FOR_LEADER_EPOCH, v, {"replica_id": -1, "topics": [{"topic": topic, "partitions": [
            {"partition": 0, "current_leader_epoch": 0, "leader_epoch": 0},
            {"partition": 0, "current_leader_epoch": 5, "leader_epoch": 0},
            {"partition": 9, "leader_epoch": 0}]}]})


@api(K.ADD_PARTITIONS_TO_TXN)
def _add_partitions_to_txn(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        tid = peer.name(f"x{v}")
        pid, epoch = p.transactional_producer(peer, tid)
        topics = [{"name": topic, "partitions": [0]}]
        peer.call(f"v{v}", K.ADD_PARTITIONS_TO_TXN, v, {
            "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": topics,
            "transactions": [{"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch,
                              "verify_only": False, "topics": topics}]})
        peer.call(f"v{v} wrong epoch", K.ADD_PARTITIONS_TO_TXN, v, {
            "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch + 3, "v3_and_below_topics": topics,
            "transactions": [{"transactional_id": tid, "producer_id": pid, "producer_epoch": epoch + 3,
                              "verify_only": False, "topics": topics}]})


@api(K.ADD_OFFSETS_TO_TXN)
def _add_offsets_to_txn(peer, versions):
    for v in versions:
        tid = peer.name(f"x{v}")
        pid, epoch = p.transactional_producer(peer, tid)
        peer.call(f"v{v}", K.ADD_OFFSETS_TO_TXN, v, {"transactional_id": tid, "producer_id": pid,
                                                     "producer_epoch": epoch, "group_id": peer.name("g")})


@api(K.END_TXN)
def _end_txn(peer, versions):
    for v in versions:
        tid = peer.name(f"x{v}")
        pid, epoch = p.transactional_producer(peer, tid)
        peer.call(f"v{v} nothing to end", K.END_TXN, v, {"transactional_id": tid, "producer_id": pid,
                                                         "producer_epoch": epoch, "committed": True})
        peer.call(f"v{v} wrong producer", K.END_TXN, v, {"transactional_id": tid, "producer_id": pid + 100,
                                                         "producer_epoch": epoch, "committed": False})


@api(K.WRITE_TXN_MARKERS)
def _write_txn_markers(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        peer.call(f"v{v}", K.WRITE_TXN_MARKERS, v, {"markers": [{
            "producer_id": 4242, "producer_epoch": 0, "transaction_result": True, "coordinator_epoch": 0,
            "topics": [{"name": topic, "partition_indexes": [0]}]}]})


@api(K.TXN_OFFSET_COMMIT)
def _txn_offset_commit(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        tid, group = peer.name(f"x{v}"), peer.name(f"g{v}")
        pid, epoch = p.transactional_producer(peer, tid)
        body = {"transactional_id": tid, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
                "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 3,
                                                           "committed_metadata": ""}]}]}
        peer.call(f"v{v} not added", K.TXN_OFFSET_COMMIT, v, body)
        p.find_coordinator(peer, group)
        peer.send(K.ADD_OFFSETS_TO_TXN, 4, {"transactional_id": tid, "producer_id": pid,
                                            "producer_epoch": epoch, "group_id": group})
        peer.until(K.TXN_OFFSET_COMMIT, v, body, lambda a: a.topics[0].partitions[0].error_code not in p.LOADING,
                   label=f"v{v}")


@api(K.DESCRIBE_ACLS)
def _describe_acls(peer, versions):
    for v in versions:
        peer.call(f"v{v}", K.DESCRIBE_ACLS, v, {"resource_type_filter": 1, "resource_name_filter": None,
                                                "pattern_type_filter": 1, "principal_filter": None,
                                                "host_filter": None, "operation": 1, "permission_type": 1})


def _acl(peer, v):
    return {"resource_type": 2, "resource_name": peer.name(f"t{v}"), "resource_pattern_type": 3,
            "principal": "User:alice", "host": "*", "operation": 3, "permission_type": 3}


@api(K.CREATE_ACLS)
def _create_acls(peer, versions):
    for v in versions:
        peer.call(f"v{v}", K.CREATE_ACLS, v, {"creations": [_acl(peer, v)]})


@api(K.DELETE_ACLS)
def _delete_acls(peer, versions):
    for v in versions:
        peer.call(f"v{v}", K.DELETE_ACLS, v, {"filters": [{
            "resource_type_filter": 2, "resource_name_filter": peer.name(f"t{v}"), "pattern_type_filter": 3,
            "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}]})


@api(K.DESCRIBE_CONFIGS)
def _describe_configs(peer, versions):
    topic, group = peer.name("t"), peer.name("g")
    p.create_topic(peer, topic, configs={"retention.ms": "123456"})
    for v in versions:
        peer.call(f"v{v} topic", K.DESCRIBE_CONFIGS, v, {"include_synonyms": True, "include_documentation": False,
                                                         "resources": [{"resource_type": 2, "resource_name": topic,
                                                                        "configuration_keys": None}]})
        peer.call(f"v{v} broker", K.DESCRIBE_CONFIGS, v, {"include_synonyms": False, "resources": [
            {"resource_type": 4, "resource_name": "0", "configuration_keys": [
                "group.initial.rebalance.delay.ms", "num.partitions", "log.retention.hours", "message.max.bytes",
                "auto.create.topics.enable", "offsets.topic.num.partitions", "group.max.session.timeout.ms"]}]})
        peer.call(f"v{v} group", K.DESCRIBE_CONFIGS, v, {"include_synonyms": False, "resources": [
            {"resource_type": 32, "resource_name": group, "configuration_keys": None}]})
        peer.call(f"v{v} unknown topic", K.DESCRIBE_CONFIGS, v, {"resources": [
            {"resource_type": 2, "resource_name": peer.name("nope"), "configuration_keys": None}]})


@api(K.ALTER_CONFIGS)
def _alter_configs(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        peer.call(f"v{v}", K.ALTER_CONFIGS, v, {"validate_only": False, "resources": [
            {"resource_type": 2, "resource_name": topic, "configs": [{"name": "retention.ms", "value": f"{v + 1}000"}]},
            {"resource_type": 2, "resource_name": peer.name("nope"), "configs": []}]})
        peer.call(f"v{v} bad value", K.ALTER_CONFIGS, v, {"validate_only": True, "resources": [
            {"resource_type": 2, "resource_name": topic, "configs": [{"name": "retention.ms", "value": "soon"}]}]})


@api(K.INCREMENTAL_ALTER_CONFIGS)
def _incremental_alter_configs(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        peer.call(f"v{v}", K.INCREMENTAL_ALTER_CONFIGS, v, {"validate_only": False, "resources": [
            {"resource_type": 2, "resource_name": topic, "configs": [
                {"name": "retention.ms", "config_operation": 0, "value": "99000"}]}]})
        peer.call(f"v{v} unknown config", K.INCREMENTAL_ALTER_CONFIGS, v, {"validate_only": False, "resources": [
            {"resource_type": 2, "resource_name": topic, "configs": [
                {"name": "no.such.config", "config_operation": 0, "value": "1"}]}]})


@api(K.ALTER_REPLICA_LOG_DIRS)
def _alter_replica_log_dirs(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        peer.call(f"v{v}", K.ALTER_REPLICA_LOG_DIRS, v, {"dirs": [
            {"path": "/no/such/dir", "topics": [{"name": topic, "partitions": [0]}]}]})


@api(K.DESCRIBE_LOG_DIRS)
def _describe_log_dirs(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    p.produce(peer, topic)
    for v in versions:
        peer.call(f"v{v}", K.DESCRIBE_LOG_DIRS, v, {"topics": [{"topic": topic, "partitions": [0]}]})


@api(K.CREATE_PARTITIONS)
def _create_partitions(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        peer.call(f"v{v}", K.CREATE_PARTITIONS, v, {"timeout_ms": 30000, "validate_only": False, "topics": [
            {"name": topic, "count": v + 2, "assignments": None},
            {"name": peer.name("nope"), "count": 3, "assignments": None}]})


@api(K.CREATE_DELEGATION_TOKEN)
def _create_delegation_token(peer, versions):
    at_each(peer, versions, K.CREATE_DELEGATION_TOKEN, {"renewers": [], "max_lifetime_ms": -1,
                                                        "owner_principal_type": None, "owner_principal_name": None})


@api(K.RENEW_DELEGATION_TOKEN)
def _renew_delegation_token(peer, versions):
    at_each(peer, versions, K.RENEW_DELEGATION_TOKEN, {"hmac": b"not-a-token", "renew_period_ms": 1000})


@api(K.EXPIRE_DELEGATION_TOKEN)
def _expire_delegation_token(peer, versions):
    at_each(peer, versions, K.EXPIRE_DELEGATION_TOKEN, {"hmac": b"not-a-token", "expiry_time_period_ms": 1000})


@api(K.DESCRIBE_DELEGATION_TOKEN)
def _describe_delegation_token(peer, versions):
    at_each(peer, versions, K.DESCRIBE_DELEGATION_TOKEN, {"owners": None})


@api(K.DELETE_GROUPS)
def _delete_groups(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        group = peer.name(f"g{v}")
        p.commit(peer, group, topic)
        peer.call(f"v{v}", K.DELETE_GROUPS, v, {"groups_names": [group, peer.name("nope")]})


@api(K.ELECT_LEADERS)
def _elect_leaders(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        peer.call(f"v{v}", K.ELECT_LEADERS, v, {"election_type": 0, "timeout_ms": 30000, "topic_partitions": [
            {"topic": topic, "partitions": [0, 5]}]})


@api(K.ALTER_PARTITION_REASSIGNMENTS)
def _alter_partition_reassignments(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        peer.call(f"v{v}", K.ALTER_PARTITION_REASSIGNMENTS, v, {"timeout_ms": 30000, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "replicas": [0]},
                                           {"partition_index": 0, "replicas": None},
                                           {"partition_index": 4, "replicas": [0]}]}]})


@api(K.LIST_PARTITION_REASSIGNMENTS)
def _list_partition_reassignments(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    at_each(peer, versions, K.LIST_PARTITION_REASSIGNMENTS, {"timeout_ms": 30000, "topics": [
        {"name": topic, "partition_indexes": [0, 3]}]})


@api(K.OFFSET_DELETE)
def _offset_delete(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic, 2)
    for v in versions:
        group = peer.name(f"g{v}")
        p.commit(peer, group, topic)
        peer.call(f"v{v}", K.OFFSET_DELETE, v, {"group_id": group, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0}, {"partition_index": 1}]}]})
        peer.call(f"v{v} unknown group", K.OFFSET_DELETE, v, {"group_id": peer.name("nope"), "topics": [
            {"name": topic, "partitions": [{"partition_index": 0}]}]})


@api(K.DESCRIBE_CLIENT_QUOTAS)
def _describe_client_quotas(peer, versions):
    user = peer.name("u")
    peer.send(K.ALTER_CLIENT_QUOTAS, 1, {"validate_only": False, "entries": [{
        "entity": [{"entity_type": "user", "entity_name": user}],
        "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}]})
    for v in versions:
        peer.until(K.DESCRIBE_CLIENT_QUOTAS, v, {"strict": True, "components": [
            {"entity_type": "user", "match_type": 0, "match": user}]}, lambda a: a.entries, timeout_s=10,
            label=f"v{v}")


@api(K.ALTER_CLIENT_QUOTAS)
def _alter_client_quotas(peer, versions):
    for v in versions:
        peer.call(f"v{v}", K.ALTER_CLIENT_QUOTAS, v, {"validate_only": False, "entries": [{
            "entity": [{"entity_type": "client-id", "entity_name": peer.name(f"c{v}")}],
            "ops": [{"key": "consumer_byte_rate", "value": 2048.0, "remove": False}]}]})
        peer.call(f"v{v} unknown key", K.ALTER_CLIENT_QUOTAS, v, {"validate_only": True, "entries": [{
            "entity": [{"entity_type": "user", "entity_name": "x"}],
            "ops": [{"key": "no_such_quota", "value": 1.0, "remove": False}]}]})


@api(K.DESCRIBE_USER_SCRAM_CREDENTIALS)
def _describe_user_scram_credentials(peer, versions):
    at_each(peer, versions, K.DESCRIBE_USER_SCRAM_CREDENTIALS, {"users": [{"name": peer.name("nobody")}]})


@api(K.ALTER_USER_SCRAM_CREDENTIALS)
def _alter_user_scram_credentials(peer, versions):
    for v in versions:
        peer.call(f"v{v}", K.ALTER_USER_SCRAM_CREDENTIALS, v, {"deletions": [], "upsertions": [{
            "name": peer.name(f"u{v}"), "mechanism": 1, "iterations": 4096, "salt": b"salt" * 4,
            "salted_password": b"p" * 32}]})
        peer.call(f"v{v} delete unknown", K.ALTER_USER_SCRAM_CREDENTIALS, v, {"upsertions": [], "deletions": [
            {"name": peer.name("nobody"), "mechanism": 1}]})


@api(K.DESCRIBE_QUORUM)
def _describe_quorum(peer, versions):
    at_each(peer, versions, K.DESCRIBE_QUORUM, {"topics": [{"topic_name": "__cluster_metadata",
                                                             "partitions": [{"partition_index": 0}]}]})


@api(K.UPDATE_FEATURES)
def _update_features(peer, versions):
    at_each(peer, versions, K.UPDATE_FEATURES, {"timeout_ms": 30000, "validate_only": True, "feature_updates": [
        {"feature": "group.version", "max_version_level": 1, "allow_downgrade": False, "upgrade_type": 1},
        {"feature": "no.such.feature", "max_version_level": 1, "upgrade_type": 1}]})


@api(K.DESCRIBE_CLUSTER)
def _describe_cluster(peer, versions):
    at_each(peer, versions, K.DESCRIBE_CLUSTER, {"include_cluster_authorized_operations": True,
                                                 "endpoint_type": 1, "include_fenced_brokers": True})


@api(K.DESCRIBE_PRODUCERS)
def _describe_producers(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    pid, epoch = p.idempotent_producer(peer)
    p.produce(peer, topic, producer_id=pid, producer_epoch=epoch, sequence=0)
    at_each(peer, versions, K.DESCRIBE_PRODUCERS, {"topics": [{"name": topic, "partition_indexes": [0, 3]}]})


@api(K.DESCRIBE_TRANSACTIONS)
def _describe_transactions(peer, versions):
    tid = peer.name("x")
    p.transactional_producer(peer, tid)
    at_each(peer, versions, K.DESCRIBE_TRANSACTIONS, {"transactional_ids": [tid, peer.name("nope")]})


@api(K.LIST_TRANSACTIONS)
def _list_transactions(peer, versions):
    tid = peer.name("x")
    pid, _ = p.transactional_producer(peer, tid)
    at_each(peer, versions, K.LIST_TRANSACTIONS, {"state_filters": [], "producer_id_filters": [pid],
                                                  "duration_filter": -1, "transactional_id_pattern": None})


@api(K.UNREGISTER_BROKER)
def _unregister_broker(peer, versions):
    at_each(peer, versions, K.UNREGISTER_BROKER, {"broker_id": 77})


@api(K.CONSUMER_GROUP_HEARTBEAT)
def _consumer_group_heartbeat(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic, 2)
    for v in versions:
        group = peer.name(f"g{v}")
        p.find_coordinator(peer, group)
        member = str(uuid.uuid4()) if v >= 1 else ""
        joined = peer.until(K.CONSUMER_GROUP_HEARTBEAT, v, _heartbeat_848(group, member, 0, [topic]),
                            lambda a: a.error_code not in p.LOADING, label=f"v{v} join")
        peer.call(f"v{v} fenced", K.CONSUMER_GROUP_HEARTBEAT, v,
                  _heartbeat_848(group, joined.member_id, joined.member_epoch + 5, None))
        peer.call(f"v{v} leave", K.CONSUMER_GROUP_HEARTBEAT, v,
                  _heartbeat_848(group, joined.member_id, -1, None))


@api(K.CONSUMER_GROUP_DESCRIBE)
def _consumer_group_describe(peer, versions):
    topic, group = peer.name("t"), peer.name("g")
    p.create_topic(peer, topic, 2)
    p.find_coordinator(peer, group)
    peer.until(K.CONSUMER_GROUP_HEARTBEAT, 1, _heartbeat_848(group, str(uuid.uuid4()), 0, [topic]),
               lambda a: a.error_code not in p.LOADING)
    at_each(peer, versions, K.CONSUMER_GROUP_DESCRIBE, {"group_ids": [group, peer.name("nope")],
                                                        "include_authorized_operations": True})


@api(K.GET_TELEMETRY_SUBSCRIPTIONS)
def _get_telemetry_subscriptions(peer, versions):
    at_each(peer, versions, K.GET_TELEMETRY_SUBSCRIPTIONS, {"client_instance_id": uuid.UUID(int=0).bytes})


@api(K.PUSH_TELEMETRY)
def _push_telemetry(peer, versions):
    at_each(peer, versions, K.PUSH_TELEMETRY, {"client_instance_id": uuid.UUID(int=0).bytes, "subscription_id": 1,
                                               "terminating": False, "compression_type": 0, "metrics": b""})


@api(K.LIST_CONFIG_RESOURCES)
def _list_config_resources(peer, versions):
    for v in versions:
        answer = peer.send(K.LIST_CONFIG_RESOURCES, v, {"resource_types": [16, 4]})
        if isinstance(answer, dict):  # only the broker's own and no scenario's
            answer["config_resources"] = [r for r in answer["config_resources"] if r["resource_type"] != 2]
        peer.exchanges.append(_exchange(f"v{v}", K.LIST_CONFIG_RESOURCES, v, answer))


@api(K.DESCRIBE_TOPIC_PARTITIONS)
def _describe_topic_partitions(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic, 3)
    for v in versions:
        peer.call(f"v{v}", K.DESCRIBE_TOPIC_PARTITIONS, v, {"topics": [{"name": topic}, {"name": peer.name("nope")}],
                                                            "response_partition_limit": 2, "cursor": None})


@api(K.ADD_RAFT_VOTER)
def _add_raft_voter(peer, versions):
    at_each(peer, versions, K.ADD_RAFT_VOTER, {"cluster_id": None, "timeout_ms": 5000, "voter_id": 9,
                                               "voter_directory_id": uuid.UUID(int=9).bytes, "listeners": [
                                                   {"name": "CONTROLLER", "host": "127.0.0.1", "port": 1}]})


@api(K.REMOVE_RAFT_VOTER)
def _remove_raft_voter(peer, versions):
    at_each(peer, versions, K.REMOVE_RAFT_VOTER, {"cluster_id": None, "voter_id": 9,
                                                  "voter_directory_id": uuid.UUID(int=9).bytes})


@api(K.SHARE_GROUP_HEARTBEAT)
def _share_group_heartbeat(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        group = peer.name(f"g{v}")
        p.find_coordinator(peer, group)
        member = str(uuid.uuid4())
        joined = peer.until(K.SHARE_GROUP_HEARTBEAT, v, _share_heartbeat(group, member, 0, [topic]),
                            lambda a: a.error_code not in p.LOADING, label=f"v{v} join")
        peer.call(f"v{v} fenced", K.SHARE_GROUP_HEARTBEAT, v, _share_heartbeat(group, member, joined.member_epoch + 4,
                                                                                None))
        peer.call(f"v{v} leave", K.SHARE_GROUP_HEARTBEAT, v, _share_heartbeat(group, member, -1, None))


@api(K.SHARE_GROUP_DESCRIBE)
def _share_group_describe(peer, versions):
    topic, group = peer.name("t"), peer.name("g")
    p.create_topic(peer, topic)
    p.find_coordinator(peer, group)
    peer.until(K.SHARE_GROUP_HEARTBEAT, 1, _share_heartbeat(group, str(uuid.uuid4()), 0, [topic]),
               lambda a: a.error_code not in p.LOADING)
    at_each(peer, versions, K.SHARE_GROUP_DESCRIBE, {"group_ids": [group, peer.name("nope")],
                                                     "include_authorized_operations": True})


def _share_member(peer, group, topic):
    p.find_coordinator(peer, group)
    member = str(uuid.uuid4())
    peer.until(K.SHARE_GROUP_HEARTBEAT, 1, _share_heartbeat(group, member, 0, [topic]),
               lambda a: a.error_code not in p.LOADING and a.assignment is not None)
    return member


@api(K.SHARE_FETCH)
def _share_fetch(peer, versions):
    for v in versions:
        topic, group = peer.name(f"t{v}"), peer.name(f"g{v}")
        p.create_topic(peer, topic)
        p.produce(peer, topic, count=3)
        member = _share_member(peer, group, topic)
        tid = p.topic_id(peer, topic)
        body = {"group_id": group, "member_id": member, "share_session_epoch": 0, "max_wait_ms": 0, "min_bytes": 1,
                "max_bytes": 1 << 20, "max_records": 500, "batch_size": 500,
                "topics": [{"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": []}]}],
                "forgotten_topics_data": []}
        peer.call(f"v{v} wrong epoch", K.SHARE_FETCH, v, dict(body, share_session_epoch=3))
        peer.call(f"v{v} unknown member", K.SHARE_FETCH, v, dict(body, member_id=str(uuid.uuid4())))


@api(K.SHARE_ACKNOWLEDGE)
def _share_acknowledge(peer, versions):
    for v in versions:
        topic, group = peer.name(f"t{v}"), peer.name(f"g{v}")
        p.create_topic(peer, topic)
        member = _share_member(peer, group, topic)
        tid = p.topic_id(peer, topic)
        peer.call(f"v{v} no session", K.SHARE_ACKNOWLEDGE, v, {
            "group_id": group, "member_id": member, "share_session_epoch": 1, "topics": [
                {"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
                    {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]})


@api(K.DESCRIBE_SHARE_GROUP_OFFSETS)
def _describe_share_group_offsets(peer, versions):
    topic, group = peer.name("t"), peer.name("g")
    p.create_topic(peer, topic)
    p.find_coordinator(peer, group)
    at_each(peer, versions, K.DESCRIBE_SHARE_GROUP_OFFSETS, {"groups": [
        {"group_id": group, "topics": [{"topic_name": topic, "partitions": [0]}]},
        {"group_id": peer.name("nope"), "topics": None}]})


@api(K.ALTER_SHARE_GROUP_OFFSETS)
def _alter_share_group_offsets(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        group = peer.name(f"g{v}")
        p.find_coordinator(peer, group)
        # Kafka's group coordinator learns of the new topic from its metadata image a moment after
        # CreateTopics answers (UNKNOWN_TOPIC_OR_PARTITION until then): ask until it knows it.
        peer.until(K.ALTER_SHARE_GROUP_OFFSETS, v, {"group_id": group, "topics": [
            {"topic_name": topic, "partitions": [{"partition_index": 0, "start_offset": 0}]}]},
            lambda a: a.error_code not in p.LOADING and all(
                q.error_code != 3 for t in a.responses for q in t.partitions), label=f"v{v} new group")


@api(K.DELETE_SHARE_GROUP_OFFSETS)
def _delete_share_group_offsets(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic)
    for v in versions:
        group = peer.name(f"g{v}")
        p.find_coordinator(peer, group)
        peer.call(f"v{v} unknown group", K.DELETE_SHARE_GROUP_OFFSETS, v, {"group_id": group, "topics": [
            {"topic_name": topic}]})


@api(K.STREAMS_GROUP_HEARTBEAT)
def _streams_group_heartbeat(peer, versions):
    topic = peer.name("t")
    p.create_topic(peer, topic, 2)
    for v in versions:
        group = peer.name(f"g{v}")
        p.find_coordinator(peer, group)
        member = str(uuid.uuid4())
        joined = peer.until(K.STREAMS_GROUP_HEARTBEAT, v, _streams_heartbeat(group, member, 0, _topology(topic)),
                            lambda a: a.error_code not in p.LOADING, label=f"v{v} join")
        peer.call(f"v{v} fenced", K.STREAMS_GROUP_HEARTBEAT, v,
                  _streams_heartbeat(group, member, joined.member_epoch + 4))
        peer.call(f"v{v} leave", K.STREAMS_GROUP_HEARTBEAT, v, _streams_heartbeat(group, member, -1))


@api(K.STREAMS_GROUP_DESCRIBE)
def _streams_group_describe(peer, versions):
    topic, group = peer.name("t"), peer.name("g")
    p.create_topic(peer, topic, 2)
    p.find_coordinator(peer, group)
    peer.until(K.STREAMS_GROUP_HEARTBEAT, 0, _streams_heartbeat(group, str(uuid.uuid4()), 0, _topology(topic)),
               lambda a: a.error_code not in p.LOADING)
    at_each(peer, versions, K.STREAMS_GROUP_DESCRIBE, {"group_ids": [group, peer.name("nope")],
                                                       "include_authorized_operations": True})
    for v in versions:
        if v >= 1:
            peer.call(f"v{v} with the topology description", K.STREAMS_GROUP_DESCRIBE, v, {
                "group_ids": [group], "include_authorized_operations": False, "include_topology_description": True})


@api(K.STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE)
def _streams_group_topology_description_update(peer, versions):
    topic, group, member = peer.name("t"), peer.name("g"), str(uuid.uuid4())
    p.create_topic(peer, topic, 2)
    p.find_coordinator(peer, group)
    peer.until(K.STREAMS_GROUP_HEARTBEAT, 0, _streams_heartbeat(group, member, 0, _topology(topic)),
               lambda a: a.error_code not in p.LOADING)
    node = {"name": "KSTREAM-SOURCE-0000000000", "node_type": 1, "source_topics": [topic], "sink_topic": None,
            "stores": [], "successors": []}
    at_each(peer, versions, K.STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE, {
        "group_id": group, "member_id": member, "topology_epoch": 1,
        "topology_description": {"subtopologies": [{"subtopology_id": "0", "nodes": [node]}], "global_stores": []}})


def test_every_api_kafkaemu_implements_has_a_scenario():
    assert set(HANDLERS) - set(SCENARIOS) == set()


@pytest.mark.parametrize("key", sorted(SCENARIOS), ids=lambda k: api_name(k))
def test_api_at_every_version(differential, key):
    versions = differential.versions(key) or range(*_one_side(differential, key))
    scenario = SCENARIOS[key]
    differential.check(lambda peer: scenario(peer, versions), f"api-{api_name(key).lower()}")


def _one_side(differential, key):
    """The versions of the one broker that advertises the API; for one neither advertises (the
    telemetry APIs without a telemetry reporter, which both still answer), kafkaemu's handler's."""
    span = differential.advertised["kafka"].get(key) or differential.advertised["kafkaemu"].get(key) \
        or HANDLERS[key][1:]
    return span[0], span[1] + 1
