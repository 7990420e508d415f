"""ListConfigResources (key 74), v0-v1, as KafkaApis: v0 lists CLIENT_METRICS resources only;
v1 lists the resources of the types asked for (none: TOPIC, BROKER, BROKER_LOGGER,
CLIENT_METRICS and GROUP), a type outside those UNSUPPORTED_VERSION. Topics are every topic,
brokers and broker loggers every live node, groups those with a group config set. Needs
DESCRIBE_CONFIGS on the cluster."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import DESCRIBE_CONFIGS, authorize_cluster
from .registry import registry

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
SUPPORTED = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)


def client_metrics_names(ctx) -> list[str]:
    """The CLIENT_METRICS resources (subscriptions) configured."""
    metrics = getattr(ctx, "client_metrics", None)
    return sorted(metrics.names()) if metrics is not None else []


@registry.register(ApiKey.LIST_CONFIG_RESOURCES, 0, 1)
def list_config_resources(ctx, req):
    if not authorize_cluster(ctx, DESCRIBE_CONFIGS):
        return {"error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "config_resources": []}
    types = [CLIENT_METRICS] if ctx.api_version == 0 else (list(req.resource_types) or list(SUPPORTED))
    if any(t not in SUPPORTED for t in types):
        return {"error_code": ErrorCode.UNSUPPORTED_VERSION, "config_resources": []}
    out = []
    if GROUP in types:
        out += [(name, GROUP) for name in ctx.group_configs.groups()]
    if CLIENT_METRICS in types:
        out += [(name, CLIENT_METRICS) for name in client_metrics_names(ctx)]
    nodes = [str(n) for n, _, _ in ctx.placement.live_nodes()]
    if BROKER_LOGGER in types:
        out += [(n, BROKER_LOGGER) for n in nodes]
    if BROKER in types:
        out += [(n, BROKER) for n in nodes]
    if TOPIC in types:
        out += [(name, TOPIC) for name in ctx.store.topics]
    return {"error_code": ErrorCode.NONE,
            "config_resources": [{"resource_name": name, "resource_type": kind} for name, kind in out]}
