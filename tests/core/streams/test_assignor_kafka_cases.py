"""Apache Kafka 4.3's StickyTaskAssignorTest, case by case: the same groups, topologies and
previous assignments, the same assertions about which member ends up with which tasks. Kafka's
``mkMap`` is a LinkedHashMap (a dict here); where Kafka fills a ``HashMap``, ``in_kafka_order``
gives the members in its order."""
from __future__ import annotations

import pytest

from kafkaemu.core.streams.assignor import (NAME, MemberAssignment, MemberSpec, TaskAssignorError,
                                             assign, in_kafka_order)

SUB = "test-subtopology"


def spec(process: str, active: dict | None = None, standby: dict | None = None) -> MemberSpec:
    return MemberSpec(process, {s: frozenset(p) for s, p in (active or {}).items()},
                      {s: frozenset(p) for s, p in (standby or {}).items()})


class Topology:
    """Kafka's TopologyDescriberImpl: every subtopology has ``num_tasks`` tasks."""

    def __init__(self, num_tasks: int, stateful: bool, subtopologies: list[str]):
        self.num_tasks, self.stateful, self.subs = num_tasks, stateful, subtopologies

    def subtopologies(self) -> list[str]:
        return self.subs

    def max_num_input_partitions(self, subtopology_id: str) -> int:
        return self.num_tasks

    def is_stateful(self, subtopology_id: str) -> bool:
        return self.stateful


class Topology2:
    """Kafka's TopologyDescriberImpl2: test-subtopology1 has 6 tasks, test-subtopology2 one."""

    def subtopologies(self) -> list[str]:
        return ["test-subtopology1", "test-subtopology2"]

    def max_num_input_partitions(self, subtopology_id: str) -> int:
        return 6 if subtopology_id == "test-subtopology1" else 1

    def is_stateful(self, subtopology_id: str) -> bool:
        return False


def active_count(result: dict[str, MemberAssignment], *members: str) -> int:
    return sum(len(ps) for m in members for ps in result[m].active_tasks.values())


def active_ids(result, *members: str) -> list[int]:
    return [p for m in (members or result) for ps in result[m].active_tasks.values() for p in ps]


def standby_ids(result, *members: str) -> list[int]:
    return [p for m in (members or result) for ps in result[m].standby_tasks.values() for p in ps]


def merged(result, kind: str, *members: str) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for m in (members or result):
        for s, ps in getattr(result[m], kind).items():
            out.setdefault(s, set()).update(ps)
    return out


def numbered(n: int) -> dict[str, MemberSpec]:
    """Kafka's ``new HashMap<>()`` of member0.. on process0.."""
    return in_kafka_order({f"member{i}": spec(f"process{i}") for i in range(n)})


def test_name():
    assert NAME == "sticky"


def test_one_active_task_to_each_process_when_task_count_same_as_process_count():
    result = assign({"member1": spec("process1"), "member2": spec("process2"), "member3": spec("process3")},
                    Topology(3, False, [SUB]))
    assert len(result) == 3
    seen: set[int] = set()
    for i in range(3):
        member = result[f"member{i + 1}"]
        assert len(member.active_tasks) == 1
        seen |= member.active_tasks[SUB]
    assert seen == {0, 1, 2}


SIX_MEMBERS = ["member1_1", "member1_2", "member2_1", "member2_2", "member3_1", "member3_2"]


@pytest.mark.parametrize("standbys", [0, 1])
def test_topic_group_id_evenly_across_clients(standbys):
    members = {m: spec("process" + m[6]) for m in SIX_MEMBERS}
    result = assign(members, Topology(3, standbys > 0, ["test-subtopology1", "test-subtopology2"]), standbys)
    for m in SIX_MEMBERS:
        assert active_count(result, m) == 1
    assert merged(result, "active_tasks", *SIX_MEMBERS) == {"test-subtopology1": {0, 1, 2},
                                                            "test-subtopology2": {0, 1, 2}}


def test_not_migrate_active_task_to_other_process():
    members = {"member1": spec("process1", {SUB: {0}}), "member2": spec("process2", {SUB: {1}})}
    result = assign(members, Topology(3, False, [SUB]))
    assert 0 in result["member1"].active_tasks[SUB] and 1 in result["member2"].active_tasks[SUB]
    assert len(result["member1"].active_tasks[SUB]) + len(result["member2"].active_tasks[SUB]) == 3

    # flip the previous active tasks assignment around.
    members = {"member2": spec("process2", {SUB: {1}}), "member3": spec("process1", {SUB: {2}})}
    result = assign(members, Topology(3, False, [SUB]))
    assert 1 in result["member2"].active_tasks[SUB] and 2 in result["member3"].active_tasks[SUB]
    assert len(result["member2"].active_tasks[SUB]) + len(result["member3"].active_tasks[SUB]) == 3


