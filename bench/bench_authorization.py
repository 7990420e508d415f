"""What authorization costs on the data path (issue 17, BENCHMARKS.md "Authorization").

Sans-IO Produce (v11, acks=1, one partition, one 10-record batch) and Fetch (v12, one partition
from offset 0) requests fed to ``Connection.receive`` 100 per call, as bench_request_path.py does,
in four setups: authorization off; on with the one ACL that allows the request; on with that ACL
among 10,000 others (other principals on other topics, half LITERAL, half PREFIXED); on with the
principal a super user. Each figure is the median of ``--repeat`` runs (requests per second of wall
clock and of CPU time). The goal: 10,000 ACLs slow an authorized Produce or Fetch by at most 10 %
against the single ACL.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_request_path import frames_for, sans_io_loop, sans_io_rate  # noqa: E402
from kafkaemu.auth.acl import Acl, AclOperation, AclPermissionType, PatternType, ResourceType  # noqa: E402

TOPIC = "bench-authz"
PRINCIPAL = "User:bench"


def setup(mode: str):
    from kafkaemu.broker import Broker
    from kafkaemu.config import BrokerConfig
    from kafkaemu.handlers.registry import REGISTRY
    from kafkaemu.wire.connection import Connection
    import kafkaemu.server  # noqa: F401  (registers every handler)
    config = BrokerConfig(authorizer=mode != "off", super_users=PRINCIPAL if mode == "super user" else None)
    broker = Broker(config, 0)
    broker.topics.create(TOPIC, 1, {})
    if broker.authorizer is not None and mode != "super user":
        acls = [Acl(ResourceType.TOPIC, TOPIC, PatternType.LITERAL, PRINCIPAL, "*", op, AclPermissionType.ALLOW)
                for op in (AclOperation.READ, AclOperation.WRITE)]
        if mode == "10,000 ACLs":
            acls += [Acl(ResourceType.TOPIC, f"other-{i}", PatternType.LITERAL if i % 2 else PatternType.PREFIXED,
                         f"User:u{i}", "*", AclOperation.READ, AclPermissionType.ALLOW) for i in range(10000)]
        broker.authorizer.replace(acls)
    conn = Connection(broker, REGISTRY, 1, "127.0.0.1", now_ms=0)
    conn.principal = PRINCIPAL
    return conn


def specs():
    from kafkaemu.storage.record_batch import build_batch
    batch = build_batch([(b"k", b"v" * 100, [], 1000 + i) for i in range(10)])
    produce = (0, 11, {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
        {"name": TOPIC, "partition_data": [{"index": 0, "records": batch}]}]})
    fetch = (1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                     "session_id": 0, "session_epoch": -1, "topics": [
                         {"topic": TOPIC, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                          "fetch_offset": 0, "log_start_offset": -1,
                                                          "partition_max_bytes": 1 << 20}]}],
                     "forgotten_topics_data": [], "rack_id": ""})
    return {"Produce v11": produce, "Fetch v12": fetch}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from kafkaemu.logging import configure_logging
    configure_logging("console", "warning")
    modes = ["off", "1 ACL", "10,000 ACLs", "super user"]
    print(f"{'request':<14} " + " ".join(f"{m:>22}" for m in modes) + "   (req/s wall | per CPU s)")
    for name, spec in specs().items():
        results = {}
        for mode in modes:
            runs = []
            for _ in range(args.repeat):
                conn = setup(mode)
                if name.startswith("Fetch"):   # one batch to fetch
                    sans_io_loop(conn, frames_for(specs()["Produce v11"], 1), 1)
                runs.append(sans_io_rate(conn, spec, args.count, 100))   # checks the answer has no error
            results[mode] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        print(f"{name:<14} " + " ".join(f"{w:>10,.0f} | {c:>9,.0f}" for w, c in results.values()))
        base, many = results["1 ACL"][1], results["10,000 ACLs"][1]
        print(f"{'':<14} 10,000 ACLs vs 1 ACL, per CPU s: {100 * (many - base) / base:+.1f} %;"
              f" on (1 ACL) vs off: {100 * (base - results['off'][1]) / results['off'][1]:+.1f} %")


if __name__ == "__main__":
    main()
