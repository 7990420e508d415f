"""State views, awaits, snapshots and reset, topology, against the broker core."""
import asyncio

import pytest

from kafkaemu.control.params import AwaitTimeout, BadRequest, ControlError
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.errors import ErrorCode
from tests.conftest import T0, new_broker

from .harness import Env


def test_topics_show_offsets_and_groups_show_decoded_assignments_offsets_and_lag():
    env = Env()
    a, mid_a, b, mid_b, gen = env.two_member_group(partitions=4)
    c = env.client()
    for p in range(4):
        c.produce("t", p, [b"x"] * (p + 1))
    env.broker.store.get("t").partitions[3].delete_records(1)
    parts = env.op("topic", topic="t")["partitions"]
    assert [(p["log_start_offset"], p["high_watermark"], p["last_stable_offset"]) for p in parts] == [
        (0, 1, 1), (0, 2, 2), (0, 3, 3), (1, 4, 4)]
    assert [t["name"] for t in env.op("topics")["topics"]] == ["t"]
    assert "__consumer_offsets" in [t["name"] for t in env.op("topics", internal=True)["topics"]]
    a.commit("g", "t", {0: 1, 1: 1}, gen, mid_a)
    group = env.op("group", group="g")
    assert (group["state"], group["generation"], group["protocol"], group["leader"]) == ("Stable", 2, "range", mid_a)
    members = {m["client_id"]: m for m in group["members"]}
    assert members["a"]["assignment"] == [{"topic": "t", "partitions": [0, 1]}]
    assert members["b"]["assignment"] == [{"topic": "t", "partitions": [2, 3]}]
    assert members["a"]["subscription"] == ["t"] and members["a"]["leader"]
    lags = {(o["partition"]): (o["committed_offset"], o["high_watermark"], o["lag"]) for o in group["offsets"]}
    assert lags == {0: (1, 1, 0), 1: (1, 2, 1), 2: (None, 3, 3), 3: (None, 4, 3)}
    assert group["lag"] == 7 and group["fully_assigned"]
    [summary] = env.op("groups")["groups"]
    assert (summary["group_id"], summary["members"], summary["lag"], summary["coordinator"]) == ("g", 2, 7, 0)
    with pytest.raises(ControlError, match="no group 'nope'") as missing:
        env.op("group", group="nope")
    assert missing.value.status == 404
    with pytest.raises(ControlError, match="no topic 'nope'"):
        env.op("topic", topic="nope")


def test_the_journal_numbers_transitions_for_polling():
    env = Env()
    _, mid_a, _, mid_b, _ = env.two_member_group()
    journal = env.op("journal_get")
    seqs = [e["seq"] for e in journal["entries"]]
    assert seqs == list(range(1, len(seqs) + 1)) and journal["next_seq"] == len(seqs) + 1
    assert env.op("journal_get", after=seqs[-2])["entries"] == journal["entries"][-1:]
    a = {"member_id": mid_a, "client_id": "a", "instance_id": None}
    assert journal["entries"][0] == {"seq": 1, "at_ms": T0, "group": "g", "from": "Empty",
                                     "to": "PreparingRebalance", "generation": 0, "members": [a]}


def test_each_journal_entry_lists_the_members_of_that_moment():
    env = Env()
    _, mid_a, _, mid_b, gen = env.two_member_group()
    env.op("expire_member", group="g", client_id="b")
    entries = env.op("journal_get")["entries"]
    members = [(e["from"], e["to"], sorted(m["client_id"] for m in e["members"])) for e in entries]
    assert members[-1] == ("Stable", "PreparingRebalance", ["a"])        # b is gone when the rebalance starts
    assert ("CompletingRebalance", "Stable", ["a", "b"]) in members
    b = next(m for e in entries for m in e["members"] if m["client_id"] == "b")
    assert b == {"member_id": mid_b, "client_id": "b", "instance_id": None}


def run_with(env, coro_op: str, params: dict, then=None, after_s: float = 0.05):
    """Start an await, optionally change the broker ``after_s`` later on the same loop."""
    async def main():
        if then is not None:
            asyncio.get_running_loop().call_later(after_s, then)
        return await env.control.run(coro_op, params)
    return asyncio.run(main())


