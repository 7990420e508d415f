"""UnregisterBroker (key 64), v0: ``kafka-cluster.sh unregister``, Admin.unregisterBroker.

A broker forwards it to the active controller (KafkaApis.forwardToControllerOrFail), which checks
ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED) and then, as
ReplicationControlManager.unregisterBroker, answers BROKER_ID_NOT_REGISTERED for an id no broker
is registered with (not a node of the cluster, or unregistered already). Otherwise the broker's
registration is removed: running or stopped, it leaves Metadata and DescribeCluster (fenced ones
included) and every ISR, and each partition it led moves to another live replica or has no leader
(LEADER_NOT_AVAILABLE) until the broker registers again, which a restart does (the control API's
``node stop`` and ``node start``). A broker Kafka unregisters while it runs keeps running, out of
the metadata, its heartbeats refused, so its listener here stays up too."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import ALTER, authorize_cluster
from .registry import registry


@registry.register(ApiKey.UNREGISTER_BROKER, 0, 0)
def unregister_broker(ctx, req):
    if not authorize_cluster(ctx, ALTER):
        return _answer(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    placement = ctx.placement
    if req.broker_id not in placement.listeners or req.broker_id in placement.unregistered:
        return _answer(ErrorCode.BROKER_ID_NOT_REGISTERED, f"Broker ID {req.broker_id} is not currently registered")
    placement.unregister(req.broker_id)
    return _answer(ErrorCode.NONE)


def _answer(code: int, message: str | None = None) -> dict:
    # the controller's answer: the error code, with the exception's message for an unknown id
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message}
