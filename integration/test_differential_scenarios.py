"""Scenarios beyond one API at a time, sent to Apache Kafka 4.4.0 and to kafkaemu and compared field
by field (integration/differential/): bad input (bad configs, wrong epochs, out-of-range offsets,
malformed frames), group lifecycles of each kind, and a transaction from start to commit and abort."""
from __future__ import annotations

import struct
import uuid

from kafkaemu.protocol.api_keys import ApiKey as K
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.testing.raw_client import encode_request

from .differential import prepare as p

BAD_TOPIC_CONFIGS = [
    ("retention.ms", "soon"), ("retention.ms", "-2"), ("cleanup.policy", "sometimes"), ("cleanup.policy", ""),
    ("min.cleanable.dirty.ratio", "1.5"), ("segment.bytes", "10"), ("max.message.bytes", "-1"),
    ("compression.type", "brotli"), ("compression.zstd.level", "23"), ("compression.lz4.level", "0"),
    ("compression.gzip.level", "10"), ("message.timestamp.type", "Now"), ("min.insync.replicas", "0"),
    ("message.format.version", "3.0"), ("message.downconversion.enable", "false"),
    ("message.timestamp.difference.max.ms", "10"), ("remote.copy.lag.bytes", "-2"), ("unclean.leader.election.enable", "maybe"),
    ("segment.index.bytes", "3"), ("no.such.config", "1"), ("retention.bytes", "9223372036854775808"),
    ("preallocate", "yes"), ("index.interval.bytes", "-1"), ("local.retention.ms", "-3"),
]
GOOD_TOPIC_CONFIGS = [
    ("retention.ms", "-1"), ("cleanup.policy", "compact,delete"), ("compression.zstd.level", "-5"),
    ("compression.gzip.level", "-1"), ("max.decompressed.message.bytes", "1"), ("remote.copy.lag.ms", "-1"),
    ("message.timestamp.after.max.ms", "0"), ("errors.deadletterqueue.group.enable", "true"),
]


def test_topic_configs_good_and_bad(differential):
    def scenario(peer):
        for i, (name, value) in enumerate(BAD_TOPIC_CONFIGS + GOOD_TOPIC_CONFIGS):
            peer.call(f"create {name}={value}", K.CREATE_TOPICS, 7, {"timeout_ms": 30000, "validate_only": True,
                                                                     "topics": [{
                "name": peer.name(f"c{i}"), "num_partitions": 1, "replication_factor": 1, "assignments": [],
                "configs": [{"name": name, "value": value}]}]})
        topic = peer.name("t")
        p.create_topic(peer, topic)
        for name, value in BAD_TOPIC_CONFIGS[:8]:
            peer.call(f"incremental {name}={value}", K.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": True,
                                                                                     "resources": [{
                "resource_type": 2, "resource_name": topic, "configs": [
                    {"name": name, "config_operation": 0, "value": value}]}]})
        peer.call("delete a config never set", K.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [{
            "resource_type": 2, "resource_name": topic, "configs": [
                {"name": "retention.ms", "config_operation": 1, "value": None}]}]})
        peer.call("append to a non-list", K.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": True, "resources": [{
            "resource_type": 2, "resource_name": topic, "configs": [
                {"name": "retention.ms", "config_operation": 2, "value": "5"}]}]})
        peer.call("unknown resource type", K.INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": True, "resources": [{
            "resource_type": 99, "resource_name": topic, "configs": []}]})
        peer.call("describe bad broker id", K.DESCRIBE_CONFIGS, 4, {"resources": [
            {"resource_type": 4, "resource_name": "not-a-node", "configuration_keys": None}]})
    differential.check(scenario, "topic-configs")


