"""The offset commits of one read are appended to __consumer_offsets as one batch and each is
answered only after that append (Kafka 4.4's adaptive ``group.coordinator.append.linger.ms``):
answers byte for byte as when each commit comes in a read of its own, a later request of the read
sees them, and a batch that cannot be written fails every commit in it with nothing applied."""
from kafkaemu.core.classic.requests import JoinGroup, SyncGroup
from kafkaemu.core.placement import partition_for
from kafkaemu.core.runtime import AppendError
from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage.log_store import OFFSETS_TOPIC
from kafkaemu.storage.record_batch import iter_records
from kafkaemu.testing.raw_client import encode_request
from kafkaemu.wire.connection import Connection
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import new_broker

TOPIC = "t"
NOW = 1_000


def commit_frame(group: str, offset: int, correlation_id: int, member_id: str = "", generation: int = -1,
                 partition: int = 0) -> bytes:
    return encode_request(ApiKey.OFFSET_COMMIT, 8, {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member_id,
        "group_instance_id": None, "topics": [{"name": TOPIC, "partitions": [
            {"partition_index": partition, "committed_offset": offset, "committed_leader_epoch": -1,
             "committed_metadata": "m"}]}]}, correlation_id)


def fetch_frame(group: str, correlation_id: int) -> bytes:
    return encode_request(ApiKey.OFFSET_FETCH, 8, {
        "groups": [{"group_id": group, "topics": [{"name": TOPIC, "partition_indexes": [0, 1]}]}],
        "require_stable": False}, correlation_id)


def open_connection():
    broker = new_broker(NOW, topics={TOPIC: 2}, group_initial_rebalance_delay_ms=0)
    broker.coordinator   # built before the read, as on a broker that has served a group request
    return broker, Connection(broker, REGISTRY, 1, "127.0.0.1", now_ms=NOW)


def replies(conn) -> list[bytes]:
    return FrameDecoder(1 << 30).feed(conn.take_output())


def decode(api_key: int, version: int, frame: bytes) -> dict:
    return catalog().response(api_key, version).decode(frame[5:])   # past the header (v1: id, no tags)


def offsets_batches(broker, group: str) -> list[list[bytes]]:
    plog = broker.store.get(OFFSETS_TOPIC).partitions[partition_for(group, len(broker.store.get(OFFSETS_TOPIC).partitions))]
    return [[r.key for r in iter_records(b)] for b in plog.batches()]


def committed(conn, group: str) -> list[int]:
    conn.receive(fetch_frame(group, 999), NOW)
    answer = decode(ApiKey.OFFSET_FETCH, 8, replies(conn)[-1])
    return [p["committed_offset"] for p in answer["groups"][0]["topics"][0]["partitions"]]


def read_one_by_one(frames: list[bytes]):
    """A fresh broker and connection that received ``frames`` one read each, and their answers."""
    broker, conn = open_connection()
    answers = []
    for f in frames:
        conn.receive(f, NOW)
        answers += replies(conn)
    return broker, conn, answers


def refusing_sink(partition, records, now_ms, **kw):
    raise AppendError(ErrorCode.NOT_LEADER_OR_FOLLOWER, "refused")


def test_the_commits_of_one_read_are_one_batch_with_the_answers_of_commits_read_one_by_one():
    frames = [commit_frame("g", 10 + i, i, partition=i % 2) for i in range(6)]
    one_by_one_broker, one_by_one, answers = read_one_by_one(frames)
    broker, conn = open_connection()
    conn.receive(b"".join(frames), NOW)
    assert replies(conn) == answers and len(answers) == 6
    assert all(decode(ApiKey.OFFSET_COMMIT, 8, a)["topics"][0]["partitions"][0]["error_code"] == 0 for a in answers)
    assert [len(b) for b in offsets_batches(one_by_one_broker, "g")] == [1] * 6
    assert [len(b) for b in offsets_batches(broker, "g")] == [6]
    assert committed(conn, "g") == committed(one_by_one, "g") == [14, 15]


