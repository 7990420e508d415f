"""StreamsGroupHeartbeat (key 88), v0-v1 (KIP-1071): Kafka Streams members joining (epoch 0, with the
topology), heartbeating with their tasks and leaving (-1) a streams group through
kafkaemu/core/streams/manager.py, with the task assignor of core/streams/assignor.py.

As Kafka's KafkaApis.handleStreamsGroupHeartbeat: UNSUPPORTED_VERSION while streams.version is
finalized below 1; READ on the group, DESCRIBE on every topic the topology names; a topology naming
an internal topic (``__consumer_offsets``...) or an illegal topic name is STREAMS_INVALID_TOPOLOGY.
The internal topics (changelog and repartition topics) the coordinator finds missing are created
here with the partitions it decided and the replication factor and configs the topology gives,
through CreateTopics' checks (Kafka's AutoTopicCreationManager sends the controller a CreateTopics
request): more than 10,000 partitions in all, an invalid replication factor or config create none
of them or not that one, and the MISSING_INTERNAL_TOPICS status says why ("; Creation failed:
topic (message)", at most three named). The principal needs CREATE on the cluster or on every one
of them; otherwise none is created and the status says "; Unauthorized to CREATE on topics ...".
The members get tasks once the next heartbeat finds the topics. (Kafka creates them asynchronously
and keeps a failure for two heartbeat intervals before it tries again; here creation is
immediate and tried at each heartbeat that still finds them missing.)
Every answer carries Kafka 4.4's task offset interval (60 s) and, from v1, its acceptable recovery
lag (10,000 offsets, an int64; v0's int32 field is the deprecated one, left 0 as Kafka does) and
``topology_description_required``, false: Kafka asks for a topology description only with a
topology description plugin (group.streams.topology.description.plugin.class), which is unset by
default and which kafkaemu does not have (StreamsGroupTopologyDescriptionUpdate answers so).
"""
from ..logging import get_logger
from ..core.streams.requests import StreamsHeartbeat
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..storage.log_store import validate_topic_name
from ..core.streams.topology import MISSING_INTERNAL_TOPICS
from .authorization import CREATE, DESCRIBE, GROUP, READ, TOPIC, authorize, authorize_cluster, denied_names
from .create_topics import CreatableTopic, TopicConfig, create_checked
from .group_common import client_host, is_coordinator
from .registry import registry

log = get_logger("kafkaemu.streams_groups")
E = ErrorCode
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__share_group_state")
MAX_ERRORS_NAMED = 3   # KafkaApis names at most three topics whose creation failed


def _error(code: ErrorCode, message: str | None = None) -> dict:
    return {"error_code": code, "error_message": message, "member_id": "", "member_epoch": 0,
            "heartbeat_interval_ms": 0, "status": []}


def _topology_topics(topology) -> tuple[set[str], set[str]]:
    """(every topic the topology names, the internal ones the group owns)."""
    names, owned = set(), set()
    for s in topology.subtopologies or ():
        names.update(s.source_topics or ())
        names.update(s.repartition_sink_topics or ())
        for t in list(s.repartition_source_topics or ()) + list(s.state_changelog_topics or ()):
            names.add(t.name)
            owned.add(t.name)
    return names, owned


def _check_topology(ctx, topology) -> dict | None:
    names, _ = _topology_topics(topology)
    prohibited = sorted(n for n in names if n in INTERNAL_TOPICS)
    if prohibited:
        return _error(E.STREAMS_INVALID_TOPOLOGY, f"Use of Kafka internal topics {', '.join(prohibited)} in a Kafka "
                                                  f"Streams topology is prohibited.")
    invalid = sorted(n for n in names if not validate_topic_name(n))
    if invalid:
        return _error(E.STREAMS_INVALID_TOPOLOGY, f"Topic names {', '.join(invalid)} are not valid topic names.")
    if denied_names(ctx, DESCRIBE, TOPIC, names):   # KafkaApis answers the code alone, no message
        return _error(E.TOPIC_AUTHORIZATION_FAILED)
    return None


