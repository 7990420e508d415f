"""The checks Kafka makes on every modern heartbeat before looking at any group
(GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid and its share and streams
twins), in their order and with their messages; each kind's requests module adds its own."""
from __future__ import annotations

from ...protocol.errors import ErrorCode
from ..group_api import GroupError

E = ErrorCode


def invalid(message: str):
    raise GroupError(E.INVALID_REQUEST, message)


def check_ids(req, member_id_required: bool = True) -> None:
    """The member, group, instance (where the kind has one) and rack ids must not be empty."""
    if member_id_required and not req.member_id:
        invalid("MemberId can't be empty.")
    if not req.group_id:
        invalid("GroupId can't be empty.")
    if getattr(req, "instance_id", None) == "":
        invalid("InstanceId can't be empty.")
    if req.rack_id == "":
        invalid("RackId can't be empty.")
