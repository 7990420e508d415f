"""A handler's ``ctx.principal`` is the connection's Kafka principal: ``User:<name>`` once SASL has
authenticated the client, ``User:ANONYMOUS`` on a listener without SASL (and before it completes)."""
import pytest

from kafkaemu.auth.authenticator import SaslAuthenticator
from kafkaemu.auth.credentials import CredentialStore
from kafkaemu.handlers import REGISTRY
from kafkaemu.handlers.registry import ApiRegistry
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.wire.connection import Connection
from tests.conftest import new_broker

STORE = CredentialStore({"alice": "s3cret"}, ("PLAIN",))
API_VERSIONS_BODY = {"client_software_name": "t", "client_software_version": "1"}


@pytest.fixture
def seen():
    return []


def connection(seen, sasl: bool) -> Connection:
    registry = ApiRegistry()
    for key in (ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE):
        api = REGISTRY.get(key)
        registry.register(key, api.min_version, api.max_version)(api.func)

    @registry.register(ApiKey.METADATA, 0, 12)
    def metadata(ctx, req):
        seen.append((ctx.api_key, ctx.principal))
        return REGISTRY.get(ApiKey.METADATA).func(ctx, req)

    auth = SaslAuthenticator(STORE, registry.supports) if sasl else None
    return Connection(new_broker(), registry, 1, "127.0.0.1", authenticator=auth)


def send(conn, api_key, version, body, correlation_id=1):
    conn.receive(envelope.encode_request(api_key, version, body, correlation_id, client_id="c"), 0)
    assert not conn.closed
    conn.take_output()


def test_a_connection_without_sasl_is_anonymous(seen):
    conn = connection(seen, sasl=False)
    send(conn, ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})
    assert seen == [(ApiKey.METADATA, "User:ANONYMOUS")]


@pytest.mark.parametrize("user,password", [("alice", "s3cret")])
def test_after_sasl_plain_the_principal_names_the_user(seen, user, password):
    conn = connection(seen, sasl=True)
    assert conn.principal == "User:ANONYMOUS"
    send(conn, ApiKey.API_VERSIONS, 3, API_VERSIONS_BODY)
    send(conn, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})
    send(conn, ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": f"\x00{user}\x00{password}".encode()})
    send(conn, ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})
    assert seen == [(ApiKey.METADATA, f"User:{user}")]
    assert type(seen[0][0]) is ApiKey   # handlers get the enum member, not a bare number
