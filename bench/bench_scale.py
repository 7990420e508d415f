"""Scale figures for BENCHMARKS.md (``make bench``; issue 12 item 5), against `python -m kafkaemu
serve` in its own process, with raw protocol clients multiplexed on asyncio:

1. connections: 1,000 concurrent connections -- time to open them all and get ApiVersions and
   Metadata answered on each; one request on every connection at once (aggregate requests/s,
   p50/p99 latency); the server's RSS before and with them open.
2. groups: 1,000 classic groups x 10 members -- time until every member holds its assignment
   (JoinGroup + SyncGroup, the initial rebalance delay at its default and at 0); then every member
   heartbeating at its interval: server CPU% and RSS, heartbeat latency. And the pure coordinator
   core in-process with the same 10,000 members: join/sync/heartbeat per call, a tick.
3. partitions: 10,000 partitions (100 topics x 100, and 1 topic x 10,000) -- time to create them,
   one full Metadata request (all topics) and its size, full Metadata requests/s, server RSS.

``--quick`` runs smaller sizes (a smoke test of the script).
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkaemu.config import DEFAULTS  # noqa: E402
from kafkaemu.protocol import envelope  # noqa: E402
from kafkaemu.wire.framing import FrameDecoder  # noqa: E402

API_VERSIONS, METADATA, JOIN, SYNC, HEARTBEAT, CREATE_TOPICS = 18, 3, 11, 14, 12, 19
MEMBER_ID_REQUIRED, REBALANCE_IN_PROGRESS = 79, 27
SUBSCRIPTION = b"\x00\x01" + b"\x00\x00\x00\x01\x00\x06orders" + b"\xff\xff\xff\xff" + b"\x00\x00\x00\x00"
ASSIGNMENT = b"\x00\x01\x00\x00\x00\x01\x00\x06orders\x00\x00\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff"
CLK_TCK = os.sysconf("SC_CLK_TCK")
DEFAULT_DELAY_MS = DEFAULTS.classic.initial_rebalance_delay_ms


# -- the server process ---------------------------------------------------------------------------

class Server:
    def __init__(self, *flags: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "kafkaemu", "serve", "--port", "0",
                                      "--log-level", os.environ.get("BENCH_SERVER_LOG", "warning"), *flags],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline().rsplit(":", 1)[1])

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def cpu_s(self) -> float:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK   # utime + stime

    def nofile_limit(self) -> str:
        with open(f"/proc/{self.proc.pid}/limits") as f:
            for line in f:
                if line.startswith("Max open files"):
                    soft, hard = line.split()[3:5]
                    return f"{soft}/{hard}"
        return "?"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def listen_overflows() -> int | None:
    """The kernel's count of connection attempts dropped because a listen backlog was full
    (system-wide; each costs its client a 1 s SYN retransmit)."""
    try:
        with open("/proc/net/netstat") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2]):
        if names.startswith("TcpExt:"):
            fields = dict(zip(names.split()[1:], values.split()[1:]))
            return int(fields.get("ListenOverflows", 0))
    return None


def usable_fds() -> int:
    """Connections this process (and the server, which inherits the limit) can open, with room to spare."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return 1 << 30 if soft == resource.RLIM_INFINITY else max(0, soft - 200)


def raise_nofile(wanted: int) -> str:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        if new <= soft:
            return f"{soft} (hard {hard}: no higher)"
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        return f"{soft} raised to {new} (hard {hard})"
    return f"{soft} (hard {hard})"


# -- a pipelined raw client ---------------------------------------------------------------------------

