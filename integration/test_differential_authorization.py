"""Authorization, sent to Apache Kafka 4.4.0 and to kafkaemu with the authorizer on and compared field
by field (integration/differential/): both brokers run StandardAuthorizer behind a SASL/PLAIN listener
with the same users, ``admin`` their super user. Each scenario sets up as admin, grants ``alice`` some
ACLs (partial: enough for some requests of the group, not all), and sends the same requests as ``bob``
(no ACL) and as ``alice``; the authorized-operations bitfields are asked for as all three.

One scenario per API group: data path (produce, fetch, list offsets, metadata with auto-create), topic
admin and configs, classic groups, consumer groups (KIP-848), share groups, streams groups,
transactions, ACLs and the cluster APIs, and the authorized-operations fields."""
from __future__ import annotations

import time
import uuid

import pytest

from kafkaemu.protocol.api_keys import ApiKey as K
from kafkaemu.protocol.errors import ErrorCode as E

from .differential import prepare as p
from .differential.fixtures import differential_pair

# resource types, pattern types, operations, permission (Kafka's AclOperation / ResourceType codes)
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5
LITERAL, PREFIXED = 3, 4
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = \
    3, 4, 5, 6, 7, 8, 10, 11, 12
ALLOW = 3
PRINCIPALS = ("bob", "alice")


@pytest.fixture(scope="module")
def secured():
    """This module's own Kafka and kafkaemu, both authorizing (the session's pair does not)."""
    with differential_pair(authorizer=True) as pair:
        yield pair


def grant(peer, *acls):
    """ACLs for alice, as admin, once the broker's authorizer shows them (Kafka's controller
    propagates them to its broker asynchronously)."""
    creations = [{"resource_type": kind, "resource_name": name, "resource_pattern_type": pattern,
                  "principal": "User:alice", "host": "*", "operation": operation, "permission_type": ALLOW}
                 for kind, name, operation, *rest in acls for pattern in [rest[0] if rest else LITERAL]]
    answer = peer.send(K.CREATE_ACLS, 3, {"creations": creations})
    assert all(r.error_code == E.NONE for r in answer.results), answer
    deadline = time.monotonic() + 30
    while True:
        shown = peer.send(K.DESCRIBE_ACLS, 3, {"resource_type_filter": 1, "resource_name_filter": None,
                                               "pattern_type_filter": 1, "principal_filter": "User:alice",
                                               "host_filter": None, "operation": 1, "permission_type": 1})
        have = {(r.resource_type, r.resource_name, r.pattern_type, a.operation)
                for r in shown.resources for a in r.acls}
        if all((c["resource_type"], c["resource_name"], c["resource_pattern_type"], c["operation"]) in have
               for c in creations):
            return
        assert time.monotonic() < deadline, f"{peer.broker}: ACLs not shown: {shown}"
        time.sleep(0.1)


def as_each(peer, send):
    """``send(label_prefix, sock)`` as bob, then as alice."""
    for user in PRINCIPALS:
        send(user, peer.connect(user))


