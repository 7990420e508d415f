"""ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch and ShareAcknowledge through the sans-IO
connection and the codecs, on a manual clock: acquisition, acknowledgement piggy-backed and alone,
redelivery after the lock lapses at the broker's tick, the delivery-count limit, share sessions and
their errors, and long polls woken by an append or by a lapsed lock."""
from __future__ import annotations

from kafkaemu.broker import Broker
from kafkaemu.config import BrokerConfig
from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode as E
from kafkaemu.storage.record_batch import build_batch, iter_records, parse_header
from kafkaemu.wire.connection import Connection
from kafkaemu.wire.framing import FrameDecoder

T0 = 1_700_000_000_000
HB, DESCRIBE, FETCH, ACK = (ApiKey.SHARE_GROUP_HEARTBEAT, ApiKey.SHARE_GROUP_DESCRIBE, ApiKey.SHARE_FETCH,
                            ApiKey.SHARE_ACKNOWLEDGE)
ACCEPT, RELEASE, REJECT = 1, 2, 3


class Client:
    def __init__(self, broker, connection_id: int = 1) -> None:
        self.broker = broker
        self.conn = Connection(broker, REGISTRY, connection_id, "127.0.0.1")
        self.correlation = 0

    def send(self, api_key, version, body, now=None):
        self.correlation += 1
        self.conn.receive(envelope.encode_request(api_key, version, body, self.correlation, client_id="c"),
                          self.broker.now_ms if now is None else now)

    def replies(self, api_key, version):
        return [envelope.decode_response(api_key, version, r)[1] for r in FrameDecoder(1 << 30).feed(self.conn.take_output())]

    def call(self, api_key, version, body, now=None):
        self.send(api_key, version, body, now)
        (reply,) = self.replies(api_key, version)
        return reply


def setup(partitions=1, records=5, **extra):
    broker = Broker(BrokerConfig(extra=extra), T0)
    topic = broker.topics.create("q", partitions, {})
    return broker, topic, Client(broker)


def produce(topic, n, partition=0):
    plog = topic.partitions[partition]
    plog.append(build_batch([(b"k", b"v%d" % i, [], T0) for i in range(n)]), T0)


def join(client, member="m1", group="g", reset="earliest"):
    """A member joins; ``reset`` (share.auto.offset.reset, None: the default latest) decides where
    the share partitions start at their first ShareFetch."""
    if reset is not None:
        client.broker.shares.group_configs.set(group, "share.auto.offset.reset", reset)
    r = client.call(HB, 1, {"group_id": group, "member_id": member, "member_epoch": 0, "rack_id": None,
                            "subscribed_topic_names": ["q"]})
    assert r.error_code == 0, r
    return r


def fetch_body(topic, epoch, acks=None, member="m1", max_wait=0, partitions=(0,), max_records=500, **over):
    acks = acks or {}
    body = {"group_id": "g", "member_id": member, "share_session_epoch": epoch, "max_wait_ms": max_wait,
            "min_bytes": 1, "max_bytes": 1 << 20, "max_records": max_records, "batch_size": 500,
            "topics": [{"topic_id": topic.topic_id, "partitions": [
                {"partition_index": p, "acknowledgement_batches": acks.get(p, [])} for p in partitions]}],
            "forgotten_topics_data": []}
    body.update(over)
    return body


def acquired(reply):
    return [(a.first_offset, a.last_offset, a.delivery_count)
            for t in reply.responses for p in t.partitions for a in p.acquired_records]


def values(reply):
    """The record values of every batch in the reply (``records`` is the batches concatenated)."""
    out = []
    for t in reply.responses:
        for p in t.partitions:
            data, pos = bytes(p.records or b""), 0
            while pos < len(data):
                size = parse_header(data, pos).size
                out += [r.value for r in iter_records(data[pos:pos + size])]
                pos += size
    return out


def batch(first, last, *types):
    return {"first_offset": first, "last_offset": last, "acknowledge_types": list(types)}


