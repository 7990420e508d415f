"""The per-connection SASL state machine, driven through the sans-IO Connection with bytes."""
import struct

import pytest
from kafka.net.sasl.scram import ScramClient

from kafkaemu.auth.authenticator import IllegalSaslTransition, SaslAuthenticator, SaslState
from kafkaemu.auth.credentials import CredentialStore, parse_mechanisms
from kafkaemu.handlers import REGISTRY
from kafkaemu.protocol import envelope
from kafkaemu.protocol.api_keys import ApiKey
from kafkaemu.protocol.catalog import catalog
from kafkaemu.protocol.errors import ErrorCode
from kafkaemu.wire.connection import Connection, ProtocolViolation
from kafkaemu.protocol.envelope import frame
from kafkaemu.wire.framing import FrameDecoder
from tests.conftest import new_broker

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
STORE = CredentialStore({"alice": "s3cret"}, MECHANISMS)


def request(api_key, version, body, correlation_id=7):
    return envelope.encode_request(api_key, version, body, correlation_id, client_id="test-client")


def open_connection(sasl=True, store=STORE):
    auth = SaslAuthenticator(store, REGISTRY.supports) if sasl else None
    return Connection(new_broker(), REGISTRY, 1, "127.0.0.1", authenticator=auth)


def replies(conn):
    return FrameDecoder(1 << 30).feed(conn.take_output())


def decode(api_key, version, reply):
    return envelope.decode_response(api_key, version, reply)[1]


def call(conn, api_key, version, body, correlation_id=7):
    conn.receive(request(api_key, version, body, correlation_id), 0)
    (reply,) = replies(conn)
    assert struct.unpack(">i", reply[:4])[0] == correlation_id
    return decode(api_key, version, reply)


def api_versions(conn, version=3):
    return call(conn, ApiKey.API_VERSIONS, version, {"client_software_name": "t", "client_software_version": "1"})


def handshake(conn, mechanism, version=1):
    return call(conn, ApiKey.SASL_HANDSHAKE, version, {"mechanism": mechanism})


def authenticate(conn, token, version=2):
    return call(conn, ApiKey.SASL_AUTHENTICATE, version, {"auth_bytes": token})


def metadata(conn):
    return call(conn, ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False})


def test_api_versions_then_plain_authenticates_and_unlocks_other_requests():
    conn = open_connection()
    assert api_versions(conn).error_code == ErrorCode.NONE
    resp = handshake(conn, "PLAIN")
    assert resp.error_code == ErrorCode.NONE and list(resp.mechanisms) == list(MECHANISMS)
    resp = authenticate(conn, b"\x00alice\x00s3cret")
    assert resp.error_code == ErrorCode.NONE and resp.auth_bytes == b"" and resp.session_lifetime_ms == 0
    assert conn.authenticator.complete and conn.authenticator.username == "alice"
    assert metadata(conn).cluster_id == "kafkaemu-cluster-0000"


@pytest.mark.parametrize("version", [0, 1, 2])
def test_scram_exchange_over_every_sasl_authenticate_version(version):
    conn = open_connection()
    handshake(conn, "SCRAM-SHA-512")
    client = ScramClient("alice", "s3cret", "SCRAM-SHA-512")
    first = authenticate(conn, client.first_message(), version)
    assert first.error_code == ErrorCode.NONE and not conn.authenticator.complete
    client.process_server_first_message(first.auth_bytes)
    final = authenticate(conn, client.final_message(), version)
    assert final.error_code == ErrorCode.NONE
    client.process_server_final_message(final.auth_bytes)
    assert conn.authenticator.complete


def test_request_before_authentication_closes_without_a_reply():
    conn = open_connection()
    with pytest.raises(ProtocolViolation, match="during SASL handshake"):
        conn.receive(request(ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False}), 0)
    assert conn.take_output() == b""
    assert conn.authenticator.state is SaslState.FAILED


def test_request_during_the_exchange_closes_the_connection():
    conn = open_connection()
    handshake(conn, "SCRAM-SHA-256")
    with pytest.raises(ProtocolViolation, match="during SASL authentication"):
        conn.receive(request(ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False}), 0)


