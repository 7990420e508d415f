"""Broker configs set at run time, as Kafka keeps them in its metadata log: the cluster-wide
default (a BROKER resource named "") and each node's own (named by its id), set by
IncrementalAlterConfigs / AlterConfigs and reported as DYNAMIC_DEFAULT_BROKER_CONFIG and
DYNAMIC_BROKER_CONFIG. A broker config that is a topic config's default (``log.retention.ms`` for
``retention.ms``...) set as the cluster default becomes the default of every topic without a
value of its own (as it does, with one node, set on that node)."""
from __future__ import annotations

# broker config -> the topic config it is the default of (Kafka's LogConfig synonyms)
TOPIC_SYNONYMS = {
    "log.retention.ms": "retention.ms", "log.retention.bytes": "retention.bytes",
    "log.segment.bytes": "segment.bytes", "log.roll.ms": "segment.ms", "log.cleanup.policy": "cleanup.policy",
    "log.cleaner.delete.retention.ms": "delete.retention.ms", "log.index.interval.bytes": "index.interval.bytes",
    "min.insync.replicas": "min.insync.replicas", "compression.type": "compression.type",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "log.message.timestamp.type": "message.timestamp.type",
}
BROKER_SYNONYMS = {topic: broker for broker, topic in TOPIC_SYNONYMS.items()}
# what a Kafka 4.x cluster's bootstrap writes as cluster-wide dynamic defaults (KIP-966)
BOOTSTRAP_DEFAULTS = {"min.insync.replicas": "1"}


class DynamicBrokerConfigs:
    def __init__(self, node_ids: list[int], topic_defaults: dict[str, str]) -> None:
        self.node_ids = node_ids
        self.cluster: dict[str, str] = dict(BOOTSTRAP_DEFAULTS)
        self.per_node: dict[int, dict[str, str]] = {}
        self.logger_levels: dict[int, dict[str, str]] = {}   # BROKER_LOGGER levels set, by node
        self._topic_defaults = topic_defaults             # LogStore.topic_defaults, shared by every topic
        self._static_topic_defaults = dict(topic_defaults)
        self._apply_topic_defaults()

    def reset(self) -> None:
        """Back to the configs the cluster started with (a control reset)."""
        self.cluster = dict(BOOTSTRAP_DEFAULTS)
        self.per_node.clear()
        self.logger_levels.clear()
        self._apply_topic_defaults()

    def of_node(self, node_id: int) -> dict[str, str]:
        return self.per_node.get(node_id, {})

    def replace(self, node_id: int | None, configs: dict[str, str]) -> None:
        """The dynamic configs of a node (None: the cluster default) become ``configs``."""
        if node_id is None:
            self.cluster = dict(configs)
        else:
            self.per_node[node_id] = dict(configs)
        self._apply_topic_defaults()

    def topic_default_source(self, topic_config: str) -> tuple[str, str] | None:
        """(broker config name, "node" or "cluster") of the dynamic config a topic config's
        default comes from, or None."""
        broker_name = BROKER_SYNONYMS.get(topic_config)
        if broker_name is None:
            return None
        if len(self.node_ids) == 1 and broker_name in self.of_node(self.node_ids[0]):
            return broker_name, "node"
        if broker_name in self.cluster:
            return broker_name, "cluster"
        return None

    def _apply_topic_defaults(self) -> None:
        wanted = dict(self._static_topic_defaults)
        layers = [self.cluster] + ([self.of_node(self.node_ids[0])] if len(self.node_ids) == 1 else [])
        for layer in layers:
            for name, value in layer.items():
                if name in TOPIC_SYNONYMS:
                    wanted[TOPIC_SYNONYMS[name]] = value
        self._topic_defaults.clear()   # in place: every topic reads this dict
        self._topic_defaults.update(wanted)