def test_await_group_answers_at_once_when_it_holds_and_wakes_when_it_comes_to_hold():
    env = Env()
    a, mid_a, b, mid_b, gen = env.two_member_group()
    now = run_with(env, "await_group", {"group": "g", "state": "stable", "members": 2, "assigned": True,
                                        "timeout_ms": 1000})
    assert now["satisfied"] and now["current"]["state"] == "Stable"
    woken = run_with(env, "await_group", {"group": "g", "state": "PreparingRebalance", "timeout_ms": "5s"},
                     then=lambda: env.control.call and env.op("expire_member", group="g", client_id="b"))
    assert woken["current"]["member_count"] == 1 and woken["waited_ms"] < 5000


def test_await_group_waits_for_a_group_that_does_not_exist_yet_and_times_out_with_what_it_saw():
    env = Env()
    with pytest.raises(AwaitTimeout, match="timed out after 50 ms waiting for group 'later': state Stable") as timeout:
        run_with(env, "await_group", {"group": "later", "state": "Stable", "timeout_ms": 50})
    assert timeout.value.status == 408 and timeout.value.details["current"] == {"group_id": "later", "exists": False}


@pytest.mark.parametrize("params,message", [
    ({"group": "g", "state": "Stable"}, "timeout_ms is required"),
    ({"group": "g", "state": "Stable", "timeout_ms": -1}, "must not be negative"),
    ({"group": "g", "state": "Stabel", "timeout_ms": 10}, "must be a group state"),
    ({"group": "g", "timeout_ms": 10}, "give state, generation"),
    ({"group": "g", "members": "three", "timeout_ms": 10}, "must be an integer"),
    ({"group": "g", "state": "Stable", "timeout_ms": "2h"}, "at most"),
])
def test_bad_awaits_are_refused(params, message):
    with pytest.raises(BadRequest, match=message):
        Env().op("await_group", **params)


def test_await_lag_and_offset():
    env = Env()
    a, mid_a, b, mid_b, gen = env.two_member_group(partitions=2)
    c = env.client()
    c.produce("t", 0, [b"1", b"2"])
    commit = lambda: a.commit("g", "t", {0: 2, 1: 0}, gen, mid_a)   # noqa: E731
    got = run_with(env, "await_lag", {"group": "g", "timeout_ms": 2000}, then=commit)
    assert got["current"]["lag"] == 0
    c.produce("t", 1, [b"3"])
    with pytest.raises(AwaitTimeout) as behind:
        run_with(env, "await_lag", {"group": "g", "topic": "t", "lag": 0, "timeout_ms": 30})
    assert behind.value.details["current"]["lag"] == 1
    got = run_with(env, "await_offset", {"topic": "t", "partition": 1, "offset": 2, "timeout_ms": 2000},
                   then=lambda: c.produce("t", 1, [b"4"]))
    assert got["current"]["offset"] == 2
    got = run_with(env, "await_offset", {"topic": "t", "partition": 0, "offset": 2, "group": "g", "timeout_ms": 10})
    assert got["current"]["offset"] == 2


