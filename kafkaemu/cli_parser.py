"""``kafkaemu``'s command line as argparse reads it: the commands, ``serve``'s flags (one per
setting, in the help sections ``cli_help.py`` orders), ``--help`` and the usage errors. A plain
``serve`` line is read without it (``cli_args.py``)."""
from __future__ import annotations

import argparse

from .cli_args import LOG_FORMATS, SERVE_DEFAULTS
from .cli_help import COMMON, area_of, section_order
from .config import SETTINGS, Setting
from .logging import LEVELS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        """One line, no usage block: ``--help`` lists the flags."""
        self.exit(2, f"{self.prog}: error: {message}\n")


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version
    try:
        return installed_version("kafkaemu")
    except PackageNotFoundError:
        return "(not installed)"


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (reading the installed metadata costs start-up time)."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the program's version number and exit")

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kafkaemu", description="A Kafka-compatible broker emulator.")
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the broker", usage="kafkaemu serve [--host HOST] [--port PORT] [OPTION ...]",
                           description="Run the broker. Every setting is a flag, and those with a Kafka name "
                                       "can also be given as --override NAME=VALUE.")
    add_setting_flags(serve)
    serve.add_argument("--config", metavar="FILE",
                       help="a Kafka server.properties file: every broker setting Kafka 4.4 defines is taken "
                            "(those kafkaemu acts on are its settings; --override and the flags win over it)")
    serve.add_argument("--override", action="append", default=list(SERVE_DEFAULTS["override"]), metavar="NAME=VALUE",
                       help="a setting by its Kafka name, e.g. group.consumer.session.timeout.ms=10000 "
                            "(repeatable; the names are listed with the flags)")
    serve.add_argument("--log-format", choices=list(LOG_FORMATS), default=SERVE_DEFAULTS["log_format"],
                       help="json: every log line is a JSON object (the 'listening' lines on stdout stay plain)")
    serve.add_argument("--log-level", type=str.lower, choices=list(LEVELS), default=SERVE_DEFAULTS["log_level"],
                       help=f"least severe log events shown: {', '.join(LEVELS)} (any case; default info)")
    serve.add_argument("--print-config", action="store_true",
                       help="check the settings, print them as JSON and exit without serving")
    common_options_first(serve)
    sub.add_parser("apis", help="list the APIs and versions kafkaemu implements (what ApiVersions advertises)")
    sub.add_parser("errors", help="list Kafka's error codes and names (as inject_fault takes them)")
    ctl = sub.add_parser("ctl", help="drive a running emulator's control API (kafkaemu ctl --help)", add_help=False)
    ctl.add_argument("ctl_args", nargs=argparse.REMAINDER)
    return parser


def add_setting_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per BrokerConfig field, in the --help section its name belongs to (cli_help.py).
    Defaults stay out of the namespace, so a flag that is absent leaves the field at BrokerConfig's
    default."""
    sections = {title: parser.add_argument_group(title) for title in section_order()}
    for s in SETTINGS.values():
        if s.flag is None:   # a Kafka setting kafkaemu accepts but does not act on: --override only
            continue
        area = area_of(s.flag, s.kafka)
        target = parser if area is None else sections[area]
        kwargs = {"dest": s.name, "default": argparse.SUPPRESS, "help": _help(s)}
        if s.kind == "bool":
            target.add_argument(s.flag, action="store_const", const=not s.default, **kwargs)
        else:
            target.add_argument(s.flag, action="append" if s.kind == "pairs" else "store",
                                metavar=s.metavar or s.name.rsplit("_", 1)[-1].upper(), **kwargs)


def common_options_first(parser: argparse.ArgumentParser) -> None:
    """The options added to the parser itself are the common ones: their section, argparse's first,
    is titled so and lists them in cli_help.COMMON's order (-h first, any other after them)."""
    group = parser._optionals
    group.title = "common options"
    rank = {flag: i for i, flag in enumerate(COMMON)}
    group._group_actions.sort(key=lambda a: -1 if "-h" in a.option_strings else
                              min((rank.get(o, len(rank)) for o in a.option_strings), default=len(rank)))


def _help(s: Setting) -> str:
    notes = []
    if s.kind in ("int", "str") or s.kind == "list" and s.default:
        notes.append(f"default {','.join(s.default) if s.kind == 'list' else s.default}")
    if s.kafka:
        notes.append(f"Kafka: {s.kafka}")
    return f"{s.help} ({'; '.join(notes)})" if notes else s.help
