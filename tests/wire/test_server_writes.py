"""The server's protocol writes what one read of the socket answered in one write, and a reply
completed outside a read (a timer, another connection) in a callback of its own; replies that
came before a protocol violation still go out before the close."""
from __future__ import annotations

import asyncio

from kafkaemu.config import BrokerConfig
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.server import KafkaServer, _KafkaProtocol
from kafkaemu.wire.framing import FrameDecoder

API_VERSIONS_BODY = {"client_software_name": "t", "client_software_version": "1"}


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 5555) if name == "peername" else default

    def write(self, data) -> None:
        self.writes.append(bytes(data))

    def writelines(self, chunks) -> None:
        self.writes.append(b"".join(bytes(c) for c in chunks))

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def _replies(writes: list[bytes]) -> list[int]:
    frames = FrameDecoder(1 << 30).feed(b"".join(writes))
    return [envelope.decode_response(ApiKey.API_VERSIONS, 3, f)[0] for f in frames]


def _run(scenario) -> None:
    async def main():
        server = KafkaServer(BrokerConfig(port=0, manual_clock=True))
        server._loop = asyncio.get_running_loop()
        proto, transport = _KafkaProtocol(server, server.broker.node_id), FakeTransport()
        proto.connection_made(transport)
        await scenario(proto, transport)
    asyncio.run(main())


def test_the_replies_to_one_read_are_one_write_in_request_order():
    async def scenario(proto, transport):
        requests = (envelope.encode_request(ApiKey.API_VERSIONS, 3, API_VERSIONS_BODY, corr) for corr in range(50))
        proto.data_received(b"".join(requests))
        assert len(transport.writes) == 1
        assert _replies(transport.writes) == list(range(50))
    _run(scenario)


def test_a_reply_completed_outside_a_read_is_written_by_a_callback():
    async def scenario(proto, transport):
        conn = proto.conn
        conn._send(envelope.encode_response(ApiKey.API_VERSIONS, 3, 7, {"error_code": 0, "api_keys": []}))
        conn._send(envelope.encode_response(ApiKey.API_VERSIONS, 3, 8, {"error_code": 0, "api_keys": []}))
        assert transport.writes == []       # not one write per reply ...
        await asyncio.sleep(0)
        assert len(transport.writes) == 1   # ... but one for both, on the next loop iteration
        assert _replies(transport.writes) == [7, 8]
    _run(scenario)


def test_replies_before_a_protocol_violation_are_written_before_the_close():
    async def scenario(proto, transport):
        good = b"".join(envelope.encode_request(ApiKey.API_VERSIONS, 3, API_VERSIONS_BODY, corr) for corr in (1, 2))
        bad = b"\x00\x00\x00\x08" + b"\x7f\x00\x00\x00\x00\x00\x00\x03"   # api key 32512: unknown
        proto.data_received(good + bad)
        assert transport.closed
        assert _replies(transport.writes) == [1, 2]
    _run(scenario)
