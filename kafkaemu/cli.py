"""``kafkaemu serve`` runs the emulator until SIGINT/SIGTERM; ``apis`` and ``errors`` list what it speaks;
``ctl`` drives a running one's control API (kafkaemu/control/cli.py).

The serve flags and the ``--override`` names come from ``BrokerConfig``'s fields (kafkaemu/config.py):
argparse's parser (``cli_parser.py``) reads a line that needs it (help, errors), and ``cli_args.py``
reads a plain one without it.
A bad setting ends the command with one line on stderr and exit status 2; a port that cannot be
listened on, with exit status 1.
"""
from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys

from .allocator import keep_large_buffers
from .cli_args import plain_serve_args
from .config import KAFKA_NAMES, SETTINGS, BrokerConfig, setting_named
from .fd_limit import raise_open_files_limit
from .logging import configure_logging


def parse_pairs(values: list[str], separator: str, flag: str, form: str) -> dict[str, str]:
    """``["a=b", ...]`` -> ``{"a": "b"}`` for repeatable NAME<sep>VALUE options."""
    pairs = {}
    for value in values:
        name, sep, setting = value.partition(separator)
        if not sep or not name.strip():
            raise ValueError(f"{flag} takes {form}, got {value!r}")
        pairs[name.strip()] = setting
    return pairs


def parse_overrides(values: list[str]) -> dict[str, str]:
    return {name: value.strip() for name, value in parse_pairs(values, "=", "--override", "NAME=VALUE").items()}


def config_from_args(args, environ=None) -> BrokerConfig:
    """The configuration the settings describe (not yet validated), later ones winning: the
    ``KAFKA_*`` environment variables (mapped as Kafka's container image maps them), the ``--config``
    properties file, then the flags and ``--override``. A name Kafka does not define is refused with
    a suggestion, except from the environment, where it is passed over with a note on stderr (an
    environment holds other KAFKA_* variables, and Kafka ignores names it does not know)."""
    from .broker_properties import from_environment, kafka_defined
    environ = os.environ if environ is None else environ
    by_kafka_name: dict[str, tuple[str, str]] = {}   # name -> (value, where it came from)
    for name, text in from_environment(environ).items():
        if name in KAFKA_NAMES or kafka_defined(name):
            by_kafka_name[name] = (text, "the environment")
        else:
            print(f"kafkaemu serve: note: {name} (from a KAFKA_* environment variable) is not a Kafka broker "
                  f"setting; passed over", file=sys.stderr)
    if args.config:
        by_kafka_name.update((name, (text, f"--config {args.config}")) for name, text in _properties(args.config))
    values = {}
    for s in SETTINGS.values():
        if hasattr(args, s.name):
            raw = getattr(args, s.name)
            values[s.name] = raw if s.kind == "bool" else s.parse(raw)
    for name, text in parse_overrides(args.override).items():
        s = KAFKA_NAMES.get(name)
        if s is None:
            if not kafka_defined(name):
                setting_named(name)   # refused, naming the closest setting
            by_kafka_name[name] = (text, "--override")
            continue
        if s.name in values:
            raise ValueError(f"{s.flag} and --override {s.kafka} set the same setting")
        values[s.name] = s.parse(text, label=f"--override {s.kafka}")
        by_kafka_name.pop(name, None)
    extra = {}
    for name, (text, where) in by_kafka_name.items():
        s = KAFKA_NAMES.get(name)
        if s is None:
            if not kafka_defined(name):
                raise ValueError(f"{where}: {_unknown(name)}")
            extra[name] = text
        elif s.name not in values:
            values[s.name] = s.parse(text, label=f"{where}: {name}")
    return BrokerConfig(**values, extra=extra)


