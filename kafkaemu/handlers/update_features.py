"""UpdateFeatures (key 57), v0-v2: `kafka-features.sh upgrade/downgrade/disable`, Admin.updateFeatures.

As a Kafka 4.3 cluster's controller (ControllerApis.handleUpdateFeatures, QuorumController and
FeatureControlManager.updateFeature): ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
v0's allow_downgrade means a safe downgrade, v1+ name the upgrade type (1 upgrade, 2 safe
downgrade, 3 unsafe downgrade; anything else is refused). The updates are applied all together or
not at all: the first refused one answers INVALID_UPDATE_VERSION for the whole request, its reason
behind "The update failed for all features since the following feature had an error: " (an
unknown feature, a level outside the supported range, a downgrade asked as an upgrade or the
reverse, any metadata.version downgrade, a kraft.version downgrade), with no per-feature results.
validate_only (v1+) checks without applying. A success answers NONE ("NONE") and, before v2, one
NONE result per feature. A feature listed twice takes its last level, as the controller's map does.
Applied levels are what later ApiVersions answers finalize, with a newer epoch.
"""
from ..core.feature_update import FeatureUpdate
from ..core.features import INVALID_UPDATE_VERSION, SAFE_DOWNGRADE, UPGRADE
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import ALTER, authorize_cluster
from .feature_levels import supported_ranges
from .registry import registry

_ALL_FAILED = "The update failed for all features since the following feature had an error: "


@registry.register(ApiKey.UPDATE_FEATURES, 0, 2)
def update_features(ctx, req):
    if not authorize_cluster(ctx, ALTER):
        return {"throttle_time_ms": 0, "error_code": ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                "error_message": "Cluster authorization failed.", "results": []}
    v0 = ctx.api_version == 0
    updates = {}
    for item in req.feature_updates:
        kind = (SAFE_DOWNGRADE if item.allow_downgrade else UPGRADE) if v0 else item.upgrade_type
        updates[item.feature] = FeatureUpdate(item.feature, item.max_version_level, kind)
    refusal = ctx.features.update(list(updates.values()), supported_ranges(), bool(req.validate_only) and not v0)
    if refusal is not None:
        return {"throttle_time_ms": 0, "error_code": INVALID_UPDATE_VERSION, "error_message": _ALL_FAILED + refusal,
                "results": []}
    results = [] if ctx.api_version >= 2 else [
        {"feature": item.feature, "error_code": ErrorCode.NONE, "error_message": "NONE"}
        for item in req.feature_updates]
    return {"throttle_time_ms": 0, "error_code": ErrorCode.NONE, "error_message": "NONE", "results": results}
