"""ApiVersions (key 18), v0-v4.

The answer is derived from the registry: every API with a handler, at the versions it
handles. v3+ requests name the client software; a malformed name or version gets
INVALID_REQUEST as in Kafka. v3+ answers carry the supported features (``feature_levels.py``) and
the finalized ones with their epoch (``ctx.features``), as a Kafka 4.3 cluster: a feature
finalized at 0 is left out; transaction.version starts at the ``transaction_version``
setting (2 by default: clients use Transactions V2). Below v4 a supported minimum of 0 is answered as 1 (and the maximum at
least 1), as Kafka's ApiVersionsResponse does for the clients KAFKA-17011 broke.
An ApiVersions request above v4 is answered by the connection layer in v0 format.
"""
import re

from ..protocol.errors import ErrorCode
from ..broker.context import ConstantResponse
from ..protocol.api_keys import ApiKey
from .feature_levels import supported_ranges
from .registry import registry

_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


@registry.register(ApiKey.API_VERSIONS, 0, 4)
def api_versions(ctx, req):
    error = ErrorCode.NONE
    if ctx.api_version >= 3 and not (_SOFTWARE.match(req.client_software_name or "")
                                     and _SOFTWARE.match(req.client_software_version or "")):
        error = ErrorCode.INVALID_REQUEST
    elif ctx.api_version >= 3:   # the client_software_* selectors of CLIENT_METRICS subscriptions
        ctx.client_metrics.client_software(ctx.connection_id, req.client_software_name, req.client_software_version)
    features = ctx.features
    key = (error, registry.count, ctx.api_version < 4)
    response = features.answers.get(key)   # emptied when the features change
    if response is None:
        response = features.answers[key] = ConstantResponse(error_code=error, api_keys=registry.api_keys(),
                                                            **_features(features, ctx.api_version < 4))
    return response


def _features(features, alter_zero_min: bool) -> dict:
    supported = supported_ranges()
    return {
        "supported_features": [
            {"name": name, "min_version": 1 if alter_zero_min and low == 0 else low,
             "max_version": max(1, high) if alter_zero_min and low == 0 else high}
            for name, (low, high) in sorted(supported.items())],
        "finalized_features_epoch": features.epoch,
        "finalized_features": [{"name": name, "min_version_level": level, "max_version_level": level}
                               for name, level in sorted(features.finalized(supported).items())],
    }