def test_migrate_active_tasks_to_new_process_without_changing_all_assignments():
    members = {"member1": spec("process1", {SUB: {0, 2}}), "member2": spec("process2", {SUB: {1}}),
               "member3": spec("process3")}
    result = assign(members, Topology(3, False, [SUB]))
    assert result["member1"].active_tasks[SUB] & {0, 2}
    assert 1 in result["member2"].active_tasks[SUB]
    assert result["member3"].active_tasks[SUB] & {0, 2}
    assert active_count(result, "member1", "member2", "member3") == 3


def test_assign_based_on_capacity():
    members = {"member1": spec("process1"), "member2_1": spec("process2"), "member2_2": spec("process2")}
    result = assign(members, Topology(3, False, [SUB]))
    for m in members:
        assert len(result[m].active_tasks[SUB]) == 1


def test_assign_tasks_evenly_with_unequal_topic_group_sizes():
    previous = {"test-subtopology1": {0, 1, 2, 3, 4, 5}, "test-subtopology2": {0}}
    result = assign({"member1": spec("process1", previous), "member2": spec("process2")}, Topology2())
    assert active_count(result, "member1") == 4 and active_count(result, "member2") == 3
    assert merged(result, "active_tasks") == previous


def test_keep_active_task_stickiness_when_more_client_than_active_tasks():
    members = {"member1": spec("process1", {SUB: {0}}), "member2": spec("process2", {SUB: {2}}),
               "member3": spec("process3", {SUB: {1}}), "member4": spec("process4"), "member5": spec("process5")}
    result = assign(members, Topology(3, False, [SUB]))
    assert [result[m].active_tasks.get(SUB) for m in members] == [{0}, {2}, {1}, None, None]

    # change up the assignment and make sure it is still sticky
    members = {"member1": spec("process1"), "member2": spec("process2", {SUB: {0}}), "member3": spec("process3"),
               "member4": spec("process4", {SUB: {2}}), "member5": spec("process5", {SUB: {1}})}
    result = assign(members, Topology(3, False, [SUB]))
    assert [result[m].active_tasks.get(SUB) for m in members] == [None, {0}, None, {2}, {1}]


def test_assign_tasks_to_client_with_previous_standby_tasks():
    members = {"member1": spec("process1", standby={SUB: {2}}), "member2": spec("process2", standby={SUB: {1}}),
               "member3": spec("process3", standby={SUB: {0}})}
    result = assign(members, Topology(3, False, [SUB]))
    assert [result[m].active_tasks[SUB] for m in members] == [{2}, {1}, {0}]


def test_not_assign_standby_tasks_to_client_with_previous_standby_tasks_and_current_active_tasks():
    members = {"member1": spec("process1", standby={SUB: {0}}), "member2": spec("process2", standby={SUB: {1}})}
    result = assign(members, Topology(2, True, [SUB]), 1)
    assert result["member1"].active_tasks[SUB] == {0} and result["member1"].standby_tasks[SUB] == {1}
    assert result["member2"].active_tasks[SUB] == {1} and result["member2"].standby_tasks[SUB] == {0}


def test_assign_based_on_capacity_when_multiple_client_have_standby_tasks():
    members = {"member1": spec("process1", {SUB: {0}}, {SUB: {1}}),
               "member2_1": spec("process2", {SUB: {2}}, {SUB: {1}}), "member2_2": spec("process2")}
    result = assign(members, Topology(3, False, [SUB]))
    assert [result[m].active_tasks[SUB] for m in members] == [{0}, {2}, {1}]


def test_standby_tasks_to_different_client_than_corresponding_active_task():
    members = {f"member{i + 1}": spec(f"process{i + 1}", {SUB: {i}}) for i in range(4)}
    result = assign(members, Topology(4, True, [SUB]), 1)
    for i, m in enumerate(members):
        ids = standby_ids(result, m)
        assert i not in ids and len(ids) <= 2
    assert sum(1 for m in members if standby_ids(result, m)) >= 3
    assert merged(result, "standby_tasks") == {SUB: {0, 1, 2, 3}}


