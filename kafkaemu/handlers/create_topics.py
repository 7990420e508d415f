"""CreateTopics (key 19), v2-v7 (Kafka 4 removed the older versions, KIP-896: they close the connection).

A partition gets ``replication_factor`` replicas, its placed leader and the nodes after it, or the
replicas an assignment names (the first leading); Metadata reports them (``placement``).

Validates as a KRaft broker does: duplicate names in one request (INVALID_REQUEST), partition
count and replication factor (-1 means the broker default; a factor above the node count is
INVALID_REPLICATION_FACTOR), manual assignments (accepted when they name this cluster's nodes),
configs (INVALID_CONFIG), existing topics
(TOPIC_ALREADY_EXISTS). validate_only checks without creating. timeout_ms is not needed:
creation is immediate.

``__consumer_offsets`` is created as the group coordinator creates it (internal, compacted) and
only with offsets.topic.num.partitions partitions; other counts are INVALID_PARTITIONS. (Kafka
would create any count and leave the groups of the missing partitions without a coordinator.)

As Kafka's controller (ReplicationControlManager.validateTotalNumberOfPartitions), a request
that would create more than MAX_PARTITIONS_PER_BATCH partitions in all is refused before
anything is validated or allocated: every topic of it gets POLICY_VIOLATION.
"""
from collections import Counter
from dataclasses import dataclass

from ..storage.offsets_topic import OFFSETS_TOPIC_CONFIGS
from ..protocol.errors import ErrorCode
from ..storage.log_store import OFFSETS_TOPIC, TopicError, validate_topic_name
from ..storage.topic_config import validate_topic_config, validate_topic_configs
from ..protocol.api_keys import ApiKey
from .authorization import CLUSTER, CREATE, DESCRIBE_CONFIGS, TOPIC, authorize, denied_names
from .broker_configs import static_values, topic_entries
from .registry import registry

MAX_PARTITIONS_PER_BATCH = 10_000  # Kafka's ReplicationControlManager.MAX_PARTITIONS_PER_BATCH
TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."


@dataclass(frozen=True)
class TopicConfig:
    name: str
    value: str | None


@dataclass(frozen=True)
class CreatableTopic:
    """A topic the broker creates for itself as a CreateTopics request names one (Kafka's
    AutoTopicCreationManager sends the controller such a request): -1 for the broker defaults."""
    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    configs: tuple[TopicConfig, ...] = ()
    assignments: tuple = ()


