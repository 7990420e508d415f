"""DescribeGroups (key 15), v0-v6.

State, protocol type, protocol (Stable only) and members with client id/host; member metadata and
assignment only in Stable, as Kafka. Unknown groups, and KIP-848 consumer groups (described by
ConsumerGroupDescribe), are described as Dead with no error before v6; v6 (KIP-1043) adds
GROUP_ID_NOT_FOUND to them, with Kafka's messages ("Group <id> not found.", "Group <id> is not a
classic group."), as GroupMetadataManager.describeGroups.
authorized_operations is INT32_MIN unless asked for (v3+), then READ|DELETE|DESCRIBE (no
authorizer), and only on a group described without error (KafkaApis.handleDescribeGroupsRequest). Not implemented: ACLs.
"""
from ..protocol.errors import ErrorCode
from ..protocol.operations import NOT_REQUESTED
from .group_common import is_coordinator
from ..protocol.api_keys import ApiKey
from .authorization import DESCRIBE, GROUP, authorized_operations, denied_names
from .registry import registry


@registry.register(ApiKey.DESCRIBE_GROUPS, 0, 6)
def describe_groups(ctx, req):
    include_ops = bool(req.include_authorized_operations) if ctx.api_version >= 3 else False
    denied = denied_names(ctx, DESCRIBE, GROUP, req.groups)
    mine = [g for g in req.groups if g not in denied and is_coordinator(ctx, g)]
    described = {d["group_id"]: d for d in ctx.groups.describe_groups(ctx.now_ms, mine, include_ops)}
    groups = []
    for gid in req.groups:
        if gid in denied:
            groups.append({"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "group_id": gid, "group_state": "",
                           "protocol_type": "", "protocol_data": "", "members": []})
        elif gid in described:
            group = described[gid]
            if include_ops and ctx.authorizer is not None:
                group = dict(group, authorized_operations=authorized_operations(ctx, GROUP, gid))
            if ctx.api_version >= 6:
                missing = _not_found(ctx, gid)
                if missing is not None:
                    group = dict(group, error_code=ErrorCode.GROUP_ID_NOT_FOUND, error_message=missing)
            if group.get("error_code", ErrorCode.NONE) != ErrorCode.NONE:
                # KafkaApis sets authorized operations only on a group described without error
                group = dict(group, authorized_operations=NOT_REQUESTED)
            groups.append(group)
        else:
            groups.append({"error_code": ErrorCode.NOT_COORDINATOR, "group_id": gid, "group_state": "",
                           "protocol_type": "", "protocol_data": "", "members": []})
    return {"groups": groups}


def _not_found(ctx, group_id):
    """Kafka's GroupIdNotFoundException message when ``group_id`` is no classic group, else None."""
    group = ctx.groups.group(group_id)
    if group is None:
        return f"Group {group_id} not found."
    if group.type.value != "classic":
        return f"Group {group_id} is not a classic group."
    return None
