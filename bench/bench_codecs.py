"""Codec throughput in messages/s per (api, version): the generated codecs (``fastcodec``, what the
server uses), ``construct``'s ``.compile()`` of the reference codec, and the reference interpreted.

Requests of JoinGroup, OffsetCommit, Fetch and Metadata, each a realistic size for a consumer
(2 protocols; 1 topic x 4 partitions; 3 topics), built once in the newest shape and encoded at
every version kafkaemu speaks. Used by ``make bench``; numbers go into BENCHMARKS.md.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkaemu.protocol.catalog import catalog  # noqa: E402

TOPIC_ID = bytes(range(1, 17))
SUBSCRIPTION = b"\x00\x03" + b"\x00\x00\x00\x01\x00\x0borders-topic" + b"\xff\xff\xff\xff" * 2 + b"\xff\xff"

MESSAGES = {
    11: {"group_id": "orders-consumers", "session_timeout_ms": 45000, "rebalance_timeout_ms": 300000,
         "member_id": "consumer-1-5b6f0a3e-3f8c-4d0e-9d8a-1f0c2a7d9e11", "group_instance_id": None,
         "protocol_type": "consumer",
         "protocols": [{"name": "range", "metadata": SUBSCRIPTION},
                       {"name": "cooperative-sticky", "metadata": SUBSCRIPTION}],
         "reason": "need to re-join with the given member-id"},
    8: {"group_id": "orders-consumers", "generation_id_or_member_epoch": 7,
        "member_id": "consumer-1-5b6f0a3e-3f8c-4d0e-9d8a-1f0c2a7d9e11", "group_instance_id": None,
        "retention_time_ms": -1,
        "topics": [{"name": "orders-topic", "topic_id": TOPIC_ID, "partitions": [
            {"partition_index": p, "committed_offset": 1000 + p, "committed_leader_epoch": 3,
             "commit_timestamp": -1, "committed_metadata": ""} for p in range(4)]}]},
    1: {"replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 52428800,
        "isolation_level": 0, "session_id": 0, "session_epoch": -1,
        "topics": [{"topic": "orders-topic", "topic_id": TOPIC_ID, "partitions": [
            {"partition": p, "current_leader_epoch": 3, "fetch_offset": 1000 + p, "last_fetched_epoch": -1,
             "log_start_offset": -1, "partition_max_bytes": 1048576} for p in range(4)]}],
        "forgotten_topics_data": [], "rack_id": ""},
    3: {"topics": [{"topic_id": bytes(16), "name": name} for name in ("orders-topic", "payments", "audit")],
        "allow_auto_topic_creation": True, "include_cluster_authorized_operations": False,
        "include_topic_authorized_operations": False},
}


def rate(fn, min_seconds: float, repeats: int = 5) -> float:
    """Best of ``repeats`` timed loops of at least ``min_seconds`` each (the best run is the
    one least disturbed by other processes on a shared machine)."""
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            break
        n *= 2
    best = n / elapsed
    for _ in range(repeats - 1):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = max(best, n / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.02, help="time per timed loop")
    parser.add_argument("--repeats", type=int, default=5, help="timed loops per measurement (best kept)")
    args = parser.parse_args()
    cat = catalog()
    print(f"{'request':<22}{'decode generated':>17}{'construct':>11}{'plain':>10}{'x':>6}"
          f"{'encode generated':>18}{'construct':>11}{'plain':>10}{'x':>6}   (messages/s; x: generated/plain)")
    for api_key, obj in MESSAGES.items():
        spec = cat.requests[api_key]
        for version in spec.version_list:
            codec = cat.request(api_key, version)
            data = codec.encode(obj)
            compiled = codec.compiled  # compile outside the measurement
            dg = rate(lambda: codec.decode(data, compiled=True), args.seconds, args.repeats)
            dc = rate(lambda: compiled.parse(data), args.seconds, args.repeats)
            dp = rate(lambda: codec.decode(data, compiled=False), args.seconds, args.repeats)
            eg = rate(lambda: codec.encode(obj, compiled=True), args.seconds, args.repeats)
            ec = rate(lambda: compiled.build(obj), args.seconds, args.repeats)
            ep = rate(lambda: codec.encode(obj, compiled=False), args.seconds, args.repeats)
            print(f"{cat.api_name(api_key) + ' v' + str(version):<22}{dg:>17,.0f}{dc:>11,.0f}{dp:>10,.0f}"
                  f"{dg / dp:>6.1f}{eg:>18,.0f}{ec:>11,.0f}{ep:>10,.0f}{eg / ep:>6.1f}", flush=True)


if __name__ == "__main__":
    main()