def test_topic_admin_bad_input(differential):
    def scenario(peer):
        def create(label, name, partitions=1, rf=1, assignments=()):
            peer.call(label, K.CREATE_TOPICS, 7, {"timeout_ms": 30000, "validate_only": False, "topics": [{
                "name": name, "num_partitions": partitions, "replication_factor": rf,
                "assignments": list(assignments), "configs": []}]})
        create("empty name", "")
        create("dot", ".")
        create("too long", "x" * 250)
        create("illegal character", "a b")
        create("negative partitions", peer.name("neg"), partitions=-5)
        create("replication 0", peer.name("rf0"), rf=0)
        create("assignment to an unknown broker", peer.name("asg"), partitions=-1, rf=-1,
               assignments=[{"partition_index": 0, "broker_ids": [7]}])
        create("internal name", "__consumer_offsets")
        peer.call("twice in one request", K.CREATE_TOPICS, 7, {"timeout_ms": 30000, "topics": [
            {"name": peer.name("dup"), "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []},
            {"name": peer.name("dup"), "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}]})
        topic = peer.name("t")
        p.create_topic(peer, topic, 2)
        peer.call("create partitions: same count", K.CREATE_PARTITIONS, 3, {"timeout_ms": 5000, "validate_only": False,
                                                                          "topics": [{"name": topic, "count": 2,
                                                                                      "assignments": None}]})
        peer.call("create partitions: twice", K.CREATE_PARTITIONS, 3, {"timeout_ms": 5000, "validate_only": True,
                                                                     "topics": [{"name": topic, "count": 4,
                                                                                 "assignments": None}] * 2})
        peer.call("delete records: negative offset", K.DELETE_RECORDS, 2, {"timeout_ms": 5000, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "offset": -7}]}]})
        peer.call("delete records: -1 (high watermark)", K.DELETE_RECORDS, 2, {"timeout_ms": 5000, "topics": [
            {"name": topic, "partitions": [{"partition_index": 1, "offset": -1}]}]})
        peer.call("delete by unknown id", K.DELETE_TOPICS, 6, {"timeout_ms": 5000, "topics": [
            {"name": None, "topic_id": uuid.UUID(int=12345).bytes}]})
        peer.call("metadata by unknown id", K.METADATA, 12, {"topics": [{"name": None,
                                                                         "topic_id": uuid.UUID(int=5).bytes}]})
        peer.call("metadata bad name", K.METADATA, 12, {"topics": [{"name": "bad/name"}],
                                                       "allow_auto_topic_creation": True})
    differential.check(scenario, "topic-admin-bad-input")


def test_data_path_bad_input(differential):
    def scenario(peer):
        topic = peer.name("t")
        p.create_topic(peer, topic)
        p.produce(peer, topic, count=5)

        def fetch(label, offset, partition=0, leader_epoch=-1, version=12):
            peer.call(label, K.FETCH, version, {
                "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 1, "session_id": 0,
                "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
                    {"partition": partition, "fetch_offset": offset, "partition_max_bytes": 1 << 20,
                     "current_leader_epoch": leader_epoch}]}], "forgotten_topics_data": [], "rack_id": ""})
        fetch("beyond the end", 6)
        fetch("negative offset", -3)
        fetch("unknown partition", 0, partition=4)
        fetch("fenced leader epoch", 0, leader_epoch=-5)
        fetch("future leader epoch", 0, leader_epoch=9)
        peer.call("fetch session that does not exist", K.FETCH, 12, {
            "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "session_id": 123456, "session_epoch": 4,
            "topics": [], "forgotten_topics_data": [], "rack_id": ""})
        peer.call("list offsets: future epoch", K.LIST_OFFSETS, 9, {"replica_id": -1, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1, "current_leader_epoch": 9}]}]})
        peer.call("list offsets: max timestamp", K.LIST_OFFSETS, 9, {"replica_id": -1, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -3}]}]})

        def produce(label, records, acks=-1, transactional_id=None, partition=0):
            peer.call(label, K.PRODUCE, 9, {"transactional_id": transactional_id, "acks": acks, "timeout_ms": 5000,
                                            "topic_data": [{"name": topic, "partition_data": [
                                                {"index": partition, "records": records}]}]})
        good = p.batch(2)
        produce("acks 2", good, acks=2)
        produce("corrupt crc", good[:17] + bytes([good[17] ^ 0xFF]) + good[18:])
        produce("truncated batch", good[:-3])
        produce("magic 3", good[:16] + b"\x03" + good[17:])
        produce("sequence without producer id", p.batch(1, sequence=5))
        produce("unknown producer id", p.batch(1, producer_id=424242, producer_epoch=0, sequence=0))
        pid, _ = p.idempotent_producer(peer)
        produce("first sequence 0", p.batch(2, producer_id=pid, producer_epoch=0, sequence=0))
        produce("sequence gap", p.batch(1, producer_id=pid, producer_epoch=0, sequence=5))
        produce("duplicate", p.batch(2, producer_id=pid, producer_epoch=0, sequence=0))
        produce("stale epoch", p.batch(1, producer_id=pid, producer_epoch=-3 & 0x7FFF, sequence=2))
        produce("transactional batch without transaction", p.batch(1, producer_id=pid, producer_epoch=0,
                                                                   sequence=2, transactional=True),
                transactional_id=peer.name("x"))
        peer.call("offsets for a future leader epoch", K.OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
            {"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1, "leader_epoch": 7}]}]})
    differential.check(scenario, "data-path-bad-input")


def test_malformed_frames(differential):
    def scenario(peer):
        metadata = encode_request(K.METADATA, 12, {"topics": None, "allow_auto_topic_creation": False}, 7)
        peer.raw("truncated body", K.METADATA, 12, metadata[:-2])
        peer.raw("unknown api key", K.METADATA, 12, encode_request(K.METADATA, 12, {"topics": None}, 7)[:4] +
                 struct.pack(">hhi", 999, 0, 7) + metadata[12:])
        peer.raw("version above the range", K.METADATA, 12, encode_request(K.METADATA, 12, {"topics": None}, 7)[:4] +
                 struct.pack(">hhi", K.METADATA, 99, 7) + metadata[12:])
        peer.raw("api versions above the range", K.API_VERSIONS, 0, encode_request(
            K.API_VERSIONS, 3, {"client_software_name": "a", "client_software_version": "1"}, 7)[:4] +
            struct.pack(">hhi", K.API_VERSIONS, 77, 7) +
            encode_request(K.API_VERSIONS, 3, {"client_software_name": "a", "client_software_version": "1"}, 7)[12:])
        peer.raw("bad client software name", K.API_VERSIONS, 3, encode_request(
            K.API_VERSIONS, 3, {"client_software_name": "no spaces allowed!", "client_software_version": "1"}, 7))
        peer.raw("negative array length", K.DELETE_GROUPS, 1, encode_request(K.DELETE_GROUPS, 1, {"groups_names": []}, 7)
                 [:-4] + struct.pack(">i", -5))
        peer.raw("empty create topics", K.CREATE_TOPICS, 7, encode_request(
            K.CREATE_TOPICS, 7, {"topics": [], "timeout_ms": 0}, 7))
    differential.check(scenario, "malformed-frames")


def _join(group, member="", instance=None, session=30000):
    return {"group_id": group, "session_timeout_ms": session, "rebalance_timeout_ms": 30000, "member_id": member,
            "group_instance_id": instance, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b"m"}], "reason": None}