def test_a_request_after_commits_in_the_same_read_sees_them_written():
    broker, conn = open_connection()
    conn.receive(commit_frame("g", 7, 1) + commit_frame("g", 8, 2, partition=1) + fetch_frame("g", 3)
                 + commit_frame("g", 9, 4), NOW)
    out = replies(conn)
    assert [int.from_bytes(f[:4], "big") for f in out] == [1, 2, 3, 4]
    fetched = decode(ApiKey.OFFSET_FETCH, 8, out[2])["groups"][0]["topics"][0]["partitions"]
    assert [p["committed_offset"] for p in fetched] == [7, 8]
    assert [len(b) for b in offsets_batches(broker, "g")] == [2, 1]   # the fetch came between
    assert committed(conn, "g") == [9, 8]


def test_commits_of_groups_on_different_partitions_each_go_to_their_own():
    broker, conn = open_connection()
    n = len(broker.store.get(OFFSETS_TOPIC).partitions)
    a = "a"
    b = next(g for g in (f"b{i}" for i in range(100)) if partition_for(g, n) != partition_for(a, n))
    conn.receive(commit_frame(a, 1, 1) + commit_frame(a, 2, 2) + commit_frame(b, 3, 3) + commit_frame(a, 4, 4), NOW)
    assert [int.from_bytes(f[:4], "big") for f in replies(conn)] == [1, 2, 3, 4]
    assert [len(x) for x in offsets_batches(broker, a)] == [2, 1]
    assert [len(x) for x in offsets_batches(broker, b)] == [1]
    assert committed(conn, a)[0] == 4 and committed(conn, b)[0] == 3


def test_a_batch_that_cannot_be_written_fails_every_commit_in_it_and_applies_none():
    broker, conn = open_connection()
    coordinator = broker.coordinator
    got = []
    coordinator.join_group(NOW, JoinGroup("g", "", "consumer", [("range", b"")], client_id="c",
                                          session_timeout_ms=30_000), got.append)
    member = got[-1]["member_id"]
    coordinator.join_group(NOW, JoinGroup("g", member, "consumer", [("range", b"")], client_id="c",
                                          session_timeout_ms=30_000), got.append)
    coordinator.sync_group(NOW, SyncGroup("g", 1, member, {member: b""}), got.append)
    assert got[-1]["error_code"] == 0   # a member of generation 1
    conn.receive(commit_frame("g", 5, 1, member, 1), NOW)
    assert decode(ApiKey.OFFSET_COMMIT, 8, replies(conn)[0])["topics"][0]["partitions"][0]["error_code"] == 0
    session_key = ("heartbeat", "g", member)
    deadline = coordinator.timers.deadline(session_key)
    real_sink, appended = coordinator.ctx.sink, []

    def counting_refusing_sink(partition, records, now_ms, **kw):
        appended.append(len(records))
        refusing_sink(partition, records, now_ms)
    coordinator.ctx.sink = counting_refusing_sink
    conn.receive(b"".join(commit_frame("g", 50 + i, 10 + i, member, 1, partition=i % 2) for i in range(4)), NOW + 500)
    out = replies(conn)
    assert appended == [4]   # one batch, refused as a whole
    assert [decode(ApiKey.OFFSET_COMMIT, 8, f)["topics"][0]["partitions"][0]["error_code"] for f in out] \
        == [int(ErrorCode.NOT_COORDINATOR)] * 4
    assert coordinator.timers.deadline(session_key) == deadline   # no commit kept the session alive
    coordinator.ctx.sink = real_sink
    assert committed(conn, "g") == [5, -1]
    conn.receive(commit_frame("g", 60, 20, member, 1), NOW + 600)
    assert decode(ApiKey.OFFSET_COMMIT, 8, replies(conn)[0])["topics"][0]["partitions"][0]["error_code"] == 0
    assert committed(conn, "g") == [60, -1] and coordinator.timers.deadline(session_key) == NOW + 600 + 30_000


