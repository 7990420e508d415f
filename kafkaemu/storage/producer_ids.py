"""Producer ids for InitProducerId (Kafka's ProducerIdManager): a fresh id per idempotent producer
and per new transactional id; the transaction coordinator keeps which id a transactional id holds.
With a data directory the broker starts above every id the loaded logs know."""
from __future__ import annotations


class ProducerIdManager:
    def __init__(self, first_id: int = 1000) -> None:
        self._next = first_id

    def new_id(self) -> int:
        pid = self._next
        self._next += 1
        return pid

    def ensure_above(self, producer_id: int) -> None:
        """Never hand out ``producer_id`` or anything below it (ids loaded from a data directory)."""
        self._next = max(self._next, producer_id + 1)
