"""A streams member's move towards its target assignment (Kafka's streams CurrentAssignmentBuilder).

A task leaves a member before another member gets it: the member first keeps what it has of its
target and is asked to revoke the rest (UNREVOKED_TASKS, at its epoch); once its heartbeat no longer
reports them, it moves to the target epoch and gets the target's tasks that are free. An active task
is free when no member holds it and no other member of its process holds it as a standby or warm-up;
a standby or warm-up is unreleased while its process runs it in another role elsewhere (Kafka 4.4's
rules). A member waiting for unreleased tasks is UNRELEASED_TASKS at the target epoch.

As Kafka 4.4, a task changing role on the same member is not revoked first: an active task becoming
a standby, and a standby becoming a warm-up or back, are granted at once in the new role; a standby
or warm-up becoming active stays in its old role until the active task is granted.

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
    """CurrentAssignmentBuilder.computeNextAssignment and buildNewMember (Kafka 4.4)."""
    active_owner, standby_owners, warmup_owners = owners()
    pid = member.process_id

    def held_by_another_here(owners_of: dict, own: Tasks, sub: str, p: int) -> bool:
        return pid in owners_of.get((sub, p), ()) and p not in own.get(sub, ())

    def active_unreleased(sub: str, p: int) -> bool:
        return active_owner.get((sub, p)) is not None or held_by_another_here(standby_owners, assigned.standby, sub, p) \
            or held_by_another_here(warmup_owners, assigned.warmup, sub, p)

    def standby_unreleased(sub: str, p: int) -> bool:
        run_by_another_here = active_owner.get((sub, p)) == pid and p not in assigned.active.get(sub, ())
        return run_by_another_here or pid in standby_owners.get((sub, p), ()) \
            or held_by_another_here(warmup_owners, assigned.warmup, sub, p)

    def warmup_unreleased(sub: str, p: int) -> bool:
        return active_owner.get((sub, p)) == pid or held_by_another_here(standby_owners, assigned.standby, sub, p) \
            or pid in warmup_owners.get((sub, p), ())

    a = _difference(assigned.active, target.active, active_unreleased)
    s = _difference(assigned.standby, target.standby, standby_unreleased)
    w = _difference(assigned.warmup, target.warmup, warmup_unreleased)
    unreleased = a[3] or s[3] or w[3]
    kept = {"active": dict(a[0]), "standby": dict(s[0]), "warmup": dict(w[0])}
    revoke = {"active": dict(a[1]), "standby": dict(s[1]), "warmup": dict(w[1])}
    assign = {"active": dict(a[2]), "standby": dict(s[2]), "warmup": dict(w[2])}
    # A task changing role on the member is granted at once in its new role: an active task becoming a
    # standby (demoteActiveTasksToStandby), a standby becoming a warm-up and back (convertReplicaRole).
    _grant_now(assigned.active, assign["standby"], kept["standby"])
    _grant_now(assigned.standby, assign["warmup"], kept["warmup"], revoke["standby"])
    _grant_now(assigned.warmup, assign["standby"], kept["standby"], revoke["warmup"])
    # A standby or warm-up becoming active is not revoked; it stays until the active task is granted
    # (applyPromotionsToActive).
    for role in ("standby", "warmup"):
        _drop(revoke[role], _both(getattr(assigned, role), target.active))
    revoking = TasksTuple(**{k: _plain(v) for k, v in revoke.items()})
    to_revoke = not revoking.is_empty() and (owned is None or owned.contains_any(revoking))
    for role in ("standby", "warmup"):
        for sub, p in _both(getattr(assigned, role), target.active):
            if to_revoke or p not in assign["active"].get(sub, ()):
                kept[role][sub] = kept[role].get(sub, frozenset()) | {p}
    kept_tasks = TasksTuple(**{k: _plain(v) for k, v in kept.items()})
    assigning = TasksTuple(**{k: _plain(v) for k, v in assign.items()})
    held = member.assignment_epochs()
    if to_revoke:
        return replace(member, state=MemberState.UNREVOKED_TASKS, previous_member_epoch=member.member_epoch,
                       member_epoch=epoch, assigned=kept_tasks, pending_revocation=revoking,
                       active_epochs=_epochs(held, member.member_epoch, kept_tasks.active, revoking.active))
    new_state = MemberState.UNRELEASED_TASKS if unreleased else MemberState.STABLE
    return replace(member, state=new_state, previous_member_epoch=member.member_epoch, member_epoch=target_epoch,
                   assigned=kept_tasks.merge(assigning), pending_revocation=EMPTY,
                   active_epochs=tuple(sorted(_epochs(held, member.member_epoch, kept_tasks.active)
                                                 + _epochs({}, target_epoch, assigning.active))))


def _both(tasks: Tasks, other: Tasks) -> list[tuple[str, int]]:
    return [(sub, p) for sub, ps in tasks.items() for p in sorted(ps & other.get(sub, frozenset()))]


def _drop(tasks: dict, pairs) -> None:
    for sub, p in pairs:
        if sub in tasks:
            tasks[sub] = tasks[sub] - {p}
            if not tasks[sub]:
                del tasks[sub]


def _grant_now(outgoing: Tasks, pending: dict, granted: dict, outgoing_revoked: dict | None = None) -> None:
    """Each task the member holds in ``outgoing`` and is about to get in another role moves from
    ``pending`` to ``granted`` now (and is no longer revoked from its old role)."""
    pairs = _both(outgoing, pending)
    _drop(pending, pairs)
    for sub, p in pairs:
        granted[sub] = granted.get(sub, frozenset()) | {p}
    if outgoing_revoked is not None:
        _drop(outgoing_revoked, pairs)


def _plain(tasks: dict) -> dict[str, frozenset[int]]:
    return {sub: frozenset(ps) for sub, ps in sorted(tasks.items()) if ps}


def _epochs(held: dict, default: int, *tasks: Tasks) -> tuple[tuple[str, int, int], ...]:
    """(subtopology, partition, epoch) of these tasks: the epoch held, else ``default``."""
    return tuple(sorted((s, p, held.get((s, p), default)) for t in tasks for s, ps in t.items() for p in ps))