def joined_member(coordinator) -> str:
    """A classic member of group "g" at generation 1, stable."""
    got = []
    coordinator.join_group(NOW, JoinGroup("g", "", "consumer", [("range", b"")], client_id="c",
                                          session_timeout_ms=30_000), got.append)
    member = got[-1]["member_id"]
    coordinator.join_group(NOW, JoinGroup("g", member, "consumer", [("range", b"")], client_id="c",
                                          session_timeout_ms=30_000), got.append)
    coordinator.sync_group(NOW, SyncGroup("g", 1, member, {member: b""}), got.append)
    assert got[-1]["error_code"] == 0
    return member


def error_codes(api_key: int, version: int, frames: list[bytes]) -> list[list[int]]:
    return [[p["error_code"] for t in decode(api_key, version, f)["topics"] for p in t["partitions"]] for f in frames]


def test_a_commit_its_group_refuses_keeps_its_own_error_when_the_batch_it_came_with_fails():
    """Kafka's operation that throws (validateOffsetCommit) completes at once; only the commits
    whose records were in the batch get failCurrentBatch's error."""
    broker, conn = open_connection()
    coordinator = broker.coordinator
    member = joined_member(coordinator)

    coordinator.ctx.sink = refusing_sink
    conn.receive(commit_frame("g", 1, 1, member, 1) + commit_frame("g", 2, 2, member, 7)
                 + commit_frame("g", 3, 3, "stranger", 1) + commit_frame("g", 4, 4, member, 1), NOW)
    out = replies(conn)
    assert [int.from_bytes(f[:4], "big") for f in out] == [1, 2, 3, 4]
    assert error_codes(ApiKey.OFFSET_COMMIT, 8, out) == [
        [ErrorCode.NOT_COORDINATOR], [ErrorCode.ILLEGAL_GENERATION], [ErrorCode.UNKNOWN_MEMBER_ID],
        [ErrorCode.NOT_COORDINATOR]]


def test_a_commit_after_one_that_makes_its_simple_group_is_checked_against_that_group():
    """In Kafka the first commit's simple group exists (Empty, generation 0) for the second at
    once: a member it does not know is UNKNOWN_MEMBER_ID, not GROUP_ID_NOT_FOUND."""
    frames = [commit_frame("g", 1, 1), commit_frame("g", 2, 2, "m", 0), commit_frame("g", 3, 3)]
    _, _, answers = read_one_by_one(frames)
    broker, conn = open_connection()
    conn.receive(b"".join(frames), NOW)
    out = replies(conn)
    assert out == answers
    assert error_codes(ApiKey.OFFSET_COMMIT, 8, out) == [[0], [ErrorCode.UNKNOWN_MEMBER_ID], [0]]
    assert committed(conn, "g") == [3, -1]