def test_wrong_password_is_answered_sasl_authentication_failed_then_closed():
    conn = open_connection()
    handshake(conn, "PLAIN")
    with pytest.raises(ProtocolViolation):
        conn.receive(request(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"\x00alice\x00nope"}), 0)
    (reply,) = replies(conn)
    resp = decode(36, 2, reply)
    assert resp.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert resp.error_message == "Authentication failed: Invalid username or password"
    assert conn.authenticator.state is SaslState.FAILED


def test_scram_wrong_password_gets_the_generic_message():
    conn = open_connection()
    handshake(conn, "SCRAM-SHA-256")
    client = ScramClient("alice", "nope", "SCRAM-SHA-256")
    client.process_server_first_message(authenticate(conn, client.first_message()).auth_bytes)
    with pytest.raises(ProtocolViolation):
        conn.receive(request(ApiKey.SASL_AUTHENTICATE, 1, {"auth_bytes": client.final_message()}), 0)
    resp = decode(36, 1, replies(conn)[0])
    assert resp.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert resp.error_message == ("Authentication failed during authentication due to invalid credentials "
                                  "with SASL mechanism SCRAM-SHA-256")


@pytest.mark.parametrize("version", [0, 1])
def test_unsupported_mechanism_lists_the_enabled_ones_then_closes(version):
    conn = open_connection(store=CredentialStore({"alice": "s3cret"}, ("SCRAM-SHA-256",)))
    with pytest.raises(ProtocolViolation, match="Unsupported SASL mechanism PLAIN"):
        conn.receive(request(ApiKey.SASL_HANDSHAKE, version, {"mechanism": "PLAIN"}), 0)
    resp = decode(17, version, replies(conn)[0])
    assert resp.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert list(resp.mechanisms) == ["SCRAM-SHA-256"]


def test_handshake_v0_switches_to_raw_size_framed_tokens():
    conn = open_connection()
    assert handshake(conn, "SCRAM-SHA-256", version=0).error_code == ErrorCode.NONE
    client = ScramClient("alice", "s3cret", "SCRAM-SHA-256")
    conn.receive(frame(client.first_message()), 0)
    (server_first,) = replies(conn)  # a bare token: no correlation id, no Kafka header
    client.process_server_first_message(server_first)
    conn.receive(frame(client.final_message()), 0)
    (server_final,) = replies(conn)
    client.process_server_final_message(server_final)
    assert conn.authenticator.complete
    assert metadata(conn).cluster_id == "kafkaemu-cluster-0000"


def test_raw_plain_token_success_sends_an_empty_frame_and_failure_closes_silently():
    conn = open_connection()
    handshake(conn, "PLAIN", version=0)
    conn.receive(frame(b"\x00alice\x00s3cret"), 0)
    assert conn.take_output() == struct.pack(">i", 0)  # Kafka sends the empty PLAIN reply too
    assert conn.authenticator.complete

    conn = open_connection()
    handshake(conn, "PLAIN", version=0)
    with pytest.raises(ProtocolViolation):
        conn.receive(frame(b"\x00alice\x00wrong"), 0)
    assert conn.take_output() == b""


