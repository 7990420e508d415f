"""What ``KafkaEmulator.group_transitions()`` returns: the control API's journal entries as objects."""
from __future__ import annotations

from dataclasses import dataclass


class StateName(str):
    """A group state's name ("Stable"); ``.value`` is the name too, as on the core's state enums,
    so code written against those keeps working."""

    @property
    def value(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Transition:
    """One group state change of the control API's journal (``generation_id`` is the group epoch
    of a KIP-848 consumer group)."""
    seq: int
    at_ms: int
    group_id: str
    from_state: str
    to_state: str
    generation_id: int