def test_data_path(secured):
    def scenario(peer):
        t, u = peer.name("t"), peer.name("u")
        p.create_topic(peer, t, 2)
        p.create_topic(peer, u)
        p.produce(peer, t, count=2)
        p.produce(peer, u, count=2)
        # alice reads t and may write u; she may only describe the prefix "auto-" (no CREATE)
        grant(peer, (TOPIC, t, READ), (TOPIC, u, WRITE), (TOPIC, peer.name("auto-"), DESCRIBE, PREFIXED))

        def send(who, sock):
            peer.call(f"{who}: metadata, auto-create", K.METADATA, 12, {
                "topics": [{"name": t}, {"name": u}, {"name": peer.name("auto-x")}, {"name": peer.name("nope")}],
                "allow_auto_topic_creation": True, "include_topic_authorized_operations": True}, sock=sock)
            peer.call(f"{who}: metadata, every topic", K.METADATA, 12, {
                "topics": None, "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": True}, sock=sock)
            peer.call(f"{who}: produce", K.PRODUCE, 9, {"acks": -1, "timeout_ms": 5000, "topic_data": [
                {"name": name, "partition_data": [{"index": 0, "records": p.batch(1)}]}
                for name in (t, u, peer.name("nope"))]}, sock=sock)
            peer.call(f"{who}: produce acks 0", K.PRODUCE, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
                {"name": t, "partition_data": [{"index": 1, "records": p.batch(1)}]}]}, sock=sock)
            peer.call(f"{who}: fetch", K.FETCH, 12, {
                "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0,
                "session_epoch": -1, "topics": [{"topic": name, "partitions": [
                    {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}
                    for name in (t, u, peer.name("nope"))], "forgotten_topics_data": [], "rack_id": ""}, sock=sock)
            peer.call(f"{who}: list offsets", K.LIST_OFFSETS, 9, {"replica_id": -1, "isolation_level": 0, "topics": [
                {"name": name, "partitions": [{"partition_index": 0, "timestamp": -1}]}
                for name in (t, u, peer.name("nope"))]}, sock=sock)
            peer.call(f"{who}: offsets for leader epoch", K.OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
                {"topic": name, "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}
                for name in (t, u)]}, sock=sock)
            peer.call(f"{who}: describe producers", K.DESCRIBE_PRODUCERS, 0, {"topics": [
                {"name": name, "partition_indexes": [0]} for name in (t, u)]}, sock=sock)
            # Kafka's producer id manager may still be loading its first block of ids
            peer.until(K.INIT_PRODUCER_ID, 5, {"transactional_id": None, "transaction_timeout_ms": 60000},
                       lambda a: a.error_code not in p.LOADING, sock=sock, label=f"{who}: idempotent producer id")
        as_each(peer, send)
    secured.check(scenario, "auth-data-path")


def test_topic_admin_and_configs(secured):
    def scenario(peer):
        t, u = peer.name("t"), peer.name("u")
        p.create_topic(peer, t, 2, configs={"retention.ms": "123456"})
        p.create_topic(peer, u)
        p.produce(peer, t, count=3)
        # alice may create topics named "new-...", alter t and describe its configs, delete u
        grant(peer, (TOPIC, peer.name("new-"), CREATE, PREFIXED), (TOPIC, t, ALTER), (TOPIC, t, DESCRIBE_CONFIGS),
              (TOPIC, u, DELETE), (TOPIC, t, DELETE))

        def send(who, sock):
            peer.call(f"{who}: create", K.CREATE_TOPICS, 7, {"timeout_ms": 30000, "validate_only": True, "topics": [
                {"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
                 "configs": [{"name": "retention.ms", "value": "1000"}]}
                for name in (peer.name("new-1"), peer.name("other"))]}, sock=sock)
            peer.call(f"{who}: create partitions", K.CREATE_PARTITIONS, 3, {
                "timeout_ms": 5000, "validate_only": True, "topics": [
                    {"name": name, "count": 4, "assignments": None} for name in (t, u, peer.name("nope"))]}, sock=sock)
            peer.call(f"{who}: delete records", K.DELETE_RECORDS, 2, {"timeout_ms": 5000, "topics": [
                {"name": name, "partitions": [{"partition_index": 0, "offset": 1}]} for name in (t, u)]}, sock=sock)
            peer.call(f"{who}: describe configs", K.DESCRIBE_CONFIGS, 4, {
                "include_synonyms": False, "include_documentation": False, "resources": [
                    {"resource_type": 2, "resource_name": t, "configuration_keys": ["retention.ms", "cleanup.policy"]},
                    {"resource_type": 2, "resource_name": u, "configuration_keys": None},
                    {"resource_type": 4, "resource_name": "0", "configuration_keys": ["num.partitions"]},
                    {"resource_type": 32, "resource_name": peer.name("g"), "configuration_keys": None}]}, sock=sock)
            peer.call(f"{who}: alter configs", K.ALTER_CONFIGS, 2, {"validate_only": True, "resources": [
                {"resource_type": 2, "resource_name": name, "configs": [{"name": "retention.ms", "value": "5000"}]}
                for name in (t, u)] + [{"resource_type": 4, "resource_name": "", "configs": []}]}, sock=sock)
            peer.call(f"{who}: incremental alter configs", K.INCREMENTAL_ALTER_CONFIGS, 1, {
                "validate_only": True, "resources": [
                    {"resource_type": 2, "resource_name": name, "configs": [
                        {"name": "retention.ms", "config_operation": 0, "value": "5000"}]} for name in (t, u)] + [
                    {"resource_type": 32, "resource_name": peer.name("g"), "configs": [
                        {"name": "consumer.session.timeout.ms", "config_operation": 0, "value": "50000"}]}]},
                sock=sock)
            peer.call(f"{who}: describe topic partitions", K.DESCRIBE_TOPIC_PARTITIONS, 0, {
                "topics": [{"name": t}, {"name": u}, {"name": peer.name("nope")}],
                "response_partition_limit": 10, "cursor": None}, sock=sock)
            peer.call(f"{who}: list partition reassignments", K.LIST_PARTITION_REASSIGNMENTS, 0, {
                "timeout_ms": 5000, "topics": [{"name": t, "partition_indexes": [0]}]}, sock=sock)
            peer.call(f"{who}: alter partition reassignments", K.ALTER_PARTITION_REASSIGNMENTS, 0, {
                "timeout_ms": 5000, "topics": [{"name": t, "partitions": [{"partition_index": 0,
                                                                             "replicas": None}]}]}, sock=sock)
            peer.call(f"{who}: elect leaders", K.ELECT_LEADERS, 2, {"election_type": 0, "timeout_ms": 5000,
                                                                     "topic_partitions": [
                                                                         {"topic": t, "partitions": [0]}]}, sock=sock)
            peer.call(f"{who}: describe log dirs", K.DESCRIBE_LOG_DIRS, 4, {"topics": [
                {"topic": t, "partitions": [0]}]}, sock=sock)
            # last: deleting what alice may delete (u), and t, which she may delete by name only
            peer.call(f"{who}: delete topics", K.DELETE_TOPICS, 6, {"timeout_ms": 30000, "topics": [
                {"name": name} for name in (u, peer.name("nope"))]}, sock=sock)
        as_each(peer, send)
    secured.check(scenario, "auth-topic-admin")


def _join(group, member=""):
    return {"group_id": group, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": member,
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b"m"}], "reason": None}