def test_a_commit_naming_only_unknown_partitions_makes_no_group_even_behind_a_batch():
    """KafkaApis answers unknown partitions itself; with none left the coordinator is not asked."""
    broker, conn = open_connection()
    conn.receive(commit_frame("g", 1, 1) + commit_frame("h", 2, 2, partition=9), NOW)
    assert error_codes(ApiKey.OFFSET_COMMIT, 8, replies(conn)) == [[0], [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]
    assert broker.coordinator.group("g") is not None and broker.coordinator.group("h") is None


def test_a_group_deletion_in_the_same_read_deletes_what_the_commits_before_it_wrote():
    broker, conn = open_connection()
    delete = encode_request(ApiKey.DELETE_GROUPS, 2, {"groups_names": ["g"]}, 2)
    conn.receive(commit_frame("g", 1, 1) + delete + commit_frame("g", 3, 3), NOW)
    out = replies(conn)
    assert [int.from_bytes(f[:4], "big") for f in out] == [1, 2, 3]
    deleted = catalog().response(ApiKey.DELETE_GROUPS, 2).decode(out[1][5:])
    assert [r["error_code"] for r in deleted["results"]] == [0]
    keys = offsets_batches(broker, "g")
    assert [len(b) for b in keys] == [1, 2, 1]   # the commit, the deletion's tombstones, the next commit
    assert committed(conn, "g") == [3, -1]


def commit_v10_frame(topics: list[tuple[bytes, int]], correlation_id: int) -> bytes:
    return encode_request(ApiKey.OFFSET_COMMIT, 10, {
        "group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
        "topics": [{"topic_id": tid, "partitions": [
            {"partition_index": p, "committed_offset": 5, "committed_leader_epoch": -1, "committed_metadata": ""}]}
            for tid, p in topics]}, correlation_id)


def test_authorized_v10_commits_of_a_batch_that_fails_keep_the_answers_made_before_the_coordinator():
    """Unknown ids (UNKNOWN_TOPIC_ID) and denied topics (TOPIC_AUTHORIZATION_FAILED) are answered
    by KafkaApis; only the topics the coordinator took get the failed batch's error."""
    from kafkaemu.auth.acl import Acl, AclOperation as Op, AclPermissionType as Perm, PatternType as PT, \
        ResourceType as RT
    broker = new_broker(NOW, topics={TOPIC: 2, "denied": 1}, authorizer=True)
    broker.authorizer.create([Acl(RT.GROUP, "g", PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW),
                              Acl(RT.TOPIC, TOPIC, PT.LITERAL, "User:alice", "*", Op.READ, Perm.ALLOW)])
    broker.coordinator
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1", now_ms=NOW)
    conn.principal = "User:alice"
    tid, denied, unknown = broker.store.get(TOPIC).topic_id, broker.store.get("denied").topic_id, b"\x07" * 16
    frames = commit_v10_frame([(tid, 0), (denied, 0), (unknown, 0)], 1) + commit_v10_frame([(tid, 1)], 2)
    conn.receive(frames, NOW)
    written = [[(t["topic_id"], p["error_code"]) for t in decode(ApiKey.OFFSET_COMMIT, 10, f)["topics"]
                for p in t["partitions"]] for f in replies(conn)]
    assert [sorted(w) for w in written] == [sorted([(tid, 0), (denied, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                                                    (unknown, ErrorCode.UNKNOWN_TOPIC_ID)]), [(tid, 0)]]

    broker.coordinator.ctx.sink = refusing_sink
    conn.receive(frames, NOW)
    failed = [[(t["topic_id"], p["error_code"]) for t in decode(ApiKey.OFFSET_COMMIT, 10, f)["topics"]
               for p in t["partitions"]] for f in replies(conn)]
    assert [sorted(w) for w in failed] == [
        sorted([(tid, ErrorCode.NOT_COORDINATOR), (denied, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                (unknown, ErrorCode.UNKNOWN_TOPIC_ID)]), [(tid, ErrorCode.NOT_COORDINATOR)]]


def test_a_commit_joining_a_batch_at_a_later_time_first_fires_the_timers_due_by_then():
    """The commits of a batch opened at one time skip ticking again at that time only: one run at a
    later time (another connection's read inside this one) expires the sessions due by then first."""
    from kafkaemu.core.offsets.requests import CommitPartition, OffsetCommit
    broker, _ = open_connection()
    coordinator = broker.coordinator
    member = joined_member(coordinator)   # its session ends at NOW + 30 s
    answers = []
    runtime = coordinator.runtime
    runtime.linger()
    coordinator.commit_offsets_then(NOW, OffsetCommit("other", [(TOPIC, [CommitPartition(0, 1)])]), None,
                                    answers.append)
    coordinator.commit_offsets_then(NOW + 40_000, OffsetCommit("g", [(TOPIC, [CommitPartition(0, 2)])], 1, member),
                                    None, answers.append)
    runtime.end_linger()
    assert [a["topics"][0]["partitions"][0]["error_code"] for a in answers] == [0, ErrorCode.UNKNOWN_MEMBER_ID]
