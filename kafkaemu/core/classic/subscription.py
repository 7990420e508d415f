"""Reading the topics out of a consumer-protocol subscription (version prefix, then the v0 layout)."""
from __future__ import annotations

import struct


def subscription_topics(metadata: bytes) -> list[str]:
    """Topics of a ConsumerProtocolSubscription; every version starts with v0's topic array."""
    try:
        pos = 2  # int16 version
        (count,) = struct.unpack_from(">i", metadata, pos)
        pos += 4
        topics = []
        for _ in range(max(count, 0)):
            (n,) = struct.unpack_from(">h", metadata, pos)
            pos += 2
            if n < 0 or pos + n > len(metadata):
                raise ValueError("bad topic string")
            topics.append(metadata[pos:pos + n].decode("utf-8"))
            pos += n
        return topics
    except (struct.error, UnicodeDecodeError) as exc:
        raise ValueError(f"not a consumer protocol subscription: {exc}") from exc
