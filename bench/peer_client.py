"""The raw client of the side-by-side benchmark (bench_peer.py): one request frame, built by
kafkaemu's own envelope codecs, sent many times in a row over one or many connections with a
window of requests in flight, every answer matched to its correlation id and checked for error
codes. The same bytes go to any Kafka-compatible broker, so two brokers are measured alike.

Only the correlation id changes between the frames of a run (patched into one encoded frame), and
an answer whose bytes were seen before is not decoded again, so the client stays cheap next to
the broker it measures.
"""
from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

from kafkaemu.protocol import envelope
from kafkaemu.protocol.catalog import catalog
from kafkaemu.testing import raw_client
from kafkaemu.wire.framing import FrameDecoder

API_VERSIONS, METADATA, HEARTBEAT, OFFSET_COMMIT, OFFSET_FETCH = 18, 3, 12, 8, 9
CREATE_TOPICS, JOIN_GROUP, SYNC_GROUP, FIND_COORDINATOR = 19, 11, 14, 10
MEMBER_ID_REQUIRED = 79
# what a client retries while a coordinator settles (a fresh Kafka has not loaded, or not even
# created, __consumer_offsets): COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
COORDINATOR_RETRIABLE = frozenset({14, 15, 16})
CLIENT_ID = "peer-bench"

# ConsumerProtocolSubscription v1 of topic "orders" and an assignment of its partition 0: the
# bytes a group's members exchange are opaque to the broker, so any well-formed ones do.
SUBSCRIPTION = b"\x00\x01" + b"\x00\x00\x00\x01\x00\x06orders" + b"\xff\xff\xff\xff" + b"\x00\x00\x00\x00"
ASSIGNMENT = b"\x00\x01\x00\x00\x00\x01\x00\x06orders\x00\x00\x00\x01\x00\x00\x00\x00\xff\xff\xff\xff"

_INT32 = struct.Struct(">i")
_CORRELATION_AT = 8   # size (4), api key (2), api version (2), then the correlation id


def errors_in(body) -> list[str]:
    """``name=code`` of every non-zero error code anywhere in a decoded response."""
    found: list[str] = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, value in node.items():
                if key.startswith("_"):
                    continue
                if key == "error_code" and value:
                    found.append(f"{path or 'top'}.error_code={value}")
                else:
                    walk(value, f"{path}.{key}" if path else key)
        elif isinstance(node, list):
            for item in node:
                walk(item, path)
    walk(body, "")
    return found


@dataclass
class Outcome:
    """What a pipelined run got: answers counted in the measured window, over its seconds."""
    answered: int = 0
    seconds: float = 0.0
    client_cpu: float = 0.0     # the client's process CPU seconds over the window
    errors: list[str] = field(default_factory=list)
    total_answered: int = 0     # every answer, warm-up and drain included

    @property
    def rate(self) -> float:
        return self.answered / self.seconds if self.seconds else 0.0

    @property
    def client_cpu_share(self) -> float:
        """Client CPU as a share of one core over the measured window."""
        return self.client_cpu / self.seconds if self.seconds else 0.0


class _Checker:
    """Checks answers: correlation ids in order per connection, bodies free of error codes
    (decoded once per distinct byte string)."""

    def __init__(self, api_key: int, version: int) -> None:
        self.api_key, self.version = api_key, version
        self.body_start = 4 + envelope.response_header_version(api_key, version)
        self.seen: dict[bytes, str | None] = {}
        self.errors: list[str] = []

    def check(self, reply: bytes, expected: int) -> bool:
        (correlation,) = _INT32.unpack_from(reply)
        if correlation != expected:
            self._fail(f"correlation id {correlation}, expected {expected}")
            return False
        body = reply[self.body_start:]
        verdict = self.seen.get(body, "")
        if verdict == "":
            try:
                _, decoded = envelope.decode_response(self.api_key, self.version, reply)
                problems = errors_in(decoded)
                verdict = ", ".join(problems) if problems else None
            except Exception as exc:  # an answer kafkaemu's codec cannot read is a wrong answer
                verdict = f"undecodable answer: {exc}"
            if len(self.seen) < 4096:
                self.seen[body] = verdict
        if verdict is not None:
            self._fail(verdict)
            return False
        return True

    def _fail(self, why: str) -> None:
        if len(self.errors) < 5:
            self.errors.append(why)