class Client:
    """One connection; requests pipelined, replies matched in order (Kafka answers in request order)."""

    def __init__(self, reader, writer) -> None:
        self.reader, self.writer = reader, writer
        self.waiting: collections.deque = collections.deque()
        self.correlation = 0
        self.task = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def open(cls, port: int) -> "Client":
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 24)
        return cls(reader, writer)

    def send(self, api_key: int, version: int, body: dict, decode: bool = True) -> asyncio.Future:
        self.correlation += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiting.append((api_key, version, fut, time.perf_counter(), decode))
        self.writer.write(envelope.encode_request(api_key, version, body, self.correlation, "bench"))
        return fut

    def send_raw(self, frame: bytes, api_key: int, version: int, decode: bool = False,
                 raw: bool = False) -> asyncio.Future:
        """``decode``: the decoded body; ``raw``: the reply's bytes; else its size."""
        fut = asyncio.get_running_loop().create_future()
        self.waiting.append((api_key, version, fut, time.perf_counter(), "raw" if raw else decode))
        self.writer.write(frame)
        return fut

    async def _read(self) -> None:
        decoder = FrameDecoder(1 << 30)
        try:
            while True:
                data = await self.reader.read(1 << 20)
                if not data:
                    break
                now = time.perf_counter()
                for reply in decoder.feed(data):
                    api_key, version, fut, sent, decode = self.waiting.popleft()
                    if decode == "raw":
                        result = reply
                    elif decode:
                        result = envelope.decode_response(api_key, version, reply)[1]
                    else:
                        result = len(reply) + 4
                    if not fut.done():
                        fut.set_result((result, now - sent))
        except (ConnectionError, asyncio.CancelledError):
            pass
        for *_, fut, _, _ in self.waiting:
            if not fut.done():
                fut.set_exception(ConnectionError("closed"))

    async def close(self) -> None:
        self.task.cancel()
        self.writer.close()


def api_versions_body() -> dict:
    return {"client_software_name": "bench", "client_software_version": "1"}


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def table(header: list[str], rows: list[list]) -> None:
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    print(flush=True)


# -- 1. connections ---------------------------------------------------------------------------

async def connections(n: int, rounds: int) -> None:
    server = Server()
    try:
        await asyncio.sleep(0.2)
        rss0 = server.rss_mb()
        overflows0 = listen_overflows()
        connect_s: list[float] = []
        t0 = time.perf_counter()

        async def open_one() -> Client:
            started = time.perf_counter()
            c = await Client.open(server.port)
            connect_s.append(time.perf_counter() - started)
            await c.send(API_VERSIONS, 3, api_versions_body(), decode=False)
            await c.send(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                        "include_topic_authorized_operations": False}, decode=False)
            return c

        clients = await asyncio.gather(*(open_one() for _ in range(n)))
        open_s = time.perf_counter() - t0
        overflows = None if overflows0 is None else listen_overflows() - overflows0
        rss_open = server.rss_mb()
        frame = envelope.encode_request(API_VERSIONS, 3, api_versions_body(), 7, "bench")
        rates, lat = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            results = await asyncio.gather(*(c.send_raw(frame, API_VERSIONS, 3) for c in clients))
            rates.append(n / (time.perf_counter() - t0))
            lat.extend(r[1] * 1000 for r in results)
        rss_used = server.rss_mb()
        print(f"connections: {n} (server open-files limit soft/hard {server.nofile_limit()})")
        table(["measure", "result"], [
            [f"open {n} connections, ApiVersions + Metadata answered on each", f"{open_s * 1000:.0f} ms"],
            ["  connect time median / max; SYNs dropped by a full listen backlog",
             f"{statistics.median(connect_s) * 1000:.0f} / {max(connect_s) * 1000:.0f} ms; {overflows}"],
            [f"one ApiVersions on each of {n} at once, median of {rounds} rounds",
             f"{statistics.median(rates):,.0f} requests/s"],
            ["  latency p50 / p99", f"{pct(lat, .5):.1f} / {pct(lat, .99):.1f} ms"],
            ["server RSS: idle / connections open / after the rounds",
             f"{rss0:.1f} / {rss_open:.1f} / {rss_used:.1f} MB ({(rss_used - rss0) * 1024 / n:.1f} KB a connection)"],
        ])
        for c in clients:
            await c.close()
    finally:
        server.stop()


# -- 2. groups ------------------------------------------------------------------------------------

class Member:
    def __init__(self, client: Client, group_id: str) -> None:
        self.client, self.group_id = client, group_id
        self.member_id = ""
        self.generation = -1
        self.assigned_at: float | None = None
        self.rebalances = 0
        self.heartbeat_frame: bytes | None = None
        self.heartbeat_generation = -1


