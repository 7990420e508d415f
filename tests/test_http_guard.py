"""The one guard of the emulator's HTTP surfaces (kafkaemu/http_guard.py), the control API's and the
schema registry's: a foreign Host or Origin is refused (403), a body not declared JSON too (415, one
declaring nothing included: a page elsewhere sends it without a CORS preflight), peers elsewhere
unless allowed."""
from __future__ import annotations

import socket

import pytest

from kafkaemu.http_guard import Guard, Refused, listens_remotely
from kafkaemu.schema_registry.http import BODY_TYPES

REGISTRY = Guard("the schema registry", allow_remote=False, body_types=BODY_TYPES)
CONTROL = Guard("the control API", allow_remote=False)


def refused(guard: Guard, method: str = "POST", peer: str = "127.0.0.1", **headers) -> int | None:
    headers = {k.replace("_", "-"): v for k, v in headers.items()}
    try:
        guard.check(method, headers, peer)
    except Refused as exc:
        return exc.status
    return None


@pytest.mark.parametrize("guard", [REGISTRY, CONTROL], ids=["registry", "control"])
def test_both_surfaces_refuse_what_a_page_elsewhere_sends(guard):
    ok = {"Host": "127.0.0.1:8081", "Content_Type": "application/json", "Content_Length": "2"}
    assert refused(guard, **ok) is None
    assert refused(guard, **{**ok, "Host": "evil.example:8081"}) == 403
    assert refused(guard, **{**ok, "Origin": "http://evil.example"}) == 403
    assert refused(guard, **{**ok, "Origin": "null"}) == 403
    assert refused(guard, **{**ok, "Origin": "http://127.0.0.1:8081"}) is None
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        assert refused(guard, **{**ok, "Content_Type": kind}) == 415, kind
    assert refused(guard, **{**ok, "Content_Type": "text/plain", "Content_Length": "0"}) is None   # no body
    assert refused(guard, peer="192.0.2.7", **ok) == 403


@pytest.mark.parametrize("guard", [REGISTRY, CONTROL], ids=["registry", "control"])
def test_an_undeclared_body_is_refused(guard):
    assert refused(guard, **{"Host": "localhost", "Content_Length": "20"}) == 415
    assert refused(guard, **{"Host": "localhost", "Transfer_Encoding": "chunked"}) == 415
    assert refused(guard, "GET", Host="localhost") is None


def test_a_registry_listening_beyond_loopback_takes_its_names_and_any_address():
    assert not listens_remotely("127.0.0.1") and not listens_remotely("localhost") and not listens_remotely("::1")
    assert listens_remotely("0.0.0.0") and listens_remotely("registry.internal")
    guard = Guard("the schema registry", allow_remote=listens_remotely("0.0.0.0"),
                  names=("0.0.0.0", "kafka.internal"), body_types=BODY_TYPES)
    for host in ("10.1.2.3:8081", "[2001:db8::1]:8081", "kafka.internal:8081", socket.gethostname()):
        assert refused(guard, "GET", peer="10.9.9.9", Host=host) is None, host
    assert refused(guard, "GET", peer="10.9.9.9", Host="rebound.evil.example") == 403