class _Connection(asyncio.Protocol):
    def __init__(self, run: "_Run") -> None:
        self.run = run
        self.decoder = FrameDecoder(1 << 30)
        self.next_send = 0          # correlation id of the next request
        self.next_answer = 0        # correlation id the next answer must carry
        self.transport = None
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport) -> None:
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def fill(self) -> None:
        """Send requests until the window is full (or the run stops sending)."""
        run = self.run
        room = run.window - (self.next_send - self.next_answer)
        if room <= 0 or not run.sending():
            return
        frames = []
        for _ in range(room):
            if not run.take():
                break
            _INT32.pack_into(run.template, _CORRELATION_AT, self.next_send)
            frames.append(bytes(run.template))
            self.next_send += 1
        if frames:
            self.transport.write(b"".join(frames))

    def data_received(self, data: bytes) -> None:
        run = self.run
        for reply in self.decoder.feed(data):
            if run.checker.check(reply, self.next_answer):
                run.answered()
            else:
                run.failed()
            self.next_answer += 1
        if run.failures:
            self.transport.close()
            return
        self.fill()
        if self.next_answer == self.next_send and not run.sending():
            self.transport.close()

    def connection_lost(self, exc) -> None:
        if self.next_answer < self.next_send:
            self.run.checker._fail(f"connection closed with {self.next_send - self.next_answer} requests unanswered"
                                   + (f" ({exc})" if exc else ""))
            self.run.failed()
        if not self.closed.done():
            self.closed.set_result(None)


class _Run:
    def __init__(self, api_key, version, body, window, count, warmup_s, measure_s) -> None:
        self.template = bytearray(envelope.encode_request(api_key, version, body, 0, CLIENT_ID))
        self.checker = _Checker(api_key, version)
        self.window, self.count = window, count
        self.warmup_s, self.measure_s = warmup_s, measure_s
        self.sent = 0
        self.total = 0
        self.in_window = 0
        self.failures = 0
        self.phase = "warmup"       # warmup -> measure -> drain
        self.window_start = self.window_end = 0.0
        self.cpu_start = self.cpu_end = 0.0

    def sending(self) -> bool:
        return self.phase != "drain" and not self.failures and (self.count is None or self.sent < self.count)

    def take(self) -> bool:
        if not self.sending():
            return False
        self.sent += 1
        return True

    def answered(self) -> None:
        self.total += 1
        if self.phase == "measure":
            self.in_window += 1

    def failed(self) -> None:
        self.failures += 1

    async def clock(self) -> None:
        """Warm up, then count answers over the measured seconds, then stop sending."""
        if self.count is not None:  # a counted run measures everything
            self.phase = "measure"
            self.window_start, self.cpu_start = time.perf_counter(), time.process_time()
            return
        await asyncio.sleep(self.warmup_s)
        self.phase = "measure"
        self.window_start, self.cpu_start = time.perf_counter(), time.process_time()
        await asyncio.sleep(self.measure_s)
        self.window_end, self.cpu_end = time.perf_counter(), time.process_time()
        self.phase = "drain"


async def pipelined(host: str, port: int, api_key: int, version: int, body: dict, *, connections: int = 1,
                    window: int = 64, warmup_s: float = 0.5, measure_s: float = 2.0,
                    count: int | None = None, timeout_s: float = 60.0) -> Outcome:
    """Send ``body`` as ``api_key`` v``version`` over ``connections`` connections with ``window``
    requests in flight on each: for ``warmup_s`` unmeasured, then ``measure_s`` measured (or, with
    ``count``, exactly that many requests in all, every one measured). Answers with an error code,
    out of order or missing count as failures (the first few are in ``Outcome.errors``) and stop
    the run."""
    loop = asyncio.get_running_loop()
    run = _Run(api_key, version, body, window, count, warmup_s, measure_s)
    conns = []
    for _ in range(connections):
        _, conn = await loop.create_connection(lambda: _Connection(run), host, port)
        conns.append(conn)
    clock = asyncio.ensure_future(run.clock())
    await asyncio.sleep(0)
    for conn in conns:
        conn.fill()
    try:
        await asyncio.wait_for(asyncio.gather(*(c.closed for c in conns)), timeout_s)
    except asyncio.TimeoutError:
        run.checker._fail(f"no end after {timeout_s} s ({run.total} answers of {run.sent} requests)")
        run.failures += 1
        for conn in conns:
            conn.transport.close()
    if count is not None:
        run.window_end, run.cpu_end = time.perf_counter(), time.process_time()
    clock.cancel()
    measured = run.window_end - run.window_start if run.window_end else 0.0
    return Outcome(answered=run.in_window, seconds=measured, client_cpu=max(run.cpu_end - run.cpu_start, 0.0),
                   errors=run.checker.errors, total_answered=run.total)


def run_pipelined(*args, **kwargs) -> Outcome:
    """``pipelined`` on a fresh event loop (uvloop when installed)."""
    try:
        import uvloop
        return uvloop.run(pipelined(*args, **kwargs))
    except ImportError:  # pragma: no cover
        return asyncio.run(pipelined(*args, **kwargs))


# -- one request at a time: versions, topics, the group the pipelined runs use ------------------