def test_api_versions_is_accepted_only_as_the_first_request():
    conn = open_connection()
    api_versions(conn)
    with pytest.raises(ProtocolViolation, match="Unexpected ApiVersions"):
        conn.receive(request(ApiKey.API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"}), 0)


def test_api_versions_above_the_max_is_answered_and_may_be_retried():
    conn = open_connection()
    raw_header = struct.pack(">hhih", 18, 99, 42, 3) + b"cli" + b"\x00"
    conn.receive(frame(raw_header, b"\x00future"), 0)
    (reply,) = replies(conn)
    assert catalog().response(ApiKey.API_VERSIONS, 0).decode(reply[4:]).error_code == ErrorCode.UNSUPPORTED_VERSION
    assert conn.authenticator.state is SaslState.HANDSHAKE_OR_VERSIONS_REQUEST
    assert api_versions(conn).error_code == ErrorCode.NONE


def test_sasl_apis_are_advertised_and_answer_illegal_sasl_state_once_authenticated():
    conn = open_connection()
    advertised = {k.api_key: (k.min_version, k.max_version) for k in api_versions(conn).api_keys}
    assert advertised[17] == (0, 1) and advertised[36] == (0, 2)
    handshake(conn, "PLAIN")
    authenticate(conn, b"\x00alice\x00s3cret")
    assert handshake(conn, "PLAIN").error_code == ErrorCode.ILLEGAL_SASL_STATE
    resp = authenticate(conn, b"\x00alice\x00s3cret")
    assert resp.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert resp.error_message == "SaslAuthenticate request received after successful authentication"


def test_plaintext_listener_answers_sasl_requests_with_illegal_sasl_state():
    conn = open_connection(sasl=False)
    resp = handshake(conn, "PLAIN")
    assert resp.error_code == ErrorCode.ILLEGAL_SASL_STATE and list(resp.mechanisms) == []
    assert authenticate(conn, b"x", version=0).error_code == ErrorCode.ILLEGAL_SASL_STATE


def test_frames_are_limited_to_sasl_server_max_receive_size_until_authenticated():
    conn = open_connection()
    with pytest.raises(ProtocolViolation, match="exceeds"):
        conn.receive(struct.pack(">i", 524289), 0)
    conn = open_connection()
    handshake(conn, "PLAIN")
    authenticate(conn, b"\x00alice\x00s3cret")
    conn.receive(struct.pack(">i", 524289), 0)  # no ProtocolViolation: the ordinary 100 MiB limit applies
    assert not conn.closed


def test_pipelined_requests_after_authentication_are_dispatched():
    conn = open_connection()
    conn.receive(request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}, 1)
                 + request(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"\x00alice\x00s3cret"}, 2)
                 + request(ApiKey.METADATA, 12, {"topics": [], "allow_auto_topic_creation": False}, 3), 0)
    assert [struct.unpack(">i", r[:4])[0] for r in replies(conn)] == [1, 2, 3]


def test_undecodable_handshake_closes():
    conn = open_connection()
    with pytest.raises(ProtocolViolation):
        conn.receive(frame(struct.pack(">hhih", 17, 1, 5, -1), b"\x00"), 0)


def test_illegal_transitions_raise():
    auth = SaslAuthenticator(STORE, REGISTRY.supports)
    with pytest.raises(IllegalSaslTransition):
        auth._move(SaslState.COMPLETE)
    auth._move(SaslState.FAILED)
    with pytest.raises(IllegalSaslTransition):
        auth.receive(b"anything")


def test_mechanism_names_are_validated():
    assert parse_mechanisms("plain, SCRAM-SHA-512") == ("PLAIN", "SCRAM-SHA-512")
    with pytest.raises(ValueError, match="GSSAPI"):
        parse_mechanisms("PLAIN,GSSAPI")


class RecordingLog:
    def __init__(self):
        self.events = []

    def info(self, event, **fields):
        self.events.append((event, fields))


def test_outcomes_are_logged_with_user_and_mechanism():
    log = RecordingLog()
    auth = SaslAuthenticator(STORE, REGISTRY.supports, log=log)
    auth.receive(request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})[4:])  # frame bodies, as the connection has them
    authenticated = auth.receive(request(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"\x00alice\x00s3cret"})[4:])
    assert authenticated.close_reason is None
    auth = SaslAuthenticator(STORE, REGISTRY.supports, log=log)
    auth.receive(request(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})[4:])
    assert auth.receive(request(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": b"n,,n=mallory,r=abc"})[4:]).close_reason
    assert log.events == [
        ("sasl_authenticated", {"user": "alice", "mechanism": "PLAIN"}),
        ("sasl_authentication_failed", {"user": "mallory", "mechanism": "SCRAM-SHA-256",
                                        "detail": "unknown user 'mallory'"}),
    ]
