"""Every request in every group state, with the exact error code Kafka's classic coordinator returns.

Each row: (request, state) -> expected. Member "a" is an existing member carrying the group's current
generation unless the row says otherwise; "new" is a member joining with an empty member id.
"""
import pytest

from kafkaemu.core.classic.state import ClassicGroupState as GroupState
from kafkaemu.protocol.errors import ErrorCode as E

from ..harness import Harness

STATES = ["Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"]


class Scene:
    """A group brought into one state; ``a`` is a member (or a former member for Empty/Dead)."""

    def __init__(self, state: str):
        h = self.h = Harness()
        a, b = h.stable_group(n=2)
        self.a, self.b = a, b
        if state == "Empty":
            h.leave("g", a, b)
            h.advance(0)
        elif state == "PreparingRebalance":
            h.join("g", a, client_id="C1")           # the leader rejoins: b has not yet
        elif state == "CompletingRebalance":
            h.join("g", a, client_id="C1")
            h.join("g", b, client_id="C2")
        elif state == "Dead":
            h.group().transition_to(GroupState.DEAD, h.now)   # as while Kafka unloads/deletes a group
        assert h.state() == state
        self.gen = h.group().generation_id


@pytest.fixture(params=STATES)
def scene(request):
    return Scene(request.param)


HEARTBEAT = {"Empty": E.UNKNOWN_MEMBER_ID, "PreparingRebalance": E.REBALANCE_IN_PROGRESS,
             "CompletingRebalance": E.NONE, "Stable": E.NONE, "Dead": E.COORDINATOR_NOT_AVAILABLE}


@pytest.mark.parametrize("state", STATES)
def test_heartbeat(state):
    s = Scene(state)
    assert s.h.heartbeat("g", s.a, s.gen) == HEARTBEAT[state]


SYNC = {"Empty": E.UNKNOWN_MEMBER_ID, "PreparingRebalance": E.REBALANCE_IN_PROGRESS,
        "CompletingRebalance": None, "Stable": E.NONE, "Dead": E.COORDINATOR_NOT_AVAILABLE}


@pytest.mark.parametrize("state", STATES)
def test_sync_from_a_follower(state):
    s = Scene(state)
    reply = s.h.sync("g", s.b, s.gen)
    if SYNC[state] is None:
        assert reply.parked
    else:
        assert reply.error == SYNC[state]


COMMIT_MEMBER = {"Empty": E.UNKNOWN_MEMBER_ID, "PreparingRebalance": E.NONE,
                 "CompletingRebalance": E.REBALANCE_IN_PROGRESS, "Stable": E.NONE,
                 "Dead": E.COORDINATOR_NOT_AVAILABLE}
COMMIT_STANDALONE = {"Empty": E.NONE, "PreparingRebalance": E.UNKNOWN_MEMBER_ID,
                     "CompletingRebalance": E.UNKNOWN_MEMBER_ID, "Stable": E.UNKNOWN_MEMBER_ID,
                     "Dead": E.COORDINATOR_NOT_AVAILABLE}


@pytest.mark.parametrize("state", STATES)
def test_offset_commit_by_member(state):
    s = Scene(state)
    assert s.h.commit_errors("g", {("t", 0): 5}, member_id=s.a, generation=s.gen) == {COMMIT_MEMBER[state]}


@pytest.mark.parametrize("state", STATES)
def test_standalone_offset_commit(state):
    s = Scene(state)
    assert s.h.commit_errors("g", {("t", 0): 5}) == {COMMIT_STANDALONE[state]}


@pytest.mark.parametrize("state", STATES)
def test_offset_fetch_allowed_in_every_live_state(state):
    s = Scene(state)
    s.h.c.offsets.store.put("g", "t", 0, __import__("kafkaemu.core.offsets.store", fromlist=["x"]).CommittedOffset(7, -1, "", 0))
    expected = -1 if state == "Dead" else 7
    assert s.h.fetch("g", [("t", [0])]) == {("t", 0): expected}


LEAVE = {"Empty": (0, E.UNKNOWN_MEMBER_ID), "PreparingRebalance": (0, E.NONE), "CompletingRebalance": (0, E.NONE),
         "Stable": (0, E.NONE), "Dead": (E.COORDINATOR_NOT_AVAILABLE, None)}
STATE_AFTER_LEAVE = {"PreparingRebalance": "CompletingRebalance",   # a was the only one left to join: completes
                     "CompletingRebalance": "PreparingRebalance", "Stable": "PreparingRebalance"}


@pytest.mark.parametrize("state", STATES)
def test_leave(state):
    s = Scene(state)
    resp = s.h.leave("g", s.b)
    top, member = LEAVE[state]
    assert resp["error_code"] == top
    if member is not None:
        assert resp["members"][0]["error_code"] == member
    if state in STATE_AFTER_LEAVE:
        assert s.h.state() == STATE_AFTER_LEAVE[state]
        assert s.b not in s.h.group().members


JOIN_EXISTING = {"Empty": E.UNKNOWN_MEMBER_ID, "PreparingRebalance": None, "CompletingRebalance": E.NONE,
                 "Stable": E.NONE, "Dead": E.COORDINATOR_NOT_AVAILABLE}


@pytest.mark.parametrize("state", STATES)
def test_join_by_existing_follower_with_same_metadata(state):
    s = Scene(state)
    reply = s.h.join("g", s.b, client_id="C2")
    expected = JOIN_EXISTING[state]
    if state == "PreparingRebalance":
        # b was the last member awaited: its join completes the rebalance at once.
        assert reply.error == E.NONE and reply.value["generation_id"] == s.gen + 1
    else:
        assert reply.error == expected
        if expected == E.NONE:
            assert reply.value["generation_id"] == s.gen