def test_a_member_fetches_and_accepts():
    broker, topic, c = setup()
    join(c)
    broker.shares.group_configs.set("g", "share.auto.offset.reset", "earliest")
    produce(topic, 5)
    r = c.call(FETCH, 1, fetch_body(topic, 0))
    assert r.error_code == 0 and r.acquisition_lock_timeout_ms == 30000
    assert acquired(r) == [(0, 4, 1)] and values(r) == [b"v0", b"v1", b"v2", b"v3", b"v4"]
    r = c.call(FETCH, 1, fetch_body(topic, 1, {0: [batch(0, 4, ACCEPT)]}))
    assert r.responses[0].partitions[0].acknowledge_error_code == 0 and acquired(r) == []
    assert broker.shares.start_offsets("g") == {(topic.topic_id, 0): 5}


def test_latest_starts_at_the_end_when_first_fetched():
    broker, topic, c = setup()
    produce(topic, 3)
    join(c, reset=None)
    assert broker.shares.start_offsets("g") == {(topic.topic_id, 0): -1}   # assigned, uninitialized
    produce(topic, 2)                  # between the assignment and the first fetch: skipped, as Kafka
    r = c.call(FETCH, 1, fetch_body(topic, 0))
    assert acquired(r) == [] and broker.shares.start_offsets("g") == {(topic.topic_id, 0): 5}
    produce(topic, 2)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 1))) == [(5, 6, 1)]


def test_earliest_delivers_what_was_produced_before_the_first_fetch():
    broker, topic, c = setup()
    produce(topic, 3)
    join(c, reset="earliest")
    produce(topic, 2)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0))) == [(0, 4, 1)]


def test_release_redelivers_and_reject_archives():
    broker, topic, c = setup()
    join(c)
    produce(topic, 3)
    c.call(FETCH, 1, fetch_body(topic, 0))
    r = c.call(ACK, 1, {"group_id": "g", "member_id": "m1", "share_session_epoch": 1, "topics": [
        {"topic_id": topic.topic_id, "partitions": [
            {"partition_index": 0, "acknowledgement_batches": [batch(0, 2, ACCEPT, RELEASE, REJECT)]}]}]})
    assert r.error_code == 0 and r.responses[0].partitions[0].error_code == 0
    r = c.call(FETCH, 1, fetch_body(topic, 2))
    assert acquired(r) == [(1, 1, 2)]


def test_lock_expiry_on_the_manual_clock_and_the_delivery_limit():
    broker, topic, c = setup()
    broker.shares.group_configs.set("g", "share.delivery.count.limit", "2")
    join(c)
    produce(topic, 1)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0), now=T0 + 1)) == [(0, 0, 1)]
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 1), now=T0 + 2)) == []
    broker.tick(T0 + 1 + 30000)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 2), now=T0 + 30002)) == [(0, 0, 2)]
    broker.tick(T0 + 30002 + 30000)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 3), now=T0 + 60003)) == []
    assert broker.shares.start_offsets("g") == {(topic.topic_id, 0): 1}


def test_two_members_never_get_the_same_record_at_once():
    broker, topic, c = setup()
    join(c, "m1")
    join(c, "m2")
    produce(topic, 4)
    produce(topic, 4)
    a = acquired(c.call(FETCH, 1, fetch_body(topic, 0, member="m1", max_records=1)))
    b = acquired(c.call(FETCH, 1, fetch_body(topic, 0, member="m2", max_records=1)))
    assert a == [(0, 3, 1)] and b == [(4, 7, 1)]


def test_session_errors():
    broker, topic, c = setup()
    join(c)
    assert c.call(FETCH, 1, fetch_body(topic, 3)).error_code == E.SHARE_SESSION_NOT_FOUND
    assert c.call(FETCH, 1, fetch_body(topic, 0, {0: [batch(0, 0, ACCEPT)]})).error_code == E.INVALID_REQUEST
    c.call(FETCH, 1, fetch_body(topic, 0))
    assert c.call(FETCH, 1, fetch_body(topic, 7)).error_code == E.INVALID_SHARE_SESSION_EPOCH
    ack = {"group_id": "g", "member_id": "m1", "share_session_epoch": 0, "topics": []}
    assert c.call(ACK, 1, ack).error_code == E.INVALID_SHARE_SESSION_EPOCH
    assert c.call(ACK, 1, dict(ack, member_id="zz", share_session_epoch=1)).error_code == E.SHARE_SESSION_NOT_FOUND
    assert c.call(FETCH, 1, fetch_body(topic, 0, member="")).error_code == E.INVALID_REQUEST


