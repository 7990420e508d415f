"""Share groups (KIP-932) seen and steered from outside: every share group, one with its members
and share partitions, a share partition's in-flight records (state, delivery count, owner, lock
deadline), an acquired record's lock ended now, and awaits on a member count or a start offset."""
from __future__ import annotations

from ..params import ControlError, integer, text
from ..table import Cli, P, Py, op
from .awaits import AWAIT_CLI, TIMEOUT, _ms
from .base import ControlBase

GROUP = P(text, required=True, help="the share group's id")
TOPIC = P(text, required=True, help="the topic")
PARTITION = P(integer(min=0), required=True, help="the partition")


class ShareOps(ControlBase):
    def _names(self) -> dict[bytes, str]:
        return {t.topic_id: name for name, t in self.broker.store.topics.items()}

    def _share_partition(self, group: str, topic: str, partition: int):
        t = self.broker.store.get(topic)
        if t is None or partition >= len(t.partitions):
            raise ControlError(404, f"no partition {topic}-{partition}")
        sp = self.broker.shares.existing(group, t.topic_id, partition)
        if sp is None:
            raise ControlError(404, f"share group {group!r} has no state for {topic}-{partition}")
        return t, sp

    def _share_view(self, group_id: str) -> dict:
        coordinator = self.broker.coordinator
        group = coordinator.share.group(group_id)
        names = self._names()
        partitions = []
        for (tid, p), start in sorted(self.broker.shares.start_offsets(group_id).items(),
                                      key=lambda kv: (names.get(kv[0][0], ""), kv[0][1])):
            sp = self.broker.shares.existing(group_id, tid, p)
            counts: dict[str, int] = {}
            for r in sp.in_flight():
                counts[r["state"]] = counts.get(r["state"], 0) + 1
            partitions.append({"topic": names.get(tid, ""), "partition": p, "start_offset": start,
                               "end_offset": sp.end_offset, "in_flight": counts})
        members = [] if group is None else [
            {"member_id": m.member_id, "client_id": m.client_id, "member_epoch": m.member_epoch,
             "subscribed_topics": list(m.subscribed_topic_names),
             "assignment": [{"topic": names.get(tid, ""), "partitions": sorted(ps)}
                            for tid, ps in sorted(m.assigned.items())]}
            for m in group.members.values()]
        return {"group_id": group_id, "state": group.state.value if group is not None else "Dead",
                "group_epoch": group.group_epoch if group is not None else 0, "members": members,
                "partitions": partitions}

    def _share_group_ids(self) -> list[str]:
        coordinator = self.broker.coordinator
        ids = set(coordinator.share.groups) | {k[0] for k in self.broker.shares.partitions}
        return sorted(ids)

    @op("GET", "/api/share-groups", py=Py("share_groups", lambda: {}, result="groups"), cli=Cli("share groups"))
    def share_groups(self) -> dict:
        """Every share group (with members, or with share-partition state): state, epoch, member count."""
        views = [self._share_view(g) for g in self._share_group_ids()]
        return {"groups": [{"group_id": v["group_id"], "state": v["state"], "group_epoch": v["group_epoch"],
                            "members": len(v["members"])} for v in views]}

    @op("GET", "/api/share-groups/{group}", group=GROUP,
        py=Py("share_group", lambda group_id: {"group": group_id},
              doc="A share group's state, epoch, members with their assignments, and its share partitions."),
        cli=Cli("share group", "group"))
    def share_group(self, group: str) -> dict:
        """A share group: state, epoch, members with their assignments, and each share partition's
        start and end offsets (-1 while it is assigned but not fetched from yet) with its in-flight
        records counted by state."""
        if group not in self._share_group_ids():
            raise ControlError(404, f"no share group {group!r}")
        return self._share_view(group)

    @op("GET", "/api/share-groups/{group}/partitions/{topic}/{partition}", group=GROUP, topic=TOPIC,
        partition=PARTITION, py=Py("share_records", result="records"),
        cli=Cli("share records", "group", "topic", "partition"))
    def share_records(self, group: str, topic: str, partition: int) -> dict:
        """A share partition's start and end offsets and in-flight records: offset, state
        (Available, Acquired, Acknowledged, Archived), delivery count, owner (member id) and lock
        deadline (the broker's clock, ms; null unless acquired)."""
        _, sp = self._share_partition(group, topic, partition)
        return {"start_offset": sp.start_offset, "end_offset": sp.end_offset, "records": sp.in_flight()}

    @op("POST", "/api/share-groups/{group}/partitions/{topic}/{partition}/release", group=GROUP, topic=TOPIC,
        partition=PARTITION, offset=P(integer(min=0), required=True, help="the acquired record's offset"),
        py=Py("release_share_record", result=lambda r: None),
        cli=Cli("share release", "group", "topic", "partition", "offset"))
    def release_share_record(self, group: str, topic: str, partition: int, offset: int) -> dict:
        """End an acquired record's lock now, as if it had lapsed: it is available again (archived at
        the delivery-count limit) and parked share fetches read again. 409 unless it is acquired."""
        t, _ = self._share_partition(group, topic, partition)
        if not self.broker.shares.release_offset(self.broker.now_ms, group, t.topic_id, partition, offset):
            raise ControlError(409, f"offset {offset} of {topic}-{partition} is not acquired in share group {group!r}")
        return {"released": offset}

    @op("POST", "/api/await/share-group", group=GROUP,
        members=P(integer(min=0), required=True, help="exactly this many members"), timeout_ms=TIMEOUT,
        py=Py("await_share_group", lambda group, members, *, timeout=30:
              {"group": group, "members": members, "timeout_ms": _ms(timeout)}, result="current",
              doc="Return the share group as soon as it has ``members`` members; ``timeout`` in seconds."),
        cli=Cli("await share-group", "group", **AWAIT_CLI))
    async def await_share_group(self, group: str, members: int, timeout_ms: int) -> dict:
        """Wait until a share group has this many members (a group that does not exist yet is waited for)."""
        def check():
            g = self.broker.coordinator.share.group(group)
            return (g is not None and len(g.members) == members), lambda: self._share_view(group)
        return await self._await(check, timeout_ms, f"share group {group!r} with {members} members")

    @op("POST", "/api/await/share-offset", group=GROUP, topic=TOPIC, partition=PARTITION,
        offset=P(integer(min=0), required=True, help="the start offset to reach"), timeout_ms=TIMEOUT,
        py=Py("await_share_offset", lambda group, topic, partition, offset, *, timeout=30:
              {"group": group, "topic": topic, "partition": partition, "offset": offset,
               "timeout_ms": _ms(timeout)}, result="current",
              doc="Return as soon as the share partition's start offset is at least ``offset`` (every record "
                  "below it acknowledged or archived); ``timeout`` in seconds."),
        cli=Cli("await share-offset", "group", "topic", "partition", "offset", **AWAIT_CLI))
    async def await_share_offset(self, group: str, topic: str, partition: int, offset: int,
                                 timeout_ms: int) -> dict:
        """Wait until a share partition's start offset reaches ``offset``: every record below it is
        acknowledged or archived."""
        def check():
            t = self.broker.store.get(topic)
            sp = None if t is None or partition >= len(t.partitions) else \
                self.broker.shares.existing(group, t.topic_id, partition)
            current = sp.start_offset if sp is not None else None
            return current is not None and current >= offset, {"group_id": group, "topic": topic,
                                                               "partition": partition, "start_offset": current}
        return await self._await(check, timeout_ms,
                                 f"share group {group!r} to reach start offset {offset} on {topic}-{partition}")
