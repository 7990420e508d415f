"""The broker: every piece of state handlers may touch. Pure: time arrives as ``now_ms``."""
from __future__ import annotations

import structlog

from .config import BrokerConfig
from .core.coordinator import CoordinatorSettings, GroupCoordinator
from .core.offsets_topic import log_sink
from .core.timers import Timers
from .faults import Faults
from .storage.log_store import LogStore, Topic

log = structlog.get_logger("kafkaemu.broker")


class Broker:
    def __init__(self, config: BrokerConfig, now_ms: int) -> None:
        self.config = config
        self.node_id = config.node_id
        self.cluster_id = config.cluster_id
        self.store = LogStore(int(config.extra.get("log.retention.check.interval.ms", 300000)),
                              int(config.extra.get("log.cleaner.backoff.ms", 15000)))
        self.store.tick(now_ms)  # starts the retention schedule
        self.now_ms = now_ms
        # node id -> (advertised host, port); the server fills in the bound port.
        self.listeners: dict[int, tuple[str, int]] = {config.node_id: (config.advertised, config.port)}
        self.faults = Faults()
        self.timers = Timers()  # broker-level timers (delayed fault replies)
        self.coordinator = GroupCoordinator(CoordinatorSettings.from_config(config),
                                            log_sink(self.store, config.offsets_topic_num_partitions), now_ms)

    # -- topics --------------------------------------------------------------------------
    def create_topic(self, name: str, num_partitions: int, configs: dict[str, str]) -> Topic:
        topic = self.store.create_topic(name, num_partitions, configs)
        log.info("topic_created", topic=name, partitions=num_partitions)
        return topic

    def delete_topic(self, name: str) -> Topic:
        topic = self.store.delete_topic(name)
        log.info("topic_deleted", topic=name)
        return topic

    def partition_leader(self, partition) -> int:
        return self.node_id

    # -- time ----------------------------------------------------------------------------
    def tick(self, now_ms: int) -> None:
        """Fire every timer due at ``now_ms`` (session expiry, long-poll timeouts, ...)."""
        self.now_ms = now_ms
        self.store.tick(now_ms)
        self.coordinator.tick(now_ms)
        self.timers.poll(now_ms)

    def next_deadline_ms(self) -> int | None:
        """The earliest time ``tick`` has work to do, or None."""
        deadlines = [d for d in (self.store.next_deadline_ms(), self.coordinator.next_deadline_ms(),
                                 self.timers.next_deadline()) if d is not None]
        return min(deadlines, default=None)
