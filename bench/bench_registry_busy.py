"""The Kafka listener's latency while the schema registry is busy (issue 28), for BENCHMARKS.md:
ApiVersions round trips, one at a time on one connection, against a ``kafkaemu serve`` process
with its registry, while another client keeps the registry checking compatibility back to back:

- idle: no registry work;
- probe: the issue's probe, ``anyOf`` of two ``$ref``s 16 deep (1.3 KB), string -> integer at the
  bottom, registered as a second version (refused 409): 4^16 comparisons before memoised pairs;
- budget: the costliest check there is now, ``anyOf`` of 460 closed objects against 460 others
  (211,600 pairs), stopped at its work budget (504);

``--before`` runs one probe check 10 deep instead (the depth the issue measured at 26 s; 16 deep
would not end), for a tree without memoised pairs. Prints the ApiVersions latencies (median, p99,
p99.9, max) and how many checks ended meanwhile.
"""
from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kafkaemu.testing import KafkaEmulator  # noqa: E402
from kafkaemu.testing.raw_client import api_versions_frame, connect, read_reply  # noqa: E402

CT = "application/vnd.schemaregistry.v1+json"


def probe(depth: int, leaf: str, name: str) -> str:
    definitions = {f"{name}0": {"type": "object", "properties": {"v": {"type": leaf}}}}
    for level in range(1, depth + 1):
        definitions[f"{name}{level}"] = {"anyOf": [{"$ref": f"#/definitions/{name}{level - 1}"}] * 2}
    return json.dumps({"definitions": definitions, "$ref": f"#/definitions/{name}{depth}"})


def wide(count: int, leaf: str) -> str:
    return json.dumps({"anyOf": [{"type": "object", "properties": {f"f{i}": {"type": leaf}}, "required": [f"f{i}"],
                                  "additionalProperties": False} for i in range(count)]})


WORKLOADS = {"probe": (probe(16, "string", "d"), probe(16, "integer", "e")),
             "budget": (wide(460, "string"), wide(460, "integer")),
             "before": (probe(10, "string", "d"), probe(10, "integer", "e"))}


def post(conn, path: str, schema: str) -> int:
    conn.request("POST", path, json.dumps({"schema": schema, "schemaType": "JSON"}), {"Content-Type": CT})
    response = conn.getresponse()
    response.read()
    return response.status


class Checker(threading.Thread):
    """Registers v1, then asks to register v2 (refused) again and again until stopped."""

    def __init__(self, url: str, workload: str, once: bool) -> None:
        super().__init__(daemon=True)
        host, port = url.split("//")[1].rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port), timeout=3600)
        self.v1, self.v2 = WORKLOADS[workload]
        self.subject = f"busy-{uuid.uuid4().hex[:8]}"
        self.once = once
        self.stop = threading.Event()
        self.started = threading.Event()
        self.statuses: list[int] = []

    def run(self) -> None:
        assert post(self.conn, f"/subjects/{self.subject}/versions", self.v1) == 200
        self.started.set()
        while not self.stop.is_set():
            self.statuses.append(post(self.conn, f"/subjects/{self.subject}/versions", self.v2))
            if self.once:
                break


def latencies(server, seconds: float, until=None) -> list[float]:
    found = []
    with connect(server, timeout=3600) as sock:
        end = time.perf_counter() + seconds
        correlation = 0
        while time.perf_counter() < end if until is None else until():
            correlation += 1
            t0 = time.perf_counter()
            sock.sendall(api_versions_frame(correlation_id=correlation))
            read_reply(sock)
            found.append((time.perf_counter() - t0) * 1000)
    return found


def report(name: str, found: list[float], checks: list[int]) -> None:
    found = sorted(found)
    def pct(q: float) -> float:
        return found[min(len(found) - 1, int(len(found) * q))]
    ended = f", {len(checks)} checks ended ({', '.join(sorted({str(s) for s in checks}))})" if checks else ""
    print(f"{name:8} ApiVersions n={len(found):6}  median {statistics.median(found):7.2f} ms  p99 {pct(0.99):7.2f} ms  "
          f"p99.9 {pct(0.999):7.2f} ms  max {found[-1]:9.2f} ms{ended}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--before", action="store_true", help="one probe check 10 deep (a tree before the fix)")
    args = parser.parse_args()
    with KafkaEmulator(subprocess_mode=True, schema_registry=True) as server:
        url = server.schema_registry_url
        latencies(server, 1)   # warm: the ApiVersions codecs
        report("idle", latencies(server, args.seconds), [])
        for workload in (["before"] if args.before else ["probe", "budget"]):
            checker = Checker(url, workload, once=args.before)
            checker.start()
            checker.started.wait()
            if args.before:
                found = latencies(server, 0, until=checker.is_alive)
            else:
                found = latencies(server, args.seconds)
            checker.stop.set()
            checker.join()
            report(workload, found, checker.statuses)


if __name__ == "__main__":
    main()
