"""FindCoordinator (key 10), v0-v6.

Key type 0 (group) and 1 (transaction); v4+ batches several keys (``coordinator_keys``). A
group's coordinator is the leader of its ``__consumer_offsets`` partition (with one node, this
node); ``__consumer_offsets`` exists from the broker's start (Kafka creates it on the first
group lookup). A transactional id's coordinator is the leader of its ``__transaction_state``
partition (``abs(javaStringHashCode(id)) % transaction.state.log.num.partitions``), which also
exists from the start. Any other key type gets INVALID_REQUEST. Not implemented: key type 2
(share groups), authorization.
"""
from ..protocol.errors import ErrorCode
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE, GROUP as GROUP_RESOURCE, TRANSACTIONAL_ID, authorize
from .registry import registry

GROUP, TRANSACTION = 0, 1


@registry.register(ApiKey.FIND_COORDINATOR, 0, 6)
def find_coordinator(ctx, req):
    if ctx.api_version >= 4:   # Kafka sets no message on a batched answer: its default, ""
        return {"coordinators": [dict(_lookup(ctx, key, req.key_type), error_message="")
                                 for key in req.coordinator_keys]}
    found = _lookup(ctx, req.key, req.key_type if ctx.api_version >= 1 else GROUP)
    # v1-v3 carry Errors.message(): its exception's message, or the error's name for NONE
    message = found["error_message"] or ErrorCode(found["error_code"]).name
    return {"error_code": found["error_code"], "error_message": message,
            "node_id": found["node_id"], "host": found["host"], "port": found["port"]}


def _lookup(ctx, key: str, key_type: int) -> dict:
    if key_type not in (GROUP, TRANSACTION):
        return {"key": key, "node_id": -1, "host": "", "port": -1,
                "error_code": ErrorCode.INVALID_REQUEST, "error_message": f"Unknown coordinator type {key_type}"}
    if key_type == GROUP and not authorize(ctx, DESCRIBE, GROUP_RESOURCE, key):
        return _failed(key, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if key_type == TRANSACTION and not authorize(ctx, DESCRIBE, TRANSACTIONAL_ID, key):
        return _failed(key, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    placement = ctx.placement
    node = placement.group_coordinator(key) if key_type == GROUP else placement.txn_coordinator(key)
    if node < 0 or node in placement.stopped_nodes:  # its __consumer_offsets partition is offline
        return {"key": key, "node_id": -1, "host": "", "port": -1,
                "error_code": ErrorCode.COORDINATOR_NOT_AVAILABLE, "error_message": None}
    host, port = placement.listeners.get(node, (ctx.config.advertised, ctx.config.port))
    return {"key": key, "node_id": node, "host": host, "port": port,
            "error_code": ErrorCode.NONE, "error_message": None}


def _failed(key: str, code) -> dict:
    return {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": code, "error_message": None}
