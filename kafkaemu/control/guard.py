"""Who may use the control API: the checks every request passes before anything else (the web
page and its files included).

- peers: loopback only, unless ``control_allow_remote``;
- Host: a name of this machine, always. A page on another site that rebinds its DNS name to
  127.0.0.1 reaches the port with its own name in Host; with remote peers allowed, any IP
  address, this machine's host names, ``control_host`` and ``advertised_host`` are accepted too;
- Origin: when a browser sends one, it must be the control port's own (a text/plain POST from a
  page elsewhere needs no CORS preflight, so the Origin is what tells it apart), always;
- the token: ``Authorization: Bearer TOKEN`` (the web page: ``?token=TOKEN``) when configured.

The control API is not behind the Kafka listeners' SASL (docs/security.md).
"""
from __future__ import annotations

import hmac
import ipaddress
import socket
from functools import lru_cache
from urllib.parse import urlsplit

LOCAL_NAMES = ("localhost", "localhost.localdomain")


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


class Guard:
    def __init__(self, config) -> None:
        self.token = config.control_token
        self.allow_remote = config.control_allow_remote
        self.names = set(LOCAL_NAMES)
        if self.allow_remote:
            names = {config.control_host, config.advertised_host, socket.gethostname(), socket.getfqdn()}
            self.names |= {n.lower() for n in names if n}
        self.open_warning = None
        if self.allow_remote and self.token is None:
            self.open_warning = ("the control API accepts remote peers without a token: anyone who can reach "
                                 "its port can reset the broker, inject faults and read every topic "
                                 "(start with --control-token; docs/security.md)")

    def host_allowed(self, hostname: str) -> bool:
        name = hostname.lower().rstrip(".")
        if name in self.names or is_loopback(name):
            return True
        return self.allow_remote and _is_ip(name)

    def foreign(self, headers) -> str | None:
        """Why a request may come from a page elsewhere: a Host that is not this machine or an
        Origin that is not the control port's own. None when it is the emulator's own."""
        host = headers.get("Host")
        if host is not None:
            try:
                hostname = urlsplit("//" + host).hostname or ""
            except ValueError:
                hostname = ""
            if not self.host_allowed(hostname):
                return f"Host {host!r} is not this machine; the control API answers its own names only"
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
