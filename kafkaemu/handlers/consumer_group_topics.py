"""The topic metadata KIP-848 consumer groups assign from: name -> TopicMeta (id, partition count)."""
from ..core.consumer.group import TopicMeta


def topic_metas(broker) -> dict[str, TopicMeta]:
    return {name: TopicMeta(name, t.topic_id, len(t.partitions))
            for name, t in broker.store.topics.items() if not t.internal}
