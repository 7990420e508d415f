"""One partition's log. (Placeholder shape; the data-path work fills in append/read.)"""
from __future__ import annotations


class PartitionLog:
    def __init__(self, topic, index: int) -> None:
        self.topic = topic
        self.index = index
        self.log_start_offset = 0
        self.high_watermark = 0
        self.leader_epoch = 0
