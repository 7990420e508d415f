"""The services a broker builds on first use (``BuiltOnFirstUse``): the group and transaction
coordinators, the SASL users and delegation tokens, the metadata quorum. Nothing builds them before
they are read; the first read builds one, once, and puts it on the services class; a replacement
(a snapshot restore) wins; timers and topic deletion leave an unbuilt coordinator alone."""
import threading

from kafkaemu.broker.context import BuiltOnFirstUse, built, services_for
from kafkaemu.config import BrokerConfig
from kafkaemu.protocol.api_keys import ApiKey
from tests.conftest import call, new_broker

LAZY = ("groups", "txns", "credentials", "tokens", "quorum")


def test_a_new_broker_has_built_none_of_them():
    broker = new_broker()
    assert all(built(broker.services, name) is None for name in LAZY)
    broker.next_deadline_ms()   # reading the deadlines builds nothing
    broker.tick(1000)
    broker.topics.create("t", 1, {})
    broker.topics.delete("t")
    assert all(built(broker.services, name) is None for name in LAZY)


def test_the_first_read_builds_it_once_and_every_context_sees_it():
    broker = new_broker()
    ctx = broker.context(ApiKey.JOIN_GROUP, 9)
    first = ctx.groups
    assert first is broker.coordinator is broker.services.groups is broker.context(ApiKey.HEARTBEAT, 4).groups
    assert built(broker.services, "groups") is first
    assert built(broker.services, "txns") is None   # each on its own


def test_a_request_builds_what_it_uses():
    broker = new_broker()
    reply = call(broker, ApiKey.FIND_COORDINATOR, 4, {"key_type": 0, "coordinator_keys": ["g"]})
    assert reply.coordinators[0].error_code == 0
    assert built(broker.services, "groups") is None   # placement alone answers FindCoordinator
    call(broker, ApiKey.INIT_PRODUCER_ID, 4, {"transactional_id": "t", "transaction_timeout_ms": 60000,
                                             "producer_id": -1, "producer_epoch": -1})
    assert built(broker.services, "txns") is not None


def test_a_replacement_set_before_the_first_read_wins():
    broker = new_broker()
    replacement = object()
    broker.services.groups = replacement
    assert broker.coordinator is replacement and built(broker.services, "groups") is replacement


def test_the_group_journal_hears_of_the_coordinator_once_it_is_built():
    broker = new_broker()
    seen = []
    broker.watch_group_coordinator(seen.append)
    assert seen == []
    coordinator = broker.coordinator
    assert seen == [coordinator]
    broker.watch_group_coordinator(seen.append)   # built already: told at once
    assert seen == [coordinator, coordinator]


def test_threads_reading_it_first_at_once_build_it_once():
    services = services_for(None, None, BrokerConfig())
    builds = []
    gate = threading.Barrier(8)

    def build():
        builds.append(1)
        return object()
    BuiltOnFirstUse(services, "groups", build)
    got = []

    def read():
        gate.wait()
        got.append(services.groups)
    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(builds) == 1 and len({id(g) for g in got}) == 1


def test_the_security_clock_reaches_credentials_built_before_or_after_it_is_set():
    broker = new_broker()
    broker.use_security_clock(lambda: 42)
    assert broker.credentials.now_ms() == broker.tokens.now_ms() == 42
    broker.use_security_clock(lambda: 7)
    assert broker.credentials.now_ms() == broker.tokens.now_ms() == 7
