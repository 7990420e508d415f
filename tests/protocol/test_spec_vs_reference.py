"""``protocol_specs/`` against Apache Kafka's JSON message definitions in ``../shared/reference``.

For every version kafkaemu specifies, each message must be one of Apache Kafka's versions and have
its fields (snake_case of the reference names) in the same order, with the same types, nullability,
tags, defaults and compact/flexible encoding. What kafkaemu implements must match them, not the
other way round; that every client API is specified at 4.4's versions is
``test_kafka_4_4_coverage.py``'s. Comparing version by version (not the range notation) lets
kafkaemu leave out versions no current client sends.

The definitions are Apache Kafka's. Kafka 4.4.0's come first, read from its kafka-clients jar
(``common/message/``) in the reference broker's cache (``python -m kafka_reference fetch``, Maven);
then those in the project's ``../shared/reference``, beside this checkout or beside one of its
parents (a git worktree); without either the tests skip, naming what is missing. Kafka 4.3's
(``kafka-4.3-message-specs``) come next; the older ``kafka-message-specs`` has the
``__consumer_offsets`` records and the versions Kafka 4.0 removed (KIP-896) that kafkaemu still
answers for old clients.
"""
from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest

from kafkaemu.protocol.spec import FieldSpec, VersionRange
from tests.protocol.samples import all_messages, default_of

REPO = Path(__file__).resolve().parents[2]
REFERENCES = ("kafka-4.3-message-specs", "kafka-message-specs")
# records the shared reference does not define (the share coordinator's __share_group_state records):
# the project holds only what it wrote, so these are checked by the share tests' round trips instead
NOT_IN_THE_REFERENCE = {"ShareSnapshotKey", "ShareSnapshotValue"} | {
    # KIP-1071's records, absent from the reference's group-coordinator definitions: checked by the
    # streams groups' record round trips (tests/core/streams)
    f"StreamsGroup{kind}{part}" for kind in ("Metadata", "MemberMetadata", "TargetAssignmentMetadata",
                                             "TargetAssignmentMember", "CurrentMemberAssignment", "Topology")
    for part in ("Key", "Value")}
MESSAGES = all_messages()


def _with_initializing_topics(ref: dict) -> dict:
    """Kafka 4.1+ (GroupMetadataManager.addInitializingTopicsRecords) writes InitializingTopics, of
    InitializedTopics' type, first in ShareGroupStatePartitionMetadataValue; the shared reference is
    Kafka 4.0's, without it."""
    if any(f["name"] == "InitializingTopics" for f in ref["fields"]):
        return ref
    [initialized] = [f for f in ref["fields"] if f["name"] == "InitializedTopics"]
    return {**ref, "fields": [{**initialized, "name": "InitializingTopics"}] + ref["fields"]}


def _with_assignment_epochs(ref: dict) -> dict:
    """Kafka 4.4 tags each TopicPartitions of ConsumerGroupCurrentMemberAssignmentValue with the
    epochs its partitions were assigned at (AssignmentEpochs, tag 0, as in the 4.4 group-coordinator
    jar's definition); the shared reference is older, without it."""
    epochs = {"name": "AssignmentEpochs", "versions": "0+", "nullableVersions": "0+", "taggedVersions": "0+",
              "tag": 0, "type": "[]int32", "default": "null"}
    structs = [{**c, "fields": c["fields"] + [epochs]} if c["name"] == "TopicPartitions"
               and not any(f["name"] == "AssignmentEpochs" for f in c["fields"]) else c
               for c in ref.get("commonStructs", [])]
    return {**ref, "commonStructs": structs}


# records whose Kafka 4.3-4.4 layout is newer than the shared reference's: the reference, brought up to it
NEWER_THAN_THE_REFERENCE = {"ShareGroupStatePartitionMetadataValue": _with_initializing_topics,
                            "ConsumerGroupCurrentMemberAssignmentValue": _with_assignment_epochs}


def reference_dir() -> Path | None:
    """``shared/reference`` beside the checkout or one of its parents; None when there is none."""
    for parent in REPO.parents:
        if (parent / "shared" / "reference" / REFERENCES[0]).is_dir():
            return parent / "shared" / "reference"
    return None


def kafka_4_4_jar() -> Path:
    from kafka_reference.broker import JARS, KAFKA_VERSION
    return JARS / f"kafka-clients-{KAFKA_VERSION}.jar"