@registry.register(ApiKey.CREATE_TOPICS, 2, 7)
def create_topics(ctx, req):
    counts = Counter(t.name for t in req.topics)
    if _requested_partitions(ctx, req.topics, counts) > MAX_PARTITIONS_PER_BATCH:
        return {"topics": [{"name": t.name, "error_code": ErrorCode.POLICY_VIOLATION,
                            "error_message": TOO_MANY_PARTITIONS} for t in req.topics]}
    results = []
    # CREATE on the cluster, or on each topic (ControllerApis.createTopics)
    denied = () if authorize(ctx, CREATE, CLUSTER, "kafka-cluster", log_denied=False) else \
        denied_names(ctx, CREATE, TOPIC, [t.name for t in req.topics if counts[t.name] == 1])
    hidden_configs = denied_names(ctx, DESCRIBE_CONFIGS, TOPIC, [t.name for t in req.topics], log_denied=False)
    static = static_values(ctx, ctx.node_id)   # the broker's configs, described with each topic's
    with ctx.store.topic_changes():   # the request's topics reach the data directory as one write
        for t in req.topics:
            if t.name in denied and counts[t.name] == 1:
                results.append({"name": t.name, "error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                                "error_message": "Authorization failed."})
                continue
            result = _create(ctx, t, counts, req.validate_only, static)
            if result["error_code"] == ErrorCode.NONE and t.name in hidden_configs:
                # ReplicationControlManager.createTopic: neither configs nor sizes without DESCRIBE_CONFIGS
                result.update(configs=[], num_partitions=-1, replication_factor=-1,
                              topic_config_error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            results.append(result)
    return {"topics": results}


def create_checked(ctx, topics: list[CreatableTopic]) -> dict[str, tuple[ErrorCode, str]]:
    """Create ``topics`` through CreateTopics' checks (the partitions of the whole request, then
    each topic's name, partitions, replication factor and configs), as the controller does for a
    request the broker sends on a client's behalf; the authorization is the caller's. Answers the
    topics that were not created: name -> (error, message)."""
    counts = Counter(t.name for t in topics)
    if _requested_partitions(ctx, topics, counts) > MAX_PARTITIONS_PER_BATCH:
        return {t.name: (ErrorCode.POLICY_VIOLATION, TOO_MANY_PARTITIONS) for t in topics}
    failed = {}
    static = static_values(ctx, ctx.node_id)
    with ctx.store.topic_changes():
        for t in topics:
            result = _create(ctx, t, counts, False, static)
            if result["error_code"] != ErrorCode.NONE:
                failed[t.name] = (result["error_code"], result["error_message"])
    return failed


def _create(ctx, t, counts, validate_only: bool, static: dict) -> dict:
    result = {"name": t.name, "error_code": ErrorCode.NONE, "error_message": None}
    error = _validate(ctx, t, counts)
    if error is not None:
        result["error_code"], result["error_message"] = error
        return result
    partitions = len(t.assignments) if t.assignments else (
        ctx.config.num_partitions if t.num_partitions == -1 else t.num_partitions)
    rf = ctx.config.default_replication_factor if t.replication_factor == -1 else t.replication_factor
    configs = {c.name: c.value for c in t.configs if c.value is not None}
    internal = t.name == OFFSETS_TOPIC
    if internal:
        configs = {**OFFSETS_TOPIC_CONFIGS, **configs}
    topic_id = bytes(16)
    if not validate_only:
        try:
            topic = (ctx.store.create_topic(t.name, partitions, configs, internal=True) if internal
                     else ctx.topics.create(t.name, partitions, configs))
        except TopicError as exc:
            result["error_code"], result["error_message"] = exc.code, str(exc)
            return result
        topic_id = topic.topic_id
        _place_replicas(ctx, topic, t.assignments, rf)
    result.update(topic_id=topic_id, num_partitions=partitions, replication_factor=rf,
                  configs=_config_entries(ctx, configs, static))
    return result


def _requested_partitions(ctx, topics, counts) -> int:
    """The most partitions the request could create. As Kafka, topics named twice are left out
    (they fail as duplicates) and invalid counts count as zero."""
    total = 0
    for t in topics:
        if counts[t.name] > 1:
            continue
        if t.assignments:
            total += len(t.assignments)
        elif t.num_partitions == -1:
            total += ctx.config.num_partitions
        elif t.num_partitions > 0:
            total += t.num_partitions
    return total


def _validate(ctx, t, counts):
    if counts[t.name] > 1:
        return ErrorCode.INVALID_REQUEST, "Duplicate topic name."
    if not validate_topic_name(t.name):
        return ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name {t.name!r} is illegal."
    if ctx.store.get(t.name) is not None:
        return ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{t.name}' already exists."
    if t.assignments:
        if t.num_partitions != -1 or t.replication_factor != -1:
            return ErrorCode.INVALID_REQUEST, \
                "Both numPartitions or replicationFactor and replicasAssignments were set."
        nodes = set(ctx.placement.listeners)
        for a in t.assignments:
            if not a.broker_ids or any(b not in nodes for b in a.broker_ids):
                return ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"Invalid replica assignment {list(a.broker_ids)}."
        if sorted(a.partition_index for a in t.assignments) != list(range(len(t.assignments))):
            return ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Partitions must be numbered consecutively from 0."
    else:
        if t.num_partitions == 0 or t.num_partitions < -1:
            return ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value."
        if t.replication_factor == 0 or t.replication_factor < -1:
            return ErrorCode.INVALID_REPLICATION_FACTOR, \
                "Replication factor must be larger than 0, or -1 to use the default value."
        rf = t.replication_factor
        if rf > len(ctx.placement.listeners):
            return ErrorCode.INVALID_REPLICATION_FACTOR, (
                f"Unable to replicate the partition {rf} time(s): The target replication factor of {rf} "
                f"cannot be reached because only {len(ctx.placement.listeners)} broker(s) are registered.")
    if t.name == OFFSETS_TOPIC:
        wanted = ctx.config.offsets.topic_num_partitions
        count = len(t.assignments) if t.assignments else (
            ctx.config.num_partitions if t.num_partitions == -1 else t.num_partitions)
        if count != wanted:
            return ErrorCode.INVALID_PARTITIONS, (
                f"{OFFSETS_TOPIC} can only be created with offsets.topic.num.partitions={wanted} partitions.")
    for c in t.configs:
        message = validate_topic_config(c.name, c.value)
        if message:
            return ErrorCode.INVALID_CONFIG, message
    message = validate_topic_configs({c.name: c.value for c in t.configs if c.value is not None})
    if message:
        return ErrorCode.INVALID_CONFIG, message
    return None


def _place_replicas(ctx, topic, assignments, rf: int) -> None:
    placement = ctx.placement
    if len(placement.node_ids) == 1:
        return
    if assignments:
        for a in assignments:
            placement.assign_replicas(topic.name, a.partition_index, list(a.broker_ids))
    elif rf > 1:
        for p in topic.partitions:
            placement.assign_replicas(topic.name, p.index, placement.spread_replicas(p, rf))


def _config_entries(ctx, configs, static):
    return [{"name": name, "value": value, "read_only": False, "config_source": source, "is_sensitive": False}
            for name, value, source, _, _ in topic_entries(ctx, configs, static)]
