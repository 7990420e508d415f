"""Consumer groups: their state, members, assignments, offsets and lag; the journal of their state
transitions; a member's session expired now."""
from __future__ import annotations

from ...broker.intercept import error_name
from ..params import ControlError, bad, integer, text
from ..table import Cli, P, Py, op
from ..views import GroupSnapshot, group_ids
from .base import ControlBase, log


class GroupOps(ControlBase):
    @op("GET", "/api/groups", py=Py("groups", lambda: {}, result="groups"), cli=Cli("groups"))
    def groups(self) -> dict:
        """Every group: type, state, generation, member count, coordinator and total lag."""
        return {"groups": [GroupSnapshot(self.broker, g).summary() for g in group_ids(self.broker)]}

    @op("GET", "/api/groups/{group}", group=P(text, required=True, help="the group id"),
        py=Py("group", lambda group_id: {"group": group_id},
              doc="A group's state, generation, members with decoded assignments, offsets and lag."),
        cli=Cli("group", "group"))
    def group(self, group: str) -> dict:
        """One group with its members, decoded assignments, committed offsets and lag."""
        snapshot = GroupSnapshot(self.broker, group)
        if not snapshot.exists:
            raise ControlError(404, f"no group {group!r}")
        return snapshot.detail()

    @op("GET", "/api/journal", group=P(text, help="only this group"),
        after=P(integer(min=0), default=0, help="entries with seq above this"),
        limit=P(integer(min=1, max=100_000), default=1000, help="at most this many entries"),
        py=Py("journal"), cli=Cli("journal"))
    def journal_get(self, group: str | None, after: int, limit: int) -> dict:
        """Group state transitions, oldest first (generation is the group epoch for consumer groups),
        each with the group's members at that moment."""
        found = [e for e in self.journal if e["seq"] > after and (group is None or e["group"] == group)][:limit]
        return {"next_seq": self.journal_next_seq, "entries": found}

    @op("POST", "/api/groups/{group}/expire", group=P(text, required=True, help="the group id"),
        member_id=P(text, help="the member's id"), instance_id=P(text, help="the member's group.instance.id"),
        client_id=P(text, help="the members' client id"),
        py=Py("expire_member", lambda group, member_id=None, *, instance_id=None, client_id=None:
              {"group": group, "member_id": member_id, "instance_id": instance_id, "client_id": client_id},
              doc="Expire members' sessions now (by member id, group.instance.id or client id), leaving the "
                  "clock and the other members alone."),
        cli=Cli("expire", "group"))
    def expire_member(self, group: str, member_id: str | None, instance_id: str | None,
                      client_id: str | None) -> dict:
        """Expire members' sessions now, as if they had stopped heartbeating (chosen by member id,
        group.instance.id or client id); the rest of the group and the clock are untouched."""
        chosen = [v for v in (member_id, instance_id, client_id) if v is not None]
        if len(chosen) != 1:
            raise bad("expire_member: give exactly one of member_id, instance_id, client_id")
        snapshot = GroupSnapshot(self.broker, group)
        if snapshot.classic is None and snapshot.consumer is None and snapshot.streams is None:
            raise ControlError(404, f"no group {group!r} with members")
        members = snapshot.members()
        pending = sorted(snapshot.classic.pending_join_members) if snapshot.classic is not None else []
        if member_id is not None:
            victims = [m for m in members if m["member_id"] == member_id]
            if not victims and member_id in pending:
                victims = [{"member_id": member_id, "instance_id": None}]
        elif instance_id is not None:
            victims = [m for m in members if m["instance_id"] == instance_id]
        else:
            victims = [m for m in members if m["client_id"] == client_id]
        if not victims:
            raise ControlError(404, f"group {group!r} has no member with "
                                    f"{'member id' if member_id else 'instance id' if instance_id else 'client id'} "
                                    f"{chosen[0]!r}", members=[m["member_id"] for m in members])
        if snapshot.streams is not None:   # streams groups have no LeaveGroup: the members are removed
            self.broker.coordinator.remove_streams_members(self._now(), group, [v["member_id"] for v in victims])
            failed = {}
        else:
            from ...core.classic.requests import LeaveGroup, LeavingMember  # the coordinator's public LeaveGroup path
            leaving = [LeavingMember(v["member_id"], v["instance_id"], "session expired by kafkaemu control")
                       for v in victims]
            result = self.broker.coordinator.leave_group(self._now(), LeaveGroup(group, leaving))
            failed = {r["member_id"]: error_name(r["error_code"]) for r in result.get("members", [])
                      if r["error_code"]}
        for v in victims:
            log.info("member_expired", group=group, member=v["member_id"])
        after = GroupSnapshot(self.broker, group)
        return {"group": group, "expired": [v["member_id"] for v in victims if v["member_id"] not in failed],
                "failed": failed, "state": after.state, "generation": after.generation}
