"""A streams member's move towards its target assignment (Kafka's streams CurrentAssignmentBuilder).

A task leaves a member before another member gets it: the member first keeps what it has of its
target and is asked to revoke the rest (UNREVOKED_TASKS, at its epoch); once its heartbeat no longer
reports them, it moves to the target epoch and gets the target's tasks that are free. An active task
is free when no member holds it; any task is unreleased while a member of the same process holds it
in another role. A member waiting for unreleased tasks is UNRELEASED_TASKS at the target epoch.

Each active task keeps the epoch it was given at while the member holds it (assigned, then pending
revocation); a task newly given gets the target epoch the member moves to (Kafka's assignment
epochs, KAFKA-19779: offset commits at an older member epoch are checked against them).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ...protocol.errors import ErrorCode
from ..group_api import GroupError
from .group import EMPTY, MemberState, StreamsMember, Tasks, TasksTuple

Owners = Callable[[], tuple[dict, dict, dict]]   # StreamsGroup.owners, asked only when the member moves


def reconcile(member: StreamsMember, target_epoch: int, target: TasksTuple, owners: Owners,
              owned: TasksTuple | None) -> StreamsMember:
    """The member's next state; ``owned`` what its heartbeat reported (None: not reported)."""
    state = member.state
    if state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next(member, member.member_epoch, member.assigned, target_epoch, target, owners, owned)
        return member
    if state is MemberState.UNREVOKED_TASKS:
        if owned is None or owned.contains_any(member.pending_revocation):
            return member
        return _next(member, member.member_epoch + 1, member.assigned, target_epoch, target, owners, owned)
    if state is MemberState.UNRELEASED_TASKS:
        return _next(member, member.member_epoch, member.assigned, target_epoch, target, owners, owned)
    if owned is None or not owned.is_empty():
        raise GroupError(ErrorCode.FENCED_MEMBER_EPOCH, "The streams group member is in a unknown state. "
                                                        "The member must abandon all its tasks and rejoin.")
    return _next(member, target_epoch, member.assigned, target_epoch, target, owners, owned)


def _difference(current: Tasks, target: Tasks, unreleased: Callable[[str, int], bool]):
    """(kept, to revoke, to assign, whether some target task is unreleased)."""
    kept, revoke, assign = {}, {}, {}
    has_unreleased = False
    for sub in set(current) | set(target):
        cur, tgt = current.get(sub, frozenset()), target.get(sub, frozenset())
        both = cur & tgt
        new = {p for p in tgt - both if not unreleased(sub, p)}
        has_unreleased |= len(new) < len(tgt - both)
        if both:
            kept[sub] = frozenset(both)
        if cur - both:
            revoke[sub] = frozenset(cur - both)
        if new:
            assign[sub] = frozenset(new)
    return kept, revoke, assign, has_unreleased


def _next(member: StreamsMember, epoch: int, assigned: TasksTuple, target_epoch: int, target: TasksTuple,
          owners: Owners, owned: TasksTuple | None) -> StreamsMember:
    active_owner, standby_owners, warmup_owners = owners()
    pid = member.process_id

    def same_process_elsewhere(sub: str, p: int) -> bool:
        key = (sub, p)
        return pid in standby_owners.get(key, ()) or pid in warmup_owners.get(key, ())

    def active_unreleased(sub: str, p: int) -> bool:
        return active_owner.get((sub, p)) is not None or same_process_elsewhere(sub, p)

    def other_unreleased(sub: str, p: int) -> bool:
        return active_owner.get((sub, p)) == pid or same_process_elsewhere(sub, p)

    a = _difference(assigned.active, target.active, active_unreleased)
    s = _difference(assigned.standby, target.standby, other_unreleased)
    w = _difference(assigned.warmup, target.warmup, other_unreleased)
    kept = TasksTuple(a[0], s[0], w[0])
    revoke = TasksTuple(a[1], s[1], w[1])
    assign = TasksTuple(a[2], s[2], w[2])
    unreleased = a[3] or s[3] or w[3]
    held = member.assignment_epochs()
    if not revoke.is_empty() and (owned is None or owned.contains_any(revoke)):
        return replace(member, state=MemberState.UNREVOKED_TASKS, previous_member_epoch=member.member_epoch,
                       member_epoch=epoch, assigned=kept, pending_revocation=revoke,
                       active_epochs=_epochs(held, member.member_epoch, kept.active, revoke.active))
    new_state = MemberState.UNRELEASED_TASKS if unreleased else MemberState.STABLE
    return replace(member, state=new_state, previous_member_epoch=member.member_epoch, member_epoch=target_epoch,
                   assigned=kept.merge(assign), pending_revocation=EMPTY,
                   active_epochs=tuple(sorted(_epochs(held, member.member_epoch, kept.active)
                                                 + _epochs({}, target_epoch, assign.active))))


def _epochs(held: dict, default: int, *tasks: Tasks) -> tuple[tuple[str, int, int], ...]:
    """(subtopology, partition, epoch) of these tasks: the epoch held, else ``default``."""
    return tuple(sorted((s, p, held.get((s, p), default)) for t in tasks for s, ps in t.items() for p in ps))
