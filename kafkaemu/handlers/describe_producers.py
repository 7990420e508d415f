"""DescribeProducers (key 61), v0.

The producer state of each requested partition, as Kafka's Partition.activeProducerState: every
producer id the partition knows (idempotent and transactional), its epoch, last sequence (-1
when it has written only markers), last timestamp, the coordinator epoch of its last marker (-1
for none) and the first offset of its open transaction (-1 when none is open). Errors: an
invalid topic name INVALID_TOPIC_EXCEPTION and an unknown topic UNKNOWN_TOPIC_OR_PARTITION, both
with Kafka's message; an unknown partition of a known topic UNKNOWN_TOPIC_OR_PARTITION; a
partition another emulated node leads NOT_LEADER_OR_FOLLOWER (admin clients ask the leader).
"""
import re

from ..protocol.errors import DEFAULT_MESSAGES, ErrorCode
from .partition_access import serve_partition
from ..protocol.api_keys import ApiKey
from .authorization import READ, TOPIC, denied_names
from .registry import registry

_LEGAL = re.compile(r"^[a-zA-Z0-9._-]+$")
_MAX_NAME_LENGTH = 249
_UNKNOWN_TOPIC_MESSAGE = "This server does not host this topic-partition."


@registry.register(ApiKey.DESCRIBE_PRODUCERS, 0, 0)
def describe_producers(ctx, req):
    store = ctx.store
    topics = []
    denied = denied_names(ctx, READ, TOPIC, [t.name for t in req.topics])
    for t in req.topics:
        name = t.name
        topic = None
        error, message = _invalid_topic(name), None
        if name in denied:
            error = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            message = DEFAULT_MESSAGES[error]
        elif error is not None:
            error, message = ErrorCode.INVALID_TOPIC_EXCEPTION, error
        else:
            topic = store.get(name)
            if topic is None:
                error, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, _UNKNOWN_TOPIC_MESSAGE
        parts = []
        for index in t.partition_indexes:
            out = {"partition_index": index, "error_code": ErrorCode.NONE, "error_message": None,
                   "active_producers": []}
            if error is not None:
                out["error_code"], out["error_message"] = error, message
            else:
                plog, code = serve_partition(ctx, topic, index)
                if code != ErrorCode.NONE:
                    out["error_code"] = code
                else:
                    out["active_producers"] = plog.active_producers()
            parts.append(out)
        topics.append({"name": name, "partitions": parts})
    return {"throttle_time_ms": 0, "topics": topics}


def _invalid_topic(name: str) -> str | None:
    """Kafka's Topic.validate message for an invalid name, or None."""
    if name == "":
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > _MAX_NAME_LENGTH:
        reason = f"the length of '{name}' is longer than the max allowed length {_MAX_NAME_LENGTH}"
    elif not _LEGAL.match(name):
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return None
    return f"Topic name is invalid: {reason}"