def _properties(path: str) -> list[tuple[str, str]]:
    from .broker_properties import read_properties
    try:
        return list(read_properties(path).items())
    except OSError as exc:
        raise ValueError(f"cannot read --config {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"--config {path}: {exc}") from None


def _unknown(name: str) -> str:
    try:
        setting_named(name)
    except ValueError as exc:
        return str(exc)
    return name


def print_apis() -> None:
    """What ApiVersions advertises, as a Kafka 4.4.0 broker: with the notes where a client sees more."""
    from .config import CLIENT_TELEMETRY_REPORTER
    from .handlers import REGISTRY
    from .handlers.api_versions import advertised_api_keys
    from .protocol.catalog import catalog
    default = {api["api_key"] for api in advertised_api_keys(client_telemetry=False)}
    for api in advertised_api_keys(client_telemetry=True):
        key, lo, hi = api["api_key"], api["min_version"], api["max_version"]
        note = ""
        if key not in default:
            note = f"  (only with metric.reporters={CLIENT_TELEMETRY_REPORTER})"
        elif REGISTRY.get(key).min_version != lo:
            note = f"  (v{REGISTRY.get(key).min_version}+ accepted, as Kafka 4)"
        print(f"{key:>3}  {catalog().api_name(key):<28} v{lo}-v{hi}{note}")


def print_errors() -> None:
    from .protocol.errors import ErrorCode
    for name, code in ErrorCode.__members__.items():
        if name == code.name:  # aliases are accepted, the canonical names listed
            print(f"{int(code):>3}  {name}")


async def serve(server) -> int:
    from .server import LISTENING_EVENT_DELAY_S
    config = server.config
    try:
        await server.start()
    except OSError as exc:  # a busy port, an address this machine does not have (the exit closes the rest)
        print(f"kafkaemu: cannot listen on {config.host}: {exc}", file=sys.stderr)
        return 1
    print(f"kafkaemu listening on {config.host}:{server.port}", flush=True)
    for node_id, (_, port) in sorted(server.broker.placement.listeners.items())[1:]:
        print(f"kafkaemu node {node_id} listening on {config.host}:{port}", flush=True)
    if server.control_url is not None:
        print(f"kafkaemu control on {server.control_url}", flush=True)
    if server.schema_registry is not None:
        print(f"kafkaemu schema registry on {server.schema_registry.url}", flush=True)
    if server.control_url is not None:   # last: readers of the lines above stop at theirs
        print(f"kafkaemu web page on {server.control_url}/", flush=True)
    collect_from_now()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.call_later(LISTENING_EVENT_DELAY_S, keep_large_buffers)   # after the first clients' answers
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop()
    return 0


def collect_from_now() -> None:
    """Once started by ``__main__.run`` (the garbage collector off): keep what the start made out of
    every later collection (``gc.freeze``) and collect from now on."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _settings_error(message: str):
    print(f"kafkaemu serve: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _to_stdout(write) -> int:
    """Run a command that prints; a reader that stops early (``kafkaemu apis | head``) ends it
    quietly with the status a SIGPIPE gives, as other command-line tools."""
    try:
        write()
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())   # the interpreter's own flush at exit must not fail again
        return 141
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["ctl"]:  # its own parser, so that its options may come anywhere
        collect_from_now()
        from .control.cli import main as ctl_main
        return ctl_main(argv[1:])
    args = plain_serve_args(argv)
    if args is None:   # help, an error, another command: argparse's parser
        from .cli_parser import build_parser
        args = build_parser().parse_args(argv)
    if args.command == "apis":
        return _to_stdout(print_apis)
    if args.command == "errors":
        return _to_stdout(print_errors)
    try:
        config = config_from_args(args).validate(label=lambda s: s.flag or s.kafka)
    except ValueError as exc:
        _settings_error(str(exc))
    if args.print_config:
        import json
        return _to_stdout(lambda: print(json.dumps(config.as_dict(), indent=2)))
    configure_logging(args.log_format, args.log_level, stdlib=True)
    raise_open_files_limit()   # a connection is a file descriptor: 1024 is soon reached
    import uvloop
    from .extras import MissingExtra
    from .storage.offsets_topic import OffsetsTopicError
    from .server import KafkaServer
    try:
        server = KafkaServer(config)
    except (OffsetsTopicError, MissingExtra) as exc:   # a data directory the broker cannot use, an extra
        print(f"kafkaemu: {exc}", file=sys.stderr)     # not installed: say why in one line
        return 2
    return uvloop.run(serve(server))


if __name__ == "__main__":
    sys.exit(main())
