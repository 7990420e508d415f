"""The broker: every piece of state handlers may touch. Pure: time arrives as ``now_ms``."""
from __future__ import annotations

import structlog

from .config import BrokerConfig
from .storage.log_store import LogStore

log = structlog.get_logger("kafkaemu.broker")


class Broker:
    def __init__(self, config: BrokerConfig, now_ms: int) -> None:
        self.config = config
        self.node_id = config.node_id
        self.cluster_id = config.cluster_id
        self.store = LogStore()
        self.now_ms = now_ms

    def tick(self, now_ms: int) -> None:
        """Fire every timer due at ``now_ms`` (session expiry, long-poll timeouts, ...)."""
        self.now_ms = now_ms

    def next_deadline_ms(self) -> int | None:
        """The earliest time ``tick`` has work to do, or None."""
        return None