def test_snapshot_restore_brings_back_records_offsets_groups_producer_state_and_the_clock():
    env = Env()
    a, mid_a, b, mid_b, gen = env.two_member_group(partitions=2)
    c = env.client()
    pid = 5000
    c.produce("t", 0, [b"r0", b"r1"], producer=(pid, 0, 0))
    a.commit("g", "t", {0: 2}, gen, mid_a)
    saved = env.op("snapshot_save", name="base")
    assert (saved["topics"], saved["partitions"], saved["records"]) == (1, 2, 2)
    before = [bytes(x) for x in env.broker.store.get("t").partitions[0].batches()]

    c.produce("t", 0, [b"later"], producer=(pid, 0, 2))
    a.commit("g", "t", {0: 3}, gen, mid_a)
    env.op("expire_member", group="g", client_id="b")
    env.op("clock_advance", ms="1m")
    env.broker.topics.create("extra", 1, {})
    env.broker.topics.delete("t")

    restored = env.op("snapshot_restore", name="base")
    assert restored["now_ms"] == T0 and env.op("clock_get")["now_ms"] == T0
    assert [t["name"] for t in env.op("topics")["topics"]] == ["t"]
    plog = env.broker.store.get("t").partitions[0]
    assert [bytes(x) for x in plog.batches()] == before and plog.high_watermark == 2
    group = env.op("group", group="g")
    # the snapshot's members are gone (their clients rejoin); the committed offsets are the snapshot's
    assert (group["state"], group["member_count"]) == ("Empty", 0)
    assert [(o["partition"], o["committed_offset"]) for o in group["offsets"]] == [(0, 2)]
    assert a.heartbeat("g", gen, mid_a).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    # the producer state came back: a retry of the batch after the snapshot is not a duplicate...
    assert c.produce("t", 0, [b"later"], producer=(pid, 0, 2)).responses[0].partition_responses[0].base_offset == 2
    # ...and one from before it is
    dup = c.produce("t", 0, [b"r0", b"r1"], producer=(pid, 0, 0)).responses[0].partition_responses[0]
    assert (dup.error_code, dup.base_offset) == (0, 0)
    # the snapshot can be restored again (it shares nothing the live log changes), members kept on request
    env.op("snapshot_restore", name="base", keep_members=True)
    assert env.broker.store.get("t").partitions[0].high_watermark == 2
    group = env.op("group", group="g")
    assert (group["state"], group["generation"], group["member_count"]) == ("Stable", gen, 2)
    assert a.heartbeat("g", gen, mid_a).error_code == 0
    assert [s["name"] for s in env.op("snapshot_list")["snapshots"]] == ["base"]


def test_restore_and_delete_of_an_unknown_snapshot_are_404():
    env = Env()
    for name in ("snapshot_restore", "snapshot_delete"):
        with pytest.raises(ControlError, match="no snapshot 'x'") as missing:
            env.op(name, name="x")
        assert missing.value.status == 404


def test_reset_empties_the_broker_and_its_controls_but_keeps_snapshots_and_the_clock():
    env = Env(nodes=2)
    env.two_member_group()
    env.op("snapshot_save", name="keep")
    env.op("clock_advance", ms=5000)
    env.op("fault_add", api="Fetch", error=1)
    env.op("api_version_cap", api="Fetch", max_version=3)
    env.op("leader_move", topic="t", partition=0, node=1)
    env.op("request_log_config", enabled=True)
    env.client().produce("t", 1, [b"x"])
    env.op("reset")
    assert env.op("topics")["topics"] == [] and env.op("groups")["groups"] == []
    assert env.op("faults")["faults"] == [] and env.op("api_version_caps")["caps"] == []
    assert env.op("requests")["entries"] == [] and env.op("requests")["enabled"]
    assert env.op("journal_get")["entries"] == []
    assert env.op("clock_get")["now_ms"] == T0 + 5000
    assert [s["name"] for s in env.op("snapshot_list")["snapshots"]] == ["keep"]
    offsets = env.broker.store.get("__consumer_offsets")
    assert all(p.high_watermark == 0 for p in offsets.partitions)
    env.op("snapshot_restore", name="keep", keep_members=True)
    assert env.op("group", group="g")["member_count"] == 2


