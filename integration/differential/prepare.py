"""Setup steps of the differential scenarios, sent unrecorded (``Peer.send``): what a scenario needs
before the requests it compares. Each waits until the broker has done it, so that Kafka's
asynchronous metadata propagation does not show as a difference."""
from __future__ import annotations

import time
import uuid

from kafka.record.default_records import DefaultRecordBatchBuilder

from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E

from .peer import Peer

TIMESTAMP = 1_700_000_000_000   # fixed record timestamps, so stored batches are byte-identical
LOADING = {E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_NOT_AVAILABLE, E.NOT_COORDINATOR}


def batch(count: int = 3, *, producer_id: int = -1, producer_epoch: int = -1, sequence: int = -1,
          transactional: bool = False, key: bytes = b"key") -> bytes:
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=int(transactional),
                                        producer_id=producer_id, producer_epoch=producer_epoch,
                                        base_sequence=sequence, batch_size=1 << 20)
    for i in range(count):
        builder.append(i, timestamp=TIMESTAMP + i, key=key + b"-%d" % i, value=b"value-%d" % i, headers=[])
    return bytes(builder.build())


def create_topic(peer: Peer, name: str, partitions: int = 1, configs: dict | None = None) -> None:
    answer = peer.send(ApiKey.CREATE_TOPICS, 7, {"timeout_ms": 30000, "topics": [{
        "name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [],
        "configs": [{"name": k, "value": v} for k, v in (configs or {}).items()]}]})
    assert answer.topics[0].error_code in (E.NONE, E.TOPIC_ALREADY_EXISTS), answer
    wait_for_leaders(peer, name, partitions)


def wait_for_leaders(peer: Peer, name: str, partitions: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        answer = peer.send(ApiKey.METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
        topic = answer.topics[0]
        if topic.error_code == E.NONE and len(topic.partitions) == partitions and \
                all(p.leader_id >= 0 for p in topic.partitions) and _led(peer, name, partitions):
            return
        assert time.monotonic() < deadline, f"{peer.broker}: {name} has no leaders: {answer}"
        time.sleep(0.05)


def _led(peer: Peer, name: str, partitions: int) -> bool:
    """Whether every partition answers its leader's requests yet (Kafka's metadata may show a leader
    before that broker has become it)."""
    answer = peer.send(ApiKey.LIST_OFFSETS, 7, {"replica_id": -1, "topics": [{"name": name, "partitions": [
        {"partition_index": i, "timestamp": -1} for i in range(partitions)]}]})
    return all(p.error_code == E.NONE for p in answer.topics[0].partitions)


def topic_id(peer: Peer, name: str) -> uuid.UUID:
    answer = peer.send(ApiKey.METADATA, 12, {"topics": [{"name": name}], "allow_auto_topic_creation": False})
    return answer.topics[0].topic_id


def produce(peer: Peer, topic: str, partition: int = 0, count: int = 3, **batch_args) -> None:
    body = {"transactional_id": batch_args.pop("transactional_id", None), "acks": -1, "timeout_ms": 30000,
            "topic_data": [{"name": topic, "partition_data": [
                {"index": partition, "records": batch(count, **batch_args)}]}]}
    # a partition Kafka's metadata already shows may not have become its leader's yet
    answer = peer.until(ApiKey.PRODUCE, 9, body, lambda a: a.responses[0].partition_responses[0].error_code not in
                        (E.NOT_LEADER_OR_FOLLOWER, E.LEADER_NOT_AVAILABLE, E.UNKNOWN_TOPIC_OR_PARTITION))
    assert answer.responses[0].partition_responses[0].error_code == E.NONE, answer


def find_coordinator(peer: Peer, key: str, key_type: int = 0) -> None:
    peer.until(ApiKey.FIND_COORDINATOR, 6, {"key_type": key_type, "coordinator_keys": [key]},
               lambda a: a.coordinators[0].error_code == E.NONE)


def classic_member(peer: Peer, group: str, protocol_type: str = "consumer") -> tuple[str, int]:
    """A classic group with one member, joined and synced: (member id, generation)."""
    find_coordinator(peer, group)
    join = {"group_id": group, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000, "member_id": "",
            "protocol_type": protocol_type, "protocols": [{"name": "range", "metadata": b""}]}
    first = peer.until(ApiKey.JOIN_GROUP, 9, join, lambda a: a.error_code not in LOADING)
    joined = peer.until(ApiKey.JOIN_GROUP, 9, dict(join, member_id=first.member_id),
                        lambda a: a.error_code not in LOADING)
    assert joined.error_code == E.NONE, joined
    synced = peer.send(ApiKey.SYNC_GROUP, 5, {"group_id": group, "generation_id": joined.generation_id,
                                              "member_id": joined.member_id, "protocol_type": protocol_type,
                                              "protocol_name": "range",
                                              "assignments": [{"member_id": joined.member_id, "assignment": b""}]})
    assert synced.error_code == E.NONE, synced
    return joined.member_id, joined.generation_id


def commit(peer: Peer, group: str, topic: str, offset: int = 1, partition: int = 0) -> None:
    """Offsets committed by an admin (no member: generation -1), which makes a group."""
    find_coordinator(peer, group)
    answer = peer.until(ApiKey.OFFSET_COMMIT, 9, {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
        "topics": [{"name": topic, "partitions": [{"partition_index": partition, "committed_offset": offset,
                                                    "committed_metadata": ""}]}]},
        lambda a: a.topics[0].partitions[0].error_code not in LOADING)
    assert answer.topics[0].partitions[0].error_code == E.NONE, answer


def idempotent_producer(peer: Peer) -> tuple[int, int]:
    """A producer id for idempotent batches (Kafka's first InitProducerId may find its producer id
    manager still loading)."""
    answer = peer.until(ApiKey.INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": 60000},
                        lambda a: a.error_code not in LOADING)
    assert answer.error_code == E.NONE, answer
    return answer.producer_id, answer.producer_epoch


def transactional_producer(peer: Peer, transactional_id: str) -> tuple[int, int]:
    find_coordinator(peer, transactional_id, key_type=1)
    answer = peer.until(ApiKey.INIT_PRODUCER_ID, 5, {"transactional_id": transactional_id,
                                                     "transaction_timeout_ms": 60000},
                        lambda a: a.error_code not in LOADING)
    assert answer.error_code == E.NONE, answer
    return answer.producer_id, answer.producer_epoch


# the modern groups' request bodies: a member joining (epoch 0), heartbeating, leaving (-1)
def heartbeat_848(group, member, epoch, topics):
    return {"group_id": group, "member_id": member, "member_epoch": epoch, "rebalance_timeout_ms": 30000,
            "subscribed_topic_names": topics, "server_assignor": None, "topic_partitions": [] if epoch == 0 else None}


def share_heartbeat(group, member, epoch, topics):
    return {"group_id": group, "member_id": member, "member_epoch": epoch, "subscribed_topic_names": topics}


def topology(topic):
    return {"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topics": [topic], "source_topic_regex": [],
                                           "state_changelog_topics": [], "repartition_sink_topics": [],
                                           "repartition_source_topics": [], "copartition_groups": []}]}


def streams_heartbeat(group, member, epoch, topology=None):
    return {"group_id": group, "member_id": member, "member_epoch": epoch, "endpoint_information_epoch": 0,
            "rebalance_timeout_ms": 30000, "topology": topology, "process_id": "process-1" if epoch == 0 else None,
            "active_tasks": [] if epoch == 0 else None, "standby_tasks": [] if epoch == 0 else None,
            "warmup_tasks": [] if epoch == 0 else None, "client_tags": [] if epoch == 0 else None}
