"""The "a member closes" rows of bench_peer's waits table, with the client's own log as evidence.

For the consumer (KIP-848) and share protocols the remaining members learn of a close at their next
heartbeat, so how long the row takes is where in their heartbeat interval the close falls. This
runs those rows (``peer_waits.group_times``, the same code as ``bench_peer.py``) against kafkaemu
and Apache Kafka 4.4, alternating, the close placed at the same waits after formation for both
(``peer_waits.close_phases``), with librdkafka's ``debug=cgrp`` log. For each run it prints the
seconds, then from the log, relative to the close: the leaving member's leave heartbeat and the
remaining members' heartbeats and answers (member epoch, target assignment) until they held
everything. ``--formation`` prints the heartbeats from subscribe() to formation as well.

    .venv/bin/python bench/rebalance_phases.py [--protocols consumer,share] [--no-kafka] [--formation]
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import peer_servers  # noqa: E402
import peer_waits  # noqa: E402

# librdkafka's default log line: %<level>|<seconds.millis>|<facility>|<client name>| [thrd:...]: <text>
LINE = re.compile(r"^%\d\|(?P<t>\d+\.\d+)\|(?P<fac>[A-Z_]+)\|(?P<who>[^|#]+)#[^|]*\| \[thrd:[^\]]*\]: (?P<text>.*)$")
MARK = re.compile(r"^MARK (?P<t>\d+\.\d+) (?P<what>\S+) (?P<run>\S+)$")
# the heartbeat lines worth showing: a heartbeat sent, its answer, the target assignment it carried
SHOWN = re.compile(r"(ConsumerGroupHeartbeat|ShareGroupHeartbeat) (of member id|of group id|response received)"
                   r"|received target assignment|Group \"[^\"]+\": leave")


def _mark(what: str, run: str) -> None:
    os.write(2, f"MARK {time.time():.3f} {what} {run}\n".encode())


def _short(text: str) -> str:
    text = re.sub(r'\(null\)\(([A-Za-z0-9+/=_-]{22})\)', "", text)     # the topic id beside each partition
    text = re.sub(r'member id "[^"]+"', "member", text)
    text = re.sub(r'group id "[^"]+", ', "", text)
    text = re.sub(r', (group instance id|rack id) "[^"]*"', "", text)
    text = re.sub(r', subscribed topic(s| re).*$', "", text)
    text = re.sub(r'current assignment "([^"]{60})[^"]*"', r'current assignment "\1..."', text)
    return text.replace("GroupCoordinator/0: ", "")


def report(log_path: str, runs: list[tuple[str, str, float, float, float]], formation: bool) -> None:
    events: list[tuple[float, str, str]] = []     # (time, who, text), marks as who="MARK"
    with open(log_path, errors="replace") as f:
        for raw in f:
            raw = raw.rstrip("\n")
            m = MARK.match(raw)
            if m:
                events.append((float(m["t"]), "MARK", f"{m['what']} {m['run']}"))
                continue
            m = LINE.match(raw)
            if m and SHOWN.search(m["text"]):
                events.append((float(m["t"]), m["who"], _short(m["text"])))
    events.sort(key=lambda e: e[0])
    for run_id, (broker, protocol, wait, formed, after) in enumerate(runs):
        run = f"run{run_id}"
        marks = {text.split()[0]: t for t, who, text in events if who == "MARK" and text.split()[1] == run}
        print(f"\n{broker}, {protocol}: formed in {formed:.2f} s; closed {wait:g} s later; the others held "
              f"everything {after:.2f} s after the close")
        start = marks["start"] if formation else marks["close"] - 0.001
        for t, who, text in events:
            if who != "MARK" and start <= t <= marks["rebalanced"]:
                print(f"  {t - marks['close']:+8.3f} s  {who}: {text}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocols", default="consumer,share")
    ap.add_argument("--no-kafka", action="store_true")
    ap.add_argument("--formation", action="store_true", help="print the heartbeats of the formation too")
    args = ap.parse_args(argv)
    protocols = [p.strip() for p in args.protocols.split(",") if p.strip()]
    log = tempfile.NamedTemporaryFile("w", prefix="rebalance-phases-", suffix=".log", delete=False)
    saved = os.dup(2)
    os.dup2(log.fileno(), 2)   # librdkafka logs to stderr; the marks go in between
    runs: list[tuple[str, str, float, float, float]] = []
    servers = []
    try:
        servers.append(peer_servers.start_kafkaemu()[0])
        if not args.no_kafka:
            kafka = peer_servers.start_kafka()
            if isinstance(kafka, str):
                os.write(saved, f"Kafka not started: {kafka}\n".encode())
            else:
                servers.append(kafka)
        from confluent_kafka.admin import AdminClient
        admins = {s.name: AdminClient({"bootstrap.servers": s.bootstrap}) for s in servers}
        for protocol in protocols:
            for i, wait in enumerate(peer_waits.close_phases(protocol)):
                for server in servers if i % 2 == 0 else servers[::-1]:
                    run = f"run{len(runs)}"
                    _mark("start", run)
                    formed, after = peer_waits.group_times(
                        server, admins[server.name], protocol, close_after_s=wait,
                        client_config={"debug": "cgrp"}, on_close=lambda what, run=run: _mark(what, run))
                    runs.append((server.name, protocol, wait, formed, after))
                    os.write(saved, f"{server.name} {protocol} close {wait:g} s after formation: "
                                    f"formed {formed:.2f} s, rebalanced {after:.2f} s\n".encode())
    finally:
        for s in servers:
            s.stop()
        os.dup2(saved, 2)
        log.close()
    print("\nper run, seconds from the close until the others held every partition "
          "(share: received a record from each):")
    for protocol in protocols:
        for broker in [s.name for s in servers]:
            got = [(w, a) for b, p, w, f, a in runs if b == broker and p == protocol]
            print(f"  {protocol}, {broker}: " + ", ".join(f"{a:.2f} (close +{w:g} s)" for w, a in got))
    report(log.name, runs, args.formation)
    print(f"\nthe whole client log: {log.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
