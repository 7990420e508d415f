"""GetTelemetrySubscriptions (key 71), v0 (KIP-714): a client instance id (a new one for the zero
id) and the metrics, push interval and codecs of the CLIENT_METRICS subscriptions the client
matches; asked again before its push interval, THROTTLING_QUOTA_EXCEEDED. No ACL is checked, as
KafkaApis (``telemetry/manager.py``)."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .registry import registry


@registry.register(ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, 0, 0)
def get_telemetry_subscriptions(ctx, req):
    answer = ctx.client_metrics.get_subscriptions(req.client_instance_id, ctx.client_id, ctx.client_host,
                                                  ctx.connection_id, ctx.now_ms)
    return dict(answer, error_code=getattr(ErrorCode, answer["error_code"]))
