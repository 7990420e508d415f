"""The journal of group state transitions (``GET /api/journal``), recorded from the broker's
start: it is kept apart from the rest of the control plane, which is imported and built only when
first used, so that a start does not pay for it."""
from __future__ import annotations

from collections import deque

JOURNAL_ENTRIES = 100_000


class GroupJournal:
    def __init__(self, broker) -> None:
        self.broker = broker
        self.entries: deque[dict] = deque(maxlen=JOURNAL_ENTRIES)
        self.next_seq = 1
        broker.watch_group_coordinator(self.watch)   # once the broker builds it

    def watch(self, coordinator) -> None:
        """Record the transitions of ``coordinator`` (the broker's, or one a restore put there)."""
        coordinator.transition_listeners.append(self._record)

    def _record(self, t) -> None:
        from .views import member_names
        self.entries.append({"seq": self.next_seq, "at_ms": t.at_ms, "group": t.group_id,
                             "from": t.from_state.value, "to": t.to_state.value, "generation": t.generation_id,
                             "members": member_names(self.broker, t.group_id)})
        self.next_seq += 1
