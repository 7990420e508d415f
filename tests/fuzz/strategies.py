"""Hypothesis strategies built from the message specs: a request body for any api and version.

Values lean towards what breaks brokers: edge integers (0, -1, the type's limits, counts just
over Kafka's limits), names a broker knows (the seeded topic, ``__consumer_offsets``) next to
illegal ones, null wherever the version allows it, the seeded topic's id, and record batches
that are valid, truncated or random.
"""
from __future__ import annotations

from hypothesis import strategies as st

from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.spec import FieldSpec
from kafkaemu.storage.record_batch import build_batch
from tests.conftest import T0

TOPIC = "fuzz-topic"
TOPIC_ID = bytes(range(1, 17))
GROUP = "fuzz-group"


_INT_LIMITS = {
    "int8": (-(2**7), 2**7 - 1), "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1), "uint32": (0, 2**32 - 1),
}
_EDGE_INTS = (0, 1, -1, 2, 3, 5, 50, 6000, 10000, 10001, 45000, 1_000_000)
_NAMES = (TOPIC, GROUP, "__consumer_offsets", "", ".", "bad/name", "x" * 250, "fresh-topic",
          "PLAIN", "range", "consumer", "cleanup.policy", "retention.ms", "compact")
_VALID_BATCH = build_batch([(b"k", b"v", [], T0), (None, b"w", [("h", b"1")], T0 + 1)])
_IDEMPOTENT_BATCH = build_batch([(None, b"v", [], T0)], producer_id=0, producer_epoch=0, base_sequence=0)


class Seen:
    """Strings and integers the broker answered so far (member ids, generations, producer ids),
    offered to later requests of a conversation."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self.ints: list[int] = []

    def harvest(self, obj) -> None:
        if isinstance(obj, dict):
            for key, value in obj.items():
                if not str(key).startswith("_"):
                    self.harvest(value)
        elif isinstance(obj, list):
            for value in obj:
                self.harvest(value)
        elif isinstance(obj, bool):
            return
        elif isinstance(obj, str) and obj and obj not in self.strings and len(self.strings) < 40:
            self.strings.append(obj)
        elif isinstance(obj, int) and obj not in self.ints and len(self.ints) < 40:
            self.ints.append(obj)


_NOTHING_SEEN = Seen()


def ints(typ: str, seen: Seen = _NOTHING_SEEN) -> st.SearchStrategy[int]:
    lo, hi = _INT_LIMITS[typ]
    edges = [v for v in (*_EDGE_INTS, lo, hi, lo + 1, hi - 1) if lo <= v <= hi]
    answered = [v for v in seen.ints if lo <= v <= hi]
    if answered:  # what the broker said (generations, producer ids) is what gets past its checks
        return st.one_of(st.sampled_from(answered), st.sampled_from(edges), st.integers(lo, hi))
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi))


def _records() -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.just(_VALID_BATCH),
        st.just(_IDEMPOTENT_BATCH),
        st.just(_VALID_BATCH + _VALID_BATCH),
        st.integers(0, len(_VALID_BATCH) - 1).map(lambda n: _VALID_BATCH[:n]),
        st.tuples(st.integers(0, len(_VALID_BATCH) - 1), st.integers(0, 255)).map(
            lambda ix: _VALID_BATCH[:ix[0]] + bytes([ix[1]]) + _VALID_BATCH[ix[0] + 1:]),
        st.binary(max_size=80),
    )


def _primitive(typ: str, seen: Seen) -> st.SearchStrategy:
    if typ in _INT_LIMITS:
        return ints(typ, seen)
    if typ == "bool":
        return st.booleans()
    if typ == "float64":
        return st.floats(allow_nan=True, allow_infinity=True)
    if typ == "string":
        if seen.strings:  # member ids, group and topic names the broker answered
            return st.one_of(st.sampled_from(seen.strings), st.sampled_from(_NAMES), st.text(max_size=12))
        return st.one_of(st.sampled_from(_NAMES), st.text(max_size=12))
    if typ == "uuid":
        return st.one_of(st.sampled_from([bytes(16), TOPIC_ID]), st.binary(min_size=16, max_size=16))
    if typ == "bytes":
        return st.binary(max_size=40)
    if typ == "records":
        return _records()
    raise AssertionError(typ)


def field_value(f: FieldSpec, version: int, seen: Seen) -> st.SearchStrategy:
    if f.is_array:
        element = fields_dict(f.fields, version, seen) if f.is_struct else _primitive(f.element_type, seen)
        value = st.lists(element, max_size=3)
    elif f.is_struct:
        value = fields_dict(f.fields, version, seen)
    else:
        value = _primitive(f.element_type, seen)
    if version in f.nullable:
        value = st.one_of(st.none(), value)
    return value


def fields_dict(fields: list[FieldSpec], version: int, seen: Seen) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({f.name: field_value(f, version, seen) for f in fields if version in f.versions})


def request_body(api_key: int, version: int, seen: Seen = _NOTHING_SEEN) -> st.SearchStrategy[dict]:
    return fields_dict(catalog().requests[api_key].fields, version, seen)


def encoded_request(api_key: int, version: int, correlation_id: int, client_id: str | None = "fuzz",
                    seen: Seen = _NOTHING_SEEN):
    """Strategy for one whole request frame body (header + body), the encoding done by the codec."""
    cat = catalog()
    flexible = cat.is_flexible_request(api_key, version)
    header = cat.data("RequestHeader", 2 if flexible else 1).encode(
        {"request_api_key": api_key, "request_api_version": version, "correlation_id": correlation_id,
         "client_id": client_id})
    return request_body(api_key, version, seen).map(lambda body: header + cat.request(api_key, version).encode(body))
