"""StreamsGroupDescribe (key 89), v0-v1 (KIP-1071): group epoch, assignment epoch, state (Empty,
NotReady, Assigning, Reconciling, Stable), the topology as configured against the topics that exist,
and every member with its process, endpoint, tags, task offsets, current and target tasks. Unknown
groups and groups of another kind get GROUP_ID_NOT_FOUND, the empty id INVALID_GROUP_ID, a group
the principal may not DESCRIBE GROUP_AUTHORIZATION_FAILED, one whose topology names a topic the
principal may not DESCRIBE TOPIC_AUTHORIZATION_FAILED (as Kafka's KafkaApis); authorized_operations
is INT32_MIN unless asked for. v1 (Kafka 4.4) adds the name of the task assignor the next assignment
uses ("sticky", kafkaemu's only one) and, when ``include_topology_description`` asks for it, the
topology description's status: NOT_STORED (1), as Kafka answers without a topology description
plugin (StreamsGroupTopologyDescriptionManager.attachTopologyDescriptions), NOT_REQUESTED (0)
otherwise; the description itself is null either way. A failed group has neither."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import DESCRIBE, GROUP, TOPIC, authorize, authorized_operations, denied_names
from .group_common import is_coordinator
from .registry import registry

NOT_REQUESTED, NOT_STORED = 0, 1   # TopologyDescriptionStatus
ASSIGNOR_NAME = "sticky"           # core/streams/assignor.py, as Kafka's StickyTaskAssignor.name()


def _failed(code: ErrorCode, group_id: str) -> dict:
    return {"error_code": code, "group_id": group_id, "group_state": "", "members": [], "topology": None}


def _topics(topology) -> set[str]:
    names: set[str] = set()
    for s in (topology or {}).get("subtopologies") or ():
        names.update(s["source_topics"])
        names.update(s["repartition_sink_topics"])
        names.update(t["name"] for t in s["state_changelog_topics"] + s["repartition_source_topics"])
    return names


@registry.register(ApiKey.STREAMS_GROUP_DESCRIBE, 0, 1)
def streams_group_describe(ctx, req):
    if ctx.features.level("streams.version") < 1:
        return {"groups": [_failed(ErrorCode.UNSUPPORTED_VERSION, g) for g in req.group_ids]}
    out = {}
    mine = []
    for g in req.group_ids:
        if g and not authorize(ctx, DESCRIBE, GROUP, g):
            out[g] = _failed(ErrorCode.GROUP_AUTHORIZATION_FAILED, g)
        elif g and not is_coordinator(ctx, g):
            out[g] = _failed(ErrorCode.NOT_COORDINATOR, g)
        else:
            mine.append(g)
    for d in ctx.groups.streams_group_describe(ctx.now_ms, mine, bool(req.include_authorized_operations)):
        if d["error_code"] == 0 and ctx.authorizer is not None:
            if denied_names(ctx, DESCRIBE, TOPIC, _topics(d["topology"])):
                d = _failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED, d["group_id"])
                d["error_message"] = "The described group uses topics that the client is not authorized to describe."
            elif req.include_authorized_operations:
                d["authorized_operations"] = authorized_operations(ctx, GROUP, d["group_id"])
        if d["error_code"] == 0:
            d = dict(d, assignor_name=ASSIGNOR_NAME,
                     topology_description_status=NOT_STORED if req.include_topology_description else NOT_REQUESTED)
        out[d["group_id"]] = d
    return {"groups": [out[g] for g in req.group_ids]}
