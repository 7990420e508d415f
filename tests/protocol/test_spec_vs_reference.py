"""``protocol_specs/`` against Apache Kafka's JSON message definitions in ``../shared/reference``.

For every version kafkaemu specifies, each message must have the reference's fields (snake_case
of the reference names) in the same order, with the same types, nullability, tags, defaults and
compact/flexible encoding; kafkaemu's newest version must be the reference's newest, its oldest
no older than the reference's oldest. Comparing version by version (not the range notation)
lets kafkaemu leave out versions no current client sends.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafkaemu.protocol.spec import FieldSpec, VersionRange
from tests.protocol.samples import all_messages, default_of

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO.parent / "shared" / "reference" / "kafka-message-specs"
# Apache Kafka's JSON for records the shared reference lacks (the transaction coordinator's), copied
# verbatim from apache/kafka.
REFERENCE_EXTRA = Path(__file__).resolve().parent / "reference_extra"
MESSAGES = all_messages()


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _load(name: str) -> dict:
    if not REFERENCE.is_dir():
        pytest.skip(f"reference message specs not found at {REFERENCE} (../shared is absent)")
    paths = sorted(REFERENCE.rglob(f"{name}.json")) or sorted(REFERENCE_EXTRA.glob(f"{name}.json"))
    assert paths, f"no reference JSON for {name} under {REFERENCE} or {REFERENCE_EXTRA}"
    text = "\n".join(line for line in paths[0].read_text().splitlines()
                     if not line.lstrip().startswith("//"))
    return json.loads(text)


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
    ref = _load(spec.name)
    assert ref["type"] == kind if kind in ("request", "response") else ref["type"] in ("data", "header")
    if kind in ("request", "response"):
        assert ref["apiKey"] == spec.api_key
    valid = VersionRange.parse(ref["validVersions"])
    flexible = VersionRange.parse(ref["flexibleVersions"])
    assert spec.versions.hi == valid.hi, "newest version differs from the reference"
    assert spec.versions.lo >= valid.lo
    common = {s["name"]: s["fields"] for s in ref.get("commonStructs", [])}
    ref_fields = _ref_fields(ref["fields"], common)
    for v in spec.version_list:
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
