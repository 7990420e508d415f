"""kafkaemu.spark.decoding without Spark: every record kind, malformed input never raises."""
from __future__ import annotations

from kafkaemu.spark.decoding import GROUP_METADATA, OFFSET_COMMIT, UNKNOWN, assigned_partitions, decode_record

from .records import assignment, commit, commit_tombstone, group, group_tombstone


def test_commit_and_tombstone():
    row = decode_record(*commit("g", "t", 2, 99, 1234, metadata="meta"))
    assert (row.kind, row.group, row.topic, row.partition, row.committed_offset, row.metadata,
            row.commit_timestamp_ms, row.tombstone) == (OFFSET_COMMIT, "g", "t", 2, 99, "meta", 1234, False)
    gone = decode_record(*commit_tombstone("g", "t", 2))
    assert (gone.kind, gone.tombstone, gone.committed_offset) == (OFFSET_COMMIT, True, None)


def test_group_metadata_with_assignments():
    row = decode_record(*group("g", 5, [("C1-x", [("a", 0), ("b", 1)])], protocol="roundrobin"))
    assert (row.kind, row.generation, row.protocol, row.leader) == (GROUP_METADATA, 5, "roundrobin", "C1-x")
    assert [(m.member_id, m.assignment) for m in row.members] == [("C1-x", [("a", 0), ("b", 1)])]
    assert decode_record(*group_tombstone("g")).tombstone is True


def test_assignment_versions_and_garbage():
    for version in (0, 1, 2, 3):
        assert assigned_partitions(assignment([("t", 0), ("t", 3)], version)) == [("t", 0), ("t", 3)]
    assert assigned_partitions(b"") == []
    assert assigned_partitions(b"\x00\x00\xff") == []


def test_malformed_records_are_unknown():
    assert decode_record(None, b"x").kind == UNKNOWN
    assert decode_record(b"\x00", b"x").kind == UNKNOWN
    assert decode_record(b"\x00\x07abc", b"x").kind == UNKNOWN
    key, _ = commit("g", "t", 0, 1, 1)
    assert decode_record(key, b"\x00\x03\x00").kind == UNKNOWN
