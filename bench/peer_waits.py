"""The rows of the side-by-side benchmark that a test suite waits on, one function per measurement,
each taking a running broker (``peer_servers.Server``) and returning seconds or bytes, the same
confluent-kafka client code for every broker:

- ``start_times``: a broker's start (its start function called) to its first ApiVersions answer, and
  to the first record a producer had acknowledged;
- ``topic_creation_s``: CreateTopics of one 1-partition topic, to the answer;
- ``group_times``: three consumers of a 3-partition topic subscribing (``classic`` or ``consumer``
  group protocol) until every one holds a different partition, then, ``close_after_s`` later (polling
  on), one closing until the other two hold all three; for ``share``, three ShareConsumers until each
  received a record, then one closing until the other two received a record from each partition
  produced after it closed (a record goes to every partition each polling round, so that a member
  assigned late still gets one however fast the others drained what was there). The remaining
  members learn of the close at their next heartbeat, so the second figure is set by where in their
  heartbeat interval the close falls: ``close_phases`` gives the waits that spread it over the
  interval, the same for every broker;
- ``commit_latency_s``: a transactional producer's ``commit_transaction()`` of one record;
- ``rss_bytes`` / ``with_partitions``: the broker's resident memory (``/proc/<pid>/status``), idle and
  after topics holding 10,000 partitions were created.
"""
from __future__ import annotations

import statistics
import time
import uuid

import peer_client as pc
from peer_servers import Server

GROUP_MEMBERS = 3
# the slowest wait that completes: Tansu's classic rebalance, ~26 s (Kafka's consumer formation: ~10 s)
GROUP_TIMEOUT_S = 45.0
# The heartbeat interval the remaining members use: librdkafka's heartbeat.interval.ms for the
# classic protocol; the interval the broker gives (group.consumer.heartbeat.interval.ms,
# group.share.heartbeat.interval.ms: 5000 ms for kafkaemu and Kafka alike) for the others.
HEARTBEAT_INTERVAL_S = {"classic": 3.0, "consumer": 5.0, "share": 5.0}
# The waits after formation before the close, as fractions of that interval: one close in each
# quarter of it, the same sequence for every broker.
CLOSE_FRACTIONS = (0.125, 0.375, 0.625, 0.875)
PARTITIONS_FOR_RSS = 10_000
PARTITIONS_PER_TOPIC = 1000


def start_times(start) -> tuple[float, float, Server]:
    """``start()`` (returns a Server once its harness says it is up), then ApiVersions until answered,
    then one record produced to a new topic until acknowledged: (seconds to the answer, seconds to
    the record, the server, left running for the caller to stop)."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic
    t0 = time.perf_counter()
    server = start()
    if isinstance(server, str):
        raise RuntimeError(server)
    try:
        while True:
            try:
                pc.api_version_ranges(server.host, server.port)
                break
            except OSError:
                if time.perf_counter() - t0 > 120:
                    raise
                time.sleep(0.005)
        answered = time.perf_counter() - t0
        topic = f"bench-start-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": server.bootstrap})   # kept: the future needs its client alive
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(60)
        producer = Producer({"bootstrap.servers": server.bootstrap, "linger.ms": 0})
        delivered = []
        producer.produce(topic, b"first", on_delivery=lambda err, msg: delivered.append(err))
        while not delivered and time.perf_counter() - t0 < 180:
            producer.poll(0.005)
        if not delivered or delivered[0] is not None:
            raise RuntimeError(f"first record not delivered: {delivered[0] if delivered else 'timed out'}")
        return answered, time.perf_counter() - t0, server
    except BaseException:
        server.stop()
        raise


def topic_creation_s(server: Server, admin, count: int = 10) -> float:
    """Median seconds of ``count`` CreateTopics of a 1-partition topic, each to its answer."""
    from confluent_kafka.admin import NewTopic
    times, names = [], []
    for _ in range(count):
        name = f"bench-create-{uuid.uuid4().hex[:8]}"
        t0 = time.perf_counter()
        admin.create_topics([NewTopic(name, 1, 1)], operation_timeout=30)[name].result(60)
        times.append(time.perf_counter() - t0)
        names.append(name)
    _delete(admin, names)
    return statistics.median(times)


def _delete(admin, names: list[str]) -> None:
    try:
        for f in admin.delete_topics(names, operation_timeout=30).values():
            f.result(60)
    except Exception:
        pass   # only the broker's memory is at stake


def close_phases(protocol: str) -> list[float]:
    """The seconds to wait after formation before the close, one run each."""
    return [round(f * HEARTBEAT_INTERVAL_S[protocol], 3) for f in CLOSE_FRACTIONS]


def _hold(seconds: float, poll) -> None:
    """Poll on for ``seconds`` (the members keep heartbeating)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        poll()


def _wait(done, what: str, poll) -> float:
    t0 = time.perf_counter()
    while not done():
        if time.perf_counter() - t0 > GROUP_TIMEOUT_S:
            raise RuntimeError(f"{what}: not done after {GROUP_TIMEOUT_S:.0f} s")
        poll()
    return time.perf_counter() - t0


def group_times(server: Server, admin, protocol: str, close_after_s: float = 0.0,
                client_config: dict | None = None, on_close=None) -> tuple[float, float]:
    """(formation seconds, rebalance-after-a-member-left seconds) for ``protocol`` (classic,
    consumer, share), three members on a 3-partition topic, the client's defaults otherwise (plus
    ``client_config``, e.g. ``{"debug": "cgrp"}``); the close comes ``close_after_s`` after the
    formation. ``on_close(what)`` is called just before the close and once the others hold
    everything (``"close"``, ``"rebalanced"``), for a caller marking its log."""
    from confluent_kafka.admin import NewTopic
    topic = f"bench-group-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, GROUP_MEMBERS, 1)])[topic].result(30)
    mark = on_close or (lambda what: None)
    try:
        if protocol == "share":
            return _share_times(server, admin, topic, close_after_s, client_config or {}, mark)
        return _consumer_times(server, topic, protocol, close_after_s, client_config or {}, mark)
    finally:
        _delete(admin, [topic])


