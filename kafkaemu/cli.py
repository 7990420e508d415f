"""``kafkaemu serve``: run the emulator until SIGINT/SIGTERM."""
from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from .config import BrokerConfig
from .logging import configure_logging


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kafkaemu", description="A Kafka-compatible broker emulator.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the broker")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=9092, help="port to listen on; 0 picks a free one (default 9092)")
    serve.add_argument("--advertised-host", default=None, help="host name given to clients in Metadata")
    serve.add_argument("--node-id", type=int, default=0, help="id of the first node (default 0)")
    serve.add_argument("--nodes", type=int, default=1,
                       help="emulate a cluster of N nodes, listening on PORT, PORT+1, ... (free ports with --port 0)")
    serve.add_argument("--data-dir", default=None, help="keep logs and __consumer_offsets here across restarts")
    serve.add_argument("--no-auto-create-topics", dest="auto_create", action="store_false",
                       help="answer UNKNOWN_TOPIC_OR_PARTITION instead of creating topics on first use")
    serve.add_argument("--num-partitions", type=int, default=1, help="partitions of auto-created topics")
    serve.add_argument("--group-initial-rebalance-delay-ms", type=int,
                       default=BrokerConfig.group_initial_rebalance_delay_ms)
    serve.add_argument("--group-min-session-timeout-ms", type=int, default=6000)
    serve.add_argument("--group-max-session-timeout-ms", type=int, default=1800000)
    serve.add_argument("--offsets-retention-minutes", type=int, default=7 * 24 * 60)
    serve.add_argument("--sasl-user", action="append", default=[], metavar="NAME:PASSWORD",
                       help="enable SASL and add a user (repeatable)")
    serve.add_argument("--sasl-mechanisms", default=None, metavar="LIST",
                       help="comma-separated SASL mechanisms to enable (default with users: "
                            "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512)")
    serve.add_argument("--tls-cert", default=None, metavar="FILE", help="serve TLS with this PEM certificate chain")
    serve.add_argument("--tls-key", default=None, metavar="FILE",
                       help="PEM private key for --tls-cert (default: read from the certificate file)")
    serve.add_argument("--tls-key-password", default=None, help="password of an encrypted --tls-key")
    serve.add_argument("--override", action="append", default=[], metavar="NAME=VALUE",
                       help="any other Kafka broker setting kafkaemu reads, e.g. "
                            "group.consumer.session.timeout.ms=10000 (repeatable; see docs)")
    serve.add_argument("--log-format", choices=["console", "json"], default="console")
    serve.add_argument("--log-level", choices=["debug", "info", "warning", "error"], default="info")
    sub.add_parser("apis", help="list the APIs and versions kafkaemu implements (what ApiVersions advertises)")
    return parser


def print_apis() -> None:
    from .handlers import REGISTRY
    from .protocol.catalog import catalog
    for key, lo, hi in REGISTRY.versions():
        print(f"{key:>3}  {catalog().api_name(key):<28} v{lo}-v{hi}")


def parse_pairs(values: list[str], separator: str, flag: str, form: str) -> dict[str, str]:
    """``["a:b", ...]`` -> ``{"a": "b"}`` for repeatable NAME<sep>VALUE options."""
    pairs = {}
    for value in values:
        name, sep, setting = value.partition(separator)
        if not sep or not name.strip():
            raise argparse.ArgumentTypeError(f"{flag} takes {form}, got {value!r}")
        pairs[name.strip()] = setting
    return pairs


def parse_sasl_users(values: list[str]) -> dict[str, str]:
    return parse_pairs(values, ":", "--sasl-user", "NAME:PASSWORD")


def parse_overrides(values: list[str]) -> dict[str, str]:
    return {name: value.strip() for name, value in parse_pairs(values, "=", "--override", "NAME=VALUE").items()}


def config_from_args(args) -> BrokerConfig:
    from .auth.credentials import parse_mechanisms
    return BrokerConfig(
        host=args.host, port=args.port, advertised_host=args.advertised_host, node_id=args.node_id, nodes=args.nodes,
        data_dir=args.data_dir, auto_create_topics=args.auto_create, num_partitions=args.num_partitions,
        group_initial_rebalance_delay_ms=args.group_initial_rebalance_delay_ms,
        group_min_session_timeout_ms=args.group_min_session_timeout_ms,
        group_max_session_timeout_ms=args.group_max_session_timeout_ms,
        offsets_retention_minutes=args.offsets_retention_minutes,
        sasl_users=parse_sasl_users(args.sasl_user),
        sasl_mechanisms=parse_mechanisms(args.sasl_mechanisms) if args.sasl_mechanisms else (),
        tls_cert=args.tls_cert, tls_key=args.tls_key, tls_key_password=args.tls_key_password,
        extra=parse_overrides(args.override),
    )


async def serve(config: BrokerConfig) -> None:
    from .server import KafkaServer
    server = KafkaServer(config)
    await server.start()
    print(f"kafkaemu listening on {config.host}:{server.port}", flush=True)
    for node_id, (_, port) in sorted(server.broker.listeners.items())[1:]:
        print(f"kafkaemu node {node_id} listening on {config.host}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "apis":
        print_apis()
        return 0
    try:
        config = config_from_args(args)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        build_parser().error(str(exc))
    configure_logging(args.log_format, args.log_level)
    import uvloop
    uvloop.run(serve(config))
    return 0


if __name__ == "__main__":
    sys.exit(main())