def test_bad_acknowledgements():
    broker, topic, c = setup()
    join(c)
    produce(topic, 3)
    c.call(FETCH, 1, fetch_body(topic, 0))
    cases = [
        ([batch(0, 1, ACCEPT), batch(1, 2, ACCEPT)], E.INVALID_REQUEST),      # overlapping
        ([batch(2, 1, ACCEPT)], E.INVALID_REQUEST),                           # first after last
        ([batch(0, 2, ACCEPT, ACCEPT)], E.INVALID_REQUEST),                   # two types for three offsets
        ([batch(0, 0, 9)], E.INVALID_REQUEST),                                # unknown type
        ([batch(0, 0, 4)], E.INVALID_REQUEST),                                # RENEW without is_renew_ack
        ([batch(5, 6, ACCEPT)], E.INVALID_RECORD_STATE),                      # never acquired
    ]
    epoch = 1
    for batches, error in cases:
        r = c.call(FETCH, 1, fetch_body(topic, epoch, {0: batches}))
        assert r.responses[0].partitions[0].acknowledge_error_code == error, batches
        epoch += 1
    unknown = dict(fetch_body(topic, epoch), topics=[{"topic_id": b"\x09" * 16, "partitions": [
        {"partition_index": 0, "acknowledgement_batches": [batch(0, 0, ACCEPT)]}]}])
    r = c.call(FETCH, 1, unknown)
    assert r.responses[0].partitions[0].acknowledge_error_code == E.UNKNOWN_TOPIC_ID


def test_renew_v2_extends_the_lock_and_acquires_nothing():
    broker, topic, c = setup()
    join(c)
    produce(topic, 2)
    c.call(FETCH, 2, fetch_body(topic, 0))
    renew = fetch_body(topic, 1, {0: [batch(0, 1, 4)]}, is_renew_ack=True)
    for limit in ("max_bytes", "min_bytes", "max_records", "max_wait_ms"):   # KIP-1222: all must be 0
        refused = c.call(FETCH, 2, dict(renew, **{"max_bytes": 0, "min_bytes": 0, "max_records": 0,
                                                  "max_wait_ms": 0, limit: 1}), now=T0 + 10000)
        assert (refused.error_code, refused.responses) == (E.INVALID_REQUEST, [])
    r = c.call(FETCH, 2, dict(renew, max_bytes=0, min_bytes=0, max_records=0), now=T0 + 20000)
    assert r.responses[0].partitions[0].acknowledge_error_code == 0
    broker.tick(T0 + 30000)
    rec = broker.shares.existing("g", topic.topic_id, 0).in_flight()
    assert {x["state"] for x in rec} == {"Acquired"} and {x["lock_deadline_ms"] for x in rec} == {T0 + 50000}


def test_long_poll_woken_by_an_append_and_by_a_lapsed_lock():
    broker, topic, c = setup()
    join(c)
    c.send(FETCH, 1, fetch_body(topic, 0, max_wait=60000))
    assert c.replies(FETCH, 1) == []
    produce(topic, 2)
    (r,) = c.replies(FETCH, 1)
    assert acquired(r) == [(0, 1, 1)]
    c.send(FETCH, 1, fetch_body(topic, 1, max_wait=60000), now=T0 + 10)
    assert c.replies(FETCH, 1) == []
    broker.tick(T0 + 30000)
    (r,) = c.replies(FETCH, 1)
    assert acquired(r) == [(0, 1, 2)]


def test_closing_the_session_releases_the_members_records():
    broker, topic, c = setup()
    join(c, "m1")
    join(c, "m2")
    produce(topic, 2)
    c.call(FETCH, 1, fetch_body(topic, 0, member="m1"))
    r = c.call(ACK, 1, {"group_id": "g", "member_id": "m1", "share_session_epoch": -1, "topics": []})
    assert r.error_code == 0
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0, member="m2"))) == [(0, 1, 2)]