def test_classic_groups(secured):
    def scenario(peer):
        t, u, g, h = peer.name("t"), peer.name("u"), peer.name("g"), peer.name("h")
        p.create_topic(peer, t)
        p.create_topic(peer, u)
        p.commit(peer, g, t, 2)
        p.commit(peer, h, t, 2)
        grant(peer, (GROUP, g, READ), (TOPIC, t, READ), (GROUP, h, DESCRIBE))

        def send(who, sock):
            p.find_coordinator(peer, g)
            join = peer.call(f"{who}: join", K.JOIN_GROUP, 9, _join(g), sock=sock)
            peer.call(f"{who}: join h", K.JOIN_GROUP, 9, _join(h), sock=sock)
            member = join.member_id
            if join.error_code == E.MEMBER_ID_REQUIRED:
                join = peer.until(K.JOIN_GROUP, 9, _join(g, member), lambda a: a.error_code not in p.LOADING,
                                  sock=sock, label=f"{who}: join with id")
            peer.call(f"{who}: sync", K.SYNC_GROUP, 5, {
                "group_id": g, "generation_id": join.generation_id, "member_id": member,
                "protocol_type": "consumer", "protocol_name": "range",
                "assignments": [{"member_id": member, "assignment": b"a"}] if member else []}, sock=sock)
            peer.call(f"{who}: heartbeat", K.HEARTBEAT, 4, {"group_id": g, "generation_id": join.generation_id,
                                                           "member_id": member}, sock=sock)
            peer.call(f"{who}: commit", K.OFFSET_COMMIT, 9, {
                "group_id": g, "generation_id_or_member_epoch": -1, "member_id": "", "topics": [
                    {"name": name, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                   "committed_metadata": who}]} for name in (t, u)]}, sock=sock)
            peer.call(f"{who}: commit to h", K.OFFSET_COMMIT, 9, {
                "group_id": h, "generation_id_or_member_epoch": -1, "member_id": "", "topics": [
                    {"name": t, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                "committed_metadata": who}]}]}, sock=sock)
            peer.call(f"{who}: offset fetch", K.OFFSET_FETCH, 9, {"groups": [
                {"group_id": g, "member_id": None, "member_epoch": -1, "topics": None},
                {"group_id": h, "member_id": None, "member_epoch": -1,
                 "topics": [{"name": t, "partition_indexes": [0]}, {"name": u, "partition_indexes": [0]}]}],
                "require_stable": False}, sock=sock)
            peer.call(f"{who}: describe", K.DESCRIBE_GROUPS, 5, {"groups": [g, h, peer.name("nope")],
                                                                 "include_authorized_operations": True}, sock=sock)
            groups = peer.send(K.LIST_GROUPS, 5, {"states_filter": [], "types_filter": []}, sock=sock)
            groups["groups"] = [x for x in groups["groups"] if x["group_id"].startswith(peer.name())]
            peer.exchanges.append(type(peer.exchanges[-1])(f"{who}: list groups", K.LIST_GROUPS, 5, groups))
            peer.call(f"{who}: leave", K.LEAVE_GROUP, 5, {"group_id": g, "members": [
                {"member_id": member, "group_instance_id": None, "reason": None}]}, sock=sock)
            peer.call(f"{who}: offset delete", K.OFFSET_DELETE, 0, {"group_id": h, "topics": [
                {"name": t, "partitions": [{"partition_index": 0}]}]}, sock=sock)
            peer.call(f"{who}: delete groups", K.DELETE_GROUPS, 2, {"groups_names": [g, h, peer.name("nope")]},
                      sock=sock)
        as_each(peer, send)
    secured.check(scenario, "auth-classic")


