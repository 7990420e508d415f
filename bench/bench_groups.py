"""Consumer-group numbers for BENCHMARKS.md (``make bench``).

1. Server time of one join+sync round for a 50-member group: the pure coordinator core alone, and
   the whole request path without sockets (decode request bytes -> handler -> encode response).
2. Time for N = 1, 5, 20 kafka-python consumers polling with ``poll(timeout_ms=100)`` to all hold an
   assignment from the moment they subscribe to a just-created topic, and to a new stable assignment
   after one of them leaves (in-process emulator, broker defaults unless ``--initial-delay-ms``;
   median of ``--repeat`` runs).
3. Heartbeats and offset commits per second on one pipelined connection.
"""
from __future__ import annotations

import argparse
import socket
import statistics
import struct
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkaemu.core.classic.settings import ClassicSettings  # noqa: E402
from kafkaemu.core.coordinator import CoordinatorSettings, GroupCoordinator  # noqa: E402
from kafkaemu.core.classic.requests import JoinGroup, SyncGroup  # noqa: E402
from kafkaemu.protocol import envelope  # noqa: E402
from kafkaemu.protocol.catalog import catalog  # noqa: E402
from kafkaemu.wire.framing import FrameDecoder, frame  # noqa: E402

ASSIGNMENT = b"\x00\x01\x00\x00\x00\x01\x00\x06orders\x00\x00\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff"
SUBSCRIPTION = b"\x00\x01" + b"\x00\x00\x00\x01\x00\x06orders" + b"\xff\xff\xff\xff" + b"\x00\x00\x00\x00"


# -- 1. core and request-path server time ---------------------------------------------------------

def core_round(members: int, rounds: int) -> list[float]:
    """ms of coordinator time for a full rebalance round (every JoinGroup, every SyncGroup)."""
    c = GroupCoordinator(CoordinatorSettings(classic=ClassicSettings(initial_rebalance_delay_ms=0)), now_ms=0)
    sink = []
    ids = []
    for i in range(members):       # MEMBER_ID_REQUIRED first, then the real join
        c.join_group(0, JoinGroup("bench", "", "consumer", [("range", SUBSCRIPTION)], client_id=f"c{i}"),
                     sink.append)
        ids.append(sink[-1]["member_id"])
    settle(c, ids)
    times = []
    now = 0
    for _ in range(rounds):
        now += 1
        replies = []
        group = c.classic.groups["bench"]
        order = [group.leader_id] + [m for m in ids if m != group.leader_id]   # the leader's rejoin starts a round
        t0 = time.perf_counter()
        for mid in order:
            c.join_group(now, JoinGroup("bench", mid, "consumer", [("range", SUBSCRIPTION)], client_id="c"),
                         replies.append)
        gen, leader = group.generation_id, group.leader_id
        assignment = {mid: ASSIGNMENT for mid in ids}
        for mid in ids:
            c.sync_group(now, SyncGroup("bench", gen, mid, assignment if mid == leader else {}), replies.append)
        times.append((time.perf_counter() - t0) * 1000)
        assert group.state.value == "Stable" and len(replies) == 2 * members, (group.state, len(replies))
    return times


def settle(c, ids) -> None:
    """Join everyone (the first generations form while members trickle in) until one Stable group."""
    group = c.classic.groups["bench"]
    sink = []
    for _ in range(5):
        for mid in [group.leader_id] + [m for m in ids if m != group.leader_id]:
            if mid not in group.members or not group.members[mid].is_awaiting_join:
                c.join_group(0, JoinGroup("bench", mid, "consumer", [("range", SUBSCRIPTION)], client_id="c"),
                             sink.append)
        if group.state.value == "CompletingRebalance" and len(group.members) == len(ids):
            for mid in ids:
                c.sync_group(0, SyncGroup("bench", group.generation_id, mid,
                                          {m: ASSIGNMENT for m in ids} if mid == group.leader_id else {}), sink.append)
            if group.state.value == "Stable":
                return
    raise RuntimeError(f"group did not settle: {group.state}")