def test_heartbeat_and_describe_through_the_codecs():
    broker, topic, c = setup(partitions=2)
    r = join(c)
    assert r.member_epoch == 2 and r.heartbeat_interval_ms == 5000
    assert sorted(r.assignment.topic_partitions[0].partitions) == [0, 1]
    d = c.call(DESCRIBE, 1, {"group_ids": ["g", "x"], "include_authorized_operations": False})
    assert d.groups[0].group_state == "Stable" and d.groups[0].members[0].assignment.topic_partitions[0].topic_name == "q"
    assert d.groups[1].error_code == E.GROUP_ID_NOT_FOUND
    r = c.call(HB, 1, {"group_id": "g", "member_id": "m1", "member_epoch": 5, "rack_id": None,
                       "subscribed_topic_names": None})
    assert r.error_code == E.FENCED_MEMBER_EPOCH


def test_a_restart_with_a_data_dir_keeps_acknowledged_records_acknowledged(tmp_path):
    broker = Broker(BrokerConfig(data_dir=str(tmp_path)), T0)
    topic = broker.topics.create("q", 1, {})
    c = Client(broker)
    join(c)
    produce(topic, 6)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0, max_records=1))) == [(0, 5, 1)]
    c.call(FETCH, 1, fetch_body(topic, 1, {0: [batch(0, 2, ACCEPT)]}, max_records=0))
    broker.close()

    again = Broker(BrokerConfig(data_dir=str(tmp_path)), T0 + 1000)
    assert again.store.get("__share_group_state").internal
    c = Client(again)
    join(c, "m2")
    r = c.call(FETCH, 1, fetch_body(again.store.get("q"), 0, member="m2"))
    assert acquired(r) == [(3, 5, 2)]          # what was acquired comes back, not what was accepted
    again.close()


def test_read_committed_archives_aborted_records_and_markers():
    broker, topic, c = setup()
    broker.shares.group_configs.set("g", "share.isolation.level", "read_committed")
    join(c)
    plog = topic.partitions[0]
    plog.append(build_batch([(b"k", b"aborted", [], T0)] * 2, producer_id=7, producer_epoch=0, base_sequence=0,
                            transactional=True), T0)
    plog.append(build_batch([(b"k", b"plain", [], T0)]), T0)          # below the open transaction's marker
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0))) == []     # nothing stable yet
    plog.append_control_batch(7, 0, False, 0, T0)                    # abort: offsets 0-1 aborted, 3 the marker
    plog.append(build_batch([(b"k", b"after", [], T0)]), T0)
    r = c.call(FETCH, 1, fetch_body(topic, 1))
    assert acquired(r) == [(2, 2, 1), (4, 4, 1)] and values(r) == [b"plain", b"after"]
    states = {x["offset"]: x["state"] for x in broker.shares.existing("g", topic.topic_id, 0).in_flight()}
    assert states == {2: "Acquired", 3: "Archived", 4: "Acquired"}


def produce_one_by_one(topic, n, partition=0):
    """``n`` records, each its own batch (as a producer with linger 0 sends them)."""
    for i in range(n):
        topic.partitions[partition].append(build_batch([(b"k", b"v%d" % i, [], T0)]), T0)


def test_a_small_max_bytes_gives_one_batch_then_the_next_as_kafka_reads_the_log():
    """librdkafka's 0171 asks with a small fetch.max.bytes and expects one record per fetch: Kafka
    reads the log up to max_bytes (split evenly over the session's partitions), at least one batch."""
    broker, topic, c = setup()
    join(c)
    broker.shares.group_configs.set("g", "share.auto.offset.reset", "earliest")
    produce_one_by_one(topic, 10)
    r = c.call(FETCH, 1, fetch_body(topic, 0, max_bytes=1))
    assert acquired(r) == [(0, 0, 1)] and values(r) == [b"v0"]
    r = c.call(FETCH, 1, fetch_body(topic, 1, {0: [batch(0, 0, RELEASE)]}, max_bytes=1))
    assert acquired(r) == [(0, 0, 2)] and values(r) == [b"v0"]    # a redelivery is read from the log too
    size = len(topic.partitions[0].read(0, 1 << 20)[0])
    r = c.call(FETCH, 1, fetch_body(topic, 2, max_bytes=3 * size))
    assert acquired(r) == [(1, 3, 1)] and values(r) == [b"v1", b"v2", b"v3"]
    r = c.call(FETCH, 1, fetch_body(topic, 3))
    assert acquired(r) == [(4, 9, 1)]


