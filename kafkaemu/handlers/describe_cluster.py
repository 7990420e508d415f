"""DescribeCluster (key 60), v0-v2. Brokers endpoint type only (v1 endpoint_type 2,
controllers, gets UNSUPPORTED_ENDPOINT_TYPE as a broker answers it). v2 (KIP-1073): with
include_fenced_brokers, nodes the control API stopped are listed too, with is_fenced (a stopped
Kafka broker stays registered, fenced); without it only live nodes, as KafkaApis.handleDescribeCluster;
the controller id names a live broker, as a KRaft broker does (``topic_views.controller_id``).
A broker UnregisterBroker removed is not listed either way until it registers again."""
from ..protocol.errors import ErrorCode
from ..protocol.operations import CLUSTER_OPERATIONS, NOT_REQUESTED
from ..protocol.api_keys import ApiKey
from .authorization import CLUSTER, DESCRIBE, authorize_cluster, authorized_operations
from .registry import registry
from .topic_views import brokers, controller_id

BROKERS_ENDPOINT = 1


@registry.register(ApiKey.DESCRIBE_CLUSTER, 0, 2)
def describe_cluster(ctx, req):
    if req.endpoint_type != BROKERS_ENDPOINT:
        return {"error_code": ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
                "error_message": "The broker only handles the BROKER endpoint type",
                "endpoint_type": req.endpoint_type, "cluster_id": ctx.cluster_id}
    return {
        "endpoint_type": BROKERS_ENDPOINT,
        "cluster_id": ctx.cluster_id,
        "controller_id": controller_id(ctx),
        "brokers": _fenced_too(ctx.placement) if req.include_fenced_brokers else brokers(ctx.placement),
        "cluster_authorized_operations": _operations(ctx, req),
    }


def _operations(ctx, req) -> int:
    if not req.include_cluster_authorized_operations:
        return NOT_REQUESTED
    if ctx.authorizer is None:
        return CLUSTER_OPERATIONS
    return authorized_operations(ctx, CLUSTER, "kafka-cluster") if authorize_cluster(ctx, DESCRIBE) else 0


def _fenced_too(placement) -> list[dict]:
    stopped = placement.stopped_nodes
    return [{"broker_id": n, "host": host, "port": port, "rack": None, "is_fenced": n in stopped}
            for n, (host, port) in sorted(placement.listeners.items()) if n not in placement.unregistered]
