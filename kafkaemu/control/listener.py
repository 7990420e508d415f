"""The control API's listening sockets and URL, made at start without the HTTP server's imports.

A start binds the control port (a busy one stops it, as a Kafka listener's does), logs
``control_listening`` and prints ``kafkaemu control on URL`` at once. ``control/http.py``'s server
(aiohttp and the operations table: a few hundred ms of imports) is loaded when the first client
connects (``KafkaServer._load_control``) and serves these sockets; that client waits in the
kernel's backlog meanwhile. So ``KafkaEmulator(subprocess_mode=True)`` does not wait for those
imports at start, and its broker's first answers do not wait behind them either; the first
control call pays them.
"""
from __future__ import annotations

import socket

from ..logging import get_logger

log = get_logger("kafkaemu.control.http")

# aiohttp's TCPSite listens with this backlog
BACKLOG = 128


def bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for ``host:port``, bound as asyncio's ``create_server`` binds them for
    aiohttp's TCPSite (one per address the host resolves to; SO_REUSEADDR; IPv6 only on an IPv6
    socket); OSError naming the address when one cannot be bound."""
    infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, _, _, _, address in dict.fromkeys(infos):
            sock = socket.create_server(address, family=family, backlog=BACKLOG)
            sock.setblocking(False)
            sockets.append(sock)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def url(host: str, port: int) -> str:
    """The URL clients use: a wildcard host is reached on loopback."""
    host = host if host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}"


def open_warning(config) -> str | None:
    """Why a control API open to remote peers without a token is dangerous (logged at start, shown
    on the web page); None when it is not."""
    if not config.control_allow_remote or config.control_token is not None:
        return None
    return ("the control API accepts remote peers without a token: anyone who can reach its port can reset "
            "the broker, inject faults and read every topic (start with --control-token; docs/security.md)")


def log_listening(url: str, config) -> None:
    """The start's events about the control API, logged once its port is bound."""
    log.info("control_listening", url=url, token=config.control_token is not None,
             allow_remote=config.control_allow_remote)
    warning = open_warning(config)
    if warning:
        log.warning("control_open_to_remote_peers", url=url, warning=warning)
