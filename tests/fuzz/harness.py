"""A broker, a sans-IO connection to it, and the checks every fuzzed exchange must pass.

The registry's handlers are wrapped so that a handler raising is a finding: the connection
would turn it into a closed connection (ProtocolViolation), which hides the bug from a
property that only looks at what ``receive`` raises.
"""
from __future__ import annotations

import functools
import struct

from kafkaemu.broker import Broker
from kafkaemu.handlers import REGISTRY
from kafkaemu.handlers.registry import ApiRegistry
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.storage.record_batch import build_batch
from kafkaemu.testing.raw_client import api_versions_frame, encode_request
from kafkaemu.wire.connection import AuthenticationFailure, Connection, ProtocolViolation
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import new_broker

from .strategies import T0, TOPIC, TOPIC_ID

API_VERSIONS = 18
LATER_MS = 5 * 60 * 1000  # parked replies due within five minutes are released before the checks


from kafkaemu.protocol.envelope import RequestDecodeError  # noqa: E402

HANDLER_FAILURES: list[str] = []


def _checked(func):
    @functools.wraps(func)
    def run(ctx, req):
        try:
            return func(ctx, req)
        except RequestDecodeError:   # a request Kafka would not parse (an unknown ACL enum): refused
            raise
        except Exception as exc:
            HANDLER_FAILURES.append(f"{func.__module__} v{ctx.api_version} raised {exc!r} on {req}")
            raise
    return run


def _checked_registry() -> ApiRegistry:
    registry = ApiRegistry()
    for api_key, lo, hi in REGISTRY.versions():
        registry.register(api_key, lo, hi)(_checked(REGISTRY.get(api_key).func))
    return registry


CHECKED = _checked_registry()


def advertised() -> list[tuple[int, int]]:
    return [(k, v) for k, lo, hi in REGISTRY.versions() for v in range(lo, hi + 1)]


def seeded_broker(nodes: int = 1) -> Broker:
    """A broker (of ``nodes`` nodes) with one three-partition topic holding a few records."""
    broker = new_broker(T0, nodes=nodes)
    topic = broker.store.create_topic(TOPIC, 3, {}, topic_id=TOPIC_ID)
    topic.partitions[0].append(build_batch([(b"k", b"v", [], T0 + i) for i in range(3)]), T0)
    return broker


class Session:
    """One connection: send bytes, then check everything it answered."""

    def __init__(self, broker: Broker, connection_id: int = 1, authenticator=None) -> None:
        HANDLER_FAILURES.clear()
        self.broker = broker
        self.aborted = False
        self.conn = Connection(broker, CHECKED, connection_id, "127.0.0.1", on_close=self._on_abort,
                               authenticator=authenticator)
        self.out = bytearray()
        self.violation: ProtocolViolation | None = None

    def _on_abort(self) -> None:
        self.aborted = True

    def send(self, data: bytes, now_ms: int = T0) -> None:
        """Feed bytes; only ProtocolViolation (and its AuthenticationFailure) may escape."""
        if self.violation is not None:
            return
        try:
            self.conn.receive(data, now_ms)
        except (ProtocolViolation, AuthenticationFailure) as exc:
            self.violation = exc
            self.conn.close()
        self.drain(now_ms)

    def drain(self, now_ms: int) -> None:
        conn = self.conn
        while not conn.closed:
            self.out += conn.take_output()
            if not conn.has_queued_input:
                break
            try:
                conn.process(now_ms)
            except (ProtocolViolation, AuthenticationFailure) as exc:
                self.violation = exc
                conn.close()
        self.out += conn.take_output()

    def release_parked(self) -> None:
        """Let timers release what they hold (long polls, rebalance delays), then collect."""
        start = max(T0, self.broker.now_ms)
        for step in (1000, 10_000, 60_000, LATER_MS):
            self.broker.tick(start + step)
            self.drain(start + step)

    def replies(self) -> list[bytes]:
        assert not HANDLER_FAILURES, HANDLER_FAILURES
        return FrameDecoder(1 << 30).feed(bytes(self.out))


def check_replies(replies: list[bytes], sent: list[tuple[int, int, int]]) -> None:
    """Each reply answers the next request that wants one, in order, and decodes as its response.

    ``sent``: (correlation id, api key, version) of every request, in order."""
    assert len(replies) <= len(sent), (len(replies), sent)
    pending = list(sent)
    cat = catalog()
    for reply in replies:
        assert len(reply) >= 4, reply
        (cid,) = struct.unpack_from(">i", reply)
        while pending and pending[0][0] != cid:
            pending.pop(0)  # no reply: acks=0 produce
        assert pending, f"reply with correlation id {cid} answers nothing sent ({sent})"
        _, api_key, version = pending.pop(0)
        if api_key == API_VERSIONS:
            api = REGISTRY.get(API_VERSIONS)
            version = version if api.supports(version) else 0
            cat.response(API_VERSIONS, version).decode(reply[4:])
        else:
            flexible = cat.is_flexible_request(api_key, version)
            cat.response(api_key, version).decode(reply[5 if flexible else 4:])


def harvest_replies(session: Session, sent: list[tuple[int, int, int]], seen) -> None:
    """Check the replies so far (``check_replies``) and give ``seen`` what each carried (member ids,
    epochs, producer ids) for the next requests to reuse; ApiVersions' carry nothing to reuse."""
    replies = session.replies()
    check_replies(replies, sent)
    cat = catalog()
    for reply in replies:
        (cid,) = struct.unpack_from(">i", reply)
        key, ver = next((k, v) for c, k, v in sent if c == cid)
        if key != API_VERSIONS:
            seen.harvest(cat.response(key, ver).decode(reply[5 if cat.is_flexible_request(key, ver) else 4:]))


def assert_still_serving(broker: Broker, session: Session | None = None) -> None:
    """A fresh connection (and the fuzzed one, when it is open with nothing pending or partly
    received) gets ApiVersions and Metadata answered."""
    assert not HANDLER_FAILURES, HANDLER_FAILURES
    sessions = [Session(broker, connection_id=99)]
    if session is not None and not session.conn.closed and session.conn.pending_replies == 0 \
            and session.conn.buffered_bytes == 0:
        session.out.clear()
        sessions.append(session)
    for s in sessions:
        s.send(api_versions_frame(version=3, correlation_id=7001)
               + encode_request(ApiKey.METADATA, 12, {"topics": [{"name": TOPIC}], "allow_auto_topic_creation": False},
                                correlation_id=7002))
        assert s.violation is None, s.violation
        versions, metadata = s.replies()
        assert struct.unpack_from(">i", versions)[0] == 7001
        assert catalog().response(API_VERSIONS, 3).decode(versions[4:]).error_code == 0
        assert struct.unpack_from(">i", metadata)[0] == 7002
        topics = catalog().response(ApiKey.METADATA, 12).decode(metadata[5:]).topics
        exists = broker.store.get(TOPIC) is not None  # a fuzzed DeleteTopics may have removed it
        assert [(t.name, t.error_code) for t in topics] == [(TOPIC, 0 if exists else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
