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
        """Add received bytes; return every frame body now complete (without its size prefix)."""
        buf = self._buf
        buf += data
        frames = []
        pos = 0
        end = len(buf)
        while end - pos >= 4:
            (size,) = _SIZE.unpack_from(buf, pos)
            if size < 0:
                raise FrameError(f"negative frame size {size}")
            if size > self.max_frame_bytes:
                raise FrameError(f"frame of {size} bytes exceeds socket.request.max.bytes={self.max_frame_bytes}")
            if end - pos - 4 < size:
                break
            frames.append(bytes(buf[pos + 4: pos + 4 + size]))
            pos += 4 + size
        if pos:
            del buf[:pos]
        return frames