def test_max_bytes_is_shared_by_the_partitions_and_only_the_first_read_may_exceed_it():
    broker, topic, c = setup(partitions=2)
    join(c)
    broker.shares.group_configs.set("g", "share.auto.offset.reset", "earliest")
    for p in (0, 1):
        produce_one_by_one(topic, 4, partition=p)
    size = len(topic.partitions[0].read(0, 1 << 20)[0])
    r = c.call(FETCH, 1, fetch_body(topic, 0, partitions=(0, 1), max_bytes=size))
    got = {p.partition_index: [(a.first_offset, a.last_offset) for a in p.acquired_records]
           for t in r.responses for p in t.partitions}
    assert got == {0: [(0, 0)], 1: []}     # half of max_bytes each: one batch by min-one, then nothing left
    r = c.call(FETCH, 1, fetch_body(topic, 1, partitions=(0, 1), max_bytes=4 * size))
    got = {p.partition_index: [(a.first_offset, a.last_offset) for a in p.acquired_records]
           for t in r.responses for p in t.partitions}
    assert got == {0: [(1, 2)], 1: [(0, 1)]}


def test_batch_size_splits_the_acquired_records_at_batch_starts():
    broker, topic, c = setup()
    join(c)
    broker.shares.group_configs.set("g", "share.auto.offset.reset", "earliest")
    produce_one_by_one(topic, 7)
    r = c.call(FETCH, 1, fetch_body(topic, 0, batch_size=3))
    assert acquired(r) == [(0, 2, 1), (3, 5, 1), (6, 6, 1)] and len(values(r)) == 7


def leave(client, member="m1", group="g"):
    r = client.call(HB, 1, {"group_id": group, "member_id": member, "member_epoch": -1, "rack_id": None,
                            "subscribed_topic_names": None})
    assert r.error_code == 0 and r.member_epoch == -1, r


def test_a_closing_consumers_last_acknowledgements_apply_when_its_leave_came_first():
    """A closing consumer sends its leave heartbeat (to the coordinator) and its last
    acknowledgements (to the partition's leader) at once; as in Kafka, leaving the group does not
    release what the member holds in its share sessions: the acknowledgements apply, closing the
    session releases the rest."""
    broker, topic, c = setup()
    join(c, "m1")
    join(c, "m2")
    produce(topic, 4)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0, member="m1"))) == [(0, 3, 1)]
    leave(c, "m1")
    r = c.call(ACK, 1, {"group_id": "g", "member_id": "m1", "share_session_epoch": -1, "topics": [
        {"topic_id": topic.topic_id, "partitions": [{"partition_index": 0,
                                                     "acknowledgement_batches": [batch(0, 2, ACCEPT)]}]}]})
    assert r.error_code == 0 and r.responses[0].partitions[0].error_code == 0
    assert broker.shares.start_offsets("g") == {(topic.topic_id, 0): 3}
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0, member="m2"))) == [(3, 3, 2)]   # the rest, released


def test_acknowledgements_in_a_final_share_fetch_apply_after_the_leave_too():
    broker, topic, c = setup()
    join(c, "m1")
    join(c, "m2")
    produce(topic, 2)
    c.call(FETCH, 1, fetch_body(topic, 0, member="m1"))
    leave(c, "m1")
    r = c.call(FETCH, 1, fetch_body(topic, -1, {0: [batch(0, 1, ACCEPT)]}, member="m1"))
    assert r.error_code == 0 and r.responses[0].partitions[0].acknowledge_error_code == 0
    assert broker.shares.start_offsets("g") == {(topic.topic_id, 0): 2}
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0, member="m2"))) == []


def test_a_member_whose_group_session_lapses_loses_its_share_sessions_and_records():
    broker, topic, c = setup()
    join(c, "m1")
    produce(topic, 2)
    c.call(FETCH, 1, fetch_body(topic, 0, member="m1"))
    broker.tick(T0 + 45000)
    assert broker.shares.sessions.partitions_of("g", "m1") == set()
    states = {x["state"] for x in broker.shares.existing("g", topic.topic_id, 0).in_flight()}
    assert states == {"Available"}


