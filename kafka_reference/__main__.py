"""``python -m kafka_reference fetch`` copies Kafka 4.4.0's jars into .cache/ (Maven, once);
``python -m kafka_reference serve [--nodes N] [--authorizer]`` runs a reference broker on loopback
until interrupted, printing its bootstrap servers."""
from __future__ import annotations

import argparse
import sys
import time

from .broker import KafkaCluster, KafkaUnavailable, fetch_jars


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafka_reference")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("fetch", help="copy Kafka 4.4.0's jars from Maven Central into .cache/kafka-4.4.0")
    serve = commands.add_parser("serve", help="run Kafka 4.4.0 on loopback until interrupted")
    serve.add_argument("--nodes", type=int, default=1)
    serve.add_argument("--authorizer", action="store_true", help="StandardAuthorizer and SASL/PLAIN users")
    args = parser.parse_args(argv)
    try:
        if args.command == "fetch":
            print(fetch_jars())
            return 0
        with KafkaCluster(args.nodes, authorizer=args.authorizer) as cluster:
            print(f"Kafka 4.4.0 on {cluster.bootstrap_servers} ({cluster.security_protocol}), "
                  f"PIDs {' '.join(str(n.pid) for n in cluster.nodes)}; Ctrl-C stops it", flush=True)
            while True:
                time.sleep(3600)
    except KafkaUnavailable as exc:
        print(f"kafka_reference: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