def test_classic_group_lifecycle(differential):
    """Join, a second member's join rebalancing the group, sync, offsets, leave, describe, delete."""
    def scenario(peer):
        topic, group = peer.name("t"), peer.name("g")
        p.create_topic(peer, topic, 2)
        p.find_coordinator(peer, group)
        a = peer.until(K.JOIN_GROUP, 9, _join(group), lambda x: x.error_code not in p.LOADING, label="a: needs id")
        a = peer.call("a: joins", K.JOIN_GROUP, 9, _join(group, a.member_id))
        peer.call("a: syncs", K.SYNC_GROUP, 5, {"group_id": group, "generation_id": a.generation_id,
                                               "member_id": a.member_id, "protocol_type": "consumer",
                                               "protocol_name": "range",
                                               "assignments": [{"member_id": a.member_id, "assignment": b"all"}]})
        peer.call("a: commits", K.OFFSET_COMMIT, 9, {"group_id": group, "generation_id_or_member_epoch": a.generation_id,
                                                    "member_id": a.member_id, "topics": [{"name": topic, "partitions": [
                                                        {"partition_index": 0, "committed_offset": 3,
                                                         "committed_metadata": "a"}]}]})
        static = peer.call("b: static member joins", K.JOIN_GROUP, 9, _join(group, "", instance="b-instance"))
        peer.call("a: heartbeat sees the rebalance", K.HEARTBEAT, 4, {"group_id": group,
                                                                      "generation_id": a.generation_id,
                                                                      "member_id": a.member_id})
        peer.call("describe while rebalancing", K.DESCRIBE_GROUPS, 5, {"groups": [group],
                                                                       "include_authorized_operations": False})
        peer.call("a: leaves", K.LEAVE_GROUP, 5, {"group_id": group, "members": [
            {"member_id": a.member_id, "group_instance_id": None, "reason": "done"}]})
        peer.call("b: leaves by instance id", K.LEAVE_GROUP, 5, {"group_id": group, "members": [
            {"member_id": "", "group_instance_id": "b-instance", "reason": None},
            {"member_id": "", "group_instance_id": "nobody-instance", "reason": None}]})
        del static
        peer.call("describe empty", K.DESCRIBE_GROUPS, 5, {"groups": [group], "include_authorized_operations": False})
        peer.call("offsets kept", K.OFFSET_FETCH, 9, {"groups": [{"group_id": group, "member_id": None,
                                                                 "member_epoch": -1, "topics": None}]})
        peer.call("offset delete", K.OFFSET_DELETE, 0, {"group_id": group, "topics": [
            {"name": topic, "partitions": [{"partition_index": 0}, {"partition_index": 1}]}]})
        peer.call("list groups in state Empty", K.LIST_GROUPS, 5, {"states_filter": ["Empty"],
                                                                   "types_filter": ["classic"]})
        peer.call("delete", K.DELETE_GROUPS, 2, {"groups_names": [group]})
        peer.call("describe deleted", K.DESCRIBE_GROUPS, 5, {"groups": [group], "include_authorized_operations": False})
    differential.check(scenario, "classic-lifecycle")