def request_path_round(members: int, rounds: int) -> list[float]:
    """The same round through codecs and handlers: bytes in, bytes out, no sockets."""
    from kafkaemu.broker import Broker
    from kafkaemu.config import BrokerConfig
    from kafkaemu.handlers.registry import REGISTRY
    import kafkaemu.handlers  # noqa: F401  (registers every handler)
    import importlib
    import pkgutil
    for m in pkgutil.iter_modules(kafkaemu.handlers.__path__):
        importlib.import_module(f"kafkaemu.handlers.{m.name}")
    cat = catalog()
    broker = Broker(BrokerConfig(group_initial_rebalance_delay_ms=0), 0)   # no clock runs here to end the delay
    join_v, sync_v = 9, 5
    join_codec, sync_codec = cat.request(11, join_v), cat.request(14, sync_v)
    join_resp, sync_resp = cat.response(11, join_v), cat.response(14, sync_v)
    out: list[bytes] = []

    def call(api_key, version, codec, resp_codec, body_bytes, now):
        req = codec.decode(body_bytes)
        ctx = broker.context(api_key, version, client_id="bench", now_ms=now,
                             respond=lambda r: out.append(resp_codec.encode(r)))
        result = REGISTRY.get(api_key).func(ctx, req)
        if isinstance(result, dict):
            out.append(resp_codec.encode(result))

    def join_bytes(mid):
        return join_codec.encode({"group_id": "bench", "session_timeout_ms": 45000, "rebalance_timeout_ms": 300000,
                                  "member_id": mid, "group_instance_id": None, "protocol_type": "consumer",
                                  "protocols": [{"name": "range", "metadata": SUBSCRIPTION}], "reason": None})
    ids = []
    for i in range(members):
        broker.coordinator.join_group(0, JoinGroup("bench", "", "consumer", [("range", SUBSCRIPTION)],
                                                   client_id=f"c{i}"), lambda r: ids.append(r["member_id"]))
    settle(broker.coordinator, ids)
    times = []
    now = 0
    group = broker.coordinator.classic.groups["bench"]
    for _ in range(rounds):
        now += 1
        out.clear()
        order = [group.leader_id] + [m for m in ids if m != group.leader_id]
        join_frames = [join_bytes(mid) for mid in order]
        t0 = time.perf_counter()
        for body in join_frames:
            call(11, join_v, join_codec, join_resp, body, now)
        gen, leader = group.generation_id, group.leader_id
        sync_frames = [sync_codec.encode({"group_id": "bench", "generation_id": gen, "member_id": mid,
                                          "group_instance_id": None, "protocol_type": "consumer",
                                          "protocol_name": "range",
                                          "assignments": [{"member_id": m, "assignment": ASSIGNMENT} for m in ids]
                                          if mid == leader else []}) for mid in ids]
        for body in sync_frames:
            call(14, sync_v, sync_codec, sync_resp, body, now)
        times.append((time.perf_counter() - t0) * 1000)
        assert len(out) == 2 * members and group.state.value == "Stable"
    return times


# -- 2. real kafka-python consumers ---------------------------------------------------------------

POLL_MS = 100   # what user code often passes; kafka-python's own race needs the broker's help here


def consumers_to_assignment(emulator, n: int, timeout: float = 120.0) -> tuple[float, float]:
    """Seconds from subscribing until the group is Stable with all n members holding partitions, and
    from one consumer's close until the group is Stable again without it (read from the coordinator,
    so the numbers do not depend on how often the clients poll)."""
    from kafka import KafkaConsumer
    topic, group = f"bench-groups-{n}-{time.time_ns()}", f"bench-g-{n}-{time.time_ns()}"
    emulator.call(lambda b: b.topics.create(topic, max(n, 1), {}))
    stop = threading.Event()
    leave = threading.Event()

    def run(i):
        c = KafkaConsumer(topic, bootstrap_servers=emulator.bootstrap_server, group_id=group, client_id=f"b{i:03d}",
                          session_timeout_ms=10000, heartbeat_interval_ms=500, enable_auto_commit=False)
        while not stop.is_set():
            if i == 0 and leave.is_set():
                break
            try:
                c.poll(timeout_ms=POLL_MS)
            except Exception:
                pass
        c.close()

    def stable_with(count):
        def check(b):
            g = b.coordinator.classic.group(group)
            return (g is not None and g.state.value == "Stable" and len(g.members) == count
                    and all(assigned_partitions(m.assignment) for m in g.members.values()))
        return lambda: emulator.call(check)

    start = time.perf_counter()
    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    formed = _wait(stable_with(n), timeout)
    t_form = time.perf_counter() - start if formed else float("nan")
    t_leave = float("nan")
    if n > 1 and formed:
        t0 = time.perf_counter()
        leave.set()
        if _wait(stable_with(n - 1), timeout):
            t_leave = time.perf_counter() - t0
    stop.set()
    for t in threads:
        t.join(15)
    return t_form, t_leave


def assigned_partitions(assignment: bytes) -> int:
    """Partitions in a ConsumerProtocolAssignment (int16 version, [topic, [int32 partition]], ...)."""
    if len(assignment) < 6:
        return 0
    (topics,) = struct.unpack_from(">i", assignment, 2)
    pos, total = 6, 0
    for _ in range(max(topics, 0)):
        (n,) = struct.unpack_from(">h", assignment, pos)
        (parts,) = struct.unpack_from(">i", assignment, pos + 2 + n)
        pos += 2 + n + 4 + 4 * max(parts, 0)
        total += max(parts, 0)
    return total


def _wait(pred, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.005)
    return False


# -- 3. pipelined heartbeats and commits ------------------------------------------------------------

