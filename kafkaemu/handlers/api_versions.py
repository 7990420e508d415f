"""ApiVersions (key 18), v0-v4.

The answer is derived from the registry: every API with a handler, at the versions it
handles. v3+ requests name the client software; a malformed name or version gets
INVALID_REQUEST as in Kafka. Of the feature flags (v3+), ``share.version`` is advertised,
supported 0-1 and finalized at 1: share groups (KIP-932) are on; and ``transaction.version``,
supported 0-2 and finalized at the ``transaction_version`` setting (2 by default: clients use
transactions V2; a level of 0 is not listed, as Kafka omits features at level 0).
An ApiVersions request above v4 is answered by the connection layer in v0 format.
"""
import re

from ..protocol.errors import ErrorCode
from ..broker.context import ConstantResponse
from ..protocol.api_keys import ApiKey
from .registry import registry

_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


@registry.register(ApiKey.API_VERSIONS, 0, 4)
def api_versions(ctx, req):
    error = ErrorCode.NONE
    if ctx.api_version >= 3 and not (_SOFTWARE.match(req.client_software_name or "")
                                     and _SOFTWARE.match(req.client_software_version or "")):
        error = ErrorCode.INVALID_REQUEST
    transaction_version = ctx.config.transaction_version
    key = (error, registry.count, transaction_version)
    response = _answers.get(key)
    if response is None:
        response = _answers[key] = ConstantResponse(error_code=error, api_keys=registry.api_keys(),
                                                     **features(transaction_version))
    return response


def features(transaction_version: int) -> dict:
    finalized = [{"name": "share.version", "min_version_level": 1, "max_version_level": 1}]
    if transaction_version:
        finalized.append({"name": "transaction.version", "min_version_level": transaction_version,
                          "max_version_level": transaction_version})
    return {"supported_features": [{"name": "share.version", "min_version": 0, "max_version": 1},
                                   {"name": "transaction.version", "min_version": 0, "max_version": 2}],
            "finalized_features_epoch": 1, "finalized_features": finalized}


# (error, APIs registered, transaction.version) -> the answer, encoded once per version by the connection
_answers: dict[tuple[int, int, int], ConstantResponse] = {}
