"""Hundreds of clients connecting at once (a test suite's workers starting together) are all
taken into the listen backlog: none has its SYN dropped and waits a second to retransmit it."""
import select
import socket
import threading
from pathlib import Path

import pytest

from kafkaemu.testing.emulator import KafkaEmulator

CLIENTS = 300   # more than asyncio's default backlog of 100
SOMAXCONN = Path("/proc/sys/net/core/somaxconn")


@pytest.mark.skipif(not SOMAXCONN.exists() or int(SOMAXCONN.read_text()) < CLIENTS,
                    reason=f"needs Linux with net.core.somaxconn >= {CLIENTS} (the kernel's cap on a backlog)")
def test_connections_made_while_the_server_is_busy_wait_in_the_backlog():
    with KafkaEmulator() as emu:
        host, port = emu.bootstrap_server.split(":")
        busy, release = threading.Event(), threading.Event()

        def block_the_loop():   # the broker is busy: nothing is accepted meanwhile
            busy.set()
            release.wait(30)

        emu._loop.call_soon_threadsafe(block_the_loop)
        busy.wait(10)
        socks = []
        try:
            for _ in range(CLIENTS):
                s = socket.socket()
                s.setblocking(False)
                s.connect_ex((host, int(port)))
                socks.append(s)
            # The kernel completes a handshake only while the backlog has room; a dropped SYN is
            # retried after 1 s and dropped again while the loop stays blocked.
            pending = set(socks)
            poller = select.poll()
            for s in socks:
                poller.register(s, select.POLLOUT)
            by_fd = {s.fileno(): s for s in socks}
            while pending:
                events = poller.poll(2000)
                if not events:
                    break
                for fd, _ in events:
                    poller.unregister(fd)
                    pending.discard(by_fd[fd])
            connected = sum(1 for s in socks if s not in pending and s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0)
        finally:
            release.set()
            for s in socks:
                s.close()
        assert connected == CLIENTS