async def form(member: Member, session_ms: int) -> None:
    """Join and sync until the member holds an assignment (a raw client's join loop)."""
    c = member.client
    while True:
        body = {"group_id": member.group_id, "session_timeout_ms": session_ms, "rebalance_timeout_ms": 60000,
                "member_id": member.member_id, "group_instance_id": None, "protocol_type": "consumer",
                "protocols": [{"name": "range", "metadata": SUBSCRIPTION}]}
        join, _ = await c.send(JOIN, 5, body)
        if join.error_code == MEMBER_ID_REQUIRED:
            member.member_id = join.member_id
            continue
        if join.error_code == REBALANCE_IN_PROGRESS:
            member.rebalances += 1
            continue
        assert join.error_code == 0, join.error_code
        member.member_id, member.generation = join.member_id, join.generation_id
        assignments = [{"member_id": m.member_id, "assignment": ASSIGNMENT} for m in join.members]
        sync, _ = await c.send(SYNC, 3, {"group_id": member.group_id, "generation_id": member.generation,
                                          "member_id": member.member_id, "group_instance_id": None,
                                          "assignments": assignments})
        if sync.error_code == REBALANCE_IN_PROGRESS:
            member.rebalances += 1
            continue
        assert sync.error_code == 0, sync.error_code
        member.assigned_at = time.perf_counter()
        return


async def heartbeat(member: Member) -> tuple[int, float]:
    """One Heartbeat v3, its frame encoded once per generation and its reply read without a codec
    (the bench client has to keep up with 10,000 members on a core shared with the server)."""
    if member.heartbeat_frame is None or member.heartbeat_generation != member.generation:
        member.heartbeat_frame = envelope.encode_request(HEARTBEAT, 3, {
            "group_id": member.group_id, "generation_id": member.generation, "member_id": member.member_id,
            "group_instance_id": None}, 1, "bench")
        member.heartbeat_generation = member.generation
    reply, latency = await member.client.send_raw(member.heartbeat_frame, HEARTBEAT, 3, raw=True)
    return int.from_bytes(reply[8:10], "big", signed=True), latency   # correlation id, throttle, error


async def open_clients(port: int, n: int, at_once: int = 200) -> list[Client]:
    clients: list[Client] = []
    for first in range(0, n, at_once):
        clients += await asyncio.gather(*(Client.open(port) for _ in range(min(at_once, n - first))))
    return clients


