"""Kafka error codes as an IntEnum, taken from kafka-python's error table (the wire codes)."""
from __future__ import annotations

from enum import IntEnum

import kafka.errors as _kafka_errors


def _collect() -> dict[str, int]:
    codes: dict[str, int] = {"NONE": 0}
    stack = [_kafka_errors.BrokerResponseError]
    while stack:
        cls = stack.pop()
        for sub in cls.__subclasses__():
            errno, name = getattr(sub, "errno", None), getattr(sub, "message", None)
            if errno is not None and errno > 0 and name:
                codes.setdefault(name, errno)
            stack.append(sub)
    codes.setdefault("UNKNOWN_SERVER_ERROR", -1)
    return dict(sorted(codes.items(), key=lambda kv: kv[1]))


ErrorCode = IntEnum("ErrorCode", _collect())
ErrorCode.__doc__ = "Kafka protocol error codes (ErrorCode.UNKNOWN_MEMBER_ID == 25, ...)."
