"""Server-side assignors of KIP-848 consumer groups: "uniform" and "range".

An assignor gets every member's subscribed topic ids and current *target* assignment, and the
partition count of each subscribed topic; it returns the new target assignment of every member.
Both are sticky, as Kafka's: members keep what they had as far as balance allows.

- ``range`` follows Kafka's server-side RangeAssignor: per topic, each subscribed member keeps up to
  its quota (``partitions // members``, one more for the first ``partitions % members``) of its
  lowest-numbered partitions; the rest is handed out in ranges, members in member-id order.
- ``uniform`` (Kafka's UniformAssignor) balances the total number of partitions per member over all
  topics. kafkaemu uses one algorithm for homogeneous and heterogeneous subscriptions: keep every
  valid current partition, give each unassigned partition (topics with the fewest subscribers
  first) to the least loaded subscribed member, then move partitions from the most to the least
  loaded eligible member until no move can reduce the spread. The results are balanced and sticky
  like Kafka's; the exact partition chosen for a move may differ from Kafka's optimized builders.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..modern import Assignment, assignment_of


@dataclass(frozen=True)
class MemberSpec:
    subscribed_topic_ids: frozenset[bytes]
    current: Mapping[bytes, frozenset[int]]   # the member's current target assignment


class RangeAssignor:
    name = "range"

    def assign(self, members: Mapping[str, MemberSpec], partitions: Mapping[bytes, int]) -> dict[str, Assignment]:
        out: dict[str, dict[bytes, set[int]]] = {mid: {} for mid in members}
        members_per_topic: dict[bytes, list[str]] = {}
        for mid in sorted(members):
            for tid in members[mid].subscribed_topic_ids:
                if tid in partitions:
                    members_per_topic.setdefault(tid, []).append(mid)
        for tid in sorted(members_per_topic):
            subscribers = members_per_topic[tid]
            count = partitions[tid]
            quota, extra = divmod(count, len(subscribers))
            sticky: set[int] = set()
            unfilled: list[tuple[str, int]] = []
            for mid in subscribers:
                current = sorted(p for p in members[mid].current.get(tid, ()) if p < count)
                kept = current[:quota]
                remaining = quota - len(current)
                if remaining < 0 and extra > 0:
                    extra -= 1
                    kept = current[:quota + 1]
                else:
                    unfilled.append((mid, remaining))
                if kept:
                    out[mid].setdefault(tid, set()).update(kept)
                    sticky.update(kept)
            free = [p for p in range(count) if p not in sticky]
            pos = 0
            for mid, remaining in unfilled:
                if extra > 0:
                    remaining += 1
                    extra -= 1
                if remaining > 0:
                    out[mid].setdefault(tid, set()).update(free[pos:pos + remaining])
                    pos += remaining
        return {mid: {t: frozenset(ps) for t, ps in a.items() if ps} for mid, a in out.items()}


class UniformAssignor:
    name = "uniform"

    def assign(self, members: Mapping[str, MemberSpec], partitions: Mapping[bytes, int]) -> dict[str, Assignment]:
        order = sorted(members)
        rank = {m: i for i, m in enumerate(order)}
        eligible: dict[bytes, list[str]] = {}
        for mid in order:
            for tid in members[mid].subscribed_topic_ids:
                if tid in partitions:
                    eligible.setdefault(tid, []).append(mid)
        owned: dict[str, set[tuple[bytes, int]]] = {mid: set() for mid in order}
        taken: set[tuple[bytes, int]] = set()
        for mid in order:
            spec = members[mid]
            for tid, parts in spec.current.items():
                if tid not in spec.subscribed_topic_ids or tid not in partitions:
                    continue
                for p in parts:
                    tp = (tid, p)
                    if p < partitions[tid] and tp not in taken:
                        owned[mid].add(tp)
                        taken.add(tp)
        # Unassigned partitions: topics with the fewest subscribers first, so the members that can take
        # them are not already filled with partitions anybody could have taken.
        for tid in sorted(eligible, key=lambda t: (len(eligible[t]), t)):
            for p in range(partitions[tid]):
                if (tid, p) in taken:
                    continue
                mid = min(eligible[tid], key=lambda m: (len(owned[m]), rank[m]))
                owned[mid].add((tid, p))
                taken.add((tid, p))
        kept = {mid: set(owned[mid]) for mid in order}
        self._balance(order, rank, owned, eligible, kept)
        return {mid: assignment_of(owned[mid]) for mid in order}

    @staticmethod
    def _balance(order: list[str], rank: dict[str, int], owned: dict[str, set[tuple[bytes, int]]],
                 eligible: dict[bytes, list[str]], kept: dict[str, set[tuple[bytes, int]]]) -> None:
        """Move one partition at a time from a member to an eligible one holding at least two fewer,
        newly handed out partitions before ones the member already had."""
        eligible_sets = {tid: set(ms) for tid, ms in eligible.items()}
        while True:
            moved = False
            for giver in sorted(order, key=lambda m: (-len(owned[m]), rank[m])):
                best = None
                for tp in sorted(owned[giver], key=lambda tp: (tp not in kept[giver], tp), reverse=True):
                    for taker in eligible_sets.get(tp[0], ()):
                        if len(owned[taker]) <= len(owned[giver]) - 2:
                            key = (len(owned[taker]), rank[taker])
                            if best is None or key < best[0]:
                                best = (key, taker, tp)
                    if best is not None:
                        break
                if best is not None:
                    _, taker, tp = best
                    owned[giver].remove(tp)
                    owned[taker].add(tp)
                    moved = True
                    break
            if not moved:
                return


ASSIGNORS = {a.name: a for a in (UniformAssignor(), RangeAssignor())}
DEFAULT_ASSIGNOR = "uniform"
