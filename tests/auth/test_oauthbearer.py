"""SASL/OAUTHBEARER with Kafka's unsecured-token validator."""
import base64
import json

import pytest

from kafkaemu.auth.errors import AuthenticationFailed
from kafkaemu.auth.oauthbearer import INVALID_TOKEN, OAuthBearerServer

NOW_MS = 1_700_000_000_000


def b64(data) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def token(claims=None, header=None, signature=""):
    claims = {"sub": "alice", "iat": NOW_MS / 1000 - 10, "exp": NOW_MS / 1000 + 3600} if claims is None else claims
    return f"{b64(header or {'alg': 'none'})}.{b64(claims)}.{signature}"


def message(tok, authzid="", extra=""):
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {tok}\x01{extra}\x01".encode()


def server():
    return OAuthBearerServer(lambda: NOW_MS)


def test_a_valid_unsecured_token_authenticates_its_subject():
    s = server()
    assert s.evaluate(message(token(), extra="traceId=123\x01")) == b""
    assert s.complete and s.username == "alice"


@pytest.mark.parametrize("bad", [
    token({"sub": "alice", "exp": NOW_MS / 1000 - 1}),                  # expired
    token({"sub": "alice"}),                                            # no exp
    token({"exp": NOW_MS / 1000 + 60}),                                 # no subject
    token({"sub": "alice", "exp": NOW_MS / 1000 + 60, "iat": NOW_MS / 1000 + 30}),   # issued in the future
    token(header={"alg": "HS256"}),                                     # signed algorithm
    token(signature="c2ln"),                                            # a signature
    "abc.def",                                                          # two parts
    "e30.e30.",                                                         # {} and {}: no alg
])
def test_an_invalid_token_is_answered_invalid_token_then_fails(bad):
    s = server()
    assert s.evaluate(message(bad)) == INVALID_TOKEN.encode()
    assert not s.complete
    with pytest.raises(AuthenticationFailed) as info:
        s.evaluate(b"\x01")
    assert info.value.client_message == INVALID_TOKEN


@pytest.mark.parametrize("raw", [b"", b"n,,auth=Bearer x", b"n,,\x01auth=Basic abc\x01\x01", b"n,,\x01foo=bar\x01\x01",
                                 b"\xff"])
def test_a_malformed_message_fails_at_once(raw):
    with pytest.raises(AuthenticationFailed):
        server().evaluate(raw)


def test_an_authorization_id_must_be_the_subject():
    with pytest.raises(AuthenticationFailed) as info:
        server().evaluate(message(token(), authzid="bob"))
    assert "different from the token's principal name (alice)" in info.value.client_message
    assert server().evaluate(message(token(), authzid="alice")) == b""
