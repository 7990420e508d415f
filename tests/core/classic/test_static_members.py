"""KIP-345 static membership in the classic protocol."""
from kafkaemu.protocol.errors import ErrorCode as E

from ..harness import Harness


def static_group(h: Harness, n: int = 2, version: int = 9, protocols=None):
    """n static members i0..i{n-1}, joined, synced, Stable. Returns {instance: member_id}."""
    h2 = h
    replies = {}
    for i in range(n):
        replies[f"i{i}"] = h2.join(instance=f"i{i}", client_id=f"C{i}", version=version, session=10000,
                                   protocols=protocols)
    group = h2.group()
    for inst, mid in list(group.static_members.items()):
        if not group.members[mid].is_awaiting_join:
            h2.join(member_id=mid, instance=inst, client_id="C", version=version, session=10000, protocols=protocols)
    assert h2.state() == "CompletingRebalance"
    gen, leader = group.generation_id, group.leader_id
    for inst, mid in group.static_members.items():
        if mid != leader:
            h2.sync("g", mid, gen, instance=inst)
    h2.sync("g", leader, gen, {mid: inst.encode() for inst, mid in group.static_members.items()},
            instance=[i for i, m in group.static_members.items() if m == leader][0])
    assert h2.state() == "Stable"
    return dict(group.static_members)


def test_static_member_gets_an_instance_prefixed_id_without_member_id_required():
    h = Harness()
    reply = h.join(instance="inst-1", client_id="C1")
    assert reply.error == E.NONE
    assert reply.value["member_id"].startswith("inst-1-")


def test_restart_within_session_takes_old_slot_without_rebalance_and_fences_old_id():
    h = Harness()
    members = static_group(h)
    gen = h.group().generation_id
    leader = h.group().leader_id
    inst = next(i for i, m in members.items() if m != leader)
    old = members[inst]
    transitions_before = len(h.c.transitions)
    reply = h.join(instance=inst, client_id="C-restarted")
    assert reply.error == E.NONE
    new = reply.value["member_id"]
    assert new != old and new.startswith(inst + "-")
    assert reply.value["generation_id"] == gen and reply.value["members"] == []
    assert h.state() == "Stable" and len(h.c.transitions) == transitions_before
    assert h.sync("g", new, gen, instance=inst).value["assignment"] == inst.encode()
    # The old id is fenced everywhere.
    assert h.heartbeat("g", old, gen, instance=inst) == E.FENCED_INSTANCE_ID
    assert h.sync("g", old, gen, instance=inst).error == E.FENCED_INSTANCE_ID
    assert h.commit_errors("g", {("t", 0): 1}, member_id=old, generation=gen, instance=inst) == {E.FENCED_INSTANCE_ID}
    assert h.join("g", old, instance=inst).error == E.FENCED_INSTANCE_ID
    assert h.heartbeat("g", new, gen, instance=inst) == E.NONE
    # The new member id is persisted with the group.
    assert new in h.group().members and old not in h.group().members


def test_restarted_static_leader_keeps_assignment_and_is_told_the_old_leader_before_v9():
    h = Harness()
    members = static_group(h, version=5)
    leader = h.group().leader_id
    inst = next(i for i, m in members.items() if m == leader)
    reply = h.join(instance=inst, client_id="C", version=5)
    assert h.state() == "Stable"
    assert reply.value["leader"] == leader != reply.value["member_id"]
    assert h.group().leader_id == reply.value["member_id"]


def test_restarted_static_leader_v9_gets_members_and_skip_assignment():
    h = Harness()
    members = static_group(h)
    leader = h.group().leader_id
    inst = next(i for i, m in members.items() if m == leader)
    reply = h.join(instance=inst, client_id="C", version=9)
    assert h.state() == "Stable"
    assert reply.value["skip_assignment"] is True
    assert reply.value["leader"] == reply.value["member_id"]
    assert len(reply.value["members"]) == 2


def test_static_leader_rejoining_with_its_member_id_triggers_rebalance():
    h = Harness()
    members = static_group(h)
    leader = h.group().leader_id
    inst = next(i for i, m in members.items() if m == leader)
    reply = h.join("g", leader, instance=inst, client_id="C")
    assert reply.parked and h.state() == "PreparingRebalance"


def test_static_member_changing_protocol_on_restart_rebalances():
    h = Harness()
    members = static_group(h)
    inst = next(i for i, m in members.items() if m != h.group().leader_id)
    h.join(instance=inst, protocols=[("roundrobin", b""), ("range", b"")], client_id="C")
    assert h.state() == "Stable"      # range still wins the vote
    h.join(instance=inst, protocols=[("range", b"x")], client_id="C")
    assert h.state() == "Stable"
    h2 = Harness()
    m2 = static_group(h2, n=1, protocols=[("range", b""), ("roundrobin", b"")])
    [(inst2, _)] = m2.items()
    assert h2.join(instance=inst2, protocols=[("sticky", b"")], client_id="C").error == E.INCONSISTENT_GROUP_PROTOCOL
    reply = h2.join(instance=inst2, protocols=[("roundrobin", b""), ("range", b"")], client_id="C")
    assert h2.state() == "CompletingRebalance"   # the vote now picks roundrobin: a new generation
    assert reply.value["protocol_name"] == "roundrobin" and reply.value["generation_id"] == 2


def test_silent_static_member_is_kept_through_rebalance_and_removed_at_session_timeout():
    h = Harness()
    members = static_group(h)
    leader = h.group().leader_id
    other_inst = next(i for i, m in members.items() if m != leader)
    leader_inst = next(i for i, m in members.items() if m == leader)
    h.join("g", leader, instance=leader_inst, client_id="C", session=10000, rebalance=3000)
    h.advance(3000)                            # rebalance timeout: static members are not dropped
    assert members[other_inst] in h.group().members
    h.advance(7000)                            # session timeout of the silent static member
    assert members[other_inst] not in h.group().members


def test_leave_by_instance_id_removes_static_member_at_once():
    h = Harness()
    members = static_group(h)
    inst = next(i for i, m in members.items() if m != h.group().leader_id)
    resp = h.leave("g", ("", inst))
    assert resp["members"] == [{"member_id": "", "group_instance_id": inst, "error_code": 0}]
    assert members[inst] not in h.group().members and h.state() == "PreparingRebalance"
    assert h.leave("g", ("", inst))["members"][0]["error_code"] == E.UNKNOWN_MEMBER_ID


def test_unknown_instance_and_wrong_pairing():
    h = Harness()
    members = static_group(h)
    a = members["i0"]
    gen = h.group().generation_id
    assert h.heartbeat("g", a, gen, instance="nope") == E.UNKNOWN_MEMBER_ID
    assert h.heartbeat("g", a, gen, instance="i1") == E.FENCED_INSTANCE_ID


def test_classic_protocol_fences_instead_of_unreleased_instance_id():
    """UNRELEASED_INSTANCE_ID belongs to KIP-848 groups; a classic rejoin with a live instance id
    replaces the old member and fences it (its parked JoinGroup answered FENCED_INSTANCE_ID)."""
    h = Harness()
    members = static_group(h)
    leader = h.group().leader_id
    inst = next(i for i, m in members.items() if m == leader)
    parked = h.join("g", leader, instance=inst, client_id="C")        # old incarnation parked in a rebalance
    assert parked.parked
    newcomer = h.join(instance=inst, client_id="C")
    assert parked.error == E.FENCED_INSTANCE_ID
    codes = {parked.error} | ({newcomer.error} if not newcomer.parked else set())
    assert E.UNRELEASED_INSTANCE_ID not in codes
