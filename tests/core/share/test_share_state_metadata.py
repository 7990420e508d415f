"""ShareGroupStatePartitionMetadata (key version 15): the share partitions of a group recorded as
initializing, then initialized, deleting while their state goes, in Kafka's record layout; replayed
so a restarted coordinator neither initializes them again nor forgets a delete under way; a failed
append leaving the group as it was."""
from __future__ import annotations

from kafkaemu.core.coordinator import GroupCoordinator
from kafkaemu.core.modern import TopicMeta
from kafkaemu.core.runtime import AppendError
from kafkaemu.core.share import records as sr
from kafkaemu.core.share.requests import ShareHeartbeat
from kafkaemu.core.share.state_metadata import INITIALIZE_RETRY_INTERVAL_MS
from kafkaemu.protocol.errors import ErrorCode as E
from tests.core.harness import RecordingLog
from tests.core.share.plane import ScriptedEvents, coordinator_with_plane

T1, T2 = b"\x01" * 16, b"\x02" * 16
TOPICS = {"a": TopicMeta("a", T1, 2), "b": TopicMeta("b", T2, 3)}
KEY = sr.ShareKey(sr.STATE_PARTITION_METADATA, "g")


class Log(RecordingLog):
    def state_metadata(self) -> list:
        """Each key-15 record written, decoded: (initializing, initialized, deleting) or None."""
        out = []
        for k, v in self.records:
            if int.from_bytes(k[:2], "big") == sr.STATE_PARTITION_METADATA:
                out.append(None if v is None else _plain(sr.decode_value(sr.decode_key(k), v)))
        return out


def _plain(v) -> tuple:
    def topics(entries):
        return {(bytes(e.topic_id), e.topic_name): sorted(e.partitions) for e in entries}
    return (topics(v.initializing_topics), topics(v.initialized_topics),
            {(bytes(e.topic_id), e.topic_name) for e in v.deleting_topics})


def coordinator(log: Log, now: int = 0) -> tuple[GroupCoordinator, list]:
    c = GroupCoordinator(sink=log, now_ms=now, share_events=ScriptedEvents())
    calls: list = []
    c.share.events.listeners["assigned"].append(lambda g, parts: calls.append(sorted(parts)))
    return c, calls


def hb(c, now, member, epoch, topics=None):
    return c.share_group_heartbeat(now, ShareHeartbeat("g", member, epoch, subscribed_topic_names=topics), TOPICS)


def test_key_and_value_bytes_are_kafkas():
    assert sr.encode_key(KEY) == b"\x00\x0f" + b"\x00\x01g"
    value = sr.encode_value(KEY, (((T1, "a", (0, 1)),), (), ((T2, "b"),)))
    assert value == (b"\x00\x00"                                   # value version 0
                     + b"\x02" + T1 + b"\x02a" + b"\x03" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x01" + b"\x00"
                     + b"\x01"                                     # no initialized topics
                     + b"\x02" + T2 + b"\x02b" + b"\x00"           # one deleting topic
                     + b"\x00")                                    # the value's tagged fields
    assert sr.decode_key(sr.encode_key(KEY)) == KEY
    assert _plain(sr.decode_value(KEY, value)) == ({(T1, "a"): [0, 1]}, {}, {(T2, "b")})


def test_a_join_records_the_partitions_initializing_then_initialized():
    log = Log()
    c, calls = coordinator(log)
    seen = []
    c.share.events.listeners["assigned"].insert(0, lambda g, parts: seen.append(c.share.group("g").state_metadata.value()))
    hb(c, 0, "m1", 0, ["a"])
    assert calls == [[(T1, 0), (T1, 1)]]
    assert seen == [(((T1, "a", (0, 1)),), (), ())]               # initializing while initialized
    assert log.state_metadata() == [({(T1, "a"): [0, 1]}, {}, set()), ({}, {(T1, "a"): [0, 1]}, set())]
    # a new subscription initializes only the new topic's partitions
    hb(c, 1, "m2", 0, ["a", "b"])
    assert calls[1:] == [[(T2, 0), (T2, 1), (T2, 2)]]
    assert log.state_metadata()[-1] == ({}, {(T1, "a"): [0, 1], (T2, "b"): [0, 1, 2]}, set())
    hb(c, 2, "m1", 2)                         # m1 takes its new assignment
    n = len(log.records)
    hb(c, 3, "m1", 3)
    assert len(log.records) == n and len(calls) == 2


