"""Size-prefixed Kafka frames, sans-IO: feed bytes in, get whole frames out.

The 4-byte length is checked against the limit before any buffer grows towards it, so a
hostile prefix can't make us allocate (as kafka-python's ``_validate_frame_size`` and h11's
``max_incomplete_event_size``)."""
from __future__ import annotations

import struct

from ..protocol.envelope import frame  # noqa: F401  (callers import it from here too)

_SIZE = struct.Struct(">i")


class FrameError(Exception):
    """The peer sent something that is not a valid frame; the connection must be closed."""


class FrameDecoder:
    def __init__(self, max_frame_bytes: int) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._buf = bytearray()

    @property
    def buffered(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> list[bytes]:
        """Add received bytes; return every frame body now complete (without its size prefix).

        Frames are sliced straight out of the received bytes (one copy each); only a partial
        frame at the end is kept in the buffer, and the buffer is turned into bytes again only
        once it holds a whole frame (so a large frame arriving in many reads is copied once)."""
        buf = self._buf
        if buf:
            buf += data
            if len(buf) < 4 or self._check(_SIZE.unpack_from(buf)[0]) > len(buf) - 4:
                return []
            data = bytes(buf)
            buf.clear()
        elif data.__class__ is not bytes:
            data = bytes(data)
        frames = []
        pos = 0
        end = len(data)
        unpack = _SIZE.unpack_from
        max_bytes = self.max_frame_bytes
        while end - pos >= 4:
            (size,) = unpack(data, pos)
            if size < 0 or size > max_bytes:
                self._check(size)
            if end - pos - 4 < size:
                break
            pos += 4
            frames.append(data[pos: pos + size])
            pos += size
        if pos < end:
            buf += memoryview(data)[pos:]
        return frames

    def _check(self, size: int) -> int:
        if size < 0:
            raise FrameError(f"negative frame size {size}")
        if size > self.max_frame_bytes:
            raise FrameError(f"frame of {size} bytes exceeds socket.request.max.bytes={self.max_frame_bytes}")
        return size
