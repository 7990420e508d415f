"""Creating and deleting topics with what follows from it: the log line, placement forgetting a
deleted topic's moved leaders, the group coordinator dropping its committed offsets, the share data
plane its share state."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..logging import get_logger
from ..storage.log_store import Topic
from .context import built

if TYPE_CHECKING:
    from .context import BrokerServices

log = get_logger("kafkaemu.broker")


class TopicAdmin:
    def __init__(self, services: "BrokerServices", clock: Callable[[], int]) -> None:
        self.services = services
        self.clock = clock

    def create(self, name: str, num_partitions: int, configs: dict[str, str]) -> Topic:
        topic = self.services.store.create_topic(name, num_partitions, configs)
        log.info("topic_created", topic=name, partitions=num_partitions)
        return topic

    def delete(self, name: str) -> Topic:
        services = self.services
        topic = services.store.delete_topic(name)
        services.placement.forget_topic(name)
        if (groups := built(services, "groups")) is not None:   # not built yet: no group knows the topic
            groups.on_topic_deleted(self.clock(), name, topic.topic_id)
        if (shares := built(services, "shares")) is not None:
            shares.topic_deleted(self.clock(), topic.topic_id)
        log.info("topic_deleted", topic=name)
        return topic
