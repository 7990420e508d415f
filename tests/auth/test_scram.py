"""SCRAM server exchange: the RFC 7677 vector, kafka-python's SCRAM client as an oracle, and
the failures Kafka's ScramSaslServer reports."""
import base64

import pytest
from kafka.net.sasl.scram import ScramClient

from kafkaemu.auth.errors import AuthenticationFailed
from kafkaemu.auth.scram import ScramServer, make_credential

# RFC 7677 section 3: user "user", password "pencil".
RFC_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
RFC_CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
RFC_CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
RFC_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_server():
    credential = make_credential("pencil", "SCRAM-SHA-256", salt=RFC_SALT, iterations=4096)
    return ScramServer("SCRAM-SHA-256", {"user": credential}, nonce=lambda: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0")


def test_rfc7677_vector():
    server = rfc_server()
    assert server.evaluate(RFC_CLIENT_FIRST) == RFC_SERVER_FIRST
    assert not server.complete
    assert server.evaluate(RFC_CLIENT_FINAL) == RFC_SERVER_FINAL
    assert server.complete and server.username == "user"


def test_rfc7677_vector_with_a_flipped_proof_bit_fails_with_the_generic_message():
    server = rfc_server()
    server.evaluate(RFC_CLIENT_FIRST)
    bad = RFC_CLIENT_FINAL.replace(b"p=dHzb", b"p=dHzc")
    with pytest.raises(AuthenticationFailed) as info:
        server.evaluate(bad)
    assert info.value.client_message is None  # Kafka hides the reason behind the generic message
    assert not server.complete


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kafka_python_scram_client_authenticates_and_verifies_the_server_signature(mechanism):
    server = ScramServer(mechanism, {"alice": make_credential("s3cret", mechanism)})
    client = ScramClient("alice", "s3cret", mechanism)
    client.process_server_first_message(server.evaluate(client.first_message()))
    client.process_server_final_message(server.evaluate(client.final_message()))  # raises on a bad signature
    assert server.complete and server.username == "alice"


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_wrong_password_fails_at_the_final_message(mechanism):
    server = ScramServer(mechanism, {"alice": make_credential("s3cret", mechanism)})
    client = ScramClient("alice", "wrong", mechanism)
    client.process_server_first_message(server.evaluate(client.first_message()))
    with pytest.raises(AuthenticationFailed) as info:
        server.evaluate(client.final_message())
    assert info.value.detail == "Invalid client credentials" and info.value.client_message is None
    assert not server.complete


def test_credentials_of_one_mechanism_do_not_verify_the_other():
    server = ScramServer("SCRAM-SHA-512", {"alice": make_credential("s3cret", "SCRAM-SHA-512")})
    client = ScramClient("alice", "s3cret", "SCRAM-SHA-256")
    client.process_server_first_message(server.evaluate(client.first_message()))
    with pytest.raises(AuthenticationFailed):
        server.evaluate(client.final_message())


def test_unknown_user_fails_at_the_first_message():
    server = ScramServer("SCRAM-SHA-256", {"alice": make_credential("s3cret", "SCRAM-SHA-256")})
    with pytest.raises(AuthenticationFailed) as info:
        server.evaluate(b"n,,n=bob,r=abc")
    assert info.value.client_message is None


def test_server_nonce_extends_the_client_nonce_and_salt_and_iterations_are_announced():
    credential = make_credential("pw", "SCRAM-SHA-256", salt=b"0123456789", iterations=4096)
    server = ScramServer("SCRAM-SHA-256", {"u": credential}, nonce=lambda: "SERVER")
    assert server.evaluate(b"n,,n=u,r=CLIENT") == b"r=CLIENTSERVER,s=MDEyMzQ1Njc4OQ==,i=4096"


def test_final_message_must_echo_the_combined_nonce():
    server = ScramServer("SCRAM-SHA-256", {"u": make_credential("pw", "SCRAM-SHA-256")}, nonce=lambda: "S")
    server.evaluate(b"n,,n=u,r=C")
    with pytest.raises(AuthenticationFailed, match="nonce"):
        server.evaluate(b"c=biws,r=C,p=AAAA")


def test_escaped_user_names_are_decoded():
    server = ScramServer("SCRAM-SHA-256", {"a,b=c": make_credential("pw", "SCRAM-SHA-256")}, nonce=lambda: "S")
    assert server.evaluate(b"n,,n=a=2Cb=3Dc,r=C").startswith(b"r=CS,")
    assert server.username == "a,b=c"


def test_authorization_id_other_than_the_user_is_refused_with_kafkas_message():
    server = ScramServer("SCRAM-SHA-256", {"u": make_credential("pw", "SCRAM-SHA-256")})
    with pytest.raises(AuthenticationFailed) as info:
        server.evaluate(b"n,a=admin,n=u,r=C")
    assert info.value.client_message == (
        "Authentication failed: Client requested an authorization id that is different from username")


@pytest.mark.parametrize("message", [
    b"y,,n=u,r=C",          # channel binding flags other than "n" are not supported (as Kafka)
    b"p=tls-unique,,n=u,r=C",
    b"n,,r=C",
    b"n,,n=u",
    b"\xff\xfe",
    b"",
])
def test_malformed_first_messages_fail(message):
    server = ScramServer("SCRAM-SHA-256", {"u": make_credential("pw", "SCRAM-SHA-256")})
    with pytest.raises(AuthenticationFailed):
        server.evaluate(message)


def test_no_message_is_accepted_after_a_failure():
    server = ScramServer("SCRAM-SHA-256", {"u": make_credential("pw", "SCRAM-SHA-256")})
    with pytest.raises(AuthenticationFailed):
        server.evaluate(b"garbage")
    with pytest.raises(AuthenticationFailed):
        server.evaluate(b"n,,n=u,r=C")