def test_assign_multiple_replicas_of_standby_task():
    members = {f"member{i + 1}": spec(f"process{i + 1}", {SUB: {i}}) for i in range(3)}
    result = assign(members, Topology(3, True, [SUB]), 2)
    assert [set(standby_ids(result, m)) for m in members] == [{1, 2}, {0, 2}, {0, 1}]


def test_not_assign_standby_task_replicas_when_no_client_available_without_having_the_task():
    result = assign({"member1": spec("process1")}, Topology(1, True, [SUB]), 1)
    assert result["member1"].standby_tasks == {}


def test_assign_active_and_standby_tasks():
    members = {f"member{i}": spec(f"process{i}") for i in (1, 2, 3)}
    result = assign(members, Topology(3, True, [SUB]), 1)
    assert set(active_ids(result)) == {0, 1, 2} and set(standby_ids(result)) == {0, 1, 2}


def test_assign_at_least_one_task_to_each_client_if_possible():
    members = {"member1_1": spec("process1"), "member1_2": spec("process1"), "member1_3": spec("process1"),
               "member2": spec("process2"), "member3": spec("process3")}
    result = assign(members, Topology(3, False, [SUB]))
    assert len(active_ids(result, "member1_1", "member1_2", "member1_3")) == 1
    assert len(active_ids(result, "member2")) == 1 and len(active_ids(result, "member3")) == 1


def test_assign_each_active_task_to_one_client_when_more_clients_than_tasks():
    members = {f"member{i}": spec(f"process{i}") for i in range(1, 7)}
    result = assign(members, Topology(3, False, [SUB]))
    assert len(active_ids(result, *members)) == 3
    assert merged(result, "active_tasks", *members)[SUB] == {0, 1, 2}


def test_balance_active_and_standby_tasks_across_available_clients():
    members = {f"member{i}": spec(f"process{i}") for i in range(1, 7)}
    result = assign(members, Topology(3, True, [SUB]), 1)
    for m in result:
        assert len(result[m].standby_tasks) + len(active_ids(result, m)) == 1


def test_assign_more_tasks_to_client_with_more_capacity():
    members = {"member1": spec("process1"), "member2_1": spec("process2"), "member2_2": spec("process2")}
    result = assign(members, Topology(3, False, [f"test-subtopology{i}" for i in range(4)]))
    assert active_count(result, "member2_1", "member2_2") == 8 and active_count(result, "member1") == 4


def test_rebalance_tasks_across_all_clients_when_capacity_and_task_count_the_same():
    members = {"member1": spec("process1"), "member2": spec("process2"),
               "member3": spec("process3", {SUB: {0, 1, 2, 3}}), "member4": spec("process4")}
    result = assign(members, Topology(4, False, [SUB]))
    assert [active_count(result, m) for m in members] == [1, 1, 1, 1]


def test_rebalance_tasks_across_clients_when_capacity_less_than_task_count():
    members = {"member1": spec("process1"), "member2": spec("process2"),
               "member3": spec("process3", {SUB: {0, 1, 2, 3}})}
    result = assign(members, Topology(4, False, [SUB]))
    assert [active_count(result, m) for m in members] == [1, 1, 2]


def test_rebalance_tasks_to_clients_based_on_capacity():
    members = {"member2": spec("process2", {SUB: {0, 3, 2}}), "member3_1": spec("process3"),
               "member3_2": spec("process3")}
    result = assign(members, Topology(3, False, [SUB]))
    assert active_count(result, "member2") == 1 and active_count(result, "member3_1", "member3_2") == 2


def test_move_minimal_number_of_tasks_when_previously_above_capacity_and_new_client_added():
    p1, p2 = {0, 2}, {1, 3}
    members = {"member1": spec("process1", {SUB: p1}), "member2": spec("process2", {SUB: p2}),
               "member3": spec("process3")}
    result = assign(members, Topology(4, False, [SUB]))
    assert active_count(result, "member3") == 1
    moved = set(active_ids(result, "member3"))
    if p1 & moved:
        assert set(active_ids(result, "member2")) == p2
    else:
        assert set(active_ids(result, "member1")) == p1


def test_not_move_any_tasks_when_new_tasks_added():
    members = {"member1": spec("process1", {SUB: {0, 1}}), "member2": spec("process2", {SUB: {2, 3}})}
    result = assign(members, Topology(6, False, [SUB]))
    assert {0, 1} <= set(active_ids(result, "member1")) and {2, 3} <= set(active_ids(result, "member2"))


