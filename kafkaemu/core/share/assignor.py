"""The share groups' server assignor, "simple" (Kafka's SimpleAssignor): every subscribed partition
goes to at least one member, and when there are more members than partitions a partition is shared
by several; each member gets about as many as the others; what a member had stays as far as balance
allows.

For members with the same subscription this follows Kafka's SimpleHomogeneousAssignmentBuilder: each
partition is wanted by ``ceil(members / partitions)`` members, member ``i`` wants
``ceil(p * (i + 1)) - ceil(p * i)`` partitions where ``p = sharing * partitions / members``; current
assignments are kept up to those counts, then the partitions with the fewest members go to the
members furthest below their count. Members with different subscriptions are assigned class by class
(one class per distinct subscription), which is balanced within a class; Kafka's heterogeneous
builder also balances across classes.
"""
from __future__ import annotations

import math
from typing import Mapping

from ..modern import Assignment, assignment_of

NAME = "simple"


def assign(subscriptions: Mapping[str, frozenset[bytes]], current: Mapping[str, Assignment],
           partitions: Mapping[bytes, int]) -> dict[str, Assignment]:
    """``subscriptions``: member id -> subscribed topic ids; ``current``: member id -> its target
    assignment so far; ``partitions``: topic id -> partition count. Returns every member's target."""
    out: dict[str, Assignment] = {mid: {} for mid in subscriptions}
    classes: dict[frozenset[bytes], list[str]] = {}
    for mid in sorted(subscriptions):
        topics = frozenset(t for t in subscriptions[mid] if partitions.get(t, 0) > 0)
        classes.setdefault(topics, []).append(mid)
    for topics, members in classes.items():
        if topics:
            out.update(_homogeneous(members, topics, current, partitions))
    return out


def _homogeneous(members: list[str], topics: frozenset[bytes], current: Mapping[str, Assignment],
                 partitions: Mapping[bytes, int]) -> dict[str, Assignment]:
    targets = [(t, p) for t in sorted(topics) for p in range(partitions[t])]
    n_members, n_parts = len(members), len(targets)
    sharing = (n_members + n_parts - 1) // n_parts
    per_member = sharing * n_parts / n_members
    desired = {mid: math.ceil(per_member * (i + 1)) - math.ceil(per_member * i) for i, mid in enumerate(members)}
    holders: dict[tuple[bytes, int], list[str]] = {tp: [] for tp in targets}
    held: dict[str, list[tuple[bytes, int]]] = {mid: [] for mid in members}
    # Keep what each member had, while the partition is not over-shared and the member not overfilled.
    for mid in members:
        for tid, parts in sorted((current.get(mid) or {}).items()):
            for p in sorted(parts):
                tp = (tid, p)
                if tp in holders and len(holders[tp]) < sharing and len(held[mid]) < desired[mid]:
                    holders[tp].append(mid)
                    held[mid].append(tp)
    # Hand out the remaining slots: the least-shared partition to the member furthest below its count.
    for _ in range(sum(desired.values())):
        wanting = [mid for mid in members if len(held[mid]) < desired[mid]]
        if not wanting:
            break
        mid = max(wanting, key=lambda m: (desired[m] - len(held[m]), -members.index(m)))
        free = [tp for tp in targets if mid not in holders[tp]]
        if not free:
            break
        tp = min(free, key=lambda t: (len(holders[t]), t))
        holders[tp].append(mid)
        held[mid].append(tp)
    return {mid: assignment_of(held[mid]) for mid in members}
