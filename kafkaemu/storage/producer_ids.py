"""Producer ids for InitProducerId: a fresh id per idempotent producer, and for transactional
ids a stable id whose epoch is bumped at every re-initialisation (fencing the previous instance)."""
from __future__ import annotations

MAX_EPOCH = 32767


class ProducerIdManager:
    def __init__(self, first_id: int = 1000) -> None:
        self._next = first_id
        self.transactional: dict[str, tuple[int, int]] = {}

    def new_id(self) -> int:
        pid = self._next
        self._next += 1
        return pid

    def for_transactional_id(self, transactional_id: str) -> tuple[int, int]:
        current = self.transactional.get(transactional_id)
        if current is None or current[1] + 1 >= MAX_EPOCH:
            pid, epoch = self.new_id(), 0
        else:
            pid, epoch = current[0], current[1] + 1
        self.transactional[transactional_id] = (pid, epoch)
        return pid, epoch