def call(host: str, port: int, api_key: int, version: int, body: dict, timeout: float = 30.0):
    """One request on a fresh connection; its decoded answer. Raises on a closed connection or an
    undecodable answer."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        return call_on(sock, api_key, version, body)


def call_on(sock: socket.socket, api_key: int, version: int, body: dict):
    sock.sendall(envelope.encode_request(api_key, version, body, 1, CLIENT_ID))
    return raw_client.decode_reply(api_key, version, raw_client.read_reply(sock), 1)


def api_version_ranges(host: str, port: int) -> dict[int, tuple[int, int]]:
    """``{api_key: (min, max)}`` the broker advertises (ApiVersions v3, else v0)."""
    for version in (3, 0):
        try:
            answer = call(host, port, API_VERSIONS, version,
                          {"client_software_name": CLIENT_ID, "client_software_version": "1"})
        except (OSError, ConnectionError):
            continue
        if answer["error_code"] == 0:
            return {k["api_key"]: (k["min_version"], k["max_version"]) for k in answer["api_keys"]}
    raise RuntimeError("the broker answered no ApiVersions request")


def highest_common(api_key: int, *ranges: dict[int, tuple[int, int]]) -> int | None:
    """The highest version of ``api_key`` kafkaemu's codecs and every broker know, or None."""
    spec = catalog().requests[api_key]
    lo, hi = spec.versions.lo, spec.versions.hi if spec.versions.hi is not None else 1 << 15
    for r in ranges:
        if api_key not in r:
            return None
        lo, hi = max(lo, r[api_key][0]), min(hi, r[api_key][1])
    return hi if hi >= lo else None


