"""Moves one member from its current assignment towards its target (Kafka's CurrentAssignmentBuilder).

Incremental revocation: a member first gives up what it must lose (state UNREVOKED_PARTITIONS,
epoch unchanged); only once a heartbeat no longer reports those partitions does it move on to the
next epoch. A partition is handed to its new owner only when no other member still owns it
(assigned or pending revocation); until then the new owner waits in UNRELEASED_PARTITIONS.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ..modern import Assignment
from .member import ConsumerMember, MemberState

Owned = dict[bytes, set[int]] | None   # partitions the member reports owning; None = not reported



def reconcile(member: ConsumerMember, target_epoch: int, target: Assignment,
              partition_epoch: Callable[[bytes, int], int], owned: Owned) -> ConsumerMember:
    if member.is_reconciled_to(target_epoch):
        return member
    if member.state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned)
        return member
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return member
        return _next(member, min(member.member_epoch + 1, target_epoch), target_epoch, target, partition_epoch, owned)
    # UNRELEASED_PARTITIONS: pick up whatever has been released since.
    return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned)


def _owns_any(owned: Owned, partitions: Assignment) -> bool:
    if owned is None:
        return True
    return any(owned.get(tid, set()) & set(parts) for tid, parts in partitions.items())


def _next(member: ConsumerMember, member_epoch: int, target_epoch: int, target: Assignment,
          partition_epoch: Callable[[bytes, int], int], owned: Owned) -> ConsumerMember:
    assigned: dict[bytes, frozenset[int]] = {}
    revoking: dict[bytes, frozenset[int]] = {}
    pending: dict[bytes, frozenset[int]] = {}
    unreleased = False
    for tid in set(target) | set(member.assigned):
        want = set(target.get(tid, ()))
        have = set(member.assigned.get(tid, ()))
        keep = have & want
        lose = have - keep
        gain = want - keep
        free = {p for p in gain if partition_epoch(tid, p) == -1}
        unreleased = unreleased or free != gain
        if keep:
            assigned[tid] = frozenset(keep)
        if lose:
            revoking[tid] = frozenset(lose)
        if free:
            pending[tid] = frozenset(free)
    # each partition kept (or pending revocation) keeps the epoch it was given at; a new one gets
    # the target assignment's (CurrentAssignmentBuilder.computeNextAssignment)
    held, given = member.assignment_epochs, member.member_epoch
    kept = {(tid, p): held.get((tid, p), given) for tid, parts in assigned.items() for p in parts}
    if revoking and _owns_any(owned, revoking):
        kept.update(((tid, p), held.get((tid, p), given)) for tid, parts in revoking.items() for p in parts)
        return replace(member, state=MemberState.UNREVOKED_PARTITIONS,
                       previous_member_epoch=member.member_epoch, member_epoch=member_epoch,
                       assigned=assigned, pending_revocation=revoking, assignment_epochs=kept)
    for tid, parts in pending.items():
        assigned[tid] = assigned.get(tid, frozenset()) | parts
        kept.update(((tid, p), target_epoch) for p in parts)
    return replace(member, state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
                   previous_member_epoch=member.member_epoch, member_epoch=target_epoch,
                   assigned=assigned, pending_revocation={}, assignment_epochs=kept)
