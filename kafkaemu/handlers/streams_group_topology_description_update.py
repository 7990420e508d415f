"""StreamsGroupTopologyDescriptionUpdate (key 93), v0 (Kafka 4.4): a streams member pushes its
topology's description, for the broker's topology description plugin to keep
(group.streams.topology.description.plugin.class). Kafka ships no such plugin and leaves the setting
unset, and kafkaemu has none, so it answers as Kafka 4.4 does then (KafkaApis
.handleStreamsGroupTopologyDescriptionUpdate, GroupCoordinatorService
.streamsGroupTopologyDescriptionUpdate): UNSUPPORTED_VERSION while streams.version is finalized
below 1, GROUP_AUTHORIZATION_FAILED without READ on the group, and otherwise UNSUPPORTED_VERSION
with the message that no plugin is configured. Heartbeats never ask for a description
(``topology_description_required`` stays false), so Kafka's Streams client does not send one."""
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .authorization import GROUP, READ, authorize
from .registry import registry

NO_PLUGIN = "The broker has no streams group topology description plugin configured."


@registry.register(ApiKey.STREAMS_GROUP_TOPOLOGY_DESCRIPTION_UPDATE, 0, 0)
def streams_group_topology_description_update(ctx, req):
    if ctx.features.level("streams.version") < 1:
        return {"error_code": ErrorCode.UNSUPPORTED_VERSION, "error_message": None}
    if not authorize(ctx, READ, GROUP, req.group_id):
        return {"error_code": ErrorCode.GROUP_AUTHORIZATION_FAILED, "error_message": None}
    return {"error_code": ErrorCode.UNSUPPORTED_VERSION, "error_message": NO_PLUGIN}
