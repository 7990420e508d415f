"""The side-by-side benchmark's raw pipelined client (bench/peer_client.py) counts only real
answers: every request answered, correlation ids in order, error codes zero. Against an
in-process kafkaemu, a few hundred requests; no timing is asserted."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import peer_client as pc  # noqa: E402
from kafkaemu.protocol import envelope  # noqa: E402
from kafkaemu.testing import KafkaEmulator  # noqa: E402


@pytest.fixture(scope="module")
def emulator():
    with KafkaEmulator(group_initial_rebalance_delay_ms=0) as emu:
        yield emu


@pytest.fixture(scope="module")
def broker(emulator):
    host, port = emulator.bootstrap_server.rsplit(":", 1)
    return host, int(port)


@pytest.fixture(scope="module")
def group(broker):
    host, port = broker
    topic_id = pc.create_topic(host, port, 7, "peer-test")
    member = pc.form_group(host, port, 9, 5, "peer-test-group", find_version=4)
    return member, pc.request_bodies("peer-test", member, topic_id)


def test_api_versions_every_request_answered_cleanly(broker):
    host, port = broker
    out = pc.run_pipelined(host, port, pc.API_VERSIONS, 4, pc.request_bodies("t", pc.Member("g", "m", 1, 0))[18],
                           window=16, count=300)
    assert out.errors == []
    assert out.total_answered == out.answered == 300


@pytest.mark.parametrize("api_key,version", [(pc.METADATA, 12), (pc.HEARTBEAT, 4), (pc.OFFSET_COMMIT, 9),
                                             (pc.OFFSET_COMMIT, 10), (pc.OFFSET_FETCH, 9), (pc.OFFSET_FETCH, 7),
                                             (pc.OFFSET_FETCH, 10)])
def test_group_requests_over_several_connections(broker, group, api_key, version):
    host, port = broker
    member, bodies = group
    out = pc.run_pipelined(host, port, api_key, version, bodies[api_key], connections=3, window=8, count=120)
    assert out.errors == []
    assert out.total_answered == 120


def test_answers_with_an_error_code_are_not_counted(broker, group):
    host, port = broker
    member, bodies = group
    stale = dict(bodies[pc.HEARTBEAT], generation_id=member.generation_id + 7)
    out = pc.run_pipelined(host, port, pc.HEARTBEAT, 4, stale, window=8, count=50)
    assert any("error_code=22" in e for e in out.errors)     # ILLEGAL_GENERATION
    assert out.answered == 0


def test_an_answer_to_another_correlation_id_is_a_failure():
    checker = pc._Checker(pc.HEARTBEAT, 4)
    reply = envelope.encode_response(pc.HEARTBEAT, 4, 5, {"throttle_time_ms": 0, "error_code": 0})[4:]
    assert checker.check(reply, 5)
    assert not checker.check(reply, 6)
    assert checker.errors == ["correlation id 5, expected 6"]


def test_error_codes_are_found_at_any_depth():
    body = {"error_code": 0, "topics": [{"name": "t", "partitions": [{"error_code": 0}, {"error_code": 3}]}]}
    assert pc.errors_in(body) == ["topics.partitions.error_code=3"]


def test_record_replaces_only_its_own_section(tmp_path):
    import bench_peer
    path = tmp_path / "BENCHMARKS.md"
    path.write_text("# Benchmarks\n\nhand-written\n")
    bench_peer.record("## Side by side\nfirst run\n", path)
    bench_peer.record("## Side by side\nsecond run\n", path)
    text = path.read_text()
    assert text.startswith("# Benchmarks\n\nhand-written\n")
    assert "second run" in text and "first run" not in text
    assert text.count(bench_peer.BEGIN) == text.count(bench_peer.END) == 1


def test_the_topic_id_from_create_topics_is_the_one_metadata_gives(broker, group):
    host, port = broker
    member, bodies = group
    topic_id = bodies[pc.OFFSET_COMMIT]["topics"][0]["topic_id"]
    assert topic_id != bytes(16) and pc.topic_id_of(host, port, 12, "peer-test") == topic_id


def test_group_setup_retries_what_a_coordinator_answers_while_it_loads(emulator, broker):
    """A fresh Kafka answers NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or COORDINATOR_LOAD_IN_PROGRESS
    until its __consumer_offsets is loaded; the bench's setup retries them as clients do."""
    host, port = broker
    emulator.inject_fault("FindCoordinator", error="COORDINATOR_NOT_AVAILABLE", times=2)
    emulator.inject_fault("JoinGroup", error="NOT_COORDINATOR", times=1)
    member = pc.form_group(host, port, 9, 5, "peer-retry-group", find_version=4)
    assert member.member_id and member.generation_id >= 1
    emulator.inject_fault("SyncGroup", error="COORDINATOR_LOAD_IN_PROGRESS", times=1)
    again = pc.form_group(host, port, 9, 5, "peer-retry-sync-group", find_version=4)
    assert again.member_id and again.generation_id >= 1
    assert [r["fired"] for r in emulator.faults()] == [2, 1, 1]


def test_group_setup_gives_up_on_an_error_clients_do_not_retry(emulator, broker):
    host, port = broker
    emulator.inject_fault("JoinGroup", error="GROUP_AUTHORIZATION_FAILED", times=1)
    with pytest.raises(RuntimeError, match="JoinGroup v9: error 30"):
        pc.form_group(host, port, 9, 5, "peer-denied-group", find_version=4)