def kafka_4_4_definition(name: str) -> dict | None:
    """Kafka 4.4.0's JSON definition of message ``name`` from its kafka-clients jar, when fetched."""
    jar = kafka_4_4_jar()
    if not jar.exists():
        return None
    with zipfile.ZipFile(jar) as archive:
        try:
            text = archive.read(f"common/message/{name}.json").decode()
        except KeyError:
            return None
    return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _load(name: str) -> list[dict]:
    """Apache Kafka's definitions of message ``name``, the newest reference's first."""
    root = reference_dir()
    if root is None:
        pytest.skip(f"Apache Kafka's message definitions not found: no ../shared/reference/{REFERENCES[0]} "
                    f"beside {REPO} or its parents")
    if not kafka_4_4_jar().exists():   # 4.3's definitions alone would fail every message 4.4 changed
        pytest.skip(f"Kafka 4.4.0's message definitions not found: no {kafka_4_4_jar()} "
                    "(`make kafka-deps` fetches it with Maven)")
    paths = [path for ref in REFERENCES for path in sorted((root / ref).rglob(f"{name}.json"))]
    newest = kafka_4_4_definition(name)
    if not paths and newest is None and name in NOT_IN_THE_REFERENCE:
        pytest.skip(f"{name}: not among Apache Kafka's definitions under {root}")
    assert paths or newest, f"no reference JSON for {name} under {', '.join(str(root / ref) for ref in REFERENCES)}"
    return [newest] * (newest is not None) + [
        json.loads("\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("//")))
        for path in paths]


def _default_text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _ref_fields(fields: list[dict], common: dict) -> list[FieldSpec]:
    out = []
    for f in fields:
        children = f.get("fields")
        if children is None and f["type"].lstrip("[]") in common:
            children = common[f["type"].lstrip("[]")]
        out.append(FieldSpec(
            name=snake(f["name"]), type=f["type"],
            # as Kafka's generator: a tagged field without versions exists in its tagged versions
            versions=VersionRange.parse(f.get("versions", f.get("taggedVersions"))),
            nullable=VersionRange.parse(f.get("nullableVersions", "none")),
            default=_default_text(f.get("default")),
            tag=f.get("tag"),
            tagged=VersionRange.parse(f.get("taggedVersions", "none")),
            flex=VersionRange.parse(f["flexibleVersions"]) if "flexibleVersions" in f else None,
            fields=_ref_fields(children or [], common),
        ))
    return out


def _at(fields: list[FieldSpec], version: int, flexible: bool) -> list[tuple]:
    """What the wire format of ``fields`` at ``version`` depends on, field by field."""
    out = []
    for f in fields:
        if version not in f.versions:
            continue
        compact = flexible if f.flex is None else version in f.flex
        tagged = flexible and version in f.tagged
        out.append((f.name, f.type, version in f.nullable, tagged, f.tag if tagged else None,
                    compact, repr(default_of(f)), _at(f.fields, version, flexible)))
    return out


@pytest.mark.parametrize(("kind", "spec"), MESSAGES, ids=[s.name for _, s in MESSAGES])
def test_spec_matches_reference(kind, spec):
    refs = _load(spec.name)
    if spec.name in NEWER_THAN_THE_REFERENCE:
        refs = [NEWER_THAN_THE_REFERENCE[spec.name](ref) for ref in refs]
    for ref in refs:
        assert ref["type"] == kind if kind in ("request", "response") else ref["type"] in ("data", "header")
        if kind in ("request", "response"):
            assert ref["apiKey"] == spec.api_key
    for v in spec.version_list:
        ref = next((r for r in refs if v in VersionRange.parse(r["validVersions"])), None)
        if ref is None and not kafka_4_4_jar().exists():
            pytest.skip(f"{spec.name} v{v} is newer than Kafka 4.3's definitions, and Kafka 4.4.0's are not "
                        f"here: no {kafka_4_4_jar()} (make kafka-deps fetches it)")
        assert ref is not None, f"v{v} is none of Apache Kafka's versions " \
                                f"({', '.join(r['validVersions'] for r in refs)})"
        flexible = VersionRange.parse(ref["flexibleVersions"])
        common = {s["name"]: s["fields"] for s in ref.get("commonStructs", [])}
        ref_fields = _ref_fields(ref["fields"], common)
        assert (v in spec.flexible) == (v in flexible), f"v{v} flexible"
        assert _at(spec.fields, v, v in spec.flexible) == _at(ref_fields, v, v in flexible), f"v{v}"


def test_every_api_of_the_issue_is_specified():
    """The APIs issue 2 lists, at least, are in ``protocol_specs/``."""
    keys = {s.api_key for kind, s in MESSAGES if kind == "request"}
    wanted = {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 32, 36, 37,
              42, 47, 60, 68, 69}
    assert wanted <= keys
    assert keys == {s.api_key for kind, s in MESSAGES if kind == "response"}


def test_request_and_response_share_versions_and_flexible_versions():
    """The server picks the response header version from the request's flexibility."""
    from kafkaemu.protocol.catalog import catalog
    cat = catalog()
    for key, req in cat.requests.items():
        resp = cat.responses[key]
        assert (req.versions, req.flexible) == (resp.versions, resp.flexible), req.name
