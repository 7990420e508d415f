"""The share-group controls on the pure core (no client): a share group's view, a share partition's
in-flight records, a lock ended now, and the awaits."""
from __future__ import annotations

import pytest

from kafkaemu.control.params import ControlError
from kafkaemu.core.share.requests import ShareHeartbeat
from kafkaemu.storage.record_batch import build_batch

from .harness import T0, Env


@pytest.fixture
def env():
    e = Env()
    e.broker.topics.create("t", 1, {})
    return e


def joined(env, member="m1"):
    b = env.broker
    topics = {"t": _meta(b)}
    return b.coordinator.share_group_heartbeat(b.now_ms, ShareHeartbeat("sg", member, 0, subscribed_topic_names=["t"]),
                                               topics)


def _meta(b):
    from kafkaemu.core.modern import TopicMeta
    t = b.store.get("t")
    return TopicMeta("t", t.topic_id, len(t.partitions))


def acquire(env, member="m1"):
    b = env.broker
    t = b.store.get("t")
    t.partitions[0].append(build_batch([(b"k", b"v", [], T0)] * 3), T0)
    b.shares.offsets_altered(b.now_ms, "sg", t.topic_id, 0, 0)   # as share.auto.offset.reset=earliest
    return b.shares.acquire(b.now_ms, "sg", member, t.topic_id, 0, 10, [(0, 2)])


def test_view_records_and_release(env):
    c = env.control
    with pytest.raises(ControlError) as info:
        c.run("share_group", {"group": "sg"})
    assert info.value.status == 404
    joined(env)
    acquire(env)
    view = c.run("share_group", {"group": "sg"})
    assert view["state"] == "Stable" and view["members"][0]["assignment"] == [{"topic": "t", "partitions": [0]}]
    assert view["partitions"] == [{"topic": "t", "partition": 0, "start_offset": 0, "end_offset": 3,
                                   "in_flight": {"Acquired": 3}}]
    assert c.run("share_groups", {})["groups"] == [{"group_id": "sg", "state": "Stable", "group_epoch": 2,
                                                    "members": 1}]
    records = c.run("share_records", {"group": "sg", "topic": "t", "partition": 0})["records"]
    assert [(r["offset"], r["state"], r["delivery_count"], r["owner"]) for r in records] == \
        [(0, "Acquired", 1, "m1"), (1, "Acquired", 1, "m1"), (2, "Acquired", 1, "m1")]
    assert c.run("release_share_record", {"group": "sg", "topic": "t", "partition": 0, "offset": 1}) == {"released": 1}
    with pytest.raises(ControlError) as info:
        c.run("release_share_record", {"group": "sg", "topic": "t", "partition": 0, "offset": 1})
    assert info.value.status == 409
    states = [r["state"] for r in c.run("share_records", {"group": "sg", "topic": "t", "partition": 0})["records"]]
    assert states == ["Acquired", "Available", "Acquired"]


def test_awaits_answer_when_already_true(env):
    joined(env)
    acquire(env)
    got = env.op("await_share_group", group="sg", members=1, timeout_ms=1000)
    assert got["satisfied"] and got["current"]["group_id"] == "sg"
    got = env.op("await_share_offset", group="sg", topic="t", partition=0, offset=0, timeout_ms=1000)
    assert got["current"]["start_offset"] == 0


def test_a_snapshot_restore_brings_share_partitions_back(env):
    b = env.broker
    joined(env)
    acquire(env)
    t = b.store.get("t")
    b.shares.acknowledge(b.now_ms, "sg", "m1", t.topic_id, 0, [_Ack(0, 0)])
    env.op("snapshot_save", name="s")
    b.shares.acknowledge(b.now_ms, "sg", "m1", t.topic_id, 0, [_Ack(1, 2)])
    env.op("snapshot_restore", name="s", keep_members=False)
    sp = b.shares.existing("sg", t.topic_id, 0)
    assert sp.start_offset == 1 and [r["state"] for r in sp.in_flight()] == ["Available", "Available"]


class _Ack:
    def __init__(self, first, last):
        self.first_offset, self.last_offset, self.acknowledge_types = first, last, [1]


def test_the_web_page_draws_share_groups_with_a_strip_of_record_states(env):
    from kafkaemu.control.web import render_page
    assert b"No share groups yet." in render_page(env.control, "")
    joined(env)
    acquire(env)
    t = env.broker.store.get("t")
    env.broker.shares.acknowledge(env.broker.now_ms, "sg", "m1", t.topic_id, 0, [_Ack(1, 1)])
    page = render_page(env.control, "").decode()
    assert 'class="group share-group" data-group="sg" data-state="Stable"' in page
    assert page.count('class="rec rec-acquired c0"') == 2 and page.count('class="rec rec-acknowledged"') == 1
    assert 'title="offset 1: Acknowledged, delivery 1"' in page


def test_a_snapshot_restore_brings_the_share_group_back_members_removed_or_kept(env):
    joined(env)
    env.op("snapshot_save", name="s")
    env.broker.shares.group_configs.set("sg", "share.delivery.count.limit", "3")
    env.broker.coordinator.share_group_heartbeat(env.broker.now_ms, ShareHeartbeat("sg", "m1", -1), {"t": _meta(env.broker)})
    assert env.broker.coordinator.share.group("sg").members == {}
    env.op("snapshot_restore", name="s", keep_members=True)
    group = env.broker.coordinator.share.group("sg")
    assert (group.group_epoch, list(group.members), group.members["m1"].member_epoch) == (2, ["m1"], 2)
    assert group.members["m1"].assigned == {_meta(env.broker).topic_id: frozenset({0})}
    env.op("snapshot_restore", name="s")             # by default the members leave: their clients rejoin
    group = env.broker.coordinator.share.group("sg")
    assert group.members == {} and group.group_epoch == 3 and group.state.value == "Empty"
    assert env.broker.shares.config("sg", "share.delivery.count.limit") == 3   # configs stay


def test_reset_forgets_group_configs(env):
    env.broker.shares.group_configs.set("sg", "share.delivery.count.limit", "3")
    env.op("reset")
    assert env.broker.group_configs.groups() == []
