"""Looking up one group (of a kind) never walks every group: a rebalance's transitions look up the
group's members (the control journal), so with thousands of groups a walk per lookup cost more
than the rebalance itself."""
import pytest

from kafkaemu.control.views import member_names
from kafkaemu.core.group_api import GroupType

from .harness import Harness


class NoWalk(dict):
    """Every group by id, refusing to be walked."""

    def _walk(self, *args):
        raise AssertionError("walked every group")
    items = keys = values = __iter__ = _walk


def test_a_rebalance_and_its_lookups_never_walk_every_group():
    h = Harness()
    for g in range(5):
        h.stable_group(f"other-{g}", n=2)
    h.c.ctx.groups = NoWalk(h.c.ctx.groups)
    members = h.stable_group("g", n=3)
    assert h.state("g") == "Stable"
    assert h.c.classic.groups.get("g") is h.group("g") and "g" in h.c.classic.groups
    assert h.c.classic.groups["g"].members.keys() == set(members)
    assert h.c.consumer.groups.get("g") is None and "g" not in h.c.consumer.groups
    with pytest.raises(KeyError):
        h.c.consumer.groups["g"]


def test_the_journal_lookup_of_a_groups_members_never_walks_every_group(broker):
    h = Harness()
    broker.coordinator = h.c
    h.stable_group("g", n=2)
    h.c.ctx.groups = NoWalk(h.c.ctx.groups)
    assert sorted(m["member_id"] for m in member_names(broker, "g")) == sorted(h.group("g").members)
    assert member_names(broker, "absent") == []


def test_groups_of_a_kind_are_a_live_view_iterated_over_a_snapshot():
    h = Harness()
    h.stable_group("a", n=1)
    h.stable_group("b", n=1)
    classic = h.c.ctx.groups_of(GroupType.CLASSIC)
    assert len(classic) == 2 and sorted(classic) == ["a", "b"] and classic == {"a": h.group("a"), "b": h.group("b")}
    for gid in classic:   # deleting while iterating is safe, as with the copied dict of before
        del h.c.ctx.groups[gid]
    assert classic == {} and h.c.consumer.groups == {}