JOIN_NEW = {"Empty": E.MEMBER_ID_REQUIRED, "PreparingRebalance": E.MEMBER_ID_REQUIRED,
            "CompletingRebalance": E.MEMBER_ID_REQUIRED, "Stable": E.MEMBER_ID_REQUIRED,
            "Dead": E.COORDINATOR_NOT_AVAILABLE}


@pytest.mark.parametrize("state", STATES)
def test_join_by_new_member(state):
    s = Scene(state)
    assert s.h.join("g", client_id="N").error == JOIN_NEW[state]


DELETE = {"Empty": E.NONE, "PreparingRebalance": E.NON_EMPTY_GROUP, "CompletingRebalance": E.NON_EMPTY_GROUP,
          "Stable": E.NON_EMPTY_GROUP, "Dead": E.GROUP_ID_NOT_FOUND}


@pytest.mark.parametrize("state", STATES)
def test_delete_groups(state):
    s = Scene(state)
    assert s.h.c.delete_groups(s.h.now, ["g"]) == [{"group_id": "g", "error_code": DELETE[state]}]
    if state == "Empty":
        assert s.h.group() is None
        assert s.h.c.describe_groups(s.h.now, ["g"])[0]["group_state"] == "Dead"


@pytest.mark.parametrize("state", STATES)
def test_describe_reports_state_and_metadata_only_when_stable(state):
    s = Scene(state)
    [d] = s.h.c.describe_groups(s.h.now, ["g"])
    assert d["group_state"] == state and d["error_code"] == 0
    assert d["authorized_operations"] == -2147483648
    if state == "Stable":
        assert d["protocol_data"] == "range"
        assert {m["member_id"]: m["member_assignment"] for m in d["members"]} == {
            s.a: f"a-{s.a}".encode(), s.b: f"a-{s.b}".encode()}
        assert all(m["member_metadata"] == b"range-meta" and m["client_host"] == "/127.0.0.1" for m in d["members"])
    else:
        assert d["protocol_data"] == ""
        assert all(m["member_metadata"] == b"" and m["member_assignment"] == b"" for m in d["members"])


def test_unknown_group_answers():
    h = Harness()
    assert h.heartbeat("nope", "m", 1) == E.UNKNOWN_MEMBER_ID
    assert h.sync("nope", "m", 1).error == E.UNKNOWN_MEMBER_ID
    assert [(r["member_id"], r["error_code"]) for r in h.leave("nope", "m")["members"]] == [("m", E.UNKNOWN_MEMBER_ID)]
    assert h.join("nope", "m").error == E.UNKNOWN_MEMBER_ID
    assert h.commit_errors("nope", {("t", 0): 1}, member_id="m", generation=3) == {E.GROUP_ID_NOT_FOUND}
    assert h.commit_errors("nope", {("t", 0): 1}, member_id="m", generation=3, version=8) == {E.ILLEGAL_GENERATION}
    assert h.fetch("nope", [("t", [0, 1])]) == {("t", 0): -1, ("t", 1): -1}
    assert h.fetch("nope", None) == {}
    assert h.c.delete_groups(h.now, ["nope"])[0]["error_code"] == E.GROUP_ID_NOT_FOUND
    [d] = h.c.describe_groups(h.now, ["nope"], include_authorized_operations=True)
    assert d["group_state"] == "Dead" and d["error_code"] == 0 and d["authorized_operations"] == 3400
    assert h.c.delete_offsets(h.now, "nope", [("t", [0])])["error_code"] == E.GROUP_ID_NOT_FOUND


def test_list_groups_with_state_and_type_filters():
    h = Harness()
    h.stable_group("stable-g", n=1)
    h.commit("simple-g", {("t", 0): 1})
    listed = {g["group_id"]: g for g in h.c.list_groups(h.now)}
    assert listed["stable-g"] == {"group_id": "stable-g", "protocol_type": "consumer", "group_state": "Stable",
                                  "group_type": "classic"}
    assert listed["simple-g"]["group_state"] == "Empty" and listed["simple-g"]["protocol_type"] == ""
    assert [g["group_id"] for g in h.c.list_groups(h.now, ["STABLE"])] == ["stable-g"]
    assert [g["group_id"] for g in h.c.list_groups(h.now, ["empty"])] == ["simple-g"]
    assert h.c.list_groups(h.now, [], ["consumer"]) == []
    assert len(h.c.list_groups(h.now, [], ["Classic"])) == 2


OFFSET_DELETE = {"Empty": (0, E.NONE), "PreparingRebalance": (0, E.GROUP_SUBSCRIBED_TO_TOPIC),
                 "CompletingRebalance": (0, E.GROUP_SUBSCRIBED_TO_TOPIC), "Stable": (0, E.GROUP_SUBSCRIBED_TO_TOPIC),
                 "Dead": (E.GROUP_ID_NOT_FOUND, None)}


@pytest.mark.parametrize("state", STATES)
def test_offset_delete(state):
    """A consumer group whose subscriptions cannot be read counts as subscribed to every topic (Kafka)."""
    s = Scene(state)
    resp = s.h.c.delete_offsets(s.h.now, "g", [("t", [0])])
    top, partition = OFFSET_DELETE[state]
    assert resp["error_code"] == top
    if partition is not None:
        assert resp["topics"][0]["partitions"][0]["error_code"] == partition


@pytest.mark.parametrize("state", STATES)
def test_list_groups_shows_live_states(state):
    s = Scene(state)
    listed = {g["group_id"]: g["group_state"] for g in s.h.c.list_groups(s.h.now)}
    assert listed == ({} if state == "Dead" else {"g": state})