def test_consumer_groups(secured):
    def scenario(peer):
        t, u, g, h = peer.name("t"), peer.name("u"), peer.name("g"), peer.name("h")
        p.create_topic(peer, t, 2)
        p.create_topic(peer, u)
        p.find_coordinator(peer, g)
        p.find_coordinator(peer, h)
        # an admin member in h, so that it exists to be described
        peer.until(K.CONSUMER_GROUP_HEARTBEAT, 1, p.heartbeat_848(h, str(uuid.uuid4()), 0, [t]),
                   lambda a: a.error_code not in p.LOADING)
        grant(peer, (GROUP, g, READ), (TOPIC, t, DESCRIBE), (GROUP, h, DESCRIBE))

        def send(who, sock):
            member = str(uuid.uuid4())
            peer.call(f"{who}: join subscribed to t and u", K.CONSUMER_GROUP_HEARTBEAT, 1,
                      p.heartbeat_848(g, member, 0, [t, u]), sock=sock)
            joined = peer.call(f"{who}: join subscribed to t", K.CONSUMER_GROUP_HEARTBEAT, 1,
                               p.heartbeat_848(g, str(uuid.uuid4()), 0, [t]), sock=sock)
            peer.call(f"{who}: join h", K.CONSUMER_GROUP_HEARTBEAT, 1,
                      p.heartbeat_848(h, str(uuid.uuid4()), 0, [t]), sock=sock)
            peer.call(f"{who}: describe", K.CONSUMER_GROUP_DESCRIBE, 1, {
                "group_ids": [h, peer.name("nope")], "include_authorized_operations": True}, sock=sock)
            if joined.error_code == E.NONE:
                peer.send(K.CONSUMER_GROUP_HEARTBEAT, 1, p.heartbeat_848(g, joined.member_id, -1, None), sock=sock)
        as_each(peer, send)
    secured.check(scenario, "auth-consumer")


def _share_fetch(group, member, topic_id, epoch=0):
    return {"group_id": group, "member_id": member, "share_session_epoch": epoch, "max_wait_ms": 0,
            "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 500, "batch_size": 500,
            "topics": [{"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": []}]}],
            "forgotten_topics_data": []}


