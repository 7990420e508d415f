"""``kafkaemu ctl``: the control API from a shell, human-readable by default, ``--json`` for scripts.

    kafkaemu ctl --url http://127.0.0.1:9644 clock advance 30s
    export KAFKAEMU_CONTROL_URL=http://127.0.0.1:9644
    kafkaemu ctl fault add --api Heartbeat --error NOT_COORDINATOR --count 3
    kafkaemu ctl await group G --state Stable --members 3 --timeout 30s
    kafkaemu ctl snapshot save NAME

The commands are made from the operation table (control/table.py): each operation's ``Cli``
gives its words and positional parameters, every other parameter is an option, and the help text
is the operation's. ``kafkaemu ctl --help`` lists them.

Exit status: 0 done, 1 refused by the emulator (an await that timed out too) or unreachable,
2 bad usage, 130 interrupted (Ctrl-C), 141 the reader of its output stopped early (``| head``).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

from . import operations  # noqa: F401 (fills OPS)
from .cli_records import add_commands as add_record_commands
from .client import ControlClient
from .params import ControlError
from .render import render
from .table import OPS, Cli, Op

# A value such as -5s looks like an option to argparse; it would report the argument as missing.
_NEGATIVE_DURATION = re.compile(r"-\d+(\.\d+)?[a-z]+")


def _commands() -> dict[tuple[str, ...], tuple[Op, Cli]]:
    commands = {}
    for spec in OPS.values():
        for cli in spec.cli:
            words = tuple(cli.words.split())
            if words in commands:
                raise ValueError(f"kafkaemu ctl {cli.words!r} is declared by {commands[words][0].name} and {spec.name}")
            commands[words] = (spec, cli)
    return commands


def _option_help(spec: Op, name: str, cli: Cli) -> str:
    param = spec.params[name]
    text = param.help or name.replace("_", " ")
    default = cli.defaults.get(name, param.default)
    if default not in (None, False) and "default" not in text:
        text += f" (default: {default})"
    return text


def _add_command(parser: argparse.ArgumentParser, spec: Op, cli: Cli) -> None:
    for name in cli.positional:
        param = spec.params[name]
        parser.add_argument(f"p_{name}", metavar=name.upper(), help=param.help or None,
                            type=int if param.kind == "integer" else None)
    for name, param in spec.params.items():
        if name in cli.positional or name in cli.fixed:
            continue
        flag = cli.flags.get(name, "--" + name.replace("_", "-"))
        common = {"dest": f"p_{name}", "help": _option_help(spec, name, cli)}
        if param.kind == "flag":
            if param.default is True:
                parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=None, **common)
            else:
                parser.add_argument(flag, action="store_const", const=True, **common)
        elif param.kind == "mapping":
            parser.add_argument(flag, action="append", metavar="NAME=VALUE", **common)
        else:
            required = param.required and name not in cli.defaults
            parser.add_argument(flag, metavar=name.upper(), required=required, default=cli.defaults.get(name),
                                type=int if param.kind == "integer" else None, **common)
    for flag, (name, value) in cli.switches.items():
        parser.add_argument(flag, dest=f"p_{name}", action="store_const", const=value,
                            help=f"{name.replace('_', ' ')} {value}")
    if cli.follow:
        parser.add_argument("--follow", action="store_true", help="keep printing new entries")
    parser.set_defaults(_op=spec.name, _cli=cli)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kafkaemu ctl", description="Drive a running kafkaemu through its control API "
                                "(kafkaemu serve --control-port N prints its URL).")
    p.add_argument("--url", help="the control API's URL (default: $KAFKAEMU_CONTROL_URL, else --port)")
    p.add_argument("--port", type=int, help="the control port on 127.0.0.1")
    p.add_argument("--token", help="bearer token (default: $KAFKAEMU_CONTROL_TOKEN)")
    p.add_argument("--json", action="store_true", help="print the API's JSON answer")
    commands = _commands()
    children: dict[tuple[str, ...], list[str]] = {}
    for words in commands:
        for depth in range(len(words)):
            siblings = children.setdefault(words[:depth], [])
            if words[depth] not in siblings:
                siblings.append(words[depth])
    parsers = {(): p}
    subparsers: dict[tuple[str, ...], argparse._SubParsersAction] = {}
    for words in sorted({w[:d] for w in commands for d in range(1, len(w) + 1)}, key=lambda w: (len(w), w)):
        parent = words[:-1]
        if parent not in subparsers:
            subparsers[parent] = parsers[parent].add_subparsers(
                dest="cmd" if not parent else f"cmd_{len(parent)}", metavar="COMMAND",
                required=parent not in commands)
        command = commands.get(words)
        if command is not None:
            spec, cli = command
            summary = cli.help or spec.doc.split(". ")[0].split("; ")[0].rstrip(".")
            parser = subparsers[parent].add_parser(words[-1], help=summary, description=cli.help or spec.full_doc,
                                                   formatter_class=argparse.RawDescriptionHelpFormatter)
            _add_command(parser, spec, cli)
        else:
            summary = ", ".join(children[words])
            parser = subparsers[parent].add_parser(words[-1], help=summary)
        parsers[words] = parser
    add_record_commands(subparsers[()])
    return p


def call_for(args) -> tuple[str, dict]:
    """The operation and parameters a command line stands for."""
    spec: Op = OPS[args._op]
    cli: Cli = args._cli
    params = dict(cli.fixed)
    for name, param in spec.params.items():
        if name in cli.fixed:
            continue
        value = getattr(args, f"p_{name}", None)
        if value is None:
            continue
        if param.kind == "mapping":
            bad = [item for item in value if "=" not in item]
            if bad:
                raise SystemExit(f"kafkaemu ctl: {cli.flags.get(name, '--' + name)} takes NAME=VALUE, got {bad[0]!r}")
            value = dict(item.split("=", 1) for item in value)
        params[name] = value
    return spec.name, params


def negative_duration(argv: list[str]) -> str | None:
    """A message for a negative duration (``clock advance -5s``), which argparse takes for an option."""
    for arg in argv:
        if _NEGATIVE_DURATION.fullmatch(arg):
            hint = " (the clock only moves forward; restore a snapshot to go back)" if "clock" in argv else ""
            return f"kafkaemu ctl: {arg}: a duration must not be negative{hint}"
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    negative = negative_duration(argv)
    if negative:
        print(negative, file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    url = args.url or os.environ.get("KAFKAEMU_CONTROL_URL") or (f"http://127.0.0.1:{args.port}" if args.port else None)
    if not url:
        print("kafkaemu ctl: give --url or --port, or set KAFKAEMU_CONTROL_URL (kafkaemu serve --control-port N "
              "prints the URL)", file=sys.stderr)
        return 2
    client = ControlClient(url, args.token)
    try:
        if hasattr(args, "_run"):   # produce, consume: control/cli_records.py
            return args._run(client, args)
        op, params = call_for(args)
        result = client.call(op, **params)
        print(json.dumps(result, indent=2) if args.json else render(op, result), flush=True)
        if getattr(args, "follow", False):
            follow(client, params, result, args.json)
    except BrokenPipeError:   # the reader stopped early (ctl requests | head -1): quietly, as SIGPIPE ends a tool
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())   # the interpreter's own flush at exit must not fail again
        return 141
    except ControlError as exc:
        if args.json:
            print(json.dumps(exc.body(), indent=2))
        print(f"kafkaemu ctl: {exc.message} (HTTP {exc.status})", file=sys.stderr)
        return 1
    except (ConnectionError, OSError) as exc:
        print(f"kafkaemu ctl: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:   # Ctrl-C: 128 + SIGINT, as a shell reports it, so `ctl await ... && next` stops
        return 130
    return 0


def follow(client: ControlClient, params: dict, result: dict, as_json: bool) -> None:
    params = dict(params, last=None)
    after = result["next_seq"] - 1
    while True:
        time.sleep(0.5)
        result = client.call("requests", **dict(params, after=after))
        if result["entries"]:
            if as_json:
                for e in result["entries"]:
                    print(json.dumps(e), flush=True)
            else:
                print(render("requests", result).split("\n", 1)[1], flush=True)
            after = result["entries"][-1]["seq"]