def test_assign_new_tasks_to_new_client_when_previous_tasks_assigned_to_old_clients():
    members = {"member1": spec("process1", {SUB: {2, 1}}), "member2": spec("process2", {SUB: {0, 3}}),
               "member3": spec("process3")}
    result = assign(members, Topology(6, False, [SUB]))
    assert {2, 1} <= set(active_ids(result, "member1")) and {0, 3} <= set(active_ids(result, "member2"))
    assert {4, 5} <= set(active_ids(result, "member3"))


S0, S1, S2 = "test-subtopology0", "test-subtopology1", "test-subtopology2"
MEMBER1 = ({S0: {1}, S1: {2, 3}}, {S0: {0}, S1: {1}, S2: {0, 1, 3}})
MEMBER2 = ({S0: {0}, S1: {1}, S2: {2}}, {S0: {1, 2, 3}, S1: {0, 2, 3}, S2: {0, 1, 3}})


def test_assign_tasks_not_previously_active_to_new_client():
    members = {"member1": spec("process1", *MEMBER1), "member2": spec("process2", *MEMBER2),
               "member3": spec("process3", {S2: {0, 1, 3}}, {S0: {2}, S1: {2}}),
               "newMember": spec("process4", {}, {S0: {0, 1, 2, 3}, S1: {0, 1, 2, 3}, S2: {0, 1, 2, 3}})}
    result = assign(members, Topology(4, False, [S0, S1, S2]))
    assert result["member1"].active_tasks == {S0: {1}, S1: {2, 3}}
    assert result["member2"].active_tasks == {S0: {0}, S1: {1}, S2: {2}}
    assert result["member3"].active_tasks == {S2: {0, 1, 3}}
    assert result["newMember"].active_tasks == {S0: {2, 3}, S1: {0}}


def test_assign_tasks_not_previously_active_to_multiple_new_clients():
    members = {"member1": spec("process1", *MEMBER1), "member2": spec("process2", *MEMBER2),
               "bounce_member1": spec("bounce1", {}, {S2: {0, 1, 3}}),
               "bounce_member2": spec("bounce2", {}, {S0: {2, 3}, S1: {0}})}
    result = assign(members, Topology(4, False, [S0, S1, S2]))
    assert result["member1"].active_tasks == {S0: {1}, S1: {2, 3}}
    assert result["member2"].active_tasks == {S0: {0}, S1: {1}, S2: {2}}
    assert result["bounce_member1"].active_tasks == {S2: {0, 1, 3}}
    assert result["bounce_member2"].active_tasks == {S0: {2, 3}, S1: {0}}


def test_assign_tasks_to_new_client():
    members = {"member1": spec("process1", {SUB: {1, 2}}), "member2": spec("process2")}
    assert active_count(assign(members, Topology(2, False, [SUB])), "member1") == 1


def test_assign_tasks_to_new_client_without_flipping_assignment_between_existing_clients():
    members = {"member1": spec("process1", {SUB: {0, 1, 2}}), "member2": spec("process2", {SUB: {3, 4, 5}}),
               "newMember": spec("process3")}
    result = assign(members, Topology(6, False, [SUB]))
    mem1, mem2 = set(active_ids(result, "member1")), set(active_ids(result, "member2"))
    assert not mem1 & {3, 4, 5} and len(mem1) == 2
    assert not mem2 & {0, 1, 2} and len(mem2) == 2
    assert len(active_ids(result, "newMember")) == 2


def test_assign_tasks_to_new_client_without_flipping_assignment_between_existing_and_bounced_clients():
    members = {"member1": spec("process1", {SUB: {0, 1, 2, 6}}), "member2": spec("process2", {}, {SUB: {3, 4, 5}}),
               "newMember": spec("newProcess")}
    result = assign(members, Topology(7, False, [SUB]))
    mem1, mem2 = set(active_ids(result, "member1")), set(active_ids(result, "member2"))
    assert not mem1 & {3, 4, 5} and len(mem1) == 3
    assert not mem2 & {0, 1, 2} and len(mem2) == 2
    assert len(active_ids(result, "newMember")) == 2