def test_replay_knows_what_is_initialized_and_does_not_initialize_it_again():
    log = Log()
    c, _ = coordinator(log)
    hb(c, 0, "m1", 0, ["a"])
    restarted_log = Log()
    restarted, calls = coordinator(restarted_log, 100)
    restarted.load(list(log.records), 100)
    assert restarted.share.group("g").state_metadata.initialized_partitions() == {(T1, 0), (T1, 1)}
    assert hb(restarted, 110, "m1", 0, ["a"])["error_code"] == 0      # the member rejoins
    assert calls == [] and restarted_log.state_metadata() == []


def test_partitions_left_initializing_by_a_restart_are_initialized_again_after_the_retry_interval():
    log = Log()
    c, _ = coordinator(log)
    c.share.events.listeners["assigned"].append(lambda g, parts: setattr(log, "fail", AppendError(E.NOT_LEADER_OR_FOLLOWER)))
    hb(c, 0, "m1", 0, ["a"])                  # the heartbeat's batch is written, the "initialized" one is not
    assert log.state_metadata() == [({(T1, "a"): [0, 1]}, {}, set())]
    assert c.share.group("g").state_metadata.initializing                # left as it was
    restarted_log = Log()
    restarted, calls = coordinator(restarted_log, 1000)
    restarted.load(list(log.records), 1000)
    hb(restarted, 1001, "m1", 2)
    assert calls == []                         # initializing since the load: not yet
    hb(restarted, 1000 + INITIALIZE_RETRY_INTERVAL_MS, "m1", 2)
    assert calls == [[(T1, 0), (T1, 1)]]
    assert restarted_log.state_metadata()[-1] == ({}, {(T1, "a"): [0, 1]}, set())


def test_a_failed_initialization_leaves_initializing_and_the_next_heartbeat_retries():
    log = Log()
    c, calls = coordinator(log)
    failing = [True]

    def persister(group, parts):
        if failing[0]:
            raise RuntimeError("share state not written")
    c.share.events.listeners["assigned"].insert(0, persister)
    hb(c, 0, "m1", 0, ["a"])
    assert log.state_metadata() == [({(T1, "a"): [0, 1]}, {}, set()), ({}, {}, set())]
    failing[0] = False
    hb(c, 1, "m1", 2)
    assert log.state_metadata()[-1] == ({}, {(T1, "a"): [0, 1]}, set())


def test_a_failed_heartbeat_append_records_nothing_and_initializes_nothing():
    log = Log()
    log.fail = AppendError(E.NOT_ENOUGH_REPLICAS)
    c, calls = coordinator(log)
    hb(c, 0, "m1", 0, ["a"])
    assert calls == [] and c.share.group("g") is None
    log.fail = None
    hb(c, 1, "m1", 0, ["a"])
    before = c.share.group("g").snapshot()
    log.fail = AppendError(E.NOT_ENOUGH_REPLICAS)
    assert hb(c, 2, "m2", 0, ["a", "b"])["error_code"] == E.COORDINATOR_NOT_AVAILABLE
    assert c.share.group("g").snapshot() == before and len(calls) == 1


