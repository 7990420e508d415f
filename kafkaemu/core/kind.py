"""The contract of a group kind: what the group coordinator asks of classic, consumer, share and
streams groups' managers, and of any other (Kafka's CoordinatorShard ``replay`` / ``onLoaded`` with
the operations of GroupMetadataManager each kind answers).

The coordinator holds a table ``{type: kind}`` and goes through it for every group it finds
(``group.type``), every record it replays (by the key versions the kind's records read) and every
load. A kind is built by a factory from the coordinator's shared context (time, timers, groups,
the runtime, settings); whatever else it needs from outside comes through its constructor
(ports.py), never assigned afterwards.
"""
from __future__ import annotations

from typing import Callable, Hashable, Protocol, Sequence

from ..protocol.errors import ErrorCode
from .group_api import Group


class KindRecords(Protocol):
    """The kind's __consumer_offsets records: the key versions it reads and how a key names its group."""
    KEY_VERSIONS: Sequence[int]

    def decode_key(self, key: bytes): ...   # has .group_id


class GroupKind(Protocol):
    type: Hashable            # what its groups' ``type`` is (a GroupType for the built-in kinds)
    records: KindRecords

    def heartbeat(self, req, *context) -> dict:
        """Join, beat or leave as the kind's protocol does (JoinGroup / *GroupHeartbeat), inside the
        coordinator's write for ``req.group_id``; a failed one answers its error."""

    def error_answer(self, code: ErrorCode, message: str | None = None) -> dict:
        """The heartbeat's answer when its write failed."""

    def leave_group(self, req) -> dict:
        """A classic LeaveGroup naming a group of this kind."""

    def delete_group(self, group: Group) -> None:
        """Forget a group whose tombstones are decided (DeleteGroups, expired offsets)."""

    def offset_committed(self, group: Group, member_id: str) -> None:
        """A member committed offsets."""

    def replay(self, key: bytes, value: bytes | None) -> None:
        """Apply one of its records (a tombstone when ``value`` is None), as on loading."""

    def after_load(self) -> None:
        """Every record is replayed: timers restart now."""


KindFactory = Callable[..., GroupKind]   # (the coordinator's CoordinatorContext) -> a kind
