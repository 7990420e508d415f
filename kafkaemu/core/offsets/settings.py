"""Committed offsets' broker settings (offsets.*, offset.*), as Kafka 4.4's GroupCoordinatorConfig
declares them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..settings import INT64_MAX, setting


@dataclass
class OffsetsSettings:
    """Committed offsets' settings, each with its Kafka name (``offsets.*``, ``offset.*``)."""
    topic_num_partitions: int = setting(50, "offsets.topic.num.partitions", "partitions of __consumer_offsets", min=1)
    metadata_max_bytes: int = setting(4096, "offset.metadata.max.bytes", "longest metadata of a committed offset",
                                      min=None)
    retention_minutes: int = setting(7 * 24 * 60, "offsets.retention.minutes",
                                     "how long committed offsets of an empty group are kept", min=1)
    retention_check_interval_ms: int = setting(600000, "offsets.retention.check.interval.ms",
                                               "how often expired offsets are removed", min=1, max=INT64_MAX)
    CHECKS: ClassVar[tuple] = ()

    @property
    def retention_ms(self) -> int:
        return int(self.retention_minutes * 60 * 1000)