def _consumer_times(server: Server, topic: str, protocol: str, close_after_s: float, extra: dict,
                    mark) -> tuple[float, float]:
    from confluent_kafka import Consumer
    config = {"bootstrap.servers": server.bootstrap, "group.id": f"{topic}-{protocol}", "enable.auto.commit": False,
              **extra}
    if protocol == "consumer":
        config["group.protocol"] = "consumer"
    consumers = [Consumer({**config, "client.id": f"m{i}"}) for i in range(GROUP_MEMBERS)]
    live = list(consumers)

    def held() -> list[list]:
        return [[(p.topic, p.partition) for p in c.assignment()] for c in live]

    def covered() -> bool:
        parts = held()
        flat = [tp for p in parts for tp in p]
        return all(parts) and len(flat) == GROUP_MEMBERS and len(set(flat)) == GROUP_MEMBERS

    def poll() -> None:
        for c in live:
            c.poll(0)
        time.sleep(0.002)
    try:
        for c in consumers:
            c.subscribe([topic])
        formed = _wait(covered, f"{protocol} group formation", poll)
        _hold(close_after_s, poll)
        leaving = live.pop()
        mark("close")
        t0 = time.perf_counter()
        leaving.close()
        consumers.remove(leaving)
        _wait(covered, f"{protocol} rebalance after a member left", poll)
        after = time.perf_counter() - t0
        mark("rebalanced")
        return formed, after
    finally:
        for c in consumers:
            c.close()


def _share_times(server: Server, admin, topic: str, close_after_s: float, extra: dict,
                 mark) -> tuple[float, float]:
    import confluent_kafka as ck
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    if not hasattr(ck, "ShareConsumer"):
        raise RuntimeError(f"confluent-kafka {ck.version()[0]} has no ShareConsumer")
    group = f"{topic}-share"
    entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
    for f in admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group,
                                                             incremental_configs=[entry])]).values():
        f.result(30)
    producer = ck.Producer({"bootstrap.servers": server.bootstrap, "linger.ms": 0})

    def produce_each_partition(tag: str) -> None:
        for p in range(GROUP_MEMBERS):
            for i in range(50):
                producer.produce(topic, f"{tag}-{p}-{i}".encode(), partition=p)
        producer.flush(30)
    produce_each_partition("before")
    phase = ["before"]
    consumers = [ck.ShareConsumer({"bootstrap.servers": server.bootstrap, "group.id": group,
                                   "client.id": f"m{i}", **extra}) for i in range(GROUP_MEMBERS)]
    live = list(consumers)
    got: dict[int, set] = {id(c): set() for c in consumers}
    after: set[int] = set()

    def poll() -> None:
        # a record to each partition every round: a member assigned late still gets one, however
        # fast the others drained what was there (a ShareConsumer does not tell its assignment)
        for p in range(GROUP_MEMBERS):
            producer.produce(topic, f"{phase[0]}-{p}".encode(), partition=p)
        producer.poll(0)
        for c in live:
            for msg in c.poll(0.01):     # a batch (implicit acknowledgement at the next poll)
                if msg.error() is None:
                    got[id(c)].add(msg.partition())
                    if msg.value().startswith(b"after"):
                        after.add(msg.partition())
    try:
        for c in consumers:
            c.subscribe([topic])
        formed = _wait(lambda: all(got[id(c)] for c in live), "share group formation", poll)
        _hold(close_after_s, poll)
        leaving = live.pop()
        mark("close")
        t0 = time.perf_counter()
        leaving.close()
        consumers.remove(leaving)
        phase[0] = "after"
        _wait(lambda: len(after) == GROUP_MEMBERS, "share group after a member left", poll)
        took = time.perf_counter() - t0
        mark("rebalanced")
        return formed, took
    finally:
        for c in consumers:
            c.close()
        producer.flush(10)


def commit_latency_s(server: Server, admin, commits: int = 20) -> float:
    """Median seconds of ``commit_transaction()`` of a one-record transaction (after a first, not
    counted, that adds the partition)."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import NewTopic
    topic = f"bench-txn-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": server.bootstrap, "transactional.id": topic, "linger.ms": 0})
    try:
        producer.init_transactions(60)
        times = []
        for i in range(commits + 1):
            producer.begin_transaction()
            producer.produce(topic, b"txn", partition=0)
            producer.flush(30)
            t0 = time.perf_counter()
            producer.commit_transaction(60)
            if i:
                times.append(time.perf_counter() - t0)
        return statistics.median(times)
    finally:
        producer.flush(5)
        _delete(admin, [topic])


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def with_partitions(server: Server, admin) -> tuple[int, float]:
    """(RSS bytes, seconds the creation took) once topics of PARTITIONS_PER_TOPIC partitions holding
    PARTITIONS_FOR_RSS partitions in all exist (each CreateTopics answered), then 2 s later."""
    from confluent_kafka.admin import NewTopic
    if server.pid is None:
        raise RuntimeError("the broker's process is unknown")
    names = [f"bench-rss-{uuid.uuid4().hex[:6]}-{i}" for i in range(PARTITIONS_FOR_RSS // PARTITIONS_PER_TOPIC)]
    t0 = time.perf_counter()
    for name in names:
        admin.create_topics([NewTopic(name, PARTITIONS_PER_TOPIC, 1)], operation_timeout=120)[name].result(180)
    took = time.perf_counter() - t0
    time.sleep(2)
    return rss_bytes(server.pid), took