@registry.register(ApiKey.STREAMS_GROUP_HEARTBEAT, 0, 1)
def streams_group_heartbeat(ctx, req):
    if ctx.features.level("streams.version") < 1:
        return _error(E.UNSUPPORTED_VERSION)
    if ctx.authorizer is not None and not authorize(ctx, READ, GROUP, req.group_id):
        return _error(E.GROUP_AUTHORIZATION_FAILED)
    if req.topology is not None:
        problem = _check_topology(ctx, req.topology)
        if problem is not None:
            return problem
    if not is_coordinator(ctx, req.group_id):
        return _error(E.NOT_COORDINATOR)
    heartbeat = StreamsHeartbeat(
        group_id=req.group_id, member_id=req.member_id, member_epoch=req.member_epoch,
        endpoint_information_epoch=req.endpoint_information_epoch, instance_id=req.instance_id,
        rack_id=req.rack_id, rebalance_timeout_ms=req.rebalance_timeout_ms, topology=req.topology,
        active_tasks=req.active_tasks, standby_tasks=req.standby_tasks, warmup_tasks=req.warmup_tasks,
        process_id=req.process_id, user_endpoint=req.user_endpoint, client_tags=req.client_tags,
        task_offsets=req.task_offsets, task_end_offsets=req.task_end_offsets,
        shutdown_application=bool(req.shutdown_application),
        client_id=ctx.client_id or "", client_host=client_host(ctx), api_version=ctx.api_version)
    reply, to_create = ctx.groups.streams_group_heartbeat(ctx.now_ms, heartbeat, lambda t: _partitions(ctx, t))
    to_create = {name: t for name, t in to_create.items() if ctx.store.topics.get(name) is None}
    if to_create:
        detail = _create_internal_topics(ctx, req.group_id, to_create)
        if detail:
            _add_to_missing_topics_status(reply, detail)
    return reply


def _partitions(ctx, name: str) -> int | None:
    topic = ctx.store.topics.get(name)
    return None if topic is None else len(topic.partitions)


def _create_internal_topics(ctx, group_id: str, to_create: dict) -> str | None:
    """KafkaApis.handleStreamsGroupHeartbeat and AutoTopicCreationManager.createStreamsInternalTopics:
    what the MISSING_INTERNAL_TOPICS status detail gains, if anything."""
    if ctx.authorizer is not None and not authorize_cluster(ctx, CREATE):
        unauthorized = sorted(n for n in to_create if not authorize(ctx, CREATE, TOPIC, n))
        if unauthorized:
            log.info("streams_internal_topics_unauthorized", group=group_id, topics=unauthorized)
            return f"Unauthorized to CREATE on topics {', '.join(unauthorized)}."
    topics = [CreatableTopic(name, t.partitions, t.replication_factor, tuple(TopicConfig(k, v) for k, v in t.configs))
              for name, t in sorted(to_create.items())]
    failed = create_checked(ctx, topics)
    for t in topics:
        if t.name in failed:
            log.warning("streams_internal_topic_not_created", group=group_id, topic=t.name, partitions=t.num_partitions,
                        error=failed[t.name][0].name, reason=failed[t.name][1])
        else:
            log.info("streams_internal_topic_created", group=group_id, topic=t.name, partitions=t.num_partitions)
    if not failed:
        return None
    named = ", ".join(f"{name} ({message})" for name, (_, message) in list(failed.items())[:MAX_ERRORS_NAMED])
    more = f" and {len(failed) - MAX_ERRORS_NAMED} more" if len(failed) > MAX_ERRORS_NAMED else ""
    return f"Creation failed: {named}{more}."


def _add_to_missing_topics_status(reply: dict, detail: str) -> None:
    statuses = reply.get("status") or []
    missing = next((s for s in statuses if s["status_code"] == MISSING_INTERNAL_TOPICS), None)
    if missing is None:
        statuses.append({"status_code": MISSING_INTERNAL_TOPICS, "status_detail": detail})
    else:
        missing["status_detail"] = f"{missing['status_detail'] or ''}; {detail}"
    reply["status"] = statuses