def test_transaction_commit_and_abort(differential):
    def scenario(peer):
        topic, group, tid = peer.name("t"), peer.name("g"), peer.name("x")
        p.create_topic(peer, topic, 2)
        p.find_coordinator(peer, tid, key_type=1)
        init = peer.until(K.INIT_PRODUCER_ID, 5, {"transactional_id": tid, "transaction_timeout_ms": 60000},
                          lambda a: a.error_code not in p.LOADING, label="init")
        pid, epoch = init.producer_id, init.producer_epoch
        for label, commit in (("commit", True), ("abort", False)):
            peer.call(f"{label}: add partitions", K.ADD_PARTITIONS_TO_TXN, 3, {
                "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
                "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [{"name": topic, "partitions": [0, 1]}]})
            peer.call(f"{label}: produce", K.PRODUCE, 9, {"transactional_id": tid, "acks": -1, "timeout_ms": 5000,
                                                          "topic_data": [{"name": topic, "partition_data": [
                                                              {"index": 0, "records": p.batch(
                                                                  2, producer_id=pid, producer_epoch=epoch,
                                                                  sequence=0 if commit else 2, transactional=True)}]}]})
            peer.call(f"{label}: add offsets", K.ADD_OFFSETS_TO_TXN, 3, {"transactional_id": tid, "producer_id": pid,
                                                                         "producer_epoch": epoch, "group_id": group})
            p.find_coordinator(peer, group)
            peer.call(f"{label}: txn offset commit", K.TXN_OFFSET_COMMIT, 3, {
                "transactional_id": tid, "group_id": group, "producer_id": pid, "producer_epoch": epoch,
                "generation_id": -1, "member_id": "", "group_instance_id": None, "topics": [
                    {"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 2,
                                                    "committed_metadata": label}]}]})
            peer.call(f"{label}: describe ongoing", K.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [tid]})
            peer.call(f"{label}: end", K.END_TXN, 3, {"transactional_id": tid, "producer_id": pid,
                                                       "producer_epoch": epoch, "committed": commit})
            peer.until(K.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": [tid]},
                       lambda a: a.transaction_states[0].transaction_state in ("CompleteCommit", "CompleteAbort", "Empty"),
                       label=f"{label}: describe completed")
            peer.until(K.LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 1, "topics": [
                {"name": topic, "partitions": [{"partition_index": 0, "timestamp": -1}]}]},
                lambda a: a.topics[0].partitions[0].offset >= (3 if commit else 6),
                label=f"{label}: last stable offset")
        peer.call("end with nothing ongoing", K.END_TXN, 3, {"transactional_id": tid, "producer_id": pid,
                                                             "producer_epoch": epoch, "committed": True})
        peer.call("stale epoch", K.ADD_PARTITIONS_TO_TXN, 3, {
            "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
            "v3_and_below_producer_epoch": epoch - 1, "v3_and_below_topics": [{"name": topic, "partitions": [0]}]})
        peer.call("read committed", K.FETCH, 12, {
            "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 1, "session_id": 0,
            "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
                {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""})
        peer.call("committed offsets", K.OFFSET_FETCH, 9, {"groups": [{"group_id": group, "member_id": None,
                                                                      "member_epoch": -1, "topics": None}],
                                                          "require_stable": True})
        peer.call("list transactions", K.LIST_TRANSACTIONS, 1, {"state_filters": [], "producer_id_filters": [pid],
                                                                "duration_filter": -1})
    differential.check(scenario, "transaction")


def _legacy_batch(magic: int) -> bytes:
    from kafka.record.legacy_records import LegacyRecordBatchBuilder
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    builder.append(0, timestamp=p.TIMESTAMP if magic else None, key=b"k", value=b"v")
    return bytes(builder.build())


def test_findings_of_the_fidelity_work(differential):
    """Answers once found to differ: legacy record formats in a Produce beside a good partition, the
    broker's retention configs with their synonyms, share group offsets of an empty group id, and a
    renewing ShareFetch that asks for records."""
    def scenario(peer):
        topic, group = peer.name("t"), peer.name("g")
        p.create_topic(peer, topic, 2)
        for magic in (0, 1):
            for version in (3, 9):
                peer.call(f"produce magic {magic} v{version}", K.PRODUCE, version, {
                    "transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [{"name": topic,
                                                                                                "partition_data": [
                        {"index": 0, "records": _legacy_batch(magic)}, {"index": 1, "records": p.batch(1)}]}]})
        peer.call("broker retention configs with synonyms", K.DESCRIBE_CONFIGS, 4, {
            "include_synonyms": True, "include_documentation": False, "resources": [
                {"resource_type": 4, "resource_name": "0", "configuration_keys": [
                    "log.retention.ms", "log.retention.minutes", "log.retention.hours", "log.roll.ms",
                    "log.roll.hours"]}]})
        p.find_coordinator(peer, "")
        for label, topics in (("named topics", [{"topic_name": topic, "partitions": [0]}]), ("all topics", None)):
            peer.call(f"share group offsets of group id '': {label}", K.DESCRIBE_SHARE_GROUP_OFFSETS, 1, {
                "groups": [{"group_id": "", "topics": topics}]})
        p.find_coordinator(peer, group)
        member = str(uuid.uuid4())
        peer.until(K.SHARE_GROUP_HEARTBEAT, 1, p.share_heartbeat(group, member, 0, [topic]),
                   lambda a: a.error_code not in p.LOADING)
        renew = {"group_id": group, "member_id": member, "share_session_epoch": 0, "max_wait_ms": 0, "min_bytes": 0,
                 "max_bytes": 0, "max_records": 0, "batch_size": 0, "is_renew_ack": True,
                 "topics": [{"topic_id": p.topic_id(peer, topic), "partitions": [
                     {"partition_index": 0, "acknowledgement_batches": []}]}], "forgotten_topics_data": []}
        for limit in ("max_bytes", "min_bytes", "max_records", "max_wait_ms"):
            peer.call(f"renewing share fetch with {limit}", K.SHARE_FETCH, 2, dict(renew, **{limit: 100}))
    differential.check(scenario, "fidelity-findings")
