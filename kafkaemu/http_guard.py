"""Who may use the emulator's HTTP surfaces, the control API and the schema registry: the checks
every request passes before anything else (the control API's web page and its files included). A
page on another site can reach a port on this machine through the browser that shows it; these
checks tell its requests apart.

- peers: loopback only, unless remote peers are allowed (``control_allow_remote``; the registry
  allows them when it listens on an address other than loopback);
- Host: a name of this machine, always. A page on another site that rebinds its DNS name to
  127.0.0.1 reaches the port with its own name in Host; with remote peers allowed, any IP
  address, this machine's host names, the listener's host and ``advertised_host`` are accepted too;
- Origin: when a browser sends one, it must be the port's own (a page elsewhere posting from a
  local browser sends its own), always;
- a body must say it is JSON (its Content-Type one the surface reads): the requests a page may send
  elsewhere without a CORS preflight carry a form's Content-Type, text/plain, or none, so a body
  with none is refused too (415) on both surfaces (the control API's clients, its CLI and page,
  declare theirs, as Confluent's clients do for the schema registry);
- the token (the control API's): ``Authorization: Bearer TOKEN`` (the web page: ``?token=TOKEN``)
  when configured.

Neither surface is behind the Kafka listeners' SASL (docs/security.md).
"""
from __future__ import annotations

import hmac
import ipaddress
import socket
from functools import lru_cache
from urllib.parse import urlsplit

LOCAL_NAMES = ("localhost", "localhost.localdomain")
BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")


@lru_cache(maxsize=256)
def is_loopback(host: str) -> bool:
    try:
        addr = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(addr, "ipv4_mapped", None)
    return (mapped or addr).is_loopback


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def listens_remotely(host: str) -> bool:
    """Whether a listener on ``host`` is meant for peers elsewhere (not a loopback address or name)."""
    return host.lower() not in LOCAL_NAMES and not is_loopback(host)


class Refused(Exception):
    """A request one of the checks turns away: its HTTP status and why."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class Guard:
    def __init__(self, surface: str, *, allow_remote: bool, names=(), body_types=("application/json",),
                 token: str | None = None) -> None:
        self.surface = surface   # "the control API", "the schema registry": said in the reasons
        self.token = token
        self.allow_remote = allow_remote
        self.body_types = tuple(body_types)
        self.names = set(LOCAL_NAMES)
        if self.allow_remote:
            self.names |= {n.lower() for n in {*names, socket.gethostname(), socket.getfqdn()} if n}

    def host_allowed(self, hostname: str) -> bool:
        name = hostname.lower().rstrip(".")
        if name in self.names or is_loopback(name):
            return True
        return self.allow_remote and _is_ip(name)

    def check(self, method: str, headers, peer: str | None) -> None:
        """Raises Refused when the request is not to be served: a peer elsewhere (403) unless
        allowed, a foreign Host or Origin (403), a body not declared JSON (415)."""
        if not self.allow_remote and peer is not None and not is_loopback(peer):
            raise Refused(403, f"{self.surface} serves loopback peers only, not {peer}")
        reason = self.foreign(headers)
        if reason is not None:
            raise Refused(403, reason)
        if method in BODY_METHODS and _has_body(headers):
            declared = headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
            if declared not in self.body_types:
                raise Refused(415, f"a body of {self.surface} must be JSON ({', '.join(self.body_types)}), "
                                   f"not {declared or 'undeclared'}")

    def foreign(self, headers) -> str | None:
        """Why a request may come from a page elsewhere: a Host that is not this machine or an
        Origin that is not the port's own. None when it is the emulator's own."""
        host = headers.get("Host")
        if host is not None:
            try:
                hostname = urlsplit("//" + host).hostname or ""
            except ValueError:
                hostname = ""
            if not self.host_allowed(hostname):
                return f"Host {host!r} is not this machine; {self.surface} answers its own names only"
        origin = headers.get("Origin")
        if origin is not None:
            try:
                netloc = urlsplit(origin).netloc
            except ValueError:
                netloc = ""
            if netloc != host:
                return f"cross-origin request from {origin!r} refused"
        return None

    def authorized(self, headers, query_token: str | None = None) -> bool:
        if self.token is None:
            return True
        scheme, _, credential = headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(credential.strip().encode(), self.token.encode()):
            return True
        return query_token is not None and hmac.compare_digest(query_token.encode(), self.token.encode())


def _has_body(headers) -> bool:
    length = headers.get("Content-Length")
    if length is not None:
        return length.strip() not in ("", "0")
    return "Transfer-Encoding" in headers