def test_share_groups(secured):
    def scenario(peer):
        t, u, g, h = peer.name("t"), peer.name("u"), peer.name("g"), peer.name("h")
        p.create_topic(peer, t)
        p.create_topic(peer, u)
        tid = p.topic_id(peer, t)
        p.find_coordinator(peer, g)
        p.find_coordinator(peer, h)
        peer.until(K.SHARE_GROUP_HEARTBEAT, 1, p.share_heartbeat(h, str(uuid.uuid4()), 0, [t]),
                   lambda a: a.error_code not in p.LOADING)
        grant(peer, (GROUP, g, READ), (TOPIC, t, READ), (GROUP, h, DESCRIBE))

        def send(who, sock):
            member = str(uuid.uuid4())
            peer.call(f"{who}: join subscribed to t and u", K.SHARE_GROUP_HEARTBEAT, 1,
                      p.share_heartbeat(g, str(uuid.uuid4()), 0, [t, u]), sock=sock)
            peer.call(f"{who}: join", K.SHARE_GROUP_HEARTBEAT, 1, p.share_heartbeat(g, member, 0, [t]), sock=sock)
            peer.call(f"{who}: join h", K.SHARE_GROUP_HEARTBEAT, 1,
                      p.share_heartbeat(h, str(uuid.uuid4()), 0, [t]), sock=sock)
            peer.call(f"{who}: share fetch in h", K.SHARE_FETCH, 1, _share_fetch(h, member, tid), sock=sock)
            peer.call(f"{who}: share acknowledge in h", K.SHARE_ACKNOWLEDGE, 1, {
                "group_id": h, "member_id": member, "share_session_epoch": 1, "topics": [
                    {"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
                        {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]}, sock=sock)
            peer.call(f"{who}: describe", K.SHARE_GROUP_DESCRIBE, 1, {
                "group_ids": [h, g, peer.name("nope")], "include_authorized_operations": True}, sock=sock)
            # once Kafka's share coordinator has initialized the group's partitions (asynchronously after
            # the joins; kafkaemu's are there at once): the all-topics answer lists them
            peer.until(K.DESCRIBE_SHARE_GROUP_OFFSETS, 1, {"groups": [
                {"group_id": h, "topics": [{"topic_name": t, "partitions": [0]}, {"topic_name": u, "partitions": [0]}]},
                {"group_id": g, "topics": None}]}, lambda a: all(x.error_code or x.topics for x in a.groups),
                sock=sock, label=f"{who}: describe offsets")
            peer.call(f"{who}: alter offsets", K.ALTER_SHARE_GROUP_OFFSETS, 0, {"group_id": h, "topics": [
                {"topic_name": t, "partitions": [{"partition_index": 0, "start_offset": 0}]}]}, sock=sock)
            peer.call(f"{who}: delete offsets", K.DELETE_SHARE_GROUP_OFFSETS, 0, {"group_id": h, "topics": [
                {"topic_name": t}]}, sock=sock)
            peer.send(K.SHARE_GROUP_HEARTBEAT, 1, p.share_heartbeat(g, member, -1, None), sock=sock)
        as_each(peer, send)
    secured.check(scenario, "auth-share")


def test_streams_groups(secured):
    def scenario(peer):
        t, g, h = peer.name("t"), peer.name("g"), peer.name("h")
        p.create_topic(peer, t, 2)
        p.find_coordinator(peer, g)
        p.find_coordinator(peer, h)
        peer.until(K.STREAMS_GROUP_HEARTBEAT, 0, p.streams_heartbeat(h, str(uuid.uuid4()), 0, p.topology(t)),
                   lambda a: a.error_code not in p.LOADING)
        grant(peer, (GROUP, g, READ), (GROUP, h, DESCRIBE))

        def send(who, sock):
            peer.call(f"{who}: join without DESCRIBE on the source topic", K.STREAMS_GROUP_HEARTBEAT, 0,
                      p.streams_heartbeat(g, str(uuid.uuid4()), 0, p.topology(t)), sock=sock)
            peer.call(f"{who}: join h", K.STREAMS_GROUP_HEARTBEAT, 0,
                      p.streams_heartbeat(h, str(uuid.uuid4()), 0, p.topology(t)), sock=sock)
            peer.call(f"{who}: describe", K.STREAMS_GROUP_DESCRIBE, 0, {
                "group_ids": [h, peer.name("nope")], "include_authorized_operations": True}, sock=sock)
        as_each(peer, send)
    secured.check(scenario, "auth-streams")


def test_transactions(secured):
    def scenario(peer):
        t, u, x, y, g = peer.name("t"), peer.name("u"), peer.name("x"), peer.name("y"), peer.name("g")
        p.create_topic(peer, t)
        p.create_topic(peer, u)
        pid, epoch = p.transactional_producer(peer, x)
        p.find_coordinator(peer, g)
        # alice may describe x but not write with it; write t; read g
        grant(peer, (TRANSACTIONAL_ID, x, DESCRIBE), (TOPIC, t, WRITE), (GROUP, g, READ))

        def send(who, sock):
            peer.call(f"{who}: init producer id", K.INIT_PRODUCER_ID, 5, {
                "transactional_id": x, "transaction_timeout_ms": 60000}, sock=sock)
            peer.call(f"{who}: add partitions", K.ADD_PARTITIONS_TO_TXN, 3, {
                "v3_and_below_transactional_id": x, "v3_and_below_producer_id": pid,
                "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [
                    {"name": t, "partitions": [0]}, {"name": u, "partitions": [0]}]}, sock=sock)
            peer.call(f"{who}: add partitions as a broker", K.ADD_PARTITIONS_TO_TXN, 5, {"transactions": [
                {"transactional_id": x, "producer_id": pid, "producer_epoch": epoch, "verify_only": True,
                 "topics": [{"name": t, "partitions": [0]}]}]}, sock=sock)
            peer.call(f"{who}: add offsets", K.ADD_OFFSETS_TO_TXN, 3, {
                "transactional_id": x, "producer_id": pid, "producer_epoch": epoch, "group_id": g}, sock=sock)
            peer.call(f"{who}: txn offset commit", K.TXN_OFFSET_COMMIT, 3, {
                "transactional_id": x, "group_id": g, "producer_id": pid, "producer_epoch": epoch,
                "generation_id": -1, "member_id": "", "group_instance_id": None, "topics": [
                    {"name": name, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                   "committed_metadata": ""}]} for name in (t, u)]}, sock=sock)
            peer.call(f"{who}: transactional produce", K.PRODUCE, 9, {
                "transactional_id": x, "acks": -1, "timeout_ms": 5000, "topic_data": [
                    {"name": t, "partition_data": [{"index": 0, "records": p.batch(
                        1, producer_id=pid, producer_epoch=epoch, sequence=0, transactional=True)}]}]}, sock=sock)
            peer.call(f"{who}: end", K.END_TXN, 3, {"transactional_id": x, "producer_id": pid,
                                                     "producer_epoch": epoch, "committed": True}, sock=sock)
            peer.call(f"{who}: describe", K.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [x, y]}, sock=sock)
            listed = peer.send(K.LIST_TRANSACTIONS, 1, {"state_filters": [], "producer_id_filters": [],
                                                        "duration_filter": -1}, sock=sock)
            listed["transaction_states"] = [s for s in listed["transaction_states"]
                                            if s["transactional_id"].startswith(peer.name())]
            peer.exchanges.append(type(peer.exchanges[-1])(f"{who}: list", K.LIST_TRANSACTIONS, 1, listed))
        as_each(peer, send)
    secured.check(scenario, "auth-transactions")