def test_a_dropped_connection_releases_its_share_sessions_records_at_once():
    """Kafka's ShareSessionCache hears of every closed connection: the share session the connection
    opened goes, and its member's records are available to the others now, not when the locks lapse."""
    broker, topic, c = setup()
    other = Client(broker, 2)
    join(c, "m1")
    join(other, "m2")
    produce(topic, 3)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0, member="m1"))) == [(0, 2, 1)]
    assert acquired(other.call(FETCH, 1, fetch_body(topic, 0, member="m2"))) == []
    c.conn.close()
    assert broker.shares.sessions.partitions_of("g", "m1") == set()
    assert acquired(other.call(FETCH, 1, fetch_body(topic, 1, member="m2"))) == [(0, 2, 2)]


def test_a_session_reopened_on_a_new_connection_outlives_the_old_ones_close():
    broker, topic, c = setup()
    join(c, "m1")
    produce(topic, 2)
    c.call(FETCH, 1, fetch_body(topic, 0, member="m1"))
    again = Client(broker, 2)
    again.call(FETCH, 1, fetch_body(topic, 0, member="m1"))   # reconnected: a new session replaces the old
    c.conn.close()
    assert broker.shares.sessions.partitions_of("g", "m1") == {(topic.topic_id, 0)}
    assert again.call(FETCH, 1, fetch_body(topic, 1, member="m1")).error_code == 0


def test_an_empty_group_id_is_a_group_like_any_other_for_the_data_path():
    """KafkaApis refuses only a null group id (INVALID_REQUEST); an empty one goes on to the share
    session and the group's share partitions (measured against Kafka 4.4: NONE, then the session's
    next epoch acknowledges)."""
    broker, topic, c = setup()
    body = fetch_body(topic, 0, group_id="", partitions=())
    body["topics"] = []
    r = c.call(FETCH, 1, body)
    assert (r.error_code, r.acquisition_lock_timeout_ms, r.responses) == (E.NONE, 30000, [])
    r = c.call(ACK, 1, {"group_id": "", "member_id": "m1", "share_session_epoch": 1, "topics": []})
    assert (r.error_code, r.responses) == (E.NONE, [])
    assert c.call(FETCH, 1, dict(body, member_id="")).error_code == E.INVALID_REQUEST


def _describe(client, topic):
    d = client.call(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 1, {"groups": [{"group_id": "g", "topics": [
        {"topic_name": topic.name, "partitions": [0]}]}]})
    (p,) = d.groups[0].topics[0].partitions
    return p.error_code, p.start_offset, p.lag


def test_describe_answers_minus_one_until_the_state_is_first_written_after_the_first_fetch():
    broker, topic, c = setup()
    produce(topic, 3)
    join(c, reset=None)
    assert _describe(c, topic) == (E.NONE, -1, -1)                  # assigned, never fetched
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0))) == []  # latest: starts at 3
    assert _describe(c, topic) == (E.NONE, -1, -1)                  # resolving writes nothing
    produce(topic, 2)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 1))) == [(3, 4, 1)]
    assert _describe(c, topic) == (E.NONE, -1, -1)                  # nor does acquiring
    c.call(FETCH, 1, fetch_body(topic, 2, {0: [batch(3, 4, ACCEPT)]}))
    assert _describe(c, topic) == (E.NONE, 3, 0)                    # the acknowledgement's write


def test_a_restart_replays_an_uninitialized_share_partition(tmp_path):
    broker = Broker(BrokerConfig(data_dir=str(tmp_path)), T0)
    topic = broker.topics.create("q", 1, {})
    produce(topic, 3)
    join(Client(broker), reset=None)
    assert broker.shares.start_offsets("g") == {(topic.topic_id, 0): -1}
    broker.close()

    again = Broker(BrokerConfig(data_dir=str(tmp_path)), T0 + 1000)
    topic = again.store.get("q")
    assert again.shares.start_offsets("g") == {(topic.topic_id, 0): -1}   # before any member is back
    c = Client(again)
    assert _describe(c, topic) == (E.NONE, -1, -1)
    produce(topic, 2)
    join(c, "m2", reset=None)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 0, member="m2"))) == []   # latest, at its first fetch
    produce(topic, 1)
    assert acquired(c.call(FETCH, 1, fetch_body(topic, 1, member="m2"))) == [(5, 5, 1)]
    again.close()