def test_delete_offsets_records_the_topic_deleting_then_deleted_and_replay_finishes_a_delete_under_way():
    log = Log()
    c, _ = coordinator(log)
    deleted = []
    c.share.events.listeners["offsets_deleted"].append(lambda g, tid: deleted.append(tid))
    hb(c, 0, "m1", 0, ["a"])
    hb(c, 1, "m1", -1)
    answer = c.delete_share_group_offsets(2, "g", [("a", T1), ("b", T2), ("nope", None)])
    assert answer == [
        {"topic_name": "a", "topic_id": T1, "error_code": 0, "error_message": None},
        {"topic_name": "b", "topic_id": bytes(16), "error_code": E.UNKNOWN_TOPIC_OR_PARTITION,
         "error_message": "There is no offset information to delete."},
        {"topic_name": "nope", "topic_id": bytes(16), "error_code": E.UNKNOWN_TOPIC_OR_PARTITION,
         "error_message": None}]
    assert deleted == [T1]
    assert log.state_metadata()[-2:] == [({}, {}, {(T1, "a")}), ({}, {}, set())]
    # a delete whose state deletion failed stays deleting, through a restart, until a delete finishes it
    c.share.events.listeners["offsets_deleted"].insert(0, lambda g, tid: (_ for _ in ()).throw(RuntimeError("no")))
    hb(c, 3, "m1", 0, ["a"])
    hb(c, 4, "m1", -1)
    c.delete_share_group_offsets(5, "g", [("a", T1)])
    assert log.state_metadata()[-1] == ({}, {}, {(T1, "a")})
    restarted_log = Log()
    restarted, _ = coordinator(restarted_log, 10)
    restarted.load(list(log.records), 10)
    assert restarted.share.group("g").state_metadata.deleting == {T1: "a"}
    redone = []
    restarted.share.events.listeners["offsets_deleted"].append(lambda g, tid: redone.append(tid))
    assert restarted.delete_share_group_offsets(11, "g", [("a", T1)])[0]["error_code"] == 0
    assert redone == [T1] and restarted_log.state_metadata() == [({}, {}, set())]


def test_alter_offsets_initializes_the_partitions_at_the_offsets():
    log = Log()
    c, _ = coordinator(log)
    altered = []
    c.share.events.listeners["offsets_altered"].append(lambda g, tid, p, offset: altered.append((tid, p, offset)))
    hb(c, 0, "m1", 0, ["a"])
    hb(c, 1, "m1", -1)
    assert c.alter_share_group_offsets(2, "g", {(T2, 1): 7}, {T2: "b"}) == E.NONE
    assert altered == [(T2, 1, 7)]
    assert log.state_metadata()[-2:] == [({(T2, "b"): [1]}, {(T1, "a"): [0, 1]}, set()),
                                         ({}, {(T1, "a"): [0, 1], (T2, "b"): [1]}, set())]


def test_delete_group_records_its_partitions_deleting_then_the_tombstone():
    log = Log()
    c, _ = coordinator(log)
    hb(c, 0, "m1", 0, ["a"])
    hb(c, 1, "m1", -1)
    assert c.delete_groups(2, ["g"]) == [{"group_id": "g", "error_code": 0}]
    assert log.state_metadata()[-2:] == [({}, {}, {(T1, "a")}), None]
    keys = [sr.decode_key(k).version for k, v in log.records[-7:]]
    assert keys.index(sr.STATE_PARTITION_METADATA) < keys.index(sr.GROUP_METADATA)
    restarted, _ = coordinator(Log(), 10)
    restarted.load(list(log.records), 10)
    assert restarted.share.group("g") is None


def test_a_deleted_topic_leaves_the_record_and_its_share_partitions_go():
    log = Log()
    c, shares = coordinator_with_plane(log, log_offsets=lambda tid, p, committed: (0, 0))
    hb(c, 0, "m1", 0, ["a", "b"])
    assert shares.existing("g", T1, 0) is not None
    c.on_topic_deleted(1, "a", T1)
    shares.topic_deleted(1, T1)                    # the broker's topic admin tells both owners
    assert log.state_metadata()[-1] == ({}, {(T2, "b"): [0, 1, 2]}, set())
    assert shares.existing("g", T1, 0) is None and shares.existing("g", T2, 0) is not None
    n = len(log.records)
    c.on_topic_deleted(2, "a", T1)                 # no group has it any more: nothing written
    assert len(log.records) == n
