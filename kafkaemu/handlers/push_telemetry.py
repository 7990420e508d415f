"""PushTelemetry (key 72), v0 (KIP-714): a client's metrics (OTLP, maybe compressed), checked as
Kafka's ClientMetricsManager checks them, then decoded and kept for the control API and the web
page where Kafka would hand them to a receiver plugin (``telemetry/manager.py``). No ACL is checked."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .registry import registry


@registry.register(ApiKey.PUSH_TELEMETRY, 0, 0)
def push_telemetry(ctx, req):
    code, _message = ctx.client_metrics.push(req.client_instance_id, req.subscription_id, req.terminating,
                                             req.compression_type, req.metrics, ctx.client_id, ctx.client_host,
                                             ctx.connection_id, ctx.now_ms)
    return {"error_code": getattr(ErrorCode, code)}