def find_coordinator(client, group):
    return client.call(ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": [group]}).coordinators[0]


def test_stopping_a_node_moves_its_partitions_and_coordinators_and_starting_brings_them_back():
    env = Env(nodes=3)
    env.broker.topics.create("t", 6, {})
    c = env.client(node_id=0)
    led_by_1 = [p.index for p in env.broker.store.get("t").partitions if env.broker.placement.partition_leader(p) == 1]
    group = next(g for g in (f"g{i}" for i in range(100)) if find_coordinator(c, g).node_id == 1)
    stopped = env.op("node_stop", node=1)
    assert sorted(m["partition"] for m in stopped["moved"] if m["topic"] == "t") == led_by_1
    meta = c.call(ApiKey.METADATA, 12, {"topics": [{"topic_id": b"\0" * 16, "name": "t"}],
                                        "allow_auto_topic_creation": False,
                                        "include_topic_authorized_operations": False})
    assert sorted(b.node_id for b in meta.brokers) == [0, 2]
    assert all(p.leader_id in (0, 2) and p.error_code == 0 for p in meta.topics[0].partitions)
    assert find_coordinator(c, group).node_id in (0, 2)
    assert {n["node_id"]: n["running"] for n in env.op("nodes")["nodes"]} == {0: True, 1: False, 2: True}
    with pytest.raises(ControlError, match="already stopped"):
        env.op("node_stop", node=1)
    started = env.op("node_start", node=1)
    assert sorted(m["partition"] for m in started["returned"] if m["topic"] == "t") == led_by_1
    assert find_coordinator(c, group).node_id == 1
    with pytest.raises(ControlError, match="is running"):
        env.op("node_start", node=1)


def test_an_offline_node_leaves_its_partitions_leaderless_and_its_groups_without_coordinator():
    env = Env()
    env.broker.topics.create("t", 2, {})
    c = env.client()
    with pytest.raises(ControlError, match="leaders=offline") as refused:
        env.op("node_stop", node=0)
    assert refused.value.status == 409
    epoch = env.broker.store.get("t").partitions[0].leader_epoch
    env.op("node_stop", node=0, leaders="offline")
    meta = c.call(ApiKey.METADATA, 12, {"topics": [{"topic_id": b"\0" * 16, "name": "t"}],
                                        "allow_auto_topic_creation": False,
                                        "include_topic_authorized_operations": False})
    assert [(p.error_code, p.leader_id, list(p.offline_replicas)) for p in meta.topics[0].partitions] == [
        (ErrorCode.LEADER_NOT_AVAILABLE, -1, [0])] * 2
    assert find_coordinator(c, "g").error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert c.produce("t", 0, [b"x"]).responses[0].partition_responses[0].error_code == \
        ErrorCode.NOT_LEADER_OR_FOLLOWER
    env.op("node_start", node=0)
    assert env.broker.store.get("t").partitions[0].leader_epoch == epoch + 2   # offline, then elected again
    assert find_coordinator(c, "g").error_code == 0


def test_leader_and_coordinator_moves():
    env = Env(nodes=2)
    env.broker.topics.create("t", 1, {})
    c = env.client(node_id=0)
    moved = env.op("leader_move", topic="t", partition=0, node=1)
    assert moved["leader"] == 1 and moved["leader_epoch"] == 1
    assert c.produce("t", 0, [b"x"]).responses[0].partition_responses[0].error_code == \
        ErrorCode.NOT_LEADER_OR_FOLLOWER
    target = 1 - find_coordinator(c, "grp").node_id
    answer = env.op("coordinator_move", group="grp", node=target)
    assert find_coordinator(c, "grp").node_id == target and answer["offsets_partition"] >= 0
    with pytest.raises(ControlError, match="no node 5") as missing:
        env.op("leader_move", topic="t", partition=0, node=5)
    assert missing.value.status == 404
    with pytest.raises(ControlError, match="has 1 partitions, no partition 3"):
        env.op("leader_move", topic="t", partition=3, node=1)
    env.op("node_stop", node=1)
    with pytest.raises(ControlError, match="node 1 is stopped"):
        env.op("coordinator_move", group="grp", node=1)


def test_topics_are_created_and_deleted_without_a_client():
    env = Env()
    created = env.op("topic_create", name="made", partitions=3, configs={"retention.ms": 1000})
    assert (created["partition_count"], created["configs"]) == (3, {"retention.ms": "1000"})
    with pytest.raises(ControlError, match="already exists") as twice:
        env.op("topic_create", name="made")
    assert twice.value.status == 409
    with pytest.raises(BadRequest, match="illegal topic name"):
        env.op("topic_create", name="bad name")
    with pytest.raises(BadRequest, match="configs must be an object"):
        env.op("topic_create", name="x", configs=["a"])
    assert env.op("topic_delete", topic="made")["name"] == "made"
    with pytest.raises(ControlError, match="is internal"):
        env.op("topic_delete", topic="__consumer_offsets")
    assert env.op("topics")["topics"] == []


def test_restored_groups_equal_a_full_load_of_the_restored_offsets_topic():
    """The fast restore (group records + offsets copied) builds what loading __consumer_offsets
    record by record builds: classic, simple (offsets only), KIP-848 and deleted groups."""
    from kafkaemu.control.views import GroupSnapshot, group_ids
    env = Env()
    a, mid_a, b, mid_b, gen = env.two_member_group(partitions=2)
    a.commit("g", "t", {0: 1, 1: 2}, gen, mid_a)
    c = env.client("simple")
    c.commit("simple", "t", {0: 5})                     # a standalone commit: offsets only
    c.commit("gone", "t", {1: 7})
    assert c.call(ApiKey.DELETE_GROUPS, 2, {"groups_names": ["gone"]}).results[0].error_code == 0   # tombstones
    kip = env.client("k")
    assert kip.call(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, {
        "group_id": "kip", "member_id": "m-k", "member_epoch": 0, "instance_id": None, "rack_id": None,
        "rebalance_timeout_ms": 30000, "subscribed_topic_names": ["t"], "server_assignor": None,
        "topic_partitions": []}).error_code == 0
    env.op("snapshot_save", name="s")
    a.commit("g", "t", {0: 9}, gen, mid_a)
    c.commit("later", "t", {0: 1})
    env.op("snapshot_restore", name="s", keep_members=True)

    def views(broker):
        return {g: (s.type, s.state, s.generation, broker.coordinator.group(g) is not None,
                    sorted(m["member_id"] for m in s.members()),
                    {(t, p): o.offset for t, ps in s.offsets.items() for p, o in ps.items()})
                for g in group_ids(broker) for s in [GroupSnapshot(broker, g)]}
    restored = views(env.broker)
    env.broker.coordinator = env.broker.new_coordinator(env.clock.now_ms(), load=True)
    assert restored == views(env.broker)
    assert set(restored) == {"g", "simple", "kip"} and restored["simple"][1] == "Empty"
    assert restored["g"][5] == {("t", 0): 1, ("t", 1): 2} and restored["simple"][3]


def test_a_restore_is_written_to_the_data_directory(tmp_path):
    env = Env(data_dir=str(tmp_path))
    env.broker.topics.create("kept", 1, {})
    c = env.client()
    c.produce("kept", 0, [b"a", b"b"])
    c.commit("simple", "kept", {0: 2})
    env.op("snapshot_save", name="s")
    c.produce("kept", 0, [b"c"])
    env.broker.topics.create("dropped", 1, {})
    env.op("snapshot_restore", name="s")
    reloaded = new_broker(T0, data_dir=str(tmp_path))
    assert sorted(reloaded.store.topics) == ["__consumer_offsets", "__transaction_state", "kept"]
    assert reloaded.store.get("kept").partitions[0].high_watermark == 2
    assert reloaded.coordinator.offsets.store.get("simple", "kept", 0).offset == 2


def test_a_snapshot_that_does_not_fit_in_memory_says_so_and_changes_nothing():
    """The answer was an empty 500 ("internal error: "). The MemoryError is raised where a
    snapshot takes its memory: copying a partition's batches (read from the segment files with a
    data directory)."""
    env = Env()
    env.broker.topics.create("big", 2, {})
    env.client().produce("big", 1, [b"x" * 1000] * 5)
    env.op("snapshot_save", name="kept")
    store = env.broker.store.get("big").partitions[1].batch_store

    def out_of_memory():
        raise MemoryError
    store.capture = out_of_memory
    with pytest.raises(ControlError) as refused:
        env.op("snapshot_save", name="huge")
    assert refused.value.status == 507
    assert "does not fit in memory" in refused.value.message and "bytes of logs" in refused.value.message
    assert refused.value.details["log_bytes"] > 5000 and refused.value.details["snapshots"] == ["kept"]
    del store.capture
    assert [s["name"] for s in env.op("snapshot_list")["snapshots"]] == ["kept"]
    assert env.op("snapshot_save", name="huge")["records"] == 5
