"""A KIP-848 regex subscription while authorization is on resolves only to the topics the resolving
member's principal may DESCRIBE, as Kafka 4.3's TopicRegexResolver; the resolution is redone when
Kafka redoes it (a new regex, new matching topics, group.consumer.regex.refresh.interval.ms)."""
from kafkaemu.core.consumer.target_assignment import subscription_metadata
from kafkaemu.core.runtime import AppendError
from kafkaemu.protocol.errors import ErrorCode

from .harness import Client, ConsumerHarness, settle, tid

REFRESH_MS = 10_000


class Acls:
    """The authorizer stand-in: DESCRIBE allowed for the (principal, topic) pairs granted."""

    def __init__(self, *granted: tuple[str, str]) -> None:
        self.granted = set(granted)
        self.asked: list[tuple[str, str]] = []

    def describe(self, principal: str, host: str, topic: str) -> bool:
        self.asked.append((principal, topic))
        return (principal, topic) in self.granted


def harness(acls: Acls, topics=None) -> ConsumerHarness:
    h = ConsumerHarness(topics or {"orders-eu": 2, "orders-us": 1, "other": 1}, may_describe=acls.describe,
                        regex_refresh_interval_ms=REFRESH_MS)
    return h


def test_a_regex_member_is_assigned_only_the_topics_it_may_describe():
    acls = Acls(("User:alice", "orders-eu"), ("User:alice", "other"))
    h = harness(acls)
    alice = Client(h, "a", topics=None, regex="orders-.*", principal="User:alice")
    alice.beat()
    settle([alice])
    assert alice.owned == {tid("orders-eu"): {0, 1}}
    assert set(h.group().subscription_metadata) == {"orders-eu"}
    assert ("User:alice", "other") not in acls.asked   # only the regex's matches are asked about


def test_an_acl_grant_shows_at_the_next_resolution_after_the_refresh_interval():
    acls = Acls(("User:alice", "orders-eu"))
    h = harness(acls)
    alice = Client(h, "a", topics=None, regex="orders-.*", principal="User:alice")
    settle([alice])
    epoch = h.group().group_epoch
    acls.granted.add(("User:alice", "orders-us"))
    h.advance(REFRESH_MS)            # not older than the interval yet: the ACL change alone resolves nothing
    settle([alice])
    assert alice.owned == {tid("orders-eu"): {0, 1}} and h.group().group_epoch == epoch
    h.advance(1)
    settle([alice])
    assert alice.owned == {tid("orders-eu"): {0, 1}, tid("orders-us"): {0}}
    assert h.group().group_epoch == epoch + 1


def test_a_new_matching_topic_resolves_again_with_the_acls_of_now():
    acls = Acls(("User:alice", "orders-eu"))
    h = harness(acls)
    alice = Client(h, "a", topics=None, regex="orders-.*", principal="User:alice")
    settle([alice])
    acls.granted |= {("User:alice", "orders-us"), ("User:alice", "orders-asia")}
    h.set_topic("orders-asia", 1)
    settle([alice])
    assert alice.owned == {tid("orders-eu"): {0, 1}, tid("orders-us"): {0}, tid("orders-asia"): {0}}


def test_members_sharing_a_regex_share_the_resolution_of_the_member_whose_heartbeat_made_it():
    acls = Acls(("User:alice", "orders-eu"), ("User:alice", "orders-us"), ("User:bob", "orders-eu"))
    h = harness(acls)
    alice = Client(h, "a", topics=None, regex="orders-.*", principal="User:alice")
    bob = Client(h, "b", topics=None, regex="orders-.*", principal="User:bob")
    alice.beat()
    settle([alice, bob])
    # resolved once, with alice's permissions: bob's heartbeats found it resolved (as Kafka)
    resolved = h.group().regexes.by_regex["orders-.*"].topics
    assert resolved == {"orders-eu", "orders-us"}
    assert {tid("orders-eu"), tid("orders-us")} == set(alice.owned) | set(bob.owned)
    h.advance(REFRESH_MS + 1)
    bob.beat()                       # the refresh comes with bob's heartbeat: bob's permissions
    settle([alice, bob])
    assert h.group().regexes.by_regex["orders-.*"].topics == {"orders-eu"}
    assert set(alice.owned) | set(bob.owned) == {tid("orders-eu")}


def test_a_member_subscribing_by_name_is_checked_by_the_handler_not_here():
    acls = Acls()
    h = harness(acls)
    named = Client(h, "n", topics=["orders-us"], principal="User:carol")
    regex = Client(h, "r", topics=None, regex="orders-.*", principal="User:carol")
    settle([named, regex])
    # the named topic stays assigned; nothing reaches a member through the regex
    assert set(named.owned) | set(regex.owned) == {tid("orders-us")}
    assert h.group().regexes.by_regex["orders-.*"].topics == frozenset()


def test_leaving_and_fencing_keep_the_resolution_without_a_principal():
    acls = Acls(("User:alice", "orders-eu"))
    h = harness(acls)
    alice = Client(h, "a", topics=None, regex="orders-.*", principal="User:alice")
    other = Client(h, "o", topics=["other"], principal="User:alice")
    settle([alice, other])
    other.leave()                    # fencing recomputes the subscription from the kept resolution
    assert set(h.group().subscription_metadata) == {"orders-eu"}


def test_without_an_authorizer_a_regex_matches_every_live_topic():
    h = ConsumerHarness({"orders-eu": 2, "orders-us": 1})
    alice = Client(h, "a", topics=None, regex="orders-.*", principal="User:alice")
    settle([alice])
    assert set(alice.owned) == {tid("orders-eu"), tid("orders-us")}
    assert h.group().regexes is None
    assert set(subscription_metadata(h.group(), h.topics)) == {"orders-eu", "orders-us"}


def test_a_failed_write_restores_the_resolution_it_made():
    acls = Acls(("User:alice", "orders-eu"))
    h = harness(acls)
    alice = Client(h, "a", topics=None, regex="orders-.*", principal="User:alice")
    settle([alice])
    before = h.group().regexes
    acls.granted.add(("User:alice", "orders-us"))
    h.advance(REFRESH_MS + 1)

    sink = h.c.ctx.sink

    def failing(*args, **kw):
        raise AppendError(ErrorCode.NOT_COORDINATOR)
    h.c.ctx.sink = failing
    assert alice.beat()["error_code"] == ErrorCode.NOT_COORDINATOR
    assert h.group().regexes is before
    h.c.ctx.sink = sink
    alice.epoch = 0
    settle([alice])
    assert tid("orders-us") in alice.owned
