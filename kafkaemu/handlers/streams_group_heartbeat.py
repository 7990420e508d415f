"""StreamsGroupHeartbeat (key 88), v0 (KIP-1071): Kafka Streams members joining (epoch 0, with the
topology), heartbeating with their tasks and leaving (-1) a streams group through
kafkaemu/core/streams/manager.py, with the task assignor of core/streams/assignor.py.

As Kafka's KafkaApis.handleStreamsGroupHeartbeat: UNSUPPORTED_VERSION while streams.version is
finalized below 1; READ on the group, DESCRIBE on every topic the topology names; a topology naming
an internal topic (``__consumer_offsets``...) or an illegal topic name is STREAMS_INVALID_TOPOLOGY.
The internal topics (changelog and repartition topics) the coordinator finds missing are created
here with the partitions it decided and the configs the topology gives, when the principal may
CREATE them; the members get tasks once the next heartbeat finds them.
"""
from ..logging import get_logger
from ..core.streams.requests import StreamsHeartbeat
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..storage.log_store import validate_topic_name
from ..storage.topic_config import validate_topic_configs
from .authorization import CREATE, DESCRIBE, GROUP, READ, TOPIC, authorize, authorize_cluster, denied_names
from .group_common import client_host, is_coordinator
from .registry import registry

log = get_logger("kafkaemu.streams_groups")
E = ErrorCode
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", "__share_group_state")


def _error(code: ErrorCode, message: str | None = None) -> dict:
    return {"error_code": code, "error_message": message, "member_id": "", "member_epoch": 0,
            "heartbeat_interval_ms": 0, "status": None}


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
    denied = denied_names(ctx, DESCRIBE, TOPIC, names)
    if denied:
        return _error(E.TOPIC_AUTHORIZATION_FAILED, f"Unauthorized to DESCRIBE on topics {', '.join(sorted(denied))}.")
    return None


@registry.register(ApiKey.STREAMS_GROUP_HEARTBEAT, 0, 0)
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
        client_id=ctx.client_id or "", client_host=client_host(ctx))
    reply, to_create = ctx.groups.streams_group_heartbeat(ctx.now_ms, heartbeat, lambda t: _partitions(ctx, t))
    if to_create:
        _create_internal_topics(ctx, req.group_id, to_create)
    return reply


def _partitions(ctx, name: str) -> int | None:
    topic = ctx.store.topics.get(name)
    return None if topic is None else len(topic.partitions)


def _create_internal_topics(ctx, group_id: str, to_create: dict) -> None:
    """AutoTopicCreationManager.createStreamsInternalTopics: each topic with its partitions and
    configs; one that cannot be created is logged (the members keep the MISSING_INTERNAL_TOPICS status)."""
    cluster_create = ctx.authorizer is None or authorize_cluster(ctx, CREATE)
    for name, topic in sorted(to_create.items()):
        if not cluster_create and not authorize(ctx, CREATE, TOPIC, name):
            log.info("streams_internal_topic_unauthorized", group=group_id, topic=name)
            continue
        if ctx.store.topics.get(name) is not None:
            continue
        configs = dict(topic.configs)
        problem = validate_topic_configs(configs)
        if problem:
            log.warning("streams_internal_topic_not_created", group=group_id, topic=name, reason=problem)
            continue
        ctx.topics.create(name, topic.partitions, configs)
        log.info("streams_internal_topic_created", group=group_id, topic=name, partitions=topic.partitions)
