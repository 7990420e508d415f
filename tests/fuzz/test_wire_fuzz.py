"""Fuzzing the sans-IO connection with a real broker behind it.

Properties, for raw bytes and for generated requests of every advertised api and version:
``receive`` raises nothing but ProtocolViolation (AuthenticationFailure on a SASL listener), no
handler raises, every reply is a whole frame answering the next request that wants one and
decodes as that request's response, and the broker still answers ApiVersions and Metadata.

Runs derandomized (the same examples every run, no example database) so CI is deterministic.
For a deeper local search: ``KAFKAEMU_FUZZ_EXAMPLES=5000 pytest tests/fuzz`` (random, more examples).
"""
import os

import pytest

pytest.importorskip("hypothesis", reason="the fuzz tests need hypothesis (pip install kafkaemu[test])")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from kafkaemu.auth.authenticator import SaslAuthenticator
from kafkaemu.auth.credentials import CredentialStore
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.wire.framing import frame
from tests.conftest import new_broker

from .harness import (CHECKED, T0, Session, advertised, assert_still_serving, check_replies, harvest_replies,
                      seeded_broker)
from .strategies import Seen, encoded_request, ints

_DEEP = int(os.environ.get("KAFKAEMU_FUZZ_EXAMPLES", "0"))


def fuzz(examples: int):
    return settings(max_examples=_DEEP or examples, derandomize=not _DEEP, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


ADVERTISED = advertised()
pytestmark = pytest.mark.timeout(600)


def _exchange(broker, data: bytes, sent):
    session = Session(broker)
    session.send(data)
    session.release_parked()
    check_replies(session.replies(), sent)
    assert not session.aborted, "a reply could not be encoded"
    assert_still_serving(broker, session)
    return session


@pytest.mark.parametrize("api_key,version", ADVERTISED, ids=[f"{catalog().api_name(k)}-v{v}" for k, v in ADVERTISED])
@fuzz(12)
@given(data=st.data())
def test_every_advertised_request_is_answered_or_refused(api_key, version, data):
    request = data.draw(encoded_request(api_key, version, correlation_id=1))
    _exchange(seeded_broker(), frame(request), [(1, api_key, version)])


@st.composite
def pipelines(draw):
    """2-4 requests of any apis and versions, as one byte stream cut at arbitrary points."""
    picks = draw(st.lists(st.sampled_from(ADVERTISED), min_size=2, max_size=4))
    sent, stream = [], b""
    for cid, (api_key, version) in enumerate(picks, 1):
        stream += frame(draw(encoded_request(api_key, version, correlation_id=cid)))
        sent.append((cid, api_key, version))
    cuts = sorted(draw(st.lists(st.integers(0, len(stream)), max_size=4)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
    return chunks, sent


@fuzz(200)
@given(pipelines())
def test_pipelined_requests_of_any_apis_in_any_chunks(pipeline):
    chunks, sent = pipeline
    broker = seeded_broker()
    session = Session(broker)
    for chunk in chunks:
        session.send(chunk)
    session.release_parked()
    check_replies(session.replies(), sent)
    assert not session.aborted
    assert_still_serving(broker, session)


GROUP_APIS = {8, 9, 10, 11, 12, 13, 14, 15, 16, 42, 47, 68, 69}
CONVERSATION_PICKS = ADVERTISED + [kv for kv in ADVERTISED if kv[0] in GROUP_APIS] * 3


@fuzz(150)
@given(st.data())
def test_conversations_reuse_what_the_broker_answered(data):
    """Up to eight requests, each drawn after the previous replies were read, offered the member
    ids, generations and producer ids those replies carried, with time moving between them; this
    gets past the first error check of the group APIs."""
    broker = seeded_broker()
    session, seen, sent = Session(broker), Seen(), []
    now = T0
    for cid in range(1, data.draw(st.integers(2, 8)) + 1):
        api_key, version = data.draw(st.sampled_from(CONVERSATION_PICKS))
        session.send(frame(data.draw(encoded_request(api_key, version, correlation_id=cid, seen=seen))), now)
        sent.append((cid, api_key, version))
        if session.violation is not None:
            break
        harvest_replies(session, sent, seen)
        now += data.draw(st.sampled_from([0, 10, 3000, 45_000]))
        broker.tick(now)
        session.drain(now)
    session.release_parked()
    check_replies(session.replies(), sent)
    assert not session.aborted
    assert_still_serving(broker, session)


# the admin APIs issue 18 brought (log dirs, elections, reassignments, quotas, quorum and its
# voters, features, broker unregistration, telemetry, config resources and the configs it
# reworked); each is fuzzed at every version above, and together on three nodes below
ISSUE_18_APIS = {ApiKey.DESCRIBE_CONFIGS, ApiKey.ALTER_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS,
                 ApiKey.ALTER_REPLICA_LOG_DIRS, ApiKey.DESCRIBE_LOG_DIRS, ApiKey.ELECT_LEADERS,
                 ApiKey.ALTER_PARTITION_REASSIGNMENTS, ApiKey.LIST_PARTITION_REASSIGNMENTS,
                 ApiKey.DESCRIBE_CLIENT_QUOTAS, ApiKey.ALTER_CLIENT_QUOTAS, ApiKey.DESCRIBE_QUORUM,
                 ApiKey.UPDATE_FEATURES, ApiKey.UNREGISTER_BROKER, ApiKey.GET_TELEMETRY_SUBSCRIPTIONS,
                 ApiKey.PUSH_TELEMETRY, ApiKey.LIST_CONFIG_RESOURCES, ApiKey.ADD_RAFT_VOTER,
                 ApiKey.REMOVE_RAFT_VOTER}
CLUSTER_PICKS = [kv for kv in ADVERTISED if kv[0] in ISSUE_18_APIS] * 3 + \
    [kv for kv in ADVERTISED if kv[0] in (ApiKey.METADATA, ApiKey.DESCRIBE_CLUSTER, ApiKey.API_VERSIONS,
                                          ApiKey.FIND_COORDINATOR, ApiKey.PRODUCE, ApiKey.FETCH)]


def test_the_admin_apis_of_issue_18_are_fuzzed():
    assert ISSUE_18_APIS <= {k for k, _ in ADVERTISED}


@fuzz(120)
@given(st.data())
def test_cluster_admin_conversations_on_three_nodes(data):
    """Issue 18's admin APIs in sequences on a three-node broker, each request offered what the
    previous replies carried (node ids, ports, epochs): unregistered brokers, moved voters and
    replicas, changed features and quotas never break the next request or the broker."""
    broker = seeded_broker(nodes=3)
    session, seen, sent = Session(broker), Seen(), []
    for cid in range(1, data.draw(st.integers(2, 8)) + 1):
        api_key, version = data.draw(st.sampled_from(CLUSTER_PICKS))
        node = data.draw(st.sampled_from([0, 1, 2]))
        session.conn.node_id = node
        session.send(frame(data.draw(encoded_request(api_key, version, correlation_id=cid, seen=seen))))
        sent.append((cid, api_key, version))
        if session.violation is not None:
            break
        harvest_replies(session, sent, seen)
    session.release_parked()
    check_replies(session.replies(), sent)
    assert not session.aborted
    assert_still_serving(broker, session)


@fuzz(200)
@given(st.binary(max_size=300))
def test_raw_bytes(data):
    _exchange(seeded_broker(), data, [])


@st.composite
def header_then_garbage(draw):
    """A well-formed request header of an advertised api and version, then random bytes."""
    api_key, version = draw(st.sampled_from(ADVERTISED))
    cat = catalog()
    header = cat.data("RequestHeader", 2 if cat.is_flexible_request(api_key, version) else 1).encode(
        {"request_api_key": api_key, "request_api_version": version, "correlation_id": 5,
         "client_id": draw(st.one_of(st.none(), st.text(max_size=8)))})
    return header + draw(st.binary(max_size=120)), (5, api_key, version)


@fuzz(200)
@given(header_then_garbage())
def test_advertised_header_with_a_random_body(request):
    body, sent = request
    _exchange(seeded_broker(), frame(body), [sent])


@st.composite
def mutated_requests(draw):
    """A generated request with bytes flipped, inserted or cut off; its frame prefix recomputed."""
    api_key, version = draw(st.sampled_from(ADVERTISED))
    data = bytearray(draw(encoded_request(api_key, version, correlation_id=3)))
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(8, max(8, len(data))))  # keep the api key, version and correlation id
        action = draw(st.sampled_from(["flip", "insert", "cut"]))
        if action == "flip" and where < len(data):
            data[where] ^= draw(st.integers(1, 255))
        elif action == "insert":
            data[where:where] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[where:]
    return bytes(data), (3, api_key, version)


@fuzz(200)
@given(mutated_requests())
def test_mutated_requests(request):
    body, sent = request
    _exchange(seeded_broker(), frame(body), [sent])


@fuzz(200)
@given(st.lists(st.one_of(st.binary(max_size=60), st.sampled_from(ADVERTISED).flatmap(
    lambda kv: encoded_request(kv[0], kv[1], correlation_id=1)).map(frame)), max_size=4))
def test_sasl_listener_before_authentication(chunks):
    broker = new_broker(T0, sasl_users={"alice": "secret"})
    credentials = CredentialStore(broker.config.sasl_users, broker.config.enabled_sasl_mechanisms)
    session = Session(broker, authenticator=SaslAuthenticator(credentials, CHECKED.supports))
    for chunk in chunks:
        session.send(chunk)
    session.release_parked()
    assert all(len(reply) >= 4 for reply in session.replies())  # whole frames; their content is SASL's
    assert not session.aborted


@fuzz(100)
@given(st.sampled_from([(k, v) for k, v in ADVERTISED if k in (19, 37)]), st.data())
def test_partition_counts_never_stall_the_broker(api, data):
    """CreateTopics / CreatePartitions with any counts answer at once (Kafka refuses > 10,000)."""
    api_key, version = api
    broker = seeded_broker()
    before = sum(len(t.partitions) for t in broker.store.topics.values())
    count = data.draw(ints("int32"))
    if api_key == ApiKey.CREATE_TOPICS:
        body = {"topics": [{"name": "t", "num_partitions": count, "replication_factor": -1, "assignments": [],
                            "configs": []}], "timeout_ms": 1000, "validate_only": data.draw(st.booleans())}
    else:
        body = {"topics": [{"name": "fuzz-topic", "count": count, "assignments": None}], "timeout_ms": 1000,
                "validate_only": data.draw(st.booleans())}
    _exchange(broker, envelope.encode_request(api_key, version, body, 1, client_id="f"), [(1, api_key, version)])
    assert sum(len(t.partitions) for t in broker.store.topics.values()) <= before + 10_000


def test_the_harness_notices_a_raising_handler():
    """The connection turns a handler's exception into a closed connection; the harness must
    still see it, or the properties above could not fail on a handler bug."""
    from kafkaemu.handlers.registry import ApiRegistry
    from kafkaemu.testing.raw_client import api_versions_frame
    from kafkaemu.wire.connection import Connection, ProtocolViolation

    from . import harness

    def broken(ctx, req):
        raise KeyError("bug")

    registry = ApiRegistry()
    registry.register(ApiKey.API_VERSIONS, 0, 4)(harness._checked(broken))
    harness.HANDLER_FAILURES.clear()
    with pytest.raises(ProtocolViolation):
        Connection(seeded_broker(), registry, 1, "127.0.0.1").receive(api_versions_frame(), T0)
    assert len(harness.HANDLER_FAILURES) == 1 and "KeyError" in harness.HANDLER_FAILURES[0]
    harness.HANDLER_FAILURES.clear()
