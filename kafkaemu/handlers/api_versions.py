"""ApiVersions (key 18), v0-v5, answered as a Kafka 4.4.0 broker does (KafkaApis.handleApiVersionsRequest).

The answer is derived from the registry: every API with a handler, at the versions it
handles, with two exceptions Kafka makes: Produce is advertised from v0 although v0-v2 requests
close the connection (ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION, kept for old librdkafka
releases), and GetTelemetrySubscriptions and PushTelemetry are left out unless client telemetry is
on (``metric.reporters`` naming kafkaemu's receiver, as Kafka needs a reporter implementing
ClientTelemetry); their handlers answer either way, as Kafka's do.

v3+ requests name the client software; a malformed name or version gets INVALID_REQUEST as in
Kafka. A v5 request naming a cluster id that is not this cluster's, or a node id that is not this
node's, gets REBOOTSTRAP_REQUIRED (KIP-1242: the client reached another cluster behind the same
address). An error answer carries no API keys, as Kafka's ApiVersionsRequest.getErrorResponse.
v3+ answers carry the supported features (``feature_levels.py``) and the finalized ones with their
epoch (``ctx.features``), as a Kafka 4.4 cluster: a feature finalized at 0 is left out;
transaction.version starts at the ``transaction_version`` setting (2 by default: clients use
Transactions V2). Below v4 a supported feature whose minimum is 0 is left out, as Kafka's
ApiVersionsResponse.maybeFilterSupportedFeatureKeys does for the clients KAFKA-17492 broke.
An ApiVersions request above v5 is answered by the connection layer in v0 format.
"""
import re

from ..protocol.errors import ErrorCode
from ..broker.context import ConstantResponse
from ..protocol.api_keys import ApiKey
from .feature_levels import supported_ranges
from .registry import registry

_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")
# Kafka's ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION: advertised, not accepted (KAFKA-18659)
_ADVERTISED_MIN_VERSION = {ApiKey.PRODUCE: 0}
_TELEMETRY = (ApiKey.GET_TELEMETRY_SUBSCRIPTIONS, ApiKey.PUSH_TELEMETRY)


@registry.register(ApiKey.API_VERSIONS, 0, 5)
def api_versions(ctx, req):
    if ctx.api_version >= 3 and not (_SOFTWARE.match(req.client_software_name or "")
                                     and _SOFTWARE.match(req.client_software_version or "")):
        return ConstantResponse(error_code=ErrorCode.INVALID_REQUEST, api_keys=[])
    if ctx.api_version >= 5 and req.cluster_id is not None and (
            req.cluster_id != ctx.cluster_id or req.node_id != ctx.node_id):
        return ConstantResponse(error_code=ErrorCode.REBOOTSTRAP_REQUIRED, api_keys=[])
    if ctx.api_version >= 3:   # the client_software_* selectors of CLIENT_METRICS subscriptions
        ctx.client_metrics.client_software(ctx.connection_id, req.client_software_name, req.client_software_version)
    features = ctx.features
    key = (registry.count, ctx.api_version < 4)
    response = features.answers.get(key)   # emptied when the features change
    if response is None:
        response = features.answers[key] = ConstantResponse(
            error_code=ErrorCode.NONE, api_keys=advertised_api_keys(ctx.config.client_telemetry),
            **_features(features, ctx.api_version < 4))
    return response


def advertised_api_keys(client_telemetry: bool) -> list[dict]:
    """The ``api_keys`` of the answer (``kafkaemu apis`` prints them too)."""
    return [{**api, "min_version": _ADVERTISED_MIN_VERSION.get(api["api_key"], api["min_version"])}
            for api in registry.api_keys() if client_telemetry or api["api_key"] not in _TELEMETRY]


def _features(features, omit_zero_min: bool) -> dict:
    supported = supported_ranges()
    return {
        "supported_features": [{"name": name, "min_version": low, "max_version": high}
                               for name, (low, high) in sorted(supported.items()) if not (omit_zero_min and low == 0)],
        "finalized_features_epoch": features.epoch,
        "finalized_features": [{"name": name, "min_version_level": level, "max_version_level": level}
                               for name, level in sorted(features.finalized(supported).items())],
    }