def pipelined_rate(emulator, count: int) -> tuple[float, float]:
    from kafkaemu.core.classic.requests import JoinGroup as J, SyncGroup as S
    cat = catalog()
    group = f"bench-pipe-{time.time_ns()}"
    topic = f"bench-pipe-topic-{time.time_ns()}"
    emulator.call(lambda b: b.topics.create(topic, 1, {}))

    def setup(broker):
        got = []
        broker.coordinator.join_group(broker.now_ms, J(group, "", "consumer", [("range", SUBSCRIPTION)], client_id="p"),
                                      got.append)
        mid = got[-1]["member_id"]
        broker.coordinator.join_group(broker.now_ms, J(group, mid, "consumer", [("range", SUBSCRIPTION)],
                                                       client_id="p", session_timeout_ms=60000), got.append)
        broker.coordinator.sync_group(broker.now_ms, S(group, 1, mid, {mid: b""}), got.append)
        return mid
    mid = emulator.call(setup)
    host, port = emulator.bootstrap_server.split(":")
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def header(api_key, version, corr):
        return cat.data("RequestHeader", envelope.request_header_version(api_key, version)).encode(
            {"request_api_key": api_key, "request_api_version": version, "correlation_id": corr, "client_id": "p"})

    hb = cat.request(12, 4).encode({"group_id": group, "generation_id": 1, "member_id": mid, "group_instance_id": None})
    commit_body = {"group_id": group, "generation_id_or_member_epoch": 1, "member_id": mid, "group_instance_id": None,
                   "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 0,
                                                              "committed_leader_epoch": -1, "committed_metadata": ""}]}]}

    def blast(api_key, version, bodies):
        payload = b"".join(frame(header(api_key, version, i), body) for i, body in enumerate(bodies))
        decoder = FrameDecoder(1 << 30)
        got = 0
        t0 = time.perf_counter()
        sender = threading.Thread(target=sock.sendall, args=(payload,))
        sender.start()
        while got < len(bodies):
            got += len(decoder.feed(sock.recv(1 << 20)))
        elapsed = time.perf_counter() - t0
        sender.join()
        return len(bodies) / elapsed

    hb_rate = blast(12, 4, [hb] * count)
    commit_codec = cat.request(8, 8)
    commits = []
    for i in range(count):
        commit_body["topics"][0]["partitions"][0]["committed_offset"] = i
        commits.append(commit_codec.encode(commit_body))
    commit_rate = blast(8, 8, commits)
    sock.close()
    return hb_rate, commit_rate


def main() -> None:
    from kafkaemu.logging import configure_logging
    configure_logging("console", "warning")
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--members", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--consumers", default="1,5,20")
    ap.add_argument("--repeat", type=int, default=5, help="runs per consumer count (the median is printed)")
    ap.add_argument("--initial-delay-ms", type=int, default=None,
                    help="group.initial.rebalance.delay.ms for the client runs (default: the broker's default)")
    ap.add_argument("--pipelined", type=int, default=20000)
    ap.add_argument("--skip-clients", action="store_true")
    args = ap.parse_args()

    core = core_round(args.members, args.rounds)
    path = request_path_round(args.members, args.rounds)
    print(f"join+sync round, {args.members} members, coordinator core:  median {statistics.median(core):.2f} ms"
          f"  (min {min(core):.2f}, max {max(core):.2f})")
    print(f"join+sync round, {args.members} members, decode+handle+encode: median {statistics.median(path):.2f} ms"
          f"  (min {min(path):.2f}, max {max(path):.2f})")
    if args.skip_clients:
        return
    from kafkaemu.testing.emulator import KafkaEmulator
    import logging
    logging.getLogger("kafka").setLevel(logging.CRITICAL)
    settings = {} if args.initial_delay_ms is None else {"group_initial_rebalance_delay_ms": args.initial_delay_ms}
    with KafkaEmulator(**settings) as emu:
        delay = emu.config.classic.initial_rebalance_delay_ms
        hb_rate, commit_rate = pipelined_rate(emu, args.pipelined)
        print(f"pipelined on one connection: {hb_rate:,.0f} heartbeats/s, {commit_rate:,.0f} offset commits/s")
        for n in (int(x) for x in args.consumers.split(",")):
            runs = [consumers_to_assignment(emu, n) for _ in range(args.repeat)]
            form = statistics.median(t for t, _ in runs)
            leave = "n/a" if n == 1 else f"{statistics.median(t for _, t in runs):.2f} s"
            print(f"kafka-python consumers N={n:>2}, poll(timeout_ms={POLL_MS}), initial delay {delay} ms: "
                  f"all assigned after {form:.2f} s (median of {len(runs)}, max {max(t for t, _ in runs):.2f}); "
                  f"new stable assignment {leave} after one leaves")

if __name__ == "__main__":
    main()
