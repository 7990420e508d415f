"""Request frames captured from real clients (``golden/*.hex``, made by ``capture_golden.py``)
decode with kafkaemu's codecs and re-encode to the same bytes."""
from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest

from kafkaemu.protocol import envelope
from kafkaemu.protocol.catalog import catalog

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = sorted(GOLDEN.glob("*.hex"))
CLIENT_IDS = {"kafka-python": "golden-kp", "confluent-kafka": "golden-rdkafka", "aiokafka": "golden-aiokafka",
              "java": None}  # the Java conformance programs keep kafka-clients' own client ids


def load(path: Path) -> bytes:
    return bytes.fromhex("".join(line for line in path.read_text().splitlines() if not line.startswith("#")))


def split(data: bytes, compiled: bool):
    """(header, body) of a request frame, the header version chosen as a broker does."""
    cat = catalog()
    api_key, api_version = struct.unpack_from(">hh", data)
    header_codec = cat.data("RequestHeader", envelope.request_header_version(api_key, api_version))
    stream = io.BytesIO(data)
    header = header_codec.decode_prefix(stream)
    header_bytes = data[:stream.tell()]
    assert header_codec.decode(header_bytes, compiled=compiled) == header
    body_codec = cat.request(api_key, api_version)
    body = data[stream.tell():]
    if compiled:  # the compiled codec itself, not Codec.decode's fallback to the plain one
        assert body_codec.compiled.parse(body) == body_codec.decode(body, compiled=False)
    return header_codec, header, body_codec, body_codec.decode(body, compiled=compiled)


def test_golden_frames_cover_three_clients_and_the_group_apis():
    clients = {p.name.split("__")[0] for p in FILES}
    assert clients == set(CLIENT_IDS)
    apis = {p.name.split("__")[1].rsplit("_v", 1)[0] for p in FILES}
    assert {"ApiVersions", "Metadata", "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup",
            "OffsetCommit", "OffsetFetch", "Produce", "Fetch", "ListOffsets", "FindCoordinator",
            "CreateTopics", "DeleteTopics", "CreatePartitions", "DescribeConfigs", "DescribeGroups",
            "ListGroups", "DeleteGroups", "DeleteRecords"} <= apis


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_golden_frame_decodes_and_reencodes_identically(path, compiled):
    data = load(path)
    header_codec, header, body_codec, body = split(data, compiled)
    client = path.name.split("__")[0]
    assert header.client_id == (CLIENT_IDS[client] or header.client_id) and header.client_id
    assert f"{catalog().api_name(header.request_api_key)}_v{header.request_api_version}" == \
        path.stem.split("__")[1]
    again = header_codec.encode(header, compiled=compiled) + body_codec.encode(body, compiled=compiled)
    assert again == data


def _with_api(name: str):
    return [p for p in FILES if p.name.split("__")[1].startswith(name + "_v")]


@pytest.mark.parametrize("path", _with_api("JoinGroup"), ids=lambda p: p.stem)
def test_golden_join_group_carries_a_consumer_subscription(path):
    _, _, _, body = split(load(path), True)
    assert body.protocol_type == "consumer" and body.protocols
    for protocol in body.protocols:
        version = struct.unpack_from(">h", protocol.metadata)[0]
        sub = catalog().data("ConsumerProtocolSubscription", min(version, 3)).decode(protocol.metadata[2:])
        assert sub.topics
        if not path.name.startswith("java__"):  # the Java programs subscribe to topics of their own
            assert any(t.startswith("golden-topic") for t in sub.topics)


@pytest.mark.parametrize("path", _with_api("SyncGroup"), ids=lambda p: p.stem)
def test_golden_sync_group_leader_assignment_decodes(path):
    _, _, _, body = split(load(path), True)
    assert len(body.assignments) == 1
    raw = body.assignments[0].assignment
    version = struct.unpack_from(">h", raw)[0]
    assignment = catalog().data("ConsumerProtocolAssignment", min(version, 3)).decode(raw[2:])
    # (kafka-python's first sync can come before it knows the topic: an empty assignment)
    if not path.name.startswith("java__"):
        assert {tp.topic for tp in assignment.assigned_partitions} <= {"golden-topic"}
    assert all(tp.partitions for tp in assignment.assigned_partitions)


@pytest.mark.parametrize("path", _with_api("OffsetCommit"), ids=lambda p: p.stem)
def test_golden_offset_commit_names_the_committed_offset(path):
    _, _, _, body = split(load(path), True)
    if path.name.startswith("java__"):
        assert all(p.committed_offset >= 0 for t in body.topics for p in t.partitions)
        return
    partitions = [p for t in body.topics if t.name == "golden-topic" for p in t.partitions]
    assert [(p.partition_index, p.committed_offset) for p in partitions] == [(0, 1)]