def test_acls_and_cluster(secured):
    def scenario(peer):
        grant(peer, (CLUSTER, "kafka-cluster", DESCRIBE), (TOPIC, peer.name("t"), DESCRIBE))

        def send(who, sock):
            peer.call(f"{who}: describe acls", K.DESCRIBE_ACLS, 3, {
                "resource_type_filter": 2, "resource_name_filter": peer.name("t"), "pattern_type_filter": 1,
                "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}, sock=sock)
            peer.call(f"{who}: create acls", K.CREATE_ACLS, 3, {"creations": [{
                "resource_type": TOPIC, "resource_name": peer.name("z"), "resource_pattern_type": LITERAL,
                "principal": "User:bob", "host": "*", "operation": READ, "permission_type": ALLOW}]}, sock=sock)
            peer.call(f"{who}: delete acls", K.DELETE_ACLS, 3, {"filters": [{
                "resource_type_filter": TOPIC, "resource_name_filter": peer.name("z"), "pattern_type_filter": 3,
                "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}]}, sock=sock)
            peer.call(f"{who}: describe cluster", K.DESCRIBE_CLUSTER, 1, {
                "include_cluster_authorized_operations": True, "endpoint_type": 1}, sock=sock)
            peer.call(f"{who}: describe client quotas", K.DESCRIBE_CLIENT_QUOTAS, 1, {"strict": False, "components": [
                {"entity_type": "user", "match_type": 0, "match": peer.name("u")}]}, sock=sock)
            peer.call(f"{who}: alter client quotas", K.ALTER_CLIENT_QUOTAS, 1, {"validate_only": True, "entries": [{
                "entity": [{"entity_type": "user", "entity_name": peer.name("u")}],
                "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}]}, sock=sock)
            peer.call(f"{who}: describe scram", K.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, {
                "users": [{"name": peer.name("u")}]}, sock=sock)
            peer.call(f"{who}: alter scram", K.ALTER_USER_SCRAM_CREDENTIALS, 0, {"deletions": [], "upsertions": [{
                "name": peer.name("u"), "mechanism": 1, "iterations": 4096, "salt": b"salt" * 4,
                "salted_password": b"p" * 32}]}, sock=sock)
            peer.call(f"{who}: update features", K.UPDATE_FEATURES, 1, {
                "timeout_ms": 5000, "validate_only": True, "feature_updates": [
                    {"feature": "group.version", "max_version_level": 1, "upgrade_type": 1}]}, sock=sock)
            peer.call(f"{who}: describe quorum", K.DESCRIBE_QUORUM, 2, {"topics": [
                {"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]}, sock=sock)
            peer.call(f"{who}: describe delegation tokens", K.DESCRIBE_DELEGATION_TOKEN, 3, {"owners": None},
                      sock=sock)
        as_each(peer, send)
    secured.check(scenario, "auth-acls-cluster")


def test_authorized_operations(secured):
    """The authorized-operations bitfields, as admin (every operation), bob (none) and alice (some)."""
    def scenario(peer):
        t, g, k, s, st = (peer.name(n) for n in ("t", "g", "k", "s", "st"))
        p.create_topic(peer, t, 2)
        p.commit(peer, g, t)
        for group in (k, s, st):
            p.find_coordinator(peer, group)
        peer.until(K.CONSUMER_GROUP_HEARTBEAT, 1, p.heartbeat_848(k, str(uuid.uuid4()), 0, [t]),
                   lambda a: a.error_code not in p.LOADING)
        peer.until(K.SHARE_GROUP_HEARTBEAT, 1, p.share_heartbeat(s, str(uuid.uuid4()), 0, [t]),
                   lambda a: a.error_code not in p.LOADING)
        peer.until(K.STREAMS_GROUP_HEARTBEAT, 0, p.streams_heartbeat(st, str(uuid.uuid4()), 0, p.topology(t)),
                   lambda a: a.error_code not in p.LOADING)
        grant(peer, (TOPIC, t, READ), (TOPIC, t, ALTER_CONFIGS), (TOPIC, t, DELETE),
              (GROUP, peer.name(), DESCRIBE, PREFIXED), (GROUP, g, DELETE), (GROUP, k, READ),
              (CLUSTER, "kafka-cluster", DESCRIBE_CONFIGS), (CLUSTER, "kafka-cluster", IDEMPOTENT_WRITE),
              (CLUSTER, "kafka-cluster", ALTER))

        for who in ("admin", *PRINCIPALS):
            sock = peer.connect(who)
            peer.call(f"{who}: metadata", K.METADATA, 12, {"topics": [{"name": t}],
                                                           "allow_auto_topic_creation": False,
                                                           "include_topic_authorized_operations": True}, sock=sock)
            peer.call(f"{who}: describe topic partitions", K.DESCRIBE_TOPIC_PARTITIONS, 0, {
                "topics": [{"name": t}], "response_partition_limit": 10, "cursor": None}, sock=sock)
            peer.call(f"{who}: describe cluster", K.DESCRIBE_CLUSTER, 1, {
                "include_cluster_authorized_operations": True, "endpoint_type": 1}, sock=sock)
            peer.call(f"{who}: describe groups", K.DESCRIBE_GROUPS, 5, {"groups": [g],
                                                                       "include_authorized_operations": True},
                      sock=sock)
            peer.call(f"{who}: consumer group describe", K.CONSUMER_GROUP_DESCRIBE, 1, {
                "group_ids": [k], "include_authorized_operations": True}, sock=sock)
            peer.call(f"{who}: share group describe", K.SHARE_GROUP_DESCRIBE, 1, {
                "group_ids": [s], "include_authorized_operations": True}, sock=sock)
            peer.call(f"{who}: streams group describe", K.STREAMS_GROUP_DESCRIBE, 0, {
                "group_ids": [st], "include_authorized_operations": True}, sock=sock)
    secured.check(scenario, "auth-authorized-operations")
