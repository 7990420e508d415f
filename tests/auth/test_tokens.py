"""Delegation tokens: Kafka's create/renew/expire/describe rules with a manual clock, and SCRAM
authentication with a token (tokenauth=true)."""
import base64

import pytest
from kafka.net.sasl.scram import ScramClient

from kafkaemu.auth.credentials import CredentialStore
from kafkaemu.auth.errors import AuthenticationFailed
from kafkaemu.auth.tokens import DelegationTokens
from kafkaemu.protocol.errors import ErrorCode as E

DAY, WEEK = 86_400_000, 604_800_000


class Clock:
    def __init__(self):
        self.now = 1_000_000

    def __call__(self):
        return self.now


def manager(secret="secret"):
    clock = Clock()
    return DelegationTokens(secret, WEEK, DAY, clock), clock


def test_disabled_without_a_secret_key():
    tokens, _ = manager(None)
    assert tokens.create("User:a", "User:a", [], -1) == (E.DELEGATION_TOKEN_AUTH_DISABLED, None)
    assert tokens.renew("User:a", b"x", -1) == (E.DELEGATION_TOKEN_AUTH_DISABLED, -1)


def test_lifetimes_renewal_and_expiry():
    tokens, clock = manager()
    code, token = tokens.create("User:alice", "User:alice", ["User:bob"], -1)
    assert code == E.NONE and token.expiry == clock.now + DAY and token.max == clock.now + WEEK
    code, short = tokens.create("User:alice", "User:alice", [], 1000)
    assert short.expiry == short.max == clock.now + 1000
    clock.now += 500
    assert tokens.renew("User:bob", token.hmac, 2000) == (E.NONE, clock.now + 2000)
    assert tokens.renew("User:eve", token.hmac, -1) == (E.DELEGATION_TOKEN_OWNER_MISMATCH, -1)
    assert tokens.renew("User:alice", b"nope", -1) == (E.DELEGATION_TOKEN_NOT_FOUND, -1)
    clock.now += 5000
    assert tokens.renew("User:alice", token.hmac, -1) == (E.DELEGATION_TOKEN_EXPIRED, -1)
    assert tokens.expire("User:alice", short.hmac, -1) == (E.NONE, clock.now)
    assert short.token_id not in tokens.tokens


def test_renewers_must_be_users_and_describe_filters():
    tokens, _ = manager()
    assert tokens.create("User:a", "User:a", ["Group:x"], -1)[0] == E.INVALID_PRINCIPAL_TYPE
    _, mine = tokens.create("User:a", "User:a", ["User:r"], -1)
    _, other = tokens.create("User:b", "User:b", [], -1)
    assert tokens.visible("User:a", None, lambda t: False) == [mine]
    assert tokens.visible("User:r", None, lambda t: False) == [mine]
    assert tokens.visible("User:a", ["User:b"], lambda t: False) == []
    assert tokens.visible("User:a", ["User:b"], lambda t: True) == [other]


class TokenScramClient(ScramClient):
    """kafka-python's SCRAM client with the tokenauth=true extension in its first message."""

    def first_message(self):
        bare = b"n=" + self.user + b",r=" + self.nonce + b",tokenauth=true"
        self.auth_message += bare
        return b"n,," + bare


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_with_a_token_authenticates_its_owner_until_it_expires(mechanism):
    tokens, clock = manager()
    store = CredentialStore({}, (mechanism,))
    store.tokens = tokens
    _, token = tokens.create("User:alice", "User:alice", [], -1)
    password = base64.b64encode(token.hmac).decode()

    def login():
        server = store.new_server(mechanism)
        client = TokenScramClient(token.token_id, password, mechanism)
        client.process_server_first_message(server.evaluate(client.first_message()))
        client.process_server_final_message(server.evaluate(client.final_message()))
        return server

    server = login()
    assert server.complete and server.principal == "User:alice" and server.principal.token_authenticated
    clock.now = token.expiry + 1
    with pytest.raises(AuthenticationFailed):
        login()
    # without tokenauth, a token id is no user
    server = store.new_server(mechanism)
    with pytest.raises(AuthenticationFailed):
        server.evaluate(ScramClient(token.token_id, password, mechanism).first_message())


def test_security_state_is_captured_and_applied():
    from kafkaemu.auth import security_state
    from kafkaemu.auth.acl import Acl, AclOperation, AclPermissionType, PatternType, ResourceType
    from kafkaemu.broker import Broker
    from kafkaemu.config import BrokerConfig
    broker = Broker(BrokerConfig(authorizer=True, sasl_users={"seed": "pw"}, delegation_token_secret_key="k"), 0)
    start = security_state.capture(broker)
    acl = Acl(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:a", "*", AclOperation.READ, AclPermissionType.ALLOW)
    broker.authorizer.create([acl])
    broker.credentials.set_scram("new", "SCRAM-SHA-256", b"salt", b"x" * 32, 4096)
    broker.tokens.create("User:a", "User:a", [], -1)
    changed = security_state.capture(broker)
    security_state.apply(broker, security_state.initial(broker))
    assert broker.authorizer.acls == [] and broker.credentials.scram_users() == ["seed"] and not broker.tokens.tokens
    security_state.apply(broker, changed)
    assert broker.authorizer.acls == [acl] and "new" in broker.credentials.scram_users()
    assert len(broker.tokens.tokens) == 1
    security_state.apply(broker, start)
    assert broker.credentials.scram_users() == ["seed"]
