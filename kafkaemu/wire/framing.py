"""Size-prefixed Kafka frames, sans-IO: feed bytes in, get whole frames out.

The 4-byte length is checked against the limit before any buffer grows towards it, so a
hostile prefix can't make us allocate (as kafka-python's ``_validate_frame_size`` and h11's
``max_incomplete_event_size``)."""
from __future__ import annotations

import struct

from ..protocol.envelope import frame  # noqa: F401  (callers import it from here too)

_SIZE = struct.Struct(">i")
_SMALL_READ = 65536   # reads shorter than this are copied into one buffer, longer ones kept as they are


class FrameError(Exception):
    """The peer sent something that is not a valid frame; the connection must be closed."""


class FrameDecoder:
    def __init__(self, max_frame_bytes: int) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._prefix = b""      # the first 1-3 bytes of a size prefix split between reads
        self._pieces: list = []  # the body of a frame begun but not complete: the reads' bytes, uncopied
        self._have = 0           # bytes in _pieces
        self._need = -1          # that frame's body size; -1: no frame begun

    @property
    def buffered(self) -> int:
        return len(self._prefix) + (4 + self._have if self._need >= 0 else 0)

    def feed(self, data: bytes) -> list[bytes]:
        """Add received bytes; return every frame body now complete (without its size prefix).

        A frame within one read is sliced out of it (one copy). A frame spanning reads keeps a
        reference to each read's bytes until it is complete, then joins them (one copy, however
        many reads a large Produce took), rather than growing a buffer and copying it out again."""
        if data.__class__ is not bytes:
            data = bytes(data)
        frames = []
        pos = 0
        end = len(data)
        if self._need >= 0:
            want = self._need - self._have
            if end < want:
                pieces = self._pieces
                if end >= _SMALL_READ:
                    pieces.append(data)
                elif pieces and pieces[-1].__class__ is bytearray:
                    pieces[-1] += data
                else:   # small reads are merged: a trickle of bytes is not an object per read
                    pieces.append(bytearray(data))
                self._have += end
                return frames
            pieces = self._pieces
            pieces.append(data if end == want else memoryview(data)[:want])
            frames.append(b"".join(pieces))
            self._pieces = []
            self._have = 0
            self._need = -1
            pos = want
        elif self._prefix:
            data = self._prefix + data
            self._prefix = b""
            end = len(data)
        unpack = _SIZE.unpack_from
        max_bytes = self.max_frame_bytes
        while end - pos >= 4:
            (size,) = unpack(data, pos)
            if size < 0 or size > max_bytes:
                self._check(size)
            pos += 4
            if end - pos < size:
                self._need = size
                self._have = end - pos
                if pos < end:
                    self._pieces.append(memoryview(data)[pos:])
                return frames
            frames.append(data[pos: pos + size])
            pos += size
        if pos < end:
            self._prefix = data[pos:]
        return frames

    def _check(self, size: int) -> int:
        if size < 0:
            raise FrameError(f"negative frame size {size}")
        if size > self.max_frame_bytes:
            raise FrameError(f"frame of {size} bytes exceeds socket.request.max.bytes={self.max_frame_bytes}")
        return size
