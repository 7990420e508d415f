"""The protocol's edge rules, in one place: which header a request and its response carry, and how
a message is framed. Used by the connection, the SASL authenticator, the raw test client, the
benchmarks and the tests, so none of them re-derives a rule.

- A frame is a 4-byte big-endian size, then the header, then the body.
- Requests of a flexible version carry header v2 (tagged fields), others v1; the client id is
  never a compact string, even in v2 (see ``protocol_specs/headers.spec``).
- Responses of a flexible version carry header v1 (an empty tag buffer after the correlation id),
  others v0; ApiVersions responses always carry v0, so a client that does not yet know the
  broker's versions can read the answer (KIP-511).
- An ApiVersions request above the supported version is answered in v0 with UNSUPPORTED_VERSION
  and the supported range, so the client retries with a version both know.
"""
from __future__ import annotations

import io
import struct
from typing import Any

from .api_keys import ApiKey
from .catalog import catalog
from .errors import ErrorCode


_SIZE = struct.Struct(">i")
_CORRELATION = struct.Struct(">i")
_KEY_VERSION_CORRELATION = struct.Struct(">hhi")


class RequestDecodeError(Exception):
    """The bytes are not a request kafkaemu can decode (too short, or a body that does not parse)."""


def frame(*parts: bytes) -> bytes:
    """Size-prefix the concatenation of ``parts``."""
    return _SIZE.pack(sum(len(p) for p in parts)) + b"".join(parts)


def api_name(api_key: int) -> str:
    """Kafka's name of an API ("JoinGroup")."""
    return catalog().api_name(api_key)


def request_header_version(api_key: int, api_version: int) -> int:
    return 2 if catalog().is_flexible_request(api_key, api_version) else 1


def response_header_version(api_key: int, api_version: int) -> int:
    if api_key == ApiKey.API_VERSIONS:
        return 0
    return 1 if catalog().is_flexible_request(api_key, api_version) else 0


def peek_request(data: bytes) -> tuple[int, int, int]:
    """``(api_key, api_version, correlation_id)`` of a request frame body, without decoding it."""
    if len(data) < _KEY_VERSION_CORRELATION.size:
        raise RequestDecodeError(f"request of {len(data)} bytes is shorter than a header")
    return _KEY_VERSION_CORRELATION.unpack_from(data)


def decode_request(data: bytes, api_key: int | None = None, api_version: int | None = None) -> tuple[Any, Any]:
    """``(header, body)`` of a request frame body (without its size); ``api_key``/``api_version``
    when the caller has peeked them already. Raises RequestDecodeError."""
    if api_key is None or api_version is None:
        api_key, api_version, _ = peek_request(data)
    cat = catalog()
    try:  # the generated codecs; on any failure the reference codecs below give the error
        header, pos = cat.data("RequestHeader", request_header_version(api_key, api_version)).fast.decode_at(data, 0)
        return header, cat.request(api_key, api_version).fast.decode_at(data, pos)[0]
    except Exception:
        pass
    stream = io.BytesIO(data)
    try:
        header = cat.data("RequestHeader", request_header_version(api_key, api_version)).decode_prefix(stream)
        body = cat.request(api_key, api_version).decode(data[stream.tell():], strict=False)
    except Exception as exc:  # DecodeError and the other errors construct raises
        raise RequestDecodeError(f"cannot decode {cat.api_name(api_key)} v{api_version}: {exc}") from None
    return header, body


def encode_request(api_key: int, api_version: int, body: dict, correlation_id: int = 1,
                   client_id: str | None = "kafkaemu") -> bytes:
    """A whole request frame, as a client sends it."""
    cat = catalog()
    header = cat.data("RequestHeader", request_header_version(api_key, api_version)).encode(
        {"request_api_key": api_key, "request_api_version": api_version,
         "correlation_id": correlation_id, "client_id": client_id})
    return frame(header, cat.request(api_key, api_version).encode(body))


def response_head(api_key: int, api_version: int, correlation_id: int) -> bytes:
    """The response header's bytes (v0: the correlation id; v1: and an empty tag buffer)."""
    head = _CORRELATION.pack(correlation_id)
    return head + b"\x00" if response_header_version(api_key, api_version) else head


def response_codec(api_key: int, api_version: int):
    """The codec of a response body (the header is ``response_head``)."""
    return catalog().response(api_key, api_version)


# Requests a client repeats byte for byte (a member's Heartbeat, a Metadata refresh, a committed
# offsets poll) whose handlers only read the decoded body: a body seen before is reused, not decoded
# again (``Route.reused_bodies``, body bytes -> decoded body, at most MAX_REUSED_BODIES a route).
REUSED_BODY_APIS = frozenset({ApiKey.METADATA, ApiKey.HEARTBEAT, ApiKey.OFFSET_FETCH})
MAX_REUSED_BODIES = 64


class Route:
    """What the connection needs to handle one (api key, version), looked up once: the request
    header's and body's generated decoders, the response body's encoder and its header's form, and
    for the APIs of REUSED_BODY_APIS the bodies decoded lately."""

    __slots__ = ("api_key", "api_version", "name", "decode_header", "decode_body", "encode_body",
                 "chunked", "head_tag", "reused_bodies")

    def __init__(self, api_key: int, api_version: int) -> None:
        cat = catalog()
        self.api_key, self.api_version, self.name = api_key, api_version, cat.api_name(api_key)
        self.decode_header = cat.data("RequestHeader", request_header_version(api_key, api_version)).fast.decode_at
        self.decode_body = cat.request(api_key, api_version).fast.decode_at
        fast = cat.response(api_key, api_version).fast
        self.encode_body = fast._encode
        self.chunked = fast.has_chunks   # a bytes/records field may be given as chunks
        self.head_tag = b"\x00" if response_header_version(api_key, api_version) else b""
        self.reused_bodies: dict[bytes, Any] | None = {} if api_key in REUSED_BODY_APIS else None


_routes: dict[tuple[int, int], Route] = {}


def route(api_key: int, api_version: int) -> Route:
    """The Route of a request the catalogue has (KeyError otherwise)."""
    found = _routes.get((api_key, api_version))
    if found is None:
        found = _routes[(api_key, api_version)] = Route(api_key, api_version)
    return found


def encode_response(api_key: int, api_version: int, correlation_id: int, body: dict) -> bytes:
    """A whole response frame. Raises whatever the codec raises for a body that does not fit."""
    return frame(response_head(api_key, api_version, correlation_id),
                 catalog().response(api_key, api_version).encode(body))


def decode_response(api_key: int, api_version: int, data: bytes) -> tuple[int, Any]:
    """``(correlation_id, body)`` of a response frame body (without its size)."""
    (correlation_id,) = _CORRELATION.unpack_from(data)
    start = 4 + response_header_version(api_key, api_version)  # v1's empty tag buffer is one byte
    return correlation_id, catalog().response(api_key, api_version).decode(data[start:])


def unsupported_api_versions(correlation_id: int, api_keys: list[dict]) -> bytes:
    """The v0 answer to an ApiVersions request newer than kafkaemu supports."""
    return encode_response(ApiKey.API_VERSIONS, 0, correlation_id,
                           {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": api_keys})
