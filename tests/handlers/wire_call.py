"""One request through the sans-IO connection, encoded and decoded as on the wire."""
from __future__ import annotations

import struct

from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol.catalog import catalog
from kafkaemu.testing.raw_client import encode_request
from kafkaemu.wire.connection import Connection
from kafkaemu.wire.framing import FrameDecoder


def call(broker, api_key: int, version: int, body: dict, now_ms: int | None = None):
    """The decoded response (None when the request gets no reply); the connection must stay open."""
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1")
    conn.receive(encode_request(api_key, version, body, correlation_id=42), broker.now_ms if now_ms is None else now_ms)
    assert not conn.closed
    replies = FrameDecoder(1 << 30).feed(conn.take_output())
    if not replies:
        return None
    (reply,) = replies
    assert struct.unpack_from(">i", reply)[0] == 42
    flexible = catalog().is_flexible_request(api_key, version) and api_key != 18
    return catalog().response(api_key, version).decode(reply[5 if flexible else 4:])
