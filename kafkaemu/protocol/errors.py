"""Kafka error codes as an IntEnum, taken from kafka-python's error table (the wire codes)."""
from __future__ import annotations

import importlib.util
import sys
from enum import IntEnum


def _load_kafka_errors():
    """kafka-python's ``kafka/errors.py`` (stdlib imports only), loaded without running
    ``kafka/__init__``, which would import the whole client and add ~100 ms to start-up."""
    if "kafka.errors" in sys.modules:
        return sys.modules["kafka.errors"]
    package = importlib.util.find_spec("kafka")
    path = next(iter(package.submodule_search_locations)) + "/errors.py"
    spec = importlib.util.spec_from_file_location("kafkaemu._kafka_python_errors", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # the module looks itself up there
    spec.loader.exec_module(module)
    return module


_kafka_errors = _load_kafka_errors()


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
    # Apache Kafka's own spelling where kafka-python's differs; listed first, so it is the
    # canonical name and kafka-python's becomes an alias.
    merged = dict(_JAVA_NAMES)
    merged.update(codes)
    return dict(sorted(merged.items(), key=lambda kv: (kv[1], kv[0] not in _JAVA_NAMES)))


_JAVA_NAMES = {
    "NOT_LEADER_OR_FOLLOWER": 6,
    "MESSAGE_TOO_LARGE": 10,
    "INVALID_TOPIC_EXCEPTION": 17,
    "INVALID_REPLICA_ASSIGNMENT": 39,
}


ErrorCode = IntEnum("ErrorCode", _collect())
ErrorCode.__doc__ = "Kafka protocol error codes (ErrorCode.UNKNOWN_MEMBER_ID == 25, ...)."
