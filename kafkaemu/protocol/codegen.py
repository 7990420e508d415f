"""The codec of one message at one version: the generated straight-line one (``fastcodec``) the
server runs, and the ``construct`` reference (``constructs.build_struct``), built and imported only
when first used (a body that fails to decode, tests).

Every version of a message decodes to the same shape: a dict with snake_case field names (read
as attributes too), where fields absent from the version hold their defaults. Encoding takes that
shape (any mapping; missing keys take defaults) and writes only what the version has.
"""
from __future__ import annotations

import io
from functools import cached_property

from .fastcodec import FastCodec
from .primitives import DecodeError
from .spec import MessageSpec


class Codec:
    """Encoder/decoder of one message at one version."""

    def __init__(self, spec: MessageSpec, version: int):
        self.spec = spec
        self.version = version
        self.flexible = version in spec.flexible

    @cached_property
    def plain(self):
        """The ``construct`` codec: the reference, and the decoder that names what fails to parse
        (built on first use; the server's requests go through ``fast``)."""
        from .constructs import build_struct
        return build_struct(self.spec.fields, self.version, self.flexible)

    @cached_property
    def compiled(self):
        return self.plain.compile()

    @cached_property
    def fast(self) -> FastCodec:
        """The generated straight-line codec (``fastcodec``); this ``construct`` one is its reference."""
        return FastCodec(self.spec, self.version)

    def decode(self, data: bytes, *, compiled: bool = True, strict: bool = True):
        """Decode a whole body. Raises DecodeError. Trailing bytes are an error when ``strict``;
        the server is lenient, as Kafka is (librdkafka pads some Metadata requests). ``compiled``:
        the generated codec, falling back to the reference codec (for its error) when it fails."""
        if compiled:
            try:
                obj, end = self.fast.decode_at(data, 0)
            except Exception:  # hostile bytes: the reference codec names the failing field
                pass
            else:
                if not strict or end == len(data):
                    return obj
        stream = io.BytesIO(data)
        try:
            obj = self.plain.parse_stream(stream)
        except DecodeError:
            raise
        except Exception as exc:   # construct's own errors (ConstructError) and others
            raise DecodeError(f"{self.spec.name} v{self.version}: {exc}") from exc
        if strict and stream.tell() != len(data):
            raise DecodeError(f"{self.spec.name} v{self.version}: {len(data) - stream.tell()} trailing bytes")
        return obj

    def decode_prefix(self, stream: io.BytesIO):
        """Decode from a stream, leaving it positioned after the message (headers)."""
        return self.plain.parse_stream(stream)

    def encode(self, obj, *, compiled: bool = True) -> bytes:
        """The message's bytes; a bytes/records field may be a list of chunks (joined here)."""
        if compiled:
            return self.fast.encode(obj)
        stream = io.BytesIO()
        self.plain.build_stream(obj, stream)
        return stream.getvalue()

    def encode_into(self, obj, stream) -> None:
        stream.write(self.fast.encode(obj))