def create_topic(host: str, port: int, version: int, name: str, partitions: int = 1) -> bytes:
    """Creates ``name``; its topic id (from the answer, CreateTopics v7+)."""
    answer = call(host, port, CREATE_TOPICS, version, {
        "topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                    "assignments": [], "configs": []}], "timeout_ms": 30000, "validate_only": False})
    problems = errors_in(answer)
    if problems:
        raise RuntimeError(f"CreateTopics {name}: {problems}")
    return answer["topics"][0].get("topic_id") or bytes(16)


def topic_id_of(host: str, port: int, version: int, name: str, timeout_s: float = 30.0) -> bytes:
    """``name``'s topic id from Metadata (v10+ carries it), asked again until the broker's metadata
    has the topic, as a client does after creating one."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = call(host, port, METADATA, version, {
            "topics": [{"name": name, "topic_id": bytes(16)}], "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False})
        topic = answer["topics"][0]
        if not topic["error_code"] and topic.get("topic_id", bytes(16)) != bytes(16):
            return topic["topic_id"]
        if time.monotonic() > deadline:
            raise RuntimeError(f"Metadata v{version} {name}: error {topic['error_code']}, no topic id")
        time.sleep(0.1)


def find_coordinator(host: str, port: int, version: int, group_id: str, timeout_s: float = 60.0) -> None:
    """FindCoordinator for ``group_id`` until the broker names a coordinator, retrying the
    coordinator errors with a backoff as clients do (it also makes a fresh Kafka create
    __consumer_offsets). The benchmark's brokers are single nodes, so the coordinator is the broker
    asked."""
    body = {"key": group_id, "key_type": 0, "coordinator_keys": [group_id]}
    deadline, backoff = time.monotonic() + timeout_s, 0.05
    while True:
        answer = call(host, port, FIND_COORDINATOR, version, body)
        code = answer["coordinators"][0]["error_code"] if version >= 4 else answer["error_code"]
        if not code:
            return
        if code not in COORDINATOR_RETRIABLE or time.monotonic() > deadline:
            raise RuntimeError(f"FindCoordinator v{version}: error {code}")
        time.sleep(backoff)
        backoff = min(backoff * 2, 1.0)


@dataclass
class Member:
    group_id: str
    member_id: str
    generation_id: int
    join_seconds: float     # JoinGroup (with the member id) sent -> answered: the broker's initial delay


def form_group(host: str, port: int, join_version: int, sync_version: int, group_id: str,
               session_timeout_ms: int = 10_000, find_version: int | None = None,
               timeout_s: float = 60.0) -> Member:
    """A one-member classic group, Stable, as a client forms it: FindCoordinator, then JoinGroup
    (twice when the broker asks for a member id first) and SyncGroup, starting again after a backoff
    while the coordinator is loading or moving (with the member id it was given, as a client rejoins).
    Tansu answers a new group's JoinGroup after half the session timeout, hence a short one;
    ``Keepalive`` keeps the member alive between runs."""
    deadline, backoff, member_id = time.monotonic() + timeout_s, 0.05, ""
    while True:
        if find_version is not None:
            find_coordinator(host, port, find_version, group_id, max(deadline - time.monotonic(), 0.0))
        try:
            return _join_and_sync(host, port, join_version, sync_version, group_id, session_timeout_ms, member_id)
        except _CoordinatorNotReady as exc:
            if time.monotonic() > deadline:
                raise
            member_id = exc.member_id
        time.sleep(backoff)
        backoff = min(backoff * 2, 1.0)


class _CoordinatorNotReady(RuntimeError):
    """The group's coordinator answered one of the errors a client retries; ``member_id``: the id
    the member was given so far ("" for none)."""

    def __init__(self, message: str, member_id: str) -> None:
        super().__init__(message)
        self.member_id = member_id


def _join_and_sync(host: str, port: int, join_version: int, sync_version: int, group_id: str,
                   session_timeout_ms: int, member_id: str) -> Member:
    with socket.create_connection((host, port), timeout=60) as sock:
        join = {"group_id": group_id, "session_timeout_ms": session_timeout_ms,
                "rebalance_timeout_ms": session_timeout_ms, "member_id": member_id, "group_instance_id": None,
                "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": SUBSCRIPTION}],
                "reason": None}
        start = time.perf_counter()
        answer = call_on(sock, JOIN_GROUP, join_version, join)
        if answer["error_code"] == MEMBER_ID_REQUIRED:
            join["member_id"] = answer["member_id"]
            start = time.perf_counter()
            answer = call_on(sock, JOIN_GROUP, join_version, join)
        joined = time.perf_counter() - start
        if answer["error_code"] in COORDINATOR_RETRIABLE:
            raise _CoordinatorNotReady(f"JoinGroup v{join_version}: error {answer['error_code']}", join["member_id"])
        if answer["error_code"]:
            raise RuntimeError(f"JoinGroup v{join_version}: error {answer['error_code']}")
        member_id, generation = answer["member_id"], answer["generation_id"]
        sync = call_on(sock, SYNC_GROUP, sync_version, {
            "group_id": group_id, "generation_id": generation, "member_id": member_id, "group_instance_id": None,
            "protocol_type": "consumer", "protocol_name": "range",
            "assignments": [{"member_id": member_id, "assignment": ASSIGNMENT}]})
        if sync["error_code"] in COORDINATOR_RETRIABLE:
            raise _CoordinatorNotReady(f"SyncGroup v{sync_version}: error {sync['error_code']}", member_id)
        if sync["error_code"]:
            raise RuntimeError(f"SyncGroup v{sync_version}: error {sync['error_code']}")
        return Member(group_id, member_id, generation, joined)


class Keepalive:
    """Heartbeats of a member once a second on its own connection, so that its session outlives
    the workloads run between the pipelined ones."""

    def __init__(self, host: str, port: int, version: int, member: Member, every_s: float = 1.0) -> None:
        self.args = (host, port, version, member, every_s)
        self.stop_event = threading.Event()
        self.errors: list[str] = []
        self.thread = threading.Thread(target=self._run, name="peer-keepalive", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        host, port, version, member, every_s = self.args
        body = request_bodies("-", member)[HEARTBEAT]
        try:
            with socket.create_connection((host, port), timeout=30) as sock:
                while not self.stop_event.wait(every_s):
                    code = call_on(sock, HEARTBEAT, version, body)["error_code"]
                    if code:
                        self.errors.append(f"heartbeat error {code}")
        except Exception as exc:  # reported by the runs whose answers then carry errors
            self.errors.append(repr(exc))

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(5)


def request_bodies(topic: str, member: Member, topic_id: bytes = bytes(16)) -> dict[int, dict]:
    """The body each pipelined API sends (fields of every version; each codec takes its own: the
    topic's name up to OffsetCommit / OffsetFetch v9, its id from v10)."""
    return {
        API_VERSIONS: {"client_software_name": CLIENT_ID, "client_software_version": "1"},
        METADATA: {"topics": [{"name": topic}], "allow_auto_topic_creation": False,
                   "include_cluster_authorized_operations": False, "include_topic_authorized_operations": False},
        HEARTBEAT: {"group_id": member.group_id, "generation_id": member.generation_id,
                    "member_id": member.member_id, "group_instance_id": None},
        OFFSET_COMMIT: {"group_id": member.group_id, "generation_id_or_member_epoch": member.generation_id,
                        "member_id": member.member_id, "group_instance_id": None, "retention_time_ms": -1,
                        "topics": [{"name": topic, "topic_id": topic_id, "partitions": [
                            {"partition_index": 0, "committed_offset": 0, "committed_leader_epoch": -1,
                             "commit_timestamp": -1, "committed_metadata": ""}]}]},
        OFFSET_FETCH: {"group_id": member.group_id, "topics": [{"name": topic, "partition_indexes": [0]}],
                       "groups": [{"group_id": member.group_id, "member_id": None, "member_epoch": -1,
                                   "topics": [{"name": topic, "topic_id": topic_id, "partition_indexes": [0]}]}],
                       "require_stable": False},
    }