def test_large_number_of_tasks_with_standby_assignment():
    result = assign(numbered(5), Topology(100, True, [SUB]), 2)
    assert set(active_ids(result)) == set(range(100))
    assert 0 < len(set(standby_ids(result))) <= 100 * 2
    for m in result:
        assert not set(active_ids(result, m)) & set(standby_ids(result, m))
    counts = [active_count(result, m) for m in result]
    assert min(counts) == 20 and max(counts) == 20
    assert max(len(standby_ids(result, m)) for m in result) > 0


def test_odd_number_of_clients_with_standby_tasks():
    result = assign(numbered(7), Topology(14, True, [SUB]), 1)
    assert set(active_ids(result)) == set(range(14))
    assert len(set(standby_ids(result))) == 14
    assert sorted(active_count(result, m) for m in result) == [2] * 7


def test_high_standby_replica_count():
    result = assign(numbered(3), Topology(6, True, [SUB]), 5)
    assert set(active_ids(result)) == set(range(6))
    assert 0 < len(set(standby_ids(result))) <= 6 * 2


def test_large_number_of_subtopologies_with_standby_tasks():
    subs = [f"subtopology-{i}" for i in range(10)]
    result = assign(numbered(4), Topology(5, True, subs), 1)
    assert set(merged(result, "active_tasks")) == set(subs)
    assert set(merged(result, "standby_tasks")) == set(subs)


def test_single_client_and_multiple_standby_replicas():
    result = assign({"member1": spec("process1")}, Topology(10, True, [SUB]), 3)
    assert active_count(result, "member1") == 10 and standby_ids(result, "member1") == []


def test_more_standby_replicas_than_available_clients():
    result = assign(numbered(2), Topology(4, True, [SUB]), 5)
    assert set(active_ids(result)) == set(range(4)) and len(set(standby_ids(result))) == 4


def test_reassign_tasks_when_new_node_joins_with_existing_active_and_standby_assignments():
    members = {"member1": spec("process1", {SUB: {0, 1}}, {SUB: {2, 3}}),
               "member2": spec("process2", {SUB: {2, 3}}, {SUB: {0, 1}}), "member3": spec("process3")}
    result = assign(members, Topology(4, True, [SUB]), 1)
    assert set(active_ids(result)) == {0, 1, 2, 3} and set(standby_ids(result)) == {0, 1, 2, 3}
    for m in members:
        assert 1 <= len(active_ids(result, m)) <= 2
        assert len(active_ids(result, m)) + len(standby_ids(result, m)) <= 3


@pytest.mark.parametrize("previous", [{"test-subtopology1": {0, 1}, "test-subtopology2": {0, 1}}, None])
def test_range_assign_tasks_when_scaling_up_or_starting_empty(previous):
    members = {"member1": spec("process1", previous), "member2": spec("process2")}
    result = assign(members, Topology(2, True, ["test-subtopology1", "test-subtopology2"]), 1)
    for m in members:
        for s in ("test-subtopology1", "test-subtopology2"):
            assert len(result[m].active_tasks[s]) == 1 and len(result[m].standby_tasks[s]) == 1
    assert merged(result, "active_tasks") == {"test-subtopology1": {0, 1}, "test-subtopology2": {0, 1}}


def test_assign_standby_task_to_previous_owner_based_on_below_quota_condition():
    members = {"member1": spec("process1", {SUB: {0}}, {SUB: {1}}), "member2": spec("process2", {SUB: {1}}),
               "member3": spec("process3")}
    result = assign(members, Topology(2, True, [SUB]), 1)
    member1 = result["member1"]
    assert 0 in member1.active_tasks[SUB] and 1 not in member1.active_tasks[SUB]
    assert 1 in member1.standby_tasks[SUB]
    assert len(member1.active_tasks[SUB]) + len(member1.standby_tasks[SUB]) <= 2


# ---------------------------------------------------------------- Kafka's TaskAssignorException
def test_tasks_without_members_fail_as_kafka():
    with pytest.raises(TaskAssignorError, match=r"^No process available to assign active task test-subtopology_0\.$"):
        assign({}, Topology(2, False, [SUB]))


def test_no_tasks_and_no_members_is_an_empty_assignment():
    assert assign({}, Topology(0, False, [SUB])) == {}
    assert assign({"m": spec("p")}, Topology(0, True, []), 2) == {"m": MemberAssignment()}


@pytest.mark.parametrize("standbys", [-1, "1", 1.0, True, None])
def test_a_bad_standby_replica_count_is_refused(standbys):
    with pytest.raises(TaskAssignorError, match="num.standby.replicas"):
        assign({"m": spec("p")}, Topology(1, True, [SUB]), standbys)
