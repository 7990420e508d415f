"""SASL/PLAIN server: messages and failure texts as Kafka's PlainSaslServer."""
import pytest

from kafkaemu.auth.errors import AuthenticationFailed
from kafkaemu.auth.plain import PlainServer

USERS = {"alice": "s3cret"}


def test_valid_credentials_complete_with_an_empty_reply():
    server = PlainServer(USERS)
    assert server.evaluate(b"\x00alice\x00s3cret") == b""
    assert server.complete and server.username == "alice"


def test_authorization_id_equal_to_the_user_is_accepted():
    server = PlainServer(USERS)
    server.evaluate(b"alice\x00alice\x00s3cret")
    assert server.complete


@pytest.mark.parametrize("token", [b"\x00alice\x00wrong", b"\x00bob\x00s3cret"])
def test_wrong_password_or_unknown_user_get_kafkas_message(token):
    server = PlainServer(USERS)
    with pytest.raises(AuthenticationFailed) as info:
        server.evaluate(token)
    assert info.value.client_message == "Authentication failed: Invalid username or password"
    assert not server.complete


def test_other_authorization_id_is_refused():
    with pytest.raises(AuthenticationFailed) as info:
        PlainServer(USERS).evaluate(b"admin\x00alice\x00s3cret")
    assert "authorization id that is different" in info.value.client_message


@pytest.mark.parametrize("token", [b"\x00\x00s3cret", b"\x00alice\x00", b"alice", b"\xff\x00a\x00b"])
def test_malformed_messages_get_the_generic_message(token):
    with pytest.raises(AuthenticationFailed) as info:
        PlainServer(USERS).evaluate(token)
    assert info.value.client_message is None


def test_password_may_contain_nul_free_unicode():
    server = PlainServer({"ü": "pä ss"})
    server.evaluate("\x00ü\x00pä ss".encode())
    assert server.complete
