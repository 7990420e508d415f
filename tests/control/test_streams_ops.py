"""The group controls on a streams group (pure core, no client): its view with members' tasks and
the partitions they read, a member expired now, and the journal."""
from __future__ import annotations

from tests.core.streams.test_streams_groups import request

from .harness import Env


def joined(env, member):
    b = env.broker
    reply, _ = b.coordinator.streams_group_heartbeat(b.now_ms, request(member, 0), b.coordinator.streams.partitions_of)
    return reply


def test_a_streams_group_is_viewed_expired_and_journalled():
    env = Env()
    env.broker.topics.create("in", 4, {})
    env.broker.topics.create("app-log", 4, {})
    c = env.control
    joined(env, "m1")
    listed = {g["group_id"]: g for g in c.run("groups", {})["groups"]}
    assert listed["app"]["type"] == "streams" and listed["app"]["state"] == "Stable"
    assert listed["app"]["protocol_type"] == "streams" and listed["app"]["members"] == 1
    view = c.run("group", {"group": "app"})
    (m,) = view["members"]
    assert m["process_id"] == "p-m1" and m["tasks"]["active"] == {"0": [0, 1, 2, 3]}
    assert m["assignment"] == [{"topic": "in", "partitions": [0, 1, 2, 3]}] and view["fully_assigned"]
    joined(env, "m2")
    done = c.run("expire_member", {"group": "app", "member_id": "m2", "instance_id": None, "client_id": None})
    assert done["expired"] == ["m2"] and done["failed"] == {}
    assert [m["member_id"] for m in c.run("group", {"group": "app"})["members"]] == ["m1"]
    entries = c.run("journal_get", {"group": "app", "after": 0, "limit": 100})["entries"]
    assert entries and entries[0]["group"] == "app"


def test_the_web_page_shows_a_streams_group():
    env = Env()
    env.broker.topics.create("in", 4, {})
    env.broker.topics.create("app-log", 4, {})
    joined(env, "m1")
    from kafkaemu.control.web import render_page
    html = render_page(env.control, "").decode()
    assert "app" in html and "streams" in html