async def form_groups(groups: int, size: int, per_conn_groups: int, delay_ms: int | None, session_ms: int,
                      hb_interval_s: float, hb_seconds: float) -> None:
    flags = [] if delay_ms is None else ["--group-initial-rebalance-delay-ms", str(delay_ms)]
    server = Server(*flags)
    try:
        await asyncio.sleep(0.2)
        rss0, cpu0, client0 = server.rss_mb(), server.cpu_s(), time.process_time()
        if per_conn_groups:
            clients = await open_clients(server.port, -(-groups // per_conn_groups))
            members = [Member(clients[g // per_conn_groups], f"group-{g}") for g in range(groups) for _ in range(size)]
        else:   # a connection per member
            clients = await open_clients(server.port, groups * size)
            members = [Member(clients[i], f"group-{i // size}") for i in range(groups * size)]
        t0 = time.perf_counter()
        pending = {asyncio.ensure_future(form(m, session_ms)) for m in members}
        # Members already assigned heartbeat meanwhile, so that they learn of a later rebalance (delay 0).
        while pending:
            done, pending = await asyncio.wait(pending, timeout=hb_interval_s)
            for task in done:
                task.result()
            if pending:
                beats = [(m, asyncio.ensure_future(heartbeat(m))) for m in members if m.assigned_at is not None]
                for m, fut in beats:
                    code, _ = await fut
                    if code == REBALANCE_IN_PROGRESS:
                        m.assigned_at = None
                        pending.add(asyncio.ensure_future(form(m, session_ms)))
        form_s = max(m.assigned_at for m in members) - t0
        cpu_form, client_form = server.cpu_s() - cpu0, time.process_time() - client0
        rss_formed = server.rss_mb()
        rebalances = sum(m.rebalances for m in members)

        # steady state: every member heartbeats once per interval, spread evenly over it
        cpu1, w1, client1 = server.cpu_s(), time.perf_counter(), time.process_time()
        lat, errors = [], collections.Counter()
        step = hb_interval_s / len(members)
        end = w1 + hb_seconds
        futures = []
        i = 0
        while time.perf_counter() < end:
            due = int((time.perf_counter() - w1) / step)
            while i < due:
                futures.append(asyncio.ensure_future(heartbeat(members[i % len(members)])))
                i += 1
            await asyncio.sleep(0.005)
        for code, latency in await asyncio.gather(*futures):
            lat.append(latency * 1000)
            errors[code] += 1
        wall = time.perf_counter() - w1
        cpu_pct = (server.cpu_s() - cpu1) / wall * 100
        client_pct = (time.process_time() - client1) / wall * 100
        rss_steady = server.rss_mb()
        label = f"default ({DEFAULT_DELAY_MS} ms)" if delay_ms is None else f"{delay_ms} ms"
        print(f"groups: {groups} x {size} members on {len(clients)} connections, initial rebalance delay {label}")
        table(["measure", "result"], [
            ["time until every member holds its assignment", f"{form_s * 1000:,.0f} ms "
             f"({rebalances} REBALANCE_IN_PROGRESS rejoins; CPU server {cpu_form:.1f} s, bench client {client_form:.1f} s)"],
            [f"heartbeats, every member every {hb_interval_s:g} s for {hb_seconds:g} s",
             f"{len(lat) / wall:,.0f}/s; errors {dict((k, v) for k, v in errors.items() if k)}"],
            ["  heartbeat latency p50 / p99", f"{pct(lat, .5):.1f} / {pct(lat, .99):.1f} ms"],
            ["  CPU while heartbeating: server / bench client", f"{cpu_pct:.0f}% / {client_pct:.0f}% of a core"],
            ["server RSS: idle / groups formed / after heartbeats", f"{rss0:.1f} / {rss_formed:.1f} / {rss_steady:.1f} MB"],
        ])
        for c in clients:
            await c.close()
    finally:
        server.stop()


def core_groups(groups: int, size: int) -> None:
    """The coordinator in-process with groups x size members, as the server holds it (a Broker:
    records go to __consumer_offsets, the control API journals transitions): per-call CPU time and
    a tick."""
    from kafkaemu.core.classic.requests import Heartbeat, JoinGroup, SyncGroup
    from kafkaemu.broker import Broker
    from kafkaemu.clock import SystemClock
    from kafkaemu.config import BrokerConfig
    from kafkaemu.control.operations import Control

    from kafkaemu.logging import configure_logging
    configure_logging("console", "warning")
    broker = Broker(BrokerConfig(), 0)   # the default initial rebalance delay
    Control(broker, SystemClock(), None)
    c = broker.coordinator
    now = 0
    replies: list = []

    def join(gid, mid):
        c.join_group(now, JoinGroup(gid, mid, "consumer", [("range", SUBSCRIPTION)], client_id="c",
                                    session_timeout_ms=45000, rebalance_timeout_ms=60000), replies.append)
        return replies[-1] if replies else None

    ids: dict[str, list[str]] = {}
    t0 = time.process_time()
    calls = 0
    for g in range(groups):
        gid = f"group-{g}"
        ids[gid] = [join(gid, "")["member_id"] for _ in range(size)]   # MEMBER_ID_REQUIRED
        calls += size
        for mid in ids[gid]:
            join(gid, mid)             # parked until the initial delay ends
            calls += 1
    join_s = time.process_time() - t0
    replies.clear()
    complete_ticks = []
    while len(replies) < groups * size and now < 120_000:
        now += 1000
        t0 = time.process_time()
        c.tick(now)
        complete_ticks.append(time.process_time() - t0)
    complete_s = max(complete_ticks)
    unstable = 0
    t0 = time.process_time()
    for gid, mids in ids.items():
        group = c.classic.groups[gid]
        if group.state.value != "CompletingRebalance":
            unstable += 1
            continue
        for mid in mids:
            c.sync_group(now, SyncGroup(gid, group.generation_id, mid,
                                        {m: ASSIGNMENT for m in mids} if mid == group.leader_id else {}),
                         replies.append)
    sync_s = time.process_time() - t0
    stable = sum(1 for g in c.classic.groups.values() if g.state.value == "Stable")
    members = [(gid, c.classic.groups[gid].generation_id, mid) for gid, mids in ids.items() for mid in mids]
    hb_times = []
    for _ in range(15):   # 45 s of heartbeats every 3 s (a 45 s session: each rescheduled 15 times)
        now += 3000
        c.tick(now)
        t0 = time.process_time()
        for gid, gen, mid in members:
            c.heartbeat(now, Heartbeat(gid, gen, mid))
        hb_times.append((time.process_time() - t0) / len(members))
    ticks = []
    for _ in range(200):
        now += 1
        t0 = time.process_time()
        c.tick(now)
        ticks.append(time.process_time() - t0)
    t0 = time.process_time()
    for _ in range(1000):
        c.next_deadline_ms()
    next_deadline = (time.process_time() - t0) / 1000
    timers_heap, timers_live = len(c.ctx.timers._heap), len(c.ctx.timers)
    # every session expires at once: the tick that removes all members
    t0 = time.process_time()
    c.tick(now + 10 * 60_000)
    expire_s = time.process_time() - t0
    left = sum(len(g.members) for g in c.ctx.groups.values())
    print(f"coordinator in-process (CPU time): {groups} groups x {size} members ({stable} Stable, {unstable} not formed)")
    table(["measure", "result"], [
        ["JoinGroup, per call (incl. MEMBER_ID_REQUIRED round)", f"{join_s / calls * 1e6:.1f} us"],
        [f"tick completing all {groups} rebalances (initial delay over)", f"{complete_s * 1000:.0f} ms"],
        ["SyncGroup, per call", f"{sync_s / len(members) * 1e6:.1f} us"],
        ["Heartbeat, per call (median of 15 rounds of every member)", f"{statistics.median(hb_times) * 1e6:.1f} us"],
        ["tick with nothing due (median of 200)", f"{statistics.median(ticks) * 1e6:.1f} us"],
        ["next_deadline_ms", f"{next_deadline * 1e6:.2f} us"],
        ["timer heap entries after 15 heartbeats each (live timers)", f"{timers_heap:,} ({timers_live:,})"],
        [f"tick expiring all {len(members):,} sessions", f"{expire_s * 1000:.0f} ms ({left} members left)"],
    ])


# -- 3. partitions ----------------------------------------------------------------------------------

def metadata_cost(topics: int, per_topic: int, rounds: int = 15) -> tuple[float, float]:
    """Server CPU for one full Metadata v12 in-process, no sockets: (handler ms, response encode ms),
    the least of ``rounds`` (CPU time, so other processes' load disturbs it little)."""
    from kafkaemu.broker import Broker
    from kafkaemu.config import BrokerConfig
    from kafkaemu.handlers.metadata import metadata
    from kafkaemu.logging import configure_logging
    configure_logging("console", "warning")
    broker = Broker(BrokerConfig(), 0)
    for i in range(topics):
        broker.topics.create(f"topic-{i}", per_topic, {})
    frame = envelope.encode_request(METADATA, 12, {"topics": None, "allow_auto_topic_creation": False,
                                                   "include_topic_authorized_operations": False}, 1, "bench")
    _, body = envelope.decode_request(frame[4:], METADATA, 12)
    ctx = type("Ctx", (), {"broker": broker, "api_version": 12})()
    codec = envelope.response_codec(METADATA, 12)

    def least(fn, rounds=rounds) -> float:
        times = []
        for _ in range(rounds):
            t0 = time.process_time()
            fn()
            times.append(time.process_time() - t0)
        return min(times) * 1000
    response = metadata(ctx, body)
    return least(lambda: metadata(ctx, body)), least(lambda: codec.encode(response)), \
        least(lambda: consumer_heartbeat(broker), rounds=200) * 1000


def consumer_heartbeat(broker) -> None:
    """A KIP-848 member's steady heartbeat, subscribed to one topic by name (through the handler)."""
    from kafkaemu.handlers.consumer_group_heartbeat import consumer_group_heartbeat
    ctx = type("Ctx", (), {"broker": broker, "api_version": 1, "client_id": "bench", "client_host": "127.0.0.1",
                           "now_ms": broker.now_ms, "node_id": broker.node_id})()
    member = getattr(broker, "_bench_member", None)
    req = type("Req", (), {"group_id": "bench-848", "member_id": "member-1", "member_epoch": member or 0,
                           "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30000,
                           "subscribed_topic_names": ["topic-0"], "subscribed_topic_regex": None,
                           "server_assignor": None, "topic_partitions": None if member else []})()
    reply = consumer_group_heartbeat(ctx, req)
    assert reply["error_code"] == 0, reply
    broker._bench_member = reply["member_epoch"]


async def partitions(topics: int, per_topic: int, seconds: float) -> None:
    server = Server()
    try:
        await asyncio.sleep(0.2)
        rss0 = server.rss_mb()
        c = await Client.open(server.port)
        t0 = time.perf_counter()
        batch = max(1, 1000 // per_topic)
        futs = []
        for first in range(0, topics, batch):
            futs.append(c.send(CREATE_TOPICS, 4, {"topics": [
                {"name": f"topic-{i}", "num_partitions": per_topic, "replication_factor": 1, "assignments": [],
                 "configs": []} for i in range(first, min(topics, first + batch))],
                "timeout_ms": 60000, "validate_only": False}))
        for fut in futs:
            reply, _ = await fut
            assert all(t.error_code == 0 for t in reply.topics), [t.error_code for t in reply.topics]
        create_s = time.perf_counter() - t0
        rss_created = server.rss_mb()
        body = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}
        frame = envelope.encode_request(METADATA, 12, body, 1, "bench")
        one = []
        for _ in range(5):
            size, latency = await c.send_raw(frame, METADATA, 12)
            one.append(latency)
        reply, _ = await c.send(METADATA, 12, body)
        count = sum(len(t.partitions) for t in reply.topics if t.name.startswith("topic-"))
        assert count == topics * per_topic, count
        # pipelined full Metadata on one connection, 8 in flight
        done = 0
        t0 = time.perf_counter()
        inflight = collections.deque(c.send_raw(frame, METADATA, 12) for _ in range(8))
        while time.perf_counter() - t0 < seconds:
            await inflight.popleft()
            done += 1
            inflight.append(c.send_raw(frame, METADATA, 12))
        rate = done / (time.perf_counter() - t0)
        await asyncio.gather(*inflight)
        rss_used = server.rss_mb()
        handler_ms, encode_ms, cg_heartbeat_us = metadata_cost(topics, per_topic)
        print(f"partitions: {topics} topic(s) x {per_topic} = {topics * per_topic:,}")
        table(["measure", "result"], [
            ["create (CreateTopics, up to 1,000 partitions a request)", f"{create_s * 1000:,.0f} ms"],
            ["one full Metadata v12 (all topics), median of 5", f"{statistics.median(one) * 1000:.1f} ms, {size:,} bytes"],
            ["full Metadata requests/s, one connection, 8 in flight", f"{rate:,.1f}"],
            ["  server CPU of one, in-process: handler / response encode (least of 15)",
             f"{handler_ms:.1f} / {encode_ms:.1f} ms"],
            ["ConsumerGroupHeartbeat of a member subscribed to one topic, in-process CPU (least of 200)",
             f"{cg_heartbeat_us:.0f} us"],
            ["server RSS: empty / topics created / after Metadata", f"{rss0:.1f} / {rss_created:.1f} / {rss_used:.1f} MB"],
        ])
        await c.close()
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small sizes: check the script runs")
    parser.add_argument("--only", choices=["connections", "groups", "core", "partitions"], action="append")
    args = parser.parse_args()
    only = set(args.only or ["connections", "groups", "core", "partitions"])
    q = args.quick
    n_conn = 50 if q else 1000
    print(f"bench process open-files limit: {raise_nofile(n_conn + 200)}")
    groups, size = (20, 10) if q else (1000, 10)
    try:
        import uvloop
        run = uvloop.run
    except ImportError:
        run = asyncio.run
    if "connections" in only:
        run(connections(min(n_conn, usable_fds()), 5))
    if "groups" in only:
        # Members of groups share connections while every join completes together (the initial delay);
        # with no delay, a parked JoinGroup would hold back its connection-mates' replies (Kafka answers
        # in request order), which real clients never meet: one connection per member.
        print(f"bench process open-files limit: {raise_nofile(groups * size + 200)}")
        run(form_groups(groups, size, 5, None, 45000, 3.0, 3.0 if q else 15.0))
        fitting = min(groups, usable_fds() // size)
        if fitting < groups:
            print(f"(the open-files limit leaves room for {fitting} groups on a connection per member)")
        run(form_groups(fitting, size, 0, 0, 45000, 3.0, 3.0 if q else 15.0))
    if "core" in only:
        core_groups(groups, size)
    if "partitions" in only:
        for topics, per_topic in ((2, 50), (1, 100), (100, 1)) if q else ((100, 100), (1, 10000), (10000, 1)):
            run(partitions(topics, per_topic, 1.0 if q else 5.0))


if __name__ == "__main__":
    main()
